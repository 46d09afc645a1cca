/*
 * Controller runtime.
 *
 * One Lua state holds every controller (luahost.c); C keeps, per
 * controller, the resolved resources, registry references to its functions
 * and a workqueue. The store's durable events are routed to queues; the
 * queues' ready callbacks call reconcile with {namespace, name, key},
 * each call in a coroutine of its own that may wait for its writes (see
 * struct run), up to MAX_RUNS at once per controller:
 *   nil                      -> done (forget the backoff)
 *   {requeue_after = s}      -> done, look again in s seconds
 *   {requeue = true}         -> retry with backoff
 *   error(...)               -> retry with backoff, Warning Event, log line
 * A reload builds and checks a whole new state before anything changes;
 * queues survive it, keyed by controller name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "ctrl/controller.h"
#include "ctrl/ctrlsel.h"
#include "ctrl/luaapi.h"
#include "ctrl/luahttp.h"
#include "ctrl/luawait.h"
#include "ctrl/objpaths.h"
#include "ctrl/wqueue.h"
#include "client/recorder.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"
#include "registry/resource.h"

#define BATCH 64
#define SLICE_US 50000
/* Reconciles in flight per controller (client-go's workers, but these
   cost a coroutine each, not a thread). */
#define MAX_RUNS 64

struct watchdef {
	const resource *r;
	int map_ref;
	selector *fields;	/* only objects that match reach map */
	int filter;		/* fields as a store filter, or -1 */
	int previous;		/* map the object before a change too */
	int initial;		/* map every object at (re)load too */
	char **paths;		/* map sees only these (NULL: all) */
	int npaths;
	char **changes;		/* a change maps only when one of these
				   moved (NULL: any change) */
	int nchanges;
};

static const char *const ctrl_groups[] = { USER_GROUP_AUTHENTICATED };

struct ctrl {
	controller_rt *rt;
	char *name;
	char *user_name;           /* system:controller:NAME-controller */
	user_info user;
	const resource *primary;
	selector *fields;	/* only primaries that match are queued */
	int filter;		/* fields as a store filter, or -1 */
	const resource **owns;
	int nowns;
	struct watchdef *watches;
	int nwatches;
	int reconcile_ref;
	wqueue *q;
	recorder *rec;             /* its Events, as event_source */
	char *event_source;        /* their source.component */
	struct run *runs;          /* reconciles in flight */
	int nruns;
	char *file;                /* the script, after overrides */
	char loaded_at[32];        /* RFC 3339, when it was loaded */
};

struct controller_rt {
	uv_loop_t *loop;
	client *client;
	luahost *host;
	lua_State *L;
	struct luactx api;
	recorder *rec;             /* Events outside any controller's calls */
	struct ctrl **ctrls;
	int nctrls;
	const ctrlsel *sel;        /* --controllers; NULL: every one */
	struct run *ready;         /* answered, to resume */
	uv_timer_t *resume_timer;  /* resumes them on the next turn */
	struct {
		uint64_t peak_runs;  /* most reconciles in flight at once */
		uint64_t reconciles;
		uint64_t errors;
		uint64_t lua_usec;   /* wall time inside Lua reconcile calls */
		uint64_t filters_refused; /* field selectors left unfiltered */
	} stats;
};

static void abandon_runs(struct ctrl *);
static void resume_ready(uv_timer_t *);

static void
ctrl_free(struct ctrl *c, int keep_queue)
{
	int i, j;

	if (c == NULL)
		return;
	abandon_runs(c);
	if (!keep_queue && c->q != NULL)
		wqueue_free(c->q);
	if (!keep_queue)
		recorder_free(c->rec);
	free(c->name);
	free(c->event_source);
	free(c->file);
	free(c->user_name);
	free(c->owns);
	/*
	 * Store filters go back (their slots serve the next load's selectors)
	 * before the selectors they test are freed. No event reaches c now
	 * (a reload has swapped it out of rt->ctrls, a failed load never put
	 * it there, or the runtime is going), so none asks them again; what
	 * they said of versions is not believed by a filter that takes the
	 * slot (store_filter_add).
	 */
	if (c->filter >= 0)
		client_filter_remove(c->rt->client, c->filter);
	selector_free(c->fields);
	for (i = 0; i < c->nwatches; i++) {
		if (c->watches[i].filter >= 0)
			client_filter_remove(c->rt->client,
			    c->watches[i].filter);
		selector_free(c->watches[i].fields);
		for (j = 0; j < c->watches[i].npaths; j++)
			free(c->watches[i].paths[j]);
		free(c->watches[i].paths);
		for (j = 0; j < c->watches[i].nchanges; j++)
			free(c->watches[i].changes[j]);
		free(c->watches[i].changes);
	}
	free(c->watches);
	free(c);
}

static void enqueue_all(struct ctrl *);

/* A watch's list of paths (paths, changes), from the value on top (nil:
   none): 0, or -1 when it is not a list of strings. */
static int
watch_paths(lua_State *L, char ***paths, int *npaths)
{
	int n, i;

	if (lua_isnil(L, -1))
		return 0;
	if (!lua_istable(L, -1))
		return -1;
	n = (int)lua_rawlen(L, -1);
	*paths = xcalloc(n + 1, sizeof **paths);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, i);
		if (!lua_isstring(L, -1)) {
			lua_pop(L, 1);
			return -1;
		}
		(*paths)[(*npaths)++] = xstrdup(lua_tostring(L, -1));
		lua_pop(L, 1);
	}
	return 0;
}

