/*
 * The client: how the subsystems above it (controllers, the scheduler, the
 * node runtimes, the Ray head) see objects and change them, without knowing
 * where the objects live. This is the seam between volrayd's workers and
 * its API server.
 *
 * The read side is a cache of objects: a store (store/store.h) whose
 * versions are immutable and refcounted, read by key, listed by resource,
 * namespace, owner or node, and followed by subscribing to its events. In
 * the embedded case (embedded.c) the cache is the API server's own store,
 * so a read costs what store_get costs and events arrive after the write is
 * durable, as today. A remote implementation keeps a store of its own, fed
 * by lists and watches of another API server; nothing above sees the
 * difference.
 *
 * The write side is a table of operations with the registry's arguments
 * and results (create, update, status, patch, delete, bind, evict): the
 * embedded implementation calls the registry directly; a remote one sends
 * the same requests over HTTPS. A write's result is filled before the call
 * returns; its event reaches subscribers later, once it is durable. The
 * _async calls give the result to a callback instead: before they return
 * in the embedded client on the log-backed store, once the etcd
 * transaction has come back on the etcd-backed one, after the round
 * trip in a remote one; the loop goes on meanwhile. That is how
 * everything that runs on the loop
 * writes (the Lua controllers' reconciles, the scheduler's binds,
 * statuses and evictions, the node runtimes' Leases and statuses, the
 * node lifecycle's taints and evictions, Events, Leases).
 *
 * Versions (store_obj) are read with the store's own accessors
 * (store_obj_tree, store_obj_ref, store_obj_unref, store_obj_filtered):
 * they belong to the version, not to who keeps it.
 */
#ifndef VOLRAY_CLIENT_H
#define VOLRAY_CLIENT_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "registry/registry.h"
#include "registry/resource.h"
#include "store/store.h"

typedef struct client client;

/* A write's answer, given to the caller's callback (which owns
   res->body). */
typedef void (*client_done_fn)(void *arg, struct reg_result *res);
/* A result to done, or its body freed when done is NULL (for the
   implementations' asynchronous calls too). */
void client_give(client_done_fn done, void *arg, struct reg_result *res);

/* The write side, one function per request a client can make. */
struct client_ops {
	void (*create)(void *impl, const resource *, const char *ns,
	    cJSON *obj, const struct reg_opts *, struct reg_result *);
	void (*update)(void *impl, const resource *, const char *ns,
	    const char *name, cJSON *obj, const struct reg_opts *,
	    struct reg_result *);
	void (*update_status)(void *impl, const resource *, const char *ns,
	    const char *name, cJSON *current, cJSON *status,
	    const struct reg_opts *, struct reg_result *);
	void (*patch)(void *impl, const resource *, const char *ns,
	    const char *name, const char *content_type, const char *body,
	    size_t len, const struct reg_opts *, struct reg_result *);
	void (*delete)(void *impl, const resource *, const char *ns,
	    const char *name, const struct reg_opts *, struct reg_result *);
	void (*bind)(void *impl, const char *ns, const char *name,
	    const char *node, struct reg_result *);
	void (*evict)(void *impl, const char *ns, const char *name,
	    const struct reg_opts *, struct reg_result *);
	void (*free)(void *impl);
	/* Optional: a bind answered later, through done (NULL: bind, then
	   done at once). */
	void (*bind_async)(void *impl, const char *ns, const char *name,
	    const char *node, client_done_fn done, void *arg);
	/* Optional: update_status and patch answered later, through done
	   (NULL: the synchronous call, then done at once). */
	void (*update_status_async)(void *impl, const resource *,
	    const char *ns, const char *name, cJSON *current, cJSON *status,
	    const struct reg_opts *, client_done_fn done, void *arg);
	void (*patch_async)(void *impl, const resource *, const char *ns,
	    const char *name, const char *content_type, const char *body,
	    size_t len, const struct reg_opts *, client_done_fn done,
	    void *arg);
	void (*update_async)(void *impl, const resource *, const char *ns,
	    const char *name, cJSON *obj, const struct reg_opts *,
	    client_done_fn done, void *arg);
	/* Optional: create and delete answered later, through done. */
	void (*create_async)(void *impl, const resource *, const char *ns,
	    cJSON *obj, const struct reg_opts *, client_done_fn done,
	    void *arg);
	void (*delete_async)(void *impl, const resource *, const char *ns,
	    const char *name, const struct reg_opts *, client_done_fn done,
	    void *arg);
	/* Optional: an eviction answered later, through done. */
	void (*evict_async)(void *impl, const char *ns, const char *name,
	    const struct reg_opts *, client_done_fn done, void *arg);
	/* Optional: an object read from the API server itself, answered
	   through done (NULL: the cache is the server's own store, read at
	   once). */
	void (*get_live_async)(void *impl, const resource *, const char *ns,
	    const char *name, client_done_fn done, void *arg);
};

/*
 * A client over cache (the read side) and ops (the write side, called
 * with impl). The client does not own cache; it frees impl with
 * ops->free.
 */
