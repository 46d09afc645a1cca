/*
 * The replies the API's handlers send (reply.c): a JSON tree or a Status,
 * at once or once a write is durable, each noted in the request metrics;
 * plain text for the health checks; and the two request checks that end
 * in a reply or choose one (a malformed integer option, a Table asked for).
 */
#ifndef VOLRAY_REPLY_H
#define VOLRAY_REPLY_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "api/route.h"
#include "lib/rbuf.h"
#include "net/http.h"
#include "store/store.h"

/* Reply with a tree (freed), noting the request in metrics. */
void reply_json(http_req *, struct route *, int code, cJSON *body);
/* Reply with a Status (freed). */
void reply_status(http_req *, struct route *, cJSON *status);
/* Reply with plain text, not noted in metrics (health checks). */
void reply_text(http_req *, int code, const char *text);
/* Reply once the revision is durable in st. */
void reply_durable(store *st, http_req *, struct route *, int code,
    cJSON *body, uint64_t rev);
/* The same with stored bytes (takes the reference). */
void reply_durable_rbuf(store *st, http_req *, struct route *, int code,
    rbuf *body, uint64_t rev);
/*
 * An answer kept rather than sent (rt->hold set): the etcd-backed store's
 * writes are answered once their transaction has committed (api_etcd.c).
 * reply_held_send sends it, the pending resourceVersion of its staged
 * writes replaced by rev; reply_held_drop forgets it.
 */
struct reply_hold {
	int held;
	int code;
	rbuf *body;
};
void reply_held_send(http_req *, struct route *, struct reply_hold *,
    uint64_t rev);
void reply_held_drop(struct reply_hold *);
/*
 * An integer option from the query into *out when given (0); a malformed
 * one is answered 400 as kube-apiserver answers it (-1).
 */
int reply_int_param(http_req *, struct route *, const char *key,
    long long *out);
/*
 * The request's labelSelector into *out (NULL when none); a malformed
 * one is answered 400 as kube-apiserver answers it (-1).
 */
struct selector;
int reply_label_selector(http_req *, struct route *, struct selector **out);
/* Whether the client asked for a Table. */
int reply_wants_table(const http_req *);
/*
 * A read's Accept header, negotiated as kube-apiserver does: 0 when one
 * of its media ranges is served (JSON, YAML, protobuf, a wildcard, a
 * meta.k8s.io Table or PartialObjectMetadata of v1 or v1beta1); else 406
 * NotAcceptable is answered and -1 returned.
 */
int reply_accept_check(http_req *, struct route *);

#endif
