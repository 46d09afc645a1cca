/*
 * The controller runtime: turns store events into reconcile calls of Lua
 * controllers. A controller is a file controllers/NAME.lua returning
 *   { primary = "apps/v1/replicasets", owns = {"v1/pods"},
 *     watches = {{resource = "v1/nodes", map = function(obj) ... end}},
 *     reconcile = function(req) ... end }
 * Events on the primary enqueue its key, events on owned objects enqueue
 * the owner named by their controller ownerReference, events on watched
 * objects enqueue what map returns. Each controller has a workqueue
 * (wqueue.c); a reconcile that errors is retried with backoff and leaves a
 * Warning Event on the object.
 */
#ifndef VOLRAY_CONTROLLER_H
#define VOLRAY_CONTROLLER_H

#include <stdint.h>
#include <uv.h>

#include "ctrl/luahost.h"
#include "registry/registry.h"
#include "store/store.h"

typedef struct controller_rt controller_rt;

controller_rt *controller_new(uv_loop_t *, store *, registry *, luahost *);
void controller_free(controller_rt *);
/*
 * Load every controller into a new Lua state beside the current one and
 * swap on success; on failure keep the running set and return -1 with
 * *cause naming the file and line.
 */
int controller_reload(controller_rt *, char **cause);

#endif
