/*
 * Tests for the RBAC authorizer (auth/rbac.c, rbac_rule.c, rbac_policy.c)
 * over a real store and registry: rule matching (wildcards, subresources
 * and "*\/sub", resourceNames, nonResourceURLs), RoleBindings to a
 * ClusterRole granting in their namespace only, service-account subjects,
 * system:masters; the index following a deleted binding; the bootstrap
 * policy, its reconciliation and aggregation into admin/edit/view;
 * escalation prevention (covering, bind, escalate, aggregationRule); the
 * 403 texts; the self-subject reviews (answered, never stored); the
 * binding validation (roleRef immutable); and Lua controllers acting as
 * system:controller:NAME-controller (a denied read or write fails like the
 * API's 403, a controller without a binding can do nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>
#include <dirent.h>

#include "auth/rbac.h"
#include "check.h"
#include "client/embedded.h"
#include "ctrl/controller.h"
#include "lib/json.h"
#include "registry/resource.h"

static uv_loop_t *loop;
static store *st;
static registry *rg;
static rbac *rb;

static const char *const g_auth[] = { "system:authenticated" };
static const char *const g_devs[] = { "system:authenticated", "devs" };
static const char *const g_masters[] = { "system:masters",
    "system:authenticated" };
static const user_info alice = { "alice", "", g_auth, 1 };
static const user_info bob = { "bob", "", g_devs, 2 };
static const user_info carol = { "carol", "", g_auth, 1 };
static const user_info admin = { "admin", "", g_masters, 2 };
static const user_info sa1 = { "system:serviceaccount:ns1:sa1", "", g_auth,
    1 };

static void
on_durable(void *arg)
{
	*(int *)arg = 1;
}

/* Run the loop until every write so far is durable (events delivered). */
static void
settle(void)
{
	int done = 0;

	store_when_durable(st, store_rev(st), on_durable, &done);
	while (!done)
		uv_run(loop, UV_RUN_ONCE);
}

static const resource *
res(const char *plural)
{
	const resource *r = resource_find("rbac.authorization.k8s.io", "v1",
	    plural);

	if (r == NULL)
		r = resource_find("", "v1", plural);
	if (r == NULL)
		r = resource_find("authorization.k8s.io", "v1", plural);
	return r;
}

/* Create from JSON as user (NULL: unchecked); returns the HTTP code. */
static int
create_as(const user_info *u, const char *plural, const char *ns,
    const char *json, char **msg)
{
	struct reg_opts o;
	struct reg_result r;
	int code;

	memset(&o, 0, sizeof o);
	o.user = u;
	registry_create(rg, res(plural), ns, cJSON_Parse(json), &o, &r);
	code = r.code;
	if (msg != NULL)
		*msg = json_str(r.body, "message") ? strdup(json_str(r.body,
		    "message")) : NULL;
	cJSON_Delete(r.body);
	return code;
}

static int
create(const char *plural, const char *ns, const char *json)
{
	return create_as(NULL, plural, ns, json, NULL);
}

static int
can(const user_info *u, const char *verb, const char *group,
    const char *resource, const char *sub, const char *ns, const char *name)
{
	rbac_attrs a = { verb, group, resource, sub, ns, name, NULL };

	return rbac_authorize(rb, u, &a, NULL);
}

static int
can_path(const user_info *u, const char *verb, const char *path)
{
	rbac_attrs a = { verb, "", "", "", "", "", path };

	return rbac_authorize(rb, u, &a, NULL);
}

static cJSON *
get(const char *plural, const char *ns, const char *name)
{
	return registry_get(rg, res(plural), ns, name);
}

/* Does ClusterRole name hold a rule with this group, resource and verb? */
static int
role_has(const char *name, const char *group, const char *resource,
    const char *verb)
{
	cJSON *t = get("clusterroles", "", name);
	const cJSON *r;
	int found = 0;

	cJSON_ArrayForEach(r, json_at(t, "rules"))
		if (json_has_string(r, "apiGroups", group) &&
		    json_has_string(r, "resources", resource) &&
		    json_has_string(r, "verbs", verb))
			found = 1;
	cJSON_Delete(t);
	return found;
}

static void
test_bootstrap(void)
{
	cJSON *t;

	CHECK(role_has("cluster-admin", "*", "*", "*"));
	/* view <- aggregate-to-view; edit <- view + aggregate-to-edit. */
	CHECK(role_has("view", "", "pods", "get"));
	CHECK(role_has("view", "ray.io", "rayclusters", "list"));
	CHECK(role_has("view", "scheduling.volcano.sh", "queues", "get"));
	CHECK(!role_has("view", "", "pods", "create"));
	CHECK(role_has("edit", "", "pods", "get"));
	CHECK(role_has("edit", "", "pods", "create"));
	CHECK(role_has("edit", "batch.volcano.sh", "jobs", "create"));
	CHECK(!role_has("edit", "rbac.authorization.k8s.io", "rolebindings",
	    "create"));
	CHECK(role_has("admin", "", "pods", "create"));
	CHECK(role_has("admin", "rbac.authorization.k8s.io", "rolebindings",
	    "create"));
	/* Components have their roles and bindings. */
	CHECK(role_has("system:controller:job-controller", "batch",
	    "jobs/status", "update"));
	CHECK(role_has("system:kube-scheduler", "", "pods/binding", "create"));
	t = get("clusterrolebindings", "", "system:controller:job-controller");
	CHECK(t != NULL && json_at(t, "subjects") != NULL);
	CHECK_STR(json_str(json_at(t, "subjects")->child, "name"),
	    "system:controller:job-controller");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
	    json_at(t, "metadata.annotations"),
	    "rbac.authorization.kubernetes.io/autoupdate")), "true");
	cJSON_Delete(t);
	t = get("clusterrolebindings", "", "cluster-admin");
	CHECK(t != NULL && json_at(t, "subjects") != NULL &&
	    strcmp(json_str(json_at(t, "subjects")->child, "name"),
	    "system:masters") == 0);
	cJSON_Delete(t);
	/* Everyone authenticated may ask about themselves and discover. */
	CHECK(can(&alice, "create", "authorization.k8s.io",
	    "selfsubjectaccessreviews", "", "", ""));
	CHECK(can_path(&alice, "get", "/apis/apps/v1"));
	CHECK(can_path(&alice, "get", "/version"));
	CHECK(!can_path(&alice, "get", "/metrics"));
	/* The controllers have what their scripts use, and no more. */
	{
		static const char *const g[] = { "system:authenticated" };
		user_info jc = { "system:controller:job-controller", "", g, 1 };

		CHECK(can(&jc, "create", "", "pods", "", "ns1", ""));
		CHECK(can(&jc, "update", "batch", "jobs", "status", "ns1",
		    "j1"));
		CHECK(!can(&jc, "update", "batch", "jobs", "", "ns1", "j1"));
		CHECK(!can(&jc, "create", "apps", "replicasets", "", "ns1",
		    ""));
		CHECK(!can(&jc, "get", "", "secrets", "", "ns1", "s"));
	}
}

