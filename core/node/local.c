/*
 * The local runtime: the machine volrayd runs on as a real node. Each
 * container's command and args run as a process as the user volrayd runs
 * as, with the pod's environment, its working directory and volumes under
 * the pod's directory DATA_DIR/pods/NS/NAME/, under a shim of its own
 * (volray-shim, shim.c): volrayd spawns the shim, which runs the command
 * in its own process group (and cgroups, cgroup.c), writes its output to
 * CONTAINER.log there in the CRI format (the previous instance's log is
 * kept as CONTAINER.previous.log), which pods/log serves, its pid file
 * CONTAINER.pid, and how it ended to CONTAINER.status.
 *
 * No images are pulled and nothing but cgroup limits is isolated: `image`
 * is recorded only. A pod's filesystem paths are rewritten into its
 * directory: a volume at mountPath /etc/config is materialised in
 * ROOT/etc/config (ROOT = DATA_DIR/pods/NS/NAME/root), a workingDir /app
 * becomes ROOT/app, and the environment has VOLRAY_POD_ROOT=ROOT so a
 * command can find them.
 *
 * Stopping sends SIGTERM to the command's process group, then SIGKILL
 * after the grace period; when the main process ends, the shim kills
 * whatever is left of its group. volrayd learns of the end from its child,
 * the shim, and reads the status file for the real exit code (or an OOM
 * kill). A volrayd that crashed leaves the shims running: the next one
 * finds them by their pid files (orphans.c) and, for the pods that still
 * want them, takes them back (local_resume): it watches the shim through
 * a pidfd (pidfd_open(2), Linux 5.3; where that fails, a check of
 * /proc/PID/stat every 500 ms) instead of starting the container again.
 * The rest is killed (local_restore and local_restored, the node
 * manager's steps before and after it takes the pods on). SIGTERM to
 * volrayd kills every container and shim (local_kill_all).
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/crilog.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/proc.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

struct local_ctr;

/* A preStop hook in flight; l is NULL once the container has exited. */
struct prestop {
	struct local_ctr *l;
};

static node_mgr *local_mgr;		/* podnet_sweep's, after a restart */

#define ADOPTED_POLL_MS	500	/* a re-adopted shim without a pidfd */

/*
 * A container instance: its shim, our child (proc) or, re-adopted after a
 * restart, watched through a pidfd (poll) or the wheel (poll_timer).
 */
struct local_ctr {
	union {
		uv_handle_t h;
		uv_process_t proc;
		uv_poll_t poll;
	} u;
	int adopted;
	int pidfd;			/* -1: none */
	struct node *n;
	struct node_ctr *c;		/* NULL once it has exited */
	struct prestop *prestop;	/* a preStop hook in flight */
	pid_t shim_pid;
	unsigned long long shim_start;
	pid_t cmd_pid;			/* 0 until the shim's pid file is read */
	char uid[128];
	wheel_timer kill_timer;
	wheel_timer poll_timer;
	char dir[PATH_MAX];		/* the pod's directory */
	char name[256];			/* the container's */
	struct local_ctr *prev, *next;
};

static struct local_ctr *running;

/* A process of a pod beside its containers (node_proc_start). */
struct node_proc {
	uv_process_t proc;
	node_mgr *m;
	pid_t pid;
	wheel_timer kill_timer;
	char pidfile[PATH_MAX];
	node_proc_done done;
	void *arg;
	node_proc *prev, *next;
};

static node_proc *procs;	/* every node_proc running */

static void
pod_dir(const struct node *n, const struct node_pod *p, char *out,
    size_t size)
{
	util_strf(out, size, "%s/pods/%s/%s", n->m->data_dir, p->ns, p->name);
}

/*
 * Spawn argv in a session and process group of its own (so the whole group
 * can be signalled), stdin from in_fd, stdout and stderr to out_fd.
 */
static int
spawn_group(uv_loop_t *loop, uv_process_t *proc, char **argv, char **env,
    const char *cwd, int in_fd, int out_fd, uv_exit_cb exit_cb)
{
	uv_process_options_t opts;
	uv_stdio_container_t stdio[3];
	int i;

	memset(&opts, 0, sizeof opts);
	for (i = 0; i < 3; i++) {
		stdio[i].flags = UV_INHERIT_FD;
		stdio[i].data.fd = i == 0 ? in_fd : out_fd;
	}
	opts.file = argv[0];
	opts.args = argv;
	opts.env = env;
	opts.cwd = cwd;
	opts.stdio = stdio;
	opts.stdio_count = 3;
	opts.flags = UV_PROCESS_DETACHED;
	opts.exit_cb = exit_cb;
	return uv_spawn(loop, proc, &opts);
}

static void
unlink_ctr(struct local_ctr *l)
{
	if (l->prev != NULL)
		l->prev->next = l->next;
	else if (running == l)
		running = l->next;
	if (l->next != NULL)
		l->next->prev = l->prev;
	l->prev = l->next = NULL;
}

