/*
 * Scheduling sessions off the cluster: `volray session record FILE`
 * saves what a session reads (Nodes, Queues, PriorityClasses, PodGroups,
 * Pods) and the daemon's policy files into one file; `volray session
 * replay FILE [--policy-dir DIR]` runs one session on it offline with
 * the recorded policy (or DIR's files over it) and prints the decisions,
 * the same every time; `volray policy dry-run DIR` records the live
 * cluster in memory, replays it with the live policy and with DIR's files
 * over it, and prints what would differ (exit 1) or nothing (exit 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/sharedir.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "sched/policytest.h"

static const struct {
	const char *path, *kind, *api_version;
	int optional;			/* a cluster may not serve it */
} kinds[] = {
	{ "/api/v1/nodes", "Node", "v1" },
	{ "/apis/scheduling.volcano.sh/v1beta1/queues", "Queue",
	    "scheduling.volcano.sh/v1beta1" },
	{ "/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass",
	    "scheduling.k8s.io/v1" },
	{ "/apis/scheduling.volcano.sh/v1beta1/podgroups", "PodGroup",
	    "scheduling.volcano.sh/v1beta1" },
	/* Kubernetes' gang API, served with GenericWorkload on. */
	{ "/apis/scheduling.k8s.io/v1alpha2/podgroups", "PodGroup",
	    "scheduling.k8s.io/v1alpha2", 1 },
	{ "/api/v1/pods", "Pod", "v1" },
	{ "/api/v1/resourcequotas", "ResourceQuota", "v1", 1 },
	{ "/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget",
	    "policy/v1", 1 },
	{ "/apis/topology.volcano.sh/v1alpha1/hypernodes", "HyperNode",
	    "topology.volcano.sh/v1alpha1", 1 },
};

/* The cluster as the scheduler reads it: a list of objects. */
static cJSON *
record_cluster(void)
{
	cJSON *out = cJSON_CreateArray(), *list, *it;
	size_t k;

	for (k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		if ((list = cli_http_list(kinds[k].path, NULL)) == NULL) {
			if (kinds[k].optional)
				continue;
			cJSON_Delete(out);
			return NULL;
		}
		cJSON_ArrayForEach(it, json_at(list, "items")) {
			cJSON *o = cJSON_Duplicate(it, 1), *md;

			json_set_str(o, "apiVersion", kinds[k].api_version);
			json_set_str(o, "kind", kinds[k].kind);
			md = json_obj(o, "metadata");
			cJSON_DeleteItemFromObject(md, "managedFields");
			cJSON_DeleteItemFromObject(json_at(md, "annotations"),
			    "kubectl.kubernetes.io/last-applied-configuration");
			cJSON_AddItemToArray(out, o);
		}
		cJSON_Delete(list);
	}
	return out;
}

/* The daemon's policy files: {"scheduler.yaml": text, "NAME.lua": ...}. */
static cJSON *
record_policy(void)
{
	cJSON *info, *files, *it;

	if ((info = cli_http_get_json("/apis/volray.io/v1/policy?content=true",
	    NULL)) == NULL)
		return NULL;
	files = cJSON_CreateObject();
	if (json_str(info, "config.content") != NULL)
		cJSON_AddStringToObject(files, "scheduler.yaml",
		    json_str(info, "config.content"));
	cJSON_ArrayForEach(it, json_at(info, "plugins")) {
		char *name;

		if (json_str(it, "content") == NULL || json_str(it, "name") ==
		    NULL)
			continue;
		name = util_printf("%s.lua", json_str(it, "name"));
		cJSON_AddStringToObject(files, name, json_str(it, "content"));
		free(name);
	}
	cJSON_Delete(info);
	return files;
}

static cJSON *
record(void)
{
	cJSON *doc = cJSON_CreateObject(), *c, *p;
	char now[32];

	util_now(now);
	if ((c = record_cluster()) == NULL || (p = record_policy()) == NULL) {
		cJSON_Delete(c);
		cJSON_Delete(doc);
		return NULL;
	}
	cJSON_AddStringToObject(doc, "apiVersion", "volray.io/v1");
	cJSON_AddStringToObject(doc, "kind", "SessionRecord");
	cJSON_AddStringToObject(doc, "recorded", now);
	cJSON_AddItemToObject(doc, "policyFiles", p);
	cJSON_AddItemToObject(doc, "cluster", c);
	return doc;
}

