/*
 * The etcd v3 client over the JSON gateway (etcdkv.h). Every call is one
 * POST of a JSON message whose bytes fields are base64 and whose int64
 * fields come back as strings; a watch is one POST whose response is a
 * stream of such messages, one a line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "store/etcdkv.h"

struct etcdkv {
	uv_loop_t *loop;
	hclient *hc;
	char **endpoints;
	int n;
	int cur;		/* the endpoint calls go to */
	unsigned timeout_ms;
};

etcdkv *
etcdkv_new(uv_loop_t *loop, const struct etcdkv_conf *c, char **cause)
{
	struct hclient_conf hc;
	etcdkv *kv;
	int i;

	if (c->nendpoints < 1) {
		*cause = xstrdup("no etcd endpoint");
		return NULL;
	}
	memset(&hc, 0, sizeof hc);
	hc.ca_file = c->ca_file;
	hc.cert_file = c->cert_file;
	hc.key_file = c->key_file;
	hc.user_agent = "volrayd";
	kv = xcalloc(1, sizeof *kv);
	if ((kv->hc = hclient_new(loop, &hc, cause)) == NULL) {
		free(kv);
		return NULL;
	}
	/* Kept-alive connections, a few at once: each is an etcd stream. */
	hclient_set_max_connections(kv->hc, 64);
	kv->loop = loop;
	kv->endpoints = xcalloc((size_t)c->nendpoints, sizeof *kv->endpoints);
	for (i = 0; i < c->nendpoints; i++) {
		size_t len = strlen(c->endpoints[i]);

		kv->endpoints[i] = xstrdup(c->endpoints[i]);
		if (len > 0 && kv->endpoints[i][len - 1] == '/')
			kv->endpoints[i][len - 1] = '\0';
	}
	kv->n = c->nendpoints;
	kv->timeout_ms = c->timeout_ms ? c->timeout_ms : 10000;
	return kv;
}

void
etcdkv_free(etcdkv *kv)
{
	int i;

	if (kv == NULL)
		return;
	hclient_free(kv->hc);
	for (i = 0; i < kv->n; i++)
		free(kv->endpoints[i]);
	free(kv->endpoints);
	free(kv);
}

const char *
etcdkv_endpoint(const etcdkv *kv)
{
	return kv->endpoints[kv->cur];
}

/* The next endpoint, after a failure at the current one. */
static void
rotate(etcdkv *kv, int from)
{
	if (kv->cur == from && kv->n > 1) {
		kv->cur = (kv->cur + 1) % kv->n;
		log_warn("etcd: now using %s", kv->endpoints[kv->cur]);
	}
}

static char *
url_of(const etcdkv *kv, int ep, const char *path)
{
	return util_printf("%s%s", kv->endpoints[ep], path);
}

