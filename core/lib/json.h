/*
 * Small helpers over cJSON trees: dotted-path lookups and setters used by
 * every layer that edits objects (admission, registry, tables, controllers).
 */
#ifndef VOLRAY_JSON_H
#define VOLRAY_JSON_H

#include <stdint.h>
#include <cjson/cJSON.h>

/* Member key (len bytes, no NUL needed) of object o, the first if it
   repeats; NULL when o is no object or has none. */
cJSON *json_member(const cJSON *o, const char *key, size_t len);
/* Item at a dotted path ("metadata.name"), or NULL. */
cJSON *json_at(const cJSON *, const char *path);
/* String at a dotted path, or NULL when absent or not a string. */
const char *json_str(const cJSON *, const char *path);
/* Object member key, created (as an object) if missing or not an object. */
cJSON *json_obj(cJSON *, const char *key);
/* Set (replacing) member key to item; item is owned by the tree after. */
void json_set(cJSON *, const char *key, cJSON *item);
void json_set_str(cJSON *, const char *key, const char *value);
void json_set_num(cJSON *, const char *key, double value);
/* Remove member key if present. */
void json_del(cJSON *, const char *key);
/* Does the array at a dotted path hold the string s? */
int json_has_string(const cJSON *, const char *path, const char *s);
/* Is the object's status condition of that type True? */
int json_condition_true(const cJSON *, const char *type);
/* Deep equality of two trees (numbers by value, objects unordered). */
int json_equal(const cJSON *, const cJSON *);
/*
 * Print compactly (cJSON_PrintUnformatted's bytes, numbers exactly) into a
 * malloc'd string, or into a new reference-counted buffer (lib/rbuf.h).
 */
char *json_print(const cJSON *);
/* Compactly with every object's keys sorted, as Go's encoding/json prints
   a map: how kube-apiserver 1.34 shows a field's invalid value. */
char *json_print_sorted(const cJSON *);
struct rbuf *json_print_rbuf(const cJSON *);
/* The same through cJSON's own printer (slower; NULL where cJSON fails):
   what the tests compare json_print against. */
char *json_print_reference(const cJSON *);
/*
 * Repeated keys in an object keep their last value, as Go's decoder (and
 * so kube-apiserver) reads them: the earlier ones are removed, anywhere
 * in the tree. Returns the removed keys' paths ("spec.replicas", one a
 * line, malloc'd), or NULL when there were none.
 */
char *json_drop_duplicates(cJSON *);

#endif
