/*
 * How the tiers combine the plugins' extension points (Volcano's table):
 *
 *   job/queue/task order   first non-zero comparison (or differing
 *                          order key) wins; fallback creation time,
 *                          then uid
 *   victim_queue_order     first non-zero comparison; fallback the
 *                          reverse queue order
 *   job_valid              first failure
 *   job_ready              AND over all, default true
 *   job_pipelined,         votes -1/0/1: any -1 -> false; at the end of
 *   job_enqueueable          a tier any +1 -> true; all abstain -> next
 *                          tier; default true
 *   job_starving           the first tier that has one decides (AND)
 *   overused               OR
 *   allocatable,           AND
 *   preemptive
 *   preemptable,           within a tier intersect the lists of the
 *   reclaimable              plugins that answer; empty -> next tier
 *   victim_tasks           the union of a tier's lists; the first
 *                          tier naming some decides (shuffle.c)
 *   predicate              first rejection
 *   node_order             summed
 *   on_allocate/deallocate every plugin
 *
 * Every call goes through framework_call: a plugin whose call fails
 * (error, instruction budget, memory) is reported and, with its
 * failurePolicy Ignore (the default), skipped for the rest of the
 * session. With failurePolicy Fail its votes and predicates count as
 * rejections for the rest of the session instead, never as passes: a
 * job it would judge is not valid, not ready, not enqueued, not
 * pipelined; its queue is overused and allocates nothing; no victim is
 * taken and no node passes. Orders, scores and event handlers cannot
 * reject: a failed one is skipped either way.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luahost.h"
#include "sched/sched_int.h"

/* The plugins defining ep that may still be called or refuse. */
#define EACH_PLUGIN(ss, pl, ep)						\
	for (struct plugin *pl = (ss)->pol->plugins;			\
	    pl < (ss)->pol->plugins + (ss)->pol->nplugins; pl++)	\
		if (pl->has[ep] && (pl->conf->fail_closed ||		\
		    !(ss)->failed[pl - (ss)->pol->plugins]))

/*
 * Cut err (a message and Lua's traceback) at the traceback, which is
 * returned (allocated, "" when there is none) without what the user did
 * not write: the batch trampoline's frames, and the C frames of error()
 * and the call; the trampoline's name for the plugin's function becomes
 * the extension point's.
 */
static char *
tidy_traceback(char *err, const char *ep)
{
	char *tb = strstr(err, "\nstack traceback:"), *line, *next, *out;
	size_t len = 0, cap;

	if (tb == NULL)
		return xstrdup("");
	*tb++ = '\0';
	cap = strlen(tb) + strlen(ep) * 8 + 64;
	out = xmalloc(cap);
	out[0] = '\0';
	for (line = tb; line != NULL && *line; line = next) {
		char *q;

		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if (len + 1 >= cap)
			break;
		if (strstr(line, TRAMPOLINE_NAME) != NULL ||
		    strstr(line, "[C]: in ") != NULL)
			continue;
		if ((q = strstr(line, "in local 'plugin_fn'")) != NULL)
			len += (size_t)snprintf(out + len, cap - len,
			    "\n%.*sin function '%s'", (int)(q - line), line, ep);
		else
			len += (size_t)snprintf(out + len, cap - len, "\n%s",
			    line);
	}
	return out;
}

/*
 * Call plugin pl's function for ep with nargs pushed: 0 with nres results
 * pushed, or -1 with nothing pushed when it is not there, failed earlier
 * in the session or fails now (error, instruction budget, memory): then
 * it is skipped for the rest of the session and the failure reported (an
 * Event on the root queue). A failed plugin whose failurePolicy is Fail
 * gives FW_REFUSED instead of -1: its caller counts a rejection.
 * Per-node functions (predicate, node_order) are called once for all
 * the nodes, through the policy's trampoline.
 */
