/*
 * Leader election (leader.h). An elector is a timer on the loop and what it
 * last saw of its Lease: the record (the spec's five fields, compared as
 * text, as client-go compares the raw record), the monotonic time at which
 * that record last changed, and whether it leads. Each turn of the timer
 * is client-go's tryAcquireOrRenew: read, decide, write with the read
 * resourceVersion; the write does not hold the loop (its answer ends the
 * turn), and a leader whose renewal is still on its way at its deadline
 * stops leading then. A leader's turns come every retry period, and at its
 * renew deadline if that is sooner; a candidate's every retry period plus
 * up to 1.2 of it (client-go's JitterFactor), so that candidates do not
 * read in step.
 *
 * Safety rests on one order of times: a leader counts its deadline from
 * before it sent its last successful renewal, a candidate counts the lease
 * duration from after it saw that renewal, and renew deadline < lease
 * duration. So by any one clock's rate, the old leader's leader_is_leader
 * turns false before a candidate may take the Lease.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/leader.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define JITTER		1.2	/* client-go's JitterFactor */
#define LEASE_API	"coordination.k8s.io/v1"

struct leader {
	uv_loop_t *loop;
	client *c;
	const resource *r;
	char *ns, *name, *key, *identity;
	uint64_t lease_us, renew_us, retry_us;
	int lease_secs;              /* leaseDurationSeconds written */
	int release_on_cancel;
	char *note_key, *note_value;  /* written on acquire and renew */
	void (*on_started)(void *);
	void (*on_stopped)(void *);
	void (*on_new_leader)(void *, const char *);
	void *arg;

	uv_timer_t timer;
	int running;                 /* between leader_new and leader_stop */
	int leading;
	uint64_t renewed_us;         /* before the last successful write as
	                                leader (monotonic) */
	char *observed;              /* the record last seen, as text */
	uint64_t observed_us;        /* when it last changed, here */
	int observed_secs;           /* its leaseDurationSeconds */
	char *holder;                /* its holderIdentity */
	char *reported;              /* the holder last given to on_new_leader */
	int last_code;               /* the last failed write's code, for the
	                                log (0: the last write went through) */
	uint64_t transitions;        /* started or stopped leading */
	int writing;                 /* a write of the Lease is on its way */
	uint64_t write_start;        /* when it was sent (monotonic) */
	const char *write_what;      /* "renew", "acquire", "create" */
	char *took_from;             /* acquiring from this holder */
	int closed;                  /* freed: the answer frees it */
	uint64_t rng;                /* xorshift state for the jitter */
	leader *next;                /* every elector, for /metrics */
};

static leader *all;
static int metrics_added;

void
leader_identity(char *buf, size_t len)
{
	char host[256], id[37];

	if (gethostname(host, sizeof host) != 0 || host[0] == '\0')
		strcpy(host, "volray");
	host[sizeof host - 1] = '\0';
	util_uuid(id);
	if (util_strf(buf, len, "%s_%s", host, id) != 0 && len > 0)
		/* Keep the random part, which makes the identity unique. */
		util_strf(buf, len, "%s", id);
}

static uint64_t
or_default(unsigned ms, unsigned def)
{
	return (uint64_t)(ms != 0 ? ms : def);
}

int
leader_conf_check(const struct leader_conf *conf, char **cause)
{
	uint64_t lease = or_default(conf->lease_ms, LEADER_LEASE_MS);
	uint64_t renew = or_default(conf->renew_ms, LEADER_RENEW_MS);
	uint64_t retry = or_default(conf->retry_ms, LEADER_RETRY_MS);

	if (conf->name == NULL || conf->name[0] == '\0') {
		*cause = xstrdup("leader election: no Lease name");
		return -1;
	}
	if (lease <= renew) {
		*cause = util_printf("leader election: the lease duration "
		    "(%llu ms) must be longer than the renew deadline "
		    "(%llu ms)", (unsigned long long)lease,
		    (unsigned long long)renew);
		return -1;
	}
	if ((double)renew <= JITTER * (double)retry) {
		*cause = util_printf("leader election: the renew deadline "
		    "(%llu ms) must be longer than %.1f retry periods "
		    "(%llu ms)", (unsigned long long)renew, JITTER,
		    (unsigned long long)retry);
		return -1;
	}
	return 0;
}

