/*
 * Read verbs: get, list (with label and field selectors, limit/continue
 * paging and Table output), watch, and pods/log. Plain JSON reads are
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
#include "api/metrics.h"
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
	api_reply_status(req, rt, status_error(405, "MethodNotAllowed",
	    "the server does not allow this method on the requested "
	    "resource"));
	return 1;
}

void
api_get(api *a, http_req *req, struct route *rt)
{
	const store_obj *o;

	rt->verb = "get";
	if (refuse_review(req, rt))
		return;
	o = lookup(a, rt);
	if (o == NULL) {
		api_reply_status(req, rt, status_not_found(rt->r, rt->name));
		return;
	}
	if (api_wants_table(req)) {
		char rv[32];
		cJSON *t, *tree = store_obj_tree(o);
		char *inc = http_query_get(req->query, "includeObject");

		snprintf(rv, sizeof rv, "%llu", (unsigned long long)o->rev);
		t = table_new(rt->r, rv);
		table_add_row(t, rt->r, tree, table_include_parse(inc));
		free(inc);
		cJSON_Delete(tree);
		api_reply(req, rt, 200, t);
		return;
	}
	metrics_request(rt->verb, rt->r->store_key, 200, util_usec() - rt->t0);
	http_respond_rbuf(req, 200, "application/json", o->json);
}

/*
 * An integer option from the query, into *out when given; a malformed one
 * is answered 400 as kube-apiserver answers it, and -1 returned.
 */
