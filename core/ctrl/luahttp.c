/*
 * Outbound HTTP for Lua controllers on libcurl's multi interface.
 *
 * Every request is an entry in a table keyed by who asked (controller and
 * key) and what (method, URL, body). The multi handle tells us, through
 * its socket callback, which sockets to watch and in which direction
 * (one uv_poll_t per socket, attached with curl_multi_assign) and,
 * through its timer callback, when to call it back (one uv_timer_t).
 * When a transfer completes the entry keeps the answer and the owner's
 * key is woken; the next identical call returns the answer and drops the
 * entry. An answer nobody collects within ten minutes is dropped too.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>
#include <lauxlib.h>

#include "ctrl/luaapi.h"
#include "ctrl/luahttp.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luaconv.h"

#define MAX_INFLIGHT	1024
#define MAX_BODY	(8u << 20)
#define KEEP_MS		(600u * 1000)

struct hreq {
	luahttp *h;
	char *id;			/* owner \n key \n method url \n body */
	char *owner, *key;
	CURL *easy;
	struct curl_slist *hdrs;
	char *body;			/* request body (curl reads it) */
	char *resp;			/* response body */
	size_t resp_len, resp_cap;
	long status;
	char *err;			/* connection error or timeout */
	int done;
	uint64_t done_ms;
};

struct luahttp {
	uv_loop_t *loop;
	CURLM *multi;
	uv_timer_t timer;
	hmap *reqs;			/* id -> hreq */
	luahttp_wake_fn wake;
	void *wake_arg;
	char *self;			/* "https://127.0.0.1:6443" */
	char *ca_file;
	luahttp_token_fn token;
	void *token_arg;
	hmap *tokens;			/* user -> token (cached) */
};

/* One watched socket. */
struct sock {
	uv_poll_t poll;
	luahttp *h;
	curl_socket_t fd;
};

static void
req_free(struct hreq *r)
{
	if (r->easy != NULL) {
		curl_multi_remove_handle(r->h->multi, r->easy);
		curl_easy_cleanup(r->easy);
	}
	curl_slist_free_all(r->hdrs);
	free(r->id);
	free(r->owner);
	free(r->key);
	free(r->body);
	free(r->resp);
	free(r->err);
	free(r);
}

/* Move every finished transfer's answer into its entry and wake its key. */
static void
check_done(luahttp *h)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(h->multi, &left)) != NULL) {
		struct hreq *r = NULL;

		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
		if (r == NULL)
			continue;
		if (m->data.result == CURLE_OK)
			curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE,
			    &r->status);
		else
			r->err = xstrdup(curl_easy_strerror(m->data.result));
		curl_multi_remove_handle(h->multi, r->easy);
		curl_easy_cleanup(r->easy);
		r->easy = NULL;
		r->done = 1;
		r->done_ms = uv_now(h->loop);
		if (h->wake != NULL && r->owner != NULL)
			h->wake(h->wake_arg, r->owner, r->key);
	}
}

static void
on_poll(uv_poll_t *p, int status, int events)
{
	struct sock *s = p->data;
	int flags = 0, running;

	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(s->h->multi, s->fd, flags, &running);
	check_done(s->h);
}

static void
on_timer(uv_timer_t *t)
{
	luahttp *h = t->data;
	int running;

	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(h);
}

static void
free_sock(uv_handle_t *hd)
{
	free(hd->data);
}

/* libcurl says which socket to watch, for what, or to stop. */
static int
socket_cb(CURL *e, curl_socket_t fd, int what, void *arg, void *sockp)
{
	luahttp *h = arg;
	struct sock *s = sockp;
	int ev = 0;

	(void)e;
	if (what == CURL_POLL_REMOVE) {
		if (s != NULL) {
			uv_poll_stop(&s->poll);
			uv_close((uv_handle_t *)&s->poll, free_sock);
			curl_multi_assign(h->multi, fd, NULL);
		}
		return 0;
	}
	if (s == NULL) {
		s = xcalloc(1, sizeof *s);
		s->h = h;
		s->fd = fd;
		if (uv_poll_init_socket(h->loop, &s->poll, fd) != 0) {
			free(s);
			return -1;
		}
		s->poll.data = s;
		curl_multi_assign(h->multi, fd, s);
	}
	if (what & CURL_POLL_IN)
		ev |= UV_READABLE;
	if (what & CURL_POLL_OUT)
		ev |= UV_WRITABLE;
	uv_poll_start(&s->poll, ev, on_poll);
	return 0;
}

static int
timer_cb(CURLM *m, long ms, void *arg)
{
	luahttp *h = arg;

	(void)m;
	if (ms < 0)
		uv_timer_stop(&h->timer);
	else
		uv_timer_start(&h->timer, on_timer, (uint64_t)ms, 0);
	return 0;
}

luahttp *
luahttp_new(uv_loop_t *loop)
{
	luahttp *h = xcalloc(1, sizeof *h);

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h->loop = loop;
	h->multi = curl_multi_init();
	h->reqs = hmap_new();
	h->tokens = hmap_new();
	uv_timer_init(loop, &h->timer);
	h->timer.data = h;
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
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
	curl_multi_cleanup(h->multi);
	uv_timer_stop(&h->timer);
	uv_close((uv_handle_t *)&h->timer, NULL);
	free(h->self);
	free(h->ca_file);
	/* The timer handle lives in h: leak h rather than free it early. */
}

