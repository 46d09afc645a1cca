/*
 * The embedded client (embedded.h): each write operation is the registry
 * call of the same name on the process's own registry. An eviction (the
 * scheduler's preemption) is the pod's delete: PodDisruptionBudgets are
 * for the Eviction subresource (registry_evict), as kube-scheduler does
 * not go through it either.
 */
#include "client/embedded.h"

static void
e_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	registry_create(impl, r, ns, obj, o, res);
}

static void
e_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	registry_update(impl, r, ns, name, obj, o, res);
}

static void
e_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	registry_update_status(impl, r, ns, name, current, status, o, res);
}

static void
e_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, struct reg_result *res)
{
	registry_patch(impl, r, ns, name, content_type, body, len, o, res);
}

static void
e_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	registry_delete(impl, r, ns, name, o, res);
}

static void
e_bind(void *impl, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	registry_bind(impl, ns, name, node, res);
}

static void
e_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	registry_delete(impl, resource_find("", "v1", "pods"), ns, name, o,
	    res);
}

static const struct client_ops embedded_ops = {
	e_create, e_update, e_update_status, e_patch, e_delete, e_bind,
	e_evict, NULL
};

client *
embedded_new(store *st, registry *rg)
{
	return client_new(st, &embedded_ops, rg);
}
