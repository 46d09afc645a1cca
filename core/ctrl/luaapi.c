/*
 * The volray Lua module. Reads come from the client's cache (embedded: the
 * API server's own store, so a reconcile always sees its own earlier
 * writes); volray.get's live = true asks the API server instead and waits
 * for its answer as a write does. Writes build a tree from the Lua table
 * and go through the client; failures return nil plus the Status message
 * and code, never raise, so a script decides what an AlreadyExists or a
 * Conflict means for it. From a reconcile (a coroutine, luawait.h) a write
 * goes through the client's asynchronous call: answered at once by the
 * embedded client on the log-backed store, it returns at once; on etcd and
 * against a remote API the reconcile yields until the answer is in, and
 * the loop runs others meanwhile. From elsewhere (a watch's map, a
 * script's loading) writes are synchronous. Events go through the running
 * controller's recorder. Each call is authorized first (RBAC, as the
 * controller's user): a denial is answered like the API's 403, and writes
 * carry the user to the registry, whose admission hook checks RBAC
 * escalation with it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>

#include "auth/sshkey.h"
#include "ctrl/luaapi.h"
#include "ctrl/luaconfig.h"
#include "ctrl/luahttp.h"
#include "ctrl/luawait.h"
#include "ctrl/objpaths.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/podspec.h"
#include "lib/selector.h"
#include "lib/tz.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"
#include "registry/resource.h"
#include "registry/status.h"

static struct luactx *
ctx_of(lua_State *L)
{
	return lua_touserdata(L, lua_upvalueindex(1));
}

const resource *
luaapi_resource(const char *spec)
{
	char buf[256], *a, *b;
	int i;

	snprintf(buf, sizeof buf, "%s", spec);
	a = strchr(buf, '/');
	if (a == NULL) {
		/* A plural (or plural.group) alone: the storage version. */
		for (i = 0; i < resource_count(); i++) {
			const resource *r = resource_at(i);

			if (r->storage && (strcmp(r->plural, buf) == 0 ||
			    strcmp(r->store_key, buf) == 0))
				return r;
		}
		return NULL;
	}
	*a++ = '\0';
	b = strchr(a, '/');
	if (b == NULL)
		return resource_find("", buf, a);
	*b++ = '\0';
	return resource_find(buf, a, b);
}

/*
 * Authorize the running controller for verb on r. 0 when allowed (or no
 * authorizer is set); otherwise push nil, message, 403, "Forbidden" and
 * return 4, the values a script gets back from a refused API call.
 */
static int
denied(lua_State *L, struct luactx *c, const char *verb,
    const resource *r, const char *sub, const char *ns, const char *name)
{
	rbac_attrs a;
	char *reason = NULL;
	cJSON *s;

	if (c->authz == NULL || c->user == NULL)
		return 0;
	memset(&a, 0, sizeof a);
	a.verb = verb;
	a.api_group = r->group;
	a.resource = r->plural;
	a.subresource = sub ? sub : "";
	a.ns = r->namespaced && ns ? ns : "";
	a.name = name ? name : "";
	if (rbac_check(c->authz, c->user, &a, &reason)) {
		free(reason);
		return 0;
	}
	s = rbac_forbidden_reason(c->user, &a, reason);
	free(reason);
	lua_pushnil(L);
	lua_pushstring(L, json_str(s, "message"));
	lua_pushinteger(L, 403);
	lua_pushstring(L, "Forbidden");
	cJSON_Delete(s);
	return 4;
}

/* Options that carry the caller to the registry. */
static void
opts_for(struct luactx *c, struct reg_opts *o)
{
	memset(o, 0, sizeof *o);
	o->user = c->user;
}

static const resource *
check_resource(lua_State *L, int idx)
{
	const char *spec = luaL_checkstring(L, idx);
	const resource *r = luaapi_resource(spec);

	if (r == NULL)
		luaL_error(L, "unknown resource '%s'", spec);
	return r;
}

