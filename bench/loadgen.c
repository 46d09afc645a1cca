/*
 * loadgen: an HTTP/1.1 load generator for volray's benchmarks.
 *
 * One thread, one epoll set, non-blocking keep-alive sockets. Client
 * connections each carry one request at a time (closed loop): when a
 * response has been read completely its latency goes into a histogram and
 * the connection sends the next request, until the shared request count
 * runs out. Watch connections are long-lived streams; their chunked bodies
 * are de-chunked as they arrive and split into lines in place, and each
 * event line yields the send timestamp that the writer put into the object
 * (CLOCK_MONOTONIC nanoseconds in data.ts), so delivery latency is measured
 * from the moment the update was sent to the moment the event was read.
 *
 * Modes:
 *   create  POST N ConfigMaps of SIZE bytes over C connections to a
 *           Kubernetes collection URL.
 *   etcd    the same object bytes, base64-encoded, as N puts to etcd's
 *           JSON gateway (/v3/kv/put) under /registry/configmaps/default/.
 *   watch   pre-create K objects, open W watches on the collection from the
 *           revision of a list, then send U updates (PUT, or etcd puts with
 *           --etcd and watches through /v3/watch) over C writer connections.
 *
 * Latencies go into a log-linear histogram (128 sub-buckets per power of
 * two, under 1% error), so memory does not grow with the event count.
 * Output is human-readable lines and one final "RESULT key=value ..." line
 * for scripts. The exit status is non-zero if any request failed, any
 * answer was not 2xx or any watch event went missing.
 *
 *   handshake  N new connections one after another, each a full
 *           connection set-up (TCP, and TLS for https://) and one GET of
 *           URL with Connection: close: the set-up rate.
 *
 * https:// URLs speak TLS (OpenSSL) with the CA of --cacert; the handshake
 * happens in the connect, blocking, before the socket joins the epoll set.
 *
 * Build (libc and OpenSSL):
 *   cc -O2 -Wall -o bench/loadgen bench/loadgen.c -lssl -lcrypto
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define IN_CLIENT	(16 * 1024)	/* initial input buffer, clients */
#define IN_WATCH	(64 * 1024)	/* input buffer, watchers */
#define MAX_HEAD	(64 * 1024)
#define TS_DIGITS	20
#define HIST_SUB	128
#define HIST_BITS	7
#define HIST_N		((64 - HIST_BITS + 1) * HIST_SUB)
#define ETCD_PREFIX	"/registry/configmaps/default/"

enum mode { M_CREATE, M_ETCD, M_WATCH, M_HANDSHAKE };
enum role { R_CLIENT, R_WATCH };
enum phase { P_PRECREATE, P_UPDATE };

/* Response parser states. */
enum rstate {
	S_HEAD,		/* waiting for the blank line */
	S_LEN,		/* Content-Length body */
	S_CSIZE,	/* chunk-size line */
	S_CDATA,	/* chunk data */
	S_CCRLF,	/* CRLF after chunk data */
	S_TRAILER,	/* trailer lines after the last chunk */
	S_RAW		/* no framing: body runs to EOF */
};

struct hist {
	uint64_t	 count;
	uint64_t	 max;
	long double	 sum;
	uint32_t	 b[HIST_N];
};

struct conn {
	int		 fd;
	SSL		*ssl;		/* NULL for plain HTTP */
	enum role	 role;
	int		 dead;

	char		*out;		/* pending request bytes */
	size_t		 outlen;
	size_t		 outoff;
	size_t		 outcap;
	int		 wantout;	/* EPOLLOUT registered */

	char		*in;		/* unparsed input */
	size_t		 inlen;
	size_t		 incap;

	enum rstate	 st;
	int		 status;
	int		 chunked;
	int		 haslen;
	size_t		 remain;

	int		 busy;		/* a request is outstanding */
	uint64_t	 t_send;

	char		*line;		/* partial event line */
	size_t		 linelen;
	size_t		 linecap;
	int		 ready;		/* watch established */
	uint64_t	 events;
	uint64_t	 now;		/* time of the last read */
};

static struct {
	enum mode	 mode;
	int		 etcd;		/* watch mode against etcd */
	char		 host[256];
	char		 port[16];
	char		 path[1024];	/* collection path, or etcd base */
	char		 etcd_put[64];
	char		 etcd_watch[64];
	uint64_t	 n;		/* requests (create/etcd) */
	int		 c;		/* client connections */
	int		 w;		/* watchers */
	uint64_t	 u;		/* updates */
	uint64_t	 k;		/* objects updated in turn */
	size_t		 size;
	char		 prefix[64];
	char		 header[1024];	/* -H: one more header line, with CRLF */
	int		 tls;		/* https:// */
	const char	*cacert;
	SSL_CTX		*ssl_ctx;
	int		 timeout;	/* whole run, seconds */
	int		 idle;		/* watch: give up after this much quiet */
	int		 verbose;
	double		 rate;		/* requests per second, 0: closed loop */

	struct sockaddr_storage addr;
	socklen_t	 addrlen;
	struct sockaddr_storage addr2;	/* --watch-url: every other watcher */
	socklen_t	 addrlen2;
	int		 use2;		/* dial addr2 */
	int		 epfd;

	enum phase	 phase;
	uint64_t	 next;		/* next request index */
	uint64_t	 t_phase;	/* start of the phase, for pacing */
	uint64_t	 total;		/* requests in this phase */
	uint64_t	 done;
	uint64_t	 non2xx;
	uint64_t	 errors;
	int		 first_bad;	/* status of the first non-2xx */
	char		 bad_body[256];

