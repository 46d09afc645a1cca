/*
 * A string-keyed hash map with chaining and power-of-two growth. Keys are
 * borrowed: the caller keeps each key alive (usually inside the value) for as
 * long as it is in the map.
 */
#ifndef VOLRAY_HMAP_H
#define VOLRAY_HMAP_H

#include <stddef.h>

typedef struct hmap hmap;

hmap *hmap_new(void);
void hmap_free(hmap *);
void *hmap_get(const hmap *, const char *key);
/* Insert or replace; returns the previous value or NULL. */
void *hmap_put(hmap *, const char *key, void *value);
/* Remove; returns the removed value or NULL. */
void *hmap_del(hmap *, const char *key);
size_t hmap_count(const hmap *);
/* Visit every entry; stop early when fn returns non-zero. Do not modify. */
void hmap_each(const hmap *, int (*fn)(const char *key, void *value, void *arg),
    void *arg);

#endif
