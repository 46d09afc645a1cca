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
 * The rest is killed. SIGTERM to volrayd kills every container and shim.
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
#include "node/node_int.h"

struct local_ctr;

/* A preStop hook in flight; l is NULL once the container has exited. */
struct prestop {
	struct local_ctr *l;
};

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

/* mkdir -p, mode 0700 for what it creates. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -1;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

static void
pod_dir(const struct node *n, const struct node_pod *p, char *out,
    size_t size)
{
	util_strf(out, size, "%s/pods/%s/%s", n->m->data_dir, p->ns, p->name);
}

/* Write a file under root at rel (a volume's item), making directories. */
static int
write_file(const char *dir, const char *rel, const char *data, size_t len)
{
	char path[PATH_MAX], *slash;
	int fd;

	if (strstr(rel, "..") != NULL || rel[0] == '/' ||
	    snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
		return -1;
	if ((slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		mkdirs(path);
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* A Secret's value, base64-decoded into buf; -1 if bad. */
static int
b64_decode(const char *in, char **out, size_t *len)
{
	static const char tbl[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	unsigned v = 0;
	int bits = 0;
	char *b = malloc(n + 1);
	const char *p;

	if (b == NULL)
		return -1;
	for (p = in; *p; p++) {
		const char *q;

		if (*p == '=' || *p == '\n' || *p == '\r')
			continue;
		if ((q = strchr(tbl, *p)) == NULL) {
			free(b);
			return -1;
		}
		v = (v << 6) | (unsigned)(q - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b[o++] = (char)((v >> bits) & 255);
		}
	}
	b[o] = '\0';
	*out = b;
	*len = o;
	return 0;
}

static cJSON *
get_obj(struct node *n, const char *res, const char *ns, const char *name)
{
	const store_obj *o = store_get(n->m->st, res, ns, name);

	return o != NULL ? store_obj_tree(o) : NULL;
}

/* A value of a ConfigMap (data, binaryData) or a Secret (decoded). */
static char *
key_value(struct node *n, const char *res, const char *ns, const char *name,
    const char *key, size_t *len)
{
	cJSON *t = get_obj(n, res, ns, name);
	const cJSON *v;
	char *out = NULL;

	if (t == NULL)
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(json_at(t, "data"), key);
	if (cJSON_IsString(v)) {
		if (strcmp(res, "secrets") == 0) {
			if (b64_decode(v->valuestring, &out, len) != 0)
				out = NULL;
		} else {
			out = strdup(v->valuestring);
			*len = strlen(out);
		}
	} else if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(json_at(t,
	    "binaryData"), key)) && b64_decode(v->valuestring, &out, len) != 0)
		out = NULL;
	cJSON_Delete(t);
	return out;
}

/* metadata.name, spec.nodeName, status.podIP, metadata.labels['k'] ... */
static char *
field_value(const cJSON *pod, const struct node_pod *p, const char *path)
{
	char key[256];
	const char *v;

	if (strcmp(path, "status.podIP") == 0)
		return strdup(p->ip);
	if (strcmp(path, "status.hostIP") == 0)
		return strdup(p->node->ip);
	if (sscanf(path, "metadata.labels['%255[^']']", key) == 1 ||
	    sscanf(path, "metadata.annotations['%255[^']']", key) == 1) {
		const cJSON *m = json_at(pod, path[9] == 'l' ?
		    "metadata.labels" : "metadata.annotations");
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, key);

		return cJSON_IsString(e) ? strdup(e->valuestring) : strdup("");
	}
	v = json_str(pod, path);
	return strdup(v != NULL ? v : "");
}

struct env {
	char **kv;
	int n, cap;
};

static void
env_set(struct env *e, const char *k, const char *v)
{
	size_t kl = strlen(k);
	int i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->kv[i], k, kl) == 0 && e->kv[i][kl] == '=') {
			free(e->kv[i]);
			e->kv[i] = util_printf("%s=%s", k, v);
			return;
		}
	if (e->n + 2 > e->cap) {
		e->cap = e->cap ? e->cap * 2 : 32;
		if ((e->kv = realloc(e->kv, e->cap * sizeof *e->kv)) == NULL)
			fatal("out of memory");
	}
	e->kv[e->n++] = util_printf("%s=%s", k, v);
	e->kv[e->n] = NULL;
}

static const char *
env_get(const struct env *e, const char *k, size_t kl)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->kv[i], k, kl) == 0 && e->kv[i][kl] == '=')
			return e->kv[i] + kl + 1;
	return NULL;
}

