/*
 * What the local node's containers use, for the metrics API (kubectl
 * top) and /metrics: every USAGE_MS the CPU time and memory of each
 * running container are read from its cgroups (cgroup.c); the CPU rate is
 * the difference of the last two samples over their interval, as
 * metrics-server's window. Containers of simulated nodes, and local ones
 * where cgroups are off, have no sample: the API reports what their spec
 * and annotations say instead (api/metricsapi.c).
 *
 * The local node's load over the last USAGE_AVG_MS, the sum of its
 * containers' samples in percent of its allocatable, is written on its
 * Node as the annotation volray.io/usage ("cpu=12.5,memory=40.2,time=
 * RFC 3339"), for the scheduler's usage plugin (policies/usage.lua):
 * every USAGE_PUBLISH_MS when it moved by a point or more, and at least
 * every USAGE_REFRESH_MS, so that a stale one tells a runtime gone quiet.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node.h"
#include "node/node_int.h"
#include "node/runtime.h"

#define USAGE_PUBLISH_MS 15000
#define USAGE_REFRESH_MS 120000
#define USAGE_ANNOTATION "volray.io/usage"

struct totals {
	double cores, bytes;
};

static int
sum_pod(const char *uid, void *value, void *arg)
{
	struct node_pod *p = value;
	struct totals *t = arg;
	int i;

	(void)uid;
	for (i = 0; i < p->nctrs; i++)
		if (p->ctrs[i].state == CTR_RUNNING && p->ctrs[i].samples >= 2) {
			t->cores += (double)p->ctrs[i].nanocores / 1e9;
			t->bytes += (double)p->ctrs[i].mem_bytes;
		}
	return 0;
}

static void
on_published(void *arg, struct reg_result *res)
{
	struct usage_ring *u = arg;

	u->writing = 0;
	if (res->code >= 300)
		u->pub_ms = 0;	/* try again at the next sample */
	cJSON_Delete(res->body);
}

/* Add this sample of n's pods; write the average when it is time. */
static void
publish(node_mgr *m, struct node *n, uint64_t now)
{
	struct usage_ring *u = &m->usage;
	struct totals t = { 0, 0 };
	double cpu = 0, mem = 0;
	char ts[32], *body;
	int i;

	hmap_each(n->pods, sum_pod, &t);
	u->cpu[u->next] = t.cores;
	u->mem[u->next] = t.bytes;
	u->next = (u->next + 1) % USAGE_SLOTS;
	if (u->n < USAGE_SLOTS)
		u->n++;
	for (i = 0; i < u->n; i++) {
		cpu += u->cpu[i];
		mem += u->mem[i];
	}
	cpu = n->alloc.cpu > 0 ? cpu / u->n * 1000 * 100 / (double)n->alloc.cpu :
	    0;
	mem = n->alloc.memory > 0 ? mem / u->n * 100 /
	    (double)n->alloc.memory : 0;
	if (u->writing || (u->pub_ms != 0 && (now - u->pub_ms < USAGE_PUBLISH_MS ||
	    (fabs(cpu - u->pub_cpu) < 1 && fabs(mem - u->pub_mem) < 1 &&
	    now - u->pub_ms < USAGE_REFRESH_MS))))
		return;
	util_now(ts);
	body = util_printf("{\"metadata\":{\"annotations\":{\""
	    USAGE_ANNOTATION "\":\"cpu=%.1f,memory=%.1f,time=%s\"}}}", cpu,
	    mem, ts);
	u->writing = 1;
	u->pub_ms = now;
	u->pub_cpu = cpu;
	u->pub_mem = mem;
	client_patch_async(m->c, resource_find("", "v1", "nodes"), "", n->name,
	    "application/merge-patch+json", body, strlen(body), NULL,
	    on_published, u);
	free(body);
}

