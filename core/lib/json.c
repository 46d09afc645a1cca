/*
 * cJSON helpers. Paths are dotted member names; no array indexing (callers
 * that need it walk arrays themselves). Setters replace in place so member
 * order stays stable, which keeps printed objects readable.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/xmalloc.h"

cJSON *
json_member(const cJSON *o, const char *key, size_t len)
{
	const cJSON *c;

	if (!cJSON_IsObject(o))
		return NULL;
	for (c = o->child; c != NULL; c = c->next) {
		/* The first byte before a call: most keys differ there
		   (cJSON's own lookup strcmp's every member to the match). */
		if (c->string == NULL || (len > 0 && c->string[0] != key[0]))
			continue;
		if (strncmp(c->string, key, len) == 0 && c->string[len] == '\0')
			return (cJSON *)c;
	}
	return NULL;
}

cJSON *
json_at(const cJSON *o, const char *path)
{
	const char *dot;
	size_t n;

	while (o != NULL && *path) {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		o = json_member(o, path, n);
		path += n + (dot != NULL);
	}
	return (cJSON *)o;
}

const char *
json_str(const cJSON *o, const char *path)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *
json_obj(cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsObject(v))
		return v;
	v = cJSON_CreateObject();
	json_set(o, key, v);
	return v;
}

void
json_set(cJSON *o, const char *key, cJSON *item)
{
	if (item == NULL)		/* cJSON_CreateString(NULL) */
		fatal("json_set: no value for %s", key);
	if (cJSON_GetObjectItemCaseSensitive(o, key) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, item);
	else
		cJSON_AddItemToObject(o, key, item);
}

void
json_set_str(cJSON *o, const char *key, const char *value)
{
	json_set(o, key, cJSON_CreateString(value));
}

void
json_set_num(cJSON *o, const char *key, double value)
{
	json_set(o, key, cJSON_CreateNumber(value));
}

void
json_del(cJSON *o, const char *key)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
}

int
json_has_string(const cJSON *o, const char *path, const char *s)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(o, path))
		if (cJSON_IsString(it) && strcmp(it->valuestring, s) == 0)
			return 1;
	return 0;
}

/*
 * Deep equality. cJSON_Compare visits every object member twice (once from
 * each side), which is exponential in depth; this visits each once: equal
 * member counts plus every member of a equal in b.
 */
int
json_equal(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;
	int na = 0, nb = 0;

	if (a == NULL || b == NULL)
		return a == b;
	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	switch (a->type & 0xff) {
	case cJSON_False:
	case cJSON_True:
	case cJSON_NULL:
		return 1;
	case cJSON_Number:
		return a->valuedouble == b->valuedouble;
	case cJSON_String:
	case cJSON_Raw:
		return a->valuestring && b->valuestring ?
		    strcmp(a->valuestring, b->valuestring) == 0 :
		    a->valuestring == b->valuestring;
	case cJSON_Array:
		for (x = a->child, y = b->child; x && y; x = x->next,
		    y = y->next)
			if (!json_equal(x, y))
				return 0;
		return x == NULL && y == NULL;
	case cJSON_Object:
		for (x = a->child; x; x = x->next)
			na++;
		for (y = b->child; y; y = y->next)
			nb++;
		if (na != nb)
			return 0;
		for (x = a->child; x; x = x->next) {
			y = cJSON_GetObjectItemCaseSensitive(b, x->string);
			if (y == NULL || !json_equal(x, y))
				return 0;
		}
		return 1;
	}
	return 0;
}

/* One step from the root, kept on the C stack (a key; NULL for an item). */
struct jpath {
	const struct jpath *up;
	const char *key;
};

/* The path's keys, root first, each followed by a dot; returns the end. */
static char *
put_path(char *w, const struct jpath *p)
{
	if (p == NULL)
		return w;
	w = put_path(w, p->up);
	if (p->key != NULL) {
		memcpy(w, p->key, strlen(p->key));
		w += strlen(p->key);
		*w++ = '.';
	}
	return w;
}

/* Append the path to key ("spec.containers.name"), one a line. */
static void
add_path(char **out, size_t *len, const struct jpath *p, const char *key)
{
	const struct jpath *q;
	size_t need = strlen(key) + 2;
	char *w;

	for (q = p; q != NULL; q = q->up)
		need += q->key != NULL ? strlen(q->key) + 1 : 0;
	*out = xrealloc(*out, *len + need);
	w = *out + *len;
	if (*len > 0)
		*w++ = '\n';
	w = put_path(w, p);
	memcpy(w, key, strlen(key) + 1);
	*len = (size_t)(w - *out) + strlen(key);
}

/* Is there a later sibling of c with its key? */
static int
repeated(const cJSON *c, const hmap *last)
{
	const cJSON *n;

	if (last != NULL)
		return hmap_get(last, c->string) != c;
	for (n = c->next; n != NULL; n = n->next)
		if (n->string != NULL && strcmp(n->string, c->string) == 0)
			return 1;
	return 0;
}

static void
drop_dups(cJSON *o, const struct jpath *p, char **out, size_t *len)
{
	cJSON *c, *next;
	hmap *last = NULL;
	int n = 0;

	if (cJSON_IsObject(o)) {
		for (c = o->child; c != NULL; c = c->next)
			n++;
		if (n > 16) {	/* else a scan of the later siblings */
			last = hmap_new();
			for (c = o->child; c != NULL; c = c->next)
				if (c->string != NULL)
					hmap_put(last, c->string, c);
		}
		for (c = o->child; n > 1 && c != NULL; c = next) {
			next = c->next;
			if (c->string != NULL && repeated(c, last)) {
				add_path(out, len, p, c->string);
				cJSON_Delete(cJSON_DetachItemViaPointer(o, c));
			}
		}
		hmap_free(last);
	}
	for (c = o->child; c != NULL; c = c->next)
		if (cJSON_IsObject(c) || cJSON_IsArray(c)) {
			struct jpath sub = { p, cJSON_IsObject(o) ? c->string :
			    NULL };

			drop_dups(c, &sub, out, len);
		}
}

char *
json_drop_duplicates(cJSON *o)
{
	char *out = NULL;
	size_t len = 0;

	if (o != NULL)
		drop_dups(o, NULL, &out, &len);
	return out;
}

int
json_condition_true(const cJSON *o, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, json_at(o, "status.conditions"))
		if (json_str(c, "type") && strcmp(json_str(c, "type"), type) ==
		    0 && json_str(c, "status") && strcmp(json_str(c, "status"),
		    "True") == 0)
			return 1;
	return 0;
}
