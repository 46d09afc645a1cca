/*
 * The three-way patch of a client-side apply, as kubectl computes it.
 * Three configurations: the original (what the last apply sent, from the
 * annotation), the modified (the file now) and the current (the live
 * object). The patch is two diffs joined: the delta from current to
 * modified without deletions (what the file sets that the object does not
 * have), and the deletions from original to modified (what the last apply
 * set and the file no longer has). Fields that neither apply set, such as
 * those other clients or the server wrote, are thus left alone.
 *
 * For built-in kinds the patch is a strategic merge patch: lists with a
 * merge key (containers, env, volumes, ... by name) are diffed element by
 * element, a removed element becomes {"key": ..., "$patch": "delete"}, a
 * removed value of a set (finalizers) goes into
 * "$deleteFromPrimitiveList/<field>", and "$setElementOrder/<field>" keeps
 * the file's order; a Deployment's strategy and each volume carry
 * "$retainKeys" (the fields they keep). Which lists merge, and by what
 * key, comes from the server's own table (registry/patch.c), so the two
 * always agree. For
 * custom resources it is a JSON merge patch, every list replaced whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_threeway.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "registry/patch.h"

#define MAX_DEPTH	64

/* The two diffs: which changes each one keeps. */
enum mode {
	DELTA,		/* current -> modified: changes and additions */
	DELETIONS	/* original -> modified: deletions only */
};

struct tw {
	const char	*kind;	/* NULL: a JSON merge patch */
	const char	*path[MAX_DEPTH];
	int		 depth;
	char		*cause;
};

static cJSON	*diff_map(struct tw *, const cJSON *, const cJSON *,
		    enum mode, int);
static cJSON	*join_map(struct tw *, cJSON *, const cJSON *);
static int	 retains_keys(const struct tw *, int);

static void
push(struct tw *t, const char *field)
{
	if (t->depth < MAX_DEPTH)
		t->path[t->depth] = field;
	t->depth++;
}

static void
pop(struct tw *t)
{
	t->depth--;
}

/* The merge key of the list at the current path: 1 with *key when the
 * list merges (*key NULL for a set of primitives), 0 when replaced. */
static int
list_rule(const struct tw *t, const char **key)
{
	if (t->kind == NULL || t->depth > MAX_DEPTH)
		return 0;
	return patch_list_rule(t->kind, t->path, t->depth, key);
}

/* Go's reflect.TypeOf comparison, on JSON types. */
static int
same_type(const cJSON *a, const cJSON *b)
{
	int ta = a->type & 0xff, tb = b->type & 0xff;

	if ((ta == cJSON_True || ta == cJSON_False) &&
	    (tb == cJSON_True || tb == cJSON_False))
		return 1;
	return ta == tb;
}

static int
key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

/* The element of a keyed list whose key equals v. */
static const cJSON *
find_keyed(const cJSON *list, const char *key, const cJSON *v)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list)
		if (json_equal(cJSON_GetObjectItemCaseSensitive(el, key), v))
			return el;
	return NULL;
}

static int
list_has(const cJSON *list, const cJSON *v)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list)
		if (json_equal(el, v))
			return 1;
	return 0;
}

static void
add_directive_list(cJSON *res, const char *prefix, const char *field,
    cJSON *list)
{
	struct cli_buf k = { 0 };

	cli_buf_printf(&k, "%s%s", prefix, field);
	cJSON_AddItemToObject(res, k.p, list);
	cli_buf_free(&k);
}

