/*
 * etcdwire: the two ways a C program can talk to etcd v3, side by side.
 *
 *   grpc  gRPC C core: one channel (one HTTP/2 connection) to etcd, one
 *         completion queue, each request one call carrying a
 *         protobuf-c-packed message ("/etcdserverpb.KV/Txn"); the watch is
 *         a "/etcdserverpb.Watch/Watch" stream.
 *   json  etcd's HTTP/1.1 JSON gateway (grpc-gateway): POST /v3/kv/txn
 *         with base64 keys and values through libcurl multi, one kept-alive
 *         connection per concurrent client, the answer parsed with cJSON
 *         (volrayd's JSON library); the watch is a POST /v3/watch whose
 *         answer streams one JSON object per line.
 *
 * Modes:
 *   txn    N create-if-absent transactions (compare create_revision == 0,
 *          then put) of a SIZE-byte value under
 *          /registry/configmaps/default/PREFIX-NNNNNNNN, C in flight
 *          (closed loop). Throughput, latency p50/p99 and the CPU time
 *          (getrusage, every thread of the process) per 10,000 txns.
 *   watch  one watch on PREFIX-; a forked writer (its own process, its
 *          own transport, -W) creates U keys there with C in flight while
 *          this process receives the events ("live": limited by the
 *          writer); then a second watch replays the same U events from
 *          the first one's revision ("replay": as fast as etcd and the
 *          transport deliver). Events/s and the receiving process's CPU
 *          time per 10,000 events for each.
 *
 * With -P PID (etcd's), the server's CPU time per 10,000 txns (replayed
 * events) too: the gateway runs inside etcd and costs it CPU as well.
 *
 * Both transports send the same key and value bytes and do the same work
 * per answer: decode it and check it (succeeded, created, each event's key
 * and value, base64-decoded for json). Each run first does one untimed
 * request per client, so connections are open before the clock starts.
 *
 * Build: bench/etcdwire.sh does it (protoc-c on core/store/etcdpb/*.proto,
 * then cc ... $(pkg-config --cflags --libs grpc libprotobuf-c libcurl
 * libcjson)).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "rpc.pb-c.h"

#define KEY_PREFIX	"/registry/configmaps/default/"
#define HIST_SUB	128
#define HIST_BITS	7
#define HIST_N		((64 - HIST_BITS + 1) * HIST_SUB)

enum transport { T_GRPC, T_JSON };

struct hist {
	uint64_t	 count;
	uint64_t	 max;
	uint32_t	 b[HIST_N];
};

static struct {
	enum transport	 t;		/* this process's transport */
	enum transport	 wt;		/* watch mode: the writer's */
	char		 endpoint[256];	/* host:port */
	char		 base[300];	/* http://host:port */
	uint64_t	 n;		/* txns (txn mode), updates (watch) */
	int		 c;		/* requests in flight */
	size_t		 size;
	char		 prefix[128];
	int		 timeout;	/* whole run, seconds */
	int		 idle;		/* watch: give up after this much quiet */
	pid_t		 server;	/* -P: etcd's pid, for its CPU time */

	uint64_t	 next;		/* next txn index */
	uint64_t	 total;		/* txns in this phase */
	uint64_t	 done;
	uint64_t	 failed;	/* transport error, non-2xx, not succeeded */
	int		 timing;	/* record latencies */
	struct hist	 lat;
	uint64_t	 start;

	char		*pad;
	char		*value;		/* scratch: the value of one txn */
	unsigned char	*dec;		/* scratch: base64-decoded bytes */

	/* watch */
	uint64_t	 events;
	uint64_t	 t_first, t_last;
	int64_t		 first_rev;
	int		 created;
	int		 watch_failed;
} g;

static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

