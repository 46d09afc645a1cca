/*
 * What Ray's commands would do in a container on a simulated node, where
 * nothing runs (ray.h, ray_sim_effect): the node manager asks for each
 * container it starts, and a container taken here ends when its command
 * would have, with its exit code. Three are taken:
 * - a KubeRay submitter (RAY_JOB_SUBMISSION_ID in its env, and the head
 *   in its command line's `ray job submit --address URL` or, where that
 *   is $RAY_DASHBOARD_ADDRESS, in that env variable): `ray job submit
 *   ...; ray job logs --follow` (simsubmit.c). KubeRay 1.6's SidecarMode
 *   submitter has --address http://127.0.0.1:8265 and an empty
 *   RAY_DASHBOARD_ADDRESS;
 * - the Ray container of KubeRay's Redis cleanup Job (ray.io/node-type:
 *   redis-cleanup): Ray's cleanup_redis_storage (gcsstore.c);
 * - the Ray container (the first) of a worker (ray.io/node-type: worker)
 *   that has no volray.io/sim-duration of its own: `ray start --block`,
 *   whose raylet exits when its head is lost (raylet.c).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

enum effect_kind { SUBMITTER, CLEANUP, RAYLET, FAILED };

struct effect {
	enum effect_kind kind;
	void *h;
	wheel *w;
	wheel_timer fail;		/* FAILED: exits 1 on the next turn */
	void (*done)(void *, int);
	void *arg;
};

static void
on_fail(wheel_timer *t)
{
	struct effect *e = t->data;

	e->done(e->arg, 1);
}

/* An integer env variable of container c, else def. */
static int
env_int(ray *r, const char *ns, const cJSON *c, const char *name, int def)
{
	char *v = ray_pod_env(r->c, ns, c, name);
	int n = v != NULL && *v != '\0' ? atoi(v) : def;

	free(v);
	return n;
}

/*
 * The literal address of the `ray job submit --address URL` in container
 * c's command line (malloc'd), as that command would use it; NULL when
 * there is none or it is a shell variable's ($RAY_DASHBOARD_ADDRESS).
 */
static char *
command_address(const cJSON *c)
{
	const char *keys[] = { "command", "args" };
	const cJSON *a;
	const char *p, *q;
	size_t n;
	int i;

	for (i = 0; i < 2; i++) {
		cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(c,
		    keys[i])) {
			if (!cJSON_IsString(a) || (p = strstr(a->valuestring,
			    "ray job submit")) == NULL ||
			    (p = strstr(p, "--address")) == NULL)
				continue;
			p += strlen("--address");
			p += strspn(p, " =\"'");
			n = strcspn(p, " \"';\n\t");
			q = memchr(p, '$', n);
			if (n == 0 || q != NULL)
				return NULL;
			return xstrndup(p, n);
		}
	}
	return NULL;
}

static struct effect *
cleanup(ray *r, const char *ns, const char *pod, const cJSON *t,
    const cJSON *c, struct effect *e)
{
	struct gcs_target g;
	char *why;

	if (ray_gcs_target(r, ns, t, &g, &why) != 0) {
		log_info("ray: %s/%s: Redis cleanup fails: %s", ns, pod, why);
		free(why);
		e->kind = FAILED;
		wheel_add(e->w, &e->fail, 0, on_fail, e);
		return e;
	}
	e->kind = CLEANUP;
	e->h = ray_gcs_clean(r, &g, env_int(r, ns, c,
	    "RAY_redis_db_connect_retries", 120), env_int(r, ns, c,
	    "RAY_redis_db_connect_wait_milliseconds", 500), e->done, e->arg);
	ray_gcs_target_free(&g);
	return e;
}

/*
 * Whether a pod can have an effect at all, read without parsing it (every
 * container start on a simulated node asks): a Ray node-type label, or a
 * submission id in a container's env (ray_pod_env reads env entries by
 * name, so the name is in the JSON).
 */
static int
may_have_effect(const store_obj *o)
{
	static const char id[] = "RAY_JOB_SUBMISSION_ID";

	return cJSON_GetObjectItemCaseSensitive(o->labels,
	    "ray.io/node-type") != NULL || memmem(o->json->data,
	    o->json->len, id, sizeof id - 1) != NULL;
}

void *
ray_sim_effect(void *rp, const char *ns, const char *pod, const char *ctr,
    int init, void (*done)(void *, int), void *arg)
{
	ray *r = rp;
	const store_obj *o = client_get(r->c, "pods", ns, pod);
	const cJSON *type, *cl, *c, *ann, *found = NULL;
	struct effect *e;
	char key[320];
	char *addr, *id;
	cJSON *t;
	int first = 1, index = 0;

	if (o == NULL || !may_have_effect(o))
		return NULL;
	t = store_obj_tree(o);
	cJSON_ArrayForEach(c, json_at(t, init ? "spec.initContainers" :
	    "spec.containers")) {
		if (json_str(c, "name") != NULL && strcmp(json_str(c, "name"),
		    ctr) == 0) {
			found = c;
			first = index == 0;
			break;
		}
		index++;
	}
	if (found == NULL) {
		cJSON_Delete(t);
		return NULL;
	}
	e = xcalloc(1, sizeof *e);
	e->w = r->wheel;
	e->done = done;
	e->arg = arg;
	id = ray_pod_env(r->c, ns, found, "RAY_JOB_SUBMISSION_ID");
	if ((addr = command_address(found)) == NULL)
		addr = ray_pod_env(r->c, ns, found, "RAY_DASHBOARD_ADDRESS");
	type = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/node-type");
	cl = cJSON_GetObjectItemCaseSensitive(o->labels, "ray.io/cluster");
	ann = json_at(t, "metadata.annotations");
	util_strf(key, sizeof key, "volray.io/sim-duration.%s", ctr);
	if (addr != NULL && id != NULL) {
		e->kind = SUBMITTER;
		e->h = ray_sim_submit(r, ns, pod, addr, id, done, arg);
	} else if (!init && first && cJSON_IsString(type) &&
	    strcmp(type->valuestring, "redis-cleanup") == 0) {
		e = cleanup(r, ns, pod, t, found, e);
	} else if (!init && first && cJSON_IsString(type) &&
	    strcmp(type->valuestring, "worker") == 0 && cJSON_IsString(cl) &&
	    cJSON_GetObjectItemCaseSensitive(ann, "volray.io/sim-duration") ==
	    NULL && cJSON_GetObjectItemCaseSensitive(ann, key) == NULL) {
		e->kind = RAYLET;
		e->h = ray_raylet_start(r, ns, pod, cl->valuestring, env_int(r,
		    ns, found, "RAY_GCS_RPC_SERVER_RECONNECT_TIMEOUT_S", 60),
		    done, arg);
	} else {
		free(e);
		e = NULL;
	}
	free(addr);
	free(id);
	cJSON_Delete(t);
	return e;
}

void
ray_sim_effect_cancel(void *handle)
{
	struct effect *e = handle;

	if (e == NULL)
		return;
	switch (e->kind) {
	case SUBMITTER:
		ray_sim_submit_cancel(e->h);
		break;
	case CLEANUP:
		ray_gcs_clean_cancel(e->h);
		break;
	case RAYLET:
		ray_raylet_cancel(e->h);
		break;
	case FAILED:
		wheel_cancel(e->w, &e->fail);
		break;
	}
	free(e);
}
