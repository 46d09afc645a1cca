/*
 * `volray policy test` and `volray policy check`: the framework run
 * in-process, with no daemon. check loads a policy directory's
 * scheduler.yaml and plugins over the built-in ones exactly as volrayd
 * would and reports the first error. test runs the spec files
 * (NAME.spec.yaml) of a directory: each case is a scripted cluster
 * (Nodes, Queues, PodGroups, PriorityClasses, Pods as manifests), an
 * optional scheduler configuration, and the binds, pipelines and
 * evictions one session must decide:
 *
 *   cases:
 *   - name: a gang that does not fit is not bound at all
 *     config: {actions: "enqueue, allocate", tiers: [...]}   # optional
 *     cluster:                 # or {from: FILE}: a session record's
 *     - {kind: Node, metadata: {name: n1},
 *        status: {allocatable: {cpu: "4", memory: 8Gi}}}
 *     - {kind: Pod, metadata: {name: p1}, spec: {...}}
 *     arguments: {proportion: {...}}   # optional: merged into the
 *                                      # plugin's, tiers unrepeated
 *     expect:
 *       binds: {p1: n1}          # exactly these (unlisted: not bound)
 *       pipelined: [p2]          # when given, exactly these
 *       evicted: [v1]            # when given, exactly these
 *       podgroups, pods, events, queues: what the session would write
 *                                # and record (policytest_expect.c)
 *
 * Any other key, at the top, in a case or in its expect, fails with its
 * name: a misspelt expectation must not pass unchecked.
 *
 * Convenience defaults: a Node without conditions is Ready; objects get
 * the namespace default, a uid and creation times in the order written;
 * a Pod without status is Pending.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "luahost/luahost.h"
#include "sched/policytest.h"
#include "sched/sched_int.h"

static const struct luahost_limits limits = { 256u << 20, 200000000ULL };


/* The source's name for an object's kind: a PodGroup of
   scheduling.k8s.io (Kubernetes' gang API) is not Volcano's. */
static const char *
kind_res(const cJSON *o)
{
	const char *kind = json_str(o, "kind");
	const char *av = json_str(o, "apiVersion");
	static const char *const map[][2] = {
		{ "Node", "nodes" }, { "Pod", "pods" },
		{ "PodGroup", "podgroups" }, { "Queue", "queues" },
		{ "PriorityClass", "priorityclasses" },
		{ "ResourceQuota", "resourcequotas" },
		{ "PodDisruptionBudget", "poddisruptionbudgets" },
		{ "HyperNode", "hypernodes" },
	};
	size_t i;

	if (kind != NULL && strcmp(kind, "PodGroup") == 0 && av != NULL &&
	    strncmp(av, "scheduling.k8s.io/", 18) == 0)
		return "k8spodgroups";
	for (i = 0; kind != NULL && i < sizeof map / sizeof *map; i++)
		if (strcmp(map[i][0], kind) == 0)
			return map[i][1];
	return NULL;
}

static void
scripted_list(void *arg, const char *res,
    void (*fn)(void *, cJSON *, void **, const struct sched_meta *),
    void *fnarg)
{
	struct policytest_cluster *sc = arg;
	cJSON *o;

	cJSON_ArrayForEach(o, sc->objs) {
		const char *r = kind_res(o);

		if (r != NULL && strcmp(r, res) == 0)
			fn(fnarg, o, NULL, NULL);
	}
}

void
policytest_source(struct policytest_cluster *pc, cJSON *objs,
    struct sched_source *src)
{
	pc->objs = objs;
	memset(src, 0, sizeof *src);
	src->list = scripted_list;
	src->arg = pc;
}

