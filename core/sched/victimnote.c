/*
 * Victim notes, for explain: what became of each task a preemptor job
 * considered as a victim in preempt, reclaim, gangpreempt or gangreclaim
 * (not preemptable; kept by a plugin's rule, with its name; allowed and
 * spared; allowed but no room; evicted; evicted and undone). A job keeps
 * its first VNOTES_MAX victims, one note each (a victim seen again gets
 * the stronger verdict), and counts the rest.
 */
#include <stdlib.h>

#include "lib/xmalloc.h"
#include "sched/sched_int.h"

static const char *const names[VV_N] = {
	"notPreemptable", "refused", "wouldBreakGang", "spared", "noRoom",
	"undone", "evicted",
};

static const char *const texts[VV_N] = {
	"not preemptable",
	"kept by a plugin's rule",
	"kept whole: taking it would break its gang (allowWholeBundle: "
	    "false)",
	"allowed, not needed: room was made without it",
	"allowed, but evicting it and the other allowed victims on its node "
	    "would not make room",
	"evicted, then undone: the job could still not be placed",
	"evicted",
};

const char *
victim_verdict_name(enum victim_verdict v)
{
	return v < VV_N ? names[v] : "?";
}

const char *
victim_verdict_text(enum victim_verdict v)
{
	return v < VV_N ? texts[v] : "?";
}

void
victim_note(struct s_job *j, struct s_task *t, enum victim_verdict v,
    const char *plugin)
{
	struct victim_note *vn;

	if (t->vnote_job == j && t->vnote < j->nvnotes &&
	    j->vnotes[t->vnote].t == t) {
		vn = &j->vnotes[t->vnote];
		if (v >= vn->v) {
			vn->v = v;
			vn->plugin = plugin;
		}
		return;
	}
	if (j->nvnotes >= VNOTES_MAX) {
		j->vnotes_more++;
		return;
	}
	XGROW(j->vnotes, j->capvnotes, (size_t)j->nvnotes + 1);
	vn = &j->vnotes[j->nvnotes];
	vn->t = t;
	vn->n = t->node;
	vn->v = v;
	vn->plugin = plugin;
	t->vnote_job = j;
	t->vnote = j->nvnotes++;
}

void
victim_settle(struct s_job *j)
{
	int i;

	for (i = 0; i < j->nvnotes; i++)
		if (j->vnotes[i].v == VV_EVICTED &&
		    j->vnotes[i].t->status != TS_RELEASING)
			j->vnotes[i].v = VV_UNDONE;
}
