/*
 * Real Ray on the local node, as a kubelet's images: the Ray versions
 * installed under the --ray-dir directory (DIR/VERSION, a virtual
 * environment with bin/ray and bin/python3, as scripts/ray.sh makes
 * them) are the node's images. A container on the local node whose image
 * is rayproject/ray[-ml]:VERSION[-SUFFIX] (-py310, -cpu, -gpu, ...: the
 * same Ray), but KubeRay's autoscaler sidecar and a RayJob's submitter
 * (keeps_volray_ray), runs with DIR/VERSION/bin first on its PATH, so
 * `ray`,
 * `python` and `python3` are that install's, and the environment a Ray
 * image gives (rayimage_env). One whose Ray is not installed (or whose
 * tag names no release: latest, nightly, a digest) is not started: the
 * pod worker makes it wait as a kubelet's unpullable image, with why in
 * its message (rayimage_check). Ray's sessions (RAY_TMPDIR) go with
 * the pod (rayimage_forget). With emulation (--ray-emulated) Ray
 * images run as any other. The Node's status.images lists each install
 * under the names that map to it (rayimage_node_images), its size
 * counted once.
 */
#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"
#include "node/rayimage.h"

/* Where Ray keeps its sessions: short, for Ray's AF_UNIX socket paths. */
#define RAY_TMP		"/tmp/volray-ray"
/*
 * Containers of Ray images that keep volray's own `ray` while pods share
 * the host's network (no Service address routes, no kubernetes Service
 * for in-cluster clients): KubeRay's autoscaler sidecar (raypod.lua),
 * whose `ray kuberay-autoscaler` then only waits, and a RayJob's
 * submitter (raysubmitter.lua), whose `ray job` verbs reach the head's
 * real dashboard through the API's service proxy. With the pod network
 * both run Ray's own: the autoscaler reaches the API through the
 * kubernetes Service with its pod's service-account token, and the
 * submitter runs `ray job submit` to the head Service.
 */
static int
keeps_volray_ray(const node_mgr *m, const char *ctr)
{
	return ctr != NULL && !m->pod_network &&
	    (strcmp(ctr, "autoscaler") == 0 ||
	    strcmp(ctr, "ray-job-submitter") == 0);
}

/* The size of an install, counted once (a walk of ~20,000 files). */
struct sized {
	char path[PATH_MAX];
	long long bytes;
	struct sized *next;
};
static struct sized *sizes;
static long long walk_bytes;

int
rayimage_parse(const char *image, char *ver, size_t size)
{
	static const char *const prefixes[] = { "docker.io/",
	    "index.docker.io/", "" };
	const char *s = NULL, *tag, *p;
	size_t i, n;

	ver[0] = '\0';
	if (image == NULL)
		return 0;
	for (i = 0; i < sizeof prefixes / sizeof *prefixes && s == NULL; i++)
		if (strncmp(image, prefixes[i], strlen(prefixes[i])) == 0)
			s = image + strlen(prefixes[i]);
	if (strncmp(s, "rayproject/ray", 14) != 0)
		return 0;
	s += 14;
	if (strncmp(s, "-ml", 3) == 0)
		s += 3;
	if (*s != '\0' && *s != ':' && *s != '@')
		return 0;
	if (*s != ':')
		return 1;		/* latest, or a digest */
	tag = s + 1;
	/* N.N.N, then the end, '-' or '@'. */
	p = tag;
	for (i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*p))
			return 1;
		while (isdigit((unsigned char)*p))
			p++;
		if (i < 2 && *p++ != '.')
			return 1;
	}
	if (*p != '\0' && *p != '-' && *p != '@')
		return 1;
	n = (size_t)(p - tag);
	if (n < size) {
		memcpy(ver, tag, n);
		ver[n] = '\0';
	}
	return 1;
}

