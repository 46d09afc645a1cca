/*
 * Tables for the client, volray(1): rows of cells laid out as kubectl's
 * tabwriter lays out `kubectl get` (left-aligned, three spaces apart, no
 * column narrower than six, widths remembered across flushes for get -w),
 * filled from a meta.k8s.io Table the server made (NAMESPACE and LABELS
 * columns added from each row's object), from -o custom-columns paths,
 * or from bare names for a server that makes no Tables.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/xmalloc.h"

/* Join custom-columns matches with commas. */
static void
add_match(const cJSON *m, void *arg)
{
	struct cli_buf *b = arg;
	char *s = cli_print_cell(m);

	cli_buf_printf(b, "%s%s", b->len > 0 ? "," : "", s);
	free(s);
}

/* Append a row; the table takes over its cells. */
void
cli_table_add(struct cli_table *t, char **row)
{
	int i;

	t->cell = xrealloc(t->cell,
	    (t->nrow + 1) * t->ncol * sizeof *t->cell);
	for (i = 0; i < t->ncol; i++)
		t->cell[t->nrow * t->ncol + i] = row[i];
	t->nrow++;
}

/* Width of UTF-8 text in characters. */
static size_t
text_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Note which columns hold statuses, by the headers of row 0 (the first
 * flush's; later flushes of a kept table have no header). */
static void
find_status_columns(struct cli_table *t)
{
	static const char *const heads[] = { "STATUS", "PHASE", "STATE",
	    "JOB STATUS", "DEPLOYMENT STATUS" };
	size_t i;
	int c;

	t->headed = 1;
	for (c = 0; c < t->ncol && c < 64 && t->nrow > 0; c++)
		for (i = 0; i < sizeof heads / sizeof heads[0]; i++)
			if (strcmp(t->cell[c], heads[i]) == 0)
				t->status_cols |= 1ull << c;
}

/*
 * Print the rows as kubectl's tabwriter does: left-aligned, three spaces
 * apart, no column narrower than six. With keep, the widths are
 * remembered and only grow, so that rows printed later (get -w) line up.
 * Status cells are coloured on a terminal (cli_color.c).
 */
void
cli_table_flush(struct cli_table *t)
{
	size_t r, w;
	const char *s, *sgr;
	int c, first;

	if (t->w == NULL)
		t->w = xcalloc(t->ncol, sizeof *t->w);
	for (c = 0; c < t->ncol; c++)
		for (r = 0; r < t->nrow; r++) {
			w = text_width(t->cell[r * t->ncol + c]) + 3;
			if (w > t->w[c])
				t->w[c] = w < 6 ? 6 : w;
		}
	first = !t->headed;
	if (first)
		find_status_columns(t);
	for (r = 0; r < t->nrow; r++) {
		for (c = 0; c < t->ncol; c++) {
			s = t->cell[r * t->ncol + c];
			if ((r > 0 || !first) && c < 64 &&
			    (t->status_cols & (1ull << c)) &&
			    cli_color_on(stdout) &&
			    (sgr = cli_color_status(s)) != NULL)
				printf("%s%s" CLI_COLOR_RESET, sgr, s);
			else
				fputs(s, stdout);
			if (c < t->ncol - 1)
				printf("%*s", (int)(t->w[c] - text_width(s)), "");
		}
		fputc('\n', stdout);
	}
	for (r = 0; r < t->nrow * t->ncol; r++)
		free(t->cell[r]);
	free(t->cell);
	t->cell = NULL;
	t->nrow = 0;
	if (!t->keep) {
		free(t->w);
		t->w = NULL;
		t->headed = 0;
		t->status_cols = 0;
	}
	fflush(stdout);
}

static char *
upper(const char *s)
{
	char *u = xstrdup(s), *p;

	for (p = u; *p != '\0'; p++)
		*p = toupper((unsigned char)*p);
	return u;
}

static int
shown(const cJSON *col, int wide)
{
	const cJSON *pr = json_at(col, "priority");

	return wide || pr == NULL || pr->valuedouble == 0;
}

static int
str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Labels as kubectl shows them: k=v,... sorted by key, or <none>. */
char *
cli_table_labels(const cJSON *labels, const char *sep)
{
	struct cli_buf b = { 0 };
	const cJSON *el;
	char **kv;
	size_t n = 0, i;

	kv = xmalloc((cJSON_GetArraySize(labels) + 1) *
	    sizeof *kv);
	cJSON_ArrayForEach(el, labels) {
		b.len = 0;
		cli_buf_printf(&b, "%s=%s", el->string, cJSON_IsString(el) ?
		    el->valuestring : "");
		kv[n++] = xstrdup(b.p);
	}
	qsort(kv, n, sizeof *kv, str_cmp);
	b.len = 0;
	cli_buf_add(&b, "", 0);
	for (i = 0; i < n; i++) {
		cli_buf_printf(&b, "%s%s", i > 0 ? sep : "", kv[i]);
		free(kv[i]);
	}
	free(kv);
	if (n == 0)
		cli_buf_printf(&b, "<none>");
	return b.p;
}

/* Add a meta.k8s.io Table's rows (and its header) to t, which sets ncol. */
void
cli_table_add_kube(struct cli_table *t, const cJSON *tab,
    const struct cli_table_opts *to, int header)
{
	const cJSON *cols = json_at(tab, "columnDefinitions"), *col, *row;
	int ncol = 0, i, c;
	struct cli_buf name = { 0 };
	char **cells;
	const char *ns;

	cJSON_ArrayForEach(col, cols)
		ncol += shown(col, to->wide);
	t->ncol = ncol + (to->with_ns ? 1 : 0) + (to->show_labels ? 1 : 0);
	cells = xmalloc(t->ncol * sizeof *cells);
	if (header) {
		c = 0;
		if (to->with_ns)
			cells[c++] = xstrdup("NAMESPACE");
		cJSON_ArrayForEach(col, cols)
			if (shown(col, to->wide))
				cells[c++] = upper(json_str(col, "name") ?
				    json_str(col, "name") : "");
		if (to->show_labels)
			cells[c++] = xstrdup("LABELS");
		cli_table_add(t, cells);
	}
	cJSON_ArrayForEach(row, json_at(tab, "rows")) {
		c = 0;
		if (to->with_ns) {
			ns = json_str(row, "object.metadata.namespace");
			cells[c++] = xstrdup(ns != NULL ? ns : "");
		}
		i = 0;
		cJSON_ArrayForEach(col, cols) {
			if (shown(col, to->wide)) {
				cells[c] = cli_print_cell(cJSON_GetArrayItem(
				    json_at(row, "cells"), i));
				if (i == 0 && to->prefix != NULL) {
					name.len = 0;
					cli_buf_printf(&name, "%s/%s",
					    to->prefix, cells[c]);
					free(cells[c]);
					cells[c] = xstrdup(name.p);
				}
				c++;
			}
			i++;
		}
		if (to->show_labels)
			cells[c++] = cli_table_labels(json_at(row,
			    "object.metadata.labels"), ",");
		cli_table_add(t, cells);
	}
	free(cells);
	cli_buf_free(&name);
}

/* Print a meta.k8s.io Table. */
void
cli_table_print(const cJSON *tab, const struct cli_table_opts *to)
{
	struct cli_table t = { 0 };

	cli_table_add_kube(&t, tab, to, 1);
	cli_table_flush(&t);
}

/* -o custom-columns=HEADER:PATH,...: the columns of each object. */
int
cli_table_custom(const cJSON *doc, const char *spec)
{
	struct cli_table t = { 0 };
	char *copy = xstrdup(spec), *save, *tok, *colon, **paths;
	const cJSON *items = json_at(doc, "items"), *el;
	char **cells;
	int c, n = 0;

	paths = xmalloc((strlen(spec) + 1) * sizeof *paths);
	cells = xmalloc((strlen(spec) + 1) * sizeof *cells);
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		if ((colon = strchr(tok, ':')) == NULL || colon[1] == '\0') {
			cli_color_errorf("custom-columns format: "
			    "expected HEADER:PATH, got %s\n", tok);
			free(copy), free(paths), free(cells);
			for (c = 0; c < n; c++)
				free(t.cell[c]);
			free(t.cell);
			return -1;
		}
		*colon = '\0';
		cells[n] = xstrdup(tok);
		paths[n++] = colon + 1;
	}
	t.ncol = n;
	cli_table_add(&t, cells);
	for (el = items != NULL ? items->child : doc; el != NULL;
	    el = items != NULL ? el->next : NULL) {
		for (c = 0; c < n; c++) {
			struct cli_buf b = { 0 };

			cli_buf_add(&b, "", 0);
			jsonpath_each(el, paths[c], add_match, &b);
			cells[c] = b.len > 0 ? b.p : (free(b.p),
			    xstrdup("<none>"));
		}
		cli_table_add(&t, cells);
	}
	cli_table_flush(&t);
	free(copy), free(paths), free(cells);
	return 0;
}

/* A Table of names alone, from a server that does not make Tables. */
cJSON *
cli_table_of_names(cJSON *doc)
{
	cJSON *t = cJSON_CreateObject(), *col, *rows, *row, *obj;
	const cJSON *items = json_at(doc, "items"), *el;

	cJSON_AddStringToObject(t, "kind", "Table");
	col = cJSON_CreateObject();
	cJSON_AddStringToObject(col, "name", "Name");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(t, "columnDefinitions"),
	    col);
	rows = cJSON_AddArrayToObject(t, "rows");
	for (el = items != NULL ? items->child : doc; el != NULL;
	    el = items != NULL ? el->next : NULL) {
		row = cJSON_CreateObject();
		cJSON_AddItemToArray(cJSON_AddArrayToObject(row, "cells"),
		    cJSON_CreateString(json_str(el, "metadata.name") ?
		    json_str(el, "metadata.name") : ""));
		obj = cJSON_AddObjectToObject(row, "object");
		cJSON_AddItemToObject(obj, "metadata",
		    cJSON_Duplicate(json_at(el, "metadata"), 1));
		cJSON_AddItemToArray(rows, row);
	}
	cJSON_Delete(doc);
	return t;
}