int
framework_call(struct session *ss, struct plugin *pl, int ep, int nargs,
    int nres)
{
	lua_State *L = ss->L;
	int k = (int)(pl - ss->pol->plugins), base = lua_gettop(L) - nargs;
	char *err = NULL;

	if (ss->failed[k]) {
		lua_settop(L, base);
		return pl->conf->fail_closed ? FW_REFUSED : -1;
	}
	if (!pl->has[ep] && ep != EP_OPEN && ep != EP_CLOSE) {
		lua_settop(L, base);
		return -1;
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, pl->ref);
	lua_getfield(L, -1, config_ep_names[ep]);
	lua_remove(L, -2);
	if (!lua_isfunction(L, -1)) {
		lua_settop(L, base);
		return -1;
	}
	lua_insert(L, base + 1);
	lua_rawgeti(L, LUA_REGISTRYINDEX, ss->ssn_ref);
	lua_insert(L, base + 2);
	if (ep == EP_PREDICATE || ep == EP_NODE_ORDER) {
		/* (task, nodes): one call for all the nodes. */
		lua_rawgeti(L, LUA_REGISTRYINDEX, ss->pol->tramp_ref);
		lua_insert(L, base + 1);
		nargs++;
	}
	{
		uint64_t t0 = util_usec();
		int rc = luahost_call(L, nargs + 1, nres, &err);

		ss->lua_us += util_usec() - t0;
		if (rc == 0)
			return 0;
	}
	{
		char *tb = tidy_traceback(err, config_ep_names[ep]);
		char *m = util_printf("plugin %s failed in %s (%s): %s; %s "
		    "for the rest of this session%s", pl->name,
		    config_ep_names[ep], pl->file, err, pl->conf->fail_closed ?
		    "its votes and predicates reject (failurePolicy Fail)" :
		    "skipped", tb);

		log_warn("scheduler: %s", m);
		ss->failed[k] = 1;
		ss->fail_err[k] = util_printf("plugin %s failed in %s: %s",
		    pl->name, config_ep_names[ep], err);
		free(tb);
		ss->events = xreallocarray(ss->events, (size_t)ss->nevents + 1,
		    sizeof *ss->events);
		ss->events[ss->nevents++] = m;
		free(err);
		lua_settop(L, base);
		return pl->conf->fail_closed ? FW_REFUSED : -1;
	}
}

int
framework_defines(struct session *ss, int ep)
{
	EACH_PLUGIN(ss, pl, ep)
		return 1;
	return 0;
}

static int
result_int(lua_State *L)
{
	int r = (int)lua_tointeger(L, -1);

	if (lua_isboolean(L, -1))
		r = lua_toboolean(L, -1);
	lua_pop(L, 1);
	return r;
}

/* ------------------------------------------------------------------ */
/* Orders.                                                             */

static int
fallback(const char *ca, const char *cb, const char *ua, const char *ub)
{
	int c;

	if (ca != NULL && cb != NULL && (c = strcmp(ca, cb)) != 0)
		return c < 0;
	if (ua != NULL && ub != NULL)
		return strcmp(ua, ub) < 0;
	return 0;
}

/*
 * Order keys: a plugin may give, instead of a comparison, a key of up to
 * MAX_KEYS numbers per object (lower first, compared in turn); the key is
 * computed once and again only after its object changed (a job's tasks,
 * a queue's allocations, a task's status), so ordering thousands of jobs
 * costs one Lua call per job, not one per comparison.
 */
