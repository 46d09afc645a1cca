/*
 * Internals of the scheduler, Volcano's framework in C.
 *
 * A session (session.c) works on a snapshot of plain C structs:
 * schedulable nodes with their accounting (idle, used, releasing,
 * pipelined: node.c), queues, jobs (a PodGroup, or the implicit group of
 * a bare pod) and their tasks (pods) in the reference's task states
 * (task.c). The snapshot (snapshot.c) comes from a source: the daemon's
 * client (sched.c, with a cache that re-parses only what changed) or a
 * scripted cluster (`volray policy test`, policytest.c). Plugins are Lua
 * tables loaded with their policy (policy.c), shown the session as `ssn`
 * (ssn.c) and views (view.c), and called through the tier rules of
 * framework.c; actions (enqueue.c, allocate.c with backfill, preempt.c,
 * reclaim.c) change the session through statements (statement.c);
 * outcome.c turns the session into PodGroup and Queue status, which the
 * caller applies with the binds and evictions.
 *
 * From the bottom up, each file calling only those before it: config,
 * capindex, task, node, snapshot, view, framework, ssn, pq, predicate,
 * statement, the actions, outcome, policy, session, explain; then
 * sched.c and policytest.c.
 */
#ifndef VOLRAY_SCHED_INT_H
#define VOLRAY_SCHED_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include <lua.h>

#include "lib/hmap.h"
#include "lib/podspec.h"

/* ------------------------------------------------------------------ */
/* Configuration (config.c): scheduler.yaml in Volcano's format.       */

/* The extension points, in the order of their Lua names (config.c). */
enum ep {
	EP_OPEN, EP_CLOSE,
	EP_JOB_ORDER, EP_QUEUE_ORDER, EP_TASK_ORDER,
	EP_JOB_VALID, EP_JOB_READY, EP_JOB_PIPELINED, EP_JOB_STARVING,
	EP_JOB_ENQUEUEABLE, EP_JOB_ENQUEUED,
	EP_OVERUSED, EP_ALLOCATABLE, EP_PREEMPTIVE,
	EP_PREEMPTABLE, EP_RECLAIMABLE, EP_VICTIM,
	EP_PREDICATE, EP_BATCH_PREDICATE, EP_NODE_ORDER, EP_BATCH_NODE_ORDER,
	EP_BEST_NODE, EP_ON_ALLOCATE, EP_ON_DEALLOCATE,
	EP_JOB_ORDER_KEY, EP_QUEUE_ORDER_KEY, EP_TASK_ORDER_KEY,
	EP_EVICTABLE, EP_VICTIM_QUEUE_ORDER,
	EP_N
};

struct plugin_conf {
	char *name;
	cJSON *arguments;		/* as written (object), never NULL */
	uint32_t enabled;		/* bit per enum ep */
	int fail_closed;		/* failurePolicy: Fail */
	int hierarchy;			/* enableHierarchy: true */
	int line;			/* in the config file */
};

struct tier_conf {
	struct plugin_conf *plugins;
	int nplugins;
};

#define MAX_ACTIONS 8
enum action {
	ACT_ENQUEUE, ACT_ALLOCATE, ACT_BACKFILL, ACT_PREEMPT, ACT_RECLAIM,
	ACT_FIRSTFIT, ACT_GANGPREEMPT, ACT_GANGRECLAIM, ACT_SHUFFLE
};

struct sched_conf {
	enum action actions[MAX_ACTIONS];
	int nactions;
	struct tier_conf *tiers;
	int ntiers;
	cJSON *configurations;		/* [{name, arguments}] or NULL */
	int period_ms;
	char *path;			/* where it was read from */
};

/* Parse; -1 with *cause ("file:line: message") on error. */
int config_parse(const char *path, const char *buf, size_t len,
    struct sched_conf *, char **cause);
void config_free(struct sched_conf *);
int config_has_action(const struct sched_conf *, enum action);
extern const char *const config_ep_names[EP_N];

/* ------------------------------------------------------------------ */
/* The snapshot.                                                       */

enum task_status {
	TS_PENDING, TS_ALLOCATED, TS_PIPELINED, TS_BINDING, TS_BOUND,
	TS_RUNNING, TS_RELEASING, TS_SUCCEEDED, TS_FAILED, TS_UNKNOWN,
	TS_N
};
/* task.c: the states' names and the allocated-set (Allocated, Binding,
   Bound, Running). */
