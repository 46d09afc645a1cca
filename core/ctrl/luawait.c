/*
 * Writes that wait in a coroutine (luawait.h). A wait belongs to the
 * write's C function until the coroutine yields, then to its reconcile
 * (luarun.wait) until the continuation takes the answer; a reconcile the
 * runtime abandons leaves the wait to free itself when the answer comes.
 */
#include <stdlib.h>

#include <lauxlib.h>

#include "ctrl/luawait.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"

struct luawait {
	struct luarun *run;	/* NULL: abandoned */
	enum luawait_kind kind;
	int answered;
	int suspended;		/* the coroutine yielded for it */
	struct reg_result res;
};

int
luawait_possible(lua_State *L)
{
	return luarun_of(L) != NULL && lua_isyieldable(L);
}

struct luawait *
luawait_new(lua_State *L, enum luawait_kind kind)
{
	struct luawait *w = xcalloc(1, sizeof *w);

	w->run = luarun_of(L);
	w->kind = kind;
	return w;
}

void
luawait_done(void *arg, struct reg_result *res)
{
	struct luawait *w = arg;

	w->res = *res;
	w->answered = 1;
	if (!w->suspended)
		return;		/* answered at once: luawait_result takes it */
	if (w->run == NULL) {
		cJSON_Delete(w->res.body);
		free(w);
		return;
	}
	w->run->wake(w->run);
}

int
luawait_push(lua_State *L, struct reg_result *res, enum luawait_kind kind)
{
	if (res->code >= 300) {
		const char *msg = json_str(res->body, "message");
		const char *reason = json_str(res->body, "reason");

		lua_pushnil(L);
		lua_pushstring(L, msg ? msg : "error");
		lua_pushinteger(L, res->code);
		lua_pushstring(L, reason ? reason : "");
		cJSON_Delete(res->body);
		return 4;
	}
	if (kind == LUAWAIT_TRUE)
		lua_pushboolean(L, 1);
	else
		luaconv_push(L, res->body);
	cJSON_Delete(res->body);
	return 1;
}

/* The continuation: the answer is in; push it as the call's values. */
static int
finish(lua_State *L, int status, lua_KContext ctx)
{
	struct luawait *w = (struct luawait *)ctx;
	struct reg_result res = w->res;
	enum luawait_kind kind = w->kind;

	(void)status;
	if (w->run != NULL)
		w->run->wait = NULL;
	free(w);
	return luawait_push(L, &res, kind);
}

int
luawait_result(lua_State *L, struct luawait *w)
{
	if (w->answered)
		return finish(L, LUA_OK, (lua_KContext)w);
	w->suspended = 1;
	w->run->wait = w;
	return lua_yieldk(L, 0, (lua_KContext)w, finish);
}

void
luawait_abandon(struct luawait *w)
{
	if (w->answered) {
		cJSON_Delete(w->res.body);
		free(w);
		return;
	}
	w->run = NULL;
}
