/*
 * The raylet of a simulated Ray worker: what happens to a worker when
 * its head goes. A worker joins the GCS session of its cluster's head
 * (the head pod labelled with the same ray.io/cluster, serving); when no
 * head serves, it waits RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S (60 by
 * default; KubeRay sets 600 with GCS fault tolerance) for one, and its
 * Ray container exits 1 when none came back, as Ray's raylet exits.
 * A head that comes back with another session (a new head without GCS
 * fault tolerance: a new cluster) ends it at once; one with the same
 * session (recovered from Redis, gcsstore.c) keeps it. The kubelet then
 * restarts the container (restartPolicy Always: it joins the new head)
 * or the pod fails (Never: KubeRay replaces it).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

/* A cluster's raylets: a head's change looks at them alone. */
struct group {
	char key[512];			/* "ns/cluster" */
	struct raylet *first;
};

struct raylet {
	ray *r;
	struct group *g;
	struct raylet *next, *prev;
	char ns[254], pod[254], cluster[254];
	char *session;			/* the session it joined, or NULL */
	int timeout_s;
	wheel_timer lost;		/* no head: the reconnect timeout */
	int armed;
	wheel_timer die;		/* exiting, on the loop's next turn */
	int dying;
	void (*done)(void *, int);
	void *arg;
};

struct find {
	const char *ns, *cluster;
	struct ray_head *found;
};

static int
find_one(const char *k, void *v, void *arg)
{
	struct ray_head *h = v;
	struct find *f = arg;

	(void)k;
	if (!h->running || h->dead || h->session == NULL ||
	    h->cluster == NULL || strcmp(h->ns, f->ns) != 0 ||
	    strcmp(h->cluster, f->cluster) != 0)
		return 0;
	f->found = h;
	return 1;
}

static void
on_die(wheel_timer *t)
{
	struct raylet *rl = t->data;

	rl->done(rl->arg, 1);
}

static void
die(struct raylet *rl, const char *why)
{
	if (rl->dying)
		return;
	rl->dying = 1;
	if (rl->armed)
		wheel_cancel(rl->r->wheel, &rl->lost);
	rl->armed = 0;
	log_info("ray: %s/%s: the raylet exits: %s", rl->ns, rl->pod, why);
	wheel_add(rl->r->wheel, &rl->die, 0, on_die, rl);
}

static void
on_lost(wheel_timer *t)
{
	struct raylet *rl = t->data;
	char why[160];

	rl->armed = 0;
	util_strf(why, sizeof why, "no GCS for %d s "
	    "(RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S)", rl->timeout_s);
	die(rl, why);
}

static void
check(struct raylet *rl)
{
	struct find f = { rl->ns, rl->cluster, NULL };

	if (rl->dying)
		return;
	hmap_each(rl->r->heads, find_one, &f);
	if (f.found == NULL) {
		if (rl->session != NULL && !rl->armed) {
			rl->armed = 1;
			wheel_add(rl->r->wheel, &rl->lost,
			    (uint64_t)rl->timeout_s * 1000, on_lost, rl);
		}
		return;
	}
	if (rl->armed) {
		wheel_cancel(rl->r->wheel, &rl->lost);
		rl->armed = 0;
	}
	if (rl->session == NULL)
		rl->session = xstrdup(f.found->session);
	else if (strcmp(rl->session, f.found->session) != 0)
		die(rl, "its head came back as another cluster (GCS session "
		    "changed; no GCS fault tolerance)");
}

static struct group *
group_of(ray *r, const char *ns, const char *cluster, int create)
{
	char key[512];
	struct group *g;

	util_strf(key, sizeof key, "%s/%s", ns, cluster);
	if (r->raylets == NULL)
		r->raylets = hmap_new();
	if ((g = hmap_get(r->raylets, key)) == NULL && create) {
		g = xcalloc(1, sizeof *g);
		memcpy(g->key, key, sizeof g->key);
		hmap_put(r->raylets, g->key, g);
	}
	return g;
}

struct raylet *
ray_raylet_start(ray *r, const char *ns, const char *pod,
    const char *cluster, int timeout_s, void (*done)(void *, int), void *arg)
{
	struct raylet *rl = xcalloc(1, sizeof *rl);

	rl->r = r;
	util_strf(rl->ns, sizeof rl->ns, "%s", ns);
	util_strf(rl->pod, sizeof rl->pod, "%s", pod);
	util_strf(rl->cluster, sizeof rl->cluster, "%s", cluster);
	rl->timeout_s = timeout_s > 0 ? timeout_s : 60;
	rl->done = done;
	rl->arg = arg;
	rl->g = group_of(r, ns, cluster, 1);
	rl->next = rl->g->first;
	if (rl->next != NULL)
		rl->next->prev = rl;
	rl->g->first = rl;
	check(rl);
	return rl;
}

void
ray_raylet_cancel(struct raylet *rl)
{
	if (rl == NULL)
		return;
	if (rl->prev != NULL)
		rl->prev->next = rl->next;
	else
		rl->g->first = rl->next;
	if (rl->next != NULL)
		rl->next->prev = rl->prev;
	if (rl->g->first == NULL) {
		hmap_del(rl->r->raylets, rl->g->key);
		free(rl->g);
	}
	if (rl->armed)
		wheel_cancel(rl->r->wheel, &rl->lost);
	if (rl->dying)
		wheel_cancel(rl->r->wheel, &rl->die);
	free(rl->session);
	free(rl);
}

void
ray_raylets_check(ray *r, const char *ns, const char *cluster)
{
	struct group *g;
	struct raylet *rl, *next;

	if (cluster == NULL || (g = group_of(r, ns, cluster, 0)) == NULL)
		return;
	/* check only arms timers: the group stays as it is meanwhile. */
	for (rl = g->first; rl != NULL; rl = next) {
		next = rl->next;
		check(rl);
	}
}