extern const char *const task_status_names[TS_N];
int task_allocated(enum task_status);

struct s_task;
struct s_job;

/* An order key a plugin computed, cached until its object changes. */
#define MAX_KEYS 4
struct okey {
	uint32_t ver;			/* of the object when computed, +1 */
	int n;
	double k[MAX_KEYS];
};

struct capindex;

struct s_node {
	const char *name;
	cJSON *obj;
	struct podspec_res alloc;
	struct podspec_res idle, used, releasing, pipelined;
	int64_t nz_cpu, nz_memory;	/* used, with kube-scheduler's
					   defaults for zero requests */
	int unschedulable, has_taints;
	struct s_task **tasks;		/* on the node: for victims */
	int ntasks;
	size_t captasks;
	int naffine;			/* of them with pod (anti-)affinity */
	int idx;
	uint32_t ver, view_ver;		/* accounting changes; the Lua view */
	int view;			/* index in the view table, 0 none */
	struct capindex *cx;		/* the free-capacity index, once built */
	struct s_hypernode **hns;	/* the HyperNodes holding it, once the
					   topology is built (topology.c) */
	int nhns;
};

/* Nodes by free capacity (capindex.c). */
struct cap_free {
	int64_t cpu, memory, pods;
};
struct capindex {
	struct cap_free *max;		/* segment tree, 1-based, 2*size */
	int n, size;
};
void capindex_build(struct capindex *, struct s_node *, int);
void capindex_update(struct capindex *, const struct s_node *);
/* The first node index in [from, to) whose free capacity may hold req
   (cpu, memory, pods); -1 if none. */
int capindex_next(const struct capindex *, int from, int to,
    const struct podspec_res *req);
void capindex_free(struct capindex *);

struct s_queue {
	const char *name;
	cJSON *obj;			/* NULL for a synthesised queue */
	int weight;
	long long priority;
	int reclaimable;
	const char *parent;
	const char *state;		/* Open, Closing, Closed, Unknown */
	struct podspec_res allocated;	/* this session's allocated-set */
	struct podspec_res request;	/* allocated-set + pending */
	struct podspec_res inqueue;	/* admitted jobs' minimum not yet
					   allocated */
	struct podspec_res elastic;	/* allocated beyond the minimum */
	struct podspec_res reserved;	/* pending tasks whose admission gate
					   went: the room they were given */
	uint32_t ver;			/* bumped when allocated changes */
	const char *overused_by;	/* the plugin that said so, or NULL */
	int turns;			/* jobs allocate took up from it */
	struct okey *keys;		/* per plugin */
	int view;
	int idx;
};

struct s_task {
	const char *ns, *name, *uid;
	cJSON *obj;			/* NULL until task_obj() parses it */
	const void *lazy;		/* the source's handle for that */
	/* What decides where it fits besides its requests (tolerations,
	   nodeSelector, affinity, labels), printed: the summary's (NULL
	   for a pod summarized while bound). */
	const char *shape;
	const char *unsched_msg;	/* the message of its PodScheduled=False
					   Unschedulable condition, or NULL */
	struct podspec_res req;
	int best_effort;		/* requests nothing (but a pod slot) */
	long long priority;
	int has_selector, has_pod_affinity, critical, preemptable;
	const char *role;		/* volcano.sh/task-spec, or "" */
	const char *created;
	int gated;			/* spec.schedulingGates not empty */
	int queue_gate;			/* index of the queue-allocation gate
					   it opted into (annotation), or -1 */
	int ungate;			/* decided: remove that gate */
	int gate_opt;			/* annotated with QUEUE_GATE "true" */
	enum task_status status;
	struct s_node *node;		/* allocated, pipelined or bound */
	struct s_job *job;
	char *why;			/* why it stays pending */
	char *nominated;		/* pipelined by preempt/reclaim */
	int vnote;			/* its victim note in vnote_job's */
	struct s_job *vnote_job;	/* (victimnote.c) */
	uint32_t ver;
	struct okey *keys;		/* per plugin */
	int view;
	int idx;
};

/* Volcano 1.15's queue admission gate: a pod annotated with it gets the
   scheduling gate of the same name at creation; the scheduler removes
   the gate once the pod's queue may take it. */
