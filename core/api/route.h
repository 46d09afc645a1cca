/*
 * One parsed request for an object or a collection: what api.c makes of
 * a request's path and credentials, and what the handlers and the
 * replies (reply.c) read. Apart from the API's internals (api_int.h) so
 * that reply.c, below the routing, needs nothing of api.c.
 */
#ifndef VOLRAY_ROUTE_H
#define VOLRAY_ROUTE_H

#include <stdint.h>

#include "lib/user.h"
#include "registry/resource.h"

#define ROUTE_MAX_GROUPS 33	/* a client certificate's O entries, and one */

struct reply_hold;

struct route {
	const resource *r;
	const char *ns;      /* NULL when not given */
	const char *name;    /* NULL for collections */
	const char *sub;     /* subresource or NULL */
	const char *verb;    /* for metrics: get, list, watch, create, ... */
	const user_info *user;	/* who asks; NULL when not authenticated */
	user_info cert_user;	/* storage for a client certificate's user */
	const char *cert_groups[ROUTE_MAX_GROUPS];
	user_info imp_user;	/* storage for an impersonated user */
	const char *imp_groups[ROUTE_MAX_GROUPS];
	char imp_buf[320];	/* system:serviceaccounts:NS */
	uint64_t t0;
	struct reply_hold *hold;	/* reply.c keeps the answer there */
	char buf[1024];
};

#endif
