/*
 * volrayd's flags: getopt_long over the names volrayd(8) documents, each
 * value checked here so that a bad command line exits with status 2 before
 * the store is opened. Also where the shipped data (crds/, lua/,
 * policies/) is found when --share-dir is not given.
 */
#include <arpa/inet.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/limits.h"
#include "ctrl/ctrlsel.h"
#include "daemon/flags.h"
#include "lib/log.h"
#include "lib/podspec.h"
#include "lib/selector.h"
#include "lib/sharedir.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/podnet.h"
#include "registry/admission.h"
#include "registry/resource.h"
#include "sched/sched.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/volray"
#endif

static void
usage(FILE *f)
{
	fprintf(f, "usage: volrayd [--data-dir DIR] [--listen HOST:PORT] "
	    "[--policy-dir DIR]... [--no-local-node]\n"
	    "               [--share-dir DIR] [--plain-http] "
	    "[--tls-cert-file FILE --tls-private-key-file FILE]\n"
	    "               [--tls-san NAME]... [--token-auth-file FILE] "
	    "[--authorization-mode RBAC|AlwaysAllow]\n"
	    "               [--max-requests-inflight N] "
	    "[--max-mutating-requests-inflight N]\n"
	    "               [--user-qps QPS] [--user-burst N] "
	    "[--max-watches-per-user N]\n"
	    "               [--batch-scheduler volcano] [--watch-history N] "
	    "[--request-timeout SECONDS]\n"
	    "               [--lua-memory MB] [--lua-instructions N] "
	    "[--explain-sessions N] "
	    "[--node-monitor-grace-period DURATION]\n"
	    "               [--record-sessions DIR [--record-sessions-keep N]]\n"
	    "               [--ray-history-max N] "
	    "[--ray-history-max-bytes SIZE]\n"
	    "               [--ray-dir DIR] [--ray-emulated]\n"
	    "               [--node-lease-duration-seconds N] "
	    "[--default-not-ready-toleration-seconds N]\n"
	    "               [--default-unreachable-toleration-seconds N]\n"
	    "               [--roles LIST] [--controllers LIST] "
	    "[--kubeconfig FILE "
	    "[--context NAME]] [--metrics-listen HOST:PORT]\n"
	    "               [--scheduler-name NAME]... "
	    "[--no-install-crds] [--kube-api-qps QPS] [--kube-api-burst N]\n"
	    "               [--feature-gates LIST]\n"
	    "               [--leader-elect[=true|false]] "
	    "[--leader-elect-lease-duration DURATION]\n"
	    "               [--leader-elect-renew-deadline DURATION] "
	    "[--leader-elect-retry-period DURATION]\n"
	    "               [--leader-elect-namespace NS] "
	    "[--node-listen HOST:PORT] [--node-ip ADDRESS]\n"
	    "               [--scheduler-listen HOST:PORT|off]\n"
	    "               [--pod-network host|namespaces] [--pod-cidr CIDR] "
	    "[--node-link-range CIDR]\n"
	    "               [--service-cluster-ip-range CIDR]\n"
	    "               [--no-virtual-nodes | --virtual-node-selector "
	    "SELECTOR] [--debug]\n"
	    "               [--etcd-servers URL[,URL]... [--etcd-prefix "
	    "PREFIX] [--etcd-compaction-interval DURATION]\n"
	    "                [--etcd-cafile FILE] [--etcd-certfile FILE "
	    "--etcd-keyfile FILE]]\n"
	    "               [--migrate-to-etcd]\n");
}

int
volrayd_has_crds(const char *dir)
{
	return share_dir_has_crds(dir);
}

char *
volrayd_share_dir(char **cause)
{
	return share_dir_find(cause);
}

int
volrayd_is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

/* HOST:PORT into d->host and d->port; port 0 only when any_port. */
static int
parse_listen(struct volrayd_flags *d, const char *s, int any_port)
{
	const char *colon = strrchr(s, ':');
	size_t hl;

	if (colon == NULL)
		return -1;
	hl = (size_t)(colon - s);
	if (hl >= sizeof d->host)
		return -1;
	if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') {
		memcpy(d->host, s + 1, hl - 2);
		d->host[hl - 2] = '\0';
	} else {
		memcpy(d->host, s, hl);
		d->host[hl] = '\0';
	}
	if (colon[1] < '0' || colon[1] > '9')
		return -1;
	d->port = atoi(colon + 1);
	return (d->port > 0 || (any_port && d->port == 0)) &&
	    d->port < 65536 ? 0 : -1;
}

