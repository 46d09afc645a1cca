/*
 * volray: the command-line client, volray(1). It reads the kubeconfig for
 * the server address, token and namespace of the current context, and
 * speaks the same HTTP API as kubectl through libcurl, on one handle so the
 * connection is kept alive from request to request.
 *
 * Resource names come from discovery (/api/v1, /apis, /apis/G/V): a word
 * on the command line matches a resource's plural, singular, short name or
 * kind, and "plural.group" picks the group, as in kubectl. Lists are read
 * in pages of 500 and joined. The default output asks the server for a
 * meta.k8s.io Table and lays its columns out as kubectl does; -o json and
 * -o yaml print the objects (the YAML emitter is here, block style, quoting
 * only the strings that need it). apply is server-side apply under the
 * field manager "volray". wait reads the object, then follows a watch on
 * that one name and reads it again whenever the watch ends or expires (410).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>

#include "jsonpath.h"
#include "yamljson.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define TABLE_ACCEPT	"application/json;as=Table;v=v1;g=meta.k8s.io"
#define APPLY_CTYPE	"application/apply-patch+yaml"
#define PAGE_SIZE	"500"
#define RELOAD_PATH	"/apis/volray.io/v1/policy/reload"
#define DELETE_BODY	"{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\"," \
			"\"propagationPolicy\":\"Background\"}"

struct buf {
	char	*p;
	size_t	 len, cap;
};

struct resp {
	long		code;	/* HTTP status, or -1 if the server was unreachable */
	struct buf	body;
};

/* One resource from discovery; the strings point into kept documents. */
struct apires {
	const char	*group, *version, *name, *singular, *kind;
	const cJSON	*shorts, *verbs, *categories;
	int		 namespaced, preferred;
};

/* Command-line options; every verb reads the ones it uses. */
struct opts {
	const char	*kubeconfig, *server, *ns, *selector, *fselector;
	const char	*output, *container, *forcond;
	const char	**files;
	int		 nfiles, all_ns, ignore_nf, managed;
	long		 tail, timeout_ms, req_timeout_ms;
};

static struct client {
	CURL		*curl;
	char		*server, *token, *ca_file, *ns;
	struct buf	 ca;
	int		 insecure;
	struct apires	*res;
	size_t		 nres;
	cJSON		*docs;		/* discovery documents, kept for res */
} cl;

static struct opts o = { .tail = -1, .timeout_ms = 30000 };

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: volray [--kubeconfig FILE] [-s URL] [-n NS] COMMAND ...\n"
	    "  get RESOURCE [NAME] [-A] [-l SEL] [--field-selector SEL]"
	    " [-o json|yaml|name|wide|jsonpath=T]\n"
	    "  apply -f FILE        create -f FILE\n"
	    "  delete RESOURCE NAME... | RESOURCE -l SEL | -f FILE"
	    " [--ignore-not-found]\n"
	    "  logs POD [-c CONTAINER] [--tail N]\n"
	    "  wait RESOURCE/NAME --for=condition=COND[=VALUE]|delete"
	    " [--timeout DURATION]\n"
	    "  policy reload        version        api-resources [-o name|wide]\n");
}

static void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n)) == NULL) {
		fprintf(stderr, "volray: out of memory\n");
		exit(1);
	}
	return p;
}

static char *
xstrdup(const char *s)
{
	return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

static void
buf_add(struct buf *b, const char *p, size_t len)
{
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->p[b->len] = '\0';
}

static void __attribute__((format(printf, 2, 3)))
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "volray: out of memory\n");
		exit(1);
	}
	buf_add(b, s, n);
	free(s);
}

static void
buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

static long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

/* Parse "30s", "500ms", "2m", "1h30m" or a plain number of seconds. */
static long
parse_duration(const char *s)
{
	long total = 0, n;
	char *end;

	if (*s == '\0')
		return -1;
	n = strtol(s, &end, 10);
	if (*end == '\0')
		return n < 0 ? -1 : n * 1000;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		n = strtol(s, &end, 10);
		if (strncmp(end, "ms", 2) == 0) {
			total += n;
			end += 2;
		} else if (*end == 's')
			total += n * 1000, end++;
		else if (*end == 'm')
			total += n * 60000, end++;
		else if (*end == 'h')
			total += n * 3600000, end++;
		else
			return -1;
		s = end;
	}
	return total;
}

static const char *
jstr(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *
jget(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* Put key: value in front of an object's members. */
static void
jprepend(cJSON *obj, const char *key, const char *value)
{
	cJSON *v = cJSON_CreateString(value);

	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	v->string = xstrdup(key);
	cJSON_InsertItemInArray(obj, 0, v);
}

/* Decode base64 (kubeconfig *-data fields) into b; -1 on bad input. */
static int
base64_decode(const char *s, struct buf *b)
{
	static const char *alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789+/";
	unsigned acc = 0;
	int bits = 0;
	const char *p;
	char c;

	for (; *s != '\0' && *s != '='; s++) {
		if (isspace((unsigned char)*s))
			continue;
		if ((p = strchr(alpha, *s)) == NULL)
			return -1;
		acc = (acc << 6) | (unsigned)(p - alpha);
		if ((bits += 6) >= 8) {
			bits -= 8;
			c = (char)((acc >> bits) & 0xff);
			buf_add(b, &c, 1);
		}
	}
	return 0;
}

/* The kubeconfig: --kubeconfig, the first of $KUBECONFIG, ~/.kube/config. */
static char *
kubeconfig_path(void)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *list, *p, *save, *first = NULL;
	struct buf b = { 0 };

	if (o.kubeconfig != NULL)
		return xstrdup(o.kubeconfig);
	if (env != NULL && *env != '\0') {
		list = xstrdup(env);
		for (p = strtok_r(list, ":", &save); p != NULL;
		    p = strtok_r(NULL, ":", &save)) {
			if (first == NULL)
				first = p;
			if (access(p, R_OK) == 0) {
				first = p;
				break;
			}
		}
		p = xstrdup(first != NULL ? first : env);
		free(list);
		return p;
	}
	buf_printf(&b, "%s/.kube/config", home != NULL ? home : ".");
	return b.p;
}

/* The inner member of the list entry with this name (or the first). */
static const cJSON *
named(const cJSON *list, const char *name, const char *inner)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list) {
		if (name == NULL || (jstr(el, "name") != NULL &&
		    strcmp(jstr(el, "name"), name) == 0))
			return jget(el, inner);
	}
	return NULL;
}

/* Take server, credentials and namespace from the current context. */
static int
kubeconfig_load(void)
{
	const cJSON *cfg, *ctx, *cluster, *user, *v;
	char *path, *cause = NULL;
	cJSON *docs;
	const char *s;

	path = kubeconfig_path();
	if ((docs = yamljson_load_file(path, &cause)) == NULL) {
		if (o.server != NULL) {
			free(cause);
			free(path);
			return 0;
		}
		fprintf(stderr, "error: reading kubeconfig %s: %s\n"
		    "(start volrayd and set KUBECONFIG=DATA_DIR/kubeconfig, "
		    "or use --kubeconfig or --server)\n", path, cause);
		free(cause);
		free(path);
		return -1;
	}
	cfg = cJSON_GetArrayItem(docs, 0);
	s = jstr(cfg, "current-context");
	ctx = named(jget(cfg, "contexts"), s, "context");
	if (ctx == NULL)
		ctx = named(jget(cfg, "contexts"), NULL, "context");
	cluster = named(jget(cfg, "clusters"), jstr(ctx, "cluster"), "cluster");
	if (cluster == NULL)
		cluster = named(jget(cfg, "clusters"), NULL, "cluster");
	user = named(jget(cfg, "users"), jstr(ctx, "user"), "user");
	if (o.server == NULL && (s = jstr(cluster, "server")) != NULL)
		cl.server = xstrdup(s);
	if ((s = jstr(user, "token")) != NULL)
		cl.token = xstrdup(s);
	if ((s = jstr(ctx, "namespace")) != NULL && *s != '\0')
		cl.ns = xstrdup(s);
	if ((s = jstr(cluster, "certificate-authority")) != NULL)
		cl.ca_file = xstrdup(s);
	if ((s = jstr(cluster, "certificate-authority-data")) != NULL &&
	    base64_decode(s, &cl.ca) != 0) {
		fprintf(stderr, "error: %s: bad certificate-authority-data\n",
		    path);
		return -1;
	}
	v = jget(cluster, "insecure-skip-tls-verify");
	cl.insecure = cJSON_IsTrue(v);
	if (cl.server == NULL && o.server == NULL) {
		fprintf(stderr, "error: %s: no server in the current context\n",
		    path);
		return -1;
	}
	cJSON_Delete(docs);
	free(path);
	return 0;
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	buf_add(arg, p, size * n);
	return size * n;
}

