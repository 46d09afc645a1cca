/*
 * The event recorder: Events about objects, written through a client, as
 * the components of a cluster record them (client-go's event broadcaster,
 * which kube-scheduler and the controllers use). Each component (the
 * controllers, the scheduler, the node lifecycle) has its own recorder.
 *
 * Two kinds of repetition are folded, as client-go's EventCorrelator folds
 * them:
 * - the same event again (object, type, reason and message) bumps the
 *   count and lastTimestamp of the one Event already written for it;
 * - past RECORDER_SIMILAR different messages for the same object, type and
 *   reason within RECORDER_SIMILAR_WINDOW seconds, the rest go to one
 *   Event whose message is "(combined from similar events): " and the
 *   newest message, and whose count grows.
 * An Event's name is the object's name and a hash of what identifies it,
 * so a restarted daemon counts on where it stopped.
 */
#ifndef VOLRAY_RECORDER_H
#define VOLRAY_RECORDER_H

#include <cjson/cJSON.h>

#include "client/client.h"

#define RECORDER_SIMILAR 10
#define RECORDER_SIMILAR_WINDOW 600

typedef struct recorder recorder;

/* The object an Event is about (involvedObject); NULL fields are left out. */
struct recorder_obj {
	const char *api_version;
	const char *kind;
	const char *ns;        /* "" or NULL: cluster-scoped (the Event goes to
	                          "default") */
	const char *name;
	const char *uid;
	const char *rv;
};

/* A recorder writing as component (source.component). */
recorder *recorder_new(client *, const char *component);
void recorder_free(recorder *);
/* The involved object's fields, borrowed from the tree obj. */
void recorder_obj_of(const cJSON *obj, struct recorder_obj *);
/*
 * Record an Event (type "Normal" or "Warning") about o, written with opts
 * (NULL: an unchecked in-process write). Returns the HTTP code of the
 * write (200 or 201, or the error's), 0 when o has no name, 202 when the
 * answer comes later (a remote API's round trip, which the loop does not
 * wait for; a failure is logged then). Repeats while the first write
 * travels may find no Event yet in the cache: their create loses to the
 * first (409) and is not counted, a loss client-go's recorder shares.
 */
int recorder_event(recorder *, const struct recorder_obj *o,
    const char *type, const char *reason, const char *message,
    const struct reg_opts *opts);
/* The same, for n occurrences at once (a caller that writes repeats
   less often than they happen): the Event's count grows by n. */
int recorder_event_n(recorder *, const struct recorder_obj *o,
    const char *type, const char *reason, const char *message, int n,
    const struct reg_opts *opts);

#endif
