/*
 * The resource registry. Built-in kinds come from their descriptors
 * (registry/kinds/); custom resources are registered from their CRD
 * objects (one descriptor per served version, all sharing one storage
 * key). Descriptors live in a flat array: there are tens of them, so a
 * linear scan is as fast as anything else and keeps registration trivial.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"
#include "registry/kinds/kinds.h"
#include "registry/resource.h"

/* The feature gates of the alpha kinds: off unless turned on. */
static const char *const known_gates[] = { "GenericWorkload", NULL };
static int gates_on[sizeof known_gates / sizeof known_gates[0]];

static resource **all;
static int nall;
static size_t capall;
static uint64_t generation;

static char *
dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

static char **
split_list(const char *s, int *n)
{
	char **v = NULL, *copy, *tok, *save;

	*n = 0;
	if (s == NULL || *s == '\0')
		return NULL;
	copy = xstrdup(s);
	for (tok = strtok_r(copy, ",", &save); tok != NULL;
	    tok = strtok_r(NULL, ",", &save)) {
		v = xreallocarray(v, *n + 1, sizeof *v);
		v[(*n)++] = xstrdup(tok);
	}
	free(copy);
	return v;
}

static char **
json_list(const cJSON *a, int *n)
{
	const cJSON *it;
	char **v = NULL;

	*n = 0;
	cJSON_ArrayForEach(it, a) {
		if (!cJSON_IsString(it))
			continue;
		v = xreallocarray(v, *n + 1, sizeof *v);
		v[(*n)++] = xstrdup(it->valuestring);
	}
	return v;
}

static void
fill_names(resource *r)
{
	char buf[512];

	snprintf(buf, sizeof buf, "%s%s%s", r->plural, *r->group ? "." : "",
	    r->group);
	r->store_key = xstrdup(buf);
	snprintf(buf, sizeof buf, "%s%s%s", r->group, *r->group ? "/" : "",
	    r->version);
	r->gv = xstrdup(buf);
}

static void
add(resource *r)
{
	XGROW(all, capall, nall + 1);
	all[nall++] = r;
	generation++;
}

static void
free_resource(resource *r)
{
	int i;

	free(r->group);
	free(r->version);
	free(r->plural);
	free(r->singular);
	free(r->kind);
	free(r->list_kind);
	free(r->store_key);
	free(r->gv);
	for (i = 0; i < r->nshort; i++)
		free(r->short_names[i]);
	free(r->short_names);
	for (i = 0; i < r->ncat; i++)
		free(r->categories[i]);
	free(r->categories);
	for (i = 0; i < r->ncols; i++) {
		free(r->cols[i].name);
		free(r->cols[i].type);
		free(r->cols[i].format);
		free(r->cols[i].description);
		free(r->cols[i].jsonpath);
	}
	free(r->cols);
	schema_free(r->schema);
	cJSON_Delete(r->own_openapi);
	free(r->crd_name);
	cJSON_Delete(r->crd);
	free(r);
}

int
resource_set_gate(const char *gate, int on)
{
	int i;

	for (i = 0; known_gates[i] != NULL; i++)
		if (strcmp(known_gates[i], gate) == 0) {
			gates_on[i] = on;
			return 0;
		}
	return -1;
}

int
resource_gate(const char *gate)
{
	int i;

	for (i = 0; known_gates[i] != NULL; i++)
		if (strcmp(known_gates[i], gate) == 0)
			return gates_on[i];
	return 0;
}

void
resource_add_builtin(const struct kind_desc *d)
{
	resource *r = xcalloc(1, sizeof *r);
	char buf[256];

	r->desc = d;
	r->group = xstrdup(d->group);
	r->version = xstrdup(d->version);
	r->plural = xstrdup(d->plural);
	r->singular = xstrdup(d->singular);
	r->kind = xstrdup(d->kind);
	snprintf(buf, sizeof buf, "%sList", d->kind);
	r->list_kind = xstrdup(buf);
	r->namespaced = d->namespaced;
	r->has_status = d->has_status;
	r->builtin = 1;
	r->storage = !d->old_version && !d->computed;
	r->create_only = d->create_only;
	r->computed = d->computed;
	r->short_names = split_list(d->shorts, &r->nshort);
	r->categories = split_list(d->categories, &r->ncat);
	fill_names(r);
	add(r);
}

void
resource_shutdown(void)
{
	int i;

	for (i = 0; i < nall; i++)
		free_resource(all[i]);
	free(all);
	all = NULL;
	nall = capall = 0;
}

const resource *
resource_find(const char *group, const char *version, const char *plural)
{
	int i;

	for (i = 0; i < nall; i++)
		if (strcmp(all[i]->plural, plural) == 0 &&
		    strcmp(all[i]->group, group) == 0 &&
		    strcmp(all[i]->version, version) == 0)
			return all[i];
	return NULL;
}