	struct hist	 lat;		/* request latency */
	struct hist	 dlat;		/* event delivery latency */
	uint64_t	 delivered;
	uint64_t	 last_event;
	uint64_t	 watch_closed;
	uint64_t	 watch_errors;
	uint64_t	 bad_lines;

	char		*pad;		/* filler for object bodies */
	char		*scratch;
	char		*b64;
} g;

static uint64_t
now_ns(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "loadgen: ");
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

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL)
		die("out of memory");
	return (p);
}

/* Map a value to its histogram bucket: exact below 2^8, then 128 per octave. */
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
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

static uint64_t
hist_quantile(const struct hist *h, double q)
{
	uint64_t	want, seen = 0;
	unsigned	i;

	if (h->count == 0)
		return (0);
	want = (uint64_t)(q * h->count);
	if (want >= h->count)
		want = h->count - 1;
	for (i = 0; i < HIST_N; i++) {
		seen += h->b[i];
		if (seen > want) {
			uint64_t	v = hist_value(i);
			return (v > h->max ? h->max : v);
		}
	}
	return (h->max);
}

static double
ms(uint64_t ns)
{
	return (ns / 1e6);
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

/* Decode whole quads of base64 from src (at most n chars); returns bytes. */
static size_t
b64_decode(unsigned char *dst, const char *src, size_t n)
{
	size_t	i, o = 0;
	int	a, b, c, d;

	for (i = 0; i + 3 < n; i += 4) {
		a = b64_val(src[i]);
		b = b64_val(src[i + 1]);
		c = b64_val(src[i + 2]);
		d = b64_val(src[i + 3]);
		if (a < 0 || b < 0)
			break;
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

/*
 * Write the object for name into buf: a ConfigMap whose data.ts comes first
 * (so watchers find it early in the line) and whose data.pad brings the
 * whole to exactly g.size bytes, whatever the name.
 */
static size_t
object_build(char *buf, const char *name, uint64_t ts)
{
	size_t	n, padlen;

	n = sprintf(buf, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	    "\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"loadgen\"}},"
	    "\"data\":{\"ts\":\"%0*llu\",\"pad\":\"", name, TS_DIGITS,
	    (unsigned long long)ts);
	padlen = g.size > n + 3 ? g.size - n - 3 : 1;
	memcpy(buf + n, g.pad, padlen);
	n += padlen;
	memcpy(buf + n, "\"}}", 3);
	n += 3;
	buf[n] = '\0';
	return (n);
}

static void
name_of(char *buf, size_t len, uint64_t i)
{
	snprintf(buf, len, "%s-%08llu", g.prefix, (unsigned long long)i);
}

/* Make room for n more bytes of request in c->out. */
static char *
out_reserve(struct conn *c, size_t n)
{
	if (c->outlen + n + 1 > c->outcap) {
		c->outcap = c->outlen + n + 1024;
		c->out = xrealloc(c->out, c->outcap);
	}
	return (c->out + c->outlen);
}

static void
out_printf(struct conn *c, const char *fmt, ...)
{
	va_list	ap;
	int	n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	out_reserve(c, n);
	va_start(ap, fmt);
	vsnprintf(c->out + c->outlen, n + 1, fmt, ap);
	va_end(ap);
	c->outlen += n;
}

static void
out_request(struct conn *c, const char *method, const char *path,
    const char *body, size_t blen)
{
	out_printf(c, "%s %s HTTP/1.1\r\nHost: %s:%s\r\n%s"
	    "Content-Type: application/json\r\nAccept: application/json\r\n"
	    "Content-Length: %zu\r\n\r\n", method, path, g.host, g.port,
	    g.header, blen);
	memcpy(out_reserve(c, blen), body, blen);
	c->outlen += blen;
}

/*
 * Queue request number i of the current phase on c: a create (POST or etcd
 * put of a new key) in the create modes and while pre-creating, an update
 * (PUT or etcd put of key i % K) in the update phase of watch mode.
 */
static void
request_build(struct conn *c, uint64_t i)
{
	char	 name[128], path[2048], *obj = g.scratch, *body;
	size_t	 olen, klen;
	int	 etcd = g.mode == M_ETCD || g.etcd;
	int	 update = g.mode == M_WATCH && g.phase == P_UPDATE;

	name_of(name, sizeof name, update ? i % g.k : i);
	c->t_send = now_ns();
	olen = object_build(obj, name, c->t_send);
	c->outlen = c->outoff = 0;
	if (!etcd) {
		if (update) {
			snprintf(path, sizeof path, "%s/%s", g.path, name);
			out_request(c, "PUT", path, obj, olen);
		} else
			out_request(c, "POST", g.path, obj, olen);
		return;
	}
	snprintf(path, sizeof path, "%s%s", ETCD_PREFIX, name);
	klen = strlen(path);
	body = g.b64;
	memcpy(body, "{\"key\":\"", 8);
	olen = 8 + b64_encode(body + 8, (unsigned char *)path, klen);
	memcpy(body + olen, "\",\"value\":\"", 11);
	olen += 11;
	olen += b64_encode(body + olen, (unsigned char *)obj, strlen(obj));
	memcpy(body + olen, "\"}", 3);
	olen += 2;
	snprintf(path, sizeof path, "%s%s", g.path, g.etcd_put);
	out_request(c, "POST", path, body, olen);
}

static void
conn_events(struct conn *c, uint32_t ev)
{
	struct epoll_event	e;

	memset(&e, 0, sizeof e);
	e.events = ev;
	e.data.ptr = c;
	if (epoll_ctl(g.epfd, EPOLL_CTL_MOD, c->fd, &e) != 0)
		die("epoll_ctl: %s", strerror(errno));
}

static void
conn_kill(struct conn *c, const char *why)
{
	if (c->dead)
		return;
	if (g.verbose)
		fprintf(stderr, "loadgen: connection closed: %s\n", why);
	epoll_ctl(g.epfd, EPOLL_CTL_DEL, c->fd, NULL);
	if (c->ssl != NULL) {
		SSL_free(c->ssl);
		c->ssl = NULL;
	}
	close(c->fd);
	c->dead = 1;
	if (c->role == R_WATCH)
		g.watch_closed++;
	else if (c->busy) {
		g.errors++;
		g.done++;
		c->busy = 0;
	}
}

/*
 * Plain or TLS I/O with write(2)/read(2)'s conventions: -1 and EAGAIN when
 * the socket would block, 0 for end of file.
 */
static ssize_t
io_write(struct conn *c, const void *p, size_t n)
{
	int r, e;

	if (c->ssl == NULL)
		return (write(c->fd, p, n));
	r = SSL_write(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
	if (r > 0)
		return (r);
	e = SSL_get_error(c->ssl, r);
	errno = e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ ?
	    EAGAIN : EPROTO;
	ERR_clear_error();
	return (-1);
}

static ssize_t
io_read(struct conn *c, void *p, size_t n)
{
	int r, e;

	if (c->ssl == NULL)
		return (read(c->fd, p, n));
	r = SSL_read(c->ssl, p, n > INT32_MAX ? INT32_MAX : (int)n);
	if (r > 0)
		return (r);
	e = SSL_get_error(c->ssl, r);
	ERR_clear_error();
	if (e == SSL_ERROR_ZERO_RETURN)
		return (0);
	errno = e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ?
	    EAGAIN : EPROTO;
	return (-1);
}

/* A blocking connect to the target, with the TLS handshake for https. */
static int
dial(SSL **sslp)
{
	int fd, one = 1;
	SSL *ssl;

	struct sockaddr_storage *a = g.use2 ? &g.addr2 : &g.addr;

	fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)a, g.use2 ? g.addrlen2 :
	    g.addrlen) != 0)
		die("connect %s:%s: %s", g.host, g.port, strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	*sslp = NULL;
	if (!g.tls)
		return (fd);
	if ((ssl = SSL_new(g.ssl_ctx)) == NULL)
		die("SSL_new");
	SSL_set_fd(ssl, fd);
	SSL_set_tlsext_host_name(ssl, g.host);
	SSL_set1_host(ssl, g.host);
	if (SSL_connect(ssl) != 1) {
		char buf[256];

		ERR_error_string_n(ERR_get_error(), buf, sizeof buf);
		die("TLS handshake with %s:%s: %s", g.host, g.port, buf);
	}
	*sslp = ssl;
	return (fd);
}

/* Write what is pending; arm EPOLLOUT only while the socket is full. */
static void
conn_flush(struct conn *c)
{
	ssize_t	n;

	while (c->outoff < c->outlen) {
		n = io_write(c, c->out + c->outoff, c->outlen - c->outoff);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				if (!c->wantout) {
					conn_events(c, EPOLLIN | EPOLLOUT);
					c->wantout = 1;
				}
				return;
			}
			conn_kill(c, strerror(errno));
			return;
		}
		c->outoff += n;
	}
	if (c->wantout) {
		conn_events(c, EPOLLIN);
		c->wantout = 0;
	}
}

