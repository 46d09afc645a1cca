/*
 * Tests for leader election (client/leader.c) over a real store and
 * registry, through the embedded client, on a uv loop with short times
 * (lease 1 s, renew deadline 600 ms, retry 200 ms). Two electors on one
 * Lease: exactly one leads, the other sees it, renewTime advances. A
 * leader stopped without release is replaced only after the lease
 * duration, counted from its last renewal, and leaseTransitions grows;
 * with release, within about a retry period. A leader whose loop was
 * busy past its deadline is no longer leader by the clock, before any
 * timer runs. A leader whose updates fail (a client wrapping the embedded
 * one, answering 500) stops within the renew deadline and a standby takes
 * over. A leader whose Lease another writes over stops at its next turn.
 * Metrics, identities and configuration checks too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>

#include "check.h"
#include "client/embedded.h"
#include "client/leader.h"
#include "lib/json.h"
#include "lib/metrics.h"
#include "lib/util.h"
#include "registry/resource.h"

#define LEASE_MS	1000
#define RENEW_MS	600
#define RETRY_MS	200
#define NS		"kube-system"
#define NAME		"test-lease"

static uv_loop_t *loop;
static store *st;
static client *emb;

/* What one elector's callbacks saw. */
struct seen {
	int started, stopped, new_leader;
	char holder[320];
};

static void
on_started(void *arg)
{
	((struct seen *)arg)->started++;
}

static void
on_stopped(void *arg)
{
	((struct seen *)arg)->stopped++;
}

static void
on_new_leader(void *arg, const char *id)
{
	struct seen *s = arg;

	s->new_leader++;
	snprintf(s->holder, sizeof s->holder, "%s", id);
}

/* A client whose updates answer 500 while fail is set. */
struct flaky {
	int fail;
	int failed;
	uint64_t last_ok_us;    /* before the last update that went through */
};

static void
f_create(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, struct reg_result *res)
{
	(void)impl;
	client_create(emb, r, ns, obj, o, res);
}

static void
f_update(void *impl, const resource *r, const char *ns, const char *name,
    cJSON *obj, const struct reg_opts *o, struct reg_result *res)
{
	struct flaky *f = impl;
	uint64_t start = util_usec();

	if (f->fail) {
		cJSON_Delete(obj);
		memset(res, 0, sizeof *res);
		res->code = 500;
		res->body = cJSON_Parse("{\"kind\":\"Status\",\"code\":500,"
		    "\"message\":\"injected\"}");
		f->failed++;
		return;
	}
	client_update(emb, r, ns, name, obj, o, res);
	if (res->code < 300)
		f->last_ok_us = start;
}

static void
f_update_status(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *current, cJSON *status,
    const struct reg_opts *o, struct reg_result *res)
{
	(void)impl;
	client_update_status(emb, r, ns, name, current, status, o, res);
}

static void
f_patch(void *impl, const resource *r, const char *ns, const char *name,
    const char *ct, const char *body, size_t len, const struct reg_opts *o,
    struct reg_result *res)
{
	(void)impl;
	client_patch(emb, r, ns, name, ct, body, len, o, res);
}

static void
f_delete(void *impl, const resource *r, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	(void)impl;
	client_delete(emb, r, ns, name, o, res);
}

static void
f_bind(void *impl, const char *ns, const char *name, const char *node,
    struct reg_result *res)
{
	(void)impl;
	client_bind(emb, ns, name, node, res);
}

static void
f_evict(void *impl, const char *ns, const char *name,
    const struct reg_opts *o, struct reg_result *res)
{
	(void)impl;
	client_evict(emb, ns, name, o, res);
}

static const struct client_ops flaky_ops = {
	f_create, f_update, f_update_status, f_patch, f_delete, f_bind,
	f_evict, NULL
};

/*
 * A client whose Lease writes are made at once but answered delay_ms
 * later, through the async calls (a remote API's round trip): the
 * elector must not wait for them, and its deadline must hold while a
 * renewal is on its way.
 */
struct slow {
	struct flaky f;		/* first: the f_* calls take it */
	unsigned delay_ms;
	int answers;		/* answered so far */
};

struct later {
	uv_timer_t t;
	struct slow *s;
	client_done_fn done;
	void *arg;
	struct reg_result res;
};

static void
later_closed(uv_handle_t *h)
{
	free(h);
}

static void
later_fire(uv_timer_t *t)
{
	struct later *w = t->data;

	w->s->answers++;
	w->done(w->arg, &w->res);
	uv_close((uv_handle_t *)t, later_closed);
}

