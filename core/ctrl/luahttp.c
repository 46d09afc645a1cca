/*
 * Outbound HTTP for Lua controllers, on the daemon's HTTP client engine
 * (net/hclient.c: libcurl's multi interface on the loop).
 *
 * Every request is an entry in a table keyed by who asked (controller and
 * key) and what (method, URL, body). Two clients carry the transfers: one
 * for the daemon's own URL, which trusts the daemon's CA (the caller's
 * token goes in a header of each request; a remote API's kubeconfig's
 * token or client certificate), and one for every other URL,
 * which carries nothing the script did not give. When a transfer
 * completes the entry keeps the answer and the owner's key is woken; the
 * next identical call returns the answer and drops the entry. An answer
 * nobody collects within ten minutes is dropped too.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <lauxlib.h>

#include "ctrl/luactx.h"
#include "ctrl/luahttp.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"
#include "net/hclient.h"

#define MAX_INFLIGHT	1024
#define KEEP_MS		(600u * 1000)

struct hreq {
	luahttp *h;
	char *id;			/* owner \n key \n method url \n body */
	char *owner, *key;
	hclient *hc;			/* the client carrying it */
	hclient_req *req;		/* NULL once done */
	char *resp;			/* response body */
	size_t resp_len;
	long status;
	char *err;			/* connection error or timeout */
	int done;
	uint64_t done_ms;
};

struct luahttp {
	uv_loop_t *loop;
	hclient *world;			/* any URL, no credentials */
	hclient *own;			/* the daemon's URL, its CA */
	hmap *reqs;			/* id -> hreq */
	luahttp_wake_fn wake;
	void *wake_arg;
	char *self;			/* "https://127.0.0.1:6443" */
	luahttp_token_fn token;
	void *token_arg;
	hmap *tokens;			/* user -> token (cached) */
	char *cert, *key;		/* the remote API's client cert (PEM) */
	size_t cert_len, key_len;
	int node_proxy;			/* pod_url through nodes/NAME/proxy */
};

static void
req_free(struct hreq *r)
{
	hclient_cancel(r->req);
	free(r->id);
	free(r->owner);
	free(r->key);
	free(r->resp);
	free(r->err);
	free(r);
}

/* Keep a finished transfer's answer in its entry and wake its key. */
static void
on_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct hreq *r = arg;
	luahttp *h = r->h;

	r->req = NULL;
	r->status = status;
	if (err != NULL)
		r->err = xstrdup(err);
	else if (len > 0) {
		r->resp = xmalloc(len + 1);
		memcpy(r->resp, body, len + 1);
		r->resp_len = len;
	}
	r->done = 1;
	r->done_ms = uv_now(h->loop);
	if (h->wake != NULL && r->owner != NULL)
		h->wake(h->wake_arg, r->owner, r->key);
}

static hclient *
open_client(uv_loop_t *loop, const char *ca_file, const luahttp *h)
{
	struct hclient_conf conf = { 0 };
	char *cause = NULL;
	hclient *hc;

	conf.ca_file = ca_file;
	if (h != NULL && h->cert != NULL && h->key != NULL) {
		conf.cert_pem = h->cert;
		conf.cert_pem_len = h->cert_len;
		conf.key_pem = h->key;
		conf.key_pem_len = h->key_len;
	}
	if ((hc = hclient_new(loop, &conf, &cause)) == NULL) {
		log_error("volray.http: %s", cause);
		free(cause);
	}
	return hc;
}

luahttp *
luahttp_new(uv_loop_t *loop)
{
	luahttp *h = xcalloc(1, sizeof *h);

	h->loop = loop;
	h->reqs = hmap_new();
	h->tokens = hmap_new();
	h->world = open_client(loop, NULL, NULL);
	return h;
}

static int
free_one(const char *k, void *v, void *arg)
{
	(void)k;
	(void)arg;
	req_free(v);
	return 0;
}

static int
free_str(const char *k, void *v, void *arg)
{
	(void)arg;
	free((char *)k);
	free(v);
	return 0;
}

void
luahttp_free(luahttp *h)
{
	if (h == NULL)
		return;
	hmap_each(h->reqs, free_one, NULL);
	hmap_free(h->reqs);
	hmap_each(h->tokens, free_str, NULL);
	hmap_free(h->tokens);
	hclient_free(h->world);
	hclient_free(h->own);
	free(h->self);
	free(h->cert);
	free(h->key);
	free(h);
}

