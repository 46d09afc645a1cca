/*
 * Container probes as the kubelet runs them: a startup probe first (the
 * others wait until it has succeeded), then liveness and readiness, each
 * an exec, httpGet, tcpSocket or grpc check every periodSeconds after
 * initialDelaySeconds, failing after timeoutSeconds. successThreshold
 * successes in a row make a readiness probe pass, failureThreshold
 * failures make it fail; a failed liveness or startup probe stops the
 * container, which is then restarted as its restartPolicy says. Readiness
 * gates the container's ready flag and so the pod's Ready condition.
 *
 * httpGet and tcpSocket connect to the pod's address (127.0.0.1 on the
 * local node, the pod's own in its namespace with --pod-network, from
 * the node's namespace: podnet_tcp_connect) with libuv; grpc calls the gRPC health checking protocol's
 * Check there (grpcprobe.c: SERVING passes); exec runs the command through
 * the runtime (on the local node: a process in the container's
 * environment). Each failure is an Unhealthy Event in the kubelet's words
 * ("Readiness probe failed: service unhealthy (responded with
 * \"NOT_SERVING\")"), and a container a probe stops a Killing one. A
 * simulated container runs no probe (kwok's way): Ready once started.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <http_parser.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"
#include "node/podnet.h"

static const char *const kinds[] = { "startupProbe", "livenessProbe",
    "readinessProbe" };
/* As the kubelet names them in its Events. */
static const char *const kind_names[] = { "Startup", "Liveness",
    "Readiness" };
static const char *const kind_lower[] = { "startup", "liveness",
    "readiness" };

struct probe {
	struct node_ctr *c;
	int type;			/* PROBE_STARTUP, ... */
	cJSON *spec;
	int successes, failures;
	wheel_timer timer;
	struct probe_run *run;		/* in flight */
};

/*
 * One check in flight: over TCP (httpGet, tcpSocket), through the
 * runtime (exec) or the gRPC client (grpc). Abandoned (pr NULL) when the
 * container stops first.
 */
struct probe_run {
	struct probe *pr;		/* NULL once abandoned */
	int exec;			/* or grpc: freed, no handle to close */
	char target[300];		/* host:port, for the messages */
	char path[256];			/* httpGet's */
	uv_tcp_t tcp;
	uv_connect_t conn;
	uv_write_t wr;
	wheel_timer timeout;
	http_parser parser;
	char req[1024];
	char buf[4096];
	int http;
	int done;
};

static int
num(const cJSON *spec, const char *key, int def, int min)
{
	const cJSON *v = json_at(spec, key);
	int n = cJSON_IsNumber(v) ? (int)v->valuedouble : def;

	return n < min ? min : n;
}

static void probe_schedule(struct probe *, uint64_t ms);

static int
started(const struct node_ctr *c)
{
	return c->probes[PROBE_STARTUP] == NULL || c->startup_ok;
}

/* What a check's outcome does; msg says why it failed. */
static void
outcome(struct probe *pr, int ok, const char *msg)
{
	struct node_ctr *c = pr->c;
	struct node_pod *p = c->pod;
	int success_t = pr->type == PROBE_READINESS ? num(pr->spec,
	    "successThreshold", 1, 1) : 1;
	int failure_t = num(pr->spec, "failureThreshold", 3, 1);

	if (ok) {
		pr->failures = 0;
		pr->successes++;
	} else {
		char ev[700];

		pr->successes = 0;
		pr->failures++;
		snprintf(ev, sizeof ev, "%s probe failed: %s",
		    kind_names[pr->type], msg ? msg : "");
		podevent_record(p, "Warning", "Unhealthy", ev);
	}
	switch (pr->type) {
	case PROBE_READINESS:
		if (ok && pr->successes >= success_t && !c->probe_ready) {
			c->probe_ready = 1;
			podstatus_dirty(p);
		} else if (!ok && pr->failures >= failure_t && c->probe_ready) {
			c->probe_ready = 0;
			podstatus_dirty(p);
		}
		break;
	case PROBE_STARTUP:
		if (ok) {
			c->startup_ok = 1;
			podstatus_dirty(p);
			if (c->probes[PROBE_LIVENESS] != NULL)
				probe_schedule(c->probes[PROBE_LIVENESS],
				    (uint64_t)num(c->probes[PROBE_LIVENESS]->spec,
				    "initialDelaySeconds", 0, 0) * 1000);
			if (c->probes[PROBE_READINESS] != NULL)
				probe_schedule(c->probes[PROBE_READINESS],
				    (uint64_t)num(c->probes[PROBE_READINESS]->spec,
				    "initialDelaySeconds", 0, 0) * 1000);
			return;	/* a startup probe is done once it passes */
		}
		/* FALLTHROUGH */
	case PROBE_LIVENESS:
		if (!ok && pr->failures >= failure_t) {
			char ev[400];

			log_info("node %s: pod %s container %s: %s failed %d "
			    "times, restarting it", p->node->name, p->key,
			    c->name, kinds[pr->type], pr->failures);
			snprintf(ev, sizeof ev, "Container %s failed %s probe, "
			    "will be restarted", c->name, kind_lower[pr->type]);
			podevent_record(p, "Normal", "Killing", ev);
			pr->failures = 0;
			p->node->rt->stop(p->node, p, c, 2000);
			return;
		}
		break;
	}
	probe_schedule(pr, (uint64_t)num(pr->spec, "periodSeconds", 10, 1) *
	    1000);
}

