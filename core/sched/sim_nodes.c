/*
 * The simulated nodes of `volray sim`: --nodes N alike (--node-cpu,
 * --node-memory), or the nodes of a file, each labelled so that the
 * plugins' node rules (predicates, node_order reading node.labels)
 * see what they would see on a real cluster. The file is YAML or JSON,
 * a list of groups of nodes:
 *
 *   - {name: fast, cpu: 16, memory: 64Gi, labels: {tier: fast}}
 *   - {count: 3, cpu: 8, memory: 32Gi, labels: {zone: a}}   # sim-1..3
 *
 * (cpu and memory default to --node-cpu and --node-memory, count to 1;
 * a name with a count names NAME-0, NAME-1, ...; pods defaults to 110),
 * or Node objects as `kubectl get nodes -o yaml` prints them (a List or
 * documents), taken as they are: labels, taints, allocatable.
 * --node-labels k=v,... labels every node besides (a file's own label
 * of that key wins).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "sched/sim.h"

/* A label key ([prefix/]name) or value's characters, as Kubernetes
   allows them; a key is not empty. */
static int
label_text(const char *s, size_t n, int key)
{
	size_t i;

	if (n > (key ? 316 : 63) || (key && n == 0))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' &&
		    s[i] != '_' && s[i] != '.' && !(key && s[i] == '/'))
			return 0;
	return 1;
}

/* "k=v,..." as a labels object; NULL with *cause. */
static cJSON *
parse_labels(const char *s, char **cause)
{
	cJSON *o = cJSON_CreateObject();
	const char *p = s, *eq, *end;
	char *k, *v;

	while (*p != '\0') {
		end = p + strcspn(p, ",");
		eq = memchr(p, '=', (size_t)(end - p));
		if (eq == NULL || !label_text(p, (size_t)(eq - p), 1) ||
		    !label_text(eq + 1, (size_t)(end - eq - 1), 0)) {
			*cause = util_printf("--node-labels: want key=value,... "
			    "(letters, digits, - _ . and a / in a key), not "
			    "\"%.*s\"", (int)(end - p), p);
			cJSON_Delete(o);
			return NULL;
		}
		k = util_printf("%.*s", (int)(eq - p), p);
		v = util_printf("%.*s", (int)(end - eq - 1), eq + 1);
		cJSON_DeleteItemFromObjectCaseSensitive(o, k);
		cJSON_AddStringToObject(o, k, v);
		free(k);
		free(v);
		p = *end == ',' ? end + 1 : end;
	}
	return o;
}

/* A Ready node named name, with that allocatable and those labels (a
   copy). */
static cJSON *
node_new(const char *name, double cpu_m, double memory, double pods,
    const cJSON *labels)
{
	cJSON *o = cJSON_CreateObject(), *md, *st, *a, *c;
	char b[64];

	cJSON_AddStringToObject(o, "apiVersion", "v1");
	cJSON_AddStringToObject(o, "kind", "Node");
	md = cJSON_AddObjectToObject(o, "metadata");
	cJSON_AddStringToObject(md, "name", name);
	if (labels != NULL)
		cJSON_AddItemToObject(md, "labels", cJSON_Duplicate(labels, 1));
	st = cJSON_AddObjectToObject(o, "status");
	a = cJSON_AddObjectToObject(st, "allocatable");
	snprintf(b, sizeof b, "%.0fm", cpu_m);
	cJSON_AddStringToObject(a, "cpu", b);
	snprintf(b, sizeof b, "%.0f", memory);
	cJSON_AddStringToObject(a, "memory", b);
	snprintf(b, sizeof b, "%.0f", pods);
	cJSON_AddStringToObject(a, "pods", b);
	c = cJSON_AddArrayToObject(st, "conditions");
	cJSON_AddItemToArray(c, cJSON_Parse(
	    "{\"type\":\"Ready\",\"status\":\"True\"}"));
	return o;
}