/* base64 of len bytes (malloc'd). */
static char *
b64(const char *p, size_t len)
{
	char *out = xmalloc(4 * ((len + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)p,
	    (int)len);
	return out;
}

/* Decode s into a malloc'd NUL-terminated buffer; -1 when not base64. */
static int
unb64(const char *s, char **out, size_t *len)
{
	size_t n = strlen(s), pad = 0;
	int got;

	*out = xmalloc(3 * (n / 4) + 1);
	if (n % 4 != 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	if ((got = EVP_DecodeBlock((unsigned char *)*out,
	    (const unsigned char *)s, (int)n)) < 0) {
		free(*out);
		*out = NULL;
		return -1;
	}
	if (n >= 1 && s[n - 1] == '=')
		pad++;
	if (n >= 2 && s[n - 2] == '=')
		pad++;
	*len = (size_t)got - pad;
	(*out)[*len] = '\0';
	return 0;
}

static void
add_b64(cJSON *o, const char *name, const char *p, size_t len)
{
	char *s = b64(p, len);

	cJSON_AddStringToObject(o, name, s);
	free(s);
}

static void
add_i64(cJSON *o, const char *name, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof buf, "%lld", (long long)v);
	cJSON_AddStringToObject(o, name, buf);
}

/* An int64 field: a string in the gateway's JSON, absent when 0. */
static int64_t
i64(const cJSON *o, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

	if (cJSON_IsString(v))
		return strtoll(v->valuestring, NULL, 10);
	if (cJSON_IsNumber(v))
		return (int64_t)v->valuedouble;
	return 0;
}

/* A KeyValue message into kv (its strings malloc'd); -1 when bad. */
static int
kv_of(const cJSON *m, struct etcdkv_kv *kv, int with_value)
{
	const char *k = json_str(m, "key"), *v = json_str(m, "value");

	memset(kv, 0, sizeof *kv);
	if (k == NULL || unb64(k, &kv->key, &kv->klen) != 0)
		return -1;
	if (with_value) {
		if (unb64(v != NULL ? v : "", &kv->value, &kv->vlen) != 0) {
			free(kv->key);
			return -1;
		}
	}
	kv->create_rev = i64(m, "create_revision");
	kv->mod_rev = i64(m, "mod_revision");
	kv->version = i64(m, "version");
	return 0;
}

static void
kv_clear(struct etcdkv_kv *kv)
{
	free(kv->key);
	free(kv->value);
}

void
etcdkv_kvs_free(struct etcdkv_kv *kvs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		kv_clear(&kvs[i]);
	free(kvs);
}

void
etcdkv_prefix_end(const char *prefix, size_t len, char *buf)
{
	memcpy(buf, prefix, len);
	buf[len - 1] = (char)(buf[len - 1] + 1);
}

/* An error message of a gateway answer (malloc'd). */
static char *
answer_error(long status, const char *body, const char *err)
{
	cJSON *t;
	char *s;
	const char *m;

	if (status == 0)
		return xstrdup(err ? err : "no answer");
	t = cJSON_Parse(body);
	m = t ? json_str(t, "message") : NULL;
	s = util_printf("etcd: %ld %s", status, m ? m : body);
	cJSON_Delete(t);
	return s;
}

/* ---- transactions ---- */

static char *
txn_body(const struct etcdkv_op *ops, size_t n)
{
	cJSON *t = cJSON_CreateObject(), *cmp, *succ, *c, *op, *r;
	char *s;
	size_t i;

	cmp = cJSON_AddArrayToObject(t, "compare");
	succ = cJSON_AddArrayToObject(t, "success");
	for (i = 0; i < n; i++) {
		if (ops[i].expect_mod >= 0) {
			c = cJSON_CreateObject();
			add_b64(c, "key", ops[i].key, ops[i].klen);
			cJSON_AddStringToObject(c, "result", "EQUAL");
			cJSON_AddStringToObject(c, "target", "MOD");
			add_i64(c, "mod_revision", ops[i].expect_mod);
			cJSON_AddItemToArray(cmp, c);
		}
		op = cJSON_CreateObject();
		r = cJSON_AddObjectToObject(op, ops[i].del ?
		    "request_delete_range" : "request_put");
		add_b64(r, "key", ops[i].key, ops[i].klen);
		if (!ops[i].del)
			add_b64(r, "value", ops[i].value, ops[i].vlen);
		cJSON_AddItemToArray(succ, op);
	}
	s = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	return s;
}

/* The outcome of a transaction's answer. */
static int
txn_outcome(long status, const char *body, const char *err, int64_t *rev,
    char **msg)
{
	cJSON *t;
	int out;

	*rev = 0;
	if (status != 200) {
		*msg = answer_error(status, body, err);
		return ETCDKV_ERROR;
	}
	if ((t = cJSON_Parse(body)) == NULL) {
		*msg = xstrdup("etcd: a transaction's answer is no JSON");
		return ETCDKV_ERROR;
	}
	*rev = i64(cJSON_GetObjectItemCaseSensitive(t, "header"), "revision");
	out = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "succeeded")) ?
	    ETCDKV_OK : ETCDKV_CONFLICT;
	cJSON_Delete(t);
	return out;
}

struct txn_call {
	etcdkv *kv;
	int ep;
	etcdkv_txn_fn done;
	void *arg;
};

static void
txn_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct txn_call *c = arg;
	char *msg = NULL;
	int64_t rev;
	int out;

	(void)len;
	out = txn_outcome(status, body, err, &rev, &msg);
	if (out == ETCDKV_ERROR && (status == 0 || status >= 500))
		rotate(c->kv, c->ep);
	c->done(c->arg, out, rev, msg);
	free(msg);
	free(c);
}

void
etcdkv_txn(etcdkv *kv, const struct etcdkv_op *ops, size_t n,
    etcdkv_txn_fn done, void *arg)
{
	struct txn_call *c = xmalloc(sizeof *c);
	struct hclient_call call;
	char *body = txn_body(ops, n), *url = url_of(kv, kv->cur, "/v3/kv/txn");
	char *err = NULL;

	memset(&call, 0, sizeof call);
	call.method = "POST";
	call.url = url;
	call.body = body;
	call.body_len = strlen(body);
	call.content_type = "application/json";
	call.timeout_ms = kv->timeout_ms;
	c->kv = kv;
	c->ep = kv->cur;
	c->done = done;
	c->arg = arg;
	if (hclient_start(kv->hc, &call, NULL, txn_done, c, &err) == NULL) {
		done(arg, ETCDKV_ERROR, 0, err);
		free(err);
		free(c);
	}
	free(body);
	free(url);
}

