/*
 * pods/log: a container's log as a kubelet serves it. The local node's
 * shims write DATA_DIR/pods/NS/NAME/CONTAINER.log (and .previous.log) in
 * the CRI format (lib/crilog.h); this reads it back the way the kubelet's
 * ReadLogs does: tailLines counts the file's records from the end,
 * sinceSeconds/sinceTime drop records older than that, each record's text
 * is written (a full one with its newline, a partial one without, stdout
 * and stderr interleaved as they were written), prefixed by its timestamp
 * in RFC3339Nano and a space when timestamps=true (only at the start of a
 * line), and limitBytes cuts the output, the last record included, at
 * that many bytes. follow=true goes on with what the file gains, polled
 * every 200 ms, until the pod ends or is gone, the log is rotated (the
 * container restarted) or limitBytes is reached.
 */
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/apimetrics.h"
#include "api/reply.h"
#include "lib/crilog.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

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
	store *st;
	char *path;
	char *ns, *name, *uid;
	int fd;
	ino_t ino;
	off_t off;			/* rendered up to here */
	struct view v;
};

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
	free(f->path);
	free(f->ns);
	free(f->name);
	free(f->uid);
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
	const store_obj *o = store_get(f->st, "pods", f->ns, f->name);
	struct stat sb;
	int grew = follow_read(f), done = 0;

	if (f->v.remain == 0)
		done = 1;
	else if (o == NULL || strcmp(o->uid, f->uid) != 0)
		done = 1;
	else if (f->fd >= 0 && (stat(f->path, &sb) != 0 ||
	    sb.st_ino != f->ino))
		/* The container restarted: its instance's log is complete. */
		done = !grew;
	else if (!grew) {
		cJSON *tree = store_obj_tree(o);
		const char *phase = json_str(tree, "status.phase");

		done = phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
		    strcmp(phase, "Failed") == 0);
		cJSON_Delete(tree);
	}
	if (done && (!grew || f->v.remain == 0))
		follow_end(f);
}

static void
follow_start(api *a, http_req *req, const store_obj *o, const char *path,
    int fd, off_t off, const struct view *v, const struct out *first)
{
	struct follow *f = xcalloc(1, sizeof *f);
	struct stat sb;

	f->timer = xmalloc(sizeof *f->timer);
	f->req = req;
	f->st = a->st;
	f->path = xstrdup(path);
	f->ns = xstrdup(o->ns);
	f->name = xstrdup(o->name);
	f->uid = xstrdup(o->uid);
	f->fd = fd;
	if (fd >= 0 && fstat(fd, &sb) == 0)
		f->ino = sb.st_ino;
	f->off = off;
	f->v = *v;
	http_req_on_close(req, follow_peer_closed, f);
	http_stream_begin(req, 200, "text/plain");
	if (first->len > 0)
		http_stream_write_copy(req, first->buf, first->len);
	uv_timer_init(a->loop, f->timer);
	f->timer->data = f;
	uv_timer_start(f->timer, follow_tick, FOLLOW_MS, FOLLOW_MS);
}

/*
 * The options into v and *lines; -1 when they are refused (answered as
 * kube-apiserver's validation of PodLogOptions answers).
 */
static int
log_options(http_req *req, struct route *rt, struct view *v,
    long long *lines)
{
	long long since_s = -1, limit = -1;
	char *since_t = http_query_get(req->query, "sinceTime"), *bad = NULL;
	int64_t ns = 0;

	memset(v, 0, sizeof *v);
	v->newline = 1;
	*lines = LLONG_MIN;
	if (reply_int_param(req, rt, "tailLines", lines) != 0 ||
	    reply_int_param(req, rt, "sinceSeconds", &since_s) != 0 ||
	    reply_int_param(req, rt, "limitBytes", &limit) != 0) {
		free(since_t);
		return -1;
	}
	v->timestamps = http_query_bool(req->query, "timestamps", 0);
	if (since_t != NULL && crilog_time_parse(since_t, strlen(since_t),
	    &ns) != 0) {
		reply_status(req, rt, status_bad_request("parsing time "
		    "\"%s\" as \"2006-01-02T15:04:05Z07:00\": cannot parse",
		    since_t));
		free(since_t);
		return -1;
	}
	if (since_t != NULL && since_s != -1)
		bad = util_printf("[]: Forbidden: at most one of `sinceTime` or "
		    "`sinceSeconds` may be specified");
	else if (*lines != LLONG_MIN && *lines < 0)
		bad = util_printf("tailLines: Invalid value: %lld: must be "
		    "greater than or equal to 0", *lines);
	else if (limit != -1 && limit < 1)
		bad = util_printf("limitBytes: Invalid value: %lld: must be "
		    "greater than 0", limit);
	else if (since_s != -1 && since_s < 1)
		bad = util_printf("sinceSeconds: Invalid value: %lld: must be "
		    "greater than 0", since_s);
	free(since_t);
	if (*lines == LLONG_MIN)
		*lines = -1;
	if (bad != NULL) {
		reply_status(req, rt, status_error(422, "Invalid",
		    "PodLogOptions \"%s\" is invalid: %s", rt->name, bad));
		free(bad);
		return -1;
	}
	v->remain = limit;
	if (since_s > 0)
		v->since_ns = crilog_now() - since_s * 1000000000LL;
	else if (ns > 0)
		v->since_ns = ns;
	return 0;
}