/* Set up the handle for one request; free the returned list after it. */
static struct curl_slist *
prepare(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, long timeout_ms)
{
	struct curl_slist *h = NULL;
	struct buf b = { 0 };
	CURL *c = cl.curl;

	curl_easy_reset(c);
	buf_printf(&b, "%s%s", cl.server, path);
	curl_easy_setopt(c, CURLOPT_URL, b.p);
	buf_free(&b);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "volray/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
	if (timeout_ms > 0)
		curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	if (strcmp(method, "GET") == 0)
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	else
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
		curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS, body);
	}
	buf_printf(&b, "Accept: %s", accept != NULL ? accept :
	    "application/json");
	h = curl_slist_append(h, b.p);
	buf_free(&b);
	if (ctype != NULL) {
		buf_printf(&b, "Content-Type: %s", ctype);
		h = curl_slist_append(h, b.p);
		buf_free(&b);
	}
	if (cl.token != NULL) {
		buf_printf(&b, "Authorization: Bearer %s", cl.token);
		h = curl_slist_append(h, b.p);
		buf_free(&b);
	}
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (cl.insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cl.ca_file != NULL)
		curl_easy_setopt(c, CURLOPT_CAINFO, cl.ca_file);
#if CURL_AT_LEAST_VERSION(7, 77, 0)
	if (cl.ca.len > 0) {
		struct curl_blob blob = { cl.ca.p, cl.ca.len, CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
#endif
	return h;
}

static void
unreachable(CURLcode rc)
{
	fprintf(stderr, "error: cannot talk to the server at %s: %s\n",
	    cl.server, curl_easy_strerror(rc));
}

/* Send one request and read the whole reply; code -1 if it failed. */
static void
http(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, struct resp *r)
{
	struct curl_slist *h;
	CURLcode rc;

	memset(r, 0, sizeof *r);
	buf_add(&r->body, "", 0);
	h = prepare(method, path, ctype, body, accept, o.req_timeout_ms);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEDATA, &r->body);
	if ((rc = curl_easy_perform(cl.curl)) != CURLE_OK) {
		unreachable(rc);
		r->code = -1;
	} else
		curl_easy_getinfo(cl.curl, CURLINFO_RESPONSE_CODE, &r->code);
	curl_slist_free_all(h);
}

/* Print a failed reply as kubectl does, from the Status the server sent. */
static void
report(const struct resp *r)
{
	cJSON *st;
	const char *msg, *reason;

	if (r->code < 0)
		return;
	st = cJSON_Parse(r->body.p);
	msg = jstr(st, "message");
	reason = jstr(st, "reason");
	if (msg != NULL && reason != NULL && *reason != '\0')
		fprintf(stderr, "Error from server (%s): %s\n", reason, msg);
	else if (msg != NULL)
		fprintf(stderr, "Error from server: %s\n", msg);
	else
		fprintf(stderr, "Error from server: HTTP %ld: %.300s\n", r->code,
		    r->body.p);
	cJSON_Delete(st);
}

/* GET a JSON document; NULL (reported) unless the server answered 200. */
static cJSON *
get_json(const char *path, const char *accept)
{
	struct resp r;
	cJSON *j = NULL;

	http("GET", path, NULL, NULL, accept, &r);
	if (r.code == 200 && (j = cJSON_Parse(r.body.p)) == NULL)
		fprintf(stderr, "error: %s: the server sent bad JSON\n", path);
	else if (r.code != 200)
		report(&r);
	buf_free(&r.body);
	return j;
}

/* Append key=value (escaped) to a path; nothing when value is NULL. */
static void
query_add(struct buf *path, const char *key, const char *value)
{
	char *e;

	if (value == NULL)
		return;
	e = curl_easy_escape(cl.curl, value, 0);
	buf_printf(path, "%c%s=%s", strchr(path->p, '?') ? '&' : '?', key, e);
	curl_free(e);
}

/* Add the resources of one group version to the discovered set. */
static void
discover_gv(const char *group, const char *version, int preferred)
{
	struct buf path = { 0 };
	const cJSON *el;
	struct apires *r;
	const char *name;
	cJSON *doc;

	if (*group == '\0')
		buf_printf(&path, "/api/%s", version);
	else
		buf_printf(&path, "/apis/%s/%s", group, version);
	doc = get_json(path.p, NULL);
	buf_free(&path);
	if (doc == NULL)
		return;
	cJSON_AddItemToArray(cl.docs, doc);
	cJSON_ArrayForEach(el, jget(doc, "resources")) {
		if ((name = jstr(el, "name")) == NULL || strchr(name, '/'))
			continue;
		cl.res = xrealloc(cl.res, (cl.nres + 1) * sizeof *cl.res);
		r = &cl.res[cl.nres++];
		r->group = group;
		r->version = version;
		r->name = name;
		r->singular = jstr(el, "singularName");
		r->kind = jstr(el, "kind");
		r->shorts = jget(el, "shortNames");
		r->verbs = jget(el, "verbs");
		r->categories = jget(el, "categories");
		r->namespaced = cJSON_IsTrue(jget(el, "namespaced"));
		r->preferred = preferred;
		if (r->singular == NULL || *r->singular == '\0')
			r->singular = r->kind;
		if (r->kind == NULL)
			cl.nres--;
	}
}

/* Learn every resource the server serves, preferred versions first. */
static int
discover(void)
{
	const cJSON *g, *v, *pref;
	const char *gname, *pv, *ver;
	cJSON *groups;

	if (cl.docs != NULL)
		return cl.nres > 0 ? 0 : -1;
	cl.docs = cJSON_CreateArray();
	discover_gv("", "v1", 1);
	if (cl.nres == 0)
		return -1;
	if ((groups = get_json("/apis", NULL)) == NULL)
		return -1;
	cJSON_AddItemToArray(cl.docs, groups);
	cJSON_ArrayForEach(g, jget(groups, "groups")) {
		if ((gname = jstr(g, "name")) == NULL)
			continue;
		pref = jget(g, "preferredVersion");
		pv = jstr(pref, "version");
		if (pv != NULL)
			discover_gv(gname, pv, 1);
		cJSON_ArrayForEach(v, jget(g, "versions")) {
			ver = jstr(v, "version");
			if (ver != NULL && (pv == NULL || strcmp(ver, pv) != 0))
				discover_gv(gname, ver, pv == NULL);
		}
	}
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
group_matches(const struct apires *r, const char *g)
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
static const struct apires *
resolve(const char *word)
{
	char *w = xstrdup(word), *g;
	const struct apires *r, *found = NULL;
	size_t i;

	if (discover() != 0) {
		free(w);
		return NULL;
	}
	if ((g = strchr(w, '.')) != NULL)
		*g++ = '\0';
	for (i = 0; i < cl.nres && found == NULL; i++) {
		r = &cl.res[i];
		if (!group_matches(r, g))
			continue;
		if (strcasecmp(r->name, w) == 0 ||
		    strcasecmp(r->singular, w) == 0 ||
		    strcasecmp(r->kind, w) == 0 || has_string(r->shorts, w))
			found = r;
	}
	if (found == NULL)
		fprintf(stderr, "error: the server doesn't have a resource type "
		    "\"%s\"\n", word);
	free(w);
	return found;
}

/* Find the resource of a document's apiVersion and kind. */
static const struct apires *
resolve_kind(const char *apiversion, const char *kind)
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
	for (i = 0; i < cl.nres; i++) {
		if (strlen(cl.res[i].group) == gl &&
		    strncmp(cl.res[i].group, g, gl) == 0 &&
		    strcmp(cl.res[i].version, v) == 0 &&
		    strcmp(cl.res[i].kind, kind) == 0)
			return &cl.res[i];
	}
	fprintf(stderr, "error: no matches for kind \"%s\" in version \"%s\"\n",
	    kind, apiversion);
	return NULL;
}