/* A watch's field selector, as a store filter. */
static int
match_fields(void *sel, const cJSON *tree)
{
	return selector_match_fields(sel, tree);
}

/* One log line per event: a traceback's newlines become '|'. */
static void
fold_lines(char *s)
{
	for (; *s; s++)
		if (*s == '\n')
			*s = '|';
		else if (*s == '\t')
			*s = ' ';
}

/*
 * One reconcile of one key, in a coroutine of its own: started by
 * on_ready, suspended while a write waits for its answer (luawait.c),
 * resumed on a later turn of the loop by resume_ready; when it ends,
 * run_step hands the key back to the queue as the result says.
 * The key stays "processing" in the queue until then, so a key is never
 * reconciled twice at once and its reconciles keep their order.
 */
/* Runs that took at least this long on the loop hold their key as long
   (wqueue_done_hold). */
#define HOLD_FROM_USEC	20000

struct run {
	struct luarun lr;	/* what the coroutine's extra space points at */
	struct ctrl *c;
	lua_State *co;
	int ref;		/* co in the registry, so that it lives */
	char *key;
	char ns[256];
	const char *name;
	uint64_t ticks;		/* instructions spent, across resumes */
	uint64_t busy_usec;	/* time on the loop, across resumes */
	int ready;		/* on rt->ready, to resume */
	struct run *next;	/* in c->runs */
	struct run *next_ready;
};

/* Start co: the reconcile function and its {namespace, name, key}. Run
   under protection: memory may be short. */
static int
start_co(lua_State *L)
{
	struct run *r = lua_touserdata(L, 1);
	lua_State *co = lua_newthread(L);

	r->ref = luaL_ref(L, LUA_REGISTRYINDEX);
	r->co = co;
	*(struct luarun **)lua_getextraspace(co) = &r->lr;
	lua_rawgeti(co, LUA_REGISTRYINDEX, r->c->reconcile_ref);
	lua_createtable(co, 0, 3);
	lua_pushstring(co, r->ns);
	lua_setfield(co, -2, "namespace");
	lua_pushstring(co, r->name);
	lua_setfield(co, -2, "name");
	lua_pushstring(co, r->key);
	lua_setfield(co, -2, "key");
	return 0;
}

/*
 * What a finished reconcile asked for, from its result on top of the
 * coroutine (light userdata 1), moved here: pushes 0 (done), 1
 * (requeue_after, and the seconds) or 2 (requeue with backoff). Under
 * protection: a result table's metamethods are the script's.
 */
static int
read_result(lua_State *L)
{
	lua_State *co = lua_touserdata(L, 1);
	double s;

	lua_xmove(co, L, 1);
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "requeue_after");
		if (lua_isnumber(L, -1)) {
			s = lua_tonumber(L, -1);
			lua_pushinteger(L, 1);
			lua_pushnumber(L, s);
			return 2;
		}
		lua_pop(L, 1);
		lua_getfield(L, -1, "requeue");
		if (lua_toboolean(L, -1)) {
			lua_pushinteger(L, 2);
			lua_pushnumber(L, 0);
			return 2;
		}
	}
	lua_pushinteger(L, 0);
	lua_pushnumber(L, 0);
	return 2;
}

/* The running reconcile's user, controller, key and recorder, for the
   volray module (luactx.h); NULL: none runs. */
static void
set_current(controller_rt *rt, struct run *r)
{
	rt->api.user = r != NULL ? &r->c->user : NULL;
	rt->api.owner = r != NULL ? r->c->name : NULL;
	rt->api.key = r != NULL ? r->key : NULL;
	rt->api.rec = r != NULL ? r->c->rec : rt->rec;
}

/* Unlink r from c's runs and from the ready list; free it. */
static void
run_free(struct run *r)
{
	controller_rt *rt = r->c->rt;
	struct run **p;

	for (p = &r->c->runs; *p != NULL; p = &(*p)->next)
		if (*p == r) {
			*p = r->next;
			break;
		}
	for (p = &rt->ready; *p != NULL; p = &(*p)->next_ready)
		if (*p == r) {
			*p = r->next_ready;
			break;
		}
	r->c->nruns--;
	free(r->key);
	free(r);
}

/* A failed reconcile: log it, a Warning Event on the object, retry. */
static void
run_failed(struct run *r, char *err)
{
	struct ctrl *c = r->c;
	controller_rt *rt = c->rt;
	const store_obj *o;

	rt->stats.errors++;
	fold_lines(err);
	log_warn("controller %s: reconcile %s failed: %s", c->name, r->key,
	    err);
	o = client_get(rt->client, c->primary->store_key, r->ns, r->name);
	if (o != NULL) {
		cJSON *t = store_obj_tree(o);
		char msg[1024], *nl;

		/* The first line of the error; the log has the rest. */
		snprintf(msg, sizeof msg, "%s", err);
		if ((nl = strchr(msg, '|')) != NULL)
			*nl = '\0';
		set_current(rt, r);
		luaapi_event(&rt->api, c->rec, t, "Warning",
		    "ReconcileError", msg, NULL);
		set_current(rt, NULL);
		cJSON_Delete(t);
	}
	wqueue_add_rate_limited(c->q, r->key);
}

