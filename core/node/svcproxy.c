/*
 * Services on the local node's pod network (podnet.c), as kube-proxy's
 * nftables mode makes them: the rules here go into the table volray of
 * the node's namespace, which podnet.c replaces whole with nft -f.
 *
 * A map service-ips sends a packet for ClusterIP . protocol . port to
 * the Service port's chain, which picks one of the ready endpoints at
 * random (numgen random mod N) and jumps to its chain, which DNATs to
 * the pod's IP and port. The endpoints are the Service's Endpoints
 * object's addresses (notReadyAddresses are left out) with the port of
 * the subset's port of the Service port's name (the endpoints controller
 * has resolved named targetPorts). The kubernetes Service leads to the
 * API on the pods' gateway (the targetPort volrayd listens on). A
 * headless Service (clusterIP None) has no rules (cluster DNS answers
 * its endpoints); what is still for the Service range after that (a
 * ClusterIP with no ready endpoint, a port it does not have) is
 * rejected, as kube-proxy rejects it, and never leaves the node: a TCP
 * connection with a reset, not kube-proxy's ICMP port unreachable, which
 * the kernel sends a pod at most once a second (icmp_ratelimit), so that
 * a client retrying (Ray's GCS and its Redis cleanup Job against a Redis
 * with no ready pod) would wait out its SYN's retransmissions, 3 s a try,
 * where a refusal is due at once. The map is looked
 * up in prerouting (pods) and output (volrayd's own sockets in the
 * node's namespace); what was DNATed and goes back out on the bridge is
 * masqueraded, so that a reply from a pod on the same bridge comes back
 * through the node's namespace.
 *
 * The node manager calls podnet_services_changed on every change of a
 * Service or Endpoints; podnet.c writes its rules (and cluster DNS's
 * records, clusterdns.c) again 20 ms after the first of a burst.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"


struct buf {
	char *s;
	size_t len, cap;
};

static void __attribute__((format(printf, 2, 3)))
put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (b->len + (size_t)n + 1 > b->cap) {
		b->cap = (b->len + (size_t)n + 1) * 2;
		b->s = xrealloc(b->s, b->cap);
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static unsigned
fnv(const char *s)
{
	return (uint32_t)util_fnv1a(UTIL_FNV_SEED, s, strlen(s));
}

/* "tcp", "udp", "sctp" for a Service port's protocol, or NULL. */
static const char *
proto(const cJSON *port)
{
	const char *p = json_str(port, "protocol");

	if (p == NULL || strcmp(p, "TCP") == 0)
		return "tcp";
	if (strcmp(p, "UDP") == 0)
		return "udp";
	if (strcmp(p, "SCTP") == 0)
		return "sctp";
	return NULL;
}