/* Diff a list of maps merged by key into res[field]. */
static int
diff_keyed(struct tw *t, cJSON *res, const char *field, const cJSON *o,
    const cJSON *m, const char *key, enum mode mode)
{
	cJSON *plist = cJSON_CreateArray(), *sub, *order, *d;
	const cJSON *me, *oe, *kv;
	int same = cJSON_GetArraySize(o) == cJSON_GetArraySize(m), i = 0;

	cJSON_ArrayForEach(me, m) {
		kv = cJSON_GetObjectItemCaseSensitive(me, key);
		if (!cJSON_IsObject(me) || kv == NULL) {
			if (t->cause == NULL) {
				struct cli_buf b = { 0 };

				cli_buf_printf(&b, "an element of %s does not "
				    "contain its merge key \"%s\"", field, key);
				t->cause = b.p;
			}
			cJSON_Delete(plist);
			return -1;
		}
		if (same && !json_equal(kv, cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(o, i), key)))
			same = 0;
		i++;
		if ((oe = find_keyed(o, key, kv)) != NULL) {
			if ((sub = diff_map(t, oe, me, mode,
			    retains_keys(t, 1))) == NULL) {
				cJSON_Delete(plist);
				return -1;
			}
			if (sub->child != NULL) {
				cJSON_AddItemToObject(sub, key,
				    cJSON_Duplicate(kv, 1));
				cJSON_AddItemToArray(plist, sub);
			} else
				cJSON_Delete(sub);
		} else if (mode == DELTA)
			cJSON_AddItemToArray(plist, cJSON_Duplicate(me, 1));
	}
	if (mode == DELETIONS)
		cJSON_ArrayForEach(oe, o) {
			kv = cJSON_GetObjectItemCaseSensitive(oe, key);
			if (kv == NULL || find_keyed(m, key, kv) != NULL)
				continue;
			d = cJSON_CreateObject();
			cJSON_AddItemToObject(d, key, cJSON_Duplicate(kv, 1));
			cJSON_AddStringToObject(d, "$patch", "delete");
			cJSON_AddItemToArray(plist, d);
		}
	if ((mode == DELTA && (plist->child != NULL || !same)) ||
	    (mode == DELETIONS && plist->child != NULL)) {
		order = cJSON_CreateArray();
		cJSON_ArrayForEach(me, m) {
			d = cJSON_CreateObject();
			cJSON_AddItemToObject(d, key, cJSON_Duplicate(
			    cJSON_GetObjectItemCaseSensitive(me, key), 1));
			cJSON_AddItemToArray(order, d);
		}
		add_directive_list(res, "$setElementOrder/", field, order);
	}
	if (plist->child != NULL)
		cJSON_AddItemToObject(res, field, plist);
	else
		cJSON_Delete(plist);
	return 0;
}

/* Diff a set of primitives (finalizers) into res. */
static void
diff_set(cJSON *res, const char *field, const cJSON *o, const cJSON *m,
    enum mode mode)
{
	cJSON *add = cJSON_CreateArray(), *del = cJSON_CreateArray();
	const cJSON *el;

	if (mode == DELTA)
		cJSON_ArrayForEach(el, m)
			if (!list_has(o, el))
				cJSON_AddItemToArray(add, cJSON_Duplicate(el, 1));
	if (mode == DELETIONS)
		cJSON_ArrayForEach(el, o)
			if (!list_has(m, el))
				cJSON_AddItemToArray(del, cJSON_Duplicate(el, 1));
	if ((mode == DELETIONS && del->child != NULL) ||
	    (mode == DELTA && !json_equal(o, m)))
		add_directive_list(res, "$setElementOrder/", field,
		    cJSON_Duplicate(m, 1));
	if (add->child != NULL)
		cJSON_AddItemToObject(res, field, add);
	else
		cJSON_Delete(add);
	if (del->child != NULL)
		add_directive_list(res, "$deleteFromPrimitiveList/", field, del);
	else
		cJSON_Delete(del);
}

/* Is every element of the list an object (a list of maps)? */
static int
all_objects(const cJSON *list)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list)
		if (!cJSON_IsObject(el))
			return 0;
	return 1;
}

/* Diff the lists o and m of field into res. */
static int
diff_list(struct tw *t, cJSON *res, const char *field, const cJSON *o,
    const cJSON *m, enum mode mode)
{
	const char *key = NULL;
	int merges = list_rule(t, &key);

	if (merges && key != NULL && all_objects(o) && all_objects(m))
		return diff_keyed(t, res, field, o, m, key, mode);
	if (merges && key == NULL && !all_objects(m)) {
		diff_set(res, field, o, m, mode);
		return 0;
	}
	if (mode == DELTA && !json_equal(o, m))
		cJSON_AddItemToObject(res, field, cJSON_Duplicate(m, 1));
	return 0;
}

