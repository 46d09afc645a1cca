/*
 * Patch algorithms over cJSON trees: JSON merge patch (RFC 7386), JSON patch
 * (RFC 6902) and Kubernetes strategic merge patch for built-in kinds.
 * Each returns a new tree (caller frees with cJSON_Delete) and never modifies
 * its inputs; on failure it returns NULL and sets *cause to a malloc'd message.
 */
#ifndef VOLRAY_PATCH_H
#define VOLRAY_PATCH_H

#include <cjson/cJSON.h>

cJSON *patch_merge(const cJSON *target, const cJSON *patch, char **cause);
cJSON *patch_json(const cJSON *target, const cJSON *ops, char **cause);
/*
 * kind is the object's kind ("Pod", "Deployment", ...) and selects the list
 * merge keys (containers/env/volumes by name, container ports by
 * containerPort, service ports by port, ...). Unknown kinds merge lists by
 * replacement, like a merge patch.
 */
cJSON *patch_strategic(const cJSON *target, const cJSON *patch,
    const char *kind, char **cause);
/*
 * How a strategic merge patch of kind treats the list at path (its field
 * names, outermost first; list elements add none): 1 when it merges, with
 * *key the merge key (NULL: a set of primitives, as finalizers), 0 when it
 * is replaced whole. Clients computing a patch (volray apply) use it to
 * agree with the server.
 */
int patch_list_rule(const char *kind, const char *const *path, int depth,
    const char **key);

#endif
