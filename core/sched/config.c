/*
 * scheduler.yaml, in Volcano's format:
 *
 *   actions: "enqueue, allocate, backfill"
 *   tiers:
 *   - plugins:
 *     - name: priority
 *     - name: gang
 *       enablePreemptable: false
 *     - name: quota
 *       failurePolicy: Fail     # volray's: an error is a rejection
 *   configurations:
 *   - name: allocate
 *     arguments: {...}
 *
 * An unknown action is an error; an enable<Point> flag omitted means on;
 * unknown keys are ignored, as Volcano's decoder does. volray adds
 * `schedulePeriod` (a duration, default 1s). Errors name the file and the
 * line of the offending text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "sched/sched_int.h"

const char *const config_ep_names[EP_N] = {
	"open", "close",
	"job_order", "queue_order", "task_order",
	"job_valid", "job_ready", "job_pipelined", "job_starving",
	"job_enqueueable", "job_enqueued",
	"overused", "allocatable", "preemptive",
	"preemptable", "reclaimable", "victim_tasks",
	"predicate", "batch_predicate", "node_order", "batch_node_order",
	"best_node", "on_allocate", "on_deallocate",
	"job_order_key", "queue_order_key", "task_order_key",
	"evictable", "victim_queue_order",
};

/* Volcano's flag names and the points each one gates. */
static const struct {
	const char *flag;
	uint32_t points;
} flags[] = {
	{ "enableJobOrder", (1u << EP_JOB_ORDER) | (1u << EP_JOB_ORDER_KEY) },
	{ "enableJobReady", 1u << EP_JOB_READY },
	{ "enableJobPipelined", 1u << EP_JOB_PIPELINED },
	{ "enableJobStarving", 1u << EP_JOB_STARVING },
	{ "enableJobEnqueued", (1u << EP_JOB_ENQUEUEABLE) |
	    (1u << EP_JOB_ENQUEUED) },
	{ "enableTaskOrder", (1u << EP_TASK_ORDER) |
	    (1u << EP_TASK_ORDER_KEY) },
	{ "enableQueueOrder", (1u << EP_QUEUE_ORDER) |
	    (1u << EP_QUEUE_ORDER_KEY) },
	{ "enablePreemptable", 1u << EP_PREEMPTABLE },
	{ "enableReclaimable", 1u << EP_RECLAIMABLE },
	{ "enablePreemptive", 1u << EP_PREEMPTIVE },
	{ "enablePredicate", (1u << EP_PREDICATE) |
	    (1u << EP_BATCH_PREDICATE) },
	{ "enableBestNode", 1u << EP_BEST_NODE },
	{ "enableNodeOrder", (1u << EP_NODE_ORDER) |
	    (1u << EP_BATCH_NODE_ORDER) },
	{ "enabledVictim", 1u << EP_VICTIM },
	{ "enabledOverused", 1u << EP_OVERUSED },
	{ "enabledAllocatable", 1u << EP_ALLOCATABLE },
};

static const char *const action_names[] = {
	"enqueue", "allocate", "backfill", "preempt", "reclaim", "firstfit",
	"gangpreempt", "gangreclaim", "shuffle",
};

/* The line where needle first appears at or after from (1-based). */
static int
line_of(const char *buf, size_t len, const char *needle, int from)
{
	int line = 1;
	size_t i, nl = strlen(needle);

	for (i = 0; i < len; i++) {
		if (line >= from && i + nl <= len &&
		    memcmp(buf + i, needle, nl) == 0)
			return line;
		if (buf[i] == '\n')
			line++;
	}
	return from > 0 ? from : 1;
}

static int
bad(char **cause, const char *path, int line, const char *fmt,
    const char *a)
{
	char *m = util_printf(fmt, a);

	*cause = util_printf("%s:%d: %s", path, line, m);
	free(m);
	return -1;
}

