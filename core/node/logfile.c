/*
 * A container's log file onto an HTTP request, as the kubelet's ReadLogs
 * renders it (logfile.h).
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/crilog.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/logfile.h"

#define FOLLOW_MS 200

/* How records become output. */
struct view {
	int timestamps;
	int64_t since_ns;		/* 0: all */
	long long remain;		/* bytes still allowed; -1: no limit */
	int newline;			/* the next text starts a line */
};

struct out {
	char *buf;
	size_t len, cap;
};

static void
out_add(struct out *o, const char *s, size_t n)
{
	if (o->len + n + 1 > o->cap) {
		o->cap = (o->len + n + 1) * 2;
		o->buf = xrealloc(o->buf, o->cap);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

/* One record's output (timestamp, text, newline), cut at the limit. */
static void
render_rec(struct view *v, const struct crilog_rec *r, struct out *o)
{
	char line[CRILOG_TIME_MAX + 1];
	size_t start = o->len, n;
	int starts = v->newline;

	v->newline = !r->partial;
	if (v->since_ns > 0 && r->ns < v->since_ns)
		return;
	if (v->timestamps && starts && r->ns != 0) {
		n = crilog_time_format(r->ns, line);
		line[n++] = ' ';
		out_add(o, line, n);
	}
	out_add(o, r->text, r->len);
	if (!r->partial)
		out_add(o, "\n", 1);
	if (v->remain >= 0) {
		n = o->len - start;
		if ((long long)n > v->remain) {
			o->len = start + (size_t)v->remain;
			n = (size_t)v->remain;
		}
		v->remain -= (long long)n;
	}
}

/*
 * Render the complete records of data[0..len) into o; the bytes used
 * (up to the last newline). A line that is not CRI (a log written before
 * this format) is passed on as a full stdout line without a timestamp.
 */
static size_t
render(struct view *v, const char *data, size_t len, struct out *o)
{
	size_t off = 0;
	const char *nl;

	while (v->remain != 0 && off < len &&
	    (nl = memchr(data + off, '\n', len - off)) != NULL) {
		struct crilog_rec r;
		size_t n = (size_t)(nl - data - off);

		if (crilog_parse(data + off, n, &r) != 0) {
			memset(&r, 0, sizeof r);
			r.text = data + off;
			r.len = n;
			if (v->since_ns > 0)
				r.ns = -1;	/* unknown: older than any since */
		}
		render_rec(v, &r, o);
		off += n + 1;
	}
	return off;
}

/* Where the last `lines` records of data start. */
static size_t
tail_start(const char *data, size_t len, long long lines)
{
	size_t q = len;
	long long seen = 0;

	if (lines == 0)
		return len;
	if (q > 0 && data[q - 1] == '\n')
		q--;
	while (q > 0) {
		if (data[q - 1] == '\n' && ++seen == lines)
			break;
		q--;
	}
	return q;
}

/* A `logs -f` stream. */
struct follow {
	http_req *req;
	uv_timer_t *timer;
	char *path;
	int fd;
	ino_t ino;
	off_t off;			/* rendered up to here */
	struct view v;
	logfile_get_fn get;
	const void *src;
	char *ns, *name, *uid;		/* the pod followed */
};

/* Where a followed log's pod is. */
enum pod_state { POD_GONE, POD_RUNNING, POD_ENDED };

static enum pod_state
pod_state(const struct follow *f)
{
	const store_obj *o = f->get(f->src, f->ns, f->name);
	enum pod_state st = POD_RUNNING;
	const char *phase;
	cJSON *tree;

	if (o == NULL || strcmp(o->uid, f->uid) != 0)
		return POD_GONE;
	tree = store_obj_tree(o);
	phase = json_str(tree, "status.phase");
	if (phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
	    strcmp(phase, "Failed") == 0))
		st = POD_ENDED;
	cJSON_Delete(tree);
	return st;
}

static void
follow_timer_closed(uv_handle_t *h)
{
	free(h);
}

static void
follow_end(struct follow *f)
{
	uv_timer_stop(f->timer);
	uv_close((uv_handle_t *)f->timer, follow_timer_closed);
	http_stream_end(f->req);
	if (f->fd >= 0)
		close(f->fd);
	free(f->ns);
	free(f->name);
	free(f->uid);
	free(f->path);
	free(f);
}

static void
follow_peer_closed(http_req *req, void *arg)
{
	(void)req;
	follow_end(arg);
}

/* Render what the file gained since f->off; whether it grew. */
static int
follow_read(struct follow *f)
{
	struct stat sb;
	struct out o = { 0 };
	char *data;
	size_t len, used;
	ssize_t got;

	if (f->fd < 0 && (f->fd = open(f->path, O_RDONLY | O_CLOEXEC)) >= 0 &&
	    fstat(f->fd, &sb) == 0)
		f->ino = sb.st_ino;
	if (f->fd < 0 || fstat(f->fd, &sb) != 0 || sb.st_size <= f->off)
		return 0;
	len = (size_t)(sb.st_size - f->off);
	data = xmalloc(len);
	got = pread(f->fd, data, len, f->off);
	used = got > 0 ? render(&f->v, data, (size_t)got, &o) : 0;
	f->off += (off_t)used;
	if (o.len > 0)
		http_stream_write_copy(f->req, o.buf, o.len);
	free(o.buf);
	free(data);
	return used > 0;
}

/* Send what the file gained; end once the pod is gone or finished. */
static void
follow_tick(uv_timer_t *t)
{
	struct follow *f = t->data;
	enum pod_state pod = pod_state(f);
	struct stat sb;
	int grew = follow_read(f), done = 0;

	if (f->v.remain == 0 || pod == POD_GONE)
		done = 1;
	else if (f->fd >= 0 && (stat(f->path, &sb) != 0 ||
	    sb.st_ino != f->ino))
		/* The container restarted: its instance's log is complete. */
		done = !grew;
	else if (!grew)
		done = pod == POD_ENDED;
	if (done && (!grew || f->v.remain == 0))
		follow_end(f);
}

static void
follow_start(uv_loop_t *loop, http_req *req, const char *path, int fd,
    off_t off, const struct view *v, const struct out *first,
    const store_obj *pod, logfile_get_fn get, const void *src)
{
	struct follow *f = xcalloc(1, sizeof *f);
	struct stat sb;

	f->timer = xmalloc(sizeof *f->timer);
	f->req = req;
	f->path = xstrdup(path);
	f->fd = fd;
	if (fd >= 0 && fstat(fd, &sb) == 0)
		f->ino = sb.st_ino;
	f->off = off;
	f->v = *v;
	f->get = get;
	f->src = src;
	f->ns = xstrdup(pod->ns);
	f->name = xstrdup(pod->name);
	f->uid = xstrdup(pod->uid);
	http_req_on_close(req, follow_peer_closed, f);
	http_stream_begin(req, 200, "text/plain");
	if (first->len > 0)
		http_stream_write_copy(req, first->buf, first->len);
	uv_timer_init(loop, f->timer);
	f->timer->data = f;
	uv_timer_start(f->timer, follow_tick, FOLLOW_MS, FOLLOW_MS);
}

void
logfile_serve(uv_loop_t *loop, http_req *req, const char *path,
    const struct logfile_opts *opts, const store_obj *pod, logfile_get_fn get,
    const void *src)
{
	struct view v = { opts->timestamps, opts->since_ns, opts->limit, 1 };
	struct out out = { 0 };
	struct stat sb;
	char *data = NULL;
	size_t start, used;
	ssize_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
		data = xmalloc((size_t)sb.st_size);
		got = read(fd, data, (size_t)sb.st_size);
		if (got < 0)
			got = 0;
	}
	if (data == NULL)
		data = xstrdup("");
	start = opts->tail >= 0 ? tail_start(data, (size_t)got, opts->tail) :
	    0;
	used = start + render(&v, data + start, (size_t)got - start, &out);
	free(data);
	if (opts->follow && v.remain != 0)
		follow_start(loop, req, path, fd, (off_t)used, &v, &out, pod,
		    get, src);
	else {
		if (fd >= 0)
			close(fd);
		http_respond(req, 200, "text/plain", out.buf ? out.buf : "",
		    out.len);
	}
	free(out.buf);
}

/* A non-negative integer parameter, or def. */
static long long
query_int(const char *query, const char *key, long long def)
{
	long long v;
	char *cause = NULL;

	if (http_query_int(query, key, &v, &cause) != 1 || v < 0) {
		free(cause);
		return def;
	}
	return v;
}

void
logfile_opts_query(const char *query, struct logfile_opts *o)
{
	char *since_t = http_query_get(query, "sinceTime");
	long long since_s = query_int(query, "sinceSeconds", 0);
	int64_t ns = 0;

	memset(o, 0, sizeof *o);
	o->timestamps = http_query_bool(query, "timestamps", 0);
	o->follow = http_query_bool(query, "follow", 0);
	o->tail = query_int(query, "tailLines", -1);
	o->limit = query_int(query, "limitBytes", -1);
	if (o->limit == 0)
		o->limit = -1;
	if (since_s > 0)
		o->since_ns = crilog_now() - since_s * 1000000000LL;
	else if (since_t != NULL && crilog_time_parse(since_t,
	    strlen(since_t), &ns) == 0)
		o->since_ns = ns;
	free(since_t);
}
