/*
 * Tests for ctrl/objpaths.c: a version's metadata paths built from its
 * own fields give the table that parsing its JSON gives
 * (luaconv_push_json_paths), for namespaced and cluster-scoped objects,
 * with and without labels; a path it does not hold goes to the parser.
 * objpaths_same: versions alike through the paths, or not.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>
#include <uv.h>

#include "check.h"
#include "ctrl/objpaths.h"
#include "lib/json.h"
#include "luahost/luaconv.h"

static lua_State *L;

/* The table on top as a tree, popped. */
static cJSON *
top_tree(void)
{
	char *cause = NULL;
	cJSON *t = luaconv_to_json(L, -1, &cause);

	lua_pop(L, 1);
	free(cause);
	return t;
}

/* objpaths_push gives the parser's table (keys in any order). */
static void
same(const store_obj *o, char *const *paths, int n)
{
	cJSON *want, *got;
	char *w, *g;

	luaconv_push_json_paths(L, o->json->data, o->json->len, paths, n);
	want = top_tree();
	objpaths_push(L, o, paths, n);
	got = top_tree();
	CHECK(want != NULL && got != NULL);
	CHECK(json_equal(want, got));
	if (!json_equal(want, got)) {
		w = cJSON_PrintUnformatted(want);
		g = cJSON_PrintUnformatted(got);
		fprintf(stderr, "  got %s\n  want %s\n", g, w);
		free(w);
		free(g);
	}
	cJSON_Delete(want);
	cJSON_Delete(got);
}

int
main(void)
{
	char dir[] = "/tmp/volray-test-objpaths.XXXXXX";
	uv_loop_t *loop = uv_default_loop();
	char *meta[] = { "metadata.namespace", "metadata.labels",
	    "metadata.name", "metadata.uid" };
	char *ns_only[] = { "metadata.namespace" };
	char *mixed[] = { "metadata.name", "spec.nodeName" };
	char *cause = NULL;
	store *st;
	cJSON *o;

	L = luaL_newstate();
	luaL_openlibs(L);
	luaconv_init(L);
	CHECK(mkdtemp(dir) != NULL);
	CHECK(store_open(loop, dir, &st, &cause) == 0);

	o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	    "{\"name\":\"p\",\"namespace\":\"a\",\"uid\":\"u1\",\"labels\":"
	    "{\"app\":\"x\",\"ray.io/node-type\":\"head\"}},"
	    "\"spec\":{\"nodeName\":\"n1\"}}");
	store_put(st, "pods", "a", "p", o);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	    "{\"name\":\"bare\",\"namespace\":\"a\",\"uid\":\"u2\"}}");
	store_put(st, "pods", "a", "bare", o);
	cJSON_Delete(o);
	o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
	    "{\"name\":\"n1\",\"uid\":\"u3\",\"labels\":{}}}");
	store_put(st, "nodes", "", "n1", o);
	cJSON_Delete(o);

	same(store_get(st, "pods", "a", "p"), meta, 4);
	same(store_get(st, "pods", "a", "p"), ns_only, 1);
	same(store_get(st, "pods", "a", "p"), mixed, 2);
	same(store_get(st, "pods", "a", "bare"), meta, 4);
	same(store_get(st, "nodes", "", "n1"), meta, 4);
	same(store_get(st, "nodes", "", "n1"), ns_only, 1);

	/* Two versions of p: the same labels, then others. */
	{
		store_obj *v1 = store_obj_ref((store_obj *)store_get(st, "pods", "a", "p"));
		store_obj *v2, *v3;

		o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
		    "\"metadata\":{\"name\":\"p\",\"namespace\":\"a\","
		    "\"uid\":\"u1\",\"labels\":{\"ray.io/node-type\":\"head\","
		    "\"app\":\"x\"}},\"spec\":{\"nodeName\":\"n2\"}}");
		store_put(st, "pods", "a", "p", o);
		cJSON_Delete(o);
		v2 = store_obj_ref((store_obj *)store_get(st, "pods", "a", "p"));
		o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
		    "\"metadata\":{\"name\":\"p\",\"namespace\":\"a\","
		    "\"uid\":\"u1\",\"labels\":{\"app\":\"y\"}}}");
		store_put(st, "pods", "a", "p", o);
		cJSON_Delete(o);
		v3 = store_obj_ref((store_obj *)store_get(st, "pods", "a", "p"));
		CHECK(objpaths_same(v1, v2, meta, 4) == 1);
		CHECK(objpaths_same(v2, v3, meta, 4) == 0);
		CHECK(objpaths_same(v2, v3, ns_only, 1) == 1);
		/* spec.nodeName moved: not a path it can compare. */
		CHECK(objpaths_same(v1, v2, mixed, 2) == 0);
		CHECK(objpaths_same(v1, v2, NULL, 0) == 0);
		{
			char *phase[] = { "status.phase" };

			/* Neither has a phase; then v3 gets one. */
			CHECK(objpaths_same(v1, v2, phase, 1) == 1);
			o = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":"
			    "\"Pod\",\"metadata\":{\"name\":\"p\","
			    "\"namespace\":\"a\",\"uid\":\"u1\"},"
			    "\"status\":{\"phase\":\"Running\"}}");
			store_put(st, "pods", "a", "p", o);
			cJSON_Delete(o);
			CHECK(objpaths_same(v3, store_get(st, "pods", "a", "p"),
			    phase, 1) == 0);
		}
		CHECK(objpaths_same(store_get(st, "pods", "a", "bare"), v3,
		    ns_only, 1) == 1);
		CHECK(objpaths_same(store_get(st, "pods", "a", "bare"), v3,
		    meta, 4) == 0);
		store_obj_unref(v1);
		store_obj_unref(v2);
		store_obj_unref(v3);
	}

	/* And the labels are a table a map can index. */
	objpaths_push(L, store_get(st, "nodes", "", "n1"), meta, 4);
	lua_getfield(L, -1, "metadata");
	lua_getfield(L, -1, "labels");
	CHECK(lua_istable(L, -1));
	lua_pop(L, 3);
	objpaths_push(L, store_get(st, "pods", "a", "bare"), meta, 4);
	lua_getfield(L, -1, "metadata");
	lua_getfield(L, -1, "labels");
	CHECK(lua_isnil(L, -1));
	lua_pop(L, 3);

	store_close(st);
	lua_close(L);
	return check_result("test-objpaths");
}
