/*
 * The session snapshot, built from a source of objects (the daemon's
 * client or a scripted cluster) into a session that session_open has
 * opened. Nodes enter when their Ready condition is
 * True; queues as they are, with `root` and `default` made up when they
 * do not exist yet; a job per PodGroup, with its queue, minMember,
 * minTaskMember, minResources and the priority of its priorityClassName;
 * a task per pod volray schedules (schedulerName volcano, or the names
 * snapshot_set_names gives; also the default or unset when volray is the
 * only scheduler) in the reference's states. A pod without a PodGroup annotation
 * joins `podgroup-<owner uid>` (the PodGroup Volcano's controller makes)
 * or, until that exists, an implicit job of the same name with
 * minMember 1 (or scheduling.volcano.sh/group-min-member) in the queue of
 * scheduling.volcano.sh/queue-name. A pod with spec.schedulingGroup joins
 * the scheduling.k8s.io/v1alpha2 PodGroup it names, a job like a Volcano
 * PodGroup's (group_job) with gang's minCount as minMember; until that
 * PodGroup exists, a job that is never placed and says why. Every pod on
 * a node takes its requests from the node (node.c): idle and used, or
 * releasing while it is being deleted.
 *
 * The quantities are the costly part: what the snapshot derives from an
 * object is kept by the source beside its parsed tree until it changes
 * (memo), and a pod's summary (snapshot_pod_summary) may be made by the
 * store itself as it loads a version. Tasks and jobs are carved from the
 * session's arena, freed with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched.h"
#include "sched/sched_int.h"

#define GROUP_ANNOTATION	"scheduling.k8s.io/group-name"
#define MIN_MEMBER_ANNOTATION	"scheduling.volcano.sh/group-min-member"
#define QUEUE_ANNOTATION	"scheduling.volcano.sh/queue-name"
#define TASK_SPEC_ANNOTATION	"volcano.sh/task-spec"
#define PREEMPTABLE_ANNOTATION	"volcano.sh/preemptable"
#define TASK_PRIORITY_ANNOTATION "volcano.sh/task-priority"

/* Memory the session frees with itself. */
static void
keep(struct session *ss, void *p)
{
	XGROW(ss->own, ss->capown, ss->nown + 1);
	ss->own[ss->nown++] = p;
}

/*
 * Zeroed memory that lives as long as the session: tasks and jobs, carved
 * from 1 MiB blocks (100,000 of each after a restart cost a malloc and a
 * free apiece otherwise).
 */
static void *
arena_alloc(struct session *ss, size_t size)
{
	enum { BLOCK = 1 << 20 };
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (size > BLOCK / 8) {
		p = xcalloc(1, size);
		keep(ss, p);
		return p;
	}
	if (ss->arena == NULL || ss->arena_used + size > BLOCK) {
		ss->arena = xcalloc(1, BLOCK);
		keep(ss, ss->arena);
		ss->arena_used = 0;
	}
	p = ss->arena + ss->arena_used;
	ss->arena_used += size;
	return p;
}

/* ------------------------------------------------------------------ */

static int
node_ready(const cJSON *node)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(node, "status.conditions"))
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    "Ready") == 0)
			return json_str(it, "status") != NULL &&
			    strcmp(json_str(it, "status"), "True") == 0;
	return 0;
}

/* The schedulerNames this scheduler takes (snapshot_set_names). */
static const char *const default_names[] = { "volcano" };
static const char *const *names = default_names;
static int nnames = 1;
static int take_default = 1;

void
snapshot_set_names(const char *const *list, int n, int also_default)
{
	names = list;
	nnames = n;
	take_default = also_default;
}

static int
ours(const cJSON *pod)
{
	const char *s = json_str(pod, "spec.schedulerName");
	int i;

	/* The API server's default: a pod without one is the default
	   scheduler's. A name given (--scheduler-name default-scheduler)
	   is taken wherever the API is. */
	if (s == NULL)
		s = "default-scheduler";
	for (i = 0; i < nnames; i++)
		if (strcmp(s, names[i]) == 0)
			return 1;
	return take_default && strcmp(s, "default-scheduler") == 0;
}