static void
push(char ***list, int *n, const char *s)
{
	*list = xreallocarray(*list, *n + 1, sizeof **list);
	(*list)[(*n)++] = xstrdup(s);
}

static int
bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "volrayd: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 2;
}

/* --feature-gates Gate=true,Other=false, as kube-apiserver takes it. */
static int
parse_gates(const char *arg)
{
	char *copy = xstrdup(arg), *tok, *save, *eq;
	int rc = 0, on;

	for (tok = strtok_r(copy, ",", &save); tok != NULL && rc == 0;
	    tok = strtok_r(NULL, ",", &save)) {
		if ((eq = strchr(tok, '=')) == NULL) {
			rc = bad("--feature-gates: missing bool value for %s",
			    tok);
			break;
		}
		*eq++ = '\0';
		if (strcasecmp(eq, "true") == 0)
			on = 1;
		else if (strcasecmp(eq, "false") == 0)
			on = 0;
		else {
			rc = bad("--feature-gates: invalid value of %s: want "
			    "true or false", tok);
			break;
		}
		if (resource_set_gate(tok, on) != 0)
			rc = bad("--feature-gates: unrecognized feature gate: "
			    "%s (volray knows GenericWorkload)", tok);
	}
	free(copy);
	return rc;
}

/* Options with no short letter. */
enum {
	O_PLAIN = 256, O_CERT, O_KEY, O_SAN, O_TOKENS, O_AUTHZ,
	O_BATCH, O_MAXRO, O_MAXRW, O_QPS, O_BURST, O_WATCHES,
	O_GRACE, O_LEASE, O_NOTREADY, O_UNREACH,
	O_ROLES, O_CONTROLLERS, O_KUBECONFIG, O_CONTEXT, O_METRICS, O_SCHEDNAME, O_NOCRDS,
	O_ELECT, O_ELECT_LEASE, O_ELECT_RENEW, O_ELECT_RETRY, O_ELECT_NS,
	O_KQPS, O_KBURST, O_NODE_LISTEN, O_SCHED_LISTEN, O_NODE_IP, O_NO_VIRTUAL, O_VIRTUAL_SEL,
	O_ETCD, O_ETCD_CA, O_ETCD_CERT, O_ETCD_KEY, O_ETCD_PREFIX,
	O_ETCD_COMPACT, O_MIGRATE, O_EXPLAIN, O_HISTORY, O_HISTORY_BYTES,
	O_RECORD, O_RECORD_KEEP, O_POD_NET, O_POD_CIDR, O_LINK_RANGE,
	O_SVC_RANGE, O_RAY_DIR, O_RAY_EMULATED, O_GATES
};

