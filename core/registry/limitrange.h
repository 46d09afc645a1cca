/*
 * LimitRange admission (limitrange.c).
 */
#ifndef VOLRAY_LIMITRANGE_H
#define VOLRAY_LIMITRANGE_H

#include <cjson/cJSON.h>

#include "store/store.h"

/* Default a new pod's resources from the LimitRanges of ns and check it
   against them: NULL, or the 403 Status kube-apiserver would answer. */
cJSON *limitrange_admit_pod(store *, const char *ns, cJSON *pod);
/* The API's defaults of a LimitRange object's Container items. */
void limitrange_defaults(cJSON *limitrange);

#endif
