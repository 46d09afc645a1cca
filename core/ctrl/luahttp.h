/*
 * volray.http, volray.service_url and volray.pod_url: HTTP calls from Lua controllers
 * that never block the loop: the transfers run on net/hclient.c
 * (libcurl's multi interface driven by the loop). A reconcile's first
 * call starts the request and returns nil, "pending"; when the response
 * arrives the calling controller's key is queued again, and the next call
 * with the same method, URL and body from that key collects the answer,
 * once. Requests to the daemon's own URL carry the controller's own
 * credentials (never the admin's) and the daemon's CA; others carry
 * nothing the script did not give. Documented in volray-lua(7).
 */
#ifndef VOLRAY_LUAHTTP_H
#define VOLRAY_LUAHTTP_H

#include <stddef.h>

#include <lua.h>
#include <uv.h>

typedef struct luahttp luahttp;
struct luactx;

/* Called when the response for a request made by (owner, key) arrives. */
typedef void (*luahttp_wake_fn)(void *arg, const char *owner, const char *key);
/* A bearer token for the in-process user named user (malloc'd), or NULL. */
typedef char *(*luahttp_token_fn)(void *arg, const char *user);

luahttp *luahttp_new(uv_loop_t *);
/* Abort everything in flight and free (the handles close on the loop). */
void luahttp_free(luahttp *);
void luahttp_set_wake(luahttp *, luahttp_wake_fn, void *arg);
/*
 * The daemon's own API: its base URL ("https://127.0.0.1:6443"), its CA
 * file (NULL for plain HTTP) and where the callers' tokens come from.
 */
void luahttp_set_self(luahttp *, const char *base_url, const char *ca_file,
    luahttp_token_fn, void *arg);
/*
 * The client certificate and key (PEM) of a remote API's kubeconfig that
 * authenticates by certificate, shown on requests to its URL; before
 * luahttp_set_self. NULL, 0 for none.
 */
void luahttp_set_self_cert(luahttp *, const char *cert_pem, size_t cert_len,
    const char *key_pem, size_t key_len);
/*
 * Whether volray.pod_url reaches a pod of volray's nodes through the API
 * server's node proxy to their agent's endpoint: on against an API server
 * that is not volrayd (kube-apiserver's service proxy dials the pod's IP,
 * where nothing of a simulated pod listens).
 */
void luahttp_set_node_proxy(luahttp *, int on);
/* Requests in flight and responses not yet collected (tests, metrics). */
int luahttp_pending(const luahttp *);
/*
 * Set http and service_url on the module table on top of L; the calls
 * read ctx->http, ctx->owner, ctx->key and ctx->user when they run.
 */
void luahttp_open(lua_State *, struct luactx *ctx);

#endif