/* A duration ("1s", "500ms") or a number of seconds; -1 if bad. */
static int64_t
duration_ms(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return (int64_t)(v->valuedouble * 1000);
	return cJSON_IsString(v) ? util_duration_ms(v->valuestring) : -1;
}

int
config_has_action(const struct sched_conf *c, enum action a)
{
	int i;

	for (i = 0; i < c->nactions; i++)
		if (c->actions[i] == a)
			return 1;
	return 0;
}

static int
parse_actions(const char *path, const char *buf, size_t len,
    const cJSON *v, struct sched_conf *c, char **cause)
{
	char *list, *tok, *save = NULL;
	size_t i;

	if (!cJSON_IsString(v))
		return bad(cause, path, line_of(buf, len, "actions", 0),
		    "actions: %s", "want a string such as \"enqueue, allocate, "
		    "backfill\"");
	list = xstrdup(v->valuestring);
	for (tok = strtok_r(list, ", \t", &save); tok != NULL;
	    tok = strtok_r(NULL, ", \t", &save)) {
		for (i = 0; i < sizeof action_names / sizeof *action_names; i++)
			if (strcmp(tok, action_names[i]) == 0)
				break;
		if (i == sizeof action_names / sizeof *action_names) {
			bad(cause, path, line_of(buf, len, "actions", 0),
			    "unknown action \"%s\" (known: enqueue, allocate, "
			    "backfill, preempt, reclaim, gangpreempt, "
			    "gangreclaim)", tok);
			free(list);
			return -1;
		}
		if (c->nactions == MAX_ACTIONS) {
			free(list);
			return bad(cause, path, line_of(buf, len, "actions", 0),
			    "%s", "too many actions");
		}
		c->actions[c->nactions++] = (enum action)i;
	}
	free(list);
	if (c->nactions == 0)
		return bad(cause, path, line_of(buf, len, "actions", 0), "%s",
		    "actions: empty");
	return 0;
}

static int
parse_plugin(const char *path, const char *buf, size_t len, const cJSON *p,
    struct plugin_conf *pc, int *from, char **cause)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(p, "arguments");
	const cJSON *fp;
	char needle[300];
	size_t i;

	if (!cJSON_IsString(name) || *name->valuestring == '\0')
		return bad(cause, path, line_of(buf, len, "plugins", *from),
		    "%s", "a plugin needs a name");
	snprintf(needle, sizeof needle, "%s", name->valuestring);
	pc->line = line_of(buf, len, needle, *from);
	*from = pc->line;
	pc->name = xstrdup(name->valuestring);
	if (args != NULL && !cJSON_IsObject(args) && !cJSON_IsNull(args))
		return bad(cause, path, pc->line, "plugin %s: arguments must be "
		    "a mapping", pc->name);
	pc->arguments = cJSON_IsObject(args) ? cJSON_Duplicate(args, 1) :
	    cJSON_CreateObject();
	fp = cJSON_GetObjectItemCaseSensitive(p, "failurePolicy");
	if (fp != NULL && !cJSON_IsNull(fp)) {
		if (!cJSON_IsString(fp) || (strcmp(fp->valuestring, "Fail") != 0 &&
		    strcmp(fp->valuestring, "Ignore") != 0))
			return bad(cause, path, line_of(buf, len, "failurePolicy",
			    pc->line), "plugin %s: failurePolicy: want Ignore or "
			    "Fail", pc->name);
		pc->fail_closed = strcmp(fp->valuestring, "Fail") == 0;
	}
	fp = cJSON_GetObjectItemCaseSensitive(p, "enableHierarchy");
	if (fp != NULL && !cJSON_IsNull(fp)) {
		if (!cJSON_IsBool(fp))
			return bad(cause, path, line_of(buf, len,
			    "enableHierarchy", pc->line), "%s",
			    "enableHierarchy: want true or false");
		pc->hierarchy = cJSON_IsTrue(fp);
	}
	pc->enabled = ~0u;
	for (i = 0; i < sizeof flags / sizeof *flags; i++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(p,
		    flags[i].flag);

		if (f == NULL || cJSON_IsNull(f))
			continue;
		if (!cJSON_IsBool(f))
			return bad(cause, path, line_of(buf, len, flags[i].flag,
			    pc->line), "%s: want true or false", flags[i].flag);
		if (cJSON_IsFalse(f))
			pc->enabled &= ~flags[i].points;
	}
	return 0;
}

