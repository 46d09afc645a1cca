/*
 * The garbage collector reacts to durable store events:
 *  - an object is deleted: each dependent that has no remaining owner is
 *    deleted (Background); one that still has other owners loses the
 *    dangling reference;
 *  - an object is marked for deletion with the foregroundDeletion
 *    finalizer: its dependents are deleted, and once none remain the
 *    finalizer is removed, which completes the owner's deletion;
 *  - a namespace is marked for deletion: everything in it is deleted, and
 *    once it is empty the namespace is removed.
 * All writes go through the registry, so they are logged, versioned and
 * watched like any client's.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"
#include "registry/gc.h"

struct gc {
	registry *rg;
	store *st;
	hmap *inflight;		/* key -> struct write on its way to etcd */
};

/*
 * On the etcd-backed store a write is staged and committed without
 * waiting (registry_commit); until it is back the cache still shows the
 * object as it was, so the events meanwhile (a namespace's every
 * deletion drains it again) would write it again. One write per key is
 * in flight; what asks for another meanwhile is looked at again once
 * the first is back.
 */
struct write {
	gc *g;
	int again;
	char key[];
};

static void examine(gc *, const store_obj *);

static int
busy(gc *g, const store_obj *o)
{
	struct write *w = hmap_get(g->inflight, o->key);

	if (w == NULL)
		return 0;
	w->again = 1;
	return 1;
}

static void
written(void *arg, int outcome)
{
	struct write *w = arg;
	gc *g = w->g;
	const store_obj *o;

	if (g == NULL) {	/* gc_free came first */
		free(w);
		return;
	}
	hmap_del(g->inflight, w->key);
	/* A conflict: the cache holds the winner, which may need the
	   write still; an etcd error is left to the object's next event. */
	if (outcome != STORE_COMMIT_ERROR && (w->again ||
	    outcome == STORE_COMMIT_CONFLICT) &&
	    (o = store_get_key(g->st, w->key)) != NULL)
		examine(g, o);
	free(w);
}

/* Commit what the write of o staged, if anything. */
static void
commit(gc *g, const store_obj *o, const struct reg_result *res)
{
	size_t len = strlen(o->key);
	struct write *w = xmalloc(sizeof *w + len + 1);

	w->g = g;
	w->again = 0;
	memcpy(w->key, o->key, len + 1);
	if (registry_commit(g->rg, res, written, w))
		hmap_put(g->inflight, w->key, w);
	else
		free(w);
}

static void
del(gc *g, const store_obj *o, const char *prop)
{
	const resource *r = resource_by_store_key(o->res);
	struct reg_opts opts;
	struct reg_result res;

	if (r == NULL || busy(g, o))
		return;
	memset(&opts, 0, sizeof opts);
	opts.propagation = prop;
	registry_stage(g->rg);
	registry_delete(g->rg, r, o->ns, o->name, &opts, &res);
	if (res.code >= 300 && res.code != 404)
		log_warn("gc: deleting %s: code %d", o->key, res.code);
	commit(g, o, &res);
	cJSON_Delete(res.body);
}

/* Remove one finalizer from an object through a merge of its metadata. */
static void
drop_finalizer(gc *g, const store_obj *o, const char *f)
{
	const resource *r = resource_by_store_key(o->res);
	cJSON *t = store_obj_tree(o), *fin, *it;
	struct reg_result res;
	int i = 0;

	if (r == NULL || busy(g, o)) {
		cJSON_Delete(t);
		return;
	}
	fin = json_at(t, "metadata.finalizers");
	cJSON_ArrayForEach(it, fin) {
		if (cJSON_IsString(it) && strcmp(it->valuestring, f) == 0) {
			cJSON_DeleteItemFromArray(fin, i);
			break;
		}
		i++;
	}
	registry_stage(g->rg);
	registry_update(g->rg, r, o->ns, o->name, t, NULL, &res);
	if (res.code >= 300)
		log_warn("gc: removing finalizer %s from %s: code %d", f,
		    o->key, res.code);
	commit(g, o, &res);
	cJSON_Delete(res.body);
}

/* Copy a dependents list: the writes below change it. */
static char **
dependents(gc *g, const char *uid, size_t *n)
{
	const char **keys;
	char **copy;
	size_t i;

	*n = store_dependents(g->st, uid, &keys);
	copy = xcalloc(*n + 1, sizeof *copy);
	for (i = 0; i < *n; i++)
		copy[i] = xstrdup(keys[i]);
	return copy;
}

