/*
 * volray-shim's mount namespace (-M PLAN): a local container's own view
 * of this machine's files, as root. The plan, written by volrayd
 * (mountplan.c), has one line per mount, "SRC<TAB>DST<TAB>ro|rw": a
 * volume's directory (or a file: /etc/hosts, /etc/resolv.conf, a subPath)
 * to show at DST. The shim
 *
 *  - moves into a mount namespace of its own whose mounts propagate
 *    nowhere (MS_PRIVATE, recursively), so nothing it does reaches the
 *    host;
 *  - opens every SRC there first (O_PATH), since a later mount may hide
 *    it;
 *  - where DST does not exist, covers its nearest existing ancestor A
 *    with an overlay whose lower layer is A and whose upper layer is on a
 *    tmpfs of its own, and makes DST there: the container sees A's files
 *    and its mount point, the host's A is not changed; where even DST's
 *    first component is missing from "/", the container gets a root of
 *    its own first (a tmpfs with every entry of "/" bound into it, then
 *    pivot_root), in which that component is made;
 *  - bind-mounts each SRC at DST, read-only when the plan says so; a
 *    line "tmpfs<TAB>DST<TAB>size=N" mounts a tmpfs of N bytes there
 *    instead (/dev/shm, an emptyDir of medium Memory).
 *
 * Every process of the container (its command, kubectl exec through
 * volray-shim -x -N PID, exec probes) lives in that namespace.
 *
 * The command itself then gets a mount namespace of its own inside that
 * one, where its cgroups are shown at the hierarchies' roots
 * (shimns_cgroup_view), so that what it reads of its limits is its own;
 * kubectl exec joins the command's.
 *
 * With a pod network (podnet.c), the shim also joins the pod's network
 * namespace (-X, shimns_enter_net) and gets a UTS namespace with the
 * pod's host name (-H, shimns_hostname); volray-shim -x -N PID joins
 * both of PID's (shimns_join_net).
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <sys/syscall.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node/shimns.h"

#define MAX_MOUNTS	256

struct mnt {
	char src[PATH_MAX];
	char dst[PATH_MAX];
	int ro;
	int fd;				/* SRC, opened O_PATH */
	int dir;
	char tmpfs[64];			/* "size=N": a tmpfs, not a bind */
};

static int novl;			/* overlays made so far */
static char overlaid[MAX_MOUNTS][PATH_MAX];	/* and where */

/* Whether dir is on an overlay made here already (writable). */
static int
on_overlay(const char *dir)
{
	size_t n;
	int i;

	for (i = 0; i < novl; i++) {
		n = strlen(overlaid[i]);
		if (strncmp(dir, overlaid[i], n) == 0 &&
		    (dir[n] == '\0' || dir[n] == '/'))
			return 1;
	}
	return 0;
}

static int
fail(char *why, size_t size, const char *what, const char *path)
{
	snprintf(why, size, "%s %s: %s", what, path, strerror(errno));
	return -1;
}