client *client_new(store *cache, const struct client_ops *, void *impl);
void client_free(client *);
/*
 * A client over the same cache and operations whose writes pass only
 * while allowed(arg) says so (a role's leader election); others get 503
 * and nothing is sent. Freeing it leaves base alone.
 */
client *client_gated(client *base, int (*allowed)(void *), void *arg);

/* Reads: the store's calls of the same names, on the cache. */
const store_obj *client_get(const client *, const char *res, const char *ns,
    const char *name);
const store_obj *client_get_uid(const client *, const char *uid);
const store_obj *client_get_key(const client *, const char *key);
/*
 * An object as the API server has it now, not as the cache last heard
 * (which, fed by a remote server's watch, may not have it yet): done gets
 * 200 and the object, or the server's answer (404 NotFound when it is
 * not there), as client_bind_async says. Embedded, the cache is the
 * server's store and done runs at once. For a caller about to act on an
 * object's absence, as kube's controllers ask the server before they
 * drop a reservation for a pod their informer has not seen.
 */
void client_get_live_async(client *, const resource *, const char *ns,
    const char *name, client_done_fn done, void *arg);
/* An object as a new tree (the caller frees it), or NULL if absent. */
cJSON *client_get_tree(const client *, const resource *, const char *ns,
    const char *name);
size_t client_list(const client *, const char *res, const char *ns,
    store_obj *const **out);
size_t client_list_refs(const client *, const char *res, store_obj ***out);
void client_sort(store_obj **, size_t);
size_t client_dependents(const client *, const char *uid, const char ***keys);
size_t client_on_node(const client *, const char *node, const char ***keys);
/* store_list_selected on the cache. */
ssize_t client_list_selected(const client *, const char *res,
    const char *ns, const selector *sel, store_obj ***out);
/* The newest revision the cache has seen. */
uint64_t client_rev(const client *);

/* Following changes: store_subscribe and store_filter_add on the cache
   (a handle, or -1 while all are in use; client_filter_remove gives one
   back, client_filter_count counts those in use). */
void client_subscribe(client *, store_event_cb, void *arg);
int client_filter_add(client *, const char *res,
    int (*test)(void *arg, const cJSON *tree), void *arg);
void client_filter_remove(client *, int handle);
int client_filter_count(const client *);
/* What a subsystem derives from each version loaded when the cache fills
   (store_derive; process-wide, set before any client is made). */
void client_derive(const char *res, store_derive_fn make,
    void (*drop)(void *));

/* Writes: the registry's calls of the same names (registry.h). */
void client_create(client *, const resource *, const char *ns, cJSON *obj,
    const struct reg_opts *, struct reg_result *);
void client_update(client *, const resource *, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *,
    struct reg_result *);
void client_update_status(client *, const resource *, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *, struct reg_result *);
void client_patch(client *, const resource *, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, const struct reg_opts *, struct reg_result *);
void client_delete(client *, const resource *, const char *ns,
    const char *name, const struct reg_opts *, struct reg_result *);
void client_bind(client *, const char *ns, const char *name,
    const char *node, struct reg_result *);
/*
 * Bind without waiting: done(arg, result) runs once the answer is in, on
 * the loop (at once in the embedded client on the log-backed store; once
 * the transaction is back on etcd; when the server has answered in the
 * remote one, whose rate limiter then never holds the loop). done does
 * not run if the client (on etcd: the store) is freed first.
 */
void client_bind_async(client *, const char *ns, const char *name,
    const char *node, client_done_fn done, void *arg);
/*
 * An update, a status write and a patch without waiting, as
 * client_bind_async: done (NULL: none) gets the result (its body to free)
 * on the loop, as client_bind_async says; a 2xx answer is in the cache
 * before done runs. A status its writer owns (reg_opts.own_status: the
 * kubelet's of its pods and nodes) is written again over the server's
 * newer version on a conflict, as the synchronous call does, without
 * holding the loop; otherwise a 409 is the caller's to write again over
 * a newer version. Two writes of one object in flight may land in either
 * order (on etcd the second gets 409, store.h): a caller keeps one at a
 * time per object.
 */
void client_update_async(client *, const resource *, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *,
    client_done_fn done, void *arg);
void client_update_status_async(client *, const resource *, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *, client_done_fn done, void *arg);
void client_patch_async(client *, const resource *, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, const struct reg_opts *, client_done_fn done, void *arg);
/* A create and a delete without waiting, as client_update_async. */
void client_create_async(client *, const resource *, const char *ns,
    cJSON *obj, const struct reg_opts *, client_done_fn done, void *arg);
void client_delete_async(client *, const resource *, const char *ns,
    const char *name, const struct reg_opts *, client_done_fn done,
    void *arg);
/* Evict a pod: the graceful delete Volcano's evictor makes (pods/eviction
   where the API server has it), with these options. */
void client_evict(client *, const char *ns, const char *name,
    const struct reg_opts *, struct reg_result *);
/* An eviction without waiting, as client_delete_async. */
void client_evict_async(client *, const char *ns, const char *name,
    const struct reg_opts *, client_done_fn done, void *arg);

#endif
