/*
 * The endpoints a volrayd serves when its nodes or its scheduler run
 * against an API server in another process (daemon/endpoint.c), and the
 * client certificate the API role shows them.
 */
#ifndef VOLRAY_DAEMON_ENDPOINT_H
#define VOLRAY_DAEMON_ENDPOINT_H

#include <stddef.h>

struct uv_loop_s;
struct client;
struct node_mgr;
struct node_endpoint;
struct volrayd_flags;

/*
 * The nodes' endpoint of an agent: on --node-listen, or 0.0.0.0:10250
 * when the nodes role runs against a remote API; NULL when none is
 * wanted (the API is in this process) or with *cause. Its Nodes
 * advertise --node-ip (else the listening address, else the primary
 * interface's). Before node_mgr_start.
 */
struct node_endpoint *volrayd_endpoint_start(struct uv_loop_s *,
    struct client *, struct node_mgr *, const struct volrayd_flags *,
    const char *client_ca, char **cause);
/*
 * The scheduler's endpoint, for the API server's explain requests, when
 * the scheduler runs against a remote API without the nodes role: on
 * --scheduler-listen, else 0.0.0.0:10259; NULL when off or not wanted,
 * or with *cause. Its https URL, advertised on the scheduler's Lease, in
 * url.
 */
struct node_endpoint *volrayd_sched_endpoint_start(struct uv_loop_s *,
    struct client *, const struct volrayd_flags *, const char *client_ca,
    char *url, size_t len, char **cause);
/* The API server's certificate for the nodes' endpoints (PEM). */
int volrayd_kubelet_client(const char *data_dir, char **cert, char **key,
    char **cause);

#endif