static void
test_reconcile(void)
{
	cJSON *t;
	char *cause = NULL;
	struct reg_result r;

	/* A default with a rule removed gets it back at the next start. */
	t = get("clusterroles", "", "system:basic-user");
	json_set(t, "rules", cJSON_CreateArray());
	registry_update(rg, res("clusterroles"), "", "system:basic-user", t,
	    NULL, &r);
	CHECK(r.code == 200);
	cJSON_Delete(r.body);
	settle();
	CHECK(!can(&alice, "create", "authorization.k8s.io",
	    "selfsubjectaccessreviews", "", "", ""));
	CHECK(rbac_bootstrap(rb, &cause) == 0);
	free(cause);
	CHECK(can(&alice, "create", "authorization.k8s.io",
	    "selfsubjectaccessreviews", "", "", ""));
	/* Unless its autoupdate annotation says "false". */
	t = get("clusterroles", "", "system:basic-user");
	json_set(t, "rules", cJSON_CreateArray());
	json_set_str(json_at(t, "metadata.annotations"),
	    "rbac.authorization.kubernetes.io/autoupdate", "false");
	registry_update(rg, res("clusterroles"), "", "system:basic-user", t,
	    NULL, &r);
	CHECK(r.code == 200);
	cJSON_Delete(r.body);
	CHECK(rbac_bootstrap(rb, &cause) == 0);
	free(cause);
	CHECK(!can(&alice, "create", "authorization.k8s.io",
	    "selfsubjectaccessreviews", "", "", ""));
	t = get("clusterroles", "", "system:basic-user");
	json_set_str(json_at(t, "metadata.annotations"),
	    "rbac.authorization.kubernetes.io/autoupdate", "true");
	registry_update(rg, res("clusterroles"), "", "system:basic-user", t,
	    NULL, &r);
	cJSON_Delete(r.body);
	CHECK(rbac_bootstrap(rb, &cause) == 0);
	free(cause);
	CHECK(can(&alice, "create", "authorization.k8s.io",
	    "selfsubjectaccessreviews", "", "", ""));
}

/*
 * An older volray's store: the replicationcontroller controller's role
 * and binding under the name it had (replicationcontroller-controller),
 * none under kube's. The next start creates kube's, so the controller,
 * now running as system:controller:replication-controller, keeps its
 * rights; the old objects stay, as kube-apiserver leaves what it no
 * longer ships.
 */
static void
test_renamed_role(void)
{
	static const char *const g[] = { "system:authenticated" };
	const char *now = "system:controller:replication-controller";
	const char *old = "system:controller:replicationcontroller-controller";
	user_info rc = { now, "", g, 1 };
	struct reg_result r;
	char *cause = NULL, *name;
	cJSON *t;

	name = controller_user_name("replicationcontroller");
	CHECK_STR(name, now);
	free(name);
	CHECK(can(&rc, "create", "", "pods", "", "ns1", ""));
	t = get("clusterroles", "", now);
	CHECK(t != NULL);
	json_set_str(json_obj(t, "metadata"), "name", old);
	cJSON_DeleteItemFromObject(json_obj(t, "metadata"), "uid");
	cJSON_DeleteItemFromObject(json_obj(t, "metadata"),
	    "resourceVersion");
	cJSON_DeleteItemFromObject(json_obj(t, "metadata"),
	    "creationTimestamp");
	registry_create(rg, res("clusterroles"), "", t, NULL, &r);
	CHECK(r.code == 201);
	cJSON_Delete(r.body);
	CHECK(create("clusterrolebindings", "", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata"
	    "\":{\"name\":\"system:controller:replicationcontroller-controller"
	    "\"},\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":\"system:co"
	    "ntroller:replicationcontroller-controller\"},\"subjects\":[{\"ki"
	    "nd\":\"User\",\"name\":\"system:controller:replicationcontrolle"
	    "r-controller\"}]}") == 201);
	registry_remove(rg, res("clusterrolebindings"), "", now, &r);
	CHECK(r.code == 200);
	cJSON_Delete(r.body);
	registry_remove(rg, res("clusterroles"), "", now, &r);
	CHECK(r.code == 200);
	cJSON_Delete(r.body);
	settle();
	CHECK(!can(&rc, "create", "", "pods", "", "ns1", ""));
	CHECK(rbac_bootstrap(rb, &cause) == 0);
	free(cause);
	settle();
	CHECK(can(&rc, "create", "", "pods", "", "ns1", ""));
	CHECK(can(&rc, "update", "", "replicationcontrollers", "status",
	    "ns1", "r1"));
	t = get("clusterrolebindings", "", now);
	CHECK(t != NULL && json_at(t, "subjects") != NULL);
	CHECK_STR(json_str(json_at(t, "subjects")->child, "name"), now);
	cJSON_Delete(t);
	t = get("clusterroles", "", old);
	CHECK(t != NULL);
	cJSON_Delete(t);
}

