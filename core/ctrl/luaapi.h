/*
 * The `volray` module that controllers (and later policies) call: reads
 * and writes through the client (client/client.h: the same validation and
 * admission as the HTTP API), Events through a recorder (client/
 * recorder.h, with its aggregation), and helpers for owner references,
 * conditions, time and resource quantities. With an authorizer set, every
 * read and write is first authorized for the user the running controller
 * acts as, and a denial fails the call as the API would (nil, the 403
 * Status message, 403, "Forbidden").
 * Documented for users in volray-lua(7).
 */
#ifndef VOLRAY_LUAAPI_H
#define VOLRAY_LUAAPI_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include <lua.h>

#include "client/recorder.h"
#include "ctrl/luactx.h"

/* Microseconds spent in C inside volray.* calls (for metrics). */
extern uint64_t luaapi_usec;

/* Push the module table (used as luahost_state_new's open_api). */
void luaapi_open(lua_State *, void *ctx);
/* Resolve "v1/pods", "apps/v1/deployments" or a plural alone ("pods"). */
const struct resource *luaapi_resource(const char *spec);
/*
 * Record an Event about obj through rec, as ctx->user: create and patch
 * (a repeat) of events in obj's namespace must both be allowed. 0, or -1
 * with *msg (malloc'd, when msg is not NULL) if they are not.
 */
int luaapi_event(struct luactx *, recorder *rec, const cJSON *obj,
    const char *type, const char *reason, const char *message, char **msg);

#endif
