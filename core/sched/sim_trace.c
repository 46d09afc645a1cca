/*
 * A job trace for `volray sim`: CSV with the header
 *
 *   arrival,queue,tasks,cpu,memory,duration,priority,min_member
 *
 * (arrival and duration in seconds, cpu and memory per pod as Kubernetes
 * quantities, priority a number, min_member at most tasks; priority and
 * min_member may be empty: 0 and tasks), or the same as YAML, a list of
 * mappings with those keys. Jobs are kept in arrival order (stable: equal
 * arrivals stay in file order).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "sched/sim.h"

static const char *const cols[] = { "arrival", "queue", "tasks", "cpu",
    "memory", "duration", "priority", "min_member" };
#define NCOLS	8

static int
queue_of(struct sim_trace *tr, const char *name)
{
	int i;

	for (i = 0; i < tr->nqueues; i++)
		if (strcmp(tr->queues[i].name, name) == 0)
			return i;
	tr->queues = xreallocarray(tr->queues, (size_t)tr->nqueues + 1,
	    sizeof *tr->queues);
	tr->queues[tr->nqueues].name = xstrdup(name);
	tr->queues[tr->nqueues].weight = 1;
	return tr->nqueues++;
}

/* One job from its fields (strings, NULL when absent); -1 with *cause. */
static int
add_job(struct sim_trace *tr, const char *const f[NCOLS], int line,
    char **cause)
{
	struct sim_job j;
	double x;
	int i;

	memset(&j, 0, sizeof j);
	for (i = 0; i < NCOLS; i++)
		if ((f[i] == NULL || *f[i] == '\0') && i < 6) {
			*cause = util_printf("line %d: no %s", line, cols[i]);
			return -1;
		}
	if (quantity_parse(f[0], &j.arrival) != 0 || j.arrival < 0 ||
	    quantity_parse(f[5], &j.duration) != 0 || j.duration <= 0) {
		*cause = util_printf("line %d: arrival and duration are seconds "
		    "(duration > 0)", line);
		return -1;
	}
	if (quantity_parse(f[2], &x) != 0 || x < 1 || x > 100000) {
		*cause = util_printf("line %d: tasks: want 1 to 100000", line);
		return -1;
	}
	j.tasks = (int)x;
	if (quantity_parse(f[3], &x) != 0 || x < 0 ||
	    quantity_parse(f[4], &j.memory) != 0 || j.memory < 0) {
		*cause = util_printf("line %d: cpu and memory are quantities "
		    "(500m, 2, 4Gi)", line);
		return -1;
	}
	j.cpu_m = x * 1000;
	j.priority = f[6] && *f[6] ? atoll(f[6]) : 0;
	j.min_member = f[7] && *f[7] ? atoi(f[7]) : j.tasks;
	if (j.min_member < 1 || j.min_member > j.tasks) {
		*cause = util_printf("line %d: min_member: want 1 to tasks",
		    line);
		return -1;
	}
	/* The queue's index until the list stops growing. */
	j.queue = (const char *)(intptr_t)queue_of(tr, f[1]);
	tr->jobs = xreallocarray(tr->jobs, (size_t)tr->njobs + 1,
	    sizeof *tr->jobs);
	tr->jobs[tr->njobs++] = j;
	tr->npods += j.tasks;
	return 0;
}