void
rayimage_set(node_mgr *m, const char *dir, int emulated)
{
	free(m->ray_dir);
	m->ray_dir = dir != NULL && *dir != '\0' ? xstrdup(dir) : NULL;
	m->ray_emulated = emulated;
}

int
rayimage_real(node_mgr *m, const char *node, const char *image)
{
	char ver[64];

	return !m->ray_emulated && m->local_name != NULL && node != NULL &&
	    strcmp(node, m->local_name) == 0 &&
	    rayimage_parse(image, ver, sizeof ver);
}

/* Whether DIR/VERSION is an install: bin/ray and bin/python3 run. */
static int
installed(const char *venv)
{
	char path[PATH_MAX];

	return util_strf(path, sizeof path, "%s/bin/ray", venv) == 0 &&
	    access(path, X_OK) == 0 &&
	    util_strf(path, sizeof path, "%s/bin/python3", venv) == 0 &&
	    access(path, X_OK) == 0;
}

int
rayimage_check(node_mgr *m, const char *ctr, const char *image, char *venv,
    size_t vsize, char *why, size_t wsize)
{
	char ver[64];

	if (m->ray_emulated || keeps_volray_ray(m, ctr) ||
	    !rayimage_parse(image, ver, sizeof ver))
		return 0;
	if (ver[0] == '\0') {
		snprintf(why, wsize, "Failed to pull image \"%s\": its tag names "
		    "no Ray release, and the local node runs real Ray only "
		    "from a release installed by scripts/ray.sh VERSION "
		    "(rayproject/ray:VERSION)", image);
		return -1;
	}
	if (m->ray_dir == NULL) {
		snprintf(why, wsize, "Failed to pull image \"%s\": Ray %s is not "
		    "installed: volrayd has no --ray-dir", image, ver);
		return -1;
	}
	if (util_strf(venv, vsize, "%s/%s", m->ray_dir, ver) != 0 ||
	    !installed(venv)) {
		snprintf(why, wsize, "Failed to pull image \"%s\": Ray %s is not "
		    "installed on the local node (no %s/%s/bin/ray): install it "
		    "with VOLRAY_RAY_DIR=%s scripts/ray.sh %s", image, ver,
		    m->ray_dir, ver, m->ray_dir, ver);
		return -1;
	}
	return 1;
}

void
rayimage_env(const char *venv, const char *uid, int own_tmp,
    node_env_set_fn set, void *env)
{
	const char *path = getenv("PATH");
	char *v;

	v = util_printf("%s/bin:%s", venv, path ? path :
	    "/usr/local/bin:/usr/bin:/bin");
	set(env, "PATH", v);
	free(v);
	set(env, "VIRTUAL_ENV", venv);
	set(env, "LANG", "C.UTF-8");
	set(env, "RAY_USAGE_STATS_ENABLED", "0");
	/* With mounts (as root) the pod's directory is its /tmp, as an
	   image's own (own_tmp); else Ray's sessions go there through
	   RAY_TMPDIR. */
	if (!own_tmp) {
		char tmp[PATH_MAX];

		rayimage_tmp(uid, tmp, sizeof tmp);
		set(env, "RAY_TMPDIR", tmp);
	}
}

/*
 * The pod's Ray temp dir, made if need be. Short, for Ray's AF_UNIX
 * socket paths (107 bytes at most): the pod's own directory is too deep.
 * A worker node takes the head's temp_dir from the GCS, so each pod
 * must see its own at that path: its /tmp (mountplan.c).
 */