static const struct option longopts[] = {
	{ "data-dir", required_argument, NULL, 'd' },
	{ "listen", required_argument, NULL, 'l' },
	{ "policy-dir", required_argument, NULL, 'p' },
	{ "no-local-node", no_argument, NULL, 'N' },
	{ "share-dir", required_argument, NULL, 's' },
	{ "watch-history", required_argument, NULL, 'W' },
	{ "request-timeout", required_argument, NULL, 'T' },
	{ "lua-memory", required_argument, NULL, 'M' },
	{ "lua-instructions", required_argument, NULL, 'I' },
	{ "explain-sessions", required_argument, NULL, O_EXPLAIN },
	{ "record-sessions", required_argument, NULL, O_RECORD },
	{ "record-sessions-keep", required_argument, NULL, O_RECORD_KEEP },
	{ "ray-history-max", required_argument, NULL, O_HISTORY },
	{ "ray-history-max-bytes", required_argument, NULL, O_HISTORY_BYTES },
	{ "ray-dir", required_argument, NULL, O_RAY_DIR },
	{ "ray-emulated", no_argument, NULL, O_RAY_EMULATED },
	{ "plain-http", no_argument, NULL, O_PLAIN },
	{ "tls-cert-file", required_argument, NULL, O_CERT },
	{ "tls-private-key-file", required_argument, NULL, O_KEY },
	{ "tls-san", required_argument, NULL, O_SAN },
	{ "token-auth-file", required_argument, NULL, O_TOKENS },
	{ "authorization-mode", required_argument, NULL, O_AUTHZ },
	{ "batch-scheduler", required_argument, NULL, O_BATCH },
	{ "max-requests-inflight", required_argument, NULL, O_MAXRO },
	{ "max-mutating-requests-inflight", required_argument, NULL,
	    O_MAXRW },
	{ "user-qps", required_argument, NULL, O_QPS },
	{ "user-burst", required_argument, NULL, O_BURST },
	{ "max-watches-per-user", required_argument, NULL, O_WATCHES },
	{ "node-monitor-grace-period", required_argument, NULL, O_GRACE },
	{ "node-lease-duration-seconds", required_argument, NULL,
	    O_LEASE },
	{ "default-not-ready-toleration-seconds", required_argument,
	    NULL, O_NOTREADY },
	{ "default-unreachable-toleration-seconds", required_argument,
	    NULL, O_UNREACH },
	{ "roles", required_argument, NULL, O_ROLES },
	{ "controllers", required_argument, NULL, O_CONTROLLERS },
	{ "kubeconfig", required_argument, NULL, O_KUBECONFIG },
	{ "context", required_argument, NULL, O_CONTEXT },
	{ "metrics-listen", required_argument, NULL, O_METRICS },
	{ "scheduler-name", required_argument, NULL, O_SCHEDNAME },
	{ "feature-gates", required_argument, NULL, O_GATES },
	{ "no-install-crds", no_argument, NULL, O_NOCRDS },
	{ "leader-elect", optional_argument, NULL, O_ELECT },
	{ "leader-elect-lease-duration", required_argument, NULL,
	    O_ELECT_LEASE },
	{ "leader-elect-renew-deadline", required_argument, NULL,
	    O_ELECT_RENEW },
	{ "leader-elect-retry-period", required_argument, NULL,
	    O_ELECT_RETRY },
	{ "leader-elect-namespace", required_argument, NULL, O_ELECT_NS },
	{ "kube-api-qps", required_argument, NULL, O_KQPS },
	{ "kube-api-burst", required_argument, NULL, O_KBURST },
	{ "node-listen", required_argument, NULL, O_NODE_LISTEN },
	{ "scheduler-listen", required_argument, NULL, O_SCHED_LISTEN },
	{ "node-ip", required_argument, NULL, O_NODE_IP },
	{ "no-virtual-nodes", no_argument, NULL, O_NO_VIRTUAL },
	{ "pod-network", required_argument, NULL, O_POD_NET },
	{ "pod-cidr", required_argument, NULL, O_POD_CIDR },
	{ "node-link-range", required_argument, NULL, O_LINK_RANGE },
	{ "service-cluster-ip-range", required_argument, NULL, O_SVC_RANGE },
	{ "virtual-node-selector", required_argument, NULL, O_VIRTUAL_SEL },
	{ "etcd-servers", required_argument, NULL, O_ETCD },
	{ "etcd-cafile", required_argument, NULL, O_ETCD_CA },
	{ "etcd-certfile", required_argument, NULL, O_ETCD_CERT },
	{ "etcd-keyfile", required_argument, NULL, O_ETCD_KEY },
	{ "etcd-prefix", required_argument, NULL, O_ETCD_PREFIX },
	{ "etcd-compaction-interval", required_argument, NULL,
	    O_ETCD_COMPACT },
	{ "migrate-to-etcd", no_argument, NULL, O_MIGRATE },
	{ "debug", no_argument, NULL, 'D' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* What volrayd does without flags. */
static void
set_defaults(struct volrayd_flags *f)
{
	struct limits_conf lim = LIMITS_DEFAULT;

	memset(f, 0, sizeof *f);
	f->max_readonly = lim.max_readonly;
	f->max_mutating = lim.max_mutating;
	f->user_qps = lim.user_qps;
	f->user_burst = lim.user_burst;
	f->max_watches = lim.max_watches;
	f->data_dir = xstrdup("/var/lib/volray");
	snprintf(f->host, sizeof f->host, "127.0.0.1");
	f->port = 6443;
	f->node_port = -1;
	f->sched_port = -1;
	f->lua_memory_mb = 256;
	f->lua_instructions = 200000000ULL;
	f->explain_sessions = SCHED_EXPLAIN_SESSIONS;
	f->record_keep = 16;
	f->ray_history_max = 1000;
	f->ray_history_bytes = 1LL << 30;
	/* scripts/ray.sh's default: ${XDG_CACHE_HOME:-$HOME/.cache}/volray/ray */
	if (getenv("XDG_CACHE_HOME") != NULL && *getenv("XDG_CACHE_HOME") ==
	    '/')
		f->ray_dir = util_printf("%s/volray/ray", getenv("XDG_CACHE_HOME"));
	else if (getenv("HOME") != NULL && *getenv("HOME") == '/')
		f->ray_dir = util_printf("%s/.cache/volray/ray", getenv("HOME"));
	f->node_grace_ms = 40000;
	f->node_lease_seconds = 40;
	f->not_ready_seconds = 300;
	f->unreachable_seconds = 300;
	f->roles = ROLE_ALL;
	f->leader_elect = -1;
	f->lease_ms = 15000;
	f->renew_ms = 10000;
	f->retry_ms = 2000;
	f->leader_ns = xstrdup("kube-system");
	f->etcd_prefix = xstrdup("/registry");
	f->etcd_compaction_ms = 5 * 60 * 1000;
	f->kube_qps = 50;
	f->kube_burst = 100;
}

static const struct {
	const char *name;
	int bit;
} role_names[] = {
	{ "api", ROLE_API }, { "controllers", ROLE_CONTROLLERS },
	{ "scheduler", ROLE_SCHEDULER }, { "nodes", ROLE_NODES },
	{ "ray", ROLE_RAY }
};
#define NROLES (sizeof role_names / sizeof role_names[0])

int
volrayd_roles_parse(const char *list)
{
	const char *p = list, *e;
	int roles = 0;
	size_t i, n;

	while (*p != '\0') {
		e = strchr(p, ',');
		n = e != NULL ? (size_t)(e - p) : strlen(p);
		for (i = 0; i < NROLES; i++)
			if (strlen(role_names[i].name) == n &&
			    strncmp(role_names[i].name, p, n) == 0)
				break;
		if (i == NROLES)
			return 0;
		roles |= role_names[i].bit;
		p += n;
		if (*p == ',')
			p++;
	}
	return roles;
}

const char *
volrayd_roles_text(int roles)
{
	static char buf[64];
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < NROLES; i++)
		if (roles & role_names[i].bit)
			snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
			    "%s%s", buf[0] ? "," : "", role_names[i].name);
	return buf;
}