/* User + system CPU seconds of this process, all its threads. */
static double
cpu_seconds(void)
{
	struct rusage	ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	    ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/*
 * User + system CPU seconds of the server (-P), from /proc/PID/stat (in
 * clock ticks, 10 ms); 0 without -P.
 */
static double
server_cpu(void)
{
	char			 path[64], buf[1024], *p;
	unsigned long long	 ut, st;
	FILE			*f;
	size_t			 n;

	if (g.server <= 0)
		return (0);
	snprintf(path, sizeof path, "/proc/%d/stat", (int)g.server);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Fields 14 and 15, counted from the state after "(comm)". */
	if ((p = strrchr(buf, ')')) == NULL || sscanf(p + 2,
	    "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu",
	    &ut, &st) != 2)
		return (0);
	return ((double)(ut + st) / sysconf(_SC_CLK_TCK));
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "etcdwire: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n)) == NULL)
		die("out of memory");
	return (p);
}

static void
check_deadline(void)
{
	if (now_ns() - g.start > (uint64_t)g.timeout * 1000000000ULL)
		die("run took longer than --timeout=%d s; giving up", g.timeout);
}

/* loadgen's log-linear histogram: exact below 256, then 128 per octave. */
static unsigned
hist_index(uint64_t v)
{
	int	b, s;

	if (v < 2 * HIST_SUB)
		return (v);
	b = 63 - __builtin_clzll(v);
	s = b - HIST_BITS;
	return (s * HIST_SUB + (v >> s));
}

static uint64_t
hist_value(unsigned idx)
{
	unsigned	s, m;

	if (idx < 2 * HIST_SUB)
		return (idx);
	s = idx / HIST_SUB - 1;
	m = idx - s * HIST_SUB;
	return (((uint64_t)m << s) + ((1ULL << s) >> 1));
}

static void
hist_add(struct hist *h, uint64_t v)
{
	h->b[hist_index(v)]++;
	h->count++;
	if (v > h->max)
		h->max = v;
}

static double
hist_ms(const struct hist *h, double q)
{
	uint64_t	want, seen = 0, v;
	unsigned	i;

	if (h->count == 0)
		return (0);
	want = (uint64_t)(q * h->count);
	if (want >= h->count)
		want = h->count - 1;
	for (i = 0; i < HIST_N; i++) {
		seen += h->b[i];
		if (seen > want) {
			v = hist_value(i);
			return ((v > h->max ? h->max : v) / 1e6);
		}
	}
	return (h->max / 1e6);
}

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t
b64_encode(char *dst, const unsigned char *src, size_t n)
{
	char	*d = dst;
	size_t	 i;

	for (i = 0; i + 2 < n; i += 3) {
		*d++ = b64chars[src[i] >> 2];
		*d++ = b64chars[((src[i] & 3) << 4) | (src[i + 1] >> 4)];
		*d++ = b64chars[((src[i + 1] & 15) << 2) | (src[i + 2] >> 6)];
		*d++ = b64chars[src[i + 2] & 63];
	}
	if (i < n) {
		*d++ = b64chars[src[i] >> 2];
		if (i + 1 < n) {
			*d++ = b64chars[((src[i] & 3) << 4) | (src[i + 1] >> 4)];
			*d++ = b64chars[(src[i + 1] & 15) << 2];
		} else {
			*d++ = b64chars[(src[i] & 3) << 4];
			*d++ = '=';
		}
		*d++ = '=';
	}
	*d = '\0';
	return (d - dst);
}

static int
b64_val(int ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return (ch - 'A');
	if (ch >= 'a' && ch <= 'z')
		return (ch - 'a' + 26);
	if (ch >= '0' && ch <= '9')
		return (ch - '0' + 52);
	if (ch == '+')
		return (62);
	if (ch == '/')
		return (63);
	return (-1);
}

/* Decode base64 (with padding); returns the byte count, -1 if malformed. */
static long
b64_decode(unsigned char *dst, const char *src, size_t n)
{
	size_t	i, o = 0;
	int	a, b, c, d;

	if (n % 4 != 0)
		return (-1);
	for (i = 0; i < n; i += 4) {
		a = b64_val(src[i]);
		b = b64_val(src[i + 1]);
		c = b64_val(src[i + 2]);
		d = b64_val(src[i + 3]);
		if (a < 0 || b < 0)
			return (-1);
		dst[o++] = (a << 2) | (b >> 4);
		if (c < 0)
			break;
		dst[o++] = (b << 4) | (c >> 2);
		if (d < 0)
			break;
		dst[o++] = (c << 6) | d;
	}
	return (o);
}

/* The key of txn i: /registry/configmaps/default/PREFIX-NNNNNNNN. */
static size_t
key_of(char *buf, size_t len, const char *tag, uint64_t i)
{
	return (snprintf(buf, len, "%s%s%s-%08llu", KEY_PREFIX, g.prefix, tag,
	    (unsigned long long)i));
}

/*
 * The value for a key: a ConfigMap in JSON, padded to exactly g.size bytes
 * (as loadgen's), the same bytes for both transports.
 */
static size_t
value_of(char *buf, const char *key)
{
	const char	*name = key + sizeof KEY_PREFIX - 1;
	size_t		 n, padlen;

	n = sprintf(buf, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
	    "\"data\":{\"pad\":\"", name);
	padlen = g.size > n + 3 ? g.size - n - 3 : 1;
	memcpy(buf + n, g.pad, padlen);
	n += padlen;
	memcpy(buf + n, "\"}}", 3);
	n += 3;
	buf[n] = '\0';
	return (n);
}

/*
 * Bookkeeping shared by both transports: the next txn to send (-1 when the
 * phase has none left) and the end of one.
 */
static int64_t
txn_take(void)
{
	if (g.next >= g.total)
		return (-1);
	return ((int64_t)g.next++);
}

static void
txn_done(uint64_t t_send, int ok)
{
	if (g.timing)
		hist_add(&g.lat, now_ns() - t_send);
	if (!ok)
		g.failed++;
	g.done++;
}

/* ------------------------------------------------------------------ */
/* gRPC                                                                */

static grpc_channel		*gch;
static grpc_completion_queue	*gcq;

struct gcall {
	grpc_call		*call;
	grpc_metadata_array	 md_init;
	grpc_metadata_array	 md_trail;
	grpc_byte_buffer	*req;
	grpc_byte_buffer	*resp;
	grpc_status_code	 status;
	grpc_slice		 details;
	uint64_t		 t_send;
};

static void
grpc_open(void)
{
	grpc_channel_credentials	*creds;

	grpc_init();
	creds = grpc_insecure_credentials_create();
	gch = grpc_channel_create(g.endpoint, creds, NULL);
	grpc_channel_credentials_release(creds);
	if (gch == NULL)
		die("grpc_channel_create %s failed", g.endpoint);
	gcq = grpc_completion_queue_create_for_next(NULL);
}

static grpc_call *
grpc_call_new(const char *method)
{
	grpc_call	*call;

	call = grpc_channel_create_call(gch, NULL, GRPC_PROPAGATE_DEFAULTS,
	    gcq, grpc_slice_from_static_string(method), NULL,
	    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
	if (call == NULL)
		die("grpc_channel_create_call %s failed", method);
	return (call);
}

/* Pack a protobuf-c message into a byte buffer for SEND_MESSAGE. */
static grpc_byte_buffer *
grpc_pack(const ProtobufCMessage *m)
{
	grpc_byte_buffer	*bb;
	grpc_slice		 s;

	s = grpc_slice_malloc(protobuf_c_message_get_packed_size(m));
	protobuf_c_message_pack(m, GRPC_SLICE_START_PTR(s));
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	return (bb);
}

/* Unpack a received byte buffer; NULL if it does not parse. */
static ProtobufCMessage *
grpc_unpack(const ProtobufCMessageDescriptor *d, grpc_byte_buffer *bb)
{
	grpc_byte_buffer_reader	 r;
	ProtobufCMessage	*m;
	grpc_slice		 s;

	if (bb == NULL || !grpc_byte_buffer_reader_init(&r, bb))
		return (NULL);
	s = grpc_byte_buffer_reader_readall(&r);
	grpc_byte_buffer_reader_destroy(&r);
	m = protobuf_c_message_unpack(d, NULL, GRPC_SLICE_LENGTH(s),
	    GRPC_SLICE_START_PTR(s));
	grpc_slice_unref(s);
	return (m);
}

/* Send txn i on gc: one unary call, all six ops in one batch. */
static void
gtxn_start(struct gcall *gc, uint64_t i, const char *tag)
{
	Etcdserverpb__Compare	 cmp = ETCDSERVERPB__COMPARE__INIT;
	Etcdserverpb__PutRequest put = ETCDSERVERPB__PUT_REQUEST__INIT;
	Etcdserverpb__RequestOp	 op = ETCDSERVERPB__REQUEST_OP__INIT;
	Etcdserverpb__TxnRequest txn = ETCDSERVERPB__TXN_REQUEST__INIT;
	Etcdserverpb__Compare	*cmps[1] = { &cmp };
	Etcdserverpb__RequestOp	*ops[1] = { &op };
	grpc_op			 gop[6];
	char			 key[256];
	size_t			 klen, vlen;

	klen = key_of(key, sizeof key, tag, i);
	vlen = value_of(g.value, key);
	cmp.result = ETCDSERVERPB__COMPARE__COMPARE_RESULT__EQUAL;
	cmp.target = ETCDSERVERPB__COMPARE__COMPARE_TARGET__CREATE;
	cmp.key.data = (uint8_t *)key;
	cmp.key.len = klen;
	cmp.target_union_case = ETCDSERVERPB__COMPARE__TARGET_UNION_CREATE_REVISION;
	cmp.create_revision = 0;
	put.key = cmp.key;
	put.value.data = (uint8_t *)g.value;
	put.value.len = vlen;
	op.request_case = ETCDSERVERPB__REQUEST_OP__REQUEST_REQUEST_PUT;
	op.request_put = &put;
	txn.n_compare = 1;
	txn.compare = cmps;
	txn.n_success = 1;
	txn.success = ops;

	memset(gc, 0, sizeof *gc);
	gc->t_send = now_ns();
	gc->req = grpc_pack(&txn.base);
	grpc_metadata_array_init(&gc->md_init);
	grpc_metadata_array_init(&gc->md_trail);
	gc->call = grpc_call_new("/etcdserverpb.KV/Txn");
	memset(gop, 0, sizeof gop);
	gop[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	gop[1].op = GRPC_OP_SEND_MESSAGE;
	gop[1].data.send_message.send_message = gc->req;
	gop[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
	gop[3].op = GRPC_OP_RECV_INITIAL_METADATA;
	gop[3].data.recv_initial_metadata.recv_initial_metadata = &gc->md_init;
	gop[4].op = GRPC_OP_RECV_MESSAGE;
	gop[4].data.recv_message.recv_message = &gc->resp;
	gop[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	gop[5].data.recv_status_on_client.trailing_metadata = &gc->md_trail;
	gop[5].data.recv_status_on_client.status = &gc->status;
	gop[5].data.recv_status_on_client.status_details = &gc->details;
	if (grpc_call_start_batch(gc->call, gop, 6, gc, NULL) != GRPC_CALL_OK)
		die("grpc_call_start_batch failed");
}

/* The batch of gc completed: decode the answer, free the call. */
static void
gtxn_finish(struct gcall *gc, int success)
{
	Etcdserverpb__TxnResponse	*resp;
	int				 ok = 0;

	if (success && gc->status == GRPC_STATUS_OK) {
		resp = (Etcdserverpb__TxnResponse *)grpc_unpack(
		    &etcdserverpb__txn_response__descriptor, gc->resp);
		ok = resp != NULL && resp->succeeded && resp->header != NULL &&
		    resp->header->revision > 0;
		if (resp != NULL)
			protobuf_c_message_free_unpacked(&resp->base, NULL);
	} else if (g.failed == 0) {
		char	*d = grpc_slice_to_c_string(gc->details);

		fprintf(stderr, "etcdwire: grpc txn: status %d %s\n",
		    gc->status, d);
		gpr_free(d);
	}
	txn_done(gc->t_send, ok);
	grpc_byte_buffer_destroy(gc->req);
	if (gc->resp != NULL)
		grpc_byte_buffer_destroy(gc->resp);
	grpc_metadata_array_destroy(&gc->md_init);
	grpc_metadata_array_destroy(&gc->md_trail);
	grpc_slice_unref(gc->details);
	grpc_call_unref(gc->call);
}

static void
grpc_run_txns(const char *tag)
{
	struct gcall	*gc;
	grpc_event	 ev;
	int64_t		 i;
	int		 k, inflight = 0;

	gc = xmalloc(g.c * sizeof *gc);
	for (k = 0; k < g.c && (i = txn_take()) >= 0; k++, inflight++)
		gtxn_start(&gc[k], i, tag);
	while (inflight > 0) {
		ev = grpc_completion_queue_next(gcq,
		    gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
		    gpr_time_from_millis(1000, GPR_TIMESPAN)), NULL);
		check_deadline();
		if (ev.type == GRPC_QUEUE_TIMEOUT)
			continue;
		if (ev.type != GRPC_OP_COMPLETE)
			die("completion queue: unexpected event %d", ev.type);
		gtxn_finish(ev.tag, ev.success);
		inflight--;
		if ((i = txn_take()) >= 0) {
			gtxn_start(ev.tag, i, tag);
			inflight++;
		}
	}
	free(gc);
}

/* A Watch stream: tags 1 (start), 2 (a message), 3 (the final status). */
static struct {
	grpc_call		*call;
	grpc_metadata_array	 md_init;
	grpc_metadata_array	 md_trail;
	grpc_byte_buffer	*req;
	grpc_byte_buffer	*msg;
	grpc_status_code	 status;
	grpc_slice		 details;
	int			 pending;	/* batches outstanding */
} gw;

static void
gwatch_recv(void)
{
	grpc_op	op;

	memset(&op, 0, sizeof op);
	op.op = GRPC_OP_RECV_MESSAGE;
	op.data.recv_message.recv_message = &gw.msg;
	if (grpc_call_start_batch(gw.call, &op, 1, (void *)2, NULL) !=
	    GRPC_CALL_OK)
		die("grpc_call_start_batch (watch) failed");
	gw.pending++;
}

static void
gwatch_open(const char *key, size_t klen, const char *end, size_t elen,
    int64_t rev)
{
	Etcdserverpb__WatchRequest	 wr = ETCDSERVERPB__WATCH_REQUEST__INIT;
	Etcdserverpb__WatchCreateRequest cr =
	    ETCDSERVERPB__WATCH_CREATE_REQUEST__INIT;
	grpc_op				 op[3];

	cr.key.data = (uint8_t *)key;
	cr.key.len = klen;
	cr.range_end.data = (uint8_t *)end;
	cr.range_end.len = elen;
	cr.start_revision = rev;
	wr.request_union_case =
	    ETCDSERVERPB__WATCH_REQUEST__REQUEST_UNION_CREATE_REQUEST;
	wr.create_request = &cr;

	memset(&gw, 0, sizeof gw);
	grpc_metadata_array_init(&gw.md_init);
	grpc_metadata_array_init(&gw.md_trail);
	gw.req = grpc_pack(&wr.base);
	gw.call = grpc_call_new("/etcdserverpb.Watch/Watch");
	memset(op, 0, sizeof op);
	op[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	op[1].op = GRPC_OP_SEND_MESSAGE;
	op[1].data.send_message.send_message = gw.req;
	op[2].op = GRPC_OP_RECV_INITIAL_METADATA;
	op[2].data.recv_initial_metadata.recv_initial_metadata = &gw.md_init;
	if (grpc_call_start_batch(gw.call, op, 3, (void *)1, NULL) !=
	    GRPC_CALL_OK)
		die("grpc_call_start_batch (watch) failed");
	gw.pending++;
	gwatch_recv();
}

/* One WatchResponse: created, or events (each key and value looked at). */
static void
gwatch_message(void)
{
	Etcdserverpb__WatchResponse	*wr;
	size_t				 i;

	wr = (Etcdserverpb__WatchResponse *)grpc_unpack(
	    &etcdserverpb__watch_response__descriptor, gw.msg);
	grpc_byte_buffer_destroy(gw.msg);
	gw.msg = NULL;
	if (wr == NULL) {
		g.watch_failed = 1;
		return;
	}
	if (wr->created)
		g.created = 1;
	if (wr->canceled)
		g.watch_failed = 1;
	for (i = 0; i < wr->n_events; i++) {
		Mvccpb__KeyValue	*kv = wr->events[i]->kv;

		if (kv == NULL || kv->key.len == 0 || kv->value.len != g.size ||
		    kv->value.data[0] != '{') {
			g.watch_failed = 1;
			continue;
		}
		if (g.events++ == 0) {
			g.t_first = now_ns();
			g.first_rev = kv->mod_revision;
		}
		g.t_last = now_ns();
	}
	protobuf_c_message_free_unpacked(&wr->base, NULL);
}

/* Wait up to ms for the watch stream; handle what arrives. */
static void
gwatch_poll(int ms)
{
	grpc_event	ev;

	ev = grpc_completion_queue_next(gcq,
	    gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	    gpr_time_from_millis(ms, GPR_TIMESPAN)), NULL);
	if (ev.type == GRPC_QUEUE_TIMEOUT)
		return;
	if (ev.type != GRPC_OP_COMPLETE)
		die("completion queue: unexpected event %d", ev.type);
	gw.pending--;
	if ((intptr_t)ev.tag == 1) {
		if (!ev.success)
			g.watch_failed = 1;
		return;
	}
	if ((intptr_t)ev.tag == 3)
		return;
	if (!ev.success || gw.msg == NULL) {
		g.watch_failed = 1;	/* the stream ended */
		return;
	}
	gwatch_message();
	if (!g.watch_failed)
		gwatch_recv();
}

/* Cancel the stream and wait for its outstanding batches. */
static void
gwatch_close(void)
{
	grpc_op	op;

	grpc_call_cancel(gw.call, NULL);
	memset(&op, 0, sizeof op);
	op.op = GRPC_OP_RECV_STATUS_ON_CLIENT;
	op.data.recv_status_on_client.trailing_metadata = &gw.md_trail;
	op.data.recv_status_on_client.status = &gw.status;
	op.data.recv_status_on_client.status_details = &gw.details;
	if (grpc_call_start_batch(gw.call, &op, 1, (void *)3, NULL) ==
	    GRPC_CALL_OK)
		gw.pending++;
	while (gw.pending > 0) {
		grpc_event ev = grpc_completion_queue_next(gcq,
		    gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);

		if (ev.type == GRPC_OP_COMPLETE)
			gw.pending--;
	}
	if (gw.msg != NULL)
		grpc_byte_buffer_destroy(gw.msg);
	grpc_byte_buffer_destroy(gw.req);
	grpc_metadata_array_destroy(&gw.md_init);
	grpc_metadata_array_destroy(&gw.md_trail);
	grpc_slice_unref(gw.details);
	grpc_call_unref(gw.call);
}

/* ------------------------------------------------------------------ */
/* JSON gateway over libcurl                                           */

static CURLM		*cm;
static struct curl_slist *json_hdrs;

struct hreq {
	CURL		*easy;
	char		*body;		/* request body */
	char		*resp;		/* answer body (txn) or line (watch) */
	size_t		 resp_len;
	size_t		 resp_cap;
	uint64_t	 t_send;
	int		 watch;
};

static void
resp_append(struct hreq *h, const char *p, size_t n)
{
	if (h->resp_len + n + 1 > h->resp_cap) {
		h->resp_cap = (h->resp_len + n + 1) * 2;
		if ((h->resp = realloc(h->resp, h->resp_cap)) == NULL)
			die("out of memory");
	}
	memcpy(h->resp + h->resp_len, p, n);
	h->resp_len += n;
	h->resp[h->resp_len] = '\0';
}

static size_t
json_write(char *p, size_t size, size_t n, void *arg)
{
	resp_append(arg, p, size * n);
	return (size * n);
}

static void
json_open(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((cm = curl_multi_init()) == NULL)
		die("curl_multi_init failed");
	/* Keep one connection per client (and the watch's) open. */
	curl_multi_setopt(cm, CURLMOPT_MAXCONNECTS, (long)g.c + 2);
	json_hdrs = curl_slist_append(NULL, "Content-Type: application/json");
	/* No "Expect: 100-continue" round trip for bodies over 1 KiB. */
	json_hdrs = curl_slist_append(json_hdrs, "Expect:");
}

static struct hreq *
hreq_new(const char *path, curl_write_callback write)
{
	struct hreq	*h;
	char		 url[512];

	if ((h = calloc(1, sizeof *h)) == NULL)
		die("out of memory");
	h->body = xmalloc(4 * g.size + 1024);
	if ((h->easy = curl_easy_init()) == NULL)
		die("curl_easy_init failed");
	snprintf(url, sizeof url, "%s%s", g.base, path);
	curl_easy_setopt(h->easy, CURLOPT_URL, url);
	curl_easy_setopt(h->easy, CURLOPT_HTTPHEADER, json_hdrs);
	curl_easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, write);
	curl_easy_setopt(h->easy, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->easy, CURLOPT_PRIVATE, h);
	curl_easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->easy, CURLOPT_TCP_NODELAY, 1L);
	return (h);
}

static void
hreq_send(struct hreq *h, size_t blen)
{
	h->resp_len = 0;
	h->t_send = now_ns();
	curl_easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE, (long)blen);
	curl_easy_setopt(h->easy, CURLOPT_POSTFIELDS, h->body);
	if (curl_multi_add_handle(cm, h->easy) != CURLM_OK)
		die("curl_multi_add_handle failed");
}

/* Send txn i on h: the same compare and put as gtxn_start, in JSON. */
static void
jtxn_start(struct hreq *h, uint64_t i, const char *tag)
{
	char	 key[256], kb64[400], *b = h->body;
	size_t	 klen, vlen, n;

	klen = key_of(key, sizeof key, tag, i);
	vlen = value_of(g.value, key);
	b64_encode(kb64, (unsigned char *)key, klen);
	n = sprintf(b, "{\"compare\":[{\"result\":\"EQUAL\",\"target\":"
	    "\"CREATE\",\"key\":\"%s\",\"create_revision\":\"0\"}],"
	    "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"",
	    kb64, kb64);
	n += b64_encode(b + n, (unsigned char *)g.value, vlen);
	memcpy(b + n, "\"}}]}", 6);
	n += 5;
	hreq_send(h, n);
}

/* The gateway's answer: {"header":{...,"revision":"N"},"succeeded":true,...}. */
static int
jtxn_check(struct hreq *h)
{
	cJSON	*root, *hdr, *rev;
	int	 ok;

	if ((root = cJSON_ParseWithLength(h->resp, h->resp_len)) == NULL)
		return (0);
	hdr = cJSON_GetObjectItemCaseSensitive(root, "header");
	rev = cJSON_GetObjectItemCaseSensitive(hdr, "revision");
	ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "succeeded")) &&
	    cJSON_IsString(rev) && atoll(rev->valuestring) > 0;
	cJSON_Delete(root);
	return (ok);
}

