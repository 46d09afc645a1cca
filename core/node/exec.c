/*
 * kubectl exec and attach into a container of a pod this process runs:
 * the kubelet's side of the WebSocket "channel" protocol
 * (k8s.io/apimachinery's wsstream, remotecommand v4 and v5), on the
 * request itself for the API server of this process, or on the node
 * endpoint's /exec and /attach for another's. exec runs a process
 * (execproc.c), attach follows the container's own output and writes to
 * its stdin (attach.c); the session is the same.
 *
 * Every message starts with its channel: 0 stdin, 1 stdout, 2 stderr,
 * 3 error, 4 resize ({"Width":W,"Height":H}), and in v5 255, "close this
 * channel" (255 0: end of stdin). Text frames are read as binary ones,
 * as wsstream reads them (the Python client sends text). At the end, the
 * error channel carries a Status: Success, or Failure with reason
 * NonZeroExitCode and the code in details.causes (ExitCode), from which
 * kubectl prints "command terminated with exit code N" and exits with it;
 * then the socket closes normally.
 *
 * Output waits while more than 4 MiB is queued for a slow reader (the
 * process's pipes fill and it blocks, as on a kubelet); the queue is
 * looked at every 20 ms while it does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/websocket.h"
#include "node/attach.h"
#include "node/node_int.h"

#define CH_STDIN	0
#define CH_STDOUT	1
#define CH_STDERR	2
#define CH_ERROR	3
#define CH_RESIZE	4
#define CH_CLOSE	255
#define MAX_MSG		(16 * 1024 * 1024)
#define HIGH_WATER	(4 * 1024 * 1024)
#define POLL_MS		20

static const char *const protocols[] = { "v5.channel.k8s.io",
    "v4.channel.k8s.io", NULL };

struct xsess {
	ws *w;
	execproc *p;			/* exec's process, or */
	struct attach *at;		/* attach's container */
	uv_timer_t poll;		/* the queue, while output waits */
	int want[3];			/* stdin, stdout, stderr asked for */
	char *cmd;			/* "[sh -c exit 3]", for the message */
	int ended;
};

static void
on_poll_closed(uv_handle_t *h)
{
	free(h->data);
}

/* Everything goes: the process (killed if it runs), the socket. */
static void
xsess_free(struct xsess *x)
{
	execproc_free(x->p);
	x->p = NULL;
	attach_free(x->at);
	x->at = NULL;
	ws_free(x->w);
	x->w = NULL;
	free(x->cmd);
	uv_timer_stop(&x->poll);
	uv_close((uv_handle_t *)&x->poll, on_poll_closed);
}

static void
send_channel(struct xsess *x, int ch, const char *data, size_t len)
{
	char *m = xmalloc(len + 1);

	m[0] = (char)ch;
	memcpy(m + 1, data, len);
	ws_send(x->w, 1, m, len + 1);
	free(m);
}

static void
on_poll(uv_timer_t *t)
{
	struct xsess *x = t->data;

	if (x->w == NULL || ws_pending(x->w) < HIGH_WATER / 2) {
		uv_timer_stop(t);
		if (x->p != NULL)
			execproc_pause(x->p, 0);
		if (x->at != NULL)
			attach_pause(x->at, 0);
	}
}

static void
on_output(void *arg, int fd, const char *data, size_t len)
{
	struct xsess *x = arg;

	if (!x->want[fd])
		return;
	send_channel(x, fd, data, len);
	if (ws_pending(x->w) > HIGH_WATER) {
		if (x->p != NULL)
			execproc_pause(x->p, 1);
		if (x->at != NULL)
			attach_pause(x->at, 1);
		uv_timer_start(&x->poll, on_poll, POLL_MS, POLL_MS);
	}
}

/* The end on the error channel, as the kubelet words it; then close. */
static void
on_exited(void *arg, int code, const char *error)
{
	struct xsess *x = arg;
	cJSON *st = cJSON_CreateObject(), *det, *causes, *c;
	char *s, num[16];

	cJSON_AddItemToObject(st, "metadata", cJSON_CreateObject());
	if (error != NULL) {
		s = util_printf("Internal error occurred: error executing "
		    "command in container: failed to exec in container: "
		    "exec: %s", error);
		cJSON_AddStringToObject(st, "status", "Failure");
		cJSON_AddStringToObject(st, "message", s);
		cJSON_AddStringToObject(st, "reason", "InternalError");
		cJSON_AddNumberToObject(st, "code", 500);
		free(s);
	} else if (code != 0) {
		s = util_printf("command terminated with non-zero exit code: "
		    "error executing command %s, exit code %d", x->cmd, code);
		cJSON_AddStringToObject(st, "status", "Failure");
		cJSON_AddStringToObject(st, "message", s);
		cJSON_AddStringToObject(st, "reason", "NonZeroExitCode");
		det = cJSON_AddObjectToObject(st, "details");
		causes = cJSON_AddArrayToObject(det, "causes");
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "reason", "ExitCode");
		snprintf(num, sizeof num, "%d", code);
		cJSON_AddStringToObject(c, "message", num);
		cJSON_AddItemToArray(causes, c);
		free(s);
	} else
		cJSON_AddStringToObject(st, "status", "Success");
	s = cJSON_PrintUnformatted(st);
	cJSON_Delete(st);
	send_channel(x, CH_ERROR, s, strlen(s));
	free(s);
	x->ended = 1;
	ws_close(x->w, 1000, NULL);
	xsess_free(x);
}