static const struct okey *
order_key(struct session *ss, struct plugin *pl, int ep, void *obj)
{
	lua_State *L = ss->L;
	struct okey **keys, *o;
	uint32_t ver;
	int k = (int)(pl - ss->pol->plugins), i;

	switch (ep) {
	case EP_JOB_ORDER_KEY:
		keys = &((struct s_job *)obj)->keys;
		ver = ((struct s_job *)obj)->ver;
		break;
	case EP_QUEUE_ORDER_KEY:
		keys = &((struct s_queue *)obj)->keys;
		ver = ((struct s_queue *)obj)->ver;
		break;
	default:
		keys = &((struct s_task *)obj)->keys;
		ver = ((struct s_task *)obj)->ver;
		break;
	}
	if (*keys == NULL)
		*keys = xcalloc((size_t)ss->pol->nplugins, sizeof **keys);
	o = &(*keys)[k];
	if (o->ver == ver + 1)
		return o;
	o->ver = ver + 1;
	o->n = 0;
	switch (ep) {
	case EP_JOB_ORDER_KEY: view_push_job(ss, obj); break;
	case EP_QUEUE_ORDER_KEY: view_push_queue(ss, obj); break;
	default: view_push_task(ss, obj); break;
	}
	if (framework_call(ss, pl, ep, 1, MAX_KEYS) != 0)
		return o;
	for (i = 0; i < MAX_KEYS; i++) {
		int idx = -MAX_KEYS + i;

		if (lua_type(L, idx) != LUA_TNUMBER)
			break;
		o->k[o->n++] = lua_tonumber(L, idx);
	}
	lua_pop(L, MAX_KEYS);
	return o;
}

static int
key_cmp(const struct okey *a, const struct okey *b)
{
	int i, n = a->n < b->n ? a->n : b->n;

	for (i = 0; i < n; i++)
		if (a->k[i] != b->k[i])
			return a->k[i] < b->k[i] ? -1 : 1;
	return 0;
}

/* The plugins' verdict on a vs b: <0, 0 or >0. */
static int
order(struct session *ss, int ep, int key_ep, void *a, void *b,
    void (*push)(struct session *, void *))
{
	struct plugin *pl;

	for (pl = ss->pol->plugins; pl < ss->pol->plugins + ss->pol->nplugins;
	    pl++) {
		int r;

		if (ss->failed[pl - ss->pol->plugins])
			continue;
		if (pl->has[key_ep]) {
			if ((r = key_cmp(order_key(ss, pl, key_ep, a),
			    order_key(ss, pl, key_ep, b))) != 0)
				return r;
			continue;
		}
		if (!pl->has[ep])
			continue;
		push(ss, a);
		push(ss, b);
		if (framework_call(ss, pl, ep, 2, 1) != 0)
			continue;
		if ((r = result_int(ss->L)) != 0)
			return r;
	}
	return 0;
}

static void push_job(struct session *ss, void *x) { view_push_job(ss, x); }
static void push_queue(struct session *ss, void *x) { view_push_queue(ss, x); }
static void push_task(struct session *ss, void *x) { view_push_task(ss, x); }

int
framework_job_less(struct session *ss, struct s_job *a, struct s_job *b)
{
	int r = order(ss, EP_JOB_ORDER, EP_JOB_ORDER_KEY, a, b, push_job);

	if (r != 0)
		return r < 0;
	return fallback(a->created, b->created, a->key, b->key);
}

int
framework_job_order(struct session *ss, struct s_job *a, struct s_job *b)
{
	return order(ss, EP_JOB_ORDER, EP_JOB_ORDER_KEY, a, b, push_job);
}

int
framework_queue_less(struct session *ss, struct s_queue *a, struct s_queue *b)
{
	int r = order(ss, EP_QUEUE_ORDER, EP_QUEUE_ORDER_KEY, a, b,
	    push_queue);

	if (r != 0)
		return r < 0;
	return fallback(json_str(a->obj, "metadata.creationTimestamp"),
	    json_str(b->obj, "metadata.creationTimestamp"), a->name,
	    b->name);
}

int
framework_victim_queue_order(struct session *ss, struct s_queue *a,
    struct s_queue *b, struct s_queue *p)
{
	EACH_PLUGIN(ss, pl, EP_VICTIM_QUEUE_ORDER) {
		int r;

		view_push_queue(ss, a);
		view_push_queue(ss, b);
		view_push_queue(ss, p);
		if (framework_call(ss, pl, EP_VICTIM_QUEUE_ORDER, 3, 1) != 0)
			continue;
		if ((r = result_int(ss->L)) != 0)
			return r;
	}
	return 0;
}

