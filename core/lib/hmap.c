/*
 * Hash map keyed by NUL-terminated strings (FNV-1a), open addressing with
 * linear probing: each slot holds the hash, the key pointer (borrowed from
 * the caller) and the value, so a lookup reads one run of adjacent slots
 * and compares a key's bytes only when the whole hash matches. The maps
 * that matter hold every pod (the store's indexes, the node manager's),
 * where a lookup is a cache miss or two: chained nodes, each its own
 * allocation, cost one more miss per step. The slot array doubles when
 * three quarters are taken; a removal shifts the slots after it back (no
 * tombstones), so lookups stay short after churn.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/log.h"

struct slot {
	uint32_t hash;
	const char *key;		/* NULL: empty */
	void *value;
};

struct hmap {
	struct slot *s;
	size_t mask;			/* slots - 1 */
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

static struct slot *
slots_new(size_t n)
{
	struct slot *s = calloc(n, sizeof *s);

	if (s == NULL)
		fatal("out of memory");
	return s;
}

hmap *
hmap_new(void)
{
	hmap *m = calloc(1, sizeof *m);

	if (m == NULL)
		fatal("out of memory");
	m->mask = 15;
	m->s = slots_new(m->mask + 1);
	return m;
}

void
hmap_free(hmap *m)
{
	if (m == NULL)
		return;
	free(m->s);
	free(m);
}

/* The slot that holds key, or the empty slot where it would go. */
static struct slot *
find(const hmap *m, const char *key, uint32_t h)
{
	size_t i = h & m->mask;
	struct slot *s;

	for (;; i = (i + 1) & m->mask) {
		s = &m->s[i];
		if (s->key == NULL ||
		    (s->hash == h && strcmp(s->key, key) == 0))
			return s;
	}
}

/* Double the slot array and place every entry again. */
static void
grow(hmap *m)
{
	struct slot *old = m->s;
	size_t n = m->mask + 1, i;

	m->mask = n * 2 - 1;
	m->s = slots_new(n * 2);
	for (i = 0; i < n; i++)
		if (old[i].key != NULL)
			*find(m, old[i].key, old[i].hash) = old[i];
	free(old);
}

void *
hmap_get(const hmap *m, const char *key)
{
	return find(m, key, hash_str(key))->value;
}

void *
hmap_put(hmap *m, const char *key, void *value)
{
	uint32_t h = hash_str(key);
	struct slot *s = find(m, key, h);
	void *old;

	if (s->key != NULL) {
		old = s->value;
		s->key = key;
		s->value = value;
		return old;
	}
	if ((m->count + 1) * 4 > (m->mask + 1) * 3) {
		grow(m);
		s = find(m, key, h);
	}
	s->hash = h;
	s->key = key;
	s->value = value;
	m->count++;
	return NULL;
}

void *
hmap_del(hmap *m, const char *key)
{
	struct slot *s = find(m, key, hash_str(key));
	size_t i = (size_t)(s - m->s), j, home;
	void *old = s->value;

	if (s->key == NULL)
		return NULL;
	/*
	 * Backward shift: move up each following entry of the run whose
	 * home slot is not between the hole and it (cyclically), so that no
	 * lookup meets an empty slot before its key.
	 */
	for (j = (i + 1) & m->mask; m->s[j].key != NULL;
	    j = (j + 1) & m->mask) {
		home = m->s[j].hash & m->mask;
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			m->s[i] = m->s[j];
			i = j;
		}
	}
	m->s[i].key = NULL;
	m->s[i].value = NULL;
	m->count--;
	return old;
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

	for (i = 0; i <= m->mask; i++)
		if (m->s[i].key != NULL && fn(m->s[i].key, m->s[i].value, arg))
			return;
}
