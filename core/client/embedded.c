/*
 * The embedded client (embedded.h): each write operation is the registry
 * call of the same name on the process's own registry. An eviction (the
 * scheduler's preemption) is the pod's delete: PodDisruptionBudgets are
 * for the Eviction subresource (registry_evict), as kube-scheduler does
 * not go through it either.
 *
 * On the log-backed store a write is durable later and its answer is
 * ready when the registry returns: the table has no _async operations,
 * so client.c answers them at once, with nothing allocated on the way.
 *
 * On the etcd-backed store each call is one etcd transaction: the
 * registry's store writes are staged, then committed. The synchronous
 * calls commit blocking the loop (store_batch_commit_sync; for callers
 * outside the loop's work: start-up, a script's loading). The _async
 * calls commit with store_batch_commit and answer from its callback,
 * once the watch has brought the write into the cache, so the loop runs
 * on meanwhile and a reconcile yields there (ctrl/luawait.c) as it does
 * against a remote API server. A write that lost the race to another
 * writer (another server, or this process's own write of the key still
 * in flight: both were staged over the same cached version) comes back
 * as kube-apiserver answers it, 409 Conflict, once the cache holds the
 * winner for the caller's next try; a status its writer owns
 * (reg_opts.own_status) is written again over the winner instead, as the
 * remote client does. An etcd failure is 500 with etcd's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/embedded.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

/* Runs of an owned status write that lost to another writer. */
#define OWN_TRIES	3

static void
begin(void *impl)
{
	store_batch_begin(registry_store(impl));
}

/* A committed transaction's outcome becomes the call's answer: the
   revision it wrote at, or the conflict or error in place of it. */
static void
settle(const resource *r, const char *name, struct reg_result *res,
    int out, uint64_t rev, const char *err)
{
	char buf[24];

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
		log_warn("embedded client: etcd: %s", err ? err : "failed");
		res->code = 500;
		res->body = status_error(500, "InternalError", "etcd: %s",
		    err ? err : "failed");
	}
}

/* Whether the call staged writes to commit; if not, the batch goes. */
static int
staged(store *st, const struct reg_result *res)
{
	if (store_batch_size(st) > 0 && res->code < 300)
		return 1;
	store_batch_abort(st);
	return 0;
}

/* Commit what the call staged, blocking the loop; its answer becomes the
   outcome's. */
static void
commit(void *impl, const resource *r, const char *name,
    struct reg_result *res)
{
	store *st = registry_store(impl);
	uint64_t rev;
	char *err = NULL;
	int out;