/* A leader-election duration: positive, in milliseconds. */
static int
elect_duration(const char *flag, const char *arg, long long *ms)
{
	if ((*ms = util_duration_ms(arg)) < 1)
		return bad(flag, arg);
	return 0;
}

/*
 * The flags of which roles run and against what API: --roles,
 * --kubeconfig, the scheduler's names, leader election and the client's
 * rate. 0, 2 for a bad value, or -1 when c is not one of them.
 */
static int
role_flag(struct volrayd_flags *f, int c, const char *arg)
{
	char *end;

	switch (c) {
	case O_ROLES:
		if ((f->roles = volrayd_roles_parse(arg)) == 0)
			return bad("--roles %s: want a comma-separated list of "
			    "api, controllers, scheduler, nodes, ray", arg);
		break;
	case O_CONTROLLERS: {
		char *why = NULL, *msg;
		ctrlsel *sel = ctrlsel_parse(arg, &why);
		int r;

		if (sel == NULL) {
			msg = util_printf("--controllers %s: %s", arg, why);
			r = bad("%s", msg);
			free(msg);
			free(why);
			return r;
		}
		ctrlsel_free(f->controllers);
		f->controllers = sel;
		break;
	}
	case O_KUBECONFIG:
		free(f->kubeconfig);
		f->kubeconfig = xstrdup(arg);
		break;
	case O_CONTEXT:
		free(f->context);
		f->context = xstrdup(arg);
		break;
	case O_METRICS: {
		struct volrayd_flags tmp;

		memset(&tmp, 0, sizeof tmp);
		if (parse_listen(&tmp, arg, 0) != 0 ||
		    !volrayd_is_loopback(tmp.host))
			return bad("--metrics-listen %s: want HOST:PORT on a "
			    "loopback address (it serves plain HTTP)", arg);
		snprintf(f->metrics_host, sizeof f->metrics_host, "%s",
		    tmp.host);
		f->metrics_port = tmp.port;
		break;
	}
	case O_NODE_LISTEN: {
		struct volrayd_flags tmp;

		memset(&tmp, 0, sizeof tmp);
		if (parse_listen(&tmp, arg, 1) != 0)
			return bad("--node-listen %s: want HOST:PORT", arg);
		snprintf(f->node_host, sizeof f->node_host, "%s", tmp.host);
		f->node_port = tmp.port;
		break;
	}
	case O_SCHED_LISTEN: {
		struct volrayd_flags tmp;

		if (strcmp(arg, "off") == 0) {
			f->sched_port = SCHED_LISTEN_OFF;
			break;
		}
		memset(&tmp, 0, sizeof tmp);
		if (parse_listen(&tmp, arg, 1) != 0)
			return bad("--scheduler-listen %s: want HOST:PORT or "
			    "off", arg);
		snprintf(f->sched_host, sizeof f->sched_host, "%s", tmp.host);
		f->sched_port = tmp.port;
		break;
	}
	case O_NODE_IP: {
		unsigned char buf[16];

		if (inet_pton(AF_INET, arg, buf) != 1 &&
		    inet_pton(AF_INET6, arg, buf) != 1)
			return bad("--node-ip %s: want an IP address", arg);
		snprintf(f->node_ip, sizeof f->node_ip, "%s", arg);
		break;
	}
	case O_NO_VIRTUAL:
		f->no_virtual_nodes = 1;
		break;
	case O_VIRTUAL_SEL: {
		char *why = NULL, *msg;
		selector *sel = selector_parse_labels(arg, &why);
		int r;

		if (sel == NULL) {
			msg = util_printf("--virtual-node-selector %s: %s", arg,
			    why ? why : "not a label selector");
			r = bad("%s", msg);
			free(msg);
			free(why);
			return r;
		}
		selector_free(sel);
		free(f->virtual_selector);
		f->virtual_selector = xstrdup(arg);
		break;
	}
	case O_SCHEDNAME:
		if (*arg == '\0')
			return bad("--scheduler-name wants a name%s", "");
		push(&f->scheduler_names, &f->nscheduler_names, arg);
		break;
	case O_NOCRDS:
		f->no_install_crds = 1;
		break;
	case O_GATES:
		if (parse_gates(arg) != 0)
			return 2;
		break;
	case O_ELECT:
		if (arg == NULL || strcasecmp(arg, "true") == 0)
			f->leader_elect = 1;
		else if (strcasecmp(arg, "false") == 0)
			f->leader_elect = 0;
		else
			return bad("--leader-elect=%s: want true or false",
			    arg);
		break;
	case O_ELECT_LEASE:
		return elect_duration("--leader-elect-lease-duration %s: want "
		    "a duration such as 15s", arg, &f->lease_ms);
	case O_ELECT_RENEW:
		return elect_duration("--leader-elect-renew-deadline %s: want "
		    "a duration such as 10s", arg, &f->renew_ms);
	case O_ELECT_RETRY:
		return elect_duration("--leader-elect-retry-period %s: want "
		    "a duration such as 2s", arg, &f->retry_ms);
	case O_ELECT_NS:
		free(f->leader_ns);
		f->leader_ns = xstrdup(arg);
		break;
	case O_KQPS:
		f->kube_qps = strtod(arg, &end);
		if (*arg == '\0' || *end != '\0' || f->kube_qps <= 0)
			return bad("--kube-api-qps %s: want a positive number",
			    arg);
		break;
	case O_KBURST:
		f->kube_burst = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || f->kube_burst < 1)
			return bad("--kube-api-burst %s: want 1 or more", arg);
		break;
	default:
		return -1;
	}
	return 0;
}