/*
 * Wait until libcurl has something to do (at most ms), let it, and hand
 * finished transfers to done() (which may start the next one).
 */
static void
json_pump(int ms, void (*done)(struct hreq *, CURLcode, long))
{
	CURLMsg		*msg;
	struct hreq	*h;
	long		 code;
	int		 running, left;

	curl_multi_poll(cm, NULL, 0, ms, NULL);
	curl_multi_perform(cm, &running);
	while ((msg = curl_multi_info_read(cm, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
		    (char **)&h);
		code = 0;
		curl_easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &code);
		curl_multi_remove_handle(cm, h->easy);
		done(h, msg->data.result, code);
	}
}

static const char *jtxn_tag;

static void
jtxn_done(struct hreq *h, CURLcode rc, long code)
{
	int64_t	i;
	int	ok;

	ok = rc == CURLE_OK && code == 200 && jtxn_check(h);
	if (!ok && g.failed == 0)
		fprintf(stderr, "etcdwire: json txn: %s, HTTP %ld: %.200s\n",
		    curl_easy_strerror(rc), code, h->resp ? h->resp : "");
	txn_done(h->t_send, ok);
	if ((i = txn_take()) >= 0)
		jtxn_start(h, i, jtxn_tag);
}

static struct hreq	**jclients;