int
config_parse(const char *path, const char *buf, size_t len,
    struct sched_conf *c, char **cause)
{
	cJSON *doc, *tiers, *t, *plugins, *p, *period;
	int from = 0, k;

	memset(c, 0, sizeof *c);
	c->period_ms = 1000;
	c->path = xstrdup(path);
	*cause = NULL;
	if ((doc = yamljson_parse(buf, len, cause)) == NULL) {
		char *m = *cause;

		*cause = util_printf("%s: %s", path, m ? m : "not YAML");
		free(m);
		return -1;
	}
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return bad(cause, path, 1, "%s", "want a mapping with actions "
		    "and tiers");
	}
	if (parse_actions(path, buf, len, cJSON_GetObjectItemCaseSensitive(doc,
	    "actions"), c, cause) != 0)
		goto fail;
	tiers = cJSON_GetObjectItemCaseSensitive(doc, "tiers");
	if (tiers != NULL && !cJSON_IsArray(tiers)) {
		bad(cause, path, line_of(buf, len, "tiers", 0), "%s",
		    "tiers: want a list of {plugins: [...]}");
		goto fail;
	}
	c->ntiers = cJSON_GetArraySize(tiers);
	c->tiers = xcalloc((size_t)c->ntiers + 1, sizeof *c->tiers);
	k = 0;
	cJSON_ArrayForEach(t, tiers) {
		struct tier_conf *tc = &c->tiers[k++];
		int i = 0;

		plugins = cJSON_GetObjectItemCaseSensitive(t, "plugins");
		if (!cJSON_IsArray(plugins)) {
			bad(cause, path, line_of(buf, len, "plugins", from), "%s",
			    "a tier needs a list of plugins");
			goto fail;
		}
		tc->nplugins = cJSON_GetArraySize(plugins);
		tc->plugins = xcalloc((size_t)tc->nplugins + 1,
		    sizeof *tc->plugins);
		cJSON_ArrayForEach(p, plugins)
			if (parse_plugin(path, buf, len, p, &tc->plugins[i++],
			    &from, cause) != 0)
				goto fail;
	}
	if ((p = cJSON_GetObjectItemCaseSensitive(doc, "configurations")) !=
	    NULL && cJSON_IsArray(p))
		c->configurations = cJSON_Duplicate(p, 1);
	if ((period = cJSON_GetObjectItemCaseSensitive(doc,
	    "schedulePeriod")) != NULL) {
		int64_t ms = duration_ms(period);

		if (ms < 10 || ms > 600000) {
			bad(cause, path, line_of(buf, len, "schedulePeriod", 0),
			    "%s", "schedulePeriod: want a duration from 10ms "
			    "to 10m, such as 1s");
			goto fail;
		}
		c->period_ms = ms;
	}
	cJSON_Delete(doc);
	return 0;
fail:
	cJSON_Delete(doc);
	config_free(c);
	return -1;
}

void
config_free(struct sched_conf *c)
{
	int i, j;

	for (i = 0; i < c->ntiers; i++) {
		for (j = 0; j < c->tiers[i].nplugins; j++) {
			free(c->tiers[i].plugins[j].name);
			cJSON_Delete(c->tiers[i].plugins[j].arguments);
		}
		free(c->tiers[i].plugins);
	}
	free(c->tiers);
	cJSON_Delete(c->configurations);
	free(c->path);
	memset(c, 0, sizeof *c);
}
