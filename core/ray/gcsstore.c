/*
 * GCS fault tolerance: a head's GCS tables in an external Redis, as Ray
 * keeps them when RAY_REDIS_ADDRESS is set, so that a new head pod of
 * the same cluster recovers them. A head pod is fault tolerant when
 * KubeRay marked it (annotation ray.io/ft-enabled: "true") and its Ray
 * container (the first) has RAY_REDIS_ADDRESS; its storage namespace is
 * RAY_external_storage_namespace (else the annotation
 * ray.io/external-storage-namespace), its credentials REDIS_USERNAME and
 * REDIS_PASSWORD (values or Secret keys; else those of a
 * redis://user:password@host:port address). Ray's key layout: one hash
 * per table, "RAY" NAMESPACE "@" TABLE; here the internal KV table
 * ("RAY<ns>@KV") with the job table as Ray's job manager keeps it
 * (field "@namespace_job:_ray_internal_job_info_<submission id>", the
 * job's record as JSON) and the cluster's session name
 * ("@namespace_session:session_name"). Every change of a job is one
 * HSET; a (re)connection writes every job again.
 *
 * The address is host:port (the first of a comma-separated list, with or
 * without redis://). The host is an IP address, localhost, or a Service
 * of the pod's namespace (NAME, NAME.NS, NAME.NS.svc[.cluster.local]),
 * reached at the first address of its Endpoints: a Service without a
 * selector whose Endpoints name a Redis outside the cluster is how a
 * test or a user points a simulated cluster at a real Redis. rediss://
 * (TLS) is refused: the client (hiredis 0.14) has none.
 *
 * Also here: the effect of KubeRay's Redis cleanup Job on a simulated
 * node (ray.io/node-type: redis-cleanup): delete every key of the
 * storage namespace, as Ray's cleanup_redis_storage does, retrying the
 * connection RAY_redis_db_connect_retries times every
 * RAY_redis_db_connect_wait_milliseconds.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <hiredis/adapters/libuv.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define RETRY_MS	1000
#define JOB_FIELD	"@namespace_job:_ray_internal_job_info_"
#define SESSION_FIELD	"@namespace_session:session_name"
#define SERVE_FIELD	"@namespace_serve:applications"

/* A connection that authenticates, then calls ready. */
struct rconn {
	ray *r;
	struct gcs_target t;
	redisAsyncContext *ac;
	uv_timer_t retry;
	int retry_ms;
	int up;				/* connected and authenticated */
	int closing;
	char *auth_err;			/* AUTH refused: disconnecting */
	void (*ready)(struct rconn *);
	void (*failed)(struct rconn *, const char *why);
	void *owner;
};

void
ray_gcs_target_free(struct gcs_target *t)
{
	free(t->host);
	free(t->user);
	free(t->pass);
	free(t->storage_ns);
	free(t->address);
	memset(t, 0, sizeof *t);
}

/* The Service host name's Endpoints address for port (malloc'd IP). */
static char *
service_address(ray *r, const char *ns, const char *host, int *port)
{
	char name[254], sns[254];
	const store_obj *o;
	const cJSON *p, *sub, *a, *ep;
	cJSON *svc, *eps;
	char *ip = NULL;
	const char *pname = NULL;
	int n, target = *port;

	n = sscanf(host, "%253[^.].%253[^.]", name, sns);
	if (n < 1)
		return NULL;
	if (n == 1)
		util_strf(sns, sizeof sns, "%s", ns);
	if ((o = client_get(r->c, "services", sns, name)) == NULL)
		return NULL;
	svc = store_obj_tree(o);
	cJSON_ArrayForEach(p, json_at(svc, "spec.ports")) {
		const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "port");
		const cJSON *tp = cJSON_GetObjectItemCaseSensitive(p,
		    "targetPort");

		if (!cJSON_IsNumber(pv) || pv->valueint != *port)
			continue;
		pname = json_str(p, "name");
		if (cJSON_IsNumber(tp))
			target = tp->valueint;
	}
	if ((o = client_get(r->c, "endpoints", sns, name)) == NULL) {
		cJSON_Delete(svc);
		return NULL;
	}
	eps = store_obj_tree(o);
	cJSON_ArrayForEach(sub, json_at(eps, "subsets")) {
		a = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(sub,
		    "addresses"), 0);
		if (a == NULL || json_str(a, "ip") == NULL)
			continue;
		cJSON_ArrayForEach(ep, cJSON_GetObjectItemCaseSensitive(sub,
		    "ports")) {
			const cJSON *pv = cJSON_GetObjectItemCaseSensitive(ep,
			    "port");

			if (!cJSON_IsNumber(pv))
				continue;
			if (pname == NULL || json_str(ep, "name") == NULL ||
			    strcmp(pname, json_str(ep, "name")) == 0) {
				target = pv->valueint;
				break;
			}
		}
		ip = xstrdup(json_str(a, "ip"));
		break;
	}
	cJSON_Delete(eps);
	cJSON_Delete(svc);
	*port = target;
	return ip;
}

