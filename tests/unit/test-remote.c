/*
 * Tests for the remote client (client/remote.c) against a scripted fake
 * API server: volray's own HTTP server (net/http.c) on its own loop in a
 * second thread, so that a synchronous write, which blocks the client's
 * loop, still gets its answer. The server answers each request from rules
 * the test sets (a method, a path and a piece of the query; a status and a
 * body; each used once, in order), answers a list no rule names with an
 * empty list, and keeps a watch no rule names open as a stream the test
 * writes to (push) and ends (end_watch) through a uv_async. It records
 * every request (method, path, query, Content-Type, body, time) for the
 * test to check. The client's loop runs in the main thread, stepped until
 * a condition holds or a deadline passes; a subscriber on the mirror
 * records its events.
 */
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "client/client.h"
#include "client/remote.h"
#include "client/remote_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/http.h"
#include "registry/resource.h"

#define TIMEOUT_MS	5000
#define MAXEV		4096

/* --- the fake API server, on sloop in the server thread ------------------ */

struct sreq {
	char		*method, *path, *query, *ctype, *body;
	uint64_t	 ns;		/* uv_hrtime when it came */
};

struct rule {
	char		*method, *path, *qhas;
	int		 status;
	char		*body;
	int		 used;
};

enum cmd_op { CMD_PUSH, CMD_END, CMD_STOP };

struct cmd {
	enum cmd_op	 op;
	char		*path;
	char		*data;
	struct cmd	*next;
};

/* An open watch: the newest for its path. */
struct wslot {
	char		 path[128];
	http_req	*req;
};

static uv_loop_t sloop;
static uv_async_t cmd_async;
static http_server *srv;
static atomic_int port;
static atomic_int watch_closes;		/* watches the client closed */

/* Shared between the threads, under mu. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct sreq *reqs;
static int nreqs, capreqs;
static struct rule rules[128];
static int nrules;
static struct cmd *cmds, **cmds_tail = &cmds;

/* The server thread's own. */
static struct wslot slots[8];

static uint64_t
now_ms(void)
{
	return uv_hrtime() / 1000000u;
}

static char *
dup_or_empty(const char *s)
{
	return strdup(s != NULL ? s : "");
}

static void
on_watch_close(http_req *req, void *arg)
{
	struct wslot *s = arg;

	atomic_fetch_add(&watch_closes, 1);
	if (s->req == req)
		s->req = NULL;
	http_stream_end(req);		/* only frees it now */
}

static struct wslot *
slot_of(const char *path, int make)
{
	int i;

	for (i = 0; i < (int)(sizeof slots / sizeof slots[0]); i++)
		if (strcmp(slots[i].path, path) == 0)
			return &slots[i];
	if (!make)
		return NULL;
	for (i = 0; i < (int)(sizeof slots / sizeof slots[0]); i++)
		if (slots[i].path[0] == '\0') {
			snprintf(slots[i].path, sizeof slots[i].path, "%s",
			    path);
			return &slots[i];
		}
	return NULL;
}

static void
respond_json(http_req *req, int status, const char *body)
{
	http_respond(req, status, "application/json", body, strlen(body));
}

static void
handler(http_req *req, void *arg)
{
	struct sreq *r;
	struct wslot *s;
	int i, status = 0;
	char *body = NULL;

	(void)arg;
	pthread_mutex_lock(&mu);
	if (nreqs == capreqs) {
		capreqs = capreqs ? capreqs * 2 : 64;
		reqs = realloc(reqs, (size_t)capreqs * sizeof *reqs);
	}
	r = &reqs[nreqs++];
	r->method = strdup(req->method);
	r->path = strdup(req->path);
	r->query = strdup(req->query);
	r->ctype = dup_or_empty(http_req_header(req, "Content-Type"));
	r->body = strdup(req->body);
	r->ns = uv_hrtime();
	for (i = 0; i < nrules; i++) {
		struct rule *u = &rules[i];

		if (u->used || strcmp(u->method, req->method) != 0 ||
		    strcmp(u->path, req->path) != 0 ||
		    strstr(req->query, u->qhas) == NULL)
			continue;
		u->used = 1;
		status = u->status;
		body = strdup(u->body);
		break;
	}
	pthread_mutex_unlock(&mu);

	if (body != NULL) {
		respond_json(req, status, body);
		free(body);
	} else if (strcmp(req->method, "GET") == 0 &&
	    strstr(req->query, "watch=1") != NULL) {
		http_stream_begin(req, 200, "application/json");
		s = slot_of(req->path, 1);
		if (s->req != NULL)
			http_stream_end(s->req);
		s->req = req;
		http_req_on_close(req, on_watch_close, s);
	} else if (strcmp(req->method, "GET") == 0)
		respond_json(req, 200, "{\"kind\":\"List\",\"apiVersion\":\"v1\","
		    "\"metadata\":{\"resourceVersion\":\"1\"},\"items\":[]}");
	else
		respond_json(req, 404, "{\"kind\":\"Status\",\"apiVersion\":"
		    "\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\","
		    "\"code\":404}");
}

static void
on_cmd(uv_async_t *a)
{
	struct cmd *c, *list;
	struct wslot *s;
	int i;

	pthread_mutex_lock(&mu);
	list = cmds;
	cmds = NULL;
	cmds_tail = &cmds;
	pthread_mutex_unlock(&mu);
	while ((c = list) != NULL) {
		list = c->next;
		s = c->path != NULL ? slot_of(c->path, 0) : NULL;
		switch (c->op) {
		case CMD_PUSH:
			if (s == NULL || s->req == NULL)
				fprintf(stderr, "push: no watch on %s\n",
				    c->path);
			else
				http_stream_write_copy(s->req, c->data,
				    strlen(c->data));
			break;
		case CMD_END:
			if (s != NULL && s->req != NULL) {
				http_stream_end(s->req);
				s->req = NULL;
			}
			break;
		case CMD_STOP:
			for (i = 0; i < (int)(sizeof slots /
			    sizeof slots[0]); i++)
				if (slots[i].req != NULL) {
					http_stream_end(slots[i].req);
					slots[i].req = NULL;
				}
			http_server_close(srv);
			uv_close((uv_handle_t *)a, NULL);
			break;
		}
		free(c->path);
		free(c->data);
		free(c);
	}
}

static void *
server_run(void *arg)
{
	(void)arg;
	uv_run(&sloop, UV_RUN_DEFAULT);
	return NULL;
}

/* --- the test's side of the script --------------------------------------- */

static void
send_cmd(enum cmd_op op, const char *path, const char *data)
{
	struct cmd *c = calloc(1, sizeof *c);

	c->op = op;
	c->path = path != NULL ? strdup(path) : NULL;
	c->data = data != NULL ? strdup(data) : NULL;
	pthread_mutex_lock(&mu);
	*cmds_tail = c;
	cmds_tail = &c->next;
	pthread_mutex_unlock(&mu);
	uv_async_send(&cmd_async);
}

/* Write data to the open watch of path. */
static void
push(const char *path, const char *data)
{
	send_cmd(CMD_PUSH, path, data);
}

/* End the open watch of path (200, the stream's last chunk). */
static void
end_watch(const char *path)
{
	send_cmd(CMD_END, path, NULL);
}

/* Answer the next request of method on path whose query has qhas. */
static void
rule(const char *method, const char *path, const char *qhas, int status,
    const char *body)
{
	struct rule *u;

	pthread_mutex_lock(&mu);
	u = &rules[nrules++];
	u->method = strdup(method);
	u->path = strdup(path);
	u->qhas = strdup(qhas);
	u->status = status;
	u->body = strdup(body);
	u->used = 0;
	pthread_mutex_unlock(&mu);
}

static int
rules_left(void)
{
	int i, n = 0;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nrules; i++)
		n += !rules[i].used;
	pthread_mutex_unlock(&mu);
	return n;
}

static int
nreq(void)
{
	int n;

	pthread_mutex_lock(&mu);
	n = nreqs;
	pthread_mutex_unlock(&mu);
	return n;
}

