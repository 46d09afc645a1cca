/*
 * SPDY/3.1 framing (net/spdy.c): a client session's SYN_STREAM, DATA and
 * PING read by a server session, byte by byte too; a SYN_REPLY read back
 * by the client's inflater (one compression context per direction for
 * the session); a 2 MB DATA frame handed over in pieces, never buffered;
 * and the refusals: another version, a control frame over 1 MiB, a
 * header block that lies about its lengths, DATA on stream 0.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "net/spdy.h"

struct side {
	char out[4 << 20];		/* what it sent */
	size_t outlen;
	int streams;
	char hdr[8][64];		/* the last stream's headers */
	int nhdr;
	uint32_t last_id;
	int last_fin;
	size_t data;
	int data_calls;
	int data_fin;
	int resets;
	int goaway;
};

static void
on_stream(void *arg, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin)
{
	struct side *s = arg;
	int i;

	s->streams++;
	s->last_id = id;
	s->last_fin = fin;
	s->nhdr = n;
	for (i = 0; i < n && i < 4; i++) {
		snprintf(s->hdr[2 * i], 64, "%s", names[i]);
		snprintf(s->hdr[2 * i + 1], 64, "%s", values[i]);
	}
}

static void
on_data(void *arg, uint32_t id, const char *data, size_t len, int fin)
{
	struct side *s = arg;

	(void)data;
	s->last_id = id;
	s->data += len;
	s->data_calls++;
	if (fin)
		s->data_fin = 1;
}

static void
on_reset(void *arg, uint32_t id, uint32_t status)
{
	struct side *s = arg;

	(void)id;
	(void)status;
	s->resets++;
}

static void
on_goaway(void *arg)
{
	((struct side *)arg)->goaway++;
}

static void
on_send(void *arg, const char *data, size_t len)
{
	struct side *s = arg;

	if (s->outlen + len <= sizeof s->out) {
		memcpy(s->out + s->outlen, data, len);
		s->outlen += len;
	}
}

static const struct spdy_callbacks cbs = { on_stream, on_data, on_reset,
    on_goaway, on_send };

static struct side cl, sv;

static void
reset_sides(void)
{
	memset(&cl, 0, sizeof cl);
	memset(&sv, 0, sizeof sv);
}

/* Feed what the client sent to the server, in pieces of step bytes. */
static int
deliver(spdy_session *to, struct side *from, size_t step)
{
	size_t off, k;
	char *cause = NULL;
	int r = 0;

	for (off = 0; off < from->outlen && r == 0; off += k) {
		k = from->outlen - off < step ? from->outlen - off : step;
		r = spdy_session_feed(to, from->out + off, k, &cause);
	}
	free(cause);
	from->outlen = 0;
	return r;
}

static void
test_stream_and_data(size_t step)
{
	static const char *const names[] = { "streamtype", "port",
	    "requestid" };
	static const char *const values[] = { "data", "8080", "7" };
	spdy_session *c, *s;

	reset_sides();
	c = spdy_session_new(&cbs, &cl);
	s = spdy_session_new(&cbs, &sv);
	spdy_open(c, 1, names, values, 3, 0);
	spdy_open(c, 3, names, values, 3, 0);	/* the context carries on */
	spdy_data(c, 3, "hello", 5, 0);
	spdy_data(c, 3, NULL, 0, 1);
	spdy_ping(c, 1);
	CHECK(deliver(s, &cl, step) == 0);
	CHECK(sv.streams == 2);
	CHECK(sv.last_id == 3);
	CHECK(sv.nhdr == 3);
	CHECK_STR(sv.hdr[0], "streamtype");
	CHECK_STR(sv.hdr[1], "data");
	CHECK_STR(sv.hdr[3], "8080");
	CHECK_STR(sv.hdr[5], "7");
	CHECK(sv.data == 5);
	CHECK(sv.data_fin == 1);
	/* The ping came back as it was: 12 bytes, type 6, id 1. */
	CHECK(sv.outlen == 12);
	CHECK((unsigned char)sv.out[3] == 6 && sv.out[11] == 1);
	/* A reply the client's inflater reads (no headers). */
	sv.outlen = 0;
	spdy_reply(s, 3, NULL, NULL, 0, 0);
	spdy_reply(s, 1, names, values, 1, 1);
	CHECK(deliver(c, &sv, 1) == 0);
	spdy_session_free(c);
	spdy_session_free(s);
}

static void
test_big_data(void)
{
	spdy_session *s = spdy_session_new(&cbs, &sv);
	unsigned char h[8] = { 0, 0, 0, 5, 1, 0xff, 0xff, 0xff };
	static char chunk[65536];
	char *cause = NULL;
	size_t left = 0xffffff;

	reset_sides();
	CHECK(spdy_session_feed(s, (char *)h, 8, &cause) == 0);
	while (left > 0) {
		size_t k = left < sizeof chunk ? left : sizeof chunk;

		CHECK(spdy_session_feed(s, chunk, k, &cause) == 0);
		left -= k;
	}
	CHECK(sv.data == 0xffffff);
	CHECK(sv.data_calls >= 256);	/* handed over as it came */
	CHECK(sv.data_fin == 1);
	spdy_session_free(s);
}

static void
refused(const unsigned char *frame, size_t len, const char *what)
{
	spdy_session *s = spdy_session_new(&cbs, &sv);
	char *cause = NULL;

	CHECK(spdy_session_feed(s, (const char *)frame, len, &cause) == -1);
	CHECK(cause != NULL);
	if (cause == NULL)
		fprintf(stderr, "not refused: %s\n", what);
	free(cause);
	spdy_session_free(s);
}

static void
test_refusals(void)
{
	/* SPDY/2's PING. */
	static const unsigned char v2[] = { 0x80, 2, 0, 6, 0, 0, 0, 4,
	    0, 0, 0, 1 };
	/* A SETTINGS frame of 2 MB. */
	static const unsigned char big[] = { 0x80, 3, 0, 4, 0, 0x20, 0, 0 };
	/* SYN_STREAM whose header block is not zlib. */
	static const unsigned char junk[] = { 0x80, 3, 0, 1, 0, 0, 0, 14,
	    0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 'n', 'o', 'p', 'e' };
	/* DATA on stream 0. */
	static const unsigned char zero[] = { 0, 0, 0, 0, 0, 0, 0, 1, 'x' };

	reset_sides();
	refused(v2, sizeof v2, "version 2");
	refused(big, sizeof big, "2 MB control frame");
	refused(junk, sizeof junk, "a header block that is not zlib");
	refused(zero, sizeof zero, "DATA on stream 0");
}

static void
test_reset_goaway(void)
{
	spdy_session *c = spdy_session_new(&cbs, &cl);
	spdy_session *s = spdy_session_new(&cbs, &sv);

	reset_sides();
	spdy_reset(c, 1, SPDY_CANCEL);
	spdy_goaway(c, 0);
	CHECK(deliver(s, &cl, 3) == 0);
	CHECK(sv.resets == 1);
	CHECK(sv.goaway == 1);
	spdy_session_free(c);
	spdy_session_free(s);
}

int
main(void)
{
	test_stream_and_data(1 << 20);
	test_stream_and_data(1);
	test_stream_and_data(7);
	test_big_data();
	test_refusals();
	test_reset_goaway();
	return check_result("test-spdy");
}