int
framework_victim_queue_first(struct session *ss, struct s_queue *a,
    struct s_queue *b, struct s_queue *p)
{
	int r = p != NULL ? framework_victim_queue_order(ss, a, b, p) : 0;

	if (r != 0)
		return r < 0;
	return framework_queue_less(ss, b, a);
}

int
framework_task_less(struct session *ss, struct s_task *a, struct s_task *b)
{
	int r = order(ss, EP_TASK_ORDER, EP_TASK_ORDER_KEY, a, b, push_task);

	if (r != 0)
		return r < 0;
	return fallback(a->created, b->created, a->name, b->name);
}

/* ------------------------------------------------------------------ */
/* Job predicates.                                                     */

/* What held j back: the plugin, its reason and message. */
static void
set_invalid(struct s_job *j, const struct plugin *pl, const char *reason,
    const char *msg)
{
	free(j->invalid_reason);
	free(j->invalid_msg);
	j->invalid_reason = xstrdup(reason);
	j->invalid_msg = xstrdup(msg);
	j->invalid_plugin = pl->name;
	j->invalid = 1;
}

int
framework_job_valid(struct session *ss, struct s_job *j)
{
	lua_State *L = ss->L;

	EACH_PLUGIN(ss, pl, EP_JOB_VALID) {
		int rc;

		view_push_job(ss, j);
		if ((rc = framework_call(ss, pl, EP_JOB_VALID, 1, 3)) ==
		    FW_REFUSED) {
			set_invalid(j, pl, "PluginFailed",
			    ss->fail_err[pl - ss->pol->plugins]);
			return 0;
		}
		if (rc != 0)
			continue;
		if (lua_isboolean(L, -3) && !lua_toboolean(L, -3)) {
			set_invalid(j, pl, luaL_optstring(L, -2, "NotValid"),
			    luaL_optstring(L, -1, ""));
			lua_pop(L, 3);
			return 0;
		}
		lua_pop(L, 3);
	}
	return 1;
}

/* Which plugin said no to j at ep, for explain. */
static void
veto(struct s_job *j, int ep, const char *plugin)
{
	switch (ep) {
	case EP_JOB_ENQUEUEABLE: j->enq_veto = plugin; break;
	case EP_JOB_READY: j->ready_veto = plugin; break;
	case EP_JOB_PIPELINED: j->pipe_veto = plugin; break;
	default: break;
	}
}

static int
bool_and(struct session *ss, struct s_job *j, int ep)
{
	EACH_PLUGIN(ss, pl, ep) {
		int rc, ok;

		view_push_job(ss, j);
		if ((rc = framework_call(ss, pl, ep, 1, 1)) == FW_REFUSED) {
			veto(j, ep, pl->name);
			return 0;
		}
		if (rc != 0)
			continue;
		ok = lua_toboolean(ss->L, -1);
		lua_pop(ss->L, 1);
		if (!ok) {
			veto(j, ep, pl->name);
			return 0;
		}
	}
	return 1;
}

int
framework_job_ready(struct session *ss, struct s_job *j)
{
	return bool_and(ss, j, EP_JOB_READY);
}

/*
 * Tiered votes. A vote against may come with the plugin's words (a
 * second result, a string); *cause gets a copy when why is given.
 */