static void
on_closed(uv_handle_t *h)
{
	free(h->data);
}

/*
 * Spawn argv (a pod's process beside its containers: no shim, raw
 * output, not taken back after a restart) as spawn_group does with stdin
 * from /dev/null and stdout and stderr appended to log_path, and record
 * "pid start-time pod-uid" in pidfile so that a restarted volrayd kills
 * it. proc->data is the caller's
 * struct: on failure it is given back (freed; through uv_close once
 * uv_spawn has seen the handle, which stays in the loop's list even when
 * the spawn fails) and *cause says what failed.
 */
static int
spawn_logged(uv_loop_t *loop, uv_process_t *proc, char **argv, char **env,
    const char *cwd, const char *log_path, uv_exit_cb exit_cb,
    const char *pidfile, const char *uid, char **cause)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), r = -1;
	FILE *pf;

	if (fd < 0 || devnull < 0) {
		*cause = util_printf("%s: %s", fd < 0 ? log_path : "/dev/null",
		    strerror(errno));
		free(proc->data);
	} else if ((r = spawn_group(loop, proc, argv, env, cwd, devnull, fd,
	    exit_cb)) != 0) {
		*cause = util_printf("exec %s: %s", argv[0], uv_strerror(r));
		uv_close((uv_handle_t *)proc, on_closed);
	} else if ((pf = fopen(pidfile, "w")) != NULL) {
		fprintf(pf, "%d %llu %s\n", (int)proc->pid,
		    proc_start_time(proc->pid), uid);
		fclose(pf);
	}
	if (fd >= 0)
		close(fd);
	if (devnull >= 0)
		close(devnull);
	return r == 0 ? 0 : -1;
}

static void
ctr_file(const struct local_ctr *l, const char *ext, char *out, size_t size)
{
	util_strf(out, size, "%s/%s.%s", l->dir, l->name, ext);
}

/* The command's pid from the shim's pid file, once the shim wrote it. */
static pid_t
ctr_cmd_pid(struct local_ctr *l)
{
	char path[PATH_MAX];
	int cmd, shim;
	unsigned long long st;
	char uid[128];
	FILE *f;

	if (l->cmd_pid > 0)
		return l->cmd_pid;
	ctr_file(l, "pid", path, sizeof path);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fscanf(f, "%d %llu %127s %d", &cmd, &st, uid, &shim) == 4 &&
	    shim == l->shim_pid && cmd > 1)
		l->cmd_pid = cmd;
	fclose(f);
	return l->cmd_pid;
}

/*
 * Signal the container: its command's process group. Before the shim has
 * written its pid file the shim gets it (and forwards all but SIGKILL;
 * a shim killed before it let the command go never runs it, and one that
 * did had written the file, read again after the kill).
 */
static void
ctr_signal(struct local_ctr *l, int sig)
{
	if (ctr_cmd_pid(l) > 0) {
		kill(-l->cmd_pid, sig);
		if (sig == SIGKILL)
			cgroup_kill(l->uid, l->name);
		return;
	}
	kill(l->shim_pid, sig);
	if (sig == SIGKILL && ctr_cmd_pid(l) > 0)
		kill(-l->cmd_pid, SIGKILL);
}

/*
 * How the instance ended, from the shim's status file: exit code, reason
 * (NULL: by the code), message and end time. 0, or -1 with no file (the
 * shim itself was killed).
 */
static int
read_status(struct local_ctr *l, int *code, char *reason, size_t rsize,
    char *msg, size_t msize, char *ended)
{
	char path[PATH_MAX], line[1024], ts[64] = "";
	int sig = 0, oom = 0, have = 0;
	FILE *f;

	ctr_file(l, "status", path, sizeof path);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	reason[0] = msg[0] = ended[0] = '\0';
	while (fgets(line, sizeof line, f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "exitCode %d", code) == 1)
			have = 1;
		else if (sscanf(line, "signal %d", &sig) == 1 ||
		    sscanf(line, "oomKilled %d", &oom) == 1 ||
		    sscanf(line, "finishedAt %63s", ts) == 1)
			continue;
		else if (strncmp(line, "reason ", 7) == 0)
			util_strf(reason, rsize, "%s", line + 7);
		else if (strncmp(line, "message ", 8) == 0)
			util_strf(msg, msize, "%s", line + 8);
	}
	fclose(f);
	if (!have)
		return -1;
	if (oom)
		snprintf(reason, rsize, "OOMKilled");
	else if (reason[0] == '\0' && sig == SIGKILL)
		snprintf(reason, rsize, "Error");
	{
		int64_t ns;

		if (crilog_time_parse(ts, strlen(ts), &ns) == 0)
			util_time_format((time_t)(ns / 1000000000), ended);
	}
	return 0;
}

static void
on_poll_closed(uv_handle_t *h)
{
	struct local_ctr *l = h->data;

	close(l->pidfd);
	free(l);
}