/* Write the recorded policy files ({name: text}) into a new temporary
   directory. */
static char *
write_dir(const cJSON *files, char **cause)
{
	char tmpl[] = "/tmp/volray-session.XXXXXX", *dir;
	const cJSON *f;

	if ((dir = mkdtemp(tmpl)) == NULL) {
		*cause = xstrdup("cannot make a temporary directory");
		return NULL;
	}
	dir = xstrdup(dir);
	cJSON_ArrayForEach(f, files) {
		char *path = util_printf("%s/%s", dir, f->string);
		FILE *out;

		if (strchr(f->string, '/') == NULL && cJSON_IsString(f) &&
		    (out = fopen(path, "w")) != NULL) {
			fputs(f->valuestring, out);
			fclose(out);
		}
		free(path);
	}
	return dir;
}

/* s with each "dir/" replaced by label (to free). */
static char *
relabel(const char *s, const char *dir, const char *label)
{
	struct cli_buf b = { 0 };
	size_t n = strlen(dir);
	const char *at;

	cli_buf_add(&b, "", 0);
	while ((at = strstr(s, dir)) != NULL && at[n] == '/') {
		cli_buf_add(&b, s, (size_t)(at - s));
		cli_buf_printf(&b, "%s", label);
		s = at + n + 1;
	}
	cli_buf_printf(&b, "%s", s);
	return b.p;
}

/* The temporary directory's paths in every string of o, as label. */
static void
relabel_json(cJSON *o, const char *dir, const char *label)
{
	cJSON *it;
	char *s;

	if (cJSON_IsString(o) && strstr(o->valuestring, dir) != NULL) {
		s = relabel(o->valuestring, dir, label);
		cJSON_SetValuestring(o, s);
		free(s);
	}
	cJSON_ArrayForEach(it, o)
		relabel_json(it, dir, label);
}