static int
votes(struct session *ss, struct s_job *j, int ep, char **cause)
{
	int tier = -1, permit = 0;

	EACH_PLUGIN(ss, pl, ep) {
		const char *msg;
		int r;

		if (pl->tier != tier) {
			if (permit)
				return 1;
			tier = pl->tier;
		}
		view_push_job(ss, j);
		if ((r = framework_call(ss, pl, ep, 1, 2)) == FW_REFUSED) {
			/* Its error is the reason, not a vote it never
			   gave. */
			veto(j, ep, pl->name);
			if (cause != NULL) {
				free(*cause);
				*cause = xstrdup(ss->fail_err[pl -
				    ss->pol->plugins]);
			}
			if (ep == EP_JOB_ENQUEUEABLE)
				j->enq_failed = 1;
			return 0;
		}
		if (r != 0)
			continue;
		msg = lua_type(ss->L, -1) == LUA_TSTRING ?
		    lua_tostring(ss->L, -1) : NULL;
		if (cause != NULL && msg != NULL) {
			free(*cause);
			*cause = xstrdup(msg);
		}
		lua_pop(ss->L, 1);
		r = result_int(ss->L);
		if (r < 0) {
			veto(j, ep, pl->name);
			return 0;
		}
		if (cause != NULL) {
			free(*cause);
			*cause = NULL;
		}
		if (r > 0)
			permit = 1;
	}
	return 1;
}

int
framework_job_pipelined(struct session *ss, struct s_job *j)
{
	return votes(ss, j, EP_JOB_PIPELINED, NULL);
}

int
framework_job_enqueueable(struct session *ss, struct s_job *j, char **cause)
{
	return votes(ss, j, EP_JOB_ENQUEUEABLE, cause);
}

void
framework_job_enqueued(struct session *ss, struct s_job *j)
{
	EACH_PLUGIN(ss, pl, EP_JOB_ENQUEUED) {
		view_push_job(ss, j);
		framework_call(ss, pl, EP_JOB_ENQUEUED, 1, 0);
	}
}

int
framework_job_starving(struct session *ss, struct s_job *j)
{
	int tier = -1, decided = 0, result = 1, rc;

	EACH_PLUGIN(ss, pl, EP_JOB_STARVING) {
		if (pl->tier != tier) {
			if (decided)
				return result;
			tier = pl->tier;
		}
		view_push_job(ss, j);
		if ((rc = framework_call(ss, pl, EP_JOB_STARVING, 1, 1)) ==
		    FW_REFUSED)
			return 0;
		if (rc != 0)
			continue;
		decided = 1;
		if (!lua_toboolean(ss->L, -1))
			result = 0;
		lua_pop(ss->L, 1);
	}
	return decided ? result : 0;
}

/* ------------------------------------------------------------------ */
/* Queue predicates.                                                   */

int
framework_overused(struct session *ss, struct s_queue *q)
{
	EACH_PLUGIN(ss, pl, EP_OVERUSED) {
		int r;

		view_push_queue(ss, q);
		if ((r = framework_call(ss, pl, EP_OVERUSED, 1, 1)) ==
		    FW_REFUSED) {
			q->overused_by = pl->name;
			return 1;
		}
		if (r != 0)
			continue;
		r = lua_toboolean(ss->L, -1);
		lua_pop(ss->L, 1);
		if (r) {
			q->overused_by = pl->name;
			return 1;
		}
	}
	return 0;
}

static int
queue_task_and(struct session *ss, int ep, struct s_queue *q,
    struct s_task *t)
{
	EACH_PLUGIN(ss, pl, ep) {
		int r;

		view_push_queue(ss, q);
		view_push_task(ss, t);
		if ((r = framework_call(ss, pl, ep, 2, 1)) == FW_REFUSED)
			return 0;
		if (r != 0)
			continue;
		r = lua_toboolean(ss->L, -1);
		lua_pop(ss->L, 1);
		if (!r)
			return 0;
	}
	return 1;
}

int
framework_allocatable(struct session *ss, struct s_queue *q, struct s_task *t)
{
	return queue_task_and(ss, EP_ALLOCATABLE, q, t);
}

int
framework_preemptive(struct session *ss, struct s_queue *q, struct s_task *t)
{
	return queue_task_and(ss, EP_PREEMPTIVE, q, t);
}

/* ------------------------------------------------------------------ */
/* Victims.                                                            */

/* What the victim rules are asked about: a preemptor task, or for the
   gang actions an eviction context {kind, job}. */
struct victim_ask {
	struct s_task *preemptor;
	const char *kind;
	struct s_job *job;
};

