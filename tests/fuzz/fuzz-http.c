/*
 * Fuzz target: HTTP requests through the real server and router. A real
 * http_server (net/http*.c: http-parser, keep-alive, pipelining, limits)
 * listens on 127.0.0.1 with the real API handler (api/api.c: routing,
 * discovery, the verbs of api_read.c and api_write.c with their JSON,
 * YAML, protobuf and patch decoding) over a real registry with the CRDs
 * bootstrapped and a store in a temporary directory, as volrayd runs it
 * but without authentication (every request is anonymous and allowed).
 *
 * Each input is the byte stream of one client connection: a libuv client
 * on the same loop connects, writes every byte, half-closes once the first
 * response byte arrives (or after a few milliseconds), reads until the
 * server closes, and is closed after 100 ms at the latest (watches never
 * end on their own). The properties: what comes back, if anything, starts
 * with an HTTP/1.1 status line, and the server is left with no open
 * connection: a response or a clean close, for any input. The store keeps
 * what earlier inputs created, as a long-running daemon would.
 */
#include <sys/stat.h>

#include <ftw.h>
#include <signal.h>
#include <unistd.h>

#include <uv.h>

#include "api/api.h"
#include "api/watch.h"
#include "net/http.h"
#include "fuzz.h"
#include "registry/registry.h"
#include "registry/resource.h"
#include "store/store.h"

#ifndef FUZZ_SRCDIR
#define FUZZ_SRCDIR "."
#endif

static uv_loop_t *loop;
static http_server *srv;
static int port;
static char dir[256];

struct client {
	uv_tcp_t tcp;
	uv_connect_t conn;
	uv_write_t wr;
	uv_shutdown_t sh;
	uv_timer_t shut_timer, deadline;
	char head[16];
	size_t nhead;
	int closed, shut, timers;
	char rbuf[65536];
};

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

static void
cleanup(void)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
	    getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
	char *cause = NULL, crds[512];
	registry *rg;
	watch_hub *hub;
	store *st;
	api *a;

	(void)argc;
	(void)argv;
	fuzz_quiet();
	/* As volrayd: a peer gone mid-write is an EPIPE, not a signal. */
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof dir, "%s/volray-fuzz-http-%ld", tmp,
	    (long)getpid());
	cleanup();
	atexit(cleanup);
	loop = uv_default_loop();
	resource_init();
	if (store_open(loop, dir, &st, &cause) != 0) {
		fprintf(stderr, "fuzz-http: store: %s\n", cause);
		exit(1);
	}
	rg = registry_new(st);
	hub = watch_hub_new(loop, st);
	snprintf(crds, sizeof crds, "%s/crds", getenv("top_srcdir") != NULL ?
	    getenv("top_srcdir") : FUZZ_SRCDIR);
	if (registry_bootstrap(rg, crds, &cause) != 0) {
		fprintf(stderr, "fuzz-http: bootstrap: %s\n",
		    cause ? cause : "failed");
		exit(1);
	}
	a = api_new(loop, st, rg, hub, dir);
	api_set_ready(a, 1);
	/* A request gets a second to arrive, not 30. */
	http_set_timeouts(1000, 1000);
	if (http_server_listen(loop, "127.0.0.1", 0, api_handle, a, &srv,
	    &cause) != 0) {
		fprintf(stderr, "fuzz-http: listen: %s\n", cause);
		exit(1);
	}
	api_set_server(a, srv);
	port = http_server_port(srv);
	return 0;
}

static void
on_client_close(uv_handle_t *h)
{
	((struct client *)h->data)->closed++;
}

static void
on_timer_close(uv_handle_t *h)
{
	((struct client *)h->data)->timers--;
}

static void
client_close(struct client *c)
{
	if (!uv_is_closing((uv_handle_t *)&c->tcp))
		uv_close((uv_handle_t *)&c->tcp, on_client_close);
	if (!uv_is_closing((uv_handle_t *)&c->shut_timer))
		uv_close((uv_handle_t *)&c->shut_timer, on_timer_close);
	if (!uv_is_closing((uv_handle_t *)&c->deadline))
		uv_close((uv_handle_t *)&c->deadline, on_timer_close);
}

static void
on_shutdown(uv_shutdown_t *r, int status)
{
	(void)r;
	(void)status;
}

static void
half_close(struct client *c)
{
	if (c->shut || uv_is_closing((uv_handle_t *)&c->tcp))
		return;
	c->shut = 1;
	uv_timer_stop(&c->shut_timer);
	uv_shutdown(&c->sh, (uv_stream_t *)&c->tcp, on_shutdown);
}

static void
on_shut_timer(uv_timer_t *t)
{
	half_close(t->data);
}

static void
on_deadline(uv_timer_t *t)
{
	client_close(t->data);
}

static void
on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct client *c = h->data;

	(void)suggested;
	*buf = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct client *c = s->data;
	size_t k;

	if (n < 0) {
		client_close(c);
		return;
	}
	if (n > 0 && c->nhead < sizeof c->head) {
		k = sizeof c->head - c->nhead;
		if (k > (size_t)n)
			k = n;
		memcpy(c->head + c->nhead, buf->base, k);
		c->nhead += k;
	}
	if (n > 0)
		half_close(c);
}

static void
on_write(uv_write_t *w, int status)
{
	(void)w;
	(void)status;
}

static void
on_connect(uv_connect_t *req, int status)
{
	struct client *c = req->data;

	if (status != 0) {
		client_close(c);
		return;
	}
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct client *c;
	struct sockaddr_in sin;
	uv_buf_t b;
	int i;

	if (loop == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	c = calloc(1, sizeof *c);
	uv_tcp_init(loop, &c->tcp);
	uv_timer_init(loop, &c->shut_timer);
	uv_timer_init(loop, &c->deadline);
	c->tcp.data = c->shut_timer.data = c->deadline.data = c;
	c->conn.data = c;
	c->timers = 2;
	uv_ip4_addr("127.0.0.1", port, &sin);
	uv_tcp_connect(&c->conn, &c->tcp, (struct sockaddr *)&sin,
	    on_connect);
	/* Queued behind the connect; libuv writes once it is up. */
	b = uv_buf_init((char *)data, size);
	if (size > 0)
		uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_write);
	uv_timer_start(&c->shut_timer, on_shut_timer, 5, 0);
	uv_timer_start(&c->deadline, on_deadline, 100, 0);
	while (!c->closed || c->timers > 0)
		uv_run(loop, UV_RUN_ONCE);
	if (c->nhead > 0)
		FUZZ_ASSERT(memcmp(c->head, "HTTP/1.1 ", c->nhead < 9 ?
		    c->nhead : 9) == 0);
	/* The server must let the connection go, at once or after a
	 * response it was still finishing. */
	for (i = 0; i < 5000 && http_server_connections(srv) > 0; i++)
		uv_run(loop, UV_RUN_NOWAIT) == 0 ? (void)usleep(1000) :
		    (void)usleep(100);
	FUZZ_ASSERT(http_server_connections(srv) == 0);
	free(c);
	return 0;
}