/* Set *dst to a copy of arg, freeing what it held. */
static void
set_str(char **dst, const char *arg)
{
	free(*dst);
	*dst = xstrdup(arg);
}

/*
 * The flags of the etcd-backed store: kube-apiserver's names. 0, 2 for a
 * bad value, or -1 when c is not one of them.
 */
static int
etcd_flag(struct volrayd_flags *f, int c, const char *arg)
{
	long long ms;
	char *copy, *tok, *save;

	switch (c) {
	case O_ETCD:
		copy = xstrdup(arg);
		for (tok = strtok_r(copy, ",", &save); tok != NULL;
		    tok = strtok_r(NULL, ",", &save)) {
			if (strncmp(tok, "http://", 7) != 0 &&
			    strncmp(tok, "https://", 8) != 0) {
				free(copy);
				return bad("--etcd-servers %s: want URLs such "
				    "as http://127.0.0.1:2379", arg);
			}
			push(&f->etcd_servers, &f->netcd, tok);
		}
		free(copy);
		if (f->netcd == 0)
			return bad("--etcd-servers %s: want a URL", arg);
		break;
	case O_ETCD_CA:
		set_str(&f->etcd_ca, arg);
		break;
	case O_ETCD_CERT:
		set_str(&f->etcd_cert, arg);
		break;
	case O_ETCD_KEY:
		set_str(&f->etcd_key, arg);
		break;
	case O_ETCD_PREFIX:
		if (*arg != '/' || strstr(arg, "//") != NULL)
			return bad("--etcd-prefix %s: want a path such as "
			    "/registry", arg);
		set_str(&f->etcd_prefix, arg);
		break;
	case O_ETCD_COMPACT:
		if (strcmp(arg, "0") == 0)
			ms = 0;
		else if ((ms = util_duration_ms(arg)) < 1000)
			return bad("--etcd-compaction-interval %s: want a "
			    "duration of 1s or more, or 0 for never", arg);
		f->etcd_compaction_ms = ms;
		break;
	case O_MIGRATE:
		f->migrate = 1;
		break;
	default:
		return -1;
	}
	return 0;
}