/* One synchronous POST to the current endpoint, trying the others on a
   transport failure when retry is set. */
static int
post_sync(etcdkv *kv, const char *path, const char *body, int retry,
    long *status, char **resp, char **err)
{
	struct hclient_call call;
	int tries = retry ? kv->n : 1, rc = -1;
	size_t len;

	memset(&call, 0, sizeof call);
	call.method = "POST";
	call.body = body;
	call.body_len = strlen(body);
	call.content_type = "application/json";
	call.timeout_ms = kv->timeout_ms;
	while (tries-- > 0) {
		int ep = kv->cur;
		char *url = url_of(kv, ep, path);

		call.url = url;
		free(*err);
		*err = NULL;
		*resp = NULL;
		rc = hclient_call_sync(kv->hc, &call, status, resp, &len, err);
		free(url);
		if (rc == 0 && *status < 500)
			return 0;
		if (rc == 0 && tries == 0)
			return 0;
		if (rc == 0) {
			free(*resp);
			*resp = NULL;
		}
		rotate(kv, ep);
	}
	return rc;
}

int
etcdkv_txn_sync(etcdkv *kv, const struct etcdkv_op *ops, size_t n,
    int64_t *rev, char **err)
{
	char *body = txn_body(ops, n), *resp = NULL, *e = NULL;
	long status = 0;
	int out;

	*err = NULL;
	if (post_sync(kv, "/v3/kv/txn", body, 0, &status, &resp, &e) != 0) {
		free(body);
		*err = e ? e : xstrdup("etcd: no answer");
		rotate(kv, kv->cur);
		return ETCDKV_ERROR;
	}
	free(e);
	out = txn_outcome(status, resp, NULL, rev, err);
	free(body);
	free(resp);
	return out;
}

/* ---- ranges ---- */

static char *
range_body(const struct etcdkv_range *r)
{
	cJSON *t = cJSON_CreateObject();
	char *s;

	add_b64(t, "key", r->key, r->klen);
	if (r->end != NULL)
		add_b64(t, "range_end", r->end, r->elen);
	if (r->rev > 0)
		add_i64(t, "revision", r->rev);
	if (r->limit > 0)
		add_i64(t, "limit", r->limit);
	if (r->min_mod_rev > 0)
		add_i64(t, "min_mod_revision", r->min_mod_rev);
	if (r->count_only)
		cJSON_AddTrueToObject(t, "count_only");
	if (r->keys_only)
		cJSON_AddTrueToObject(t, "keys_only");
	s = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	return s;
}

int
etcdkv_range_sync(etcdkv *kv, const struct etcdkv_range *r,
    struct etcdkv_kv **kvs, size_t *n, int64_t *rev_out, int *more,
    char **err)
{
	char *body = range_body(r), *resp = NULL, *e = NULL;
	const cJSON *a, *m;
	long status = 0;
	cJSON *t;
	size_t i = 0;

	*kvs = NULL;
	*n = 0;
	*more = 0;
	*err = NULL;
	if (post_sync(kv, "/v3/kv/range", body, 1, &status, &resp, &e) != 0) {
		free(body);
		*err = e ? e : xstrdup("etcd: no answer");
		return -1;
	}
	free(e);
	free(body);
	if (status != 200) {
		*err = strstr(resp, "compacted") ? xstrdup("compacted") :
		    answer_error(status, resp, NULL);
		free(resp);
		return -1;
	}
	t = cJSON_Parse(resp);
	free(resp);
	if (t == NULL) {
		*err = xstrdup("etcd: a range's answer is no JSON");
		return -1;
	}
	*rev_out = i64(cJSON_GetObjectItemCaseSensitive(t, "header"),
	    "revision");
	*more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "more"));
	if (r->count_only) {
		*n = (size_t)i64(t, "count");
		cJSON_Delete(t);
		return 0;
	}
	a = cJSON_GetObjectItemCaseSensitive(t, "kvs");
	*kvs = xcalloc((size_t)cJSON_GetArraySize(a) + 1, sizeof **kvs);
	cJSON_ArrayForEach(m, a) {
		if (kv_of(m, &(*kvs)[i], !r->keys_only) == 0)
			i++;
	}
	*n = i;
	cJSON_Delete(t);
	return 0;
}

struct rev_call {
	etcdkv *kv;
	int ep;
	etcdkv_rev_fn done;
	void *arg;
};

