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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* One media range of an Accept header, [p, e): served or not; *as set
   when it asks for an as= conversion. */
static int
accept_one(const char *p, const char *e, int *as)
{
	char type[128], key[16], val[64];
	const char *q, *pe;
	int n, has_as = 0, v_ok = 0, g_ok = 0, t_ok;

	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	q = p;
	while (q < e && *q != ';')
		q++;
	n = (int)(q - p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (n <= 0 || n >= (int)sizeof type)
		return 0;
	snprintf(type, sizeof type, "%.*s", n, p);
	t_ok = strcasecmp(type, "*/*") == 0 ||
	    strcasecmp(type, "application/*") == 0 ||
	    strcasecmp(type, "application/json") == 0 ||
	    strcasecmp(type, "application/yaml") == 0 ||
	    strcasecmp(type, "application/vnd.kubernetes.protobuf") == 0;
	/* Parameters: as, v, g matter; charset, stream, q do not. */
	while (q < e && *q == ';') {
		const char *k = ++q, *eq;

		while (q < e && *q != ';')
			q++;
		pe = q;
		eq = memchr(k, '=', (size_t)(pe - k));
		if (eq == NULL)
			continue;
		while (k < eq && *k == ' ')
			k++;
		snprintf(key, sizeof key, "%.*s", (int)(eq - k), k);
		snprintf(val, sizeof val, "%.*s", (int)(pe - eq - 1), eq + 1);
		if (strcmp(key, "as") == 0)
			has_as = strcmp(val, "Table") == 0 ||
			    strcmp(val, "PartialObjectMetadata") == 0 ||
			    strcmp(val, "PartialObjectMetadataList") == 0 ? 1 : 2;
		else if (strcmp(key, "v") == 0)
			v_ok = strcmp(val, "v1") == 0 ||
			    strcmp(val, "v1beta1") == 0;
		else if (strcmp(key, "g") == 0)
			g_ok = strcmp(val, "meta.k8s.io") == 0;
	}
	if (has_as) {
		*as = 1;
		return t_ok && has_as == 1 && v_ok && g_ok;
	}
	return t_ok;
}

int
reply_accept_check(http_req *req, struct route *rt)
{
	const char *h = http_req_header(req, "Accept"), *p, *e;
	int as = 0;

	if (h == NULL || *h == '\0')
		return 0;
	for (p = h; ; p = e + 1) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if (accept_one(p, e, &as))
			return 0;
		if (*e == '\0')
			break;
	}
	/* kube-apiserver's two answers: a conversion it does not serve,
	   or go-restful's for a media type nobody produces. */
	reply_status(req, rt, as ? status_error(406, "NotAcceptable",
	    "only the following media types are accepted: application/json, "
	    "application/yaml, application/vnd.kubernetes.protobuf") :
	    status_error(406, "NotAcceptable", "406: Not Acceptable\n\n"
	    "Available representations: application/json, application/yaml, "
	    "application/vnd.kubernetes.protobuf, "
	    "application/json;stream=watch, "
	    "application/vnd.kubernetes.protobuf;stream=watch"));
	return -1;
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
