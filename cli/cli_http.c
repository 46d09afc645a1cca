/*
 * The client's side of the API, for volray(1). cli_http_open reads the
 * kubeconfig for the server address, token, CA and namespace of the current
 * context, and sets up one libcurl handle that every request reuses, so the
 * connection is kept alive from request to request. Replies are read whole,
 * except watches, which are split into lines and handed over one event at a
 * time; lists are read in pages of 500 and joined.
 * Discovery, which turns command-line words into resources, is in
 * cli_res.c.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_res.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define PAGE_SIZE	"500"

static struct client {
	CURL			*curl;
	char			*server, *token, *ca_file, *ns;
	char			*cert_file, *key_file;
	struct cli_buf		 ca, cert, key;
	int			 insecure;
	long			 req_timeout_ms;
} cl;

/* Decode base64 (kubeconfig *-data fields) into b; -1 on bad input. */
static int
base64_decode(const char *s, struct cli_buf *b)
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
			cli_buf_add(b, &c, 1);
		}
	}
	return 0;
}

/* The kubeconfig: --kubeconfig, the first of $KUBECONFIG, ~/.kube/config. */
static char *
kubeconfig_path(const char *kubeconfig)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *list, *p, *save, *first = NULL;
	struct cli_buf b = { 0 };

	if (kubeconfig != NULL)
		return xstrdup(kubeconfig);
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
	cli_buf_printf(&b, "%s/.kube/config", home != NULL ? home : ".");
	return b.p;
}

/* The inner member of the list entry with this name (or the first). */
static const cJSON *
named(const cJSON *list, const char *name, const char *inner)
{
	const cJSON *el;

	cJSON_ArrayForEach(el, list) {
		if (name == NULL || (json_str(el, "name") != NULL &&
		    strcmp(json_str(el, "name"), name) == 0))
			return json_at(el, inner);
	}
	return NULL;
}

/* A kubeconfig's FIELD (a file) or FIELD-data (base64) into *file or *data. */
static int
pem_field(const cJSON *obj, const char *field, char **file,
    struct cli_buf *data, const char *path)
{
	char name[64];
	const char *s;

	if ((s = json_str(obj, field)) != NULL)
		*file = xstrdup(s);
	snprintf(name, sizeof name, "%s-data", field);
	if ((s = json_str(obj, name)) != NULL && base64_decode(s, data) != 0) {
		cli_color_errorf("%s: bad %s\n", path, name);
		return -1;
	}
	return 0;
}

/* Take server, credentials and namespace from the current context. */
static int
kubeconfig_load(const char *kubeconfig, const char *server)
{
	const cJSON *cfg, *ctx, *cluster, *user, *v;
	char *path, *cause = NULL;
	cJSON *docs;
	const char *s;

	path = kubeconfig_path(kubeconfig);
	if ((docs = yamljson_load_file(path, &cause)) == NULL) {
		if (server != NULL) {
			free(cause);
			free(path);
			return 0;
		}
		cli_color_errorf("reading kubeconfig %s: %s\n"
		    "(start volrayd and set KUBECONFIG=DATA_DIR/kubeconfig, "
		    "or use --kubeconfig or --server)\n", path, cause);
		free(cause);
		free(path);
		return -1;
	}
	cfg = cJSON_GetArrayItem(docs, 0);
	s = json_str(cfg, "current-context");
	ctx = named(json_at(cfg, "contexts"), s, "context");
	if (ctx == NULL)
		ctx = named(json_at(cfg, "contexts"), NULL, "context");
	cluster = named(json_at(cfg, "clusters"), json_str(ctx, "cluster"),
	    "cluster");
	if (cluster == NULL)
		cluster = named(json_at(cfg, "clusters"), NULL, "cluster");
	user = named(json_at(cfg, "users"), json_str(ctx, "user"), "user");
	if (server == NULL && (s = json_str(cluster, "server")) != NULL)
		cl.server = xstrdup(s);
	if ((s = json_str(user, "token")) != NULL)
		cl.token = xstrdup(s);
	if ((s = json_str(ctx, "namespace")) != NULL && *s != '\0')
		cl.ns = xstrdup(s);
	if (pem_field(cluster, "certificate-authority", &cl.ca_file, &cl.ca,
	    path) != 0 || pem_field(user, "client-certificate", &cl.cert_file,
	    &cl.cert, path) != 0 || pem_field(user, "client-key", &cl.key_file,
	    &cl.key, path) != 0)
		goto fail;
	v = json_at(cluster, "insecure-skip-tls-verify");
	cl.insecure = cJSON_IsTrue(v);
	if (cl.server == NULL && server == NULL) {
		cli_color_errorf("%s: no server in the current context\n",
		    path);
		goto fail;
	}
	cJSON_Delete(docs);
	free(path);
	return 0;
fail:
	cJSON_Delete(docs);
	free(path);
	return -1;
}

