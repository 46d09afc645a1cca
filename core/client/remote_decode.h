/*
 * The remote client's decoder (remote_decode.c): one worker thread that
 * turns a watch's lines into finished mirror versions, and a list's
 * pages into checked objects, so that the loop does not parse them. The loop hands it jobs in a FIFO; the thread
 * decodes each job's lines and hands the jobs back in the same order
 * through a uv_async_t, where the loop's callback puts what they hold
 * into the mirror. Jobs that carry no lines (a mark: the watch ended)
 * pass through in their place, so that what follows a watch's last line
 * on the loop follows it still. The loop owns everything else: the
 * mirror, the informers, the logging of what was bad.
 */
#ifndef VOLRAY_REMOTE_DECODE_H
#define VOLRAY_REMOTE_DECODE_H

#include <stdint.h>
#include <stdio.h>
#include <uv.h>

#include "registry/resource.h"
#include "store/store.h"

typedef struct remote_decoder remote_decoder;

/* What one line of a watch said. */
enum remote_dkind {
	RD_BAD,		/* not an event: what says why, text what came */
	RD_ERROR,	/* an ERROR event: code, text its message */
	RD_BOOKMARK,	/* rv */
	RD_PUT,		/* ADDED or MODIFIED: o at rv */
	RD_DELETE	/* DELETED: o, the final state at rv */
};

struct remote_decoded {
	enum remote_dkind kind;
	uint64_t rv;
	store_obj *o;		/* RD_PUT, RD_DELETE: one reference */
	const char *what;	/* RD_BAD */
	char *text;		/* RD_BAD: the first bytes (LOG_BYTES + 1 at
				   most) of what came; RD_ERROR: the
				   message; or NULL */
	size_t len;		/* RD_BAD: how long what came was */
	int code;		/* RD_ERROR */
};

/*
 * One job: a watch's whole lines (buf, len bytes, '\n' after each) to
 * decode, a list's page (buf: its body) to parse, or a mark with the
 * watch's end. owner and gen are the caller's:
 * the loop drops a job whose owner has moved on since.
 */
struct remote_job {
	struct remote_job *next;
	void *owner;
	uint64_t gen;
	int mark;			/* the watch's end, no lines */
	int page;			/* a list's page */
	const resource *r;		/* whose lines */
	char *buf;
	size_t len;
	struct remote_decoded *d;	/* filled by the thread */
	size_t nd;
	/* A page, parsed: its usable items (with kind), what the list
	   says next; d holds what was bad (RD_BAD). not_list: the body
	   was no list (d's first says so). */
	cJSON **items;
	size_t nitems;
	char *cont;			/* the continue token, or NULL */
	uint64_t list_rv;
	int not_list;
	/* A mark: the watch's end (hclient_done_fn's arguments). */
	long status;
	char *body;
	size_t body_len;
	char *err;
};

/* Called on the loop with each job back, in the order pushed; the job is
   the callback's (remote_job_free). */
typedef void (*remote_decode_fn)(void *arg, struct remote_job *);

/* A decoder on loop and its thread. */
remote_decoder *remote_decode_new(uv_loop_t *, remote_decode_fn, void *arg);
/* Hand a job (taken over) to the thread; on the loop. */
void remote_decode_push(remote_decoder *, struct remote_job *);
/*
 * Stop the thread and wait for it, free the jobs not handed back (no
 * callback runs for them); the handle closes on the loop. On the loop,
 * not from the callback.
 */
void remote_decode_free(remote_decoder *);
/* A job and what it holds (the versions not taken). */
void remote_job_free(struct remote_job *);
/* The decoder's counters, in the metrics text format. */
void remote_decode_print_metrics(FILE *, const remote_decoder *);

/*
 * Whether obj can go into a mirror of r: an object with a name (and a
 * namespace if r's objects have them); one without kind (a list's items)
 * is given r's. Any thread.
 */
int remote_usable(const resource *r, cJSON *obj);
/* An object's metadata.resourceVersion as a number; 0 when none. */
uint64_t remote_rv_of(const cJSON *obj);

#endif
