/*
 * What the local node's pods get so that `ray` finds the heads: the
 * directory of `ray` first on PATH, and the daemon's API as an identity
 * of their namespace's own. The identity is
 * system:serviceaccount:NS:volray-ray (groups system:serviceaccounts and
 * system:serviceaccounts:NS), with a token minted per namespace when its
 * first local process starts and forgotten at exit; RBAC lets it do
 * only get, create and delete on services/proxy and pods/proxy in NS
 * (ClusterRole volray:ray-client, bound by RoleBinding volray:ray-client
 * in each namespace that runs local pods). Pods never see the admin's
 * token. A pod with a network of its own (podnet.c) reaches the API on
 * its gateway (ray_set_pods_api), one on the host's on loopback. The variables are VOLRAY_API_SERVER, VOLRAY_CA_FILE,
 * VOLRAY_TOKEN and VOLRAY_NAMESPACE; a pod's own env still wins.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define ROLE "volray:ray-client"

struct podenv {
	client *c;
	char *bin_dir;
	char *api_url;
	char *pods_url;		/* pods with a network of their own */
	char *ca_file;
	ray_mint_fn mint;
	void *mint_arg;
	hmap *tokens;			/* namespace -> token */
};

/* A create's answer; arg is the resource's name (a literal). */
static void
on_created(void *arg, struct reg_result *out)
{
	const char *res = arg;

	if (out->code != 201 && out->code != 409)
		log_warn("ray: creating %s %s: %s", res, ROLE, json_str(out->body,
		    "message") ? json_str(out->body, "message") : "failed");
	cJSON_Delete(out->body);
}

/*
 * Create the role or its binding without waiting: the embedded client
 * has it in place before the pod's process starts; a remote API within a
 * round trip, well before the process's `ray` first calls it.
 */
static void
create(struct podenv *pe, const char *res, const char *ns, const char *yaml)
{
	const resource *r = resource_find("rbac.authorization.k8s.io", "v1",
	    res);

	client_create_async(pe->c, r, ns, cJSON_Parse(yaml), NULL, on_created,
	    (void *)res);
}

/* The role the pods' identities are bound to, once. */
static void
ensure_role(struct podenv *pe)
{
	if (client_get(pe->c, "clusterroles.rbac.authorization.k8s.io", "",
	    ROLE) != NULL)
		return;
	create(pe, "clusterroles", "", "{\"apiVersion\":"
	    "\"rbac.authorization.k8s.io/v1\",\"kind\":\"ClusterRole\","
	    "\"metadata\":{\"name\":\"" ROLE "\",\"labels\":{"
	    "\"app.kubernetes.io/managed-by\":\"volrayd\"}},\"rules\":[{"
	    "\"apiGroups\":[\"\"],\"resources\":[\"services/proxy\","
	    "\"pods/proxy\"],\"verbs\":[\"get\",\"create\",\"delete\"]}]}");
}

static void
ensure_binding(struct podenv *pe, const char *ns)
{
	char *yaml;

	if (client_get(pe->c, "rolebindings.rbac.authorization.k8s.io", ns,
	    ROLE) != NULL)
		return;
	yaml = util_printf("{\"apiVersion\":\"rbac.authorization.k8s.io/v1\","
	    "\"kind\":\"RoleBinding\",\"metadata\":{\"name\":\"" ROLE "\","
	    "\"namespace\":\"%s\",\"labels\":{\"app.kubernetes.io/managed-by\":"
	    "\"volrayd\"}},\"roleRef\":{\"apiGroup\":"
	    "\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":"
	    "\"" ROLE "\"},\"subjects\":[{\"kind\":\"User\",\"apiGroup\":"
	    "\"rbac.authorization.k8s.io\",\"name\":"
	    "\"system:serviceaccount:%s:volray-ray\"}]}", ns, ns);
	create(pe, "rolebindings", ns, yaml);
	free(yaml);
}

static void
hook(void *arg, const char *ns, const char *pod, node_env_set_fn set,
    void *env)
{
	struct podenv *pe = arg;
	const char *path = getenv("PATH");
	const store_obj *o;
	const char *url = pe->api_url;
	char *v, *tok;

	/* A pod in a network namespace of its own reaches the API on its
	   gateway (podnet.c), not on this machine's loopback. */
	if (pe->pods_url != NULL && (o = client_get(pe->c, "pods", ns,
	    pod)) != NULL) {
		cJSON *t = store_obj_tree(o);

		if (!cJSON_IsTrue(json_at(t, "spec.hostNetwork")))
			url = pe->pods_url;
		cJSON_Delete(t);
	}
	v = util_printf("%s:%s", pe->bin_dir, path ? path :
	    "/usr/local/bin:/usr/bin:/bin");
	set(env, "PATH", v);
	free(v);
	if (pe->api_url == NULL || pe->mint == NULL)
		return;
	if ((tok = hmap_get(pe->tokens, ns)) == NULL) {
		char *user = util_printf("system:serviceaccount:%s:volray-ray",
		    ns);
		char *groups = util_printf("system:serviceaccounts,"
		    "system:serviceaccounts:%s", ns);

		ensure_role(pe);
		ensure_binding(pe, ns);
		tok = pe->mint(pe->mint_arg, user, groups);
		free(user);
		free(groups);
		if (tok == NULL)
			return;
		hmap_put(pe->tokens, xstrdup(ns), tok);
	}
	set(env, "VOLRAY_API_SERVER", url);
	if (pe->ca_file != NULL)
		set(env, "VOLRAY_CA_FILE", pe->ca_file);
	set(env, "VOLRAY_TOKEN", tok);
	set(env, "VOLRAY_NAMESPACE", ns);
}

void
ray_set_pods_api(ray *r, const char *url)
{
	struct podenv *pe = r->podenv;

	if (pe == NULL)
		return;
	free(pe->pods_url);
	pe->pods_url = url ? xstrdup(url) : NULL;
}

void
ray_set_pod_env(ray *r, const char *bin_dir,
    const char *api_url, const char *ca_file, ray_mint_fn mint, void *arg)
{
	struct podenv *pe = xcalloc(1, sizeof *pe);

	pe->c = r->c;
	pe->bin_dir = xstrdup(bin_dir);
	pe->api_url = api_url ? xstrdup(api_url) : NULL;
	pe->ca_file = ca_file ? xstrdup(ca_file) : NULL;
	pe->mint = mint;
	pe->mint_arg = arg;
	pe->tokens = hmap_new();
	r->podenv = pe;
	node_mgr_set_env_hook(r->nodes, hook, pe);
}