static void
json_run_txns(const char *tag)
{
	int64_t	i;
	int	k;

	if (jclients == NULL) {
		jclients = xmalloc(g.c * sizeof *jclients);
		for (k = 0; k < g.c; k++)
			jclients[k] = hreq_new("/v3/kv/txn", json_write);
	}
	jtxn_tag = tag;
	for (k = 0; k < g.c && (i = txn_take()) >= 0; k++)
		jtxn_start(jclients[k], i, tag);
	while (g.done < g.total) {
		json_pump(1000, jtxn_done);
		check_deadline();
	}
}

/*
 * One line of the gateway's watch stream: {"result":{"header":...,
 * "created":true}} first, then {"result":{"header":...,"events":[{"kv":
 * {"key":"...","create_revision":"..","mod_revision":"..","version":"1",
 * "value":"..."}},...]}}, keys and values in base64.
 */
static void
jwatch_line(const char *p, size_t n)
{
	cJSON	*root, *res, *evs, *ev, *kv, *k, *v, *rev;
	long	 kl, vl;

	if ((root = cJSON_ParseWithLength(p, n)) == NULL) {
		g.watch_failed = 1;
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(root, "result");
	if (res == NULL) {
		g.watch_failed = 1;	/* {"error":...} */
		cJSON_Delete(root);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "created")))
		g.created = 1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(res, "canceled")))
		g.watch_failed = 1;
	evs = cJSON_GetObjectItemCaseSensitive(res, "events");
	cJSON_ArrayForEach(ev, evs) {
		kv = cJSON_GetObjectItemCaseSensitive(ev, "kv");
		k = cJSON_GetObjectItemCaseSensitive(kv, "key");
		v = cJSON_GetObjectItemCaseSensitive(kv, "value");
		rev = cJSON_GetObjectItemCaseSensitive(kv, "mod_revision");
		if (!cJSON_IsString(k) || !cJSON_IsString(v) ||
		    !cJSON_IsString(rev)) {
			g.watch_failed = 1;
			continue;
		}
		kl = b64_decode(g.dec, k->valuestring, strlen(k->valuestring));
		vl = b64_decode(g.dec, v->valuestring, strlen(v->valuestring));
		if (kl <= 0 || vl != (long)g.size || g.dec[0] != '{') {
			g.watch_failed = 1;
			continue;
		}
		if (g.events++ == 0) {
			g.t_first = now_ns();
			g.first_rev = atoll(rev->valuestring);
		}
		g.t_last = now_ns();
	}
	cJSON_Delete(root);
}

