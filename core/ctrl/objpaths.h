/*
 * A store version as a Lua table of only some of its paths, for watch
 * maps and volray.list's paths option. A version already holds its name,
 * namespace, uid and labels apart from its JSON: paths among those are
 * built from them without parsing the object (a pod's map in four
 * controllers ran cJSON over every pod event for its namespace and
 * labels). Other paths: luaconv_push_json_paths.
 */
#ifndef VOLRAY_OBJPATHS_H
#define VOLRAY_OBJPATHS_H

#include <lua.h>

#include "store/store.h"

/* Push o with only the n paths given, as luaconv_push_json_paths would. */
void objpaths_push(lua_State *, const store_obj *o, char *const *paths,
    int n);

/*
 * Whether a and b look the same through the n paths, as far as their own
 * fields tell: the metadata paths above and status.phase (0 when a path
 * is not among them, or n is 0: the whole object).
 */
int objpaths_same(const store_obj *a, const store_obj *b,
    char *const *paths, int n);

#endif