/* The reconcile has returned: act on its result, give the key back. */
static void
run_returned(struct run *r)
{
	lua_State *L = r->c->rt->L;
	wqueue *q = r->c->q;
	double s;
	int what;

	lua_pushcfunction(L, read_result);
	lua_pushlightuserdata(L, r->co);
	if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
		char *err = xstrdup(lua_tostring(L, -1) ? lua_tostring(L, -1) :
		    "bad result");

		lua_pop(L, 1);
		run_failed(r, err);
		free(err);
		return;
	}
	what = (int)lua_tointeger(L, -2);
	s = lua_tonumber(L, -1);
	lua_pop(L, 2);
	if (what == 1) {
		wqueue_forget(q, r->key);
		wqueue_add_after(q, r->key, s > 0 ? (uint64_t)(s * 1000) : 0);
	} else if (what == 2)
		wqueue_add_rate_limited(q, r->key);
	else
		wqueue_forget(q, r->key);
}

/* Run r's coroutine until it waits or ends; at its end the key goes back
   to the queue and r is freed. */
static void
run_step(struct run *r, int nargs)
{
	controller_rt *rt = r->c->rt;
	char *err = NULL;
	uint64_t t0 = util_usec();
	int rc, nres = 0;

	set_current(rt, r);
	rc = luahost_resume(r->co, nargs, &nres, &r->ticks, &err);
	set_current(rt, NULL);
	rt->stats.lua_usec += util_usec() - t0;
	r->busy_usec += util_usec() - t0;
	if (rc == LUA_YIELD) {
		if (r->lr.wait == NULL) {
			/* A yield of the script's own (coroutine.yield is not
			   in the sandbox, but be sure): not a wait. */
			err = xstrdup("reconcile yielded outside a write");
			rc = -1;
		} else
			return;
	}
	rt->stats.reconciles++;
	if (rc != 0)
		run_failed(r, err);
	else {
		/* The first value returned is the result, as one. */
		if (nres == 0)
			lua_pushnil(r->co);
		else if (nres > 1)
			lua_pop(r->co, nres - 1);
		run_returned(r);
	}
	free(err);
	luaL_unref(rt->L, LUA_REGISTRYINDEX, r->ref);
	/* A run that held the loop long (a pass over thousands of objects,
	   each of whose changes brings the key back) is not run again before
	   as long has passed: at most half of the loop goes to one key. */
	wqueue_done_hold(r->c->q, r->key, r->busy_usec >= HOLD_FROM_USEC ?
	    r->busy_usec / 1000 : 0);
	run_free(r);
	/* Give back what a failed run left behind, as luahost_call does. */
	if (rc != 0)
		lua_gc(rt->L, LUA_GCCOLLECT);
}

/* A write's answer is in (luawait.c): resume r on the next turn. */
static void
run_wake(struct luarun *lr)
{
	struct run *r = (struct run *)lr;
	controller_rt *rt = r->c->rt;

	if (r->ready)
		return;
	r->ready = 1;
	r->next_ready = rt->ready;
	rt->ready = r;
	uv_timer_start(rt->resume_timer, resume_ready, 0, 0);
}

/* Resume every reconcile whose answer is in. */
static void
resume_ready(uv_timer_t *t)
{
	controller_rt *rt = t->data;
	struct run *r;

	while ((r = rt->ready) != NULL) {
		rt->ready = r->next_ready;
		r->ready = 0;
		run_step(r, 0);
	}
}

/* Start a reconcile of key; it runs until it ends or waits. */
static void
run_start(struct ctrl *c, const char *key)
{
	controller_rt *rt = c->rt;
	struct run *r = xcalloc(1, sizeof *r);
	const char *slash = strchr(key, '/');
	lua_State *L = rt->L;

	r->c = c;
	r->key = xstrdup(key);
	r->name = r->key;
	r->ref = LUA_NOREF;
	r->lr.wake = run_wake;
	if (slash != NULL) {
		snprintf(r->ns, sizeof r->ns, "%.*s", (int)(slash - key), key);
		r->name = r->key + (slash - key) + 1;
	}
	r->next = c->runs;
	c->runs = r;
	c->nruns++;
	if ((uint64_t)c->nruns > rt->stats.peak_runs)
		rt->stats.peak_runs = c->nruns;
	lua_pushcfunction(L, start_co);
	lua_pushlightuserdata(L, r);
	if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
		char *err = xstrdup(lua_tostring(L, -1) ? lua_tostring(L, -1) :
		    "cannot start");

		lua_pop(L, 1);
		if (r->ref != LUA_NOREF)
			luaL_unref(L, LUA_REGISTRYINDEX, r->ref);
		rt->stats.reconciles++;
		run_failed(r, err);
		free(err);
		wqueue_done(c->q, r->key);
		run_free(r);
		lua_gc(L, LUA_GCCOLLECT);
		return;
	}
	run_step(r, 1);
}

/*
 * Give up c's reconciles in flight (a reload closes their state): their
 * answers are dropped when they come, their keys queued again for whoever
 * takes the queue.
 */
static void
abandon_runs(struct ctrl *c)
{
	char *key;

	while (c->runs != NULL) {
		struct run *r = c->runs;

		if (r->lr.wait != NULL)
			luawait_abandon(r->lr.wait);
		key = xstrdup(r->key);
		run_free(r);
		if (c->q != NULL) {
			wqueue_done(c->q, key);
			wqueue_add(c->q, key);
		}
		free(key);
	}
}