void
luahttp_set_wake(luahttp *h, luahttp_wake_fn fn, void *arg)
{
	h->wake = fn;
	h->wake_arg = arg;
}

void
luahttp_set_self(luahttp *h, const char *base, const char *ca_file,
    luahttp_token_fn fn, void *arg)
{
	free(h->self);
	free(h->ca_file);
	h->self = base ? xstrdup(base) : NULL;
	h->ca_file = ca_file ? xstrdup(ca_file) : NULL;
	h->token = fn;
	h->token_arg = arg;
}

int
luahttp_pending(const luahttp *h)
{
	return (int)hmap_count(h->reqs);
}

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	struct hreq *r = arg;
	size_t len = size * n;

	if (r->resp_len + len > MAX_BODY)
		return 0;	/* libcurl fails the transfer: too big */
	if (r->resp_len + len + 1 > r->resp_cap) {
		r->resp_cap = (r->resp_len + len + 1) * 2;
		r->resp = xrealloc(r->resp, r->resp_cap);
	}
	memcpy(r->resp + r->resp_len, p, len);
	r->resp_len += len;
	r->resp[r->resp_len] = '\0';
	return len;
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

/* Start a transfer; NULL with *err when libcurl refuses it. */
static struct hreq *
req_start(luahttp *h, struct luaapi_ctx *c, const char *id,
    const char *method, const char *url, const char *body, size_t body_len,
    struct curl_slist *hdrs, int has_auth, double timeout, char **err)
{
	struct hreq *r = xcalloc(1, sizeof *r);
	CURLMcode mc;

	r->h = h;
	r->id = xstrdup(id);
	r->owner = c->owner ? xstrdup(c->owner) : NULL;
	r->key = c->key ? xstrdup(c->key) : NULL;
	r->hdrs = hdrs;
	r->easy = curl_easy_init();
	curl_easy_setopt(r->easy, CURLOPT_URL, url);
	curl_easy_setopt(r->easy, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(r->easy, CURLOPT_PRIVATE, r);
	curl_easy_setopt(r->easy, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(r->easy, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->easy, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
	curl_easy_setopt(r->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(r->easy, CURLOPT_NOBODY, 1L);
	if (body != NULL) {
		r->body = xmalloc(body_len + 1);
		memcpy(r->body, body, body_len);
		r->body[body_len] = '\0';
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDS, r->body);
		curl_easy_setopt(r->easy, CURLOPT_POSTFIELDSIZE, (long)body_len);
	}
	if (is_self(h, url)) {
		const char *tok = token_for(h, c->user ? c->user->name : NULL);

		if (h->ca_file != NULL)
			curl_easy_setopt(r->easy, CURLOPT_CAINFO, h->ca_file);
		if (tok != NULL && !has_auth) {
			char *a = util_printf("Authorization: Bearer %s", tok);

			r->hdrs = curl_slist_append(r->hdrs, a);
			free(a);
		}
	}
	curl_easy_setopt(r->easy, CURLOPT_HTTPHEADER, r->hdrs);
	if ((mc = curl_multi_add_handle(h->multi, r->easy)) != CURLM_OK) {
		*err = xstrdup(curl_multi_strerror(mc));
		req_free(r);
		return NULL;
	}
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

/*
 * volray.http{method=, url=, body=, headers=, timeout=} -> response, or
 * nil, "pending" while in flight, or nil, error text.
 */
static int
l_http(lua_State *L)
{
	struct luaapi_ctx *c = lua_touserdata(L, lua_upvalueindex(1));
	luahttp *h = c->http;
	const char *method, *url, *body = NULL;
	char *enc = NULL, *id, *err = NULL;
	size_t body_len = 0;
	double timeout = 10;
	struct curl_slist *hdrs = NULL;
	int has_auth = 0, has_ctype = 0, json_body = 0;
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

				if (strpbrk(line, "\r\n") == NULL)
					hdrs = curl_slist_append(hdrs, line);
				free(line);
				has_auth |= strcasecmp(k, "Authorization") == 0;
				has_ctype |= strcasecmp(k, "Content-Type") == 0;
			}
			lua_pop(L, 1);
		}
	}
	if (json_body && !has_ctype)
		hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	id = util_printf("%s\n%s\n%s %s\n%.*s", c->owner ? c->owner : "",
	    c->key ? c->key : "", method, url, (int)body_len, body ? body : "");
	if ((r = hmap_get(h->reqs, id)) != NULL) {
		curl_slist_free_all(hdrs);
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
		curl_slist_free_all(hdrs);
		free(enc);
		free(id);
		lua_pushnil(L);
		lua_pushstring(L, "too many HTTP requests in flight");
		return 2;
	}
	r = req_start(h, c, id, method, url, body, body_len, hdrs, has_auth,
	    timeout, &err);
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
	struct luaapi_ctx *c = lua_touserdata(L, lua_upvalueindex(1));
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

void
luahttp_open(lua_State *L, struct luaapi_ctx *c)
{
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_http, 1);
	lua_setfield(L, -2, "http");
	lua_pushlightuserdata(L, c);
	lua_pushcclosure(L, l_service_url, 1);
	lua_setfield(L, -2, "service_url");
}
