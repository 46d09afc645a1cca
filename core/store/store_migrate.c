/*
 * One store copied into another (volrayd --migrate-to-etcd: the embedded
 * store into etcd). Each kind's objects the target lacks are written as
 * they are (uid, generation, timestamps; the target gives new
 * resourceVersions), MIGRATE_CHUNK to a transaction; objects the target
 * has already are left alone. When a transaction conflicts (someone wrote
 * one of its objects meanwhile) its objects are tried one by one, and
 * those written meanwhile are counted and left to the writer.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/store.h"

#define MIGRATE_CHUNK	100

struct migration {
	store *from, *to;
	struct store_migrate_counts *n;
	int failed;
	char *cause;
};

/* Copy objs (absent from the target) as one transaction: its outcome. */
static int
copy_chunk(struct migration *m, const char *res, store_obj *const *objs,
    size_t n)
{
	uint64_t rev;
	char *err = NULL;
	size_t i;
	int out;

	store_batch_begin(m->to);
	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);

		store_put(m->to, res, objs[i]->ns, objs[i]->name, t);
		cJSON_Delete(t);
	}
	out = store_batch_commit_sync(m->to, &rev, &err);
	if (out == STORE_COMMIT_ERROR && m->cause == NULL)
		m->cause = util_printf("writing %s: %s", res, err);
	free(err);
	return out;
}

/* Copy the objects of kind res the target lacks. */
static void
migrate_res(const char *res, size_t n, void *arg)
{
	struct migration *m = arg;
	store_obj *const *all;
	store_obj **todo;
	size_t cnt, i, k = 0, j;

	(void)n;
	if (m->failed)
		return;
	cnt = store_list(m->from, res, NULL, &all);
	todo = xcalloc(cnt + 1, sizeof *todo);
	for (i = 0; i < cnt; i++) {
		if (store_get(m->to, res, all[i]->ns, all[i]->name) != NULL)
			m->n->there++;
		else
			todo[k++] = all[i];
	}
	for (i = 0; i < k && !m->failed; i += MIGRATE_CHUNK) {
		size_t c = k - i < MIGRATE_CHUNK ? k - i : MIGRATE_CHUNK;
		int out = copy_chunk(m, res, todo + i, c);

		if (out == STORE_COMMIT_OK)
			m->n->copied += c;
		else if (out == STORE_COMMIT_ERROR)
			m->failed = 1;
		else	/* someone wrote one of them meanwhile: one by one */
			for (j = i; j < i + c && !m->failed; j++) {
				out = copy_chunk(m, res, todo + j, 1);
				if (out == STORE_COMMIT_OK)
					m->n->copied++;
				else if (out == STORE_COMMIT_CONFLICT)
					m->n->lost++;
				else
					m->failed = 1;
			}
	}
	free(todo);
}

int
store_migrate(store *from, store *to, struct store_migrate_counts *n,
    char **cause)
{
	struct migration m;

	memset(&m, 0, sizeof m);
	memset(n, 0, sizeof *n);
	m.from = from;
	m.to = to;
	m.n = n;
	store_each_res(from, migrate_res, &m);
	if (m.failed) {
		*cause = m.cause;
		return -1;
	}
	free(m.cause);
	return 0;
}