static int
int_param(http_req *req, struct route *rt, const char *key, long long *out)
{
	char *cause = NULL;

	if (http_query_int(req->query, key, out, &cause) >= 0)
		return 0;
	api_reply_status(req, rt, status_bad_request("%s", cause));
	free(cause);
	return -1;
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
		api_reply_status(req, rt, status_bad_request(
		    "unable to parse requirement: %s", cause ? cause : ls));
		goto fail;
	}
	if (fs != NULL && *fs &&
	    (*fields = selector_parse_fields(fs, &cause)) == NULL) {
		api_reply_status(req, rt, status_bad_request(
		    "invalid field selector: %s", cause ? cause : fs));
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

void
api_list(api *a, http_req *req, struct route *rt)
{
	selector *labels, *fields;
	store_obj *const *objs;
	size_t n, i = 0, lo, hi, mid, count = 0, limit = 0;
	long long lim = 0, timeout = 0;
	char *cont;
	char rv[32], token[1300] = "", cns[600], cname[600];
	const char *nsf;
	int table = api_wants_table(req);
	cJSON *t = NULL;
	char *buf = NULL;
	size_t blen = 0;
	FILE *f = NULL;
	uint64_t start_rev = store_rev(a->st);

	rt->verb = "list";
	if (refuse_review(req, rt))
		return;
	/* timeoutSeconds is checked as kube-apiserver checks it, and unused. */
	if (int_param(req, rt, "limit", &lim) != 0 ||
	    int_param(req, rt, "timeoutSeconds", &timeout) != 0)
		return;
	if (lim > 0)
		limit = (size_t)lim;
	if (selectors(req, rt, &labels, &fields) != 0)
		return;
	cont = http_query_get(req->query, "continue");
	nsf = rt->r->namespaced ? rt->ns : NULL;
	if (nsf == NULL && fields != NULL && rt->r->namespaced)
		nsf = selector_field_equals(fields, "metadata.namespace");
	n = store_list(a->st, rt->r->store_key, nsf, &objs);
	if (cont != NULL && *cont) {
		if (token_decode(cont, cns, cname, sizeof cns) != 0) {
			api_reply_status(req, rt, status_bad_request(
			    "continue key is not valid"));
			goto done;
		}
		/* First object after the token's key. */
		lo = 0;
		hi = n;
		while (lo < hi) {
			int c;

			mid = (lo + hi) / 2;
			c = strcmp(objs[mid]->ns, cns);
			if (c == 0)
				c = strcmp(objs[mid]->name, cname);
			if (c <= 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		i = lo;
	}
	snprintf(rv, sizeof rv, "%llu", (unsigned long long)start_rev);
	if (table) {
		char *inc = http_query_get(req->query, "includeObject");
		enum table_include ti = table_include_parse(inc);

		free(inc);
		t = table_new(rt->r, rv);
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
			json_set_str(json_obj(t, "metadata"), "continue",
			    token);
		if (*token && labels == NULL && fields == NULL)
			cJSON_AddNumberToObject(json_obj(t, "metadata"),
			    "remainingItemCount", (double)(n - i));
		api_reply(req, rt, 200, t);
		goto done;
	}
	f = open_memstream(&buf, &blen);
	fprintf(f, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":"
	    "{\"resourceVersion\":\"%s\"", rt->r->list_kind, rt->r->gv, rv);
	/* Items go into a second stream; the token is only known after. */
	{
		char *ib = NULL;
		size_t il = 0;
		FILE *items = open_memstream(&ib, &il);
		const store_obj *last = NULL;

		for (; i < n; i++) {
			if (labels && !selector_match_labels(labels,
			    objs[i]->labels))
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
			fwrite(objs[i]->json->data, 1, objs[i]->json->len,
			    items);
			last = objs[i];
		}
		fclose(items);
		if (i < n && last != NULL) {
			token_encode(last, token, sizeof token);
			fprintf(f, ",\"continue\":\"%s\"", token);
			if (labels == NULL && fields == NULL)
				fprintf(f, ",\"remainingItemCount\":%zu",
				    n - i);
		}
		fprintf(f, "},\"items\":[");
		fwrite(ib, 1, il, f);
		fprintf(f, "]}");
		free(ib);
	}
	fclose(f);
	metrics_request(rt->verb, rt->r->store_key, 200, util_usec() - rt->t0);
	http_respond(req, 200, "application/json", buf, blen);
	free(buf);
done:
	free(cont);
	selector_free(labels);
	selector_free(fields);
}

void
api_watch(api *a, http_req *req, struct route *rt)
{
	struct watch_opts o;
	char *rv, *inc;
	long long lim = 0, timeout = 0;

	rt->verb = "watch";
	memset(&o, 0, sizeof o);
	if (refuse_review(req, rt))
		return;
	if (int_param(req, rt, "timeoutSeconds", &timeout) != 0 ||
	    int_param(req, rt, "limit", &lim) != 0)
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
	o.initial = rv == NULL || *rv == '\0' || strcmp(rv, "0") == 0;
	o.rv = rv ? strtoull(rv, NULL, 10) : 0;
	o.bookmarks = http_query_bool(req->query, "allowWatchBookmarks", 0);
	o.timeout_s = timeout <= 0 ? 0 : timeout < INT_MAX ? (int)timeout :
	    INT_MAX;
	o.table = api_wants_table(req);
	o.table_include = table_include_parse(inc);
	metrics_request(rt->verb, rt->r->store_key, 200, 0);
	watch_open(a->hub, req, &o);
done:
	free(rv);
	free(inc);
}

#define FOLLOW_MS 200

/* A `logs -f` stream: the file is polled for growth until the pod ends. */
struct follow {
	http_req *req;
	uv_timer_t *timer;
	store *st;
	char *path;
	char *ns, *name, *uid;
	off_t off;
};

static void
follow_timer_closed(uv_handle_t *h)
{
	free(h);
}

static void
follow_end(struct follow *f)
{
	uv_timer_stop(f->timer);
	uv_close((uv_handle_t *)f->timer, follow_timer_closed);
	http_stream_end(f->req);
	free(f->path);
	free(f->ns);
	free(f->name);
	free(f->uid);
	free(f);
}

static void
follow_peer_closed(http_req *req, void *arg)
{
	follow_end(arg);
}

/* Send what the file gained; end once the pod is gone or finished. */
static void
follow_tick(uv_timer_t *t)
{
	struct follow *f = t->data;
	const store_obj *o = store_get(f->st, "pods", f->ns, f->name);
	char buf[65536];
	ssize_t n;
	int fd, grew = 0, done = 0;

	if ((fd = open(f->path, O_RDONLY | O_CLOEXEC)) >= 0) {
		while ((n = pread(fd, buf, sizeof buf, f->off)) > 0) {
			if (http_stream_write_copy(f->req, buf, (size_t)n) != 0)
				break;
			f->off += n;
			grew = 1;
		}
		close(fd);
	}
	if (o == NULL || strcmp(o->uid, f->uid) != 0)
		done = 1;
	else if (!grew) {
		cJSON *tree = store_obj_tree(o);
		const char *phase = json_str(tree, "status.phase");

		done = phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
		    strcmp(phase, "Failed") == 0);
		cJSON_Delete(tree);
	}
	if (done && !grew)
		follow_end(f);
}

static void
follow_start(api *a, http_req *req, const store_obj *o, const char *path,
    const char *first, size_t len, off_t off)
{
	struct follow *f = calloc(1, sizeof *f);

	if (f == NULL || (f->timer = malloc(sizeof *f->timer)) == NULL)
		fatal("out of memory");
	f->req = req;
	f->st = a->st;
	f->path = strdup(path);
	f->ns = strdup(o->ns);
	f->name = strdup(o->name);
	f->uid = strdup(o->uid);
	f->off = off;
	http_req_on_close(req, follow_peer_closed, f);
	http_stream_begin(req, 200, "text/plain");
	if (len > 0)
		http_stream_write_copy(req, first, len);
	uv_timer_init(a->loop, f->timer);
	f->timer->data = f;
	uv_timer_start(f->timer, follow_tick, FOLLOW_MS, FOLLOW_MS);
}

/* Serve DATA_DIR/pods/NS/NAME/CONTAINER.log (empty before it exists). */
void
api_log(api *a, http_req *req, struct route *rt)
{
	const store_obj *o;
	cJSON *tree;
	const cJSON *cs, *c;
	char *container;
	int follow = http_query_bool(req->query, "follow", 0);
	int previous = http_query_bool(req->query, "previous", 0);
	long long lines = -1;
	char path[4096], *data = NULL, *p;
	struct stat sb;
	int fd;
	ssize_t got;

	rt->verb = "get";
	if (int_param(req, rt, "tailLines", &lines) != 0)
		return;
	container = http_query_get(req->query, "container");
	o = lookup(a, rt);
	if (o == NULL) {
		api_reply_status(req, rt, status_not_found(rt->r, rt->name));
		goto done;
	}
	tree = store_obj_tree(o);
	cs = json_at(tree, "spec.containers");
	if (container != NULL && *container != '\0') {
		/* Init containers have logs too. */
		cJSON_ArrayForEach(c, json_at(tree, "spec.initContainers"))
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				cs = json_at(tree, "spec.initContainers");
	}
	if (container == NULL || *container == '\0') {
		free(container);
		container = NULL;
		if (cJSON_GetArraySize(cs) == 1)
			container = strdup(json_str(cJSON_GetArrayItem(cs, 0),
			    "name") ? json_str(cJSON_GetArrayItem(cs, 0),
			    "name") : "");
		else {
			char names[1024] = "";
			size_t len = 0;

			cJSON_ArrayForEach(c, cs)
				len += snprintf(names + len, len < sizeof names ?
				    sizeof names - len : 0, "%s%s", len ? " " :
				    "", json_str(c, "name"));
			cJSON_Delete(tree);
			api_reply_status(req, rt, status_bad_request("a "
			    "container name must be specified for pod %s, "
			    "choose one of: [%s]", rt->name, names));
			goto done;
		}
	} else {
		int found = 0;

		cJSON_ArrayForEach(c, cs)
			if (json_str(c, "name") &&
			    strcmp(json_str(c, "name"), container) == 0)
				found = 1;
		if (!found) {
			cJSON_Delete(tree);
			api_reply_status(req, rt, status_bad_request(
			    "container %s is not valid for pod %s", container,
			    rt->name));
			goto done;
		}
	}
	cJSON_Delete(tree);
	snprintf(path, sizeof path, "%s/pods/%s/%s/%s%s.log", a->data_dir, o->ns,
	    o->name, container, previous ? ".previous" : "");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && previous) {
		api_reply_status(req, rt, status_bad_request("previous "
		    "terminated container \"%s\" in pod \"%s\" not found",
		    container, rt->name));
		goto done;
	}
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			close(fd);
		metrics_request(rt->verb, "pods", 200, util_usec() - rt->t0);
		if (follow)
			follow_start(a, req, o, path, "", 0, 0);
		else
			http_respond(req, 200, "text/plain", "", 0);
		goto done;
	}
	data = malloc(sb.st_size + 1);
	got = data ? read(fd, data, sb.st_size) : -1;
	close(fd);
	if (got < 0)
		got = 0;
	data[got] = '\0';
	p = data;
	if (lines >= 0) {
		/* Walk back over the last `lines` newline-terminated lines. */
		char *q = data + got;
		int seen = 0;

		if (q > data && q[-1] == '\n')
			q--;
		while (q > data) {
			if (q[-1] == '\n' && ++seen == lines)
				break;
			q--;
		}
		p = lines == 0 ? data + got : q;
	}
	metrics_request(rt->verb, "pods", 200, util_usec() - rt->t0);
	if (follow)
		follow_start(a, req, o, path, p, (size_t)(data + got - p), got);
	else
		http_respond(req, 200, "text/plain", p, (size_t)(data + got - p));
	free(data);
done:
	free(container);
}