/* Whether get's options at idx ask for a read from the server. */
static int
opt_live(lua_State *L, int idx)
{
	int live;

	if (!lua_istable(L, idx))
		return 0;
	lua_getfield(L, idx, "live");
	live = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return live;
}

/*
 * volray.get(resource, namespace, name [, {live = true}]) -> object or nil.
 * live reads from the API server, not the cache: the reconcile waits for
 * the answer as for a write, and gets nil, message, code, reason when
 * there is no object (404) or no answer.
 */
static int
l_get_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	const resource *r = check_resource(L, 1);
	const char *ns = luaL_optstring(L, 2, "");
	const char *name = luaL_checkstring(L, 3);
	const store_obj *o;
	int n;

	if ((n = denied(L, c, "get", r, NULL, ns, name)) != 0)
		return n;
	if (opt_live(L, 4)) {
		struct luawait *w;

		if (!luawait_possible(L))
			return luaL_error(L, "volray.get: live = true reads "
			    "only from a reconcile");
		w = luawait_new(L, LUAWAIT_OBJECT);
		client_get_live_async(c->client, r, r->namespaced ? ns : "",
		    name, luawait_done, w);
		return luawait_result(L, w);
	}
	o = client_get(c->client, r->store_key, r->namespaced ? ns : "", name);
	if (o == NULL) {
		lua_pushnil(L);
		return 1;
	}
	luaconv_push_json(L, o->json->data, o->json->len);
	return 1;
}

/* A selector from a string or a LabelSelector table at idx. */
static selector *
opt_selector(lua_State *L, int idx)
{
	char *cause = NULL;
	selector *s = NULL;

	if (lua_isstring(L, idx))
		s = selector_parse_labels(lua_tostring(L, idx), &cause);
	else if (lua_istable(L, idx)) {
		cJSON *t = luaconv_to_json(L, idx, &cause);

		if (t != NULL)
			s = selector_from_json(t, &cause);
		cJSON_Delete(t);
	} else if (lua_isnil(L, idx))
		return NULL;
	if (s == NULL) {
		lua_pushfstring(L, "bad selector: %s", cause ? cause : "?");
		free(cause);
		lua_error(L);
	}
	return s;
}

/* Does o pass a list's label and field selectors? */
static int
list_match(const store_obj *o, const selector *labels, const selector *fields)
{
	cJSON *t;
	int m;

	if (labels && !selector_match_labels(labels, o->labels))
		return 0;
	if (fields == NULL)
		return 1;
	t = store_obj_tree(o);
	m = selector_match_fields(fields, t);
	cJSON_Delete(t);
	return m;
}

#define LIST_PATHS	32

/* A listed object, whole or only its paths. */
static void
push_listed(lua_State *L, const store_obj *o, char *const *paths, int n)
{
	if (n > 0)
		objpaths_push(L, o, paths, n);
	else
		luaconv_push_json(L, o->json->data, o->json->len);
}

/*
 * volray.list(resource, namespace|nil, {labels=, selector=, fields=,
 * owner=uid, uid=uid, paths={...}}) -> array of objects (with paths:
 * each only those fields)
 */

