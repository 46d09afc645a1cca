/*
 * Chained hash map keyed by NUL-terminated strings (FNV-1a). The bucket array
 * doubles when the load passes 1, so lookups stay O(1) at any size; entries
 * are small nodes that borrow the caller's key pointer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/xmalloc.h"

struct hnode {
	struct hnode *next;
	const char *key;
	uint32_t hash;
	void *value;
};

struct hmap {
	struct hnode **b;
	size_t nb;
	size_t count;
};

static uint32_t
hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

hmap *
hmap_new(void)
{
	hmap *m = xcalloc(1, sizeof *m);

	m->nb = 16;
	m->b = xcalloc(m->nb, sizeof *m->b);
	return m;
}

void
hmap_free(hmap *m)
{
	size_t i;
	struct hnode *n, *next;

	if (m == NULL)
		return;
	for (i = 0; i < m->nb; i++) {
		for (n = m->b[i]; n != NULL; n = next) {
			next = n->next;
			free(n);
		}
	}
	free(m->b);
	free(m);
}

/* Double the bucket array and rehash every node into it. */
static void
grow(hmap *m)
{
	size_t nb = m->nb * 2, i;
	struct hnode **b = xcalloc(nb, sizeof *b), *n, *next;

	for (i = 0; i < m->nb; i++) {
		for (n = m->b[i]; n != NULL; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(m->b);
	m->b = b;
	m->nb = nb;
}

void *
hmap_get(const hmap *m, const char *key)
{
	uint32_t h = hash_str(key);
	struct hnode *n;

	for (n = m->b[h & (m->nb - 1)]; n != NULL; n = n->next)
		if (n->hash == h && strcmp(n->key, key) == 0)
			return n->value;
	return NULL;
}

void *
hmap_put(hmap *m, const char *key, void *value)
{
	uint32_t h = hash_str(key);
	struct hnode *n;
	void *old;

	for (n = m->b[h & (m->nb - 1)]; n != NULL; n = n->next) {
		if (n->hash == h && strcmp(n->key, key) == 0) {
			old = n->value;
			n->value = value;
			n->key = key;
			return old;
		}
	}
	if (m->count >= m->nb)
		grow(m);
	n = xmalloc(sizeof *n);
	n->key = key;
	n->hash = h;
	n->value = value;
	n->next = m->b[h & (m->nb - 1)];
	m->b[h & (m->nb - 1)] = n;
	m->count++;
	return NULL;
}

void *
hmap_del(hmap *m, const char *key)
{
	uint32_t h = hash_str(key);
	struct hnode **p, *n;
	void *old;

	for (p = &m->b[h & (m->nb - 1)]; (n = *p) != NULL; p = &n->next) {
		if (n->hash == h && strcmp(n->key, key) == 0) {
			*p = n->next;
			old = n->value;
			free(n);
			m->count--;
			return old;
		}
	}
	return NULL;
}

size_t
hmap_count(const hmap *m)
{
	return m->count;
}

void
hmap_each(const hmap *m, int (*fn)(const char *, void *, void *), void *arg)
{
	size_t i;
	struct hnode *n;

	for (i = 0; i < m->nb; i++)
		for (n = m->b[i]; n != NULL; n = n->next)
			if (fn(n->key, n->value, arg))
				return;
}