/* mkdir -p for a path inside the namespace. */
static int
mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof buf, "%s", path);
	for (p = buf + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* The nearest existing ancestor of path into out ("/" at worst). */
static void
existing_ancestor(const char *path, char *out, size_t size)
{
	struct stat st;
	char *slash;

	snprintf(out, size, "%s", path);
	while (stat(out, &st) != 0) {
		if ((slash = strrchr(out, '/')) == NULL || slash == out) {
			snprintf(out, size, "/");
			return;
		}
		*slash = '\0';
	}
}

/* Cover dir with an overlay whose upper layer is on a tmpfs under tmp. */
static int
overlay(const char *dir, const char *tmp, char *why, size_t size)
{
	char layers[PATH_MAX], up[PATH_MAX], work[PATH_MAX];
	char opts[3 * PATH_MAX + 64];

	snprintf(layers, sizeof layers, "%s/layers", tmp);
	if (novl == 0 && (mkdirs(layers) != 0 || mount("tmpfs", layers,
	    "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") != 0))
		return fail(why, size, "tmpfs at", layers);
	if (snprintf(up, sizeof up, "%s/%d/upper", layers, novl) >=
	    (int)sizeof up || snprintf(work, sizeof work, "%s/%d/work",
	    layers, novl) >= (int)sizeof work) {
		errno = ENAMETOOLONG;
		return fail(why, size, "the layers under", layers);
	}
	if (mkdirs(up) != 0 || mkdirs(work) != 0)
		return fail(why, size, "mkdir", up);
	snprintf(opts, sizeof opts, "lowerdir=%s,upperdir=%s,workdir=%s",
	    dir, up, work);
	if (mount("overlay", dir, "overlay", 0, opts) != 0)
		return fail(why, size, "overlay on", dir);
	snprintf(overlaid[novl], sizeof overlaid[novl], "%s", dir);
	novl++;
	return 0;
}

/*
 * DST (under root: "" or the new root) as a mount point of the right
 * type, on an overlay if need be; its path into path.
 */
static int
make_target(struct mnt *m, const char *root, const char *tmp, char *path,
    size_t psize, char *why, size_t size)
{
	char anc[PATH_MAX], parent[PATH_MAX], *slash;
	struct stat st;
	int fd;

	snprintf(path, psize, "%s%s", root, m->dst);
	if (stat(path, &st) == 0)
		return 0;
	existing_ancestor(path, anc, sizeof anc);
	if (strcmp(anc, "/") == 0) {
		errno = ENOENT;
		return fail(why, size, "no mount point under / for", m->dst);
	}
	/* The new root is a tmpfs of ours: what is made there is ours. */
	if (strcmp(anc, root) != 0 && !on_overlay(anc) &&
	    (novl == MAX_MOUNTS || overlay(anc, tmp, why, size) != 0))
		return -1;
	if (m->dir)
		return mkdirs(path) != 0 ? fail(why, size, "mkdir", m->dst) : 0;
	snprintf(parent, sizeof parent, "%s", path);
	if ((slash = strrchr(parent, '/')) != NULL && slash != parent)
		*slash = '\0';
	if (mkdirs(parent) != 0 || (fd = open(path, O_WRONLY | O_CREAT |
	    O_CLOEXEC, 0644)) < 0)
		return fail(why, size, "create", m->dst);
	close(fd);
	return 0;
}

static int
read_plan(const char *plan, struct mnt *ms, int *n, char *why, size_t size)
{
	char line[2 * PATH_MAX + 16], *src, *dst, *mode;
	FILE *f = fopen(plan, "re");
	struct stat st;

	if (f == NULL)
		return fail(why, size, "open", plan);
	*n = 0;
	while (fgets(line, sizeof line, f) != NULL && *n < MAX_MOUNTS) {
		line[strcspn(line, "\n")] = '\0';
		src = line;
		if ((dst = strchr(src, '\t')) == NULL)
			continue;
		*dst++ = '\0';
		if ((mode = strchr(dst, '\t')) == NULL)
			continue;
		*mode++ = '\0';
		if (*dst != '/' || strlen(src) >= sizeof ms[*n].src ||
		    strlen(dst) >= sizeof ms[*n].dst)
			continue;
		memcpy(ms[*n].src, src, strlen(src) + 1);
		memcpy(ms[*n].dst, dst, strlen(dst) + 1);
		ms[*n].tmpfs[0] = '\0';
		/* "tmpfs DST size=N": a memory-backed directory of N bytes. */
		if (strcmp(src, "tmpfs") == 0 && strncmp(mode, "size=", 5) == 0 &&
		    strlen(mode) < sizeof ms[*n].tmpfs) {
			memcpy(ms[*n].tmpfs, mode, strlen(mode) + 1);
			ms[*n].ro = 0;
			ms[*n].fd = -1;
			ms[*n].dir = 1;
			(*n)++;
			continue;
		}
		ms[*n].ro = strcmp(mode, "ro") == 0;
		if ((ms[*n].fd = open(src, O_PATH | O_CLOEXEC)) < 0 ||
		    fstat(ms[*n].fd, &st) != 0) {
			fclose(f);
			return fail(why, size, "open", src);
		}
		ms[*n].dir = S_ISDIR(st.st_mode);
		(*n)++;
	}
	fclose(f);
	return 0;
}

/* Whether some DST's first component is missing from "/". */
static int
needs_root(const struct mnt *ms, int n)
{
	char top[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(top, sizeof top, "%s", ms[i].dst);
		top[1 + strcspn(top + 1, "/")] = '\0';
		if (stat(top, &st) != 0)
			return 1;
	}
	return 0;
}

/*
 * A root of our own on a tmpfs at root: every entry of "/" bound (or, a
 * symbolic link, copied) into it, so that top-level mount points can be
 * made there without touching the host's "/".
 */
static int
build_root(const char *root, char *why, size_t size)
{
	char path[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	struct stat st;
	ssize_t k;
	DIR *d;
	int fd = -1;

	if (mkdirs(root) != 0 || mount("tmpfs", root, "tmpfs", MS_NOSUID |
	    MS_NODEV, "mode=0755") != 0)
		return fail(why, size, "tmpfs at", root);
	if ((d = opendir("/")) == NULL)
		return fail(why, size, "read", "/");
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "/%s", e->d_name);
		if (lstat(path, &st) != 0)
			continue;
		snprintf(link, sizeof link, "%s/%s", root, e->d_name);
		if (S_ISLNK(st.st_mode)) {
			if ((k = readlink(path, target, sizeof target - 1)) >
			    0) {
				target[k] = '\0';
				if (symlink(target, link) != 0)
					goto bad;
			}
			continue;
		}
		if (S_ISDIR(st.st_mode) ? mkdir(link, 0755) != 0 :
		    (fd = open(link, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			goto bad;
		if (!S_ISDIR(st.st_mode))
			close(fd);
		if (mount(path, link, NULL, MS_BIND | MS_REC, NULL) != 0)
			goto bad;
	}
	closedir(d);
	return 0;
bad:
	closedir(d);
	return fail(why, size, "the new root's", link);
}

/* Make root "/" (pivot_root), the old one detached. */
static int
enter_root(const char *root, char *why, size_t size)
{
	char old[PATH_MAX];

	snprintf(old, sizeof old, "%s/.oldroot", root);
	if (mkdir(old, 0700) != 0 ||
	    syscall(SYS_pivot_root, root, old) != 0)
		return fail(why, size, "pivot_root to", root);
	if (chdir("/") != 0 || umount2("/.oldroot", MNT_DETACH) != 0)
		return fail(why, size, "detach", "the old root");
	rmdir("/.oldroot");
	return 0;
}

int
shimns_apply(const char *plan, const char *tmp, char *why, size_t size)
{
	static struct mnt ms[MAX_MOUNTS];
	char src[64], root[PATH_MAX], path[PATH_MAX];
	int n, i, newroot;
	unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID |
	    MS_NODEV;

	/* The sources are opened in the new namespace: a bind from a mount
	   of another namespace is refused. */
	if (unshare(CLONE_NEWNS) != 0)
		return fail(why, size, "unshare", "CLONE_NEWNS");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
		return fail(why, size, "make private", "/");
	if (read_plan(plan, ms, &n, why, size) != 0)
		return -1;
	root[0] = '\0';
	if ((newroot = needs_root(ms, n))) {
		snprintf(root, sizeof root, "%s/root", tmp);
		if (build_root(root, why, size) != 0)
			return -1;
	}
	for (i = 0; i < n; i++) {
		if (make_target(&ms[i], root, tmp, path, sizeof path, why,
		    size) != 0)
			return -1;
		if (ms[i].tmpfs[0] != '\0') {
			char opts[96];

			snprintf(opts, sizeof opts, "mode=1777,%s", ms[i].tmpfs);
			if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
			    opts) != 0)
				return fail(why, size, "tmpfs at", ms[i].dst);
			continue;
		}
		snprintf(src, sizeof src, "/proc/self/fd/%d", ms[i].fd);
		if (mount(src, path, NULL, MS_BIND | MS_REC, NULL) != 0)
			return fail(why, size, "bind at", ms[i].dst);
		if (ms[i].ro && mount(NULL, path, NULL, ro, NULL) != 0)
			return fail(why, size, "read-only", ms[i].dst);
		close(ms[i].fd);
	}
	return newroot ? enter_root(root, why, size) : 0;
}

int
shimns_join(int pid)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof path, "/proc/%d/ns/mnt", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = setns(fd, CLONE_NEWNS);
	close(fd);
	return r;
}

