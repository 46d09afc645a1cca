/*
 * The subset of Kubernetes JSONPath that printer columns use:
 * ".a.b", ".a[0].b", ".a[*].b", ".a[?(@.type==\"Ready\")].status",
 * optionally wrapped in "{...}". Results are joined with commas (kubectl
 * prints multiple matches that way in columns).
 */
#ifndef VOLRAY_JSONPATH_H
#define VOLRAY_JSONPATH_H

#include <cjson/cJSON.h>

/* Evaluate path on obj; calls fn for each match. Returns the match count. */
int jsonpath_each(const cJSON *obj, const char *path,
    void (*fn)(const cJSON *match, void *arg), void *arg);
/* First match, or NULL. */
const cJSON *jsonpath_first(const cJSON *obj, const char *path);

#endif
