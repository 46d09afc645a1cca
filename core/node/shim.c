/*
 * volray-shim: the keeper of one container instance on the local node,
 * after containerd-shim. volrayd starts it (in a session of its own, with
 * the container's environment and working directory) instead of the
 * command; it
 *
 *  - forks the command into a process group of its own and, before the
 *    command is exec'd, into the container's cgroups (-g, made by
 *    volrayd), then writes DIR/NAME.pid: "CMDPID CMDSTART UID SHIMPID
 *    SHIMSTART" (start times from /proc/PID/stat, which tell a live
 *    process from a reused pid);
 *  - reads the command's stdout and stderr through pipes and appends them
 *    to DIR/NAME.log in the CRI format (lib/crilog.h), one write per
 *    record;
 *  - waits for the command, kills what is left of its process group and
 *    cgroups, and writes DIR/NAME.status (exit code, signal, whether the
 *    cgroup saw an OOM kill, the time it ended; written to a temporary
 *    file and renamed, so a reader sees all of it or nothing); then it
 *    removes the cgroups and exits.
 *
 * With -i (the container's spec.stdin) the command's stdin is the FIFO
 * DIR/NAME.stdin, which kubectl attach writes to; it is held open for
 * writing too, so the command never reads an end of it.
 *
 * With -M PLAN (as root) it first moves into a mount namespace of its own
 * in which the container's volumes are at their mountPath (shimns.c).
 * With -X NETNS (as root) it first joins the network namespace whose
 * file NETNS is, the pod's (podnet.c), which every container of the pod
 * shares, and with -H NAME takes a UTS namespace of its own whose host
 * name is the pod's.
 *
 * With -x it is the way into a running container instead (kubectl exec):
 * it puts itself into the container's cgroups (-g), takes its stdin as
 * controlling terminal when -t says it is one (volrayd made the session),
 * and, with -N PID, into that process's network and mount namespaces
 * (the container's), and execs the command; when that fails, errno goes to
 * descriptor 3
 * (close-on-exec otherwise), so volrayd can tell "not found" from a
 * command that exits 127.
 *
 * It needs nothing from volrayd once started: it ignores SIGHUP and
 * SIGPIPE, holds no descriptor of volrayd's, and outlives a volrayd that
 * crashes, so the next one re-adopts the container (local.c). SIGTERM,
 * SIGINT, SIGQUIT, SIGUSR1 and SIGUSR2 sent to the shim are forwarded to
 * the command's process group (volrayd signals the group itself once it
 * has read the pid file; this covers the moment before).
 */
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/crilog.h"
#include "lib/proc.h"
#include "node/shimns.h"

#define MAX_GROUPS	4
#define DRAIN_MS	1000	/* output still read after the command ends */

static volatile sig_atomic_t child_pid;	/* the command, once released */
static volatile sig_atomic_t pending_sig;	/* forwarded once it is */
static int wake_fd = -1;		/* SIGCHLD writes here */

struct stream {
	int fd;
	const char *name;
	char buf[CRILOG_LINE_MAX];
	size_t len;
};

/* The command line (usage()): what to keep, and how. */
struct shim_opts {
	const char	*dir, *name, *uid;	/* -d, -n, -u (default "-") */
	const char	*groups[MAX_GROUPS];	/* -g */
	int		 ngroups;
	int		 stdin_fifo, xmode, tty;	/* -i, -x, -t */
	int		 ns_pid;		/* -N */
	const char	*plan, *netns, *hostname;	/* -M, -X, -H */
	char		**argv;			/* the command */
};

/* What the kept command's output goes through. */
struct shim_io {
	int	log_fd;		/* DIR/NAME.log */
	int	out[2], err[2];	/* its stdout and stderr */
	int	wake[2];	/* SIGCHLD's self-pipe */
	int	in;		/* DIR/NAME.stdin (-i), or -1 */
};