/* The index of the first request from index from that matches, or -1. */
static int
find_req(int from, const char *method, const char *path, const char *qhas)
{
	int i, found = -1;

	pthread_mutex_lock(&mu);
	for (i = from; i < nreqs && found < 0; i++)
		if (strcmp(reqs[i].method, method) == 0 &&
		    strcmp(reqs[i].path, path) == 0 &&
		    strstr(reqs[i].query, qhas) != NULL)
			found = i;
	pthread_mutex_unlock(&mu);
	return found;
}

/* A copy of request i: its strings stay valid (they are never freed
   before the end). */
static struct sreq
req_at(int i)
{
	struct sreq r;

	pthread_mutex_lock(&mu);
	r = reqs[i];
	pthread_mutex_unlock(&mu);
	return r;
}

static void
server_reset(void)
{
	int i;

	pthread_mutex_lock(&mu);
	for (i = 0; i < nrules; i++) {
		free(rules[i].method);
		free(rules[i].path);
		free(rules[i].qhas);
		free(rules[i].body);
	}
	nrules = 0;
	pthread_mutex_unlock(&mu);
}

/* --- the client's side, on loop in the main thread ----------------------- */

static uv_loop_t loop;
static uv_timer_t tick;

static struct ev {
	enum store_event_type type;
	char key[96];
	uint64_t rev;
} evs[MAXEV];
static int nev;
static int synced_calls, synced_saw;
static remote *cur;

/* A tick every 5 ms, so that UV_RUN_ONCE returns while the server
   thread works. */
static void
on_tick(uv_timer_t *t)
{
	(void)t;
}

/* Run the loop until cond holds or TIMEOUT_MS passed. */
/* client_bind_async's answer. */
static int async_code;
static char async_reason[64];
/* arg, when given, names a pod of "default": its node in the mirror
   when the answer came. */
static char async_node[64];

static void
on_async(void *arg, struct reg_result *res)
{
	const store_obj *o;

	if (arg != NULL) {
		o = client_get(remote_client(cur), "pods", "default", arg);
		snprintf(async_node, sizeof async_node, "%s", o != NULL ?
		    o->node_name : "(none)");
	}
	async_code = res->code;
	snprintf(async_reason, sizeof async_reason, "%s",
	    json_str(res->body, "reason") ? json_str(res->body, "reason") :
	    "");
	cJSON_Delete(res->body);
}

#define WAIT(cond) do {							\
	uint64_t end_ = now_ms() + TIMEOUT_MS;				\
	while (!(cond) && now_ms() < end_)				\
		uv_run(&loop, UV_RUN_ONCE);				\
} while (0)

/* Run the loop for ms. */
static void
spin(uint64_t ms)
{
	uint64_t end = now_ms() + ms;

	while (now_ms() < end)
		uv_run(&loop, UV_RUN_ONCE);
}

static void
on_event(void *arg, const store_event *e)
{
	struct ev *v;

	(void)arg;
	if (nev == MAXEV)
		return;
	v = &evs[nev++];
	v->type = e->type;
	snprintf(v->key, sizeof v->key, "%s", e->obj->key);
	v->rev = e->obj->rev;
}

static int
ev_is(int i, enum store_event_type type, const char *key, uint64_t rev)
{
	if (i >= nev) {
		fprintf(stderr, "event %d: none (want %d %s %llu)\n", i, type,
		    key, (unsigned long long)rev);
		return 0;
	}
	if (evs[i].type == type && strcmp(evs[i].key, key) == 0 &&
	    evs[i].rev == rev)
		return 1;
	fprintf(stderr, "event %d: %d %s %llu (want %d %s %llu)\n", i,
	    evs[i].type, evs[i].key, (unsigned long long)evs[i].rev, type,
	    key, (unsigned long long)rev);
	return 0;
}

static void
on_synced(void *arg)
{
	client *c = remote_client(cur);

	(void)arg;
	synced_calls++;
	/* Every informer has listed: both pages of pods, the configmaps. */
	synced_saw = remote_synced(cur) &&
	    client_get(c, "pods", "ns1", "p1") != NULL &&
	    client_get(c, "pods", "ns1", "p3") != NULL &&
	    client_get(c, "configmaps", "ns1", "cm1") != NULL;
}

/* The mirror's revision of an object, or 0 when it has none. */
static uint64_t
rev_of(const char *res, const char *ns, const char *name)
{
	const store_obj *o = client_get(remote_client(cur), res, ns, name);

	return o != NULL ? o->rev : 0;
}

static const char *const mirrored[] = { "pods", "configmaps", NULL };

static remote *
start_remote(const char *server)
{
	struct remote_conf conf;
	struct kubecfg kc;
	char *cause = NULL;
	remote *rm;

	memset(&kc, 0, sizeof kc);
	kc.server = (char *)server;
	memset(&conf, 0, sizeof conf);
	conf.user_agent = "test-remote/1";
	conf.resources = mirrored;
	conf.on_synced = on_synced;
	rm = remote_new(&loop, &kc, &conf, &cause);
	CHECK(rm != NULL);
	if (rm == NULL) {
		fprintf(stderr, "remote_new: %s\n", cause);
		exit(1);
	}
	CHECK_STR(remote_server(rm), server);
	client_subscribe(remote_client(rm), on_event, NULL);
	nev = 0;
	synced_calls = synced_saw = 0;
	return rm;
}

static void
stop_remote(remote *rm)
{
	client_free(remote_client(rm));
	spin(20);		/* the handles close on the loop */
	cur = NULL;
}

static char *
server_url(void)
{
	return util_printf("http://127.0.0.1:%d", atomic_load(&port));
}

/* A pod, with or without its kind (a list's items come without). */
static char *
pod(const char *name, int rv, int kind, const char *extra)
{
	return util_printf("{%s\"metadata\":{\"name\":\"%s\",\"namespace\":"
	    "\"ns1\",\"uid\":\"u-%s\",\"resourceVersion\":\"%d\"},\"spec\":"
	    "{}%s}", kind ? "\"apiVersion\":\"v1\",\"kind\":\"Pod\"," : "",
	    name, name, rv, extra != NULL ? extra : "");
}

/* One line of a watch stream. */
static char *
event(const char *type, char *obj)
{
	char *s = util_printf("{\"type\":\"%s\",\"object\":%s}\n", type, obj);

	free(obj);
	return s;
}

static char *
bookmark(int rv)
{
	return util_printf("{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"Pod\","
	    "\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"%d\"}}}"
	    "\n", rv);
}

/* A list of pods: items (a JSON array's inside), its resourceVersion. */
static void
list_rule(const char *path, const char *qhas, const char *items, int rv,
    const char *cont)
{
	char *b = util_printf("{\"kind\":\"List\",\"apiVersion\":\"v1\","
	    "\"metadata\":{\"resourceVersion\":\"%d\"%s%s%s},\"items\":[%s]}",
	    rv, cont ? ",\"continue\":\"" : "", cont ? cont : "",
	    cont ? "\"" : "", items);

	rule("GET", path, qhas, 200, b);
	free(b);
}

/* The watch request, from index from, on path at resourceVersion rv. */
static int
wait_watch(int from, const char *path, int rv)
{
	char *q = util_printf("resourceVersion=%d&", rv);
	int i = -1;

	WAIT((i = find_req(from, "GET", path, q)) >= 0);
	if (i < 0)
		fprintf(stderr, "no watch of %s at %d\n", path, rv);
	else
		CHECK(strstr(req_at(i).query, "watch=1") != NULL);
	free(q);
	return i;
}

/* What the log says from now until capture_end: stderr to a file. */
static FILE *capf;
static int saved_stderr = -1;

static void
capture_begin(void)
{
	fflush(stderr);
	capf = tmpfile();
	saved_stderr = dup(2);
	dup2(fileno(capf), 2);
}

static char *
capture_end(void)
{
	char *s;
	long n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	n = ftell(capf);
	rewind(capf);
	s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, capf) != (size_t)n)
		s[0] = '\0';
	fclose(capf);
	fputs(s, stderr);	/* nothing is lost */
	return s;
}

/*
 * Whether request j came at least ms after request i, less 5 ms: the
 * client's timers run on the loop's clock, cached per turn of the loop
 * and coarse (CLOCK_MONOTONIC_COARSE), which may lag uv_hrtime by a few
 * milliseconds (more under valgrind). Without a backoff the gap is tens
 * of microseconds.
 */