/* Watch data as it arrives: split into lines, keeping a partial tail. */
static size_t
jwatch_write(char *p, size_t size, size_t n, void *arg)
{
	struct hreq	*h = arg;
	size_t		 len = size * n, off = 0;
	char		*nl;

	while (off < len) {
		nl = memchr(p + off, '\n', len - off);
		if (nl == NULL) {
			resp_append(h, p + off, len - off);
			break;
		}
		if (h->resp_len > 0) {
			resp_append(h, p + off, nl - (p + off));
			jwatch_line(h->resp, h->resp_len);
			h->resp_len = 0;
		} else if (nl > p + off)
			jwatch_line(p + off, nl - (p + off));
		off = nl - p + 1;
	}
	return (len);
}

static struct hreq	*jw;

static void
jwatch_done(struct hreq *h, CURLcode rc, long code)
{
	(void)h;
	fprintf(stderr, "etcdwire: json watch ended: %s, HTTP %ld\n",
	    curl_easy_strerror(rc), code);
	g.watch_failed = 1;
}

static void
jwatch_open(const char *key, size_t klen, const char *end, size_t elen,
    int64_t rev)
{
	char	kb64[400], eb64[400];
	size_t	n;

	if (jw == NULL)
		jw = hreq_new("/v3/watch", jwatch_write);
	b64_encode(kb64, (unsigned char *)key, klen);
	b64_encode(eb64, (unsigned char *)end, elen);
	n = sprintf(jw->body, "{\"create_request\":{\"key\":\"%s\","
	    "\"range_end\":\"%s\",\"start_revision\":\"%lld\"}}", kb64, eb64,
	    (long long)rev);
	hreq_send(jw, n);
}