static int
l_list_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	const resource *r = check_resource(L, 1);
	const char *ns = r->namespaced ? luaL_optstring(L, 2, NULL) : NULL;
	selector *labels = NULL, *fields = NULL;
	const char *owner = NULL, *uid = NULL;
	char *paths[LIST_PATHS];
	store_obj *const *objs;
	store_obj **chosen;
	size_t n, i;
	ssize_t sel;
	int k = 1, d, npaths = 0;

	if (ns != NULL && *ns == '\0')
		ns = NULL;
	if ((d = denied(L, c, "list", r, NULL, ns, NULL)) != 0)
		return d;
	if (lua_istable(L, 3)) {
		lua_getfield(L, 3, "labels");
		labels = opt_selector(L, lua_gettop(L));
		lua_pop(L, 1);
		if (labels == NULL) {
			lua_getfield(L, 3, "selector");
			labels = opt_selector(L, lua_gettop(L));
			lua_pop(L, 1);
		}
		lua_getfield(L, 3, "fields");
		if (lua_isstring(L, -1)) {
			char *cause = NULL;

			fields = selector_parse_fields(lua_tostring(L, -1),
			    &cause);
			if (fields == NULL) {
				selector_free(labels);
				lua_pushfstring(L, "bad field selector: %s",
				    cause ? cause : "?");
				free(cause);
				return lua_error(L);
			}
		}
		lua_pop(L, 1);
		lua_getfield(L, 3, "owner");
		owner = lua_tostring(L, -1);
		lua_pop(L, 1);
		lua_getfield(L, 3, "uid");
		uid = lua_tostring(L, -1);
		lua_pop(L, 1);
		/* The strings stay in the options table, on the stack. */
		lua_getfield(L, 3, "paths");
		if (lua_istable(L, -1)) {
			int np = (int)lua_rawlen(L, -1), j;

			for (j = 1; j <= np; j++) {
				lua_rawgeti(L, -1, j);
				if (!lua_isstring(L, -1) || np > LIST_PATHS) {
					selector_free(labels);
					selector_free(fields);
					lua_pushfstring(L, "paths: a list of at "
					    "most %d strings", LIST_PATHS);
					return lua_error(L);
				}
				paths[npaths++] = (char *)lua_tostring(L, -1);
				lua_pop(L, 1);
			}
		}
		lua_pop(L, 1);
	}
	if (uid != NULL) {
		/* At most one object has the uid: the uid index finds it. */
		const store_obj *o = client_get_uid(c->client, uid);

		lua_createtable(L, 1, 0);
		if (o != NULL && strcmp(o->res, r->store_key) == 0 &&
		    (ns == NULL || strcmp(o->ns, ns) == 0) &&
		    list_match(o, labels, fields)) {
			push_listed(L, o, paths, npaths);
			lua_rawseti(L, -2, k++);
		}
	} else if (owner != NULL) {
		/* The owner index beats scanning every object of the kind. */
		const char **keys;

		n = client_dependents(c->client, owner, &keys);
		lua_createtable(L, n < 64 ? (int)n : 64, 0);
		for (i = 0; i < n; i++) {
			const store_obj *o = client_get_key(c->client,
			    keys[i]);

			if (o != NULL && strcmp(o->res, r->store_key) == 0 &&
			    (ns == NULL || strcmp(o->ns, ns) == 0) &&
			    list_match(o, labels, fields)) {
				push_listed(L, o, paths, npaths);
				lua_rawseti(L, -2, k++);
			}
		}
	} else if (labels != NULL && (ns != NULL || !r->namespaced) &&
	    (sel = client_list_selected(c->client, r->store_key, ns, labels,
	    &chosen)) >= 0) {
		/* The index of labels beats testing the whole namespace. */
		lua_createtable(L, sel < 64 ? (int)sel : 64, 0);
		for (i = 0; i < (size_t)sel; i++) {
			if (!list_match(chosen[i], NULL, fields))
				continue;
			push_listed(L, chosen[i], paths, npaths);
			lua_rawseti(L, -2, k++);
		}
		free(chosen);
	} else {
		n = client_list(c->client, r->store_key, ns, &objs);
		lua_createtable(L, n < 64 ? (int)n : 64, 0);
		for (i = 0; i < n; i++) {
			if (!list_match(objs[i], labels, fields))
				continue;
			push_listed(L, objs[i], paths, npaths);
			lua_rawseti(L, -2, k++);
		}
	}
	luaconv_mark_array(L);
	selector_free(labels);
	selector_free(fields);
	return 1;
}

