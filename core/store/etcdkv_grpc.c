/*
 * The etcd v3 client over etcd's gRPC API (etcdkv.h), with gRPC's C core
 * and protobuf-c (the messages: etcdpb/kv.proto and rpc.proto, with
 * etcd's field numbers). One channel (one HTTP/2 connection) per
 * endpoint, made when first used; TLS for https:// endpoints and with a
 * CA file.
 *
 * Every asynchronous call and watch stream completes on one completion
 * queue, drained by a thread of this file's own: it hands each completed
 * batch (a struct tag) to the loop through a list and a uv_async, and the
 * loop runs it, so every callback runs on the loop thread. A synchronous call blocks the loop on a
 * completion queue of its own. A watch is one /etcdserverpb.Watch/Watch
 * stream with a single watcher: the create request, then one RECV_MESSAGE
 * outstanding at a time, and RECV_STATUS_ON_CLIENT to learn of its end;
 * a stream lost is opened again at the next endpoint from the revision
 * after the last one delivered. Nothing is freed while gRPC still holds
 * one of its tags.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/log.h>
#include <grpc/support/time.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/etcdkv.h"
#include "store/etcdpb/rpc.pb-c.h"

#define CONTAINER(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

/* One batch given to gRPC on the shared queue; fn runs on the loop. */
struct tag {
	void (*fn)(struct tag *, int ok);
	int ok;
	struct tag *next;
};

struct ucall;

struct etcdkv {
	uv_loop_t *loop;
	char **endpoints;	/* as configured, for etcdkv_endpoint */
	char **targets;		/* host:port */
	int *tls;
	grpc_channel **chans;
	int n;
	int cur;		/* the endpoint calls go to */
	unsigned timeout_ms;
	grpc_channel_credentials *insecure, *ssl;

	grpc_completion_queue *cq;
	pthread_t thread;
	pthread_mutex_t mu;
	struct tag *done, **done_tail;	/* completed, for the loop */
	uv_async_t async;
	int closing;
	int dispatching;	/* a completion's fn is running */
	int torn;		/* etcdkv_free ran inside one: finish after */

	struct ucall *calls;		/* asynchronous calls under way */
	struct etcdkv_watch *watches;
};

/* One unary call: its six ops in one batch. */
struct ucall {
	struct tag tag;
	etcdkv *kv;
	int ep;
	grpc_call *call;
	grpc_metadata_array md_init, md_trail;
	grpc_byte_buffer *req, *resp;
	grpc_status_code status;
	grpc_slice details;
	void (*finish)(struct ucall *, int ok);
	union {
		etcdkv_txn_fn txn;
		etcdkv_rev_fn rev;
		etcdkv_range_fn range;
	} done;
	void *arg;
	int count_only, keys_only;	/* a range's */
	struct ucall *prev, *next;
};

/* The outcomes of a call's answer. */
enum { ANS_OK, ANS_FAILED, ANS_LOST };

static const char *const status_names[] = {
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
	"NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
	"RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
	"OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE",
	"DATA_LOSS", "UNAUTHENTICATED"
};

/* ---- the completion thread and the loop ---- */