static void
run_free(uv_handle_t *h)
{
	free(h->data);
}

/* End a check: report once, close, and free when libuv is done. */
static void
run_end(struct probe_run *r, int ok, const char *msg)
{
	struct probe *pr = r->pr;

	if (r->done)
		return;
	r->done = 1;
	if (pr != NULL) {
		wheel_cancel(pr->c->pod->node->m->wheel, &r->timeout);
		pr->run = NULL;
		r->pr = NULL;
	}
	if (r->exec)
		free(r);
	else
		uv_close((uv_handle_t *)&r->tcp, run_free);
	if (pr != NULL)
		outcome(pr, ok, msg);
}

static void
on_timeout(wheel_timer *t)
{
	struct probe_run *r = t->data;
	char msg[700];

	if (r->http)
		snprintf(msg, sizeof msg, "Get \"http://%s%s\": context "
		    "deadline exceeded (Client.Timeout exceeded while awaiting "
		    "headers)", r->target, r->path);
	else
		snprintf(msg, sizeof msg, "dial tcp %s: i/o timeout", r->target);
	run_end(r, 0, msg);
}

static int
on_status(http_parser *hp)
{
	struct probe_run *r = hp->data;
	char msg[64];

	snprintf(msg, sizeof msg, "HTTP probe failed with statuscode: %u",
	    hp->status_code);
	run_end(r, hp->status_code >= 200 && hp->status_code < 400, msg);
	return 1;	/* stop parsing */
}

static void
on_alloc(uv_handle_t *h, size_t n, uv_buf_t *buf)
{
	struct probe_run *r = h->data;

	(void)n;
	*buf = uv_buf_init(r->buf, sizeof r->buf);
}

static void
on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct probe_run *r = s->data;
	static http_parser_settings settings;

	settings.on_headers_complete = on_status;
	if (n < 0) {
		char msg[700];

		snprintf(msg, sizeof msg, "Get \"http://%s%s\": %s", r->target,
		    r->path, n == UV_EOF ? "EOF" : uv_strerror((int)n));
		run_end(r, 0, msg);
		return;
	}
	if (n > 0)
		http_parser_execute(&r->parser, &settings, buf->base, (size_t)n);
	if (!r->done && HTTP_PARSER_ERRNO(&r->parser) != HPE_OK &&
	    HTTP_PARSER_ERRNO(&r->parser) != HPE_CB_headers_complete)
		run_end(r, 0, "malformed HTTP response");
}

static void
on_written(uv_write_t *w, int status)
{
	struct probe_run *r = w->data;

	if (status < 0)
		run_end(r, 0, uv_strerror(status));
}