/*
 * The flags of what the daemon runs and where: its directories, address,
 * watch history, request timeout, Lua limits, batch scheduler and log
 * level. 0, 2 for a bad value, or -1 when c is not one of them.
 */
static int
daemon_flag(struct volrayd_flags *f, int c, const char *arg)
{
	switch (c) {
	case 'd':
		free(f->data_dir);
		f->data_dir = xstrdup(arg);
		break;
	case 'l':
		if (parse_listen(f, arg, 1) != 0)
			return bad("bad --listen %s: want HOST:PORT", arg);
		break;
	case 'p':
		push(&f->policy_dirs, &f->npolicy, arg);
		break;
	case 'N':
		f->no_local_node = 1;
		break;
	case 's':
		free(f->share_dir);
		f->share_dir = xstrdup(arg);
		break;
	case 'W':
		if ((f->watch_history = atoi(arg)) < 1)
			return bad("bad --watch-history %s", arg);
		break;
	case 'T':
		if ((f->request_timeout = atoi(arg)) < 1)
			return bad("bad --request-timeout %s", arg);
		break;
	case 'M':
		if ((f->lua_memory_mb = atoi(arg)) < 4)
			return bad("--lua-memory %s: wants megabytes, at least "
			    "4", arg);
		break;
	case 'I':
		f->lua_instructions = strtoull(arg, NULL, 10);
		if (f->lua_instructions < 100000)
			return bad("--lua-instructions %s: wants at least "
			    "100000", arg);
		break;
	case O_EXPLAIN: {
		char *end;

		f->explain_sessions = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || f->explain_sessions < 0 ||
		    f->explain_sessions > 1000)
			return bad("--explain-sessions %s: want 0 (off) to 1000",
			    arg);
		break;
	}
	case O_RECORD:
		if (*arg == '\0')
			return bad("--record-sessions: want a directory%s", "");
		free(f->record_dir);
		f->record_dir = xstrdup(arg);
		break;
	case O_RECORD_KEEP: {
		char *end;

		f->record_keep = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || f->record_keep < 1 ||
		    f->record_keep > 100000)
			return bad("--record-sessions-keep %s: want 1 to 100000",
			    arg);
		break;
	}
	case O_HISTORY: {
		char *end;

		f->ray_history_max = strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || f->ray_history_max < 0 ||
		    f->ray_history_max > 10000000)
			return bad("--ray-history-max %s: want 0 (keep none) to "
			    "10000000 jobs", arg);
		break;
	}
	case O_HISTORY_BYTES: {
		double q;

		if (quantity_parse(arg, &q) != 0 || q < 1)
			return bad("--ray-history-max-bytes %s: want a size "
			    "such as 1Gi or 500Mi", arg);
		f->ray_history_bytes = (long long)q;
		break;
	}
	case O_RAY_DIR:
		if (arg[0] != '/')
			return bad("--ray-dir %s: want an absolute directory",
			    arg);
		free(f->ray_dir);
		f->ray_dir = xstrdup(arg);
		break;
	case O_RAY_EMULATED:
		f->ray_emulated = 1;
		break;
	case O_BATCH:
		if (strcmp(arg, "volcano") != 0)
			return bad("--batch-scheduler %s: only volcano is "
			    "supported", arg);
		free(f->batch_scheduler);
		f->batch_scheduler = xstrdup(arg);
		break;
	case 'D':
		log_set_level(LOG_DEBUG);
		break;
	default:
		return -1;
	}
	return 0;
}

/*
 * The flags of who may reach the API and how: TLS, tokens and the
 * authorization mode. 0, 2 for a bad value, or -1 when c is not one of
 * them.
 */