static const char *
annotation(const cJSON *obj, const char *key)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(json_at(obj,
	    "metadata.annotations"), key);

	return cJSON_IsString(a) ? a->valuestring : NULL;
}








/* ------------------------------------------------------------------ */

struct build {
	struct session *ss;
	hmap *prio;			/* PriorityClass name -> value */
	long long prio_default;
	size_t nnodes_cap, nqueues_cap, njobs_cap, ntasks_cap;
};

/*
 * What the snapshot derives from an object, kept by the source beside the
 * parsed tree until the object changes (the quantities are the costly
 * part); pointers point into that tree. With no memo slot it is derived
 * again into the session.
 */
static void *
memo_get(struct session *ss, void **memo, size_t size, int *fresh)
{
	void *m;

	if (memo != NULL && *memo != NULL) {
		*fresh = 0;
		return *memo;
	}
	m = xcalloc(1, size);
	if (memo != NULL)
		*memo = m;
	else
		keep(ss, m);
	*fresh = 1;
	return m;
}

struct node_memo {
	struct podspec_res alloc;
};

static void
add_node(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct build *b = arg;
	struct session *ss = b->ss;
	struct s_node *n;
	struct node_memo *m;
	int fresh;

	if (!node_ready(obj) || json_str(obj, "metadata.name") == NULL)
		return;
	XGROW(ss->nodes, b->nnodes_cap, ss->nnodes + 1);
	n = &ss->nodes[ss->nnodes];
	memset(n, 0, sizeof *n);
	n->idx = ss->nnodes++;
	n->name = json_str(obj, "metadata.name");
	n->obj = obj;
	m = memo_get(ss, memo, sizeof *m, &fresh);
	if (fresh)
		podspec_allocatable(obj, &m->alloc);
	n->alloc = m->alloc;
	n->idle = n->alloc;
	n->unschedulable = cJSON_IsTrue(json_at(obj, "spec.unschedulable"));
	n->has_taints = cJSON_GetArraySize(json_at(obj, "spec.taints")) > 0;
}

static void
add_queue_obj(struct build *b, cJSON *obj, const char *name)
{
	struct session *ss = b->ss;
	struct s_queue *q;
	const cJSON *w;
	int i;

	/* The root and default queues are added after the stored ones
	   (obj NULL) when there are none: the index is not built yet. */
	for (i = 0; obj == NULL && i < ss->nqueues; i++)
		if (strcmp(ss->queues[i].name, name) == 0)
			return;
	XGROW(ss->queues, b->nqueues_cap, ss->nqueues + 1);
	q = &ss->queues[ss->nqueues];
	memset(q, 0, sizeof *q);
	q->idx = ss->nqueues++;
	q->name = name;
	q->obj = obj;
	w = json_at(obj, "spec.weight");
	q->weight = cJSON_IsNumber(w) && w->valuedouble >= 1 ?
	    (int)w->valuedouble : 1;
	w = json_at(obj, "spec.priority");
	q->priority = cJSON_IsNumber(w) ? (long long)w->valuedouble : 0;
	q->reclaimable = !cJSON_IsFalse(json_at(obj, "spec.reclaimable"));
	if (strcmp(name, "root") == 0 && obj == NULL)
		q->reclaimable = 0;
	q->parent = json_str(obj, "spec.parent");
	q->state = json_str(obj, "status.state");
	if (q->state == NULL)
		q->state = "Open";
}

static void
add_queue(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	const char *name = json_str(obj, "metadata.name");

	if (name != NULL)
		add_queue_obj(arg, obj, name);
}

static void
add_prio(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct build *b = arg;
	const char *name = json_str(obj, "metadata.name");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "value");
	long long *x;

	if (name == NULL || !cJSON_IsNumber(v))
		return;
	x = xmalloc(sizeof *x);
	*x = (long long)v->valuedouble;
	keep(b->ss, x);
	hmap_put(b->prio, name, x);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(obj, "globalDefault")))
		b->prio_default = *x;
}