void
luahttp_set_self_cert(luahttp *h, const char *cert_pem, size_t cert_len,
    const char *key_pem, size_t key_len)
{
	free(h->cert);
	free(h->key);
	h->cert = h->key = NULL;
	h->cert_len = h->key_len = 0;
	if (cert_pem == NULL || key_pem == NULL)
		return;
	h->cert = xmalloc(cert_len + 1);
	memcpy(h->cert, cert_pem, cert_len);
	h->cert[cert_len] = '\0';
	h->cert_len = cert_len;
	h->key = xmalloc(key_len + 1);
	memcpy(h->key, key_pem, key_len);
	h->key[key_len] = '\0';
	h->key_len = key_len;
}

void
luahttp_set_node_proxy(luahttp *h, int on)
{
	h->node_proxy = on;
}

void
luahttp_set_wake(luahttp *h, luahttp_wake_fn fn, void *arg)
{
	h->wake = fn;
	h->wake_arg = arg;
}

/* Fail a request carried by the client about to go (arg). */
static int
fail_own(const char *k, void *v, void *arg)
{
	struct hreq *r = v;

	(void)k;
	if (r->hc != arg || r->done)
		return 0;
	hclient_cancel(r->req);
	r->req = NULL;
	on_done(r, 0, "", 0, "the daemon's address changed");
	return 0;
}

void
luahttp_set_self(luahttp *h, const char *base, const char *ca_file,
    luahttp_token_fn fn, void *arg)
{
	if (h->own != NULL) {
		hmap_each(h->reqs, fail_own, h->own);
		hclient_free(h->own);
	}
	free(h->self);
	h->self = base ? xstrdup(base) : NULL;
	h->own = base ? open_client(h->loop, ca_file, h) : NULL;
	h->token = fn;
	h->token_arg = arg;
}

int
luahttp_pending(const luahttp *h)
{
	return (int)hmap_count(h->reqs);
}

/* Whether url is one of the daemon's own. */
static int
is_self(const luahttp *h, const char *url)
{
	size_t n;

	if (h->self == NULL)
		return 0;
	n = strlen(h->self);
	return strncmp(url, h->self, n) == 0 && (url[n] == '/' ||
	    url[n] == '\0');
}

static const char *
token_for(luahttp *h, const char *user)
{
	char *t;

	if (user == NULL || h->token == NULL)
		return NULL;
	if ((t = hmap_get(h->tokens, user)) != NULL)
		return t;
	if ((t = h->token(h->token_arg, user)) != NULL)
		hmap_put(h->tokens, xstrdup(user), t);
	return t;
}

/*
 * Start a transfer with the script's nhdrs header lines (hdrs has room
 * for two more: a token and the NULL); NULL with *cause when it cannot.
 */
static struct hreq *
req_start(luahttp *h, struct luactx *c, const char *id,
    struct hclient_call *call, char **hdrs, int nhdrs, int has_auth,
    char **cause)
{
	struct hreq *r;
	char *auth = NULL;
	hclient *hc = h->world;

	if (is_self(h, call->url) && h->own != NULL) {
		const char *tok = token_for(h, c->user ? c->user->name : NULL);

		hc = h->own;
		if (tok != NULL && !has_auth)
			hdrs[nhdrs++] = auth = util_printf(
			    "Authorization: Bearer %s", tok);
	}
	hdrs[nhdrs] = NULL;
	if (hc == NULL) {
		*cause = xstrdup("volray.http is not available here");
		free(auth);
		return NULL;
	}
	call->headers = (const char *const *)hdrs;
	r = xcalloc(1, sizeof *r);
	r->h = h;
	r->hc = hc;
	r->req = hclient_start(hc, call, NULL, on_done, r, cause);
	free(auth);
	if (r->req == NULL) {
		free(r);
		return NULL;
	}
	r->id = xstrdup(id);
	r->owner = c->owner ? xstrdup(c->owner) : NULL;
	r->key = c->key ? xstrdup(c->key) : NULL;
	hmap_put(h->reqs, r->id, r);
	return r;
}

/* Drop answers nobody came back for. */
static int
sweep_one(const char *k, void *v, void *arg)
{
	struct hreq *r = v;
	luahttp *h = arg;

	(void)k;
	if (r->done && uv_now(h->loop) - r->done_ms > KEEP_MS) {
		hmap_del(h->reqs, r->id);
		req_free(r);
		return 1;	/* the map changed: stop this pass */
	}
	return 0;
}