#define QUEUE_GATE		"scheduling.volcano.sh/queue-allocation-gate"

/* topology.c: a HyperNode of the session. */
struct s_hypernode {
	const char *name, *tier_name;
	int tier;
	const cJSON *obj;
	struct s_node **nodes;		/* its own and its children's */
	int nnodes;
	size_t capnodes;
	struct s_hypernode *parent;
	struct podspec_res alloc;	/* its nodes' allocatable */
	struct podspec_res fidle, used;	/* its nodes' future idle and used,
					   kept by node.c as tasks move */
	int idx;
};

enum topo_mode { TOPO_NONE, TOPO_HARD, TOPO_SOFT };

struct role_count {
	const char *role;
	int min;			/* minTaskMember, 0 if none */
	int n[TS_N];
	struct s_task *fit_failed;	/* allocate: a task of this role that
					   fit no node this session */
};

/*
 * What became of a task a preemptor considered as a victim, for explain
 * (victimnote.c), weakest first: a later verdict on the same victim
 * replaces an earlier one only if it is stronger.
 */
enum victim_verdict {
	VV_PROTECTED,			/* not preemptable */
	VV_REFUSED,			/* a plugin's rule kept it */
	VV_WHOLE,			/* would break its gang (gang actions,
					   allowWholeBundle false) */
	VV_SPARED,			/* allowed, room made without it */
	VV_NO_ROOM,			/* allowed, evicting it would not make
					   room */
	VV_UNDONE,			/* evicted, undone: the preemptor could
					   still not be placed */
	VV_EVICTED,
	VV_N
};

struct victim_note {
	struct s_task *t;
	struct s_node *n;
	enum victim_verdict v;
	const char *plugin;		/* VV_REFUSED: whose rule, or NULL */
};

/* Actions a job was a preemptor in (victim_acts). */
#define VA_PREEMPT	1
#define VA_RECLAIM	2
#define VA_GANGPREEMPT	4
#define VA_GANGRECLAIM	8

/* What allocate did with a job it took up (explain.c). */
enum alloc_result {
	ALLOC_NONE, ALLOC_COMMITTED, ALLOC_PIPELINED, ALLOC_DISCARDED
};

struct s_job {
	const char *key;		/* "ns/name" */
	const char *name, *ns, *uid, *created;
	cJSON *pg;			/* the PodGroup, or NULL (implicit) */
	/* Which: Volcano's (scheduling.volcano.sh), or Kubernetes' own
	   (scheduling.k8s.io/v1alpha2: minCount as minMember, no phase of
	   its own, its status the PodGroupScheduled condition). A pod whose
	   scheduling.k8s.io PodGroup does not exist yet is in a job with
	   no group and no queue, never placed (group_missing). */
	enum { GROUP_VOLCANO, GROUP_K8S } group_api;
	int group_missing;
	const char *phase;		/* PodGroup status.phase */
	struct s_queue *queue;
	const char *queue_name;
	long long priority;
	int min_member;
	struct podspec_res min_res;
	int has_min_res;
	/* PodGroup spec.networkTopology: mode, highestTierAllowed (or
	   highestTierName, resolved to topo_tier by topology_build). */
	enum topo_mode topo_mode;
	int topo_tier;
	const char *topo_tier_name;
	struct s_task **tasks;
	int ntasks;
	size_t captasks;
	int n[TS_N];			/* tasks per status */
	struct role_count *roles;
	int nroles;
	struct podspec_res allocated;	/* allocated-set requests */
	int preemptable;
	/* Session outcome. */
	int invalid;			/* JobValid failed */
	char *invalid_reason, *invalid_msg;
	const char *invalid_plugin;	/* whose job_valid said so */
	int enqueued;			/* admitted this session */
	char *enqueue_msg;		/* why enqueue refused it */
	int enq_failed;			/* ... a plugin failed (failurePolicy
					   Fail): enqueue_msg is its error */
	char *cond_type, *cond_reason, *cond_msg;	/* ssn:job_condition */
	/* For explain.c: what the actions did with it. */
	int alloc_turn;			/* allocate took it up (1, 2, ...); -n:
					   n-th in line when its queue was
					   found overused */
	int alloc_result;		/* enum alloc_result */
	const char *enq_veto;		/* plugin whose vote kept it Pending */
	const char *ready_veto;		/* plugin that said not ready */
	const char *pipe_veto;		/* ... not pipelined */
	int victims_seen;		/* as a preemptor: candidates, */
	int victims_protected;		/* not preemptable of those, */
	int victims_allowed;		/* allowed by the plugins */
	int victim_acts;		/* VA_* */
	struct victim_note *vnotes;	/* the first VNOTES_MAX victims */
	int nvnotes, vnotes_more;	/* ... and verdicts not kept */
	size_t capvnotes;
	char **notes;			/* ssn:explain's "plugin: message" */
	int nnotes;
	uint32_t ver, view_ver;
	struct okey *keys;		/* per plugin */
	int active;			/* had work or changed this session */
	int view;
	int idx;
};

