/*
 * One process run inside a local container for kubectl exec: started
 * through volray-shim -x (the container's cgroups, and the terminal as
 * controlling tty), with pipes for stdin, stdout and stderr, or one
 * pseudo-terminal for all three when tty is asked. The output is handed
 * over as it comes; the end is told once, after the process has exited
 * and its output has been read to the end (or 500 ms after the exit,
 * when something it left behind holds the output open).
 */
#ifndef VOLRAY_EXECPROC_H
#define VOLRAY_EXECPROC_H

#include <stddef.h>
#include <uv.h>

typedef struct execproc execproc;

struct execproc_opts {
	const char *shim;		/* volray-shim */
	char **argv;			/* the command, NULL-terminated */
	char **env;			/* NAME=VALUE, NULL-terminated */
	const char *cwd;
	char **groups;			/* cgroup directories, or NULL */
	int tty;			/* a pseudo-terminal */
	int in;				/* stdin wanted (else /dev/null) */
	int ns_pid;			/* join its mount namespace (0: no) */
};

struct execproc_cb {
	/* Output on fd 1 (stdout; everything when tty) or 2 (stderr). */
	void (*output)(void *arg, int fd, const char *data, size_t len);
	/*
	 * The end: the exit code (128+N for signal N), or code -1 and the
	 * reason the command could not be run ("executable file not found").
	 */
	void (*exited)(void *arg, int code, const char *error);
};

/* Start it; NULL with *cause (malloc'd) when it cannot be started. */
execproc *execproc_start(uv_loop_t *, const struct execproc_opts *,
    const struct execproc_cb *, void *arg, char **cause);
/* Write to its stdin (copied); -1 when stdin is closed. */
int execproc_write(execproc *, const char *data, size_t len);
/* End of input (ignored for a tty, where ^D is the user's to send). */
void execproc_close_stdin(execproc *);
/* The terminal's size. */
void execproc_resize(execproc *, unsigned cols, unsigned rows);
/* Stop (1) or resume (0) reading its output: backpressure. */
void execproc_pause(execproc *, int paused);
/* Kill it if it still runs and release it; no callback afterwards. */
void execproc_free(execproc *);

#endif