static void
free_list(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Does any owner of o still exist? */
static int
has_live_owner(gc *g, const store_obj *o)
{
	int i;

	for (i = 0; i < o->nowners; i++)
		if (store_get_uid(g->st, o->owners[i].uid) != NULL)
			return 1;
	return 0;
}

/* Drop owner references that point at objects that no longer exist. */
static void
drop_dangling(gc *g, const store_obj *o)
{
	const resource *r = resource_by_store_key(o->res);
	cJSON *t = store_obj_tree(o), *refs, *it, *keep;
	struct reg_result res;

	if (r == NULL || busy(g, o)) {
		cJSON_Delete(t);
		return;
	}
	refs = json_at(t, "metadata.ownerReferences");
	keep = cJSON_CreateArray();
	cJSON_ArrayForEach(it, refs) {
		const char *uid = json_str(it, "uid");

		if (uid != NULL && store_get_uid(g->st, uid) != NULL)
			cJSON_AddItemToArray(keep, cJSON_Duplicate(it, 1));
	}
	json_set(json_obj(t, "metadata"), "ownerReferences", keep);
	registry_stage(g->rg);
	registry_update(g->rg, r, o->ns, o->name, t, NULL, &res);
	commit(g, o, &res);
	cJSON_Delete(res.body);
}

static void
collect_dependents_of(gc *g, const char *uid)
{
	size_t n, i;
	char **keys = dependents(g, uid, &n);

	for (i = 0; i < n; i++) {
		const store_obj *d = store_get_key(g->st, keys[i]);

		if (d == NULL)
			continue;
		if (has_live_owner(g, d))
			drop_dangling(g, d);
		else
			del(g, d, "Background");
	}
	free_list(keys, n);
}

static int
ns_empty(gc *g, const char *ns)
{
	int i;

	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		store_obj *const *objs;

		if (r->namespaced && r->storage &&
		    store_list(g->st, r->store_key, ns, &objs) > 0)
			return 0;
	}
	return 1;
}

/* Delete everything in a terminating namespace; remove it when empty. */
static void
drain_namespace(gc *g, const char *ns)
{
	const store_obj *nso = store_get(g->st, "namespaces", "", ns);
	int i;

	if (nso == NULL || !nso->deleting)
		return;
	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		store_obj *const *objs;
		size_t n, j, k = 0;
		char **names;

		if (!r->namespaced || !r->storage)
			continue;
		n = store_list(g->st, r->store_key, ns, &objs);
		names = xcalloc(n + 1, sizeof *names);
		for (j = 0; j < n; j++)
			if (!objs[j]->deleting)
				names[k++] = xstrdup(objs[j]->key);
		for (j = 0; j < k; j++) {
			const store_obj *o = store_get_key(g->st, names[j]);

			if (o != NULL)
				del(g, o, "Background");
		}
		free_list(names, k);
	}
	if (ns_empty(g, ns) && (nso = store_get(g->st, "namespaces", "",
	    ns)) != NULL && !busy(g, nso)) {
		struct reg_result res;

		registry_stage(g->rg);
		registry_remove(g->rg, resource_find("", "v1", "namespaces"),
		    "", ns, &res);
		commit(g, nso, &res);
		cJSON_Delete(res.body);
	}
}

#define CRD_KEY "customresourcedefinitions.apiextensions.k8s.io"
#define CRD_FINALIZER "customresourcecleanup.apiextensions.k8s.io"

/* A deleting CRD: delete its objects; drop the finalizer once none remain. */
static void
drain_crd(gc *g, const store_obj *crd)
{
	cJSON *t = store_obj_tree(crd);
	const resource *r;
	store_obj *const *objs;
	size_t n, i, k = 0;
	char **keys;

	if (!json_has_string(t, "metadata.finalizers", CRD_FINALIZER)) {
		cJSON_Delete(t);
		return;
	}
	cJSON_Delete(t);
	r = resource_by_store_key(crd->name);
	n = r ? store_list(g->st, r->store_key, NULL, &objs) : 0;
	keys = xcalloc(n + 1, sizeof *keys);
	for (i = 0; i < n; i++)
		if (!objs[i]->deleting)
			keys[k++] = xstrdup(objs[i]->key);
	for (i = 0; i < k; i++) {
		const store_obj *o = store_get_key(g->st, keys[i]);

		if (o != NULL)
			del(g, o, "Background");
	}
	free_list(keys, k);
	if (r == NULL || store_count(g->st, r->store_key) == 0)
		drop_finalizer(g, crd, CRD_FINALIZER);
}