/*
 * Every controller shipped in lua/controllers/ has a bootstrap
 * ClusterRole and a binding to its user under one name, the user
 * controller_user_name() gives it (kube's spelling where kube has the
 * controller).
 */
static void
test_shipped_controllers(void)
{
	static const char *const kube[][2] = {
		{ "daemonset", "system:controller:daemon-set-controller" },
		{ "endpoints", "system:controller:endpoint-controller" },
		{ "replicationcontroller",
		    "system:controller:replication-controller" },
		{ "resourceclaim", "system:controller:resource-claim-controller" },
		{ "serviceaccount",
		    "system:controller:service-account-controller" },
		{ "job", "system:controller:job-controller" },
		{ "vcjob", "system:controller:vcjob-controller" },
	};
	DIR *dir = opendir(VOLRAY_SRCDIR "/lua/controllers");
	struct dirent *de;
	size_t i, len;
	char *name, stem[256];
	cJSON *t;
	int n = 0;

	for (i = 0; i < sizeof kube / sizeof kube[0]; i++) {
		name = controller_user_name(kube[i][0]);
		CHECK_STR(name, kube[i][1]);
		free(name);
	}
	CHECK(dir != NULL);
	while (dir != NULL && (de = readdir(dir)) != NULL) {
		len = strlen(de->d_name);
		if (len < 5 || len >= sizeof stem ||
		    strcmp(de->d_name + len - 4, ".lua") != 0)
			continue;
		snprintf(stem, sizeof stem, "%.*s", (int)(len - 4), de->d_name);
		name = controller_user_name(stem);
		t = get("clusterroles", "", name);
		if (t == NULL)
			fprintf(stderr, "no ClusterRole %s for %s\n", name,
			    de->d_name);
		CHECK(t != NULL);
		cJSON_Delete(t);
		t = get("clusterrolebindings", "", name);
		CHECK(t != NULL && json_at(t, "subjects") != NULL);
		if (t != NULL && json_at(t, "subjects") != NULL) {
			CHECK_STR(json_str(json_at(t, "subjects")->child,
			    "name"), name);
			CHECK_STR(json_str(t, "roleRef.name"), name);
		}
		cJSON_Delete(t);
		free(name);
		n++;
	}
	if (dir != NULL)
		closedir(dir);
	CHECK(n >= 20);
}