static struct conn *
conn_open(enum role role)
{
	struct conn		*c;
	struct epoll_event	 e;
	SSL			*ssl;
	int			 fd;

	fd = dial(&ssl);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

	c = calloc(1, sizeof *c);
	if (c == NULL)
		die("out of memory");
	c->fd = fd;
	c->ssl = ssl;
	c->role = role;
	c->incap = role == R_WATCH ? IN_WATCH : IN_CLIENT;
	c->in = xmalloc(c->incap);
	c->st = S_HEAD;

	memset(&e, 0, sizeof e);
	e.events = EPOLLIN;
	e.data.ptr = c;
	if (epoll_ctl(g.epfd, EPOLL_CTL_ADD, fd, &e) != 0)
		die("epoll_ctl: %s", strerror(errno));
	return (c);
}

/*
 * Start the next request of the phase on c, if there is one left and, with
 * a rate, if its turn has come (request i is due at i / rate seconds).
 */
static void
client_next(struct conn *c)
{
	if (c->dead || c->busy || g.next >= g.total)
		return;
	if (g.rate > 0 && now_ns() < g.t_phase + (uint64_t)(g.next * 1e9 /
	    g.rate))
		return;
	request_build(c, g.next++);
	c->busy = 1;
	conn_flush(c);
}

static void
client_done(struct conn *c)
{
	uint64_t	t = now_ns();

	if (c->status < 200 || c->status > 299) {
		if (g.non2xx++ == 0)
			g.first_bad = c->status;
	}
	if (g.phase != P_PRECREATE || g.mode != M_WATCH)
		hist_add(&g.lat, t - c->t_send);
	c->busy = 0;
	g.done++;
	client_next(c);
}

/* Pull the TS_DIGITS-digit nanosecond timestamp that follows "ts":" in p. */
static int
ts_parse(const char *p, size_t n, uint64_t *ts)
{
	const char	*q;
	uint64_t	 v = 0;
	int		 digits = 0;

	q = memmem(p, n, "\"ts\":\"", 6);
	if (q == NULL)
		return (-1);
	q += 6;
	n -= q - p;
	while (n > 0 && *q >= '0' && *q <= '9') {
		v = v * 10 + (*q - '0');
		q++;
		n--;
		digits++;
	}
	if (digits != TS_DIGITS)
		return (-1);	/* cut short: the caller decoded too little */
	*ts = v;
	return (0);
}

