/*
 * The client's side of the API, for volray(1). cli_http_open takes the
 * server address, credentials, CA and namespace of the kubeconfig's
 * current context (lib/kubecfg.c reads it, as for volrayd), replaces
 * them with the global flags' values, and sets up one libcurl handle
 * that every request reuses, so the connection is kept alive from request
 * to request. Replies are read whole, except watches, which are split
 * into lines and handed over one event at a time; lists are read in pages
 * of 500 and joined.
 * Discovery, which turns command-line words into resources, is in
 * cli_res.c, above this file: it asks to be told when the connection
 * closes (cli_http_on_close), to forget what it learnt of this server.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "lib/json.h"
#include "lib/kubecfg.h"
#include "lib/xmalloc.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define PAGE_SIZE	"500"

#if !CURL_AT_LEAST_VERSION(7, 77, 0)
/* No blobs: a PEM from a *-data field cannot be handed to curl. */
#define CURLOPT_CAINFO_BLOB	((CURLoption)0)
#define CURLOPT_SSLCERT_BLOB	((CURLoption)0)
#define CURLOPT_SSLKEY_BLOB	((CURLoption)0)
#endif

static struct client {
	CURL			*curl;
	struct kubecfg		*kc;	/* the kubeconfig's, then the flags' */
	long			 req_timeout_ms;
	void			(*on_close)(void);
} cl;

/*
 * The current context of the kubeconfig (lib/kubecfg.c reads it). With
 * --server the kubeconfig is optional: a missing or empty one is passed
 * over quietly, one that cannot be used with a warning, and the flags
 * alone say where to connect.
 */
static int
kubeconfig_load(const char *kubeconfig, const char *server)
{
	char *path, *cause;
	struct stat sb;

	if (kubecfg_load(kubeconfig, NULL, &cl.kc, &cause) == 0)
		return 0;
	path = kubecfg_path(kubeconfig);
	if (server == NULL) {
		cli_color_errorf("reading kubeconfig: %s\n%s", cause,
		    stat(path, &sb) == 0 ? "" : "(start volrayd and set "
		    "KUBECONFIG=DATA_DIR/kubeconfig, or use --kubeconfig or "
		    "--server)\n");
		free(cause);
		free(path);
		return -1;
	}
	if (stat(path, &sb) == 0 && sb.st_size > 0) {
		cli_color_prefix(stderr, "Warning");
		fprintf(stderr, ": not using kubeconfig: %s\n", cause);
	}
	free(cause);
	free(path);
	cl.kc = xcalloc(1, sizeof *cl.kc);
	cl.kc->ns = xstrdup("default");
	return 0;
}

/* Read the kubeconfig (server, if given, replaces its address) and start
 * libcurl; -1 after saying why not. */
int
cli_http_open(const struct cli_http_conf *conf)
{
	struct kubecfg *kc;
	size_t n;

	cl.req_timeout_ms = conf->req_timeout_ms;
	if (kubeconfig_load(conf->kubeconfig, conf->server) != 0)
		return -1;
	kc = cl.kc;
	if (conf->server != NULL) {
		free(kc->server);
		kc->server = xstrdup(conf->server);
	}
	if (conf->token != NULL) {
		free(kc->token);
		kc->token = xstrdup(conf->token);
	}
	if (conf->ca_file != NULL) {
		free(kc->ca.data);
		free(kc->ca.file);
		kc->ca.data = NULL;
		kc->ca.len = 0;
		kc->ca.file = xstrdup(conf->ca_file);
	}
	if (conf->insecure)
		kc->insecure = 1;
	n = strlen(kc->server);
	while (n > 0 && kc->server[n - 1] == '/')
		kc->server[--n] = '\0';
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
	return kubecfg_path(conf->kubeconfig);
}

void
cli_http_on_close(void (*fn)(void))
{
	cl.on_close = fn;
}

/* Let go of the handle, and tell discovery to let go of what it kept. */
void
cli_http_close(void)
{
	curl_easy_cleanup(cl.curl);
	if (cl.on_close != NULL)
		cl.on_close();
	curl_global_cleanup();
	kubecfg_free(cl.kc);
	cl.kc = NULL;
}

/* The context's namespace, else "default". */
const char *
cli_http_namespace(void)
{
	return cl.kc != NULL ? cl.kc->ns : "default";
}

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	cli_buf_add(arg, p, size * n);
	return size * n;
}

/* Hand curl a PEM by its file when it came from one, else its bytes. */
static void
pem_opt(CURL *c, const struct kubecfg_pem *pem, CURLoption file_opt,
    CURLoption blob_opt)
{
	if (pem->file != NULL)
		curl_easy_setopt(c, file_opt, pem->file);
#if CURL_AT_LEAST_VERSION(7, 77, 0)
	else if (pem->data != NULL) {
		struct curl_blob blob = { pem->data, pem->len, CURL_BLOB_COPY };

		curl_easy_setopt(c, blob_opt, &blob);
	}
#else
	(void)blob_opt;
#endif
}

/* Set up the handle for one request; free the returned list after it. */
static struct curl_slist *
prepare(const char *method, const char *path, const char *ctype,
    const char *body, size_t body_len, const char *accept, long timeout_ms)
{
	struct curl_slist *h = NULL;
	struct cli_buf b = { 0 };
	struct kubecfg *kc = cl.kc;
	CURL *c = cl.curl;

	curl_easy_reset(c);
	cli_buf_printf(&b, "%s%s", kc->server, path);
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
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)body_len);
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
	if (kc->token != NULL) {
		cli_buf_printf(&b, "Authorization: Bearer %s", kc->token);
		h = curl_slist_append(h, b.p);
		cli_buf_free(&b);
	}
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (kc->insecure) {
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	pem_opt(c, &kc->ca, CURLOPT_CAINFO, CURLOPT_CAINFO_BLOB);
	pem_opt(c, &kc->cert, CURLOPT_SSLCERT, CURLOPT_SSLCERT_BLOB);
	pem_opt(c, &kc->key, CURLOPT_SSLKEY, CURLOPT_SSLKEY_BLOB);
	return h;
}

static void
unreachable(CURLcode rc)
{
	cli_color_error();
	fprintf(stderr, "cannot talk to the server at %s: %s\n",
	    cl.kc->server, curl_easy_strerror(rc));
}

/* Send one request and read the whole reply; code -1 if it failed. */
void
cli_http_request(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, struct cli_http_resp *r)
{
	cli_http_request_bytes(method, path, ctype, body, body ? strlen(body) :
	    0, accept, r);
}

void
cli_http_request_bytes(const char *method, const char *path,
    const char *ctype, const char *body, size_t len, const char *accept,
    struct cli_http_resp *r)
{
	struct curl_slist *h;
	CURLcode rc;

	memset(r, 0, sizeof *r);
	cli_buf_add(&r->body, "", 0);
	h = prepare(method, path, ctype, body, len, accept, cl.req_timeout_ms);
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
	h = prepare("GET", p.p, NULL, NULL, 0, accept, timeout_ms);
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
	h = prepare("GET", path, NULL, NULL, 0, accept, 0);
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