static void
on_event(void *arg, const store_event *e)
{
	gc *g = arg;
	const store_obj *o = e->obj;
	int i;

	switch (e->type) {
	case STORE_DELETED:
		if (*o->uid)
			collect_dependents_of(g, o->uid);
		/* A foreground owner waits for its last dependent. */
		for (i = 0; i < o->nowners; i++) {
			const store_obj *ow = store_get_uid(g->st,
			    o->owners[i].uid);
			const char **keys;

			if (ow != NULL && ow->deleting &&
			    store_dependents(g->st, ow->uid, &keys) == 0) {
				cJSON *t = store_obj_tree(ow);

				if (json_has_string(t, "metadata.finalizers", "foregroundDeletion"))
					drop_finalizer(g, ow,
					    "foregroundDeletion");
				cJSON_Delete(t);
			}
		}
		if (*o->ns)
			drain_namespace(g, o->ns);
		{
			/* The last object of a deleting CRD releases it. */
			const store_obj *crd = store_get(g->st, CRD_KEY, "",
			    o->res);

			if (crd != NULL && crd->deleting)
				drain_crd(g, crd);
		}
		break;
	case STORE_ADDED:
	case STORE_MODIFIED:
		if (strcmp(o->res, "namespaces") == 0 && o->deleting) {
			drain_namespace(g, o->name);
			break;
		}
		if (strcmp(o->res, CRD_KEY) == 0 && o->deleting) {
			drain_crd(g, o);
			break;
		}
		if (o->deleting && (e->old == NULL || !e->old->deleting)) {
			cJSON *t = store_obj_tree(o);

			if (json_has_string(t, "metadata.finalizers", "foregroundDeletion")) {
				size_t n, j;
				char **keys = dependents(g, o->uid, &n);

				for (j = 0; j < n; j++) {
					const store_obj *d = store_get_key(
					    g->st, keys[j]);

					if (d != NULL && !d->deleting)
						del(g, d, "Foreground");
				}
				free_list(keys, n);
				if (n == 0)
					drop_finalizer(g, o,
					    "foregroundDeletion");
			}
			cJSON_Delete(t);
		}
		if (e->type == STORE_ADDED && o->nowners > 0 &&
		    !has_live_owner(g, o))
			del(g, o, "Background");
		break;
	}
}

/* Whether a deleting object waits for its dependents. */
static int
foreground(const store_obj *o)
{
	cJSON *t = store_obj_tree(o);
	int yes = json_has_string(t, "metadata.finalizers",
	    "foregroundDeletion");

	cJSON_Delete(t);
	return yes;
}

/*
 * Look at o again after a write of it came back: what it needs of the
 * collector now that the cache holds its latest version (an owner gone,
 * its namespace or CRD terminating, a foreground deletion with nothing
 * left to wait for).
 */
static void
examine(gc *g, const store_obj *o)
{
	const store_obj *nso, *crd;
	int i;

	if (strcmp(o->res, "namespaces") == 0) {
		if (o->deleting)
			drain_namespace(g, o->name);
		return;
	}
	if (strcmp(o->res, CRD_KEY) == 0) {
		if (o->deleting)
			drain_crd(g, o);
		return;
	}
	if (o->deleting) {
		const char **keys;

		if (foreground(o) && store_dependents(g->st, o->uid, &keys) == 0)
			drop_finalizer(g, o, "foregroundDeletion");
		return;
	}
	if (o->nowners > 0 && !has_live_owner(g, o)) {
		del(g, o, "Background");
		return;
	}
	for (i = 0; i < o->nowners; i++) {
		const store_obj *ow = store_get_uid(g->st, o->owners[i].uid);

		if (ow == NULL) {
			drop_dangling(g, o);
			return;
		}
		/* An owner's Foreground deletion asked for o while a write
		   of o was on its way. */
		if (ow->deleting && foreground(ow)) {
			del(g, o, "Foreground");
			return;
		}
	}
	if (*o->ns && (nso = store_get(g->st, "namespaces", "", o->ns)) !=
	    NULL && nso->deleting) {
		del(g, o, "Background");
		return;
	}
	crd = store_get(g->st, CRD_KEY, "", o->res);
	if (crd != NULL && crd->deleting)
		del(g, o, "Background");
}

static int
orphan(const char *key, void *value, void *arg)
{
	struct write *w = value;

	(void)key;
	(void)arg;
	w->g = NULL;
	return 0;
}

gc *
gc_new(registry *rg, store *st)
{
	gc *g = xcalloc(1, sizeof *g);

	g->rg = rg;
	g->st = st;
	g->inflight = hmap_new();
	store_subscribe(st, on_event, g);
	return g;
}

void
gc_free(gc *g)
{
	/* Writes still in flight free themselves when they are back. */
	hmap_each(g->inflight, orphan, NULL);
	hmap_free(g->inflight);
	free(g);
}

void
gc_sweep(gc *g)
{
	int i;

	for (i = 0; i < resource_count(); i++) {
		const resource *r = resource_at(i);
		store_obj *const *objs;
		size_t n, j, k = 0;
		char **keys;

		if (!r->storage)
			continue;
		n = store_list(g->st, r->store_key, NULL, &objs);
		keys = xcalloc(n + 1, sizeof *keys);
		for (j = 0; j < n; j++)
			if ((objs[j]->nowners > 0 && !has_live_owner(g,
			    objs[j])) || (strcmp(r->store_key, "namespaces") ==
			    0 && objs[j]->deleting))
				keys[k++] = xstrdup(objs[j]->key);
		for (j = 0; j < k; j++) {
			const store_obj *o = store_get_key(g->st, keys[j]);

			if (o == NULL)
				continue;
			if (strcmp(o->res, "namespaces") == 0)
				drain_namespace(g, o->name);
			else
				del(g, o, "Background");
		}
		free_list(keys, k);
	}
}
