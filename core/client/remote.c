/*
 * The remote client (remote.h): informers that fill a mirror, and writes
 * sent over HTTPS.
 *
 * The informers (remote_informer.c) list and watch each resource into
 * the mirror, their events parsed off the loop (remote_decode.c).
 *
 * Writes made through the *_async calls (all that run on the loop: the
 * controllers', the scheduler's, the node runtimes' and lifecycle's,
 * Events, Leases) leave the loop free while they travel; the synchronous
 * ones (start-up's: the CRDs) block it for one round trip
 * (hclient_call_sync). Their
 * answers are put into the mirror with its events held; a zero timer
 * releases them on the next turn of the loop. Only the answers of
 * resources the mirror follows are put there (nothing else would ever
 * update or remove them), and never a dry run's.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/remote_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/hmap.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"
#include "registry/kinds/kinds.h"
#include "registry/status.h"

/* Kept-alive connections for the requests other than watches, a kind's
   writes each. Over HTTP/1.1 a connection carries one request at a time,
   and the API answers a write once it is on disk (a group commit): 8
   connections held a scheduler's binds to ~5,500/s with both processes
   idle half the time, 32 let ~9,500/s through (bench/sched.sh REMOTE=1,
   issue 40). kube-apiserver's --max-mutating-requests-inflight, 200,
   leaves room for a few kinds at once. */
#define REMOTE_WRITE_CONNS	32
/* Connections of the Events' client (events_h) and the Leases'
   (leases_h). */
#define EVENT_CONNS		2
#define LEASE_CONNS		2

/* --- writes ------------------------------------------------------------ */

static void
on_release(uv_timer_t *t)
{
	struct remote *rm = t->data;

	rm->held = 0;
	store_mirror_hold(rm->mirror, 0);
}

/* Whether an informer follows r's objects into the mirror. */
static int
mirrored(const struct remote *rm, const resource *r)
{
	size_t i;

	for (i = 0; i < rm->ninf; i++)
		if (strcmp(rm->inf[i].r->store_key, r->store_key) == 0)
			return 1;
	return 0;
}

/* Hold the mirror's events until the next turn of the loop. */
static void
hold_events(struct remote *rm)
{
	if (rm->held)
		return;
	rm->held = 1;
	store_mirror_hold(rm->mirror, 1);
	uv_timer_start(&rm->release, on_release, 0, 0);
}

/* Put a write's answer (its text, len bytes, parsed into obj) into the
   mirror, the text kept as it came (not printed again from obj); its
   event waits for the loop. */
static void
write_through(struct remote *rm, const resource *r, const char *text,
    size_t len, const cJSON *obj)
{
	uint64_t rv = remote_rv_of(obj);

	if (!mirrored(rm, r) || rv == 0 ||
	    json_str(obj, "metadata.name") == NULL ||
	    json_str(obj, "kind") == NULL ||
	    strcmp(json_str(obj, "kind"), r->kind) != 0)
		return;
	hold_events(rm);
	store_mirror_put_parsed(rm->mirror, r->store_key,
	    json_str(obj, "metadata.namespace"), json_str(obj, "metadata.name"),
	    text, len, obj, rv);
}

/* Append one "key=value" to a URL's query. */
static void
query_add(char **url, const char *key, const char *value)
{
	char *n = util_printf("%s%c%s=%s", *url, strchr(*url, '?') ? '&' :
	    '?', key, value);

	free(*url);
	*url = n;
}

/* The query of a write's options. */
static void
add_query(char **url, const struct reg_opts *o)
{
	char *fm;

	if (o == NULL)
		return;
	if (o->field_manager != NULL) {
		fm = remote_query_escape(o->field_manager);
		query_add(url, "fieldManager", fm);
		free(fm);
	}
	if (o->dry_run)
		query_add(url, "dryRun", "All");
	if (o->validate_strict)
		query_add(url, "fieldValidation", "Strict");
	if (o->force)
		query_add(url, "force", "true");
}

/* The resource whose answer a write puts into the mirror: none for a
   dry run's, which is what would have been stored. */
static const resource *
through(const resource *r, const struct reg_opts *o)
{
	return o != NULL && o->dry_run ? NULL : r;
}