static void
push_ask(struct session *ss, const struct victim_ask *a)
{
	if (a->preemptor != NULL) {
		view_push_task(ss, a->preemptor);
		return;
	}
	lua_createtable(ss->L, 0, 2);
	lua_pushstring(ss->L, a->kind);
	lua_setfield(ss->L, -2, "kind");
	view_push_job(ss, a->job);
	lua_setfield(ss->L, -2, "job");
}

/*
 * The tiers' victim rule at ep: within a tier, the candidates every
 * answering plugin accepts; the first tier that accepts some decides.
 * cands is compacted to them; their number.
 */
static int
victims_by_tier(struct session *ss, int ep, const struct victim_ask *ask,
    struct s_task **cands, int n, const char **why, int *marks, int *mine)
{
	lua_State *L = ss->L;
	int tier, i, k = 0, refused = 0;

	for (tier = 0; tier < ss->pol->conf.ntiers && k == 0 && !refused;
	    tier++) {
		int answered = 0;

		memset(marks, 0, (size_t)n * sizeof *marks);
		EACH_PLUGIN(ss, pl, ep) {
			if (pl->tier != tier)
				continue;
			push_ask(ss, ask);
			lua_createtable(L, n, 0);
			for (i = 0; i < n; i++) {
				view_push_task(ss, cands[i]);
				lua_rawseti(L, -2, i + 1);
			}
			if ((i = framework_call(ss, pl, ep, 2, 1)) ==
			    FW_REFUSED) {
				for (i = 0; i < n; i++)
					if (why[i] == NULL)
						why[i] = pl->name;
				refused = 1;
				break;
			}
			if (i != 0)
				continue;
			if (!lua_istable(L, -1)) {
				lua_pop(L, 1);	/* abstains */
				continue;
			}
			memset(mine, 0, (size_t)n * sizeof *mine);
			lua_pushnil(L);
			while (lua_next(L, -2) != 0) {
				void *p = NULL;

				if (lua_istable(L, -1)) {
					lua_getfield(L, -1, "_ptr");
					p = lua_touserdata(L, -1);
					lua_pop(L, 1);
				}
				for (i = 0; i < n; i++)
					if (cands[i] == p)
						mine[i] = 1;
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
			for (i = 0; i < n; i++) {
				if (mine[i] && marks[i] == answered)
					marks[i]++;
				else if (!mine[i] && why[i] == NULL)
					why[i] = pl->name;
			}
			answered++;
		}
		if (answered == 0 || refused)
			continue;
		for (i = 0; i < n; i++)
			if (marks[i] == answered)
				k++;
		if (k > 0) {
			k = 0;
			for (i = 0; i < n; i++)
				if (marks[i] == answered)
					cands[k++] = cands[i];
		}
	}
	return refused ? 0 : k;
}

/*
 * The rule of ep over cands, compacted to the victims it allows (in
 * their order); the ones left out are noted for the preemptor job j as
 * refused, with the plugin that left each out first (NULL: no plugin
 * allowed any).
 */
static int
victims_noted(struct session *ss, int ep, const struct victim_ask *ask,
    struct s_job *j, struct s_task **cands, int n)
{
	/* One scratch block of the session's, grown as needed: the
	   candidates as given, each one's refuser, the tier marks. */
	size_t need = ((size_t)n + 1) * (sizeof(struct s_task *) +
	    sizeof(const char *) + 2 * sizeof(int));
	struct s_task **orig;
	const char **why;
	int *marks, *mine;
	int i, k, m = 0;

	if (need > ss->vscratch_cap) {
		free(ss->vscratch);
		ss->vscratch = xmalloc(need);
		ss->vscratch_cap = need;
	}
	orig = ss->vscratch;
	why = (const char **)(orig + n + 1);
	marks = (int *)(why + n + 1);
	mine = marks + n + 1;
	memcpy(orig, cands, (size_t)n * sizeof *orig);
	memset(why, 0, ((size_t)n + 1) * sizeof *why);
	k = victims_by_tier(ss, ep, ask, cands, n, why, marks, mine);
	for (i = 0; i < n; i++) {
		if (m < k && cands[m] == orig[i])
			m++;
		else
			victim_note(j, orig[i], VV_REFUSED, why[i]);
	}
	return k;
}

int
framework_victims(struct session *ss, int ep, struct s_task *preemptor,
    struct s_task **cands, int n)
{
	struct victim_ask ask = { preemptor, NULL, NULL };
	int k = victims_noted(ss, ep, &ask, preemptor->job, cands, n);

