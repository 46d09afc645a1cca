/*
 * ResourceQuota admission (quota.c).
 */
#ifndef VOLRAY_QUOTA_H
#define VOLRAY_QUOTA_H

#include <cjson/cJSON.h>

#include "registry/resource.h"
#include "store/store.h"

/* NULL when obj, created in ns, fits every ResourceQuota there; else
   the 403 Status kube-apiserver would answer. */
cJSON *quota_admit(store *, const resource *, const char *ns,
    const cJSON *obj);

#endif