/* ------------------------------------------------------------------ */
/* The session.                                                        */

struct plugin;
struct policy;

struct decision_bind { struct s_task *t; struct s_node *n; };
struct decision_evict { struct s_task *t; char *reason; };

/* Why a node does not take a task (predicate.c). */
enum fit_reason {
	FIT_OK, FIT_CPU, FIT_MEMORY, FIT_PODS, FIT_EXT, FIT_SELECTOR,
	FIT_TAINT, FIT_UNSCHEDULABLE, FIT_NODENAME, FIT_ANTI_AFFINITY,
	FIT_AFFINITY, FIT_LUA, FIT_NREASONS
};

/* What a store keeps beside a pod's version (NULL: read the tree). */
struct sched_meta {
	const char *node_name;		/* "" when unbound */
	const char *phase;		/* "" when none */
	int deleting;
	/* Not NULL: the tree is not parsed (obj is NULL and *memo holds
	   the pod's summary); source->tree(arg, lazy) parses it when
	   something reads it (task_obj). */
	const void *lazy;
};

/* A source of objects for a snapshot. */
struct sched_source {
	/* Call fn for each object of resource ("nodes", "pods",
	   "podgroups", "queues", "priorityclasses", "resourcequotas",
	   "poddisruptionbudgets"); the tree stays valid
	   for the session. memo, when not NULL, is a slot the snapshot may
	   fill with one malloc'd block derived from the tree; the source
	   frees it when the tree changes (not for a bound pod's node, phase
	   and deletion, which meta, when not NULL, says). */
	void (*list)(void *arg, const char *res,
	    void (*fn)(void *fnarg, cJSON *obj, void **memo,
	    const struct sched_meta *meta), void *fnarg);
	void *arg;
	/* A new tree of an object listed lazily (meta->lazy); lazy stays
	   valid until the session's outcome is written. */
	cJSON *(*tree)(void *arg, const void *lazy);
	/* The session's time, seconds since the epoch (ssn.now, what the
	   sla plugin measures waits with); 0: the wall clock. Policy tests,
	   replays and simulations give theirs. */
	double now;
	/* Whether ssn.utc_offset is the machine's local time zone's (the
	   daemon, simulations) or 0 (policy tests and replays: UTC, the
	   same everywhere). */
	int local_time;
};

