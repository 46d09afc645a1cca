/*
 * The store's index of labels: for each resource, namespace and label
 * pair ("pods", "default", "ray.io/cluster=rc"), the keys of the objects
 * that carry it. A list by label selector (store_list_selected: a
 * controller's volray.list, the service proxy choosing a pod) starts from
 * the smallest set of one of its equality requirements instead of testing
 * every object of the namespace;
 * with thousands of pods in one namespace, that scan was most of a RayJob
 * reconcile's list.
 *
 * A version's pairs are indexed when its labels differ from the version it
 * replaces (status writes, binds leave them alone). Only string values are
 * indexed: the API admits no other.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/store_int.h"

/* The objects with one label pair: keys in an array, their places in pos. */
struct lset {
	char *id;		/* "res\x1fns\x1fkey=value" */
	hmap *pos;		/* key -> index + 1 */
	char **keys;
	size_t n, cap;
};

static char *
lset_id(const char *res, const char *ns, const char *key, const char *value)
{
	return util_printf("%s\x1f%s\x1f%s=%s", res, ns, key, value);
}

static void
lset_add(hmap *labeled, char *id, const char *objkey)
{
	struct lset *l = hmap_get(labeled, id);

	if (l == NULL) {
		l = xcalloc(1, sizeof *l);
		l->id = id;
		l->pos = hmap_new();
		hmap_put(labeled, l->id, l);
	} else
		free(id);
	if (hmap_get(l->pos, objkey) != NULL)
		return;
	XGROW(l->keys, l->cap, l->n + 1);
	l->keys[l->n] = xstrdup(objkey);
	hmap_put(l->pos, l->keys[l->n], (void *)(uintptr_t)(l->n + 1));
	l->n++;
}

static void
lset_remove(hmap *labeled, char *id, const char *objkey)
{
	struct lset *l = hmap_get(labeled, id);
	size_t i;
	char *gone;

	free(id);
	if (l == NULL || (i = (uintptr_t)hmap_get(l->pos, objkey)) == 0)
		return;
	i--;
	gone = l->keys[i];
	hmap_del(l->pos, gone);
	if (i != l->n - 1) {
		l->keys[i] = l->keys[l->n - 1];
		hmap_put(l->pos, l->keys[i], (void *)(uintptr_t)(i + 1));
	}
	l->n--;
	free(gone);
	if (l->n == 0) {
		hmap_del(labeled, l->id);
		hmap_free(l->pos);
		free(l->keys);
		free(l->id);
		free(l);
	}
}

static void
pairs(store *st, const store_obj *o, int add)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, o->labels) {
		char *id;

		if (!cJSON_IsString(it) || it->string == NULL)
			continue;
		id = lset_id(o->res, o->ns, it->string, it->valuestring);
		if (add)
			lset_add(st->labeled, id, o->key);
		else
			lset_remove(st->labeled, id, o->key);
	}
}

void
store_labels_index(store *st, const store_obj *old, const store_obj *o)
{
	if (old != NULL && o != NULL && (old->labels == NULL) ==
	    (o->labels == NULL) && (o->labels == NULL ||
	    json_equal(old->labels, o->labels)))
		return;
	if (old != NULL)
		pairs(st, old, 0);
	if (o != NULL)
		pairs(st, o, 1);
}

size_t
store_labels_keys(const store *st, const char *res, const char *ns,
    const char *key, const char *value, const char ***keys)
{
	char *id = lset_id(res, ns, key, value);
	const struct lset *l = hmap_get(st->labeled, id);

	free(id);
	*keys = l != NULL ? (const char **)l->keys : NULL;
	return l != NULL ? l->n : 0;
}

static int
free_lset(const char *key, void *value, void *arg)
{
	struct lset *l = value;
	size_t i;

	(void)key;
	(void)arg;
	for (i = 0; i < l->n; i++)
		free(l->keys[i]);
	hmap_free(l->pos);
	free(l->keys);
	free(l->id);
	free(l);
	return 0;
}

void
store_labels_free(store *st)
{
	hmap_each(st->labeled, free_lset, NULL);
	hmap_free(st->labeled);
	st->labeled = NULL;
}