/* Kubernetes' $(VAR) expansion: defined names expand, $$ is a $. */
static char *
expand(const struct env *e, const char *s)
{
	size_t cap = strlen(s) * 2 + 16, n = 0;
	char *out = malloc(cap);
	const char *p, *end, *v;

	if (out == NULL)
		fatal("out of memory");
	for (p = s; *p; p++) {
		size_t need;

		if (p[0] == '$' && p[1] == '$') {
			v = "$";
			p++;
		} else if (p[0] == '$' && p[1] == '(' &&
		    (end = strchr(p + 2, ')')) != NULL &&
		    (v = env_get(e, p + 2, (size_t)(end - p - 2))) != NULL)
			p = end;
		else {
			if (n + 2 > cap && (out = realloc(out, cap *= 2)) ==
			    NULL)
				fatal("out of memory");
			out[n++] = *p;
			continue;
		}
		need = n + strlen(v) + 1;
		if (need > cap && (out = realloc(out, cap = need * 2)) == NULL)
			fatal("out of memory");
		memcpy(out + n, v, strlen(v));
		n += strlen(v);
	}
	out[n] = '\0';
	return out;
}

static void
hook_set(void *e, const char *k, const char *v)
{
	env_set(e, k, v);
}

/*
 * The environment of one container: volrayd's PATH, what the node
 * manager's hook adds, the pod's, its own.
 */
static int
build_env(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, struct env *e, char **why)
{
	const cJSON *it;
	const char *path = getenv("PATH");

	env_set(e, "PATH", path ? path : "/usr/local/bin:/usr/bin:/bin");
	env_set(e, "HOSTNAME", p->name);
	env_set(e, "HOME", root);
	env_set(e, "VOLRAY_POD_ROOT", root);
	if (n->m->env_hook != NULL)
		n->m->env_hook(n->m->env_arg, p->ns, p->name, hook_set, e);
	cJSON_ArrayForEach(it, json_at(spec, "envFrom")) {
		const char *prefix = json_str(it, "prefix");
		const char *cm = json_str(it, "configMapRef.name");
		const char *sec = json_str(it, "secretRef.name");
		cJSON *t = cm ? get_obj(n, "configmaps", p->ns, cm) :
		    sec ? get_obj(n, "secrets", p->ns, sec) : NULL;
		const cJSON *kv;

		if (t == NULL) {
			if (!cJSON_IsTrue(json_at(it, cm ? "configMapRef.optional" :
			    "secretRef.optional"))) {
				*why = util_printf("CreateContainerConfigError: "
				    "%s \"%s\" not found", cm ? "configmap" :
				    "secret", cm ? cm : sec ? sec : "");
				return -1;
			}
			continue;
		}
		cJSON_ArrayForEach(kv, json_at(t, "data")) {
			char *k = util_printf("%s%s", prefix ? prefix : "",
			    kv->string), *v = NULL;
			size_t len;

			if (!cJSON_IsString(kv)) {
				free(k);
				continue;
			}
			if (sec != NULL && b64_decode(kv->valuestring, &v, &len) ==
			    0)
				env_set(e, k, v);
			else if (sec == NULL)
				env_set(e, k, kv->valuestring);
			free(v);
			free(k);
		}
		cJSON_Delete(t);
	}
	cJSON_ArrayForEach(it, json_at(spec, "env")) {
		const char *name = json_str(it, "name");
		const cJSON *vf = json_at(it, "valueFrom");
		char *v = NULL;
		size_t len;

		if (name == NULL)
			continue;
		if (vf == NULL) {
			v = expand(e, json_str(it, "value") ? json_str(it,
			    "value") : "");
		} else if (json_at(vf, "fieldRef") != NULL) {
			v = field_value(pod, p, json_str(vf, "fieldRef.fieldPath") ?
			    json_str(vf, "fieldRef.fieldPath") : "");
		} else {
			const char *kind = json_at(vf, "configMapKeyRef") ?
			    "configMapKeyRef" : "secretKeyRef";
			const cJSON *ref = json_at(vf, kind);
			const char *rn = json_str(ref, "name");
			const char *rk = json_str(ref, "key");

			v = rn && rk ? key_value(n, kind[0] == 'c' ? "configmaps" :
			    "secrets", p->ns, rn, rk, &len) : NULL;
			if (v == NULL && !cJSON_IsTrue(json_at(ref, "optional"))) {
				*why = util_printf("CreateContainerConfigError: "
				    "couldn't find key %s in %s %s/%s",
				    rk ? rk : "", kind[0] == 'c' ? "ConfigMap" :
				    "Secret", p->ns, rn ? rn : "");
				return -1;
			}
		}
		if (v != NULL)
			env_set(e, name, v);
		free(v);
	}
	return 0;
}