/* Fill in what a cluster would have set; -1 with *cause. */
int
policytest_complete(cJSON *objs, char **cause)
{
	cJSON *o;
	int i = 0;

	cJSON_ArrayForEach(o, objs) {
		const char *kind = json_str(o, "kind");
		cJSON *md = json_obj(o, "metadata");
		char uid[37], ts[32];

		if (kind_res(o) == NULL || json_str(md, "name") == NULL) {
			*cause = util_printf("cluster item %d: want a Node, Pod, "
			    "PodGroup, Queue, PriorityClass, ResourceQuota, "
			    "PodDisruptionBudget or HyperNode with a name",
			    i + 1);
			return -1;
		}
		if (json_str(md, "uid") == NULL) {
			/* In the order written, never by chance: orders
			   that fall back to uids (a bare pod's job key)
			   decide the same every run. */
			snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012x",
			    (unsigned)i + 1);
			json_set_str(md, "uid", uid);
		}
		if (json_str(md, "creationTimestamp") == NULL) {
			snprintf(ts, sizeof ts, "2026-01-01T%02d:%02d:%02dZ",
			    i / 3600 % 24, i / 60 % 60, i % 60);
			json_set_str(md, "creationTimestamp", ts);
		}
		if (strcmp(kind, "Pod") == 0 || strcmp(kind, "PodGroup") == 0 ||
		    strcmp(kind, "ResourceQuota") == 0 ||
		    strcmp(kind, "PodDisruptionBudget") == 0)
			if (json_str(md, "namespace") == NULL)
				json_set_str(md, "namespace", "default");
		if (strcmp(kind, "Node") == 0 &&
		    json_at(o, "status.conditions") == NULL) {
			cJSON *conds = cJSON_AddArrayToObject(json_obj(o,
			    "status"), "conditions"), *c = cJSON_CreateObject();

			cJSON_AddStringToObject(c, "type", "Ready");
			cJSON_AddStringToObject(c, "status", "True");
			cJSON_AddItemToArray(conds, c);
		}
		if (strcmp(kind, "Pod") == 0 && json_str(o, "status.phase") == NULL)
			json_set_str(json_obj(o, "status"), "phase", "Pending");
		i++;
	}
	return 0;
}

luahost *
policytest_host(const char *share, const char *dir, const char *extra)
{
	char lroot[4096], proot[4096];
	const char *roots[4];
	int n = 0;

	snprintf(lroot, sizeof lroot, "%s/lua", share);
	snprintf(proot, sizeof proot, "%s/policies", share);
	roots[n++] = lroot;
	roots[n++] = proot;
	if (dir != NULL)
		roots[n++] = dir;
	if (extra != NULL)
		roots[n++] = extra;
	return luahost_new(roots, n, &limits);
}

int
policytest_check(const char *share, const char *dir, FILE *out, char **cause)
{
	luahost *h = policytest_host(share, dir, NULL);
	struct policy *p = policy_load(h, cause);
	int i;

	if (p == NULL) {
		luahost_free(h);
		return -1;
	}
	for (i = 0; i < p->nwarnings; i++)
		fprintf(out, "warning: %s\n", p->warnings[i]);
	fprintf(out, "%s: %d actions, %d plugins:", p->conf.path,
	    p->conf.nactions, p->nplugins);
	for (i = 0; i < p->nplugins; i++)
		fprintf(out, " %s", p->plugins[i].name);
	fprintf(out, "\n");
	policy_free(p);
	luahost_free(h);
	return 0;
}

/* The names in an expect list or map, sorted, as one string. */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *
joined(char **v, int n)
{
	char *s = xstrdup(""), *next;
	int i;

	qsort(v, (size_t)n, sizeof *v, cmp_str);
	for (i = 0; i < n; i++) {
		next = util_printf("%s%s%s", s, i ? " " : "", v[i]);
		free(s);
		s = next;
	}
	return s;
}

static char *
expected(const cJSON *e, int map)
{
	char **v = xcalloc((size_t)cJSON_GetArraySize(e) + 1, sizeof *v);
	const cJSON *it;
	char *s;
	int n = 0, i;

	cJSON_ArrayForEach(it, e) {
		if (map)
			v[n++] = util_printf("%s=%s", it->string,
			    cJSON_IsString(it) ? it->valuestring : "?");
		else
			v[n++] = xstrdup(cJSON_IsString(it) ? it->valuestring :
			    "?");
	}
	s = joined(v, n);
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
	return s;
}

/*
 * The case's configuration with args ({plugin: {name: value}}) merged
 * into those plugins' arguments: conf (owned) when the case has one,
 * else the policy directory's scheduler.yaml, else the built-in one.
 * NULL with *cause when a plugin is not in the tiers.
 */