static void
path_add(struct buf *b, const char *segment)
{
	char *e = curl_easy_escape(cl.curl, segment, 0);

	buf_printf(b, "/%s", e);
	curl_free(e);
}

/* The path of a collection, or of one object (and subresource). */
static void
res_path(struct buf *b, const struct apires *r, const char *ns,
    const char *name, const char *sub)
{
	if (*r->group == '\0')
		buf_printf(b, "/api/%s", r->version);
	else
		buf_printf(b, "/apis/%s/%s", r->group, r->version);
	if (r->namespaced && ns != NULL) {
		buf_printf(b, "/namespaces");
		path_add(b, ns);
	}
	buf_printf(b, "/%s", r->name);
	if (name != NULL)
		path_add(b, name);
	if (sub != NULL)
		buf_printf(b, "/%s", sub);
}

/* kubectl's name for a type in messages: "pod", "rayjob.ray.io". */
static char *
res_type(const struct apires *r)
{
	struct buf b = { 0 };
	size_t i;

	buf_printf(&b, "%s%s%s", r->kind, *r->group ? "." : "", r->group);
	for (i = 0; i < b.len; i++)
		b.p[i] = tolower((unsigned char)b.p[i]);
	return b.p;
}

static const char *
namespace_of(const struct apires *r)
{
	if (!r->namespaced)
		return NULL;
	return o.ns != NULL ? o.ns : cl.ns != NULL ? cl.ns : "default";
}

/* Split "TYPE/NAME" or take TYPE NAME... from the arguments. */
static const struct apires *
target(int argc, char **argv, const char **name, int *rest)
{
	const struct apires *r;
	char *slash, *type;

	*name = NULL;
	*rest = 1;
	if (argc < 1) {
		fprintf(stderr, "error: you must specify the type of resource\n");
		return NULL;
	}
	type = xstrdup(argv[0]);
	if ((slash = strchr(type, '/')) != NULL) {
		*slash = '\0';
		*name = argv[0] + (slash - type) + 1;
	} else if (argc > 1) {
		*name = argv[1];
		*rest = 2;
	}
	r = resolve(type);
	free(type);
	return r;
}

/* Read every page of a list (JSON or Table) into one document. */
static cJSON *
list_all(const char *path, const char *accept)
{
	const char *member = accept != NULL ? "rows" : "items", *cont;
	cJSON *all = NULL, *page, *items, *el;
	struct buf p = { 0 };
	char *token = NULL;

	for (;;) {
		p.len = 0;
		buf_printf(&p, "%s", path);
		query_add(&p, "limit", PAGE_SIZE);
		query_add(&p, "continue", token);
		free(token);
		token = NULL;
		if ((page = get_json(p.p, accept)) == NULL) {
			cJSON_Delete(all);
			all = NULL;
			break;
		}
		cont = jstr(jget(page, "metadata"), "continue");
		if (cont != NULL && *cont != '\0')
			token = xstrdup(cont);
		if (all == NULL)
			all = page;
		else {
			items = cJSON_GetObjectItemCaseSensitive(all, member);
			while ((el = cJSON_DetachItemFromArray(
			    cJSON_GetObjectItemCaseSensitive(page, member), 0))
			    != NULL)
				cJSON_AddItemToArray(items, el);
			cJSON_Delete(page);
		}
		if (token == NULL)
			break;
	}
	buf_free(&p);
	return all;
}

/* Print a number as the shortest text that reads back the same. */
static void
num_out(FILE *f, double d)
{
	char s[64];
	int prec;

	if (d == (double)(long long)d && d < 1e18 && d > -1e18) {
		fprintf(f, "%lld", (long long)d);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	fputs(s, f);
}

static void
indent(FILE *f, int n)
{
	while (n-- > 0)
		fputc(' ', f);
}

/* Indented JSON as kubectl prints it (four spaces, "key": value). */
static void
json_out(FILE *f, const cJSON *v, int depth)
{
	const cJSON *el;
	char *s;
	int obj = cJSON_IsObject(v);

	if (cJSON_IsNumber(v)) {
		num_out(f, v->valuedouble);
		return;
	}
	if (!obj && !cJSON_IsArray(v)) {
		s = cJSON_PrintUnformatted(v);
		fputs(s, f);
		free(s);
		return;
	}
	if (v->child == NULL) {
		fputs(obj ? "{}" : "[]", f);
		return;
	}
	fputs(obj ? "{\n" : "[\n", f);
	cJSON_ArrayForEach(el, v) {
		indent(f, (depth + 1) * 4);
		if (obj) {
			cJSON *k = cJSON_CreateString(el->string);

			s = cJSON_PrintUnformatted(k);
			fprintf(f, "%s: ", s);
			free(s);
			cJSON_Delete(k);
		}
		json_out(f, el, depth + 1);
		fputs(el->next != NULL ? ",\n" : "\n", f);
	}
	indent(f, depth * 4);
	fputs(obj ? "}" : "]", f);
}

/* Would a YAML 1.1 reader (ours, PyYAML, go-yaml) type plain s as a string? */
static int
yaml_typed_string(const char *s)
{
	static const char *words[] = { "true", "false", "yes", "no", "on",
	    "off", "y", "n", "null", "~", "<<", "=", ".inf", "-.inf", "+.inf",
	    ".nan" };
	size_t i;
	char *cause = NULL;
	cJSON *j;
	int ok;

	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasecmp(s, words[i]) == 0)
			return 0;
	if (strchr("0123456789+-.", s[0]) == NULL)
		return 1;
	/* Timestamps, and 1:20 or 1_000 that YAML 1.1 reads as numbers. */
	if (strspn(s, "0123456789") == 4 && s[4] == '-' &&
	    isdigit((unsigned char)s[5]))
		return 0;
	if (s[strspn(s, "0123456789:_.+-eE")] == '\0' && strpbrk(s, ":_"))
		return 0;
	j = yamljson_parse(s, strlen(s), &cause);
	ok = cJSON_IsString(j) && strcmp(j->valuestring, s) == 0;
	cJSON_Delete(j);
	free(cause);
	return ok;
}

/* Is s free of YAML syntax that rules out a plain scalar? */
static int
yaml_plain_syntax(const char *s)
{
	size_t len = strlen(s);
	const char *p;

	if (len == 0 || strchr("?:,[]{}#&*!|>'\"%@` \t", s[0]) != NULL)
		return 0;
	if (s[0] == '-' && (s[1] == ' ' || s[1] == '\0' ||
	    strncmp(s, "---", 3) == 0))
		return 0;
	if (s[len - 1] == ' ' || s[len - 1] == ':')
		return 0;
	for (p = s; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
		if ((p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#'))
			return 0;
	}
	return 1;
}

static int
has_control(const char *s, int newline_ok)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t' &&
		    !(newline_ok && *s == '\n')) || *s == 0x7f)
			return 1;
	return 0;
}

/* Write s as a literal block scalar (|) with its lines at column ind. */
static void
yaml_literal(FILE *f, const char *s, int ind)
{
	size_t len = strlen(s), nl = 0;
	const char *p, *e, *end;

	while (nl < len && s[len - 1 - nl] == '\n')
		nl++;
	end = s + len - nl;
	fprintf(f, "|%s%s\n", s[0] == ' ' ? "2" : "",
	    nl == 0 ? "-" : nl > 1 ? "+" : "");
	for (p = s; p < end; p = e + 1) {
		if ((e = memchr(p, '\n', end - p)) == NULL)
			e = end;
		if (e > p) {
			indent(f, ind);
			fwrite(p, 1, e - p, f);
		}
		fputc('\n', f);
	}
	while (nl-- > 1)
		fputc('\n', f);
}

/*
 * A string as YAML, the way go-yaml writes it: plain if it may be; double
 * quoted if plain would read as another type or it holds control
 * characters; a literal block if it spans lines (and block is allowed);
 * else single quoted. Block scalars end their own line.
 */
