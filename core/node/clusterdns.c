/*
 * Cluster DNS on the local node's pod network (podnet.c): Debian's
 * dnsmasq, run by volrayd inside the node's namespace on the pods'
 * gateway, port 53, answering from a hosts file volrayd writes
 * (DATA_DIR/dns/hosts, addn-hosts; SIGHUP reads it again) what
 * kube-dns answers for A records:
 *
 *   SVC.NS.svc.cluster.local        a Service's ClusterIP, or a headless
 *                                   Service's ready endpoints (each);
 *   HOST.SVC.NS.svc.cluster.local   the endpoint of a headless Service
 *                                   SVC whose pod has spec.hostname HOST
 *                                   and spec.subdomain SVC.
 *
 * Names under cluster.local never go further (--local); other names go
 * to this machine's nameservers (from /etc/resolv.conf), reached
 * through the node's masquerade. Pods' resolv.conf names the gateway,
 * with the kubelet's search path and ndots:5 (mountplan.c).
 *
 * The file is written again (and dnsmasq told) only when its text
 * changes: after a Service, Endpoints or local pod changed (podnet.c's
 * timer calls clusterdns_refresh). dnsmasq writes its pid to
 * DATA_DIR/dns/dnsmasq.pid; the one a killed volrayd left is killed at
 * start, and a clean stop ends ours. One that ends otherwise starts
 * again after 1 s, then 2, 4, ... 30 s while it keeps ending within a
 * minute, with a ClusterDNSDown Warning Event on the Node.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

static struct {
	node_mgr *m;
	uv_process_t proc;
	int running;
	int stopping;			/* clusterdns_stop: no restart */
	char dir[PATH_MAX];
	char *last;			/* the hosts file's text */
	char gw[64];
	int node_fd, host_fd;		/* the namespaces it starts in */
	uv_timer_t restart;		/* after it ended, with backoff */
	int timer_on;
	unsigned backoff_ms;
	uint64_t started_ms;		/* uv_now at its last start */
} dns;

static int spawn(char **cause);

struct text {
	char *s;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3)))
add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (t->len + (size_t)n + 1 > t->cap) {
		t->cap = (t->len + (size_t)n + 1) * 2;
		t->s = xrealloc(t->s, t->cap);
	}
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* A name or address fit for a hosts file line. */
static int
clean(const char *s)
{
	return s != NULL && *s != '\0' && strpbrk(s, " \t\n#") == NULL;
}

/* The headless Service's records: its ready endpoints. */
static void
headless(struct text *t, node_mgr *m, const char *ns, const char *svc)
{
	const store_obj *eo = client_get(m->c, "endpoints", ns, svc);
	cJSON *ep = eo ? store_obj_tree(eo) : NULL;
	const cJSON *sub, *a;

	cJSON_ArrayForEach(sub, json_at(ep, "subsets"))
		cJSON_ArrayForEach(a, json_at(sub, "addresses")) {
			const char *ip = json_str(a, "ip");
			const char *pod = json_str(a, "targetRef.name");
			const store_obj *po;
			cJSON *pt;

			if (!clean(ip))
				continue;
			add(t, "%s\t%s.%s.svc.cluster.local\n", ip, svc, ns);
			if (pod == NULL || (po = client_get(m->c, "pods", ns,
			    pod)) == NULL)
				continue;
			pt = store_obj_tree(po);
			if (clean(json_str(pt, "spec.hostname")) &&
			    json_str(pt, "spec.subdomain") != NULL &&
			    strcmp(json_str(pt, "spec.subdomain"), svc) == 0)
				add(t, "%s\t%s.%s.%s.svc.cluster.local\n", ip,
				    json_str(pt, "spec.hostname"), svc, ns);
			cJSON_Delete(pt);
		}
	cJSON_Delete(ep);
}

/* The hosts file's text. */
static char *
records(node_mgr *m)
{
	store_obj *const *svcs = NULL;
	struct text t = { 0 };
	size_t n, i;

	add(&t, "# cluster DNS records (volray, clusterdns.c)\n");
	n = client_list(m->c, "services", NULL, &svcs);
	for (i = 0; i < n; i++) {
		cJSON *st = store_obj_tree(svcs[i]);
		const char *cip = json_str(st, "spec.clusterIP");

		if (cip != NULL && strcmp(cip, "None") == 0)
			headless(&t, m, svcs[i]->ns, svcs[i]->name);
		else if (clean(cip))
			add(&t, "%s\t%s.%s.svc.cluster.local\n", cip,
			    svcs[i]->name, svcs[i]->ns);
		cJSON_Delete(st);
	}
	return t.s;
}