static void
usage(void)
{
	fprintf(stderr, "usage: volray-shim -d DIR -n NAME [-u UID] [-i] [-M PLAN] "
	    "[-X NETNS [-H NAME]] [-g CGROUP]... -- COMMAND [ARG]...\n"
	    "       volray-shim -x [-t] [-N PID] [-g CGROUP]... -- COMMAND "
	    "[ARG]...\n");
	exit(2);
}

static void
on_forward(int sig)
{
	if (child_pid > 0)
		kill(-child_pid, sig);
	else
		pending_sig = sig;
}

static void
on_child(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(wake_fd, "c", 1) < 0) {
		/* The pipe is full: a wake-up is already pending. */
	}
	errno = saved;
}

/* Write path atomically: a temporary file beside it, then rename. */
static int __attribute__((format(printf, 2, 3)))
write_atomic(const char *path, const char *fmt, ...)
{
	char tmp[PATH_MAX];
	va_list ap;
	FILE *f;
	int bad;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp ||
	    (f = fopen(tmp, "w")) == NULL)
		return -1;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

static int
write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	return close(fd) == 0 && ok ? 0 : -1;
}

/*
 * The OOM kills a memory cgroup has seen: "oom_kill N" in memory.events
 * (v2) or memory.oom_control (v1, Linux 4.13 and later), else v1's
 * memory.failcnt (hits of the limit, *exact 0); -1 for a group without
 * either.
 */
static long
oom_count(const char *group, int *exact)
{
	static const char *files[] = { "memory.events", "memory.oom_control" };
	char path[PATH_MAX], line[256];
	long n = -1;
	size_t i;
	FILE *f;

	*exact = 1;
	for (i = 0; i < 2 && n < 0; i++) {
		snprintf(path, sizeof path, "%s/%s", group, files[i]);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof line, f) != NULL)
			if (sscanf(line, "oom_kill %ld", &n) == 1)
				break;
		fclose(f);
	}
	snprintf(path, sizeof path, "%s/memory.failcnt", group);
	if (n < 0 && (f = fopen(path, "r")) != NULL) {
		*exact = 0;
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

/* SIGKILL every process left in a cgroup (some may have left the group). */
static void
kill_group(const char *group)
{
	char path[PATH_MAX];
	FILE *f;
	int pid;

	snprintf(path, sizeof path, "%s/cgroup.procs", group);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 1 && pid != getpid())
			kill(pid, SIGKILL);
	fclose(f);
}

/* Remove a cgroup; its last processes may take a moment to leave. */
static void
remove_group(const char *group)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int i;

	for (i = 0; i < 50; i++) {
		if (rmdir(group) == 0 || errno == ENOENT)
			return;
		if (errno != EBUSY)
			return;
		kill_group(group);
		nanosleep(&ts, NULL);
	}
}

/* Append one CRI record of len bytes of text. */
static void
emit(int log_fd, const struct stream *s, const char *text, size_t len,
    int partial)
{
	char rec[CRILOG_TIME_MAX + 16 + CRILOG_LINE_MAX + 1];
	size_t n = crilog_time_format(crilog_now(), rec);

	n += (size_t)snprintf(rec + n, sizeof rec - n, " %s %c ", s->name,
	    partial ? 'P' : 'F');
	memcpy(rec + n, text, len);
	n += len;
	rec[n++] = '\n';
	if (write(log_fd, rec, n) < 0) {
		/* A full disk loses output; the command runs on. */
	}
}

/* Records for the complete lines in s->buf; a full buffer is a P record. */
static void
flush_lines(int log_fd, struct stream *s, int eof)
{
	size_t start = 0;
	char *nl;

	while ((nl = memchr(s->buf + start, '\n', s->len - start)) != NULL) {
		emit(log_fd, s, s->buf + start, (size_t)(nl - s->buf - start),
		    0);
		start = (size_t)(nl - s->buf) + 1;
	}
	memmove(s->buf, s->buf + start, s->len - start);
	s->len -= start;
	if (s->len == sizeof s->buf || (eof && s->len > 0)) {
		/* containerd: a line at EOF without its newline is full. */
		emit(log_fd, s, s->buf, s->len, !eof);
		s->len = 0;
	}
}