/* Forget an instance that has ended: its handles and files. */
static void
ctr_release(struct local_ctr *l)
{
	char path[PATH_MAX];

	if (l->prestop != NULL)
		l->prestop->l = NULL;
	ctr_file(l, "pid", path, sizeof path);
	unlink(path);
	ctr_file(l, "status", path, sizeof path);
	unlink(path);
	cgroup_remove(l->uid, l->name, 0);
	wheel_cancel(l->n->m->wheel, &l->kill_timer);
	wheel_cancel(l->n->m->wheel, &l->poll_timer);
	unlink_ctr(l);
	l->c = NULL;
	if (!l->adopted)
		uv_close(&l->u.h, on_closed);
	else if (l->pidfd >= 0) {
		uv_poll_stop(&l->u.poll);
		uv_close(&l->u.h, on_poll_closed);
	} else
		free(l);
}

/*
 * The shim has ended (shim_code, or shim_sig that killed it): tell the
 * pod worker how the command ended.
 */
static void
ctr_ended(struct local_ctr *l, int shim_code, int shim_sig)
{
	struct node_ctr *c = l->c;
	char reason[64], msg[256], ended[32];
	int code;

	if (read_status(l, &code, reason, sizeof reason, msg, sizeof msg,
	    ended) != 0) {
		/* The shim was killed: so is what it ran. */
		if (ctr_cmd_pid(l) > 0)
			kill(-l->cmd_pid, SIGKILL);
		code = shim_sig != 0 ? 128 + shim_sig : shim_code;
		snprintf(reason, sizeof reason, "%s", shim_sig == SIGKILL ?
		    "Error" : "");
		msg[0] = ended[0] = '\0';
	}
	ctr_release(l);
	if (c == NULL)
		return;
	c->rt = NULL;
	if (msg[0] != '\0')
		snprintf(c->message, sizeof c->message, "%s", msg);
	snprintf(c->end_at, sizeof c->end_at, "%s", ended);
	podworker_ctr_exited(c, code, reason[0] ? reason : NULL);
}

static void
on_shim_exit(uv_process_t *proc, int64_t status, int sig)
{
	ctr_ended(proc->data, (int)status, sig);
}

/* Where the shim spawn wants its arguments: SHIM -d DIR -n NAME ... -- argv. */
static char **
shim_argv(const char *shim, const char *dir, const char *name,
    const char *uid, int in, const char *plan, const char *netns,
    const char *hostname, char **groups, char **cmd)
{
	int n = 0, i, ng = 0, nc = 0;
	char **v;

	while (groups != NULL && groups[ng] != NULL)
		ng++;
	while (cmd[nc] != NULL)
		nc++;
	v = xcalloc((size_t)(15 + 2 * ng + nc + 1), sizeof *v);
	v[n++] = (char *)shim;
	v[n++] = "-d";
	v[n++] = (char *)dir;
	v[n++] = "-n";
	v[n++] = (char *)name;
	v[n++] = "-u";
	v[n++] = (char *)uid;
	if (in)
		v[n++] = "-i";
	if (plan != NULL) {
		v[n++] = "-M";
		v[n++] = (char *)plan;
	}
	if (netns != NULL) {
		v[n++] = "-X";
		v[n++] = (char *)netns;
		v[n++] = "-H";
		v[n++] = (char *)hostname;
	}
	for (i = 0; i < ng; i++) {
		v[n++] = "-g";
		v[n++] = groups[i];
	}
	v[n++] = "--";
	for (i = 0; i < nc; i++)
		v[n++] = cmd[i];
	v[n] = NULL;
	return v;
}

/* limits.memory in bytes and limits.cpu in millicores (0: none). */
static void
ctr_limits(const cJSON *spec, int64_t *mem, int64_t *cpu)
{
	double v;

	*mem = *cpu = 0;
	if (quantity_json(json_at(spec, "resources.limits.memory"), &v) == 0 &&
	    v > 0)
		*mem = (int64_t)v;
	if (quantity_json(json_at(spec, "resources.limits.cpu"), &v) == 0 &&
	    v > 0)
		*cpu = (int64_t)(v * 1000 + 0.999);
}