static int
access_flag(struct volrayd_flags *f, int c, const char *arg)
{
	switch (c) {
	case O_PLAIN:
		f->plain_http = 1;
		break;
	case O_CERT:
		free(f->tls_cert_file);
		f->tls_cert_file = xstrdup(arg);
		break;
	case O_KEY:
		free(f->tls_key_file);
		f->tls_key_file = xstrdup(arg);
		break;
	case O_SAN:
		if (*arg == '\0')
			return bad("--tls-san wants a name%s", "");
		push(&f->tls_sans, &f->nsans, arg);
		break;
	case O_TOKENS:
		free(f->token_auth_file);
		f->token_auth_file = xstrdup(arg);
		break;
	case O_AUTHZ:
		if (strcmp(arg, "AlwaysAllow") == 0)
			f->always_allow = 1;
		else if (strcmp(arg, "RBAC") == 0)
			f->always_allow = 0;
		else
			return bad("--authorization-mode %s: want RBAC or "
			    "AlwaysAllow", arg);
		break;
	default:
		return -1;
	}
	return 0;
}

/*
 * The flags of the API's limits (limits.c): requests in flight, each
 * user's rate and watches. 0, 2 for a bad value, or -1 when c is not one
 * of them.
 */
static int
limit_flag(struct volrayd_flags *f, int c, const char *arg)
{
	switch (c) {
	case O_MAXRO:
		if ((f->max_readonly = atoi(arg)) < 1)
			return bad("bad --max-requests-inflight %s", arg);
		break;
	case O_MAXRW:
		if ((f->max_mutating = atoi(arg)) < 1)
			return bad("bad --max-mutating-requests-inflight %s",
			    arg);
		break;
	case O_QPS:
		if ((f->user_qps = atof(arg)) <= 0)
			return bad("bad --user-qps %s", arg);
		break;
	case O_BURST:
		if ((f->user_burst = atoi(arg)) < 1)
			return bad("bad --user-burst %s", arg);
		break;
	case O_WATCHES:
		if ((f->max_watches = atoi(arg)) < 1)
			return bad("bad --max-watches-per-user %s", arg);
		break;
	default:
		return -1;
	}
	return 0;
}

/*
 * The flags of node lifecycle: when a node is unhealthy, its lease, and
 * the tolerations its pods get by default. 0, 2 for a bad value, or -1
 * when c is not one of them.
 */
static int
node_flag(struct volrayd_flags *f, int c, const char *arg)
{
	char *why = NULL;
	long long ms;
	char *end;
	long v;

	switch (c) {
	case O_GRACE:
		if ((ms = util_duration_ms(arg)) < 1)
			return bad("--node-monitor-grace-period %s: want a "
			    "duration such as 40s or 500ms", arg);
		f->node_grace_ms = (unsigned long long)ms;
		break;
	case O_LEASE:
		f->node_lease_seconds = (int)strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' ||
		    f->node_lease_seconds < 1 || f->node_lease_seconds > 3600)
			return bad("--node-lease-duration-seconds %s: want 1 "
			    "to 3600", arg);
		break;
	case O_NOTREADY:
	case O_UNREACH:
		v = strtol(arg, &end, 10);
		if (*arg == '\0' || *end != '\0' || v < 0)
			return bad(c == O_NOTREADY ?
			    "--default-not-ready-toleration-seconds %s: want "
			    "0 or more" :
			    "--default-unreachable-toleration-seconds %s: "
			    "want 0 or more", arg);
		if (c == O_NOTREADY)
			f->not_ready_seconds = v;
		else
			f->unreachable_seconds = v;
		break;
	case O_POD_NET:
	case O_POD_CIDR:
	case O_LINK_RANGE:
	case O_SVC_RANGE:
		/* The local node's pod network (node/podnet.c); the Service
		   range is the registry's too. */
		if (podnet_configure(c == O_POD_NET ? arg : NULL,
		    c == O_POD_CIDR ? arg : NULL, c == O_LINK_RANGE ? arg : NULL,
		    c == O_SVC_RANGE ? arg : NULL, &why) != 0 ||
		    (c == O_SVC_RANGE && admission_set_service_range(arg) !=
		    0 && (why = util_printf("bad --service-cluster-ip-range "
		    "%s", arg)) != NULL)) {
			fprintf(stderr, "volrayd: %s\n", why);
			free(why);
			return 2;
		}
		break;
	default:
		return -1;
	}
	return 0;
}