/* Push a registry result: the object, or nil, message, code. */
static int
push_result(lua_State *L, struct reg_result *res)
{
	return luawait_push(L, res, LUAWAIT_OBJECT);
}

static cJSON *
check_object(lua_State *L, int idx, const resource **r)
{
	char *cause = NULL;
	cJSON *t;

	luaL_checktype(L, idx, LUA_TTABLE);
	t = luaconv_to_json(L, idx, &cause);
	if (t == NULL) {
		lua_pushfstring(L, "object cannot be encoded: %s", cause ?
		    cause : "?");
		free(cause);
		lua_error(L);
	}
	*r = resource_by_gvk(json_str(t, "apiVersion"), json_str(t, "kind"));
	if (*r == NULL) {
		lua_pushfstring(L, "unknown apiVersion/kind %s/%s",
		    json_str(t, "apiVersion") ? json_str(t, "apiVersion") : "?",
		    json_str(t, "kind") ? json_str(t, "kind") : "?");
		cJSON_Delete(t);
		lua_error(L);
	}
	return t;
}

/* volray.create(obj) -> obj | nil, message, code, reason */
static int
l_create_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	const resource *r;
	cJSON *t = check_object(L, 1, &r);
	const char *ns = json_str(t, "metadata.namespace");
	struct reg_result res;
	struct reg_opts o;
	int n;

	if ((n = denied(L, c, "create", r, NULL, ns && *ns ? ns : "default",
	    NULL)) != 0) {
		cJSON_Delete(t);
		return n;
	}
	opts_for(c, &o);
	if (luawait_possible(L)) {
		struct luawait *w = luawait_new(L, LUAWAIT_OBJECT);

		client_create_async(c->client, r, ns, t, &o, luawait_done, w);
		return luawait_result(L, w);
	}
	client_create(c->client, r, ns, t, &o, &res);
	return push_result(L, &res);
}

static int
update(lua_State *L, const char *sub)
{
	struct luactx *c = ctx_of(L);
	const resource *r;
	cJSON *t = check_object(L, 1, &r);
	struct reg_result res;
	struct reg_opts o;
	const char *name = json_str(t, "metadata.name");
	char *nm;
	int n;

	opts_for(c, &o);
	o.subresource = sub;
	if (name == NULL) {
		cJSON_Delete(t);
		return luaL_error(L, "object has no metadata.name");
	}
	if ((n = denied(L, c, "update", r, sub, json_str(t,
	    "metadata.namespace"), name)) != 0) {
		cJSON_Delete(t);
		return n;
	}
	nm = xstrdup(name);
	if (luawait_possible(L)) {
		struct luawait *w = luawait_new(L, LUAWAIT_OBJECT);
		char *ns = json_str(t, "metadata.namespace") != NULL ?
		    xstrdup(json_str(t, "metadata.namespace")) : NULL;

		client_update_async(c->client, r, ns, nm, t, &o, luawait_done,
		    w);
		free(ns);
		free(nm);
		return luawait_result(L, w);
	}
	client_update(c->client, r, json_str(t, "metadata.namespace"), nm, t,
	    &o, &res);
	free(nm);
	return push_result(L, &res);
}

/* volray.update(obj): spec and metadata; status is kept. */
static int
l_update_impl(lua_State *L)
{
	return update(L, NULL);
}

/* volray.update_status(obj): only .status is written. */
static int
l_update_status_impl(lua_State *L)
{
	return update(L, "status");
}

