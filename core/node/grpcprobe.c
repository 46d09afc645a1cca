/*
 * The gRPC probe's client, with gRPC's C core: each check dials its own
 * channel to host:port in plaintext, as the kubelet does, and makes one
 * unary call of grpc.health.v1.Health/Check with the probe's service
 * (HealthCheckRequest, field 1), whose answer (HealthCheckResponse,
 * field 1) must be SERVING (1). The messages are written and read by
 * hand: two fields do not need generated code.
 *
 * The call waits for the connection (wait-for-ready, the kubelet's
 * grpc.WithBlock) until the probe's deadline, so a port nothing listens
 * on yet fails as "timeout: failed to connect service", not at the first
 * refused connect. The loop never blocks: calls are started from it and
 * complete on one completion queue, drained by a thread of this file's,
 * which hands each finished check back through a list and a uv_async
 * (as store/etcdkv_grpc.c does); the loop then reports it with the
 * kubelet's words and frees the call and its channel. A pod in a network
 * namespace of its own is checked on a connection the caller made from
 * the node's namespace (grpcprobe_check_fd), which gRPC's threads cannot
 * dial into.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_posix.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <grpc/support/time.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "node/grpcprobe.h"

#define HEALTH_CHECK	"/grpc.health.v1.Health/Check"
#define SERVING		1

struct check {
	grpcprobe *g;
	grpc_channel *chan;
	grpc_call *call;
	grpc_metadata_array md_init, md_trail;
	grpc_byte_buffer *req, *resp;
	grpc_status_code status;
	grpc_slice details;
	char addr[300];			/* host:port, as the kubelet quotes it */
	uint64_t timeout_ms;
	grpcprobe_fn fn;
	void *arg;
	int ok;				/* the batch completed */
	struct check *next_done;
	struct check *prev, *next;	/* under way */
};

static void check_start(grpcprobe *, int fd, const char *host, int port,
    const char *service, uint64_t timeout_ms, grpcprobe_fn fn, void *arg);

struct grpcprobe {
	uv_loop_t *loop;
	grpc_completion_queue *cq;
	grpc_channel_credentials *insecure;
	pthread_t thread;
	pthread_mutex_t mu;
	struct check *done, **done_tail;	/* completed, for the loop */
	uv_async_t async;
	struct check *calls;
	int closing;
};

/* grpc-go's names of the status codes, as its errors print them. */
static const char *const code_names[] = {
	"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded",
	"NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted",
	"FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented",
	"Internal", "Unavailable", "DataLoss", "Unauthenticated"
};

static const char *const serving_names[] = {
	"UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"
};

static void *
cq_run(void *arg)
{
	grpcprobe *g = arg;
	grpc_event ev;
	struct check *c;

	for (;;) {
		ev = grpc_completion_queue_next(g->cq,
		    gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
		if (ev.type == GRPC_QUEUE_SHUTDOWN)
			return NULL;
		if (ev.type != GRPC_OP_COMPLETE)
			continue;
		c = ev.tag;
		c->ok = ev.success;
		c->next_done = NULL;
		pthread_mutex_lock(&g->mu);
		*g->done_tail = c;
		g->done_tail = &c->next_done;
		pthread_mutex_unlock(&g->mu);
		uv_async_send(&g->async);
	}
}

static struct check *
done_pop(grpcprobe *g)
{
	struct check *c;

	pthread_mutex_lock(&g->mu);
	if ((c = g->done) != NULL && (g->done = c->next_done) == NULL)
		g->done_tail = &g->done;
	pthread_mutex_unlock(&g->mu);
	return c;
}

static int
varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		unsigned char b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if ((b & 0x80) == 0)
			return 0;
		shift += 7;
	}
	return -1;
}