static void *
cq_run(void *arg)
{
	etcdkv *kv = arg;
	grpc_event ev;
	struct tag *t;

	for (;;) {
		ev = grpc_completion_queue_next(kv->cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return NULL;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		t = ev.tag;
		t->ok = ev.success;
		t->next = NULL;
		pthread_mutex_lock(&kv->mu);
		*kv->done_tail = t;
		kv->done_tail = &t->next;
		pthread_mutex_unlock(&kv->mu);
		uv_async_send(&kv->async);
	}
}

static struct tag *
done_pop(etcdkv *kv)
{
	struct tag *t;

	pthread_mutex_lock(&kv->mu);
	if ((t = kv->done) != NULL && (kv->done = t->next) == NULL)
		kv->done_tail = &kv->done;
	pthread_mutex_unlock(&kv->mu);
	return t;
}

static void kv_teardown(etcdkv *);

/* The completed batches, one at a time: a callback may free the client,
   whose end then waits for that callback's call to be cleared. */
static void
on_async(uv_async_t *a)
{
	etcdkv *kv = a->data;
	struct tag *t;

	while (!kv->closing && (t = done_pop(kv)) != NULL) {
		kv->dispatching = 1;
		t->fn(t, t->ok);
		kv->dispatching = 0;
	}
	if (kv->torn) {
		kv->torn = 0;
		kv_teardown(kv);
	}
}

/* ---- endpoints and channels ---- */

/* The next endpoint, after a failure at the current one. */
static void
rotate(etcdkv *kv, int from)
{
	if (kv->cur == from && kv->n > 1) {
		kv->cur = (kv->cur + 1) % kv->n;
		log_warn("etcd: now using %s", kv->endpoints[kv->cur]);
	}
}

static grpc_channel *
channel(etcdkv *kv, int ep)
{
	grpc_arg a[5];
	grpc_channel_args args = { 5, a };

	if (kv->chans[ep] != NULL)
		return kv->chans[ep];
	memset(a, 0, sizeof a);
	/* A range's answer may be large; etcd itself sends up to 2 GiB. */
	a[0].type = GRPC_ARG_INTEGER;
	a[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
	a[0].value.integer = -1;
	/* A watch stream on a dead connection is noticed, and left. */
	a[1].type = GRPC_ARG_INTEGER;
	a[1].key = (char *)GRPC_ARG_KEEPALIVE_TIME_MS;
	a[1].value.integer = 30000;
	a[2].type = GRPC_ARG_INTEGER;
	a[2].key = (char *)GRPC_ARG_KEEPALIVE_TIMEOUT_MS;
	a[2].value.integer = 10000;
	/* An endpoint back up is used again within seconds. */
	a[3].type = GRPC_ARG_INTEGER;
	a[3].key = (char *)GRPC_ARG_MAX_RECONNECT_BACKOFF_MS;
	a[3].value.integer = 2000;
	a[4].type = GRPC_ARG_STRING;
	a[4].key = (char *)GRPC_ARG_PRIMARY_USER_AGENT_STRING;
	a[4].value.string = (char *)"volrayd";
	kv->chans[ep] = grpc_channel_create(kv->targets[ep],
	    kv->tls[ep] ? kv->ssl : kv->insecure, &args);
	return kv->chans[ep];
}

/* The host:port of an endpoint URL (malloc'd); NULL when it is none. */
static char *
target_of(const char *url, int *tls)
{
	const char *p = url;
	size_t len;

	*tls = 0;
	if (strncmp(p, "https://", 8) == 0) {
		*tls = 1;
		p += 8;
	} else if (strncmp(p, "http://", 7) == 0)
		p += 7;
	else if (strstr(p, "://") != NULL)
		return NULL;
	len = strcspn(p, "/");
	return len > 0 ? xstrndup(p, len) : NULL;
}

/* A PEM file's contents (malloc'd, NUL-terminated); NULL and *cause. */
static char *
pem_read(const char *path, char **cause)
{
	FILE *f;
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if ((f = fopen(path, "rb")) == NULL) {
		*cause = util_printf("%s: cannot be read", path);
		return NULL;
	}
	do {
		XGROW(buf, cap, len + 4096 + 1);
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* TLS credentials from the configured files; NULL and *cause. */
static grpc_channel_credentials *
ssl_creds(const struct etcdkv_conf *c, char **cause)
{
	grpc_ssl_pem_key_cert_pair pair;
	grpc_channel_credentials *cr = NULL;
	char *ca = NULL, *cert = NULL, *key = NULL;

	if ((c->cert_file == NULL) != (c->key_file == NULL)) {
		*cause = xstrdup("etcd: a client certificate needs its key, "
		    "and a key its certificate");
		return NULL;
	}
	if (c->ca_file != NULL && (ca = pem_read(c->ca_file, cause)) == NULL)
		return NULL;
	if (c->cert_file != NULL &&
	    ((cert = pem_read(c->cert_file, cause)) == NULL ||
	    (key = pem_read(c->key_file, cause)) == NULL))
		goto out;
	pair.private_key = key;
	pair.cert_chain = cert;
	cr = grpc_ssl_credentials_create(ca, cert ? &pair : NULL, NULL, NULL);
	if (cr == NULL)
		*cause = xstrdup("etcd: the TLS credentials were refused");
out:
	free(ca);
	free(cert);
	free(key);
	return cr;
}

/* Endpoints, their targets and credentials; -1 and *cause. */
static int
endpoints_init(etcdkv *kv, const struct etcdkv_conf *c, char **cause)
{
	int i, need_ssl = 0;

	kv->n = c->nendpoints;
	kv->endpoints = xcalloc((size_t)kv->n, sizeof *kv->endpoints);
	kv->targets = xcalloc((size_t)kv->n, sizeof *kv->targets);
	kv->tls = xcalloc((size_t)kv->n, sizeof *kv->tls);
	kv->chans = xcalloc((size_t)kv->n, sizeof *kv->chans);
	for (i = 0; i < kv->n; i++) {
		size_t len = strlen(c->endpoints[i]);

		kv->endpoints[i] = xstrdup(c->endpoints[i]);
		if (len > 0 && kv->endpoints[i][len - 1] == '/')
			kv->endpoints[i][len - 1] = '\0';
		kv->targets[i] = target_of(c->endpoints[i], &kv->tls[i]);
		if (kv->targets[i] == NULL) {
			*cause = util_printf("etcd: %s: not an http:// or "
			    "https:// endpoint", c->endpoints[i]);
			return -1;
		}
		if (c->ca_file != NULL)
			kv->tls[i] = 1;
		need_ssl |= kv->tls[i];
	}
	kv->insecure = grpc_insecure_credentials_create();
	if (need_ssl && (kv->ssl = ssl_creds(c, cause)) == NULL)
		return -1;
	return 0;
}

static void
endpoints_free(etcdkv *kv)
{
	int i;

	for (i = 0; i < kv->n; i++) {
		if (kv->chans[i] != NULL)
			grpc_channel_destroy(kv->chans[i]);
		free(kv->endpoints[i]);
		free(kv->targets[i]);
	}
	if (kv->insecure != NULL)
		grpc_channel_credentials_release(kv->insecure);
	if (kv->ssl != NULL)
		grpc_channel_credentials_release(kv->ssl);
	free(kv->endpoints);
	free(kv->targets);
	free(kv->tls);
	free(kv->chans);
}

/* gRPC's own log lines, into the daemon's log: its errors as warnings
   (the call that failed says what matters), the rest for debugging. */
static void
grpc_log(gpr_log_func_args *a)
{
	log_msg(a->severity == GPR_LOG_SEVERITY_ERROR ? LOG_WARN : LOG_DEBUG,
	    "etcd: grpc: %s", a->message);
}

etcdkv *
etcdkv_new(uv_loop_t *loop, const struct etcdkv_conf *c, char **cause)
{
	etcdkv *kv;

	if (c->nendpoints < 1) {
		*cause = xstrdup("no etcd endpoint");
		return NULL;
	}
	gpr_set_log_function(grpc_log);
	grpc_init();
	kv = xcalloc(1, sizeof *kv);
	if (endpoints_init(kv, c, cause) != 0) {
		endpoints_free(kv);
		free(kv);
		grpc_shutdown();
		return NULL;
	}
	kv->loop = loop;
	kv->timeout_ms = c->timeout_ms ? c->timeout_ms : 10000;
	kv->cq = grpc_completion_queue_create_for_next(NULL);
	kv->done_tail = &kv->done;
	pthread_mutex_init(&kv->mu, NULL);
	uv_async_init(loop, &kv->async, on_async);
	kv->async.data = kv;
	if (pthread_create(&kv->thread, NULL, cq_run, kv) != 0)
		fatal("etcd: cannot start the completion thread");
	return kv;
}

const char *
etcdkv_endpoint(const etcdkv *kv)
{
	return kv->endpoints[kv->cur];
}

/* ---- messages ---- */

static grpc_byte_buffer *
pack(const ProtobufCMessage *m)
{
	grpc_byte_buffer *bb;
	grpc_slice s;

	s = grpc_slice_malloc(protobuf_c_message_get_packed_size(m));
	protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return bb;
}

/* A received message; NULL when there is none or it does not parse. */
static ProtobufCMessage *
unpack(const ProtobufCMessageDescriptor *d, grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader r;
	ProtobufCMessage *m;
	grpc_slice s;

	if (bb == NULL || !grpc_byte_buffer_reader_init(&r, bb))
		return NULL;
	s = grpc_byte_buffer_reader_readall(&r);
	grpc_byte_buffer_reader_destroy(&r);
	m = protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(s),
	    GRPC_SLICE_START_PTR(s));
	grpc_slice_unref(s);
	return m;
}

static char *
bytes_dup(const ProtobufCBinaryData *b, size_t *len)
{
	char *p = xmalloc(b->len + 1);

	if (b->len > 0)
		memcpy(p, b->data, b->len);
	p[b->len] = '\0';
	*len = b->len;
	return p;
}

static ProtobufCBinaryData
bytes_of(const char *p, size_t len)
{
	ProtobufCBinaryData b;

	b.data = (uint8_t *)(uintptr_t)p;
	b.len = len;
	return b;
}

/* A KeyValue message into kv (its strings malloc'd). */
static void
kv_of(const Mvccpb__KeyValue *m, struct etcdkv_kv *kv, int with_value)
{
	memset(kv, 0, sizeof *kv);
	kv->key = bytes_dup(&m->key, &kv->klen);
	if (with_value)
		kv->value = bytes_dup(&m->value, &kv->vlen);
	kv->create_rev = m->create_revision;
	kv->mod_rev = m->mod_revision;
	kv->version = m->version;
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

static int64_t
header_rev(const Etcdserverpb__ResponseHeader *h)
{
	return h != NULL ? h->revision : 0;
}

/* ---- unary calls ---- */

static gpr_timespec
deadline_in(unsigned ms)
{
	return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	    gpr_time_from_millis(ms, GPR_TIMESPAN));
}

/* Start call c of method at endpoint ep, on cq, answered within ms. */
static void
call_begin(etcdkv *kv, struct ucall *c, int ep, grpc_completion_queue *cq,
    const char *method, const ProtobufCMessage *m, unsigned ms)
{
	grpc_op op[6];
	grpc_call_error e;

	c->kv = kv;
	c->ep = ep;
	c->resp = NULL;
	c->status = GRPC_STATUS_OK;
	c->details = grpc_empty_slice();
	grpc_metadata_array_init(&c->md_init);
	grpc_metadata_array_init(&c->md_trail);
	c->req = pack(m);
	c->call = grpc_channel_create_call(channel(kv, ep), NULL,
	    GRPC_PROPAGATE_DEFAULTS, cq, grpc_slice_from_static_string(method),
	    NULL, deadline_in(ms), NULL);
	memset(op, 0, sizeof op);
	op[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	op[1].op = GRPC_OP_SEND_MESSAGE;
	op[1].data.send_message.send_message = c->req;
	op[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	op[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	op[3].data.recv_initial_metadata.recv_initial_metadata = &c->md_init;
	op[4].op = GRPC_OP_RECV_MESSAGE;
	op[4].data.recv_message.recv_message = &c->resp;
	op[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	op[5].data.recv_status_on_client.trailing_metadata = &c->md_trail;
	op[5].data.recv_status_on_client.status = &c->status;
	op[5].data.recv_status_on_client.status_details = &c->details;
	if ((e = grpc_call_start_batch(c->call, op, 6, &c->tag, NULL)) !=
	    GRPC_CALL_OK)
		fatal("etcd: %s: grpc_call_start_batch: %d", method, e);
}

static void
call_clear(struct ucall *c)
{
	grpc_byte_buffer_destroy(c->req);
	if (c->resp != NULL)
		grpc_byte_buffer_destroy(c->resp);
	grpc_metadata_array_destroy(&c->md_init);
	grpc_metadata_array_destroy(&c->md_trail);
	grpc_slice_unref(c->details);
	grpc_call_unref(c->call);
}

/* "etcd: what went wrong (STATUS)", malloc'd. */
static char *
call_error(grpc_status_code st, grpc_slice details, const char *what)
{
	char *d = grpc_slice_to_c_string(details), *s;
	const char *name = (unsigned)st < sizeof status_names /
	    sizeof status_names[0] ? status_names[st] : "?";

	s = util_printf("etcd: %s (%s)", *d ? d : what, name);
	gpr_free(d);
	return s;
}

/* The answer of a completed call: ANS_OK and *out (free with
   protobuf_c_message_free_unpacked), else *cause and whether the endpoint
   was lost. */
static int
call_answer(struct ucall *c, int ok, const ProtobufCMessageDescriptor *d,
    ProtobufCMessage **out, char **cause)
{
	*out = NULL;
	*cause = NULL;
	if (!ok) {
		*cause = util_printf("etcd: %s: the call failed",
		    c->kv->endpoints[c->ep]);
		return ANS_LOST;
	}
	if (c->status != GRPC_STATUS_OK) {
		*cause = call_error(c->status, c->details, "no answer");
		return c->status == GRPC_STATUS_UNAVAILABLE ||
		    c->status == GRPC_STATUS_DEADLINE_EXCEEDED ? ANS_LOST :
		    ANS_FAILED;
	}
	if ((*out = unpack(d, c->resp)) == NULL) {
		*cause = xstrdup("etcd: an answer does not parse");
		return ANS_FAILED;
	}
	return ANS_OK;
}

/* A completed asynchronous call: its finish, unless the client is being
   freed, then the call's end. */
static void
ucall_done(struct tag *t, int ok)
{
	struct ucall *c = CONTAINER(t, struct ucall, tag);
	etcdkv *kv = c->kv;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		kv->calls = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (!kv->closing)
		c->finish(c, ok);
	call_clear(c);
	free(c);
}

/* An asynchronous call at the current endpoint; finish runs on the loop. */
static struct ucall *
ucall_start(etcdkv *kv, const char *method, const ProtobufCMessage *m,
    unsigned ms, void (*finish)(struct ucall *, int))
{
	struct ucall *c = xcalloc(1, sizeof *c);

	c->tag.fn = ucall_done;
	c->finish = finish;
	if ((c->next = kv->calls) != NULL)
		c->next->prev = c;
	kv->calls = c;
	call_begin(kv, c, kv->cur, kv->cq, method, m, ms);
	return c;
}

/* One call at endpoint ep, blocking the loop on a queue of its own. */
static int
call_sync(etcdkv *kv, int ep, const char *method, const ProtobufCMessage *m,
    const ProtobufCMessageDescriptor *d, ProtobufCMessage **out, char **cause)
{
	grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
	struct ucall c;
	grpc_event ev;
	int rc;

	memset(&c, 0, sizeof c);
	call_begin(kv, &c, ep, cq, method, m, kv->timeout_ms);
	do
		ev = grpc_completion_queue_next(cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	while (ev.type != GRPC_OP_COMPLETE);
	rc = call_answer(&c, ev.success, d, out, cause);
	call_clear(&c);
	grpc_completion_queue_shutdown(cq);
	while (grpc_completion_queue_next(cq, gpr_inf_future(
	    GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
		;
	grpc_completion_queue_destroy(cq);
	return rc;
}

/* ---- transactions ---- */

/* A TxnRequest of n ops, each guarded by its compare, in arrays of its
   own; the bytes stay the caller's. */
struct txn_msg {
	Etcdserverpb__TxnRequest txn;
	Etcdserverpb__Compare *cmp, **cmps;
	Etcdserverpb__RequestOp *op, **ops;
	Etcdserverpb__PutRequest *put;
	Etcdserverpb__DeleteRangeRequest *del;
};

static void
txn_op(struct txn_msg *t, size_t i, const struct etcdkv_op *o)
{
	Etcdserverpb__RequestOp *op = &t->op[i];

	etcdserverpb__request_op__init(op);
	if (o->del) {
		etcdserverpb__delete_range_request__init(&t->del[i]);
		t->del[i].key = bytes_of(o->key, o->klen);
		op->request_case =
		    ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_DELETE_RANGE;
		op->request_delete_range = &t->del[i];
	} else {
		etcdserverpb__put_request__init(&t->put[i]);
		t->put[i].key = bytes_of(o->key, o->klen);
		t->put[i].value = bytes_of(o->value, o->vlen);
		op->request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_PUT;
		op->request_put = &t->put[i];
	}
	t->ops[i] = op;
}

static void
txn_build(struct txn_msg *t, const struct etcdkv_op *ops, size_t n)
{
	Etcdserverpb__Compare *c;
	size_t i, nc = 0;

	etcdserverpb__txn_request__init(&t->txn);
	t->cmp = xcalloc(n + 1, sizeof *t->cmp);
	t->cmps = xcalloc(n + 1, sizeof *t->cmps);
	t->op = xcalloc(n + 1, sizeof *t->op);
	t->ops = xcalloc(n + 1, sizeof *t->ops);
	t->put = xcalloc(n + 1, sizeof *t->put);
	t->del = xcalloc(n + 1, sizeof *t->del);
	for (i = 0; i < n; i++) {
		if (ops[i].expect_mod >= 0) {
			c = &t->cmp[nc];
			etcdserverpb__compare__init(c);
			c->result = ETCDSERVERPB__COMPARE__COMPARE_RESULT__EQUAL;
			c->target = ETCDSERVERPB__COMPARE__COMPARE_TARGET__MOD;
			c->key = bytes_of(ops[i].key, ops[i].klen);
			c->target_union_case =
			    ETCDSERVERPB__COMPARE__TARGET_UNION_MOD_REVISION;
			c->mod_revision = ops[i].expect_mod;
			t->cmps[nc++] = c;
		}
		txn_op(t, i, &ops[i]);
	}
	t->txn.n_compare = nc;
	t->txn.compare = t->cmps;
	t->txn.n_success = n;
	t->txn.success = t->ops;
}

static void
txn_clear(struct txn_msg *t)
{
	free(t->cmp);
	free(t->cmps);
	free(t->op);
	free(t->ops);
	free(t->put);
	free(t->del);
}

/* The outcome of a transaction's answer; the endpoint is left when lost. */
static int
txn_outcome(etcdkv *kv, int ep, int ans, ProtobufCMessage *m, int64_t *rev)
{
	Etcdserverpb__TxnResponse *r = (Etcdserverpb__TxnResponse *)m;
	int out;

	*rev = 0;
	if (ans != ANS_OK) {
		if (ans == ANS_LOST)
			rotate(kv, ep);
		return ETCDKV_ERROR;
	}
	*rev = header_rev(r->header);
	out = r->succeeded ? ETCDKV_OK : ETCDKV_CONFLICT;
	protobuf_c_message_free_unpacked(m, NULL);
	return out;
}

static void
txn_finish(struct ucall *c, int ok)
{
	ProtobufCMessage *m;
	char *err;
	int64_t rev;
	int ans, out;

	ans = call_answer(c, ok, &etcdserverpb__txn_response__descriptor, &m,
	    &err);
	out = txn_outcome(c->kv, c->ep, ans, m, &rev);
	c->done.txn(c->arg, out, rev, err);
	free(err);
}

void
etcdkv_txn(etcdkv *kv, const struct etcdkv_op *ops, size_t n,
    etcdkv_txn_fn done, void *arg)
{
	struct txn_msg t;
	struct ucall *c;

	txn_build(&t, ops, n);
	c = ucall_start(kv, "/etcdserverpb.KV/Txn", &t.txn.base,
	    kv->timeout_ms, txn_finish);
	c->done.txn = done;
	c->arg = arg;
	txn_clear(&t);
}

int
etcdkv_txn_sync(etcdkv *kv, const struct etcdkv_op *ops, size_t n,
    int64_t *rev, char **cause)
{
	struct txn_msg t;
	ProtobufCMessage *m;
	int ep = kv->cur, ans;

	txn_build(&t, ops, n);
	ans = call_sync(kv, ep, "/etcdserverpb.KV/Txn", &t.txn.base,
	    &etcdserverpb__txn_response__descriptor, &m, cause);
	txn_clear(&t);
	return txn_outcome(kv, ep, ans, m, rev);
}

/* ---- ranges ---- */

static void
range_build(Etcdserverpb__RangeRequest *q, const struct etcdkv_range *r)
{
	etcdserverpb__range_request__init(q);
	q->key = bytes_of(r->key, r->klen);
	if (r->end != NULL)
		q->range_end = bytes_of(r->end, r->elen);
	q->revision = r->rev > 0 ? r->rev : 0;
	q->limit = r->limit > 0 ? r->limit : 0;
	q->min_mod_revision = r->min_mod_rev > 0 ? r->min_mod_rev : 0;
	q->count_only = r->count_only != 0;
	q->keys_only = r->keys_only != 0;
}

/* A range at the current endpoint, then at the others while the one
   tried cannot be reached. */
static int
range_call(etcdkv *kv, const Etcdserverpb__RangeRequest *q,
    Etcdserverpb__RangeResponse **out, char **cause)
{
	ProtobufCMessage *m = NULL;
	int tries = kv->n, ans = ANS_LOST, ep;

	*cause = NULL;
	while (tries-- > 0) {
		ep = kv->cur;
		free(*cause);
		ans = call_sync(kv, ep, "/etcdserverpb.KV/Range", &q->base,
		    &etcdserverpb__range_response__descriptor, &m, cause);
		if (ans != ANS_LOST)
			break;
		rotate(kv, ep);
	}
	*out = (Etcdserverpb__RangeResponse *)m;
	return ans;
}

int
etcdkv_range_sync(etcdkv *kv, const struct etcdkv_range *r,
    struct etcdkv_kv **kvs, size_t *n, int64_t *rev_out, int *more,
    char **cause)
{
	Etcdserverpb__RangeRequest q;
	Etcdserverpb__RangeResponse *a;
	size_t i;

	*kvs = NULL;
	*n = 0;
	*more = 0;
	range_build(&q, r);
	if (range_call(kv, &q, &a, cause) != ANS_OK) {
		if (strstr(*cause, "compacted") != NULL) {
			free(*cause);
			*cause = xstrdup("compacted");
		}
		return -1;
	}
	*rev_out = header_rev(a->header);
	*more = a->more;
	if (r->count_only)
		*n = (size_t)a->count;
	else {
		*kvs = xcalloc(a->n_kvs + 1, sizeof **kvs);
		for (i = 0; i < a->n_kvs; i++)
			kv_of(a->kvs[i], &(*kvs)[i], !r->keys_only);
		*n = a->n_kvs;
	}
	protobuf_c_message_free_unpacked(&a->base, NULL);
	return 0;
}

static void
range_finish(struct ucall *c, int ok)
{
	Etcdserverpb__RangeResponse *a;
	ProtobufCMessage *m;
	struct etcdkv_kv *kvs = NULL;
	size_t n = 0, i;
	char *err;
	int ans;

	ans = call_answer(c, ok, &etcdserverpb__range_response__descriptor, &m,
	    &err);
	if (ans != ANS_OK) {
		if (ans == ANS_LOST)
			rotate(c->kv, c->ep);
		if (err != NULL && strstr(err, "compacted") != NULL) {
			free(err);
			err = xstrdup("compacted");
		}
		c->done.range(c->arg, NULL, 0, -1, 0, err ? err : "failed");
		free(err);
		return;
	}
	a = (Etcdserverpb__RangeResponse *)m;
	if (c->count_only)
		n = (size_t)a->count;
	else {
		kvs = xcalloc(a->n_kvs + 1, sizeof *kvs);
		for (i = 0; i < a->n_kvs; i++)
			kv_of(a->kvs[i], &kvs[i], !c->keys_only);
		n = a->n_kvs;
	}
	c->done.range(c->arg, kvs, n, header_rev(a->header), a->more, NULL);
	protobuf_c_message_free_unpacked(m, NULL);
}

void
etcdkv_range(etcdkv *kv, const struct etcdkv_range *r, etcdkv_range_fn done,
    void *arg)
{
	Etcdserverpb__RangeRequest q;
	struct ucall *c;

	range_build(&q, r);
	c = ucall_start(kv, "/etcdserverpb.KV/Range", &q.base, kv->timeout_ms,
	    range_finish);
	c->done.range = done;
	c->arg = arg;
	c->count_only = r->count_only != 0;
	c->keys_only = r->keys_only != 0;
}

static void
rev_finish(struct ucall *c, int ok)
{
	ProtobufCMessage *m;
	char *err;

	if (call_answer(c, ok, &etcdserverpb__range_response__descriptor, &m,
	    &err) == ANS_OK) {
		c->done.rev(c->arg, header_rev(
		    ((Etcdserverpb__RangeResponse *)m)->header), NULL);
		protobuf_c_message_free_unpacked(m, NULL);
		return;
	}
	rotate(c->kv, c->ep);
	c->done.rev(c->arg, -1, err);
	free(err);
}

void
etcdkv_current_rev(etcdkv *kv, const char *probe_key, etcdkv_rev_fn done,
    void *arg)
{
	Etcdserverpb__RangeRequest q = ETCDSERVERPB__RANGE_REQUEST__INIT;
	struct ucall *c;

	q.key = bytes_of(probe_key, strlen(probe_key));
	q.count_only = 1;
	c = ucall_start(kv, "/etcdserverpb.KV/Range", &q.base, kv->timeout_ms,
	    rev_finish);
	c->done.rev = done;
	c->arg = arg;
}

/* ---- compaction ---- */

static void
compact_finish(struct ucall *c, int ok)
{
	ProtobufCMessage *m;
	char *err;

	if (call_answer(c, ok, &etcdserverpb__compaction_response__descriptor,
	    &m, &err) == ANS_OK) {
		protobuf_c_message_free_unpacked(m, NULL);
		return;
	}
	log_warn("etcd: compaction: %s", err);
	free(err);
}

void
etcdkv_compact(etcdkv *kv, int64_t rev)
{
	Etcdserverpb__CompactionRequest q = ETCDSERVERPB__COMPACTION_REQUEST__INIT;

	q.revision = rev;
	ucall_start(kv, "/etcdserverpb.KV/Compact", &q.base, 60000,
	    compact_finish);
}

/* ---- watches ---- */

struct etcdkv_watch {
	etcdkv *kv;		/* NULL once the client is freed */
	struct tag t_start, t_recv, t_status;
	int pending;		/* of those, with gRPC */
	grpc_call *call;
	int ep;
	grpc_metadata_array md_init, md_trail;
	grpc_byte_buffer *req, *msg;
	grpc_status_code status;
	grpc_slice details;
	char *key, *end;
	size_t klen, elen;
	int64_t next;		/* the revision to resume from */
	struct etcdkv_watch_cb cb;
	int ended;		/* no more callbacks */
	int stopped;		/* by etcdkv_watch_stop or etcdkv_free */
	int closed;		/* the timer too */
	int failures;		/* in a row, for the back-off */
	uv_timer_t retry;
	struct etcdkv_watch *prev, *next_w;
};

static void watch_connect(etcdkv_watch *);

static void
watch_unlink(etcdkv_watch *w)
{
	if (w->kv == NULL)
		return;
	if (w->prev != NULL)
		w->prev->next_w = w->next_w;
	else
		w->kv->watches = w->next_w;
	if (w->next_w != NULL)
		w->next_w->prev = w->prev;
	w->kv = NULL;
}

static void
watch_free(etcdkv_watch *w)
{
	watch_unlink(w);
	free(w->key);
	free(w->end);
	free(w);
}

static void
watch_closed(uv_handle_t *h)
{
	etcdkv_watch *w = h->data;

	w->closed = 1;
	if (w->pending == 0)
		watch_free(w);
}

static void
watch_end(etcdkv_watch *w, int64_t compacted, const char *err)
{
	if (w->ended)
		return;
	w->ended = 1;
	if (w->call != NULL)
		grpc_call_cancel(w->call, NULL);
	w->cb.on_end(w->cb.arg, compacted, err);
}

/* The events of one response, in order, each with its previous value. */
static void
watch_events(etcdkv_watch *w, const Etcdserverpb__WatchResponse *r)
{
	const Mvccpb__Event *ev;
	struct etcdkv_kv kv, prev;
	size_t i;

	for (i = 0; i < r->n_events && !w->ended; i++) {
		ev = r->events[i];
		if (ev->kv == NULL)
			continue;
		kv_of(ev->kv, &kv, ev->type != MVCCPB__EVENT__EVENT_TYPE__DELETE);
		if (ev->prev_kv != NULL)
			kv_of(ev->prev_kv, &prev, 1);
		w->cb.on_event(w->cb.arg, &kv, ev->prev_kv ? &prev : NULL);
		if (kv.mod_rev >= w->next)
			w->next = kv.mod_rev + 1;
		kv_clear(&kv);
		if (ev->prev_kv != NULL)
			kv_clear(&prev);
	}
}

/* One message of the stream. */
static void
watch_message(etcdkv_watch *w, const Etcdserverpb__WatchResponse *r)
{
	int64_t rev = header_rev(r->header);

	w->failures = 0;
	if (r->compact_revision > 0) {
		watch_end(w, r->compact_revision, NULL);
		return;
	}
	if (r->canceled) {
		watch_end(w, 0, r->cancel_reason != NULL &&
		    *r->cancel_reason != '\0' ? r->cancel_reason :
		    "watch canceled");
		return;
	}
	/* From "now": the events after the revision it was created at. */
	if (r->created && w->next == 0 && rev > 0)
		w->next = rev + 1;
	watch_events(w, r);
	if (w->ended || r->n_events > 0 || r->created || rev <= 0)
		return;
	if (rev >= w->next)
		w->next = rev + 1;
	w->cb.on_progress(w->cb.arg, rev);
}

static void
retry_fire(uv_timer_t *t)
{
	watch_connect(t->data);
}

/* The stream is over: every batch is back. Free what it held, then go
   on at the next endpoint unless the watch ended. */
static void
watch_settle(etcdkv_watch *w)
{
	char *why;
	unsigned delay;

	if (w->pending > 0 || w->call == NULL)
		return;
	why = call_error(w->status, w->details, "closed");
	grpc_byte_buffer_destroy(w->req);
	grpc_metadata_array_destroy(&w->md_init);
	grpc_metadata_array_destroy(&w->md_trail);
	grpc_slice_unref(w->details);
	grpc_call_unref(w->call);
	w->call = NULL;
	if (w->stopped) {
		if (w->closed)
			watch_free(w);
	} else if (!w->ended) {
		log_warn("etcd: watch at %s ended (%s); resuming from "
		    "revision %lld", w->kv->endpoints[w->ep], why,
		    (long long)w->next);
		rotate(w->kv, w->ep);
		delay = w->failures < 6 ? 50u << w->failures : 2000;
		w->failures++;
		uv_timer_start(&w->retry, retry_fire, delay, 0);
	}
	free(why);
}

static void
watch_started(struct tag *t, int ok)
{
	etcdkv_watch *w = CONTAINER(t, etcdkv_watch, t_start);

	w->pending--;
	watch_settle(w);
}

static void
watch_status(struct tag *t, int ok)
{
	etcdkv_watch *w = CONTAINER(t, etcdkv_watch, t_status);

	w->pending--;
	watch_settle(w);
}

static void
watch_recv(etcdkv_watch *w)
{
	grpc_op op;

	memset(&op, 0, sizeof op);
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &w->msg;
	if (grpc_call_start_batch(w->call, &op, 1, &w->t_recv, NULL) !=
	    GRPC_CALL_OK)
		fatal("etcd: watch: grpc_call_start_batch");
	w->pending++;
}

/* A message came (or the stream's end): handle it, wait for the next. */
static void
watch_received(struct tag *t, int ok)
{
	etcdkv_watch *w = CONTAINER(t, etcdkv_watch, t_recv);
	Etcdserverpb__WatchResponse *r;
	int more = ok && w->msg != NULL;

	w->pending--;
	if (more && !w->ended) {
		r = (Etcdserverpb__WatchResponse *)unpack(
		    &etcdserverpb__watch_response__descriptor, w->msg);
		if (r != NULL) {
			watch_message(w, r);
			protobuf_c_message_free_unpacked(&r->base, NULL);
		} else
			log_warn("etcd: watch: a message does not parse");
	}
	if (w->msg != NULL)
		grpc_byte_buffer_destroy(w->msg);
	w->msg = NULL;
	/* (etcdkv_free stops every watch before it hands back the rest.) */
	if (more && !w->ended)
		watch_recv(w);
	watch_settle(w);
}

static grpc_byte_buffer *
watch_request(const etcdkv_watch *w)
{
	Etcdserverpb__WatchRequest q = ETCDSERVERPB__WATCH_REQUEST__INIT;
	Etcdserverpb__WatchCreateRequest c =
	    ETCDSERVERPB__WATCH_CREATE_REQUEST__INIT;

	c.key = bytes_of(w->key, w->klen);
	c.range_end = bytes_of(w->end, w->elen);
	c.start_revision = w->next;
	c.prev_kv = 1;
	c.progress_notify = 1;
	q.request_union_case =
	    ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
	q.create_request = &c;
	return pack(&q.base);
}

/* Open the stream at the current endpoint: the create request, then
   the status and the first message awaited. */
static void
watch_connect(etcdkv_watch *w)
{
	grpc_op op[3];

	w->ep = w->kv->cur;
	grpc_metadata_array_init(&w->md_init);
	grpc_metadata_array_init(&w->md_trail);
	w->details = grpc_empty_slice();
	w->status = GRPC_STATUS_OK;
	w->req = watch_request(w);
	w->call = grpc_channel_create_call(channel(w->kv, w->ep), NULL,
	    GRPC_PROPAGATE_DEFAULTS, w->kv->cq,
	    grpc_slice_from_static_string("/etcdserverpb.Watch/Watch"), NULL,
	    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	memset(op, 0, sizeof op);
	op[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	op[1].op = GRPC_OP_SEND_MESSAGE;
	op[1].data.send_message.send_message = w->req;
	op[2].op = GRPC_OP_RECV_INITIAL_METADATA;
	op[2].data.recv_initial_metadata.recv_initial_metadata = &w->md_init;
	if (grpc_call_start_batch(w->call, op, 3, &w->t_start, NULL) !=
	    GRPC_CALL_OK)
		fatal("etcd: watch: grpc_call_start_batch");
	w->pending++;
	memset(op, 0, sizeof op);
	op[0].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	op[0].data.recv_status_on_client.trailing_metadata = &w->md_trail;
	op[0].data.recv_status_on_client.status = &w->status;
	op[0].data.recv_status_on_client.status_details = &w->details;
	if (grpc_call_start_batch(w->call, op, 1, &w->t_status, NULL) !=
	    GRPC_CALL_OK)
		fatal("etcd: watch: grpc_call_start_batch");
	w->pending++;
	watch_recv(w);
}

etcdkv_watch *
etcdkv_watch_start(etcdkv *kv, const char *key, size_t klen, const char *end,
    size_t elen, int64_t start_rev, const struct etcdkv_watch_cb *cb)
{
	etcdkv_watch *w = xcalloc(1, sizeof *w);

	w->kv = kv;
	w->t_start.fn = watch_started;
	w->t_recv.fn = watch_received;
	w->t_status.fn = watch_status;
	w->key = xmalloc(klen + 1);
	memcpy(w->key, key, klen);
	w->klen = klen;
	w->end = xmalloc(elen + 1);
	if (elen > 0)
		memcpy(w->end, end, elen);
	w->elen = elen;
	w->next = start_rev;
	w->cb = *cb;
	uv_timer_init(kv->loop, &w->retry);
	w->retry.data = w;
	if ((w->next_w = kv->watches) != NULL)
		w->next_w->prev = w;
	kv->watches = w;
	watch_connect(w);
	return w;
}

/* No more callbacks; freed once gRPC has given back every batch. */
void
etcdkv_watch_stop(etcdkv_watch *w)
{
	if (w == NULL || w->stopped)
		return;
	w->stopped = w->ended = 1;
	if (w->call != NULL)
		grpc_call_cancel(w->call, NULL);
	uv_timer_stop(&w->retry);
	uv_close((uv_handle_t *)&w->retry, watch_closed);
}

/* ---- the end ---- */

static void
kv_closed(uv_handle_t *h)
{
	etcdkv *kv = h->data;

	pthread_mutex_destroy(&kv->mu);
	free(kv);
}

static void
kv_teardown(etcdkv *kv)
{
	grpc_completion_queue_destroy(kv->cq);
	endpoints_free(kv);
	grpc_shutdown();
	uv_close((uv_handle_t *)&kv->async, kv_closed);
}

/*
 * Cancel every call and stream, let the thread hand back every batch
 * until the queue is shut down, then free them without a callback: the
 * calls under way are dropped, the watches still running are stopped.
 */
void
etcdkv_free(etcdkv *kv)
{
	struct ucall *c;
	etcdkv_watch *w, *wn;
	struct tag *t;

	if (kv == NULL)
		return;
	kv->closing = 1;
	for (c = kv->calls; c != NULL; c = c->next)
		grpc_call_cancel(c->call, NULL);
	for (w = kv->watches; w != NULL; w = wn) {
		wn = w->next_w;
		etcdkv_watch_stop(w);
		watch_unlink(w);
	}
	grpc_completion_queue_shutdown(kv->cq);
	pthread_join(kv->thread, NULL);
	while ((t = done_pop(kv)) != NULL)
		t->fn(t, 0);
	if (kv->dispatching)
		kv->torn = 1;
	else
		kv_teardown(kv);
}