static void
on_ready(wqueue *q, void *arg)
{
	struct ctrl *c = arg;
	uint64_t t0 = util_usec();
	const char *key;
	int n;

	/*
	 * At most BATCH keys a turn, no more once SLICE_US is spent, and no
	 * more than MAX_RUNS in flight: a reconcile that waits for a write
	 * holds its coroutine (and the memory it reached) until the answer.
	 * A run that ends gives its key back (wqueue_done), which calls
	 * this again.
	 */
	for (n = 0; n < BATCH && c->nruns < MAX_RUNS &&
	    (key = wqueue_get(q)) != NULL; n++) {
		run_start(c, key);
		if (util_usec() - t0 > SLICE_US)
			break;
	}
}

static void
enqueue_obj(struct ctrl *c, const store_obj *o)
{
	char key[600];

	if (*o->ns)
		snprintf(key, sizeof key, "%s/%s", o->ns, o->name);
	else
		snprintf(key, sizeof key, "%s", o->name);
	wqueue_add(c->q, key);
}

/* Enqueue the owner named by o's controller reference, if it is ours. */
static void
enqueue_owner(struct ctrl *c, const store_obj *o)
{
	char key[600];
	int i;

	for (i = 0; i < o->nowners; i++) {
		const char *av = o->owners[i].api_version;
		const char *slash = strchr(av, '/');
		size_t gl = slash ? (size_t)(slash - av) : 0;

		/* Same kind and the same API group ("" for the core group). */
		if (!o->owners[i].controller ||
		    strcmp(o->owners[i].kind, c->primary->kind) != 0 ||
		    strlen(c->primary->group) != gl ||
		    strncmp(av, c->primary->group, gl) != 0)
			continue;
		if (c->primary->namespaced)
			snprintf(key, sizeof key, "%s/%s", o->ns,
			    o->owners[i].name);
		else
			snprintf(key, sizeof key, "%s", o->owners[i].name);
		wqueue_add(c->q, key);
	}
}

/* Whether o matches a field selector (none: yes), judged when the
   version was written (filter), or else from its bytes or its tree. */
static int
fields_match(const selector *fields, int filter, const store_obj *o)
{
	int ok;

	if (fields == NULL)
		return 1;
	ok = store_obj_filtered(o, filter);
	if (ok < 0 && selector_fields_may_match(fields, o->json->data,
	    o->json->len)) {
		cJSON *t = store_obj_tree(o);

		ok = selector_match_fields(fields, t);
		cJSON_Delete(t);
	}
	return ok > 0;
}

/* Ask a watch's map function which keys an object concerns; an object
 * its field selector refuses never crosses into Lua. */
static void
enqueue_mapped(struct ctrl *c, const struct watchdef *w, const store_obj *o)
{
	lua_State *L = c->rt->L;
	struct luactx saved;
	char *err = NULL;
	int i, n, rc;

	if (!fields_match(w->fields, w->filter, o))
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, w->map_ref);
	if (w->npaths > 0)
		objpaths_push(L, o, w->paths, w->npaths);
	else
		luaconv_push_json(L, o->json->data, o->json->len);
	/* A map may run while a reconcile does (its write's events): that
	   reconcile's user and recorder come back after. */
	saved = c->rt->api;
	c->rt->api.user = &c->user;
	c->rt->api.rec = c->rec;
	rc = luahost_call(L, 1, 1, &err);
	c->rt->api.user = saved.user;
	c->rt->api.rec = saved.rec;
	if (rc != 0) {
		fold_lines(err);
		log_warn("controller %s: watch map failed: %s", c->name, err);
		free(err);
		return;
	}
	if (lua_istable(L, -1)) {
		n = (int)lua_rawlen(L, -1);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, i);
			if (lua_isstring(L, -1))
				wqueue_add(c->q, lua_tostring(L, -1));
			lua_pop(L, 1);
		}
	} else if (lua_isstring(L, -1))
		wqueue_add(c->q, lua_tostring(L, -1));
	lua_pop(L, 1);
}

static void
on_event(void *arg, const store_event *e)
{
	controller_rt *rt = arg;
	const char *res = e->obj->res;
	int i, j;

	for (i = 0; i < rt->nctrls; i++) {
		struct ctrl *c = rt->ctrls[i];

		if (strcmp(res, c->primary->store_key) == 0 &&
		    fields_match(c->fields, c->filter, e->obj))
			enqueue_obj(c, e->obj);
		for (j = 0; j < c->nowns; j++) {
			if (strcmp(res, c->owns[j]->store_key) != 0)
				continue;
			enqueue_owner(c, e->obj);
			if (e->old != NULL)
				enqueue_owner(c, e->old);
		}
		/* With previous, the old object too: a change can move it
		 * away from a key (a PodGroup that changes queue concerns
		 * both queues). */
		for (j = 0; j < c->nwatches; j++) {
			const struct watchdef *w = &c->watches[j];

			if (strcmp(res, w->r->store_key) != 0)
				continue;
			/* Creations and deletions always; a change only when
			   a path it names may have moved. */
			if (w->nchanges > 0 && e->type == STORE_MODIFIED &&
			    e->old != NULL && objpaths_same(e->old, e->obj,
			    w->changes, w->nchanges))
				continue;
			enqueue_mapped(c, w, e->obj);
			/* An old version the map would see as the new one
			   maps to the same keys. */
			if (w->previous && e->old != NULL &&
			    !objpaths_same(e->old, e->obj, w->paths,
			    w->npaths))
				enqueue_mapped(c, w, e->old);
		}
	}
}

