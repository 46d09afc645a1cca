/*
 * Limits that keep the API up for everyone, as kube-apiserver's
 * --max-requests-inflight and --max-mutating-requests-inflight do, plus a
 * request rate and a watch count per user. A request over a limit is
 * answered 429 TooManyRequests with Retry-After; health checks are never
 * limited, and members of system:masters are exempt from the per-user
 * limits (not from the in-flight ones).
 */
#ifndef VOLRAY_LIMITS_H
#define VOLRAY_LIMITS_H

#include <cjson/cJSON.h>

#include "lib/user.h"
#include "net/http.h"

typedef struct limits limits;

struct limits_conf {
	int max_readonly;	/* in flight, not counting watches and follows */
	int max_mutating;
	double user_qps;	/* per user, token bucket refill per second */
	int user_burst;		/* bucket size */
	int max_watches;	/* open watches per user */
};

/* kube-apiserver's defaults for the first two; generous ones for the rest. */
#define LIMITS_DEFAULT { 400, 200, 200.0, 400, 500 }

limits *limits_new(const struct limits_conf *);
void limits_free(limits *);
/*
 * Admit a request (user may be NULL for unauthenticated paths). NULL when
 * admitted: what it holds is released when the request is finished.
 * Otherwise the 429 Status to answer with (Retry-After is already set).
 */
cJSON *limits_admit(limits *, http_req *, const user_info *, int mutating,
    int long_running, int watch);
/* Requests refused so far, for /metrics. */
unsigned long long limits_rejected(const limits *);

#endif