	if (!staged(st, res))
		return;
	out = store_batch_commit_sync(st, &rev, &err);
	settle(r, name, res, out, rev, err);
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

/* ---- on etcd, without waiting ---- */

/* A write whose transaction is under way, and where its answer goes. */
struct inflight {
	registry *rg;
	const resource *r;
	char *ns, *name;
	struct reg_result res;
	client_done_fn done;
	void *arg;
	/* An owned status, kept to be written again over a newer version
	   of the object (uid) on a conflict; NULL for other writes. */
	cJSON *status;
	char *uid;
	int tries;
};

static void
inflight_free(struct inflight *w)
{
	cJSON_Delete(w->status);
	free(w->uid);
	free(w->ns);
	free(w->name);
	free(w);
}

static void committed(void *, int, uint64_t, const char *);

/* Commit w's staged writes, or answer at once when there are none (a
   refusal, a dry run, a write that changes nothing). */
static void
commit_async(struct inflight *w)
{
	store *st = registry_store(w->rg);

	if (!staged(st, &w->res)) {
		client_give(w->done, w->arg, &w->res);
		inflight_free(w);
		return;
	}
	store_batch_commit(st, committed, w);
}

/* The owned status again, over the version the cache holds now; 0 when
   the object is gone or another one (the conflict stands). */
static int
own_again(struct inflight *w)
{
	static const struct reg_opts own = { .own_status = 1 };
	const store_obj *o = store_get(registry_store(w->rg),
	    w->r->store_key, w->r->namespaced ? w->ns : "", w->name);

	if (o == NULL || (w->uid != NULL && strcmp(o->uid, w->uid) != 0))
		return 0;
	rbuf_unref(w->res.json);
	memset(&w->res, 0, sizeof w->res);
	w->tries++;
	begin(w->rg);
	registry_update_status(w->rg, w->r, w->ns, w->name, store_obj_tree(o),
	    cJSON_Duplicate(w->status, 1), &own, &w->res);
	commit_async(w);
	return 1;
}

static void
committed(void *arg, int out, uint64_t rev, const char *err)
{
	struct inflight *w = arg;

	/* The cache holds the winner now (store_batch_commit). */
	if (out == STORE_COMMIT_CONFLICT && w->status != NULL &&
	    w->tries < OWN_TRIES) {
		cJSON_Delete(w->res.body);
		w->res.body = NULL;
		if (own_again(w))
			return;
	}
	settle(w->r, w->name, &w->res, out, rev, err);
	client_give(w->done, w->arg, &w->res);
	inflight_free(w);
}

static struct inflight *
inflight_new(registry *rg, const resource *r, const char *ns,
    const char *name, client_done_fn done, void *arg)
{
	struct inflight *w = xcalloc(1, sizeof *w);

	w->rg = rg;
	w->r = r;
	w->ns = xstrdup(ns != NULL ? ns : "");
	w->name = name != NULL ? xstrdup(name) : NULL;
	w->done = done;
	w->arg = arg;
	w->tries = 1;
	return w;
}

static void
a_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, r, ns,
	    json_str(obj, "metadata.name"), done, arg);

	begin(impl);
	registry_create(impl, r, ns, obj, o, &w->res);
	commit_async(w);
}

static void
a_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, r, ns, name, done, arg);

	begin(impl);
	registry_update(impl, r, ns, name, obj, o, &w->res);
	commit_async(w);
}

static void
a_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, r, ns, name, done, arg);
	const char *uid = json_str(current, "metadata.uid");

	if (o != NULL && o->own_status) {
		w->status = status != NULL ? cJSON_Duplicate(status, 1) :
		    cJSON_CreateObject();
		w->uid = uid != NULL ? xstrdup(uid) : NULL;
	}
	begin(impl);
	registry_update_status(impl, r, ns, name, current, status, o,
	    &w->res);
	commit_async(w);
}

static void
a_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, r, ns, name, done, arg);

	begin(impl);
	registry_patch(impl, r, ns, name, content_type, body, len, o,
	    &w->res);
	commit_async(w);
}

static void
a_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, r, ns, name, done, arg);

	begin(impl);
	registry_delete(impl, r, ns, name, o, &w->res);
	commit_async(w);
}

static void
a_bind(void *impl, const char *ns, const char *name, const char *node,
    client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, resource_find("", "v1",
	    "pods"), ns, name, done, arg);

	begin(impl);
	registry_bind(impl, ns, name, node, &w->res);
	commit_async(w);
}

static void
a_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct inflight *w = inflight_new(impl, resource_find("", "v1",
	    "pods"), ns, name, done, arg);

	begin(impl);
	registry_delete(impl, w->r, ns, name, o, &w->res);
	commit_async(w);
}

/* The log-backed store: every answer is ready when the call returns. */
static const struct client_ops embedded_ops = {
	e_create, e_update, e_update_status, e_patch, e_delete, e_bind,
	e_evict, NULL
};

/* The etcd-backed store: the same, and answers that wait for etcd. */
static const struct client_ops embedded_etcd_ops = {
	.create = e_create,
	.update = e_update,
	.update_status = e_update_status,
	.patch = e_patch,
	.delete = e_delete,
	.bind = e_bind,
	.evict = e_evict,
	.bind_async = a_bind,
	.update_status_async = a_update_status,
	.patch_async = a_patch,
	.update_async = a_update,
	.create_async = a_create,
	.delete_async = a_delete,
	.evict_async = a_evict,
};

client *
embedded_new(store *st, registry *rg)
{
	return client_new(st, store_is_etcd(st) ? &embedded_etcd_ops :
	    &embedded_ops, rg);
}