/* volray.patch(resource, ns, name, patch [, "merge"|"json"|"strategic"]) */
static int
l_patch_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	const resource *r = check_resource(L, 1);
	const char *ns = luaL_optstring(L, 2, "");
	const char *name = luaL_checkstring(L, 3);
	const char *type = luaL_optstring(L, 5, "merge");
	const char *ct = strcmp(type, "json") == 0 ?
	    "application/json-patch+json" : strcmp(type, "strategic") == 0 ?
	    "application/strategic-merge-patch+json" :
	    "application/merge-patch+json";
	char *cause = NULL, *body;
	struct reg_result res;
	struct reg_opts o;
	cJSON *p;
	int n;

	if ((n = denied(L, c, "patch", r, NULL, ns, name)) != 0)
		return n;
	p = luaconv_to_json(L, 4, &cause);
	if (p == NULL) {
		lua_pushfstring(L, "patch cannot be encoded: %s", cause);
		free(cause);
		return lua_error(L);
	}
	body = json_print(p);
	cJSON_Delete(p);
	opts_for(c, &o);
	if (luawait_possible(L)) {
		struct luawait *w = luawait_new(L, LUAWAIT_OBJECT);

		client_patch_async(c->client, r, ns, name, ct, body,
		    strlen(body), &o, luawait_done, w);
		free(body);
		return luawait_result(L, w);
	}
	client_patch(c->client, r, ns, name, ct, body, strlen(body), &o,
	    &res);
	free(body);
	return push_result(L, &res);
}

/* volray.delete(resource, ns, name [, {propagation=}]) -> true | nil, msg */
static int
l_delete_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	const resource *r = check_resource(L, 1);
	const char *ns = luaL_optstring(L, 2, "");
	const char *name = luaL_checkstring(L, 3);
	struct reg_opts o;
	struct reg_result res;
	int n;

	if ((n = denied(L, c, "delete", r, NULL, ns, name)) != 0)
		return n;
	opts_for(c, &o);
	if (lua_istable(L, 4)) {
		lua_getfield(L, 4, "propagation");
		o.propagation = lua_tostring(L, -1);
		lua_pop(L, 1);
	}
	if (luawait_possible(L)) {
		struct luawait *w = luawait_new(L, LUAWAIT_TRUE);

		client_delete_async(c->client, r, ns, name, &o, luawait_done,
		    w);
		return luawait_result(L, w);
	}
	client_delete(c->client, r, ns, name, &o, &res);
	if (res.code >= 300)
		return push_result(L, &res);
	cJSON_Delete(res.body);
	lua_pushboolean(L, 1);
	return 1;
}

/* May the running controller do verb on events in ns? 0, or -1 with
   *msg (malloc'd, when msg is not NULL). */
static int
event_denied(struct luactx *c, const char *verb, const char *ns,
    char **msg)
{
	rbac_attrs a;
	char *why = NULL;
	cJSON *s;

	memset(&a, 0, sizeof a);
	a.verb = verb;
	a.api_group = "";
	a.resource = "events";
	a.subresource = "";
	a.ns = ns;
	a.name = "";
	if (rbac_check(c->authz, c->user, &a, &why)) {
		free(why);
		return 0;
	}
	s = rbac_forbidden_reason(c->user, &a, why);
	if (msg != NULL)
		*msg = strdup(json_str(s, "message"));
	free(why);
	cJSON_Delete(s);
	return -1;
}

int
luaapi_event(struct luactx *c, recorder *rec, const cJSON *obj,
    const char *type, const char *reason, const char *message, char **msg)
{
	struct recorder_obj ro;
	struct reg_opts o;

	if (msg != NULL)
		*msg = NULL;
	recorder_obj_of(obj, &ro);
	if (ro.name == NULL)
		return 0;
	/*
	 * The recorder creates an Event or counts a repeat (client-go
	 * patches it), which the caller cannot tell apart beforehand: both
	 * must be allowed.
	 */
	if (c->authz != NULL && c->user != NULL) {
		const char *ns = ro.ns != NULL && *ro.ns != '\0' ? ro.ns :
		    "default";

		if (event_denied(c, "create", ns, msg) != 0 ||
		    event_denied(c, "patch", ns, msg) != 0)
			return -1;
	}
	opts_for(c, &o);
	recorder_event(rec, &ro, type, reason, message, &o);
	return 0;
}

