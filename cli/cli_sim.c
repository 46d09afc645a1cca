/*
 * volray sim TRACE [POLICY-DIR...]: a job trace played in virtual time on
 * simulated nodes with each policy directory (none: the built-in
 * policy), side by side on the same trace (core/sched/sim.c); a table on
 * stdout, --csv FILE for tools (the cluster sampled over time) and --svg
 * PREFIX for people: PREFIX-util.svg (utilisation over time),
 * PREFIX-shares.svg (each queue's share against its deserved share) and
 * PREFIX-wait.svg (the wait-time CDF), SVG written here directly. The
 * nodes are --nodes alike or a --nodes-file's, labelled (--node-labels
 * too); the jobs a run left unplaced follow the table with the
 * scheduler's reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli_cmd.h"
#include "cli_opt.h"
#include "lib/log.h"
#include "lib/podspec.h"
#include "lib/sharedir.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sim.h"

struct run {
	const char *label;
	struct sim_result r;
	double wall;
	double *waits, *jcts;
	int nwaits, njcts;
};

static int
cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
pct(const double *v, int n, double p)
{
	if (n == 0)
		return 0;
	return v[(int)fmin(n - 1, floor(p * (n - 1) + 0.5))];
}

static double
mean(const double *v, int n)
{
	double s = 0;
	int i;

	for (i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : 0;
}

/* Time-weighted utilisation over the run. */
static double
avg_util(const struct sim_result *r)
{
	double s = 0;
	int i;

	for (i = 0; i + 1 < r->nrows; i++)
		s += r->rows[i].util * (r->rows[i + 1].t - r->rows[i].t);
	return r->makespan > 0 ? s / r->makespan : 0;
}

static void
stats(struct run *x, const struct sim_trace *tr)
{
	int i;

	x->waits = xcalloc((size_t)tr->njobs + 1, sizeof *x->waits);
	x->jcts = xcalloc((size_t)tr->njobs + 1, sizeof *x->jcts);
	for (i = 0; i < tr->njobs; i++) {
		if (x->r.jobs[i].start >= 0)
			x->waits[x->nwaits++] = x->r.jobs[i].start -
			    tr->jobs[i].arrival;
		if (x->r.jobs[i].end >= 0)
			x->jcts[x->njcts++] = x->r.jobs[i].end -
			    tr->jobs[i].arrival;
	}
	qsort(x->waits, (size_t)x->nwaits, sizeof *x->waits, cmp_d);
	qsort(x->jcts, (size_t)x->njcts, sizeof *x->jcts, cmp_d);
}

static void
table(struct run *runs, int n, const struct sim_trace *tr)
{
	int i;

	printf("%-28s %6s %6s  %-31s  %-31s %10s %6s %7s %8s %9s\n", "POLICY",
	    "JOBS", "DONE", "JOB COMPLETION s (mean p50 p95 max)",
	    "WAIT s (mean p50 p95 max)", "MAKESPAN", "UTIL", "PREEMPT",
	    "SESSIONS", "SPEEDUP");
	for (i = 0; i < n; i++) {
		struct run *x = &runs[i];
		char jct[64], wait[64];

		snprintf(jct, sizeof jct, "%.0f %.0f %.0f %.0f",
		    mean(x->jcts, x->njcts), pct(x->jcts, x->njcts, .5),
		    pct(x->jcts, x->njcts, .95), pct(x->jcts, x->njcts, 1));
		snprintf(wait, sizeof wait, "%.0f %.0f %.0f %.0f",
		    mean(x->waits, x->nwaits), pct(x->waits, x->nwaits, .5),
		    pct(x->waits, x->nwaits, .95), pct(x->waits, x->nwaits, 1));
		printf("%-28s %6d %6d  %-31s  %-31s %10.0f %5.0f%% %7ld %8ld "
		    "%8.0fx%s\n", x->label, tr->njobs, x->njcts, jct, wait,
		    x->r.makespan, 100 * avg_util(&x->r), x->r.preemptions,
		    x->r.sessions, x->wall > 0 ? x->r.makespan / x->wall : 0,
		    x->r.stuck ? "  (jobs left that nothing could place)" :
		    "");
	}
}