/* Take "[redis://][user:pass@]host[:port]" apart; -1 with *cause. */
static int
parse_address(struct gcs_target *t, const char *addr, char **cause)
{
	size_t n = strcspn(addr, ",");
	char *a = xstrndup(addr, n), *p = a, *at, *colon;

	if (strncmp(p, "rediss://", 9) == 0) {
		*cause = xstrdup("rediss:// (Redis over TLS) is not supported");
		free(a);
		return -1;
	}
	if (strncmp(p, "redis://", 8) == 0)
		p += 8;
	p[strcspn(p, "/")] = '\0';
	if ((at = strrchr(p, '@')) != NULL) {
		*at = '\0';
		if ((colon = strchr(p, ':')) != NULL) {
			*colon = '\0';
			t->pass = xstrdup(colon + 1);
		}
		if (*p != '\0')
			t->user = xstrdup(p);
		p = at + 1;
	}
	t->port = 6379;
	if ((colon = strrchr(p, ':')) != NULL) {
		t->port = atoi(colon + 1);
		*colon = '\0';
	}
	if (*p == '\0' || t->port <= 0 || t->port > 65535) {
		*cause = util_printf("bad Redis address %s", addr);
		free(a);
		return -1;
	}
	t->host = xstrdup(p);
	free(a);
	return 0;
}

int
ray_gcs_target(ray *r, const char *ns, const cJSON *pod,
    struct gcs_target *t, char **cause)
{
	const cJSON *c = cJSON_GetArrayItem(json_at(pod, "spec.containers"), 0);
	const cJSON *ann = json_at(pod, "metadata.annotations"), *a;
	struct in_addr ia;
	char *addr, *v;

	memset(t, 0, sizeof *t);
	*cause = NULL;
	if ((addr = ray_pod_env(r->c, ns, c, "RAY_REDIS_ADDRESS")) == NULL ||
	    *addr == '\0') {
		free(addr);
		*cause = xstrdup("RAY_REDIS_ADDRESS is not set");
		return -1;
	}
	t->address = addr;
	if (parse_address(t, addr, cause) != 0) {
		ray_gcs_target_free(t);
		return -1;
	}
	if ((v = ray_pod_env(r->c, ns, c, "REDIS_PASSWORD")) != NULL) {
		free(t->pass);
		t->pass = v;
	}
	if ((v = ray_pod_env(r->c, ns, c, "REDIS_USERNAME")) != NULL) {
		free(t->user);
		t->user = v;
	}
	if (t->pass != NULL && *t->pass == '\0') {
		free(t->pass);
		t->pass = NULL;
	}
	t->storage_ns = ray_pod_env(r->c, ns, c,
	    "RAY_external_storage_namespace");
	a = cJSON_GetObjectItemCaseSensitive(ann,
	    "ray.io/external-storage-namespace");
	if (t->storage_ns == NULL && cJSON_IsString(a))
		t->storage_ns = xstrdup(a->valuestring);
	if (t->storage_ns == NULL)
		t->storage_ns = xstrdup("default");
	if (strcmp(t->host, "localhost") == 0) {
		free(t->host);
		t->host = xstrdup("127.0.0.1");
	} else if (inet_pton(AF_INET, t->host, &ia) != 1) {
		int port = t->port;
		char *ip = service_address(r, ns, t->host, &port);

		if (ip == NULL) {
			*cause = util_printf("Redis host %s is neither an IP "
			    "address nor a Service with endpoints in %s",
			    t->host, ns);
			ray_gcs_target_free(t);
			return -1;
		}
		free(t->host);
		t->host = ip;
		t->port = port;
	}
	return 0;
}