static void
test_matching(void)
{
	char *reason = NULL;
	rbac_attrs a = { "create", "", "pods", "", "ns1", "", NULL };

	CHECK(!can(&alice, "create", "", "pods", "", "ns1", ""));
	CHECK(create("rolebindings", "ns1", "{\"apiVersion\":\"rbac.authoriz"
	    "ation.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name"
	    "\":\"alice-edit\"},\"roleRef\":{\"apiGroup\":\"rbac.authorizatio"
	    "n.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"edit\"},\"subject"
	    "s\":[{\"kind\":\"User\",\"name\":\"alice\"}]}") == 201);
	/* A RoleBinding to a ClusterRole grants in its namespace only. */
	CHECK(can(&alice, "create", "", "pods", "", "ns1", ""));
	CHECK(can(&alice, "get", "", "pods", "", "ns1", "p1"));
	CHECK(!can(&alice, "create", "", "pods", "", "default", ""));
	CHECK(!can(&alice, "list", "", "pods", "", "", ""));
	CHECK(!can(&alice, "create", "rbac.authorization.k8s.io",
	    "rolebindings", "", "ns1", ""));
	CHECK(rbac_authorize(rb, &alice, &a, &reason) == 1);
	CHECK_STR(reason, "RBAC: allowed by RoleBinding \"alice-edit/ns1\" of "
	    "ClusterRole \"edit\" to User \"alice\"");
	free(reason);

	/* Wildcards: "*" resources in one group, for a Group subject. */
	CHECK(create("clusterroles", "", "{\"apiVersion\":\"rbac.authorizati"
	    "on.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":"
	    "\"apps-all\"},\"rules\":[{\"apiGroups\":[\"apps\"],\"resources\""
	    ":[\"*\"],\"verbs\":[\"*\"]},{\"apiGroups\":[\"\"],\"resources\":"
	    "[\"pods/log\"],\"verbs\":[\"get\"]},{\"apiGroups\":[\"batch\"],"
	    "\"resources\":[\"*/status\"],\"verbs\":[\"update\"]},{\"apiGroups"
	    "\":[\"\"],\"resources\":[\"configmaps\"],\"resourceNames\":[\"cm"
	    "1\"],\"verbs\":[\"get\",\"list\",\"update\"]},{\"nonResourceURLs"
	    "\":[\"/logs/*\",\"/metrics\"],\"verbs\":[\"get\"]}]}") == 201);
	CHECK(create("clusterrolebindings", "", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata"
	    "\":{\"name\":\"devs-apps\"},\"roleRef\":{\"kind\":\"ClusterRole\""
	    ",\"name\":\"apps-all\"},\"subjects\":[{\"kind\":\"Group\",\"name"
	    "\":\"devs\"}]}") == 201);
	CHECK(can(&bob, "delete", "apps", "deployments", "", "any", "d1"));
	CHECK(can(&bob, "update", "apps", "deployments", "status", "any",
	    "d1"));
	CHECK(can(&bob, "list", "apps", "replicasets", "", "", ""));
	CHECK(!can(&bob, "delete", "", "pods", "", "any", "p1"));
	CHECK(!can(&bob, "delete", "batch", "jobs", "", "any", "j1"));
	/* Subresources: "pods/log" and "*\/status". */
	CHECK(can(&bob, "get", "", "pods", "log", "x", "p1"));
	CHECK(!can(&bob, "get", "", "pods", "", "x", "p1"));
	CHECK(!can(&bob, "get", "", "pods", "exec", "x", "p1"));
	CHECK(can(&bob, "update", "batch", "jobs", "status", "x", "j1"));
	CHECK(!can(&bob, "update", "batch", "jobs", "", "x", "j1"));
	/* resourceNames never match a request without a name. */
	CHECK(can(&bob, "get", "", "configmaps", "", "x", "cm1"));
	CHECK(!can(&bob, "get", "", "configmaps", "", "x", "cm2"));
	CHECK(!can(&bob, "list", "", "configmaps", "", "x", ""));
	/* nonResourceURLs: exact, or a prefix ending in "*". */
	CHECK(can_path(&bob, "get", "/logs/a/b"));
	CHECK(can_path(&bob, "get", "/logs/"));
	CHECK(!can_path(&bob, "get", "/logs"));
	CHECK(can_path(&bob, "get", "/metrics"));
	CHECK(!can_path(&bob, "get", "/metricsx"));
	CHECK(!can_path(&bob, "post", "/metrics"));
	/* A resource rule never matches a path, nor the reverse. */
	CHECK(!can(&bob, "get", "", "metrics", "", "", ""));

	/* A namespaced Role, and a service account by its namespace. */
	CHECK(create("roles", "ns1", "{\"apiVersion\":\"rbac.authorization."
	    "k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"secrets-"
	    "reader\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"secr"
	    "ets\"],\"verbs\":[\"get\"]}]}") == 201);
	CHECK(create("rolebindings", "ns1", "{\"apiVersion\":\"rbac.authoriz"
	    "ation.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name"
	    "\":\"sa1-secrets\"},\"roleRef\":{\"kind\":\"Role\",\"name\":\"se"
	    "crets-reader\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"nam"
	    "e\":\"sa1\"}]}") == 201);
	CHECK(can(&sa1, "get", "", "secrets", "", "ns1", "s"));
	CHECK(!can(&sa1, "get", "", "secrets", "", "ns2", "s"));
	CHECK(!can(&sa1, "list", "", "secrets", "", "ns1", ""));

	/* system:masters may do anything, bound or not. */
	CHECK(can(&admin, "escalate", "x.io", "anything", "sub", "", "n"));
	CHECK(can_path(&admin, "delete", "/whatever"));
	CHECK(rbac_authorize(rb, NULL, &a, NULL) == 1);

	/* A binding to a missing role says so in the reason. */
	CHECK(create("rolebindings", "ns2", "{\"apiVersion\":\"rbac.authoriz"
	    "ation.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name"
	    "\":\"dangling\"},\"roleRef\":{\"kind\":\"ClusterRole\",\"name\":"
	    "\"nope\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"carol\"}]}")
	    == 201);
	a.ns = "ns2";
	CHECK(rbac_authorize(rb, &carol, &a, &reason) == 0);
	CHECK_STR(reason, "RBAC: clusterrole.rbac.authorization.k8s.io \"nope\" "
	    "not found");
	free(reason);
}

static void
test_invalidation(void)
{
	struct reg_result r;
	uint64_t before;

	settle();
	CHECK(can(&bob, "delete", "apps", "deployments", "", "any", "d1"));
	before = rbac_rebuilds(rb);
	/* No RBAC change: the index is not rebuilt. */
	CHECK(create("namespaces", "", "{\"apiVersion\":\"v1\",\"kind\":\"Na"
	    "mespace\",\"metadata\":{\"name\":\"other\"}}") == 201);
	settle();
	CHECK(can(&bob, "delete", "apps", "deployments", "", "any", "d1"));
	CHECK(rbac_rebuilds(rb) == before);
	registry_delete(rg, res("clusterrolebindings"), "", "devs-apps", NULL,
	    &r);
	CHECK(r.code == 200);
	cJSON_Delete(r.body);
	settle();
	CHECK(!can(&bob, "delete", "apps", "deployments", "", "any", "d1"));
	CHECK(rbac_rebuilds(rb) == before + 1);
	/* And the ClusterRole's other subjects keep nothing either. */
	CHECK(!can_path(&bob, "get", "/metrics"));
}

static void
test_aggregation(void)
{
	CHECK(!role_has("view", "example.com", "widgets", "get"));
	CHECK(create("clusterroles", "", "{\"apiVersion\":\"rbac.authorizati"
	    "on.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":"
	    "\"widgets-view\",\"labels\":{\"rbac.authorization.k8s.io/aggrega"
	    "te-to-view\":\"true\"}},\"rules\":[{\"apiGroups\":[\"example.com"
	    "\"],\"resources\":[\"widgets\"],\"verbs\":[\"get\"]}]}") == 201);
	settle();
	/* The durable event reaches the aggregator; the chain settles. */
	CHECK(role_has("view", "example.com", "widgets", "get"));
	CHECK(role_has("edit", "example.com", "widgets", "get"));
	CHECK(role_has("admin", "example.com", "widgets", "get"));
	CHECK(can(&alice, "get", "example.com", "widgets", "", "ns1", "w"));
	{
		struct reg_result r;

		registry_delete(rg, res("clusterroles"), "", "widgets-view",
		    NULL, &r);
		cJSON_Delete(r.body);
	}
	settle();
	settle();
	CHECK(!role_has("view", "example.com", "widgets", "get"));
	CHECK(!role_has("admin", "example.com", "widgets", "get"));
}

