/*
 * A store version's paths as a Lua table, from the version's own fields
 * where they are enough (objpaths.h).
 */
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "ctrl/objpaths.h"
#include "lib/json.h"
#include "luahost/luaconv.h"

enum meta { META_NONE, META_NAME, META_NAMESPACE, META_UID, META_LABELS,
    META_PHASE };

static enum meta
meta_of(const char *path)
{
	if (strcmp(path, "status.phase") == 0)
		return META_PHASE;
	if (strncmp(path, "metadata.", 9) != 0)
		return META_NONE;
	path += 9;
	if (strcmp(path, "name") == 0)
		return META_NAME;
	if (strcmp(path, "namespace") == 0)
		return META_NAMESPACE;
	if (strcmp(path, "uid") == 0)
		return META_UID;
	if (strcmp(path, "labels") == 0)
		return META_LABELS;
	return META_NONE;
}

/* Set metadata.key in the table at -1 (made on first use, at -2 then). */
static void
set_meta(lua_State *L, int *made, const char *key)
{
	if (!*made) {
		/* The value is on top: the metadata table goes under it. */
		lua_createtable(L, 0, 4);
		lua_insert(L, -2);
		lua_pushvalue(L, -2);
		lua_setfield(L, -4, "metadata");
		*made = 1;
	}
	lua_setfield(L, -2, key);
}

void
objpaths_push(lua_State *L, const store_obj *o, char *const *paths, int n)
{
	int i, made = 0;

	for (i = 0; i < n; i++) {
		if (meta_of(paths[i]) == META_NONE ||
		    meta_of(paths[i]) == META_PHASE) {
			luaconv_push_json_paths(L, o->json->data,
			    o->json->len, paths, n);
			return;
		}
	}
	luaL_checkstack(L, 4, "paths");
	lua_createtable(L, 0, 1);
	for (i = 0; i < n; i++) {
		switch (meta_of(paths[i])) {
		case META_NAME:
			if (o->name == NULL || *o->name == '\0')
				continue;
			lua_pushstring(L, o->name);
			set_meta(L, &made, "name");
			break;
		case META_NAMESPACE:
			if (o->ns == NULL || *o->ns == '\0')
				continue;
			lua_pushstring(L, o->ns);
			set_meta(L, &made, "namespace");
			break;
		case META_UID:
			if (o->uid == NULL || *o->uid == '\0')
				continue;
			lua_pushstring(L, o->uid);
			set_meta(L, &made, "uid");
			break;
		case META_LABELS:
			if (o->labels == NULL)
				continue;
			luaconv_push(L, o->labels);
			set_meta(L, &made, "labels");
			break;
		case META_NONE:
		case META_PHASE:
			break;
		}
	}
	if (made)
		lua_pop(L, 1);
}

static int
same_str(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

int
objpaths_same(const store_obj *a, const store_obj *b, char *const *paths,
    int n)
{
	int i;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++) {
		switch (meta_of(paths[i])) {
		case META_NAME:
			if (!same_str(a->name, b->name))
				return 0;
			break;
		case META_NAMESPACE:
			if (!same_str(a->ns, b->ns))
				return 0;
			break;
		case META_UID:
			if (!same_str(a->uid, b->uid))
				return 0;
			break;
		case META_LABELS:
			if ((a->labels == NULL) != (b->labels == NULL) ||
			    (a->labels != NULL &&
			    !json_equal(a->labels, b->labels)))
				return 0;
			break;
		case META_PHASE:
			/* A phase that fills the version's field may have
			   been cut short: not comparable. */
			if (strlen(a->phase) >= sizeof a->phase - 1 ||
			    strcmp(a->phase, b->phase) != 0)
				return 0;
			break;
		case META_NONE:
			return 0;
		}
	}
	return 1;
}