/* --- the connection ------------------------------------------------ */

static void rconn_connect(struct rconn *);

static void
on_retry(uv_timer_t *t)
{
	rconn_connect(t->data);
}

static void
rconn_lost(struct rconn *rc, const char *why)
{
	rc->up = 0;
	rc->ac = NULL;
	if (rc->closing)
		return;
	if (rc->failed != NULL)
		rc->failed(rc, why);
	if (!rc->closing)
		uv_timer_start(&rc->retry, on_retry, (uint64_t)rc->retry_ms, 0);
}

static void
on_auth(redisAsyncContext *ac, void *reply, void *arg)
{
	struct rconn *rc = arg;
	redisReply *rp = reply;

	if (rc->closing || rp == NULL)
		return;
	if (rp->type == REDIS_REPLY_ERROR) {
		/* Told on the disconnection, then tried again. */
		free(rc->auth_err);
		rc->auth_err = util_printf("AUTH: %s", rp->str);
		redisAsyncDisconnect(ac);
		return;
	}
	rc->up = 1;
	rc->ready(rc);
}

static void
on_connect(const redisAsyncContext *ac, int status)
{
	struct rconn *rc = ac->data;

	if (status != REDIS_OK) {
		rconn_lost(rc, ac->errstr);
		return;
	}
	if (rc->t.pass != NULL && rc->t.user != NULL)
		redisAsyncCommand(rc->ac, on_auth, rc, "AUTH %s %s", rc->t.user,
		    rc->t.pass);
	else if (rc->t.pass != NULL)
		redisAsyncCommand(rc->ac, on_auth, rc, "AUTH %s", rc->t.pass);
	else {
		rc->up = 1;
		rc->ready(rc);
	}
}

static void
on_disconnect(const redisAsyncContext *ac, int status)
{
	struct rconn *rc = ac->data;

	char *why = rc->auth_err;

	(void)status;
	rc->auth_err = NULL;
	rconn_lost(rc, why != NULL ? why : ac->errstr[0] ? ac->errstr :
	    "connection closed");
	free(why);
}

static void
rconn_connect(struct rconn *rc)
{
	redisAsyncContext *ac = redisAsyncConnect(rc->t.host, rc->t.port);

	if (ac == NULL || ac->err) {
		char *why = xstrdup(ac != NULL ? ac->errstr : "out of memory");

		if (ac != NULL)
			redisAsyncFree(ac);
		rconn_lost(rc, why);
		free(why);
		return;
	}
	ac->data = rc;
	redisLibuvAttach(ac, rc->r->loop);
	redisAsyncSetConnectCallback(ac, on_connect);
	redisAsyncSetDisconnectCallback(ac, on_disconnect);
	rc->ac = ac;
}

static struct rconn *
rconn_new(ray *r, const struct gcs_target *t, void *owner)
{
	struct rconn *rc = xcalloc(1, sizeof *rc);

	rc->r = r;
	rc->owner = owner;
	rc->t.host = xstrdup(t->host);
	rc->t.port = t->port;
	rc->t.user = t->user ? xstrdup(t->user) : NULL;
	rc->t.pass = t->pass ? xstrdup(t->pass) : NULL;
	rc->t.storage_ns = xstrdup(t->storage_ns);
	rc->t.address = xstrdup(t->address);
	rc->retry_ms = RETRY_MS;
	uv_timer_init(r->loop, &rc->retry);
	rc->retry.data = rc;
	return rc;
}

static void
on_rconn_closed(uv_handle_t *h)
{
	struct rconn *rc = h->data;

	ray_gcs_target_free(&rc->t);
	free(rc->auth_err);
	free(rc);
}

/*
 * Close. Replies get the connection as their argument: pending ones are
 * called with NULL (now, or once the callback running returns) and see
 * closing; the connection is freed on the loop's next turn, its owner
 * may go at once.
 */
static void
rconn_close(struct rconn *rc)
{
	rc->closing = 1;
	rc->owner = NULL;
	if (rc->ac != NULL) {
		redisAsyncContext *ac = rc->ac;

		rc->ac = NULL;
		redisAsyncFree(ac);
	}
	uv_timer_stop(&rc->retry);
	uv_close((uv_handle_t *)&rc->retry, on_rconn_closed);
}

