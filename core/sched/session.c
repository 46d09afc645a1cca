/*
 * The session snapshot. Nodes and pods are read from the store each cycle,
 * but parsed only when their revision has changed since the last one: a
 * cache by name (nodes) and uid (pods) keeps the tree and the resource
 * arithmetic, and entries not seen in a cycle are dropped. A node enters
 * the session when its Ready condition is True; a bound pod that has not
 * ended takes its requests from its node's idle resources; a pending pod
 * that volray should schedule (schedulerName volcano or the default,
 * no nodeName, not being deleted, not ended) becomes a task of its job:
 * the PodGroup named by its scheduling.k8s.io/group-name annotation, or an
 * implicit group of its own (minMember 1).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "sched/sched_int.h"

#define GROUP_ANNOTATION "scheduling.k8s.io/group-name"

static struct sched_cached *
cached(hmap *cache, const store_obj *o, const char *key, int node)
{
	struct sched_cached *c = hmap_get(cache, key);

	if (c != NULL && c->rev == o->rev) {
		c->seen = 1;
		return c;
	}
	if (c == NULL) {
		if ((c = calloc(1, sizeof *c)) == NULL ||
		    (c->key = strdup(key)) == NULL)
			fatal("out of memory");
		hmap_put(cache, c->key, c);
	}
	cJSON_Delete(c->obj);
	c->obj = store_obj_tree(o);
	c->rev = o->rev;
	if (node)
		podspec_allocatable(c->obj, &c->res);
	else
		podspec_requests(c->obj, &c->res);
	c->seen = 1;
	return c;
}

static int
unseen(const char *key, void *value, void *arg)
{
	struct sched_cached *c = value;
	struct sched_cached ***drop = arg;

	(void)key;
	if (!c->seen)
		*(*drop)++ = c;
	c->seen = 0;
	return 0;
}

/* Drop what was not in this cycle's lists; clear the marks for the next. */
static void
sweep(hmap *cache)
{
	size_t n = hmap_count(cache), i;
	struct sched_cached **drop = calloc(n + 1, sizeof *drop), **end = drop;

	if (drop == NULL)
		fatal("out of memory");
	hmap_each(cache, unseen, &end);
	for (i = 0; drop + i < end; i++) {
		hmap_del(cache, drop[i]->key);
		cJSON_Delete(drop[i]->obj);
		free(drop[i]->key);
		free(drop[i]);
	}
	free(drop);
}

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

static int
ended(const cJSON *pod)
{
	const char *ph = json_str(pod, "status.phase");

	return ph != NULL && (strcmp(ph, "Succeeded") == 0 ||
	    strcmp(ph, "Failed") == 0);
}

static int
ours(const cJSON *pod)
{
	const char *s = json_str(pod, "spec.schedulerName");

	return s == NULL || strcmp(s, "volcano") == 0 ||
	    strcmp(s, "default-scheduler") == 0;
}

/* The job a pod belongs to, made on first sight. */
static struct sched_job *
job_of(struct sched *s, struct sched_session *ss, const store_obj *o,
    const cJSON *pod)
{
	const cJSON *ann = json_at(pod, "metadata.annotations");
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(ann, GROUP_ANNOTATION);
	char *key;
	struct sched_job *j;

	if (cJSON_IsString(g) && *g->valuestring)
		key = util_printf("%s/%s", o->ns, g->valuestring);
	else
		key = util_printf("%s/pod:%s", o->ns, o->uid);
	if ((j = hmap_get(ss->job_index, key)) != NULL) {
		free(key);
		return j;
	}
	if ((j = calloc(1, sizeof *j)) == NULL)
		fatal("out of memory");
	j->key = key;
	j->ns = o->ns;
	j->min_member = 1;
	j->created = json_str(pod, "metadata.creationTimestamp");
	if (cJSON_IsString(g) && *g->valuestring) {
		const store_obj *pg = store_get(s->st,
		    "podgroups.scheduling.volcano.sh", o->ns, g->valuestring);
		cJSON *t = pg ? store_obj_tree(pg) : NULL;

		j->podgroup = strdup(g->valuestring);
		j->min_member = t ? (int)cJSON_GetNumberValue(json_at(t,
		    "spec.minMember")) : 1;
		if (j->min_member < 1)
			j->min_member = 1;
		cJSON_Delete(t);
	}
	hmap_put(ss->job_index, j->key, j);
	if (ss->njobs % 64 == 0 && (ss->jobs = realloc(ss->jobs,
	    (ss->njobs + 64) * sizeof *ss->jobs)) == NULL)
		fatal("out of memory");
	ss->jobs[ss->njobs++] = j;
	return j;
}

