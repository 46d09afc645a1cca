/*
 * LimitRange admission, as kube-apiserver's LimitRanger plugin: a pod
 * created in a namespace with LimitRanges first gets, in each container
 * that lacks them, the default limits and requests of their Container
 * items (annotated kubernetes.io/limit-ranger, as the plugin notes what it
 * set; a request that is missing where a limit is given is the limit, as
 * the API's defaulting makes it before admission), then must keep within
 * every item: each container (type Container) or the pod's sums (type
 * Pod) at least min, at most max, and limit/request at most
 * maxLimitRequestRatio. A violation is 403 Forbidden with the plugin's
 * words. The LimitRange objects themselves get the API's defaults here
 * too (a Container item's default from max, defaultRequest from default
 * or min).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "registry/limitrange.h"
#include "registry/status.h"

#define MSGMAX 4096

/* The messages of the violations found so far, joined with ", ". */
struct verdict {
	char msg[MSGMAX];
	size_t len;
	int count;
};

static void
violation(struct verdict *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
violation(struct verdict *v, const char *fmt, ...)
{
	va_list ap;

	if (v->count++ > 0 && v->len < sizeof v->msg)
		v->len += snprintf(v->msg + v->len, sizeof v->msg - v->len,
		    ", ");
	va_start(ap, fmt);
	if (v->len < sizeof v->msg)
		v->len += vsnprintf(v->msg + v->len, sizeof v->msg - v->len,
		    fmt, ap);
	va_end(ap);
}

/* Copy the quantities of from that into lacks, naming them in set. */
static void
fill(cJSON *into, const cJSON *from, char *set, size_t n)
{
	const cJSON *q;
	size_t len = strlen(set);

	cJSON_ArrayForEach(q, from) {
		if (cJSON_GetObjectItemCaseSensitive(into, q->string) != NULL)
			continue;
		cJSON_AddItemToObject(into, q->string, cJSON_Duplicate(q, 1));
		len += snprintf(set + len, len < n ? n - len : 0, "%s%s",
		    len ? ", " : "", q->string);
	}
}

/* Apply a Container item's defaults to one container; note what it set. */
static void
default_container(cJSON *c, const cJSON *item, const char *what,
    char *note, size_t n)
{
	cJSON *res = json_obj(c, "resources");
	cJSON *lim = json_obj(res, "limits"), *req = json_obj(res, "requests");
	char lset[256] = "", rset[256] = "";
	size_t len = strlen(note);
	const char *name = json_str(c, "name") ? json_str(c, "name") : "";

	/* The API's defaulting: a missing request is the limit. */
	fill(req, lim, rset, 0);
	rset[0] = '\0';
	fill(req, json_at(item, "defaultRequest"), rset, sizeof rset);
	fill(lim, json_at(item, "default"), lset, sizeof lset);
	if (*rset)
		len += snprintf(note + len, len < n ? n - len : 0,
		    "%s%s request for %s %s", len ? "; " : "", rset, what, name);
	if (*lset)
		len += snprintf(note + len, len < n ? n - len : 0,
		    "%s%s limit for %s %s", len ? "; " : "", lset, what, name);
	if (lim->child == NULL)
		json_del(res, "limits");
	if (req->child == NULL)
		json_del(res, "requests");
}

static int
is_binary(const char *res)
{
	return strcmp(res, "cpu") != 0;
}

/* One observed value against an item's bound; at most one message, the
   first that applies, as the plugin's minConstraint and maxConstraint. */
static void
check_one(const char *kind, const char *res, const cJSON *bound,
    const char *which, const cJSON *req, const cJSON *lim, struct verdict *v)
{
	double b, r = 0, l = 0;
	int has_r = quantity_json(req, &r) == 0;
	int has_l = quantity_json(lim, &l) == 0;
	char bs[32], rs[32], ls[32];

	if (quantity_json(bound, &b) != 0)
		return;
	snprintf(bs, sizeof bs, "%s", cJSON_IsString(bound) ?
	    bound->valuestring : "");
	if (!cJSON_IsString(bound))
		quantity_format(b, is_binary(res), bs);
	if (cJSON_IsString(req))
		snprintf(rs, sizeof rs, "%s", req->valuestring);
	else
		quantity_format(r, is_binary(res), rs);
	if (cJSON_IsString(lim))
		snprintf(ls, sizeof ls, "%s", lim->valuestring);
	else
		quantity_format(l, is_binary(res), ls);
	if (strcmp(which, "min") == 0) {
		if (!has_r)
			violation(v, "minimum %s usage per %s is %s.  No request is "
			    "specified", res, kind, bs);
		else if (r < b)
			violation(v, "minimum %s usage per %s is %s, but request is %s",
			    res, kind, bs, rs);
		else if (has_l && l < b)
			violation(v, "minimum %s usage per %s is %s, but limit is %s",
			    res, kind, bs, ls);
	} else if (strcmp(which, "max") == 0) {
		if (!has_l)
			violation(v, "maximum %s usage per %s is %s.  No limit is "
			    "specified", res, kind, bs);
		else if (l > b)
			violation(v, "maximum %s usage per %s is %s, but limit is %s",
			    res, kind, bs, ls);
		else if (has_r && r > b)
			violation(v, "maximum %s usage per %s is %s, but request is %s",
			    res, kind, bs, rs);
	} else if (has_l && (!has_r || r == 0 || l / r > b)) {
		if (!has_r || r == 0)
			violation(v, "%s max limit to request ratio per %s is %s, but no "
			    "request is specified or request is 0", res, kind, bs);
		else
			violation(v, "%s max limit to request ratio per %s is %s, but "
			    "provided ratio is %f", res, kind, bs, l / r);
	}
}

/* Check requests and limits (ResourceLists) against one item. */
static void
check_item(const char *kind, const cJSON *item, const cJSON *req,
    const cJSON *lim, struct verdict *v)
{
	static const char *const which[] = { "min", "max",
	    "maxLimitRequestRatio", NULL };
	const cJSON *b;
	int i;

	for (i = 0; which[i] != NULL; i++)
		cJSON_ArrayForEach(b, json_at(item, which[i]))
			check_one(kind, b->string, b, which[i],
			    cJSON_GetObjectItemCaseSensitive(req, b->string),
			    cJSON_GetObjectItemCaseSensitive(lim, b->string),
			    v);
}

/* The pod's sums of requests and limits, for a Pod item. */
static void
pod_sums(const cJSON *spec, cJSON *req, cJSON *lim)
{
	const cJSON *c, *q;
	cJSON *into[2] = { req, lim };
	const char *path[2] = { "resources.requests", "resources.limits" };
	int i;

	for (i = 0; i < 2; i++)
		cJSON_ArrayForEach(c, json_at(spec, "containers"))
			cJSON_ArrayForEach(q, json_at(c, path[i])) {
				double v, sum = 0;
				cJSON *have = cJSON_GetObjectItemCaseSensitive(
				    into[i], q->string);

				if (quantity_json(q, &v) != 0)
					continue;
				if (have != NULL)
					sum = have->valuedouble;
				json_set_num(into[i], q->string, sum + v);
			}
}

cJSON *
limitrange_admit_pod(store *st, const char *ns, cJSON *pod)
{
	store_obj *const *objs;
	size_t n = store_list(st, "limitranges", ns, &objs), i;
	cJSON *spec = json_obj(pod, "spec"), *c, *trees[64];
	const cJSON *item;
	char note[1024] = "";
	struct verdict v = { "", 0, 0 };
	size_t nt = 0, j;

	for (i = 0; i < n && nt < 64; i++)
		trees[nt++] = store_obj_tree(objs[i]);
	/* Defaults from every range first, then the checks. */
	for (j = 0; j < nt; j++)
		cJSON_ArrayForEach(item, json_at(trees[j], "spec.limits")) {
			if (json_str(item, "type") == NULL ||
			    strcmp(json_str(item, "type"), "Container") != 0)
				continue;
			cJSON_ArrayForEach(c, json_at(spec, "initContainers"))
				default_container(c, item, "init container",
				    note, sizeof note);
			cJSON_ArrayForEach(c, json_at(spec, "containers"))
				default_container(c, item, "container", note,
				    sizeof note);
		}
	if (*note) {
		char buf[1100];

		snprintf(buf, sizeof buf, "LimitRanger plugin set: %s", note);
		json_set_str(json_obj(json_obj(pod, "metadata"),
		    "annotations"), "kubernetes.io/limit-ranger", buf);
	}
	for (j = 0; j < nt; j++)
		cJSON_ArrayForEach(item, json_at(trees[j], "spec.limits")) {
			const char *t = json_str(item, "type");

			if (t != NULL && strcmp(t, "Container") == 0) {
				cJSON_ArrayForEach(c, json_at(spec,
				    "containers"))
					check_item("Container", item,
					    json_at(c, "resources.requests"),
					    json_at(c, "resources.limits"),
					    &v);
			} else if (t != NULL && strcmp(t, "Pod") == 0) {
				cJSON *req = cJSON_CreateObject();
				cJSON *lim = cJSON_CreateObject();

				pod_sums(spec, req, lim);
				check_item("Pod", item, req, lim, &v);
				cJSON_Delete(req);
				cJSON_Delete(lim);
			}
		}
	for (j = 0; j < nt; j++)
		cJSON_Delete(trees[j]);
	if (v.count == 0)
		return NULL;
	/* utilerrors.Aggregate: one message bare, several in brackets. */
	return status_error(403, "Forbidden", "pods \"%s\" is forbidden: "
	    "%s%s%s", json_str(pod, "metadata.name") ? json_str(pod,
	    "metadata.name") : "", v.count > 1 ? "[" : "", v.msg,
	    v.count > 1 ? "]" : "");
}

void
limitrange_defaults(cJSON *lr)
{
	cJSON *item;

	cJSON_ArrayForEach(item, json_at(lr, "spec.limits")) {
		const char *t = json_str(item, "type");

		if (t == NULL || strcmp(t, "Container") != 0)
			continue;
		if (json_at(item, "max") != NULL)
			fill(json_obj(item, "default"), json_at(item, "max"),
			    (char[1]){ 0 }, 0);
		if (json_at(item, "default") != NULL)
			fill(json_obj(item, "defaultRequest"),
			    json_at(item, "default"), (char[1]){ 0 }, 0);
		if (json_at(item, "min") != NULL)
			fill(json_obj(item, "defaultRequest"),
			    json_at(item, "min"), (char[1]){ 0 }, 0);
	}
}