/* Start the shim for argv; 0, or -1 with *cause. */
static int
spawn_shim(struct node *n, struct node_pod *p, struct node_ctr *c,
    const cJSON *spec, char **argv, char **env, const char *cwd,
    const char *dir, const char *plan, const char *hostname, char **cause)
{
	struct local_ctr *l;
	char **groups = NULL, **sargv, *err = NULL, netns[PATH_MAX];
	int64_t mem, cpu;
	int devnull, r;

	if (n->m->shim == NULL || access(n->m->shim, X_OK) != 0) {
		*cause = util_printf("RunContainerError: %s: %s", n->m->shim ?
		    n->m->shim : "volray-shim", n->m->shim ? strerror(errno) :
		    "not found");
		return -1;
	}
	netns[0] = '\0';
	if (podnet_has(p) && podnet_pod_up(p, netns, sizeof netns, &err) !=
	    0) {
		*cause = util_printf("RunContainerError: the pod's network: %s",
		    err);
		free(err);
		return -1;
	}
	ctr_limits(spec, &mem, &cpu);
	if (cgroup_create(p->uid, c->name, mem, cpu, &groups, &err) != 0) {
		*cause = util_printf("RunContainerError: %s", err);
		free(err);
		return -1;
	}
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		*cause = util_printf("RunContainerError: /dev/null: %s",
		    strerror(errno));
		cgroup_paths_free(groups);
		return -1;
	}
	l = xcalloc(1, sizeof *l);
	l->u.proc.data = l;
	l->pidfd = -1;
	l->n = n;
	l->c = c;
	snprintf(l->uid, sizeof l->uid, "%s", p->uid);
	snprintf(l->dir, sizeof l->dir, "%s", dir);
	snprintf(l->name, sizeof l->name, "%s", c->name);
	sargv = shim_argv(n->m->shim, dir, c->name, p->uid,
	    cJSON_IsTrue(json_at(spec, "stdin")), plan, netns[0] ? netns :
	    NULL, hostname, groups, argv);
	/* The shim's own output goes nowhere: the container's is in its log. */
	r = spawn_group(n->m->loop, &l->u.proc, sargv, env, cwd, devnull,
	    devnull, on_shim_exit);
	close(devnull);
	free(sargv);
	cgroup_paths_free(groups);
	if (r != 0) {
		*cause = util_printf(
		    "RunContainerError: exec %s: %s", n->m->shim,
		    uv_strerror(r));
		/* The handle is in the loop's list even when the spawn fails. */
		uv_close(&l->u.h, on_closed);
		cgroup_remove(p->uid, c->name, 0);
		return -1;
	}
	l->shim_pid = l->u.proc.pid;
	l->shim_start = proc_start_time(l->shim_pid);
	l->next = running;
	if (running != NULL)
		running->prev = l;
	running = l;
	c->rt = l;
	return 0;
}

/*
 * Real Ray in a container with the default 64 MiB /dev/shm: its object
 * store does not fit there and Ray keeps it in /tmp (slower), which an
 * event says once per container, with the remedy.
 */
static void
shm_note(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const struct node_ctr *c)
{
	char venv[PATH_MAX], msg[512];

	/* Ray's own container is the pod's first (KubeRay's layout); a
	   sidecar of a Ray image (the autoscaler) keeps no object store. */
	if (c->init || c->instance > 1 || spec != cJSON_GetArrayItem(json_at(pod,
	    "spec.containers"), 0) || !mountplan_shm_default(pod, spec) ||
	    rayimage_check(n->m, c->name, json_str(spec, "image"), venv,
	    sizeof venv, msg, sizeof msg) != 1)
		return;
	snprintf(msg, sizeof msg, "Container %s runs Ray with /dev/shm of "
	    "64Mi, as a container runtime gives it: Ray keeps its object "
	    "store in /tmp when it does not fit there; mount an emptyDir "
	    "of medium Memory at /dev/shm for a larger one", c->name);
	podevent_record(p, "Normal", "SharedMemory", msg);
}