static void
rev_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct rev_call *c = arg;
	cJSON *t;

	(void)len;
	if (status == 200 && (t = cJSON_Parse(body)) != NULL) {
		c->done(c->arg, i64(cJSON_GetObjectItemCaseSensitive(t,
		    "header"), "revision"), NULL);
		cJSON_Delete(t);
	} else {
		char *m = answer_error(status, body, err);

		rotate(c->kv, c->ep);
		c->done(c->arg, -1, m);
		free(m);
	}
	free(c);
}

void
etcdkv_current_rev(etcdkv *kv, const char *probe_key, etcdkv_rev_fn done,
    void *arg)
{
	struct etcdkv_range r;
	struct rev_call *c = xmalloc(sizeof *c);
	struct hclient_call call;
	char *body, *url, *err = NULL;

	memset(&r, 0, sizeof r);
	r.key = probe_key;
	r.klen = strlen(probe_key);
	r.count_only = 1;
	body = range_body(&r);
	url = url_of(kv, kv->cur, "/v3/kv/range");
	memset(&call, 0, sizeof call);
	call.method = "POST";
	call.url = url;
	call.body = body;
	call.body_len = strlen(body);
	call.content_type = "application/json";
	call.timeout_ms = kv->timeout_ms;
	c->kv = kv;
	c->ep = kv->cur;
	c->done = done;
	c->arg = arg;
	if (hclient_start(kv->hc, &call, NULL, rev_done, c, &err) == NULL) {
		done(arg, -1, err);
		free(err);
		free(c);
	}
	free(body);
	free(url);
}

/* ---- compaction ---- */

static void
compact_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	(void)arg;
	(void)len;
	if (status != 200) {
		char *m = answer_error(status, body, err);

		log_warn("etcd: compaction: %s", m);
		free(m);
	}
}

void
etcdkv_compact(etcdkv *kv, int64_t rev)
{
	struct hclient_call call;
	char body[64], *url = url_of(kv, kv->cur, "/v3/kv/compaction");
	char *err = NULL;

	snprintf(body, sizeof body, "{\"revision\":\"%lld\"}", (long long)rev);
	memset(&call, 0, sizeof call);
	call.method = "POST";
	call.url = url;
	call.body = body;
	call.body_len = strlen(body);
	call.content_type = "application/json";
	call.timeout_ms = 60000;
	if (hclient_start(kv->hc, &call, NULL, compact_done, NULL, &err) ==
	    NULL) {
		log_warn("etcd: compaction: %s", err);
		free(err);
	}
	free(url);
}

/* ---- watches ---- */

struct etcdkv_watch {
	etcdkv *kv;
	hclient_req *req;
	int ep;
	char *key, *end;
	size_t klen, elen;
	int64_t next;		/* the revision to resume from */
	struct etcdkv_watch_cb cb;
	char *line;
	size_t len, cap;
	int ended;
	int failures;		/* in a row, for the back-off */
	uv_timer_t retry;
};

static void watch_connect(etcdkv_watch *);

static void
watch_end(etcdkv_watch *w, int64_t compacted, const char *err)
{
	if (w->ended)
		return;
	w->ended = 1;
	if (w->req != NULL) {
		hclient_cancel(w->req);
		w->req = NULL;
	}
	w->cb.on_end(w->cb.arg, compacted, err);
}

/* One message of the stream. */
static void
watch_message(etcdkv_watch *w, const char *p, size_t len)
{
	cJSON *t = cJSON_ParseWithLength(p, len), *res, *ev;
	int64_t rev;

	if (t == NULL) {
		log_warn("etcd: watch: a message is no JSON");
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(t, "result");
	if (res == NULL) {
		const char *m = json_str(t, "error");

		log_warn("etcd: watch: %s", m ? m : "error");
		cJSON_Delete(t);
		return;
	}
	w->failures = 0;
	if (i64(res, "compact_revision") > 0) {
		int64_t c = i64(res, "compact_revision");

		cJSON_Delete(t);
		watch_end(w, c, NULL);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "canceled"))) {
		const char *m = json_str(res, "cancel_reason");

		cJSON_Delete(t);
		watch_end(w, 0, m ? m : "watch canceled");
		return;
	}
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(res,
	    "events")) {
		struct etcdkv_kv kv, prev;
		const cJSON *pm = cJSON_GetObjectItemCaseSensitive(ev,
		    "prev_kv");
		const char *type = json_str(ev, "type");
		int del = type != NULL && strcmp(type, "DELETE") == 0;

		if (kv_of(cJSON_GetObjectItemCaseSensitive(ev, "kv"), &kv,
		    !del) != 0)
			continue;
		memset(&prev, 0, sizeof prev);
		if (pm != NULL && kv_of(pm, &prev, 1) != 0)
			pm = NULL;
		w->cb.on_event(w->cb.arg, &kv, pm ? &prev : NULL);
		if (kv.mod_rev >= w->next)
			w->next = kv.mod_rev + 1;
		kv_clear(&kv);
		if (pm != NULL)
			kv_clear(&prev);
		if (w->ended)
			break;
	}
	rev = i64(cJSON_GetObjectItemCaseSensitive(res, "header"), "revision");
	if (!w->ended && rev > 0 && cJSON_GetArraySize(
	    cJSON_GetObjectItemCaseSensitive(res, "events")) == 0 &&
	    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "created")))
		w->cb.on_progress(w->cb.arg, rev);
	cJSON_Delete(t);
}