int
grpcprobe_response_status(const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	uint64_t key, v;
	int status = 0;

	while (p < end) {
		if (varint(&p, end, &key) != 0)
			return -1;
		switch (key & 7) {
		case 0:
			if (varint(&p, end, &v) != 0)
				return -1;
			if (key >> 3 == 1)
				status = (int)(v & 0x7fffffff);
			break;
		case 1:
			if (end - p < 8)
				return -1;
			p += 8;
			break;
		case 2:
			if (varint(&p, end, &v) != 0 || v > (uint64_t)(end - p))
				return -1;
			p += v;
			break;
		case 5:
			if (end - p < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
	}
	return status;
}

/* HealthCheckRequest{service}: nothing for "", as proto3 writes it. */
static grpc_byte_buffer *
request(const char *service)
{
	size_t n = strlen(service), len = 0;
	unsigned char *b = xmalloc(n + 16);
	grpc_slice s;
	grpc_byte_buffer *bb;
	size_t v = n;

	if (n > 0) {
		b[len++] = 0x0a;	/* field 1, length-delimited */
		do {
			b[len++] = (unsigned char)((v & 0x7f) | (v > 0x7f ?
			    0x80 : 0));
			v >>= 7;
		} while (v > 0);
		memcpy(b + len, service, n);
		len += n;
	}
	s = grpc_slice_from_copied_buffer((const char *)b, len);
	bb = grpc_raw_byte_buffer_create(&s, 1);
	grpc_slice_unref(s);
	free(b);
	return bb;
}

/* The probe's timeout as Go prints a time.Duration ("1s", "1m30s",
   "300ms", "1.5s"). */
static void
go_duration(uint64_t ms, char *out, size_t size)
{
	uint64_t s = ms / 1000, frac = ms % 1000;
	char f[8] = "";
	size_t n;

	if (ms < 1000) {
		snprintf(out, size, "%llums", (unsigned long long)ms);
		return;
	}
	if (frac != 0) {
		snprintf(f, sizeof f, ".%03llu", (unsigned long long)frac);
		for (n = strlen(f); f[n - 1] == '0'; n--)
			f[n - 1] = '\0';
	}
	if (s < 60)
		snprintf(out, size, "%llu%ss", (unsigned long long)s, f);
	else if (s < 3600)
		snprintf(out, size, "%llum%llu%ss", (unsigned long long)(s / 60),
		    (unsigned long long)(s % 60), f);
	else
		snprintf(out, size, "%lluh%llum%llu%ss",
		    (unsigned long long)(s / 3600),
		    (unsigned long long)(s / 60 % 60),
		    (unsigned long long)(s % 60), f);
}

/* The outcome of a completed call, in the kubelet's words (pkg/probe/grpc). */
static int
verdict(struct check *c, char *msg, size_t size)
{
	char *d = grpc_slice_to_c_string(c->details), t[32];
	const char *name;
	grpc_byte_buffer_reader r;
	grpc_slice s;
	int st, connected;

	go_duration(c->timeout_ms, t, sizeof t);
	connected = grpc_channel_check_connectivity_state(c->chan, 0) ==
	    GRPC_CHANNEL_READY;
	if (!c->ok || c->status != GRPC_STATUS_OK) {
		name = (unsigned)c->status < sizeof code_names /
		    sizeof code_names[0] ? code_names[c->status] : "Unknown";
		if (c->status == GRPC_STATUS_DEADLINE_EXCEEDED && !connected)
			snprintf(msg, size, "timeout: failed to connect service "
			    "\"%s\" within %s: context deadline exceeded",
			    c->addr, t);
		else if (c->status == GRPC_STATUS_DEADLINE_EXCEEDED)
			snprintf(msg, size, "timeout: health rpc did not "
			    "complete within %s", t);
		else if (c->status == GRPC_STATUS_UNIMPLEMENTED)
			snprintf(msg, size, "error: this server does not "
			    "implement the grpc health protocol "
			    "(grpc.health.v1.Health): %s", d);
		else
			snprintf(msg, size, "error: health rpc probe failed: "
			    "rpc error: code = %s desc = %s", name, d);
		gpr_free(d);
		return 0;
	}
	gpr_free(d);
	st = -1;
	if (c->resp != NULL && grpc_byte_buffer_reader_init(&r, c->resp)) {
		s = grpc_byte_buffer_reader_readall(&r);
		grpc_byte_buffer_reader_destroy(&r);
		st = grpcprobe_response_status(GRPC_SLICE_START_PTR(s),
		    GRPC_SLICE_LENGTH(s));
		grpc_slice_unref(s);
	}
	if (st < 0) {
		snprintf(msg, size, "error: health rpc probe failed: rpc error: "
		    "code = Internal desc = grpc: failed to unmarshal the "
		    "received message");
		return 0;
	}
	if (st != SERVING) {
		if ((unsigned)st < sizeof serving_names / sizeof serving_names[0])
			snprintf(msg, size, "service unhealthy (responded with "
			    "\"%s\")", serving_names[st]);
		else
			snprintf(msg, size, "service unhealthy (responded with "
			    "\"%d\")", st);
		return 0;
	}
	snprintf(msg, size, "service healthy");
	return 1;
}

static void
check_free(struct check *c)
{
	grpc_byte_buffer_destroy(c->req);
	if (c->resp != NULL)
		grpc_byte_buffer_destroy(c->resp);
	grpc_metadata_array_destroy(&c->md_init);
	grpc_metadata_array_destroy(&c->md_trail);
	grpc_slice_unref(c->details);
	grpc_call_unref(c->call);
	grpc_channel_destroy(c->chan);
	free(c);
}

/* A finished check, on the loop: off the list, reported, freed. */
static void
finish(struct check *c)
{
	grpcprobe *g = c->g;
	char msg[512];
	int ok;

	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		g->calls = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	if (g->closing)
		c->fn(c->arg, -1, NULL);
	else {
		ok = verdict(c, msg, sizeof msg);
		c->fn(c->arg, ok, msg);
	}
	check_free(c);
}

static void
on_async(uv_async_t *a)
{
	grpcprobe *g = a->data;
	struct check *c;

	while (!g->closing && (c = done_pop(g)) != NULL)
		finish(c);
}

grpcprobe *
grpcprobe_new(uv_loop_t *loop)
{
	grpcprobe *g = xcalloc(1, sizeof *g);

	grpc_init();
	g->loop = loop;
	g->insecure = grpc_insecure_credentials_create();
	g->cq = grpc_completion_queue_create_for_next(NULL);
	g->done_tail = &g->done;
	pthread_mutex_init(&g->mu, NULL);
	uv_async_init(loop, &g->async, on_async);
	g->async.data = g;
	/* The probes alone do not keep the loop alive. */
	uv_unref((uv_handle_t *)&g->async);
	if (pthread_create(&g->thread, NULL, cq_run, g) != 0)
		fatal("grpc probe: cannot start the completion thread");
	return g;
}

void
grpcprobe_check(grpcprobe *g, const char *host, int port, const char *service,
    uint64_t timeout_ms, grpcprobe_fn fn, void *arg)
{
	check_start(g, -1, host, port, service, timeout_ms, fn, arg);
}

void
grpcprobe_check_fd(grpcprobe *g, int fd, const char *host, int port,
    const char *service, uint64_t timeout_ms, grpcprobe_fn fn, void *arg)
{
	check_start(g, fd, host, port, service, timeout_ms, fn, arg);
}

void
grpcprobe_unreachable(const char *host, int port, uint64_t timeout_ms,
    char *msg, size_t size)
{
	char t[32];

	go_duration(timeout_ms, t, sizeof t);
	snprintf(msg, size, strchr(host, ':') ? "timeout: failed to connect "
	    "service \"[%s]:%d\" within %s: context deadline exceeded" :
	    "timeout: failed to connect service \"%s:%d\" within %s: "
	    "context deadline exceeded", host, port, t);
}

/* A check on a channel of its own: dialled (fd -1) or on fd, connected. */
static void
check_start(grpcprobe *g, int fd, const char *host, int port,
    const char *service, uint64_t timeout_ms, grpcprobe_fn fn, void *arg)
{
	struct check *c = xcalloc(1, sizeof *c);
	grpc_arg a[2];
	grpc_channel_args args = { 2, a };
	grpc_op op[6];
	grpc_call_error e;
	char msg[512];

	c->g = g;
	c->fn = fn;
	c->arg = arg;
	c->timeout_ms = timeout_ms;
	snprintf(c->addr, sizeof c->addr, strchr(host, ':') ? "[%s]:%d" :
	    "%s:%d", host, port);
	memset(a, 0, sizeof a);
	a[0].type = GRPC_ARG_STRING;
	a[0].key = (char *)GRPC_ARG_PRIMARY_USER_AGENT_STRING;
	a[0].value.string = (char *)"kube-probe/1.32";
	/* One connection per check, not shared with another channel's. */
	a[1].type = GRPC_ARG_INTEGER;
	a[1].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
	a[1].value.integer = 1;
	c->chan = fd >= 0 ? grpc_channel_create_from_fd(c->addr, fd,
	    g->insecure, &args) : grpc_channel_create(c->addr, g->insecure,
	    &args);
	c->details = grpc_empty_slice();
	grpc_metadata_array_init(&c->md_init);
	grpc_metadata_array_init(&c->md_trail);
	c->req = request(service);
	c->call = grpc_channel_create_call(c->chan, NULL,
	    GRPC_PROPAGATE_DEFAULTS, g->cq,
	    grpc_slice_from_static_string(HEALTH_CHECK), NULL,
	    gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
	    gpr_time_from_millis((int64_t)timeout_ms, GPR_TIMESPAN)), NULL);
	memset(op, 0, sizeof op);
	op[0].op = GRPC_OP_SEND_INITIAL_METADATA;
	op[0].flags = GRPC_INITIAL_METADATA_WAIT_FOR_READY;
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
	if ((e = grpc_call_start_batch(c->call, op, 6, c, NULL)) !=
	    GRPC_CALL_OK) {
		snprintf(msg, sizeof msg, "error: health rpc probe failed: "
		    "grpc_call_start_batch: %d", (int)e);
		fn(arg, 0, msg);
		check_free(c);
		return;
	}
	if ((c->next = g->calls) != NULL)
		c->next->prev = c;
	g->calls = c;
}

static void
closed(uv_handle_t *h)
{
	grpcprobe *g = h->data;

	pthread_mutex_destroy(&g->mu);
	free(g);
}

void
grpcprobe_free(grpcprobe *g)
{
	struct check *c;

	if (g == NULL)
		return;
	g->closing = 1;
	for (c = g->calls; c != NULL; c = c->next)
		grpc_call_cancel(c->call, NULL);
	grpc_completion_queue_shutdown(g->cq);
	pthread_join(g->thread, NULL);
	while ((c = done_pop(g)) != NULL)
		finish(c);
	grpc_completion_queue_destroy(g->cq);
	grpc_channel_credentials_release(g->insecure);
	grpc_shutdown();
	uv_close((uv_handle_t *)&g->async, closed);
}
