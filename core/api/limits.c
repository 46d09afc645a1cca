/*
 * Admission by counting. Two in-flight counters (read-only and mutating
 * requests that are dispatched and not yet answered; a mutating request
 * waits for its fsync, so these are what piles up under a write flood)
 * and, per user, a token bucket and an open-watch count. What a request
 * takes is given back from the HTTP layer's done callback, which runs
 * exactly once per request, answered or abandoned.
 */
#include <stdlib.h>
#include <string.h>

#include "api/limits.h"
#include "lib/hmap.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/status.h"

struct user_state {
	char *name;
	double tokens;
	uint64_t last_us;
	int watches;
};

struct limits {
	struct limits_conf conf;
	int readonly;
	int mutating;
	hmap *users;
	unsigned long long rejected;
};

/* What one admitted request holds. */
struct hold {
	limits *l;
	int *counter;		/* NULL for long-running requests */
	struct user_state *watcher;
};

limits *
limits_new(const struct limits_conf *conf)
{
	limits *l = xcalloc(1, sizeof *l);

	l->users = hmap_new();
	l->conf = *conf;
	return l;
}

static int
free_user(const char *key, void *value, void *arg)
{
	struct user_state *u = value;

	(void)key;
	(void)arg;
	free(u->name);
	free(u);
	return 0;
}

void
limits_free(limits *l)
{
	if (l == NULL)
		return;
	hmap_each(l->users, free_user, NULL);
	hmap_free(l->users);
	free(l);
}

/* Administrators and the daemon's own components: no per-user rate. */
static int
is_master(const user_info *u)
{
	int i;

	for (i = 0; i < u->ngroups; i++)
		if (strcmp(u->groups[i], USER_GROUP_MASTERS) == 0 ||
		    strcmp(u->groups[i], USER_GROUP_COMPONENTS) == 0)
			return 1;
	return 0;
}

static struct user_state *
user_state(limits *l, const char *name)
{
	struct user_state *u = hmap_get(l->users, name);

	if (u == NULL) {
		u = xcalloc(1, sizeof *u);
		u->name = xstrdup(name);
		u->tokens = l->conf.user_burst;
		u->last_us = util_usec();
		hmap_put(l->users, u->name, u);
	}
	return u;
}

/* Take one token from the user's bucket; 0 when there was none. */
static int
take_token(limits *l, struct user_state *u)
{
	uint64_t now = util_usec();

	u->tokens += (double)(now - u->last_us) / 1e6 * l->conf.user_qps;
	if (u->tokens > l->conf.user_burst)
		u->tokens = l->conf.user_burst;
	u->last_us = now;
	if (u->tokens < 1.0)
		return 0;
	u->tokens -= 1.0;
	return 1;
}

static void
release(http_req *req, void *arg)
{
	struct hold *h = arg;

	(void)req;
	if (h->counter != NULL)
		(*h->counter)--;
	if (h->watcher != NULL)
		h->watcher->watches--;
	free(h);
}

static cJSON *
refuse(limits *l, http_req *req, const char *why)
{
	l->rejected++;
	http_req_add_header(req, "Retry-After", "1");
	log_debug("limits: 429 (%s)", why);
	return status_error(429, "TooManyRequests", "Too many requests, "
	    "please try again later.");
}

cJSON *
limits_admit(limits *l, http_req *req, const user_info *user, int mutating,
    int long_running, int watch)
{
	struct user_state *u = NULL;
	struct hold *h;
	int *counter = NULL;

	if (!long_running) {
		counter = mutating ? &l->mutating : &l->readonly;
		if (*counter >= (mutating ? l->conf.max_mutating :
		    l->conf.max_readonly))
			return refuse(l, req, mutating ? "mutating in flight" :
			    "read-only in flight");
	}
	if (user != NULL && !is_master(user)) {
		u = user_state(l, user->name);
		if (watch && u->watches >= l->conf.max_watches)
			return refuse(l, req, "watches per user");
		if (!take_token(l, u))
			return refuse(l, req, "user request rate");
	}
	h = xcalloc(1, sizeof *h);
	h->l = l;
	if ((h->counter = counter) != NULL)
		(*counter)++;
	if (watch && u != NULL) {
		h->watcher = u;
		u->watches++;
	}
	http_req_on_done(req, release, h);
	return NULL;
}

unsigned long long
limits_rejected(const limits *l)
{
	return l->rejected;
}