/*
 * A write's answer as the registry gives it: the code and the object or
 * Status the server sent; a Status of our own when there was no answer
 * (status 0, err says why) or it was not JSON.
 */
static void
answer(struct reg_result *res, long status, const char *body, size_t len,
    const char *err)
{
	memset(res, 0, sizeof *res);
	if (status == 0) {
		res->code = 503;
		res->body = status_error(503, "ServiceUnavailable", "%s",
		    err != NULL ? err : "no answer");
		return;
	}
	res->code = (int)status;
	if ((res->body = cJSON_ParseWithLength(body, len)) == NULL) {
		if (res->code < 300)
			res->code = 500;
		res->body = status_error(res->code, "InternalError", "%s",
		    "the server's answer is not JSON");
	}
}

/*
 * Send one write and fill res as the registry would: the code, and the
 * object or Status the server answered (a Status of our own when it
 * could not be reached). A 2xx answer is written through as r's (NULL:
 * not at all).
 */
static void
send_write(struct remote *rm, const resource *r, const char *method,
    char *url, const char *ctype, const char *body, size_t len,
    struct reg_result *res)
{
	struct hclient_call call = { 0 };
	char *out = NULL, *err = NULL;
	size_t outlen = 0;
	long status = 0;

	call.method = method;
	call.url = url;
	call.body = body;
	call.body_len = len;
	call.content_type = ctype;
	call.accept = "application/json";
	if (hclient_call_sync(rm->h, &call, &status, &out, &outlen, &err) !=
	    0) {
		log_warn("remote: %s %s: %s", method, url, err);
		status = 0;
	}
	answer(res, status, out, outlen, err);
	if (res->code < 300 && r != NULL)
		write_through(rm, r, out, outlen, res->body);
	free(err);
	free(out);
	free(url);
}

static void
r_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = remote_collection_path(r, ns), *body = cJSON_PrintUnformatted(obj);

	add_query(&url, o);
	send_write(impl, through(r, o), "POST", url, "application/json", body,
	    strlen(body), res);
	free(body);
	cJSON_Delete(obj);
}

static void
r_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	char *url = remote_object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL), *body = cJSON_PrintUnformatted(obj);

	add_query(&url, o);
	send_write(impl, through(r, o), "PUT", url, "application/json", body,
	    strlen(body), res);
	free(body);
	cJSON_Delete(obj);
}

/*
 * The object's resourceVersion on the server now, if it is still the
 * object of uid; NULL otherwise (malloc'd).
 */
static char *
fresh_rv(struct remote *rm, const resource *r, const char *ns,
    const char *name, const char *uid)
{
	char *path = remote_object_path(r, ns, name, NULL), *body = NULL, *err = NULL;
	char *rv = NULL;
	long status = 0;
	cJSON *t;

	if (remote_get(rm, path, &status, &body, &err) == 0 && status == 200 &&
	    (t = cJSON_Parse(body)) != NULL) {
		const char *u = json_str(t, "metadata.uid");

		if (uid == NULL || (u != NULL && strcmp(u, uid) == 0))
			rv = json_str(t, "metadata.resourceVersion") != NULL ?
			    xstrdup(json_str(t, "metadata.resourceVersion")) :
			    NULL;
		cJSON_Delete(t);
	}
	free(err);
	free(body);
	free(path);
	return rv;
}

/*
 * A status its writer owns (reg_opts.own_status: the kubelet's of its pods
 * and nodes): on a conflict the write is made again over the server's
 * newer version, as client-go's RetryOnConflict does, while the object is
 * the same one (its uid), three tries in all. The mirror may lag the
 * server; the embedded store never does. Other writers (the scheduler's
 * conditions) get the 409 and decide again from a newer version.
 */
static void
r_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url, *body, *rv;
	int try;

	cJSON_DeleteItemFromObject(current, "status");
	if (status != NULL)
		cJSON_AddItemToObject(current, "status", status);
	for (try = 0;; try++) {
		url = remote_object_path(r, ns, name, "status");
		add_query(&url, o);
		body = cJSON_PrintUnformatted(current);
		send_write(impl, through(r, o), "PUT", url, "application/json",
		    body, strlen(body), res);
		free(body);
		if (res->code != 409 || try == 2 || o == NULL ||
		    !o->own_status || (rv = fresh_rv(impl, r, ns,
		    name, json_str(current, "metadata.uid"))) == NULL)
			break;
		json_set_str(json_obj(current, "metadata"), "resourceVersion",
		    rv);
		free(rv);
		cJSON_Delete(res->body);
		res->body = NULL;
	}
	cJSON_Delete(current);
}