static int
spec_int(const cJSON *lease, const char *path)
{
	const cJSON *v = json_at(lease, path);

	return cJSON_IsNumber(v) ? (int)v->valuedouble : 0;
}

static const char *
spec_str(const cJSON *lease, const char *path)
{
	const char *s = json_str(lease, path);

	return s != NULL ? s : "";
}

/*
 * Note the record of lease as seen now: when it differs from the one seen
 * before, its lease duration starts counting from now.
 */
static void
observe(leader *l, const cJSON *lease)
{
	const char *holder = spec_str(lease, "spec.holderIdentity");
	int secs = spec_int(lease, "spec.leaseDurationSeconds");
	char *rec = util_printf("%s\037%d\037%s\037%s\037%d", holder, secs,
	    spec_str(lease, "spec.acquireTime"),
	    spec_str(lease, "spec.renewTime"),
	    spec_int(lease, "spec.leaseTransitions"));

	if (l->observed != NULL && strcmp(rec, l->observed) == 0) {
		free(rec);
		return;
	}
	free(l->observed);
	l->observed = rec;
	l->observed_us = util_usec();
	l->observed_secs = secs;
	free(l->holder);
	l->holder = xstrdup(holder);
}

static void
write_failed(leader *l, const char *what, const struct reg_result *res)
{
	const char *msg = json_str(res->body, "message");

	if (res->code == 409) {
		/* Another replica wrote first: the ordinary loss of a race. */
		log_debug("leader: %s: %s lease %s: conflict", l->identity,
		    what, l->key);
		return;
	}
	if (res->code != l->last_code)
		log_warn("leader: %s: %s lease %s: code %d%s%s", l->identity,
		    what, l->key, res->code, msg != NULL ? ": " : "",
		    msg != NULL ? msg : "");
	l->last_code = res->code;
}

static void
set_spec(leader *l, cJSON *lease, const char *holder, int secs,
    const char *acquire, const char *renew, int transitions)
{
	cJSON *spec = json_obj(lease, "spec");

	if (l->note_key != NULL && strcmp(holder, l->identity) == 0)
		json_set_str(json_obj(json_obj(lease, "metadata"),
		    "annotations"), l->note_key, l->note_value);

	json_set_str(spec, "holderIdentity", holder);
	json_set_num(spec, "leaseDurationSeconds", secs);
	json_set_str(spec, "acquireTime", acquire);
	json_set_str(spec, "renewTime", renew);
	json_set_num(spec, "leaseTransitions", transitions);
}

/* Write lease (consumed) as an update; 1 if it went through. */
static int
update(leader *l, cJSON *lease, const char *what)
{
	struct reg_result res;
	int ok;

	client_update(l->c, l->r, l->ns, l->name, lease, NULL, &res);
	ok = res.code < 300;
	if (ok) {
		observe(l, res.body);
		l->last_code = 0;
	} else
		write_failed(l, what, &res);
	cJSON_Delete(res.body);
	return ok;
}

static void on_written(void *, struct reg_result *);
static void on_tick(uv_timer_t *);

/*
 * Send lease (consumed) as a create or an update without waiting: the
 * answer comes to on_written, at once from the embedded client, after a
 * round trip from a remote one, while the loop goes on.
 */
static void
send_lease(leader *l, cJSON *lease, const char *what, int create)
{
	l->writing = 1;
	l->write_what = what;
	l->write_start = util_usec();
	if (create)
		client_create_async(l->c, l->r, l->ns, lease, NULL, on_written,
		    l);
	else
		client_update_async(l->c, l->r, l->ns, l->name, lease, NULL,
		    on_written, l);
	if (l->writing && l->leading) {
		/* Waiting: the timer still ends the leadership at its
		   deadline if the answer is late. */
		uint64_t now = util_usec(), end = l->renewed_us + l->renew_us;

		uv_update_time(l->loop);
		uv_timer_start(&l->timer, on_tick, end > now ?
		    (end - now + 999) / 1000 : 0, 0);
	}
}