struct session {
	struct policy *pol;
	lua_State *L;
	struct s_node *nodes;
	int nnodes;
	struct s_queue *queues;
	int nqueues;
	struct s_job **jobs;
	int njobs;
	struct s_task **tasks;
	int ntasks;
	hmap *node_index, *queue_index, *job_index;
	struct capindex cap;		/* nodes by free capacity */
	struct podspec_res total;	/* allocatable of the session's nodes */
	int next_node;			/* round robin start of node scans */
	/* C fast paths turned on by the predicates/nodeorder/binpack
	   plugins' open(). */
	int c_predicates;
	struct score_weights {
		double least, balanced, affinity, taint;
		double binpack, bp_cpu, bp_memory;
	} w;
	struct s_node **cand;		/* scratch: candidate nodes */
	void *vscratch;			/* scratch: framework.c's victim rule */
	size_t vscratch_cap;
	double *scores;
	int ncand;			/* scored by the last allocate_pick */
	/* Reasons counted for a task that fit nowhere, by task shape. */
	struct why_memo {
		struct s_task *like;
		int allow_pipeline;
		int counts[FIT_NREASONS];
	} *why;
	int nwhy;
	size_t capwhy;
	/* Decisions. binds has room for every task from session_open (a
	   task is bound once a session), so that a reader on another
	   thread may take the first nbinds_pub while the session goes on:
	   on_commit, when set, is called after each statement that added
	   binds. */
	struct decision_bind *binds;
	int nbinds, capbinds;
	int nbinds_pub;			/* atomic: release after the entries */
	void (*on_commit)(void *arg);
	void *commit_arg;
	struct decision_evict *evicts;
	int nevicts;
	int nungates;			/* tasks with ungate set */
	size_t capevicts;
	/* Lua side. */
	int ssn_ref;			/* the ssn table */
	int views_ref;			/* view cache table */
	int nviews;
	uint32_t *failed;		/* per plugin: failed this session */
	char **fail_err;		/* per plugin: its error, or NULL */
	int nfail_err;
	cJSON *qinfo;			/* ssn:queue_info's: {queue: {key:
					   value}}, or NULL */
	char **events;			/* plugin failures to report */
	int nevents;
	uint64_t lua_us;		/* time inside plugin calls */
	/* Arena: strings and objects the session owns. */
	void **own;
	int nown;
	size_t capown;
	char *arena;			/* session_alloc's block */
	size_t arena_used;
	cJSON **trees;			/* parsed by task_obj() */
	int ntrees;
	size_t captrees;
	/* Other objects plugins read, the source's trees (ssn:quotas,
	   ssn:pdbs): ResourceQuotas and PodDisruptionBudgets. */
	const cJSON **quotas, **pdbs;
	int nquotas, npdbs;
	size_t capquotas, cappdbs;
	/* Network topology (topology.c), built when a plugin asks. */
	const cJSON **hn_objs;
	int nhn_objs;
	size_t caphn_objs;
	struct s_hypernode *hns;	/* lowest tier first */
	int nhns, min_tier, max_tier, topo_built, topo_on;
	struct s_hypernode **node_hn;	/* [node idx][tier] */
	double topo_weight, topo_w_cpu, topo_w_memory;
	/* allocate_pick looks only at these nodes when set (a hard-mode
	   job tried within one HyperNode). */
	struct s_node **restrict_nodes;
	int nrestrict;
	struct sched_source src;	/* what it was opened from */
	/* The soonest next session a plugin asked for (ssn:wake_after),
	   in seconds from this one; 0 when none did. */
	double wake_after;
};

/* session.c: open on a source (the snapshot, the capacity index, room
   for the binds), run (plugins' open, actions in the config's order,
   plugins' close), free. */
void session_open(struct session *, struct policy *,
    const struct sched_source *);
void session_run(struct session *);
void session_free(struct session *);

/* snapshot.c */
/* Fill an opened session from its source. */
void snapshot_build(struct session *);
/* What a pod's version says (one malloc'd block), for the source to keep
   beside it; NULL when it has no namespace, name or uid. */
/* The pods' schedulerNames the scheduler takes; with also_default the
   default scheduler's and unset ones too (process-wide, set first). */
void snapshot_set_names(const char *const *names, int n, int also_default);
void *snapshot_pod_summary(const cJSON *pod);
const char *snapshot_pod_uid(const void *summary);

/* task.c */
/* The task's pod, parsed on first use when it was listed lazily. */
cJSON *task_obj(struct session *, struct s_task *);
/* Move the task to a status, keeping its job's and queue's counts. */
void task_set_status(struct s_task *, enum task_status);
/* The job's counts for a role (added when new). */
struct role_count *task_role(struct s_job *, const char *role);
/* Count a job's tasks from scratch. */
void task_recount(struct s_job *);

/* node.c: a task's requests on its node, by the task's status. */
void node_add_task(struct s_node *, struct s_task *);
void node_remove_task(struct s_node *, struct s_task *);
/* idle + releasing - pipelined */
void node_future_idle(const struct s_node *, struct podspec_res *);

/* statement.c */
struct stmt_op {
	int kind;			/* STMT_ALLOCATE, PIPELINE, EVICT */
	struct s_task *t;
	struct s_node *n;
	enum task_status prev;
	char *reason;
};
enum { STMT_ALLOCATE, STMT_PIPELINE, STMT_EVICT };
struct statement {
	struct session *ss;
	struct stmt_op *ops;
	int nops;
	size_t capops;
	int quiet;			/* no event handlers (the firstfit floor) */
};
void statement_init(struct statement *, struct session *);
void statement_allocate(struct statement *, struct s_task *, struct s_node *);
void statement_pipeline(struct statement *, struct s_task *, struct s_node *);
void statement_evict(struct statement *, struct s_task *, const char *reason);
void statement_commit(struct statement *);
void statement_discard(struct statement *);
/* Keep the changes in the session only (a pipelined reservation). */
void statement_keep(struct statement *);
/* Move src's changes, still undoable, to the end of dst's. */
void statement_merge(struct statement *dst, struct statement *src);

