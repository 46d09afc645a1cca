/*
 * An HTTP client on the loop: libcurl's multi interface driven by libuv
 * (one uv_poll_t per socket, one uv_timer_t), for the daemon's outbound
 * calls: a remote API server's lists, watches and writes, and the Lua
 * controllers' volray.http. One client is one set of credentials (CA,
 * client certificate, bearer token) and one pool of kept-alive
 * connections; HTTPS requests to one server share a connection through
 * HTTP/2 when libcurl and the server both have it (HTTP/1.1 otherwise).
 *
 * Requests are asynchronous (hclient_start: the callbacks run on the
 * loop thread; one refused for now, 429 or a 5xx with Retry-After, is
 * made again after it, up to HCLIENT_RETRIES times) or, for a caller that
 * must have the answer before it goes on, synchronous (hclient_call_sync:
 * blocks the loop). Both take a token
 * from one rate limiter first (client-go's QPS and burst). A client is
 * used from the loop thread only.
 */
#ifndef VOLRAY_HCLIENT_H
#define VOLRAY_HCLIENT_H

#include <stddef.h>
#include <uv.h>

/* A response body larger than this fails the request, unless streamed. */
#define HCLIENT_MAX_BODY	(8u << 20)
/* Times an asynchronous request refused with 429 (or a 5xx with
   Retry-After) is made again, after Retry-After, as client-go does. */
#define HCLIENT_RETRIES	5
/* The timeout of a synchronous call that gives none. */
#define HCLIENT_SYNC_TIMEOUT_MS	30000u

typedef struct hclient hclient;
typedef struct hclient_req hclient_req;

/*
 * What every request of a client carries; all optional, copied by
 * hclient_new. PEM bytes (a kubeconfig's *-data, decoded) take
 * precedence over a file of the same role; with neither CA, the system's
 * CAs are trusted. Not only TLS: the bearer token, user agent and base
 * URL are the client's too.
 */
struct hclient_conf {
	const char	*base_url;	/* "https://host:6443": prefixes a
					   call's URL that starts with '/' */
	const char	*ca_file;
	const char	*ca_pem;
	size_t		 ca_pem_len;
	const char	*cert_file;	/* client certificate */
	const char	*cert_pem;
	size_t		 cert_pem_len;
	const char	*key_file;	/* its private key */
	const char	*key_pem;
	size_t		 key_pem_len;
	int		 insecure;	/* skip verifying the server */
	const char	*token;		/* "Authorization: Bearer" on every
					   request that sets none itself */
	const char	*user_agent;	/* NULL: no User-Agent header */
	int		(*open_socket)(int domain, int type, int protocol);
					/* NULL: socket(2); else makes every
					   connection's socket (the pod
					   network's, podnet_socket) */
};

/* One request; the client copies what it needs before hclient_start or
 * hclient_call_sync returns. */
struct hclient_call {
	const char	*method;	/* NULL: GET; HEAD reads no body */
	const char	*url;		/* absolute, or a path after base_url */
	const char	*body;		/* NULL: none */
	size_t		 body_len;
	const char	*content_type;	/* of body; NULL: libcurl's default */
	const char	*accept;	/* NULL: any */
	const char *const *headers;	/* more "Name: value" lines,
					   NULL-terminated; may be NULL */
	unsigned	 timeout_ms;	/* the whole exchange; 0: none
					   (a watch), or the sync default */
	const char	*flow;		/* the line it waits in when it
					   cannot start at once (say, a
					   namespace); lines take turns.
					   NULL: "" */
};

/*
 * Bytes of a streamed 2xx response as they arrive (a watch: the caller
 * splits lines). A response of another status is not streamed: its body
 * comes whole to on_done.
 */
typedef void (*hclient_data_fn)(void *arg, const char *p, size_t len);
/*
 * The request is over: status is the HTTP status (0 with err when the
 * transfer failed: no connection, a timeout, a body over the cap); body
 * is the whole body, NUL-terminated, unless it was streamed (then "", 0).
 * The request is freed when this returns.
 */
typedef void (*hclient_done_fn)(void *arg, long status, const char *body,
    size_t len, const char *err);

/* A client on loop; NULL with *cause when libcurl refuses. */
hclient *hclient_new(uv_loop_t *, const struct hclient_conf *, char **cause);
/*
 * A new client of the same server with the same credentials and user
 * agent, and connections, rate limiter and queue of its own (no limit
 * until hclient_set_rate); NULL if libcurl cannot make one.
 */
hclient *hclient_new_like(const hclient *);
/*
 * Cancel every request (no callback runs) and free; the loop's handles
 * close on the loop. Not from within one of the client's callbacks.
 */
void hclient_free(hclient *);
/*
 * The rate limiter: a token bucket refilled at qps a second holding at
 * most burst (client-go's QPS and Burst; it uses 5 and 10 by default, a
 * controller 50 and 100). qps <= 0: no limit, the default.
 */
void hclient_set_rate(hclient *, double qps, int burst);

/*
 * At most n requests running and n connections to one server, all kept
 * alive (0: no limit, libcurl's default). Over HTTP/1.1 a burst of
 * requests otherwise opens a connection each, every one a full TLS
 * handshake (and a parse of the CA) on both ends. Over the limit a
 * request waits in the client's queue, behind the rate limiter's, as
 * client-go's bounded workers wait: its timeout counts from when it runs.
 * A streamed request (a watch) holds a place for as long as it lasts.
 */
void hclient_set_max_connections(hclient *, int n);

/*
 * Start a request: on_data (NULL: collect the body) and on_done run on
 * the loop thread, never before this returns. A request waits for a rate
 * token first. NULL with *cause (malloc'd) when it cannot start.
 */
hclient_req *hclient_start(hclient *, const struct hclient_call *,
    hclient_data_fn on_data, hclient_done_fn on_done, void *arg,
    char **cause);
/*
 * Stop a request that has not finished; no callback runs for it after
 * this (a streamed connection closes, or its HTTP/2 stream is reset).
 * Allowed from any of the client's callbacks; a no-op from the request's
 * own on_done.
 */
void hclient_cancel(hclient_req *);
/*
 * A response header of a request, valid inside its callbacks (say,
 * Retry-After on a 429), or NULL.
 */
const char *hclient_req_header(hclient_req *, const char *name);
/* Requests started and not yet done, waiting ones included. */
int hclient_inflight(const hclient *);
/* What went through: requests handed to libcurl (a 429's retry is one
   more) and the seconds they spent in line before it, waiting for a
   token of the rate limit or a free connection. */
struct hclient_stats {
	uint64_t requests;
	double queued_s;
};
void hclient_stats(const hclient *, struct hclient_stats *);

/*
 * Make one request and wait for its answer. The cost: the calling thread
 * (the loop) blocks for the whole exchange, for a rate token first and
 * then up to the call's timeout (HCLIENT_SYNC_TIMEOUT_MS when 0), while
 * no other event is served; use it only where the caller cannot go on
 * without the answer (a controller's write), and prefer hclient_start.
 * It runs on its own handle, which keeps its connection alive from call
 * to call (HTTP/1.1 or HTTP/2, apart from the asynchronous requests'
 * connections; the DNS cache is shared). 0 with *status and the body
 * (malloc'd, NUL-terminated; the caller frees), or -1 with *cause
 * (malloc'd).
 */
int hclient_call_sync(hclient *, const struct hclient_call *, long *status,
    char **body, size_t *len, char **cause);

#endif
