/*
 * A process inside a local container for kubectl exec (execproc.h).
 *
 * libuv spawns volray-shim -x in a session of its own (UV_PROCESS_DETACHED,
 * so the whole process group can be killed) with the container's
 * environment and working directory; the shim joins the container's
 * cgroups and execs the command. Descriptor 3 is a pipe the shim writes
 * errno to when the exec fails; close-on-exec makes it an empty read
 * otherwise. With a tty, the three standard descriptors are the slave of
 * a fresh pseudo-terminal and one libuv stream on the master carries
 * input and output both ways; without, each has its own pipe.
 *
 * The end waits for three things: the exit, the end of the output
 * streams (the master reads EIO once the last holder of the slave is
 * gone) and the report pipe's answer, with a 500 ms limit after the exit.
 */
#include <sys/ioctl.h>

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/execproc.h"

#define DRAIN_MS	500	/* output still read after the exit */

enum { S_IN, S_OUT, S_ERR, S_REP, S_N };

struct execproc {
	uv_loop_t *loop;
	uv_process_t proc;
	uv_pipe_t io[S_N];		/* S_OUT is the pty master with a tty */
	uv_timer_t drain;
	uv_shutdown_t shut;		/* stdin's end, after what is queued */
	struct execproc_cb cb;
	void *arg;
	int tty;
	int has[S_N];			/* the handle was initialised */
	int reading[S_N];		/* an output still open */
	int in_open;			/* stdin can be written */
	int running;			/* the process has not exited */
	int code;
	int exec_errno;
	char *name;			/* argv[0], for the messages */
	int told;			/* exited has been called */
	int paused;
	int handles;			/* open libuv handles */
	int freed;
	char rep[sizeof(int)];		/* the shim's errno, as it arrives */
	size_t replen;
};

struct wr {
	uv_write_t req;
	char data[];
};

static void
on_handle_closed(uv_handle_t *h)
{
	execproc *p = h->data;

	if (--p->handles == 0 && p->freed) {
		free(p->name);
		free(p);
	}
}

static void
close_handle(execproc *p, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_handle_closed);
}

/* Tell the end once everything it waits for is in. */
static void
maybe_end(execproc *p, int force)
{
	char why[256];

	if (p->told || p->running)
		return;
	if (!force && (p->reading[S_OUT] || p->reading[S_ERR] ||
	    p->reading[S_REP]))
		return;
	p->told = 1;
	uv_timer_stop(&p->drain);
	if (p->exec_errno != 0) {
		util_strf(why, sizeof why, "\"%s\": %s", p->name,
		    p->exec_errno == ENOENT ? "executable file not found in "
		    "$PATH" : strerror(p->exec_errno));
		p->cb.exited(p->arg, -1, why);
	} else
		p->cb.exited(p->arg, p->code, NULL);
}

static void
on_drain_timer(uv_timer_t *t)
{
	maybe_end(t->data, 1);
}

static void
on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[64 * 1024];

	(void)h;
	(void)hint;
	*buf = uv_buf_init(space, sizeof space);
}

static void
stream_done(execproc *p, int s)
{
	p->reading[s] = 0;
	uv_read_stop((uv_stream_t *)&p->io[s]);
	maybe_end(p, 0);
}

static void
on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	execproc *p = st->data;
	int s = (uv_pipe_t *)st - p->io;

	if (n < 0) {
		/* EOF, or EIO from a master whose slave has no holder left. */
		stream_done(p, s);
		return;
	}
	if (n == 0 || p->told)
		return;
	if (s == S_REP) {
		size_t k = (size_t)n;

		if (k > sizeof p->rep - p->replen)
			k = sizeof p->rep - p->replen;
		memcpy(p->rep + p->replen, buf->base, k);
		p->replen += k;
		if (p->replen == sizeof p->rep)
			memcpy(&p->exec_errno, p->rep, sizeof p->exec_errno);
		return;
	}
	p->cb.output(p->arg, s == S_ERR ? 2 : 1, buf->base, (size_t)n);
}