/* pq.c: a binary heap ordered by the plugins' order functions. */
struct pq {
	void **a;
	int n;
	size_t cap;
	struct session *ss;
	int (*less)(struct session *, void *, void *);
};
void pq_init(struct pq *, struct session *,
    int (*less)(struct session *, void *, void *));
void pq_push(struct pq *, void *);
void *pq_pop(struct pq *);
void pq_free(struct pq *);
int pq_less_job(struct session *, void *, void *);
int pq_less_queue(struct session *, void *, void *);
int pq_less_task(struct session *, void *, void *);

/* framework.c: the tier rules over the plugins' extension points. */
/* Call plugin p's function for ep with nargs pushed; 0 ok (nres
   results pushed), -1 failed or absent (plugin skipped for the
   session), FW_REFUSED failed with failurePolicy Fail (a rejection). */
#define FW_REFUSED	(-2)
int framework_call(struct session *, struct plugin *, int ep, int nargs,
    int nres);
int framework_job_less(struct session *, struct s_job *, struct s_job *);
/* The plugins' job order alone (<0 a first, >0 b first, 0 they do not
   care), without the fallback to creation time. */
int framework_job_order(struct session *, struct s_job *, struct s_job *);
int framework_queue_less(struct session *, struct s_queue *, struct s_queue *);
int framework_task_less(struct session *, struct s_task *, struct s_task *);
/* Which of two victims' queues gives first for a preemptor of queue p
   (<0 a, >0 b, 0 the plugins do not say): victim_queue_order. */
int framework_victim_queue_order(struct session *, struct s_queue *a,
    struct s_queue *b, struct s_queue *p);
/* Victims' queues: victim_queue_order, then the queue last in queue
   order first; 1 when a's victims go before b's. */
int framework_victim_queue_first(struct session *, struct s_queue *a,
    struct s_queue *b, struct s_queue *p);
int framework_job_valid(struct session *, struct s_job *);
int framework_job_ready(struct session *, struct s_job *);
int framework_job_pipelined(struct session *, struct s_job *);
int framework_job_starving(struct session *, struct s_job *);
/* The plugins' votes; on a refusal *cause is the plugin's message or NULL. */
int framework_job_enqueueable(struct session *, struct s_job *, char **cause);
void framework_job_enqueued(struct session *, struct s_job *);
int framework_overused(struct session *, struct s_queue *);
int framework_allocatable(struct session *, struct s_queue *, struct s_task *);
int framework_preemptive(struct session *, struct s_queue *, struct s_task *);
/* Filter victims in place by the Preemptable/Reclaimable rule; each one
   left out is noted as refused, with the plugin that left it out. */
int framework_victims(struct session *, int ep, struct s_task *preemptor,
    struct s_task **cands, int n);
/* The gang actions' rule (evictable(ssn, ctx, candidates), ctx = {kind =
   "gangpreempt" or "gangreclaim", job}), by tier the same way, noted for
   the job. */
/* shuffle.c: the shuffle action. */
void shuffle_run(struct session *);
int framework_evictable(struct session *, const char *kind, struct s_job *,
    struct s_task **cands, int n);

/* victimnote.c: what became of each victim a preemptor considered. */
#define VNOTES_MAX	32
void victim_note(struct s_job *preemptor, struct s_task *victim,
    enum victim_verdict, const char *plugin);
/* After a statement is discarded: its evictions become VV_UNDONE. */
void victim_settle(struct s_job *preemptor);
const char *victim_verdict_name(enum victim_verdict);
const char *victim_verdict_text(enum victim_verdict);
/* gangevict.c: gangpreempt (reclaim 0) and gangreclaim (1). */
void gangevict_run(struct session *, int reclaim);
/* Lua predicates on the nodes that passed C's; compacts nodes, returns
   how many are left, counting rejections into *lua_rejects. */
