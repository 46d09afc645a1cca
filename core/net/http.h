/*
 * HTTP/1.1 server on libuv with http-parser: keep-alive, pipelining (requests
 * on one connection are dispatched one at a time, in order), chunked request
 * bodies, fixed and chunked (streaming) responses, and the limits that keep a
 * bad client from hurting the daemon: headers over 64 KiB -> 431, bodies over
 * 3 MiB -> 413, a request that is not complete within 30 s -> 408 and close,
 * idle keep-alive connections closed after 5 minutes, at most 8192
 * connections.
 *
 * A handler may answer at once or later (after an fsync, say). A request stays
 * valid until it is answered with http_respond*() or, for a stream,
 * http_stream_end(); if the peer goes away first, the on_close callback runs
 * and the owner must still finish the request, which then only frees it.
 */
#ifndef VOLRAY_HTTP_H
#define VOLRAY_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "lib/rbuf.h"

typedef struct http_server http_server;
typedef struct tls_ctx tls_ctx;
typedef struct http_req http_req;

struct http_req {
	const char *method;      /* "GET", "POST", ... */
	const char *path;        /* percent-decoded, without the query */
	const char *query;       /* raw query string without '?', or "" */
	const char *body;        /* NUL-terminated; "" when none */
	size_t body_len;
	void *data;              /* free for the handler's use */
};

typedef void (*http_handler)(http_req *, void *arg);
typedef void (*http_close_cb)(http_req *, void *arg);

int http_server_listen(uv_loop_t *, const char *host, int port,
    http_handler, void *arg, http_server **out, char **cause);
/* Serve TLS on connections accepted from now on (the context is borrowed). */
void http_server_use_tls(http_server *, tls_ctx *);
/* Stop accepting; existing connections are closed. */
void http_server_close(http_server *);
/* Current number of open connections. */
int http_server_connections(const http_server *);
/* The port the server listens on (useful after binding port 0), or -1. */
int http_server_port(const http_server *);

/*
 * Limits, for tests and tuning: the time a request may take to arrive from
 * its first byte (also the time allowed before the first byte), the time a
 * keep-alive connection may sit idle, and the connection cap. They apply to
 * timers started afterwards.
 */
void http_set_timeouts(unsigned request_ms, unsigned idle_ms);
void http_set_max_connections(int);

/* Request header by case-insensitive name, or NULL. */
const char *http_req_header(const http_req *, const char *name);
/* The values of a repeated header in order, one a call: *pos starts at 0;
   NULL after the last (Impersonate-Group). */
const char *http_req_header_next(const http_req *, const char *name,
    size_t *pos);
/* Query parameter, percent-decoded, malloc'd; NULL when absent. */
char *http_query_get(const char *query, const char *key);
/* Every value of a repeated parameter, in order (NULL-terminated, NULL
 * when none; *n their number): kubectl exec's command=...&command=... */
char **http_query_all(const char *query, const char *key, int *n);
void http_query_all_free(char **);
/* A boolean parameter as kube-apiserver reads it: absent is def, "0" and
 * "false" (any case) are 0, anything else is 1. */
int http_query_bool(const char *query, const char *key, int def);
/* An int64 parameter as Go's strconv.ParseInt: 1 and *out set, 0 when
 * absent, -1 with Go's error text in *cause (malloc'd) when malformed. */
int http_query_int(const char *query, const char *key, long long *out,
    char **cause);

void http_respond(http_req *, int status, const char *content_type,
    const char *body, size_t len);
/* A JSON document (freed) as application/json. */
struct cJSON;
void http_respond_json(http_req *, int status, struct cJSON *body);
/* Like http_respond but sends a shared buffer (takes a reference). */
void http_respond_rbuf(http_req *, int status, const char *content_type,
    rbuf *body);

/* Begin a chunked response; then any number of writes; then end. */
void http_stream_begin(http_req *, int status, const char *content_type);
/* Queue a chunk (takes a reference); -1 when the connection is gone. */
int http_stream_write(http_req *, rbuf *chunk);
int http_stream_write_copy(http_req *, const char *data, size_t len);
/* Queue n chunks in one write (takes the references); -1 when gone. */
int http_stream_write_many(http_req *, rbuf **chunks, int n);
/* Bytes queued but not yet written to the socket. */
size_t http_stream_pending(const http_req *);
void http_stream_end(http_req *);
/*
 * Take the request's connection over for another protocol (WebSocket,
 * SPDY): answer 101 Switching Protocols with "Connection: Upgrade",
 * "Upgrade: protocol" and the headers added with http_req_add_header;
 * from then on the connection carries raw bytes both ways. on_data gets
 * the input (decrypted on TLS), starting with whatever followed the
 * request's head, possibly before http_upgrade returns; writes go with
 * http_stream_write*; http_req_on_close tells when the peer goes, and
 * http_stream_end finishes the request and closes the connection once
 * the bytes queued are out. Only for a request with no body.
 */
typedef void (*http_tunnel_cb)(http_req *, const char *data, size_t len,
    void *arg);
void http_upgrade(http_req *, const char *protocol, http_tunnel_cb on_data,
    void *arg);
/* Stop (1) or resume (0) reading an upgraded connection: backpressure. */
void http_tunnel_pause(http_req *, int paused);
/*
 * Called once when the request is finished (answered, or its stream
 * ended), whether or not the peer is still there.
 */
void http_req_on_done(http_req *, http_close_cb, void *arg);
/* One more response header (before the response starts); -1 if no room. */
int http_req_add_header(http_req *, const char *name, const char *value);
/* Called once if the peer closes before the request is finished. */
void http_req_on_close(http_req *, http_close_cb, void *arg);
/*
 * The verified client certificate's common name and organizations, or -1
 * when the connection is plain or the client sent no certificate.
 */
int http_req_client_cert(const http_req *, const char **cn,
    const char *const **orgs, int *norgs);
/* 1 when the connection has gone; the request must still be finished. */
int http_req_closed(const http_req *);

#endif