/* Materialise the volumes the container mounts under root. */
static int
mount_volumes(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, char **why)
{
	const cJSON *m, *vol = NULL, *it;

	cJSON_ArrayForEach(m, json_at(spec, "volumeMounts")) {
		const char *vname = json_str(m, "name");
		const char *mp = json_str(m, "mountPath");
		char dir[PATH_MAX];

		if (vname == NULL || mp == NULL || strstr(mp, "..") != NULL)
			continue;
		cJSON_ArrayForEach(vol, json_at(pod, "spec.volumes"))
			if (json_str(vol, "name") && strcmp(json_str(vol, "name"),
			    vname) == 0)
				break;
		if (vol == NULL)
			continue;
		if (util_strf(dir, sizeof dir, "%s%s%s", root, mp[0] == '/' ? "" :
		    "/", mp) != 0)
			continue;
		if (mkdirs(dir) != 0) {
			*why = util_printf("CreateContainerError: %s: %s", dir,
			    strerror(errno));
			return -1;
		}
		if (json_at(vol, "configMap") != NULL ||
		    json_at(vol, "secret") != NULL) {
			int secret = json_at(vol, "secret") != NULL;
			const char *src = secret ? json_str(vol, "secret.secretName") :
			    json_str(vol, "configMap.name");
			cJSON *t = src ? get_obj(n, secret ? "secrets" :
			    "configmaps", p->ns, src) : NULL;
			const cJSON *items = json_at(vol, secret ? "secret.items" :
			    "configMap.items"), *kv;

			if (t == NULL) {
				if (cJSON_IsTrue(json_at(vol, secret ?
				    "secret.optional" : "configMap.optional")))
					continue;
				*why = util_printf("CreateContainerConfigError: "
				    "%s \"%s\" not found", secret ? "secret" :
				    "configmap", src ? src : "");
				return -1;
			}
			cJSON_ArrayForEach(kv, json_at(t, "data")) {
				const char *rel = kv->string;
				char *v = NULL;
				size_t len = 0;

				if (!cJSON_IsString(kv))
					continue;
				if (items != NULL) {
					rel = NULL;
					cJSON_ArrayForEach(it, items)
						if (json_str(it, "key") &&
						    strcmp(json_str(it, "key"),
						    kv->string) == 0)
							rel = json_str(it, "path");
					if (rel == NULL)
						continue;
				}
				if (secret && b64_decode(kv->valuestring, &v,
				    &len) != 0)
					continue;
				if (!secret) {
					v = strdup(kv->valuestring);
					len = strlen(v);
				}
				write_file(dir, rel, v, len);
				free(v);
			}
			cJSON_Delete(t);
		} else if (json_at(vol, "downwardAPI") != NULL) {
			cJSON_ArrayForEach(it, json_at(vol, "downwardAPI.items")) {
				const char *rel = json_str(it, "path");
				const char *fp = json_str(it, "fieldRef.fieldPath");
				char *v;

				if (rel == NULL || fp == NULL)
					continue;
				v = field_value(pod, p, fp);
				write_file(dir, rel, v, strlen(v));
				free(v);
			}
		}
		/* emptyDir and anything else: the directory is the volume. */
	}
	return 0;
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
 * the spawn fails) and *why says what failed.
 */
static int
spawn_logged(uv_loop_t *loop, uv_process_t *proc, char **argv, char **env,
    const char *cwd, const char *log_path, uv_exit_cb exit_cb,
    const char *pidfile, const char *uid, char **why)
{
	int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC), r = -1;
	FILE *pf;

	if (fd < 0 || devnull < 0) {
		*why = util_printf("%s: %s", fd < 0 ? log_path : "/dev/null",
		    strerror(errno));
		free(proc->data);
	} else if ((r = spawn_group(loop, proc, argv, env, cwd, devnull, fd,
	    exit_cb)) != 0) {
		*why = util_printf("exec %s: %s", argv[0], uv_strerror(r));
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
	node_ctr_exited(c, code, reason[0] ? reason : NULL);
}

static void
on_shim_exit(uv_process_t *proc, int64_t status, int sig)
{
	ctr_ended(proc->data, (int)status, sig);
}