static int
load_csv(FILE *f, struct sim_trace *tr, char **cause)
{
	char buf[4096];
	int line = 0, idx[NCOLS], i, n;

	for (i = 0; i < NCOLS; i++)
		idx[i] = -1;
	while (fgets(buf, sizeof buf, f) != NULL) {
		char *field[32], *p;
		const char *v[NCOLS];

		line++;
		buf[strcspn(buf, "\r\n")] = '\0';
		if (*buf == '\0' || *buf == '#')
			continue;
		n = 0;
		p = buf;
		while (n < 32) {
			field[n++] = p;
			if ((p = strchr(p, ',')) == NULL)
				break;
			*p++ = '\0';
		}
		if (idx[0] < 0) {	/* the header */
			for (i = 0; i < NCOLS; i++) {
				int k;

				for (k = 0; k < n; k++)
					if (strcmp(field[k], cols[i]) == 0)
						idx[i] = k;
				if (idx[i] < 0 && i < 6) {
					*cause = util_printf("line %d: the "
					    "header lacks %s (want arrival,"
					    "queue,tasks,cpu,memory,duration,"
					    "priority,min_member)", line,
					    cols[i]);
					return -1;
				}
			}
			continue;
		}
		for (i = 0; i < NCOLS; i++)
			v[i] = idx[i] >= 0 && idx[i] < n ? field[idx[i]] : NULL;
		if (add_job(tr, v, line, cause) != 0)
			return -1;
	}
	if (idx[0] < 0) {
		*cause = xstrdup("empty trace");
		return -1;
	}
	return 0;
}

static int
load_yaml(const char *path, struct sim_trace *tr, char **cause)
{
	cJSON *doc = yamljson_load_file(path, cause), *it;
	int line = 0;

	if (doc == NULL)
		return -1;
	cJSON_ArrayForEach(it, cJSON_GetArrayItem(doc, 0)) {
		char num[NCOLS][64];
		const char *v[NCOLS];
		int i;

		line++;
		for (i = 0; i < NCOLS; i++) {
			const cJSON *x = cJSON_GetObjectItemCaseSensitive(it,
			    cols[i]);

			if (cJSON_IsNumber(x)) {
				snprintf(num[i], sizeof num[i], "%.17g",
				    x->valuedouble);
				v[i] = num[i];
			} else
				v[i] = cJSON_IsString(x) ? x->valuestring : NULL;
		}
		if (add_job(tr, v, line, cause) != 0) {
			cJSON_Delete(doc);
			return -1;
		}
	}
	cJSON_Delete(doc);
	return 0;
}

int
sim_trace_load(const char *path, const char *weights, struct sim_trace *tr,
    char **cause)
{
	size_t n = strlen(path);
	int rc, i;
	FILE *f;

	memset(tr, 0, sizeof *tr);
	if (n > 5 && (strcmp(path + n - 5, ".yaml") == 0 ||
	    strcmp(path + n - 4, ".yml") == 0))
		rc = load_yaml(path, tr, cause);
	else if ((f = fopen(path, "r")) == NULL) {
		*cause = util_printf("%s: cannot read", path);
		return -1;
	} else {
		rc = load_csv(f, tr, cause);
		fclose(f);
	}
	if (rc != 0 || tr->njobs == 0) {
		if (rc == 0)
			*cause = util_printf("%s: no jobs", path);
		sim_trace_free(tr);
		return -1;
	}
	/* By arrival, equal ones in file order: insertion sort (stable;
	   traces come nearly sorted). */
	for (i = 1; i < tr->njobs; i++) {
		struct sim_job tmp = tr->jobs[i];
		int k;

		for (k = i; k > 0 && tr->jobs[k - 1].arrival > tmp.arrival; k--)
			tr->jobs[k] = tr->jobs[k - 1];
		tr->jobs[k] = tmp;
	}
	for (i = 0; i < tr->njobs; i++)
		tr->jobs[i].queue =
		    tr->queues[(intptr_t)tr->jobs[i].queue].name;
	/* name=weight,... */
	while (weights != NULL && *weights) {
		char name[256];
		int w, len;

		if (sscanf(weights, "%255[^=]=%d%n", name, &w, &len) != 2 ||
		    w < 1) {
			*cause = util_printf("--queue-weights %s: want "
			    "name=weight,...", weights);
			sim_trace_free(tr);
			return -1;
		}
		tr->queues[queue_of(tr, name)].weight = w;
		weights += len;
		if (*weights == ',')
			weights++;
	}
	return 0;
}

void
sim_trace_free(struct sim_trace *tr)
{
	int i;

	for (i = 0; i < tr->nqueues; i++)
		free(tr->queues[i].name);
	free(tr->queues);
	free(tr->jobs);
	memset(tr, 0, sizeof *tr);
}