static void
r_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *content_type, const char *body, size_t len,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = remote_object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL);

	add_query(&url, o);
	send_write(impl, through(r, o), "PATCH", url, content_type, body, len,
	    res);
}

/* DeleteOptions from the registry's options. */
static char *
delete_body(const struct reg_opts *o)
{
	cJSON *d = cJSON_CreateObject();
	char *s;

	json_set_str(d, "apiVersion", "v1");
	json_set_str(d, "kind", "DeleteOptions");
	if (o != NULL && o->propagation != NULL)
		json_set_str(d, "propagationPolicy", o->propagation);
	if (o != NULL && o->grace_set)
		json_set_num(d, "gracePeriodSeconds", (double)o->grace_period);
	if (o != NULL && o->precond_uid != NULL)
		json_set_str(json_obj(d, "preconditions"), "uid",
		    o->precond_uid);
	if (o != NULL && o->precond_rv != NULL)
		json_set_str(json_obj(d, "preconditions"), "resourceVersion",
		    o->precond_rv);
	if (o != NULL && o->dry_run)
		cJSON_AddItemToObject(d, "dryRun",
		    cJSON_CreateStringArray((const char *[]){ "All" }, 1));
	s = cJSON_PrintUnformatted(d);
	cJSON_Delete(d);
	return s;
}

static void
r_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	char *url = remote_object_path(r, ns, name, NULL), *body = delete_body(o);

	/* What DELETE answers is the object on its way out: the watch
	   says when it is gone, so nothing is written through. */
	send_write(impl, NULL, "DELETE", url, "application/json", body,
	    strlen(body), res);
	free(body);
}

/*
 * A bind leaves the mirror's pod as the server last said until the watch
 * brings it bound: the scheduler keeps the pods whose bind is on its way
 * apart (sched/assume.c), as kube-scheduler's cache assumes them, from
 * the moment it sends the bind rather than when the answer comes.
 */
static void
r_bind(void *impl, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	const resource *pods = resource_find("", "v1", "pods");
	char *url = remote_object_path(pods, ns, name, "binding");
	size_t len;
	char *body = remote_binding_body(ns, name, node, &len);

	send_write(impl, NULL, "POST", url, "application/json", body, len,
	    res);
	free(body);
}

struct async_write {
	struct remote *rm;
	const resource *through;	/* its 2xx answer into the mirror */
	client_done_fn done;		/* NULL: none */
	void *arg;
	const char *ns;			/* the object's namespace: the line
					   it waits in (hclient's flow) */
	hclient *via;			/* rm->h, events_h or leases_h */
	char buf[];			/* ns */
};

/* The client a write of r goes through, as its descriptor says:
   Events' and Leases' own, its kind's for the rest. */
static hclient *
client_for(struct remote *rm, const resource *r)
{
	hclient *h;

	if (r == NULL)
		return rm->h;
	if (r->desc != NULL && r->desc->client == KIND_CLIENT_EVENTS)
		return rm->events_h;
	if (r->desc != NULL && r->desc->client == KIND_CLIENT_LEASES)
		return rm->leases_h;
	if ((h = hmap_get(rm->kinds, r->store_key)) != NULL)
		return h;
	if ((h = hclient_new_like(rm->h)) == NULL)
		return rm->h;
	hclient_set_rate(h, rm->qps, rm->burst);
	hclient_set_max_connections(h, REMOTE_WRITE_CONNS);
	hmap_put(rm->kinds, r->store_key, h);
	return h;
}

static void
async_free(struct async_write *aw)
{
	free(aw);
}

/* An asynchronous write's answer, as send_write fills a result. */
static void
on_async_done(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct async_write *aw = arg;
	struct reg_result res;

	answer(&res, status, body, len, err);
	if (res.code < 300 && aw->through != NULL)
		write_through(aw->rm, aw->through, body, len, res.body);
	if (aw->done != NULL)
		aw->done(aw->arg, &res);
	else
		cJSON_Delete(res.body);
	async_free(aw);
}

