/*
 * User impersonation, as kube-apiserver's filter does it: a request with
 * Impersonate-User (kubectl --as), Impersonate-Group (--as-group, any
 * number) and Impersonate-Uid runs as that user once its sender may
 * "impersonate" each of them (users, or serviceaccounts in their
 * namespace for system:serviceaccount:NS:NAME; groups;
 * authentication.k8s.io uids). The user gets system:authenticated (and a
 * service account's groups when no group is asked for), as kube-apiserver
 * gives it. Impersonate-Extra-* headers are not served: volrayd's users
 * have no extra fields.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/impersonate.h"
#include "api/reply.h"
#include "auth/rbac.h"
#include "registry/status.h"

#define SA_PREFIX "system:serviceaccount:"

/* May rt->user impersonate this? Else answer 403 and return -1. */
static int
may(rbac *authz, http_req *req, struct route *rt, const char *group,
    const char *resource, const char *ns, const char *name)
{
	rbac_attrs at;
	char *reason = NULL;
	int ok;

	memset(&at, 0, sizeof at);
	at.verb = "impersonate";
	at.api_group = group;
	at.resource = resource;
	at.subresource = "";
	at.ns = ns;
	at.name = name;
	ok = rbac_check(authz, rt->user, &at, &reason);
	if (!ok)
		reply_status(req, rt, rbac_forbidden_reason(rt->user, &at,
		    reason));
	free(reason);
	return ok ? 0 : -1;
}

static void
add_group(struct route *rt, const char *g)
{
	int i;

	for (i = 0; i < rt->imp_user.ngroups; i++)
		if (strcmp(rt->imp_groups[i], g) == 0)
			return;
	if (rt->imp_user.ngroups < ROUTE_MAX_GROUPS)
		rt->imp_groups[rt->imp_user.ngroups++] = g;
}

int
impersonate(rbac *authz, http_req *req, struct route *rt)
{
	const char *user = http_req_header(req, "Impersonate-User");
	const char *uid = http_req_header(req, "Impersonate-Uid");
	const char *g, *sa, *colon;
	char ns[256];
	size_t pos = 0;
	int ngroups = 0;

	if (http_req_header(req, "Impersonate-Group") == NULL && uid == NULL &&
	    user == NULL)
		return 0;
	if (user == NULL || *user == '\0') {
		reply_status(req, rt, status_bad_request("impersonating a "
		    "group or uid needs Impersonate-User"));
		return -1;
	}
	if (authz == NULL || rt->user == NULL)
		return 0;	/* no authorization: nothing to check as */
	memset(&rt->imp_user, 0, sizeof rt->imp_user);
	ns[0] = '\0';
	if (strncmp(user, SA_PREFIX, strlen(SA_PREFIX)) == 0 &&
	    (colon = strchr(sa = user + strlen(SA_PREFIX), ':')) != NULL &&
	    (size_t)(colon - sa) < sizeof ns) {
		snprintf(ns, sizeof ns, "%.*s", (int)(colon - sa), sa);
		if (may(authz, req, rt, "", "serviceaccounts", ns, colon + 1))
			return -1;
	} else if (may(authz, req, rt, "", "users", "", user))
		return -1;
	while ((g = http_req_header_next(req, "Impersonate-Group", &pos))) {
		if (may(authz, req, rt, "", "groups", "", g))
			return -1;
		add_group(rt, g);
		ngroups++;
	}
	if (uid != NULL && may(authz, req, rt, "authentication.k8s.io", "uids",
	    "", uid))
		return -1;
	if (ngroups == 0 && ns[0] != '\0') {
		snprintf(rt->imp_buf, sizeof rt->imp_buf,
		    "system:serviceaccounts:%s", ns);
		add_group(rt, "system:serviceaccounts");
		add_group(rt, rt->imp_buf);
	}
	if (strcmp(user, "system:anonymous") != 0)
		add_group(rt, USER_GROUP_AUTHENTICATED);
	rt->imp_user.name = user;
	rt->imp_user.uid = uid ? uid : "";
	rt->imp_user.groups = rt->imp_groups;
	rt->user = &rt->imp_user;
	return 0;
}
