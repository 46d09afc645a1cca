/*
 * Controller runtime.
 *
 * One Lua state holds every controller (luahost.c); C keeps, per
 * controller, the resolved resources, registry references to its functions
 * and a workqueue. The store's durable events are routed to queues; the
 * queues' ready callbacks call reconcile with {namespace, name, key}:
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

struct watchdef {
	const resource *r;
	int map_ref;
	selector *fields;	/* only objects that match reach map */
	int filter;		/* fields as a store filter, or -1 */
	int previous;		/* map the object before a change too */
	char **paths;		/* map sees only these (NULL: all) */
	int npaths;
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
	recorder *rec;             /* its Events, as NAME-controller */
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
	struct {
		uint64_t reconciles;
		uint64_t errors;
		uint64_t lua_usec;   /* wall time inside Lua reconcile calls */
	} stats;
};

static void
ctrl_free(struct ctrl *c, int keep_queue)
{
	int i, j;

	if (c == NULL)
		return;
	if (!keep_queue && c->q != NULL)
		wqueue_free(c->q);
	if (!keep_queue)
		recorder_free(c->rec);
	free(c->name);
	free(c->file);
	free(c->user_name);
	free(c->owns);
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
	}
	free(c->watches);
	free(c);
}

static void enqueue_all(struct ctrl *);

/* A watch's paths, from the value on top (nil: none): 0, or -1 when
   it is not a list of strings. */
static int
watch_paths(lua_State *L, struct watchdef *w)
{
	int n, i;

	if (lua_isnil(L, -1))
		return 0;
	if (!lua_istable(L, -1))
		return -1;
	n = (int)lua_rawlen(L, -1);
	w->paths = xcalloc(n + 1, sizeof *w->paths);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -1, i);
		if (!lua_isstring(L, -1)) {
			lua_pop(L, 1);
			return -1;
		}
		w->paths[w->npaths++] = xstrdup(lua_tostring(L, -1));
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

/* Split "ns/name" (or "name" for cluster-scoped) and call reconcile. */
static void
reconcile(struct ctrl *c, const char *key)
{
	controller_rt *rt = c->rt;
	lua_State *L = rt->L;
	const char *slash = strchr(key, '/');
	char ns[256] = "", *err = NULL;
	const char *name = key;
	uint64_t t0;
	int rc;

	if (slash != NULL) {
		snprintf(ns, sizeof ns, "%.*s", (int)(slash - key), key);
		name = slash + 1;
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, c->reconcile_ref);
	lua_createtable(L, 0, 3);
	lua_pushstring(L, ns);
	lua_setfield(L, -2, "namespace");
	lua_pushstring(L, name);
	lua_setfield(L, -2, "name");
	lua_pushstring(L, key);
	lua_setfield(L, -2, "key");
	rt->api.user = &c->user;
	rt->api.owner = c->name;
	rt->api.key = key;
	rt->api.rec = c->rec;
	t0 = util_usec();
	rc = luahost_call(L, 1, 1, &err);
	rt->stats.lua_usec += util_usec() - t0;
	rt->stats.reconciles++;
	if (rc != 0) {
		const store_obj *o;

		rt->stats.errors++;
		fold_lines(err);
		log_warn("controller %s: reconcile %s failed: %s", c->name, key,
		    err);
		o = client_get(rt->client, c->primary->store_key, ns, name);
		if (o != NULL) {
			cJSON *t = store_obj_tree(o);
			char msg[1024], *nl;

			/* The first line of the error; the log has the rest. */
			snprintf(msg, sizeof msg, "%s", err);
			if ((nl = strchr(msg, '|')) != NULL)
				*nl = '\0';
			luaapi_event(&rt->api, c->rec, t, "Warning",
			    "ReconcileError", msg, NULL);
			cJSON_Delete(t);
		}
		free(err);
		rt->api.user = NULL;
		rt->api.owner = rt->api.key = NULL;
		rt->api.rec = rt->rec;
		wqueue_add_rate_limited(c->q, key);
		return;
	}
	rt->api.user = NULL;
	rt->api.owner = rt->api.key = NULL;
	rt->api.rec = rt->rec;
	if (lua_istable(L, -1)) {
		lua_getfield(L, -1, "requeue_after");
		if (lua_isnumber(L, -1)) {
			double s = lua_tonumber(L, -1);

			wqueue_forget(c->q, key);
			wqueue_add_after(c->q, key, s > 0 ? (uint64_t)(s * 1000) :
			    0);
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
		lua_getfield(L, -1, "requeue");
		if (lua_toboolean(L, -1)) {
			wqueue_add_rate_limited(c->q, key);
			lua_pop(L, 2);
			return;
		}
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	wqueue_forget(c->q, key);
}

static void
on_ready(wqueue *q, void *arg)
{
	struct ctrl *c = arg;
	uint64_t t0 = util_usec();
	const char *key;
	char *copy;
	int n;

	/*
	 * At most BATCH keys, and no more once a turn's SLICE_US is spent:
	 * a reconcile against a remote API waits for its writes (and their
	 * rate limit), and the loop must come round for the others (a
	 * Lease renewal among them).
	 */
	for (n = 0; n < BATCH && (key = wqueue_get(q)) != NULL; n++) {
		copy = xstrdup(key);
		reconcile(c, copy);
		wqueue_done(q, copy);
		free(copy);
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
	char *err = NULL;
	int i, n, rc;

	if (!fields_match(w->fields, w->filter, o))
		return;
	lua_rawgeti(L, LUA_REGISTRYINDEX, w->map_ref);
	if (w->npaths > 0)
		luaconv_push_json_paths(L, o->json->data, o->json->len,
		    w->paths, w->npaths);
	else
		luaconv_push_json(L, o->json->data, o->json->len);
	c->rt->api.user = &c->user;
	c->rt->api.rec = c->rec;
	rc = luahost_call(L, 1, 1, &err);
	c->rt->api.user = NULL;
	c->rt->api.rec = c->rt->rec;
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
			enqueue_mapped(c, w, e->obj);
			if (w->previous && e->old != NULL)
				enqueue_mapped(c, w, e->old);
		}
	}
}

static void
enqueue_all(struct ctrl *c)
{
	store_obj *const *objs;
	size_t n = client_list(c->rt->client, c->primary->store_key, NULL,
	    &objs);
	size_t i;

	for (i = 0; i < n; i++)
		enqueue_obj(c, objs[i]);
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
	    "# TYPE volray_workqueue_depth gauge\n",
	    (unsigned long long)rt->stats.reconciles,
	    (unsigned long long)rt->stats.errors, rt->stats.lua_usec / 1e6,
	    luaapi_usec / 1e6, rt->L ? luahost_memory(rt->L) : 0);
	for (i = 0; i < rt->nctrls; i++)
		fprintf(f, "volray_workqueue_depth{controller=\"%s\"} %zu\n",
		    rt->ctrls[i]->name, wqueue_len(rt->ctrls[i]->q));
}