/* After a (re)load: every primary object, and the objects of each watch
   marked initial through its map, as an informer's first list adds
   them. */
static void
enqueue_all(struct ctrl *c)
{
	store_obj *const *objs;
	size_t n = client_list(c->rt->client, c->primary->store_key, NULL,
	    &objs);
	size_t i;
	int j;

	for (i = 0; i < n; i++)
		enqueue_obj(c, objs[i]);
	for (j = 0; j < c->nwatches; j++) {
		const struct watchdef *w = &c->watches[j];

		if (!w->initial)
			continue;
		n = client_list(c->rt->client, w->r->store_key, NULL, &objs);
		for (i = 0; i < n; i++)
			enqueue_mapped(c, w, objs[i]);
	}
}

struct flow_line {
	FILE *f;
	const char *ctrl;
	int longest;		/* the longest wait, else the sum and count */
};

static void
print_flow(const struct wqueue_flow_stats *st, void *arg)
{
	struct flow_line *l = arg;

	if (l->longest) {
		fprintf(l->f, "volray_workqueue_longest_wait_seconds{controller="
		    "\"%s\",namespace=\"%s\"} %.3f\n", l->ctrl, st->ns,
		    st->wait_max_ms / 1e3);
		return;
	}
	fprintf(l->f, "volray_workqueue_wait_seconds_sum{controller=\"%s\","
	    "namespace=\"%s\"} %.3f\n", l->ctrl, st->ns, st->wait_sum_ms / 1e3);
	fprintf(l->f, "volray_workqueue_wait_seconds_count{controller=\"%s\","
	    "namespace=\"%s\"} %llu\n", l->ctrl, st->ns,
	    (unsigned long long)st->gets);
}

/* The queues' waits per controller and namespace. */
static void
print_queue_waits(FILE *f, controller_rt *rt)
{
	struct flow_line l = { f, NULL, 0 };
	int i;

	fprintf(f, "# HELP volray_workqueue_wait_seconds How long a "
	    "controller's keys waited in its queue (added to handed out), "
	    "per namespace; namespaces take turns.\n"
	    "# TYPE volray_workqueue_wait_seconds summary\n");
	for (i = 0; i < rt->nctrls; i++) {
		l.ctrl = rt->ctrls[i]->name;
		wqueue_each_flow(rt->ctrls[i]->q, print_flow, &l);
	}
	fprintf(f, "# HELP volray_workqueue_longest_wait_seconds The longest "
	    "wait of a key in a controller's queue, per namespace.\n"
	    "# TYPE volray_workqueue_longest_wait_seconds gauge\n");
	l.longest = 1;
	for (i = 0; i < rt->nctrls; i++) {
		l.ctrl = rt->ctrls[i]->name;
		wqueue_each_flow(rt->ctrls[i]->q, print_flow, &l);
	}
}

/* Controller series for /metrics. */
static void
print_metrics(FILE *f, void *arg)
{
	controller_rt *rt = arg;
	int i;

	fprintf(f, "# TYPE volray_reconciles_total counter\n"
	    "volray_reconciles_total %llu\n"
	    "# TYPE volray_reconcile_errors_total counter\n"
	    "volray_reconcile_errors_total %llu\n"
	    "# TYPE volray_lua_seconds_total counter\n"
	    "volray_lua_seconds_total %g\n"
	    "# HELP volray_lua_api_seconds_total Time in C inside volray.* "
	    "calls made by scripts (part of volray_lua_seconds_total).\n"
	    "# TYPE volray_lua_api_seconds_total counter\n"
	    "volray_lua_api_seconds_total %g\n"
	    "# TYPE volray_lua_memory_bytes gauge\n"
	    "volray_lua_memory_bytes %zu\n"
	    "# HELP volray_reconciles_in_flight_peak The most reconciles "
	    "of one controller in flight at once (started, not ended).\n"
	    "# TYPE volray_reconciles_in_flight_peak gauge\n"
	    "volray_reconciles_in_flight_peak %llu\n"
	    "# HELP volray_controller_store_filters Store filters in use: "
	    "the loaded controllers' field selectors, judged as versions are "
	    "written (at most %d).\n"
	    "# TYPE volray_controller_store_filters gauge\n"
	    "volray_controller_store_filters %d\n"
	    "# HELP volray_controller_store_filters_refused_total Field "
	    "selectors loaded without a store filter (none was left): their "
	    "events are parsed to be judged.\n"
	    "# TYPE volray_controller_store_filters_refused_total counter\n"
	    "volray_controller_store_filters_refused_total %llu\n"
	    "# TYPE volray_workqueue_depth gauge\n",
	    (unsigned long long)rt->stats.reconciles,
	    (unsigned long long)rt->stats.errors, rt->stats.lua_usec / 1e6,
	    luaapi_usec / 1e6, rt->L ? luahost_memory(rt->L) : 0,
	    (unsigned long long)rt->stats.peak_runs, STORE_MAX_FILTERS,
	    client_filter_count(rt->client),
	    (unsigned long long)rt->stats.filters_refused);
	for (i = 0; i < rt->nctrls; i++)
		fprintf(f, "volray_workqueue_depth{controller=\"%s\"} %zu\n",
		    rt->ctrls[i]->name, wqueue_len(rt->ctrls[i]->q));
	fprintf(f, "# TYPE volray_reconciles_in_flight gauge\n");
	for (i = 0; i < rt->nctrls; i++)
		fprintf(f, "volray_reconciles_in_flight{controller=\"%s\"} "
		    "%d\n", rt->ctrls[i]->name, rt->ctrls[i]->nruns);
	print_queue_waits(f, rt);
}