/* Read what a stream has; 0 at EOF (the fd is then closed). */
static int
read_stream(int log_fd, struct stream *s)
{
	ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0) {
		flush_lines(log_fd, s, 1);
		close(s->fd);
		s->fd = -1;
		return 0;
	}
	s->len += (size_t)n;
	flush_lines(log_fd, s, 0);
	return 1;
}

/*
 * One poll of the streams still open (and wake, if >= 0), reading what is
 * there; poll's result.
 */
static int
pump(int log_fd, struct stream *so, struct stream *se, int wake,
    int timeout_ms)
{
	struct stream *of[3];
	struct pollfd pf[3];
	int np = 0, r, i;
	char c;

	if (wake >= 0) {
		of[np] = NULL;
		pf[np].fd = wake;
		pf[np++].events = POLLIN;
	}
	if (so->fd >= 0) {
		of[np] = so;
		pf[np].fd = so->fd;
		pf[np++].events = POLLIN;
	}
	if (se->fd >= 0) {
		of[np] = se;
		pf[np].fd = se->fd;
		pf[np++].events = POLLIN;
	}
	if ((r = poll(pf, (nfds_t)np, timeout_ms)) <= 0)
		return r;
	for (i = 0; i < np; i++) {
		if (pf[i].revents == 0)
			continue;
		if (of[i] == NULL)
			while (read(wake, &c, 1) == 1)
				;
		else
			read_stream(log_fd, of[i]);
	}
	return r;
}

/* The child: its own group, wait for the go-ahead, exec. */
static void __attribute__((noreturn))
run_child(const struct shim_opts *o, int in, int out, int err, int go,
    int report)
{
	char **argv = o->argv;
	char c;
	int e;

	setpgid(0, 0);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	if ((in >= 0 && dup2(in, 0) < 0) || dup2(out, 1) < 0 ||
	    dup2(err, 2) < 0)
		_exit(127);
	/* The shim died before letting us go: never run unwatched. */
	if (read(go, &c, 1) != 1)
		_exit(127);
	/* In its groups now: with a mount plan, it sees them as its own. */
	if (o->plan != NULL)
		shimns_cgroup_view(o->groups, o->ngroups);
	execvp(argv[0], argv);
	e = errno;
	if (write(report, &e, sizeof e) < 0)
		_exit(127);
	_exit(127);
}

static void
install_signals(void)
{
	struct sigaction sa;

	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_forward;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sa.sa_handler = on_child;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
}

/*
 * Fork the command with stdout and stderr to io's pipes, put it in its
 * groups (noting their OOM counts), write the pid file, then let it
 * exec. Its pid; -1 when it could not be started (*exec_errno and what
 * say why: a command that never runs unlimited is better than one that
 * does); *exec_errno alone when exec failed.
 */