static void
on_exit_cb(uv_process_t *proc, int64_t status, int sig)
{
	execproc *p = proc->data;

	p->running = 0;
	p->code = sig != 0 ? 128 + sig : (int)status;
	/* Nothing it started outlives it (kubelet's exec ends the same). */
	kill(-proc->pid, SIGKILL);
	close_handle(p, (uv_handle_t *)proc);
	if (p->freed)
		return;
	uv_timer_start(&p->drain, on_drain_timer, DRAIN_MS, 0);
	maybe_end(p, 0);
}

static void
init_pipe(execproc *p, int s)
{
	uv_pipe_init(p->loop, &p->io[s], 0);
	p->io[s].data = p;
	p->has[s] = 1;
	p->handles++;
}

/* The pseudo-terminal: the master into S_OUT, the slave returned. */
static int
open_pty(execproc *p, char **cause)
{
	int master, slave;

	if (openpty(&master, &slave, NULL, NULL, NULL) != 0) {
		*cause = util_printf("openpty: %s", strerror(errno));
		return -1;
	}
	fcntl(master, F_SETFD, FD_CLOEXEC);
	fcntl(slave, F_SETFD, FD_CLOEXEC);
	init_pipe(p, S_OUT);
	if (uv_pipe_open(&p->io[S_OUT], master) != 0) {
		close(master);
		close(slave);
		*cause = util_printf("the terminal: %s", strerror(errno));
		return -1;
	}
	return slave;
}

static void
start_reading(execproc *p, int s)
{
	if (uv_read_start((uv_stream_t *)&p->io[s], on_alloc, on_read) == 0)
		p->reading[s] = 1;
}

