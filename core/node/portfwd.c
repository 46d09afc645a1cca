/*
 * Port-forward into a pod this process runs (kubectl port-forward, the
 * Python and JavaScript clients' PortForward): the kubelet's side. Local
 * pods share this machine's network, so a forwarded connection is a TCP
 * connection to 127.0.0.1:PORT (net/dial.c); a simulated pod's port is
 * what the node manager's port map says (a Ray head's dashboard on a
 * loopback port of its own), else nothing.
 *
 * Two ways in, as on a kubelet:
 *  - SPDY/3.1 with the portforward.k8s.io stream protocol (portfwd_spdy.c),
 *    after an HTTP upgrade or inside WebSocket messages (subprotocol
 *    SPDY/3.1+portforward.k8s.io, which kubectl 1.31+ tries first);
 *  - the WebSocket channel protocol (v4.channel.k8s.io,
 *    portforward.k8s.io) for the ports of the query (ports=8080,9090):
 *    port i has data channel 2i and error channel 2i+1, each of which
 *    first carries the port, 2 bytes little-endian, from the server; the
 *    ports are dialled at once and the socket closes when all are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/dial.h"
#include "net/websocket.h"
#include "node/node_int.h"
#include "node/portfwd.h"

#define MAX_PORTS	64
#define MAX_MSG		(16 * 1024 * 1024)
#define HIGH_WATER	(4 * 1024 * 1024)
#define POLL_MS		20

static const char *const ws_protocols[] = { PORTFWD_SPDY_WS,
    "v4.channel.k8s.io", "portforward.k8s.io", NULL };

struct pfport {
	struct pfws *s;
	int idx;
	int port;
	dial *t;
	int done;
};

struct pfws {
	ws *w;
	struct pfport *ports;
	int n;
	int live;			/* ports not done */
	uv_timer_t poll;
	int closing;
	char pod[512];			/* "ns/name", for the messages */
};

static void
on_poll_closed(uv_handle_t *h)
{
	struct pfws *s = h->data;

	free(s->ports);
	free(s);
}

static void
pfws_free(struct pfws *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		dial_free(s->ports[i].t);
	ws_free(s->w);
	uv_timer_stop(&s->poll);
	uv_close((uv_handle_t *)&s->poll, on_poll_closed);
}

static void
send_ch(struct pfws *s, int ch, const char *data, size_t len)
{
	char *m = xmalloc(len + 1);

	m[0] = (char)ch;
	memcpy(m + 1, data, len);
	ws_send(s->w, 1, m, len + 1);
	free(m);
}

static void
port_done(struct pfport *p)
{
	struct pfws *s = p->s;

	if (p->done)
		return;
	p->done = 1;
	if (--s->live == 0 && !s->closing) {
		s->closing = 1;
		ws_close(s->w, 1000, NULL);
		pfws_free(s);
	}
}

static void
pause_all(struct pfws *s, int paused)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->ports[i].t != NULL)
			dial_pause(s->ports[i].t, paused);
}

static void
on_poll(uv_timer_t *t)
{
	struct pfws *s = t->data;

	if (ws_pending(s->w) < HIGH_WATER / 2) {
		uv_timer_stop(t);
		pause_all(s, 0);
	}
}

static void
on_connected(void *arg, const char *error)
{
	struct pfport *p = arg;
	char *m;

	if (error == NULL)
		return;
	m = util_printf("error forwarding port %d to pod %s: %s", p->port,
	    p->s->pod, error);
	send_ch(p->s, 2 * p->idx + 1, m, strlen(m));
	free(m);
	port_done(p);
}

static void
on_data(void *arg, const char *data, size_t len)
{
	struct pfport *p = arg;
	struct pfws *s = p->s;

	send_ch(s, 2 * p->idx, data, len);
	if (ws_pending(s->w) > HIGH_WATER) {
		pause_all(s, 1);
		uv_timer_start(&s->poll, on_poll, POLL_MS, POLL_MS);
	}
}

static void
on_ended(void *arg)
{
	port_done(arg);
}

static const struct dial_cb tcp_cbs = { on_connected, on_data, on_ended };

static void
on_message(void *arg, int binary, const char *data, size_t len)
{
	struct pfws *s = arg;
	int ch;

	(void)binary;
	if (len == 0 || s->closing)
		return;
	ch = (unsigned char)data[0];
	/* Only data channels are the client's to write. */
	if (ch % 2 != 0 || ch / 2 >= s->n || s->ports[ch / 2].t == NULL)
		return;
	dial_write(s->ports[ch / 2].t, data + 1, len - 1);
}