/* The container to read: ?container= or the pod's only one; NULL: answered. */
static char *
pick_container(http_req *req, struct route *rt, const store_obj *o)
{
	cJSON *tree = store_obj_tree(o);
	const cJSON *cs = json_at(tree, "spec.containers"), *c;
	char *container = http_query_get(req->query, "container");
	int found = 0;

	if (container != NULL && *container != '\0') {
		/* Init containers have logs too. */
		cJSON_ArrayForEach(c, json_at(tree, "spec.initContainers"))
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				cs = json_at(tree, "spec.initContainers");
		cJSON_ArrayForEach(c, cs)
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				found = 1;
		if (!found) {
			reply_status(req, rt, status_bad_request(
			    "container %s is not valid for pod %s", container,
			    rt->name));
			free(container);
			container = NULL;
		}
	} else if (cJSON_GetArraySize(cs) == 1) {
		free(container);
		container = xstrdup(json_str(cJSON_GetArrayItem(cs, 0), "name") ?
		    json_str(cJSON_GetArrayItem(cs, 0), "name") : "");
	} else {
		char names[1024] = "";
		size_t len = 0;

		cJSON_ArrayForEach(c, cs)
			len += snprintf(names + len, len < sizeof names ?
			    sizeof names - len : 0, "%s%s", len ? " " : "",
			    json_str(c, "name"));
		reply_status(req, rt, status_bad_request("a container name "
		    "must be specified for pod %s, choose one of: [%s]",
		    rt->name, names));
		free(container);
		container = NULL;
	}
	cJSON_Delete(tree);
	return container;
}

void
podlog_get(api *a, http_req *req, struct route *rt)
{
	const store_obj *o;
	char *container = NULL, *data = NULL, path[PATH_MAX];
	int follow = http_query_bool(req->query, "follow", 0);
	int previous = http_query_bool(req->query, "previous", 0);
	long long lines;
	struct view v;
	struct out out = { 0 };
	struct stat sb;
	size_t start, used = 0;
	ssize_t got = 0;
	int fd;

	rt->verb = "get";
	if (log_options(req, rt, &v, &lines) != 0)
		return;
	if ((o = store_get(a->st, "pods", rt->ns ? rt->ns : "", rt->name)) ==
	    NULL) {
		reply_status(req, rt, status_not_found(rt->r, rt->name));
		return;
	}
	if ((container = pick_container(req, rt, o)) == NULL)
		return;
	snprintf(path, sizeof path, "%s/pods/%s/%s/%s%s.log", a->data_dir,
	    o->ns, o->name, container, previous ? ".previous" : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && previous) {
		reply_status(req, rt, status_bad_request("previous "
		    "terminated container \"%s\" in pod \"%s\" not found",
		    container, rt->name));
		free(container);
		return;
	}
	free(container);
	if (fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size > 0) {
		data = xmalloc((size_t)sb.st_size);
		got = read(fd, data, (size_t)sb.st_size);
		if (got < 0)
			got = 0;
	}
	if (data == NULL)
		data = xstrdup("");
	start = lines >= 0 ? tail_start(data, (size_t)got, lines) : 0;
	used = start + render(&v, data + start, (size_t)got - start, &out);
	free(data);
	apimetrics_request(rt->verb, "pods", 200, util_usec() - rt->t0);
	/* The previous instance is over: there is nothing to follow. */
	if (follow && !previous && v.remain != 0)
		follow_start(a, req, o, path, fd, (off_t)used, &v, &out);
	else {
		if (fd >= 0)
			close(fd);
		http_respond(req, 200, "text/plain", out.buf ? out.buf : "",
		    out.len);
	}
	free(out.buf);
}
