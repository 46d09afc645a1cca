/*
 * Resource limits of the local node's containers, as cgroups. At start,
 * cgroup_init picks a mode once:
 *
 *  - cgroup v2, when /sys/fs/cgroup is a cgroup2 mount with the memory
 *    and cpu controllers and volrayd may enable them below it: a group
 *    /sys/fs/cgroup/volray/KEY/POD_UID/CONTAINER per container (KEY: a
 *    hash of the data directory, one per daemon), memory.max
 *    (and memory.swap.max 0) from limits.memory, cpu.max "QUOTA 100000"
 *    from limits.cpu; an OOM kill shows in memory.events;
 *  - cgroup v1, when the memory and/or cpu hierarchies are mounted
 *    read-write: MOUNT/volray/KEY/POD_UID/CONTAINER in each,
 *    memory.limit_in_bytes (and memory.memsw.limit_in_bytes, which keeps
 *    swap from stretching the limit, where swap accounting exists),
 *    cpu.cfs_quota_us over a cpu.cfs_period_us of 100 ms; an OOM kill
 *    shows in memory.oom_control;
 *  - none (not root, or no writable hierarchy): limits are recorded in
 *    the pod only.
 *
 * volrayd makes a container's groups and writes its limits; the shim
 * moves the command in before it runs, reads the OOM counter when it
 * ends, and removes the groups; volrayd removes them too (a shim that was
 * killed cannot), and at start removes every group no re-adopted
 * container holds (cgroup_sweep).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/vfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define CPU_PERIOD_US	100000
#define CPU_MIN_QUOTA_US 1000

enum { CG_MEMORY = 1, CG_CPU = 2 };

/* The roots groups are made under: one for v2, one per controller for v1. */
static struct root {
	char path[PATH_MAX];	/* .../volray/KEY */
	int ctl;		/* CG_MEMORY | CG_CPU */
} roots[2];
static int nroots;
static int version;		/* 0 (none), 1 or 2 */
static char mode[512] = "recorded, not enforced";
static char key[32];		/* volray/KEY/: this data directory's */

