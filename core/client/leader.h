/*
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's
 * tools/leaderelection does it, written on the client so that it works the
 * same against the embedded API server and a remote one. A role that must
 * have a single writer (the controllers, the scheduler) runs one elector
 * per replica on one Lease; the replica whose identity is the Lease's
 * holderIdentity leads, the others stand by.
 *
 * - A candidate reads the Lease every retry period (with client-go's
 *   jitter); it creates the Lease if there is none, and takes it over (an
 *   update with the resourceVersion it read: a 409 means another won) when
 *   it is free or expired. Expiry is measured on this process's monotonic
 *   clock from when it last saw the record change, never by comparing the
 *   holder's renewTime with the local wall clock.
 * - The leader renews renewTime every retry period. When no renewal has
 *   succeeded for the renew deadline it stops leading at once and becomes
 *   a candidate again. leader_is_leader() reads the clock itself, so it
 *   turns false at the deadline even when the loop was too busy to run
 *   the timer.
 * - leader_stop with release empties holderIdentity (client-go's
 *   ReleaseOnCancel), so that a candidate takes over at its next read.
 *
 * Every transition is logged with the identity and the Lease, and /metrics
 * shows volray_leader_is_leader and volray_leader_transitions_total.
 */
#ifndef VOLRAY_LEADER_H
#define VOLRAY_LEADER_H

#include <stddef.h>
#include <uv.h>

#include "client/client.h"

#define LEADER_LEASE_MS		15000
#define LEADER_RENEW_MS		10000
#define LEADER_RETRY_MS		2000
#define LEADER_NAMESPACE	"kube-system"

typedef struct leader leader;

struct leader_conf {
	const char *ns;             /* the Lease's namespace (NULL:
	                               LEADER_NAMESPACE) */
	const char *name;           /* the Lease's name */
	const char *identity;       /* holderIdentity (NULL: leader_identity) */
	unsigned lease_ms;          /* leaseDurationSeconds, in ms (0: 15 s;
	                               written rounded up to seconds) */
	unsigned renew_ms;          /* renew deadline (0: 10 s) */
	unsigned retry_ms;          /* retry period (0: 2 s) */
	int release_on_cancel;      /* leader_free releases the Lease */
	/* An annotation this replica writes on the Lease whenever it
	   acquires or renews it (NULL key: none): where the leader can be
	   reached, volray.io/endpoint. */
	const char *note_key, *note_value;
	/*
	 * Called on the loop: on_started when this replica starts leading,
	 * on_stopped when it stops (the deadline passed, the Lease was taken,
	 * or leader_stop), on_new_leader when the holder it sees changes (its
	 * own identity included; "" when the Lease was released). They may
	 * call leader_stop and leader_free.
	 */
	void (*on_started)(void *arg);
	void (*on_stopped)(void *arg);
	void (*on_new_leader)(void *arg, const char *identity);
	void *arg;
};

/* A holder identity as client-go's users make it: "hostname_<uuid>". */
void leader_identity(char *buf, size_t len);
/*
 * Whether conf can be used: a name, and lease > renew deadline > 1.2
 * retry periods (client-go's rule; zeros count as their defaults).
 * Returns 0, or -1 with *cause (malloc'd) saying why.
 */
int leader_conf_check(const struct leader_conf *, char **cause);
/*
 * Start electing on the loop through c (the first read on the loop's next
 * turn). conf's strings are copied. NULL if conf fails leader_conf_check
 * (logged).
 */
leader *leader_new(uv_loop_t *, client *c, const struct leader_conf *);
/*
 * Whether this replica leads now: it won the Lease and renewed it less than
 * the renew deadline ago, by the clock. A role checks it before each write
 * batch.
 */
int leader_is_leader(const leader *);
/* The identity this elector writes as holderIdentity. */
const char *leader_self(const leader *);
/* The holder it last saw ("" for none). */
const char *leader_holder(const leader *);
/*
 * Stop electing for good. A leader stops leading (on_stopped); with
 * release it first writes the Lease with an empty holderIdentity.
 */
void leader_stop(leader *, int release);
/* leader_stop with conf's release_on_cancel, then free (after the loop's
   next turn closes its timer). */
void leader_free(leader *);

#endif