static void
on_connect(uv_connect_t *req, int status)
{
	struct probe_run *r = req->data;
	uv_buf_t b;

	if (r->done)
		return;
	if (status < 0 || !r->http) {
		char msg[900];

		if (r->http)
			snprintf(msg, sizeof msg, "Get \"http://%s%s\": dial "
			    "tcp %s: connect: %s", r->target, r->path,
			    r->target, uv_strerror(status));
		else
			snprintf(msg, sizeof msg, "dial tcp %s: connect: %s",
			    r->target, status < 0 ? uv_strerror(status) : "");
		run_end(r, status == 0, msg);
		return;
	}
	http_parser_init(&r->parser, HTTP_RESPONSE);
	r->parser.data = r;
	b = uv_buf_init(r->req, strlen(r->req));
	r->wr.data = r;
	if (uv_write(&r->wr, (uv_stream_t *)&r->tcp, &b, 1, on_written) != 0 ||
	    uv_read_start((uv_stream_t *)&r->tcp, on_alloc, on_read) != 0)
		run_end(r, 0, "cannot send the request");
}

/* A named or numbered port of the container. */
static int
port_of(const cJSON *pod_ports, const cJSON *v)
{
	const cJSON *it;

	if (cJSON_IsNumber(v))
		return (int)v->valuedouble;
	if (cJSON_IsString(v)) {
		cJSON_ArrayForEach(it, pod_ports)
			if (json_str(it, "name") && strcmp(json_str(it, "name"),
			    v->valuestring) == 0)
				return (int)cJSON_GetNumberValue(json_at(it,
				    "containerPort"));
		return atoi(v->valuestring);
	}
	return 0;
}

/* The runtime's answer to an exec check (r may have been abandoned). */
static void
exec_done(void *arg, int ok)
{
	/* The kubelet says what the command printed; it is not kept here. */
	run_end(arg, ok, "");
}

/* The gRPC client's answer (r may have been abandoned). */
static void
grpc_done(void *arg, int ok, const char *msg)
{
	struct probe_run *r = arg;

	if (ok < 0) {
		/* The client is going: no outcome, the run goes with it. */
		if (r->pr != NULL)
			r->pr->run = NULL;
		free(r);
		return;
	}
	run_end(r, ok, msg);
}

/*
 * A grpc check of a pod in a network namespace of its own (podnet.c):
 * gRPC's threads cannot dial there, so the connection is made here from
 * the node's namespace, again every DIAL_RETRY_MS until the deadline
 * (the kubelet's wait-for-ready), and handed to the client.
 */
#define DIAL_RETRY_MS	100

struct grpc_dial {
	uv_tcp_t tcp;
	uv_connect_t conn;
	wheel_timer retry;
	struct probe_run *r;
	node_mgr *m;
	struct sockaddr_in addr;
	char ip[46];
	int port;
	char service[256];
	uint64_t timeout, deadline;	/* loop time */
	int again;			/* retry once the handle is closed */
};

static void dial_attempt(struct grpc_dial *);

static void
on_dial_retry(wheel_timer *t)
{
	struct grpc_dial *d = t->data;

	if (d->r->pr == NULL) {
		run_end(d->r, 0, NULL);	/* abandoned: freed, no outcome */
		free(d);
		return;
	}
	dial_attempt(d);
}

static void
on_dial_closed(uv_handle_t *h)
{
	struct grpc_dial *d = h->data;

	if (d->again)
		wheel_add(d->m->wheel, &d->retry, DIAL_RETRY_MS, on_dial_retry,
		    d);
	else
		free(d);
}

static void
on_dial(uv_connect_t *req, int status)
{
	struct grpc_dial *d = req->data;
	struct probe_run *r = d->r;
	uint64_t now = uv_now(d->m->loop);
	uv_os_fd_t fd;
	char msg[512];
	int nfd = -1;

	d->again = 0;
	if (r->pr == NULL)
		run_end(r, 0, NULL);
	else if (status == 0 && uv_fileno((uv_handle_t *)&d->tcp, &fd) == 0 &&
	    (nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) >= 0)
		grpcprobe_check_fd(d->m->grpc, nfd, d->ip, d->port, d->service,
		    d->deadline > now ? d->deadline - now : 1, grpc_done, r);
	else if (now + DIAL_RETRY_MS < d->deadline)
		d->again = 1;
	else {
		grpcprobe_unreachable(d->ip, d->port, d->timeout, msg,
		    sizeof msg);
		run_end(r, 0, msg);
	}
	uv_close((uv_handle_t *)&d->tcp, on_dial_closed);
}