static void
answer_later(struct slow *s, struct reg_result *res, client_done_fn done,
    void *arg)
{
	struct later *w = calloc(1, sizeof *w);

	w->s = s;
	w->done = done;
	w->arg = arg;
	w->res = *res;
	uv_timer_init(loop, &w->t);
	w->t.data = w;
	uv_timer_start(&w->t, later_fire, s->delay_ms, 0);
}

static void
s_create_async(void *impl, const resource *r, const char *ns, cJSON *obj,
    const struct reg_opts *o, client_done_fn done, void *arg)
{
	struct reg_result res;

	client_create(emb, r, ns, obj, o, &res);
	answer_later(impl, &res, done, arg);
}

static void
s_update_async(void *impl, const resource *r, const char *ns,
    const char *name, cJSON *obj, const struct reg_opts *o,
    client_done_fn done, void *arg)
{
	struct reg_result res;

	client_update(emb, r, ns, name, obj, o, &res);
	answer_later(impl, &res, done, arg);
}

static const struct client_ops slow_ops = {
	f_create, f_update, f_update_status, f_patch, f_delete, f_bind,
	f_evict, NULL, NULL, NULL, NULL, s_update_async, s_create_async,
	NULL
};

static leader *
elector(client *c, const char *id, struct seen *s)
{
	struct leader_conf conf = { 0 };

	memset(s, 0, sizeof *s);
	conf.ns = NS;
	conf.name = NAME;
	conf.identity = id;
	conf.lease_ms = LEASE_MS;
	conf.renew_ms = RENEW_MS;
	conf.retry_ms = RETRY_MS;
	conf.on_started = on_started;
	conf.on_stopped = on_stopped;
	conf.on_new_leader = on_new_leader;
	conf.arg = s;
	return leader_new(loop, c, &conf);
}

static uint64_t
now_ms(void)
{
	return util_usec() / 1000;
}

/* The Lease as the store has it (a new tree), or NULL. */
static cJSON *
lease(void)
{
	const store_obj *o = store_get(st, "leases.coordination.k8s.io", NS,
	    NAME);

	return o != NULL ? store_obj_tree(o) : NULL;
}

static int
transitions(void)
{
	cJSON *l = lease();
	int n = l != NULL ? (int)cJSON_GetNumberValue(json_at(l,
	    "spec.leaseTransitions")) : -1;

	cJSON_Delete(l);
	return n;
}

/* The monotonic ms at which the test last saw the Lease change. */
static uint64_t lease_rev, lease_changed_ms;

/*
 * While set, every poll checks the promise of leader_is_leader on the
 * flaky client's elector: never true a renew deadline or more after the
 * last update that went through.
 */
static leader *watched;
static struct flaky *watched_client;
static int broken_promises;

static void
on_poll(uv_timer_t *t)
{
	const store_obj *o = store_get(st, "leases.coordination.k8s.io", NS,
	    NAME);
	uint64_t now = util_usec();

	(void)t;
	if (watched != NULL && leader_is_leader(watched) &&
	    now - watched_client->last_ok_us >= RENEW_MS * 1000)
		broken_promises++;
	if (o != NULL && o->rev != lease_rev) {
		lease_rev = o->rev;
		lease_changed_ms = now_ms();
	}
}

/*
 * Run the loop until cond(arg) holds or max_ms pass (cond NULL: for
 * max_ms); returns the ms it took.
 */
static uint64_t
run_until(int (*cond)(void *), void *arg, uint64_t max_ms)
{
	uv_timer_t poll;
	uint64_t start = now_ms();

	uv_timer_init(loop, &poll);
	uv_timer_start(&poll, on_poll, 5, 5);
	while (now_ms() - start < max_ms && (cond == NULL || !cond(arg)))
		uv_run(loop, UV_RUN_ONCE);
	uv_close((uv_handle_t *)&poll, NULL);
	uv_run(loop, UV_RUN_NOWAIT);
	return now_ms() - start;
}

static int
is_leader(void *l)
{
	return leader_is_leader(l);
}

static int
is_not_leader(void *l)
{
	return !leader_is_leader(l);
}

static int
sees_holder(void *l)
{
	return leader_holder(l)[0] != '\0';
}

static leader *e_now;

static int
sees_e(void *d)
{
	return strcmp(leader_holder(d), leader_self(e_now)) == 0;
}