execproc *
execproc_start(uv_loop_t *loop, const struct execproc_opts *o,
    const struct execproc_cb *cb, void *arg, char **cause)
{
	execproc *p = xcalloc(1, sizeof *p);
	uv_process_options_t po;
	uv_stdio_container_t stdio[4];
	char **argv, nspid[16];
	int n, i, slave = -1, devnull = -1, r;

	p->loop = loop;
	p->name = xstrdup(o->argv[0]);
	p->cb = *cb;
	p->arg = arg;
	p->tty = o->tty;
	p->running = 1;
	p->proc.data = p;
	uv_timer_init(loop, &p->drain);
	p->drain.data = p;
	p->handles = 1;
	memset(stdio, 0, sizeof stdio);
	if (o->tty) {
		if ((slave = open_pty(p, cause)) < 0)
			goto fail;
		for (i = 0; i < 3; i++) {
			stdio[i].flags = UV_INHERIT_FD;
			stdio[i].data.fd = slave;
		}
	} else {
		if (o->in) {
			init_pipe(p, S_IN);
			stdio[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
			stdio[0].data.stream = (uv_stream_t *)&p->io[S_IN];
		} else {
			devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
			stdio[0].flags = UV_INHERIT_FD;
			stdio[0].data.fd = devnull;
		}
		for (i = S_OUT; i <= S_ERR; i++) {
			init_pipe(p, i);
			stdio[i].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
			stdio[i].data.stream = (uv_stream_t *)&p->io[i];
		}
	}
	init_pipe(p, S_REP);
	stdio[3].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[3].data.stream = (uv_stream_t *)&p->io[S_REP];

	for (n = 0; o->argv[n] != NULL; n++)
		;
	for (i = 0; o->groups != NULL && o->groups[i] != NULL; i++)
		;
	argv = xcalloc((size_t)(n + 2 * i + 7), sizeof *argv);
	argv[0] = (char *)o->shim;
	argv[1] = (char *)"-x";
	n = 2;
	if (o->tty)
		argv[n++] = (char *)"-t";
	if (o->ns_pid > 0) {
		snprintf(nspid, sizeof nspid, "%d", o->ns_pid);
		argv[n++] = (char *)"-N";
		argv[n++] = nspid;
	}
	for (i = 0; o->groups != NULL && o->groups[i] != NULL; i++) {
		argv[n++] = (char *)"-g";
		argv[n++] = o->groups[i];
	}
	argv[n++] = (char *)"--";
	for (i = 0; o->argv[i] != NULL; i++)
		argv[n++] = o->argv[i];

	memset(&po, 0, sizeof po);
	po.file = o->shim;
	po.args = argv;
	po.env = o->env;
	po.cwd = o->cwd;
	po.stdio = stdio;
	po.stdio_count = 4;
	po.flags = UV_PROCESS_DETACHED;
	po.exit_cb = on_exit_cb;
	r = uv_spawn(loop, &p->proc, &po);
	p->handles++;		/* in the loop's list even when it failed */
	free(argv);
	if (slave >= 0)
		close(slave);
	if (devnull >= 0)
		close(devnull);
	if (r != 0) {
		*cause = util_printf("exec %s: %s", o->shim, uv_strerror(r));
		p->running = 0;
		close_handle(p, (uv_handle_t *)&p->proc);
		p->told = 1;
		execproc_free(p);
		return NULL;
	}
	p->in_open = o->tty || o->in;
	for (i = S_OUT; i < S_N; i++)
		if (p->has[i])
			start_reading(p, i);
	return p;
fail:
	p->told = 1;
	p->running = 0;
	execproc_free(p);
	return NULL;
}

static void
on_written(uv_write_t *req, int status)
{
	(void)status;
	free(req);
}

int
execproc_write(execproc *p, const char *data, size_t len)
{
	uv_pipe_t *s = &p->io[p->tty ? S_OUT : S_IN];
	struct wr *w;
	uv_buf_t buf;

	if (!p->in_open || !p->running || len == 0)
		return p->in_open ? 0 : -1;
	w = xmalloc(sizeof *w + len);
	memcpy(w->data, data, len);
	buf = uv_buf_init(w->data, (unsigned)len);
	if (uv_write(&w->req, (uv_stream_t *)s, &buf, 1, on_written) != 0) {
		free(w);
		return -1;
	}
	return 0;
}

static void
on_stdin_shut(uv_shutdown_t *req, int status)
{
	execproc *p = req->data;

	(void)status;
	close_handle(p, (uv_handle_t *)&p->io[S_IN]);
}

void
execproc_close_stdin(execproc *p)
{
	if (p->tty || !p->in_open)
		return;
	p->in_open = 0;
	p->shut.data = p;
	/* What was written goes first, then EOF. */
	if (uv_shutdown(&p->shut, (uv_stream_t *)&p->io[S_IN],
	    on_stdin_shut) != 0)
		close_handle(p, (uv_handle_t *)&p->io[S_IN]);
}

void
execproc_resize(execproc *p, unsigned cols, unsigned rows)
{
	struct winsize ws;
	uv_os_fd_t fd;

	if (!p->tty || cols == 0 || rows == 0 || cols > 65535 ||
	    rows > 65535 || uv_fileno((uv_handle_t *)&p->io[S_OUT], &fd) != 0)
		return;
	memset(&ws, 0, sizeof ws);
	ws.ws_col = (unsigned short)cols;
	ws.ws_row = (unsigned short)rows;
	ioctl(fd, TIOCSWINSZ, &ws);
}

void
execproc_pause(execproc *p, int paused)
{
	int s;

	if (p->paused == paused)
		return;
	p->paused = paused;
	for (s = S_OUT; s <= S_ERR; s++) {
		if (!p->has[s] || !p->reading[s])
			continue;
		if (paused)
			uv_read_stop((uv_stream_t *)&p->io[s]);
		else
			uv_read_start((uv_stream_t *)&p->io[s], on_alloc,
			    on_read);
	}
}

void
execproc_free(execproc *p)
{
	int s;

	if (p == NULL || p->freed)
		return;
	p->told = 1;
	/* The process handle stays until the exit is reaped (on_exit_cb
	   closes it), so that no zombie is left. */
	if (p->running && p->proc.pid > 0)
		kill(-p->proc.pid, SIGKILL);
	for (s = 0; s < S_N; s++)
		if (p->has[s])
			close_handle(p, (uv_handle_t *)&p->io[s]);
	close_handle(p, (uv_handle_t *)&p->drain);
	p->freed = 1;
}