static void
dial_attempt(struct grpc_dial *d)
{
	int r;

	uv_tcp_init(d->m->loop, &d->tcp);
	d->tcp.data = d;
	d->conn.data = d;
	if ((r = podnet_tcp_connect(&d->conn, &d->tcp,
	    (struct sockaddr *)&d->addr, on_dial)) != 0)
		on_dial(&d->conn, r);
}

static void
grpc_dial(struct probe_run *r, node_mgr *m, const char *ip, int port,
    const char *service, uint64_t timeout)
{
	struct grpc_dial *d = xcalloc(1, sizeof *d);

	d->r = r;
	d->m = m;
	snprintf(d->ip, sizeof d->ip, "%s", ip);
	d->port = port;
	snprintf(d->service, sizeof d->service, "%s", service ? service : "");
	d->timeout = timeout;
	d->deadline = uv_now(m->loop) + timeout;
	if (uv_ip4_addr(ip, port, &d->addr) != 0) {
		free(d);
		run_end(r, 0, "error: the pod has no address");
		return;
	}
	dial_attempt(d);
}

/* A grpc check: the health protocol's Check at the pod's address. */
static void
grpc_probe(struct probe *pr, const cJSON *g, uint64_t timeout)
{
	struct node_pod *p = pr->c->pod;
	node_mgr *m = p->node->m;
	const cJSON *port = json_at(g, "port");
	const char *service = json_str(g, "service");
	struct probe_run *r;

	if (!cJSON_IsNumber(port) || port->valuedouble < 1 ||
	    port->valuedouble > 65535) {
		outcome(pr, 0, "error: the grpc probe's port is not a number "
		    "from 1 to 65535");
		return;
	}
	if (m->grpc == NULL)
		m->grpc = grpcprobe_new(m->loop);
	r = xcalloc(1, sizeof *r);
	r->pr = pr;
	r->exec = 1;
	pr->run = r;
	if (podnet_has(p)) {
		grpc_dial(r, m, p->ip, (int)port->valuedouble, service,
		    timeout);
		return;
	}
	grpcprobe_check(m->grpc, p->ip, (int)port->valuedouble,
	    service ? service : "", timeout, grpc_done, r);
}

static void
on_probe(wheel_timer *t)
{
	struct probe *pr = t->data;
	struct node_ctr *c = pr->c;
	struct node_pod *p = c->pod;
	struct node *n = p->node;
	const cJSON *spec = pr->spec, *h;
	uint64_t timeout = (uint64_t)num(spec, "timeoutSeconds", 1, 1) * 1000;
	struct sockaddr_in addr;
	struct probe_run *r;
	const char *host;
	int port;

	if (c->state != CTR_RUNNING || pr->run != NULL)
		return;
	if (n->rt->exec == NULL) {
		/* A simulated container passes every probe. */
		outcome(pr, 1, NULL);
		return;
	}
	if (json_at(spec, "exec") != NULL) {
		r = xcalloc(1, sizeof *r);
		r->pr = pr;
		r->exec = 1;
		pr->run = r;
		n->rt->exec(n, p, c, json_at(spec, "exec.command"), timeout,
		    exec_done, r);
		return;
	}
	if (json_at(spec, "grpc") != NULL) {
		grpc_probe(pr, json_at(spec, "grpc"), timeout);
		return;
	}
	h = json_at(spec, "httpGet");
	if (h == NULL)
		h = json_at(spec, "tcpSocket");
	if (h == NULL) {
		/* No handler (kube-apiserver would refuse the pod): passes. */
		outcome(pr, 1, NULL);
		return;
	}
	port = port_of(c->ports, json_at(h, "port"));
	host = json_str(h, "host") ? json_str(h, "host") : p->ip;
	if (port <= 0 || port > 65535 || uv_ip4_addr(host, port, &addr) != 0) {
		outcome(pr, 0, "error: no such port or host");
		return;
	}
	r = xcalloc(1, sizeof *r);
	r->pr = pr;
	r->http = json_at(spec, "httpGet") != NULL;
	snprintf(r->target, sizeof r->target, "%s:%d", host, port);
	snprintf(r->path, sizeof r->path, "%s", json_str(h, "path") ?
	    json_str(h, "path") : "/");
	if (r->http) {
		const cJSON *hd;
		size_t len;

		len = (size_t)snprintf(r->req, sizeof r->req, "GET %s HTTP/1.1\r\n"
		    "Host: %s:%d\r\nUser-Agent: kube-probe/1.32\r\n"
		    "Connection: close\r\n", json_str(h, "path") ?
		    json_str(h, "path") : "/", host, port);
		cJSON_ArrayForEach(hd, json_at(h, "httpHeaders"))
			if (len < sizeof r->req && json_str(hd, "name") &&
			    json_str(hd, "value"))
				len += (size_t)snprintf(r->req + len,
				    sizeof r->req - len, "%s: %s\r\n",
				    json_str(hd, "name"), json_str(hd, "value"));
		if (len < sizeof r->req)
			snprintf(r->req + len, sizeof r->req - len, "\r\n");
	}
	pr->run = r;
	uv_tcp_init(n->m->loop, &r->tcp);
	r->tcp.data = r;
	r->conn.data = r;
	wheel_add(n->m->wheel, &r->timeout, timeout, on_timeout, r);
	if ((podnet_has(p) && json_str(h, "host") == NULL ?
	    podnet_tcp_connect(&r->conn, &r->tcp, (struct sockaddr *)&addr,
	    on_connect) : uv_tcp_connect(&r->conn, &r->tcp,
	    (struct sockaddr *)&addr, on_connect)) != 0)
		run_end(r, 0, "cannot connect");
}