static void
test_escalation(void)
{
	char *msg = NULL;

	/* alice holds edit in ns1: binding view there is no escalation. */
	CHECK(create_as(&alice, "rolebindings", "ns1", "{\"apiVersion\":\"rb"
	    "ac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata"
	    "\":{\"name\":\"carol-view\"},\"roleRef\":{\"kind\":\"ClusterRole"
	    "\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
	    "\"carol\"}]}", NULL) == 201);
	/* Nor in another namespace, where she holds nothing. */
	CHECK(create_as(&alice, "rolebindings", "ns2", "{\"apiVersion\":\"rb"
	    "ac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata"
	    "\":{\"name\":\"carol-view\"},\"roleRef\":{\"kind\":\"ClusterRole"
	    "\",\"name\":\"view\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
	    "\"carol\"}]}", &msg) == 403);
	free(msg);
	/* cluster-admin is more than she has. */
	CHECK(create_as(&alice, "rolebindings", "ns1", "{\"apiVersion\":\"rb"
	    "ac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata"
	    "\":{\"name\":\"carol-admin\"},\"roleRef\":{\"kind\":\"ClusterRol"
	    "e\",\"name\":\"cluster-admin\"},\"subjects\":[{\"kind\":\"User\""
	    ",\"name\":\"carol\"}]}", &msg) == 403);
	CHECK_STR(msg, "rolebindings.rbac.authorization.k8s.io \"carol-admin\" "
	    "is forbidden: user \"alice\" (groups=[\"system:authenticated\"]) "
	    "is attempting to grant RBAC permissions not currently held:\n"
	    "{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n"
	    "{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}");
	free(msg);
	/* A missing role is a 404. */
	CHECK(create_as(&alice, "rolebindings", "ns1", "{\"apiVersion\":\"rb"
	    "ac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata"
	    "\":{\"name\":\"x\"},\"roleRef\":{\"kind\":\"ClusterRole\",\"name"
	    "\":\"missing\"},\"subjects\":[]}", &msg) == 404);
	CHECK_STR(msg, "clusterroles.rbac.authorization.k8s.io \"missing\" not "
	    "found");
	free(msg);
	/* Roles: what she holds, yes; nodes, no (compacted by verb). */
	CHECK(create_as(&alice, "roles", "ns1", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":"
	    "\"pods-rw\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"p"
	    "ods\"],\"verbs\":[\"get\",\"create\"]}]}", NULL) == 201);
	CHECK(create_as(&alice, "roles", "ns1", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":"
	    "\"nodes\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nod"
	    "es\",\"pods\"],\"verbs\":[\"get\",\"delete\"]}]}", &msg) == 403);
	CHECK_STR(msg, "roles.rbac.authorization.k8s.io \"nodes\" is forbidden: "
	    "user \"alice\" (groups=[\"system:authenticated\"]) is attempting "
	    "to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], "
	    "Resources:[\"nodes\"], Verbs:[\"get\" \"delete\"]}");
	free(msg);
	/* "bind" on a named ClusterRole lets her bind just that one. */
	CHECK(create("roles", "ns1", "{\"apiVersion\":\"rbac.authorization."
	    "k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"binder\"}"
	    ",\"rules\":[{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"res"
	    "ources\":[\"clusterroles\"],\"resourceNames\":[\"cluster-admin\"]"
	    ",\"verbs\":[\"bind\"]},{\"apiGroups\":[\"rbac.authorization.k8s."
	    "io\"],\"resources\":[\"roles\"],\"verbs\":[\"escalate\"]}]}") ==
	    201);
	CHECK(create("rolebindings", "ns1", "{\"apiVersion\":\"rbac.authoriz"
	    "ation.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata\":{\"name"
	    "\":\"alice-binder\"},\"roleRef\":{\"kind\":\"Role\",\"name\":\"b"
	    "inder\"},\"subjects\":[{\"kind\":\"User\",\"name\":\"alice\"}]}")
	    == 201);
	CHECK(create_as(&alice, "rolebindings", "ns1", "{\"apiVersion\":\"rb"
	    "ac.authorization.k8s.io/v1\",\"kind\":\"RoleBinding\",\"metadata"
	    "\":{\"name\":\"carol-admin\"},\"roleRef\":{\"kind\":\"ClusterRol"
	    "e\",\"name\":\"cluster-admin\"},\"subjects\":[{\"kind\":\"User\""
	    ",\"name\":\"carol\"}]}", NULL) == 201);
	/* "escalate" on roles lets her write a Role with more than she has. */
	CHECK(create_as(&alice, "roles", "ns1", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":"
	    "\"nodes\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"nod"
	    "es\"],\"verbs\":[\"get\"]}]}", NULL) == 201);
	/* An aggregationRule takes cluster-admin, whatever the rules. */
	CHECK(create_as(&bob, "clusterroles", "", "{\"apiVersion\":\"rbac.au"
	    "thorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{"
	    "\"name\":\"agg\"},\"aggregationRule\":{\"clusterRoleSelectors\":"
	    "[{\"matchLabels\":{\"a\":\"b\"}}]}}", &msg) == 403);
	CHECK_STR(msg, "clusterroles.rbac.authorization.k8s.io \"agg\" is "
	    "forbidden: must have cluster-admin privileges to use the "
	    "aggregationRule");
	free(msg);
	CHECK(create_as(&admin, "clusterroles", "", "{\"apiVersion\":\"rbac."
	    "authorization.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":"
	    "{\"name\":\"agg\"},\"aggregationRule\":{\"clusterRoleSelectors\""
	    ":[{\"matchLabels\":{\"a\":\"b\"}}]}}", NULL) == 201);
	/* Other kinds pass the hook untouched. */
	CHECK(create_as(&carol, "configmaps", "ns1", "{\"apiVersion\":\"v1\""
	    ",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}", NULL) ==
	    201);
}