/*
 * Start one write (url is taken) whose answer comes to aw through
 * on_async_done; the rate limiter's wait is the request's, not the
 * loop's.
 */
static void
send_async(struct remote *rm, struct async_write *aw, const char *method,
    char *url, const char *ctype, const char *body, size_t len)
{
	struct hclient_call call = { 0 };
	char *err = NULL;

	aw->rm = rm;
	call.method = method;
	call.url = url;
	call.body = body;
	call.body_len = len;
	call.content_type = ctype;
	call.accept = "application/json";
	call.timeout_ms = HCLIENT_SYNC_TIMEOUT_MS;
	/* Namespaces take turns in the rate limiter's queue: a burst in
	   one does not hold up another's writes (kuberay#2646). */
	call.flow = aw->ns;
	if (hclient_start(aw->via != NULL ? aw->via : rm->h, &call, NULL,
	    on_async_done, aw, &err) == NULL) {
		log_warn("remote: %s %s: %s", method, url, err);
		on_async_done(aw, 0, "", 0, err);
		free(err);
	}
	free(url);
}

/* A write of r in namespace ns (the hclient line it waits in), sent
   through the client client_for() names, its 2xx answer written into
   the mirror as into (through()'s answer, or NULL: not at all), the
   answer then to done(arg); all in one allocation (thousands of binds a
   second). */
static struct async_write *
new_write(struct remote *rm, const resource *r, const char *ns,
    const resource *into, client_done_fn done, void *arg)
{
	size_t lns;
	struct async_write *aw;

	ns = ns != NULL ? ns : "";
	lns = strlen(ns) + 1;
	aw = xmalloc(sizeof *aw + lns);
	memset(aw, 0, sizeof *aw);
	aw->ns = memcpy(aw->buf, ns, lns);
	aw->through = into;
	aw->via = client_for(rm, r);
	aw->done = done;
	aw->arg = arg;
	return aw;
}

static void
r_bind_async(void *impl, const char *ns, const char *name, const char *node,
    client_done_fn done, void *arg)
{
	const resource *pods = resource_find("", "v1", "pods");
	struct async_write *aw = new_write(impl, pods, ns, NULL, done, arg);
	size_t len;
	char *body = remote_binding_body(ns, name, node, &len);

	send_async(impl, aw, "POST", remote_object_path(pods, ns, name, "binding"),
	    "application/json", body, len);
	free(body);
}

/* Send obj (taken) to url (taken) with method, without waiting. */
static void
send_obj_async(struct remote *rm, const resource *r, const char *ns,
    const struct reg_opts *o, const char *method, char *url, cJSON *obj,
    client_done_fn done, void *arg)
{
	struct async_write *aw = new_write(rm, r, ns, through(r, o), done,
	    arg);
	char *body = cJSON_PrintUnformatted(obj);

	cJSON_Delete(obj);
	add_query(&url, o);
	send_async(rm, aw, method, url, "application/json", body,
	    strlen(body));
	free(body);
}

/* PUT obj (taken) to url (taken) without waiting. */
static void
put_async(struct remote *rm, const resource *r, const char *ns,
    const struct reg_opts *o, char *url, cJSON *obj, client_done_fn done,
    void *arg)
{
	send_obj_async(rm, r, ns, o, "PUT", url, obj, done, arg);
}

/*
 * A status its writer owns (reg_opts.own_status), written without
 * waiting as r_update_status writes it while the loop waits: on a 409 the
 * server's version is read (without waiting either) and the status
 * written again over it while the object is the same one (its uid),
 * three tries in all; then the last answer goes to done.
 */
struct own_write {
	struct remote *rm;
	const resource *r, *through;
	char *ns, *name, *url;		/* url: the status's, with the query */
	cJSON *current;			/* the object with its new status */
	int conflicts;
	struct reg_result conflict;	/* kept while the fresh one is read */
	client_done_fn done;
	void *arg;
};

static void own_send(struct own_write *);

