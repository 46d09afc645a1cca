/*
 * Tests for ctrl/objpaths.c: a version's metadata paths built from its
 * own fields give the table that parsing its JSON gives
 * (luaconv_push_json_paths), for namespaced and cluster-scoped objects,
 * with and without labels; a path it does not hold goes to the parser.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>
#include <uv.h>

#include "check.h"
#include "ctrl/objpaths.h"
#include "luahost/luaconv.h"

static lua_State *L;

/* The table on top as canonical JSON (sorted keys), popped. */
static char *
top_json(void)
{
	char *cause = NULL, *s;
	cJSON *t = luaconv_to_json(L, -1, &cause);

	lua_pop(L, 1);
	if (t == NULL) {
		free(cause);
		return strdup("<unconvertible>");
	}
	s = cJSON_PrintUnformatted(t);
	cJSON_Delete(t);
	return s;
}

static void
same(const store_obj *o, char *const *paths, int n)
{
	char *want, *got;

	luaconv_push_json_paths(L, o->json->data, o->json->len, paths, n);
	want = top_json();
	objpaths_push(L, o, paths, n);
	got = top_json();
	CHECK_STR(got, want);
	free(want);
	free(got);
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

	/* And the labels are a table a map can index. */
	objpaths_push(L, store_get(st, "pods", "a", "p"), meta, 4);
	lua_getfield(L, -1, "metadata");
	lua_getfield(L, -1, "labels");
	lua_getfield(L, -1, "ray.io/node-type");
	CHECK_STR(lua_tostring(L, -1), "head");
	lua_pop(L, 4);

	store_close(st);
	lua_close(L);
	return check_result("test-objpaths");
}
