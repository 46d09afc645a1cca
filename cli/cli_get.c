/*
 * volray get: objects of one or more kinds (pods,nodes), by name or by
 * selector, as the server's Tables or in an -o format. Each kind is read
 * whole first (lists in pages); --sort-by orders rows by a JSONPath over
 * each object (Tables then carry whole objects, includeObject=Object);
 * -w then follows a watch from the list's resourceVersion and prints each
 * change as it comes, lined up with the rows already printed.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_res.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/xmalloc.h"

/* What get prints: one kind's objects. */
struct kind {
	const struct cli_res	*r;
	const char			*ns;
	cJSON				*doc;	/* a Table, or a List */
};

static int
is_table(void)
{
	return cli_opts.output == NULL || strcmp(cli_opts.output, "wide") == 0;
}

/*
 * kubectl's order for text (sortorder.NaturalLess): runs of digits compare
 * as numbers, so resourceVersion "99" comes before "100".
 */
static int
natural_cmp(const char *a, const char *b)
{
	while (*a != '\0' && *b != '\0') {
		if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			const char *ea = a, *eb = b;
			size_t la, lb;
			int c;

			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
			for (ea = a; isdigit((unsigned char)*ea); ea++)
				;
			for (eb = b; isdigit((unsigned char)*eb); eb++)
				;
			la = (size_t)(ea - a);
			lb = (size_t)(eb - b);
			if (la != lb)
				return la < lb ? -1 : 1;
			if ((c = strncmp(a, b, la)) != 0)
				return c;
			a = ea;
			b = eb;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++;
		b++;
	}
	return (*a != '\0') - (*b != '\0');
}

/* Compare two objects by the --sort-by path: missing first, numbers by
 * value, the rest as text in kubectl's natural order. */
static int
sort_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	const char *path = cli_opts.sort_by;
	char *sx, *sy;
	int c;

	if (is_table()) {
		x = json_at(x, "object");
		y = json_at(y, "object");
	}
	x = jsonpath_first(x, path);
	y = jsonpath_first(y, path);
	if (x == NULL || y == NULL)
		return (x != NULL) - (y != NULL);
	if (cJSON_IsNumber(x) && cJSON_IsNumber(y))
		return (x->valuedouble > y->valuedouble) -
		    (x->valuedouble < y->valuedouble);
	sx = cJSON_IsString(x) ? x->valuestring : cJSON_PrintUnformatted(x);
	sy = cJSON_IsString(y) ? y->valuestring : cJSON_PrintUnformatted(y);
	c = natural_cmp(sx, sy);
	if (!cJSON_IsString(x))
		free(sx);
	if (!cJSON_IsString(y))
		free(sy);
	return c;
}

/* Order the rows (or items) of a document by --sort-by, stably enough. */
static void
sort_doc(cJSON *doc)
{
	cJSON *arr = cJSON_GetObjectItemCaseSensitive(doc, is_table() ?
	    "rows" : "items"), **v, *el;
	size_t n = 0, i;

	if (cli_opts.sort_by == NULL || arr == NULL)
		return;
	v = xmalloc((cJSON_GetArraySize(arr) + 1) * sizeof *v);
	while ((el = cJSON_DetachItemFromArray(arr, 0)) != NULL)
		v[n++] = el;
	qsort(v, n, sizeof *v, sort_cmp);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, v[i]);
	free(v);
}

/* Give list items the apiVersion and kind the server may leave out. */
static void
fill_kinds(cJSON *list, const struct cli_res *r)
{
	struct cli_buf av = { 0 };
	cJSON *el;

	cli_buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "",
	    r->version);
	cJSON_ArrayForEach(el, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		if (json_str(el, "kind") == NULL)
			cli_obj_prepend(el, "kind", r->kind);
		if (json_str(el, "apiVersion") == NULL)
			cli_obj_prepend(el, "apiVersion", av.p);
	}
	cli_buf_free(&av);
}

