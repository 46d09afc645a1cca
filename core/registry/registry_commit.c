/*
 * The API server's own workers' writes without waiting (registry.h:
 * registry_stage, registry_commit). On the etcd-backed store a write
 * outside a batch commits blocking the loop (store.h); the garbage
 * collector and RBAC's aggregation react to events on the loop, so they
 * stage each write and commit it as the API's requests do. On the
 * log-backed store nothing is staged: the write is already in the store
 * and there is nothing to wait for.
 */
#include <stdlib.h>

#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/registry.h"

struct pending {
	registry_written_fn done;
	void *arg;
};

void
registry_stage(registry *rg)
{
	store_batch_begin(registry_store(rg));
}

static void
committed(void *arg, int outcome, uint64_t rev, const char *err)
{
	struct pending *p = arg;

	(void)rev;
	if (outcome == STORE_COMMIT_ERROR)
		log_warn("registry: etcd: %s", err ? err : "failed");
	if (p->done != NULL)
		p->done(p->arg, outcome);
	free(p);
}

int
registry_commit(registry *rg, const struct reg_result *res,
    registry_written_fn done, void *arg)
{
	store *st = registry_store(rg);
	struct pending *p;

	if (store_batch_size(st) == 0 || res->code >= 300) {
		store_batch_abort(st);
		return 0;
	}
	p = xmalloc(sizeof *p);
	p->done = done;
	p->arg = arg;
	store_batch_commit(st, committed, p);
	return 1;
}