/*
 * client-go's tryAcquireOrRenew: read, decide, write. 0 when there is
 * nothing to write (the Lease is another's and not expired); -1 when a
 * write was sent, whose answer (on_written) ends the turn.
 */
static int
acquire_or_renew(leader *l)
{
	const char *holder;
	char now[40];
	cJSON *lease, *md;
	int ours;

	util_now_micro(now);
	lease = client_get_tree(l->c, l->r, l->ns, l->name);
	if (lease == NULL) {
		lease = cJSON_CreateObject();
		cJSON_AddStringToObject(lease, "apiVersion", LEASE_API);
		cJSON_AddStringToObject(lease, "kind", "Lease");
		md = json_obj(lease, "metadata");
		json_set_str(md, "name", l->name);
		json_set_str(md, "namespace", l->ns);
		set_spec(l, lease, l->identity, l->lease_secs, now, now, 0);
		send_lease(l, lease, "create", 1);
		return -1;
	}
	observe(l, lease);
	holder = l->holder;
	ours = strcmp(holder, l->identity) == 0;
	if (!ours && holder[0] != '\0' && util_usec() - l->observed_us <
	    (uint64_t)l->observed_secs * 1000000) {
		/* Held by another and not expired yet: wait. */
		cJSON_Delete(lease);
		return 0;
	}
	free(l->took_from);
	l->took_from = ours ? NULL : xstrdup(holder);
	if (ours && l->leading)
		/* A renewal keeps when it was acquired. */
		set_spec(l, lease, l->identity, l->lease_secs,
		    spec_str(lease, "spec.acquireTime"), now,
		    spec_int(lease, "spec.leaseTransitions"));
	else
		set_spec(l, lease, l->identity, l->lease_secs, now, now,
		    spec_int(lease, "spec.leaseTransitions") + !ours);
	send_lease(l, lease, ours && l->leading ? "renew" : "acquire", 0);
	return -1;
}

static void
call_new_leader(leader *l)
{
	if (l->holder == NULL || (l->reported != NULL &&
	    strcmp(l->holder, l->reported) == 0))
		return;
	free(l->reported);
	l->reported = xstrdup(l->holder);
	if (strcmp(l->reported, l->identity) != 0)
		log_info("leader: %s: lease %s is held by %s", l->identity,
		    l->key, l->reported[0] != '\0' ? l->reported :
		    "nobody (released)");
	if (l->on_new_leader != NULL)
		l->on_new_leader(l->arg, l->reported);
}

static void
start_leading(leader *l, uint64_t since)
{
	l->leading = 1;
	l->renewed_us = since;
	l->transitions++;
	log_info("leader: %s: became leader of lease %s", l->identity, l->key);
	if (l->on_started != NULL)
		l->on_started(l->arg);
}

/* Stop leading; a stop that was not asked for (lost) is a warning. */
static void
stop_leading(leader *l, const char *why, int lost)
{
	l->leading = 0;
	l->transitions++;
	log_msg(lost ? LOG_WARN : LOG_INFO, "leader: %s: stopped leading "
	    "lease %s: %s", l->identity, l->key, why);
	if (l->on_stopped != NULL)
		l->on_stopped(l->arg);
}

static void on_tick(uv_timer_t *);

/* The next turn: a leader's at the retry period or its deadline, a
   candidate's at the retry period with jitter. */
static void
schedule(leader *l)
{
	uint64_t ms = l->retry_us / 1000;

	if (!l->running)
		return;
	/* A long turn of the loop must not make the timer fire early. */
	uv_update_time(l->loop);
	if (l->leading) {
		uint64_t now = util_usec(), end = l->renewed_us + l->renew_us;
		uint64_t left = end > now ? (end - now + 999) / 1000 : 0;

		if (left < ms)
			ms = left;
	} else {
		l->rng ^= l->rng << 13;
		l->rng ^= l->rng >> 7;
		l->rng ^= l->rng << 17;
		ms += (uint64_t)((double)ms * JITTER *
		    ((double)(l->rng >> 11) / 9007199254740992.0));
	}
	uv_timer_start(&l->timer, on_tick, ms, 0);
}

