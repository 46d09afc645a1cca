/*
 * The local node's pod network (podnet.c): a network namespace per pod
 * on a bridge in a namespace of the node's own, the host untouched but
 * for one veth end. What other code of volrayd calls to reach a pod.
 */
#ifndef VOLRAY_PODNET_H
#define VOLRAY_PODNET_H

#include <stddef.h>
#include <uv.h>

/*
 * How the local node's pods are networked, before the node manager
 * starts: mode "host" (the default: they share the host's network) or
 * "namespaces"; the pod range (the Node's spec.podCIDR, an IPv4 CIDR of
 * /8 to /28), the range the link network between the host and the
 * node's namespace (a /30) is picked from, and the Service range (the
 * registry's, /12 to /28); NULL keeps the default. -1 with *cause
 * (malloc'd) on a bad value.
 */
int podnet_configure(const char *mode, const char *pod_cidr,
    const char *link_range, const char *svc_range, char **cause);
/* Whether pods get namespaces of their own (set up and running). */
int podnet_on(void);
/* The pod range (spec.podCIDR), or NULL when off. */
const char *podnet_cidr(void);
/* The bridge's address in the node's namespace (the pods' gateway, where
   volrayd's API also listens for them), or NULL when off. */
const char *podnet_gateway(void);

/*
 * The names the API's serving certificate must also cover for pods in
 * namespaces of their own (asked for, before the node manager starts):
 * the kubernetes Service's (kubernetes.default.svc..., its ClusterIP)
 * and the pods' gateway, into names (PODNET_SANS at most); how many.
 */
#define PODNET_SANS	6
int podnet_serving_names(const char **names);

/* The Service rules again (the kubernetes Service changed). 0, or -1. */
int podnet_refresh(void);

/*
 * The calling thread into the node's namespace and back: a socket made
 * in between (socket(2), uv_tcp_connect, uv_tcp_bind, dial_open with an
 * address literal) stays there, so volrayd reaches pod and cluster IPs
 * without a route on the host. 0, or -1 (errno set; nothing changed).
 */
int podnet_enter(void);
void podnet_leave(void);
/* A socket (as socket(2)) in the node's namespace; -1 with errno. For
   libcurl's CURLOPT_OPENSOCKETFUNCTION and the like. */
int podnet_socket(int domain, int type, int protocol);
/*
 * uv_tcp_connect of tcp (initialised, not yet connected) to addr from
 * the node's namespace (from the host's when podnet is off): pod IPs
 * and ClusterIPs from volrayd.
 */
int podnet_tcp_connect(uv_connect_t *req, uv_tcp_t *tcp,
    const struct sockaddr *addr, uv_connect_cb cb);

/*
 * Pod ns/name's IP on the local node into out ("" when it has none or
 * runs elsewhere): 0, or -1. The address volrayd dials for a pod.
 */
struct node_mgr;
int podnet_pod_ip(struct node_mgr *, const char *ns, const char *name,
    char *out, size_t size);

#endif