/* ResourceQuotas and PodDisruptionBudgets: kept as they are, for the
   plugins that read them (ssn:quotas, ssn:pdbs). */
static void
keep_tree(const cJSON ***list, int *n, size_t *cap, cJSON *obj)
{
	if (obj == NULL)
		return;
	XGROW(*list, *cap, (size_t)*n + 1);
	(*list)[(*n)++] = obj;
}

static void
add_quota(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct session *ss = ((struct build *)arg)->ss;

	(void)memo;
	(void)meta;
	keep_tree(&ss->quotas, &ss->nquotas, &ss->capquotas, obj);
}

static void
add_hypernode(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct session *ss = ((struct build *)arg)->ss;

	(void)memo;
	(void)meta;
	keep_tree(&ss->hn_objs, &ss->nhn_objs, &ss->caphn_objs, obj);
}

static void
add_pdb(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct session *ss = ((struct build *)arg)->ss;

	(void)memo;
	(void)meta;
	keep_tree(&ss->pdbs, &ss->npdbs, &ss->cappdbs, obj);
}

static long long
prio_of(struct build *b, const char *class)
{
	const long long *x;

	if (class == NULL || *class == '\0')
		return b->prio_default;
	if ((x = hmap_get(b->prio, class)) != NULL)
		return *x;
	if (strcmp(class, "system-cluster-critical") == 0)
		return 2000000000;
	if (strcmp(class, "system-node-critical") == 0)
		return 2000001000;
	return b->prio_default;
}

static struct s_job *
new_job(struct build *b, const char *ns, const char *name, const char *key)
{
	struct session *ss = b->ss;
	struct s_job *j = arena_alloc(ss, sizeof *j);

	if (key == NULL) {
		key = util_printf("%s/%s", ns, name);
		keep(ss, (char *)key);
	}
	j->key = key;
	j->ns = ns;
	j->name = name;
	j->min_member = 1;
	j->preemptable = 1;
	j->idx = ss->njobs;
	XGROW(ss->jobs, b->njobs_cap, ss->njobs + 1);
	ss->jobs[ss->njobs++] = j;
	hmap_put(ss->job_index, j->key, j);
	return j;
}

struct pg_memo {
	struct podspec_res min_res;
	int has_min_res;
};

/*
 * The job of a group object of either API: its key, uid, creation,
 * priority and preemptability; the caller reads the rest (queue,
 * minimum, phase) as its API has them. NULL for an object without a
 * name, or a second group of the same namespace and name (a Volcano
 * PodGroup and a scheduling.k8s.io one: Volcano's, listed first, is the
 * job).
 */
static struct s_job *
group_job(struct build *b, cJSON *obj)
{
	const char *ns = json_str(obj, "metadata.namespace");
	const char *name = json_str(obj, "metadata.name");
	const char *pre = annotation(obj, PREEMPTABLE_ANNOTATION);
	char *key;
	struct s_job *j;

	if (ns == NULL || name == NULL)
		return NULL;
	key = util_printf("%s/%s", ns, name);
	if (hmap_get(b->ss->job_index, key) != NULL) {
		free(key);
		return NULL;
	}
	keep(b->ss, key);
	j = new_job(b, ns, name, key);
	j->pg = obj;
	j->uid = json_str(obj, "metadata.uid");
	j->created = json_str(obj, "metadata.creationTimestamp");
	j->priority = prio_of(b, json_str(obj, "spec.priorityClassName"));
	if (pre != NULL && strcmp(pre, "false") == 0)
		j->preemptable = 0;
	return j;
}

/*
 * A scheduling.k8s.io/v1alpha2 PodGroup: gang's minCount as minMember
 * (1 for the basic policy: each pod on its own), admitted as it comes
 * (no enqueue: the API has no phase), in the queue its
 * scheduling.volcano.sh/queue-name annotation names, else default.
 */
