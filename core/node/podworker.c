/*
 * The pod worker: what a kubelet does with a pod bound to its node,
 * whatever actually runs the containers.
 *
 *  - Admission: the pod must match the node (nodeSelector, required node
 *    affinity; else Failed/NodeAffinity) and fit in what the node has left
 *    (else Failed/OutOfcpu, OutOfmemory, OutOfpods, ...).
 *  - Init containers run one at a time, in order; each must exit 0 before
 *    the next starts, and the main containers start together after the
 *    last.
 *  - restartPolicy: Always restarts every exit, OnFailure non-zero exits,
 *    Never none. Restarts wait the kubelet's back-off: none the first time,
 *    then 10 s doubling to 5 min, forgotten once an instance has run for
 *    10 min; the container shows waiting/CrashLoopBackOff meanwhile.
 *  - A container with neither command nor args on a runtime that runs
 *    processes (the local node runs commands, not images), or whose Ray
 *    image's Ray is not installed there (rayimage.c), never starts: it
 *    waits as a kubelet's container whose image cannot be pulled,
 *    ErrImagePull for PULL_ERR_MS, then ImagePullBackOff until the next
 *    "pull" (10 s doubling to 5 min; a Ray installed meanwhile starts),
 *    with the same Events (Failed, BackOff); it is never restarted, so
 *    its restartCount stays 0.
 *  - The phase follows: Pending until the main containers start, Running,
 *    then Succeeded when every container ended 0 with nothing to restart,
 *    Failed when one ended otherwise.
 *  - Termination (deletionTimestamp set): containers are stopped with the
 *    grace period, then the pod is removed from the store.
 *
 * A change of state marks the pod dirty; podstatus.c writes its status.
 * The runtime runs the containers (through its table, runtime.h) and
 * reports each end with podworker_ctr_exited.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

#define BACKOFF_FIRST_MS	10000
#define BACKOFF_MAX_MS		300000
#define BACKOFF_RESET_MS	600000
#define PULL_ERR_MS		2000	/* ErrImagePull, before the back-off */

static void ctr_start(struct node_pod *, struct node_ctr *);
static void pod_sync(struct node_pod *);
static void pod_free(struct node_pod *);
static void pod_finish_termination(struct node_pod *);

