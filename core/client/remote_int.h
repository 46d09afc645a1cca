/*
 * The remote client's insides, shared by its files: remote.c (the client:
 * writes, the mirror's write-through, start and stop), remote_informer.c
 * (lists and watches into the mirror), remote_decode.c (the thread that
 * parses them), remote_path.c (URLs) and remote_text.c (JSON text made
 * without a tree). remote.c calls the others; they call none of it.
 */
#ifndef VOLRAY_REMOTE_INT_H
#define VOLRAY_REMOTE_INT_H

#include <stdint.h>
#include <uv.h>

#include "client/remote.h"
#include "client/remote_decode.h"
#include "lib/hmap.h"
#include "lib/rbuf.h"
#include "net/hclient.h"

enum istate { I_LIST, I_WATCH, I_WAIT };

struct informer {
	struct remote *rm;
	const resource *r;
	char *path;			/* "/api/v1/pods" */
	char *query;			/* "&fieldSelector=..." or "" */
	enum istate state;
	enum istate after_wait;		/* what a WAIT goes back to */
	hclient_req *req;
	uv_timer_t timer;
	unsigned backoff_ms;
	uint64_t rv;			/* the last resourceVersion seen */
	uint64_t lists;			/* lists started (1 + relists) */
	int synced;
	/* A list under way: its pages' items, kept until the last. */
	cJSON **items;
	size_t nitems, capitems;
	char *cont;
	uint64_t list_rv;
	/* A watch under way: the bytes of an unfinished line, when it
	   started, how many lines it gave, whether one was an ERROR. */
	char *line;
	size_t linelen, linecap;
	uint64_t watch_start;
	unsigned watch_lines;
	int watch_failed;
	/* Bumped by every request the informer starts: the decoder's jobs
	   of an earlier one (a watch it has left for a list) are dropped. */
	uint64_t gen;
};

struct remote {
	uv_loop_t *loop;
	hclient *h;
	/* Events' own client and token bucket (the same limits), as
	   controller-runtime's recorder has its own clientset: Events do
	   not spend the tokens writes need. */
	hclient *events_h;
	/* Leases' own client (the same limits), as kube-scheduler and
	   kube-controller-manager give leader election its own clientset
	   and the kubelet its heartbeats: a renewal never queues behind
	   the watches' reconnections or a burst of writes, which would
	   cost the leadership when the API server restarts. */
	hclient *leases_h;
	/* Every other kind's writes: a client (and token bucket, with the
	   same limits) per kind, by store key, made at the kind's first
	   write. controller-runtime's client, which KubeRay's operator
	   uses, makes a REST client per kind and client-go gives each a
	   bucket of its own: --kube-api-qps means what KubeRay's --qps
	   does. Watches, lists and synchronous calls go through h. */
	hmap *kinds;
	double qps;
	int burst;
	store *mirror;
	client *c;
	char *server;
	struct informer *inf;
	size_t ninf;
	size_t nsynced;
	void (*on_synced)(void *);
	void *arg;
	uv_timer_t release;		/* delivers held write-through events */
	int held;
	remote_decoder *dec;		/* the watches' lines, decoded */
};

/* remote_informer.c */
/* One informer per resource conf asks for (their timers made, not
   started), in rm->inf. */
void remote_informers_add(struct remote *, const struct remote_conf *);
/* Every informer lists, from the next turn of the loop. */
void remote_informers_start(struct remote *);
/* What an informer holds (not its timer, which closes on the loop). */
void remote_informer_clear(struct informer *);
/* The decoder's callback (remote_decode_new): arg is the remote. */
void remote_informer_decoded(void *arg, struct remote_job *);

/* remote_path.c */
/* s percent-encoded for a URL's query (malloc'd). */
char *remote_query_escape(const char *s);
/* r's collection, in namespace ns if r has them and ns is neither NULL
   nor "" (malloc'd). */
char *remote_collection_path(const resource *r, const char *ns);
/* An object's path, and its subresource's if sub is not NULL. */
char *remote_object_path(const resource *r, const char *ns,
    const char *name, const char *sub);

/* remote_text.c */
/* A pods/binding body (malloc'd, NUL-terminated, *len bytes). */
char *remote_binding_body(const char *ns, const char *name,
    const char *node, size_t *len);

#endif