static void
on_ws_close(void *arg)
{
	struct pfws *s = arg;

	if (!s->closing) {
		s->closing = 1;
		pfws_free(s);
	}
}

static const struct ws_callbacks ws_cbs = { on_message, on_ws_close };

/*
 * The ports of the query: "ports" repeated or comma-separated, each in
 * 1..65535. Their number, or -1 with *msg.
 */
static int
query_ports(const char *query, int *out, char **msg)
{
	char **v = http_query_all(query, "ports", NULL), *p, *e;
	int n = 0, i;
	long port;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		for (p = v[i]; *p != '\0'; p = *e ? e + 1 : e) {
			port = strtol(p, &e, 10);
			if (e == p || (*e != ',' && *e != '\0') || port < 1 ||
			    port > 65535 || n == MAX_PORTS) {
				*msg = util_printf("invalid port value: %s",
				    v[i]);
				http_query_all_free(v);
				return -1;
			}
			out[n++] = (int)port;
		}
	http_query_all_free(v);
	if (n == 0)
		*msg = util_printf("query parameter \"port\" is required");
	return n > 0 ? n : -1;
}

/* The channel protocol on an accepted WebSocket. */
static int
serve_channels(node_mgr *m, http_req *req, const char *proto,
    const char *ns, const char *pod, char **msg)
{
	int ports[MAX_PORTS], n, i;
	struct pfws *s;
	char pb[2], *why = NULL;

	if ((n = query_ports(req->query, ports, msg)) < 0)
		return 400;
	s = xcalloc(1, sizeof *s);
	s->n = s->live = n;
	s->ports = xcalloc((size_t)n, sizeof *s->ports);
	util_strf(s->pod, sizeof s->pod, "%s/%s", ns, pod);
	uv_timer_init(m->loop, &s->poll);
	s->poll.data = s;
	s->w = ws_accept(req, proto, MAX_MSG, &ws_cbs, s);
	for (i = 0; i < n; i++) {
		s->ports[i].s = s;
		s->ports[i].idx = i;
		s->ports[i].port = ports[i];
		pb[0] = (char)(ports[i] & 0xff);
		pb[1] = (char)(ports[i] >> 8);
		send_ch(s, 2 * i, pb, 2);
		send_ch(s, 2 * i + 1, pb, 2);
	}
	for (i = 0; i < n && !s->closing; i++)
		if ((s->ports[i].t = portfwd_dial(m, ns, pod, ports[i],
		    &tcp_cbs, &s->ports[i], &why)) == NULL) {
			on_connected(&s->ports[i], why);
			free(why);
		}
	return 0;
}

/* The pod, running on a node of this manager, locally or simulated. */
static int
check_pod(node_mgr *m, const char *ns, const char *pod, char **msg)
{
	const store_obj *o = client_get(m->c, "pods", ns, pod);
	struct node_pod *p = o ? hmap_get(m->pods, o->uid) : NULL;

	if (p == NULL) {
		*msg = util_printf("pod %s/%s is not running on this node", ns,
		    pod);
		return 404;
	}
	if (p->node->rt->exec_stream == NULL && m->portmap == NULL) {
		*msg = util_printf("pod %s/%s runs on the simulated node %s: "
		    "nothing listens on its ports", ns, pod, p->node->name);
		return 400;
	}
	if (p->phase != POD_RUNNING) {
		*msg = util_printf("pod %s/%s is not running", ns, pod);
		return 400;
	}
	return 0;
}

int
node_portforward_serve(void *mgr, http_req *req, const char *ns,
    const char *pod, char **msg)
{
	node_mgr *m = mgr;
	const char *up = http_req_header(req, "Upgrade"), *proto;
	int code;

	if ((code = check_pod(m, ns, pod, msg)) != 0)
		return code;
	if (up != NULL && strncasecmp(up, "SPDY/3.1", 8) == 0)
		return portfwd_spdy_upgrade(m, req, ns, pod, msg);
	if (ws_is_upgrade(req) != 1) {
		*msg = util_printf("Upgrade request required");
		return 400;
	}
	if ((proto = ws_pick_protocol(req, ws_protocols)) == NULL) {
		*msg = util_printf("no supported stream protocol among the "
		    "client's (want %s, v4.channel.k8s.io or "
		    "portforward.k8s.io)", PORTFWD_SPDY_WS);
		return 400;
	}
	if (strcmp(proto, PORTFWD_SPDY_WS) == 0)
		return portfwd_spdy_ws(m, req, proto, ns, pod, msg);
	return serve_channels(m, req, proto, ns, pod, msg);
}