static void
own_finish(struct own_write *ow, struct reg_result *res)
{
	if (ow->done != NULL)
		ow->done(ow->arg, res);
	else
		cJSON_Delete(res->body);
	cJSON_Delete(ow->current);
	free(ow->ns);
	free(ow->name);
	free(ow->url);
	free(ow);
}

/* The server's version after a conflict: write again over it, or give
   the conflict to done if the object is gone or another one. */
static void
on_own_fresh(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct own_write *ow = arg;
	const char *uid = json_str(ow->current, "metadata.uid"), *u, *rv;
	cJSON *t = status == 200 ? cJSON_ParseWithLength(body, len) : NULL;

	(void)err;
	u = json_str(t, "metadata.uid");
	rv = json_str(t, "metadata.resourceVersion");
	if (t == NULL || rv == NULL || (uid != NULL && (u == NULL ||
	    strcmp(u, uid) != 0))) {
		cJSON_Delete(t);
		own_finish(ow, &ow->conflict);
		return;
	}
	json_set_str(json_obj(ow->current, "metadata"), "resourceVersion",
	    rv);
	cJSON_Delete(t);
	cJSON_Delete(ow->conflict.body);
	memset(&ow->conflict, 0, sizeof ow->conflict);
	own_send(ow);
}

static void
on_own_answer(void *arg, struct reg_result *res)
{
	struct own_write *ow = arg;
	struct hclient_call call = { 0 };
	char *url, *err = NULL;

	if (res->code != 409 || ++ow->conflicts == 3) {
		own_finish(ow, res);
		return;
	}
	ow->conflict = *res;
	url = remote_object_path(ow->r, ow->ns, ow->name, NULL);
	call.url = url;
	call.accept = "application/json";
	call.timeout_ms = HCLIENT_SYNC_TIMEOUT_MS;
	call.flow = ow->ns;
	if (hclient_start(ow->rm->h, &call, NULL, on_own_fresh, ow, &err) ==
	    NULL) {
		log_warn("remote: GET %s: %s", url, err);
		free(err);
		own_finish(ow, &ow->conflict);
	}
	free(url);
}

static void
own_send(struct own_write *ow)
{
	struct async_write *aw = new_write(ow->rm, ow->r, ow->ns, ow->through,
	    on_own_answer, ow);
	char *body = cJSON_PrintUnformatted(ow->current);

	send_async(ow->rm, aw, "PUT", xstrdup(ow->url), "application/json",
	    body, strlen(body));
	free(body);
}

static void
r_update_status_async(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct own_write *ow;

	cJSON_DeleteItemFromObject(current, "status");
	if (status != NULL)
		cJSON_AddItemToObject(current, "status", status);
	if (o == NULL || !o->own_status) {
		put_async(impl, r, ns, o, remote_object_path(r, ns, name, "status"),
		    current, done, arg);
		return;
	}
	ow = xcalloc(1, sizeof *ow);
	ow->rm = impl;
	ow->r = r;
	ow->through = through(r, o);
	ow->ns = xstrdup(ns != NULL ? ns : "");
	ow->name = xstrdup(name);
	ow->url = remote_object_path(r, ns, name, "status");
	add_query(&ow->url, o);
	ow->current = current;
	ow->done = done;
	ow->arg = arg;
	own_send(ow);
}

static void
r_update_async(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *o,
    client_done_fn done, void *arg)
{
	put_async(impl, r, ns, o, remote_object_path(r, ns, name, o != NULL ?
	    o->subresource : NULL), obj, done, arg);
}

static void
r_patch_async(void *impl, const resource *r, const char *ns,
    const char *name, const char *content_type, const char *body,
    size_t len, const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct async_write *aw = new_write(impl, r, ns, through(r, o), done,
	    arg);
	char *url = remote_object_path(r, ns, name, o != NULL ? o->subresource :
	    NULL);

	add_query(&url, o);
	send_async(impl, aw, "PATCH", url, content_type, body, len);
}

static void
r_create_async(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	send_obj_async(impl, r, ns, o, "POST", remote_collection_path(r, ns), obj,
	    done, arg);
}

