/*
 * kubectl attach to a local container (attach.h): its output is what its
 * shim appends to the CRI log from now on, read every 100 ms and handed
 * over record by record (stdout and stderr apart, a full record with its
 * newline); its input is the FIFO the shim made for a container with
 * spec.stdin (written without blocking: a container that does not read
 * loses what does not fit). The end comes when the instance attached to
 * is no longer the one running (it ended, or was restarted), after what
 * it wrote last has been read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/crilog.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/attach.h"
#include "node/node_int.h"

#define TICK_MS		100
#define LINE_MAX_HELD	(64 * 1024)

struct attach {
	node_mgr *m;
	uv_timer_t tick;
	int log_fd;
	int in_fd;			/* the FIFO, or -1 */
	char ns[254], pod[254], ctr[254];
	int instance;			/* the instance attached to */
	char buf[LINE_MAX_HELD];	/* a record not yet complete */
	size_t len;
	struct execproc_cb cb;
	void *arg;
	int paused;
	int done;
};

static void
on_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Hand over every complete record in the buffer. */
static void
drain(struct attach *a)
{
	struct crilog_rec r;
	size_t off = 0;
	char *nl, *out;

	while (!a->done && (nl = memchr(a->buf + off, '\n', a->len - off)) !=
	    NULL) {
		if (crilog_parse(a->buf + off, (size_t)(nl - (a->buf + off)),
		    &r) == 0) {
			out = xmalloc(r.len + 1);
			memcpy(out, r.text, r.len);
			if (!r.partial)
				out[r.len] = '\n';
			a->cb.output(a->arg, r.stderr_stream ? 2 : 1, out,
			    r.len + !r.partial);
			free(out);
		}
		off = (size_t)(nl - a->buf) + 1;
	}
	if (off == 0 && a->len == sizeof a->buf)
		off = a->len;		/* no record is that long: drop it */
	memmove(a->buf, a->buf + off, a->len - off);
	a->len -= off;
}

/* Whether the instance attached to still runs. */
static int
still_running(struct attach *a)
{
	int code;
	char *msg = NULL;
	struct node_ctr *c = node_mgr_find_ctr(a->m, a->ns, a->pod, a->ctr,
	    &code, &msg);

	free(msg);
	return c != NULL && c->instance == a->instance;
}

static void
on_tick(uv_timer_t *t)
{
	struct attach *a = t->data;
	int running = still_running(a);
	ssize_t n;

	if (a->paused)
		return;
	while (!a->done && (n = read(a->log_fd, a->buf + a->len,
	    sizeof a->buf - a->len)) > 0) {
		a->len += (size_t)n;
		drain(a);
	}
	if (!running && !a->done) {
		a->done = 1;
		uv_timer_stop(t);
		a->cb.exited(a->arg, 0, NULL);
	}
}

struct attach *
attach_start(node_mgr *m, struct node_ctr *c, int in,
    const struct execproc_cb *cb, void *arg, char **cause)
{
	struct node_pod *p = c->pod;
	struct attach *a;
	char path[PATH_MAX], *dir = node_mgr_pod_dir(m, p->ns, p->name);
	int fd;

	util_strf(path, sizeof path, "%s/%s.log", dir, c->name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		*cause = util_printf("%s: %s", path, strerror(errno));
		free(dir);
		return NULL;
	}
	lseek(fd, 0, SEEK_END);
	a = xcalloc(1, sizeof *a);
	a->m = m;
	a->log_fd = fd;
	a->in_fd = -1;
	if (in) {
		util_strf(path, sizeof path, "%s/%s.stdin", dir, c->name);
		a->in_fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	}
	free(dir);
	util_strf(a->ns, sizeof a->ns, "%s", p->ns);
	util_strf(a->pod, sizeof a->pod, "%s", p->name);
	util_strf(a->ctr, sizeof a->ctr, "%s", c->name);
	a->instance = c->instance;
	a->cb = *cb;
	a->arg = arg;
	uv_timer_init(m->loop, &a->tick);
	a->tick.data = a;
	uv_timer_start(&a->tick, on_tick, TICK_MS, TICK_MS);
	return a;
}

void
attach_write(struct attach *a, const char *data, size_t len)
{
	ssize_t n;

	while (a->in_fd >= 0 && len > 0) {
		if ((n = write(a->in_fd, data, len)) < 0) {
			if (errno == EINTR)
				continue;
			break;	/* full (the container does not read), or gone */
		}
		data += n;
		len -= (size_t)n;
	}
}

void
attach_pause(struct attach *a, int paused)
{
	a->paused = paused;
}

void
attach_free(struct attach *a)
{
	if (a == NULL)
		return;
	close(a->log_fd);
	if (a->in_fd >= 0)
		close(a->in_fd);
	uv_timer_stop(&a->tick);
	uv_close((uv_handle_t *)&a->tick, on_closed);
}