static void
add_k8s_podgroup(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct build *b = arg;
	const cJSON *mc = json_at(obj, "spec.schedulingPolicy.gang.minCount");
	struct s_job *j;

	(void)memo;
	(void)meta;
	if ((j = group_job(b, obj)) == NULL)
		return;
	j->group_api = GROUP_K8S;
	j->phase = "Inqueue";
	j->queue_name = annotation(obj, QUEUE_ANNOTATION);
	if (j->queue_name == NULL || *j->queue_name == '\0')
		j->queue_name = "default";
	if (cJSON_IsNumber(mc) && mc->valuedouble >= 1)
		j->min_member = (int)mc->valuedouble;
}

static void
add_podgroup(void *arg, cJSON *obj, void **memo,
    const struct sched_meta *meta)
{
	struct build *b = arg;
	struct pg_memo *m;
	int fresh;
	const cJSON *mm, *mtm, *it;
	struct s_job *j;

	if ((j = group_job(b, obj)) == NULL)
		return;
	j->phase = json_str(obj, "status.phase");
	if (j->phase == NULL)
		j->phase = "Pending";
	j->queue_name = json_str(obj, "spec.queue");
	if (j->queue_name == NULL || *j->queue_name == '\0')
		j->queue_name = "default";
	mm = json_at(obj, "spec.minMember");
	j->min_member = cJSON_IsNumber(mm) ? (int)mm->valuedouble : 1;
	if (j->min_member < 0)
		j->min_member = 0;
	mtm = json_at(obj, "spec.minTaskMember");
	cJSON_ArrayForEach(it, mtm)
		if (cJSON_IsNumber(it) && it->string != NULL)
			task_role(j, it->string)->min = (int)it->valuedouble;
	m = memo_get(b->ss, memo, sizeof *m, &fresh);
	if (fresh) {
		it = json_at(obj, "spec.minResources");
		if (cJSON_IsObject(it) && cJSON_GetArraySize(it) > 0) {
			podspec_read_list(it, &m->min_res);
			m->has_min_res = 1;
		}
	}
	j->min_res = m->min_res;
	j->has_min_res = m->has_min_res;
	if ((it = json_at(obj, "spec.networkTopology")) != NULL &&
	    cJSON_IsObject(it)) {
		const char *mode = json_str(it, "mode");
		const cJSON *tier = json_at(it, "highestTierAllowed");

		j->topo_mode = mode != NULL && strcmp(mode, "soft") == 0 ?
		    TOPO_SOFT : TOPO_HARD;
		/* Without a highest tier, hard mode keeps to tier 1. */
		j->topo_tier = cJSON_IsNumber(tier) ? (int)tier->valuedouble :
		    1;
		j->topo_tier_name = json_str(it, "highestTierName");
	}
}

/* What the store extracts beside a version, read from the tree instead
   (a source without it: `volray policy test`). */
static void
meta_of(const cJSON *pod, struct sched_meta *m)
{
	const char *node = json_str(pod, "spec.nodeName");
	const char *phase = json_str(pod, "status.phase");

	m->node_name = node != NULL ? node : "";
	m->phase = phase != NULL ? phase : "";
	m->deleting = json_at(pod, "metadata.deletionTimestamp") != NULL;
	m->lazy = NULL;
}

/* A pod's task state from its node, phase and deletion. */
static enum task_status
status_of(const struct sched_meta *m)
{
	const char *ph = m->phase;

	if (strcmp(ph, "Succeeded") == 0)
		return TS_SUCCEEDED;
	if (strcmp(ph, "Failed") == 0)
		return TS_FAILED;
	if (m->deleting)
		return TS_RELEASING;
	if (*m->node_name == '\0')
		return TS_PENDING;
	if (strcmp(ph, "Running") == 0)
		return TS_RUNNING;
	if (strcmp(ph, "Unknown") == 0)
		return TS_UNKNOWN;
	return TS_BOUND;
}

