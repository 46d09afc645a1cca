/*
 * The shuffle action (Volcano's): evict the running tasks the plugins'
 * victim_tasks choose, so that their controllers make them again and
 * the next sessions place them elsewhere. The rescheduling plugin
 * chooses the tasks of over-used nodes, tdm those of revocable nodes
 * whose time window closed; each rate-limits itself.
 *
 * victim_tasks is the tier rule: every plugin of a tier that
 * defines victim_tasks is asked (victim_tasks(ssn) returns a list of
 * task views and optionally a reason for all of them or a list of
 * reasons, one per task); the tier's answers are merged
 * without duplicates, and the first tier that names some decides.
 * Only running tasks are taken: a task in another state in a list is
 * passed over. The chosen tasks are evicted in one statement, each with
 * "shuffle: " and its plugin's reason (the pod's event and its
 * DisruptionTarget condition say it).
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "sched/sched_int.h"

/* The tiers' victim_tasks: the tasks chosen (allocated, their number)
   and each one's reason (owned by the caller). */
static int
victim_tasks(struct session *ss, struct s_task ***out, char ***reasons)
{
	lua_State *L = ss->L;
	char *seen = xcalloc((size_t)ss->ntasks + 1, 1);
	struct s_task **v = NULL;
	char **why = NULL;
	size_t cap = 0, capwhy = 0;
	int tier, n = 0;

	for (tier = 0; tier < ss->pol->conf.ntiers && n == 0; tier++) {
		struct plugin *pl;

		for (pl = ss->pol->plugins; pl < ss->pol->plugins +
		    ss->pol->nplugins; pl++) {
			lua_Integer i, len;

			if (pl->tier != tier || !pl->has[EP_VICTIM])
				continue;
			/* A failed call (with failurePolicy Fail too)
			   takes no victim. */
			if (framework_call(ss, pl, EP_VICTIM, 0, 2) != 0)
				continue;
			len = lua_istable(L, -2) ? luaL_len(L, -2) : 0;
			for (i = 1; i <= len; i++) {
				struct s_task *t;
				const char *r = NULL;
				int pushed = 0;

				lua_geti(L, -2, i);
				t = view_task_at(L, -1);
				lua_pop(L, 1);
				if (t == NULL || t->status != TS_RUNNING ||
				    seen[t->idx])
					continue;
				seen[t->idx] = 1;
				if (lua_istable(L, -1)) {
					lua_geti(L, -1, i);
					if (lua_type(L, -1) != LUA_TSTRING)
						lua_pop(L, 1);
					else {
						r = lua_tostring(L, -1);
						pushed = 1;
					}
				} else if (lua_type(L, -1) == LUA_TSTRING)
					r = lua_tostring(L, -1);
				XGROW(v, cap, (size_t)n + 1);
				XGROW(why, capwhy, (size_t)n + 1);
				v[n] = t;
				why[n++] = r != NULL && *r ?
				    util_printf("shuffle: %s (plugin %s)", r,
				    pl->name) : util_printf("shuffle (plugin %s)",
				    pl->name);
				if (pushed)
					lua_pop(L, 1);
			}
			lua_pop(L, 2);
		}
	}
	free(seen);
	*out = v;
	*reasons = why;
	return n;
}

void
shuffle_run(struct session *ss)
{
	struct statement st;
	struct s_task **v;
	char **why;
	int i, n;

	if (!framework_defines(ss, EP_VICTIM))
		return;
	n = victim_tasks(ss, &v, &why);
	statement_init(&st, ss);
	for (i = 0; i < n; i++) {
		statement_evict(&st, v[i], why[i]);
		free(why[i]);
	}
	statement_commit(&st);
	free(v);
	free(why);
}
