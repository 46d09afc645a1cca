/*
 * The pods the scheduler has sent a bind for and not yet seen bound
 * (kube-scheduler's assumed pods): by uid, the node each goes to. A
 * session reads a pod of the table as bound to its node, so the sessions
 * that run while thousands of binds wait for the rate limiter or their
 * answers do not decide those pods again. Used from the loop only.
 */
#ifndef VOLRAY_SCHED_ASSUME_H
#define VOLRAY_SCHED_ASSUME_H

#include <stddef.h>

#include "store/store.h"

typedef struct assume assume;

assume *assume_new(void);
void assume_free(assume *);
/* A bind of the pod uid to node is on its way. */
void assume_add(assume *, const char *uid, const char *node);
/* Its bind failed: the pod is pending again, unless the cache says not. */
void assume_forget(assume *, const char *uid);
/*
 * A pod's event from the cache: a version on a node (the bind, or
 * another's) or the pod's deletion ends its assumption.
 */
void assume_event(assume *, const store_event *);
size_t assume_count(const assume *);
/*
 * For the n versions of pods in objs, the node each unbound one is
 * assumed on, or NULL: an array of n in one allocation with the names
 * (the caller frees it), or NULL when none is assumed. For a session's
 * thread to read while the table changes on the loop.
 */
const char **assume_nodes(const assume *, store_obj *const *objs, size_t n);

#endif
