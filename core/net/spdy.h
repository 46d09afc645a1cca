/*
 * SPDY/3.1 framing, the server's side, for kubectl port-forward (the
 * portforward.k8s.io streams after an "Upgrade: SPDY/3.1", or inside a
 * WebSocket): bytes in, callbacks out, frames out through a send
 * callback; no sockets here. Debian packages no SPDY library; header
 * blocks are compressed with zlib and SPDY/3's dictionary.
 *
 * Kept to what Go's spdystream (kubectl's side) uses: SYN_STREAM in,
 * SYN_REPLY, DATA (FIN), RST_STREAM, PING (answered here), GOAWAY;
 * SETTINGS, WINDOW_UPDATE, HEADERS and NOOP are read and ignored (Go's
 * side keeps no flow-control window, so none is kept here either).
 */
#ifndef VOLRAY_SPDY_H
#define VOLRAY_SPDY_H

#include <stddef.h>
#include <stdint.h>

#define SPDY_DICTIONARY_LEN	1423
extern const unsigned char spdy_dictionary[SPDY_DICTIONARY_LEN];

/* RST_STREAM status codes. */
#define SPDY_PROTOCOL_ERROR	1
#define SPDY_REFUSED_STREAM	3
#define SPDY_CANCEL		5

typedef struct spdy_session spdy_session;

struct spdy_callbacks {
	/* The peer opened stream id (SYN_STREAM) with these headers (names
	   as sent: lower case); fin: it will send nothing on it. */
	void (*on_stream)(void *arg, uint32_t id, const char *const *names,
	    const char *const *values, int n, int fin);
	/* Data on a stream, a piece of a DATA frame at a time; fin: the
	   peer has half-closed it. */
	void (*on_data)(void *arg, uint32_t id, const char *data, size_t len,
	    int fin);
	/* The peer reset the stream. */
	void (*on_reset)(void *arg, uint32_t id, uint32_t status);
	/* The peer is going away. */
	void (*on_goaway)(void *arg);
	/* Bytes for the peer; the callee copies or queues them. */
	void (*send)(void *arg, const char *data, size_t len);
};

spdy_session *spdy_session_new(const struct spdy_callbacks *, void *arg);
/*
 * Input from the peer, in any pieces. -1 with *cause (malloc'd) on a
 * protocol error: the caller sends nothing more and closes.
 */
int spdy_session_feed(spdy_session *, const char *data, size_t len,
    char **cause);
/* SYN_REPLY to stream id with n headers (n 0: none). */
void spdy_reply(spdy_session *, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin);
/* SYN_STREAM (a client's first frame; tests, tools). */
void spdy_open(spdy_session *, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin);
/* DATA on stream id, split into frames of at most 64 KiB; fin ends our
   side (len may be 0). */
void spdy_data(spdy_session *, uint32_t id, const char *data, size_t len,
    int fin);
void spdy_reset(spdy_session *, uint32_t id, uint32_t status);
void spdy_ping(spdy_session *, uint32_t id);
void spdy_goaway(spdy_session *, uint32_t status);
void spdy_session_free(spdy_session *);

#endif