static void
test_forbidden(void)
{
	rbac_attrs list = { "list", "", "pods", "", "default", "", NULL };
	rbac_attrs nodes = { "list", "", "nodes", "", "", "", NULL };
	rbac_attrs logs = { "get", "", "pods", "log", "default", "p1", NULL };
	rbac_attrs deploy = { "delete", "apps", "deployments", "", "ns1", "d1",
	    NULL };
	rbac_attrs path = { "get", "", "", "", "", "", "/metrics" };
	cJSON *s;

	s = rbac_forbidden(&alice, &list);
	CHECK_STR(json_str(s, "message"), "pods is forbidden: User \"alice\" "
	    "cannot list resource \"pods\" in API group \"\" in the namespace "
	    "\"default\"");
	CHECK_STR(json_str(s, "reason"), "Forbidden");
	CHECK(cJSON_GetNumberValue(json_at(s, "code")) == 403);
	CHECK_STR(json_str(s, "details.kind"), "pods");
	CHECK(json_at(s, "details.name") == NULL);
	CHECK(json_at(s, "details.group") == NULL);
	cJSON_Delete(s);
	s = rbac_forbidden(&alice, &nodes);
	CHECK_STR(json_str(s, "message"), "nodes is forbidden: User \"alice\" "
	    "cannot list resource \"nodes\" in API group \"\" at the cluster "
	    "scope");
	cJSON_Delete(s);
	s = rbac_forbidden(&alice, &logs);
	CHECK_STR(json_str(s, "message"), "pods \"p1\" is forbidden: User "
	    "\"alice\" cannot get resource \"pods/log\" in API group \"\" in "
	    "the namespace \"default\"");
	CHECK_STR(json_str(s, "details.name"), "p1");
	cJSON_Delete(s);
	s = rbac_forbidden(&alice, &deploy);
	CHECK_STR(json_str(s, "message"), "deployments.apps \"d1\" is "
	    "forbidden: User \"alice\" cannot delete resource \"deployments\" "
	    "in API group \"apps\" in the namespace \"ns1\"");
	CHECK_STR(json_str(s, "details.group"), "apps");
	CHECK_STR(json_str(s, "details.kind"), "deployments");
	cJSON_Delete(s);
	s = rbac_forbidden(&alice, &path);
	CHECK_STR(json_str(s, "message"), "forbidden: User \"alice\" cannot "
	    "get path \"/metrics\"");
	cJSON_Delete(s);
	s = rbac_forbidden_reason(&carol, &list, "RBAC: clusterrole."
	    "rbac.authorization.k8s.io \"nope\" not found");
	CHECK_STR(json_str(s, "message"), "pods is forbidden: User \"carol\" "
	    "cannot list resource \"pods\" in API group \"\" in the namespace "
	    "\"default\": RBAC: clusterrole.rbac.authorization.k8s.io \"nope\" "
	    "not found");
	cJSON_Delete(s);
}

static void
test_reviews(void)
{
	char *cause = NULL, *msg = NULL;
	cJSON *body, *out;
	const cJSON *it;
	int pods_create = 0, urls = 0;

	body = cJSON_Parse("{\"spec\":{\"resourceAttributes\":{\"namespace\":"
	    "\"ns1\",\"verb\":\"create\",\"resource\":\"pods\"}}}");
	out = rbac_self_access_review(rb, &alice, body, &cause);
	CHECK(out != NULL && cJSON_IsTrue(json_at(out, "status.allowed")));
	CHECK_STR(json_str(out, "kind"), "SelfSubjectAccessReview");
	CHECK_STR(json_str(out, "spec.resourceAttributes.verb"), "create");
	cJSON_Delete(out);
	json_set_str(json_at(body, "spec.resourceAttributes"), "namespace",
	    "default");
	out = rbac_self_access_review(rb, &alice, body, &cause);
	CHECK(out != NULL && cJSON_IsFalse(json_at(out, "status.allowed")));
	cJSON_Delete(out);
	cJSON_Delete(body);
	body = cJSON_Parse("{\"spec\":{}}");
	CHECK(rbac_self_access_review(rb, &alice, body, &cause) == NULL);
	CHECK(cause != NULL && strstr(cause, "exactly one of") != NULL);
	free(cause);
	cJSON_Delete(body);

	body = cJSON_Parse("{\"spec\":{\"namespace\":\"ns1\"}}");
	out = rbac_self_rules_review(rb, &alice, body, &cause);
	CHECK(out != NULL);
	cJSON_ArrayForEach(it, json_at(out, "status.resourceRules"))
		if (json_has_string(it, "resources", "pods") &&
		    json_has_string(it, "verbs", "create"))
			pods_create = 1;
	cJSON_ArrayForEach(it, json_at(out, "status.nonResourceRules"))
		if (json_has_string(it, "nonResourceURLs", "/version"))
			urls = 1;
	CHECK(pods_create && urls);
	CHECK(cJSON_IsFalse(json_at(out, "status.incomplete")));
	cJSON_Delete(out);
	cJSON_Delete(body);
	body = cJSON_Parse("{\"spec\":{}}");
	CHECK(rbac_self_rules_review(rb, &alice, body, &cause) == NULL);
	CHECK_STR(cause, "no namespace on request");
	free(cause);
	cJSON_Delete(body);

	/* The generic create path answers and stores nothing. */
	CHECK(create_as(&alice, "selfsubjectaccessreviews", "", "{\"apiVersi"
	    "on\":\"authorization.k8s.io/v1\",\"kind\":\"SelfSubjectAccessRev"
	    "iew\",\"spec\":{\"nonResourceAttributes\":{\"path\":\"/api\",\"v"
	    "erb\":\"get\"}}}", NULL) == 201);
	CHECK(create_as(NULL, "selfsubjectaccessreviews", "", "{\"spec\":{"
	    "\"nonResourceAttributes\":{\"path\":\"/api\",\"verb\":\"get\"}}}",
	    &msg) == 400);
	CHECK_STR(msg, "no user present on request");
	free(msg);
	CHECK(create_as(&alice, "selfsubjectaccessreviews", "", "{\"spec\":{"
	    "}}", &msg) == 422);
	CHECK(msg != NULL && strstr(msg, "SelfSubjectAccessReview.authorizati"
	    "on.k8s.io \"\" is invalid: spec.resourceAttributes") != NULL);
	free(msg);
	CHECK(store_count(st, "selfsubjectaccessreviews.authorization.k8s.io")
	    == 0);
	/* AlwaysAllow: everything, reviews included; then RBAC again. */
	CHECK(!can(&carol, "delete", "", "nodes", "", "", "n1"));
	rbac_set_always_allow(rb, 1);
	CHECK(can(&carol, "delete", "", "nodes", "", "", "n1"));
	body = cJSON_Parse("{\"spec\":{\"namespace\":\"ns9\"}}");
	out = rbac_self_rules_review(rb, &carol, body, &cause);
	CHECK(out != NULL && json_has_string(cJSON_GetArrayItem(json_at(out,
	    "status.resourceRules"), 0), "verbs", "*"));
	cJSON_Delete(out);
	cJSON_Delete(body);
	rbac_set_always_allow(rb, 0);
	CHECK(!can(&carol, "delete", "", "nodes", "", "", "n1"));
	CHECK(res("selfsubjectrulesreviews")->create_only);
	CHECK(!res("roles")->create_only);
}