static void
jwatch_close(void)
{
	curl_multi_remove_handle(cm, jw->easy);
}

/* ------------------------------------------------------------------ */
/* Modes                                                               */

static void
transport_open(enum transport t)
{
	if (t == T_GRPC)
		grpc_open();
	else
		json_open();
}

static const char *
tname(enum transport t)
{
	return (t == T_GRPC ? "grpc" : "json");
}

/*
 * total txns with keys PREFIX TAG-NNNNNNNN over g.c in flight: tag "" for
 * the measured ones (inside the watch's range, PREFIX-), "w" for warm-ups.
 */
static double
run_txns(enum transport t, uint64_t total, const char *tag)
{
	uint64_t	t0 = now_ns();

	g.next = g.done = 0;
	g.total = total;
	if (t == T_GRPC)
		grpc_run_txns(tag);
	else
		json_run_txns(tag);
	return ((now_ns() - t0) / 1e9);
}

static int
mode_txn(void)
{
	double	secs, cpu0, cpu, scpu0, scpu;

	transport_open(g.t);
	g.timing = 0;
	run_txns(g.t, g.c, "w");	/* warm-up: connections open */
	if (g.failed > 0)
		die("%s: warm-up txns failed", tname(g.t));
	g.timing = 1;
	cpu0 = cpu_seconds();
	scpu0 = server_cpu();
	secs = run_txns(g.t, g.n, "");
	cpu = cpu_seconds() - cpu0;
	scpu = server_cpu() - scpu0;
	printf("%s txn: %llu in %.3f s, %d in flight: %.0f txn/s, "
	    "p50 %.3f ms, p99 %.3f ms, CPU %.3f s (%.3f s per 10,000), "
	    "failed %llu\n", tname(g.t), (unsigned long long)g.n, secs, g.c,
	    g.n / secs, hist_ms(&g.lat, 0.50), hist_ms(&g.lat, 0.99), cpu,
	    cpu * 10000 / g.n, (unsigned long long)g.failed);
	printf("RESULT mode=txn transport=%s clients=%d requests=%llu "
	    "size=%zu seconds=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f "
	    "max_ms=%.3f cpu_s=%.3f cpu_per_10k=%.3f server_cpu_per_10k=%.3f "
	    "failed=%llu\n", tname(g.t), g.c, (unsigned long long)g.n, g.size,
	    secs, g.n / secs, hist_ms(&g.lat, 0.50), hist_ms(&g.lat, 0.99),
	    g.lat.max / 1e6, cpu, cpu * 10000 / g.n, scpu * 10000 / g.n,
	    (unsigned long long)g.failed);
	return (g.failed > 0);
}