static void
watch_data(void *arg, const char *p, size_t len)
{
	etcdkv_watch *w = arg;
	const char *nl;

	while (len > 0 && !w->ended) {
		nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;

		if (w->len + take + 1 > w->cap) {
			w->cap = (w->len + take + 1) * 2;
			w->line = xrealloc(w->line, w->cap);
		}
		memcpy(w->line + w->len, p, take);
		w->len += take;
		p += take;
		len -= take;
		if (nl != NULL) {
			p++;
			len--;
			if (w->len > 0)
				watch_message(w, w->line, w->len);
			w->len = 0;
		}
	}
}

static void
retry_fire(uv_timer_t *t)
{
	watch_connect(t->data);
}

static void
watch_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	etcdkv_watch *w = arg;
	unsigned delay;

	(void)len;
	w->req = NULL;
	if (w->ended)
		return;
	if (status != 0 && status != 200 && body != NULL &&
	    strstr(body, "compacted") != NULL) {
		watch_end(w, w->next, NULL);
		return;
	}
	/* Lost: go on at the next endpoint from where it was. */
	log_warn("etcd: watch at %s ended (%s); resuming from revision %lld",
	    w->kv->endpoints[w->ep], err ? err : status ? "closed" : "lost",
	    (long long)w->next);
	rotate(w->kv, w->ep);
	w->len = 0;
	delay = w->failures < 6 ? 50u << w->failures : 2000;
	w->failures++;
	uv_timer_start(&w->retry, retry_fire, delay, 0);
}

static void
watch_connect(etcdkv_watch *w)
{
	struct hclient_call call;
	cJSON *t = cJSON_CreateObject(), *c;
	char *body, *url, *err = NULL;

	c = cJSON_AddObjectToObject(t, "create_request");
	add_b64(c, "key", w->key, w->klen);
	add_b64(c, "range_end", w->end, w->elen);
	add_i64(c, "start_revision", w->next);
	cJSON_AddTrueToObject(c, "prev_kv");
	cJSON_AddTrueToObject(c, "progress_notify");
	body = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	w->ep = w->kv->cur;
	url = url_of(w->kv, w->ep, "/v3/watch");
	memset(&call, 0, sizeof call);
	call.method = "POST";
	call.url = url;
	call.body = body;
	call.body_len = strlen(body);
	call.content_type = "application/json";
	w->req = hclient_start(w->kv->hc, &call, watch_data, watch_done, w,
	    &err);
	if (w->req == NULL) {
		log_warn("etcd: watch: %s", err);
		free(err);
		rotate(w->kv, w->ep);
		uv_timer_start(&w->retry, retry_fire, 500, 0);
	}
	free(body);
	free(url);
}

etcdkv_watch *
etcdkv_watch_start(etcdkv *kv, const char *key, size_t klen, const char *end,
    size_t elen, int64_t start_rev, const struct etcdkv_watch_cb *cb)
{
	etcdkv_watch *w = xcalloc(1, sizeof *w);

	w->kv = kv;
	w->key = xmalloc(klen + 1);
	memcpy(w->key, key, klen);
	w->klen = klen;
	w->end = xmalloc(elen + 1);
	memcpy(w->end, end, elen);
	w->elen = elen;
	w->next = start_rev;
	w->cb = *cb;
	uv_timer_init(kv->loop, &w->retry);
	w->retry.data = w;
	watch_connect(w);
	return w;
}

static void
watch_free(uv_handle_t *h)
{
	etcdkv_watch *w = h->data;

	free(w->key);
	free(w->end);
	free(w->line);
	free(w);
}

void
etcdkv_watch_stop(etcdkv_watch *w)
{
	if (w == NULL)
		return;
	w->ended = 1;
	if (w->req != NULL)
		hclient_cancel(w->req);
	uv_close((uv_handle_t *)&w->retry, watch_free);
}
