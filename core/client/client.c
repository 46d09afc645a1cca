/*
 * The client (client.h): reads go to the cache, a store, by direct call;
 * writes go through the implementation's table of operations. Neither adds
 * work on the hot paths: a read is the store's call, a write one indirect
 * call more than the registry's.
 */
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

struct client {
	store *cache;
	const struct client_ops *ops;
	void *impl;
	int owns_impl;
	int (*allowed)(void *);		/* a gate on writes, or NULL */
	void *allowed_arg;
};

client *
client_new(store *cache, const struct client_ops *ops, void *impl)
{
	client *c = xcalloc(1, sizeof *c);

	c->cache = cache;
	c->ops = ops;
	c->impl = impl;
	c->owns_impl = 1;
	return c;
}

client *
client_gated(client *base, int (*allowed)(void *), void *arg)
{
	client *c = xcalloc(1, sizeof *c);

	*c = *base;
	c->owns_impl = 0;
	c->allowed = allowed;
	c->allowed_arg = arg;
	return c;
}

/* A write the gate refuses: 503, and nothing is sent. */
static int
refused(const client *c, struct reg_result *res)
{
	if (c->allowed == NULL || c->allowed(c->allowed_arg))
		return 0;
	memset(res, 0, sizeof *res);
	res->code = 503;
	res->body = status_error(503, "ServiceUnavailable", "%s",
	    "not the leader: this replica's role is on standby");
	return 1;
}

void
client_free(client *c)
{
	if (c == NULL)
		return;
	if (c->owns_impl && c->ops->free != NULL)
		c->ops->free(c->impl);
	free(c);
}

const store_obj *
client_get(const client *c, const char *res, const char *ns, const char *name)
{
	return store_get(c->cache, res, ns, name);
}

const store_obj *
client_get_uid(const client *c, const char *uid)
{
	return store_get_uid(c->cache, uid);
}

const store_obj *
client_get_key(const client *c, const char *key)
{
	return store_get_key(c->cache, key);
}

cJSON *
client_get_tree(const client *c, const resource *r, const char *ns,
    const char *name)
{
	const store_obj *o = store_get(c->cache, r->store_key,
	    r->namespaced ? ns : "", name);

	return o != NULL ? store_obj_tree(o) : NULL;
}

void
client_get_live_async(client *c, const resource *r, const char *ns,
    const char *name, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (c->ops->get_live_async != NULL) {
		c->ops->get_live_async(c->impl, r, ns, name, done, arg);
		return;
	}
	memset(&res, 0, sizeof res);
	if ((res.body = client_get_tree(c, r, ns, name)) != NULL)
		res.code = 200;
	else {
		res.code = 404;
		res.body = status_not_found(r, name);
	}
	client_give(done, arg, &res);
}

size_t
client_list(const client *c, const char *res, const char *ns,
    store_obj *const **out)
{
	return store_list(c->cache, res, ns, out);
}

size_t
client_list_refs(const client *c, const char *res, store_obj ***out)
{
	return store_list_refs(c->cache, res, out);
}

void
client_sort(store_obj **objs, size_t n)
{
	store_sort(objs, n);
}

size_t
client_dependents(const client *c, const char *uid, const char ***keys)
{
	return store_dependents(c->cache, uid, keys);
}

ssize_t
client_list_selected(const client *c, const char *res, const char *ns,
    const selector *sel, store_obj ***out)
{
	return store_list_selected(c->cache, res, ns, sel, out);
}

size_t
client_on_node(const client *c, const char *node, const char ***keys)
{
	return store_on_node(c->cache, node, keys);
}

uint64_t
client_rev(const client *c)
{
	return store_rev(c->cache);
}

void
client_subscribe(client *c, store_event_cb cb, void *arg)
{
	store_subscribe(c->cache, cb, arg);
}

int
client_filter_add(client *c, const char *res,
    int (*test)(void *arg, const cJSON *tree), void *arg)
{
	return store_filter_add(c->cache, res, test, arg);
}

void
client_filter_remove(client *c, int handle)
{
	store_filter_remove(c->cache, handle);
}