/* volray.event(obj, "Normal"|"Warning", reason, message) */
static int
l_event_impl(lua_State *L)
{
	struct luactx *c = ctx_of(L);
	char *cause = NULL;
	cJSON *t = luaconv_to_json(L, 1, &cause);
	const char *type = luaL_checkstring(L, 2);
	const char *reason = luaL_checkstring(L, 3);
	const char *msg = luaL_optstring(L, 4, "");
	char *why = NULL;
	int rc;

	if (t == NULL) {
		free(cause);
		return luaL_error(L, "event: bad object");
	}
	if (strcmp(type, "Normal") != 0 && strcmp(type, "Warning") != 0) {
		cJSON_Delete(t);
		return luaL_error(L, "event type must be Normal or Warning");
	}
	rc = luaapi_event(c, c->rec, t, type, reason, msg, &why);
	cJSON_Delete(t);
	if (rc == 0)
		return 0;
	lua_pushnil(L);
	lua_pushstring(L, why ? why : "forbidden");
	lua_pushinteger(L, 403);
	lua_pushstring(L, "Forbidden");
	free(why);
	return 4;
}


/* volray.quantity("500m") -> 0.5; ("1Gi") -> 1073741824 */
static int
l_quantity(lua_State *L)
{
	double v;

	if (lua_type(L, 1) == LUA_TNUMBER) {
		lua_settop(L, 1);
		return 1;
	}
	if (quantity_parse(luaL_checkstring(L, 1), &v) != 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "invalid quantity '%s'", lua_tostring(L, 1));
		return 2;
	}
	if (v == floor(v) && fabs(v) < 9e15)
		lua_pushinteger(L, (lua_Integer)v);
	else
		lua_pushnumber(L, v);
	return 1;
}

/* volray.milli("500m") -> 500; ("2") -> 2000 */
static int
l_milli(lua_State *L)
{
	double v;

	if (lua_isnumber(L, 1))
		v = lua_tonumber(L, 1);
	else if (quantity_parse(luaL_checkstring(L, 1), &v) != 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, (lua_Integer)llround(v * 1000));
	return 1;
}

static int
l_now(lua_State *L)
{
	char now[32];

	util_now(now);
	lua_pushstring(L, now);
	return 1;
}