/* Add a node (owned) to the set, counting its cpu and memory in. */
static void
add(struct sim_nodes *ns, cJSON *o)
{
	double x;

	if (quantity_json(json_at(o, "status.allocatable.cpu"), &x) == 0)
		ns->cpu_m += x * 1000;
	if (quantity_json(json_at(o, "status.allocatable.memory"), &x) == 0)
		ns->memory += x;
	cJSON_AddItemToArray(ns->objs, o);
	ns->count++;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A name two nodes have, or NULL (sorted, not one by one: a set may
   have 100000 nodes). */
static const char *
twice(const struct sim_nodes *ns)
{
	const char **v = xcalloc((size_t)ns->count + 1, sizeof *v), *dup = NULL;
	const cJSON *o;
	int n = 0, i;

	cJSON_ArrayForEach(o, ns->objs)
		v[n++] = json_str(o, "metadata.name");
	qsort(v, (size_t)n, sizeof *v, cmp_str);
	for (i = 1; i < n && dup == NULL; i++)
		if (strcmp(v[i - 1], v[i]) == 0)
			dup = v[i];
	free(v);
	return dup;
}

/* The common labels under each node's own. */
static void
label_all(struct sim_nodes *ns, const cJSON *common)
{
	const cJSON *kv;
	cJSON *o, *labels;

	cJSON_ArrayForEach(o, ns->objs) {
		labels = json_obj(json_obj(o, "metadata"), "labels");
		cJSON_ArrayForEach(kv, common)
			if (cJSON_GetObjectItemCaseSensitive(labels,
			    kv->string) == NULL)
				cJSON_AddItemToObject(labels, kv->string,
				    cJSON_Duplicate(kv, 1));
	}
}

/* A quantity field of a group, or dflt when absent; -1 when bad. */
static double
group_quantity(const cJSON *g, const char *k, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(g, k);
	double x;

	if (v == NULL)
		return dflt;
	return quantity_json(v, &x) == 0 && x > 0 ? x : -1;
}

/* One group of the file's short form; -1 with *cause. */
static int
add_group(struct sim_nodes *ns, const cJSON *g, int item, double cpu_m,
    double memory, char **cause)
{
	static const char *const keys[] = { "name", "count", "cpu", "memory",
	    "pods", "labels" };
	const cJSON *it, *labels = cJSON_GetObjectItemCaseSensitive(g,
	    "labels");
	const char *name = json_str(g, "name");
	double count, cpu, mem, pods;
	char nm[300];
	size_t k;
	int i;

	cJSON_ArrayForEach(it, g) {
		for (k = 0; k < sizeof keys / sizeof *keys; k++)
			if (strcmp(it->string, keys[k]) == 0)
				break;
		if (k == sizeof keys / sizeof *keys) {
			*cause = util_printf("node %d: unknown key \"%s\" (want "
			    "name, count, cpu, memory, pods or labels, or a "
			    "Node object)", item, it->string);
			return -1;
		}
	}
	count = group_quantity(g, "count", 1);
	cpu = group_quantity(g, "cpu", cpu_m / 1000);
	mem = group_quantity(g, "memory", memory);
	pods = group_quantity(g, "pods", 110);
	if (count < 1 || count > SIM_NODES_MAX || count != (int)count || cpu < 0 ||
	    mem < 0 || pods < 0) {
		*cause = util_printf("node %d: count is a whole number from 1, "
		    "cpu, memory and pods quantities above 0", item);
		return -1;
	}
	if ((name != NULL && (*name == '\0' || strlen(name) > 200)) ||
	    (cJSON_GetObjectItemCaseSensitive(g, "name") != NULL &&
	    name == NULL)) {
		*cause = util_printf("node %d: name: want a node name", item);
		return -1;
	}
	if (labels != NULL && !cJSON_IsObject(labels)) {
		*cause = util_printf("node %d: labels: want a mapping", item);
		return -1;
	}
	if (ns->count + count > SIM_NODES_MAX) {
		*cause = util_printf("node %d: more than %d nodes in all", item,
		    SIM_NODES_MAX);
		return -1;
	}
	cJSON_ArrayForEach(it, labels)
		if (!cJSON_IsString(it) || !label_text(it->string,
		    strlen(it->string), 1) || !label_text(it->valuestring,
		    strlen(it->valuestring), 0)) {
			*cause = util_printf("node %d: labels: want key: value "
			    "strings (letters, digits, - _ . and a / in a "
			    "key)", item);
			return -1;
		}
	for (i = 0; i < (int)count; i++) {
		if (name == NULL)
			snprintf(nm, sizeof nm, "sim-%d", ns->count);
		else if (count == 1)
			snprintf(nm, sizeof nm, "%s", name);
		else
			snprintf(nm, sizeof nm, "%s-%d", name, i);
		add(ns, node_new(nm, cpu * 1000, mem, pods, labels));
	}
	return 0;
}

/* A Node object as it is, Ready unless it says otherwise; -1 with
   *cause. */
static int
add_object(struct sim_nodes *ns, const cJSON *n, int item, char **cause)
{
	const char *name = json_str(n, "metadata.name");
	double x;
	cJSON *o;

	if (name == NULL || quantity_json(json_at(n,
	    "status.allocatable.cpu"), &x) != 0 || quantity_json(json_at(n,
	    "status.allocatable.memory"), &x) != 0) {
		*cause = util_printf("node %d: a Node wants metadata.name and "
		    "status.allocatable cpu and memory", item);
		return -1;
	}
	if (ns->count >= SIM_NODES_MAX) {
		*cause = util_printf("node %d: more than %d nodes in all", item,
		    SIM_NODES_MAX);
		return -1;
	}
	o = cJSON_Duplicate(n, 1);
	if (json_at(o, "status.conditions") == NULL)
		cJSON_AddItemToArray(cJSON_AddArrayToObject(json_obj(o,
		    "status"), "conditions"), cJSON_Parse(
		    "{\"type\":\"Ready\",\"status\":\"True\"}"));
	if (json_at(o, "status.allocatable.pods") == NULL)
		json_set_str(json_at(o, "status.allocatable"), "pods", "110");
	add(ns, o);
	return 0;
}

/* Every item of the file's documents (a List's items in its place). */
static int
load_file(struct sim_nodes *ns, const char *path, double cpu_m,
    double memory, char **cause)
{
	cJSON *docs, *items, *d, *it;
	char *why = NULL;
	int item = 0, rc = 0;

	if ((docs = yamljson_load_file(path, &why)) == NULL) {
		*cause = why;	/* it names the file */
		return -1;
	}
	items = cJSON_CreateArray();
	cJSON_ArrayForEach(d, docs) {
		const cJSON *list = cJSON_IsArray(d) ? d :
		    cJSON_IsArray(json_at(d, "items")) ? json_at(d, "items") :
		    NULL;

		if (list == NULL)
			cJSON_AddItemToArray(items, cJSON_Duplicate(d, 1));
		else
			cJSON_ArrayForEach(it, list)
				cJSON_AddItemToArray(items,
				    cJSON_Duplicate(it, 1));
	}
	cJSON_ArrayForEach(it, items) {
		char *c = NULL;

		item++;
		if (!cJSON_IsObject(it))
			c = util_printf("node %d: want a mapping", item);
		else if (json_str(it, "kind") != NULL &&
		    strcmp(json_str(it, "kind"), "Node") != 0)
			c = util_printf("node %d: a %s, not a Node", item,
			    json_str(it, "kind"));
		else if (json_str(it, "kind") != NULL)
			add_object(ns, it, item, &c);
		else
			add_group(ns, it, item, cpu_m, memory, &c);
		if (c != NULL) {
			*cause = util_printf("%s: %s", path, c);
			free(c);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ns->count == 0) {
		*cause = util_printf("%s: no nodes", path);
		rc = -1;
	}
	if (rc == 0 && twice(ns) != NULL) {
		*cause = util_printf("%s: two nodes named %s", path, twice(ns));
		rc = -1;
	}
	cJSON_Delete(items);
	cJSON_Delete(docs);
	return rc;
}

int
sim_nodes_make(struct sim_nodes *ns, const char *file, int count,
    double cpu_m, double memory, const char *labels, char **cause)
{
	cJSON *common = NULL;
	char name[64];
	int i;

	memset(ns, 0, sizeof *ns);
	ns->objs = cJSON_CreateArray();
	if (labels != NULL && (common = parse_labels(labels, cause)) == NULL) {
		sim_nodes_free(ns);
		return -2;
	}
	if (file != NULL) {
		if (load_file(ns, file, cpu_m, memory, cause) != 0)
			goto fail;
	} else
		for (i = 0; i < count; i++) {
			snprintf(name, sizeof name, "sim-%d", i);
			add(ns, node_new(name, cpu_m, memory, 110, NULL));
		}
	if (common != NULL)
		label_all(ns, common);
	cJSON_Delete(common);
	return 0;
fail:
	cJSON_Delete(common);
	sim_nodes_free(ns);
	return -1;
}

void
sim_nodes_free(struct sim_nodes *ns)
{
	cJSON_Delete(ns->objs);
	memset(ns, 0, sizeof *ns);
}