static void
event_seen(struct conn *c, uint64_t ts)
{
	c->events++;
	g.delivered++;
	g.last_event = c->now;
	hist_add(&g.dlat, c->now > ts ? c->now - ts : 0);
}

/* One complete line of a watch stream. */
static void
watch_line(struct conn *c, const char *p, size_t n)
{
	const char	*v, *end = p + n;
	unsigned char	 dec[512];
	uint64_t	 ts;
	size_t		 dn, len;

	if (n == 0)
		return;
	if (!g.etcd) {
		if (n > 16 && memcmp(p, "{\"type\":\"ERROR\"", 15) == 0) {
			g.watch_errors++;
			return;
		}
		if (ts_parse(p, n, &ts) == 0)
			event_seen(c, ts);
		else if (memmem(p, n, "\"BOOKMARK\"", 10) == NULL)
			g.bad_lines++;
		return;
	}

	/* etcd: {"result":{"header":...,"created":true}} or events[].kv. */
	if (!c->ready && memmem(p, n, "\"created\":true", 14) != NULL) {
		c->ready = 1;
		return;
	}
	if (memmem(p, n, "\"canceled\":true", 15) != NULL ||
	    memmem(p, n, "\"error\"", 7) != NULL) {
		g.watch_errors++;
		return;
	}
	for (v = p; (v = memmem(v, end - v, "\"value\":\"", 9)) != NULL;) {
		v += 9;
		len = end - v;
		if (len > 4 * sizeof dec / 3)
			len = 4 * sizeof dec / 3;
		dn = b64_decode(dec, v, len & ~3UL);
		if (ts_parse((char *)dec, dn, &ts) == 0)
			event_seen(c, ts);
		else
			g.bad_lines++;
	}
}

/* Split de-chunked watch data into lines, copying only a partial tail. */
static void
watch_data(struct conn *c, const char *p, size_t n)
{
	const char	*nl;
	size_t		 k;

	while (n > 0) {
		nl = memchr(p, '\n', n);
		k = nl == NULL ? n : (size_t)(nl - p);
		if (nl == NULL || c->linelen > 0) {
			if (c->linelen + k > c->linecap) {
				c->linecap = (c->linelen + k) * 2 + 256;
				c->line = xrealloc(c->line, c->linecap);
			}
			memcpy(c->line + c->linelen, p, k);
			c->linelen += k;
			if (nl == NULL)
				return;
			watch_line(c, c->line, c->linelen);
			c->linelen = 0;
		} else
			watch_line(c, p, k);
		p += k + 1;
		n -= k + 1;
	}
}

static void
body_data(struct conn *c, const char *p, size_t n)
{
	if (c->role == R_WATCH)
		watch_data(c, p, n);
	else if (c->status >= 300 && g.bad_body[0] == '\0') {
		if (n >= sizeof g.bad_body)
			n = sizeof g.bad_body - 1;
		memcpy(g.bad_body, p, n);
		g.bad_body[n] = '\0';
	}
}

/* Parse the status line and the framing headers; -1 if malformed. */
static int
head_parse(struct conn *c, const char *p, size_t n)
{
	const char	*line, *end = p + n, *eol;

	if (n < 12 || strncmp(p, "HTTP/1.", 7) != 0)
		return (-1);
	c->status = atoi(p + 9);
	c->chunked = c->haslen = 0;
	c->remain = 0;
	for (line = memchr(p, '\n', n); line != NULL && line < end; line = eol) {
		line++;
		eol = memchr(line, '\n', end - line);
		if (eol == NULL)
			eol = end;
		if (strncasecmp(line, "Content-Length:", 15) == 0) {
			c->haslen = 1;
			c->remain = strtoull(line + 15, NULL, 10);
		} else if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 &&
		    memmem(line, eol - line, "chunked", 7) != NULL)
			c->chunked = 1;
	}
	return (0);
}

/*
 * Run the response state machine over c->in. A complete response on a
 * client connection calls client_done; a watch connection stays in its
 * body for good. Unconsumed bytes (a partial header or chunk-size line)
 * are moved to the front of the buffer. Returns -1 on a protocol error.
 */
static int
conn_parse(struct conn *c)
{
	char	*p = c->in, *end = c->in + c->inlen, *q;
	size_t	 k;

	for (;;) {
		switch (c->st) {
		case S_HEAD:
			q = memmem(p, end - p, "\r\n\r\n", 4);
			if (q == NULL) {
				if (end - p > MAX_HEAD)
					return (-1);
				goto out;
			}
			if (head_parse(c, p, q + 2 - p) != 0)
				return (-1);
			p = q + 4;
			if (c->role == R_WATCH) {
				if (c->status != 200)
					return (-1);
				if (!g.etcd)
					c->ready = 1;
			}
			if (c->chunked)
				c->st = S_CSIZE;
			else if (c->haslen)
				c->st = S_LEN;
			else if (c->role == R_WATCH)
				c->st = S_RAW;
			else {
				client_done(c);
				continue;
			}
			if (c->st == S_LEN && c->remain == 0) {
				c->st = S_HEAD;
				client_done(c);
			}
			break;
		case S_LEN:
		case S_CDATA:
			if (p == end)
				goto out;
			k = end - p;
			if (k > c->remain)
				k = c->remain;
			body_data(c, p, k);
			p += k;
			c->remain -= k;
			if (c->remain > 0)
				goto out;
			if (c->st == S_CDATA)
				c->st = S_CCRLF;
			else {
				c->st = S_HEAD;
				client_done(c);
			}
			break;
		case S_CSIZE:
			q = memchr(p, '\n', end - p);
			if (q == NULL)
				goto out;
			c->remain = strtoull(p, NULL, 16);
			p = q + 1;
			c->st = c->remain == 0 ? S_TRAILER : S_CDATA;
			break;
		case S_CCRLF:
			if (end - p < 2)
				goto out;
			p += 2;
			c->st = S_CSIZE;
			break;
		case S_TRAILER:
			q = memchr(p, '\n', end - p);
			if (q == NULL)
				goto out;
			k = q - p;
			p = q + 1;
			if (k <= 1) {
				c->st = S_HEAD;
				if (c->role == R_WATCH)
					return (-1);	/* stream ended */
				client_done(c);
			}
			break;
		case S_RAW:
			body_data(c, p, end - p);
			p = end;
			goto out;
		}
	}
out:
	if (p != c->in) {
		c->inlen = end - p;
		memmove(c->in, p, c->inlen);
	}
	return (0);
}