void
rayimage_tmp(const char *uid, char *out, size_t size)
{
	mkdir(RAY_TMP, 0755);
	util_strf(out, size, RAY_TMP "/%.8s", uid);
	mkdir(out, 01777);
	chmod(out, 01777);
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void
rayimage_forget(const char *uid)
{
	char dir[64];

	snprintf(dir, sizeof dir, RAY_TMP "/%.8s", uid);
	if (access(dir, F_OK) == 0)
		nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int
add_size(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)path;
	(void)f;
	if (flag == FTW_F)
		walk_bytes += st->st_size;
	return 0;
}

static long long
install_bytes(const char *venv)
{
	struct sized *s;

	for (s = sizes; s != NULL; s = s->next)
		if (strcmp(s->path, venv) == 0)
			return s->bytes;
	walk_bytes = 0;
	nftw(venv, add_size, 16, FTW_PHYS);
	s = xcalloc(1, sizeof *s);
	snprintf(s->path, sizeof s->path, "%s", venv);
	s->bytes = walk_bytes;
	s->next = sizes;
	sizes = s;
	return s->bytes;
}

/* The install's Python as "311", from its pyvenv.cfg ("" if unknown). */
static void
python_tag(const char *venv, char *out, size_t size)
{
	char path[PATH_MAX], line[256];
	int major, minor;
	FILE *f;

	out[0] = '\0';
	if (util_strf(path, sizeof path, "%s/pyvenv.cfg", venv) != 0 ||
	    (f = fopen(path, "r")) == NULL)
		return;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "version = %d.%d", &major, &minor) == 2 ||
		    sscanf(line, "version_info = %d.%d", &major, &minor) == 2) {
			snprintf(out, size, "%d%d", major, minor);
			break;
		}
	fclose(f);
}

/* One image entry: repo's names for version ver (at most 5, as kubelet). */
static void
add_image(cJSON *list, const char *repo, const char *ver, const char *py,
    long long bytes)
{
	cJSON *img = cJSON_CreateObject(), *names = cJSON_CreateArray();
	char name[256];

	snprintf(name, sizeof name, "%s:%s", repo, ver);
	cJSON_AddItemToArray(names, cJSON_CreateString(name));
	if (*py != '\0') {
		snprintf(name, sizeof name, "%s:%s-py%s", repo, ver, py);
		cJSON_AddItemToArray(names, cJSON_CreateString(name));
	}
	snprintf(name, sizeof name, "%s:%s-cpu", repo, ver);
	cJSON_AddItemToArray(names, cJSON_CreateString(name));
	if (*py != '\0') {
		snprintf(name, sizeof name, "%s:%s-py%s-cpu", repo, ver, py);
		cJSON_AddItemToArray(names, cJSON_CreateString(name));
	}
	cJSON_AddItemToObject(img, "names", names);
	cJSON_AddNumberToObject(img, "sizeBytes", (double)bytes);
	cJSON_AddItemToArray(list, img);
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *
rayimage_node_images(node_mgr *m)
{
	char venv[PATH_MAX], py[16], ver[64], **vers = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *d;
	cJSON *list;
	DIR *dir;

	if (m->ray_emulated || m->ray_dir == NULL ||
	    (dir = opendir(m->ray_dir)) == NULL)
		return NULL;
	while ((d = readdir(dir)) != NULL) {
		char image[sizeof "rayproject/ray:" + sizeof d->d_name];

		snprintf(image, sizeof image, "rayproject/ray:%s", d->d_name);
		if (!rayimage_parse(image, ver, sizeof ver) ||
		    strcmp(ver, d->d_name) != 0 || util_strf(venv, sizeof venv,
		    "%s/%s", m->ray_dir, d->d_name) != 0 || !installed(venv))
			continue;
		XGROW(vers, cap, n + 1);
		vers[n++] = xstrdup(d->d_name);
	}
	closedir(dir);
	if (n == 0)
		return NULL;
	qsort(vers, n, sizeof *vers, by_name);
	list = cJSON_CreateArray();
	for (i = 0; i < n; i++) {
		long long bytes;

		util_strf(venv, sizeof venv, "%s/%s", m->ray_dir, vers[i]);
		bytes = install_bytes(venv);
		python_tag(venv, py, sizeof py);
		add_image(list, "rayproject/ray", vers[i], py, bytes);
		add_image(list, "rayproject/ray-ml", vers[i], py, bytes);
		free(vers[i]);
	}
	free(vers);
	return list;
}