	preemptor->job->victims_allowed += k;
	return k;
}

int
framework_evictable(struct session *ss, const char *kind, struct s_job *j,
    struct s_task **cands, int n)
{
	struct victim_ask ask = { NULL, kind, j };
	int k = victims_noted(ss, EP_EVICTABLE, &ask, j, cands, n);

	j->victims_allowed += k;
	return k;
}

/* ------------------------------------------------------------------ */
/* Nodes.                                                              */

static void
push_nodes(struct session *ss, struct s_node **nodes, int n)
{
	int i;

	lua_createtable(ss->L, n, 0);
	for (i = 0; i < n; i++) {
		view_push_node(ss, nodes[i]);
		lua_rawseti(ss->L, -2, i + 1);
	}
}

int
framework_predicate(struct session *ss, struct s_task *t,
    struct s_node **nodes, int n, int *rejects, char **reason)
{
	lua_State *L = ss->L;
	int ep, i, k, rc;

	for (ep = EP_PREDICATE; ep <= EP_BATCH_PREDICATE; ep++)
		EACH_PLUGIN(ss, pl, ep) {
			if (n == 0)
				return 0;
			view_push_task(ss, t);
			push_nodes(ss, nodes, n);
			if ((rc = framework_call(ss, pl, ep, 2, 1)) ==
			    FW_REFUSED) {
				/* No node passes a plugin that failed. */
				if (*reason == NULL)
					*reason = xstrdup(ss->fail_err[pl -
					    ss->pol->plugins]);
				*rejects += n;
				return 0;
			}
			if (rc != 0)
				continue;
			if (!lua_istable(L, -1)) {
				lua_pop(L, 1);
				continue;
			}
			for (i = k = 0; i < n; i++) {
				lua_rawgeti(L, -1, i + 1);
				if (lua_type(L, -1) == LUA_TSTRING) {
					if (*reason == NULL)
						*reason = xstrdup(
						    lua_tostring(L, -1));
					(*rejects)++;
				} else
					nodes[k++] = nodes[i];
				lua_pop(L, 1);
			}
			lua_pop(L, 1);
			n = k;
		}
	return n;
}

void
framework_node_order(struct session *ss, struct s_task *t,
    struct s_node **nodes, int n, double *scores)
{
	lua_State *L = ss->L;
	int ep, i;

	for (ep = EP_NODE_ORDER; ep <= EP_BATCH_NODE_ORDER; ep++)
		EACH_PLUGIN(ss, pl, ep) {
			view_push_task(ss, t);
			push_nodes(ss, nodes, n);
			if (framework_call(ss, pl, ep, 2, 1) != 0)
				continue;
			if (lua_istable(L, -1))
				for (i = 0; i < n; i++) {
					lua_rawgeti(L, -1, i + 1);
					if (lua_isnumber(L, -1))
						scores[i] += lua_tonumber(L, -1);
					lua_pop(L, 1);
				}
			lua_pop(L, 1);
		}
}

static void
handlers(struct session *ss, struct s_task *t, int ep)
{
	EACH_PLUGIN(ss, pl, ep) {
		view_push_task(ss, t);
		framework_call(ss, pl, ep, 1, 0);
	}
}

void
framework_on_allocate(struct session *ss, struct s_task *t)
{
	handlers(ss, t, EP_ON_ALLOCATE);
}

void
framework_on_deallocate(struct session *ss, struct s_task *t)
{
	handlers(ss, t, EP_ON_DEALLOCATE);
}