/* The controller owner's uid, or NULL. */
static const char *
controller_uid(const cJSON *pod)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(pod, "metadata.ownerReferences"))
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(it,
		    "controller")))
			return json_str(it, "uid");
	return NULL;
}

/* The scheduling.k8s.io PodGroup a pod joins (spec.schedulingGroup), or
   NULL. */
static const char *
scheduling_group(const cJSON *pod)
{
	const char *g = json_str(pod, "spec.schedulingGroup.podGroupName");

	return g != NULL && *g != '\0' ? g : NULL;
}

char *
sched_pod_job_key(const cJSON *pod)
{
	const char *ns = json_str(pod, "metadata.namespace");
	const char *uid = json_str(pod, "metadata.uid");
	const char *group = annotation(pod, GROUP_ANNOTATION);
	const char *owner = controller_uid(pod);

	if (ns == NULL || uid == NULL || json_str(pod, "metadata.name") == NULL)
		return NULL;
	/* The API's field before Volcano's annotation. */
	if (scheduling_group(pod) != NULL)
		group = scheduling_group(pod);
	if (group == NULL || *group == '\0')
		return util_printf("%s/podgroup-%s", ns, owner != NULL ? owner :
		    uid);
	return util_printf("%s/%s", ns, group);
}

static int
is_critical(const cJSON *pod, const char *ns)
{
	const char *pc = json_str(pod, "spec.priorityClassName");

	return strcmp(ns, "kube-system") == 0 || (pc != NULL &&
	    (strcmp(pc, "system-cluster-critical") == 0 ||
	    strcmp(pc, "system-node-critical") == 0));
}

/*
 * What a pod's version says, derived once per version: by the store when
 * it loads the version after a restart (snapshot_pod_summary through
 * client_derive), else by the snapshot into the source's memo slot. One
 * block: the strings follow the struct.
 */
struct pod_memo {
	struct podspec_res req;
	long long priority;
	const char *ns, *name, *uid;
	const char *role, *created;
	const char *job_key;		/* "ns/group": the group-name
					   annotation's, or the implicit
					   "ns/podgroup-<owner or own uid>" */
	const char *owner;		/* the controller owner's uid */
	/* For the implicit group of a pod without one. */
	const char *min_member, *queue, *prio_class;
	const char *unsched_msg;	/* PodScheduled=False Unschedulable's
					   message, or NULL */
	const char *shape;		/* see shape_of */
	unsigned ours:1, best_effort:1, has_selector:1, has_pod_affinity:1,
	    critical:1, preemptable:1, implicit:1, gated:1, gate_opt:1,
	    k8s_group:1;		/* joins by spec.schedulingGroup */
	int queue_gate;			/* see struct s_task */
};

static struct s_job *
job_of_pod(struct build *b, const struct pod_memo *m)
{
	struct session *ss = b->ss;
	const char *mm, *q;
	struct s_job *j;

	if ((j = hmap_get(ss->job_index, m->job_key)) != NULL)
		return j;
	if (m->k8s_group) {
		/* Its PodGroup does not exist yet: the pod waits, saying so
		   (a job without group or queue is never placed). */
		j = new_job(b, m->ns, m->job_key + strlen(m->ns) + 1,
		    m->job_key);
		j->group_api = GROUP_K8S;
		j->group_missing = 1;
		j->phase = "Pending";
		j->queue_name = "default";
		return j;
	}
	if (!m->implicit)
		return NULL;	/* its PodGroup does not exist (yet) */
	j = new_job(b, m->ns, m->job_key + strlen(m->ns) + 1, m->job_key);
	j->uid = m->owner ? m->owner : m->uid;
	j->created = m->created;
	j->phase = "Inqueue";		/* nothing to wait for */
	mm = m->min_member;
	if (mm != NULL && atoi(mm) > 0)
		j->min_member = atoi(mm);
	q = m->queue;
	j->queue_name = q != NULL && *q ? q : "default";
	j->priority = prio_of(b, m->prio_class);
	return j;
}

const char *
snapshot_pod_uid(const void *summary)
{
	return ((const struct pod_memo *)summary)->uid;
}