static int
l_time(lua_State *L)
{
	struct timespec ts;

	if (lua_isstring(L, 1)) {
		time_t t = util_time_parse(lua_tostring(L, 1));

		if (t < 0)
			lua_pushnil(L);
		else
			lua_pushinteger(L, (lua_Integer)t);
		return 1;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	lua_pushnumber(L, ts.tv_sec + ts.tv_nsec / 1e9);
	return 1;
}

/* volray.format_time(seconds) -> RFC 3339 */
static int
l_format_time(lua_State *L)
{
	char out[32];

	util_time_format((time_t)luaL_checknumber(L, 1), out);
	lua_pushstring(L, out);
	return 1;
}

/* volray.tz_offset(zone, seconds): the zone's UTC offset then, or nil
   and why (an unknown zone). */
static int
l_tz_offset(lua_State *L)
{
	const char *zone = luaL_checkstring(L, 1);
	int off, rc;

	rc = tz_offset(zone, (int64_t)luaL_checknumber(L, 2), &off);
	if (rc != 0) {
		lua_pushnil(L);
		lua_pushfstring(L, "unknown time zone %s", zone);
		return 2;
	}
	lua_pushinteger(L, off);
	return 1;
}

static int
l_log(lua_State *L)
{
	const char *level = luaL_checkstring(L, 1);
	const char *msg = luaL_checkstring(L, 2);
	int up = (int)luaL_optinteger(L, 3, 1);
	lua_Debug ar;
	char where[256] = "lua";

	/* up: how far up the stack the caller to name is (2 from info/warn). */
	if (lua_getstack(L, up, &ar) && lua_getinfo(L, "Sl", &ar))
		snprintf(where, sizeof where, "%s:%d", ar.short_src,
		    ar.currentline);
	if (strcmp(level, "debug") == 0)
		log_debug("%s: %s", where, msg);
	else if (strcmp(level, "warn") == 0)
		log_warn("%s: %s", where, msg);
	else if (strcmp(level, "error") == 0)
		log_error("%s: %s", where, msg);
	else
		log_info("%s: %s", where, msg);
	return 0;
}

static int
l_random_suffix(lua_State *L)
{
	char buf[32];
	lua_Integer n = luaL_optinteger(L, 1, 5);

	if (n < 1 || n > 30)
		n = 5;
	util_random_suffix(buf, (size_t)n);
	lua_pushstring(L, buf);
	return 1;
}

/* volray.ssh_keygen([bits]) -> private_pem, authorized_keys_line: a new
   RSA key (2048 bits by default), or raises. */
static int
l_ssh_keygen(lua_State *L)
{
	lua_Integer bits = luaL_optinteger(L, 1, 2048);
	char *priv, *pub, *cause = NULL;

	if (sshkey_rsa((unsigned)(bits > 0 && bits <= 65536 ? bits : 0),
	    &priv, &pub, &cause) != 0) {
		lua_pushstring(L, cause);
		free(cause);
		return lua_error(L);
	}
	lua_pushstring(L, priv);
	lua_pushstring(L, pub);
	free(priv);
	free(pub);
	return 2;
}

/* volray.match_labels(selector, labels) -> bool */
static int
l_match_labels(lua_State *L)
{
	selector *s = opt_selector(L, 1);
	char *cause = NULL;
	cJSON *labels = lua_istable(L, 2) ? luaconv_to_json(L, 2, &cause) :
	    NULL;
	int m;

	free(cause);
	m = s == NULL ? 1 : selector_match_labels(s, labels);
	selector_free(s);
	cJSON_Delete(labels);
	lua_pushboolean(L, m);
	return 1;
}

static int
l_array(lua_State *L)
{
	if (lua_isnoneornil(L, 1))
		lua_newtable(L);
	else
		luaL_checktype(L, 1, LUA_TTABLE);
	lua_settop(L, 1);
	luaconv_mark_array(L);
	return 1;
}

static int
l_json_encode(lua_State *L)
{
	char *cause = NULL, *s;
	cJSON *t = luaconv_to_json(L, 1, &cause);

	if (t == NULL) {
		lua_pushnil(L);
		lua_pushstring(L, cause ? cause : "cannot encode");
		free(cause);
		return 2;
	}
	s = json_print(t);
	cJSON_Delete(t);
	lua_pushstring(L, s);
	free(s);
	return 1;
}

static int
l_json_decode(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	luaconv_push_json(L, s, len);
	return 1;
}

/*
 * Time spent in C on behalf of scripts (store reads, registry writes), so
 * the metrics can split a reconcile into Lua time and C time.
 */
uint64_t luaapi_usec;

#define TIMED(fn)							\
static int								\
fn(lua_State *L)							\
{									\
	uint64_t t0 = util_usec();					\
	int n = fn##_impl(L);						\
									\
	luaapi_usec += util_usec() - t0;				\
	return n;							\
}
TIMED(l_get)
TIMED(l_list)
TIMED(l_create)
TIMED(l_update)
TIMED(l_update_status)
TIMED(l_patch)
TIMED(l_delete)
TIMED(l_event)

/* Helpers written in Lua: owner references and conditions. */
static const char *prelude =
"local v = ...\n"
"function v.owner_ref(obj, controller)\n"
"  if controller == nil then controller = true end\n"
"  return {apiVersion = obj.apiVersion, kind = obj.kind,\n"
"    name = obj.metadata.name, uid = obj.metadata.uid,\n"
"    controller = controller, blockOwnerDeletion = controller}\n"
"end\n"
"function v.controller_of(obj)\n"
"  for _, r in ipairs(obj.metadata and obj.metadata.ownerReferences or {}) do\n"
"    if r.controller then return r end\n"
"  end\n"
"  return nil\n"
"end\n"
"function v.is_controlled_by(obj, owner)\n"
"  local r = v.controller_of(obj)\n"
"  return r ~= nil and r.uid == owner.metadata.uid\n"
"end\n"
"function v.get_condition(obj, ctype)\n"
"  for _, c in ipairs(obj.status and obj.status.conditions or {}) do\n"
"    if c.type == ctype then return c end\n"
"  end\n"
"  return nil\n"
"end\n"
"function v.set_condition(obj, ctype, status, reason, message)\n"
"  obj.status = obj.status or {}\n"
"  obj.status.conditions = obj.status.conditions or v.array()\n"
"  for _, c in ipairs(obj.status.conditions) do\n"
"    if c.type == ctype then\n"
"      if c.status == status and c.reason == reason and c.message == message then\n"
"        return false\n"
"      end\n"
"      if c.status ~= status then c.lastTransitionTime = v.now() end\n"
"      c.status, c.reason, c.message = status, reason, message\n"
"      c.lastUpdateTime = v.now()\n"
"      return true\n"
"    end\n"
"  end\n"
"  local now = v.now()\n"
"  table.insert(obj.status.conditions, {type = ctype, status = status,\n"
"    reason = reason, message = message, lastTransitionTime = now,\n"
"    lastUpdateTime = now})\n"
"  return true\n"
"end\n"
"function v.is_true(obj, ctype)\n"
"  local c = v.get_condition(obj, ctype)\n"
"  return c ~= nil and c.status == 'True'\n"
"end\n"
"function v.info(fmt, ...) v.log('info', string.format(fmt, ...), 2) end\n"
"function v.warn(fmt, ...) v.log('warn', string.format(fmt, ...), 2) end\n"
"function v.deepcopy(t)\n"
"  if type(t) ~= 'table' then return t end\n"
"  local c = {}\n"
"  for k, x in pairs(t) do c[k] = v.deepcopy(x) end\n"
"  return setmetatable(c, getmetatable(t))\n"
"end\n";

void
luaapi_open(lua_State *L, void *arg)
{
	static const luaL_Reg fns[] = {
		{ "get", l_get }, { "list", l_list }, { "create", l_create },
		{ "update", l_update }, { "update_status", l_update_status },
		{ "patch", l_patch }, { "delete", l_delete },
		{ "event", l_event }, { "quantity", l_quantity },
		{ "milli", l_milli }, { "now", l_now }, { "time", l_time },
		{ "format_time", l_format_time }, { "log", l_log },
		{ "tz_offset", l_tz_offset },
		{ "random_suffix", l_random_suffix },
		{ "ssh_keygen", l_ssh_keygen },
		{ "match_labels", l_match_labels }, { "array", l_array },
		{ "json_encode", l_json_encode },
		{ "json_decode", l_json_decode }, { NULL, NULL }
	};

	luaL_newlibtable(L, fns);
	lua_pushlightuserdata(L, arg);
	luaL_setfuncs(L, fns, 1);
	luahttp_open(L, arg);
	luaconv_push_null(L);
	lua_setfield(L, -2, "null");
	luaconfig_open(L, ((struct luactx *)arg)->batch_scheduler,
	    ((struct luactx *)arg)->root_ca);
	if (luaL_loadbufferx(L, prelude, strlen(prelude), "=volray", "t") !=
	    LUA_OK)
		fatal("volray prelude: %s", lua_tostring(L, -1));
	/* The prelude sees the sandbox base, like every script. */
	lua_getfield(L, LUA_REGISTRYINDEX, "volray.base");
	lua_setupvalue(L, -2, 1);
	lua_pushvalue(L, -2);
	lua_call(L, 1, 0);
}