static void
test_validation(void)
{
	struct reg_result r;
	cJSON *t;
	char *msg = NULL;

	t = get("rolebindings", "ns1", "carol-view");
	json_set_str(json_at(t, "roleRef"), "name", "edit");
	registry_update(rg, res("rolebindings"), "ns1", "carol-view", t, NULL,
	    &r);
	CHECK(r.code == 422);
	CHECK_STR(json_str(r.body, "message"), "RoleBinding.rbac.authorization"
	    ".k8s.io \"carol-view\" is invalid: roleRef: Invalid value: "
	    "{\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":"
	    "\"ClusterRole\",\"Name\":\"edit\"}: cannot change roleRef");
	CHECK_STR(json_str(json_at(r.body, "details.causes")->child, "field"),
	    "roleRef");
	cJSON_Delete(r.body);
	CHECK(create_as(NULL, "clusterrolebindings", "", "{\"apiVersion\":\"r"
	    "bac.authorization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\""
	    "metadata\":{\"name\":\"bad\"},\"roleRef\":{\"kind\":\"Role\",\"n"
	    "ame\":\"r\"},\"subjects\":[{\"kind\":\"ServiceAccount\",\"name\""
	    ":\"sa\"}]}", &msg) == 422);
	CHECK(msg != NULL && strstr(msg, "roleRef.kind: Unsupported value: "
	    "\"Role\": supported values: \"ClusterRole\"") != NULL);
	CHECK(msg != NULL && strstr(msg, "subjects[0].namespace: Required "
	    "value") != NULL);
	free(msg);
	CHECK(create_as(NULL, "roles", "ns1", "{\"apiVersion\":\"rbac.author"
	    "ization.k8s.io/v1\",\"kind\":\"Role\",\"metadata\":{\"name\":\"u"
	    "rls\"},\"rules\":[{\"nonResourceURLs\":[\"/x\"],\"verbs\":[\"get"
	    "\"]}]}", &msg) == 422);
	CHECK(msg != NULL && strstr(msg, "rules[0].nonResourceURLs: Invalid "
	    "value: [\"/x\"]: namespaced rules cannot apply to "
	    "non-resource URLs") != NULL);
	free(msg);
}

static const char probe_lua[] =
"local v = volray\n"
"local c = { primary = 'v1/configmaps' }\n"
"function c.reconcile(req)\n"
"  if req.name:sub(1, 4) == 'out-' or req.name:sub(1, 6) == 'rogue-' then\n"
"    return nil\n"
"  end\n"
"  local _, err, code = v.get('v1/secrets', req.namespace, 'x')\n"
"  local _, err2, code2 = v.create({apiVersion = 'rbac.authorization.k8s.io/v1',\n"
"    kind = 'RoleBinding', metadata = {name = 'grab', namespace = req.namespace},\n"
"    roleRef = {apiGroup = 'rbac.authorization.k8s.io', kind = 'ClusterRole',\n"
"      name = 'cluster-admin'},\n"
"    subjects = {{kind = 'User', name = 'system:controller:probe-controller'}}})\n"
"  assert(v.create({apiVersion = 'v1', kind = 'ConfigMap',\n"
"    metadata = {name = 'out-' .. req.name, namespace = req.namespace},\n"
"    data = {get = tostring(code), getmsg = tostring(err),\n"
"      bind = tostring(code2), bindmsg = tostring(err2)}}))\n"
"end\n"
"return c\n";

static const char rogue_lua[] =
"local v = volray\n"
"local c = { primary = 'v1/configmaps' }\n"
"function c.reconcile(req)\n"
"  if req.name:sub(1, 4) == 'out-' or req.name:sub(1, 6) == 'rogue-' then\n"
"    return nil\n"
"  end\n"
"  local ok, err = v.create({apiVersion = 'v1', kind = 'ConfigMap',\n"
"    metadata = {name = 'rogue-' .. req.name, namespace = req.namespace}})\n"
"  if not ok then error(err) end\n"
"end\n"
"return c\n";