/*
 * What decides where a pod fits besides its requests, as one string:
 * tolerations, nodeSelector, affinity and labels (others' anti-affinity
 * reads them), each printed, a newline after each. Two pods of one shape
 * fit the same nodes, which allocate's candidate cache relies on; printed
 * bytes tell fewer pods apart than json_equal would (member order counts),
 * which only costs a cache miss. Made for pending pods only (NULL for a
 * bound one, which is never placed: 140,000 of them after a restart).
 */
static char *
shape_of(const cJSON *pod)
{
	const cJSON *spec = cJSON_GetObjectItemCaseSensitive(pod, "spec");
	const cJSON *part[4];
	char *p[4], *s;
	int i;

	part[0] = cJSON_GetObjectItemCaseSensitive(spec, "tolerations");
	part[1] = cJSON_GetObjectItemCaseSensitive(spec, "nodeSelector");
	part[2] = cJSON_GetObjectItemCaseSensitive(spec, "affinity");
	part[3] = json_at(pod, "metadata.labels");
	for (i = 0; i < 4; i++)
		p[i] = part[i] != NULL ? json_print(part[i]) : NULL;
	s = util_printf("%s\n%s\n%s\n%s\n", p[0] ? p[0] : "", p[1] ? p[1] :
	    "", p[2] ? p[2] : "", p[3] ? p[3] : "");
	for (i = 0; i < 4; i++)
		free(p[i]);
	return s;
}

void *
snapshot_pod_summary(const cJSON *pod)
{
	const cJSON *md = cJSON_GetObjectItemCaseSensitive(pod, "metadata");
	const cJSON *prio = json_at(pod, "spec.priority");
	const char *role = annotation(pod, TASK_SPEC_ANNOTATION);
	const char *pa, *group, *str[12];
	const char **dst[12];
	const cJSON *it;
	size_t len[12], total = 0;
	char *key, *shape;
	struct pod_memo m, *out;
	char *p;
	int i;

	memset(&m, 0, sizeof m);
	str[0] = json_str(md, "namespace");
	str[1] = json_str(md, "name");
	str[2] = json_str(md, "uid");
	if (str[0] == NULL || str[1] == NULL || str[2] == NULL)
		return NULL;
	str[3] = role != NULL ? role : "";
	str[4] = json_str(md, "creationTimestamp");
	str[6] = controller_uid(pod);
	group = annotation(pod, GROUP_ANNOTATION);
	m.k8s_group = scheduling_group(pod) != NULL;
	m.implicit = !m.k8s_group && (group == NULL || *group == '\0');
	str[5] = key = sched_pod_job_key(pod);
	str[7] = annotation(pod, MIN_MEMBER_ANNOTATION);
	str[8] = annotation(pod, QUEUE_ANNOTATION);
	str[9] = json_str(pod, "spec.priorityClassName");
	str[10] = NULL;
	/* Only a pending pod is placed: a bound one's shape is not kept. */
	pa = json_str(pod, "spec.nodeName");
	str[11] = shape = pa == NULL || *pa == '\0' ? shape_of(pod) : NULL;
	cJSON_ArrayForEach(it, json_at(pod, "status.conditions")) {
		const char *type = json_str(it, "type");
		const char *st = json_str(it, "status");
		const char *reason = json_str(it, "reason");
		const char *msg = json_str(it, "message");

		if (type == NULL || strcmp(type, "PodScheduled") != 0)
			continue;
		if (st != NULL && strcmp(st, "False") == 0 && reason != NULL &&
		    strcmp(reason, "Unschedulable") == 0)
			str[10] = msg != NULL ? msg : "";
		break;
	}
	m.ours = ours(pod);
	podspec_requests(pod, &m.req);
	m.best_effort = m.req.cpu == 0 && m.req.memory == 0 &&
	    m.req.next == 0;
	m.priority = cJSON_IsNumber(prio) ? (long long)prio->valuedouble : 1;
	if ((pa = annotation(pod, TASK_PRIORITY_ANNOTATION)) != NULL)
		m.priority = atoll(pa);
	m.has_selector = json_at(pod, "spec.nodeSelector") != NULL ||
	    json_at(pod, "spec.affinity.nodeAffinity") != NULL;
	m.has_pod_affinity = json_at(pod, "spec.affinity.podAffinity") !=
	    NULL || json_at(pod, "spec.affinity.podAntiAffinity") != NULL;
	m.critical = is_critical(pod, str[0]);
	pa = annotation(pod, PREEMPTABLE_ANNOTATION);
	m.preemptable = pa == NULL || strcmp(pa, "false") != 0;
	m.queue_gate = -1;
	pa = annotation(pod, QUEUE_GATE);
	m.gate_opt = pa != NULL && strcmp(pa, "true") == 0;
	i = 0;
	cJSON_ArrayForEach(it, json_at(pod, "spec.schedulingGates")) {
		const char *g = json_str(it, "name");

		m.gated = 1;
		if (g != NULL && strcmp(g, QUEUE_GATE) == 0 && m.gate_opt)
			m.queue_gate = i;
		i++;
	}

	for (i = 0; i < 12; i++)
		total += (len[i] = str[i] != NULL ? strlen(str[i]) + 1 : 0);
	out = xmalloc(sizeof *out + total);
	*out = m;
	dst[0] = &out->ns; dst[1] = &out->name; dst[2] = &out->uid;
	dst[3] = &out->role; dst[4] = &out->created; dst[5] = &out->job_key;
	dst[6] = &out->owner; dst[7] = &out->min_member; dst[8] = &out->queue;
	dst[9] = &out->prio_class; dst[10] = &out->unsched_msg;
	dst[11] = &out->shape;
	p = (char *)(out + 1);
	for (i = 0; i < 12; i++) {
		if (str[i] == NULL)
			continue;
		memcpy(p, str[i], len[i]);
		*dst[i] = p;
		p += len[i];
	}
	free(key);
	free(shape);
	return out;
}

