/*
 * A write (or a live read, volray.get's live = true) from a Lua reconcile
 * that may wait for its answer without holding the loop. The volray module's write functions start the
 * client's *_async call with luawait_done as its callback, then return
 * luawait_result: an answer already in (the embedded client answers at
 * once) is pushed there and then, so the script goes on without a
 * pause; otherwise the coroutine yields, and its continuation pushes the
 * same values when the runtime resumes it. A script sees what a
 * synchronous call gave: the object (or true for a delete), or nil, the
 * Status message, the code and the reason.
 */
#ifndef VOLRAY_LUAWAIT_H
#define VOLRAY_LUAWAIT_H

#include <lua.h>

#include "client/client.h"
#include "ctrl/luactx.h"

enum luawait_kind {
	LUAWAIT_OBJECT,		/* the answered object */
	LUAWAIT_TRUE		/* true (a delete) */
};

/* Whether a write from L may go the asynchronous way (L is a reconcile's
   coroutine that can yield here); otherwise the caller writes
   synchronously, as from a watch's map function. */
int luawait_possible(lua_State *L);
/* A wait for the write L is about to start, to pass as the callback's
   arg. */
struct luawait *luawait_new(lua_State *L, enum luawait_kind);
/* The client's callback (client_done_fn): arg is the luawait. */
void luawait_done(void *arg, struct reg_result *);
/* The write's values, now or after a yield: return it from the C
   function. */
int luawait_result(lua_State *L, struct luawait *);
/* The reconcile is gone (a reload): the answer, when it comes, is
   dropped. */
void luawait_abandon(struct luawait *);
/* A registry result as the script sees it: the object (or true), or nil,
   message, code, reason; res->body is freed. */
int luawait_push(lua_State *L, struct reg_result *, enum luawait_kind);

#endif
