/*
 * What a previous volrayd left on the local node, found through the pid
 * files under DATA_DIR/pods/NS/NAME/ at start.
 *
 *  - A container's file (NAME.pid, written by its shim: "CMDPID CMDSTART
 *    UID SHIMPID SHIMSTART") whose shim still runs, or whose shim has
 *    ended and left NAME.status, is an orphan: the pod worker may claim
 *    it (orphans_claim) when the pod, still in the store and bound here,
 *    wants that container running; the local runtime then watches it
 *    instead of starting it again.
 *  - What is not claimed once every pod is taken on is killed
 *    (orphans_kill_rest): its command's process group and its shim. So
 *    is one whose container starts anew before that (orphans_discard):
 *    the new instance's files have the same paths.
 *  - A process of a pod beside its containers (node_proc_start's "PID
 *    START UID") is killed at once: nothing takes those back.
 *
 * The start times (field 22 of /proc/PID/stat) tell our process from
 * another that got the same pid since.
 */
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/proc.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

static struct orphan *orphans;

/* Kill a process group if its leader is still the process we started. */
static void
kill_if_ours(pid_t pid, unsigned long long start, const char *why)
{
	if (pid > 1 && proc_start_time(pid) == start) {
		log_info("node: killing process group %d left by the last run "
		    "(%s)", (int)pid, why);
		kill(-pid, SIGKILL);
	}
}

/* DATA_DIR/pods/NS/NAME/CTR.pid into its parts; -1 if it is not one. */
static int
split_path(const char *path, struct orphan *o)
{
	char buf[PATH_MAX], *ctr, *name, *ns, *dot;

	util_strf(buf, sizeof buf, "%s", path);
	if ((ctr = strrchr(buf, '/')) == NULL)
		return -1;
	*ctr++ = '\0';
	util_strf(o->dir, sizeof o->dir, "%s", buf);
	if ((name = strrchr(buf, '/')) == NULL)
		return -1;
	*name++ = '\0';
	if ((ns = strrchr(buf, '/')) == NULL)
		return -1;
	ns++;
	if ((dot = strrchr(ctr, '.')) != NULL)
		*dot = '\0';
	util_strf(o->ns, sizeof o->ns, "%s", ns);
	util_strf(o->name, sizeof o->name, "%s", name);
	util_strf(o->ctr, sizeof o->ctr, "%s", ctr);
	return 0;
}

void
orphans_file(const struct orphan *o, const char *ext, char *out, size_t size)
{
	util_strf(out, size, "%s/%s.%s", o->dir, o->ctr, ext);
}

void
orphans_scan(const char *data_dir)
{
	char pattern[PATH_MAX];
	glob_t g;
	size_t i;

	if (util_strf(pattern, sizeof pattern, "%s/pods/*/*/*.pid", data_dir) !=
	    0 || glob(pattern, 0, NULL, &g) != 0)
		return;
	for (i = 0; i < g.gl_pathc; i++) {
		struct orphan o;
		char status[PATH_MAX];
		FILE *pf = fopen(g.gl_pathv[i], "r");
		int n = 0;

		memset(&o, 0, sizeof o);
		if (pf != NULL) {
			n = fscanf(pf, "%d %llu %127s %d %llu", &o.cmd_pid,
			    &o.cmd_start, o.uid, &o.shim_pid, &o.shim_start);
			fclose(pf);
		}
		if (n != 5 || split_path(g.gl_pathv[i], &o) != 0) {
			/* A pod's process beside its containers. */
			if (n >= 2)
				kill_if_ours(o.cmd_pid, o.cmd_start,
				    g.gl_pathv[i]);
			unlink(g.gl_pathv[i]);
			continue;
		}
		o.alive = o.shim_pid > 1 &&
		    proc_start_time(o.shim_pid) == o.shim_start;
		orphans_file(&o, "status", status, sizeof status);
		if (!o.alive && access(status, F_OK) != 0) {
			/* No shim and no word of how it ended: it is lost. */
			kill_if_ours(o.cmd_pid, o.cmd_start, "its shim is gone");
			unlink(g.gl_pathv[i]);
			continue;
		}
		{
			struct orphan *c = xmalloc(sizeof *c);

			*c = o;
			c->next = orphans;
			orphans = c;
		}
	}
	globfree(&g);
}

struct orphan *
orphans_claim(const char *ns, const char *name, const char *ctr,
    const char *uid)
{
	struct orphan **pp, *o;

	for (pp = &orphans; (o = *pp) != NULL; pp = &o->next)
		if (strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0 &&
		    strcmp(o->ctr, ctr) == 0 && strcmp(o->uid, uid) == 0) {
			*pp = o->next;
			o->next = NULL;
			return o;
		}
	return NULL;
}

/* Kill an orphan that is not taken back, and forget its files. */
static void
discard(struct orphan *o, const char *why)
{
	char path[PATH_MAX], msg[1024];

	if (o->alive) {
		/* The shim first: it must not write a status for what follows. */
		if (proc_start_time(o->shim_pid) == o->shim_start)
			kill(o->shim_pid, SIGKILL);
		util_strf(msg, sizeof msg, "pod %s/%s container %s %s", o->ns,
		    o->name, o->ctr, why);
		kill_if_ours(o->cmd_pid, o->cmd_start, msg);
	}
	orphans_file(o, "pid", path, sizeof path);
	unlink(path);
	orphans_file(o, "status", path, sizeof path);
	unlink(path);
	free(o);
}

void
orphans_discard(const char *ns, const char *name, const char *ctr)
{
	struct orphan **pp = &orphans, *o;

	while ((o = *pp) != NULL) {
		if (strcmp(o->ns, ns) == 0 && strcmp(o->name, name) == 0 &&
		    strcmp(o->ctr, ctr) == 0) {
			*pp = o->next;
			discard(o, "starts anew");
		} else
			pp = &o->next;
	}
}

void
orphans_kill_rest(void)
{
	struct orphan *o;

	while ((o = orphans) != NULL) {
		orphans = o->next;
		discard(o, "is not to run here");
	}
}