static void
add_pod(void *arg, cJSON *pod, void **memo,
    const struct sched_meta *meta)
{
	struct build *b = arg;
	struct session *ss = b->ss;
	struct sched_meta from_tree;
	struct s_node *sn;
	enum task_status st;
	const char *ns, *name, *uid;
	struct s_job *j = NULL;
	struct pod_memo *m;
	struct s_task *t;

	if (meta == NULL) {
		meta_of(pod, &from_tree);
		meta = &from_tree;
	}
	sn = *meta->node_name ? hmap_get(ss->node_index, meta->node_name) :
	    NULL;
	st = status_of(meta);
	if (memo != NULL && *memo != NULL)
		m = *memo;
	else if ((m = snapshot_pod_summary(pod)) == NULL)
		return;
	else if (memo != NULL)
		*memo = m;
	else
		keep(ss, m);
	ns = m->ns;
	name = m->name;
	uid = m->uid;
	if (m->ours)
		j = job_of_pod(b, m);
	/* Someone else's pending pod, or a finished pod outside any job. */
	if ((j == NULL && (sn == NULL || st >= TS_SUCCEEDED)) ||
	    (j == NULL && st == TS_PENDING))
		return;
	t = arena_alloc(ss, sizeof *t);
	XGROW(ss->tasks, b->ntasks_cap, ss->ntasks + 1);
	t->idx = ss->ntasks;
	ss->tasks[ss->ntasks++] = t;
	t->ns = ns;
	t->name = name;
	t->uid = uid;
	t->obj = pod;
	t->lazy = meta->lazy;
	t->created = m->created;
	t->unsched_msg = m->unsched_msg;
	t->shape = m->shape;
	t->req = m->req;
	t->best_effort = m->best_effort;
	t->priority = m->priority;
	t->has_selector = m->has_selector;
	t->has_pod_affinity = m->has_pod_affinity;
	t->critical = m->critical;
	t->preemptable = m->preemptable;
	t->gated = m->gated;
	t->queue_gate = m->queue_gate;
	t->gate_opt = m->gate_opt;
	t->role = m->role;
	t->status = st;
	if (sn != NULL && st != TS_SUCCEEDED && st != TS_FAILED) {
		t->node = sn;
		node_add_task(sn, t);
	}
	if (j != NULL) {
		XGROW(j->tasks, j->captasks, j->ntasks + 1);
		j->tasks[j->ntasks++] = t;
		t->job = j;
		if (j->pg == NULL && j->ntasks == 1)
			j->preemptable = t->preemptable;
	}
}