/*
 * Receive until want events have come, the watch failed, or idle seconds
 * passed without one.
 */
static void
watch_wait(uint64_t want, int for_created)
{
	uint64_t	quiet = now_ns();
	uint64_t	seen = g.events;

	while (!g.watch_failed && (for_created ? !g.created :
	    g.events < want)) {
		if (g.t == T_GRPC)
			gwatch_poll(100);
		else
			json_pump(100, jwatch_done);
		if (g.events != seen) {
			seen = g.events;
			quiet = now_ns();
		}
		if (now_ns() - quiet > (uint64_t)g.idle * 1000000000ULL)
			break;
		check_deadline();
	}
}

static void
watch_open(int64_t rev)
{
	char	key[256], end[256];
	size_t	n;

	n = snprintf(key, sizeof key, "%s%s-", KEY_PREFIX, g.prefix);
	memcpy(end, key, n);
	end[n - 1]++;		/* [PREFIX-, PREFIX.) */
	g.created = g.watch_failed = 0;
	g.events = 0;
	if (g.t == T_GRPC)
		gwatch_open(key, n, end, n, rev);
	else
		jwatch_open(key, n, end, n, rev);
	watch_wait(0, 1);
	if (!g.created)
		die("%s: the watch was not created", tname(g.t));
}

static void
watch_close(void)
{
	if (g.t == T_GRPC)
		gwatch_close();
	else
		jwatch_close();
}

/* The writer: a child process with its own transport and CPU. */
static pid_t
writer_fork(int *go, int *report)
{
	int	gp[2], rp[2];
	char	ch, buf[64];
	double	secs;
	pid_t	pid;

	if (pipe(gp) != 0 || pipe(rp) != 0)
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid > 0) {
		close(gp[0]);
		close(rp[1]);
		*go = gp[1];
		*report = rp[0];
		return (pid);
	}
	close(gp[1]);
	close(rp[0]);
	transport_open(g.wt);
	g.timing = 0;
	run_txns(g.wt, g.c, "w");	/* warm-up: keys outside the watch */
	if (read(gp[0], &ch, 1) != 1)
		_exit(2);
	g.timing = 1;
	secs = run_txns(g.wt, g.n, "");
	snprintf(buf, sizeof buf, "%.1f %.3f %llu\n", g.n / secs,
	    hist_ms(&g.lat, 0.99), (unsigned long long)g.failed);
	if (write(rp[1], buf, strlen(buf)) < 0)
		_exit(2);
	_exit(g.failed > 0);
}

