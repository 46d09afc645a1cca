/*
 * Replies. Every handler answers through here: a JSON tree or a Status is
 * printed and sent at once, or, after a write, held until the store reports
 * its revision durable (group commit) and sent from the store's callback
 * with the bytes printed once. Each reply notes its request (verb,
 * resource, code, latency) in the metrics. The handlers call down into
 * this file and nothing here calls back up, so the routing in api.c and
 * the verbs in api_read.c, api_write.c, podlog.c, proxy.c and policyinfo.c
 * form no cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "api/apimetrics.h"
#include "api/reply.h"
#include "lib/json.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

static void
observe(struct route *rt, int code)
{
	if (rt != NULL && rt->r != NULL)
		apimetrics_request(rt->verb, rt->r->store_key, code,
		    util_usec() - rt->t0);
	else if (rt != NULL)
		apimetrics_request(rt->verb ? rt->verb : "get", "", code,
		    util_usec() - rt->t0);
}

void
reply_json(http_req *req, struct route *rt, int code, cJSON *body)
{
	const char *kind = json_str(body, "kind");
	cJSON *c;
	char *s;

	/* A Status in Go's field order: details before code. */
	if (kind != NULL && strcmp(kind, "Status") == 0 &&
	    (c = cJSON_DetachItemFromObjectCaseSensitive(body, "code")) != NULL)
		cJSON_AddItemToObject(body, "code", c);
	s = json_print(body);

	cJSON_Delete(body);
	if (rt != NULL && rt->hold != NULL) {
		rt->hold->code = code;
		rt->hold->body = rbuf_from_str(s);
		rt->hold->held = 1;
		return;
	}
	observe(rt, code);
	http_respond(req, code, "application/json", s, strlen(s));
	free(s);
}

void
reply_status(http_req *req, struct route *rt, cJSON *status)
{
	reply_json(req, rt, status_code(status), status);
}

void
reply_text(http_req *req, int code, const char *text)
{
	http_respond(req, code, "text/plain; charset=utf-8", text,
	    strlen(text));
}

struct durable_reply {
	http_req *req;
	struct route rt;
	int code;
	rbuf *body;
};

static void
send_durable(void *arg)
{
	struct durable_reply *d = arg;

	observe(&d->rt, d->code);
	http_respond_rbuf(d->req, d->code, "application/json", d->body);
	rbuf_unref(d->body);
	free(d);
}

void
reply_durable_rbuf(store *st, http_req *req, struct route *rt, int code,
    rbuf *body, uint64_t rev)
{
	struct durable_reply *d;

	if (rt->hold != NULL) {
		rt->hold->code = code;
		rt->hold->body = body;
		rt->hold->held = 1;
		return;
	}
	d = xmalloc(sizeof *d);
	d->req = req;
	d->rt = *rt;
	d->rt.ns = d->rt.name = d->rt.sub = NULL;
	d->code = code;
	d->body = body;
	store_when_durable(st, rev, send_durable, d);
}

void
reply_durable(store *st, http_req *req, struct route *rt, int code,
    cJSON *body, uint64_t rev)
{
	if (rev == 0) {
		reply_json(req, rt, code, body);
		return;
	}
	reply_durable_rbuf(st, req, rt, code, json_print_rbuf(body), rev);
	cJSON_Delete(body);
}

/* The pending resourceVersion of staged writes, as printed. */
#define PENDING_RV	"\"9000000000000000001\""

void
reply_held_send(http_req *req, struct route *rt, struct reply_hold *h,
    uint64_t rev)
{
	rbuf *b = h->body;
	const char *p, *from;
	char num[32];
	size_t len;
	char *out, *o;

	h->body = NULL;
	h->held = 0;
	if (rev != 0 && memmem(b->data, b->len, PENDING_RV,
	    sizeof PENDING_RV - 1) != NULL) {
		len = (size_t)snprintf(num, sizeof num, "\"%llu\"",
		    (unsigned long long)rev);
		out = o = xmalloc(b->len + 1);
		from = b->data;
		while ((p = memmem(from, b->len - (size_t)(from - b->data),
		    PENDING_RV, sizeof PENDING_RV - 1)) != NULL) {
			memcpy(o, from, (size_t)(p - from));
			o += p - from;
			memcpy(o, num, len);
			o += len;
			from = p + sizeof PENDING_RV - 1;
		}
		memcpy(o, from, b->len - (size_t)(from - b->data));
		o += b->len - (size_t)(from - b->data);
		rbuf_unref(b);
		b = rbuf_new(out, (size_t)(o - out));
		free(out);
	}
	observe(rt, h->code);
	http_respond_rbuf(req, h->code, "application/json", b);
	rbuf_unref(b);
}

void
reply_held_drop(struct reply_hold *h)
{
	rbuf_unref(h->body);
	h->body = NULL;
	h->held = 0;
}

/*
 * An integer option from the query, into *out when given; a malformed one
 * is answered 400 as kube-apiserver answers it, and -1 returned.
 */
int
reply_int_param(http_req *req, struct route *rt, const char *key,
    long long *out)
{
	char *cause = NULL;

	if (http_query_int(req->query, key, out, &cause) >= 0)
		return 0;
	reply_status(req, rt, status_bad_request("%s", cause));
	free(cause);
	return -1;
}

int
reply_wants_table(const http_req *req)
{
	const char *accept = http_req_header(req, "Accept");

	return accept != NULL && strstr(accept, "as=Table") != NULL;
}

int
reply_label_selector(http_req *req, struct route *rt, selector **out)
{
	char *ls = http_query_get(req->query, "labelSelector"), *cause = NULL;

	*out = NULL;
	if (ls != NULL && *ls != '\0' &&
	    (*out = selector_parse_labels(ls, &cause)) == NULL) {
		reply_status(req, rt, status_bad_request("unable to parse "
		    "requirement: %s", cause ? cause : ls));
		free(cause);
		free(ls);
		return -1;
	}
	free(ls);
	return 0;
}
