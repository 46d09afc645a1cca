/*
 * Internals shared by api.c (routing and replies), api_read.c (get, list,
 * watch, log) and api_write.c (create, update, patch, delete, binding).
 */
#ifndef VOLRAY_API_INT_H
#define VOLRAY_API_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "api/api.h"
#include "api/limits.h"
#include "lib/user.h"
#include "registry/resource.h"

#define API_MAX_GROUPS 33	/* a client certificate's O entries, and one */

struct api {
	uv_loop_t *loop;
	store *st;
	registry *rg;
	watch_hub *hub;
	http_server *srv;
	char *data_dir;
	int ready;
	int draining;
	int (*reload)(void *, char **);
	void *reload_arg;
	authn *authn;
	limits *limits;
	struct rbac *authz;
	api_proxy_fn proxy;		/* the in-process proxy targets */
	api_proxy_serves_fn proxy_serves;
	void *proxy_arg;
	struct controller_rt *policy_ctrl;	/* policyinfo.c */
	struct sched *policy_sched;
};

/* One parsed request for an object or a collection. */
struct route {
	const resource *r;
	const char *ns;      /* NULL when not given */
	const char *name;    /* NULL for collections */
	const char *sub;     /* subresource or NULL */
	const char *verb;    /* for metrics: get, list, watch, create, ... */
	const user_info *user;	/* who asks; NULL when not authenticated */
	user_info cert_user;	/* storage for a client certificate's user */
	const char *cert_groups[API_MAX_GROUPS];
	uint64_t t0;
	char buf[1024];
};

/* Reply with a tree (freed), noting the request in metrics. */
void api_reply(http_req *, struct route *, int code, cJSON *body);
/* Reply with a Status (freed). */
void api_reply_status(http_req *, struct route *, cJSON *status);
/* Reply once the revision is durable. */
void api_reply_durable(api *, http_req *, struct route *, int code,
    cJSON *body, uint64_t rev);
/* The same with stored bytes (takes the reference). */
void api_reply_durable_rbuf(api *, http_req *, struct route *, int code,
    rbuf *body, uint64_t rev);
/*
 * An integer option from the query into *out when given (0); a malformed
 * one is answered 400 as kube-apiserver answers it (-1).
 */
int api_int_param(http_req *, struct route *, const char *key,
    long long *out);
/* Whether the client asked for a Table. */
int api_wants_table(const http_req *);

/* proxy.c: 1 when the path is a service or pod proxy (answered). */
int api_proxy(api *, http_req *, struct route *);

void api_get(api *, http_req *, struct route *);
void api_list(api *, http_req *, struct route *);
void api_watch(api *, http_req *, struct route *);
void api_log(api *, http_req *, struct route *);
void api_create(api *, http_req *, struct route *);
void api_update(api *, http_req *, struct route *);
void api_patch(api *, http_req *, struct route *);
void api_delete(api *, http_req *, struct route *);
void api_delete_collection(api *, http_req *, struct route *);
void api_bind(api *, http_req *, struct route *);
void api_scale(api *, http_req *, struct route *);
void api_evict(api *, http_req *, struct route *);
/* policyinfo.c: GET /apis/volray.io/v1/policy. */
void api_policy_info(api *, http_req *, struct route *);

#endif
