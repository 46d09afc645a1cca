/*
 * The remote client: the client (client.h) of another Kubernetes API
 * server, a real cluster's or another volrayd's (--roles api), as
 * client-go does it.
 *
 * The read side is a mirror (store/store.h, store_mirror_*) filled by one
 * informer per resource: a paginated list, then a watch from the list's
 * resourceVersion with bookmarks; on 410 Gone a list again (whose result
 * replaces the resource's objects, delivering only the differences); on
 * a dropped stream a watch again from the last resourceVersion seen,
 * with backoff. The consumers read the mirror exactly as they read the
 * embedded store.
 *
 * The write side sends each operation over HTTPS (net/hclient.c, with
 * the kubeconfig's credentials and client-go's rate limiter) and waits
 * for the answer: the loop blocks for one round trip. A successful
 * write's answer is written through to the mirror at once, its event held
 * until the write returns, so a controller never acts on a mirror that
 * has not seen its own write (client-go's expectations, for free).
 */
#ifndef VOLRAY_REMOTE_H
#define VOLRAY_REMOTE_H

#include <stdio.h>
#include <uv.h>

#include "client/client.h"
#include "lib/kubecfg.h"

typedef struct remote remote;

struct remote_conf {
	double qps;               /* client-go's QPS and burst: 50, 100 */
	int burst;
	const char *user_agent;   /* NULL: "volrayd" */
	/* The store keys to mirror ("pods", "deployments.apps"); NULL:
	   every resource the resource table knows but the create-only
	   reviews. Writes of other resources still go to the server, but
	   their answers are not put into the mirror. */
	const char *const *resources;
	/* Pairs of a store key and the fieldSelector its informer lists and
	   watches with ("pods", "spec.nodeName=n1"), NULL-terminated; NULL:
	   none. The mirror then holds what matches, as the server says. */
	const char *const *field_selectors;
	/* Called once, when every informer has listed (the mirror holds
	   what the server held then). */
	void (*on_synced)(void *arg);
	void *arg;
};

/* NULL with *cause (malloc'd) when the connection cannot be set up. */
remote *remote_new(uv_loop_t *, const struct kubecfg *,
    const struct remote_conf *, char **cause);
/* The client over the remote; client_free(remote_client(r)) frees r. */
client *remote_client(remote *);
/* Whether every informer has listed at least once. */
int remote_synced(const remote *);
/* The mirror's counts per kind, in the metrics text format. */
void remote_print_metrics(FILE *, const remote *);
/* The server's base URL ("https://host:6443"). */
const char *remote_server(const remote *);
/*
 * One synchronous GET of a path on the server (discovery, a CRD): 0 with
 * *status and *body (malloc'd; the caller frees) or -1 with *cause.
 */
int remote_get(remote *, const char *path, long *status, char **body,
    char **cause);

#endif