char *
controller_user_name(const char *name)
{
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
		if (asprintf(cause, "%s: '%s' must be a resource string like "
		    "\"apps/v1/replicasets\"", file, field) < 0)
			*cause = NULL;
		return NULL;
	}
	r = luaapi_resource(lua_tostring(L, -1));
	if (r == NULL && asprintf(cause, "%s: unknown resource '%s' in '%s'",
	    file, lua_tostring(L, -1), field) < 0)
		*cause = NULL;
	lua_pop(L, 1);
	return r;
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
		if (asprintf(cause, "%s: %s must be a field selector string",
		    rel, what) < 0)
			*cause = NULL;
		return -1;
	}
	if ((*fields = selector_parse_fields(lua_tostring(L, -1), &why)) ==
	    NULL) {
		if (asprintf(cause, "%s: %s: %s", rel, what, why ? why :
		    "bad field selector") < 0)
			*cause = NULL;
		free(why);
		return -1;
	}
	*filter = client_filter_add(c->rt->client, r->store_key, match_fields,
	    *fields);
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
		if (asprintf(cause, "%s: 'reconcile' must be a function", rel) <
		    0)
			*cause = NULL;
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
				if (asprintf(cause, "%s: owns[%d]: unknown "
				    "resource", rel, i) < 0)
					*cause = NULL;
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
 * One watch, {resource=, map=, previous=, paths=, fields=}, from the value
 * on top of L (the i-th of watches) into w. 0, or -1 with *cause; the
 * stack is left as it was either way.
 */
static int
watch_from_table(struct ctrl *c, lua_State *L, int i, struct watchdef *w,
    const char *rel, char **cause)
{
	char what[64];
	int rc;

	if (!lua_istable(L, -1) || (w->r = field_resource(L, lua_gettop(L),
	    "resource", rel, cause)) == NULL) {
		if (*cause == NULL && asprintf(cause, "%s: watches[%d] must be "
		    "{resource=, map=}", rel, i) < 0)
			*cause = NULL;
		return -1;
	}
	lua_getfield(L, -1, "map");
	if (!lua_isfunction(L, -1)) {
		if (asprintf(cause, "%s: watches[%d].map must be a function",
		    rel, i) < 0)
			*cause = NULL;
		lua_pop(L, 1);
		return -1;
	}
	w->map_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	lua_getfield(L, -1, "previous");
	w->previous = lua_toboolean(L, -1);
	lua_pop(L, 1);
	lua_getfield(L, -1, "paths");
	rc = watch_paths(L, w);
	lua_pop(L, 1);
	if (rc != 0) {
		if (asprintf(cause, "%s: watches[%d].paths must be a list of "
		    "strings", rel, i) < 0)
			*cause = NULL;
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
		if (asprintf(cause, "%s: a controller must return a table",
		    rel) < 0)
			*cause = NULL;
		goto fail;
	}
	if (primary_from_table(c, L, t, rel, cause) != 0 ||
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
	/* Swap: queues and recorders carry over by controller name. */
	for (i = 0; i < n; i++) {
		struct ctrl *c = next[i];

		for (j = 0; j < rt->nctrls; j++) {
			if (rt->ctrls[j] != NULL &&
			    strcmp(rt->ctrls[j]->name, c->name) == 0) {
				c->q = rt->ctrls[j]->q;
				c->rec = rt->ctrls[j]->rec;
				rt->ctrls[j]->q = NULL;
				rt->ctrls[j]->rec = NULL;
				break;
			}
		}
		if (c->q == NULL)
			c->q = wqueue_new(rt->loop);
		if (c->rec == NULL) {
			/* Events name their source as Kubernetes does:
			   "job-controller". */
			char *component = util_printf("%s-controller",
			    c->name);

			c->rec = recorder_new(rt->client, component);
			free(component);
		}
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