const char *
podworker_annotation(const struct node_pod *p, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(p->ann, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void
ctr_init(struct node_pod *p, struct node_ctr *c, const cJSON *spec, int init)
{
	const char *img = json_str(spec, "image");

	memset(c, 0, sizeof *c);
	c->pod = p;
	c->init = init;
	c->name = xstrdup(json_str(spec, "name") ? json_str(spec, "name") : "");
	c->image = xstrdup(img ? img : "");
	c->no_command = cJSON_GetArraySize(json_at(spec, "command")) == 0 &&
	    cJSON_GetArraySize(json_at(spec, "args")) == 0;
	c->state = CTR_WAITING;
	snprintf(c->reason, sizeof c->reason, "%s",
	    init || p->ninit == 0 ? "ContainerCreating" : "PodInitializing");
	probe_init(c, spec);
}

struct node_pod *
podworker_new(struct node *n, const store_obj *o, const cJSON *obj)
{
	struct node_pod *p = xcalloc(1, sizeof *p);
	const cJSON *init = json_at(obj, "spec.initContainers");
	const cJSON *main = json_at(obj, "spec.containers"), *it;
	const char *rp = json_str(obj, "spec.restartPolicy");
	int i = 0;

	p->node = n;
	p->ns = xstrdup(o->ns);
	p->name = xstrdup(o->name);
	p->uid = xstrdup(o->uid);
	p->key = util_printf("%s/%s", o->ns, o->name);
	p->restart_policy = rp == NULL ? 'A' : rp[0];
	p->host_net = cJSON_IsTrue(json_at(obj, "spec.hostNetwork"));
	p->ninit = cJSON_GetArraySize(init);
	p->nctrs = p->ninit + cJSON_GetArraySize(main);
	p->ctrs = xcalloc(p->nctrs > 0 ? p->nctrs : 1, sizeof *p->ctrs);
	cJSON_ArrayForEach(it, init)
		ctr_init(p, &p->ctrs[i++], it, 1);
	cJSON_ArrayForEach(it, main)
		ctr_init(p, &p->ctrs[i++], it, 0);
	p->conds = cJSON_CreateObject();
	podspec_requests(obj, &p->req);
	snprintf(p->qos, sizeof p->qos, "%s", podspec_qos(obj));
	p->ann = cJSON_Duplicate(json_at(obj, "metadata.annotations"), 1);
	hmap_put(n->pods, p->uid, p);
	hmap_put(n->m->pods, p->uid, p);
	n->m->stats.pods++;
	return p;
}

static void
pod_free(struct node_pod *p)
{
	node_mgr *m = p->node->m;
	int i;

	for (i = 0; i < p->nctrs; i++) {
		wheel_cancel(m->wheel, &p->ctrs[i].timer);
		probe_free(&p->ctrs[i]);
		free(p->ctrs[i].name);
		free(p->ctrs[i].image);
	}
	wheel_cancel(m->wheel, &p->kill_timer);
	if (p->counted)
		podspec_res_add(&p->node->used, &p->req, -1);
	if (p->node->rt->pod_gone != NULL)
		p->node->rt->pod_gone(p->node, p);
	/* What its processes left in a node's /tmp goes with the pod. */
	if (p->node->rt->exec_stream != NULL)
		rayimage_forget(p->uid);
	hmap_del(p->node->pods, p->uid);
	hmap_del(m->pods, p->uid);
	m->stats.pods--;
	podstatus_forget(p);
	cJSON_Delete(p->ann);
	cJSON_Delete(p->conds);
	free(p->ctrs);
	free(p->key);
	free(p->ns);
	free(p->name);
	free(p->uid);
	free(p);
}

/* A terminal pod no longer holds the node's resources. */
static void
release(struct node_pod *p)
{
	if (p->counted) {
		podspec_res_add(&p->node->used, &p->req, -1);
		p->counted = 0;
	}
}

static void
fail_pod(struct node_pod *p, const char *reason, const char *message)
{
	int i;

	p->phase = POD_FAILED;
	snprintf(p->reason, sizeof p->reason, "%s", reason);
	snprintf(p->message, sizeof p->message, "%s", message);
	for (i = 0; i < p->nctrs; i++)
		if (p->ctrs[i].state == CTR_WAITING)
			wheel_cancel(p->node->m->wheel, &p->ctrs[i].timer);
	release(p);
	podstatus_dirty(p);
}

/* Node-side admission, once: 0 admitted, -1 failed (status says why). */
static int
admit(struct node_pod *p, const cJSON *pod)
{
	struct node *n = p->node;
	struct podspec_res free_res = n->alloc;
	const char *short_of;
	char msg[512];

	/* The node's labels matter only to a selector or required affinity
	   (parsing the node for every pod made a restart with 100,000 pods
	   parse 100,000 nodes). */
	if (cJSON_GetArraySize(json_at(pod, "spec.nodeSelector")) > 0 ||
	    json_at(pod, "spec.affinity.nodeAffinity."
	    "requiredDuringSchedulingIgnoredDuringExecution") != NULL) {
		const store_obj *no = client_get(n->m->c, "nodes", "", n->name);
		cJSON *t = no ? store_obj_tree(no) : NULL;
		int match = t == NULL || podspec_node_matches(pod, t);

		cJSON_Delete(t);
		if (!match) {
			fail_pod(p, "NodeAffinity", "Pod Predicate NodeAffinity "
			    "failed");
			return -1;
		}
	}
	podspec_res_add(&free_res, &n->used, -1);
	if ((short_of = podspec_res_exceeds(&p->req, &free_res)) != NULL) {
		char reason[80];

		snprintf(reason, sizeof reason, "OutOf%s", short_of);
		snprintf(msg, sizeof msg, "Pod Node didn't have enough "
		    "resource: %s, requested: %lld, used: %lld, capacity: %lld",
		    short_of, (long long)podspec_res_get(&p->req, short_of),
		    (long long)podspec_res_get(&n->used, short_of),
		    (long long)podspec_res_get(&n->alloc, short_of));
		fail_pod(p, reason, msg);
		return -1;
	}
	podspec_res_add(&n->used, &p->req, 1);
	p->counted = 1;
	/* A pod taken back after a restart keeps its start time and IP. */
	if (p->start_time[0] == '\0')
		util_now(p->start_time);
	if (n->rt->pod_ip != NULL) {
		char *why = NULL;

		if (n->rt->pod_ip(n, p, &why) == 0)
			return 0;
		fail_pod(p, "PodIPUnavailable", why);
		free(why);
		return -1;
	}
	if (p->ip[0] != '\0')
		return 0;
	/* 10.64.0.0/10, skipping addresses that end in .0 or .255. */
	do
		n->m->next_ip++;
	while ((n->m->next_ip & 255) == 0 || (n->m->next_ip & 255) == 255);
	snprintf(p->ip, sizeof p->ip, "10.%u.%u.%u",
	    64 + ((n->m->next_ip >> 16) & 63), (n->m->next_ip >> 8) & 255,
	    n->m->next_ip & 255);
	if (n->rt->host_network)
		snprintf(p->ip, sizeof p->ip, "%s", n->ip);
	return 0;
}

static void
on_backoff(wheel_timer *t)
{
	struct node_ctr *c = t->data;

	if (c->pod->terminating || c->pod->phase >= POD_SUCCEEDED)
		return;
	ctr_start(c->pod, c);
}

/*
 * An instance that ran before volrayd restarted, taken back by the
 * runtime: running since its stored startedAt, restartCount as stored.
 * 0, or -1 when the runtime has nothing to take back.
 */
static int
ctr_resume(struct node_pod *p, struct node_ctr *c)
{
	struct node *n = p->node;
	time_t since = util_time_parse(c->started), now = time(NULL);
	uint64_t ran = since > 0 && now > since ? (uint64_t)(now - since) *
	    1000 : 0;

	c->resume = 0;
	if (n->rt->resume == NULL)
		return -1;
	c->state = CTR_RUNNING;
	c->reason[0] = c->message[0] = '\0';
	/* The back-off forgets a crash after 10 min of running, as before. */
	c->run_ms = uv_now(n->m->loop) > ran ? uv_now(n->m->loop) - ran : 0;
	if (n->rt->resume(n, p, c) != 0) {
		c->state = CTR_WAITING;
		return -1;
	}
	probe_start(c);
	podstatus_dirty(p);
	return 0;
}

static void pull_failed(struct node_pod *, struct node_ctr *);

/*
 * Why the container's "pull" failed, into buf: it has no command, or its
 * Ray image's Ray is not installed (rayimage.c). 0 when it did not fail.
 */
static int
pull_message(const struct node_ctr *c, char *buf, size_t size)
{
	char venv[PATH_MAX];

	if (c->no_command) {
		snprintf(buf, size, "the local node runs a container's "
		    "command, not its image's entrypoint, and container \"%s\" "
		    "has none", c->name);
		return -1;
	}
	return rayimage_check(c->pod->node->m, c->name, c->image, venv,
	    sizeof venv, buf, size) < 0 ? -1 : 0;
}

/* The "pull" back-off is over: ImagePullBackOff, then the next "pull". */
static void
on_pull_timer(wheel_timer *t)
{
	struct node_ctr *c = t->data;
	struct node_pod *p = c->pod;
	size_t n;

	if (p->terminating || p->phase >= POD_SUCCEEDED)
		return;
	if (strcmp(c->reason, "ErrImagePull") != 0) {
		/* Pull again: a Ray install may have come meanwhile. */
		ctr_start(p, c);
		return;
	}
	snprintf(c->message, sizeof c->message, "Back-off pulling image "
	    "\"%s\"", c->image);
	podevent_record(p, "Normal", "BackOff", c->message);
	podevent_record(p, "Warning", "Failed", "Error: ImagePullBackOff");
	snprintf(c->reason, sizeof c->reason, "ImagePullBackOff");
	n = strlen(c->message);
	if (n + 2 < sizeof c->message) {
		memcpy(c->message + n, ": ", 3);
		pull_message(c, c->message + n + 2, sizeof c->message - n - 2);
	}
	wheel_add(p->node->m->wheel, &c->timer, c->backoff_ms, on_pull_timer,
	    c);
	podstatus_dirty(p);
}

/*
 * A container the runtime cannot run: it has no command, and this
 * runtime runs commands, not images; or its image is Ray's and that Ray
 * is not installed here. It waits as a kubelet's container whose image
 * cannot be pulled does, and no process starts.
 */
static void
pull_failed(struct node_pod *p, struct node_ctr *c)
{
	c->state = CTR_WAITING;
	c->backoff_ms = c->backoff_ms == 0 ? BACKOFF_FIRST_MS :
	    c->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS :
	    c->backoff_ms * 2;
	snprintf(c->reason, sizeof c->reason, "ErrImagePull");
	pull_message(c, c->message, sizeof c->message);
	podevent_record(p, "Warning", "Failed", c->message);
	podevent_record(p, "Warning", "Failed", "Error: ErrImagePull");
	wheel_add(p->node->m->wheel, &c->timer, PULL_ERR_MS, on_pull_timer, c);
	podstatus_dirty(p);
}

/* Whether the node's runtime runs processes (not the simulated one). */
static int
runs_processes(const struct node *n)
{
	return n->rt->exec_stream != NULL;
}

static void
ctr_start(struct node_pod *p, struct node_ctr *c)
{
	struct node *n = p->node;
	char *why = NULL, why_pull[256];

	if (c->resume && ctr_resume(p, c) == 0)
		return;
	if (runs_processes(n) && pull_message(c, why_pull, sizeof why_pull) !=
	    0) {
		pull_failed(p, c);
		return;
	}
	if (c->instance > 0)
		c->restarts++;
	c->instance++;
	c->state = CTR_RUNNING;
	c->reason[0] = c->message[0] = '\0';
	util_now(c->started);
	c->run_ms = uv_now(n->m->loop);
	n->m->stats.starts++;
	probe_start(c);
	podstatus_dirty(p);
	if (n->rt->start(n, p, c, &why) != 0) {
		/* "Reason: message", as the runtime words it. */
		char reason[64] = "ContainerCannotRun";
		const char *colon = why ? strchr(why, ':') : NULL;

		log_info("node %s: pod %s container %s: %s", n->name, p->key,
		    c->name, why ? why : "cannot start");
		if (colon != NULL && colon - why < (long)sizeof reason) {
			snprintf(reason, sizeof reason, "%.*s", (int)(colon - why),
			    why);
			colon++;
			while (*colon == ' ')
				colon++;
		}
		snprintf(c->message, sizeof c->message, "%s", colon ? colon :
		    why ? why : "");
		free(why);
		podworker_ctr_exited(c, 128, reason);
	}
}

/* Whether every main container is running (or the pod has none). */
static int
main_started(const struct node_pod *p)
{
	int i;

	for (i = p->ninit; i < p->nctrs; i++)
		if (p->ctrs[i].instance == 0)
			return 0;
	return 1;
}

/*
 * A pod just taken on: admitted by the node (or failed, with the reason
 * in its status), then started. pod is its stored version; only this
 * reads the whole object.
 */
void
podworker_start(struct node_pod *p, const cJSON *pod)
{
	if (p->terminating || p->phase >= POD_SUCCEEDED)
		return;
	if (admit(p, pod) != 0)
		return;
	p->admitted = 1;
	podstatus_dirty(p);
	pod_sync(p);
}

/* Start what should run now: the next init container, or every main one. */
static void
pod_sync(struct node_pod *p)
{
	int i;

	if (p->terminating || p->phase >= POD_SUCCEEDED || !p->admitted)
		return;
	if (p->next_init < p->ninit) {
		struct node_ctr *c = &p->ctrs[p->next_init];

		if (c->state == CTR_WAITING && !c->timer.armed)
			ctr_start(p, c);
		return;
	}
	for (i = p->ninit; i < p->nctrs; i++) {
		struct node_ctr *c = &p->ctrs[i];

		if (c->state == CTR_WAITING && !c->timer.armed)
			ctr_start(p, c);
	}
	if (p->phase == POD_PENDING && main_started(p)) {
		p->phase = POD_RUNNING;
		podstatus_dirty(p);
	}
	if (p->nctrs == p->ninit && p->phase == POD_PENDING) {
		/* No main containers: nothing to run. */
		p->phase = POD_SUCCEEDED;
		release(p);
		podstatus_dirty(p);
	}
}

static int
wants_restart(const struct node_pod *p, const struct node_ctr *c, int code)
{
	if (p->restart_policy == 'A')
		return 1;
	if (p->restart_policy == 'O')
		return code != 0;
	return 0;
}

/* Wait out the back-off, then start the container again. */
static void
schedule_restart(struct node_pod *p, struct node_ctr *c)
{
	node_mgr *m = p->node->m;
	uint64_t ran = uv_now(m->loop) - c->run_ms, delay;

	if (ran >= BACKOFF_RESET_MS)
		c->backoff_ms = 0;
	delay = c->backoff_ms;
	c->backoff_ms = delay == 0 ? BACKOFF_FIRST_MS :
	    delay * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : delay * 2;
	c->last = c->end;
	c->has_last = 1;
	c->state = CTR_WAITING;
	if (delay == 0) {
		ctr_start(p, c);
		return;
	}
	snprintf(c->reason, sizeof c->reason, "CrashLoopBackOff");
	snprintf(c->message, sizeof c->message, "back-off %llus restarting "
	    "failed container=%s pod=%s_%s(%s)",
	    (unsigned long long)(delay / 1000), c->name, p->name, p->ns,
	    p->uid);
	wheel_add(m->wheel, &c->timer, delay, on_backoff, c);
	podstatus_dirty(p);
}

/* Every main container ended and none restarts: the pod is done. */
static void
check_done(struct node_pod *p)
{
	int i, failed = 0;

	for (i = p->ninit; i < p->nctrs; i++) {
		const struct node_ctr *c = &p->ctrs[i];

		if (c->state != CTR_TERMINATED)
			return;
		if (c->end.exit_code != 0)
			failed = 1;
	}
	p->phase = failed ? POD_FAILED : POD_SUCCEEDED;
	release(p);
	podstatus_dirty(p);
}

static int
running(const struct node_pod *p)
{
	int i, n = 0;

	for (i = 0; i < p->nctrs; i++)
		n += p->ctrs[i].state == CTR_RUNNING;
	return n;
}

void
podworker_ctr_exited(struct node_ctr *c, int code, const char *reason)
{
	struct node_pod *p = c->pod;

	c->rt = NULL;
	probe_stop(c);
	c->state = CTR_TERMINATED;
	c->end.exit_code = code;
	snprintf(c->end.reason, sizeof c->end.reason, "%s", reason ? reason :
	    code == 0 ? "Completed" : "Error");
	/* A start that failed left its message in c->message. */
	snprintf(c->end.message, sizeof c->end.message, "%s", c->message);
	c->message[0] = '\0';
	snprintf(c->end.started, sizeof c->end.started, "%s", c->started);
	if (c->end_at[0] != '\0')
		snprintf(c->end.finished, sizeof c->end.finished, "%s",
		    c->end_at);
	else
		util_now(c->end.finished);
	c->end_at[0] = '\0';
	podstatus_dirty(p);
	/* Inside a stop loop the loop finishes; the pod must outlive it. */
	if (p->stopping)
		return;
	if (p->removed && running(p) == 0) {
		pod_free(p);
		return;
	}
	if (p->terminating) {
		if (running(p) == 0)
			pod_finish_termination(p);
		return;
	}
	if (p->phase >= POD_SUCCEEDED)
		return;
	if (c->init) {
		if (code == 0) {
			p->next_init++;
			pod_sync(p);
		} else if (p->restart_policy == 'N')
			fail_pod(p, "", "");
		else
			schedule_restart(p, c);
		return;
	}
	if (wants_restart(p, c, code))
		schedule_restart(p, c);
	else
		check_done(p);
}

/* The grace period ran out and a runtime has not reported an exit. */
static void
on_kill_timeout(wheel_timer *t)
{
	struct node_pod *p = t->data;
	int i;

	for (i = 0; i < p->nctrs; i++)
		if (p->ctrs[i].state == CTR_RUNNING)
			podworker_ctr_exited(&p->ctrs[i], 137, "Error");
}

void
podworker_terminate(struct node_pod *p, uint64_t grace_ms)
{
	node_mgr *m = p->node->m;
	int i, n = 0;

	if (p->terminating && grace_ms > 0)
		return;
	/* A second, shorter grace period (0: now) replaces the first. */
	p->terminating = 1;
	p->stopping = 1;
	for (i = 0; i < p->nctrs; i++) {
		struct node_ctr *c = &p->ctrs[i];

		wheel_cancel(m->wheel, &c->timer);
		if (c->state == CTR_RUNNING) {
			n++;
			p->node->rt->stop(p->node, p, c, grace_ms);
		}
	}
	p->stopping = 0;
	if (running(p) == 0) {
		pod_finish_termination(p);
		return;
	}
	if (n > 0)
		wheel_add(m->wheel, &p->kill_timer, grace_ms + 2000,
		    on_kill_timeout, p);
}

/*
 * A pod's delete on its way (the loop does not wait for a remote API's
 * answer), or its last status and then its delete: its names, since the
 * pod is freed first. A finishing one (uid not "") is in m->finishing
 * until the delete's answer, so that no event of it takes it on again
 * between its last status and its delete.
 */
struct removal {
	node_mgr *m;
	char *ns, *name;		/* inside the same allocation */
	char uid[];
};

static struct removal *
removal_new(node_mgr *m, const char *uid, const char *ns, const char *name)
{
	size_t lu = strlen(uid) + 1, lns = strlen(ns) + 1;
	struct removal *rm = xmalloc(sizeof *rm + lu + lns + strlen(name) + 1);

	rm->m = m;
	memcpy(rm->uid, uid, lu);
	rm->ns = memcpy(rm->uid + lu, ns, lns);
	rm->name = rm->ns + lns;
	strcpy(rm->name, name);
	if (*uid != '\0')
		hmap_put(m->finishing, rm->uid, rm);
	return rm;
}

static void
on_removed(void *arg, struct reg_result *res)
{
	struct removal *rm = arg;

	if (res->code >= 300 && res->code != 404)
		log_warn("node: removing pod %s/%s: code %d", rm->ns, rm->name,
		    res->code);
	cJSON_Delete(res->body);
	if (*rm->uid != '\0')
		hmap_del(rm->m->finishing, rm->uid);
	free(rm);
}

/* The delete with no grace period a kubelet sends. */
static void
remove_now(struct removal *rm)
{
	const resource *r = resource_find("", "v1", "pods");
	struct reg_opts o;

	memset(&o, 0, sizeof o);
	o.grace_set = 1;
	o.grace_period = 0;
	client_delete_async(rm->m->c, r, rm->ns, rm->name, &o, on_removed, rm);
}

void
podworker_remove(node_mgr *m, const char *ns, const char *name)
{
	remove_now(removal_new(m, "", ns, name));
}

int
podworker_finishing(node_mgr *m, const char *uid)
{
	return hmap_get(m->finishing, uid) != NULL;
}

/* The last status's answer, whatever it is: then the delete. */
static void
on_last_status(void *arg, struct reg_result *res)
{
	cJSON_Delete(res->body);
	remove_now(arg);
}

/*
 * Everything has stopped: remove the pod (a delete with no grace period,
 * as the kubelet sends; finalizers, if any, still hold it) once its last
 * status is written, neither waited for on the loop.
 */
static void
pod_finish_termination(struct node_pod *p)
{
	node_mgr *m = p->node->m;
	struct removal *rm = removal_new(m, p->uid, p->ns, p->name);
	int i, failed = 0, sent;

	/*
	 * The last status first, in a terminal phase as the kubelet leaves
	 * it (a finalizer may keep the pod around for others to read).
	 */
	if (p->phase < POD_SUCCEEDED) {
		for (i = p->ninit; i < p->nctrs; i++)
			if (p->ctrs[i].state != CTR_TERMINATED ||
			    p->ctrs[i].end.exit_code != 0)
				failed = 1;
		p->phase = failed ? POD_FAILED : POD_SUCCEEDED;
		podstatus_dirty(p);
	}
	sent = podstatus_flush_last(p, on_last_status, rm);
	release(p);
	wheel_cancel(m->wheel, &p->kill_timer);
	pod_free(p);
	if (!sent)
		remove_now(rm);
}

void
podworker_forget(struct node_pod *p)
{
	int i, n = 0;

	p->removed = 1;
	p->stopping = 1;
	for (i = 0; i < p->nctrs; i++) {
		struct node_ctr *c = &p->ctrs[i];

		wheel_cancel(p->node->m->wheel, &c->timer);
		if (c->state == CTR_RUNNING) {
			n++;
			p->node->rt->stop(p->node, p, c, 0);
		}
	}
	p->stopping = 0;
	/* Exits still to come free it; with none running, free it now. */
	(void)n;
	if (running(p) == 0)
		pod_free(p);
}
