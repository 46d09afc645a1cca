/*
 * The scheduler: Volcano's framework in C with its policies in Lua. Each
 * cycle opens a session on a snapshot of the objects its client sees
 * (Ready nodes, queues, PodGroups and their pods), runs the actions
 * scheduler.yaml names (enqueue, allocate, backfill, preempt, reclaim)
 * with the plugins of its tiers (policies/NAME.lua and each
 * --policy-dir), and applies the decisions through the client: binds,
 * evictions, PodGroup and Queue status, the reasons of pods left pending,
 * events. Every pod whose schedulerName is volcano, default-scheduler or
 * unset is scheduled.
 */
#ifndef VOLRAY_SCHED_H
#define VOLRAY_SCHED_H

#include <stdint.h>
#include <uv.h>
#include <cjson/cJSON.h>

#include "client/client.h"
#include "luahost/luahost.h"

typedef struct sched sched;

struct sched_stats {
	uint64_t cycles;		/* sessions run, and skipped ones */
	uint64_t skipped;		/* inputs unchanged since the last */
	uint64_t binds;
	uint64_t evictions;
	uint64_t ungates;		/* admission gates removed */
	uint64_t unschedulable;		/* pods told why they wait */
	uint64_t plugin_failures;
	uint64_t lua_us;		/* inside plugin calls, all cycles */
	uint64_t cycle_us;		/* all cycles */
	uint64_t last_cycle_us;
	uint64_t last_bind_cycle_us;	/* the last session that bound */
};

/* Have the client's cache keep the scheduler's summary of each pod
   version (call before any client is made): a session then parses only
   pending pods. */
void sched_derive(void);
/*
 * The pods this scheduler places: those whose spec.schedulerName is one
 * of names (--scheduler-name) and, with also_default (volray the only
 * scheduler: no remote API), those of the default scheduler or none.
 * Process-wide; before any client is made. The default: volcano, and the
 * default ones.
 */
void sched_set_names(const char *const *names, int n, int also_default);
/* The scheduler, seeing objects and writing its decisions through c. */
/* The kinds (store keys) the scheduler reads through its client;
   NULL-terminated. */
extern const char *const sched_kinds[];
sched *sched_new(uv_loop_t *, client *c, luahost *);
/* Load (or reload) scheduler.yaml and its plugins from the host's roots;
   on error the running policy stays and *cause says why. */
int sched_reload(sched *, char **cause);
void sched_start(sched *);
void sched_stats_get(const sched *, struct sched_stats *);
/* The running policy's plugins and config as JSON (policy_info). */
cJSON *sched_policy_info(const sched *);
/* Keep the reasons of the last n sessions for explain (0: none); at
   start, before sched_start. The default: SCHED_EXPLAIN_SESSIONS. */
#define SCHED_EXPLAIN_SESSIONS 8
void sched_set_explain_sessions(sched *, int n);
/* volrayd --record-sessions: write each session whose input changed to
   dir as a `volray session record` file, keeping the newest keep (dir
   NULL: none). At start, before sched_start; -1 with *cause. */
int sched_set_record_sessions(sched *, const char *dir, int keep,
    char **cause);
int sched_explain_on(const sched *);
/* The newest kept explanation of a job ("ns/podgroup-name", kind
   "podgroups") or a queue (kind "queues"): a new tree, or NULL. Any
   thread. */
cJSON *sched_explain(sched *, const char *kind, const char *key);
/* The answer to an explain request: that record with its kind and
   apiVersion, or a Status (404: no kept record; 503: s is NULL, a
   standby, or keeps no sessions). status_code() tells which. */
cJSON *sched_explain_answer(sched *, const char *kind, const char *key);
/* The scheduler's job key ("ns/name") of a pod: its group-name
   annotation's PodGroup, else the implicit podgroup-<owner or own uid>
   (allocated; NULL without namespace, name or uid). */
char *sched_pod_job_key(const cJSON *pod);

#endif