static void
remove_dir(char *dir)
{
	struct dirent *de;
	DIR *d;

	if (dir == NULL)
		return;
	if ((d = opendir(dir)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			char *p;

			if (strcmp(de->d_name, ".") == 0 ||
			    strcmp(de->d_name, "..") == 0)
				continue;
			p = util_printf("%s/%s", dir, de->d_name);
			unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(dir);
	free(dir);
}

/*
 * One session on the record with its policy, DIR's files over it. DIR
 * is read where it is, so a failure names the user's own file
 * (DIR/x.lua:LINE); the recorded files, written to a temporary
 * directory, are named as label (the record's) instead of that.
 */
static cJSON *
replay(const cJSON *rec, const char *over, const char *label, char **cause)
{
	char *share, *dir, *why;
	struct stat sb;
	cJSON *d;

	if (over != NULL && (stat(over, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
	    access(over, R_OK | X_OK) != 0)) {
		*cause = util_printf("%s: cannot read the directory", over);
		return NULL;
	}
	if ((share = share_dir_find(cause)) == NULL)
		return NULL;
	if ((dir = write_dir(json_at(rec, "policyFiles"), cause)) == NULL) {
		free(share);
		return NULL;
	}
	log_set_level(LOG_ERROR);	/* failures are in the decisions */
	d = replay_run(share, dir, over, json_at(rec, "cluster"),
	    json_str(rec, "recorded") != NULL ?
	    (double)util_time_parse(json_str(rec, "recorded")) : 0, cause);
	if (d != NULL)
		relabel_json(d, dir, label);
	else if (*cause != NULL) {
		why = relabel(*cause, dir, label);
		free(*cause);
		*cause = why;
	}
	remove_dir(dir);
	free(share);
	return d;
}

static void
print_decisions(const cJSON *d)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(d, "binds"))
		printf("bind      %s -> %s\n", it->string, it->valuestring);
	cJSON_ArrayForEach(it, json_at(d, "pipelined"))
		printf("pipeline  %s -> %s\n", it->string, it->valuestring);
	cJSON_ArrayForEach(it, json_at(d, "evicted"))
		printf("evict     %s: %s\n", it->string, it->valuestring);
	cJSON_ArrayForEach(it, json_at(d, "waiting")) {
		const cJSON *v;

		printf("wait      %s: %s: %s\n", it->string,
		    json_str(it, "reason"), json_str(it, "message"));
		cJSON_ArrayForEach(v, json_at(it, "victims"))
			printf("  victim  %s: %s\n", v->string,
			    cJSON_IsString(v) ? v->valuestring : "?");
	}
	cJSON_ArrayForEach(it, json_at(d, "pluginFailures"))
		printf("failure   %s\n", it->valuestring);
	printf("%d binds, %d pipelined, %d evicted, %d jobs waiting\n",
	    cJSON_GetArraySize(json_at(d, "binds")),
	    cJSON_GetArraySize(json_at(d, "pipelined")),
	    cJSON_GetArraySize(json_at(d, "evicted")),
	    cJSON_GetArraySize(json_at(d, "waiting")));
}

static int
usage(const char *why)
{
	return cli_opt_usage("session", "%s\nusage: volray session record "
	    "FILE | replay FILE [--policy-dir DIR] [-o json]", why);
}

int
cli_session_run(int argc, char **argv)
{
	char *cause = NULL, *label;
	cJSON *doc, *d;
	int rc;

	if (argc != 2)
		return usage("session wants record FILE or replay FILE");
	if (strcmp(argv[0], "record") == 0) {
		FILE *f;
		char *text;

		if (cli_http_open(&cli_opts.conn) != 0)
			return CLI_FAIL;
		doc = record();
		cli_http_close();
		if (doc == NULL)
			return CLI_FAIL;
		text = cJSON_Print(doc);
		if ((f = strcmp(argv[1], "-") == 0 ? stdout :
		    fopen(argv[1], "w")) == NULL) {
			fprintf(stderr, "volray: %s: cannot write\n", argv[1]);
			free(text);
			cJSON_Delete(doc);
			return CLI_FAIL;
		}
		fprintf(f, "%s\n", text);
		if (f != stdout)
			fclose(f);
		fprintf(stderr, "recorded %d objects and %d policy files "
		    "into %s\n", cJSON_GetArraySize(json_at(doc, "cluster")),
		    cJSON_GetArraySize(json_at(doc, "policyFiles")), argv[1]);
		free(text);
		cJSON_Delete(doc);
		return CLI_OK;
	}
	if (strcmp(argv[0], "replay") != 0)
		return usage("unknown session subcommand");
	if ((doc = yamljson_load_file(argv[1], &cause)) == NULL) {
		fprintf(stderr, "volray: %s\n", cause);
		free(cause);
		return CLI_FAIL;
	}
	label = util_printf("%s:policyFiles/", argv[1]);
	d = replay(cJSON_GetArrayItem(doc, 0), cli_opts.policy_dir, label,
	    &cause);
	free(label);
	if (d == NULL) {
		fprintf(stderr, "volray: session replay: %s\n", cause);
		free(cause);
		cJSON_Delete(doc);
		return CLI_FAIL;
	}
	rc = CLI_OK;
	if (cli_opts.output != NULL)
		rc = cli_print_objects(d, cli_opts.output, NULL, 0) == 0 ?
		    CLI_OK : CLI_FAIL;
	else
		print_decisions(d);
	cJSON_Delete(d);
	cJSON_Delete(doc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* policy dry-run DIR                                                  */

/* The job ("ns/group") of a pod in the record, by its key "ns/name". */
static const char *
job_of(const cJSON *rec, const char *pod_key, char *buf, size_t len)
{
	const cJSON *o;

	cJSON_ArrayForEach(o, json_at(rec, "cluster")) {
		const char *ns = json_str(o, "metadata.namespace");
		const char *name = json_str(o, "metadata.name");
		const char *g;
		size_t nl;

		if (ns == NULL || name == NULL || strcmp(json_str(o, "kind"),
		    "Pod") != 0)
			continue;
		nl = strlen(ns);
		if (strncmp(pod_key, ns, nl) != 0 || pod_key[nl] != '/' ||
		    strcmp(pod_key + nl + 1, name) != 0)
			continue;
		g = cJSON_GetStringValue(cJSON_GetObjectItem(json_at(o,
		    "metadata.annotations"), "scheduling.k8s.io/group-name"));
		snprintf(buf, len, "%s/%s", ns, g != NULL ? g : name);
		return buf;
	}
	snprintf(buf, len, "%s", pod_key);
	return buf;
}

/* Print what differs between live (a) and dry (b); the count. */
static int
diff(const cJSON *rec, const cJSON *a, const cJSON *b)
{
	static const char *const maps[] = { "binds", "pipelined", "evicted" };
	int n = 0, start = 0, stop = 0, moved = 0, evict = 0, spare = 0;
	const cJSON *it;
	size_t m;
	char job[600];

	for (m = 0; m < 3; m++) {
		const cJSON *ma = json_at(a, maps[m]), *mb = json_at(b, maps[m]);

		cJSON_ArrayForEach(it, mb) {
			const cJSON *o = cJSON_GetObjectItem(ma, it->string);

			job_of(rec, it->string, job, sizeof job);
			if (o == NULL) {
				printf("%s: %s %s%s%s (live policy: not)\n", job,
				    maps[m][0] == 'e' ? "would evict" :
				    "would place", it->string, maps[m][0] == 'e' ?
				    "" : " on ", maps[m][0] == 'e' ? "" :
				    it->valuestring);
				n++;
				if (m == 2)
					evict++;
				else
					start++;
			} else if (m < 2 && strcmp(o->valuestring,
			    it->valuestring) != 0) {
				printf("%s: would place %s on %s (live policy: "
				    "%s)\n", job, it->string, it->valuestring,
				    o->valuestring);
				n++;
				moved++;
			}
		}
		cJSON_ArrayForEach(it, ma)
			if (cJSON_GetObjectItem(mb, it->string) == NULL) {
				job_of(rec, it->string, job, sizeof job);
				printf("%s: would not %s %s (live policy: %s%s)\n",
				    job, m == 2 ? "evict" : "place", it->string,
				    m == 2 ? "evicts it: " : "on ",
				    it->valuestring);
				n++;
				if (m == 2)
					spare++;
				else
					stop++;
			}
	}
	cJSON_ArrayForEach(it, json_at(b, "waiting")) {
		const cJSON *o = cJSON_GetObjectItem(json_at(a, "waiting"),
		    it->string);

		if (o != NULL && strcmp(json_str(o, "reason"),
		    json_str(it, "reason")) != 0) {
			printf("%s: would wait for %s: %s (live policy: %s)\n",
			    it->string, json_str(it, "reason"),
			    json_str(it, "message"), json_str(o, "reason"));
			n++;
		}
	}
	cJSON_ArrayForEach(it, json_at(b, "pluginFailures")) {
		printf("plugin failure: %s\n", it->valuestring);
		n++;
	}
	printf("%d differences: %d pods would be placed that the live policy "
	    "does not place, %d would not be, %d would go to another node, "
	    "%d more evictions, %d fewer\n", n, start, stop, moved, evict,
	    spare);
	return n;
}

int
cli_policy_dry_run(const char *dir)
{
	char *cause = NULL;
	cJSON *rec, *a, *b;
	int n;

	if (cli_http_open(&cli_opts.conn) != 0)
		return CLI_FAIL;
	rec = record();
	cli_http_close();
	if (rec == NULL)
		return CLI_FAIL;
	if ((a = replay(rec, NULL, "the live policy's ", &cause)) == NULL ||
	    (b = replay(rec, dir, "the live policy's ", &cause)) == NULL) {
		fprintf(stderr, "volray: policy dry-run: %s\n", cause);
		free(cause);
		cJSON_Delete(a);
		cJSON_Delete(rec);
		return CLI_FAIL;
	}
	n = diff(rec, a, b);
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(rec);
	return n == 0 ? CLI_OK : CLI_FAIL;
}