/* The path of a kind's collection with the selectors and sort option. */
static void
list_path(struct cli_buf *p, const struct cli_res *r, const char *ns,
    const char *name)
{
	struct cli_buf sel = { 0 };

	cli_res_path(p, r, ns, NULL, NULL);
	cli_http_query_add(p, "labelSelector", cli_opts.selector);
	if (name != NULL) {
		cli_buf_printf(&sel, "metadata.name=%s%s%s", name,
		    cli_opts.fselector != NULL ? "," : "",
		    cli_opts.fselector != NULL ? cli_opts.fselector : "");
		cli_http_query_add(p, "fieldSelector", sel.p);
	} else
		cli_http_query_add(p, "fieldSelector", cli_opts.fselector);
	if (cli_opts.sort_by != NULL && is_table())
		cli_http_query_add(p, "includeObject", "Object");
	cli_buf_free(&sel);
}

/* Read one kind: the list, or the named objects joined into one. */
static int
read_kind(struct kind *k, char **names, int nnames)
{
	const char *accept = is_table() ? CLI_TABLE_ACCEPT : NULL;
	const char *member = is_table() ? "rows" : "items";
	struct cli_buf path = { 0 };
	cJSON *one, *el;
	int i, rc = CLI_OK;

	k->ns = cli_opts.all_ns && nnames == 0 ? NULL : cli_obj_ns(k->r);
	if (nnames == 0) {
		list_path(&path, k->r, k->ns, NULL);
		k->doc = cli_http_list(path.p, accept);
		cli_buf_free(&path);
		return k->doc != NULL ? CLI_OK : CLI_FAIL;
	}
	for (i = 0; i < nnames; i++) {
		path.len = 0;
		cli_res_path(&path, k->r, k->ns, names[i], NULL);
		if (cli_opts.sort_by != NULL && is_table())
			cli_http_query_add(&path, "includeObject", "Object");
		if ((one = cli_http_get_json(path.p, accept)) == NULL) {
			rc = CLI_FAIL;
			continue;
		}
		if (is_table() && (json_str(one, "kind") == NULL ||
		    strcmp(json_str(one, "kind"), "Table") != 0))
			one = cli_table_of_names(one);
		if (!is_table()) {
			el = one;
			one = cJSON_CreateObject();
			cJSON_AddItemToArray(cJSON_AddArrayToObject(one,
			    "items"), el);
		}
		if (k->doc == NULL)
			k->doc = one;
		else {
			while ((el = cJSON_DetachItemFromArray(
			    cJSON_GetObjectItemCaseSensitive(one, member), 0)) !=
			    NULL)
				cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(
				    k->doc, member), el);
			cJSON_Delete(one);
		}
	}
	cli_buf_free(&path);
	return rc;
}

/* Print the kinds' tables, a blank line apart; empty ones are left out. */
static void
print_tables(struct kind *kinds, int n, int prefixed, int named,
    struct cli_table *t)
{
	struct cli_table_opts to = { 0 };
	int i, printed = 0;
	char *type;

	for (i = 0; i < n; i++) {
		if (kinds[i].doc == NULL)
			continue;
		if (json_str(kinds[i].doc, "kind") == NULL ||
		    strcmp(json_str(kinds[i].doc, "kind"), "Table") != 0)
			kinds[i].doc = cli_table_of_names(kinds[i].doc);
		sort_doc(kinds[i].doc);
		if (cJSON_GetArraySize(json_at(kinds[i].doc, "rows")) == 0)
			continue;
		type = cli_res_type(kinds[i].r);
		to.with_ns = kinds[i].r->namespaced && kinds[i].ns == NULL;
		to.wide = cli_opts.output != NULL;
		to.show_labels = cli_opts.show_labels;
		to.prefix = prefixed ? type : NULL;
		if (printed++ > 0)
			fputc('\n', stdout);
		cli_table_add_kube(t, kinds[i].doc, &to, 1);
		cli_table_flush(t);
		free(type);
	}
	if (printed == 0 && n > 0 && !named) {
		if (kinds[0].r->namespaced && kinds[0].ns != NULL)
			fprintf(stderr, "No resources found in %s namespace.\n",
			    kinds[0].ns);
		else
			fprintf(stderr, "No resources found\n");
	}
}