static void
put_file(const char *dir, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if ((f = fopen(path, "w")) == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

static void
test_controllers(void)
{
	char root[] = "/tmp/volray-test-rbac-lua.XXXXXX", sub[600], cmd[700];
	const char *roots[1] = { root };
	struct luahost_limits lim = { 64 << 20, 10000000 };
	controller_rt *rt;
	client *cl;
	luahost *h;
	char *cause = NULL, *name;
	cJSON *out = NULL, *ev;
	int i;

	CHECK(mkdtemp(root) != NULL);
	snprintf(sub, sizeof sub, "%s/controllers", root);
	CHECK(mkdir(sub, 0700) == 0);
	put_file(root, "controllers/probe.lua", probe_lua);
	put_file(root, "controllers/rogue.lua", rogue_lua);
	name = controller_user_name("probe");
	CHECK_STR(name, "system:controller:probe-controller");
	free(name);
	/* probe may read and write ConfigMaps and create RoleBindings. */
	CHECK(create("clusterroles", "", "{\"apiVersion\":\"rbac.authorizati"
	    "on.k8s.io/v1\",\"kind\":\"ClusterRole\",\"metadata\":{\"name\":"
	    "\"probe\"},\"rules\":[{\"apiGroups\":[\"\"],\"resources\":[\"c"
	    "onfigmaps\"],\"verbs\":[\"get\",\"list\",\"watch\",\"create\"]"
	    "},{\"apiGroups\":[\"rbac.authorization.k8s.io\"],\"resources\":"
	    "[\"rolebindings\"],\"verbs\":[\"create\"]}]}") == 201);
	CHECK(create("clusterrolebindings", "", "{\"apiVersion\":\"rbac.auth"
	    "orization.k8s.io/v1\",\"kind\":\"ClusterRoleBinding\",\"metadata"
	    "\":{\"name\":\"probe\"},\"roleRef\":{\"kind\":\"ClusterRole\","
	    "\"name\":\"probe\"},\"subjects\":[{\"kind\":\"User\",\"name\":"
	    "\"system:controller:probe-controller\"}]}") == 201);
	settle();
	h = luahost_new(roots, 1, &lim);
	cl = embedded_new(st, rg);
	rt = controller_new(loop, cl, h);
	controller_set_authorizer(rt, rb);
	CHECK(controller_reload(rt, &cause) == 0);
	free(cause);
	CHECK(create("configmaps", "ns2", "{\"apiVersion\":\"v1\",\"kind\":"
	    "\"ConfigMap\",\"metadata\":{\"name\":\"in1\"}}") == 201);
	for (i = 0; i < 500 && out == NULL; i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		usleep(5000);
		out = get("configmaps", "ns2", "out-in1");
	}
	CHECK(out != NULL);
	CHECK_STR(json_str(out, "data.get"), "403");
	CHECK_STR(json_str(out, "data.getmsg"), "secrets \"x\" is forbidden: "
	    "User \"system:controller:probe-controller\" cannot get resource "
	    "\"secrets\" in API group \"\" in the namespace \"ns2\"");
	/* The write reached the escalation check with the controller's user. */
	CHECK_STR(json_str(out, "data.bind"), "403");
	CHECK(json_str(out, "data.bindmsg") != NULL && strstr(json_str(out,
	    "data.bindmsg"), "user \"system:controller:probe-controller\" "
	    "(groups=[\"system:authenticated\"]) is attempting to grant RBAC "
	    "permissions not currently held") != NULL);
	cJSON_Delete(out);
	/* rogue has no binding: nothing written, not even its Warning. */
	for (i = 0; i < 20; i++) {
		uv_run(loop, UV_RUN_NOWAIT);
		usleep(5000);
	}
	out = get("configmaps", "ns2", "rogue-in1");
	CHECK(out == NULL);
	cJSON_Delete(out);
	ev = get("rolebindings", "ns2", "grab");
	CHECK(ev == NULL);
	cJSON_Delete(ev);
	CHECK(store_count(st, "events") == 0);
	controller_free(rt);
	client_free(cl);
	luahost_free(h);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

int
main(void)
{
	char dir[] = "/tmp/volray-test-rbac.XXXXXX";
	char *cause = NULL, cmd[300];

	loop = uv_default_loop();
	CHECK(mkdtemp(dir) != NULL);
	resource_init();
	CHECK(store_open(loop, dir, &st, &cause) == 0);
	rg = registry_new(st);
	rb = rbac_new(st, rg);
	CHECK(registry_bootstrap(rg, NULL, &cause) == 0);
	CHECK(rbac_bootstrap(rb, &cause) == 0);
	free(cause);
	CHECK(create("namespaces", "", "{\"apiVersion\":\"v1\",\"kind\":\"Na"
	    "mespace\",\"metadata\":{\"name\":\"ns1\"}}") == 201);
	CHECK(create("namespaces", "", "{\"apiVersion\":\"v1\",\"kind\":\"Na"
	    "mespace\",\"metadata\":{\"name\":\"ns2\"}}") == 201);
	settle();

	test_bootstrap();
	test_reconcile();
	test_renamed_role();
	test_shipped_controllers();
	test_matching();
	test_invalidation();
	test_aggregation();
	test_escalation();
	test_forbidden();
	test_reviews();
	test_validation();
	test_controllers();

	settle();
	store_close(st);
	uv_run(loop, UV_RUN_NOWAIT);
	rbac_free(rb);
	registry_free(rg);
	resource_shutdown();
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_result("test-rbac");
}