/* Flags that are each fine but not together. 0, or 2. */
static int
check_together(const struct volrayd_flags *f)
{
	if ((f->tls_cert_file == NULL) != (f->tls_key_file == NULL))
		return bad("--tls-cert-file and --tls-private-key-file go "
		    "together%s", "");
	if ((f->etcd_cert == NULL) != (f->etcd_key == NULL))
		return bad("--etcd-certfile and --etcd-keyfile go together%s",
		    "");
	if (f->netcd == 0 && (f->etcd_ca != NULL || f->etcd_cert != NULL))
		return bad("--etcd-cafile, --etcd-certfile and --etcd-keyfile "
		    "are for --etcd-servers%s", "");
	if (f->migrate && f->netcd == 0)
		return bad("--migrate-to-etcd wants --etcd-servers%s", "");
	if (f->netcd > 0 && !(f->roles & ROLE_API))
		return bad("--etcd-servers is the api role's store: --roles %s "
		    "has no api", volrayd_roles_text(f->roles));
	if (f->plain_http && (f->tls_cert_file != NULL || f->nsans > 0))
		return bad("--plain-http turns TLS off: it takes no "
		    "--tls-* flags%s", "");
	if (!(f->roles & ROLE_API) && f->kubeconfig == NULL &&
	    getenv("KUBERNETES_SERVICE_HOST") == NULL)
		return bad("--roles %s: without api, the roles need an API "
		    "server: give --kubeconfig FILE", volrayd_roles_text(
		    f->roles));
	if (f->roles == ROLE_API && f->kubeconfig != NULL)
		return bad("--kubeconfig is for the roles other than api: "
		    "--roles %s has none", volrayd_roles_text(f->roles));
	if ((f->node_port >= 0 || f->node_ip[0] != '\0' ||
	    f->no_virtual_nodes || f->virtual_selector != NULL) &&
	    !(f->roles & ROLE_NODES))
		return bad("--node-listen, --node-ip, --no-virtual-nodes and "
		    "--virtual-node-selector are the nodes role's: --roles %s "
		    "has none", volrayd_roles_text(f->roles));
	if (f->controllers != NULL && !(f->roles & ROLE_CONTROLLERS))
		return bad("--controllers is the controllers role's: --roles "
		    "%s has none", volrayd_roles_text(f->roles));
	if (f->record_dir != NULL && !(f->roles & ROLE_SCHEDULER))
		return bad("--record-sessions is the scheduler role's: --roles "
		    "%s has none", volrayd_roles_text(f->roles));
	if (f->sched_port != -1 && !(f->roles & ROLE_SCHEDULER))
		return bad("--scheduler-listen is the scheduler role's: --roles "
		    "%s has none", volrayd_roles_text(f->roles));
	if (f->no_virtual_nodes && f->virtual_selector != NULL)
		return bad("--no-virtual-nodes and --virtual-node-selector: one "
		    "or the other%s", "");
	if ((f->roles & ROLE_RAY) && !(f->roles & ROLE_NODES))
		return bad("--roles %s: ray serves the heads of the nodes this "
		    "process runs: add nodes", volrayd_roles_text(f->roles));
	if (f->renew_ms >= f->lease_ms || f->retry_ms >= f->renew_ms)
		return bad("leader election wants retry period < renew deadline"
		    " < lease duration%s", "");
	if (f->plain_http && !volrayd_is_loopback(f->host))
		return bad("--listen %s: plain HTTP is allowed only on a "
		    "loopback address; drop --plain-http to serve HTTPS",
		    f->host);
	return 0;
}

int
volrayd_flags_parse(struct volrayd_flags *f, int argc, char **argv)
{
	int c, rc;

	set_defaults(f);
	while ((c = getopt_long(argc, argv, "d:l:p:Ns:W:T:M:I:DhV", longopts,
	    NULL)) != -1) {
		if ((rc = daemon_flag(f, c, optarg)) == -1 &&
		    (rc = access_flag(f, c, optarg)) == -1 &&
		    (rc = limit_flag(f, c, optarg)) == -1 &&
		    (rc = node_flag(f, c, optarg)) == -1 &&
		    (rc = etcd_flag(f, c, optarg)) == -1)
			rc = role_flag(f, c, optarg);
		if (rc > 0)
			return rc;
		if (rc == 0)
			continue;
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("volrayd %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* In a pod, without api or --kubeconfig: the in-cluster config. */
	if (!(f->roles & ROLE_API) && f->kubeconfig == NULL &&
	    getenv("KUBERNETES_SERVICE_HOST") != NULL)
		f->kubeconfig = xstrdup("");
	if (f->nscheduler_names == 0)
		push(&f->scheduler_names, &f->nscheduler_names, "volcano");
	return check_together(f);
}