/*
 * Read what has arrived. A TLS session may hold decrypted bytes that epoll
 * cannot see, so with TLS this reads until the session would block.
 */
static void
conn_read(struct conn *c)
{
	ssize_t	n;

	do {
		if (c->incap - c->inlen < 4096) {
			c->incap *= 2;
			c->in = xrealloc(c->in, c->incap);
		}
		n = io_read(c, c->in + c->inlen, c->incap - c->inlen);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			conn_kill(c, strerror(errno));
			return;
		}
		if (n == 0) {
			conn_kill(c, "end of file");
			return;
		}
		c->inlen += n;
		c->now = now_ns();
		if (conn_parse(c) != 0) {
			conn_kill(c, "protocol error or stream ended");
			return;
		}
	} while (c->ssl != NULL && !c->dead);
}

/* Wait for events for at most ms milliseconds and dispatch them. */
static void
loop_once(int timeout)
{
	struct epoll_event	ev[512];
	struct conn		*c;
	int			 i, n;

	n = epoll_wait(g.epfd, ev, 512, timeout);
	if (n < 0) {
		if (errno == EINTR)
			return;
		die("epoll_wait: %s", strerror(errno));
	}
	for (i = 0; i < n; i++) {
		c = ev[i].data.ptr;
		if (c->dead)
			continue;
		if (ev[i].events & EPOLLOUT)
			conn_flush(c);
		if (!c->dead && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
			conn_read(c);
	}
}

static void
check_deadline(uint64_t start)
{
	if (now_ns() - start > (uint64_t)g.timeout * 1000000000ULL)
		die("run took longer than --timeout=%d s; giving up", g.timeout);
}

/* Issue total requests over the client connections and wait for them. */
static double
run_requests(struct conn **cl, int nc, uint64_t total, uint64_t start)
{
	uint64_t	t0;
	int		i;

	g.next = g.done = 0;
	g.total = total;
	g.t_phase = t0 = now_ns();
	for (i = 0; i < nc; i++)
		client_next(cl[i]);
	while (g.done < g.total) {
		for (i = 0; i < nc && cl[i]->dead; i++)
			;
		if (i == nc)
			die("every client connection was closed (%llu errors)",
			    (unsigned long long)g.errors);
		loop_once(g.rate > 0 ? 1 : 100);
		if (g.rate > 0)
			for (i = 0; i < nc; i++)
				client_next(cl[i]);
		check_deadline(start);
	}
	return ((now_ns() - t0) / 1e9);
}

/* The address of a second server, http://host:port, for --watch-url. */
static void
url_parse_second(const char *url)
{
	char		 host[256], port[16];
	const char	*p = strstr(url, "://"), *end, *colon;
	struct addrinfo	 hints, *ai;
	int		 e;

	p = p != NULL ? p + 3 : url;
	end = p + strcspn(p, "/");
	colon = memchr(p, ':', end - p);
	if (colon == NULL)
		die("--watch-url: host:port wanted: %s", url);
	snprintf(host, sizeof host, "%.*s", (int)(colon - p), p);
	snprintf(port, sizeof port, "%.*s", (int)(end - colon - 1), colon + 1);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(host, port, &hints, &ai)) != 0)
		die("%s: %s", host, gai_strerror(e));
	memcpy(&g.addr2, ai->ai_addr, ai->ai_addrlen);
	g.addrlen2 = ai->ai_addrlen;
	freeaddrinfo(ai);
}

/* Split http://host:port/path into g.host, g.port and g.path. */
static void
url_parse(const char *url)
{
	const char	*p = url, *slash, *colon;
	struct addrinfo	 hints, *ai;
	int		 e;

	if (strncmp(p, "https://", 8) == 0) {
		g.tls = 1;
		p += 8;
	} else if (strncmp(p, "http://", 7) == 0)
		p += 7;
	else
		die("only http:// and https:// URLs: %s", url);
	slash = strchr(p, '/');
	if (slash == NULL)
		slash = p + strlen(p);
	colon = memchr(p, ':', slash - p);
	if (colon == NULL) {
		snprintf(g.host, sizeof g.host, "%.*s", (int)(slash - p), p);
		strcpy(g.port, g.tls ? "443" : "80");
	} else {
		snprintf(g.host, sizeof g.host, "%.*s", (int)(colon - p), p);
		snprintf(g.port, sizeof g.port, "%.*s",
		    (int)(slash - colon - 1), colon + 1);
	}
	snprintf(g.path, sizeof g.path, "%s", slash);
	while (g.path[0] != '\0' && g.path[strlen(g.path) - 1] == '/')
		g.path[strlen(g.path) - 1] = '\0';

	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if ((e = getaddrinfo(g.host, g.port, &hints, &ai)) != 0)
		die("%s: %s", g.host, gai_strerror(e));
	memcpy(&g.addr, ai->ai_addr, ai->ai_addrlen);
	g.addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
}