static cJSON *
with_arguments(const char *share, const char *dir, cJSON *conf,
    const cJSON *args, char **cause)
{
	const cJSON *a, *tier, *pl;
	char path[4200];

	if (!cJSON_IsObject(args)) {
		*cause = xstrdup("want a mapping of plugin names to arguments");
		cJSON_Delete(conf);
		return NULL;
	}
	if (conf == NULL && dir != NULL) {
		snprintf(path, sizeof path, "%s/scheduler.yaml", dir);
		if (access(path, R_OK) == 0)
			conf = yamljson_load_file(path, cause);
	}
	if (conf == NULL && *cause == NULL) {
		snprintf(path, sizeof path, "%s/policies/scheduler.yaml", share);
		conf = yamljson_load_file(path, cause);
	}
	if (cJSON_IsArray(conf)) {	/* the documents of a file */
		cJSON *first = cJSON_DetachItemFromArray(conf, 0);

		cJSON_Delete(conf);
		conf = first;
	}
	if (conf == NULL) {
		if (*cause == NULL)
			*cause = util_printf("%s: empty", path);
		return NULL;
	}
	cJSON_ArrayForEach(a, args) {
		int found = 0;

		cJSON_ArrayForEach(tier, json_at(conf, "tiers"))
			cJSON_ArrayForEach(pl, json_at(tier, "plugins")) {
			cJSON *to;
			const cJSON *kv;

			if (json_str(pl, "name") == NULL ||
			    strcmp(json_str(pl, "name"), a->string) != 0)
				continue;
			found = 1;
			if ((to = json_obj((cJSON *)pl, "arguments")) == NULL)
				continue;
			cJSON_ArrayForEach(kv, a) {
				cJSON_DeleteItemFromObjectCaseSensitive(to,
				    kv->string);
				cJSON_AddItemToObject(to, kv->string,
				    cJSON_Duplicate(kv, 1));
			}
		}
		if (!found) {
			*cause = util_printf("no plugin %s in the tiers",
			    a->string);
			cJSON_Delete(conf);
			return NULL;
		}
	}
	return conf;
}

/*
 * A case's cluster: its list, or {from: FILE}, the cluster of a file
 * `volray session record` wrote (a path relative to the spec file's
 * directory where): a recorded session as a regression case. NULL with
 * *cause.
 */
static cJSON *
case_cluster(const char *where, const cJSON *c, char **cause)
{
	const cJSON *cl = cJSON_GetObjectItemCaseSensitive(c, "cluster");
	const char *from = json_str(cl, "from");
	cJSON *doc, *objs;
	char *path;

	if (from == NULL)
		return cJSON_Duplicate(cl, 1);
	path = *from == '/' ? xstrdup(from) : util_printf("%s/%s", where,
	    from);
	doc = yamljson_load_file(path, cause);
	objs = cJSON_DetachItemFromObjectCaseSensitive(cJSON_GetArrayItem(doc,
	    0), "cluster");
	if (doc != NULL && objs == NULL)
		*cause = util_printf("%s: no cluster in it (want a file of "
		    "volray session record)", path);
	cJSON_Delete(doc);
	free(path);
	return objs;
}

/* A case's `now` (RFC 3339), by default an hour after the first object
   (objects without a creationTimestamp are a second apart from
   2026-01-01T00:00:00Z). */
static double
case_now(const cJSON *c)
{
	const char *s = json_str(c, "now");
	time_t t = s != NULL ? util_time_parse(s) : -1;

	if (t < 0)
		t = util_time_parse("2026-01-01T01:00:00Z");
	return (double)t;
}

/* The keys of a case and of its expect. */
static const char *const case_keys[] = { "name", "cluster", "config",
    "arguments", "now", "expect", NULL };
static const char *const expect_keys[] = { "binds", "pipelined",
    "evicted", "ungated", "plugin_failures", "podgroups", "pods", "events",
    "queues", "victims", NULL };

/* A case's keys and its expect's known, each a mapping; 0, or -1 with
   the reason printed under the case's FAIL line. */
