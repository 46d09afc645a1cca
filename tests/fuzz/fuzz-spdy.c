/*
 * Fuzz target: SPDY/3.1 framing (net/spdy.c), what kubectl port-forward
 * sends and a hostile client could: any bytes, fed in pieces whose sizes
 * the input's first byte picks. The session either takes everything or
 * refuses with a cause and takes nothing more; a stream's data never
 * comes to more bytes than were fed; every header handed over is a
 * string; nothing leaks (ASan).
 */
#include <string.h>

#include "fuzz.h"
#include "net/spdy.h"

static size_t fed, delivered, sent;

static void
on_stream(void *arg, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin)
{
	int i;

	(void)arg;
	(void)fin;
	FUZZ_ASSERT(id != 0 && id <= 0x7fffffff);
	FUZZ_ASSERT(n >= 0 && n <= 1024);
	for (i = 0; i < n; i++)
		FUZZ_ASSERT(strlen(names[i]) + strlen(values[i]) < 256 * 1024);
}

static void
on_data(void *arg, uint32_t id, const char *data, size_t len, int fin)
{
	(void)arg;
	(void)data;
	(void)fin;
	FUZZ_ASSERT(id != 0);
	delivered += len;
}

static void
on_reset(void *arg, uint32_t id, uint32_t status)
{
	(void)arg;
	(void)id;
	(void)status;
}

static void
on_goaway(void *arg)
{
	(void)arg;
}

static void
on_send(void *arg, const char *data, size_t len)
{
	(void)arg;
	(void)data;
	sent += len;
}

static const struct spdy_callbacks cbs = { on_stream, on_data, on_reset,
    on_goaway, on_send };

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	spdy_session *s;
	size_t piece, off, k;
	char *cause = NULL;
	int r = 0;

	fuzz_quiet();
	if (size == 0)
		return 0;
	piece = (size_t)data[0] % 17 + 1;
	fed = delivered = sent = 0;
	s = spdy_session_new(&cbs, NULL);
	for (off = 1; off < size && r == 0; off += k) {
		k = size - off < piece ? size - off : piece;
		fed += k;
		r = spdy_session_feed(s, (const char *)data + off, k, &cause);
	}
	if (r != 0) {
		FUZZ_ASSERT(cause != NULL);
		free(cause);
		cause = NULL;
		/* Refused: nothing more is taken. */
		FUZZ_ASSERT(spdy_session_feed(s, "x", 1, &cause) == -1);
		free(cause);
	}
	FUZZ_ASSERT(delivered <= fed);
	/* A reply through the session's own compressor always works. */
	spdy_reply(s, 1, NULL, NULL, 0, 0);
	spdy_session_free(s);
	return 0;
}