/*
 * One blocking GET with Connection: close; returns the body (malloc'd) or
 * NULL if the answer was not 200.
 */
static char *
http_get(const char *path)
{
	struct conn	 c;
	char		*buf, *body;
	size_t		 len = 0, cap = 65536;
	ssize_t		 n;

	memset(&c, 0, sizeof c);
	c.fd = dial(&c.ssl);
	buf = xmalloc(cap);
	n = snprintf(buf, cap, "GET %s HTTP/1.1\r\nHost: %s:%s\r\n%s"
	    "Accept: application/json\r\nConnection: close\r\n\r\n", path,
	    g.host, g.port, g.header);
	if (io_write(&c, buf, n) != n)
		die("write: %s", strerror(errno));
	while ((n = io_read(&c, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096)
			buf = xrealloc(buf, cap *= 2);
	}
	SSL_free(c.ssl);
	close(c.fd);
	buf[len] = '\0';
	if (len < 12 || atoi(buf + 9) != 200) {
		free(buf);
		return (NULL);
	}
	body = strstr(buf, "\r\n\r\n");
	body = strdup(body != NULL ? body + 4 : "");
	free(buf);
	return (body);
}

static void
print_requests(const char *what, double secs, uint64_t total)
{
	printf("%s: %llu requests in %.3f s over %d connections: "
	    "%.0f req/s\n", what, (unsigned long long)total, secs, g.c,
	    total / secs);
	printf("  latency p50 %.3f ms  p99 %.3f ms  max %.3f ms  "
	    "mean %.3f ms\n", ms(hist_quantile(&g.lat, 0.50)),
	    ms(hist_quantile(&g.lat, 0.99)), ms(g.lat.max),
	    g.lat.count ? ms(g.lat.sum / g.lat.count) : 0.0);
	printf("  non-2xx %llu  errors %llu\n", (unsigned long long)g.non2xx,
	    (unsigned long long)g.errors);
	if (g.non2xx > 0)
		printf("  first non-2xx: %d %s\n", g.first_bad, g.bad_body);
}

static int
run_create(void)
{
	struct conn	**cl;
	uint64_t	  start = now_ns();
	double		  secs;
	int		  i;

	cl = xmalloc(g.c * sizeof *cl);
	for (i = 0; i < g.c; i++)
		cl[i] = conn_open(R_CLIENT);
	g.phase = P_UPDATE;
	secs = run_requests(cl, g.c, g.n, start);
	print_requests(g.mode == M_ETCD ? "etcd put" : "create", secs, g.n);
	printf("RESULT mode=%s clients=%d requests=%llu size=%zu "
	    "seconds=%.3f rps=%.1f p50_ms=%.3f p99_ms=%.3f max_ms=%.3f "
	    "non2xx=%llu errors=%llu\n", g.mode == M_ETCD ? "etcd" : "create",
	    g.c, (unsigned long long)g.n, g.size, secs, g.n / secs,
	    ms(hist_quantile(&g.lat, 0.50)), ms(hist_quantile(&g.lat, 0.99)),
	    ms(g.lat.max), (unsigned long long)g.non2xx,
	    (unsigned long long)g.errors);
	return (g.non2xx > 0 || g.errors > 0);
}

/*
 * Connection set-up: n new connections in a row, each connect (and TLS
 * handshake), one GET, the answer, close. Any answer that is not 2xx
 * counts as a failure.
 */
static int
run_handshake(void)
{
	uint64_t	 start = now_ns(), t;
	double		 secs;
	uint64_t	 i, bad = 0;
	char		*body;

	for (i = 0; i < g.n; i++) {
		t = now_ns();
		if ((body = http_get(g.path[0] ? g.path : "/")) == NULL)
			bad++;
		free(body);
		hist_add(&g.lat, now_ns() - t);
		check_deadline(start);
	}
	secs = (now_ns() - start) / 1e9;
	printf("%s: %llu connections in %.3f s: %.0f conn/s\n",
	    g.tls ? "TLS connect + GET" : "TCP connect + GET",
	    (unsigned long long)g.n, secs, g.n / secs);
	printf("  latency p50 %.3f ms  p99 %.3f ms  failed %llu\n",
	    ms(hist_quantile(&g.lat, 0.50)), ms(hist_quantile(&g.lat, 0.99)),
	    (unsigned long long)bad);
	printf("RESULT mode=handshake tls=%d connections=%llu seconds=%.3f "
	    "cps=%.1f p50_ms=%.3f p99_ms=%.3f failed=%llu\n", g.tls,
	    (unsigned long long)g.n, secs, g.n / secs,
	    ms(hist_quantile(&g.lat, 0.50)), ms(hist_quantile(&g.lat, 0.99)),
	    (unsigned long long)bad);
	return (bad > 0);
}

/* The revision to start watching from: the list's metadata.resourceVersion. */
static char *
list_revision(void)
{
	char		 path[2048], *body, *p, *rv;

	snprintf(path, sizeof path, "%s?limit=1", g.path);
	if ((body = http_get(path)) == NULL)
		die("list %s failed", path);
	p = strstr(body, "\"resourceVersion\":\"");
	if (p == NULL)
		die("list has no resourceVersion");
	p += 19;
	rv = strndup(p, strcspn(p, "\""));
	free(body);
	return (rv);
}

static void
watch_start(struct conn *c, const char *rev)
{
	char	path[2048], body[1024], key[256], end[256];
	size_t	n;

	c->outlen = c->outoff = 0;
	if (!g.etcd) {
		snprintf(path, sizeof path, "%s?watch=true&resourceVersion=%s",
		    g.path, rev);
		out_printf(c, "GET %s HTTP/1.1\r\nHost: %s:%s\r\n%s"
		    "Accept: application/json\r\n\r\n", path, g.host, g.port,
		    g.header);
	} else {
		/* The range [prefix, prefix with its last byte + 1). */
		snprintf(path, sizeof path, "%s%s-", ETCD_PREFIX, g.prefix);
		n = strlen(path);
		b64_encode(key, (unsigned char *)path, n);
		path[n - 1]++;
		b64_encode(end, (unsigned char *)path, n);
		n = snprintf(body, sizeof body, "{\"create_request\":"
		    "{\"key\":\"%s\",\"range_end\":\"%s\"}}", key, end);
		snprintf(path, sizeof path, "%s%s", g.path, g.etcd_watch);
		out_request(c, "POST", path, body, n);
	}
	conn_flush(c);
}

static int
run_watch(void)
{
	struct conn	**cl, **wl;
	uint64_t	  start = now_ns(), t0, t_updates, expect, t;
	double		  secs, esecs, rate;
	char		 *rev = NULL;
	int		  i, ready, missing_watchers = 0;

	cl = xmalloc(g.c * sizeof *cl);
	wl = xmalloc(g.w * sizeof *wl);
	for (i = 0; i < g.c; i++)
		cl[i] = conn_open(R_CLIENT);

	/* Objects to update (unpaced), then the revision to watch from. */
	g.phase = P_PRECREATE;
	rate = g.rate;
	g.rate = 0;
	run_requests(cl, g.c, g.k, start);
	g.rate = rate;
	if (g.non2xx > 0 || g.errors > 0) {
		print_requests("pre-create", 1, g.k);
		die("pre-creating %llu objects failed",
		    (unsigned long long)g.k);
	}
	if (!g.etcd)
		rev = list_revision();

	for (i = 0; i < g.w; i++) {
		/* With --watch-url, every other watcher on the second server. */
		g.use2 = g.addrlen2 > 0 && (i & 1);
		wl[i] = conn_open(R_WATCH);
		g.use2 = 0;
		watch_start(wl[i], rev);
	}
	for (;;) {
		for (i = ready = 0; i < g.w; i++) {
			if (wl[i]->dead)
				die("watch %d failed before updates started", i);
			ready += wl[i]->ready;
		}
		if (ready == g.w)
			break;
		loop_once(100);
		check_deadline(start);
	}
	printf("watch: %d watchers established in %.3f s%s%s\n", g.w,
	    (now_ns() - start) / 1e9, rev ? " from resourceVersion " : "",
	    rev ? rev : "");

	/* Updates; watch events are consumed by the same loop meanwhile. */
	g.phase = P_UPDATE;
	g.non2xx = g.errors = 0;
	t0 = now_ns();
	secs = run_requests(cl, g.c, g.u, start);
	t_updates = now_ns();
	expect = (uint64_t)g.w * g.u;
	while (g.delivered < expect) {
		t = now_ns();
		if (t - (g.last_event > t_updates ? g.last_event : t_updates) >
		    (uint64_t)g.idle * 1000000000ULL)
			break;
		for (i = 0; i < g.w && wl[i]->dead; i++)
			;
		if (i == g.w)
			break;
		loop_once(100);
		check_deadline(start);
	}
	esecs = ((g.last_event > t0 ? g.last_event : now_ns()) - t0) / 1e9;
	for (i = 0; i < g.w; i++)
		if (wl[i]->events < g.u)
			missing_watchers++;

	print_requests(g.etcd ? "etcd put" : "update", secs, g.u);
	printf("watch: %d watchers, %llu of %llu events in %.3f s: "
	    "%.0f events/s\n", g.w, (unsigned long long)g.delivered,
	    (unsigned long long)expect, esecs, g.delivered / esecs);
	printf("  delivery latency p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
	    ms(hist_quantile(&g.dlat, 0.50)), ms(hist_quantile(&g.dlat, 0.99)),
	    ms(g.dlat.max));
	printf("  watchers short of events %d  closed %llu  error events %llu"
	    "  unparsed lines %llu\n", missing_watchers,
	    (unsigned long long)g.watch_closed,
	    (unsigned long long)g.watch_errors,
	    (unsigned long long)g.bad_lines);
	printf("RESULT mode=watch target=%s watchers=%d updates=%llu "
	    "writers=%d rate=%.0f size=%zu update_seconds=%.3f update_rps=%.1f "
	    "update_p99_ms=%.3f events=%llu expected=%llu event_seconds=%.3f "
	    "events_per_s=%.1f deliver_p50_ms=%.3f deliver_p99_ms=%.3f "
	    "deliver_max_ms=%.3f non2xx=%llu errors=%llu closed=%llu\n",
	    g.etcd ? "etcd" : "volray", g.w, (unsigned long long)g.u, g.c,
	    g.rate, g.size, secs, g.u / secs, ms(hist_quantile(&g.lat, 0.99)),
	    (unsigned long long)g.delivered, (unsigned long long)expect,
	    esecs, g.delivered / esecs, ms(hist_quantile(&g.dlat, 0.50)),
	    ms(hist_quantile(&g.dlat, 0.99)), ms(g.dlat.max),
	    (unsigned long long)g.non2xx, (unsigned long long)g.errors,
	    (unsigned long long)g.watch_closed);
	free(rev);
	return (g.non2xx > 0 || g.errors > 0 || g.delivered < expect ||
	    g.watch_errors > 0);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
"usage: loadgen create -u URL [-n requests] [-c clients] [-s size] [-p prefix]\n"
"       loadgen etcd   -u URL [-n requests] [-c clients] [-s size] [-p prefix]\n"
"       loadgen watch  -u URL [-w watchers] [-U updates] [-c writers]\n"
"                      [-k objects] [-s size] [-p prefix] [-r rate] [--etcd]\n"
"  URL: the collection, e.g. http://127.0.0.1:6443/api/v1/namespaces/default/configmaps,\n"
"       or etcd's client URL, e.g. http://127.0.0.1:2379\n"
"  --etcd-put PATH (default /v3/kv/put), --etcd-watch PATH (default /v3/watch)\n"
"  --timeout S: give up after S seconds (default 600); --idle S: watch mode\n"
"  stops waiting after S seconds without events (default 15); -v: verbose\n"
"  -r R: send at most R requests (updates) per second; default: closed loop\n"
"  -H 'Name: value': send this header too (e.g. Authorization: Bearer T)\n"
"  --watch-url URL: watch mode opens every other watch on this server (the\n"
"       same cluster behind another API server, or another etcd member)\n"
"       loadgen handshake -u URL [-n connections]: connection set-up rate\n"
"  https:// URLs use TLS; --cacert FILE: the CA to verify the server with\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	static const struct option	 longopts[] = {
		{ "etcd", no_argument, NULL, 'E' },
		{ "etcd-put", required_argument, NULL, 'P' },
		{ "etcd-watch", required_argument, NULL, 'W' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "idle", required_argument, NULL, 'I' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "watch-url", required_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*url = NULL, *url2 = NULL;
	size_t		 i;
	int		 ch, rc;

	if (argc < 2)
		usage();
	if (strcmp(argv[1], "create") == 0)
		g.mode = M_CREATE;
	else if (strcmp(argv[1], "etcd") == 0)
		g.mode = M_ETCD;
	else if (strcmp(argv[1], "watch") == 0)
		g.mode = M_WATCH;
	else if (strcmp(argv[1], "handshake") == 0)
		g.mode = M_HANDSHAKE;
	else
		usage();
	argc--;
	argv++;

	g.n = 20000;
	g.c = 16;
	g.w = 1000;
	g.u = 10000;
	g.k = 0;
	g.size = 1024;
	g.timeout = 600;
	g.idle = 15;
	strcpy(g.etcd_put, "/v3/kv/put");
	strcpy(g.etcd_watch, "/v3/watch");
	snprintf(g.prefix, sizeof g.prefix, "lg-%lx-%d",
	    (unsigned long)time(NULL), (int)getpid());
	while ((ch = getopt_long(argc, argv, "c:H:k:n:p:r:s:u:U:vw:", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'c':
			g.c = atoi(optarg);
			break;
		case 'H':
			if (strlen(optarg) + 3 > sizeof g.header ||
			    strpbrk(optarg, "\r\n") != NULL)
				die("-H: one header line of at most %zu bytes",
				    sizeof g.header - 3);
			snprintf(g.header, sizeof g.header, "%s\r\n", optarg);
			break;
		case 'k':
			g.k = strtoull(optarg, NULL, 10);
			break;
		case 'n':
			g.n = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			snprintf(g.prefix, sizeof g.prefix, "%s", optarg);
			break;
		case 'r':
			g.rate = atof(optarg);
			break;
		case 's':
			g.size = strtoull(optarg, NULL, 10);
			break;
		case 'u':
			url = optarg;
			break;
		case 'U':
			g.u = strtoull(optarg, NULL, 10);
			break;
		case 'v':
			g.verbose = 1;
			break;
		case 'w':
			g.w = atoi(optarg);
			break;
		case 'E':
			g.etcd = 1;
			break;
		case 'P':
			snprintf(g.etcd_put, sizeof g.etcd_put, "%s", optarg);
			break;
		case 'W':
			snprintf(g.etcd_watch, sizeof g.etcd_watch, "%s",
			    optarg);
			break;
		case 'T':
			g.timeout = atoi(optarg);
			break;
		case 'I':
			g.idle = atoi(optarg);
			break;
		case 'C':
			g.cacert = optarg;
			break;
		case 'X':
			url2 = optarg;
			break;
		default:
			usage();
		}
	}
	if (url == NULL || g.c < 1 || g.n < 1 || g.w < 1 || g.u < 1 ||
	    g.size > (1 << 20))
		usage();
	if (g.k == 0)
		g.k = g.c > 100 ? g.c : 100;
	url_parse(url);
	if (url2 != NULL)
		url_parse_second(url2);
	signal(SIGPIPE, SIG_IGN);
	if (g.tls) {
		if ((g.ssl_ctx = SSL_CTX_new(TLS_client_method())) == NULL)
			die("SSL_CTX_new");
		SSL_CTX_set_mode(g.ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
		    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		SSL_CTX_set_verify(g.ssl_ctx, SSL_VERIFY_PEER, NULL);
		if (g.cacert != NULL ?
		    SSL_CTX_load_verify_locations(g.ssl_ctx, g.cacert, NULL) != 1 :
		    SSL_CTX_set_default_verify_paths(g.ssl_ctx) != 1)
			die("loading the CA %s", g.cacert ? g.cacert : "(default)");
		/* A fresh session every time: each connection a full handshake. */
		SSL_CTX_set_session_cache_mode(g.ssl_ctx, SSL_SESS_CACHE_OFF);
	}

	g.pad = xmalloc(g.size + 1);
	for (i = 0; i < g.size; i++)
		g.pad[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7 + i / 36) % 36];
	g.scratch = xmalloc(g.size + 512);
	g.b64 = xmalloc(2 * g.size + 1024);
	if ((g.epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1: %s", strerror(errno));

	if (g.mode == M_WATCH)
		rc = run_watch();
	else if (g.mode == M_HANDSHAKE)
		rc = run_handshake();
	else
		rc = run_create();
	fflush(stdout);
	return (rc);
}