static int
mode_watch(void)
{
	uint64_t	live_events, replay_events, t0;
	double		cpu0, live_cpu, replay_cpu, live_s, replay_s;
	double		scpu0, replay_scpu;
	double		wrps = 0, wp99 = 0;
	unsigned long long wfailed = 1;
	char		buf[128];
	ssize_t		n;
	int		go, report, status, failed;
	pid_t		pid;

	pid = writer_fork(&go, &report);
	transport_open(g.t);

	/* Live: the events of the writer's U creates, as they happen. */
	watch_open(0);
	cpu0 = cpu_seconds();
	if (write(go, "g", 1) != 1)
		die("starting the writer: %s", strerror(errno));
	watch_wait(g.n, 0);
	live_cpu = cpu_seconds() - cpu0;
	live_events = g.events;
	live_s = (g.t_last - g.t_first) / 1e9;
	failed = g.watch_failed;
	watch_close();
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid: %s", strerror(errno));
	n = read(report, buf, sizeof buf - 1);
	if (n > 0) {
		buf[n] = '\0';
		sscanf(buf, "%lf %lf %llu", &wrps, &wp99, &wfailed);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || wfailed > 0)
		die("the writer (%s) failed", tname(g.wt));
	if (live_events < g.n || failed)
		die("%s: live watch got %llu of %llu events%s", tname(g.t),
		    (unsigned long long)live_events, (unsigned long long)g.n,
		    failed ? ", and failed" : "");

	/* Replay: the same events again, from the first one's revision. */
	cpu0 = cpu_seconds();
	scpu0 = server_cpu();
	t0 = now_ns();
	watch_open(g.first_rev);
	watch_wait(g.n, 0);
	replay_s = (g.t_last - t0) / 1e9;
	replay_cpu = cpu_seconds() - cpu0;
	replay_scpu = server_cpu() - scpu0;
	replay_events = g.events;
	failed = g.watch_failed;
	watch_close();
	if (replay_events < g.n || failed)
		die("%s: replay got %llu of %llu events%s", tname(g.t),
		    (unsigned long long)replay_events, (unsigned long long)g.n,
		    failed ? ", and failed" : "");

	printf("%s watch: live %llu events in %.3f s: %.0f events/s "
	    "(writer %s, %d in flight: %.0f txn/s), CPU %.3f s per 10,000; "
	    "replay %.3f s: %.0f events/s, CPU %.3f s per 10,000\n",
	    tname(g.t), (unsigned long long)live_events, live_s,
	    live_events / live_s, tname(g.wt), g.c, wrps,
	    live_cpu * 10000 / live_events, replay_s,
	    replay_events / replay_s, replay_cpu * 10000 / replay_events);
	printf("RESULT mode=watch transport=%s writer=%s writer_clients=%d "
	    "updates=%llu size=%zu live_events=%llu live_seconds=%.3f "
	    "live_eps=%.1f live_cpu_per_10k=%.3f writer_rps=%.1f "
	    "writer_p99_ms=%.3f replay_events=%llu replay_seconds=%.3f "
	    "replay_eps=%.1f replay_cpu_per_10k=%.3f "
	    "replay_server_cpu_per_10k=%.3f\n", tname(g.t),
	    tname(g.wt), g.c, (unsigned long long)g.n, g.size,
	    (unsigned long long)live_events, live_s, live_events / live_s,
	    live_cpu * 10000 / live_events, wrps, wp99,
	    (unsigned long long)replay_events, replay_s,
	    replay_events / replay_s, replay_cpu * 10000 / replay_events,
	    replay_scpu * 10000 / replay_events);
	return (0);
}

static enum transport
parse_transport(const char *s)
{
	if (strcmp(s, "grpc") == 0)
		return (T_GRPC);
	if (strcmp(s, "json") == 0)
		return (T_JSON);
	die("transport %s: grpc or json", s);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
"usage: etcdwire txn   -t grpc|json -e HOST:PORT [-n txns] [-c in-flight]\n"
"                      [-s size] [-p prefix]\n"
"       etcdwire watch -t grpc|json -e HOST:PORT [-U updates] [-W grpc|json]\n"
"                      [-c writer in-flight] [-s size] [-p prefix]\n"
"  -P PID: etcd's pid, to report its CPU time per 10,000 txns (events)\n"
"  --timeout S: give up after S seconds (default 600); --idle S: watch\n"
"  mode stops waiting after S seconds without events (default 15)\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "timeout", required_argument, NULL, 'T' },
		{ "idle", required_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 }
	};
	int	 watch, ch, tset = 0;
	size_t	 i;

	if (argc < 2)
		usage();
	if (strcmp(argv[1], "txn") == 0)
		watch = 0;
	else if (strcmp(argv[1], "watch") == 0)
		watch = 1;
	else
		usage();
	argc--;
	argv++;

	g.n = watch ? 20000 : 20000;
	g.c = watch ? 16 : 1;
	g.size = 1024;
	g.timeout = 600;
	g.idle = 15;
	g.wt = T_GRPC;
	snprintf(g.prefix, sizeof g.prefix, "ew-%lx-%d",
	    (unsigned long)time(NULL), (int)getpid());
	while ((ch = getopt_long(argc, argv, "c:e:n:P:p:s:t:U:W:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			g.c = atoi(optarg);
			break;
		case 'e':
			snprintf(g.endpoint, sizeof g.endpoint, "%s", optarg);
			break;
		case 'n':
		case 'U':
			g.n = strtoull(optarg, NULL, 10);
			break;
		case 'P':
			g.server = atoi(optarg);
			break;
		case 'p':
			snprintf(g.prefix, sizeof g.prefix, "%s", optarg);
			break;
		case 's':
			g.size = strtoull(optarg, NULL, 10);
			break;
		case 't':
			g.t = parse_transport(optarg);
			tset = 1;
			break;
		case 'W':
			g.wt = parse_transport(optarg);
			break;
		case 'T':
			g.timeout = atoi(optarg);
			break;
		case 'I':
			g.idle = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (!tset || g.endpoint[0] == '\0' || g.c < 1 || g.n < 1 ||
	    g.size < 128 || g.size > (1 << 20))
		usage();
	snprintf(g.base, sizeof g.base, "http://%s", g.endpoint);
	signal(SIGPIPE, SIG_IGN);
	g.start = now_ns();

	g.pad = xmalloc(g.size + 1);
	for (i = 0; i < g.size; i++)
		g.pad[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7 + i / 36) % 36];
	g.value = xmalloc(g.size + 512);
	g.dec = xmalloc(2 * g.size + 1024);

	ch = watch ? mode_watch() : mode_txn();
	fflush(stdout);
	/* No orderly shutdown of gRPC or libcurl: the process ends here. */
	_exit(ch);
}
