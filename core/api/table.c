/*
 * Table rendering for `kubectl get`. A built-in kind's descriptor
 * (registry/kinds/) names its columns and the row function that computes
 * its cells the way the API server's printers do (Pod READY and STATUS,
 * Deployment READY, Job COMPLETIONS, ...; registry/kinds/rows*.c), or,
 * when its cells are fields as they are, each column's JSONPath; custom
 * resources use their CRD's additionalPrinterColumns; anything else gets
 * Name and Age. Columns with priority 1 appear only with `-o wide`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/table.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/util.h"
#include "registry/kinds/cell.h"
#include "registry/kinds/kinds.h"

static void
add_coldef(cJSON *defs, const char *name, const char *type,
    const char *format, const char *desc, int priority)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "format", format ? format : "");
	cJSON_AddStringToObject(c, "description", desc ? desc : "");
	cJSON_AddNumberToObject(c, "priority", priority);
	cJSON_AddItemToArray(defs, c);
}

cJSON *
table_new(const resource *r, const char *rv)
{
	cJSON *t = cJSON_CreateObject(), *defs;
	const struct kind_col *c = r->desc != NULL ? r->desc->cols : NULL;
	int i;

	cJSON_AddStringToObject(t, "kind", "Table");
	cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "metadata"),
	    "resourceVersion", rv ? rv : "");
	defs = cJSON_AddArrayToObject(t, "columnDefinitions");
	if (c != NULL) {
		for (; c->name != NULL; c++)
			add_coldef(defs, c->name, c->type, strcmp(c->name,
			    "Name") == 0 ? "name" : NULL, NULL, c->priority);
	} else {
		add_coldef(defs, "Name", "string", "name", "Name must be "
		    "unique within a namespace.", 0);
		for (i = 0; i < r->ncols; i++)
			add_coldef(defs, r->cols[i].name, r->cols[i].type,
			    r->cols[i].format, r->cols[i].description,
			    r->cols[i].priority);
		if (r->ncols == 0)
			add_coldef(defs, "Age", "date", NULL, NULL, 0);
	}
	cJSON_AddArrayToObject(t, "rows");
	return t;
}

enum table_include
table_include_parse(const char *s)
{
	if (s == NULL || *s == '\0' || strcmp(s, "Metadata") == 0)
		return TABLE_METADATA;
	if (strcmp(s, "None") == 0)
		return TABLE_NONE;
	return TABLE_OBJECT;
}

/* The cell of column type at JSONPath path of o. */
static void
cell_jsonpath(cJSON *cells, const cJSON *o, const char *path,
    const char *type)
{
	const cJSON *v = jsonpath_first(o, path);
	char age[16];

	if (v == NULL) {
		cJSON_AddItemToArray(cells, cJSON_CreateNull());
		return;
	}
	if (strcmp(type, "date") == 0 && cJSON_IsString(v)) {
		time_t t = util_time_parse(v->valuestring);

		if (t >= 0) {
			util_age(t, age);
			cell_str(cells, age);
			return;
		}
	}
	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		char *s = json_print(v);

		cell_str(cells, s);
		free(s);
		return;
	}
	cJSON_AddItemToArray(cells, cJSON_Duplicate(v, 1));
}

/*
 * The cells after Name of a built-in kind without a row function: each
 * column's JSONPath (path), Age its object's. A string field left out is
 * "", as kube's printers show an unset one.
 */
static void
cells_from_paths(cJSON *cells, const cJSON *o, const struct kind_col *c)
{
	char age[16];

	for (; c->name != NULL; c++) {
		if (strcmp(c->name, "Name") == 0)
			continue;
		if (strcmp(c->name, "Age") == 0) {
			cell_age_of(o, "metadata.creationTimestamp", age);
			cell_str(cells, age);
		} else if (c->path != NULL && strcmp(c->type, "string") == 0 &&
		    jsonpath_first(o, c->path) == NULL)
			cell_str(cells, "");
		else if (c->path != NULL)
			cell_jsonpath(cells, o, c->path, c->type);
		else
			cJSON_AddItemToArray(cells, cJSON_CreateNull());
	}
}

/* The row's object: full, or PartialObjectMetadata. */
static cJSON *
row_object(const resource *r, const cJSON *obj, enum table_include inc)
{
	cJSON *m;

	if (inc == TABLE_OBJECT)
		return cJSON_Duplicate(obj, 1);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "kind", "PartialObjectMetadata");
	cJSON_AddStringToObject(m, "apiVersion", "meta.k8s.io/v1");
	cJSON_AddItemToObject(m, "metadata", cJSON_Duplicate(json_at(obj,
	    "metadata"), 1));
	json_del(json_at(m, "metadata"), "managedFields");
	return m;
}

void
table_add_row(cJSON *t, const resource *r, const cJSON *o,
    enum table_include inc)
{
	const struct kind_desc *d = r->desc;
	cJSON *row = cJSON_CreateObject(), *cells;
	char age[16];
	int i;

	cells = cJSON_AddArrayToObject(row, "cells");
	/* Name first, unless the kind's columns put it elsewhere (an
	   Event's LAST SEEN comes first). */
	if (d == NULL || d->cols == NULL || strcmp(d->cols[0].name,
	    "Name") == 0)
		cell_str(cells, json_str(o, "metadata.name"));
	if (d != NULL && d->row != NULL)
		d->row(cells, o);
	else if (d != NULL && d->cols != NULL)
		cells_from_paths(cells, o, d->cols);
	else {
		for (i = 0; i < r->ncols; i++)
			cell_jsonpath(cells, o, r->cols[i].jsonpath,
			    r->cols[i].type);
		if (r->ncols == 0) {
			cell_age_of(o, "metadata.creationTimestamp", age);
			cell_str(cells, age);
		}
	}
	if (inc != TABLE_NONE)
		cJSON_AddItemToObject(row, "object", row_object(r, o, inc));
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t, "rows"), row);
}