/* Read the kubeconfig (server, if given, replaces its address) and start
 * libcurl; -1 after saying why not. */
int
cli_http_open(const struct cli_http_conf *conf)
{
	const char *server = conf->server;

	cl.req_timeout_ms = conf->req_timeout_ms;
	if (kubeconfig_load(conf->kubeconfig, server) != 0)
		return -1;
	if (server != NULL) {
		free(cl.server);
		cl.server = xstrdup(server);
	}
	if (conf->token != NULL) {
		free(cl.token);
		cl.token = xstrdup(conf->token);
	}
	if (conf->ca_file != NULL) {
		free(cl.ca_file);
		cl.ca_file = xstrdup(conf->ca_file);
		cli_buf_free(&cl.ca);
	}
	if (conf->insecure)
		cl.insecure = 1;
	while (*cl.server != '\0' && cl.server[strlen(cl.server) - 1] == '/')
		cl.server[strlen(cl.server) - 1] = '\0';
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if ((cl.curl = curl_easy_init()) == NULL) {
		cli_color_errorf("cannot start libcurl\n");
		return -1;
	}
	return 0;
}

/* The kubeconfig file the client reads (free it). */
char *
cli_http_kubeconfig(const struct cli_http_conf *conf)
{
	return kubeconfig_path(conf->kubeconfig);
}

/* Let go of the handle and of what discovery kept. */
void
cli_http_close(void)
{
	curl_easy_cleanup(cl.curl);
	cli_res_free();
	curl_global_cleanup();
}

/* The context's namespace, else "default". */
const char *
cli_http_namespace(void)
{
	return cl.ns != NULL ? cl.ns : "default";
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	cli_buf_add(arg, p, size * n);
	return size * n;
}