static int
same_name(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

/* The ready endpoints "IP:PORT" of the Service port named name. */
static int
endpoints_of(const cJSON *ep, const char *name, const char *pr,
    char ***out)
{
	const cJSON *sub, *port, *a, *hit;
	char **v = NULL;
	int n = 0;

	cJSON_ArrayForEach(sub, json_at(ep, "subsets")) {
		hit = NULL;
		cJSON_ArrayForEach(port, json_at(sub, "ports"))
			if (same_name(json_str(port, "name"), name) &&
			    proto(port) != NULL && strcmp(proto(port), pr) == 0)
				hit = port;
		if (hit == NULL || !cJSON_IsNumber(json_at(hit, "port")))
			continue;
		cJSON_ArrayForEach(a, json_at(sub, "addresses")) {
			if (json_str(a, "ip") == NULL ||
			    strpbrk(json_str(a, "ip"), " \t\n;{}\"") != NULL)
				continue;
			v = xreallocarray(v, (size_t)n + 1, sizeof *v);
			v[n++] = util_printf("%s:%d", json_str(a, "ip"),
			    (int)json_at(hit, "port")->valuedouble);
		}
	}
	*out = v;
	return n;
}

/* One Service port: its map element and chains. */
static void
port_rules(struct buf *map, struct buf *chains, const char *ns,
    const char *name, const char *cip, const cJSON *sp, char **eps, int n)
{
	const char *pr = proto(sp);
	char key[768];
	unsigned h;
	int i;

	util_strf(key, sizeof key, "%s/%s/%s/%s", ns, name,
	    json_str(sp, "name") ? json_str(sp, "name") : "", pr);
	h = fnv(key);
	if (n == 0)
		return;		/* the filter chains reject it */
	put(map, "%s\t\t\t%s . %s . %d : goto svc-%08x", map->len ? ",\n" : "",
	    cip, pr, (int)json_at(sp, "port")->valuedouble, h);
	put(chains, "\tchain svc-%08x {\n\t\tnumgen random mod %d vmap { ",
	    h, n);
	for (i = 0; i < n; i++)
		put(chains, "%s%d : goto sep-%08x-%d", i ? ", " : "", i, h, i);
	put(chains, " }\n\t}\n");
	for (i = 0; i < n; i++)
		put(chains, "\tchain sep-%08x-%d {\n\t\tmeta l4proto %s dnat to "
		    "%s\n\t}\n", h, i, pr, eps[i]);
}

/*
 * The Services' part of the table volray (map, chains and hooks), for
 * the pods' gateway gw and the Service range: malloc'd text for nft -f.
 */
char *
svcproxy_rules(node_mgr *m, const char *gw, const char *svc_range)
{
	store_obj *const *svcs = NULL;
	struct buf map = { 0 }, chains = { 0 }, out = { 0 };
	size_t ns, i;

	ns = client_list(m->c, "services", NULL, &svcs);
	for (i = 0; i < ns; i++) {
		cJSON *t = store_obj_tree(svcs[i]), *ept;
		const store_obj *eo;
		const char *cip = json_str(t, "spec.clusterIP");
		const cJSON *sp;
		int kube = strcmp(svcs[i]->ns, "default") == 0 &&
		    strcmp(svcs[i]->name, "kubernetes") == 0;

		if (cip == NULL || *cip == '\0' || strcmp(cip, "None") == 0 ||
		    strpbrk(cip, " \t\n;{}\"") != NULL) {
			cJSON_Delete(t);
			continue;
		}
		eo = client_get(m->c, "endpoints", svcs[i]->ns,
		    svcs[i]->name);
		ept = eo ? store_obj_tree(eo) : NULL;
		cJSON_ArrayForEach(sp, json_at(t, "spec.ports")) {
			char **eps = NULL, *api = NULL;
			int n = 0, k;

			if (proto(sp) == NULL || !cJSON_IsNumber(json_at(sp,
			    "port")))
				continue;
			if (kube && cJSON_IsNumber(json_at(sp, "targetPort"))) {
				/* The API on the pods' gateway. */
				api = util_printf("%s:%d", gw, (int)json_at(sp,
				    "targetPort")->valuedouble);
				eps = &api;
				n = 1;
			} else if (ept != NULL)
				n = endpoints_of(ept, json_str(sp, "name"),
				    proto(sp), &eps);
			port_rules(&map, &chains, svcs[i]->ns, svcs[i]->name,
			    cip, sp, eps, n);
			if (api != NULL) {
				free(api);
				continue;
			}
			for (k = 0; k < n; k++)
				free(eps[k]);
			free(eps);
		}
		cJSON_Delete(ept);
		cJSON_Delete(t);
	}
	put(&out, "\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . "
	    "inet_service : verdict\n");
	if (map.len > 0)
		put(&out, "\t\telements = {\n%s\n\t\t}\n", map.s);
	put(&out, "\t}\n%s"
	    "\tchain services {\n"
	    "\t\tip daddr . meta l4proto . th dport vmap @service-ips\n"
	    "\t}\n"
	    "\tchain prerouting {\n"
	    "\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
	    "\t\tjump services\n"
	    "\t}\n"
	    "\tchain output {\n"
	    "\t\ttype nat hook output priority -100; policy accept;\n"
	    "\t\tjump services\n"
	    "\t}\n"
	    "\tchain filter-forward {\n"
	    "\t\ttype filter hook forward priority filter; policy accept;\n"
	    "\t\tip daddr %s meta l4proto tcp reject with tcp reset\n"
	    "\t\tip daddr %s reject\n"
	    "\t}\n"
	    "\tchain filter-output {\n"
	    "\t\ttype filter hook output priority filter; policy accept;\n"
	    "\t\tip daddr %s meta l4proto tcp reject with tcp reset\n"
	    "\t\tip daddr %s reject\n"
	    "\t}\n", chains.len ? chains.s : "", svc_range, svc_range,
	    svc_range, svc_range);
	free(map.s);
	free(chains.s);
	return out.s;
}
