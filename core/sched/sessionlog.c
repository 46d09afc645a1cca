/*
 * volrayd --record-sessions DIR: the scheduler's sessions kept as
 * `volray session record` files, so that what a session saw can be
 * replayed (`volray session replay`) or made a `policy test` case after
 * the fact. On the session's thread, once the session is decided: when
 * what it read (every captured object's key and revision, and the
 * policy's files) differs from the last session written, one file
 * DIR/session-TTTTTTTTTT-NNNNNNNN.json (the wall clock's seconds and the
 * session's number: names sort by time across restarts) with kind
 * SessionRecord, the session's time as "recorded", the policy's files
 * and the objects as stored (a pod whose bind was on its way with the
 * node the scheduler assumed it on, as the session read it); written to a temporary name and renamed,
 * so a reader never sees half a file. Only the newest `keep` files stay
 * (the oldest go, those of an earlier run included).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sessionlog.h"
#include "store/store.h"

struct sessionlog {
	char *dir;
	int keep;
	char **files;			/* written, oldest first */
	int nfiles;
	size_t cap;
	uint64_t last_sig;		/* of the last session written */
	uint64_t written, bytes;
};

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
prune(sessionlog *l)
{
	while (l->nfiles > l->keep) {
		if (unlink(l->files[0]) != 0 && errno != ENOENT)
			log_warn("sched: --record-sessions: %s: %s",
			    l->files[0], strerror(errno));
		free(l->files[0]);
		memmove(l->files, l->files + 1, (size_t)--l->nfiles *
		    sizeof *l->files);
	}
}

sessionlog *
sessionlog_new(const char *dir, int keep, char **cause)
{
	sessionlog *l;
	struct dirent *de;
	DIR *d;

	if (util_mkdirs(dir, 0755) != 0 || (d = opendir(dir)) == NULL) {
		*cause = util_printf("--record-sessions %s: %s", dir,
		    strerror(errno));
		return NULL;
	}
	l = xcalloc(1, sizeof *l);
	l->dir = xstrdup(dir);
	l->keep = keep > 0 ? keep : 1;
	/* An earlier run's files count against keep. */
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (strncmp(de->d_name, "session-", 8) != 0 || n < 13 ||
		    strcmp(de->d_name + n - 5, ".json") != 0)
			continue;
		XGROW(l->files, l->cap, (size_t)l->nfiles + 1);
		l->files[l->nfiles++] = util_printf("%s/%s", dir, de->d_name);
	}
	closedir(d);
	qsort(l->files, (size_t)l->nfiles, sizeof *l->files, by_name);
	prune(l);
	return l;
}

void
sessionlog_free(sessionlog *l)
{
	int i;

	if (l == NULL)
		return;
	for (i = 0; i < l->nfiles; i++)
		free(l->files[i]);
	free(l->files);
	free(l->dir);
	free(l);
}

/* The node an object of kind k was assumed on, or NULL. */
static const char *
assumed(const char *const *const *nodes, int k, size_t i)
{
	return nodes != NULL && nodes[k] != NULL ? nodes[k][i] : NULL;
}

static uint64_t
signature(store_obj *const *const *objs, const size_t *n,
    const char *const *const *nodes, int nkinds, const char *policy)
{
	uint64_t h = UTIL_FNV_SEED;
	const char *node;
	size_t i;
	int k;

	h = util_fnv1a(h, policy, strlen(policy));
	for (k = 0; k < nkinds; k++)
		for (i = 0; i < n[k]; i++) {
			h = util_fnv1a(h, objs[k][i]->key, strlen(objs[k][i]->key) + 1);
			h = util_fnv1a(h, &objs[k][i]->rev, sizeof objs[k][i]->rev);
			if ((node = assumed(nodes, k, i)) != NULL)
				h = util_fnv1a(h, node, strlen(node) + 1);
		}
	return h;
}

/* An object as the session read it: as stored, or given the node it was
   assumed on. */
static void
write_obj(FILE *f, const store_obj *o, const char *node)
{
	cJSON *t;
	char *text;

	if (node == NULL || (t = store_obj_tree(o)) == NULL) {
		fwrite(o->json->data, 1, o->json->len, f);
		return;
	}
	json_set_str(json_obj(t, "spec"), "nodeName", node);
	text = cJSON_PrintUnformatted(t);
	fputs(text, f);
	free(text);
	cJSON_Delete(t);
}

int
sessionlog_write(sessionlog *l, store_obj *const *const *objs,
    const size_t *n, const char *const *const *nodes, int nkinds,
    const char *policy_files, uint64_t session_no, const char *now)
{
	uint64_t sig = signature(objs, n, nodes, nkinds, policy_files ?
	    policy_files : "{}");
	char *path, *tmp;
	const char *sep = "\n";
	size_t i;
	FILE *f;
	int k, ok;

	if (l->written > 0 && sig == l->last_sig)
		return 0;
	path = util_printf("%s/session-%010lld-%08llu.json", l->dir,
	    (long long)time(NULL), (unsigned long long)session_no);
	tmp = util_printf("%s.tmp", path);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_warn("sched: --record-sessions: %s: %s", tmp,
		    strerror(errno));
		free(tmp);
		free(path);
		return -1;
	}
	fprintf(f, "{\"apiVersion\":\"volray.io/v1\",\"kind\":"
	    "\"SessionRecord\",\"recorded\":\"%s\",\"session\":%llu,"
	    "\"policyFiles\":%s,\"cluster\":[", now,
	    (unsigned long long)session_no, policy_files ? policy_files :
	    "{}");
	for (k = 0; k < nkinds; k++)
		for (i = 0; i < n[k]; i++) {
			fputs(sep, f);
			write_obj(f, objs[k][i], assumed(nodes, k, i));
			sep = ",\n";
		}
	fputs("\n]}\n", f);
	ok = fflush(f) == 0 && !ferror(f);
	l->bytes += (uint64_t)ftell(f);
	ok = fclose(f) == 0 && ok;
	if (!ok || rename(tmp, path) != 0) {
		log_warn("sched: --record-sessions: %s: %s", path,
		    strerror(errno));
		unlink(tmp);
		free(tmp);
		free(path);
		return -1;
	}
	free(tmp);
	l->last_sig = sig;
	l->written++;
	XGROW(l->files, l->cap, (size_t)l->nfiles + 1);
	l->files[l->nfiles++] = path;
	prune(l);
	return 1;
}

uint64_t
sessionlog_written(const sessionlog *l)
{
	return l != NULL ? l->written : 0;
}