static void
job_add_task(struct sched_job *j, struct sched_task *t)
{
	if (j->ntasks == j->captasks) {
		j->captasks = j->captasks ? j->captasks * 2 : 4;
		if ((j->tasks = realloc(j->tasks, j->captasks *
		    sizeof *j->tasks)) == NULL)
			fatal("out of memory");
	}
	j->tasks[j->ntasks++] = t;
	t->job = j;
	if (t->priority > j->priority || j->ntasks == 1)
		j->priority = t->priority;
}

void
session_open(struct sched *s, struct sched_session *ss)
{
	store_obj *const *objs;
	size_t n, i;
	int k = 0;

	memset(ss, 0, sizeof *ss);
	ss->job_index = hmap_new();
	ss->node_index = hmap_new();
	n = store_list(s->st, "nodes", NULL, &objs);
	ss->nodes = calloc(n + 1, sizeof *ss->nodes);
	for (i = 0; i < n; i++) {
		struct sched_cached *c = cached(s->nodes_cache, objs[i],
		    objs[i]->name, 1);
		struct sched_node *sn;

		if (!node_ready(c->obj))
			continue;
		sn = &ss->nodes[k++];
		sn->name = c->key;
		sn->obj = c->obj;
		sn->alloc = sn->idle = c->res;
		sn->ready = 1;
		sn->unschedulable = cJSON_IsTrue(json_at(c->obj,
		    "spec.unschedulable"));
		sn->has_taints = cJSON_GetArraySize(json_at(c->obj,
		    "spec.taints")) > 0;
	}
	ss->nnodes = k;
	for (i = 0; i < (size_t)k; i++)
		hmap_put(ss->node_index, ss->nodes[i].name, &ss->nodes[i]);
	sweep(s->nodes_cache);

	n = store_list(s->st, "pods", NULL, &objs);
	ss->tasks = calloc(n + 1, sizeof *ss->tasks);
	for (i = 0; i < n; i++) {
		const store_obj *o = objs[i];
		struct sched_cached *c = cached(s->pods_cache, o, o->uid, 0);
		struct sched_task *t;

		if (ended(c->obj))
			continue;
		if (o->node_name[0] != '\0') {
			struct sched_node *sn = hmap_get(ss->node_index,
			    o->node_name);
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(
			    json_at(c->obj, "metadata.annotations"),
			    GROUP_ANNOTATION);

			if (sn != NULL)
				predicate_account(sn, &c->res, 1);
			if (cJSON_IsString(g) && !o->deleting)
				job_of(s, ss, o, c->obj)->bound++;
			continue;
		}
		if (o->deleting || !ours(c->obj))
			continue;
		t = &ss->tasks[ss->ntasks++];
		t->ns = o->ns;
		t->name = o->name;
		t->uid = o->uid;
		t->obj = c->obj;
		t->req = c->res;
		t->priority = (long long)cJSON_GetNumberValue(json_at(c->obj,
		    "spec.priority"));
		t->has_selector = json_at(c->obj, "spec.nodeSelector") != NULL ||
		    json_at(c->obj, "spec.affinity.nodeAffinity") != NULL;
		job_add_task(job_of(s, ss, o, c->obj), t);
	}
	sweep(s->pods_cache);
}

void
session_close(struct sched_session *ss)
{
	int i;

	for (i = 0; i < ss->njobs; i++) {
		free(ss->jobs[i]->key);
		free(ss->jobs[i]->podgroup);
		free(ss->jobs[i]->tasks);
		free(ss->jobs[i]);
	}
	for (i = 0; i < ss->ntasks; i++)
		free(ss->tasks[i].why);
	free(ss->jobs);
	free(ss->tasks);
	free(ss->nodes);
	hmap_free(ss->job_index);
	hmap_free(ss->node_index);
}