/* --- a head's tables ----------------------------------------------- */

struct gcs_store {
	struct rconn *rc;		/* Redis, or NULL */
	struct gcs_file *file;		/* the embedded backend, or NULL */
	struct ray_head *h;
	char *key;			/* RAY<ns>@KV */
	int want_load;			/* read the tables before serving */
	int warned;
	ray_gcs_loaded_fn loaded;
	ray_gcs_record_fn record;
	ray_gcs_serve_fn serve;
};

static void
write_all(struct gcs_store *s)
{
	int i;

	for (i = 0; i < s->h->njobs; i++) {
		cJSON *rec = s->record(s->h->order[i]);

		ray_gcs_put(s, s->h->order[i]->id, rec);
		cJSON_Delete(rec);
	}
	ray_gcs_put_serve(s, s->h);
}

static void
on_load(redisAsyncContext *ac, void *reply, void *arg)
{
	struct rconn *rc = arg;
	struct gcs_store *s = rc->owner;
	redisReply *rp = reply;
	cJSON *recs, *serve = NULL;
	char *session = NULL;
	size_t i, fl = strlen(JOB_FIELD);

	(void)ac;
	if (rc->closing || rp == NULL || rp->type != REDIS_REPLY_ARRAY)
		return;
	recs = cJSON_CreateArray();
	for (i = 0; i + 1 < rp->elements; i += 2) {
		redisReply *k = rp->element[i], *v = rp->element[i + 1];
		cJSON *t;

		if (k->type != REDIS_REPLY_STRING ||
		    v->type != REDIS_REPLY_STRING)
			continue;
		if (strcmp(k->str, SESSION_FIELD) == 0) {
			free(session);
			session = xstrndup(v->str, v->len);
		} else if (strcmp(k->str, SERVE_FIELD) == 0) {
			cJSON_Delete(serve);
			serve = cJSON_ParseWithLength(v->str, v->len);
		} else if (strncmp(k->str, JOB_FIELD, fl) == 0 &&
		    (t = cJSON_ParseWithLength(v->str, v->len)) != NULL)
			cJSON_AddItemToArray(recs, t);
	}
	if (session == NULL) {
		session = ray_session_name(s->h->uid);
		redisAsyncCommand(s->rc->ac, NULL, NULL, "HSETNX %s %s %s",
		    s->key, SESSION_FIELD, session);
	}
	log_info("ray: %s/%s: GCS recovered from Redis %s (storage namespace "
	    "%s): %d jobs, session %s", s->h->ns, s->h->name, s->rc->t.address,
	    s->rc->t.storage_ns, cJSON_GetArraySize(recs), session);
	s->want_load = 0;
	s->loaded(s->h, recs, session, serve);
	cJSON_Delete(recs);
	cJSON_Delete(serve);
	free(session);
	write_all(s);
}

static void
tables_ready(struct rconn *rc)
{
	struct gcs_store *s = rc->owner;

	if (s->warned)
		log_info("ray: %s/%s: connected to Redis %s", s->h->ns,
		    s->h->name, rc->t.address);
	s->warned = 0;
	if (s->want_load)
		redisAsyncCommand(rc->ac, on_load, rc, "HGETALL %s", s->key);
	else
		write_all(s);
}

static void
tables_failed(struct rconn *rc, const char *why)
{
	struct gcs_store *s = rc->owner;

	if (!s->warned)
		log_warn("ray: %s/%s: GCS storage: Redis %s: %s; retrying "
		    "every second", s->h->ns, s->h->name, rc->t.address, why);
	s->warned = 1;
}

struct gcs_store *
ray_gcs_open(struct ray_head *h, const struct gcs_target *t, int load,
    ray_gcs_record_fn record, ray_gcs_serve_fn serve,
    ray_gcs_loaded_fn loaded)
{
	struct gcs_store *s = xcalloc(1, sizeof *s);

	s->h = h;
	s->key = util_printf("RAY%s@KV", t->storage_ns);
	s->want_load = load;
	s->record = record;
	s->serve = serve;
	s->loaded = loaded;
	s->rc = rconn_new(h->r, t, s);
	s->rc->ready = tables_ready;
	s->rc->failed = tables_failed;
	rconn_connect(s->rc);
	return s;
}