static int
case_keys_ok(const char *file, const char *name, const cJSON *c, FILE *out)
{
	const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
	char *why;

	if (!cJSON_IsObject(c)) {
		fprintf(out, "FAIL %s: %s: a case is a mapping\n", file, name);
		return -1;
	}
	if ((why = policytest_expect_keys(c, case_keys)) != NULL) {
		fprintf(out, "FAIL %s: %s: %s\n", file, name, why);
		free(why);
		return -1;
	}
	if (expect != NULL && !cJSON_IsObject(expect) &&
	    !cJSON_IsNull(expect)) {
		fprintf(out, "FAIL %s: %s: expect: want a mapping\n", file,
		    name);
		return -1;
	}
	if ((why = policytest_expect_keys(expect, expect_keys)) != NULL) {
		fprintf(out, "FAIL %s: %s: expect: %s\n", file, name, why);
		free(why);
		return -1;
	}
	return 0;
}

/* One case; 0 pass, 1 fail (message printed), -1 error in the spec. */
static int
run_case(const char *share, const char *dir, const char *where,
    const char *file, const cJSON *c, FILE *out)
{
	const char *name = json_str(c, "name");
	const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "arguments");
	cJSON *conf = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(c,
	    "config"), 1);
	char tmp[] = "/tmp/volray-policytest.XXXXXX", *cause = NULL;
	struct policytest_cluster sc = { case_cluster(where, c, &cause) };
	struct sched_source src = { scripted_list, &sc, NULL,
	    case_now(c) };
	char *got[4] = { NULL, NULL, NULL, NULL };
	char *want[4] = { NULL, NULL, NULL, NULL };
	static const char *const what[4] = { "binds", "pipelined", "evicted",
	    "ungated" };
	struct session ss;
	struct policy *p;
	luahost *h;
	int rc = 0, i, k, nfailed = 0;

	if (name == NULL)
		name = "(unnamed)";
	if (case_keys_ok(file, name, c, out) != 0) {
		free(cause);
		cJSON_Delete(sc.objs);
		cJSON_Delete(conf);
		return 1;
	}
	if (!cJSON_IsArray(sc.objs) || policytest_complete(sc.objs, &cause) != 0) {
		fprintf(out, "FAIL %s: %s: %s\n", file, name, cause ? cause :
		    "cluster: want a list of objects");
		free(cause);
		cJSON_Delete(sc.objs);
		return 1;
	}
	if (args != NULL && (conf = with_arguments(share, dir, conf, args,
	    &cause)) == NULL) {
		fprintf(out, "FAIL %s: %s: arguments: %s\n", file, name, cause);
		free(cause);
		cJSON_Delete(sc.objs);
		return 1;
	}
	if (conf != NULL) {
		char path[sizeof tmp + 32];
		char *text = cJSON_Print(conf);
		FILE *f;

		if (mkdtemp(tmp) == NULL)
			return -1;
		snprintf(path, sizeof path, "%s/scheduler.yaml", tmp);
		if ((f = fopen(path, "w")) != NULL) {
			fputs(text, f);
			fclose(f);
		}
		free(text);
	}
	h = policytest_host(share, dir, conf != NULL ? tmp : NULL);
	if ((p = policy_load(h, &cause)) == NULL) {
		fprintf(out, "FAIL %s: %s: the policy does not load: %s\n", file,
		    name, cause);
		free(cause);
		rc = 1;
		goto out;
	}
	session_open(&ss, p, &src);
	session_run(&ss);
	{
		char **v = xcalloc((size_t)ss.ntasks + 1, sizeof *v);
		int n = 0;

		for (i = 0; i < ss.nbinds; i++)
			v[n++] = util_printf("%s=%s", ss.binds[i].t->name,
			    ss.binds[i].n->name);
		got[0] = joined(v, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		n = 0;
		for (i = 0; i < ss.ntasks; i++)
			if (ss.tasks[i]->status == TS_PIPELINED)
				v[n++] = xstrdup(ss.tasks[i]->name);
		got[1] = joined(v, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		n = 0;
		for (i = 0; i < ss.nevicts; i++)
			v[n++] = xstrdup(ss.evicts[i].t->name);
		got[2] = joined(v, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		n = 0;
		for (i = 0; i < ss.ntasks; i++)
			if (ss.tasks[i]->ungate)
				v[n++] = xstrdup(ss.tasks[i]->name);
		got[3] = joined(v, n);
		for (i = 0; i < n; i++)
			free(v[i]);
		free(v);
	}
	for (i = 0; i < ss.nevents; i++)
		fprintf(out, "     %s\n", ss.events[i]);
	nfailed = ss.nevents;
	for (k = 0; k < 4; k++) {
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(expect, what[k]);

		if (e == NULL && k > 0)
			continue;
		want[k] = e != NULL ? expected(e, k == 0) : xstrdup("");
		if (strcmp(want[k], got[k]) != 0) {
			if (rc == 0)
				fprintf(out, "FAIL %s: %s\n", file, name);
			fprintf(out, "     %s: want [%s], got [%s]\n", what[k],
			    want[k], got[k]);
			rc = 1;
		}
	}
	/* A plugin that failed was skipped: the outcome is not the
	   policy's, unless the case expects that (plugin_failures: true). */
	if (nfailed > 0 && !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
	    expect, "plugin_failures"))) {
		if (rc == 0)
			fprintf(out, "FAIL %s: %s\n", file, name);
		fprintf(out, "     plugin failures: want none, got %d\n",
		    nfailed);
		rc = 1;
	}
	if (policytest_expect(&ss, expect, out, file, name, rc))
		rc = 1;
	session_free(&ss);
	policy_free(p);
	if (rc == 0)
		fprintf(out, "ok   %s: %s\n", file, name);
out:
	for (k = 0; k < 4; k++) {
		free(got[k]);
		free(want[k]);
	}
	luahost_free(h);
	cJSON_Delete(sc.objs);
	if (conf != NULL) {
		char path[sizeof tmp + 32];

		snprintf(path, sizeof path, "%s/scheduler.yaml", tmp);
		unlink(path);
		rmdir(tmp);
	}
	cJSON_Delete(conf);
	return rc;
}

