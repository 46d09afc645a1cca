/*
 * Tests for the gRPC probe's client (node/grpcprobe.c): a
 * HealthCheckResponse's status read from its bytes (SERVING, NOT_SERVING,
 * none, other fields around it, truncated ones refused); a check of a
 * port nothing listens on fails within its timeout in the kubelet's words
 * while the loop goes on turning (a timer fires meanwhile); a check under
 * way when the client is freed reports -1 once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "node/grpcprobe.h"

#define ST(s) grpcprobe_response_status((const unsigned char *)(s), \
	sizeof(s) - 1)

struct result {
	int calls, ok;
	char msg[512];
	int ticks_then;
};

static int ticks;

static void
on_tick(uv_timer_t *t)
{
	(void)t;
	ticks++;
}

static void
on_result(void *arg, int ok, const char *msg)
{
	struct result *r = arg;

	r->calls++;
	r->ok = ok;
	r->ticks_then = ticks;
	snprintf(r->msg, sizeof r->msg, "%s", msg ? msg : "(null)");
}

/* A loopback port that nothing listens on (bound, then closed). */
static int
closed_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&a, sizeof a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

int
main(void)
{
	uv_loop_t *loop = uv_default_loop();
	struct result r = { 0 }, r2 = { 0 };
	uv_timer_t tick;
	grpcprobe *g;
	char want[256];
	int port = closed_port();

	CHECK(ST("\x08\x01") == 1);
	CHECK(ST("\x08\x02") == 2);
	CHECK(ST("") == 0);			/* proto3: UNKNOWN is left out */
	CHECK(ST("\x12\x01x\x08\x03") == 3);	/* another field first */
	CHECK(ST("\x08\x02\x15\x00\x00\x00\x00") == 2);	/* and after */
	CHECK(ST("\x08") == -1);
	CHECK(ST("\x12\x05x") == -1);
	CHECK(ST("\x0f") == -1);		/* wire type 7 */

	uv_timer_init(loop, &tick);
	uv_timer_start(&tick, on_tick, 20, 20);
	g = grpcprobe_new(loop);
	grpcprobe_check(g, "127.0.0.1", port, "", 300, on_result, &r);
	while (r.calls == 0)
		uv_run(loop, UV_RUN_ONCE);
	CHECK(r.calls == 1);
	CHECK(r.ok == 0);
	snprintf(want, sizeof want, "timeout: failed to connect service "
	    "\"127.0.0.1:%d\" within 300ms: context deadline exceeded", port);
	CHECK_STR(r.msg, want);
	/* The loop turned while the call waited: no blocking call. */
	CHECK(r.ticks_then >= 5);

	grpcprobe_check(g, "127.0.0.1", port, "app", 60000, on_result, &r2);
	uv_timer_stop(&tick);
	uv_close((uv_handle_t *)&tick, NULL);
	grpcprobe_free(g);
	CHECK(r2.calls == 1);
	CHECK(r2.ok == -1);
	uv_run(loop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(loop) == 0);
	return check_result("test-grpcprobe");
}