int
shimns_enter_net(const char *path)
{
	int fd, r, e;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = setns(fd, CLONE_NEWNET);
	e = errno;
	close(fd);
	errno = e;
	return r;
}

int
shimns_join_net(int pid)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof path, "/proc/%d/ns/net", pid);
	if (shimns_enter_net(path) != 0)
		return -1;
	/* Its host name too (a pod's, -H). */
	snprintf(path, sizeof path, "/proc/%d/ns/uts", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = setns(fd, CLONE_NEWUTS);
	close(fd);
	return r;
}

int
shimns_hostname(const char *name)
{
	if (unshare(CLONE_NEWUTS) != 0)
		return -1;
	return sethostname(name, strlen(name));
}

void
shimns_cgroup_view(const char *const *groups, int ngroups)
{
	char root[PATH_MAX], *cut;
	int i;

	if (ngroups == 0 || unshare(CLONE_NEWNS) != 0)
		return;
	for (i = 0; i < ngroups; i++) {
		if (snprintf(root, sizeof root, "%s", groups[i]) >=
		    (int)sizeof root || (cut = strstr(root, "/volray/")) ==
		    NULL || cut == root)
			continue;
		*cut = '\0';
		(void)mount(groups[i], root, NULL, MS_BIND, NULL);
	}
}