/* Sort an object's members by key, recursively, so equal tables encode
 * equally whatever order Lua iterates them in. */
static void
sort_keys(cJSON *t)
{
	cJSON *it, *sorted = NULL, **pp, *next;

	if (t == NULL)
		return;
	for (it = t->child; it != NULL; it = it->next)
		sort_keys(it);
	if (!cJSON_IsObject(t))
		return;
	for (it = t->child; it != NULL; it = next) {
		next = it->next;
		for (pp = &sorted; *pp != NULL && strcmp((*pp)->string,
		    it->string) <= 0; pp = &(*pp)->next)
			;
		it->next = *pp;
		*pp = it;
	}
	t->child = sorted;
	for (it = sorted, next = NULL; it != NULL; next = it, it = it->next)
		it->prev = next;
	if (sorted != NULL)
		sorted->prev = next;	/* cJSON: the head's prev is the tail */
}

static void
push_answer(lua_State *L, struct hreq *r)
{
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, r->status);
	lua_setfield(L, -2, "status");
	lua_pushlstring(L, r->resp ? r->resp : "", r->resp_len);
	lua_setfield(L, -2, "body");
	if (r->resp_len > 0) {
		luaconv_push_json(L, r->resp, r->resp_len);
		lua_setfield(L, -2, "json");
	}
}

static void
free_lines(char **lines, int n)
{
	while (n-- > 0)
		free(lines[n]);
	free(lines);
}

/*
 * volray.http{method=, url=, body=, headers=, timeout=} -> response, or
 * nil, "pending" while in flight, or nil, error text.
 */