/*
 * Stems whose kube-controller-manager service account (and bootstrap
 * ClusterRole, system:controller:NAME in Kubernetes 1.34's
 * controller_policy.go) is spelt otherwise: the user is kube's, so a
 * binding or an audit line reads as it would against kube.
 */
static const char *const kube_names[][2] = {
	{ "daemonset", "daemon-set" },
	{ "endpoints", "endpoint" },
	{ "replicationcontroller", "replication" },
	{ "resourceclaim", "resource-claim" },
	{ "serviceaccount", "service-account" },
};

char *
controller_user_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof kube_names / sizeof kube_names[0]; i++)
		if (strcmp(name, kube_names[i][0]) == 0)
			name = kube_names[i][1];
	return util_printf("system:controller:%s-controller", name);
}

/* A response to a controller's volray.http call arrived: look again. */
static void
http_wake(void *arg, const char *owner, const char *key)
{
	controller_rt *rt = arg;
	int i;

	for (i = 0; i < rt->nctrls; i++)
		if (strcmp(rt->ctrls[i]->name, owner) == 0)
			wqueue_add(rt->ctrls[i]->q, key);
}

void
controller_set_http(controller_rt *rt, luahttp *h)
{
	rt->api.http = h;
	luahttp_set_wake(h, http_wake, rt);
}

void
controller_set_authorizer(controller_rt *rt, rbac *authz)
{
	rt->api.authz = authz;
}

void
controller_set_root_ca(controller_rt *rt, const char *pem)
{
	rt->api.root_ca = pem;
}

void
controller_set_batch_scheduler(controller_rt *rt, const char *name)
{
	rt->api.batch_scheduler = name;
}

static void
close_free(uv_handle_t *h)
{
	free(h);
}

controller_rt *
controller_new(uv_loop_t *loop, client *cl, luahost *host)
{
	controller_rt *rt = xcalloc(1, sizeof *rt);

	rt->loop = loop;
	rt->client = cl;
	rt->host = host;
	rt->api.client = cl;
	rt->rec = recorder_new(cl, "volray");
	rt->api.rec = rt->rec;
	rt->resume_timer = xcalloc(1, sizeof *rt->resume_timer);
	uv_timer_init(loop, rt->resume_timer);
	rt->resume_timer->data = rt;
	client_subscribe(cl, on_event, rt);
	metrics_add_source(print_metrics, rt);
	return rt;
}

void
controller_free(controller_rt *rt)
{
	int i;

	if (rt == NULL)
		return;
	for (i = 0; i < rt->nctrls; i++)
		ctrl_free(rt->ctrls[i], 0);
	free(rt->ctrls);
	luahost_state_close(rt->L);
	recorder_free(rt->rec);
	uv_close((uv_handle_t *)rt->resume_timer, close_free);
	free(rt);
}

static const resource *
field_resource(lua_State *L, int idx, const char *field, const char *file,
    char **cause)
{
	const resource *r;

	lua_getfield(L, idx, field);
	if (!lua_isstring(L, -1)) {
		lua_pop(L, 1);
		*cause = util_printf("%s: '%s' must be a resource string like "
		    "\"apps/v1/replicasets\"", file, field);
		return NULL;
	}
	r = luaapi_resource(lua_tostring(L, -1));
	if (r == NULL)
		*cause = util_printf("%s: unknown resource '%s' in '%s'",
		    file, lua_tostring(L, -1), field);
	lua_pop(L, 1);
	return r;
}

/*
 * The store had no filter left for a field selector: it still works, but
 * each event of its resource is judged from the object's bytes. Said
 * once in the log; counted in /metrics.
 */
static void
filter_refused(controller_rt *rt, const char *ctrl, const char *what)
{
	if (rt->stats.filters_refused++ == 0)
		log_warn("controller %s: %s: no store filter left (%d in use); "
		    "its events are parsed to be judged (said once)", ctrl,
		    what, client_filter_count(rt->client));
}

/*
 * A field selector from the value on top of L (nil: none), as a store
 * filter of r's objects; what names it in messages. 0, or -1 with *cause.
 */
static int
fields_from(struct ctrl *c, lua_State *L, const resource *r, const char *rel,
    const char *what, selector **fields, int *filter, char **cause)
{
	char *why = NULL;

	if (lua_isnil(L, -1))
		return 0;
	if (!lua_isstring(L, -1)) {
		*cause = util_printf("%s: %s must be a field selector string",
		    rel, what);
		return -1;
	}
	if ((*fields = selector_parse_fields(lua_tostring(L, -1), &why)) ==
	    NULL) {
		*cause = util_printf("%s: %s: %s", rel, what, why ? why :
		    "bad field selector");
		free(why);
		return -1;
	}
	*filter = client_filter_add(c->rt->client, r->store_key, match_fields,
	    *fields);
	if (*filter < 0)
		filter_refused(c->rt, c->name, what);
	return 0;
}

/* The primary resource, its field selector and reconcile, from the
   table at t. 0, or -1 with *cause. */