static int
yaml_string(FILE *f, const char *s, int ind, int block)
{
	const char *p;

	if (yaml_plain_syntax(s) && yaml_typed_string(s)) {
		fputs(s, f);
		return 0;
	}
	if (block && strchr(s, '\n') != NULL && !has_control(s, 1) &&
	    strstr(s, " \n") == NULL && s[strspn(s, "\n")] != '\0') {
		yaml_literal(f, s, ind);
		return 1;
	}
	if (yaml_typed_string(s) && !has_control(s, 0) && strchr(s, '\t') ==
	    NULL) {
		fputc('\'', f);
		for (p = s; *p != '\0'; p++) {
			if (*p == '\'')
				fputc('\'', f);
			fputc(*p, f);
		}
		fputc('\'', f);
		return 0;
	}
	fputc('"', f);
	for (p = s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", (unsigned char)*p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
	return 0;
}

static int
yaml_is_block(const cJSON *v)
{
	return (cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child != NULL;
}

/* A scalar or empty collection; 1 if it ended its own line. */
static int
yaml_scalar(FILE *f, const cJSON *v, int ind)
{
	if (cJSON_IsString(v))
		return yaml_string(f, v->valuestring, ind, 1);
	if (cJSON_IsNumber(v))
		num_out(f, v->valuedouble);
	else if (cJSON_IsBool(v))
		fputs(cJSON_IsTrue(v) ? "true" : "false", f);
	else if (cJSON_IsObject(v))
		fputs("{}", f);
	else if (cJSON_IsArray(v))
		fputs("[]", f);
	else
		fputs("null", f);
	return 0;
}

/*
 * Emit a non-empty mapping or sequence at column ind. When inline_first is
 * set the caller has written "- " and the first line continues it.
 * Sequences under a key are not indented, as kubectl writes them.
 */
static void
yaml_block(FILE *f, const cJSON *v, int ind, int inline_first)
{
	const cJSON *el;
	int first = 1;

	cJSON_ArrayForEach(el, v) {
		if (!(first && inline_first))
			indent(f, ind);
		first = 0;
		if (cJSON_IsArray(v)) {
			fputs("- ", f);
			if (yaml_is_block(el))
				yaml_block(f, el, ind + 2, 1);
			else if (!yaml_scalar(f, el, ind + 2))
				fputc('\n', f);
			continue;
		}
		yaml_string(f, el->string, 0, 0);
		fputc(':', f);
		if (cJSON_IsObject(el) && el->child != NULL) {
			fputc('\n', f);
			yaml_block(f, el, ind + 2, 0);
		} else if (cJSON_IsArray(el) && el->child != NULL) {
			fputc('\n', f);
			yaml_block(f, el, ind, 0);
		} else {
			fputc(' ', f);
			if (!yaml_scalar(f, el, ind + 2))
				fputc('\n', f);
		}
	}
}

static void
yaml_out(FILE *f, const cJSON *v)
{
	if (yaml_is_block(v))
		yaml_block(f, v, 0, 0);
	else if (!yaml_scalar(f, v, 2))
		fputc('\n', f);
}

/* Text of a table cell or JSONPath match as kubectl shows it. */
static char *
cell_text(const cJSON *v)
{
	char *s;
	size_t len;
	FILE *f;

	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (v == NULL || cJSON_IsNull(v))
		return xstrdup("");
	if ((f = open_memstream(&s, &len)) == NULL)
		return xstrdup("?");
	if (cJSON_IsNumber(v))
		num_out(f, v->valuedouble);
	else if (cJSON_IsBool(v))
		fputs(cJSON_IsTrue(v) ? "true" : "false", f);
	else {
		char *j = cJSON_PrintUnformatted(v);

		fputs(j, f);
		free(j);
	}
	fclose(f);
	return s;
}

static void
print_match(const cJSON *m, void *arg)
{
	int *n = arg;
	char *s = cell_text(m);

	printf("%s%s", (*n)++ > 0 ? " " : "", s);
	free(s);
}

/* Evaluate a kubectl JSONPath template: text, {.path} and {"literal"}. */
static int
template_out(const char *t, const cJSON *obj)
{
	const char *end, *expr;
	int n;

	while (*t != '\0') {
		if (*t != '{') {
			fputc(*t++, stdout);
			continue;
		}
		if ((end = strchr(t, '}')) == NULL) {
			fprintf(stderr, "error: unclosed { in the template\n");
			return -1;
		}
		expr = t + 1;
		while (*expr == ' ')
			expr++;
		if (*expr == '"') {
			for (expr++; expr < end && *expr != '"'; expr++) {
				if (*expr == '\\' && expr + 1 < end) {
					expr++;
					fputc(*expr == 'n' ? '\n' : *expr == 't' ?
					    '\t' : *expr, stdout);
				} else
					fputc(*expr, stdout);
			}
		} else {
			if (*expr == '$')
				expr++;
			if (*expr != '.' && *expr != '[') {
				fprintf(stderr, "error: unsupported template "
				    "expression: %.*s\n", (int)(end - t + 1), t);
				return -1;
			}
			n = 0;
			jsonpath_each(obj, expr, print_match, &n);
		}
		t = end + 1;
	}
	return 0;
}

/* Rows of text laid out in columns, row 0 being the header. */
struct table {
	int	 ncol;
	size_t	 nrow;
	char	**cell;
};

static void
table_add(struct table *t, char **row)
{
	int i;

	t->cell = xrealloc(t->cell, (t->nrow + 1) * t->ncol * sizeof *t->cell);
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

/* Print the table as kubectl does: left-aligned, three spaces apart. */
static void
table_print(struct table *t)
{
	size_t *w = xrealloc(NULL, t->ncol * sizeof *w), r;
	const char *s;
	int c;

	for (c = 0; c < t->ncol; c++) {
		w[c] = 0;
		for (r = 0; r < t->nrow; r++)
			if (text_width(t->cell[r * t->ncol + c]) > w[c])
				w[c] = text_width(t->cell[r * t->ncol + c]);
	}
	for (r = 0; r < t->nrow; r++) {
		for (c = 0; c < t->ncol; c++) {
			s = t->cell[r * t->ncol + c];
			fputs(s, stdout);
			if (c < t->ncol - 1)
				indent(stdout, (int)(w[c] - text_width(s)) + 3);
		}
		fputc('\n', stdout);
	}
	for (r = 0; r < t->nrow * t->ncol; r++)
		free(t->cell[r]);
	free(t->cell);
	free(w);
}

static char *
upper(const char *s)
{
	char *u = xstrdup(s), *p;

	for (p = u; *p != '\0'; p++)
		*p = toupper((unsigned char)*p);
	return u;
}

/* Print a meta.k8s.io Table; priority columns only when wide. */
static void
print_table(const cJSON *tab, int with_ns)
{
	const cJSON *cols = jget(tab, "columnDefinitions"), *col, *row;
	int ncol = 0, i, c, wide = o.output != NULL &&
	    strcmp(o.output, "wide") == 0;
	struct table t = { 0 };
	char **cells;
	const char *ns;

	cJSON_ArrayForEach(col, cols)
		if (wide || jget(col, "priority") == NULL ||
		    jget(col, "priority")->valuedouble == 0)
			ncol++;
	t.ncol = ncol + (with_ns ? 1 : 0);
	cells = xrealloc(NULL, t.ncol * sizeof *cells);
	c = 0;
	if (with_ns)
		cells[c++] = xstrdup("NAMESPACE");
	cJSON_ArrayForEach(col, cols)
		if (wide || jget(col, "priority") == NULL ||
		    jget(col, "priority")->valuedouble == 0)
			cells[c++] = upper(jstr(col, "name") ? jstr(col, "name") :
			    "");
	table_add(&t, cells);
	cJSON_ArrayForEach(row, jget(tab, "rows")) {
		c = 0;
		if (with_ns) {
			ns = jstr(jget(jget(row, "object"), "metadata"),
			    "namespace");
			cells[c++] = xstrdup(ns != NULL ? ns : "");
		}
		i = 0;
		cJSON_ArrayForEach(col, cols) {
			if (wide || jget(col, "priority") == NULL ||
			    jget(col, "priority")->valuedouble == 0)
				cells[c++] = cell_text(cJSON_GetArrayItem(
				    jget(row, "cells"), i));
			i++;
		}
		table_add(&t, cells);
	}
	free(cells);
	table_print(&t);
}

/* A Table of names alone, from a server that does not make Tables. */
static cJSON *
names_table(cJSON *doc)
{
	cJSON *t = cJSON_CreateObject(), *col, *rows, *row, *obj;
	const cJSON *items = jget(doc, "items"), *el;

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
		    cJSON_CreateString(jstr(jget(el, "metadata"), "name") ?
		    jstr(jget(el, "metadata"), "name") : ""));
		obj = cJSON_AddObjectToObject(row, "object");
		cJSON_AddItemToObject(obj, "metadata",
		    cJSON_Duplicate(jget(el, "metadata"), 1));
		cJSON_AddItemToArray(rows, row);
	}
	cJSON_Delete(doc);
	return t;
}

/* Give list items the apiVersion and kind the server may leave out. */
static cJSON *
as_list(cJSON *list, const struct apires *r)
{
	cJSON *out = cJSON_CreateObject(), *items, *el, *md;
	struct buf av = { 0 };

	buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "", r->version);
	items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
	if (items == NULL)
		items = cJSON_CreateArray();
	cJSON_ArrayForEach(el, items) {
		if (jstr(el, "kind") == NULL)
			jprepend(el, "kind", r->kind);
		if (jstr(el, "apiVersion") == NULL)
			jprepend(el, "apiVersion", av.p);
	}
	cJSON_AddStringToObject(out, "apiVersion", "v1");
	cJSON_AddItemToObject(out, "items", items);
	cJSON_AddStringToObject(out, "kind", "List");
	md = cJSON_AddObjectToObject(out, "metadata");
	cJSON_AddStringToObject(md, "resourceVersion", "");
	cJSON_Delete(list);
	buf_free(&av);
	return out;
}