/* The embedded backend's document is read: as on_load for Redis. */
static void
on_file_loaded(void *arg, const cJSON *doc)
{
	struct gcs_store *s = arg;
	const cJSON *j, *ss = json_at(doc, "session");
	cJSON *recs = cJSON_CreateArray();
	char *session;

	cJSON_ArrayForEach(j, json_at(doc, "jobs"))
		cJSON_AddItemToArray(recs, cJSON_Duplicate(j, 1));
	session = cJSON_IsString(ss) ? xstrdup(ss->valuestring) :
	    ray_session_name(s->h->uid);
	if (!cJSON_IsString(ss)) {
		cJSON *v = cJSON_CreateString(session);

		ray_gcs_file_set(s->file, "session", NULL, v);
		cJSON_Delete(v);
	}
	log_info("ray: %s/%s: GCS recovered from its embedded storage: %d "
	    "jobs, session %s", s->h->ns, s->h->name, cJSON_GetArraySize(recs),
	    session);
	s->want_load = 0;
	s->loaded(s->h, recs, session, json_at(doc, "serve"));
	cJSON_Delete(recs);
	free(session);
	write_all(s);
}

struct gcs_store *
ray_gcs_open_file(struct ray_head *h, const char *dir,
    ray_gcs_record_fn record, ray_gcs_serve_fn serve,
    ray_gcs_loaded_fn loaded)
{
	struct gcs_store *s = xcalloc(1, sizeof *s);

	s->h = h;
	s->want_load = 1;
	s->record = record;
	s->serve = serve;
	s->loaded = loaded;
	s->file = ray_gcs_file_open(h->r->wheel, dir, on_file_loaded, s);
	return s;
}

/* Is the store ready for writes? */
static int
writable(const struct gcs_store *s)
{
	return s != NULL && !s->want_load && (s->file != NULL ||
	    (s->rc != NULL && s->rc->up));
}

void
ray_gcs_put(struct gcs_store *s, const char *id, const cJSON *rec)
{
	char *v;

	if (!writable(s))
		return;
	if (s->file != NULL) {
		ray_gcs_file_set(s->file, "jobs", id, rec);
		return;
	}
	v = cJSON_PrintUnformatted(rec);
	redisAsyncCommand(s->rc->ac, NULL, NULL, "HSET %s %s%s %s", s->key,
	    JOB_FIELD, id, v);
	free(v);
}

void
ray_gcs_put_serve(struct gcs_store *s, const struct ray_head *h)
{
	cJSON *st;
	char *v;

	if (!writable(s))
		return;
	st = s->serve(h);
	if (s->file != NULL) {
		ray_gcs_file_set(s->file, "serve", NULL, st);
		cJSON_Delete(st);
		return;
	}
	v = cJSON_PrintUnformatted(st);
	redisAsyncCommand(s->rc->ac, NULL, NULL, "HSET %s %s %s", s->key,
	    SERVE_FIELD, v);
	free(v);
	cJSON_Delete(st);
}

void
ray_gcs_del(struct gcs_store *s, const char *id)
{
	if (!writable(s))
		return;
	if (s->file != NULL) {
		ray_gcs_file_set(s->file, "jobs", id, NULL);
		return;
	}
	redisAsyncCommand(s->rc->ac, NULL, NULL, "HDEL %s %s%s", s->key,
	    JOB_FIELD, id);
}

void
ray_gcs_close(struct gcs_store *s)
{
	if (s == NULL)
		return;
	if (s->rc != NULL)
		rconn_close(s->rc);
	ray_gcs_file_close(s->file);
	free(s->key);
	free(s);
}

char *
ray_session_name(const char *uid)
{
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	unsigned n = 0;

	gmtime_r(&now, &tm);
	strftime(when, sizeof when, "%Y-%m-%d_%H-%M-%S", &tm);
	for (; uid != NULL && *uid != '\0'; uid++)
		n = n * 31 + (unsigned char)*uid;
	return util_printf("session_%s_%06u", when, n % 1000000);
}

/* --- the Redis cleanup Job's effect -------------------------------- */

struct gcs_clean {
	struct rconn *rc;
	char *pattern;			/* RAY<ns>@* */
	int tries, max_tries, wait_ms;
	long deleted;
	long pending;			/* DELs not answered yet */
	int scanned;			/* the SCAN came back to cursor 0 */
	void (*done)(void *, int);
	void *arg;
	int over;
};