static pid_t
start_child(const struct shim_opts *o, const struct shim_io *io,
    long *oom_before, int *exec_errno, char *what, size_t wsize)
{
	char path[PATH_MAX], pidstr[32];
	int go[2], rep[2], i, exact, e = 0;
	ssize_t n;
	pid_t pid;

	*exec_errno = 0;
	snprintf(what, wsize, "exec %s", o->argv[0]);
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(rep, O_CLOEXEC) != 0 ||
	    (pid = fork()) < 0) {
		*exec_errno = errno;
		snprintf(what, wsize, "fork");
		return -1;
	}
	if (pid == 0)
		run_child(o, io->in, io->out[1], io->err[1], go[0],
		    rep[1]);
	setpgid(pid, pid);
	close(io->out[1]);
	close(io->err[1]);
	close(go[0]);
	close(rep[1]);
	/* Into its cgroups before it runs, so that all it uses is charged. */
	snprintf(pidstr, sizeof pidstr, "%d", (int)pid);
	for (i = 0; i < o->ngroups; i++) {
		snprintf(path, sizeof path, "%s/cgroup.procs", o->groups[i]);
		if (write_str(path, pidstr) != 0) {
			/* The child waits for the go-ahead: it never runs. */
			*exec_errno = errno;
			snprintf(what, wsize, "%s", path);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return -1;
		}
		oom_before[i] = oom_count(o->groups[i], &exact);
	}
	snprintf(path, sizeof path, "%s/%s.pid", o->dir, o->name);
	write_atomic(path, "%d %llu %s %d %llu\n", (int)pid, proc_start_time(pid),
	    o->uid, (int)getpid(), proc_start_time(getpid()));
	child_pid = pid;
	if (pending_sig != 0)
		kill(-pid, pending_sig);
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	/* EOF when exec succeeded (close-on-exec), else its errno. */
	while ((n = read(rep[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(rep[0]);
	if (n == (ssize_t)sizeof e)
		*exec_errno = e;
	return pid;
}

/* Write DIR/NAME.status: how it ended, or why it never ran. */
static void
write_status(const char *dir, const char *name, int status, int oom,
    int exec_errno, const char *what)
{
	char path[PATH_MAX], now[CRILOG_TIME_MAX], msg[256];

	crilog_time_format(crilog_now(), now);
	snprintf(path, sizeof path, "%s/%s.status", dir, name);
	if (exec_errno != 0) {
		/* Lowercase, as uv_strerror words it: "no such file or directory". */
		snprintf(msg, sizeof msg, "%s", strerror(exec_errno));
		if (msg[0] >= 'A' && msg[0] <= 'Z')
			msg[0] = (char)(msg[0] - 'A' + 'a');
		write_atomic(path, "exitCode 128\nsignal 0\noomKilled 0\n"
		    "finishedAt %s\nreason RunContainerError\nmessage %s: %s\n",
		    now, what, msg);
	} else if (WIFSIGNALED(status))
		write_atomic(path, "exitCode %d\nsignal %d\noomKilled %d\n"
		    "finishedAt %s\n", 128 + WTERMSIG(status), WTERMSIG(status),
		    oom, now);
	else
		write_atomic(path, "exitCode %d\nsignal 0\noomKilled %d\n"
		    "finishedAt %s\n", WEXITSTATUS(status), oom, now);
}

/* -x: into the container's groups (paths of the host's view). */
static void
join_groups(const char *const *groups, int ngroups)
{
	char pidstr[32], path[PATH_MAX];
	int i;

	snprintf(pidstr, sizeof pidstr, "%d", (int)getpid());
	for (i = 0; i < ngroups; i++) {
		snprintf(path, sizeof path, "%s/cgroup.procs", groups[i]);
		/* A group that is gone: the container is ending; run anyway. */
		(void)write_str(path, pidstr);
	}
}

/* -x: into the container's terminal, then the command. */
static int
run_exec(int tty, char **argv)
{
	int e;

	fcntl(3, F_SETFD, FD_CLOEXEC);
	if (tty) {
		setsid();
		ioctl(0, TIOCSCTTY, 0);
	}
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	e = errno;
	if (write(3, &e, sizeof e) != (ssize_t)sizeof e)
		fprintf(stderr, "%s: %s\n", argv[0], strerror(e));
	return e == ENOENT ? 127 : 126;
}

/* Parse the command line into o; usage() on a bad one. */
static void
parse_opts(int argc, char **argv, struct shim_opts *o)
{
	int opt;

	memset(o, 0, sizeof *o);
	o->uid = "-";
	while ((opt = getopt(argc, argv, "d:n:u:g:ixtM:N:X:H:")) != -1) {
		switch (opt) {
		case 'H':
			o->hostname = optarg;
			break;
		case 'X':
			o->netns = optarg;
			break;
		case 'M':
			o->plan = optarg;
			break;
		case 'N':
			o->ns_pid = atoi(optarg);
			break;
		case 'i':
			o->stdin_fifo = 1;
			break;
		case 'x':
			o->xmode = 1;
			break;
		case 't':
			o->tty = 1;
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'n':
			o->name = optarg;
			break;
		case 'u':
			o->uid = optarg;
			break;
		case 'g':
			if (o->ngroups == MAX_GROUPS)
				usage();
			o->groups[o->ngroups++] = optarg;
			break;
		default:
			usage();
		}
	}
	o->argv = argv + optind;
}

/*
 * -x: into the namespaces of process -N (the container's), keeping the
 * working directory, then run_exec. Returns only when exec failed.
 */
static int
exec_into(const struct shim_opts *o)
{
	char cwd[PATH_MAX];
	int e;

	if (getcwd(cwd, sizeof cwd) == NULL)
		cwd[0] = '\0';
	/* Its groups first: the command's namespace may show them at the
	   hierarchies' roots, where these paths are not. */
	join_groups(o->groups, o->ngroups);
	if (o->ns_pid > 0 && (shimns_join_net(o->ns_pid) != 0 ||
	    shimns_join(o->ns_pid) != 0 ||
	    (cwd[0] != '\0' && chdir(cwd) != 0))) {
		e = errno;
		if (write(3, &e, sizeof e) != (ssize_t)sizeof e)
			fprintf(stderr, "mount namespace of %d: %s\n",
			    o->ns_pid, strerror(e));
		return 126;
	}
	return run_exec(o->tty, o->argv);
}

/*
 * Where the command's output goes: the log (appended to), its pipes and
 * SIGCHLD's. 0, or -1 once DIR/NAME.status says what failed.
 */
static int
open_io(const struct shim_opts *o, struct shim_io *io)
{
	char logp[PATH_MAX];

	io->in = -1;
	snprintf(logp, sizeof logp, "%s/%s.log", o->dir, o->name);
	if ((io->log_fd = open(logp, O_WRONLY | O_CREAT | O_APPEND |
	    O_CLOEXEC, 0600)) < 0 || pipe2(io->out, O_CLOEXEC) != 0 ||
	    pipe2(io->err, O_CLOEXEC) != 0 ||
	    pipe2(io->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		write_status(o->dir, o->name, 0, 0, errno,
		    io->log_fd < 0 ? logp : "pipe");
		return -1;
	}
	wake_fd = io->wake[1];
	return 0;
}

/*
 * The pod's network namespace and host name (-X, -H), then the mount
 * namespace with the volumes (-M), keeping the working directory. 0, or
 * -1 once DIR/NAME.status says what failed.
 */
static int
enter_namespaces(const struct shim_opts *o)
{
	char why[PATH_MAX + 64], state[PATH_MAX], cwd[PATH_MAX];

	if ((o->netns != NULL && shimns_enter_net(o->netns) != 0) ||
	    (o->hostname != NULL && shimns_hostname(o->hostname) != 0)) {
		int e = errno;

		snprintf(why, sizeof why, "network namespace %s",
		    o->netns ? o->netns : "");
		write_status(o->dir, o->name, 0, 0, e, why);
		return -1;
	}
	if (o->plan == NULL)
		return 0;
	snprintf(state, sizeof state, "%s/.ns-%s", o->dir, o->name);
	/* The working directory is a path: kept across a new root. */
	if (getcwd(cwd, sizeof cwd) == NULL)
		snprintf(cwd, sizeof cwd, "/");
	if (shimns_apply(o->plan, state, why, sizeof why) != 0 ||
	    (chdir(cwd) != 0 && (snprintf(why, sizeof why, "chdir %s: %s",
	    cwd, strerror(errno)), 1))) {
		errno = 0;
		write_status(o->dir, o->name, 0, 0, EINVAL, why);
		return -1;
	}
	return 0;
}

/* -i: the FIFO DIR/NAME.stdin, made afresh and held open both ways. 0,
 * or -1 once DIR/NAME.status says what failed. */
static int
open_stdin(const struct shim_opts *o, struct shim_io *io)
{
	char path[PATH_MAX];

	if (!o->stdin_fifo)
		return 0;
	snprintf(path, sizeof path, "%s/%s.stdin", o->dir, o->name);
	unlink(path);
	if (mkfifo(path, 0600) != 0 ||
	    (io->in = open(path, O_RDWR | O_CLOEXEC)) < 0) {
		write_status(o->dir, o->name, 0, 0, errno, path);
		return -1;
	}
	return 0;
}

/*
 * Log the command's output until it ends, kill what is left of it, and
 * log what it wrote before it ended for up to DRAIN_MS more. Its wait
 * status.
 */
static int
watch_child(const struct shim_opts *o, struct shim_io *io, pid_t pid)
{
	struct stream so, se;
	struct timespec t0, t1;
	int status = 0, i;
	long left;

	memset(&so, 0, sizeof so);
	memset(&se, 0, sizeof se);
	so.fd = io->out[0];
	so.name = "stdout";
	se.fd = io->err[0];
	se.name = "stderr";
	while (waitpid(pid, &status, WNOHANG) != pid)
		if (pump(io->log_fd, &so, &se, io->wake[0], -1) < 0 &&
		    errno != EINTR)
			break;
	/* Nothing of the container outlives its main process. */
	kill(-pid, SIGKILL);
	for (i = 0; i < o->ngroups; i++)
		kill_group(o->groups[i]);
	/* What it wrote before it ended; a writer that got away is cut off. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = DRAIN_MS - ((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if ((so.fd < 0 && se.fd < 0) || left <= 0)
			break;
		pump(io->log_fd, &so, &se, -1, (int)left);
	}
	if (so.fd >= 0)
		flush_lines(io->log_fd, &so, 1);
	if (se.fd >= 0)
		flush_lines(io->log_fd, &se, 1);
	return status;
}

/* Whether a cgroup's OOM killer ended the command (1) or not (0). */
static int
oom_killed(const struct shim_opts *o, const long *oom_before, int status)
{
	int i, exact, oom = 0;

	for (i = 0; i < o->ngroups; i++) {
		long after = oom_count(o->groups[i], &exact);

		/* failcnt counts reclaims at the limit too: SIGKILL or nothing. */
		if (after > oom_before[i] && oom_before[i] >= 0 && (exact ||
		    (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)))
			oom = 1;
	}
	return oom;
}

static void
remove_groups(const struct shim_opts *o)
{
	int i;

	for (i = 0; i < o->ngroups; i++)
		remove_group(o->groups[i]);
}

int
main(int argc, char **argv)
{
	struct shim_opts o;
	struct shim_io io;
	char what[PATH_MAX + 8];
	long oom_before[MAX_GROUPS];
	int status, e = 0;
	pid_t pid;

	parse_opts(argc, argv, &o);
	if (o.xmode && o.argv[0] != NULL)
		return exec_into(&o);
	if (o.dir == NULL || o.name == NULL || o.argv[0] == NULL)
		usage();
	install_signals();
	setsid();	/* volrayd's spawn made us a session leader already */
	if (open_io(&o, &io) != 0 || enter_namespaces(&o) != 0 ||
	    open_stdin(&o, &io) != 0)
		return 128;
	if ((pid = start_child(&o, &io, oom_before, &e, what,
	    sizeof what)) < 0) {
		write_status(o.dir, o.name, 0, 0, e, what);
		remove_groups(&o);
		return 128;
	}
	status = watch_child(&o, &io, pid);
	write_status(o.dir, o.name, status, oom_killed(&o, oom_before, status),
	    e, what);
	remove_groups(&o);
	if (e != 0)
		return 128;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
	    WEXITSTATUS(status);
}