const resource *
resource_by_gvk(const char *api_version, const char *kind)
{
	int i;

	if (api_version == NULL || kind == NULL)
		return NULL;
	for (i = 0; i < nall; i++)
		if (strcmp(all[i]->kind, kind) == 0 &&
		    strcmp(all[i]->gv, api_version) == 0)
			return all[i];
	return NULL;
}

const resource *
resource_by_store_key(const char *key)
{
	const resource *found = NULL;
	int i;

	for (i = 0; i < nall; i++) {
		if (strcmp(all[i]->store_key, key) == 0) {
			if (all[i]->storage)
				return all[i];
			if (found == NULL)
				found = all[i];
		}
	}
	return found;
}

int
resource_count(void)
{
	return nall;
}

const resource *
resource_at(int i)
{
	return i >= 0 && i < nall ? all[i] : NULL;
}

uint64_t
resource_generation(void)
{
	return generation;
}

int
resource_load_schemas(const char *dir, char **cause)
{
	cJSON *docs, *d, *k;
	char *bad = NULL;
	int i;

	*cause = NULL;
	if ((docs = yamljson_load_dir(dir, cause)) == NULL)
		return -1;
	cJSON_ArrayForEach(d, docs) {
		const char *av = json_str(d, "apiVersion");

		cJSON_ArrayForEach(k, json_at(d, "kinds")) {
			resource *r = NULL;

			for (i = 0; i < nall && av != NULL; i++)
				if (all[i]->builtin && strcmp(all[i]->gv, av) ==
				    0 && strcmp(all[i]->kind, k->string) == 0)
					r = all[i];
			if (r == NULL || !cJSON_IsObject(k)) {
				if (bad == NULL)
					bad = util_printf("%s: no built-in "
					    "kind %s %s", dir, av ? av : "?",
					    k->string);
				continue;
			}
			cJSON_Delete(r->own_openapi);
			r->own_openapi = cJSON_Duplicate(k, 1);
			r->openapi = r->own_openapi;
		}
	}
	cJSON_Delete(docs);
	if (*cause == NULL)
		*cause = bad;
	else
		free(bad);
	return 0;
}

int
resource_has_scale(const resource *r)
{
	return r->desc != NULL && r->desc->has_scale;
}

int
resource_status_in_main(const resource *r)
{
	return !r->builtin && strcmp(r->store_key,
	    "podgroups.scheduling.volcano.sh") == 0;
}

const char *
resource_qualified(const resource *r)
{
	return r->store_key;
}

int
resource_check_crd(const cJSON *crd, char **cause)
{
	const char *group = json_str(crd, "spec.group");
	const char *plural = json_str(crd, "spec.names.plural");
	const char *kind = json_str(crd, "spec.names.kind");
	const char *scope = json_str(crd, "spec.scope");
	const char *name = json_str(crd, "metadata.name");
	const cJSON *versions = json_at(crd, "spec.versions"), *v, *s;
	char want[512];
	int nstorage = 0;
	schema *sc;

	*cause = NULL;
	if (group == NULL || plural == NULL || kind == NULL) {
		*cause = xstrdup("spec.group, spec.names.plural and "
		    "spec.names.kind are required");
		return -1;
	}
	snprintf(want, sizeof want, "%s.%s", plural, group);
	if (name == NULL || strcmp(name, want) != 0) {
		*cause = util_printf("metadata.name: Invalid value: \"%s\": "
		    "must be spec.names.plural+\".\"+spec.group", name ? name :
		    "");
		return -1;
	}
	if (scope == NULL || (strcmp(scope, "Namespaced") != 0 &&
	    strcmp(scope, "Cluster") != 0)) {
		*cause = xstrdup("spec.scope: Unsupported value: supported "
		    "values: \"Cluster\", \"Namespaced\"");
		return -1;
	}
	if (!cJSON_IsArray(versions) || cJSON_GetArraySize(versions) == 0) {
		*cause = xstrdup("spec.versions: Required value");
		return -1;
	}
	cJSON_ArrayForEach(v, versions) {
		if (json_str(v, "name") == NULL) {
			*cause = xstrdup("spec.versions[].name: Required value");
			return -1;
		}
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "storage")))
			nstorage++;
		s = json_at(v, "schema.openAPIV3Schema");
		if (s != NULL) {
			if ((sc = schema_compile(s, cause)) == NULL)
				return -1;
			schema_free(sc);
		}
	}
	if (nstorage != 1) {
		*cause = xstrdup("spec.versions: Invalid value: must have "
		    "exactly one version marked as storage version");
		return -1;
	}
	return 0;
}

