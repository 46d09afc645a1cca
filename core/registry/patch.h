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

#endif
