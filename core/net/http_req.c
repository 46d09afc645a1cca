/*
 * What a handler reads from its request and sets on it: a header, the
 * client certificate's names, whether the peer has gone; the callbacks run
 * when the request is finished or the peer goes first; extra response
 * headers (Retry-After, Warning) sent with the response.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "net/http_int.h"

const char *
http_req_header(const http_req *req, const char *name)
{
	struct conn *c = REQ_CONN(req);
	size_t i;

	for (i = 0; i < c->nhdrs; i++) {
		if (strcasecmp(c->hbuf + c->hdrs[i].name, name) == 0)
			return c->hbuf + c->hdrs[i].value;
	}
	return NULL;
}

const char *
http_req_header_next(const http_req *req, const char *name, size_t *pos)
{
	struct conn *c = REQ_CONN(req);

	for (; *pos < c->nhdrs; (*pos)++)
		if (strcasecmp(c->hbuf + c->hdrs[*pos].name, name) == 0)
			return c->hbuf + c->hdrs[(*pos)++].value;
	return NULL;
}

int
http_req_client_cert(const http_req *req, const char **cn,
    const char *const **orgs, int *norgs)
{
	struct conn *c = REQ_CONN(req);

	return c->tls != NULL ? tls_conn_peer(c->tls, cn, orgs, norgs) : -1;
}

int
http_req_closed(const http_req *req)
{
	return REQ_CONN(req)->closing;
}

void
http_req_on_done(http_req *req, http_close_cb cb, void *arg)
{
	struct conn *c = REQ_CONN(req);

	c->done_cb = cb;
	c->done_arg = arg;
}

void
http_req_on_close(http_req *req, http_close_cb cb, void *arg)
{
	struct conn *c = REQ_CONN(req);

	if (!c->busy)
		return;
	c->close_cb = cb;
	c->close_arg = arg;
}

int
http_req_add_header(http_req *req, const char *name, const char *value)
{
	struct conn *c = REQ_CONN(req);
	size_t room = sizeof c->xhdr - c->xhdrlen;
	int n;

	if (strpbrk(name, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL)
		return -1;
	n = snprintf(c->xhdr + c->xhdrlen, room, "%s: %s\r\n", name, value);
	if (n < 0 || (size_t)n >= room)
		return -1;
	c->xhdrlen += (size_t)n;
	return 0;
}