/* As r_delete: nothing written through, the watch says when it is gone. */
static void
r_delete_async(void *impl, const resource *r, const char *ns,
    const char *name, const struct reg_opts *o, client_done_fn done,
    void *arg)
{
	struct async_write *aw = new_write(impl, r, ns, NULL, done, arg);
	char *body = delete_body(o);

	send_async(impl, aw, "DELETE", remote_object_path(r, ns, name, NULL),
	    "application/json", body, strlen(body));
	free(body);
}

/* An eviction is the pod's graceful delete, as Volcano's evictor makes
   it (pods/eviction would also consult PodDisruptionBudgets). */
static void
r_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	r_delete(impl, resource_find("", "v1", "pods"), ns, name, o, res);
}

static void
r_evict_async(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	r_delete_async(impl, resource_find("", "v1", "pods"), ns, name, o,
	    done, arg);
}

/*
 * A GET of the object from the server, without waiting: its answer goes
 * to done as a write's does, and not into the mirror (the watch brings
 * the object there in its order). It waits in the bucket of the lists,
 * watches and reads ("default"), in its namespace's line.
 */
static void
r_get_live_async(void *impl, const resource *r, const char *ns,
    const char *name, client_done_fn done, void *arg)
{
	struct async_write *aw = new_write(impl, NULL, ns, NULL, done, arg);

	send_async(impl, aw, "GET", remote_object_path(r, ns, name, NULL),
	    NULL, NULL, 0);
}

static void
on_informer_closed(uv_handle_t *h)
{
	struct remote *rm = h->data;

	if (--rm->nsynced == 0) {
		free(rm->inf);
		free(rm);
	}
}

static int
free_kind_client(const char *key, void *h, void *arg)
{
	(void)key;
	(void)arg;
	hclient_free(h);
	return 0;
}

static void
r_free(void *impl)
{
	struct remote *rm = impl;
	size_t i;

	/* First: its jobs hold versions, and point at the informers. */
	remote_decode_free(rm->dec);
	for (i = 0; i < rm->ninf; i++) {
		remote_informer_clear(&rm->inf[i]);
	}
	hmap_each(rm->kinds, free_kind_client, NULL);
	hmap_free(rm->kinds);
	hclient_free(rm->h);
	hclient_free(rm->events_h);
	hclient_free(rm->leases_h);
	/* Held events (a write's, not yet released) go with the mirror. */
	store_close(rm->mirror);
	free(rm->server);
	/* The timers close on the loop; the last one frees. */
	rm->nsynced = rm->ninf + 1;
	for (i = 0; i < rm->ninf; i++) {
		rm->inf[i].timer.data = rm;
		uv_close((uv_handle_t *)&rm->inf[i].timer, on_informer_closed);
	}
	rm->release.data = rm;
	uv_close((uv_handle_t *)&rm->release, on_informer_closed);
}

static const struct client_ops remote_ops = {
	r_create, r_update, r_update_status, r_patch, r_delete, r_bind,
	r_evict, r_free, r_bind_async, r_update_status_async, r_patch_async,
	r_update_async, r_create_async, r_delete_async, r_evict_async,
	r_get_live_async
};

/* --- the client -------------------------------------------------------- */

