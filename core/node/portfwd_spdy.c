/*
 * Port-forward over SPDY/3.1 (portfwd.h), the kubelet's
 * portforward.k8s.io protocol: for every connection it forwards, the
 * client opens an error stream and a data stream with the headers
 * streamtype (error, data), port and requestid; every stream gets a
 * SYN_REPLY. Once both streams of a request id are there, the port is
 * dialled on 127.0.0.1 (portfwd_dial): a refusal is written on the error stream ("error
 * forwarding port P to pod NS/NAME, uid U: ...") and both streams end;
 * otherwise bytes flow between the data stream and the connection, the
 * client's FIN half-closes the connection, the connection's end FINs the
 * data stream and the error stream.
 *
 * The SPDY bytes travel either on the upgraded HTTP connection itself or
 * in the binary messages of a WebSocket (kubectl 1.31+); the session
 * (net/spdy.c) does not know which.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hmap.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/dial.h"
#include "net/spdy.h"
#include "net/websocket.h"
#include "node/node_int.h"
#include "node/portfwd.h"

#define MAX_MSG		(16 * 1024 * 1024)
#define HIGH_WATER	(4 * 1024 * 1024)
#define POLL_MS		20
#define MAX_PAIRS	1024

struct pair {
	struct spdy_pf *pf;
	char id[32];			/* the request id */
	uint32_t err_id, data_id;	/* 0: not opened yet */
	int port;
	dial *d;
	int done;
	struct pair *next;
};

struct spdy_pf {
	uv_loop_t *loop;
	node_mgr *m;
	char ns[254], name[254];
	http_req *req;			/* the upgraded connection, or */
	ws *w;				/* the WebSocket carrying SPDY */
	spdy_session *s;
	struct pair *pairs;
	int npairs;
	uv_timer_t poll;
	int closed;
	char pod[512];			/* "ns/name" */
};

static void
on_poll_closed(uv_handle_t *h)
{
	free(h->data);
}

static void
pf_free(struct spdy_pf *pf)
{
	struct pair *p, *next;

	for (p = pf->pairs; p != NULL; p = next) {
		next = p->next;
		dial_free(p->d);
		free(p);
	}
	pf->pairs = NULL;
	spdy_session_free(pf->s);
	pf->s = NULL;
	if (pf->w != NULL)
		ws_free(pf->w);
	uv_timer_stop(&pf->poll);
	uv_close((uv_handle_t *)&pf->poll, on_poll_closed);
}

/* The transport is gone or broken: everything goes. */
static void
pf_close(struct spdy_pf *pf)
{
	if (pf->closed)
		return;
	pf->closed = 1;
	if (pf->w != NULL)
		ws_close(pf->w, 1000, NULL);
	else
		http_stream_end(pf->req);
	pf_free(pf);
}

static size_t
pending(const struct spdy_pf *pf)
{
	return pf->w != NULL ? ws_pending(pf->w) :
	    http_stream_pending(pf->req);
}

static void
pause_all(struct spdy_pf *pf, int paused)
{
	struct pair *p;

	for (p = pf->pairs; p != NULL; p = p->next)
		if (p->d != NULL)
			dial_pause(p->d, paused);
}

static void
on_poll(uv_timer_t *t)
{
	struct spdy_pf *pf = t->data;

	if (pf->closed || pending(pf) < HIGH_WATER / 2) {
		uv_timer_stop(t);
		if (!pf->closed)
			pause_all(pf, 0);
	}
}

/* SPDY's bytes, onto the transport. */
static void
on_send(void *arg, const char *data, size_t len)
{
	struct spdy_pf *pf = arg;

	if (pf->closed)
		return;
	if (pf->w != NULL)
		ws_send(pf->w, 1, data, len);
	else
		http_stream_write_copy(pf->req, data, len);
}

static void
pair_end(struct pair *p)
{
	if (p->done)
		return;
	p->done = 1;
	if (p->data_id != 0)
		spdy_data(p->pf->s, p->data_id, NULL, 0, 1);
	if (p->err_id != 0)
		spdy_data(p->pf->s, p->err_id, NULL, 0, 1);
}

static void
on_dial_connected(void *arg, const char *error)
{
	struct pair *p = arg;
	char *m;

	if (error == NULL)
		return;
	m = util_printf("error forwarding port %d to pod %s: %s", p->port,
	    p->pf->pod, error);
	if (p->err_id != 0)
		spdy_data(p->pf->s, p->err_id, m, strlen(m), 0);
	free(m);
	pair_end(p);
}

static void
on_dial_data(void *arg, const char *data, size_t len)
{
	struct pair *p = arg;
	struct spdy_pf *pf = p->pf;

	if (p->done)
		return;
	spdy_data(pf->s, p->data_id, data, len, 0);
	if (pending(pf) > HIGH_WATER) {
		pause_all(pf, 1);
		if (!uv_is_active((uv_handle_t *)&pf->poll))
			uv_timer_start(&pf->poll, on_poll, POLL_MS, POLL_MS);
	}
}

static void
on_dial_ended(void *arg)
{
	pair_end(arg);
}

static const struct dial_cb dial_cbs = { on_dial_connected, on_dial_data,
    on_dial_ended };

static struct pair *
pair_by_request(struct spdy_pf *pf, const char *id)
{
	struct pair *p;

	for (p = pf->pairs; p != NULL; p = p->next)
		if (strcmp(p->id, id) == 0)
			return p;
	return NULL;
}

static struct pair *
pair_by_stream(struct spdy_pf *pf, uint32_t id)
{
	struct pair *p;

	for (p = pf->pairs; p != NULL; p = p->next)
		if (p->data_id == id || p->err_id == id)
			return p;
	return NULL;
}

