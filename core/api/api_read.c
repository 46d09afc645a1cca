/*
 * Read verbs: get, list (with label and field selectors, limit/continue
 * paging and Table output) and watch (pods/log is podlog.c). Plain JSON reads are
 * assembled from the stored bytes without parsing; Tables and field
 * selectors parse only the objects they look at.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_int.h"
#include "api/apimetrics.h"
#include "api/listopts.h"
#include "api/reply.h"
#include "api/table.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "registry/status.h"

static const store_obj *
lookup(api *a, struct route *rt)
{
	return store_get(a->st, rt->r->store_key, rt->r->namespaced ?
	    (rt->ns ? rt->ns : "") : "", rt->name);
}

/* Reviews (SelfSubjectAccessReview, ...) are POST-only: 405 for reads. */
static int
refuse_review(http_req *req, struct route *rt)
{
	if (!rt->r->create_only)
		return 0;
	reply_status(req, rt, status_error(405, "MethodNotAllowed",
	    "the server does not allow this method on the requested "
	    "resource"));
	return 1;
}

void
api_read_get(api *a, http_req *req, struct route *rt)
{
	const store_obj *o;

	rt->verb = "get";
	if (refuse_review(req, rt) || reply_accept_check(req, rt) != 0)
		return;
	o = lookup(a, rt);
	if (o == NULL) {
		reply_status(req, rt, status_not_found(rt->r, rt->name));
		return;
	}
	if (reply_wants_table(req)) {
		char rv[32];
		cJSON *t, *tree = store_obj_tree(o);
		char *inc = http_query_get(req->query, "includeObject");

		snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rev);
		t = table_new(rt->r, rv);
		table_add_row(t, rt->r, tree, table_include_parse(inc));
		free(inc);
		cJSON_Delete(tree);
		reply_json(req, rt, 200, t);
		return;
	}
	apimetrics_request(rt->verb, rt->r->store_key, 200, util_usec() - rt->t0);
	http_respond_rbuf(req, 200, "application/json", o->json);
}

/*
 * kube-apiserver's namespaced kinds that register no field of their own
 * for selectors: only metadata.name and metadata.namespace. The first
 * other field of fs, malloc'd, or NULL (any kind not listed takes any).
 */
static char *
unknown_field(const resource *r, const char *fs)
{
	static const char *const meta_only[] = { "configmaps",
	    "serviceaccounts", "deployments.apps", "statefulsets.apps",
	    "daemonsets.apps", "roles.rbac.authorization.k8s.io",
	    "rolebindings.rbac.authorization.k8s.io",
	    "leases.coordination.k8s.io", NULL };
	const char *p, *e;
	size_t n;
	int i;

	for (i = 0; meta_only[i] != NULL; i++)
		if (r->builtin && strcmp(r->store_key, meta_only[i]) == 0)
			break;
	if (meta_only[i] == NULL)
		return NULL;
	for (p = fs; *p != '\0'; p = *e ? e + 1 : e) {
		e = p + strcspn(p, ",");
		n = strcspn(p, "!=,");
		while (n > 0 && p[n - 1] == ' ')
			n--;
		while (n > 0 && *p == ' ') {
			p++;
			n--;
		}
		if (n > 0 && !(n == 13 && strncmp(p, "metadata.name", 13) == 0) &&
		    !(n == 18 && strncmp(p, "metadata.namespace", 18) == 0))
			return util_printf("%.*s", (int)n, p);
	}
	return NULL;
}

/* Parse both selectors of a request; on error reply and return -1. */
static int
selectors(http_req *req, struct route *rt, selector **labels,
    selector **fields)
{
	char *ls = http_query_get(req->query, "labelSelector");
	char *fs = http_query_get(req->query, "fieldSelector");
	char *cause = NULL;

	*labels = *fields = NULL;
	if (ls != NULL && *ls &&
	    (*labels = selector_parse_labels(ls, &cause)) == NULL) {
		reply_status(req, rt, status_bad_request(
		    "unable to parse requirement: %s", cause ? cause : ls));
		goto fail;
	}
	if (fs != NULL && *fs &&
	    (*fields = selector_parse_fields(fs, &cause)) == NULL) {
		reply_status(req, rt, status_bad_request(
		    "invalid field selector: %s", cause ? cause : fs));
		goto fail;
	}
	if (fs != NULL && (cause = unknown_field(rt->r, fs)) != NULL) {
		reply_status(req, rt, status_bad_request("\"%s\" is not a "
		    "known field selector: only \"metadata.name\", "
		    "\"metadata.namespace\"", cause));
		selector_free(*fields);
		*fields = NULL;
		goto fail;
	}
	free(ls);
	free(fs);
	return 0;
fail:
	free(cause);
	free(ls);
	free(fs);
	selector_free(*labels);
	*labels = NULL;
	return -1;
}