/* Print the kinds in an -o format: one List (or one object) for all. */
static int
print_objects(struct kind *kinds, int n, int single)
{
	cJSON *all = cJSON_CreateObject(), *items, *el, *doc;
	char *type;
	int i, rc = 0;

	cJSON_AddStringToObject(all, "apiVersion", "v1");
	items = cJSON_AddArrayToObject(all, "items");
	cJSON_AddStringToObject(all, "kind", "List");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(all, "metadata"),
	    "resourceVersion", "");
	for (i = 0; i < n; i++) {
		if (kinds[i].doc == NULL)
			continue;
		fill_kinds(kinds[i].doc, kinds[i].r);
		sort_doc(kinds[i].doc);
		if (strcmp(cli_opts.output, "name") == 0) {
			type = cli_res_type(kinds[i].r);
			rc |= cli_print_objects(kinds[i].doc, "name", type, 0);
			free(type);
			continue;
		}
		while ((el = cJSON_DetachItemFromArray(
		    cJSON_GetObjectItemCaseSensitive(kinds[i].doc, "items"), 0))
		    != NULL)
			cJSON_AddItemToArray(items, el);
	}
	if (strcmp(cli_opts.output, "name") == 0) {
		cJSON_Delete(all);
		return rc != 0;
	}
	doc = all;
	if (single && cJSON_GetArraySize(items) == 1)
		doc = cJSON_DetachItemFromArray(items, 0);
	if (strncmp(cli_opts.output, "custom-columns=", 15) == 0)
		rc = cli_table_custom(doc, cli_opts.output + 15);
	else
		rc = cli_print_objects(doc, cli_opts.output, "", cli_opts.managed);
	if (doc != all)
		cJSON_Delete(doc);
	cJSON_Delete(all);
	return rc != 0 ? CLI_FAIL : CLI_OK;
}

/* What a watch prints with. */
struct watching {
	const struct cli_res	*r;
	struct cli_table		*t;
	char				*rv;
	int				 expired;
};

/* Print one watch event: a Table row lined up, or the object. */
static int
watch_event(const cJSON *ev, void *arg)
{
	struct watching *w = arg;
	struct cli_table_opts to = { 0 };
	const char *type = json_str(ev, "type"), *rv;
	const cJSON *obj = json_at(ev, "object");
	cJSON *copy;
	char *t;

	if (type == NULL)
		return 0;
	if (strcmp(type, "ERROR") == 0) {
		w->expired = 1;
		return 1;
	}
	rv = json_str(obj, "metadata.resourceVersion");
	if (rv == NULL && cJSON_IsArray(json_at(obj, "rows")))
		rv = json_str(json_at(obj, "rows")->child,
		    "object.metadata.resourceVersion");
	if (rv != NULL) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	if (is_table()) {
		to.with_ns = w->r->namespaced && cli_opts.all_ns;
		to.wide = cli_opts.output != NULL;
		to.show_labels = cli_opts.show_labels;
		cli_table_add_kube(w->t, obj, &to, w->t->w == NULL);
		cli_table_flush(w->t);
		return 0;
	}
	copy = cJSON_Duplicate(obj, 1);
	t = cli_res_type(w->r);
	if (strncmp(cli_opts.output, "custom-columns=", 15) == 0)
		cli_table_custom(copy, cli_opts.output + 15);
	else
		cli_print_objects(copy, cli_opts.output, t, cli_opts.managed);
	if (strcmp(cli_opts.output, "json") == 0 ||
	    strcmp(cli_opts.output, "yaml") == 0)
		printf("%s\n", strcmp(cli_opts.output, "yaml") == 0 ? "---" : "");
	fflush(stdout);
	free(t);
	cJSON_Delete(copy);
	return 0;
}

