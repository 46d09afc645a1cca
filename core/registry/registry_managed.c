/*
 * managedFields: which field manager set which fields of an object, and
 * when (metadata.managedFields, as kube-apiserver keeps it). Each write
 * with a fieldManager records one entry per (manager, operation,
 * subresource): an update lists no fields, a server-side apply the fields
 * its configuration sets (a minimal fieldsV1: the keys, not the list
 * items). An entry that did not change keeps its time, so that a no-op
 * write stays one; a write that changes the object stamps it.
 */
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/registry_int.h"

/* A minimal fieldsV1 of the fields an applied configuration sets. */
static cJSON *
fields_of(const cJSON *v)
{
	cJSON *f = cJSON_CreateObject();
	const cJSON *c;
	char key[512];

	if (!cJSON_IsObject(v))
		return f;
	cJSON_ArrayForEach(c, v) {
		if (c->string[0] == '$')
			continue;
		snprintf(key, sizeof key, "f:%s", c->string);
		cJSON_AddItemToObject(f, key, cJSON_IsObject(c) ?
		    fields_of(c) : cJSON_CreateObject());
	}
	return f;
}

int
registry_managed_set(cJSON *obj, const char *manager,
    const char *operation, const char *subresource, const resource *r,
    const cJSON *applied)
{
	cJSON *md = json_obj(obj, "metadata"), *mf, *e, *it, *found;
	char now[32];
	int i = 0;

	mf = cJSON_GetObjectItemCaseSensitive(md, "managedFields");
	if (!cJSON_IsArray(mf)) {
		mf = cJSON_CreateArray();
		json_set(md, "managedFields", mf);
	}
	found = NULL;
	cJSON_ArrayForEach(it, mf) {
		const char *m = json_str(it, "manager");
		const char *op = json_str(it, "operation");
		const char *sub = json_str(it, "subresource");

		if (m && op && strcmp(m, manager) == 0 &&
		    strcmp(op, operation) == 0 && (sub == NULL ?
		    subresource == NULL : subresource != NULL &&
		    strcmp(sub, subresource) == 0)) {
			found = it;
			break;
		}
		i++;
	}
	util_now(now);
	e = cJSON_CreateObject();
	cJSON_AddStringToObject(e, "manager", manager);
	cJSON_AddStringToObject(e, "operation", operation);
	cJSON_AddStringToObject(e, "apiVersion", r->gv);
	cJSON_AddStringToObject(e, "time", now);
	cJSON_AddStringToObject(e, "fieldsType", "FieldsV1");
	if (applied != NULL) {
		cJSON *f = cJSON_CreateObject(), *sub;
		const cJSON *c;

		cJSON_ArrayForEach(c, applied) {
			char key[512];

			if (strcmp(c->string, "apiVersion") == 0 ||
			    strcmp(c->string, "kind") == 0)
				continue;
			snprintf(key, sizeof key, "f:%s", c->string);
			if (strcmp(c->string, "metadata") == 0) {
				sub = cJSON_CreateObject();
				if (json_at(c, "labels"))
					cJSON_AddItemToObject(sub, "f:labels",
					    fields_of(json_at(c, "labels")));
				if (json_at(c, "annotations"))
					cJSON_AddItemToObject(sub,
					    "f:annotations", fields_of(
					    json_at(c, "annotations")));
				cJSON_AddItemToObject(f, key, sub);
			} else
				cJSON_AddItemToObject(f, key, cJSON_IsObject(c)
				    ? fields_of(c) : cJSON_CreateObject());
		}
		cJSON_AddItemToObject(e, "fieldsV1", f);
	} else
		cJSON_AddObjectToObject(e, "fieldsV1");
	if (subresource != NULL)
		cJSON_AddStringToObject(e, "subresource", subresource);
	if (found == NULL) {
		cJSON_AddItemToArray(mf, e);
		return 1;
	}
	/* Same fields as before: keep the entry's time, so a no-op write
	 * stays a no-op (registry_managed_touch stamps real changes). */
	if (json_equal(json_at(found, "fieldsV1"), json_at(e, "fieldsV1")) &&
	    json_str(found, "time") != NULL)
		json_set_str(e, "time", json_str(found, "time"));
	if (json_equal(found, e)) {
		cJSON_Delete(e);
		return 0;
	}
	cJSON_ReplaceItemInArray(mf, i, e);
	return 1;
}

void
registry_managed_touch(cJSON *obj, const char *manager)
{
	cJSON *it;
	char now[32];

	util_now(now);
	cJSON_ArrayForEach(it, json_at(obj, "metadata.managedFields"))
		if (json_str(it, "manager") && strcmp(json_str(it, "manager"),
		    manager) == 0)
			json_set_str(it, "time", now);
}