/* Set up the handle for one request; free the returned list after it. */
static struct curl_slist *
prepare(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, long timeout_ms)
{
	struct curl_slist *h = NULL;
	struct cli_buf b = { 0 };
	CURL *c = cl.curl;

	curl_easy_reset(c);
	cli_buf_printf(&b, "%s%s", cl.server, path);
	curl_easy_setopt(c, CURLOPT_URL, b.p);
	cli_buf_free(&b);
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
	cli_buf_printf(&b, "Accept: %s", accept != NULL ? accept :
	    "application/json");
	h = curl_slist_append(h, b.p);
	cli_buf_free(&b);
	if (ctype != NULL) {
		cli_buf_printf(&b, "Content-Type: %s", ctype);
		h = curl_slist_append(h, b.p);
		cli_buf_free(&b);
	}
	if (cl.token != NULL) {
		cli_buf_printf(&b, "Authorization: Bearer %s", cl.token);
		h = curl_slist_append(h, b.p);
		cli_buf_free(&b);
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
	if (cl.cert.len > 0) {
		struct curl_blob blob = { cl.cert.p, cl.cert.len,
		    CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &blob);
	}
	if (cl.key.len > 0) {
		struct curl_blob blob = { cl.key.p, cl.key.len, CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &blob);
	}
#endif
	if (cl.cert_file != NULL)
		curl_easy_setopt(c, CURLOPT_SSLCERT, cl.cert_file);
	if (cl.key_file != NULL)
		curl_easy_setopt(c, CURLOPT_SSLKEY, cl.key_file);
	return h;
}

static void
unreachable(CURLcode rc)
{
	cli_color_error();
	fprintf(stderr, "cannot talk to the server at %s: %s\n",
	    cl.server, curl_easy_strerror(rc));
}

/* Send one request and read the whole reply; code -1 if it failed. */
void
cli_http_request(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, struct cli_http_resp *r)
{
	struct curl_slist *h;
	CURLcode rc;

	memset(r, 0, sizeof *r);
	cli_buf_add(&r->body, "", 0);
	h = prepare(method, path, ctype, body, accept, cl.req_timeout_ms);
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
void
cli_http_report(const struct cli_http_resp *r)
{
	cJSON *st;
	const char *msg, *reason;

	if (r->code < 0)
		return;
	st = cJSON_Parse(r->body.p);
	msg = json_str(st, "message");
	reason = json_str(st, "reason");
	cli_color_prefix(stderr, "Error from server");
	if (msg != NULL && reason != NULL && *reason != '\0')
		fprintf(stderr, " (%s): %s\n", reason, msg);
	else if (msg != NULL)
		fprintf(stderr, ": %s\n", msg);
	else
		fprintf(stderr, ": HTTP %ld: %.300s\n", r->code, r->body.p);
	cJSON_Delete(st);
}

/* GET a JSON document; NULL (reported) unless the server answered 200. */
cJSON *
cli_http_get_json(const char *path, const char *accept)
{
	struct cli_http_resp r;
	cJSON *j = NULL;

	cli_http_request("GET", path, NULL, NULL, accept, &r);
	if (r.code == 200 && (j = cJSON_Parse(r.body.p)) == NULL)
		cli_color_errorf("%s: the server sent bad JSON\n", path);
	else if (r.code != 200)
		cli_http_report(&r);
	cli_buf_free(&r.body);
	return j;
}

/* Append key=value (escaped) to a path; nothing when value is NULL. */
void
cli_http_query_add(struct cli_buf *path, const char *key, const char *value)
{
	char *e;

	if (value == NULL)
		return;
	e = curl_easy_escape(cl.curl, value, 0);
	cli_buf_printf(path, "%c%s=%s", strchr(path->p, '?') ? '&' : '?', key,
	    e);
	curl_free(e);
}

/* Read every page of a list (JSON or Table) into one document. */
cJSON *
cli_http_list(const char *path, const char *accept)
{
	const char *member = accept != NULL ? "rows" : "items", *cont;
	cJSON *all = NULL, *page, *items, *el;
	struct cli_buf p = { 0 };
	char *token = NULL;

	for (;;) {
		p.len = 0;
		cli_buf_printf(&p, "%s", path);
		cli_http_query_add(&p, "limit", PAGE_SIZE);
		cli_http_query_add(&p, "continue", token);
		free(token);
		token = NULL;
		if ((page = cli_http_get_json(p.p, accept)) == NULL) {
			cJSON_Delete(all);
			all = NULL;
			break;
		}
		cont = json_str(page, "metadata.continue");
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
	cli_buf_free(&p);
	return all;
}

struct stream {
	struct cli_buf		 line;
	long			*code;
	cli_http_event_cb	 cb;
	void			*arg;
};

/* Split the watch stream into lines, one JSON event each. */
static size_t
on_stream(char *p, size_t size, size_t n, void *arg)
{
	struct stream *s = arg;
	char *nl;
	cJSON *ev;
	size_t used;

	cli_buf_add(&s->line, p, size * n);
	curl_easy_getinfo(cl.curl, CURLINFO_RESPONSE_CODE, s->code);
	if (*s->code != 200)
		return size * n;
	while ((nl = memchr(s->line.p, '\n', s->line.len)) != NULL) {
		*nl = '\0';
		ev = cJSON_Parse(s->line.p);
		used = nl + 1 - s->line.p;
		memmove(s->line.p, nl + 1, s->line.len - used + 1);
		s->line.len -= used;
		if (ev != NULL && s->cb(ev, s->arg)) {
			cJSON_Delete(ev);
			return 0;
		}
		cJSON_Delete(ev);
	}
	return size * n;
}

/* Follow a watch from rv until cb settles it, the stream ends or time is up. */
int
cli_http_watch(const char *path, const char *rv, long timeout_ms,
    cli_http_event_cb cb, void *arg, long *code)
{
	return cli_http_watch_as(path, rv, timeout_ms, NULL, cb, arg, code);
}

/* The same, asking for objects as accept says (a Table, for get -w). */
int
cli_http_watch_as(const char *path, const char *rv, long timeout_ms,
    const char *accept, cli_http_event_cb cb, void *arg, long *code)
{
	struct stream s = { { 0 }, code, cb, arg };
	struct curl_slist *h;
	struct cli_buf p = { 0 };
	char secs[32];
	CURLcode rc;
	struct cli_http_resp r;

	*code = 0;      /* not a previous watch's status */
	cli_buf_printf(&p, "%s", path);
	cli_http_query_add(&p, "watch", "true");
	cli_http_query_add(&p, "allowWatchBookmarks", "true");
	cli_http_query_add(&p, "resourceVersion", rv);
	snprintf(secs, sizeof secs, "%ld", timeout_ms / 1000 + 1);
	cli_http_query_add(&p, "timeoutSeconds", secs);
	cli_buf_add(&s.line, "", 0);
	h = prepare("GET", p.p, NULL, NULL, accept, timeout_ms);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEFUNCTION, on_stream);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(cl.curl);
	curl_slist_free_all(h);
	cli_buf_free(&p);
	if (*code != 200 && *code != 0 && *code != 410) {
		r.code = *code;
		r.body = s.line;
		cli_http_report(&r);
		cli_buf_free(&s.line);
		return -1;
	}
	cli_buf_free(&s.line);
	if (rc != CURLE_OK && rc != CURLE_WRITE_ERROR &&
	    rc != CURLE_OPERATION_TIMEDOUT && rc != CURLE_PARTIAL_FILE &&
	    rc != CURLE_RECV_ERROR) {
		unreachable(rc);
		return -1;
	}
	return 0;
}

struct passthru {
	FILE		*out;
	struct cli_buf	 err;
	long		*code;
};

/* Copy a 200 reply's bytes out as they come; keep any other reply. */
static size_t
on_passthru(char *p, size_t size, size_t n, void *arg)
{
	struct passthru *t = arg;

	curl_easy_getinfo(cl.curl, CURLINFO_RESPONSE_CODE, t->code);
	if (*t->code != 200) {
		cli_buf_add(&t->err, p, size * n);
		return size * n;
	}
	if (fwrite(p, 1, size * n, t->out) != size * n)
		return 0;
	fflush(t->out);
	return size * n;
}

/* GET a stream (a followed log) and copy it to out until it ends. */
int
cli_http_stream(const char *path, const char *accept, FILE *out)
{
	long code = 0;
	struct passthru t = { out, { 0 }, &code };
	struct curl_slist *h;
	struct cli_http_resp r;
	CURLcode rc;

	cli_buf_add(&t.err, "", 0);
	h = prepare("GET", path, NULL, NULL, accept, 0);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEFUNCTION, on_passthru);
	curl_easy_setopt(cl.curl, CURLOPT_WRITEDATA, &t);
	rc = curl_easy_perform(cl.curl);
	curl_slist_free_all(h);
	if (rc == CURLE_OK)
		curl_easy_getinfo(cl.curl, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200 && code != 0) {
		r.code = code;
		r.body = t.err;
		cli_http_report(&r);
		cli_buf_free(&t.err);
		return -1;
	}
	cli_buf_free(&t.err);
	if (rc != CURLE_OK && rc != CURLE_PARTIAL_FILE) {
		unreachable(rc);
		return -1;
	}
	return 0;
}
