/*
 * The list options of a list or watch request that decide where a watch
 * starts (watch, resourceVersion, resourceVersionMatch, sendInitialEvents,
 * continue), defaulted and validated as kube-apiserver's ListResource
 * handler does before it lists or watches.
 */
#ifndef VOLRAY_LISTOPTS_H
#define VOLRAY_LISTOPTS_H

#include "api/route.h"
#include "net/http.h"

/*
 * Read and check the request's list options. *send_initial is the
 * sendInitialEvents option after kube-apiserver's defaulting: -1 unset,
 * 0 or 1. A forbidden combination is answered 422 Invalid (kind
 * ListOptions, group meta.k8s.io) with one cause per error; returns -1
 * then, 0 otherwise.
 */
int listopts_check(http_req *, struct route *, int *send_initial);

#endif