static int
gap(int i, int j, uint64_t ms)
{
	uint64_t d = (req_at(j).ns - req_at(i).ns) / 1000;

	if (d + 5000 >= ms * 1000)
		return 1;
	fprintf(stderr, "requests %d and %d: %llu us apart, want %llu ms\n",
	    i, j, (unsigned long long)d, (unsigned long long)ms);
	return 0;
}

/* --- the informers ------------------------------------------------------- */

static void
test_informers(void)
{
	const char *P = "/api/v1/pods", *CM = "/api/v1/configmaps";
	char *url = server_url(), *p1, *p2, *items, *l1, *l2, *l3, *l4, *s,
	    *log;
	const char *unnamed = "{\"metadata\":{\"namespace\":\"ns1\"}}";
	client *c;
	cJSON *t;
	size_t half;
	int i, w, from, closes, nev0;
	char *v;

	server_reset();
	/* Two pages of pods (the second named by a token that needs
	   escaping), the configmaps in one. */
	p1 = pod("p1", 3, 0, NULL);
	p2 = pod("p2", 4, 0, NULL);
	items = util_printf("%s,%s", p1, p2);
	list_rule(P, "limit=500", items, 10, "c+1/2==");
	free(items);
	free(p1);
	free(p2);
	p1 = pod("p3", 9, 1, NULL);
	/* An item without a name is skipped, not a crash. */
	items = util_printf("%s,%s", unnamed, p1);
	list_rule(P, "continue=", items, 10, NULL);
	free(items);
	free(p1);
	list_rule(CM, "limit=500", "{\"metadata\":{\"name\":\"cm1\","
	    "\"namespace\":\"ns1\",\"resourceVersion\":\"7\"}}", 8, NULL);

	cur = start_remote(url);
	c = remote_client(cur);
	CHECK(!remote_synced(cur));
	WAIT(synced_calls > 0);
	CHECK(synced_calls == 1);
	CHECK(synced_saw);
	CHECK(remote_synced(cur));

	/* 1. Pagination: both pages in the mirror, with kind. */
	CHECK(rev_of("pods", "ns1", "p1") == 3);
	CHECK(rev_of("pods", "ns1", "p2") == 4);
	CHECK(rev_of("pods", "ns1", "p3") == 9);
	CHECK(rev_of("configmaps", "ns1", "cm1") == 7);
	t = client_get_tree(c, resource_find("", "v1", "pods"), "ns1", "p1");
	CHECK_STR(json_str(t, "kind"), "Pod");
	CHECK_STR(json_str(t, "apiVersion"), "v1");
	cJSON_Delete(t);
	t = client_get_tree(c, resource_find("", "v1", "configmaps"), "ns1",
	    "cm1");
	CHECK_STR(json_str(t, "kind"), "ConfigMap");
	cJSON_Delete(t);
	{
		store_obj *const *objs;

		CHECK(client_list(c, "pods", NULL, &objs) == 3);
	}
	CHECK(nev == 4);
	i = find_req(0, "GET", P, "continue=");
	CHECK(i >= 0);
	if (i >= 0) {
		v = http_query_get(req_at(i).query, "continue");
		CHECK_STR(v, "c+1/2==");
		free(v);
		v = http_query_get(req_at(i).query, "limit");
		CHECK_STR(v, "500");
		free(v);
	}
	i = find_req(0, "GET", P, "limit=500");
	CHECK(i >= 0 && strstr(req_at(i).query, "continue") == NULL);
	CHECK(rules_left() == 0);

	/* The watches start from the lists' resourceVersions. */
	w = wait_watch(0, P, 10);
	CHECK(w >= 0 && strstr(req_at(w).query,
	    "allowWatchBookmarks=true") != NULL);
	CHECK(wait_watch(0, CM, 8) >= 0);

	/* 2. Events cut anywhere: mid-line, several in one chunk. */
	nev0 = nev;
	l1 = event("ADDED", pod("p4", 11, 1, NULL));
	l2 = event("MODIFIED", pod("p1", 12, 1, ",\"status\":{\"phase\":"
	    "\"Running\"}"));
	l3 = event("DELETED", pod("p2", 13, 1, NULL));
	l4 = bookmark(20);
	half = strlen(l1) / 2;
	s = strndup(l1, half);
	push(P, s);
	free(s);
	spin(50);
	CHECK(rev_of("pods", "ns1", "p4") == 0);
	CHECK(nev == nev0);
	s = util_printf("%s%s%.20s", l1 + half, l2, l3);
	push(P, s);
	free(s);
	WAIT(rev_of("pods", "ns1", "p1") == 12);
	CHECK(rev_of("pods", "ns1", "p1") == 12);
	CHECK(rev_of("pods", "ns1", "p4") == 11);
	CHECK(rev_of("pods", "ns1", "p2") == 4);
	CHECK(nev == nev0 + 2);
	/* The bookmark is cut just before its newline. */
	s = util_printf("%s%.*s", l3 + 20, (int)strlen(l4) - 1, l4);
	push(P, s);
	free(s);
	WAIT(rev_of("pods", "ns1", "p2") == 0);
	CHECK(rev_of("pods", "ns1", "p2") == 0);
	CHECK(client_rev(c) == 13);
	push(P, "\n\n");
	WAIT(client_rev(c) >= 20);
	CHECK(client_rev(c) == 20);
	CHECK(nev == nev0 + 3);
	CHECK(ev_is(nev0, STORE_ADDED, "pods/ns1/p4", 11));
	CHECK(ev_is(nev0 + 1, STORE_MODIFIED, "pods/ns1/p1", 12));
	/* DELETED carries the final state the event gave. */
	CHECK(ev_is(nev0 + 2, STORE_DELETED, "pods/ns1/p2", 13));
	free(l1);
	free(l2);
	free(l3);
	free(l4);

	/* 3. A stream that ends (200) is watched again from the bookmark. */
	from = nreq();
	end_watch(P);
	w = wait_watch(from, P, 20);
	CHECK(w >= 0);

	/* 5b and 3: a line that is not JSON is skipped; an event without
	   a name too, and one of a type nobody knows; a stream that ends
	   mid-object is resumed from the last whole event, the partial one
	   dropped. */
	nev0 = nev;
	capture_begin();
	l1 = event("ADDED", pod("p5", 21, 1, NULL));
	l2 = pod("p6", 22, 1, NULL);
	l3 = event("RENAMED", pod("p8", 21, 1, NULL));
	s = util_printf("this is not json\n{\"type\":\"ADDED\",\"object\":"
	    "%s}\n%s%s%.30s", unnamed, l3, l1, l2);
	push(P, s);
	free(s);
	free(l1);
	free(l2);
	free(l3);
	WAIT(rev_of("pods", "ns1", "p5") == 21);
	CHECK(rev_of("pods", "ns1", "p5") == 21);
	CHECK(nev == nev0 + 1);
	from = nreq();
	end_watch(P);
	w = wait_watch(from, P, 21);
	log = capture_end();
	CHECK(w >= 0);
	CHECK(rev_of("pods", "ns1", "p6") == 0);
	CHECK(rev_of("pods", "ns1", "p8") == 0);
	CHECK(nev == nev0 + 1);
	CHECK(strstr(log, "not JSON") != NULL);
	CHECK(strstr(log, "this is not json") != NULL);
	CHECK(strstr(log, "mid-event") != NULL);
	CHECK(strstr(log, "RENAMED") != NULL);
	free(log);

	/* 4. 410 on the watch: a list again, whose result replaces the
	   mirror's pods: p4 is gone, p5 changed, p7 new, p1 and p3 the
	   same (no event). */
	rule("GET", P, "watch=1", 410, "{\"kind\":\"Status\",\"apiVersion\":"
	    "\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":"
	    "410}");
	p1 = pod("p1", 12, 0, ",\"status\":{\"phase\":\"Running\"}");
	p2 = pod("p3", 9, 0, NULL);
	l1 = pod("p5", 25, 0, NULL);
	l2 = pod("p7", 24, 0, NULL);
	items = util_printf("%s,%s,%s,%s", p1, p2, l1, l2);
	list_rule(P, "limit=500", items, 30, NULL);
	free(items);
	free(l1);
	free(l2);
	nev0 = nev;
	from = nreq();
	s = bookmark(22);
	push(P, s);
	free(s);
	end_watch(P);
	w = wait_watch(from, P, 30);
	CHECK(w >= 0);
	CHECK(find_req(from, "GET", P, "resourceVersion=22&") >= 0);
	CHECK(rules_left() == 0);
	CHECK(nev == nev0 + 3);
	CHECK(ev_is(nev0, STORE_MODIFIED, "pods/ns1/p5", 25));
	CHECK(ev_is(nev0 + 1, STORE_ADDED, "pods/ns1/p7", 24));
	CHECK(ev_is(nev0 + 2, STORE_DELETED, "pods/ns1/p4", 11));
	CHECK(rev_of("pods", "ns1", "p4") == 0);

	/* And an ERROR event with code 410 in the stream: the client
	   closes the stream and lists again. */
	l1 = pod("p7", 24, 0, NULL);
	items = util_printf("%s,%s", p1, l1);
	free(l1);
	free(p1);
	free(p2);
	list_rule(P, "limit=500", items, 40, NULL);
	free(items);
	nev0 = nev;
	from = nreq();
	closes = atomic_load(&watch_closes);
	push(P, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
	    "\"too old resource version: 30 (35)\",\"reason\":\"Expired\","
	    "\"code\":410}}\n");
	w = wait_watch(from, P, 40);
	CHECK(w >= 0);
	CHECK(find_req(from, "GET", P, "limit=500") >= 0);
	CHECK(nev == nev0 + 2);
	CHECK(ev_is(nev0, STORE_DELETED, "pods/ns1/p3", 9));
	CHECK(ev_is(nev0 + 1, STORE_DELETED, "pods/ns1/p5", 25));
	WAIT(atomic_load(&watch_closes) > closes);
	CHECK(atomic_load(&watch_closes) == closes + 1);
	CHECK(synced_calls == 1);

	stop_remote(cur);
	free(url);
}

