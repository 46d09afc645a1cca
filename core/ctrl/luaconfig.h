/*
 * volray.config (the daemon's settings that scripts may read) and
 * volray.yaml_decode, added to the volray module table by luaapi_open.
 */
#ifndef VOLRAY_LUACONFIG_H
#define VOLRAY_LUACONFIG_H

#include <lua.h>

/*
 * Add yaml_decode and config to the table on top of L; batch_scheduler is
 * volrayd's --batch-scheduler ("" or NULL when not given), root_ca the
 * PEM of the CA that verifies the API server ("" or NULL: none).
 */
void luaconfig_open(lua_State *, const char *batch_scheduler,
    const char *root_ca);

#endif