static int
write_file(const char *dir, const char *file, const char *value)
{
	char path[PATH_MAX];
	int fd, ok;

	if (util_strf(path, sizeof path, "%s/%s", dir, file) != 0 ||
	    (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -1;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	if (close(fd) != 0 || !ok)
		return -1;
	return 0;
}

static int
has_file(const char *dir, const char *file)
{
	char path[PATH_MAX];

	util_strf(path, sizeof path, "%s/%s", dir, file);
	return access(path, F_OK) == 0;
}

static int
mkdir_ok(const char *path)
{
	return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* Whether a comma-separated mount option list has opt. */
static int
has_opt(const char *opts, const char *opt)
{
	size_t n = strlen(opt);
	const char *p = opts;

	while ((p = strstr(p, opt)) != NULL) {
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* cgroup v2 at /sys/fs/cgroup: the controllers enabled down to volray/KEY. */
static int
init_v2(char *why, size_t size)
{
	const char *top = "/sys/fs/cgroup";
	char ctl[256] = "", path[PATH_MAX];
	FILE *f;

	util_strf(path, sizeof path, "%s/cgroup.controllers", top);
	if ((f = fopen(path, "r")) != NULL) {
		if (fgets(ctl, sizeof ctl, f) == NULL)
			ctl[0] = '\0';
		fclose(f);
	}
	if (strstr(ctl, "memory") == NULL || strstr(ctl, "cpu") == NULL) {
		util_strf(why, size, "cgroup v2 without the memory and cpu "
		    "controllers");
		return -1;
	}
	util_strf(path, sizeof path, "%s/volray", top);
	util_strf(roots[0].path, sizeof roots[0].path, "%s/%s", path, key);
	roots[0].ctl = CG_MEMORY | CG_CPU;
	if (write_file(top, "cgroup.subtree_control", "+memory +cpu") != 0 ||
	    mkdir_ok(path) != 0 ||
	    write_file(path, "cgroup.subtree_control", "+memory +cpu") != 0 ||
	    mkdir_ok(roots[0].path) != 0 ||
	    write_file(roots[0].path, "cgroup.subtree_control",
	    "+memory +cpu") != 0) {
		util_strf(why, size, "cgroup v2 at %s is not writable (%s)", top,
		    strerror(errno));
		return -1;
	}
	nroots = 1;
	version = 2;
	util_strf(mode, sizeof mode, "enforced with cgroup v2 under %s",
	    roots[0].path);
	return 0;
}

/* cgroup v1: the memory and cpu hierarchies that are mounted read-write. */
static int
init_v1(char *why, size_t size)
{
	char dev[256], mnt[PATH_MAX], type[64], opts[1024], line[2048];
	char top[PATH_MAX];
	FILE *f = fopen("/proc/self/mounts", "r");
	int i;

	while (f != NULL && fgets(line, sizeof line, f) != NULL) {
		int ctl = 0;

		if (sscanf(line, "%255s %4095s %63s %1023s", dev, mnt, type,
		    opts) != 4 || strcmp(type, "cgroup") != 0 ||
		    !has_opt(opts, "rw"))
			continue;
		if (has_opt(opts, "memory"))
			ctl |= CG_MEMORY;
		if (has_opt(opts, "cpu"))
			ctl |= CG_CPU;
		for (i = 0; i < nroots; i++)
			ctl &= ~roots[i].ctl;
		if (ctl == 0 || nroots == 2)
			continue;
		util_strf(top, sizeof top, "%s/volray", mnt);
		util_strf(roots[nroots].path, sizeof roots[nroots].path,
		    "%s/%s", top, key);
		roots[nroots].ctl = ctl;
		if (mkdir_ok(top) == 0 && mkdir_ok(roots[nroots].path) == 0 &&
		    access(roots[nroots].path, W_OK) == 0)
			nroots++;
	}
	if (f != NULL)
		fclose(f);
	if (nroots == 0) {
		util_strf(why, size, "no writable cgroup hierarchy");
		return -1;
	}
	version = 1;
	util_strf(mode, sizeof mode, "enforced with cgroup v1 under %s%s%s",
	    roots[0].path, nroots > 1 ? " and " : "",
	    nroots > 1 ? roots[1].path : "");
	if (nroots == 1)
		util_strf(mode + strlen(mode), sizeof mode - strlen(mode),
		    " (%s only)", roots[0].ctl & CG_MEMORY ? "memory" : "cpu");
	return 0;
}

/*
 * This daemon's part of volray/: a hash of its data directory, so that
 * daemons on one machine (tests run several) never remove each other's
 * groups, and a restarted one finds its own.
 */
static void
make_key(const char *data_dir)
{
	char real[PATH_MAX];
	const char *p = realpath(data_dir, real) != NULL ? real : data_dir;
	uint64_t h = util_fnv1a(UTIL_FNV_SEED, p, strlen(p));

	util_strf(key, sizeof key, "d%012llx",
	    (unsigned long long)(h & 0xffffffffffffULL));
}

const char *
cgroup_init(const char *data_dir)
{
	struct statfs sf;
	char why[256];

	nroots = 0;
	version = 0;
	make_key(data_dir);
	if (geteuid() != 0)
		util_strf(why, sizeof why, "not root");
	else if (statfs("/sys/fs/cgroup", &sf) == 0 &&
	    sf.f_type == CGROUP2_SUPER_MAGIC) {
		if (init_v2(why, sizeof why) == 0)
			return mode;
	} else if (init_v1(why, sizeof why) == 0)
		return mode;
	nroots = 0;
	version = 0;
	util_strf(mode, sizeof mode, "recorded, not enforced (%s)", why);
	return mode;
}

const char *
cgroup_mode(void)
{
	return mode;
}

static void
group_path(const struct root *r, const char *uid, const char *ctr,
    char *out, size_t size)
{
	if (ctr != NULL)
		util_strf(out, size, "%s/%s/%s", r->path, uid, ctr);
	else
		util_strf(out, size, "%s/%s", r->path, uid);
}

/* The first number of file in dir, or after "field " in it; -1 if none. */
static long long
read_number(const char *dir, const char *file, const char *field)
{
	char path[PATH_MAX], line[256];
	long long v = -1;
	size_t kl = field != NULL ? strlen(field) : 0;
	FILE *f;

	util_strf(path, sizeof path, "%s/%s", dir, file);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof line, f) != NULL)
		if (field == NULL) {
			v = strtoll(line, NULL, 10);
			break;
		} else if (strncmp(line, field, kl) == 0 && line[kl] == ' ') {
			v = strtoll(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * The CPU time (us) of the processes in the group dir, from /proc: for a
 * v1 cpu hierarchy without cpuacct. Those that ended are not counted.
 */
static long long
procs_cpu_usec(const char *dir)
{
	char path[PATH_MAX], line[1024], *p;
	long long total = 0, tck = sysconf(_SC_CLK_TCK);
	unsigned long long ut, st;
	FILE *f, *g;
	int pid;

	util_strf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fscanf(f, "%d", &pid) == 1) {
		util_strf(path, sizeof path, "/proc/%d/stat", pid);
		if ((g = fopen(path, "re")) == NULL)
			continue;
		/* After the command's ")": state is field 3, utime 14. */
		if (fgets(line, sizeof line, g) != NULL &&
		    (p = strrchr(line, ')')) != NULL &&
		    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
		    "%*u %llu %llu", &ut, &st) == 2)
			total += (long long)(ut + st) * 1000000 / (tck > 0 ?
			    tck : 100);
		fclose(g);
	}
	fclose(f);
	return total;
}

int
cgroup_usage(const char *uid, const char *ctr, uint64_t *cpu_usec,
    uint64_t *mem_bytes)
{
	char dir[PATH_MAX];
	long long cpu = -1, mem = -1;
	int i;

	for (i = 0; i < nroots; i++) {
		group_path(&roots[i], uid, ctr, dir, sizeof dir);
		if (version == 2) {
			cpu = read_number(dir, "cpu.stat", "usage_usec");
			mem = read_number(dir, "memory.current", NULL);
		} else if (roots[i].ctl & CG_MEMORY) {
			mem = read_number(dir, "memory.usage_in_bytes", NULL);
			if (cpu < 0)
				cpu = procs_cpu_usec(dir);
		} else if (roots[i].ctl & CG_CPU) {
			/* cpuacct where it shares the cpu hierarchy. */
			cpu = read_number(dir, "cpuacct.usage", NULL);
			cpu = cpu >= 0 ? cpu / 1000 : procs_cpu_usec(dir);
		}
	}
	if (cpu < 0 || mem < 0)
		return -1;
	*cpu_usec = (uint64_t)cpu;
	*mem_bytes = (uint64_t)mem;
	return 0;
}

/* Write the limits a root's controllers take (0: none). */
static int
write_limits(const struct root *r, const char *dir, int64_t mem,
    int64_t cpu_milli)
{
	char v[64];

	if (r->ctl & CG_MEMORY) {
		util_strf(v, sizeof v, "%lld", (long long)mem);
		if (version == 2) {
			if (write_file(dir, "memory.max", mem > 0 ? v : "max") != 0)
				return -1;
			if (has_file(dir, "memory.swap.max") &&
			    write_file(dir, "memory.swap.max", mem > 0 ? "0" :
			    "max") != 0)
				return -1;
		} else {
			/* memsw >= limit at every step: unlimited, then both. */
			int memsw = has_file(dir, "memory.memsw.limit_in_bytes");

			if ((memsw && write_file(dir, "memory.memsw.limit_in_bytes",
			    "-1") != 0) ||
			    write_file(dir, "memory.limit_in_bytes", mem > 0 ? v :
			    "-1") != 0 ||
			    (memsw && mem > 0 && write_file(dir,
			    "memory.memsw.limit_in_bytes", v) != 0))
				return -1;
		}
	}
	if (r->ctl & CG_CPU) {
		long long q = cpu_milli * CPU_PERIOD_US / 1000;

		if (cpu_milli > 0 && q < CPU_MIN_QUOTA_US)
			q = CPU_MIN_QUOTA_US;
		if (version == 2) {
			if (cpu_milli > 0)
				util_strf(v, sizeof v, "%lld %d", q, CPU_PERIOD_US);
			else
				util_strf(v, sizeof v, "max %d", CPU_PERIOD_US);
			if (write_file(dir, "cpu.max", v) != 0)
				return -1;
		} else {
			util_strf(v, sizeof v, "%d", CPU_PERIOD_US);
			if (write_file(dir, "cpu.cfs_period_us", v) != 0)
				return -1;
			util_strf(v, sizeof v, "%lld", cpu_milli > 0 ? q : -1LL);
			if (write_file(dir, "cpu.cfs_quota_us", v) != 0)
				return -1;
		}
	}
	return 0;
}

int
cgroup_create(const char *uid, const char *ctr, int64_t mem,
    int64_t cpu_milli, char ***paths, char **cause)
{
	char dir[PATH_MAX];
	int i;

	*paths = NULL;
	if (version == 0)
		return 0;
	*paths = xcalloc((size_t)nroots + 1, sizeof **paths);
	for (i = 0; i < nroots; i++) {
		group_path(&roots[i], uid, NULL, dir, sizeof dir);
		if (mkdir_ok(dir) != 0 || (version == 2 && write_file(dir,
		    "cgroup.subtree_control", "+memory +cpu") != 0))
			goto fail;
		group_path(&roots[i], uid, ctr, dir, sizeof dir);
		if (mkdir_ok(dir) != 0 || write_limits(&roots[i], dir, mem,
		    cpu_milli) != 0)
			goto fail;
		(*paths)[i] = xstrdup(dir);
	}
	return 0;
fail:
	*cause = util_printf("cgroup %s: %s", dir, strerror(errno));
	cgroup_paths_free(*paths);
	*paths = NULL;
	cgroup_remove(uid, ctr, 0);
	return -1;
}

char **
cgroup_paths(const char *uid, const char *ctr)
{
	char dir[PATH_MAX], **paths;
	int i;

	if (version == 0)
		return NULL;
	paths = xcalloc((size_t)nroots + 1, sizeof *paths);
	for (i = 0; i < nroots; i++) {
		group_path(&roots[i], uid, ctr, dir, sizeof dir);
		paths[i] = xstrdup(dir);
	}
	return paths;
}

void
cgroup_paths_free(char **paths)
{
	int i;

	for (i = 0; paths != NULL && paths[i] != NULL; i++)
		free(paths[i]);
	free(paths);
}

static void
kill_procs(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;
	int pid;

	util_strf(path, sizeof path, "%s/cgroup.procs", dir);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 1)
			kill(pid, SIGKILL);
	fclose(f);
}

void
cgroup_kill(const char *uid, const char *ctr)
{
	char dir[PATH_MAX];
	int i;

	for (i = 0; i < nroots; i++) {
		group_path(&roots[i], uid, ctr, dir, sizeof dir);
		kill_procs(dir);
	}
}

/* Kill what is in a group and remove it, waiting up to tries * 5 ms. */
static void
remove_dir(const char *dir, int tries)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };

	while (rmdir(dir) != 0 && errno == EBUSY && tries-- > 0) {
		kill_procs(dir);
		nanosleep(&ts, NULL);
	}
}

void
cgroup_remove(const char *uid, const char *ctr, int wait)
{
	char dir[PATH_MAX];
	int i;

	for (i = 0; i < nroots; i++) {
		group_path(&roots[i], uid, ctr, dir, sizeof dir);
		remove_dir(dir, wait ? 20 : 0);
		/* The pod's group goes with its last container's. */
		group_path(&roots[i], uid, NULL, dir, sizeof dir);
		rmdir(dir);
	}
}

void
cgroup_sweep(int (*keep)(void *, const char *uid, const char *ctr),
    void *arg)
{
	char dir[PATH_MAX];
	struct dirent *pe, *ce;
	DIR *pd, *cd;
	int i, n = 0;

	for (i = 0; i < nroots; i++) {
		if ((pd = opendir(roots[i].path)) == NULL)
			continue;
		while ((pe = readdir(pd)) != NULL) {
			if (pe->d_type != DT_DIR || pe->d_name[0] == '.')
				continue;
			group_path(&roots[i], pe->d_name, NULL, dir, sizeof dir);
			if ((cd = opendir(dir)) == NULL)
				continue;
			while ((ce = readdir(cd)) != NULL) {
				char sub[PATH_MAX];

				if (ce->d_type != DT_DIR || ce->d_name[0] == '.' ||
				    keep(arg, pe->d_name, ce->d_name))
					continue;
				group_path(&roots[i], pe->d_name, ce->d_name, sub,
				    sizeof sub);
				log_info("node: removing cgroup %s left by the last "
				    "run", sub);
				kill_procs(sub);
				remove_dir(sub, 40);
				n++;
			}
			closedir(cd);
			rmdir(dir);
		}
		closedir(pd);
	}
	if (n > 0)
		log_info("node: removed %d cgroups left by the last run", n);
}

void
cgroup_close(void)
{
	int i;

	/* volray/KEY goes once empty; a data directory may not be used again. */
	for (i = 0; i < nroots; i++)
		rmdir(roots[i].path);
}