int
client_filter_count(const client *c)
{
	return store_filter_count(c->cache);
}

void
client_derive(const char *res, store_derive_fn make, void (*drop)(void *))
{
	store_derive(res, make, drop);
}

void
client_create(client *c, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		cJSON_Delete(obj);
		return;
	}
	c->ops->create(c->impl, r, ns, obj, o, res);
}

void
client_update(client *c, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		cJSON_Delete(obj);
		return;
	}
	c->ops->update(c->impl, r, ns, name, obj, o, res);
}

void
client_update_status(client *c, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		cJSON_Delete(current);
		cJSON_Delete(status);
		return;
	}
	c->ops->update_status(c->impl, r, ns, name, current, status, o, res);
}

void
client_patch(client *c, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		return;
	}
	c->ops->patch(c->impl, r, ns, name, content_type, body, len, o, res);
}

void
client_delete(client *c, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		return;
	}
	c->ops->delete(c->impl, r, ns, name, o, res);
}

void
client_bind(client *c, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	if (refused(c, res)) {
		return;
	}
	c->ops->bind(c->impl, ns, name, node, res);
}

void
client_bind_async(client *c, const char *ns, const char *name,
    const char *node, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		done(arg, &res);
		return;
	}
	if (c->ops->bind_async != NULL) {
		c->ops->bind_async(c->impl, ns, name, node, done, arg);
		return;
	}
	c->ops->bind(c->impl, ns, name, node, &res);
	done(arg, &res);
}

void
client_give(client_done_fn done, void *arg, struct reg_result *res)
{
	if (done != NULL)
		done(arg, res);
	else
		cJSON_Delete(res->body);
}

void
client_update_async(client *c, const resource *r, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *o,
    client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		cJSON_Delete(obj);
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->update_async != NULL) {
		c->ops->update_async(c->impl, r, ns, name, obj, o, done, arg);
		return;
	}
	c->ops->update(c->impl, r, ns, name, obj, o, &res);
	client_give(done, arg, &res);
}

void
client_update_status_async(client *c, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		cJSON_Delete(current);
		cJSON_Delete(status);
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->update_status_async != NULL) {
		c->ops->update_status_async(c->impl, r, ns, name, current,
		    status, o, done, arg);
		return;
	}
	c->ops->update_status(c->impl, r, ns, name, current, status, o, &res);
	client_give(done, arg, &res);
}

void
client_patch_async(client *c, const resource *r, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->patch_async != NULL) {
		c->ops->patch_async(c->impl, r, ns, name, content_type, body,
		    len, o, done, arg);
		return;
	}
	c->ops->patch(c->impl, r, ns, name, content_type, body, len, o, &res);
	client_give(done, arg, &res);
}

void
client_create_async(client *c, const resource *r, const char *ns,
    cJSON *obj, const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		cJSON_Delete(obj);
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->create_async != NULL) {
		c->ops->create_async(c->impl, r, ns, obj, o, done, arg);
		return;
	}
	c->ops->create(c->impl, r, ns, obj, o, &res);
	client_give(done, arg, &res);
}

void
client_delete_async(client *c, const resource *r, const char *ns,
    const char *name, const struct reg_opts *o, client_done_fn done,
    void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->delete_async != NULL) {
		c->ops->delete_async(c->impl, r, ns, name, o, done, arg);
		return;
	}
	c->ops->delete(c->impl, r, ns, name, o, &res);
	client_give(done, arg, &res);
}

void
client_evict(client *c, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	if (refused(c, res)) {
		return;
	}
	c->ops->evict(c->impl, ns, name, o, res);
}

void
client_evict_async(client *c, const char *ns, const char *name,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct reg_result res;

	if (refused(c, &res)) {
		client_give(done, arg, &res);
		return;
	}
	if (c->ops->evict_async != NULL) {
		c->ops->evict_async(c->impl, ns, name, o, done, arg);
		return;
	}
	c->ops->evict(c->impl, ns, name, o, &res);
	client_give(done, arg, &res);
}