static int
sample_pod(const char *uid, void *value, void *arg)
{
	struct node_pod *p = value;
	uint64_t now = *(uint64_t *)arg, cpu, mem;
	int i;

	(void)uid;
	for (i = 0; i < p->nctrs; i++) {
		struct node_ctr *c = &p->ctrs[i];

		if (c->state != CTR_RUNNING ||
		    cgroup_usage(p->uid, c->name, &cpu, &mem) != 0) {
			c->samples = 0;
			continue;
		}
		if (c->samples > 0 && now > c->sampled_ms && cpu >= c->cpu_usec)
			c->nanocores = (cpu - c->cpu_usec) * 1000000u /
			    (now - c->sampled_ms);
		c->cpu_usec = cpu;
		c->mem_bytes = mem;
		c->sampled_ms = now;
		c->samples++;
	}
	return 0;
}

static void
on_sample(uv_timer_t *t)
{
	node_mgr *m = t->data;
	uint64_t now = uv_now(m->loop);
	struct node *n = m->local_name != NULL ? hmap_get(m->nodes,
	    m->local_name) : NULL;

	/* Only the local node's pods have cgroups (thousands of simulated
	   ones are not walked). */
	if (n != NULL && n->rt == &local_runtime) {
		hmap_each(n->pods, sample_pod, &now);
		publish(m, n, now);
	}
}

void
usage_start(node_mgr *m)
{
	uv_timer_init(m->loop, &m->usage_timer);
	m->usage_timer.data = m;
	uv_timer_start(&m->usage_timer, on_sample, 0, USAGE_MS);
	uv_unref((uv_handle_t *)&m->usage_timer);
}

void
usage_stop(node_mgr *m)
{
	uv_timer_stop(&m->usage_timer);
}

int
node_mgr_usage(void *mgr, const char *uid, const char *ctr,
    uint64_t *nanocores, uint64_t *mem_bytes)
{
	node_mgr *m = mgr;
	struct node_pod *p = hmap_get(m->pods, uid);
	int i;

	for (i = 0; p != NULL && i < p->nctrs; i++)
		if (strcmp(p->ctrs[i].name, ctr) == 0 &&
		    p->ctrs[i].samples >= 2) {
			*nanocores = p->ctrs[i].nanocores;
			*mem_bytes = p->ctrs[i].mem_bytes;
			return 1;
		}
	return 0;
}

static int
print_pod(const char *uid, void *value, void *arg)
{
	struct node_pod *p = value;
	FILE *f = arg;
	int i;

	(void)uid;
	for (i = 0; i < p->nctrs; i++)
		if (p->ctrs[i].samples >= 1)
			fprintf(f, "volray_container_cpu_usage_seconds_total"
			    "{namespace=\"%s\",pod=\"%s\",container=\"%s\"} "
			    "%.6f\n", p->ns, p->name, p->ctrs[i].name,
			    (double)p->ctrs[i].cpu_usec / 1e6);
	for (i = 0; i < p->nctrs; i++)
		if (p->ctrs[i].samples >= 1)
			fprintf(f, "volray_container_memory_working_set_bytes"
			    "{namespace=\"%s\",pod=\"%s\",container=\"%s\"} "
			    "%llu\n", p->ns, p->name, p->ctrs[i].name,
			    (unsigned long long)p->ctrs[i].mem_bytes);
	return 0;
}

void
node_mgr_print_usage(FILE *f, const node_mgr *m)
{
	struct node *n = m->local_name != NULL ? hmap_get(m->nodes,
	    m->local_name) : NULL;

	fprintf(f, "# HELP volray_container_cpu_usage_seconds_total CPU time "
	    "of a local container, from its cgroup.\n"
	    "# TYPE volray_container_cpu_usage_seconds_total counter\n"
	    "# HELP volray_container_memory_working_set_bytes Memory of a "
	    "local container, from its cgroup.\n"
	    "# TYPE volray_container_memory_working_set_bytes gauge\n");
	/* Only the local node's pods are sampled: a scrape does not walk
	   thousands of simulated ones. */
	if (n != NULL && n->rt == &local_runtime)
		hmap_each(n->pods, print_pod, f);
}