static void
add_cols(resource *r, const cJSON *cols)
{
	const cJSON *c;
	int n = 0;

	if (!cJSON_IsArray(cols))
		return;
	r->cols = xcalloc(cJSON_GetArraySize(cols) + 1, sizeof *r->cols);
	cJSON_ArrayForEach(c, cols) {
		const cJSON *prio = cJSON_GetObjectItemCaseSensitive(c,
		    "priority");

		if (json_str(c, "name") == NULL ||
		    json_str(c, "jsonPath") == NULL)
			continue;
		r->cols[n].name = xstrdup(json_str(c, "name"));
		r->cols[n].type = xstrdup(json_str(c, "type") ?
		    json_str(c, "type") : "string");
		r->cols[n].format = dup_or_empty(json_str(c, "format"));
		r->cols[n].description = dup_or_empty(json_str(c,
		    "description"));
		r->cols[n].jsonpath = xstrdup(json_str(c, "jsonPath"));
		r->cols[n].priority = cJSON_IsNumber(prio) ? prio->valueint : 0;
		n++;
	}
	r->ncols = n;
}

int
resource_register_crd(const cJSON *crd, char **cause)
{
	const cJSON *versions, *v;
	const char *name = json_str(crd, "metadata.name");
	char buf[256];

	if (resource_check_crd(crd, cause) != 0)
		return -1;
	resource_unregister_crd(name);
	versions = json_at(crd, "spec.versions");
	cJSON_ArrayForEach(v, versions) {
		resource *r;
		const cJSON *s;

		if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "served")))
			continue;
		r = xcalloc(1, sizeof *r);
		r->crd = cJSON_Duplicate(crd, 1);
		r->group = xstrdup(json_str(crd, "spec.group"));
		r->version = xstrdup(json_str(v, "name"));
		r->plural = xstrdup(json_str(crd, "spec.names.plural"));
		r->singular = xstrdup(json_str(crd, "spec.names.singular") ?
		    json_str(crd, "spec.names.singular") :
		    json_str(crd, "spec.names.kind"));
		if (json_str(crd, "spec.names.singular") == NULL) {
			char *p;
			for (p = r->singular; *p; p++)
				if (*p >= 'A' && *p <= 'Z')
					*p += 'a' - 'A';
		}
		r->kind = xstrdup(json_str(crd, "spec.names.kind"));
		snprintf(buf, sizeof buf, "%sList", r->kind);
		r->list_kind = xstrdup(json_str(crd, "spec.names.listKind") ?
		    json_str(crd, "spec.names.listKind") : buf);
		r->namespaced = strcmp(json_str(crd, "spec.scope"),
		    "Namespaced") == 0;
		r->has_status = json_at(v, "subresources.status") != NULL;
		r->storage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v,
		    "storage"));
		r->short_names = json_list(json_at(crd,
		    "spec.names.shortNames"), &r->nshort);
		r->categories = json_list(json_at(crd,
		    "spec.names.categories"), &r->ncat);
		add_cols(r, cJSON_GetObjectItemCaseSensitive(v,
		    "additionalPrinterColumns"));
		r->crd_name = xstrdup(name);
		fill_names(r);
		/* The schema lives in our own copy of the CRD. */
		s = NULL;
		{
			const cJSON *cv;
			cJSON_ArrayForEach(cv, json_at(r->crd,
			    "spec.versions"))
				if (strcmp(json_str(cv, "name"), r->version)
				    == 0)
					s = json_at(cv,
					    "schema.openAPIV3Schema");
		}
		r->openapi = s;
		if (s != NULL && (r->schema = schema_compile(s, cause)) ==
		    NULL) {
			free_resource(r);
			return -1;
		}
		add(r);
	}
	return 0;
}

void
resource_unregister_crd(const char *crd_name)
{
	int i, j = 0;

	if (crd_name == NULL)
		return;
	for (i = 0; i < nall; i++) {
		if (all[i]->crd_name != NULL &&
		    strcmp(all[i]->crd_name, crd_name) == 0) {
			/* Descriptors may still be referenced by open
			 * watches; they are leaked deliberately rather than
			 * freed under them (CRD changes are rare). */
			generation++;
			continue;
		}
		all[j++] = all[i];
	}
	nall = j;
}

void
resource_crd_stored(const resource *r, const cJSON *crd, const cJSON *old)
{
	char *cause = NULL;

	if (resource_register_crd(crd, &cause) != 0) {
		log_error("%sregistering CRD %s: %s", old != NULL ? "re-" : "",
		    json_str(crd, "metadata.name"), cause);
		free(cause);
	}
}

void
resource_crd_removed(const resource *r, const char *name)
{
	resource_unregister_crd(name);
}