/* Each run's jobs still waiting at its end, with the scheduler's reason
   as `volray explain` gives it. */
static void
unplaced(struct run *runs, int n, const struct sim_trace *tr)
{
	int i, k;

	for (i = 0; i < n; i++) {
		const struct sim_result *r = &runs[i].r;

		if (r->nunplaced == 0)
			continue;
		printf("\n# %s: %d job%s left unplaced\n", runs[i].label,
		    r->nunplaced, r->nunplaced == 1 ? "" : "s");
		for (k = 0; k < r->nunplaced; k++) {
			const struct sim_unplaced *u = &r->unplaced[k];
			const struct sim_job *j = &tr->jobs[u->job];

			printf("job-%05d (queue %s, arrived %gs, %d of %d pods "
			    "of %g cpu waiting): %s: %s\n", u->job, j->queue,
			    j->arrival, u->pending, j->tasks, j->cpu_m / 1000,
			    u->reason, u->message);
		}
	}
}

static int
write_csv(const char *path, struct run *runs, int n,
    const struct sim_trace *tr)
{
	FILE *f = fopen(path, "w");
	int i, k, q;

	if (f == NULL)
		return -1;
	fprintf(f, "policy,time,utilization,queue,share,deserved\n");
	for (i = 0; i < n; i++)
		for (k = 0; k < runs[i].r.nrows; k++) {
			const struct sim_row *row = &runs[i].r.rows[k];

			for (q = 0; q < tr->nqueues; q++)
				fprintf(f, "%s,%.3f,%.4f,%s,%.4f,%.4f\n",
				    runs[i].label, row->t, row->util,
				    tr->queues[q].name, row->share[q],
				    row->deserved[q]);
		}
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------------ */
/* SVG, written directly: a frame, axes, and polylines.                 */

static const char *const colors[] = { "#1f77b4", "#d62728", "#2ca02c",
    "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf" };
#define NCOLORS	8
#define W 720
#define H 360
#define L 60
#define B 40

struct svg {
	FILE *f;
	double xmax, ymax;
	int nlegend;
};

static int
svg_open(struct svg *s, const char *path, const char *title,
    const char *xlabel, const char *ylabel, double xmax, double ymax)
{
	int i;

	if ((s->f = fopen(path, "w")) == NULL)
		return -1;
	s->xmax = xmax > 0 ? xmax : 1;
	s->ymax = ymax > 0 ? ymax : 1;
	s->nlegend = 0;
	fprintf(s->f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
	    "height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n"
	    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
	    "<text x=\"%d\" y=\"18\" font-size=\"14\">%s</text>\n"
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
	    "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"black\"/>\n"
	    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n"
	    "<text x=\"14\" y=\"%d\" transform=\"rotate(-90 14 %d)\" "
	    "text-anchor=\"middle\">%s</text>\n", W, H, L, title, L, H - B,
	    W - 10, H - B, L, 30, L, H - B, (W + L) / 2, H - 8, xlabel,
	    H / 2, H / 2, ylabel);
	for (i = 0; i <= 4; i++) {
		double y = H - B - (H - B - 30) * i / 4.0;
		double x = L + (W - 10 - L) * i / 4.0;

		fprintf(s->f, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">"
		    "%.3g</text>\n<text x=\"%.0f\" y=\"%d\" text-anchor="
		    "\"middle\">%.3g</text>\n", L - 4, y + 4, s->ymax * i / 4,
		    x, H - B + 16, s->xmax * i / 4);
	}
	return 0;
}

static void
svg_line(struct svg *s, const double *x, const double *y, int n,
    const char *color, int dashed, const char *legend)
{
	int i;

	fprintf(s->f, "<polyline fill=\"none\" stroke=\"%s\"%s points=\"",
	    color, dashed ? " stroke-dasharray=\"5,3\"" : "");
	for (i = 0; i < n; i++)
		fprintf(s->f, "%.1f,%.1f ", L + (W - 10 - L) * x[i] / s->xmax,
		    H - B - (H - B - 30) * fmin(y[i], s->ymax) / s->ymax);
	fprintf(s->f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n",
	    W - 230, 40 + 14 * s->nlegend++, color, legend);
}

static void
svg_close(struct svg *s)
{
	fprintf(s->f, "</svg>\n");
	fclose(s->f);
}

static int
write_svgs(const char *prefix, struct run *runs, int n,
    const struct sim_trace *tr)
{
	struct svg s;
	double xmax = 0, wmax = 0, *x, *y;
	char *path, legend[300];
	int i, k, q, rows = 0;

	for (i = 0; i < n; i++) {
		xmax = fmax(xmax, runs[i].r.makespan);
		wmax = fmax(wmax, pct(runs[i].waits, runs[i].nwaits, 1));
		rows = runs[i].r.nrows > rows ? runs[i].r.nrows : rows;
	}
	x = xcalloc((size_t)rows + tr->njobs + 2, sizeof *x);
	y = xcalloc((size_t)rows + tr->njobs + 2, sizeof *y);
	path = util_printf("%s-util.svg", prefix);
	if (svg_open(&s, path, "Cluster utilisation (cpu)", "virtual time (s)",
	    "allocated / allocatable", xmax, 1) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		for (k = 0; k < runs[i].r.nrows; k++) {
			x[k] = runs[i].r.rows[k].t;
			y[k] = runs[i].r.rows[k].util;
		}
		svg_line(&s, x, y, runs[i].r.nrows, colors[i % NCOLORS], 0,
		    runs[i].label);
	}
	svg_close(&s);
	free(path);
	path = util_printf("%s-shares.svg", prefix);
	if (svg_open(&s, path, "Queue shares (solid) against deserved "
	    "(dashed)", "virtual time (s)", "share of the cluster's cpu", xmax,
	    1) != 0)
		goto fail;
	for (i = 0; i < n; i++)
		for (q = 0; q < tr->nqueues; q++) {
			for (k = 0; k < runs[i].r.nrows; k++) {
				x[k] = runs[i].r.rows[k].t;
				y[k] = runs[i].r.rows[k].share[q];
			}
			snprintf(legend, sizeof legend, "%s: %s",
			    runs[i].label, tr->queues[q].name);
			svg_line(&s, x, y, runs[i].r.nrows,
			    colors[(i * tr->nqueues + q) % NCOLORS], 0, legend);
			for (k = 0; k < runs[i].r.nrows; k++)
				y[k] = runs[i].r.rows[k].deserved[q];
			snprintf(legend, sizeof legend, "%s: %s deserved",
			    runs[i].label, tr->queues[q].name);
			svg_line(&s, x, y, runs[i].r.nrows,
			    colors[(i * tr->nqueues + q) % NCOLORS], 1, legend);
		}
	svg_close(&s);
	free(path);
	path = util_printf("%s-wait.svg", prefix);
	if (svg_open(&s, path, "Wait time, cumulative", "wait (s)",
	    "share of jobs", wmax, 1) != 0)
		goto fail;
	for (i = 0; i < n; i++) {
		for (k = 0; k < runs[i].nwaits; k++) {
			x[k] = runs[i].waits[k];
			y[k] = (k + 1.0) / tr->njobs;
		}
		svg_line(&s, x, y, runs[i].nwaits, colors[i % NCOLORS], 0,
		    runs[i].label);
	}
	svg_close(&s);
	free(path);
	free(x);
	free(y);
	return 0;
fail:
	fprintf(stderr, "volray: %s: cannot write\n", path);
	free(path);
	free(x);
	free(y);
	return -1;
}

static int
usage(const char *why)
{
	return cli_opt_usage("sim", "%s\nusage: volray sim TRACE [POLICY-DIR...]"
	    " [--nodes N] [--node-cpu C] [--node-memory M] [--nodes-file FILE]"
	    " [--node-labels K=V,...] [--queue-weights Q=W,...] [--csv FILE] "
	    "[--svg PREFIX]", why);
}

int
cli_sim_run(int argc, char **argv)
{
	const struct cli_sim_opts *o = &cli_opts.sim;
	struct sim_trace tr;
	struct sim_nodes nodes;
	struct run *runs;
	char *share, *cause = NULL;
	double cpu, memory;
	int n, i, rc = CLI_OK;

	if (argc < 1)
		return usage("sim wants a trace");
	if (o->nodes_file != NULL && o->nodes != 0)
		return usage("--nodes and --nodes-file: give one");
	if (o->nodes < 0 || o->nodes > SIM_NODES_MAX)
		return usage("--nodes: want 1 to 100000");
	if (quantity_parse(o->cpu ? o->cpu : "32", &cpu) != 0 || cpu <= 0)
		return usage("--node-cpu: want a quantity");
	if (quantity_parse(o->memory ? o->memory : "128Gi", &memory) != 0 ||
	    memory <= 0)
		return usage("--node-memory: want a quantity");
	if ((rc = sim_nodes_make(&nodes, o->nodes_file, o->nodes > 0 ?
	    (int)o->nodes : 100, cpu * 1000, memory, o->labels, &cause)) !=
	    0) {
		if (rc == -2)
			rc = usage(cause);
		else {
			fprintf(stderr, "volray: sim: %s\n", cause);
			rc = CLI_FAIL;
		}
		free(cause);
		return rc;
	}
	rc = CLI_OK;
	if ((share = share_dir_find(&cause)) == NULL ||
	    sim_trace_load(argv[0], o->weights, &tr, &cause) != 0) {
		fprintf(stderr, "volray: sim: %s\n", cause);
		free(cause);
		free(share);
		sim_nodes_free(&nodes);
		return CLI_FAIL;
	}
	log_set_level(LOG_ERROR);
	n = argc > 1 ? argc - 1 : 1;
	runs = xcalloc((size_t)n, sizeof *runs);
	for (i = 0; i < n && rc == CLI_OK; i++) {
		struct timespec t0, t1;

		runs[i].label = argc > 1 ? argv[i + 1] : "built-in";
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (sim_run(share, argc > 1 ? argv[i + 1] : NULL, &tr, &nodes,
		    &runs[i].r, &cause) != 0) {
			fprintf(stderr, "volray: sim: %s: %s\n", runs[i].label,
			    cause);
			free(cause);
			rc = CLI_FAIL;
			n = i;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		runs[i].wall = (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		stats(&runs[i], &tr);
	}
	if (rc == CLI_OK) {
		if (o->nodes_file == NULL)
			printf("# %d jobs (%d pods) in %d queues on %d nodes of "
			    "%g cpu, %g GiB\n", tr.njobs, tr.npods,
			    tr.nqueues, nodes.count, cpu, memory / (1 << 30));
		else
			printf("# %d jobs (%d pods) in %d queues on the %d "
			    "nodes of %s (%g cpu, %g GiB in all)\n", tr.njobs,
			    tr.npods, tr.nqueues, nodes.count, o->nodes_file,
			    nodes.cpu_m / 1000, nodes.memory / (1 << 30));
		table(runs, n, &tr);
		unplaced(runs, n, &tr);
		if (o->csv != NULL && write_csv(o->csv, runs, n, &tr) != 0) {
			fprintf(stderr, "volray: %s: cannot write\n", o->csv);
			rc = CLI_FAIL;
		}
		if (o->svg != NULL && write_svgs(o->svg, runs, n, &tr) != 0)
			rc = CLI_FAIL;
	}
	for (i = 0; i < n; i++) {
		sim_result_free(&runs[i].r);
		free(runs[i].waits);
		free(runs[i].jcts);
	}
	free(runs);
	sim_trace_free(&tr);
	sim_nodes_free(&nodes);
	free(share);
	return rc;
}