static int
key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

/* Sort members by name all the way down, as kubectl prints them. */
static void
sort_keys(cJSON *v)
{
	cJSON **kids, *el;
	size_t n = 0, i;

	for (el = v->child; el != NULL; el = el->next, n++)
		sort_keys(el);
	if (!cJSON_IsObject(v) || n < 2)
		return;
	kids = xrealloc(NULL, n * sizeof *kids);
	for (i = 0, el = v->child; el != NULL; el = el->next)
		kids[i++] = el;
	qsort(kids, n, sizeof *kids, key_cmp);
	for (i = 0; i < n; i++) {
		kids[i]->next = i + 1 < n ? kids[i + 1] : NULL;
		kids[i]->prev = i > 0 ? kids[i - 1] : kids[n - 1];
	}
	v->child = kids[0];
	free(kids);
}

/* Drop metadata.managedFields unless asked for, as kubectl does. */
static void
strip_managed(cJSON *doc)
{
	cJSON *el;

	if (o.managed)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "managedFields");
	cJSON_ArrayForEach(el, cJSON_GetObjectItemCaseSensitive(doc, "items"))
		strip_managed(el);
}

/* Print objects in the -o format (json, yaml, name or jsonpath=). */
static int
print_objects(cJSON *doc, const struct apires *r)
{
	const cJSON *el;
	char *type;

	if (strcmp(o.output, "json") == 0 || strcmp(o.output, "yaml") == 0) {
		strip_managed(doc);
		sort_keys(doc);
	}
	if (strcmp(o.output, "json") == 0) {
		json_out(stdout, doc, 0);
		fputc('\n', stdout);
	} else if (strcmp(o.output, "yaml") == 0)
		yaml_out(stdout, doc);
	else if (strcmp(o.output, "name") == 0) {
		type = res_type(r);
		if (jget(doc, "items") == NULL)
			printf("%s/%s\n", type, jstr(jget(doc, "metadata"),
			    "name"));
		cJSON_ArrayForEach(el, jget(doc, "items"))
			printf("%s/%s\n", type, jstr(jget(el, "metadata"),
			    "name"));
		free(type);
	} else if (strncmp(o.output, "jsonpath=", 9) == 0)
		return template_out(o.output + 9, doc);
	return 0;
}

static int
known_output(const char *s)
{
	return s == NULL || strcmp(s, "json") == 0 || strcmp(s, "yaml") == 0 ||
	    strcmp(s, "name") == 0 || strcmp(s, "wide") == 0 ||
	    strncmp(s, "jsonpath=", 9) == 0;
}

/* get: one object or a list, as a table or in the -o format. */
static int
cmd_get(int argc, char **argv)
{
	const struct apires *r;
	const char *name, *ns;
	struct buf path = { 0 };
	int rest, rc = 0, table;
	cJSON *doc;

	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	if (rest < argc) {
		fprintf(stderr, "error: get takes one name\n");
		return 1;
	}
	ns = o.all_ns && name == NULL ? NULL : namespace_of(r);
	res_path(&path, r, ns, name, NULL);
	if (name == NULL) {
		query_add(&path, "labelSelector", o.selector);
		query_add(&path, "fieldSelector", o.fselector);
	}
	table = o.output == NULL || strcmp(o.output, "wide") == 0;
	if (name != NULL)
		doc = get_json(path.p, table ? TABLE_ACCEPT : NULL);
	else
		doc = list_all(path.p, table ? TABLE_ACCEPT : NULL);
	buf_free(&path);
	if (doc == NULL)
		return 1;
	if (table && (jstr(doc, "kind") == NULL ||
	    strcmp(jstr(doc, "kind"), "Table") != 0))
		doc = names_table(doc);
	if (table && cJSON_GetArraySize(jget(doc, "rows")) == 0) {
		if (r->namespaced && ns != NULL)
			fprintf(stderr, "No resources found in %s namespace.\n",
			    ns);
		else
			fprintf(stderr, "No resources found\n");
	} else if (table)
		print_table(doc, r->namespaced && ns == NULL);
	else {
		if (name == NULL)
			doc = as_list(doc, r);
		rc = print_objects(doc, r) != 0;
	}
	cJSON_Delete(doc);
	return rc;
}

/* Load the documents of every -f file, with List items spread out. */
static cJSON *
load_files(void)
{
	cJSON *all = cJSON_CreateArray(), *docs, *doc, *items, *el;
	struct buf in = { 0 };
	char *cause = NULL, chunk[65536];
	size_t n;
	int i;

	if (o.nfiles == 0) {
		fprintf(stderr, "error: must specify -f FILE\n");
		goto fail;
	}
	for (i = 0; i < o.nfiles; i++) {
		if (strcmp(o.files[i], "-") == 0) {
			in.len = 0;
			buf_add(&in, "", 0);
			while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
				buf_add(&in, chunk, n);
			docs = yamljson_parse_all(in.p, in.len, &cause);
		} else
			docs = yamljson_load_file(o.files[i], &cause);
		if (docs == NULL) {
			fprintf(stderr, "error: %s: %s\n", o.files[i], cause);
			free(cause);
			goto fail;
		}
		while ((doc = cJSON_DetachItemFromArray(docs, 0)) != NULL) {
			if (cJSON_IsNull(doc)) {
				cJSON_Delete(doc);
				continue;
			}
			if (!cJSON_IsObject(doc) || jstr(doc, "kind") == NULL ||
			    jstr(doc, "apiVersion") == NULL) {
				fprintf(stderr, "error: %s: every document "
				    "needs apiVersion and kind\n", o.files[i]);
				cJSON_Delete(doc);
				cJSON_Delete(docs);
				goto fail;
			}
			if (strcmp(jstr(doc, "kind"), "List") == 0) {
				items = cJSON_GetObjectItemCaseSensitive(doc,
				    "items");
				while ((el = cJSON_DetachItemFromArray(items,
				    0)) != NULL)
					cJSON_AddItemToArray(all, el);
				cJSON_Delete(doc);
			} else
				cJSON_AddItemToArray(all, doc);
		}
		cJSON_Delete(docs);
	}
	buf_free(&in);
	return all;

fail:
	buf_free(&in);
	cJSON_Delete(all);
	return NULL;
}

