/*
 * volray hypernode: Volcano's network topology (HyperNodes) as a tree.
 * list draws every HyperNode under the ones no other lists, with its
 * tier and node count; get NAME draws one HyperNode's subtree down to
 * its nodes. Members are resolved here as the scheduler resolves them
 * (sched/topology.c): nodes by exact name, regular expression (POSIX
 * ERE) or label selector, HyperNodes by exact name or regular
 * expression, each HyperNode under the first of a higher tier that
 * lists it.
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_cmd.h"
#include "cli_http.h"
#include "lib/json.h"
#include "lib/selector.h"
#include "lib/xmalloc.h"

#define HYPERNODES	"/apis/topology.volcano.sh/v1alpha1/hypernodes"
#define NODES		"/api/v1/nodes"

struct hn {
	const char *name;
	int tier;
	const cJSON *obj;
	struct hn *parent;
	const char **nodes;		/* direct node members */
	int nnodes, total;
};

struct topo {
	struct hn *hns;
	int nhns;
	cJSON *hlist, *nlist;
};

static int
usage(const char *why)
{
	return cli_opt_usage("hypernode", "%s\nusage: volray hypernode list | "
	    "get NAME", why);
}

static int
selects(const cJSON *sel, const cJSON *labels)
{
	selector *x = selector_from_json(sel, NULL);
	int ok = x != NULL && selector_match_labels(x, labels);

	selector_free(x);
	return ok;
}

static void
add_node(struct hn *h, const char *name)
{
	int i;

	for (i = 0; i < h->nnodes; i++)
		if (strcmp(h->nodes[i], name) == 0)
			return;
	h->nodes = xreallocarray(h->nodes, (size_t)h->nnodes + 1,
	    sizeof *h->nodes);
	h->nodes[h->nnodes++] = name;
}

static struct hn *
find(struct topo *t, const char *name)
{
	int i;

	for (i = 0; i < t->nhns; i++)
		if (strcmp(t->hns[i].name, name) == 0)
			return &t->hns[i];
	return NULL;
}

static void
resolve(struct topo *t, struct hn *h)
{
	const cJSON *m, *n;

	cJSON_ArrayForEach(m, json_at(h->obj, "spec.members")) {
		const char *type = json_str(m, "type");
		const char *exact = json_str(m, "selector.exactMatch.name");
		const char *pat = json_str(m, "selector.regexMatch.pattern");
		const cJSON *sel = json_at(m, "selector.labelMatch");
		int nodes = type == NULL || strcmp(type, "Node") == 0, i;
		regex_t re;

		if (pat != NULL && regcomp(&re, pat, REG_EXTENDED |
		    REG_NOSUB) != 0)
			continue;
		if (nodes) {
			cJSON_ArrayForEach(n, json_at(t->nlist, "items")) {
				const char *name = json_str(n, "metadata.name");

				if (name != NULL && ((exact != NULL &&
				    strcmp(exact, name) == 0) || (pat != NULL &&
				    regexec(&re, name, 0, NULL, 0) == 0) ||
				    (exact == NULL && pat == NULL && sel != NULL &&
				    selects(sel, json_at(n, "metadata.labels")))))
					add_node(h, name);
			}
		} else {
			for (i = 0; i < t->nhns; i++) {
				struct hn *c = &t->hns[i];

				if (c == h || c->parent != NULL ||
				    c->tier >= h->tier)
					continue;
				if ((exact != NULL && strcmp(exact, c->name) ==
				    0) || (pat != NULL && regexec(&re, c->name,
				    0, NULL, 0) == 0))
					c->parent = h;
			}
		}
		if (pat != NULL)
			regfree(&re);
	}
}