static void
clean_finish(struct gcs_clean *c, int code)
{
	if (c->over)
		return;
	c->over = 1;
	c->done(c->arg, code);
}

static void
clean_check(struct gcs_clean *c)
{
	if (!c->scanned || c->pending > 0)
		return;
	log_info("ray: Redis cleanup: %ld keys of %s deleted at %s",
	    c->deleted, c->pattern, c->rc->t.address);
	clean_finish(c, 0);
}

static void
on_del(redisAsyncContext *ac, void *reply, void *arg)
{
	struct rconn *rc = arg;
	struct gcs_clean *c = rc->owner;
	redisReply *rp = reply;

	(void)ac;
	if (rc->closing || c->over || rp == NULL)
		return;
	c->pending--;
	if (rp->type == REDIS_REPLY_ERROR) {
		log_info("ray: Redis cleanup of %s: DEL: %s", c->pattern,
		    rp->str);
		clean_finish(c, 1);
		return;
	}
	c->deleted++;
	clean_check(c);
}

static void
on_scan(redisAsyncContext *ac, void *reply, void *arg)
{
	struct rconn *rc = arg;
	struct gcs_clean *c = rc->owner;
	redisReply *rp = reply, *keys;
	size_t i;

	(void)ac;
	if (rc->closing || c->over || rp == NULL)
		return;
	if (rp->type != REDIS_REPLY_ARRAY || rp->elements != 2) {
		log_info("ray: Redis cleanup of %s: SCAN: %s", c->pattern,
		    rp->type == REDIS_REPLY_ERROR ? rp->str : "bad reply");
		clean_finish(c, 1);
		return;
	}
	keys = rp->element[1];
	for (i = 0; i < keys->elements; i++)
		if (keys->element[i]->type == REDIS_REPLY_STRING) {
			redisAsyncCommand(c->rc->ac, on_del, rc, "DEL %b",
			    keys->element[i]->str, keys->element[i]->len);
			c->pending++;
		}
	if (strcmp(rp->element[0]->str, "0") == 0) {
		c->scanned = 1;
		clean_check(c);
		return;
	}
	redisAsyncCommand(c->rc->ac, on_scan, rc, "SCAN %s MATCH %s COUNT 1000",
	    rp->element[0]->str, c->pattern);
}

static void
clean_ready(struct rconn *rc)
{
	struct gcs_clean *c = rc->owner;

	redisAsyncCommand(rc->ac, on_scan, rc, "SCAN 0 MATCH %s COUNT 1000",
	    c->pattern);
}

static void
clean_failed(struct rconn *rc, const char *why)
{
	struct gcs_clean *c = rc->owner;

	if (++c->tries < c->max_tries)
		return;			/* rconn_lost tries again */
	log_info("ray: Redis cleanup of %s: Redis %s: %s after %d tries",
	    c->pattern, rc->t.address, why, c->tries);
	rc->closing = 1;		/* no more retries */
	clean_finish(c, 1);
}

/* Ray's pattern escapes: "[, ], -, ?, *, ^, \" with a backslash. */
static char *
escape_pattern(const char *s)
{
	char *out = xmalloc(strlen(s) * 2 + 1), *o = out;

	for (; *s; s++) {
		if (strchr("[]-?*^\\", *s) != NULL)
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

struct gcs_clean *
ray_gcs_clean(ray *r, const struct gcs_target *t, int max_tries,
    int wait_ms, void (*done)(void *, int), void *arg)
{
	struct gcs_clean *c = xcalloc(1, sizeof *c);
	char *e = escape_pattern(t->storage_ns);

	c->pattern = util_printf("RAY%s@*", e);
	free(e);
	c->max_tries = max_tries > 0 ? max_tries : 1;
	c->wait_ms = wait_ms > 0 ? wait_ms : RETRY_MS;
	c->done = done;
	c->arg = arg;
	c->rc = rconn_new(r, t, c);
	c->rc->retry_ms = c->wait_ms;
	c->rc->ready = clean_ready;
	c->rc->failed = clean_failed;
	rconn_connect(c->rc);
	return c;
}

void
ray_gcs_clean_cancel(struct gcs_clean *c)
{
	if (c == NULL)
		return;
	c->over = 1;
	rconn_close(c->rc);
	free(c->pattern);
	free(c);
}