/* The resource, namespace and name a document is about. */
static const struct apires *
doc_target(cJSON *doc, const char **ns, const char **name)
{
	const struct apires *r;
	cJSON *md;
	const char *dns;

	r = resolve_kind(jstr(doc, "apiVersion"), jstr(doc, "kind"));
	if (r == NULL)
		return NULL;
	if ((md = cJSON_GetObjectItemCaseSensitive(doc, "metadata")) == NULL)
		md = cJSON_AddObjectToObject(doc, "metadata");
	*name = jstr(md, "name");
	*ns = NULL;
	if (!r->namespaced)
		return r;
	dns = jstr(md, "namespace");
	if (dns != NULL && o.ns != NULL && strcmp(dns, o.ns) != 0) {
		fprintf(stderr, "error: the namespace from the provided object "
		    "\"%s\" does not match the namespace \"%s\"\n", dns, o.ns);
		return NULL;
	}
	if (dns == NULL) {
		cJSON_AddStringToObject(md, "namespace", namespace_of(r));
		dns = jstr(md, "namespace");
	}
	*ns = dns;
	return r;
}

/* create: POST one document to its collection. */
static int
create_one(cJSON *doc)
{
	const struct apires *r;
	const char *ns, *name;
	struct buf path = { 0 };
	struct resp rsp;
	char *body, *type;
	cJSON *made;

	if ((r = doc_target(doc, &ns, &name)) == NULL)
		return 1;
	res_path(&path, r, ns, NULL, NULL);
	body = cJSON_PrintUnformatted(doc);
	http("POST", path.p, "application/json", body, NULL, &rsp);
	free(body);
	buf_free(&path);
	if (rsp.code != 201 && rsp.code != 200) {
		report(&rsp);
		buf_free(&rsp.body);
		return 1;
	}
	made = cJSON_Parse(rsp.body.p);
	if ((name = jstr(jget(made, "metadata"), "name")) == NULL)
		name = "?";
	type = res_type(r);
	printf("%s/%s created\n", type, name);
	free(type);
	cJSON_Delete(made);
	buf_free(&rsp.body);
	return 0;
}

static char *
resource_version(const char *json)
{
	cJSON *j = cJSON_Parse(json);
	const char *rv = jstr(jget(j, "metadata"), "resourceVersion");
	char *s = rv != NULL ? xstrdup(rv) : NULL;

	cJSON_Delete(j);
	return s;
}

/* apply: server-side apply of one document, said as kubectl says it. */
static int
apply_one(cJSON *doc)
{
	const struct apires *r;
	const char *ns, *name, *how;
	struct buf path = { 0 };
	char *body, *type, *before = NULL, *after;
	struct resp rsp;

	if ((r = doc_target(doc, &ns, &name)) == NULL)
		return 1;
	if (name == NULL || *name == '\0') {
		fprintf(stderr, "error: a %s to apply needs metadata.name\n",
		    r->kind);
		return 1;
	}
	res_path(&path, r, ns, name, NULL);
	http("GET", path.p, NULL, NULL, NULL, &rsp);
	if (rsp.code == 200)
		before = resource_version(rsp.body.p);
	else if (rsp.code != 404) {
		report(&rsp);
		buf_free(&rsp.body);
		buf_free(&path);
		return 1;
	}
	buf_free(&rsp.body);
	query_add(&path, "fieldManager", "volray");
	query_add(&path, "force", "true");
	body = cJSON_PrintUnformatted(doc);
	http("PATCH", path.p, APPLY_CTYPE, body, NULL, &rsp);
	free(body);
	buf_free(&path);
	if (rsp.code != 200 && rsp.code != 201) {
		report(&rsp);
		free(before);
		buf_free(&rsp.body);
		return 1;
	}
	after = resource_version(rsp.body.p);
	if (rsp.code == 201 || before == NULL)
		how = "created";
	else if (after != NULL && strcmp(before, after) == 0)
		how = "unchanged";
	else
		how = "configured";
	type = res_type(r);
	printf("%s/%s %s\n", type, name, how);
	free(type);
	free(before);
	free(after);
	buf_free(&rsp.body);
	return 0;
}

/* apply -f and create -f: every document, going on after a failure. */
static int
cmd_apply(int create)
{
	cJSON *docs, *doc;
	int rc = 0;

	if ((docs = load_files()) == NULL)
		return 1;
	cJSON_ArrayForEach(doc, docs)
		rc |= create ? create_one(doc) : apply_one(doc);
	cJSON_Delete(docs);
	return rc;
}

/* DELETE one object with background propagation, said as kubectl says it. */
static int
delete_one(const struct apires *r, const char *ns, const char *name)
{
	struct buf path = { 0 };
	struct resp rsp;
	char *type;

	res_path(&path, r, ns, name, NULL);
	http("DELETE", path.p, "application/json", DELETE_BODY, NULL, &rsp);
	buf_free(&path);
	if (rsp.code == 404 && o.ignore_nf) {
		buf_free(&rsp.body);
		return 0;
	}
	if (rsp.code != 200 && rsp.code != 202) {
		report(&rsp);
		buf_free(&rsp.body);
		return 1;
	}
	type = res_type(r);
	printf("%s \"%s\" deleted\n", type, name);
	free(type);
	buf_free(&rsp.body);
	return 0;
}

/* delete: named objects, those a selector matches, or a file's documents. */
static int
cmd_delete(int argc, char **argv)
{
	const struct apires *r;
	const char *name, *ns;
	struct buf path = { 0 };
	cJSON *docs, *doc;
	const cJSON *el;
	int rest, rc = 0, i;

	if (o.nfiles > 0) {
		if ((docs = load_files()) == NULL)
			return 1;
		cJSON_ArrayForEach(doc, docs) {
			if ((r = doc_target(doc, &ns, &name)) == NULL ||
			    name == NULL)
				rc = 1;
			else
				rc |= delete_one(r, ns, name);
		}
		cJSON_Delete(docs);
		return rc;
	}
	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	ns = namespace_of(r);
	if (name != NULL) {
		rc = delete_one(r, ns, name);
		for (i = rest; i < argc; i++)
			rc |= delete_one(r, ns, argv[i]);
		return rc;
	}
	if (o.selector == NULL && o.fselector == NULL) {
		fprintf(stderr, "error: resource(s) were provided, but no name "
		    "was specified\n");
		return 1;
	}
	res_path(&path, r, ns, NULL, NULL);
	query_add(&path, "labelSelector", o.selector);
	query_add(&path, "fieldSelector", o.fselector);
	docs = list_all(path.p, NULL);
	buf_free(&path);
	if (docs == NULL)
		return 1;
	cJSON_ArrayForEach(el, jget(docs, "items"))
		rc |= delete_one(r, ns, jstr(jget(el, "metadata"), "name"));
	if (cJSON_GetArraySize(jget(docs, "items")) == 0)
		fprintf(stderr, "No resources found\n");
	cJSON_Delete(docs);
	return rc;
}

/* logs: a container's log as the server keeps it. */
static int
cmd_logs(int argc, char **argv)
{
	const struct apires *r;
	struct buf path = { 0 };
	const char *name = argv[0], *slash;
	struct resp rsp;
	char tail[32];

	if (argc != 1) {
		fprintf(stderr, "error: logs takes one pod name\n");
		return 1;
	}
	if ((slash = strchr(name, '/')) != NULL) {
		if (strncmp(name, "pod/", 4) != 0 &&
		    strncmp(name, "pods/", 5) != 0 &&
		    strncmp(name, "po/", 3) != 0) {
			fprintf(stderr, "error: logs reads pods only\n");
			return 1;
		}
		name = slash + 1;
	}
	if ((r = resolve("pods")) == NULL)
		return 1;
	res_path(&path, r, namespace_of(r), name, "log");
	query_add(&path, "container", o.container);
	if (o.tail >= 0) {
		snprintf(tail, sizeof tail, "%ld", o.tail);
		query_add(&path, "tailLines", tail);
	}
	http("GET", path.p, NULL, NULL, "*/*", &rsp);
	buf_free(&path);
	if (rsp.code != 200) {
		report(&rsp);
		buf_free(&rsp.body);
		return 1;
	}
	fwrite(rsp.body.p, 1, rsp.body.len, stdout);
	buf_free(&rsp.body);
	return 0;
}