/* A job's part in its queue's totals, as proportion reads them. */
static void
queue_account(struct s_queue *q, const struct s_job *j)
{
	int i;

	podspec_res_add(&q->allocated, &j->allocated, 1);
	for (i = 0; i < j->ntasks; i++) {
		const struct s_task *t = j->tasks[i];

		if (task_allocated(t->status) || t->status == TS_PENDING)
			podspec_res_add(&q->request, &t->req, 1);
		if (t->status == TS_PENDING && t->gate_opt && !t->gated)
			podspec_res_add(&q->reserved, &t->req, 1);
	}
	if (!j->has_min_res || j->min_member <= 1)
		return;		/* a group of one reserves nothing */
	if (strcmp(j->phase, "Inqueue") == 0)
		podspec_res_add(&q->inqueue, &j->min_res, 1);
	else if (strcmp(j->phase, "Running") == 0) {
		struct podspec_res left = j->min_res;

		podspec_res_add(&left, &j->allocated, -1);
		if (left.cpu > 0)
			q->inqueue.cpu += left.cpu;
		if (left.memory > 0)
			q->inqueue.memory += left.memory;
	}
	{
		struct podspec_res extra = j->allocated;

		podspec_res_add(&extra, &j->min_res, -1);
		if (extra.cpu > 0)
			q->elastic.cpu += extra.cpu;
		if (extra.memory > 0)
			q->elastic.memory += extra.memory;
	}
}

/*
 * Fill the session, whose source and indexes are set, from its source:
 * nodes, queues, priority classes, PodGroups, pods; then each job's queue
 * and counts, and the queues' totals.
 */
void
snapshot_build(struct session *ss)
{
	const struct sched_source *src = &ss->src;
	struct build b;
	int i;

	memset(&b, 0, sizeof b);
	b.ss = ss;
	b.prio = hmap_new();
	src->list(src->arg, "nodes", add_node, &b);
	for (i = 0; i < ss->nnodes; i++) {
		hmap_put(ss->node_index, ss->nodes[i].name, &ss->nodes[i]);
		podspec_res_add(&ss->total, &ss->nodes[i].alloc, 1);
	}
	src->list(src->arg, "queues", add_queue, &b);
	add_queue_obj(&b, NULL, "root");
	add_queue_obj(&b, NULL, "default");
	for (i = 0; i < ss->nqueues; i++)
		hmap_put(ss->queue_index, ss->queues[i].name, &ss->queues[i]);
	src->list(src->arg, "priorityclasses", add_prio, &b);
	src->list(src->arg, "podgroups", add_podgroup, &b);
	src->list(src->arg, "k8spodgroups", add_k8s_podgroup, &b);
	src->list(src->arg, "pods", add_pod, &b);
	src->list(src->arg, "resourcequotas", add_quota, &b);
	src->list(src->arg, "poddisruptionbudgets", add_pdb, &b);
	src->list(src->arg, "hypernodes", add_hypernode, &b);
	hmap_free(b.prio);

	/* Jobs with a queue; counts and the queues' totals. */
	for (i = 0; i < ss->njobs; i++) {
		struct s_job *j = ss->jobs[i];

		j->queue = j->group_missing ? NULL :
		    hmap_get(ss->queue_index, j->queue_name);
		task_recount(j);
		if (j->queue != NULL)
			queue_account(j->queue, j);
		j->active = j->n[TS_PENDING] > 0 || j->n[TS_PIPELINED] > 0;
	}
}