static void
probe_schedule(struct probe *pr, uint64_t ms)
{
	wheel_add(pr->c->pod->node->m->wheel, &pr->timer, ms, on_probe, pr);
}

void
probe_init(struct node_ctr *c, const cJSON *spec)
{
	int i;

	c->ports = cJSON_Duplicate(json_at(spec, "ports"), 1);
	/* A simulated container runs no probe: Ready once started (kwok's
	   way), whatever initialDelaySeconds its probes ask. */
	if (c->pod->node->rt->exec == NULL)
		return;
	for (i = 0; i < PROBE_TYPES; i++) {
		const cJSON *s = json_at(spec, kinds[i]);
		struct probe *pr;

		if (s == NULL || c->init)
			continue;
		pr = xcalloc(1, sizeof *pr);
		pr->c = c;
		pr->type = i;
		pr->spec = cJSON_Duplicate(s, 1);
		c->probes[i] = pr;
	}
}

void
probe_start(struct node_ctr *c)
{
	int i;

	c->probe_ready = c->probes[PROBE_READINESS] == NULL;
	c->startup_ok = c->probes[PROBE_STARTUP] == NULL;
	for (i = 0; i < PROBE_TYPES; i++) {
		struct probe *pr = c->probes[i];

		if (pr == NULL)
			continue;
		pr->successes = pr->failures = 0;
		if (i == PROBE_STARTUP || started(c))
			probe_schedule(pr, (uint64_t)num(pr->spec,
			    "initialDelaySeconds", 0, 0) * 1000);
	}
}

void
probe_stop(struct node_ctr *c)
{
	int i;

	c->probe_ready = 0;
	for (i = 0; i < PROBE_TYPES; i++) {
		struct probe *pr = c->probes[i];

		if (pr == NULL)
			continue;
		wheel_cancel(c->pod->node->m->wheel, &pr->timer);
		if (pr->run != NULL) {
			/* Abandon the check in flight: it will not report. */
			wheel_cancel(c->pod->node->m->wheel, &pr->run->timeout);
			pr->run->pr = NULL;
		}
		pr->run = NULL;
	}
}

void
probe_free(struct node_ctr *c)
{
	int i;

	probe_stop(c);
	for (i = 0; i < PROBE_TYPES; i++) {
		if (c->probes[i] == NULL)
			continue;
		cJSON_Delete(c->probes[i]->spec);
		free(c->probes[i]);
		c->probes[i] = NULL;
	}
	cJSON_Delete(c->ports);
	c->ports = NULL;
}