/* Write the hosts file if its text changed: 1 written, 0 same, -1. */
static int
write_hosts(void)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	char *text = records(dns.m);
	FILE *f;

	if (dns.last != NULL && strcmp(dns.last, text) == 0) {
		free(text);
		return 0;
	}
	util_strf(path, sizeof path, "%s/hosts", dns.dir);
	util_strf(tmp, sizeof tmp, "%s/hosts.tmp", dns.dir);
	if ((f = fopen(tmp, "we")) == NULL || fputs(text, f) < 0 ||
	    fclose(f) != 0 || rename(tmp, path) != 0) {
		log_error("clusterdns: %s: %s", path, strerror(errno));
		free(text);
		return -1;
	}
	free(dns.last);
	dns.last = text;
	return 1;
}

/* A Warning Event on the local Node, as a kubelet records its own. */
static void
node_warning(const char *reason, const char *message)
{
	struct recorder_obj o = { "v1", "Node", "", dns.m->local_name,
	    dns.m->local_name, NULL };

	if (dns.m->events != NULL && dns.m->local_name != NULL)
		recorder_event(dns.m->events, &o, "Warning", reason, message,
		    NULL);
}

static void
on_restart(uv_timer_t *t)
{
	char *why = NULL;

	(void)t;
	if (dns.stopping || dns.running)
		return;
	if (spawn(&why) != 0) {
		log_warn("clusterdns: restarting dnsmasq: %s", why);
		free(why);
		dns.backoff_ms = dns.backoff_ms >= 16000 ? 30000 :
		    dns.backoff_ms * 2;
		uv_timer_start(&dns.restart, on_restart, dns.backoff_ms, 0);
		return;
	}
	log_info("clusterdns: dnsmasq started again");
}

/*
 * dnsmasq ended: unless volrayd stops it, it starts again after 1 s,
 * then 2, 4, ... up to 30 s while it keeps ending within a minute (as
 * a Deployment's CoreDNS comes back), with a Warning Event on the Node.
 */
static void
on_exit_cb(uv_process_t *p, int64_t status, int sig)
{
	char msg[200];
	int was = dns.running;

	dns.running = 0;
	uv_close((uv_handle_t *)p, NULL);
	if (!was || dns.stopping)
		return;
	if (uv_now(dns.m->loop) - dns.started_ms > 60000)
		dns.backoff_ms = 1000;
	log_warn("clusterdns: dnsmasq ended (status %lld, signal %d): "
	    "starting it again in %u ms", (long long)status, sig,
	    dns.backoff_ms);
	snprintf(msg, sizeof msg, "cluster DNS (dnsmasq on %s:53) ended "
	    "(status %lld, signal %d): restarting it in %u ms", dns.gw,
	    (long long)status, sig, dns.backoff_ms);
	node_warning("ClusterDNSDown", msg);
	if (!dns.timer_on) {
		uv_timer_init(dns.m->loop, &dns.restart);
		dns.timer_on = 1;
	}
	uv_timer_start(&dns.restart, on_restart, dns.backoff_ms, 0);
	dns.backoff_ms = dns.backoff_ms >= 16000 ? 30000 : dns.backoff_ms * 2;
}

/* The dnsmasq a killed volrayd left, from its pid file. */
static void
kill_left(void)
{
	char path[PATH_MAX], cmd[PATH_MAX + 64], want[PATH_MAX + 16];
	FILE *f;
	int pid = 0;
	size_t n, i;

	util_strf(path, sizeof path, "%s/dnsmasq.pid", dns.dir);
	if ((f = fopen(path, "re")) == NULL)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	unlink(path);
	util_strf(path, sizeof path, "/proc/%d/cmdline", pid);
	if (pid <= 1 || (f = fopen(path, "re")) == NULL)
		return;
	n = fread(cmd, 1, sizeof cmd - 1, f);
	fclose(f);
	for (i = 0; i < n; i++)
		if (cmd[i] == '\0')
			cmd[i] = ' ';
	cmd[n] = '\0';
	/* Ours: its command line names our hosts file. */
	util_strf(want, sizeof want, "--addn-hosts=%s/hosts", dns.dir);
	if (strstr(cmd, "dnsmasq") != NULL && strstr(cmd, want) != NULL) {
		log_info("clusterdns: killing the dnsmasq (%d) a previous "
		    "volrayd left", pid);
		kill(pid, SIGKILL);
	}
}

/*
 * Start dnsmasq in the node's namespace on gw:53 (podnet_start calls
 * this once the namespace is up). 0, or -1 with *cause.
 */
