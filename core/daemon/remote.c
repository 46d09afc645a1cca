/*
 * The CRDs of roles that run against a remote API (--kubeconfig): the
 * crds/ directory is registered in this process's resource table (so the
 * informers and the controllers know the kinds), then each CRD is looked
 * up on the server and, when missing, created there, or with
 * --no-install-crds named in a refusal (unless it is annotated
 * volray.io/optional: a kind no role needs). One already there is left
 * as it is.
 *
 * These reads and creates, and the read of /version, are the only
 * requests to the remote API that wait (hclient_call_sync): they run in
 * start_remote, before the loop runs at all, and the roles cannot start
 * before the kinds exist there (the informers would list nothing). Every
 * write made once the loop runs goes without waiting (client.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remote.h"
#include "daemon/flags.h"
#include "daemon/remote.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "node/node.h"
#include "ray/ray.h"
#include "registry/resource.h"
#include "sched/sched.h"

static void
add_kinds(const char ***out, int *n, const char *const *kinds)
{
	int i;

	for (; *kinds != NULL; kinds++) {
		for (i = 0; i < *n; i++)
			if (strcmp((*out)[i], *kinds) == 0)
				break;
		if (i == *n)
			(*out)[(*n)++] = *kinds;
	}
}

const char **
volrayd_remote_kinds(int roles)
{
	static const char *const elect[] = { "leases.coordination.k8s.io",
	    NULL };
	const char **out;
	int n = 0;

	/* The Lua controllers may read any kind (volray.get, a policy
	   directory's own controllers): everything. */
	if (roles & ROLE_CONTROLLERS)
		return NULL;
	out = xcalloc(64, sizeof *out);
	if (roles & ROLE_SCHEDULER) {
		add_kinds(&out, &n, sched_kinds);
		add_kinds(&out, &n, elect);
	}
	if (roles & ROLE_NODES)
		add_kinds(&out, &n, node_mgr_kinds);
	if (roles & ROLE_RAY)
		add_kinds(&out, &n, ray_kinds);
	return out;
}

cJSON *
volrayd_crds_load(const char *dir, char **cause)
{
	cJSON *docs, *all, *d;

	if ((docs = yamljson_load_dir(dir, cause)) == NULL)
		return NULL;
	if (*cause != NULL) {
		log_error("volrayd: CRD file %s", *cause);
		free(*cause);
		*cause = NULL;
	}
	all = cJSON_CreateArray();
	while ((d = cJSON_DetachItemFromArray(docs, 0)) != NULL) {
		if (resource_register_crd(d, cause) != 0) {
			log_error("volrayd: CRD in %s: %s", dir, *cause);
			free(*cause);
			*cause = NULL;
			cJSON_Delete(d);
			continue;
		}
		cJSON_AddItemToArray(all, d);
	}
	cJSON_Delete(docs);
	return all;
}

int
volrayd_crds_ensure(remote *rm, const cJSON *crds, int install,
    char **cause)
{
	const resource *crdres = resource_find("apiextensions.k8s.io", "v1",
	    "customresourcedefinitions");
	char *missing = NULL;
	const cJSON *d;

	cJSON_ArrayForEach(d, crds) {
		const char *name = json_str(d, "metadata.name");
		char *path, *body = NULL, *err = NULL;
		struct reg_result res;
		long status = 0;

		path = util_printf("/apis/apiextensions.k8s.io/v1/"
		    "customresourcedefinitions/%s", name);
		if (remote_get(rm, path, &status, &body, &err) != 0) {
			*cause = util_printf("%s: %s", remote_server(rm), err);
			free(err);
			free(path);
			free(missing);
			return -1;
		}
		free(path);
		free(body);
		if (status == 200)
			continue;
		if (status != 404) {
			*cause = util_printf("reading CRD %s: HTTP %ld", name,
			    status);
			free(missing);
			return -1;
		}
		if (!install) {
			char *m;

			/* Kinds no role needs (the Gateway API's): absent
			   is fine. */
			if (cJSON_GetObjectItemCaseSensitive(json_at(d,
			    "metadata.annotations"), "volray.io/optional") !=
			    NULL)
				continue;
			m = util_printf("%s%s%s", missing ? missing : "",
			    missing ? ", " : "", name);

			free(missing);
			missing = m;
			continue;
		}
		client_create(remote_client(rm), crdres, "",
		    cJSON_Duplicate(d, 1), NULL, &res);
		if (res.code == 409) {
			/* Another replica installed it between the read and
			   the create: it is there. */
			log_info("volrayd: CRD %s was installed by another "
			    "process on %s", name, remote_server(rm));
			cJSON_Delete(res.body);
			continue;
		}
		if (res.code >= 300) {
			char *s = json_print(res.body);

			*cause = util_printf("installing CRD %s: %s", name, s);
			free(s);
			cJSON_Delete(res.body);
			free(missing);
			return -1;
		}
		log_info("volrayd: installed CRD %s on %s", name,
		    remote_server(rm));
		cJSON_Delete(res.body);
	}
	if (missing != NULL) {
		*cause = util_printf("--no-install-crds: %s lacks the CRDs %s",
		    remote_server(rm), missing);
		free(missing);
		return -1;
	}
	return 0;
}

int
volrayd_remote_foreign(remote *rm)
{
	char *body = NULL, *err = NULL;
	const char *commit;
	long status = 0;
	cJSON *v;
	int foreign = 0;

	if (remote_get(rm, "/version", &status, &body, &err) != 0) {
		log_warn("volrayd: %s/version: %s", remote_server(rm), err);
		free(err);
		return 0;
	}
	if (status == 200 && (v = cJSON_Parse(body)) != NULL) {
		commit = json_str(v, "gitCommit");
		foreign = commit != NULL && strcmp(commit, "volray") != 0;
		if (foreign)
			log_info("volrayd: %s is %s, not volrayd: the Ray heads "
			    "of volray's nodes are reached through its node "
			    "proxy", remote_server(rm), json_str(v,
			    "gitVersion") ? json_str(v, "gitVersion") : "?");
		cJSON_Delete(v);
	}
	free(body);
	return foreign;
}