/* {"Width":W,"Height":H} on the resize channel. */
static void
resize(struct xsess *x, const char *data, size_t len)
{
	cJSON *j = cJSON_ParseWithLength(data, len);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(j, "Width");
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(j, "Height");

	if (cJSON_IsNumber(w) && cJSON_IsNumber(h) && w->valuedouble >= 0 &&
	    h->valuedouble >= 0)
		execproc_resize(x->p, (unsigned)w->valuedouble,
		    (unsigned)h->valuedouble);
	cJSON_Delete(j);
}

static void
on_message(void *arg, int binary, const char *data, size_t len)
{
	struct xsess *x = arg;

	(void)binary;
	if (len == 0 || (x->p == NULL && x->at == NULL))
		return;
	switch ((unsigned char)data[0]) {
	case CH_STDIN:
		if (x->want[0] && x->p != NULL)
			execproc_write(x->p, data + 1, len - 1);
		else if (x->want[0])
			attach_write(x->at, data + 1, len - 1);
		break;
	case CH_RESIZE:
		if (x->p != NULL)
			resize(x, data + 1, len - 1);
		break;
	case CH_CLOSE:
		if (len >= 2 && data[1] == CH_STDIN && x->p != NULL)
			execproc_close_stdin(x->p);
		break;
	default:
		/* Nothing else is the client's to write; ignored, as
		   wsstream ignores writes to a read-only channel. */
		break;
	}
}

/* The client went away: the process goes with it. */
static void
on_ws_close(void *arg)
{
	struct xsess *x = arg;

	if (!x->ended)
		xsess_free(x);
}

static const struct ws_callbacks ws_cbs = { on_message, on_ws_close };

/* "[a b c]", as Go prints a []string. */
static char *
command_text(char **argv)
{
	size_t n = 3, i;
	char *s;

	for (i = 0; argv[i] != NULL; i++)
		n += strlen(argv[i]) + 1;
	s = xmalloc(n);
	strcpy(s, "[");
	for (i = 0; argv[i] != NULL; i++) {
		if (i > 0)
			strcat(s, " ");
		strcat(s, argv[i]);
	}
	strcat(s, "]");
	return s;
}

/*
 * What exec and attach share: the container, the WebSocket, the streams
 * asked for. argv NULL: attach. 0 when req is taken, else a status.
 */
static int
serve(node_mgr *m, http_req *req, const char *ns, const char *pod,
    const char *ctr, int attach, char **msg)
{
	const struct execproc_cb cb = { on_output, on_exited };
	struct node_ctr *c;
	struct xsess *x;
	const char *proto;
	char **argv = NULL, *why = NULL;
	int code = 0, tty, n = 0;

	if ((c = node_mgr_find_ctr(m, ns, pod, ctr, &code, msg)) == NULL)
		return code;
	if (c->pod->node->rt->exec_stream == NULL) {
		*msg = util_printf("container %s of pod %s/%s runs on the "
		    "simulated node %s: it has no process to %s", ctr,
		    ns, pod, c->pod->node->name, attach ? "attach to" :
		    "exec in");
		return 400;
	}
	if (ws_is_upgrade(req) != 1) {
		*msg = util_printf("Upgrade request required: %s speaks "
		    "WebSocket (v5.channel.k8s.io, v4.channel.k8s.io), not "
		    "SPDY", attach ? "attach" : "exec");
		return 400;
	}
	if ((proto = ws_pick_protocol(req, protocols)) == NULL) {
		*msg = util_printf("no supported stream protocol among the "
		    "client's (want v5.channel.k8s.io or v4.channel.k8s.io)");
		return 400;
	}
	if (!attach && (argv = http_query_all(req->query, "command",
	    &n)) == NULL) {
		*msg = util_printf("you must specify at least one command for "
		    "the container");
		return 400;
	}
	x = xcalloc(1, sizeof *x);
	x->want[0] = http_query_bool(req->query, "stdin", 0);
	x->want[1] = http_query_bool(req->query, "stdout", 0);
	x->want[2] = http_query_bool(req->query, "stderr", 0);
	tty = http_query_bool(req->query, "tty", 0);
	if (!x->want[0] && !x->want[1] && !x->want[2]) {
		*msg = util_printf("you must specify at least 1 of stdin, "
		    "stdout, stderr");
		code = 400;
	} else if (tty && x->want[2]) {
		*msg = util_printf("stdin and stdout and stderr cannot all be "
		    "false; tty requires stderr to be false");
		code = 400;
	} else if (attach && (x->at = attach_start(m, c, x->want[0], &cb, x,
	    &why)) == NULL) {
		*msg = util_printf("failed to attach: %s", why);
		code = 500;
	} else if (!attach && (x->p = c->pod->node->rt->exec_stream(
	    c->pod->node, c->pod, c, argv, tty, x->want[0], &cb, x,
	    &why)) == NULL) {
		*msg = util_printf("failed to exec in container: %s", why);
		code = 500;
	}
	free(why);
	if (code != 0) {
		http_query_all_free(argv);
		free(x);
		return code;
	}
	x->cmd = argv != NULL ? command_text(argv) : xstrdup("[attach]");
	http_query_all_free(argv);
	uv_timer_init(m->loop, &x->poll);
	x->poll.data = x;
	x->w = ws_accept(req, proto, MAX_MSG, &ws_cbs, x);
	return 0;
}

int
node_exec_serve(void *mgr, http_req *req, const char *ns, const char *pod,
    const char *ctr, char **msg)
{
	return serve(mgr, req, ns, pod, ctr, 0, msg);
}

int
node_attach_serve(void *mgr, http_req *req, const char *ns,
    const char *pod, const char *ctr, char **msg)
{
	return serve(mgr, req, ns, pod, ctr, 1, msg);
}
