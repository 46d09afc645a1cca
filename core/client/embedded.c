/*
 * The embedded client (embedded.h): each write operation is the registry
 * call of the same name on the process's own registry. An eviction (the
 * scheduler's preemption) is the pod's delete: PodDisruptionBudgets are
 * for the Eviction subresource (registry_evict), as kube-scheduler does
 * not go through it either.
 *
 * On the etcd-backed store each call is one etcd transaction: its store
 * writes are staged and committed when the registry has answered,
 * blocking the loop; a write that lost the race to another writer comes
 * back as kube-apiserver answers it, 409 Conflict, and the cache holds the
 * winner for the caller's next try.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/embedded.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

static void
begin(void *impl)
{
	store_batch_begin(registry_store(impl));
}

/* Commit what the call staged; its answer becomes the outcome's. */
static void
commit(void *impl, const resource *r, const char *name,
    struct reg_result *res)
{
	store *st = registry_store(impl);
	uint64_t rev;
	char *err = NULL, buf[24];
	int out;

	if (store_batch_size(st) == 0)
		return;
	if (res->code >= 300) {
		store_batch_abort(st);
		return;
	}
	out = store_batch_commit_sync(st, &rev, &err);
	if (out == STORE_COMMIT_OK) {
		res->rev = rev;
		if (json_str(res->body, "metadata.resourceVersion") != NULL) {
			snprintf(buf, sizeof buf, "%llu",
			    (unsigned long long)rev);
			json_set_str(json_obj(res->body, "metadata"),
			    "resourceVersion", buf);
		}
		return;
	}
	cJSON_Delete(res->body);
	rbuf_unref(res->json);
	res->json = NULL;
	res->rev = 0;
	if (out == STORE_COMMIT_CONFLICT) {
		res->code = 409;
		res->body = status_conflict(r, name ? name : "");
	} else {
		log_warn("embedded client: etcd: %s", err);
		res->code = 500;
		res->body = status_error(500, "InternalError", "etcd: %s",
		    err);
	}
	free(err);
}

static void
e_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	const char *name = json_str(obj, "metadata.name");
	char *copy = name ? xstrdup(name) : NULL;

	begin(impl);
	registry_create(impl, r, ns, obj, o, res);
	commit(impl, r, copy, res);
	free(copy);
}

static void
e_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	begin(impl);
	registry_update(impl, r, ns, name, obj, o, res);
	commit(impl, r, name, res);
}

static void
e_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	begin(impl);
	registry_update_status(impl, r, ns, name, current, status, o, res);
	commit(impl, r, name, res);
}

static void
e_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, struct reg_result *res)
{
	begin(impl);
	registry_patch(impl, r, ns, name, content_type, body, len, o, res);
	commit(impl, r, name, res);
}

static void
e_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	begin(impl);
	registry_delete(impl, r, ns, name, o, res);
	commit(impl, r, name, res);
}

static void
e_bind(void *impl, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	begin(impl);
	registry_bind(impl, ns, name, node, res);
	commit(impl, resource_find("", "v1", "pods"), name, res);
}

static void
e_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	const resource *pods = resource_find("", "v1", "pods");

	begin(impl);
	registry_delete(impl, pods, ns, name, o, res);
	commit(impl, pods, name, res);
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