int framework_predicate(struct session *, struct s_task *,
    struct s_node **nodes, int n, int *lua_rejects, char **lua_reason);
/* Lua node scores added to scores[i]. */
void framework_node_order(struct session *, struct s_task *,
    struct s_node **nodes, int n, double *scores);
void framework_on_allocate(struct session *, struct s_task *);
void framework_on_deallocate(struct session *, struct s_task *);
int framework_defines(struct session *, int ep);

/* predicate.c: C predicates and scores. */
/* Everything but resources (those depend on idle vs future idle). */
enum fit_reason predicate_static(struct session *, const struct s_task *,
    const struct s_node *);
/* The first resource that does not fit in avail, as a reason. */
enum fit_reason predicate_resources(const struct s_task *,
    const struct podspec_res *avail);
double predicate_score(struct session *, const struct s_task *,
    const struct s_node *);
char *predicate_message(int nnodes, const int counts[FIT_NREASONS],
    const char *lua_reason);
int predicate_fits(const struct podspec_res *, const struct podspec_res *);

/* actions */
void enqueue_run(struct session *);
void allocate_run(struct session *);
void allocate_backfill(struct session *);
void preempt_run(struct session *);
void reclaim_run(struct session *);
/* The benchmark's floor: greedy first fit, no plugins. */
void allocate_firstfit(struct session *);
/* allocate.c: the best node for t among the fitting ones, or NULL with
   t->why; *pipeline set when it fits only future idle. */
struct s_node *allocate_pick(struct session *, struct s_task *,
    int allow_pipeline, int *pipeline);
/* topology.c */
void topology_build(struct session *);
void topology_free(struct session *);
struct s_hypernode *topology_node_at(const struct session *,
    const struct s_node *, int tier);
int topology_common_tier(const struct session *, const struct s_node *,
    const struct s_node *);
struct s_hypernode **topology_candidates(struct session *, struct s_job *,
    const struct podspec_res *need, int *n);
/* Whether h's nodes could hold want tasks asking at least min each: the
   copies of min their future idle holds, summed (a necessary condition,
   exact for gangs of equal pods; no dry run). */
int topology_may_hold(const struct s_hypernode *, const struct podspec_res *min,
    int want);
double topology_score(struct session *, struct s_job *, struct s_node *);
struct s_hypernode **topology_domains(struct session *, struct s_job *,
    const struct podspec_res *need, int max, int *n);

/* preempt.c: evict victims (of the Preemptable or Reclaimable rule,
   picked by filter) on the best node until t fits (for preempt: and its
   queue may take it), then pipeline t there. 1 when it did. */
int preempt_for(struct session *, struct statement *, struct s_task *,
    int ep, int (*filter)(struct s_task *preemptor, struct s_task *victim));
void preempt_jobs(struct session *, int ep,
    int (*filter)(struct s_task *, struct s_task *), int skip_overused);
/* Jobs admitted to allocate: enqueued (or no enqueue action), valid. */
int allocate_schedulable(struct session *, struct s_job *);

/* ------------------------------------------------------------------ */
/* Policy (policy.c): config + a Lua state with the loaded plugins.    */

struct plugin {
	char *name;
	char *file;
	int tier;
	struct plugin_conf *conf;
	int ref;			/* the plugin table */
	int args_ref;			/* resolved arguments */
	cJSON *args_json;		/* the same as JSON, taken at load:
					   `policy list` must not enter the Lua
					   state a session thread may be in */
	int has[EP_N];			/* defines the function and enabled */
};

/* Per-node functions are called in batches through this chunk. */
#define TRAMPOLINE_NAME	"volray-batch"
#define TRAMPOLINE							\
	"local plugin_fn, ssn, task, nodes = ...\n"			\
	"local out = {}\n"						\
	"for i = 1, #nodes do out[i] = plugin_fn(ssn, task, nodes[i]) end\n" \
	"return out"

struct policy {
	lua_State *L;
	struct sched_conf conf;
	struct plugin *plugins;
	int nplugins;
	int tramp_ref;			/* batch trampoline */
	char *loaded_at;
	char **warnings;
	int nwarnings;
	char *files_json;		/* {"scheduler.yaml": text, "NAME.lua":
					   text}, for --record-sessions */
};

