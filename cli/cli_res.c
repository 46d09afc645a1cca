/*
 * Resources of the API server for volray(1), from discovery (/api/v1,
 * /apis, /apis/G/V), read once per process and kept: a word on the
 * command line matches a resource's plural, singular, short name or kind,
 * and "plural.group" or "plural.version.group" picks the group, as in
 * kubectl; a document's apiVersion and kind match exactly. Each resource
 * knows its URL paths and the name kubectl gives its type in messages.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_res.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

static struct cli_res	*res_v;
static size_t		 res_n;
static cJSON		*res_docs;	/* discovery documents, kept for res_v */

/* Let go of what discovery kept. */
void
cli_res_free(void)
{
	cJSON_Delete(res_docs);
	free(res_v);
	res_docs = NULL;
	res_v = NULL;
	res_n = 0;
}

/* Add the resources of one group version to the discovered set. */
static void
discover_gv(const char *group, const char *version, int preferred)
{
	struct cli_buf path = { 0 };
	const cJSON *el;
	struct cli_res *r;
	const char *name;
	cJSON *doc;

	if (*group == '\0')
		cli_buf_printf(&path, "/api/%s", version);
	else
		cli_buf_printf(&path, "/apis/%s/%s", group, version);
	doc = cli_http_get_json(path.p, NULL);
	cli_buf_free(&path);
	if (doc == NULL)
		return;
	cJSON_AddItemToArray(res_docs, doc);
	cJSON_ArrayForEach(el, json_at(doc, "resources")) {
		if ((name = json_str(el, "name")) == NULL || strchr(name, '/'))
			continue;
		res_v = xrealloc(res_v,
		    (res_n + 1) * sizeof *res_v);
		r = &res_v[res_n++];
		r->group = group;
		r->version = version;
		r->name = name;
		r->singular = json_str(el, "singularName");
		r->kind = json_str(el, "kind");
		r->shorts = json_at(el, "shortNames");
		r->verbs = json_at(el, "verbs");
		r->categories = json_at(el, "categories");
		r->namespaced = cJSON_IsTrue(json_at(el, "namespaced"));
		r->preferred = preferred;
		if (r->singular == NULL || *r->singular == '\0')
			r->singular = r->kind;
		if (r->kind == NULL)
			res_n--;
	}
}

/* Learn every resource the server serves, preferred versions first. */
static int
discover(void)
{
	const cJSON *g, *v, *pref;
	const char *gname, *pv, *ver;
	cJSON *groups;

	if (res_docs != NULL)
		return res_n > 0 ? 0 : -1;
	res_docs = cJSON_CreateArray();
	cli_http_on_close(cli_res_free);
	discover_gv("", "v1", 1);
	if (res_n == 0)
		return -1;
	if ((groups = cli_http_get_json("/apis", NULL)) == NULL)
		return -1;
	cJSON_AddItemToArray(res_docs, groups);
	cJSON_ArrayForEach(g, json_at(groups, "groups")) {
		if ((gname = json_str(g, "name")) == NULL)
			continue;
		pref = json_at(g, "preferredVersion");
		pv = json_str(pref, "version");
		if (pv != NULL)
			discover_gv(gname, pv, 1);
		cJSON_ArrayForEach(v, json_at(g, "versions")) {
			ver = json_str(v, "version");
			if (ver != NULL && (pv == NULL || strcmp(ver, pv) != 0))
				discover_gv(gname, ver, pv == NULL);
		}
	}
	return 0;
}

/* Discover (once) and hand out the whole set. */
int
cli_res_discover(const struct cli_res **res, size_t *n)
{
	if (discover() != 0)
		return -1;
	*res = res_v;
	*n = res_n;
	return 0;
}

static int
has_string(const cJSON *list, const char *s)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list)
		if (cJSON_IsString(el) && strcasecmp(el->valuestring, s) == 0)
			return 1;
	return 0;
}

static int
group_matches(const struct cli_res *r, const char *g)
{
	size_t vl = strlen(r->version);

	if (g == NULL)
		return 1;
	if (strcasecmp(r->group, g) == 0)
		return 1;
	/* plural.version.group */
	return strncasecmp(g, r->version, vl) == 0 && g[vl] == '.' &&
	    strcasecmp(g + vl + 1, r->group) == 0;
}

/* Find the resource a command-line word names, as kubectl does. */
const struct cli_res *
cli_res_resolve(const char *word)
{
	char *w = xstrdup(word), *g;
	const struct cli_res *r, *found = NULL;
	size_t i;

	if (discover() != 0) {
		free(w);
		return NULL;
	}
	if ((g = strchr(w, '.')) != NULL)
		*g++ = '\0';
	for (i = 0; i < res_n && found == NULL; i++) {
		r = &res_v[i];
		if (!group_matches(r, g))
			continue;
		if (strcasecmp(r->name, w) == 0 ||
		    strcasecmp(r->singular, w) == 0 ||
		    strcasecmp(r->kind, w) == 0 || has_string(r->shorts, w))
			found = r;
	}
	if (found == NULL)
		cli_color_errorf("the server doesn't have a resource type "
		    "\"%s\"\n", word);
	free(w);
	return found;
}

/* Find the resource of a document's apiVersion and kind. */
const struct cli_res *
cli_res_kind(const char *apiversion, const char *kind)
{
	const char *slash = strchr(apiversion, '/'), *g = "", *v = apiversion;
	size_t gl = 0, i;

	if (discover() != 0)
		return NULL;
	if (slash != NULL) {
		g = apiversion;
		gl = (size_t)(slash - apiversion);
		v = slash + 1;
	}
	for (i = 0; i < res_n; i++) {
		if (strlen(res_v[i].group) == gl &&
		    strncmp(res_v[i].group, g, gl) == 0 &&
		    strcmp(res_v[i].version, v) == 0 &&
		    strcmp(res_v[i].kind, kind) == 0)
			return &res_v[i];
	}
	cli_color_errorf("no matches for kind \"%s\" in version \"%s\"\n",
	    kind, apiversion);
	return NULL;
}

/* Append "/segment", percent-encoding all but unreserved characters. */
static void
path_add(struct cli_buf *b, const char *segment)
{
	const unsigned char *p;

	cli_buf_add(b, "/", 1);
	for (p = (const unsigned char *)segment; *p != '\0'; p++) {
		if (isalnum(*p) || strchr("-._~", *p) != NULL)
			cli_buf_add(b, (const char *)p, 1);
		else
			cli_buf_printf(b, "%%%02X", *p);
	}
}

/* The path of a collection, or of one object (and subresource). */
void
cli_res_path(struct cli_buf *b, const struct cli_res *r,
    const char *ns, const char *name, const char *sub)
{
	if (*r->group == '\0')
		cli_buf_printf(b, "/api/%s", r->version);
	else
		cli_buf_printf(b, "/apis/%s/%s", r->group, r->version);
	if (r->namespaced && ns != NULL) {
		cli_buf_printf(b, "/namespaces");
		path_add(b, ns);
	}
	cli_buf_printf(b, "/%s", r->name);
	if (name != NULL)
		path_add(b, name);
	if (sub != NULL)
		cli_buf_printf(b, "/%s", sub);
}

/* kubectl's name for a type in messages: "pod", "rayjob.ray.io". */
char *
cli_res_type(const struct cli_res *r)
{
	struct cli_buf b = { 0 };
	size_t i;

	cli_buf_printf(&b, "%s%s%s", r->kind, *r->group ? "." : "", r->group);
	for (i = 0; i < b.len; i++)
		b.p[i] = tolower((unsigned char)b.p[i]);
	return b.p;
}