/* -w: follow one kind from the list's resourceVersion until interrupted,
 * or until the server says the version is too old (exit 1, as kubectl). */
static int
watch_kind(struct kind *k, const char *name, struct cli_table *t)
{
	struct watching w = { k->r, t, NULL, 0 };
	struct cli_buf path = { 0 };
	const char *rv = json_str(k->doc, "metadata.resourceVersion");
	long code;
	int rc = CLI_OK;

	w.rv = xstrdup(rv != NULL && *rv != '\0' ? rv : "0");
	list_path(&path, k->r, k->ns, name);
	for (;;) {
		if (cli_http_watch_as(path.p, w.rv, 3600000L, is_table() ?
		    CLI_TABLE_ACCEPT : NULL, watch_event, &w, &code) != 0) {
			rc = CLI_FAIL;
			break;
		}
		if (w.expired || code == 410) {
			cli_color_errorf("the watch of %s expired: the "
			    "resourceVersion %s is too old\n", k->r->name, w.rv);
			rc = CLI_FAIL;
			break;
		}
	}
	free(w.rv);
	cli_buf_free(&path);
	return rc;
}

/* get: parse the kinds and names, read them all, print, maybe watch. */
int
cli_get_run(int argc, char **argv)
{
	struct cli_table t = { 0 };
	struct kind *kinds = NULL;
	char *types, *save, *tok, **names = NULL;
	int n = 0, nnames = 0, i, rc = CLI_OK, slashed, single;

	if (argc < 1)
		return cli_opt_usage("get", "you must specify the type of "
		    "resource to get");
	slashed = strchr(argv[0], '/') != NULL;
	if (cli_opts.watch && (slashed ? argc > 1 : strchr(argv[0], ',') !=
	    NULL))
		return cli_opt_usage("get", "-w watches one kind");
	if (slashed) {
		/* TYPE/NAME... : one kind per argument, named. */
		kinds = xmalloc(argc * sizeof *kinds);
		for (i = 0; i < argc; i++) {
			const char *name;
			int rest, r;

			if (strchr(argv[i], '/') == NULL)
				return cli_opt_usage("get", "there is no need "
				    "to specify a resource type as a separate "
				    "argument when passing arguments in "
				    "resource/name form");
			memset(&kinds[n], 0, sizeof kinds[n]);
			if ((r = cli_obj_target("get", 1, &argv[i],
			    &kinds[n].r, &name, &rest)) != CLI_OK) {
				rc = r;
				continue;
			}
			rc |= read_kind(&kinds[n++], (char **)&name, 1);
		}
		single = argc == 1;
	} else {
		types = xstrdup(argv[0]);
		names = argv + 1;
		nnames = argc - 1;
		kinds = xmalloc((strlen(types) + 1) *
		    sizeof *kinds);
		for (tok = strtok_r(types, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			memset(&kinds[n], 0, sizeof kinds[n]);
			if ((kinds[n].r = cli_res_resolve(tok)) == NULL) {
				free(types);
				free(kinds);
				return CLI_FAIL;
			}
			n++;
		}
		free(types);
		for (i = 0; i < n; i++)
			rc |= read_kind(&kinds[i], names, nnames);
		single = n == 1 && nnames == 1;
	}
	if (is_table()) {
		t.keep = cli_opts.watch;
		print_tables(kinds, n, n > 1 || slashed, slashed || nnames > 0,
		    &t);
	} else
		rc |= print_objects(kinds, n, single);
	if (cli_opts.watch && n == 1 && kinds[0].doc != NULL)
		rc = watch_kind(&kinds[0], slashed || nnames > 0 ?
		    (slashed ? strchr(argv[0], '/') + 1 : names[0]) : NULL, &t);
	for (i = 0; i < n; i++)
		cJSON_Delete(kinds[i].doc);
	free(kinds);
	free(t.w);
	return rc != 0 ? CLI_FAIL : CLI_OK;
}