/* Hex-encode "ns/name" into a continue token and back. */
static void
token_encode(const store_obj *o, char *out, size_t n)
{
	char key[600];
	size_t i, len;

	len = (size_t)snprintf(key, sizeof key, "%s/%s", o->ns, o->name);
	for (i = 0; i < len && 2 * i + 2 < n; i++)
		snprintf(out + 2 * i, 3, "%02x", (unsigned char)key[i]);
}

static int
token_decode(const char *tok, char *ns, char *name, size_t n)
{
	char key[600], *slash;
	size_t i, len = strlen(tok);
	unsigned v;

	if (len % 2 != 0 || len / 2 >= sizeof key)
		return -1;
	for (i = 0; i < len / 2; i++) {
		if (sscanf(tok + 2 * i, "%2x", &v) != 1)
			return -1;
		key[i] = (char)v;
	}
	key[len / 2] = '\0';
	if ((slash = strchr(key, '/')) == NULL)
		return -1;
	*slash = '\0';
	snprintf(ns, n, "%s", key);
	snprintf(name, n, "%s", slash + 1);
	return 0;
}

/*
 * The index of the first object in objs (sorted by namespace and name)
 * after the key of a continue token.
 */
static size_t
after_token(store_obj *const *objs, size_t n, const char *cns,
    const char *cname)
{
	size_t lo = 0, hi = n, mid;
	int c;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = strcmp(objs[mid]->ns, cns);
		if (c == 0)
			c = strcmp(objs[mid]->name, cname);
		if (c <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One page of a list: objs[i..n) through the selectors, up to limit. */
struct page {
	store_obj *const *objs;
	size_t n, i, limit;
	selector *labels, *fields;
	const char *rv;
};

/* Answer a page as a Table, parsing each object the selectors pass. */
static void
list_table(http_req *req, struct route *rt, struct page *pg)
{
	store_obj *const *objs = pg->objs;
	size_t n = pg->n, i = pg->i, count = 0, limit = pg->limit;
	selector *labels = pg->labels, *fields = pg->fields;
	char token[1300] = "";
	char *inc = http_query_get(req->query, "includeObject");
	enum table_include ti = table_include_parse(inc);
	cJSON *t;

	free(inc);
	t = table_new(rt->r, pg->rv);
	for (; i < n; i++) {
		cJSON *tree = NULL;

		if (labels && !selector_match_labels(labels,
		    objs[i]->labels))
			continue;
		tree = store_obj_tree(objs[i]);
		if (fields && !selector_match_fields(fields, tree)) {
			cJSON_Delete(tree);
			continue;
		}
		if (limit > 0 && count == limit) {
			cJSON_Delete(tree);
			break;
		}
		table_add_row(t, rt->r, tree, ti);
		cJSON_Delete(tree);
		count++;
		if (limit > 0 && count == limit)
			token_encode(objs[i], token, sizeof token);
	}
	/* No continue token when nothing follows. */
	if (i >= n)
		token[0] = '\0';
	if (*token)
		json_set_str(json_obj(t, "metadata"), "continue", token);
	if (*token && labels == NULL && fields == NULL)
		cJSON_AddNumberToObject(json_obj(t, "metadata"),
		    "remainingItemCount", (double)(n - i));
	reply_json(req, rt, 200, t);
}

/*
 * Answer a page as JSON, assembled from the stored bytes; only a field
 * selector parses the objects it looks at.
 */
static void
list_json(http_req *req, struct route *rt, struct page *pg)
{
	store_obj *const *objs = pg->objs;
	size_t n = pg->n, i = pg->i, count = 0, limit = pg->limit;
	selector *labels = pg->labels, *fields = pg->fields;
	char token[1300] = "";
	char *buf = NULL, *ib = NULL;
	size_t blen = 0, il = 0;
	FILE *f, *items;
	const store_obj *last = NULL;

	f = open_memstream(&buf, &blen);
	fprintf(f, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
	    "{\"resourceVersion\":\"%s\"", rt->r->list_kind, rt->r->gv,
	    pg->rv);
	/* Items go into a second stream; the token is only known after. */
	items = open_memstream(&ib, &il);
	for (; i < n; i++) {
		if (labels && !selector_match_labels(labels, objs[i]->labels))
			continue;
		if (fields) {
			cJSON *tree = store_obj_tree(objs[i]);
			int ok = selector_match_fields(fields, tree);

			cJSON_Delete(tree);
			if (!ok)
				continue;
		}
		if (limit > 0 && count == limit)
			break;
		if (count++ > 0)
			fputc(',', items);
		fwrite(objs[i]->json->data, 1, objs[i]->json->len, items);
		last = objs[i];
	}
	fclose(items);
	if (i < n && last != NULL) {
		token_encode(last, token, sizeof token);
		fprintf(f, ",\"continue\":\"%s\"", token);
		if (labels == NULL && fields == NULL)
			fprintf(f, ",\"remainingItemCount\":%zu", n - i);
	}
	fprintf(f, "},\"items\":[");
	fwrite(ib, 1, il, f);
	fprintf(f, "]}");
	free(ib);
	fclose(f);
	apimetrics_request(rt->verb, rt->r->store_key, 200,
	    util_usec() - rt->t0);
	http_respond(req, 200, "application/json", buf, blen);
	free(buf);
}

void
api_read_list(api *a, http_req *req, struct route *rt)
{
	struct page pg = { 0 };
	selector *labels, *fields;
	long long lim = 0, timeout = 0;
	int sie;
	char *cont;
	char rv[32], cns[600], cname[600];
	const char *nsf;
	uint64_t start_rev = store_rev(a->st);

	rt->verb = "list";
	if (refuse_review(req, rt) || reply_accept_check(req, rt) != 0)
		return;
	/* timeoutSeconds is checked as kube-apiserver checks it, and unused. */
	if (reply_int_param(req, rt, "limit", &lim) != 0 ||
	    reply_int_param(req, rt, "timeoutSeconds", &timeout) != 0 ||
	    listopts_check(req, rt, &sie) != 0)
		return;
	if (lim > 0)
		pg.limit = (size_t)lim;
	if (selectors(req, rt, &labels, &fields) != 0)
		return;
	cont = http_query_get(req->query, "continue");
	nsf = rt->r->namespaced ? rt->ns : NULL;
	if (nsf == NULL && fields != NULL && rt->r->namespaced)
		nsf = selector_field_equals(fields, "metadata.namespace");
	pg.n = store_list(a->st, rt->r->store_key, nsf, &pg.objs);
	if (cont != NULL && *cont) {
		if (token_decode(cont, cns, cname, sizeof cns) != 0) {
			reply_status(req, rt, status_bad_request(
			    "continue key is not valid"));
			goto done;
		}
		pg.i = after_token(pg.objs, pg.n, cns, cname);
	}
	snprintf(rv, sizeof rv, "%llu", (unsigned long long)start_rev);
	pg.labels = labels;
	pg.fields = fields;
	pg.rv = rv;
	if (reply_wants_table(req))
		list_table(req, rt, &pg);
	else
		list_json(req, rt, &pg);
done:
	free(cont);
	selector_free(labels);
	selector_free(fields);
}

void
api_read_watch(api *a, http_req *req, struct route *rt)
{
	struct watch_opts o;
	char *rv, *inc;
	long long lim = 0, timeout = 0;
	int sie, now;

	rt->verb = "watch";
	memset(&o, 0, sizeof o);
	if (refuse_review(req, rt) || reply_accept_check(req, rt) != 0)
		return;
	if (reply_int_param(req, rt, "timeoutSeconds", &timeout) != 0 ||
	    reply_int_param(req, rt, "limit", &lim) != 0 ||
	    listopts_check(req, rt, &sie) != 0)
		return;
	rv = http_query_get(req->query, "resourceVersion");
	inc = http_query_get(req->query, "includeObject");
	if (selectors(req, rt, &o.labels, &o.fields) != 0)
		goto done;
	if (rt->name != NULL) {
		/* /watch/.../NAME is a watch filtered to one name. */
		char fs[300], *cause = NULL;

		selector_free(o.fields);
		snprintf(fs, sizeof fs, "metadata.name=%s", rt->name);
		o.fields = selector_parse_fields(fs, &cause);
		free(cause);
	}
	o.r = rt->r;
	o.ns = rt->r->namespaced ? rt->ns : NULL;
	/*
	 * Where it starts, as kube-apiserver's watch cache decides: the
	 * current objects first when sendInitialEvents is true (a state at
	 * least as new as rv) or, unset, from rv "" or "0"; sendInitialEvents
	 * false from "" or "0" is from now on; else from rv on.
	 */
	now = rv == NULL || *rv == '\0' || strcmp(rv, "0") == 0;
	o.initial = sie == 1 || (sie < 0 && now);
	o.rv = now ? store_rev(a->st) : strtoull(rv, NULL, 10);
	o.min_rev = now ? 0 : o.rv;
	o.bookmarks = http_query_bool(req->query, "allowWatchBookmarks", 0);
	o.initial_end = sie == 1 && o.bookmarks;
	o.timeout_s = timeout <= 0 ? 0 : timeout < INT_MAX ? (int)timeout :
	    INT_MAX;
	o.table = reply_wants_table(req);
	o.table_include = table_include_parse(inc);
	apimetrics_request(rt->verb, rt->r->store_key, 200, 0);
	watch_open(a->hub, req, &o);
done:
	free(rv);
	free(inc);
}