static int
cmp_hn(const void *a, const void *b)
{
	const struct hn *x = a, *y = b;

	if (x->tier != y->tier)
		return x->tier < y->tier ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Fetch and resolve; -1 after printing why. */
static int
load(struct topo *t)
{
	cJSON *it;
	int i;

	memset(t, 0, sizeof *t);
	if ((t->hlist = cli_http_list(HYPERNODES, NULL)) == NULL ||
	    (t->nlist = cli_http_list(NODES, NULL)) == NULL)
		return -1;
	t->hns = xcalloc((size_t)cJSON_GetArraySize(json_at(t->hlist,
	    "items")) + 1, sizeof *t->hns);
	cJSON_ArrayForEach(it, json_at(t->hlist, "items")) {
		const cJSON *tier = json_at(it, "spec.tier");

		if (json_str(it, "metadata.name") == NULL)
			continue;
		t->hns[t->nhns].name = json_str(it, "metadata.name");
		t->hns[t->nhns].tier = cJSON_IsNumber(tier) ?
		    (int)tier->valuedouble : 0;
		t->hns[t->nhns++].obj = it;
	}
	qsort(t->hns, (size_t)t->nhns, sizeof *t->hns, cmp_hn);
	for (i = 0; i < t->nhns; i++)
		resolve(t, &t->hns[i]);
	/* Totals: a HyperNode's nodes and its children's. */
	for (i = 0; i < t->nhns; i++) {
		struct hn *p;

		t->hns[i].total += t->hns[i].nnodes;
		for (p = t->hns[i].parent; p != NULL; p = p->parent)
			p->total += t->hns[i].nnodes;
	}
	return 0;
}

static void
unload(struct topo *t)
{
	int i;

	for (i = 0; i < t->nhns; i++)
		free(t->hns[i].nodes);
	free(t->hns);
	cJSON_Delete(t->hlist);
	cJSON_Delete(t->nlist);
}

static void
draw(struct topo *t, struct hn *h, const char *indent, int last, int top,
    int with_nodes)
{
	char next[512];
	int i, n = 0, k = 0;

	printf("%s%s%s (tier %d, %d node%s)\n", indent, top ? "" : last ?
	    "`-- " : "|-- ", h->name, h->tier, h->total, h->total == 1 ? "" :
	    "s");
	snprintf(next, sizeof next, "%s%s", indent, top ? "" : last ?
	    "    " : "|   ");
	for (i = 0; i < t->nhns; i++)
		if (t->hns[i].parent == h)
			n++;
	if (with_nodes)
		n += h->nnodes;
	for (i = 0; i < t->nhns; i++)
		if (t->hns[i].parent == h)
			draw(t, &t->hns[i], next, ++k == n, 0, with_nodes);
	if (with_nodes)
		for (i = 0; i < h->nnodes; i++)
			printf("%s%s%s\n", next, ++k == n ? "`-- " : "|-- ",
			    h->nodes[i]);
}

static int
hn_list(void)
{
	struct topo t;
	int i, tier;

	if (load(&t) != 0)
		return 1;
	if (t.nhns == 0)
		printf("No HyperNodes.\n");
	/* The tops, highest tier first, by name within a tier. */
	for (tier = t.nhns > 0 ? t.hns[t.nhns - 1].tier : 0; tier >= 0;
	    tier--)
		for (i = 0; i < t.nhns; i++)
			if (t.hns[i].tier == tier && t.hns[i].parent == NULL)
				draw(&t, &t.hns[i], "", 1, 1, 0);
	unload(&t);
	return 0;
}

static int
hn_get(const char *name)
{
	struct topo t;
	struct hn *h;

	if (load(&t) != 0)
		return 1;
	if ((h = find(&t, name)) == NULL) {
		fprintf(stderr, "volray: hypernode \"%s\" not found\n", name);
		unload(&t);
		return 1;
	}
	draw(&t, h, "", 1, 1, 1);
	unload(&t);
	return 0;
}

int
cli_hypernode_run(int argc, char **argv)
{
	if (argc == 1 && strcmp(argv[0], "list") == 0)
		return hn_list();
	if (argc == 2 && strcmp(argv[0], "get") == 0)
		return hn_get(argv[1]);
	return usage(argc == 0 ? "hypernode needs a subcommand" :
	    "hypernode list | get NAME");
}