/* What wait waits for. */
struct waitfor {
	int		 deletion;	/* --for=delete */
	char		*cond, *value;	/* --for=condition=COND[=VALUE] */
	int		 met, gone, expired;
	char		*rv;
	long		 code;
};

/* Does status.conditions have the awaited type with the awaited status? */
static int
condition_met(const struct waitfor *w, const cJSON *obj)
{
	const cJSON *c;
	const char *status;

	cJSON_ArrayForEach(c, jget(jget(obj, "status"), "conditions")) {
		if (jstr(c, "type") == NULL ||
		    strcasecmp(jstr(c, "type"), w->cond) != 0)
			continue;
		status = jstr(c, "status");
		return status != NULL && strcasecmp(status, w->value) == 0;
	}
	return 0;
}

/* Look at one watch event; nonzero ends the watch. */
static int
wait_event(struct waitfor *w, const cJSON *ev)
{
	const char *type = jstr(ev, "type");
	const cJSON *obj = jget(ev, "object");
	const char *rv = jstr(jget(obj, "metadata"), "resourceVersion");

	if (type == NULL)
		return 0;
	if (strcmp(type, "ERROR") == 0) {
		w->expired = 1;
		return 1;
	}
	if (rv != NULL) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
	if (strcmp(type, "DELETED") == 0) {
		w->gone = 1;
		return 1;
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	if (!w->deletion && condition_met(w, obj))
		w->met = 1;
	return w->met;
}

struct stream {
	struct buf	 line;
	struct waitfor	*w;
};

/* Split the watch stream into lines, one JSON event each. */
static size_t
on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;
	char *nl;
	cJSON *ev;
	size_t used;

	buf_add(&s->line, p, size * n);
	curl_easy_getinfo(cl.curl, CURLINFO_RESPONSE_CODE, &s->w->code);
	if (s->w->code != 200)
		return size * n;
	while ((nl = memchr(s->line.p, '\n', s->line.len)) != NULL) {
		*nl = '\0';
		ev = cJSON_Parse(s->line.p);
		used = nl + 1 - s->line.p;
		memmove(s->line.p, nl + 1, s->line.len - used + 1);
		s->line.len -= used;
		if (ev != NULL && wait_event(s->w, ev)) {
			cJSON_Delete(ev);
			return 0;
		}
		cJSON_Delete(ev);
	}
	return size * n;
}

/* Follow a watch from w->rv until the wait is settled or the stream ends. */
static int
wait_watch(const char *path, struct waitfor *w, long left_ms)
{
	struct stream s = { { 0 }, w };
	struct curl_slist *h;
	struct buf p = { 0 };
	char secs[32];
	CURLcode rc;
	struct resp r;

	buf_printf(&p, "%s", path);
	query_add(&p, "watch", "true");
	query_add(&p, "allowWatchBookmarks", "true");
	query_add(&p, "resourceVersion", w->rv);
	snprintf(secs, sizeof secs, "%ld", left_ms / 1000 + 1);
	query_add(&p, "timeoutSeconds", secs);
	buf_add(&s.line, "", 0);
	h = prepare("GET", p.p, NULL, NULL, NULL, left_ms);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(cl.curl);
	curl_slist_free_all(h);
	buf_free(&p);
	if (w->code == 410)
		w->expired = 1;
	else if (w->code != 200 && w->code != 0) {
		r.code = w->code;
		r.body = s.line;
		report(&r);
		buf_free(&s.line);
		return -1;
	}
	buf_free(&s.line);
	if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR &&
	    rc != CURLE_OPERATION_TIMEDOUT && rc != CURLE_PARTIAL_FILE &&
	    rc != CURLE_RECV_ERROR) {
		unreachable(rc);
		return -1;
	}
	return 0;
}

/* Read --for=condition=TYPE[=VALUE] or --for=delete. */
static int
parse_for(struct waitfor *w)
{
	char *eq;

	if (o.forcond == NULL) {
		fprintf(stderr, "error: wait needs --for=condition=COND or "
		    "--for=delete\n");
		return -1;
	}
	if (strcmp(o.forcond, "delete") == 0) {
		w->deletion = 1;
		return 0;
	}
	if (strncmp(o.forcond, "condition=", 10) != 0 ||
	    o.forcond[10] == '\0') {
		fprintf(stderr, "error: unknown --for %s: want condition=COND"
		    "[=VALUE] or delete\n", o.forcond);
		return -1;
	}
	w->cond = xstrdup(o.forcond + 10);
	if ((eq = strchr(w->cond, '=')) != NULL) {
		*eq = '\0';
		w->value = xstrdup(eq + 1);
	} else
		w->value = xstrdup("True");
	return 0;
}

/* wait: read the object, then watch it until the condition holds. */
static int
cmd_wait(int argc, char **argv)
{
	struct waitfor w = { 0 };
	const struct apires *r;
	struct buf path = { 0 }, list = { 0 }, sel = { 0 };
	const char *name;
	long deadline, left, started;
	struct resp rsp;
	int rest, rc = 1;
	cJSON *obj;

	if (parse_for(&w) != 0)
		return 1;
	if ((r = target(argc, argv, &name, &rest)) == NULL)
		return 1;
	if (name == NULL || rest < argc) {
		fprintf(stderr, "error: wait takes one RESOURCE/NAME\n");
		return 1;
	}
	res_path(&path, r, namespace_of(r), name, NULL);
	res_path(&list, r, namespace_of(r), NULL, NULL);
	buf_printf(&sel, "metadata.name=%s", name);
	query_add(&list, "fieldSelector", sel.p);
	deadline = now_ms() + o.timeout_ms;
	for (;;) {
		http("GET", path.p, NULL, NULL, NULL, &rsp);
		if (rsp.code == 404 && w.deletion) {
			w.met = 1;
			break;
		}
		if (rsp.code != 200) {
			report(&rsp);
			buf_free(&rsp.body);
			goto out;
		}
		obj = cJSON_Parse(rsp.body.p);
		buf_free(&rsp.body);
		w.met = !w.deletion && condition_met(&w, obj);
		free(w.rv);
		w.rv = xstrdup(jstr(jget(obj, "metadata"), "resourceVersion") ?
		    jstr(jget(obj, "metadata"), "resourceVersion") : "0");
		cJSON_Delete(obj);
		while (!w.met && !w.gone && !w.expired &&
		    (left = deadline - now_ms()) > 0) {
			started = now_ms();
			if (wait_watch(list.p, &w, left) != 0)
				goto out;
			/* A server that ends watches at once is not spun on. */
			if (now_ms() - started < 100)
				usleep(100000);
		}
		if (w.met || (w.gone && w.deletion)) {
			w.met = 1;
			break;
		}
		if (w.gone && !w.deletion) {
			fprintf(stderr, "error: %s/%s was deleted\n", r->name,
			    name);
			goto out;
		}
		if (deadline - now_ms() <= 0) {
			fprintf(stderr, "error: timed out waiting for the "
			    "condition on %s/%s\n", r->name, name);
			goto out;
		}
		w.expired = 0;
	}
	rc = 0;
	{
		char *type = res_type(r);

		printf("%s/%s %s\n", type, name, w.deletion ? "deleted" :
		    "condition met");
		free(type);
	}
out:
	buf_free(&path);
	buf_free(&list);
	buf_free(&sel);
	free(w.cond);
	free(w.value);
	free(w.rv);
	return rc;
}

/* policy reload: ask the daemon to reload Lua policies and scheduler.yaml. */
static int
cmd_policy(int argc, char **argv)
{
	struct resp rsp;
	cJSON *st;
	const char *msg;

	if (argc != 1 || strcmp(argv[0], "reload") != 0) {
		fprintf(stderr, "error: usage: volray policy reload\n");
		return 1;
	}
	http("POST", RELOAD_PATH, "application/json", "{}", NULL, &rsp);
	if (rsp.code < 200 || rsp.code > 299) {
		report(&rsp);
		if (rsp.code == 404 || rsp.code == 405)
			fprintf(stderr, "volray: this server has no policy "
			    "reload endpoint; send volrayd SIGHUP instead\n");
		buf_free(&rsp.body);
		return 1;
	}
	st = cJSON_Parse(rsp.body.p);
	msg = jstr(st, "message");
	printf("%s\n", msg != NULL && *msg != '\0' ? msg : "policies reloaded");
	cJSON_Delete(st);
	buf_free(&rsp.body);
	return 0;
}