/*
 * Does the map at the current path (each element of the list there, with
 * elements set) take kubectl's $retainKeys, which clears the fields the
 * file no longer names: a Deployment's spec.strategy ("retainKeys") and
 * each of a pod spec's volumes ("merge,retainKeys")? These are the
 * fields of k8s.io/api that have the strategy.
 */
static int
retains_keys(const struct tw *t, int elements)
{
	if (t->kind == NULL || t->depth > MAX_DEPTH || t->depth < 2)
		return 0;
	if (elements)
		return strcmp(t->path[t->depth - 1], "volumes") == 0 &&
		    strcmp(t->path[t->depth - 2], "spec") == 0;
	return strcmp(t->kind, "Deployment") == 0 && t->depth == 2 &&
	    strcmp(t->path[0], "spec") == 0 &&
	    strcmp(t->path[1], "strategy") == 0;
}

/* Add kubectl's $retainKeys (m's keys with values, sorted) to a map's
 * diff when it changes something or o has a field m has not. */
static void
add_retain_keys(cJSON *res, const cJSON *o, const cJSON *m)
{
	const cJSON *el, **keys;
	cJSON *list;
	int n = 0, i, extra = 0;

	cJSON_ArrayForEach(el, o)
		if (!cJSON_IsNull(el) &&
		    cJSON_GetObjectItemCaseSensitive(m, el->string) == NULL)
			extra = 1;
	if (res->child == NULL && !extra)
		return;
	keys = xmalloc((cJSON_GetArraySize(m) + 1) *
	    sizeof *keys);
	cJSON_ArrayForEach(el, m)
		if (!cJSON_IsNull(el))
			keys[n++] = el;
	qsort(keys, n, sizeof *keys, key_cmp);
	if (n > 0) {
		list = cJSON_AddArrayToObject(res, "$retainKeys");
		for (i = 0; i < n; i++)
			cJSON_AddItemToArray(list,
			    cJSON_CreateString(keys[i]->string));
	}
	free(keys);
}

/* The diff of two maps in one mode (a new object, maybe empty), with
 * $retainKeys when retain is set; NULL with t->cause on failure. */
static cJSON *
diff_map(struct tw *t, const cJSON *o, const cJSON *m, enum mode mode,
    int retain)
{
	cJSON *res = cJSON_CreateObject(), *sub;
	const cJSON *mv, *ov;
	int rc;

	cJSON_ArrayForEach(mv, m) {
		ov = cJSON_GetObjectItemCaseSensitive(o, mv->string);
		if (ov == NULL || !same_type(ov, mv)) {
			if (mode == DELTA)
				cJSON_AddItemToObject(res, mv->string,
				    cJSON_Duplicate(mv, 1));
			continue;
		}
		if (cJSON_IsObject(mv)) {
			push(t, mv->string);
			sub = diff_map(t, ov, mv, mode, retains_keys(t, 0));
			pop(t);
			if (sub == NULL)
				goto fail;
			if (sub->child != NULL)
				cJSON_AddItemToObject(res, mv->string, sub);
			else
				cJSON_Delete(sub);
		} else if (cJSON_IsArray(mv)) {
			push(t, mv->string);
			rc = diff_list(t, res, mv->string, ov, mv, mode);
			pop(t);
			if (rc != 0)
				goto fail;
		} else if (mode == DELTA && !json_equal(ov, mv))
			cJSON_AddItemToObject(res, mv->string,
			    cJSON_Duplicate(mv, 1));
	}
	if (mode == DELETIONS)
		cJSON_ArrayForEach(ov, o)
			if (cJSON_GetObjectItemCaseSensitive(m, ov->string) ==
			    NULL)
				cJSON_AddNullToObject(res, ov->string);
	if (retain)
		add_retain_keys(res, o, m);
	return res;
fail:
	cJSON_Delete(res);
	return NULL;
}