static int
either_leads(void *arg)
{
	leader **v = arg;

	return leader_is_leader(v[0]) || leader_is_leader(v[1]);
}

static int
has_line(const char *text, const char *line)
{
	const char *p = strstr(text, line);

	return p != NULL && (p == text || p[-1] == '\n');
}

static void
check_metrics(const char *l1, const char *l2)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	if (f == NULL)
		return;
	metrics_print_sources(f);
	fclose(f);
	CHECK(has_line(buf, l1));
	CHECK(has_line(buf, l2));
	if (!has_line(buf, l1) || !has_line(buf, l2))
		fprintf(stderr, "metrics:\n%s", buf);
	free(buf);
}

static void
test_conf(void)
{
	struct leader_conf conf = { 0 };
	char *cause = NULL, id[320], host[256];

	CHECK(leader_conf_check(&conf, &cause) == -1);
	free(cause);
	cause = NULL;
	conf.name = "x";
	CHECK(leader_conf_check(&conf, &cause) == 0);
	conf.lease_ms = 10000;
	CHECK(leader_conf_check(&conf, &cause) == -1);
	CHECK(cause != NULL && strstr(cause, "renew deadline") != NULL);
	free(cause);
	cause = NULL;
	conf.lease_ms = 1000;
	conf.renew_ms = 600;
	conf.retry_ms = 500;
	CHECK(leader_conf_check(&conf, &cause) == -1);
	free(cause);
	CHECK(leader_new(loop, emb, &conf) == NULL);

	leader_identity(id, sizeof id);
	CHECK(gethostname(host, sizeof host) == 0);
	CHECK(strncmp(id, host, strlen(host)) == 0);
	CHECK(id[strlen(host)] == '_');
	CHECK(strlen(id) == strlen(host) + 1 + 36);
}