/* 5. A 500 on list is retried with backoff, doubling; so is a list
   whose continue token expired (from its first page, the pages had
   dropped), and a watch that ends at once without an event. */
static void
test_backoff(void)
{
	const char *P = "/api/v1/pods";
	char *url = server_url(), *items, *log;
	int i0, i1, i2, i3, i4, w0, w1, from;

	server_reset();
	from = nreq();
	rule("GET", P, "limit=500", 500, "{\"kind\":\"Status\",\"code\":500}");
	rule("GET", P, "limit=500", 500, "not even JSON");
	items = pod("q0", 4, 0, NULL);
	list_rule(P, "limit=500", items, 5, "k1");
	free(items);
	rule("GET", P, "continue=k1", 410, "{\"kind\":\"Status\",\"apiVersion\":"
	    "\"v1\",\"status\":\"Failure\",\"reason\":\"Expired\",\"code\":"
	    "410}");
	items = pod("q1", 5, 0, NULL);
	list_rule(P, "limit=500", items, 6, NULL);
	free(items);
	/* The first watch ends at once, empty. */
	rule("GET", P, "watch=1", 200, "");
	capture_begin();
	cur = start_remote(url);
	WAIT(synced_calls > 0);
	log = capture_end();
	CHECK(strstr(log, "list /api/v1/pods: HTTP 500: {\"kind\":\"Status\","
	    "\"code\":500}") != NULL);
	CHECK(strstr(log, "HTTP 500: not even JSON") != NULL);
	CHECK(strstr(log, "HTTP 410: {") != NULL);
	free(log);
	CHECK(synced_calls == 1);
	CHECK(rev_of("pods", "ns1", "q1") == 5);
	CHECK(rev_of("pods", "ns1", "q0") == 0);
	CHECK(nev == 1 && ev_is(0, STORE_ADDED, "pods/ns1/q1", 5));
	i0 = find_req(from, "GET", P, "limit=500");
	i1 = i0 >= 0 ? find_req(i0 + 1, "GET", P, "limit=500") : -1;
	i2 = i1 >= 0 ? find_req(i1 + 1, "GET", P, "limit=500") : -1;
	i3 = i2 >= 0 ? find_req(i2 + 1, "GET", P, "limit=500") : -1;
	i4 = i3 >= 0 ? find_req(i3 + 1, "GET", P, "limit=500") : -1;
	CHECK(i0 >= 0 && i1 > i0 && i2 > i1 && i3 > i2 && i4 > i3);
	if (i4 > 0) {
		CHECK(gap(i0, i1, 250));
		CHECK(gap(i1, i2, 500));
		CHECK(strstr(req_at(i3).query, "continue=k1") != NULL);
		CHECK(gap(i3, i4, 1000));
		CHECK(strstr(req_at(i4).query, "continue") == NULL);
	}
	w0 = wait_watch(from, P, 6);
	w1 = w0 >= 0 ? wait_watch(w0 + 1, P, 6) : -1;
	CHECK(w0 >= 0 && w1 > w0);
	if (w1 > 0)
		CHECK(gap(w0, w1, 250));
	CHECK(rules_left() == 0);
	stop_remote(cur);
	free(url);
}

/* --- writes -------------------------------------------------------------- */

static int allow;

static int
allowed(void *arg)
{
	return *(int *)arg;
}

/* The last request the server got must be this one; its body parsed. */
static cJSON *
last_req(const char *method, const char *path, const char *query,
    const char *ctype)
{
	int n = nreq();
	struct sreq r;

	CHECK(n > 0);
	if (n == 0)
		return NULL;
	r = req_at(n - 1);
	CHECK_STR(r.method, method);
	CHECK_STR(r.path, path);
	if (query != NULL)
		CHECK_STR(r.query, query);
	if (ctype != NULL)
		CHECK_STR(r.ctype, ctype);
	return cJSON_Parse(r.body);
}

/* The pods of namespace default. */
#define PD "/api/v1/namespaces/default/pods"