/* The end of a turn: ok when the Lease is this replica's, written at
   start. */
static void
turn_done(leader *l, int ok, uint64_t start)
{
	if (l->leading && ok)
		l->renewed_us = start;
	else if (l->leading && l->holder != NULL &&
	    strcmp(l->holder, l->identity) != 0) {
		char *why = util_printf("lease taken by %s", l->holder);

		stop_leading(l, why, 1);
		free(why);
	} else if (!l->leading && ok)
		start_leading(l, start);
	if (l->running)
		call_new_leader(l);
	schedule(l);
}

static void leader_destroy(leader *);

/* A write of the Lease is answered: the rest of the turn. */
static void
on_written(void *arg, struct reg_result *res)
{
	leader *l = arg;
	int ok = res->code < 300;

	if (ok) {
		observe(l, res->body);
		l->last_code = 0;
	} else
		write_failed(l, l->write_what, res);
	cJSON_Delete(res->body);
	l->writing = 0;
	if (l->closed) {
		leader_destroy(l);
		return;
	}
	if (ok && l->took_from != NULL)
		log_info("leader: %s: took lease %s from %s", l->identity,
		    l->key, l->took_from[0] != '\0' ? l->took_from :
		    "nobody (released)");
	free(l->took_from);
	l->took_from = NULL;
	if (!l->running)
		return;
	/* An answer later than the renew deadline says nothing of now: the
	   next turn reads and writes again. */
	if (ok && util_usec() - l->write_start >= l->renew_us)
		ok = 0;
	turn_done(l, ok, l->write_start);
}

static void
on_tick(uv_timer_t *t)
{
	leader *l = t->data;
	uint64_t start = util_usec();

	if (l->leading && start - l->renewed_us >= l->renew_us) {
		char why[80];

		util_strf(why, sizeof why, "no renewal for %llu ms",
		    (unsigned long long)(start - l->renewed_us) / 1000);
		stop_leading(l, why, 1);
		/* Back to being a candidate from the next turn (a write on
		   its way starts it when answered). */
		if (!l->writing)
			schedule(l);
		return;
	}
	if (l->writing) {
		/* Its answer schedules the next turn. A leader's deadline
		   timer can fire a little early (the loop's clock counts
		   whole milliseconds): then it is armed again, or a late
		   answer would hold the leadership past its deadline. */
		if (l->leading) {
			uint64_t end = l->renewed_us + l->renew_us;

			uv_timer_start(&l->timer, on_tick, end > start ?
			    (end - start + 999) / 1000 : 0, 0);
		}
		return;
	}
	if (acquire_or_renew(l) == 0)
		turn_done(l, 0, start);
}

static void
print_metrics(FILE *f, void *arg)
{
	leader *l;

	(void)arg;
	if (all == NULL)
		return;
	fprintf(f, "# HELP volray_leader_is_leader Whether this process "
	    "leads the role of a Lease.\n"
	    "# TYPE volray_leader_is_leader gauge\n");
	for (l = all; l != NULL; l = l->next)
		fprintf(f, "volray_leader_is_leader{lease=\"%s\"} %d\n",
		    l->key, leader_is_leader(l));
	fprintf(f, "# HELP volray_leader_transitions_total Times this "
	    "process started or stopped leading a Lease.\n"
	    "# TYPE volray_leader_transitions_total counter\n");
	for (l = all; l != NULL; l = l->next)
		fprintf(f, "volray_leader_transitions_total{lease=\"%s\"} "
		    "%llu\n", l->key, (unsigned long long)l->transitions);
}

