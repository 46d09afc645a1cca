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
 *
 * Each controller acts as its own user, system:controller:NAME-controller
 * (or kube-controller-manager's name for it: daemon-set-controller,
 * endpoint-controller, replication-controller, resource-claim-controller,
 * service-account-controller) in group system:authenticated: with an authorizer set, everything its
 * script reads and writes through volray.* must be allowed to that user by
 * RBAC (the bootstrap policy has a least-privilege ClusterRole for each
 * controller volray ships; any other has no rights until a role is bound).
 */
#ifndef VOLRAY_CONTROLLER_H
#define VOLRAY_CONTROLLER_H

#include <stdint.h>
#include <uv.h>

#include "auth/rbac.h"
#include "client/client.h"
#include "luahost/luahost.h"

typedef struct controller_rt controller_rt;

/* A runtime whose controllers see and change objects through client. */
controller_rt *controller_new(uv_loop_t *, client *, luahost *);
void controller_free(controller_rt *);
/*
 * Authorize every volray.* call of the controllers with authz (NULL: no
 * checks, the default). Call it once, before or after controller_reload.
 */
void controller_set_authorizer(controller_rt *, rbac *authz);
/*
 * The batch scheduler volrayd was started with (--batch-scheduler; NULL
 * for none), shown to scripts as volray.config.batch_scheduler from the
 * next controller_reload on. The string must outlive the runtime.
 */
void controller_set_batch_scheduler(controller_rt *, const char *name);
/*
 * The CA that verifies the API server (PEM, kept by the caller; NULL for
 * none: plain HTTP), shown to scripts as volray.config.root_ca (the
 * namespaces' kube-root-ca.crt ConfigMaps). Before the first reload.
 */
void controller_set_root_ca(controller_rt *, const char *pem);
/*
 * Give the controllers volray.http (borrowed): a response wakes the key
 * of the controller that asked. Before the first reconcile.
 */
typedef struct luahttp luahttp;
void controller_set_http(controller_rt *, luahttp *);
/*
 * Run only the controllers sel enables (volrayd --controllers, ctrlsel.h;
 * borrowed, NULL for every one) from the next controller_reload on, which
 * fails when sel names a controller there is no script for.
 */
typedef struct ctrlsel ctrlsel;
void controller_set_selection(controller_rt *, const ctrlsel *sel);
/* "system:controller:NAME-controller", malloc'd: the user of NAME.lua
   (kube's spelling where it differs: resourceclaim.lua's is
   resource-claim-controller, replicationcontroller.lua's
   replication-controller). */
char *controller_user_name(const char *name);
/*
 * Load every controller into a new Lua state beside the current one and
 * swap on success; on failure keep the running set and return -1 with
 * *cause naming the file and line.
 */
int controller_reload(controller_rt *, char **cause);
/*
 * The i-th running controller (from 0): its name, its script's path and
 * the RFC 3339 time it was loaded, valid until the next reload. Returns
 * 0, or -1 past the last (volray policy list).
 */
int controller_info(const controller_rt *, int i, const char **name,
    const char **file, const char **loaded_at);

#endif