static int
local_start(struct node *n, struct node_pod *p, struct node_ctr *c,
    char **cause)
{
	const store_obj *o = client_get(n->m->c, "pods", p->ns, p->name);
	cJSON *pod = o ? store_obj_tree(o) : NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX], cwd[PATH_MAX], logp[PATH_MAX];
	char prev[PATH_MAX], path[PATH_MAX], plan[PATH_MAX], **argv = NULL;
	struct ctrenv env = { 0 };
	int argc = 0, rc = -1, i;

	if (pod == NULL) {
		*cause = util_printf("the pod is gone");
		return -1;
	}
	cJSON_ArrayForEach(it, json_at(pod, c->init ? "spec.initContainers" :
	    "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			spec = it;
	pod_dir(n, p, dir, sizeof dir);
	/*
	 * An instance a previous volrayd left under these paths and that was
	 * not taken back (another pod of that name, or one whose status said
	 * it was not running) goes first: its files are about to be ours.
	 */
	orphans_discard(p->ns, p->name, c->name);
	util_strf(root, sizeof root, "%s/root", dir);
	if (spec == NULL || ctrenv_mkdirs(root) != 0) {
		*cause = util_printf("RunContainerError: %s", spec == NULL ?
		    "no such container" : strerror(errno));
		goto out;
	}
	/* The pod worker does not start such a container here (it waits
	   as ErrImagePull); this is a guard. */
	if (cJSON_GetArraySize(json_at(spec, "command")) == 0 &&
	    cJSON_GetArraySize(json_at(spec, "args")) == 0) {
		*cause = util_printf("RunContainerError: the local node runs a "
		    "container's command, not its image's entrypoint, and "
		    "container \"%s\" has none", c->name);
		goto out;
	}
	if (ctrenv_build(n, p, pod, spec, root, &env, cause) != 0 ||
	    ctrenv_mount(n, p, pod, spec, root, cause) != 0)
		goto out;
	podnet_env(p, spec, &env);
	argv = xcalloc(cJSON_GetArraySize(json_at(spec, "command")) +
	    cJSON_GetArraySize(json_at(spec, "args")) + 1, sizeof *argv);
	cJSON_ArrayForEach(it, json_at(spec, "command"))
		if (cJSON_IsString(it))
			argv[argc++] = ctrenv_expand(&env, it->valuestring);
	cJSON_ArrayForEach(it, json_at(spec, "args"))
		if (cJSON_IsString(it))
			argv[argc++] = ctrenv_expand(&env, it->valuestring);
	argv[argc] = NULL;
	if (json_str(spec, "workingDir") != NULL) {
		util_strf(cwd, sizeof cwd, "%s/%s", root, json_str(spec,
		    "workingDir"));
		ctrenv_mkdirs(cwd);
	} else
		util_strf(cwd, sizeof cwd, "%s", root);
	util_strf(logp, sizeof logp, "%s/%s.log", dir, c->name);
	if (c->instance > 1) {
		util_strf(prev, sizeof prev, "%s/%s.previous.log", dir, c->name);
		rename(logp, prev);
	}
	/* What an earlier instance's shim left must not be read as ours. */
	util_strf(path, sizeof path, "%s/%s.status", dir, c->name);
	unlink(path);
	util_strf(path, sizeof path, "%s/%s.pid", dir, c->name);
	unlink(path);
	plan[0] = '\0';
	if (mountplan_enabled()) {
		util_strf(plan, sizeof plan, "%s/%s.mounts", dir, c->name);
		if (mountplan_write(n, p, pod, spec, root, plan, cause) != 0)
			goto out;
		shm_note(n, p, pod, spec, c);
	}
	/* The pod's host name, as the kubelet gives it: spec.hostname, else
	   the pod's name (63 characters at most). */
	util_strf(path, sizeof path, "%.63s", json_str(pod, "spec.hostname") ?
	    json_str(pod, "spec.hostname") : p->name);
	rc = spawn_shim(n, p, c, spec, argv, env.kv, cwd, dir,
	    plan[0] ? plan : NULL, path, cause);
out:
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	ctrenv_free(&env);
	cJSON_Delete(pod);
	return rc;
}

static void
on_pidfd(uv_poll_t *h, int status, int events)
{
	(void)status;
	(void)events;
	ctr_ended(h->data, 0, 0);
}

static void
on_poll_tick(wheel_timer *t)
{
	struct local_ctr *l = t->data;

	if (proc_start_time(l->shim_pid) != l->shim_start)
		ctr_ended(l, 0, 0);
	else
		wheel_add(l->n->m->wheel, &l->poll_timer, ADOPTED_POLL_MS,
		    on_poll_tick, l);
}

static void
on_gone(wheel_timer *t)
{
	ctr_ended(t->data, 0, 0);
}

/*
 * A container taken back gets its service-account tokens again: those of
 * the volrayd before are no longer accepted (clients read the file anew,
 * as kubelet's rotation expects).
 */
static void
renew_tokens(struct node *n, struct node_pod *p, struct node_ctr *c)
{
	const store_obj *o = client_get(n->m->c, "pods", p->ns, p->name);
	cJSON *pod = o ? store_obj_tree(o) : NULL;
	const cJSON *it;
	char dir[PATH_MAX], root[PATH_MAX];

	pod_dir(n, p, dir, sizeof dir);
	util_strf(root, sizeof root, "%s/root", dir);
	cJSON_ArrayForEach(it, json_at(pod, c->init ? "spec.initContainers" :
	    "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			ctrenv_renew_tokens(n, p, pod, it, root);
	cJSON_Delete(pod);
}

/*
 * Take back a container a previous volrayd left (orphans.c): watch its
 * shim, which is not our child, for its end; one that ended while no
 * volrayd ran is reported as ended at once, from its status file.
 */
static int
local_resume(struct node *n, struct node_pod *p, struct node_ctr *c)
{
	struct orphan *o = orphans_claim(p->ns, p->name, c->name, p->uid);
	struct local_ctr *l;

	if (o == NULL)
		return -1;
	l = xcalloc(1, sizeof *l);
	l->u.h.data = l;
	l->adopted = 1;
	l->pidfd = -1;
	l->n = n;
	l->c = c;
	l->shim_pid = o->shim_pid;
	l->shim_start = o->shim_start;
	l->cmd_pid = o->cmd_pid;
	snprintf(l->uid, sizeof l->uid, "%s", p->uid);
	snprintf(l->dir, sizeof l->dir, "%s", o->dir);
	snprintf(l->name, sizeof l->name, "%s", c->name);
	l->next = running;
	if (running != NULL)
		running->prev = l;
	running = l;
	c->rt = l;
	if (o->alive) {
		int fd = (int)syscall(SYS_pidfd_open, o->shim_pid, 0);

		/* Checked after the open: the pidfd names our shim or none. */
		if (fd >= 0 && proc_start_time(o->shim_pid) == o->shim_start &&
		    uv_poll_init(n->m->loop, &l->u.poll, fd) == 0) {
			l->pidfd = fd;
			l->u.poll.data = l;
			uv_poll_start(&l->u.poll, UV_READABLE, on_pidfd);
		} else {
			if (fd >= 0)
				close(fd);
			wheel_add(n->m->wheel, &l->poll_timer, 0, on_poll_tick, l);
		}
		renew_tokens(n, p, c);
		log_info("node %s: pod %s container %s: re-adopted (shim %d, "
		    "process group %d)", n->name, p->key, c->name, o->shim_pid,
		    o->cmd_pid);
	} else
		wheel_add(n->m->wheel, &l->poll_timer, 0, on_gone, l);
	free(o);
	return 0;
}

static void
on_kill(wheel_timer *t)
{
	struct local_ctr *l = t->data;

	log_info("node %s: grace period over, killing process group %d",
	    l->n->name, (int)l->cmd_pid);
	ctr_signal(l, SIGKILL);
}

static void local_exec(struct node *, struct node_pod *, struct node_ctr *,
    const cJSON *, uint64_t, void (*)(void *, int), void *);

static void
prestop_done(void *arg, int ok)
{
	struct prestop *ps = arg;
	struct local_ctr *l = ps->l;

	(void)ok;
	free(ps);
	if (l == NULL)
		return;
	l->prestop = NULL;
	ctr_signal(l, SIGTERM);
}

/*
 * Stop a container: its preStop exec hook first (within the grace
 * period), then SIGTERM, and SIGKILL when the grace period is over.
 */
static void
local_stop(struct node *n, struct node_pod *p, struct node_ctr *c,
    uint64_t grace_ms)
{
	struct local_ctr *l = c->rt;
	const store_obj *o;
	cJSON *pod;
	const cJSON *it, *hook = NULL;

	if (l == NULL)
		return;
	if (grace_ms == 0) {
		ctr_signal(l, SIGKILL);
		return;
	}
	wheel_add(n->m->wheel, &l->kill_timer, grace_ms, on_kill, l);
	if (l->prestop != NULL)
		return;		/* the hook's end sends SIGTERM */
	o = client_get(n->m->c, "pods", p->ns, p->name);
	pod = o != NULL ? store_obj_tree(o) : NULL;
	cJSON_ArrayForEach(it, json_at(pod, "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			hook = json_at(it, "lifecycle.preStop.exec.command");
	if (hook != NULL && !c->init) {
		struct prestop *ps = xcalloc(1, sizeof *ps);

		ps->l = l;
		l->prestop = ps;
		local_exec(n, p, c, hook, grace_ms, prestop_done, ps);
	} else
		ctr_signal(l, SIGTERM);
	cJSON_Delete(pod);
}

/*
 * Before the pods are taken on: the cgroups of the local node (when this
 * machine is one), and what a previous volrayd left, which the pods
 * taken on next may claim.
 */
static void
local_restore(node_mgr *m)
{
	if (m->data_dir == NULL)
		return;
	if (m->local_name != NULL) {
		char *why = NULL;

		cJSON *imgs = m->ray_emulated ? NULL : rayimage_node_images(m);

		cgroup_init(m->data_dir);
		m->own_mounts = mountplan_enabled();
		cJSON_Delete(imgs);
		if (podnet_start(m, imgs != NULL, &why) != 0) {
			log_warn("node %s: %s", m->local_name, why);
			free(why);
		}
	}
	local_mgr = m;
	orphans_scan(m->data_dir);
}

/* Whether a cgroup belongs to a container running now. */
static int
keep_group(void *arg, const char *uid, const char *ctr)
{
	struct local_ctr *l;

	(void)arg;
	for (l = running; l != NULL; l = l->next)
		if (strcmp(l->uid, uid) == 0 && strcmp(l->name, ctr) == 0)
			return 1;
	return 0;
}

/* Every pod is taken on: kill what none claimed, and its cgroups. */
static void
local_restored(void)
{
	orphans_kill_rest();
	cgroup_sweep(keep_group, NULL);
	if (local_mgr != NULL)
		podnet_sweep(local_mgr);
}

/* volrayd is stopping: no process of its containers stays behind. */
static void
local_kill_all(void)
{
	struct local_ctr *l;
	node_proc *np;
	char path[PATH_MAX];

	for (l = running; l != NULL; l = l->next) {
		ctr_signal(l, SIGKILL);
		kill(l->shim_pid, SIGKILL);
		ctr_file(l, "pid", path, sizeof path);
		unlink(path);
		ctr_file(l, "status", path, sizeof path);
		unlink(path);
	}
	for (l = running; l != NULL; l = l->next)
		cgroup_remove(l->uid, l->name, 1);
	cgroup_close();
	for (np = procs; np != NULL; np = np->next) {
		kill(-np->pid, SIGKILL);
		unlink(np->pidfile);
	}
	podnet_stop();
}

/* The pod's own address in its namespace, else the node's. */
static int
local_pod_ip(struct node *n, struct node_pod *p, char **cause)
{
	if (podnet_has(p))
		return podnet_assign(p, cause);
	snprintf(p->ip, sizeof p->ip, "%s", n->ip);
	return 0;
}

static void
local_pod_gone(struct node *n, struct node_pod *p)
{
	(void)n;
	podnet_pod_down(p);
}

/* An exec probe: a process in the container's environment, output dropped. */
struct exec_run {
	uv_process_t proc;
	struct node *n;
	wheel_timer timer;
	void (*done)(void *, int);
	void *arg;
	int timed_out;
};

static void
exec_timeout(wheel_timer *t)
{
	struct exec_run *e = t->data;

	e->timed_out = 1;
	kill(-e->proc.pid, SIGKILL);
}

static void
exec_exit(uv_process_t *proc, int64_t status, int sig)
{
	struct exec_run *e = proc->data;

	kill(-proc->pid, SIGKILL);
	wheel_cancel(e->n->m->wheel, &e->timer);
	e->done(e->arg, status == 0 && sig == 0 && !e->timed_out);
	uv_close((uv_handle_t *)proc, on_closed);
}

/*
 * What a process run in c's instance gets (an exec probe, kubectl exec):
 * its environment into env and its working directory into cwd. -1 with
 * *cause.
 */
static int
exec_context(struct node *n, struct node_pod *p, struct node_ctr *c,
    struct ctrenv *env, char *cwd, size_t size, char **cause)
{
	const store_obj *o = client_get(n->m->c, "pods", p->ns, p->name);
	cJSON *pod = o ? store_obj_tree(o) : NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX];
	int rc = -1;

	cJSON_ArrayForEach(it, json_at(pod, c->init ? "spec.initContainers" :
	    "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			spec = it;
	pod_dir(n, p, dir, sizeof dir);
	util_strf(root, sizeof root, "%s/root", dir);
	if (spec == NULL)
		*cause = util_printf(
		    "container %s is gone from pod %s", c->name,
		    p->name);
	else if (ctrenv_build(n, p, pod, spec, root, env, cause) == 0) {
		podnet_env(p, spec, env);
		if (json_str(spec, "workingDir") != NULL)
			util_strf(cwd, size, "%s/%s", root,
			    json_str(spec, "workingDir"));
		else
			util_strf(cwd, size, "%s", root);
		rc = 0;
	}
	cJSON_Delete(pod);
	return rc;
}

static void
local_exec(struct node *n, struct node_pod *p, struct node_ctr *c,
    const cJSON *command, uint64_t timeout_ms, void (*done)(void *, int),
    void *arg)
{
	const cJSON *it;
	char cwd[PATH_MAX], *why = NULL, **argv = NULL, nspid[16];
	struct ctrenv env = { 0 };
	struct exec_run *e = NULL;
	int argc = 0, devnull = -1, ok = 0, i;

	if (cJSON_GetArraySize(command) == 0 ||
	    exec_context(n, p, c, &env, cwd, sizeof cwd, &why) != 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		goto out;
	argv = xcalloc(cJSON_GetArraySize(command) + 1, sizeof *argv);
	cJSON_ArrayForEach(it, command)
		if (cJSON_IsString(it))
			argv[argc++] = ctrenv_expand(&env, it->valuestring);
	e = xcalloc(1, sizeof *e);
	e->proc.data = e;
	e->n = n;
	e->done = done;
	e->arg = arg;
	if (argc == 0) {
		free(e);
		goto out;
	}
	/* Inside the container's mounts, when it has its own. */
	if (mountplan_enabled() && n->m->shim != NULL && c->rt != NULL &&
	    ctr_cmd_pid(c->rt) > 0) {
		snprintf(nspid, sizeof nspid, "%d", ctr_cmd_pid(c->rt));
		argv = xreallocarray(argv, (size_t)argc + 6, sizeof *argv);
		memmove(argv + 5, argv, ((size_t)argc + 1) * sizeof *argv);
		argv[0] = xstrdup(n->m->shim);
		argv[1] = xstrdup("-x");
		argv[2] = xstrdup("-N");
		argv[3] = xstrdup(nspid);
		argv[4] = xstrdup("--");
		argc += 5;
	}
	if (spawn_group(n->m->loop, &e->proc, argv, env.kv, cwd, devnull,
	    devnull, exec_exit) != 0) {
		uv_close((uv_handle_t *)&e->proc, on_closed);
		goto out;
	}
	wheel_add(n->m->wheel, &e->timer, timeout_ms, exec_timeout, e);
	ok = 1;
out:
	if (devnull >= 0)
		close(devnull);
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	ctrenv_free(&env);
	free(why);
	if (!ok)
		done(arg, 0);
}

/* kubectl exec: argv as it is (no $(VAR) expansion, as with the CRI). */
static execproc *
local_exec_stream(struct node *n, struct node_pod *p, struct node_ctr *c,
    char **argv, int tty, int in, const struct execproc_cb *cb, void *arg,
    char **cause)
{
	struct execproc_opts o;
	struct ctrenv env = { 0 };
	char cwd[PATH_MAX];
	execproc *x = NULL;

	if (n->m->shim == NULL) {
		*cause = util_printf("no volray-shim to exec with");
		return NULL;
	}
	if (exec_context(n, p, c, &env, cwd, sizeof cwd, cause) != 0)
		return NULL;
	memset(&o, 0, sizeof o);
	o.shim = n->m->shim;
	o.argv = argv;
	o.env = env.kv;
	o.cwd = cwd;
	o.groups = cgroup_paths(p->uid, c->name);
	o.tty = tty;
	o.in = in;
	if (mountplan_enabled() && c->rt != NULL)
		o.ns_pid = ctr_cmd_pid(c->rt);
	x = execproc_start(n->m->loop, &o, cb, arg, cause);
	cgroup_paths_free(o.groups);
	ctrenv_free(&env);
	return x;
}


static void
proc_exit(uv_process_t *proc, int64_t status, int sig)
{
	node_proc *np = proc->data;
	int code = sig != 0 ? 128 + sig : (int)status;

	kill(-np->pid, SIGKILL);
	unlink(np->pidfile);
	wheel_cancel(np->m->wheel, &np->kill_timer);
	if (np->prev != NULL)
		np->prev->next = np->next;
	else
		procs = np->next;
	if (np->next != NULL)
		np->next->prev = np->prev;
	np->done(np->arg, code);
	uv_close((uv_handle_t *)proc, on_closed);
}

node_proc *
node_proc_start(node_mgr *m, const char *ns, const char *pod,
    const char *ctr, const char *id, char *const *argv, char *const *extra,
    const char *cwd, const char *log_path, node_proc_done done, void *arg,
        char **cause)
{
	const store_obj *o = client_get(m->c, "pods", ns, pod);
	struct node_pod *p = o != NULL ? hmap_get(m->pods, o->uid) : NULL;
	cJSON *tree = NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX];
	struct ctrenv env = { 0 };
	node_proc *np = NULL;
	int i;

	*cause = NULL;
	if (p == NULL || p->node->rt != &local_runtime) {
		*cause = util_printf("pod %s/%s does not run on the local node",
		    ns, pod);
		return NULL;
	}
	tree = store_obj_tree(o);
	cJSON_ArrayForEach(it, json_at(tree, "spec.containers"))
		if (spec == NULL || (ctr != NULL && json_str(it, "name") &&
		    strcmp(json_str(it, "name"), ctr) == 0))
			spec = it;
	pod_dir(p->node, p, dir, sizeof dir);
	util_strf(root, sizeof root, "%s/root", dir);
	if (ctrenv_mkdirs(root) != 0 || ctrenv_build(p->node, p, tree, spec, root, &env,
	    cause) != 0) {
		if (*cause == NULL)
			*cause = util_printf("%s: %s", root, strerror(errno));
		goto out;
	}
	for (i = 0; extra != NULL && extra[i] != NULL; i++) {
		const char *eq = strchr(extra[i], '=');
		char *k;

		if (eq == NULL)
			continue;
		k = xstrndup(extra[i], (size_t)(eq - extra[i]));
		ctrenv_set(&env, k, eq + 1);
		free(k);
	}
	np = xcalloc(1, sizeof *np);
	np->proc.data = np;
	np->m = m;
	np->done = done;
	np->arg = arg;
	util_strf(np->pidfile, sizeof np->pidfile, "%s/%s.pid", dir, id);
	if (spawn_logged(m->loop, &np->proc, (char **)argv, env.kv,
	    cwd != NULL ? cwd : root, log_path, proc_exit, np->pidfile, p->uid,
	    cause) != 0) {
		np = NULL;
		goto out;
	}
	np->pid = np->proc.pid;
	np->next = procs;
	if (procs != NULL)
		procs->prev = np;
	procs = np;
out:
	ctrenv_free(&env);
	cJSON_Delete(tree);
	return np;
}

static void
proc_kill(wheel_timer *t)
{
	node_proc *np = t->data;

	kill(-np->pid, SIGKILL);
}

void
node_proc_stop(node_proc *np, uint64_t grace_ms)
{
	if (grace_ms == 0) {
		kill(-np->pid, SIGKILL);
		return;
	}
	kill(-np->pid, SIGTERM);
	wheel_add(np->m->wheel, &np->kill_timer, grace_ms, proc_kill, np);
}

const struct node_runtime local_runtime = {
	.name = "local",
	.os_image = "volray local node (no images, no filesystem isolation)",
	.version = "volray-local://" VERSION,
	.ip = "127.0.0.1",
	.host_network = 1,
	.pod_ip = local_pod_ip,
	.pod_gone = local_pod_gone,
	.start = local_start,
	.stop = local_stop,
	.exec = local_exec,
	.exec_stream = local_exec_stream,
	.resume = local_resume,
	.restore = local_restore,
	.restored = local_restored,
	.kill_all = local_kill_all,
};