leader *
leader_new(uv_loop_t *loop, client *c, const struct leader_conf *conf)
{
	char *cause = NULL, id[320];
	const char *p;
	uint64_t lease_ms;
	leader *l;

	if (leader_conf_check(conf, &cause) != 0) {
		log_error("%s", cause);
		free(cause);
		return NULL;
	}
	l = xcalloc(1, sizeof *l);
	l->loop = loop;
	l->c = c;
	l->r = resource_find("coordination.k8s.io", "v1", "leases");
	l->ns = xstrdup(conf->ns != NULL ? conf->ns : LEADER_NAMESPACE);
	l->name = xstrdup(conf->name);
	l->key = util_printf("%s/%s", l->ns, l->name);
	if (conf->identity == NULL)
		leader_identity(id, sizeof id);
	l->identity = xstrdup(conf->identity != NULL ? conf->identity : id);
	lease_ms = or_default(conf->lease_ms, LEADER_LEASE_MS);
	l->lease_us = lease_ms * 1000;
	l->renew_us = or_default(conf->renew_ms, LEADER_RENEW_MS) * 1000;
	l->retry_us = or_default(conf->retry_ms, LEADER_RETRY_MS) * 1000;
	l->lease_secs = (int)((lease_ms + 999) / 1000);
	l->release_on_cancel = conf->release_on_cancel;
	if (conf->note_key != NULL) {
		l->note_key = xstrdup(conf->note_key);
		l->note_value = xstrdup(conf->note_value ? conf->note_value :
		    "");
	}
	/* Seeded from the identity (random) and the time: replicas started
	   together still read apart. */
	l->rng = util_usec() | 1;
	for (p = l->identity; *p != '\0'; p++)
		l->rng = (l->rng ^ (unsigned char)*p) * 1099511628211ULL;
	if (l->rng == 0)
		l->rng = 1;
	l->on_started = conf->on_started;
	l->on_stopped = conf->on_stopped;
	l->on_new_leader = conf->on_new_leader;
	l->arg = conf->arg;
	uv_timer_init(loop, &l->timer);
	l->timer.data = l;
	l->running = 1;
	l->next = all;
	all = l;
	if (!metrics_added) {
		metrics_add_source(print_metrics, NULL);
		metrics_added = 1;
	}
	log_info("leader: %s: electing on lease %s", l->identity, l->key);
	uv_timer_start(&l->timer, on_tick, 0, 0);
	return l;
}

int
leader_is_leader(const leader *l)
{
	return l->leading && util_usec() - l->renewed_us < l->renew_us;
}

const char *
leader_self(const leader *l)
{
	return l->identity;
}

const char *
leader_holder(const leader *l)
{
	return l->holder != NULL ? l->holder : "";
}

/*
 * Give the Lease up (client-go's release): an empty holderIdentity and a
 * one-second duration, written only over the version this replica holds.
 * Synchronous: it runs as the process stops, when nothing else waits on
 * the loop and the release must be sent before the exit.
 */
static void
release(leader *l)
{
	cJSON *lease = client_get_tree(l->c, l->r, l->ns, l->name);
	char now[40];

	if (lease == NULL)
		return;
	if (strcmp(spec_str(lease, "spec.holderIdentity"), l->identity) != 0) {
		cJSON_Delete(lease);
		return;
	}
	util_now_micro(now);
	set_spec(l, lease, "", 1, now, now,
	    spec_int(lease, "spec.leaseTransitions"));
	if (update(l, lease, "release"))
		log_info("leader: %s: released lease %s", l->identity, l->key);
}

void
leader_stop(leader *l, int rel)
{
	if (!l->running)
		return;
	l->running = 0;
	uv_timer_stop(&l->timer);
	if (!l->leading)
		return;
	if (rel)
		release(l);
	stop_leading(l, rel ? "stopped, lease released" : "stopped", 0);
}

static void
leader_destroy(leader *l)
{
	free(l->took_from);
	free(l->ns);
	free(l->name);
	free(l->key);
	free(l->identity);
	free(l->note_key);
	free(l->note_value);
	free(l->observed);
	free(l->holder);
	free(l->reported);
	free(l);
}

static void
on_closed(uv_handle_t *h)
{
	leader *l = h->data;

	/* A write on its way frees it when answered. */
	if (l->writing)
		l->closed = 1;
	else
		leader_destroy(l);
}

void
leader_free(leader *l)
{
	leader **p;

	if (l == NULL)
		return;
	leader_stop(l, l->release_on_cancel);
	for (p = &all; *p != NULL; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	if (!uv_is_closing((uv_handle_t *)&l->timer))
		uv_close((uv_handle_t *)&l->timer, on_closed);
}