remote *
remote_new(uv_loop_t *loop, const struct kubecfg *kc,
    const struct remote_conf *conf, char **cause)
{
	struct hclient_conf hc = { 0 };
	struct remote *rm = xcalloc(1, sizeof *rm);

	rm->loop = loop;
	hc.base_url = kc->server;
	hc.ca_pem = kc->ca.data;
	hc.ca_pem_len = kc->ca.len;
	hc.cert_pem = kc->cert.data;
	hc.cert_pem_len = kc->cert.len;
	hc.key_pem = kc->key.data;
	hc.key_pem_len = kc->key.len;
	hc.insecure = kc->insecure;
	hc.token = kc->token;
	hc.user_agent = conf->user_agent != NULL ? conf->user_agent :
	    "volrayd";
	if ((rm->h = hclient_new(loop, &hc, cause)) == NULL) {
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->h, conf->qps, conf->burst);
	rm->qps = conf->qps;
	rm->burst = conf->burst;
	if ((rm->events_h = hclient_new(loop, &hc, cause)) == NULL) {
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->events_h, conf->qps, conf->burst);
	hclient_set_max_connections(rm->events_h, EVENT_CONNS);
	if ((rm->leases_h = hclient_new(loop, &hc, cause)) == NULL) {
		hclient_free(rm->events_h);
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	hclient_set_rate(rm->leases_h, conf->qps, conf->burst);
	hclient_set_max_connections(rm->leases_h, LEASE_CONNS);
	if (store_mirror_open(loop, &rm->mirror) != 0) {
		*cause = xstrdup("cannot make the mirror");
		hclient_free(rm->leases_h);
		hclient_free(rm->events_h);
		hclient_free(rm->h);
		free(rm);
		return NULL;
	}
	rm->kinds = hmap_new();
	rm->server = xstrdup(kc->server);
	rm->on_synced = conf->on_synced;
	rm->arg = conf->arg;
	uv_timer_init(loop, &rm->release);
	rm->release.data = rm;
	remote_informers_add(rm, conf);
	rm->dec = remote_decode_new(loop, remote_informer_decoded, rm);
	/* A connection per watch and REMOTE_WRITE_CONNS for the rest. */
	hclient_set_max_connections(rm->h, (int)rm->ninf + REMOTE_WRITE_CONNS);
	remote_informers_start(rm);
	rm->c = client_new(rm->mirror, &remote_ops, rm);
	return rm;
}

static void
print_bucket(FILE *f, const char *name, const hclient *h)
{
	struct hclient_stats st;

	if (h == NULL)
		return;
	hclient_stats(h, &st);
	fprintf(f, "volray_remote_requests_total{bucket=\"%s\"} %llu\n"
	    "volray_remote_queued_seconds_total{bucket=\"%s\"} %.3f\n",
	    name, (unsigned long long)st.requests, name, st.queued_s);
}

static int
print_kind_bucket(const char *key, void *value, void *arg)
{
	print_bucket(arg, key, value);
	return 0;
}

void
remote_print_metrics(FILE *f, const remote *rm)
{
	size_t i;

	fprintf(f, "# HELP volray_remote_mirror_objects Objects of a kind "
	    "mirrored from the remote API.\n"
	    "# TYPE volray_remote_mirror_objects gauge\n");
	for (i = 0; i < rm->ninf; i++)
		fprintf(f, "volray_remote_mirror_objects{resource=\"%s\"} %zu\n",
		    rm->inf[i].r->store_key, store_count(rm->mirror,
		    rm->inf[i].r->store_key));
	fprintf(f, "# HELP volray_remote_lists_total Lists of a kind from the "
	    "remote API (the first, then one per 410 Gone or failed "
	    "watch).\n# TYPE volray_remote_lists_total counter\n");
	for (i = 0; i < rm->ninf; i++)
		fprintf(f, "volray_remote_lists_total{resource=\"%s\"} %llu\n",
		    rm->inf[i].r->store_key,
		    (unsigned long long)rm->inf[i].lists);
	fprintf(f, "# HELP volray_remote_requests_total Requests sent to "
	    "the remote API, by rate-limit bucket (a kind's writes, Events, "
	    "Leases, and the lists, watches and reads of \"default\").\n"
	    "# TYPE volray_remote_requests_total counter\n"
	    "# HELP volray_remote_queued_seconds_total Their time in line "
	    "before being sent: waiting for a token of --kube-api-qps and "
	    "--kube-api-burst, or a free connection.\n"
	    "# TYPE volray_remote_queued_seconds_total counter\n");
	print_bucket(f, "default", rm->h);
	print_bucket(f, "events", rm->events_h);
	print_bucket(f, "leases", rm->leases_h);
	hmap_each(rm->kinds, print_kind_bucket, f);
	remote_decode_print_metrics(f, rm->dec);
}

client *
remote_client(remote *rm)
{
	return rm->c;
}

int
remote_synced(const remote *rm)
{
	return rm->nsynced == rm->ninf;
}

const char *
remote_server(const remote *rm)
{
	return rm->server;
}

int
remote_get(remote *rm, const char *path, long *status, char **body,
    char **cause)
{
	struct hclient_call call = { 0 };
	size_t len;

	call.url = path;
	call.accept = "application/json";
	return hclient_call_sync(rm->h, &call, status, body, &len, cause);
}
