/*
 * The embedded backend of GCS fault tolerance (KubeRay 1.7's
 * gcsFaultToleranceOptions backend "rocksdb"): where Ray keeps its GCS in
 * RocksDB on the head's PersistentVolumeClaim, the head emulation keeps
 * the same tables (gcsstore.c: job records, session name, Serve
 * applications) in one JSON document on the claim's storage,
 * DATA_DIR/gcs-storage/<claim uid>/gcs.json, rewritten whole (to a
 * temporary file, then renamed) on every change. Keyed by the claim's uid,
 * so a new head on the same claim recovers them, and a new claim of the
 * same name (the cluster deleted and made again) starts empty, as a fresh
 * volume would; the claim's deletion removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

struct gcs_file {
	char *path, *tmp;
	cJSON *doc;			/* {"session", "jobs": {}, "serve"} */
	wheel *w;
	wheel_timer ready;
	void (*loaded)(void *arg, const cJSON *doc);
	void *arg;
	int warned;
};

static void
save(struct gcs_file *f)
{
	char *text = cJSON_PrintUnformatted(f->doc);
	size_t n = strlen(text);
	int fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, text, n) != (ssize_t)n || fsync(fd) != 0 ||
	    close(fd) != 0 || rename(f->tmp, f->path) != 0) {
		if (!f->warned)
			log_warn("ray: GCS storage %s: %s", f->path,
			    strerror(errno));
		f->warned = 1;
		if (fd >= 0)
			close(fd);
	}
	free(text);
}

static void
on_ready(wheel_timer *t)
{
	struct gcs_file *f = t->data;

	f->loaded(f->arg, f->doc);
}

struct gcs_file *
ray_gcs_file_open(wheel *w, const char *dir,
    void (*loaded)(void *arg, const cJSON *doc), void *arg)
{
	struct gcs_file *f = xcalloc(1, sizeof *f);
	char *text;
	size_t n;

	f->path = util_printf("%s/gcs.json", dir);
	f->tmp = util_printf("%s/gcs.json.tmp", dir);
	f->w = w;
	f->loaded = loaded;
	f->arg = arg;
	if (util_mkdirs(dir, 0700) != 0)
		log_warn("ray: GCS storage %s: %s", dir, strerror(errno));
	if ((text = util_read_file(f->path, &n)) != NULL) {
		f->doc = cJSON_ParseWithLength(text, n);
		free(text);
	}
	if (!cJSON_IsObject(f->doc)) {
		cJSON_Delete(f->doc);
		f->doc = cJSON_CreateObject();
	}
	if (!cJSON_IsObject(json_at(f->doc, "jobs")))
		json_set(f->doc, "jobs", cJSON_CreateObject());
	/* Read back on the loop's next turn, as Redis would answer. */
	wheel_add(w, &f->ready, 0, on_ready, f);
	return f;
}

void
ray_gcs_file_set(struct gcs_file *f, const char *key, const char *id,
    const cJSON *value)
{
	cJSON *o = id != NULL ? json_obj(f->doc, key) : f->doc;
	const char *k = id != NULL ? id : key;

	if (value != NULL)
		json_set(o, k, cJSON_Duplicate(value, 1));
	else
		json_del(o, k);
	save(f);
}

void
ray_gcs_file_close(struct gcs_file *f)
{
	if (f == NULL)
		return;
	wheel_cancel(f->w, &f->ready);
	cJSON_Delete(f->doc);
	free(f->path);
	free(f->tmp);
	free(f);
}

void
ray_gcs_file_remove(const char *data_dir, const char *uid)
{
	char *dir = util_printf("%s/gcs-storage/%s", data_dir, uid);
	char *f = util_printf("%s/gcs.json", dir);
	char *t = util_printf("%s/gcs.json.tmp", dir);

	unlink(f);
	unlink(t);
	rmdir(dir);
	free(f);
	free(t);
	free(dir);
}