int
main(void)
{
	char dir[] = "/tmp/volray-test-leader.XXXXXX";
	char *cause = NULL, cmd[300], renew1[64], line[200];
	struct seen sa, sb, sc, sd, se;
	struct flaky fl = { 0 };
	leader *a, *b, *c, *d, *e, *lead, *other, *pair[2];
	struct seen *slead, *sother;
	client *fc;
	uint64_t t0, took;
	cJSON *l;

	loop = uv_default_loop();
	CHECK(mkdtemp(dir) != NULL);
	resource_init();
	CHECK(store_open(loop, dir, &st, &cause) == 0);
	{
		registry *rg = registry_new(st);

		CHECK(registry_bootstrap(rg, NULL, &cause) == 0);
		free(cause);
		emb = embedded_new(st, rg);

		test_conf();

		/* Two electors: exactly one leads, the other sees it. */
		a = elector(emb, "replica-a", &sa);
		b = elector(emb, "replica-b", &sb);
		CHECK(a != NULL && b != NULL);
		pair[0] = a;
		pair[1] = b;
		run_until(either_leads, pair, 2000);
		run_until(NULL, NULL, 500);
		CHECK(leader_is_leader(a) + leader_is_leader(b) == 1);
		lead = leader_is_leader(a) ? a : b;
		other = lead == a ? b : a;
		slead = lead == a ? &sa : &sb;
		sother = lead == a ? &sb : &sa;
		CHECK(slead->started == 1 && slead->stopped == 0);
		CHECK(sother->started == 0 && sother->stopped == 0);
		CHECK_STR(sother->holder, leader_self(lead));
		CHECK_STR(slead->holder, leader_self(lead));
		CHECK_STR(leader_holder(other), leader_self(lead));
		l = lease();
		CHECK(l != NULL);
		CHECK_STR(json_str(l, "spec.holderIdentity"), leader_self(lead));
		CHECK(cJSON_GetNumberValue(json_at(l,
		    "spec.leaseDurationSeconds")) == 1);
		CHECK(transitions() == 0);
		CHECK(json_str(l, "spec.acquireTime") != NULL);
		snprintf(renew1, sizeof renew1, "%s",
		    json_str(l, "spec.renewTime"));
		cJSON_Delete(l);
		snprintf(line, sizeof line, "volray_leader_is_leader{lease=\""
		    NS "/" NAME "\"} 1");
		check_metrics(line, "volray_leader_transitions_total{lease=\""
		    NS "/" NAME "\"} 1");

		/* The leader renews. */
		run_until(NULL, NULL, 3 * RETRY_MS);
		l = lease();
		CHECK(strcmp(json_str(l, "spec.renewTime"), renew1) > 0);
		CHECK_STR(json_str(l, "spec.holderIdentity"),
		    leader_self(lead));
		cJSON_Delete(l);
		CHECK(sother->started == 0);

		/*
		 * Stopped without release: the other takes over only once
		 * the lease duration has passed since the last renewal.
		 */
		/* The test saw the last renewal at most 5 ms after it. */
		t0 = lease_changed_ms;
		leader_stop(lead, 0);
		CHECK(!leader_is_leader(lead));
		CHECK(slead->stopped == 1);
		took = run_until(is_leader, other, 4000);
		CHECK(leader_is_leader(other));
		CHECK(now_ms() - t0 + 10 >= LEASE_MS);
		CHECK(took + RETRY_MS + 10 >= LEASE_MS);
		CHECK(took <= LEASE_MS + (uint64_t)(2.2 * RETRY_MS) + 300);
		fprintf(stderr, "takeover without release: %llu ms after the "
		    "last renewal, %llu ms after the stop\n",
		    (unsigned long long)(now_ms() - t0),
		    (unsigned long long)took);
		CHECK(transitions() == 1);
		CHECK(sother->started == 1);
		CHECK_STR(sother->holder, leader_self(other));
		leader_free(lead);
		lead = other;
		slead = sother;

		/* With release: a standby takes over within ~ a retry period. */
		c = elector(emb, "replica-c", &sc);
		run_until(sees_holder, c, 2000);
		CHECK_STR(leader_holder(c), leader_self(lead));
		CHECK(!leader_is_leader(c));
		leader_stop(lead, 1);
		CHECK(slead->stopped == 1);
		l = lease();
		CHECK_STR(json_str(l, "spec.holderIdentity"), "");
		cJSON_Delete(l);
		took = run_until(is_leader, c, 2000);
		CHECK(leader_is_leader(c));
		CHECK(took < (uint64_t)(2.2 * RETRY_MS) + 150);
		CHECK(took < LEASE_MS);
		fprintf(stderr, "takeover after release: %llu ms\n",
		    (unsigned long long)took);
		CHECK(transitions() == 2);
		leader_free(lead);

		/*
		 * A leader through the flaky client, e as its standby: d
		 * takes over from c's release.
		 */
		fc = client_new(st, &flaky_ops, &fl);
		d = elector(fc, "replica-d", &sd);
		e = elector(emb, "replica-e", &se);
		run_until(sees_holder, d, 2000);
		run_until(sees_holder, e, 2000);
		leader_stop(c, 1);
		leader_free(c);
		pair[0] = d;
		pair[1] = e;
		run_until(either_leads, pair, 2000);
		if (!leader_is_leader(d)) {
			/* e won the race: hand over to d. */
			CHECK(leader_is_leader(e));
			leader_stop(e, 1);
			leader_free(e);
			run_until(is_leader, d, 2000);
			e = elector(emb, "replica-e2", &se);
		}
		CHECK(leader_is_leader(d));
		run_until(sees_holder, e, 2000);
		run_until(NULL, NULL, 2 * RETRY_MS);
		CHECK(leader_is_leader(d) && !leader_is_leader(e));

		/*
		 * A busy loop: past the renew deadline with no timer run,
		 * leader_is_leader is false by the clock; the next turn
		 * stops leading.
		 */
		CHECK(leader_is_leader(d));
		pair[1] = e;
		usleep((RENEW_MS + 50) * 1000);
		CHECK(!leader_is_leader(d));
		CHECK(sd.stopped == 0);
		uv_update_time(loop);
		run_until(NULL, NULL, 50);
		CHECK(sd.stopped == 1);
		/* It comes back (the Lease still names it) or e takes over:
		   one leader either way. */
		run_until(either_leads, pair, 3000);
		run_until(NULL, NULL, 2 * RETRY_MS);
		CHECK(leader_is_leader(d) + leader_is_leader(e) == 1);
		if (!leader_is_leader(d)) {
			leader_stop(e, 1);
			leader_free(e);
			run_until(is_leader, d, 2000);
			e = elector(emb, "replica-e3", &se);
			run_until(sees_holder, e, 2000);
		}
		CHECK(leader_is_leader(d));

		/*
		 * Failing updates: d stops within the renew deadline of its
		 * last good renewal; e takes over once the lease expires.
		 */
		run_until(NULL, NULL, RETRY_MS);
		sd.stopped = 0;
		watched = d;
		watched_client = &fl;
		fl.fail = 1;
		took = run_until(is_not_leader, d, 2000);
		CHECK(!leader_is_leader(d));
		CHECK(fl.failed > 0);
		CHECK(now_ms() - fl.last_ok_us / 1000 <= RENEW_MS + 100);
		CHECK(took <= RENEW_MS + 100);
		run_until(NULL, NULL, 30);
		CHECK(sd.stopped == 1);
		fprintf(stderr, "failing leader stopped %llu ms after its "
		    "last renewal\n", (unsigned long long)(now_ms() -
		    fl.last_ok_us / 1000));
		CHECK(!leader_is_leader(e));
		took = run_until(is_leader, e, 3000);
		CHECK(leader_is_leader(e));
		CHECK(!leader_is_leader(d));
		CHECK(broken_promises == 0);
		watched = NULL;
		l = lease();
		CHECK_STR(json_str(l, "spec.holderIdentity"), leader_self(e));
		cJSON_Delete(l);
		CHECK(transitions() >= 3);
		e_now = e;
		run_until(sees_e, d, 2000);
		CHECK_STR(sd.holder, leader_self(e));
		snprintf(line, sizeof line, "volray_leader_is_leader{lease=\""
		    NS "/" NAME "\"} 0");
		check_metrics(line, "volray_leader_is_leader{lease=\""
		    NS "/" NAME "\"} 1");

		/*
		 * Someone else writes the Lease over e's: e stops at its next
		 * turn, and takes the Lease back once that record expires.
		 */
		l = lease();
		json_set_str(json_obj(l, "spec"), "holderIdentity", "intruder");
		{
			struct reg_result res;
			int before = se.stopped, n = transitions();

			client_update(emb, resource_find("coordination.k8s.io",
			    "v1", "leases"), NS, NAME, l, NULL, &res);
			CHECK(res.code == 200);
			cJSON_Delete(res.body);
			took = run_until(is_not_leader, e, 2000);
			CHECK(!leader_is_leader(e));
			CHECK(took <= RETRY_MS + 150);
			CHECK(se.stopped == before + 1);
			CHECK_STR(se.holder, "intruder");
			took = run_until(is_leader, e, 3000);
			CHECK(leader_is_leader(e));
			CHECK(took + RETRY_MS + 50 >= LEASE_MS);
			CHECK(transitions() == n + 1);
		}

		/*
		 * Slow answers: an elector whose writes are answered 50 ms
		 * late takes the Lease once e's expires, and renews; answers
		 * later than its renew deadline end its leadership at the
		 * deadline, not when they come; freed with a write on its
		 * way, it goes quietly.
		 */
		leader_free(d);
		leader_free(e);
		uv_run(loop, UV_RUN_NOWAIT);
		{
			struct slow sl;
			struct seen sf;
			client *sc;
			leader *f;
			uint64_t ok_ms;

			memset(&sl, 0, sizeof sl);
			sl.delay_ms = 50;
			sc = client_new(st, &slow_ops, &sl);
			f = elector(sc, "replica-f", &sf);
			took = run_until(is_leader, f, LEASE_MS + 3000);
			CHECK(leader_is_leader(f));
			CHECK(sl.answers > 0);
			run_until(NULL, NULL, 3 * RETRY_MS);
			CHECK(leader_is_leader(f));
			CHECK(sf.started == 1 && sf.stopped == 0);
			fprintf(stderr, "slow answers: leading after %llu ms, "
			    "%d answers\n", (unsigned long long)took,
			    sl.answers);
			sl.delay_ms = 3 * RENEW_MS;
			ok_ms = now_ms();
			took = run_until(is_not_leader, f, 3 * RENEW_MS);
			CHECK(!leader_is_leader(f));
			CHECK(took <= RENEW_MS + 100);
			run_until(NULL, NULL, 30);
			CHECK(sf.stopped == 1);
			fprintf(stderr, "renewal on its way: stopped %llu ms "
			    "after the last answer in time\n",
			    (unsigned long long)(now_ms() - ok_ms));
			sl.delay_ms = 20;
			took = run_until(is_leader, f, 6 * RENEW_MS +
			    LEASE_MS);
			CHECK(leader_is_leader(f));
			sl.delay_ms = 200;
			run_until(NULL, NULL, RETRY_MS + 30);
			leader_free(f);
			run_until(NULL, NULL, 400);
			client_free(sc);
		}
		client_free(fc);
		client_free(emb);
		store_close(st);
		uv_run(loop, UV_RUN_NOWAIT);
		registry_free(rg);
	}
	resource_shutdown();
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_result("test-leader");
}
