/*
 * The `volray` module that controllers (and later policies) call: reads
 * from the store, writes through the registry (the same validation and
 * admission as the HTTP API), Events with aggregation, and helpers for
 * owner references, conditions, time and resource quantities.
 * Documented for users in volray-lua(7).
 */
#ifndef VOLRAY_LUAAPI_H
#define VOLRAY_LUAAPI_H

#include <stdint.h>
#include <cjson/cJSON.h>
#include <lua.h>

#include "registry/registry.h"
#include "store/store.h"

struct luaapi_ctx {
	registry *rg;
	store *st;
};

/* Microseconds spent in C inside volray.* calls (for metrics). */
extern uint64_t luaapi_usec;

/* Push the module table (used as luahost_state_new's open_api). */
void luaapi_open(lua_State *, void *ctx);
/* Resolve "v1/pods", "apps/v1/deployments" or a plural alone ("pods"). */
const struct resource *luaapi_resource(const char *spec);
/*
 * Record an Event about obj (aggregated: the same type, reason and message
 * on the same object bumps count and lastTimestamp).
 */
void luaapi_record_event(registry *, const cJSON *obj, const char *type,
    const char *reason, const char *message, const char *component);
/* Parse a Kubernetes quantity ("500m", "1Gi", "2") into base units. */
int luaapi_quantity(const char *s, double *out);

#endif