static const char *
header(const char *const *names, const char *const *values, int n,
    const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return values[i];
	return NULL;
}

static void
on_stream(void *arg, uint32_t id, const char *const *names,
    const char *const *values, int n, int fin)
{
	struct spdy_pf *pf = arg;
	const char *type = header(names, values, n, "streamtype");
	const char *port = header(names, values, n, "port");
	const char *req = header(names, values, n, "requestid");
	struct pair *p;
	char *why = NULL;
	long pn;

	(void)fin;
	pn = port != NULL ? strtol(port, NULL, 10) : 0;
	if (type == NULL || (strcmp(type, "error") != 0 &&
	    strcmp(type, "data") != 0) || pn < 1 || pn > 65535) {
		spdy_reply(pf->s, id, NULL, NULL, 0, 1);
		spdy_reset(pf->s, id, SPDY_PROTOCOL_ERROR);
		return;
	}
	spdy_reply(pf->s, id, NULL, NULL, 0, 0);
	if (req == NULL)
		req = port;	/* clients before requestid: one per port */
	if ((p = pair_by_request(pf, req)) == NULL) {
		if (pf->npairs >= MAX_PAIRS) {
			spdy_reset(pf->s, id, SPDY_REFUSED_STREAM);
			return;
		}
		p = xcalloc(1, sizeof *p);
		p->pf = pf;
		util_strf(p->id, sizeof p->id, "%s", req);
		p->port = (int)pn;
		p->next = pf->pairs;
		pf->pairs = p;
		pf->npairs++;
	}
	if (strcmp(type, "error") == 0)
		p->err_id = id;
	else
		p->data_id = id;
	if (p->err_id == 0 || p->data_id == 0 || p->d != NULL || p->done)
		return;
	if ((p->d = portfwd_dial(pf->m, pf->ns, pf->name, p->port, &dial_cbs,
	    p, &why)) == NULL) {
		on_dial_connected(p, why);
		free(why);
	}
}

static void
on_stream_data(void *arg, uint32_t id, const char *data, size_t len,
    int fin)
{
	struct spdy_pf *pf = arg;
	struct pair *p = pair_by_stream(pf, id);

	if (p == NULL || p->data_id != id || p->d == NULL)
		return;		/* the error stream carries nothing to us */
	if (len > 0)
		dial_write(p->d, data, len);
	if (fin)
		dial_shutdown(p->d);
}

static void
on_reset(void *arg, uint32_t id, uint32_t status)
{
	struct spdy_pf *pf = arg;
	struct pair *p = pair_by_stream(pf, id);

	(void)status;
	if (p != NULL && p->d != NULL) {
		dial_free(p->d);
		p->d = NULL;
		p->done = 1;
	}
}

static void
on_goaway(void *arg)
{
	pf_close(arg);
}

static const struct spdy_callbacks spdy_cbs = { on_stream, on_stream_data,
    on_reset, on_goaway, on_send };

static void
feed(struct spdy_pf *pf, const char *data, size_t len)
{
	char *cause = NULL;

	if (pf->closed)
		return;
	if (spdy_session_feed(pf->s, data, len, &cause) != 0) {
		free(cause);
		pf_close(pf);
	}
}

static void
on_tunnel_data(http_req *req, const char *data, size_t len, void *arg)
{
	(void)req;
	feed(arg, data, len);
}

static void
on_tunnel_close(http_req *req, void *arg)
{
	(void)req;
	pf_close(arg);
}

static void
on_ws_message(void *arg, int binary, const char *data, size_t len)
{
	(void)binary;
	feed(arg, data, len);
}

static void
on_ws_close(void *arg)
{
	pf_close(arg);
}

static const struct ws_callbacks ws_cbs = { on_ws_message, on_ws_close };

static struct spdy_pf *
pf_new(node_mgr *m, http_req *req, const char *ns, const char *pod)
{
	struct spdy_pf *pf = xcalloc(1, sizeof *pf);

	pf->loop = m->loop;
	pf->m = m;
	util_strf(pf->ns, sizeof pf->ns, "%s", ns);
	util_strf(pf->name, sizeof pf->name, "%s", pod);
	pf->req = req;
	util_strf(pf->pod, sizeof pf->pod, "%s/%s", ns, pod);
	uv_timer_init(m->loop, &pf->poll);
	pf->poll.data = pf;
	pf->s = spdy_session_new(&spdy_cbs, pf);
	return pf;
}

int
portfwd_spdy_upgrade(node_mgr *m, http_req *req, const char *ns,
    const char *pod, char **msg)
{
	const char *proto = http_req_header(req, "X-Stream-Protocol-Version");
	struct spdy_pf *pf;

	if (proto != NULL && strstr(proto, "portforward.k8s.io") == NULL) {
		*msg = util_printf("unable to upgrade: no common protocol "
		    "(want portforward.k8s.io)");
		return 403;
	}
	pf = pf_new(m, req, ns, pod);
	http_req_add_header(req, "X-Stream-Protocol-Version",
	    "portforward.k8s.io");
	http_req_on_close(req, on_tunnel_close, pf);
	http_upgrade(req, "SPDY/3.1", on_tunnel_data, pf);
	return 0;
}

int
portfwd_spdy_ws(node_mgr *m, http_req *req, const char *proto,
    const char *ns, const char *pod, char **msg)
{
	struct spdy_pf *pf = pf_new(m, req, ns, pod);

	(void)msg;
	pf->w = ws_accept(req, proto, MAX_MSG, &ws_cbs, pf);
	return 0;
}