static void
test_writes(void)
{
	const resource *pods = resource_find("", "v1", "pods"),
	    *cms = resource_find("", "v1", "configmaps"),
	    *nss = resource_find("", "v1", "namespaces"),
	    *deps = resource_find("apps", "v1", "deployments"),
	    *pcs = resource_find("scheduling.k8s.io", "v1", "priorityclasses");
	char *url = server_url(), *b;
	struct reg_result res;
	struct reg_opts o;
	client *c, *g;
	cJSON *t;
	int nev0, n0;

	server_reset();
	n0 = nreq();
	cur = start_remote(url);
	c = remote_client(cur);
	WAIT(synced_calls > 0);
	CHECK(wait_watch(n0, "/api/v1/pods", 1) >= 0);

	/* create: the answer is in the mirror when the call returns, its
	   event comes on a later turn of the loop. */
	b = util_printf("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":"
	    "{\"name\":\"w1\",\"namespace\":\"default\",\"uid\":\"u-w1\","
	    "\"resourceVersion\":\"50\"},\"spec\":{}}");
	rule("POST", PD, "", 201, b);
	free(b);
	memset(&o, 0, sizeof o);
	o.field_manager = "tester one";
	nev0 = nev;
	client_create(c, pods, "default", cJSON_Parse("{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\"},\"spec\":{}}"),
	    &o, &res);
	CHECK(res.code == 201);
	CHECK_STR(json_str(res.body, "metadata.name"), "w1");
	cJSON_Delete(res.body);
	CHECK(client_get(c, "pods", "default", "w1") != NULL);
	CHECK(rev_of("pods", "default", "w1") == 50);
	CHECK(nev == nev0);
	t = last_req("POST", PD, "fieldManager=tester%20one",
	    "application/json");
	CHECK_STR(json_str(t, "metadata.name"), "w1");
	cJSON_Delete(t);
	uv_run(&loop, UV_RUN_NOWAIT);
	WAIT(nev > nev0);
	CHECK(nev == nev0 + 1);
	CHECK(ev_is(nev0, STORE_ADDED, "pods/default/w1", 50));
	/* Its watch event is no news; the next change is. */
	push("/api/v1/pods", "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":"
	    "\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
	    "\"namespace\":\"default\",\"uid\":\"u-w1\",\"resourceVersion\":"
	    "\"50\"},\"spec\":{}}}\n{\"type\":\"MODIFIED\",\"object\":{"
	    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"w1\",\"namespace\":\"default\",\"uid\":\"u-w1\","
	    "\"resourceVersion\":\"51\"},\"spec\":{}}}\n");
	WAIT(rev_of("pods", "default", "w1") == 51);
	CHECK(nev == nev0 + 2);
	CHECK(ev_is(nev0 + 1, STORE_MODIFIED, "pods/default/w1", 51));

	/* update, namespaced core. */
	rule("PUT", "/api/v1/namespaces/default/configmaps/c1", "", 200,
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{"
	    "\"name\":\"c1\",\"namespace\":\"default\",\"uid\":\"u-c1\","
	    "\"resourceVersion\":\"60\"},\"data\":{\"a\":\"1\"}}");
	nev0 = nev;
	client_update(c, cms, "default", "c1", cJSON_Parse("{\"apiVersion\":"
	    "\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c1\","
	    "\"resourceVersion\":\"59\"},\"data\":{\"a\":\"1\"}}"), NULL, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	t = last_req("PUT", "/api/v1/namespaces/default/configmaps/c1", "",
	    "application/json");
	CHECK_STR(json_str(t, "data.a"), "1");
	CHECK_STR(json_str(t, "metadata.resourceVersion"), "59");
	cJSON_Delete(t);
	CHECK(rev_of("configmaps", "default", "c1") == 60);
	CHECK(nev == nev0);

	/* update_status: PUT .../status with the status given. */
	rule("PUT", PD "/w1/status", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w1\",\"resourceVersion\":\"61\"},"
	    "\"spec\":{},\"status\":{\"phase\":\"Running\"}}");
	client_update_status(c, pods, "default", "w1",
	    client_get_tree(c, pods, "default", "w1"),
	    cJSON_Parse("{\"phase\":\"Running\"}"), NULL, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	t = last_req("PUT", PD "/w1/status", "", "application/json");
	CHECK_STR(json_str(t, "status.phase"), "Running");
	CHECK_STR(json_str(t, "metadata.resourceVersion"), "51");
	cJSON_Delete(t);
	CHECK(rev_of("pods", "default", "w1") == 61);
	CHECK_STR(client_get(c, "pods", "default", "w1")->phase, "Running");

	/* patch, a group's resource (not mirrored: nothing written
	   through), then a pod's status. */
	rule("PATCH", "/apis/apps/v1/namespaces/default/deployments/d1", "",
	    200, "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\","
	    "\"metadata\":{\"name\":\"d1\",\"namespace\":\"default\","
	    "\"resourceVersion\":\"62\"},\"spec\":{\"replicas\":3}}");
	client_patch(c, deps, "default", "d1", "application/merge-patch+json",
	    "{\"spec\":{\"replicas\":3}}", 24, NULL, &res);
	CHECK(res.code == 200);
	CHECK(cJSON_GetNumberValue(json_at(res.body, "spec.replicas")) == 3);
	cJSON_Delete(res.body);
	t = last_req("PATCH", "/apis/apps/v1/namespaces/default/deployments/d1",
	    "", "application/merge-patch+json");
	CHECK(cJSON_GetNumberValue(json_at(t, "spec.replicas")) == 3);
	cJSON_Delete(t);
	CHECK(client_get(c, "deployments.apps", "default", "d1") == NULL);
	rule("PATCH", PD "/w1/status", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w1\",\"resourceVersion\":\"63\"},"
	    "\"spec\":{},\"status\":{\"phase\":\"Succeeded\"}}");
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	client_patch(c, pods, "default", "w1", "application/merge-patch+json",
	    "{\"status\":{\"phase\":\"Succeeded\"}}", 33, &o, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	cJSON_Delete(last_req("PATCH", PD "/w1/status", "",
	    "application/merge-patch+json"));
	CHECK(rev_of("pods", "default", "w1") == 63);

	/* create, cluster-scoped: core and a group's. */
	rule("POST", "/api/v1/namespaces", "", 201, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\","
	    "\"resourceVersion\":\"64\"}}");
	client_create(c, nss, "", cJSON_Parse("{\"apiVersion\":\"v1\","
	    "\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\"}}"), NULL,
	    &res);
	CHECK(res.code == 201);
	cJSON_Delete(res.body);
	cJSON_Delete(last_req("POST", "/api/v1/namespaces", "", NULL));
	CHECK(client_get(c, "namespaces", "", "team") == NULL);
	rule("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", "", 201,
	    "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":"
	    "\"PriorityClass\",\"metadata\":{\"name\":\"high\","
	    "\"resourceVersion\":\"65\"},\"value\":1000}");
	client_create(c, pcs, NULL, cJSON_Parse("{\"apiVersion\":"
	    "\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":"
	    "{\"name\":\"high\"},\"value\":1000}"), NULL, &res);
	CHECK(res.code == 201);
	cJSON_Delete(res.body);
	t = last_req("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", "",
	    NULL);
	CHECK(cJSON_GetNumberValue(json_at(t, "value")) == 1000);
	cJSON_Delete(t);

	/* delete, cluster-scoped group's, with DeleteOptions. */
	rule("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/high", "",
	    200, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
	    "\"Success\"}");
	memset(&o, 0, sizeof o);
	o.propagation = "Foreground";
	client_delete(c, pcs, "", "high", &o, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	t = last_req("DELETE", "/apis/scheduling.k8s.io/v1/priorityclasses/high",
	    "", "application/json");
	CHECK_STR(json_str(t, "kind"), "DeleteOptions");
	CHECK_STR(json_str(t, "propagationPolicy"), "Foreground");
	CHECK(json_at(t, "gracePeriodSeconds") == NULL);
	cJSON_Delete(t);

	/* delete a pod: the mirror keeps it until the watch says. */
	rule("DELETE", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w1\",\"resourceVersion\":\"66\","
	    "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{}}");
	memset(&o, 0, sizeof o);
	o.grace_set = 1;
	o.grace_period = 0;
	o.precond_uid = "u-w1";
	client_delete(c, pods, "default", "w1", &o, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	t = last_req("DELETE", PD "/w1", "", NULL);
	CHECK(cJSON_GetNumberValue(json_at(t, "gracePeriodSeconds")) == 0);
	CHECK_STR(json_str(t, "preconditions.uid"), "u-w1");
	cJSON_Delete(t);
	CHECK(rev_of("pods", "default", "w1") == 63);

	/* A status the writer owns (a kubelet's): a 409 is re-made over
	   the server's version, read again; others get the 409. */
	{
		static const struct reg_opts own = { .own_status = 1 };
		const char *conflict = "{\"kind\":\"Status\",\"apiVersion\":"
		    "\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\","
		    "\"code\":409}";

		rule("PUT", PD "/w1/status", "", 409, conflict);
		rule("GET", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"90\"},\"spec\":{}}");
		rule("PUT", PD "/w1/status", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"91\"},\"spec\":{},\"status\":"
		    "{\"phase\":\"Succeeded\"}}");
		client_update_status(c, pods, "default", "w1",
		    client_get_tree(c, pods, "default", "w1"),
		    cJSON_Parse("{\"phase\":\"Succeeded\"}"), &own, &res);
		CHECK(res.code == 200);
		cJSON_Delete(res.body);
		t = last_req("PUT", PD "/w1/status", "", "application/json");
		CHECK_STR(json_str(t, "metadata.resourceVersion"), "90");
		CHECK_STR(json_str(t, "status.phase"), "Succeeded");
		cJSON_Delete(t);
		CHECK(rules_left() == 0);
		CHECK(rev_of("pods", "default", "w1") == 91);

		rule("PUT", PD "/w1/status", "", 409, conflict);
		client_update_status(c, pods, "default", "w1",
		    client_get_tree(c, pods, "default", "w1"),
		    cJSON_Parse("{\"phase\":\"Failed\"}"), NULL, &res);
		CHECK(res.code == 409);
		cJSON_Delete(res.body);
		CHECK(rules_left() == 0);
		cJSON_Delete(last_req("PUT", PD "/w1/status", "",
		    "application/json"));

		/* The same without waiting (the kubelet's statuses on the
		   loop): the 409, the read and the second PUT all travel
		   while the loop runs; done gets the last answer. */
		rule("PUT", PD "/w1/status", "", 409, conflict);
		rule("GET", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"95\"},\"spec\":{}}");
		rule("PUT", PD "/w1/status", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"96\"},\"spec\":{},\"status\":"
		    "{\"phase\":\"Running\"}}");
		async_code = 0;
		client_update_status_async(c, pods, "default", "w1",
		    client_get_tree(c, pods, "default", "w1"),
		    cJSON_Parse("{\"phase\":\"Running\"}"), &own, on_async,
		    NULL);
		CHECK(async_code == 0);
		WAIT(async_code != 0);
		CHECK(async_code == 200);
		t = last_req("PUT", PD "/w1/status", "", "application/json");
		CHECK_STR(json_str(t, "metadata.resourceVersion"), "95");
		CHECK_STR(json_str(t, "status.phase"), "Running");
		cJSON_Delete(t);
		CHECK(rules_left() == 0);
		CHECK(rev_of("pods", "default", "w1") == 96);

		/* Three conflicts: the third goes to done. */
		rule("PUT", PD "/w1/status", "", 409, conflict);
		rule("GET", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"97\"},\"spec\":{}}");
		rule("PUT", PD "/w1/status", "", 409, conflict);
		rule("GET", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-w1\","
		    "\"resourceVersion\":\"98\"},\"spec\":{}}");
		rule("PUT", PD "/w1/status", "", 409, conflict);
		async_code = 0;
		client_update_status_async(c, pods, "default", "w1",
		    client_get_tree(c, pods, "default", "w1"),
		    cJSON_Parse("{\"phase\":\"Failed\"}"), &own, on_async,
		    NULL);
		WAIT(async_code != 0);
		CHECK(async_code == 409);
		CHECK_STR(async_reason, "Conflict");
		CHECK(rules_left() == 0);
		cJSON_Delete(last_req("PUT", PD "/w1/status", "",
		    "application/json"));

		/* Another object of the same name meanwhile: its conflict
		   is the answer, nothing is written over the new one. */
		rule("PUT", PD "/w1/status", "", 409, conflict);
		rule("GET", PD "/w1", "", 200, "{\"apiVersion\":\"v1\","
		    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w1\","
		    "\"namespace\":\"default\",\"uid\":\"u-other\","
		    "\"resourceVersion\":\"99\"},\"spec\":{}}");
		async_code = 0;
		client_update_status_async(c, pods, "default", "w1",
		    client_get_tree(c, pods, "default", "w1"),
		    cJSON_Parse("{\"phase\":\"Failed\"}"), &own, on_async,
		    NULL);
		WAIT(async_code != 0);
		CHECK(async_code == 409);
		CHECK(rules_left() == 0);
		cJSON_Delete(last_req("GET", PD "/w1", NULL, NULL));
	}

	/* bind: pods/binding. */
	rule("POST", PD "/w2/binding", "", 201, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Success\",\"code\":201}");
	client_bind(c, "default", "w2", "n1", &res);
	CHECK(res.code == 201);
	CHECK_STR(json_str(res.body, "status"), "Success");
	cJSON_Delete(res.body);
	t = last_req("POST", PD "/w2/binding", "", "application/json");
	CHECK_STR(json_str(t, "kind"), "Binding");
	CHECK_STR(json_str(t, "metadata.name"), "w2");
	CHECK_STR(json_str(t, "metadata.namespace"), "default");
	CHECK_STR(json_str(t, "target.kind"), "Node");
	CHECK_STR(json_str(t, "target.name"), "n1");
	cJSON_Delete(t);

	/* bind without waiting: the answer comes through the callback on
	   a later turn of the loop, never inside the call. */
	rule("POST", PD "/w2/binding", "", 409, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":"
	    "\"Conflict\",\"code\":409}");
	async_code = 0;
	client_bind_async(c, "default", "w2", "n2", on_async, NULL);
	CHECK(async_code == 0);
	WAIT(async_code != 0);
	CHECK(async_code == 409);
	CHECK_STR(async_reason, "Conflict");
	t = last_req("POST", PD "/w2/binding", "", "application/json");
	CHECK_STR(json_str(t, "target.name"), "n2");
	cJSON_Delete(t);

	/* A bind the server took leaves the mirror's pod as the server
	   last said (the scheduler assumes it apart, sched/assume.c): no
	   node, the same version, no event, until the watch says. */
	{
		const store_obj *po, *before;

		rule("POST", PD, "", 201, "{\"apiVersion\":\"v1\",\"kind\":"
		    "\"Pod\",\"metadata\":{\"name\":\"wb\",\"namespace\":"
		    "\"default\",\"uid\":\"u-wb\",\"resourceVersion\":"
		    "\"53\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
		    "\"status\":{\"phase\":\"Pending\"}}");
		client_create(c, pods, "default", cJSON_Parse(
		    "{\"metadata\":{\"name\":\"x\"}}"), NULL, &res);
		CHECK(res.code == 201);
		cJSON_Delete(res.body);
		cJSON_Delete(last_req("POST", PD, "", NULL));
		WAIT(nev > 0 && strcmp(evs[nev - 1].key, "pods/default/wb") ==
		    0);
		before = client_get(c, "pods", "default", "wb");
		rule("POST", PD "/wb/binding", "", 201, "{\"kind\":\"Status\","
		    "\"apiVersion\":\"v1\",\"status\":\"Success\","
		    "\"code\":201}");
		nev0 = nev;
		async_code = 0;
		async_node[0] = '\0';
		client_bind_async(c, "default", "wb", "n7", on_async,
		    (void *)"wb");
		WAIT(async_code != 0);
		CHECK(async_code == 201);
		CHECK_STR(async_node, "");
		po = client_get(c, "pods", "default", "wb");
		CHECK(po == before && po->rev == 53);
		spin(50);
		CHECK(nev == nev0);
		t = last_req("POST", PD "/wb/binding", "", NULL);
		CHECK_STR(json_str(t, "target.name"), "n7");
		cJSON_Delete(t);
	}

	/* evict: the pod's graceful delete. */
	rule("DELETE", PD "/w3", "", 200, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Success\"}");
	client_evict(c, "default", "w3", NULL, &res);
	CHECK(res.code == 200);
	cJSON_Delete(res.body);
	cJSON_Delete(last_req("DELETE", PD "/w3", "", NULL));

	/* evict without waiting: the same delete, answered on a later turn
	   of the loop, with its preconditions. */
	rule("DELETE", PD "/w3", "", 200, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Success\"}");
	{
		struct reg_opts eo;

		memset(&eo, 0, sizeof eo);
		eo.precond_uid = "u-w3";
		async_code = 0;
		client_evict_async(c, "default", "w3", &eo, on_async, NULL);
	}
	CHECK(async_code == 0);
	WAIT(async_code != 0);
	CHECK(async_code == 200);
	t = last_req("DELETE", PD "/w3", "", NULL);
	CHECK_STR(json_str(t, "preconditions.uid"), "u-w3");
	cJSON_Delete(t);

	/* Errors: the server's Status, or one of ours for what is not
	   JSON; neither touches the mirror. */
	rule("PUT", "/api/v1/namespaces/default/configmaps/c1", "", 409,
	    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
	    "\"Failure\",\"reason\":\"Conflict\",\"code\":409}");
	client_update(c, cms, "default", "c1", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"c1\",\"resourceVersion\":\"1\"}}"), NULL, &res);
	CHECK(res.code == 409);
	CHECK_STR(json_str(res.body, "reason"), "Conflict");
	cJSON_Delete(res.body);
	CHECK(rev_of("configmaps", "default", "c1") == 60);
	rule("POST", PD, "", 502, "<html>bad gateway</html>");
	client_create(c, pods, "default", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"w4\"}}"), NULL, &res);
	CHECK(res.code == 502);
	CHECK_STR(json_str(res.body, "kind"), "Status");
	CHECK(cJSON_GetNumberValue(json_at(res.body, "code")) == 502);
	cJSON_Delete(res.body);

	/* A dry run's answer is not the server's state: not mirrored. */
	rule("POST", PD, "dryRun=All", 201, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w5\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w5\",\"resourceVersion\":\"70\"}}");
	memset(&o, 0, sizeof o);
	o.dry_run = 1;
	client_create(c, pods, "default", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"w5\"}}"), &o, &res);
	CHECK(res.code == 201);
	cJSON_Delete(res.body);
	CHECK(client_get(c, "pods", "default", "w5") == NULL);

	/* remote_get: one synchronous GET. */
	rule("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
	    "x.example.com", "", 404, "{\"kind\":\"Status\",\"code\":404}");
	{
		char *body = NULL, *err = NULL;
		long status = 0;

		CHECK(remote_get(cur, "/apis/apiextensions.k8s.io/v1/"
		    "customresourcedefinitions/x.example.com", &status, &body,
		    &err) == 0);
		CHECK(status == 404 && err == NULL);
		CHECK(body != NULL && strstr(body, "\"code\":404") != NULL);
		free(body);
	}

	/* 7. Gated: refused with 503, nothing sent; then let through. */
	allow = 0;
	g = client_gated(c, allowed, &allow);
	n0 = nreq();
	client_create(g, pods, "default", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"w6\"}}"), NULL, &res);
	CHECK(res.code == 503);
	CHECK_STR(json_str(res.body, "kind"), "Status");
	cJSON_Delete(res.body);
	client_bind(g, "default", "w6", "n1", &res);
	CHECK(res.code == 503);
	cJSON_Delete(res.body);
	async_code = 0;
	client_bind_async(g, "default", "w6", "n1", on_async, NULL);
	CHECK(async_code == 503);
	spin(50);
	CHECK(nreq() == n0);
	CHECK(client_get(g, "pods", "default", "w6") == NULL);
	allow = 1;
	rule("POST", PD "/w6/binding", "", 201, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Success\",\"code\":201}");
	client_bind(g, "default", "w6", "n1", &res);
	CHECK(res.code == 201);
	cJSON_Delete(res.body);
	CHECK(nreq() == n0 + 1);
	client_free(g);		/* leaves the remote client alone */

	/* Status and patch without waiting: sent later, answered through
	   the callback, a 2xx written through before it runs. */
	rule("PUT", PD "/w8s/status", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w8s\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w8s\",\"resourceVersion\":\"78\"},"
	    "\"spec\":{},\"status\":{\"phase\":\"Failed\"}}");
	async_code = 0;
	client_update_status_async(c, pods, "default", "w8s", cJSON_Parse(
	    "{\"metadata\":{\"name\":\"w8s\",\"resourceVersion\":\"7\"}}"),
	    cJSON_Parse("{\"phase\":\"Failed\"}"), NULL, on_async, NULL);
	CHECK(async_code == 0);
	WAIT(async_code != 0);
	CHECK(async_code == 200);
	CHECK(rev_of("pods", "default", "w8s") == 78);
	t = last_req("PUT", PD "/w8s/status", "", "application/json");
	CHECK_STR(json_str(t, "status.phase"), "Failed");
	CHECK_STR(json_str(t, "metadata.resourceVersion"), "7");
	cJSON_Delete(t);
	rule("PATCH", PD "/w8s/status", "", 409, "{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":"
	    "\"Conflict\",\"code\":409}");
	memset(&o, 0, sizeof o);
	o.subresource = "status";
	async_code = 0;
	client_patch_async(c, pods, "default", "w8s",
	    "application/merge-patch+json", "{\"status\":{}}", 13, &o,
	    on_async, NULL);
	CHECK(async_code == 0);
	WAIT(async_code != 0);
	CHECK(async_code == 409);
	CHECK_STR(async_reason, "Conflict");
	CHECK(rev_of("pods", "default", "w8s") == 78);
	cJSON_Delete(last_req("PATCH", PD "/w8s/status", "",
	    "application/merge-patch+json"));
	/* An update without waiting: a Lease's renewal. */
	rule("PUT", PD "/w8s", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w8s\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w8s\",\"resourceVersion\":\"78\"},"
	    "\"spec\":{\"x\":1}}");
	async_code = 0;
	client_update_async(c, pods, "default", "w8s", cJSON_Parse(
	    "{\"metadata\":{\"name\":\"w8s\",\"resourceVersion\":\"78\"},"
	    "\"spec\":{\"x\":1}}"), NULL, on_async, NULL);
	CHECK(async_code == 0);
	WAIT(async_code != 0);
	CHECK(async_code == 200);
	t = last_req("PUT", PD "/w8s", "", "application/json");
	CHECK(cJSON_GetNumberValue(json_at(t, "spec.x")) == 1);
	cJSON_Delete(t);
	/* Without a callback the answer is dropped. */
	rule("PATCH", PD "/w8s/status", "", 200, "{\"apiVersion\":\"v1\","
	    "\"kind\":\"Pod\",\"metadata\":{\"name\":\"w8s\",\"namespace\":"
	    "\"default\",\"uid\":\"u-w8s\",\"resourceVersion\":\"79\"},"
	    "\"spec\":{}}");
	client_patch_async(c, pods, "default", "w8s",
	    "application/merge-patch+json", "{\"status\":{}}", 13, &o, NULL,
	    NULL);
	WAIT(rev_of("pods", "default", "w8s") == 79);
	CHECK(rev_of("pods", "default", "w8s") == 79);
	cJSON_Delete(last_req("PATCH", PD "/w8s/status", "",
	    "application/merge-patch+json"));

	/* Freed with a write's event held: it goes with the mirror. */
	rule("POST", PD, "", 201, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"w8\",\"namespace\":\"default\","
	    "\"uid\":\"u-w8\",\"resourceVersion\":\"80\"}}");
	nev0 = nev;
	client_create(c, pods, "default", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"w8\"}}"), NULL, &res);
	CHECK(res.code == 201);
	cJSON_Delete(res.body);
	CHECK(rev_of("pods", "default", "w8") == 80);
	CHECK(rules_left() == 0);
	stop_remote(cur);
	CHECK(nev == nev0);

	/* 6. Nobody listening: 503 and a Status. */
	cur = start_remote("http://127.0.0.1:1");
	c = remote_client(cur);
	client_create(c, pods, "default", cJSON_Parse("{\"metadata\":{"
	    "\"name\":\"w7\"}}"), NULL, &res);
	CHECK(res.code == 503);
	CHECK_STR(json_str(res.body, "kind"), "Status");
	CHECK_STR(json_str(res.body, "reason"), "ServiceUnavailable");
	cJSON_Delete(res.body);
	spin(100);		/* the informers fail and back off */
	CHECK(!remote_synced(cur));
	stop_remote(cur);
	free(url);
}

/*
 * 6. Many events, through the decoding thread: they reach the mirror in
 * the order they came, across chunks; a watch's end comes after its last
 * line (the next watch starts from it, not from before); and what follows
 * an ERROR 410 in the stream (already decoded) is dropped, not put into
 * the mirror that the re-list replaces.
 */
#define ORDER_PODS	50
#define ORDER_CHUNKS	30
#define ORDER_PER	50

/* client_get_live_async's answer: its code, reason and uid. */
static int live_code;
static char live_reason[64], live_uid[64];

static void
on_live(void *arg, struct reg_result *res)
{
	const char *s;

	(void)arg;
	live_code = res->code;
	s = json_str(res->body, "reason");
	snprintf(live_reason, sizeof live_reason, "%s", s ? s : "");
	s = json_str(res->body, "metadata.uid");
	snprintf(live_uid, sizeof live_uid, "%s", s ? s : "");
	cJSON_Delete(res->body);
}

/*
 * A live read asks the server, whatever the mirror holds: a pod the
 * watch has not brought yet is there (and stays out of the mirror: the
 * watch brings it in its order), a pod the server has not is 404
 * NotFound.
 */
static void
test_get_live(void)
{
	const resource *pods = resource_find("", "v1", "pods");
	char *url = server_url(), *b;
	client *c;
	int n0;

	server_reset();
	n0 = nreq();
	cur = start_remote(url);
	c = remote_client(cur);
	WAIT(synced_calls > 0);
	CHECK(wait_watch(n0, "/api/v1/pods", 1) >= 0);
	CHECK(client_get(c, "pods", "ns1", "fresh") == NULL);
	b = pod("fresh", 70, 1, NULL);
	rule("GET", "/api/v1/namespaces/ns1/pods/fresh", "", 200, b);
	free(b);
	live_code = 0;
	client_get_live_async(c, pods, "ns1", "fresh", on_live, NULL);
	CHECK(live_code == 0);
	WAIT(live_code != 0);
	CHECK(live_code == 200);
	CHECK_STR(live_uid, "u-fresh");
	spin(20);
	CHECK(client_get(c, "pods", "ns1", "fresh") == NULL);
	rule("GET", "/api/v1/namespaces/ns1/pods/gone", "", 404,
	    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
	    "\"Failure\",\"message\":\"pods \\\"gone\\\" not found\","
	    "\"reason\":\"NotFound\",\"code\":404}");
	live_code = 0;
	client_get_live_async(c, pods, "ns1", "gone", on_live, NULL);
	WAIT(live_code != 0);
	CHECK(live_code == 404);
	CHECK_STR(live_reason, "NotFound");
	CHECK(rules_left() == 0);
	stop_remote(cur);
	free(url);
}

static void
test_order(void)
{
	const char *P = "/api/v1/pods", *CM = "/api/v1/configmaps";
	char *url = server_url(), *chunk, *s, *l, *m = NULL;
	char name[16];
	int i, k, n, w, from, nev0, rv = 100, ok;
	size_t mlen = 0;
	FILE *f;

	server_reset();
	/* A first answer that is no list: said so, and listed again. */
	rule("GET", P, "limit=500", 200, "this is no list");
	list_rule(P, "limit=500", "", 100, NULL);
	list_rule(CM, "limit=500", "", 100, NULL);
	capture_begin();
	cur = start_remote(url);
	WAIT(synced_calls > 0);
	s = capture_end();
	CHECK(remote_synced(cur));
	CHECK(strstr(s, "list /api/v1/pods: not a list: this is no list") !=
	    NULL);
	free(s);
	CHECK(rules_left() == 0);
	w = wait_watch(0, P, 100);
	CHECK(w >= 0);
	nev0 = nev;
	for (k = 0; k < ORDER_CHUNKS; k++) {
		chunk = xstrdup("");
		for (i = 0; i < ORDER_PER; i++) {
			n = k * ORDER_PER + i;
			snprintf(name, sizeof name, "q%d", n % ORDER_PODS);
			l = event(n < ORDER_PODS ? "ADDED" : "MODIFIED",
			    pod(name, ++rv, 1, NULL));
			s = util_printf("%s%s", chunk, l);
			free(chunk);
			free(l);
			chunk = s;
		}
		push(P, chunk);
		free(chunk);
	}
	from = nreq();
	end_watch(P);
	w = wait_watch(from, P, rv);
	CHECK(w >= 0);
	/* The first watch after the end is the one from the last event. */
	CHECK(w >= 0 && find_req(from, "GET", P, "watch=1") == w);
	CHECK(nev == nev0 + ORDER_CHUNKS * ORDER_PER);
	ok = 1;
	for (i = 0; i < ORDER_CHUNKS * ORDER_PER && nev0 + i < nev; i++) {
		snprintf(name, sizeof name, "pods/ns1/q%d", i % ORDER_PODS);
		ok &= evs[nev0 + i].rev == (uint64_t)(101 + i) &&
		    evs[nev0 + i].type == (i < ORDER_PODS ? STORE_ADDED :
		    STORE_MODIFIED) && strcmp(evs[nev0 + i].key, name) == 0;
	}
	CHECK(ok);
	ok = 1;
	for (i = 0; i < ORDER_PODS; i++) {
		snprintf(name, sizeof name, "q%d", i);
		ok &= rev_of("pods", "ns1", name) == (uint64_t)(rv -
		    ORDER_PODS + 1 + i);
	}
	CHECK(ok);

	/* An ERROR 410, then in the same chunk an event the decoder has
	   parsed by the time the loop sees the error: dropped. The re-list
	   holds q0 only. */
	s = pod("q0", rv - ORDER_PODS + 1, 0, NULL);
	list_rule(P, "limit=500", s, rv + 10, NULL);
	free(s);
	nev0 = nev;
	from = nreq();
	l = event("ADDED", pod("ghost", rv + 5, 1, NULL));
	s = util_printf("{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\","
	    "\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
	    "\"too old\",\"reason\":\"Expired\",\"code\":410}}\n%s", l);
	free(l);
	push(P, s);
	free(s);
	w = wait_watch(from, P, rv + 10);
	CHECK(w >= 0);
	CHECK(rev_of("pods", "ns1", "ghost") == 0);
	ok = 1;
	for (i = nev0; i < nev; i++)
		ok &= strcmp(evs[i].key, "pods/ns1/ghost") != 0;
	CHECK(ok);
	/* The re-list removed the others, q0 the same. */
	CHECK(nev == nev0 + ORDER_PODS - 1);
	CHECK(rev_of("pods", "ns1", "q0") == (uint64_t)(rv - ORDER_PODS + 1));

	/* The decoder's counters are in the metrics. */
	f = open_memstream(&m, &mlen);
	remote_print_metrics(f, cur);
	fclose(f);
	s = strstr(m, "\nvolray_remote_decode_events_total ");
	CHECK(s != NULL && strtoull(s + 35, NULL, 10) >=
	    ORDER_CHUNKS * ORDER_PER + 1);
	CHECK(strstr(m, "volray_remote_decode_seconds_total") != NULL);
	CHECK(strstr(m, "volray_remote_decode_queue_peak_bytes") != NULL);
	free(m);
	stop_remote(cur);
	free(url);
}

/* remote_text.c: a bind's body, escapes and all, parses to the Binding. */
static void
test_text(void)
{
	size_t len;
	char *body;
	cJSON *t;

	body = remote_binding_body("ns\"1", "p\\1", "n\t1", &len);
	CHECK(len == strlen(body));
	t = cJSON_Parse(body);
	CHECK_STR(json_str(t, "apiVersion"), "v1");
	CHECK_STR(json_str(t, "kind"), "Binding");
	CHECK_STR(json_str(t, "metadata.name"), "p\\1");
	CHECK_STR(json_str(t, "metadata.namespace"), "ns\"1");
	CHECK_STR(json_str(t, "target.apiVersion"), "v1");
	CHECK_STR(json_str(t, "target.kind"), "Node");
	CHECK_STR(json_str(t, "target.name"), "n\t1");
	cJSON_Delete(t);
	free(body);
}

int
main(void)
{
	char *cause = NULL;
	pthread_t th;
	int i;

	log_set_level(LOG_WARN);
	resource_init();
	uv_loop_init(&sloop);
	CHECK(http_server_listen(&sloop, "127.0.0.1", 0, handler, NULL, &srv,
	    &cause) == 0);
	atomic_store(&port, http_server_port(srv));
	uv_async_init(&sloop, &cmd_async, on_cmd);
	pthread_create(&th, NULL, server_run, NULL);

	uv_loop_init(&loop);
	uv_timer_init(&loop, &tick);
	uv_timer_start(&tick, on_tick, 5, 5);

	test_text();
	test_informers();
	test_backoff();
	test_writes();
	test_get_live();
	test_order();

	uv_close((uv_handle_t *)&tick, NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(&loop) == 0);
	send_cmd(CMD_STOP, NULL, NULL);
	pthread_join(th, NULL);
	uv_run(&sloop, UV_RUN_DEFAULT);
	CHECK(uv_loop_close(&sloop) == 0);
	server_reset();
	for (i = 0; i < nreqs; i++) {
		free(reqs[i].method);
		free(reqs[i].path);
		free(reqs[i].query);
		free(reqs[i].ctype);
		free(reqs[i].body);
	}
	free(reqs);
	resource_shutdown();
	return check_result("test-remote");
}