struct luahost;
/* Build from the host's roots: scheduler.yaml and NAME.lua plugins.
   NULL with *cause on error. */
struct policy *policy_load(struct luahost *, char **cause);
void policy_free(struct policy *);
/* {plugins: [{name, file, loadedAt, tier, arguments}], config: {file,
   loadedAt}} of the loaded set (p may be NULL). */
cJSON *policy_info(const struct policy *p);

/* ssn.c: the ssn table; open and close the plugins on a session. */
void ssn_open(struct session *);
void ssn_close(struct session *);

/* view.c: the plugins' views of a session's objects, pushed on ss->L. */
void view_open(struct session *);
void view_flush(struct session *);
void view_close(struct session *);
void view_push_job(struct session *, struct s_job *);
void view_push_task(struct session *, struct s_task *);
void view_push_node(struct session *, struct s_node *);
void view_push_queue(struct session *, struct s_queue *);
/* A resource list as views show it: {cpu, memory, <extended>...}. */
void view_push_res(lua_State *, const struct podspec_res *);
/* The job behind the view argument at idx, or a Lua error naming fn. */
struct s_job *view_check_job(lua_State *, int idx, const char *fn);
struct s_queue *view_check_queue(lua_State *, int idx, const char *fn);
struct s_node *view_check_node(lua_State *, int idx, const char *fn);
/* The task behind the value at idx, or NULL (not a task view). */
struct s_task *view_task_at(lua_State *, int idx);

/* outcome.c: what the session decided about PodGroups and queues. */
struct pg_update {
	struct s_job *job;
	cJSON *status;			/* the new status, owned */
};
struct queue_update {
	struct s_queue *q;
	cJSON *allocated;		/* owned */
};
struct sched_outcome {
	struct pg_update *pgs;
	int npgs;
	struct queue_update *queues;
	int nqueues;
};
void outcome_build(struct session *, struct sched_outcome *);
/* The status of a scheduling.k8s.io PodGroup (outcome_gang.c): its
   PodGroupScheduled condition as the session left the job (invalid_msg:
   outcome_invalid_msg's, for a job job_valid refused), or NULL when the
   session has nothing to say (no pods yet). */
cJSON *outcome_k8s_pg_status(const struct s_job *, const char *invalid_msg);
void outcome_free(struct sched_outcome *);
/* Why a job a plugin's job_valid refused is held back, naming the
   plugin (allocated). */
char *outcome_invalid_msg(const struct s_job *);
/* Why enqueue refused a job: NotEnqueued, or PluginFailed when a
   plugin's failure under failurePolicy Fail was the refusal; and its
   message, naming the plugin whose vote it was (allocated). */
const char *outcome_enqueue_reason(const struct s_job *);
char *outcome_enqueue_msg(const struct s_job *);
/* A ResourceList in Kubernetes' quantities. */
cJSON *outcome_res_list(const struct podspec_res *);
/* Why a pending task waits (its PodScheduled message), or NULL when
   nothing says (allocated). */
char *outcome_pending_msg(const struct s_task *);
/* The Warning events about a job's PodGroup (reason, message). */
typedef void (*outcome_event_fn)(void *arg, const struct s_job *,
    const char *reason, const char *msg);
void outcome_pg_events(const struct s_job *, outcome_event_fn, void *arg);

/* ------------------------------------------------------------------ */
/* Why jobs wait (explain.c): the last sessions' records, for `volray  */
/* explain` and `volray queue pending`.                                */

typedef struct explain explain;

/* A ring of the last nsessions sessions' records; NULL when 0 (off). */
explain *explain_new(int nsessions);
void explain_free(explain *);
/* On the session's thread, once its outcome is decided. */
void explain_record(explain *, struct session *, uint64_t session_no);
/* Whether a job of the session waits (and gets a record): a pending or
   pipelined pod, or a PodGroup not running yet that lacks pods (a Volcano
   Job's, Pending or Inqueue before its controller creates them). */
int explain_waits(const struct s_job *);
/* The newest record of a job ("ns/name") or queue, with its "session":
   a new tree, or NULL when no kept session has one. Any thread. */
cJSON *explain_job(explain *, const char *key);
cJSON *explain_queue(explain *, const char *name);
/* Sessions kept so far, and the time spent recording (microseconds). */
int explain_sessions(explain *);
uint64_t explain_record_us(explain *);

#endif