/*
 * Join the delta's elements of a keyed list into the deletions', then put
 * them in the file's order (order, the $setElementOrder list) with the
 * deletions last, as kubectl's patch has them.
 */
static void
join_keyed(struct tw *t, cJSON *dl, const cJSON *pl, const char *key,
    const cJSON *order)
{
	const cJSON *pe, *oe;
	cJSON *de, *tmp;

	cJSON_ArrayForEach(pe, pl) {
		de = (cJSON *)find_keyed(dl, key,
		    cJSON_GetObjectItemCaseSensitive(pe, key));
		if (de != NULL && cJSON_IsObject(pe))
			join_map(t, de, pe);
		else
			cJSON_AddItemToArray(dl, cJSON_Duplicate(pe, 1));
	}
	if (order == NULL)
		return;
	tmp = cJSON_CreateArray();
	cJSON_ArrayForEach(oe, order)
		if ((de = (cJSON *)find_keyed(dl, key,
		    cJSON_GetObjectItemCaseSensitive(oe, key))) != NULL)
			cJSON_AddItemToArray(tmp,
			    cJSON_DetachItemViaPointer(dl, de));
	while (dl->child != NULL)
		cJSON_AddItemToArray(tmp,
		    cJSON_DetachItemViaPointer(dl, dl->child));
	while (tmp->child != NULL)
		cJSON_AddItemToArray(dl,
		    cJSON_DetachItemViaPointer(tmp, tmp->child));
	cJSON_Delete(tmp);
}

/* The $setElementOrder list of field in p, else in d. */
static const cJSON *
order_of(const cJSON *d, const cJSON *p, const char *field)
{
	struct cli_buf k = { 0 };
	const cJSON *o;

	cli_buf_printf(&k, "$setElementOrder/%s", field);
	o = cJSON_GetObjectItemCaseSensitive(p, k.p);
	if (o == NULL)
		o = cJSON_GetObjectItemCaseSensitive(d, k.p);
	cli_buf_free(&k);
	return o;
}

/* Join patch p into d (both diffs; d is changed), as kubectl's mergeMap
 * joins its deletions and delta: maps recursively, keyed lists by key,
 * anything else p's. */
static cJSON *
join_map(struct tw *t, cJSON *d, const cJSON *p)
{
	const cJSON *pv;
	const char *key = NULL;
	cJSON *dv;

	cJSON_ArrayForEach(pv, p) {
		dv = cJSON_GetObjectItemCaseSensitive(d, pv->string);
		if (dv != NULL && cJSON_IsObject(dv) && cJSON_IsObject(pv)) {
			push(t, pv->string);
			join_map(t, dv, pv);
			pop(t);
			continue;
		}
		if (dv != NULL && cJSON_IsArray(dv) && cJSON_IsArray(pv)) {
			push(t, pv->string);
			if (list_rule(t, &key) && key != NULL) {
				join_keyed(t, dv, pv, key,
				    order_of(d, p, pv->string));
				pop(t);
				continue;
			}
			pop(t);
		}
		if (dv != NULL)
			cJSON_DeleteItemFromObjectCaseSensitive(d, pv->string);
		cJSON_AddItemToObject(d, pv->string, cJSON_Duplicate(pv, 1));
	}
	return d;
}

cJSON *
cli_threeway_patch(const cJSON *original, const cJSON *modified,
    const cJSON *current, const char *kind, char **cause)
{
	struct tw t = { .kind = kind };
	cJSON *delta, *deletions;

	*cause = NULL;
	if ((delta = diff_map(&t, current, modified, DELTA, 0)) == NULL) {
		*cause = t.cause;
		return NULL;
	}
	if ((deletions = diff_map(&t, original, modified, DELETIONS, 0)) ==
	    NULL) {
		cJSON_Delete(delta);
		*cause = t.cause;
		return NULL;
	}
	t.depth = 0;
	join_map(&t, deletions, delta);
	cJSON_Delete(delta);
	return deletions;
}