/* Start dnsmasq in the node's namespace on the gateway's port 53. */
static int
spawn(char **cause)
{
	char dnsmasq[PATH_MAX], line[512], ns[64];
	char *argv[64];
	uv_process_options_t o;
	FILE *f;
	int argc = 0, r, i;

	util_strf(dnsmasq, sizeof dnsmasq, "/usr/sbin/dnsmasq");
	argv[argc++] = dnsmasq;
	argv[argc++] = "--keep-in-foreground";
	argv[argc++] = "--conf-file=/dev/null";
	argv[argc++] = "--no-resolv";
	argv[argc++] = "--no-hosts";
	argv[argc++] = "--user=root";
	argv[argc++] = "--bind-interfaces";
	argv[argc++] = util_printf("--listen-address=%s", dns.gw);
	argv[argc++] = util_printf("--addn-hosts=%s/hosts", dns.dir);
	argv[argc++] = util_printf("--pid-file=%s/dnsmasq.pid", dns.dir);
	argv[argc++] = "--local=/cluster.local/";
	argv[argc++] = "--domain-needed";
	argv[argc++] = "--log-facility=-";
	/* Upstream: this machine's nameservers (not its loopback ones,
	   which the node's namespace cannot reach). */
	if ((f = fopen("/etc/resolv.conf", "re")) != NULL) {
		while (fgets(line, sizeof line, f) != NULL && argc < 60)
			if (sscanf(line, "nameserver %63s", ns) == 1 &&
			    strncmp(ns, "127.", 4) != 0 &&
			    strchr(ns, ':') == NULL)
				argv[argc++] = util_printf("--server=%s", ns);
		fclose(f);
	}
	argv[argc] = NULL;
	memset(&o, 0, sizeof o);
	o.file = dnsmasq;
	o.args = argv;
	o.exit_cb = on_exit_cb;
	o.flags = UV_PROCESS_WINDOWS_HIDE;
	/* Forked from the node's namespace, it lives there. */
	if (setns(dns.node_fd, CLONE_NEWNET) != 0) {
		*cause = util_printf("into the node's namespace: %s",
		    strerror(errno));
		r = -1;
	} else {
		r = uv_spawn(dns.m->loop, &dns.proc, &o);
		if (setns(dns.host_fd, CLONE_NEWNET) != 0)
			log_error("clusterdns: back to the host's network "
			    "namespace: %s", strerror(errno));
		if (r != 0) {
			*cause = util_printf("%s: %s", dnsmasq, uv_strerror(r));
			uv_close((uv_handle_t *)&dns.proc, NULL);
			r = -1;
		} else {
			dns.running = 1;
			dns.started_ms = uv_now(dns.m->loop);
		}
	}
	for (i = 7; i < 10; i++)
		free(argv[i]);
	for (i = 13; i < argc; i++)
		free(argv[i]);
	return r;
}

/*
 * Start dnsmasq in the node's namespace on gw:53 (podnet_start calls
 * this once the namespace is up). 0, or -1 with *cause.
 */
int
clusterdns_start(node_mgr *m, const char *gw, int node_ns_fd, int host_ns_fd,
    char **cause)
{
	dns.m = m;
	dns.stopping = 0;
	dns.backoff_ms = 1000;
	dns.node_fd = node_ns_fd;
	dns.host_fd = host_ns_fd;
	snprintf(dns.gw, sizeof dns.gw, "%s", gw);
	util_strf(dns.dir, sizeof dns.dir, "%s/dns", m->data_dir);
	if (ctrenv_mkdirs(dns.dir) != 0) {
		*cause = util_printf("%s: %s", dns.dir, strerror(errno));
		return -1;
	}
	kill_left();
	if (access("/usr/sbin/dnsmasq", X_OK) != 0) {
		*cause = xstrdup("no dnsmasq (Debian's dnsmasq-base): no "
		    "cluster DNS");
		return -1;
	}
	free(dns.last);
	dns.last = NULL;
	if (write_hosts() < 0) {
		*cause = util_printf("%s/hosts: %s", dns.dir, strerror(errno));
		return -1;
	}
	return spawn(cause);
}

/* Services, Endpoints or pods changed: the records again if need be. */
void
clusterdns_refresh(void)
{
	if (!dns.running)
		return;
	if (write_hosts() == 1)
		uv_process_kill(&dns.proc, SIGHUP);
}

/* volrayd stops: dnsmasq ends. */
void
clusterdns_stop(void)
{
	char path[PATH_MAX];

	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int pid = dns.proc.pid, i;

	dns.stopping = 1;
	if (dns.timer_on) {
		uv_close((uv_handle_t *)&dns.restart, NULL);
		dns.timer_on = 0;
	}
	if (!dns.running)
		return;
	dns.running = 0;
	uv_process_kill(&dns.proc, SIGKILL);
	/* Gone from the namespace (a zombie at most) before it is removed:
	   the namespace, and the host's end of the link, go with it. */
	for (i = 0; i < 100; i++) {
		char stat[64], buf[256], *rp;
		FILE *f;

		util_strf(stat, sizeof stat, "/proc/%d/stat", pid);
		if ((f = fopen(stat, "re")) == NULL)
			break;
		rp = fgets(buf, sizeof buf, f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (rp == NULL || rp[1] == '\0' || rp[2] == 'Z')
			break;
		nanosleep(&ts, NULL);
	}
	util_strf(path, sizeof path, "%s/dnsmasq.pid", dns.dir);
	unlink(path);
	free(dns.last);
	dns.last = NULL;
}