/* version: this client's and the server's. */
static int
cmd_version(void)
{
	const char *gv;
	cJSON *v;

	printf("Client Version: v%s\n", PACKAGE_VERSION);
	if ((v = get_json("/version", NULL)) == NULL)
		return 1;
	gv = jstr(v, "gitVersion");
	printf("Server Version: %s\n", gv != NULL ? gv : "unknown");
	cJSON_Delete(v);
	return 0;
}

static int
res_cmp(const void *a, const void *b)
{
	const struct apires *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c != 0 ? c : strcmp(x->name, y->name);
}

static char *
join(const cJSON *list)
{
	struct buf b = { 0 };
	const cJSON *el;

	buf_add(&b, "", 0);
	cJSON_ArrayForEach(el, list)
		if (cJSON_IsString(el))
			buf_printf(&b, "%s%s", b.len ? "," : "", el->valuestring);
	return b.p;
}

/* Add a row of seven cells, dropping VERBS and CATEGORIES unless wide. */
static void
api_row(struct table *t, char **cells)
{
	int i;

	for (i = t->ncol; i < 7; i++)
		free(cells[i]);
	table_add(t, cells);
}

/* api-resources: the resources discovery found, preferred versions only. */
static int
cmd_api_resources(void)
{
	struct apires *sorted, *r;
	struct table t = { 0 };
	struct buf av = { 0 };
	char *cells[7];
	size_t i, n = 0;

	if (discover() != 0)
		return 1;
	sorted = xrealloc(NULL, cl.nres * sizeof *sorted);
	for (i = 0; i < cl.nres; i++)
		if (cl.res[i].preferred)
			sorted[n++] = cl.res[i];
	qsort(sorted, n, sizeof *sorted, res_cmp);
	if (o.output != NULL && strcmp(o.output, "name") == 0) {
		for (i = 0; i < n; i++)
			printf("%s%s%s\n", sorted[i].name,
			    *sorted[i].group ? "." : "", sorted[i].group);
		free(sorted);
		return 0;
	}
	t.ncol = o.output != NULL && strcmp(o.output, "wide") == 0 ? 7 : 5;
	cells[0] = xstrdup("NAME");
	cells[1] = xstrdup("SHORTNAMES");
	cells[2] = xstrdup("APIVERSION");
	cells[3] = xstrdup("NAMESPACED");
	cells[4] = xstrdup("KIND");
	cells[5] = xstrdup("VERBS");
	cells[6] = xstrdup("CATEGORIES");
	api_row(&t, cells);
	for (i = 0; i < n; i++) {
		r = &sorted[i];
		av.len = 0;
		buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "",
		    r->version);
		cells[0] = xstrdup(r->name);
		cells[1] = join(r->shorts);
		cells[2] = xstrdup(av.p);
		cells[3] = xstrdup(r->namespaced ? "true" : "false");
		cells[4] = xstrdup(r->kind);
		cells[5] = join(r->verbs);
		cells[6] = join(r->categories);
		api_row(&t, cells);
	}
	table_print(&t);
	buf_free(&av);
	free(sorted);
	return 0;
}

/* Parse options anywhere on the line, read the kubeconfig, run the verb. */
int
main(int argc, char **argv)
{
	enum { O_KUBECONFIG = 256, O_FSEL, O_TAIL, O_FOR, O_TIMEOUT,
	    O_REQTIMEOUT, O_IGNORENF, O_MANAGED, O_VERSION };
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
		{ "server", required_argument, NULL, 's' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "all-namespaces", no_argument, NULL, 'A' },
		{ "selector", required_argument, NULL, 'l' },
		{ "field-selector", required_argument, NULL, O_FSEL },
		{ "output", required_argument, NULL, 'o' },
		{ "filename", required_argument, NULL, 'f' },
		{ "container", required_argument, NULL, 'c' },
		{ "tail", required_argument, NULL, O_TAIL },
		{ "for", required_argument, NULL, O_FOR },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "request-timeout", required_argument, NULL, O_REQTIMEOUT },
		{ "ignore-not-found", no_argument, NULL, O_IGNORENF },
		{ "show-managed-fields", no_argument, NULL, O_MANAGED },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, O_VERSION },
		{ NULL, 0, NULL, 0 }
	};
	const char *verb;
	char *end;
	int c, rc;

	while ((c = getopt_long(argc, argv, "s:n:Al:o:f:c:h", longopts,
	    NULL)) != -1) {
		switch (c) {
		case O_KUBECONFIG:
			o.kubeconfig = optarg;
			break;
		case 's':
			o.server = optarg;
			break;
		case 'n':
			o.ns = optarg;
			break;
		case 'A':
			o.all_ns = 1;
			break;
		case 'l':
			o.selector = optarg;
			break;
		case O_FSEL:
			o.fselector = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'f':
			o.files = xrealloc(o.files, (o.nfiles + 1) *
			    sizeof *o.files);
			o.files[o.nfiles++] = optarg;
			break;
		case 'c':
			o.container = optarg;
			break;
		case O_TAIL:
			o.tail = strtol(optarg, &end, 10);
			if (*end != '\0' || *optarg == '\0') {
				fprintf(stderr, "error: bad --tail %s\n",
				    optarg);
				return 1;
			}
			break;
		case O_FOR:
			o.forcond = optarg;
			break;
		case O_TIMEOUT:
		case O_REQTIMEOUT:
			if (parse_duration(optarg) < 0) {
				fprintf(stderr, "error: bad duration %s\n",
				    optarg);
				return 1;
			}
			if (c == O_TIMEOUT)
				o.timeout_ms = parse_duration(optarg);
			else
				o.req_timeout_ms = parse_duration(optarg);
			break;
		case O_IGNORENF:
			o.ignore_nf = 1;
			break;
		case O_MANAGED:
			o.managed = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case O_VERSION:
			printf("volray %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 1) {
		usage(stderr);
		return 1;
	}
	verb = argv[0];
	argc--;
	argv++;
	if (strcmp(verb, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (!known_output(o.output)) {
		fprintf(stderr, "error: unknown output format %s\n", o.output);
		return 1;
	}
	if (kubeconfig_load() != 0)
		return 1;
	if (o.server != NULL) {
		free(cl.server);
		cl.server = xstrdup(o.server);
	}
	while (*cl.server != '\0' && cl.server[strlen(cl.server) - 1] == '/')
		cl.server[strlen(cl.server) - 1] = '\0';
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((cl.curl = curl_easy_init()) == NULL) {
		fprintf(stderr, "error: cannot start libcurl\n");
		return 1;
	}
	if (strcmp(verb, "get") == 0)
		rc = cmd_get(argc, argv);
	else if (strcmp(verb, "apply") == 0 || strcmp(verb, "create") == 0)
		rc = argc == 0 ? cmd_apply(verb[0] == 'c') : (fprintf(stderr,
		    "error: %s takes -f FILE\n", verb), 1);
	else if (strcmp(verb, "delete") == 0)
		rc = cmd_delete(argc, argv);
	else if (strcmp(verb, "logs") == 0)
		rc = cmd_logs(argc, argv);
	else if (strcmp(verb, "wait") == 0)
		rc = cmd_wait(argc, argv);
	else if (strcmp(verb, "policy") == 0)
		rc = cmd_policy(argc, argv);
	else if (strcmp(verb, "version") == 0)
		rc = cmd_version();
	else if (strcmp(verb, "api-resources") == 0)
		rc = cmd_api_resources();
	else {
		fprintf(stderr, "error: unknown command \"%s\"\n", verb);
		usage(stderr);
		rc = 1;
	}
	curl_easy_cleanup(cl.curl);
	cJSON_Delete(cl.docs);
	curl_global_cleanup();
	return rc;
}