static int
primary_from_table(struct ctrl *c, lua_State *L, int t, const char *rel,
    char **cause)
{
	int rc;

	if ((c->primary = field_resource(L, t, "primary", rel, cause)) == NULL)
		return -1;
	lua_getfield(L, t, "fields");
	rc = fields_from(c, L, c->primary, rel, "fields", &c->fields,
	    &c->filter, cause);
	lua_pop(L, 1);
	if (rc != 0)
		return -1;
	lua_getfield(L, t, "reconcile");
	if (!lua_isfunction(L, -1)) {
		lua_pop(L, 1);
		*cause = util_printf("%s: 'reconcile' must be a function", rel);
		return -1;
	}
	c->reconcile_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	return 0;
}

/* The owned resources, from the table at t. 0, or -1 with *cause. */
static int
owns_from_table(struct ctrl *c, lua_State *L, int t, const char *rel,
    char **cause)
{
	int i, n;

	lua_getfield(L, t, "owns");
	if (lua_istable(L, -1)) {
		n = (int)lua_rawlen(L, -1);
		c->owns = xcalloc(n + 1, sizeof *c->owns);
		for (i = 1; i <= n; i++) {
			lua_rawgeti(L, -1, i);
			c->owns[c->nowns] = lua_isstring(L, -1) ?
			    luaapi_resource(lua_tostring(L, -1)) : NULL;
			lua_pop(L, 1);
			if (c->owns[c->nowns] == NULL) {
				*cause = util_printf("%s: owns[%d]: unknown "
				    "resource", rel, i);
				lua_pop(L, 1);
				return -1;
			}
			c->nowns++;
		}
	}
	lua_pop(L, 1);
	return 0;
}

/*
 * One watch, {resource=, map=, previous=, initial=, paths=, changes=,
 * fields=}, from the value on top of L (the i-th of watches) into w. 0,
 * or -1 with *cause; the stack is left as it was either way.
 */
static int
watch_from_table(struct ctrl *c, lua_State *L, int i, struct watchdef *w,
    const char *rel, char **cause)
{
	char what[64];
	int rc;

	if (!lua_istable(L, -1) || (w->r = field_resource(L, lua_gettop(L),
	    "resource", rel, cause)) == NULL) {
		if (*cause == NULL)
			*cause = util_printf("%s: watches[%d] must be "
			    "{resource=, map=}", rel, i);
		return -1;
	}
	lua_getfield(L, -1, "map");
	if (!lua_isfunction(L, -1)) {
		*cause = util_printf("%s: watches[%d].map must be a function",
		    rel, i);
		lua_pop(L, 1);
		return -1;
	}
	w->map_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_getfield(L, -1, "previous");
	w->previous = lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, -1, "initial");
	w->initial = lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, -1, "paths");
	rc = watch_paths(L, &w->paths, &w->npaths);
	lua_pop(L, 1);
	if (rc != 0) {
		*cause = util_printf("%s: watches[%d].paths must be a list of "
		    "strings", rel, i);
		return -1;
	}
	lua_getfield(L, -1, "changes");
	rc = watch_paths(L, &w->changes, &w->nchanges);
	lua_pop(L, 1);
	if (rc != 0) {
		*cause = util_printf("%s: watches[%d].changes must be a list "
		    "of strings", rel, i);
		return -1;
	}
	snprintf(what, sizeof what, "watches[%d].fields", i);
	lua_getfield(L, -1, "fields");
	rc = fields_from(c, L, w->r, rel, what, &w->fields, &w->filter,
	    cause);
	lua_pop(L, 1);
	return rc;
}

/* The watches, from the table at t. 0, or -1 with *cause. */
static int
watches_from_table(struct ctrl *c, lua_State *L, int t, const char *rel,
    char **cause)
{
	int i, n, rc = 0;

	lua_getfield(L, t, "watches");
	if (lua_istable(L, -1)) {
		n = (int)lua_rawlen(L, -1);
		c->watches = xcalloc(n + 1, sizeof *c->watches);
		for (i = 0; i <= n; i++)
			c->watches[i].filter = -1;
		for (i = 1; i <= n && rc == 0; i++) {
			lua_rawgeti(L, -1, i);
			/* Counted even when it fails, for ctrl_free. */
			rc = watch_from_table(c, L, i,
			    &c->watches[c->nwatches++], rel, cause);
			lua_pop(L, 1);
		}
	}
	lua_pop(L, 1);
	return rc;
}

/*
 * The source.component of the controller's Events, from the table at t:
 * event_source, else "NAME-controller" as most of kube-controller-manager's
 * ("job-controller"; its resourceclaim controller's is "resource_claim").
 * 0, or -1 with *cause.
 */
static int
event_source_from_table(struct ctrl *c, lua_State *L, int t, const char *rel,
    char **cause)
{
	lua_getfield(L, t, "event_source");
	if (lua_isnil(L, -1))
		c->event_source = util_printf("%s-controller", c->name);
	else if (lua_type(L, -1) == LUA_TSTRING && lua_rawlen(L, -1) > 0)
		c->event_source = xstrdup(lua_tostring(L, -1));
	else
		*cause = util_printf("%s: 'event_source' must be a non-empty "
		    "string", rel);
	lua_pop(L, 1);
	return c->event_source != NULL ? 0 : -1;
}

