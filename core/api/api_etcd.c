/*
 * Requests on the etcd-backed store (store/store_etcd.c), where the
 * store is a cache of etcd and etcd is the truth.
 *
 * A read first waits for the cache to hold every write etcd had
 * acknowledged when it came (store_sync), so that what one API server
 * acknowledged is what another one serves: kube-apiserver's consistent
 * read. resourceVersion=0 asks for any version and is served from the
 * cache as it is.
 *
 * A write runs its handler with the store's writes staged
 * (store_batch_begin) and its answer held (reply.c's reply_hold); the
 * staged writes then commit as one etcd transaction guarded by the
 * mod_revision each was computed from, and the held answer goes out with
 * the transaction's revision as its resourceVersion once the cache has
 * it, so that the writer's watch has seen its own event. When another
 * writer got there first, the cache is brought up to that write and the
 * handler runs again on it (kube-apiserver's GuaranteedUpdate): an update
 * without a precondition is applied to the newer object, one with a
 * resourceVersion answers 409 as it must. A handler that answers 404 or
 * 409 without writing may have read a cache behind etcd: it runs once
 * more after store_sync.
 */
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

/* Runs of one write before it gives up (each lost to another writer). */
#define ETCD_TRIES	16

struct etcd_req {
	api *a;
	http_req *req;
	api_dispatch_fn dispatch;
	int watch;
	int tries;
	int synced;		/* ran again after store_sync */
	struct reply_hold hold;
	struct route rt;	/* last: its pointers are rebased into it */
};

/* A copy of rt whose pointers into rt->buf point into the copy's. */
static struct etcd_req *
req_new(api *a, http_req *req, const struct route *rt, int watch,
    api_dispatch_fn dispatch)
{
	struct etcd_req *er = xcalloc(1, sizeof *er);
	const char *lo = rt->buf, *hi = rt->buf + sizeof rt->buf;

	er->a = a;
	er->req = req;
	er->watch = watch;
	er->dispatch = dispatch;
	er->rt = *rt;
#define REBASE(p) do {							\
	if ((p) != NULL && (p) >= lo && (p) < hi)			\
		(p) = er->rt.buf + ((p) - lo);				\
} while (0)
	REBASE(er->rt.ns);
	REBASE(er->rt.name);
	REBASE(er->rt.sub);
#undef REBASE
	if (rt->user == &rt->cert_user) {
		er->rt.user = &er->rt.cert_user;
		er->rt.cert_user.groups = er->rt.cert_groups;
	}
	return er;
}

static void
req_free(struct etcd_req *er)
{
	reply_held_drop(&er->hold);
	free(er);
}

static void
read_synced(void *arg)
{
	struct etcd_req *er = arg;

	er->dispatch(er->a, er->req, &er->rt, er->watch);
	req_free(er);
}

static void attempt(struct etcd_req *);

static void
write_synced(void *arg)
{
	attempt(arg);
}

static void
committed(void *arg, int outcome, uint64_t rev, const char *err)
{
	struct etcd_req *er = arg;

	if (outcome == STORE_COMMIT_OK) {
		reply_held_send(er->req, &er->rt, &er->hold, rev);
		req_free(er);
		return;
	}
	reply_held_drop(&er->hold);
	if (outcome == STORE_COMMIT_CONFLICT && er->tries < ETCD_TRIES) {
		/* The cache holds the winner now: run on it. */
		attempt(er);
		return;
	}
	if (outcome == STORE_COMMIT_CONFLICT)
		reply_status(er->req, &er->rt, status_error(409, "Conflict",
		    "Operation cannot be fulfilled: %d writes in a row lost "
		    "to others; please try again", ETCD_TRIES));
	else {
		log_warn("api: etcd: %s %s: %s", er->req->method,
		    er->req->path, err);
		reply_status(er->req, &er->rt, status_error(500,
		    "InternalError", "etcd: %s", err ? err : "failed"));
	}
	req_free(er);
}

static void
attempt(struct etcd_req *er)
{
	store *st = er->a->st;

	er->tries++;
	reply_held_drop(&er->hold);
	er->rt.hold = &er->hold;
	store_batch_begin(st);
	er->dispatch(er->a, er->req, &er->rt, er->watch);
	er->rt.hold = NULL;
	if (!er->hold.held) {
		/* Answered later: its writes, if any, go now. */
		if (store_batch_size(st) > 0)
			log_warn("api: %s %s wrote without answering",
			    er->req->method, er->req->path);
		store_batch_commit(st, NULL, NULL);
		free(er);
		return;
	}
	if (store_batch_size(st) == 0 || er->hold.code >= 300) {
		store_batch_abort(st);
		if ((er->hold.code == 404 || er->hold.code == 409) &&
		    !er->synced) {
			er->synced = 1;
			reply_held_drop(&er->hold);
			store_sync(st, write_synced, er);
			return;
		}
		reply_held_send(er->req, &er->rt, &er->hold, 0);
		req_free(er);
		return;
	}
	store_batch_commit(st, committed, er);
}

void
api_etcd_run(api *a, http_req *req, const struct route *rt, int watch,
    api_dispatch_fn dispatch)
{
	const char *m = req->method;
	struct etcd_req *er;
	char *rv;

	if (strcmp(m, "GET") == 0 || strcmp(m, "HEAD") == 0) {
		rv = http_query_get(req->query, "resourceVersion");
		if (rv != NULL && strcmp(rv, "0") == 0) {
			free(rv);
			dispatch(a, req, (struct route *)rt, watch);
			return;
		}
		free(rv);
		store_sync(a->st, read_synced, req_new(a, req, rt, watch,
		    dispatch));
		return;
	}
	if (rt->sub != NULL && strcmp(rt->sub, "status") != 0 &&
	    strcmp(rt->sub, "scale") != 0 && strcmp(rt->sub, "binding") != 0 &&
	    strcmp(rt->sub, "eviction") != 0 &&
	    strcmp(rt->sub, "finalize") != 0) {
		/* Streams (exec, attach, portforward) store nothing. */
		dispatch(a, req, (struct route *)rt, watch);
		return;
	}
	er = req_new(a, req, rt, watch, dispatch);
	attempt(er);
}