/* Where the shim spawn wants its arguments: SHIM -d DIR -n NAME ... -- argv. */
static char **
shim_argv(const char *shim, const char *dir, const char *name,
    const char *uid, char **groups, char **cmd)
{
	int n = 0, i, ng = 0, nc = 0;
	char **v;

	while (groups != NULL && groups[ng] != NULL)
		ng++;
	while (cmd[nc] != NULL)
		nc++;
	if ((v = calloc((size_t)(8 + 2 * ng + nc + 1), sizeof *v)) == NULL)
		fatal("out of memory");
	v[n++] = (char *)shim;
	v[n++] = "-d";
	v[n++] = (char *)dir;
	v[n++] = "-n";
	v[n++] = (char *)name;
	v[n++] = "-u";
	v[n++] = (char *)uid;
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

/* Start the shim for argv; 0, or -1 with *why. */
static int
spawn_shim(struct node *n, struct node_pod *p, struct node_ctr *c,
    const cJSON *spec, char **argv, char **env, const char *cwd,
    const char *dir, char **why)
{
	struct local_ctr *l;
	char **groups = NULL, **sargv, *err = NULL;
	int64_t mem, cpu;
	int devnull, r;

	if (n->m->shim == NULL || access(n->m->shim, X_OK) != 0) {
		*why = util_printf("RunContainerError: %s: %s", n->m->shim ?
		    n->m->shim : "volray-shim", n->m->shim ? strerror(errno) :
		    "not found");
		return -1;
	}
	ctr_limits(spec, &mem, &cpu);
	if (cgroup_create(p->uid, c->name, mem, cpu, &groups, &err) != 0) {
		*why = util_printf("RunContainerError: %s", err);
		free(err);
		return -1;
	}
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		*why = util_printf("RunContainerError: /dev/null: %s",
		    strerror(errno));
		cgroup_paths_free(groups);
		return -1;
	}
	if ((l = calloc(1, sizeof *l)) == NULL)
		fatal("out of memory");
	l->u.proc.data = l;
	l->pidfd = -1;
	l->n = n;
	l->c = c;
	snprintf(l->uid, sizeof l->uid, "%s", p->uid);
	snprintf(l->dir, sizeof l->dir, "%s", dir);
	snprintf(l->name, sizeof l->name, "%s", c->name);
	sargv = shim_argv(n->m->shim, dir, c->name, p->uid, groups, argv);
	/* The shim's own output goes nowhere: the container's is in its log. */
	r = spawn_group(n->m->loop, &l->u.proc, sargv, env, cwd, devnull,
	    devnull, on_shim_exit);
	close(devnull);
	free(sargv);
	cgroup_paths_free(groups);
	if (r != 0) {
		*why = util_printf("RunContainerError: exec %s: %s", n->m->shim,
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

static int
local_start(struct node *n, struct node_pod *p, struct node_ctr *c, char **why)
{
	const store_obj *o = store_get(n->m->st, "pods", p->ns, p->name);
	cJSON *pod = o ? store_obj_tree(o) : NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX], cwd[PATH_MAX], logp[PATH_MAX];
	char prev[PATH_MAX], path[PATH_MAX], **argv = NULL;
	struct env env = { 0 };
	int argc = 0, rc = -1, i;

	if (pod == NULL) {
		*why = util_printf("the pod is gone");
		return -1;
	}
	cJSON_ArrayForEach(it, json_at(pod, c->init ? "spec.initContainers" :
	    "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			spec = it;
	pod_dir(n, p, dir, sizeof dir);
	util_strf(root, sizeof root, "%s/root", dir);
	if (spec == NULL || mkdirs(root) != 0) {
		*why = util_printf("RunContainerError: %s", spec == NULL ?
		    "no such container" : strerror(errno));
		goto out;
	}
	if (cJSON_GetArraySize(json_at(spec, "command")) == 0 &&
	    cJSON_GetArraySize(json_at(spec, "args")) == 0) {
		*why = util_printf("RunContainerError: container %s has no "
		    "command: the local node runs commands, not images",
		    c->name);
		goto out;
	}
	if (build_env(n, p, pod, spec, root, &env, why) != 0 ||
	    mount_volumes(n, p, pod, spec, root, why) != 0)
		goto out;
	argv = calloc(cJSON_GetArraySize(json_at(spec, "command")) +
	    cJSON_GetArraySize(json_at(spec, "args")) + 1, sizeof *argv);
	cJSON_ArrayForEach(it, json_at(spec, "command"))
		if (cJSON_IsString(it))
			argv[argc++] = expand(&env, it->valuestring);
	cJSON_ArrayForEach(it, json_at(spec, "args"))
		if (cJSON_IsString(it))
			argv[argc++] = expand(&env, it->valuestring);
	argv[argc] = NULL;
	if (json_str(spec, "workingDir") != NULL) {
		util_strf(cwd, sizeof cwd, "%s/%s", root, json_str(spec,
		    "workingDir"));
		mkdirs(cwd);
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
	rc = spawn_shim(n, p, c, spec, argv, env.kv, cwd, dir, why);
out:
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	for (i = 0; i < env.n; i++)
		free(env.kv[i]);
	free(env.kv);
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
	if ((l = calloc(1, sizeof *l)) == NULL)
		fatal("out of memory");
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
	o = store_get(n->m->st, "pods", p->ns, p->name);
	pod = o != NULL ? store_obj_tree(o) : NULL;
	cJSON_ArrayForEach(it, json_at(pod, "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			hook = json_at(it, "lifecycle.preStop.exec.command");
	if (hook != NULL && !c->init) {
		struct prestop *ps = calloc(1, sizeof *ps);

		if (ps == NULL)
			fatal("out of memory");
		ps->l = l;
		l->prestop = ps;
		local_exec(n, p, c, hook, grace_ms, prestop_done, ps);
	} else
		ctr_signal(l, SIGTERM);
	cJSON_Delete(pod);
}

/* Find what a previous volrayd left: the pods taken on next may claim it. */
void
node_local_reap(const char *data_dir)
{
	orphans_scan(data_dir);
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
void
node_local_reap_finish(void)
{
	orphans_kill_rest();
	cgroup_sweep(keep_group, NULL);
}

/* volrayd is stopping: no process of its containers stays behind. */
void
node_local_kill_all(void)
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
	for (np = procs; np != NULL; np = np->next) {
		kill(-np->pid, SIGKILL);
		unlink(np->pidfile);
	}
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

static void
local_exec(struct node *n, struct node_pod *p, struct node_ctr *c,
    const cJSON *command, uint64_t timeout_ms, void (*done)(void *, int),
    void *arg)
{
	const store_obj *o = store_get(n->m->st, "pods", p->ns, p->name);
	cJSON *pod = o ? store_obj_tree(o) : NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX], *why = NULL, **argv = NULL;
	struct env env = { 0 };
	struct exec_run *e = NULL;
	int argc = 0, devnull = -1, ok = 0, i;

	cJSON_ArrayForEach(it, json_at(pod, "spec.containers"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    c->name) == 0)
			spec = it;
	pod_dir(n, p, dir, sizeof dir);
	util_strf(root, sizeof root, "%s/root", dir);
	if (spec == NULL || cJSON_GetArraySize(command) == 0 ||
	    build_env(n, p, pod, spec, root, &env, &why) != 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		goto out;
	argv = calloc(cJSON_GetArraySize(command) + 1, sizeof *argv);
	cJSON_ArrayForEach(it, command)
		if (cJSON_IsString(it))
			argv[argc++] = expand(&env, it->valuestring);
	if ((e = calloc(1, sizeof *e)) == NULL)
		fatal("out of memory");
	e->proc.data = e;
	e->n = n;
	e->done = done;
	e->arg = arg;
	if (argc == 0) {
		free(e);
		goto out;
	}
	if (spawn_group(n->m->loop, &e->proc, argv, env.kv, root, devnull,
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
	for (i = 0; i < env.n; i++)
		free(env.kv[i]);
	free(env.kv);
	free(why);
	cJSON_Delete(pod);
	if (!ok)
		done(arg, 0);
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
    const char *cwd, const char *log_path, node_proc_done done, void *arg, char **cause)
{
	const store_obj *o = store_get(m->st, "pods", ns, pod);
	struct node_pod *p = o != NULL ? hmap_get(m->pods, o->uid) : NULL;
	cJSON *tree = NULL;
	const cJSON *spec = NULL, *it;
	char dir[PATH_MAX], root[PATH_MAX];
	struct env env = { 0 };
	node_proc *np = NULL;
	int i;

	*cause = NULL;
	if (p == NULL || p->node->rt != &node_local_runtime) {
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
	if (mkdirs(root) != 0 || build_env(p->node, p, tree, spec, root, &env,
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
		k = strndup(extra[i], (size_t)(eq - extra[i]));
		env_set(&env, k, eq + 1);
		free(k);
	}
	if ((np = calloc(1, sizeof *np)) == NULL)
		fatal("out of memory");
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
	for (i = 0; i < env.n; i++)
		free(env.kv[i]);
	free(env.kv);
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

const struct node_runtime node_local_runtime = {
	"local",
	local_start,
	local_stop,
	1,
	local_exec,
	local_resume,
};