/* Check one loaded controller table (on top of L) and describe it. */
static struct ctrl *
ctrl_from_table(controller_rt *rt, lua_State *L, const char *rel,
    char **cause)
{
	struct ctrl *c = xcalloc(1, sizeof *c);
	const char *base = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	int t = lua_gettop(L);

	c->rt = rt;
	c->name = xstrndup(base, strlen(base) - 4);
	c->user_name = controller_user_name(c->name);
	c->user.name = c->user_name;
	c->user.uid = "";
	c->user.groups = ctrl_groups;
	c->user.ngroups = 1;
	c->reconcile_ref = LUA_NOREF;
	c->filter = -1;
	if (!lua_istable(L, t)) {
		*cause = util_printf("%s: a controller must return a table",
		    rel);
		goto fail;
	}
	if (primary_from_table(c, L, t, rel, cause) != 0 ||
	    event_source_from_table(c, L, t, rel, cause) != 0 ||
	    owns_from_table(c, L, t, rel, cause) != 0 ||
	    watches_from_table(c, L, t, rel, cause) != 0)
		goto fail;
	lua_settop(L, t - 1);
	return c;
fail:
	lua_settop(L, t - 1);
	ctrl_free(c, 0);
	return NULL;
}

void
controller_set_selection(controller_rt *rt, const ctrlsel *sel)
{
	rt->sel = sel;
}

int
controller_reload(controller_rt *rt, char **cause)
{
	lua_State *L;
	struct ctrl **next = NULL;
	char **files, **stems;
	int nfiles, n = 0, i, j;

	*cause = NULL;
	luahost_rescan(rt->host);
	L = luahost_state_new(rt->host, luaapi_open, &rt->api);
	if (L == NULL) {
		*cause = xstrdup("cannot create a Lua state");
		return -1;
	}
	files = luahost_files(rt->host, "controllers/", ".lua", &nfiles);
	next = xcalloc(nfiles + 1, sizeof *next);
	stems = xcalloc(nfiles + 1, sizeof *stems);
	for (i = 0; i < nfiles; i++) {
		const char *base = strrchr(files[i], '/') ?
		    strrchr(files[i], '/') + 1 : files[i];

		stems[i] = xstrndup(base, strlen(base) - 4);
	}
	/* --controllers names only controllers there are. */
	i = ctrlsel_check(rt->sel, stems, nfiles, cause) != 0 ? -1 : 0;
	for (; i >= 0 && i < nfiles; i++) {
		/* Even loading, a script acts as its controller's user. */
		char *uname;
		user_info u = { NULL, "", ctrl_groups, 1 };
		int rc;

		if (!ctrlsel_enabled(rt->sel, stems[i]))
			continue;
		u.name = uname = controller_user_name(stems[i]);
		rt->api.user = &u;
		rc = luahost_dofile(L, files[i], cause);
		rt->api.user = NULL;
		free(uname);
		if (rc != 0 || (next[n] = ctrl_from_table(rt, L, files[i],
		    cause)) == NULL)
			break;
		next[n]->file = xstrdup(luahost_path(rt->host, files[i]) !=
		    NULL ? luahost_path(rt->host, files[i]) : files[i]);
		util_now(next[n++]->loaded_at);
	}
	for (j = 0; j < nfiles; j++) {
		free(files[j]);
		free(stems[j]);
	}
	free(files);
	free(stems);
	if (i < nfiles) {
		/* Keep everything as it was. */
		for (j = 0; j < n; j++)
			ctrl_free(next[j], 0);
		free(next);
		luahost_state_close(L);
		return -1;
	}
	/* Swap: queues carry over by controller name, recorders too while
	   the event source stays. */
	for (i = 0; i < n; i++) {
		struct ctrl *c = next[i];

		for (j = 0; j < rt->nctrls; j++) {
			if (rt->ctrls[j] != NULL &&
			    strcmp(rt->ctrls[j]->name, c->name) == 0) {
				/* Its reconciles in flight give their keys
				   back to the queue the new one takes. */
				abandon_runs(rt->ctrls[j]);
				c->q = rt->ctrls[j]->q;
				rt->ctrls[j]->q = NULL;
				if (strcmp(rt->ctrls[j]->event_source,
				    c->event_source) == 0) {
					c->rec = rt->ctrls[j]->rec;
					rt->ctrls[j]->rec = NULL;
				}
				break;
			}
		}
		if (c->q == NULL)
			c->q = wqueue_new(rt->loop);
		if (c->rec == NULL)
			c->rec = recorder_new(rt->client, c->event_source);
		wqueue_set_ready_cb(c->q, on_ready, c);
	}
	for (j = 0; j < rt->nctrls; j++)
		ctrl_free(rt->ctrls[j], 0);
	free(rt->ctrls);
	luahost_state_close(rt->L);
	rt->L = L;
	rt->ctrls = next;
	rt->nctrls = n;
	/* Every controller looks at every object once after a (re)load. */
	for (i = 0; i < n; i++)
		enqueue_all(next[i]);
	log_info("controllers: loaded %d (%s)", n, n ? next[0]->name : "");
	return 0;
}

int
controller_info(const controller_rt *rt, int i, const char **name,
    const char **file, const char **loaded_at)
{
	if (i < 0 || i >= rt->nctrls)
		return -1;
	*name = rt->ctrls[i]->name;
	*file = rt->ctrls[i]->file != NULL ? rt->ctrls[i]->file : "";
	*loaded_at = rt->ctrls[i]->loaded_at;
	return 0;
}
