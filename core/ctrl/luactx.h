/*
 * What a call from a Lua controller into the volray module runs with:
 * the client it reads and writes through, the authorizer and the user it
 * acts as, the running controller and key, its Event recorder and its
 * HTTP calls. The controllers' runtime (controller.c) keeps one and sets
 * the running controller in it before each call; the module's functions
 * (luaapi.c) and its HTTP calls (luahttp.c) both read it when they run,
 * so neither needs the other's header for it.
 *
 * Each reconcile runs in a coroutine of its own, and several may be
 * suspended at once, each in a write waiting for its answer (luawait.h).
 * The per-reconcile fields (user, owner, key, rec) are the running
 * coroutine's: the runtime keeps them with the reconcile (its luarun)
 * and sets them here at every resume, clearing them when it yields.
 */
#ifndef VOLRAY_LUACTX_H
#define VOLRAY_LUACTX_H

#include "auth/rbac.h"
#include "client/client.h"
#include "client/recorder.h"

#include <lua.h>

struct luahttp;
struct luawait;

/*
 * A reconcile in its coroutine, which points at it from its extra space
 * (lua_getextraspace). A write that waits sets wait and yields; when the
 * answer is in, wake(run) asks the runtime to resume the coroutine.
 */
struct luarun {
	struct luawait *wait;	/* the write it waits for, or NULL */
	void (*wake)(struct luarun *);
};

/* The reconcile L runs, or NULL (the main thread: loading, maps). */
static inline struct luarun *
luarun_of(lua_State *L)
{
	return *(struct luarun **)lua_getextraspace(L);
}

struct luactx {
	client *client;
	rbac *authz;             /* NULL: calls are not authorized */
	const user_info *user;   /* who the running script acts as; NULL
	                            outside a controller's calls */
	const char *batch_scheduler; /* volrayd --batch-scheduler, or NULL */
	const char *root_ca;     /* the API's CA (PEM), or NULL */
	struct luahttp *http;    /* volray.http (NULL: not available) */
	const char *owner;       /* the running controller's name, and */
	const char *key;         /* the key it reconciles (NULL outside) */
	recorder *rec;           /* volray.event's: the running controller's
	                            component */
};

#endif