static int
l_http(lua_State *L)
{
	struct luactx *c = lua_touserdata(L, lua_upvalueindex(1));
	luahttp *h = c->http;
	const char *method, *url, *body = NULL;
	char *enc = NULL, *id, *err = NULL;
	size_t body_len = 0;
	double timeout = 10;
	char **hdrs = NULL;
	int nhdrs = 0, has_auth = 0, has_ctype = 0, json_body = 0;
	struct hclient_call call = { 0 };
	struct hreq *r;

	luaL_checktype(L, 1, LUA_TTABLE);
	if (h == NULL) {
		lua_pushnil(L);
		lua_pushstring(L, "volray.http is not available here");
		return 2;
	}
	lua_getfield(L, 1, "method");
	method = luaL_optstring(L, -1, "GET");
	lua_getfield(L, 1, "url");
	url = lua_tostring(L, -1);
	if (url == NULL || (strncmp(url, "http://", 7) != 0 &&
	    strncmp(url, "https://", 8) != 0))
		return luaL_error(L, "volray.http: url must be an http:// or "
		    "https:// URL");
	if (strspn(method, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != strlen(method) ||
	    *method == '\0')
		return luaL_error(L, "volray.http: bad method '%s'", method);
	lua_getfield(L, 1, "timeout");
	if (!lua_isnil(L, -1))
		timeout = luaL_checknumber(L, -1);
	if (timeout <= 0 || timeout > 3600)
		return luaL_error(L, "volray.http: timeout must be in (0, 3600] "
		    "seconds");
	lua_getfield(L, 1, "body");
	if (lua_istable(L, -1)) {
		char *cause = NULL;
		cJSON *t = luaconv_to_json(L, lua_gettop(L), &cause);

		if (t == NULL) {
			lua_pushfstring(L, "volray.http: body: %s", cause ?
			    cause : "cannot encode");
			free(cause);
			return lua_error(L);
		}
		sort_keys(t);
		enc = json_print(t);
		cJSON_Delete(t);
		body = enc;
		body_len = strlen(enc);
		json_body = 1;
	} else if (!lua_isnil(L, -1))
		body = luaL_checklstring(L, -1, &body_len);
	lua_getfield(L, 1, "headers");
	if (lua_istable(L, -1)) {
		int t = lua_gettop(L);

		lua_pushnil(L);
		while (lua_next(L, t) != 0) {
			if (lua_type(L, -2) == LUA_TSTRING && lua_isstring(L, -1)) {
				const char *k = lua_tostring(L, -2);
				char *line = util_printf("%s: %s", k,
				    lua_tostring(L, -1));

				if (strpbrk(line, "\r\n") == NULL) {
					hdrs = xrealloc(hdrs, (nhdrs + 3) *
					    sizeof *hdrs);
					hdrs[nhdrs++] = line;
				} else
					free(line);
				has_auth |= strcasecmp(k, "Authorization") == 0;
				has_ctype |= strcasecmp(k, "Content-Type") == 0;
			}
			lua_pop(L, 1);
		}
	}
	if (hdrs == NULL)
		hdrs = xcalloc(2, sizeof *hdrs);	/* room for a token */
	id = util_printf("%s\n%s\n%s %s\n%.*s", c->owner ? c->owner : "",
	    c->key ? c->key : "", method, url, (int)body_len, body ? body : "");
	if ((r = hmap_get(h->reqs, id)) != NULL) {
		free_lines(hdrs, nhdrs);
		free(enc);
		free(id);
		if (!r->done) {
			lua_pushnil(L);
			lua_pushstring(L, "pending");
			return 2;
		}
		hmap_del(h->reqs, r->id);
		if (r->err != NULL) {
			lua_pushnil(L);
			lua_pushstring(L, r->err);
			req_free(r);
			return 2;
		}
		push_answer(L, r);
		req_free(r);
		return 1;
	}
	hmap_each(h->reqs, sweep_one, h);
	if (hmap_count(h->reqs) >= MAX_INFLIGHT) {
		free_lines(hdrs, nhdrs);
		free(enc);
		free(id);
		lua_pushnil(L);
		lua_pushstring(L, "too many HTTP requests in flight");
		return 2;
	}
	call.method = method;
	call.url = url;
	call.body = body;
	call.body_len = body_len;
	if (json_body && !has_ctype)
		call.content_type = "application/json";
	/* At least a millisecond: 0 would mean no timeout. */
	call.timeout_ms = timeout * 1000 < 1 ? 1 : (unsigned)(timeout * 1000);
	r = req_start(h, c, id, &call, hdrs, nhdrs, has_auth, &err);
	free_lines(hdrs, nhdrs);
	free(enc);
	free(id);
	lua_pushnil(L);
	if (r == NULL) {
		lua_pushstring(L, err);
		free(err);
		return 2;
	}
	lua_pushstring(L, "pending");
	return 2;
}

/* volray.service_url(namespace, service, port) -> base URL, no slash. */
static int
l_service_url(lua_State *L)
{
	struct luactx *c = lua_touserdata(L, lua_upvalueindex(1));
	const char *ns = luaL_checkstring(L, 1);
	const char *svc = luaL_checkstring(L, 2);
	const char *port = luaL_checkstring(L, 3);

	if (c->http == NULL || c->http->self == NULL) {
		lua_pushnil(L);
		lua_pushstring(L, "the daemon's own URL is not known yet");
		return 2;
	}
	lua_pushfstring(L, "%s/api/v1/namespaces/%s/services/%s:%s/proxy",
	    c->http->self, ns, svc, port);
	return 1;
}

/*
 * volray.pod_url(namespace, pod, port, node) -> base URL, no slash: the
 * API server's node proxy to the agent endpoint's /volray/proxy path of
 * that pod, when the daemon goes that way (luahttp_set_node_proxy); nil
 * otherwise, and the caller uses the service proxy.
 */
static int
l_pod_url(lua_State *L)
{
	struct luactx *c = lua_touserdata(L, lua_upvalueindex(1));
	const char *ns = luaL_checkstring(L, 1);
	const char *pod = luaL_checkstring(L, 2);
	lua_Integer port = luaL_checkinteger(L, 3);
	const char *node = luaL_checkstring(L, 4);

	if (c->http == NULL || c->http->self == NULL ||
	    !c->http->node_proxy || *node == '\0') {
		lua_pushnil(L);
		return 1;
	}
	lua_pushfstring(L, "%s/api/v1/nodes/%s/proxy/volray/proxy/%s/%s/%d",
	    c->http->self, node, ns, pod, (int)port);
	return 1;
}

void
luahttp_open(lua_State *L, struct luactx *c)
{
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_http, 1);
	lua_setfield(L, -2, "http");
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_service_url, 1);
	lua_setfield(L, -2, "service_url");
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_pod_url, 1);
	lua_setfield(L, -2, "pod_url");
}