static int
is_spec(const struct dirent *de)
{
	size_t n = strlen(de->d_name);

	return n > 10 && strcmp(de->d_name + n - 10, ".spec.yaml") == 0;
}

/* Why a spec file (its documents) is not one mapping of cases, or NULL. */
static char *
spec_file_bad(const cJSON *doc)
{
	static const char *const keys[] = { "cases", NULL };
	const cJSON *top = cJSON_GetArrayItem(doc, 0);
	char *why;

	if (cJSON_GetArraySize(doc) != 1)
		return util_printf("want one YAML document, got %d",
		    cJSON_GetArraySize(doc));
	if (cJSON_IsObject(top) && (why = policytest_expect_keys(top,
	    keys)) != NULL) {
		char *s = util_printf("at the top: %s", why);

		free(why);
		return s;
	}
	if (!cJSON_IsObject(top) || !cJSON_IsArray(json_at(top, "cases")))
		return xstrdup("want a mapping with a list of cases");
	return NULL;
}

int
policytest_run(const char *share, const char *dir, FILE *out, char **cause)
{
	char pdir[4096];
	const char *where = dir;
	struct dirent **list;
	int n, i, failed = 0, cases = 0;

	if (where == NULL) {
		snprintf(pdir, sizeof pdir, "%s/policies", share);
		where = pdir;
	}
	if ((n = scandir(where, &list, is_spec, alphasort)) < 0) {
		*cause = util_printf("%s: cannot read the directory", where);
		return -1;
	}
	for (i = 0; i < n; i++) {
		char path[4600], *why = NULL;
		cJSON *doc, *c;

		snprintf(path, sizeof path, "%s/%s", where, list[i]->d_name);
		if ((doc = yamljson_load_file(path, &why)) == NULL) {
			fprintf(out, "FAIL %s: %s\n", list[i]->d_name, why);
			free(why);
			failed++;
			free(list[i]);
			continue;
		}
		if ((why = spec_file_bad(doc)) != NULL) {
			fprintf(out, "FAIL %s: %s\n", list[i]->d_name, why);
			free(why);
			failed++;
			cJSON_Delete(doc);
			free(list[i]);
			continue;
		}
		cJSON_ArrayForEach(c, json_at(cJSON_GetArrayItem(doc, 0),
		    "cases")) {
			cases++;
			if (run_case(share, dir, where, list[i]->d_name, c,
			    out) != 0)
				failed++;
		}
		cJSON_Delete(doc);
		free(list[i]);
	}
	free(list);
	fprintf(out, "%d cases, %d failed\n", cases, failed);
	return failed;
}
