/*
 * The local node's pod network (podnet.h), as root with
 * --pod-network=namespaces: every pod its own network namespace, as a
 * CNI bridge plugin makes them, while the host's own interfaces, routes
 * and firewall stay as they are.
 *
 * All of it lives in namespaces volrayd makes with ip(8), named after a
 * short hash of the data directory (H, 8 hex digits), so that two
 * daemons on one machine never share one:
 *
 *  - the node's namespace "vrH" holds a bridge br0 with the pod range's
 *    first address (the pods' gateway), the node end "host0" of one veth
 *    pair whose other end "vrHh" is the only thing made in the host's
 *    namespace, with the two addresses of a /30 link network (picked
 *    from --node-link-range, starting at H, among those no address of
 *    the host is on), and an nftables table "volray" that masquerades
 *    what pods send towards the host (the host needs no route to the pod
 *    range) and sends the kubernetes Service's ClusterIP:443 to the API,
 *    which volrayd also serves there on the gateway's address;
 *  - each pod's "vrH-UID" holds eth0, the peer of "vpN" on the bridge
 *    (N: the pod's offset in the range), with the pod's IP from the
 *    range and a default route through the gateway.
 *
 * The shim enters the pod's namespace (its file under /run/netns) before
 * the command runs, so every container of the pod shares it; the file
 * keeps the namespace while the pod lives, a pause container's work
 * without a process. volrayd reaches pods from the node's namespace:
 * sockets it makes there (podnet_enter, podnet_tcp_connect) stay there.
 * Addresses are kept in a bitmap; a restarted volrayd takes back the
 * pods' addresses from their status and their namespaces as it finds
 * them, and removes the namespaces of pods it does not know
 * (podnet_sweep). A clean stop removes the node's namespace, which takes
 * the bridge, the pods' veths and the host's end with it.
 *
 * Commands run synchronously on the loop (a few milliseconds each, at a
 * pod's start and end).
 */
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"
#include "node/podnet.h"

extern char **environ;

#define NETNS_DIR	"/run/netns"

enum { WANT_HOST, WANT_NAMESPACES, WANT_AUTO };

static struct {
	int want;			/* --pod-network: WANT_HOST, ... */
	int on;
	node_mgr *m;
	char cidr_s[32];
	uint32_t net;			/* pod range, host order */
	int plen;
	uint32_t link_net;		/* --node-link-range */
	int link_plen;
	uint32_t link;			/* the /30 in use */
	uint32_t svc_net;		/* --service-cluster-ip-range */
	int svc_plen;
	char svc_s[32];
	char hash[9];
	char node_ns[16];		/* "vrH" */
	char host_if[IFNAMSIZ];		/* "vrHh" */
	char gw[16];
	int host_fd, node_fd;		/* network namespaces */
	unsigned char *used;		/* a bit per address of the range */
	uint32_t size, next;
	char ip[PATH_MAX], nft[PATH_MAX];
} pn = {
	.net = 0x0af40000u, .plen = 16,		/* 10.244.0.0/16 */
	.link_net = 0xa9fe4000u, .link_plen = 18,	/* 169.254.64.0/18 */
	.svc_net = 0x0a600000u, .svc_plen = 16,		/* 10.96.0.0/16 */
	.svc_s = "10.96.0.0/16",
	.host_fd = -1, .node_fd = -1,
	.want = WANT_AUTO,
};

static uint32_t
mask(int plen)
{
	return plen == 0 ? 0 : 0xffffffffu << (32 - plen);
}

static void
ipstr(uint32_t a, char *out, size_t size)
{
	struct in_addr in = { htonl(a) };

	inet_ntop(AF_INET, &in, out, (socklen_t)size);
}

int
podnet_configure(const char *mode, const char *pod_cidr,
    const char *link_range, const char *svc_range, char **cause)
{
	if (mode != NULL) {
		if (strcmp(mode, "host") == 0)
			pn.want = WANT_HOST;
		else if (strcmp(mode, "namespaces") == 0)
			pn.want = WANT_NAMESPACES;
		else if (strcmp(mode, "auto") == 0)
			pn.want = WANT_AUTO;
		else {
			*cause = util_printf("bad --pod-network %s: want auto, "
			    "host or namespaces", mode);
			return -1;
		}
	}
	if (pod_cidr != NULL && util_cidr4(pod_cidr, &pn.net, &pn.plen, 8,
	    28) != 0) {
		*cause = util_printf("bad --pod-cidr %s: want an IPv4 network "
		    "A.B.C.D/8 to /28", pod_cidr);
		return -1;
	}
	if (link_range != NULL && util_cidr4(link_range, &pn.link_net,
	    &pn.link_plen, 8, 30) != 0) {
		*cause = util_printf("bad --node-link-range %s: want an IPv4 "
		    "network A.B.C.D/8 to /30", link_range);
		return -1;
	}
	if (svc_range != NULL) {
		if (util_cidr4(svc_range, &pn.svc_net, &pn.svc_plen, 12,
		    28) != 0) {
			*cause = util_printf(
			    "bad --service-cluster-ip-range %s: "
			    "want an IPv4 network A.B.C.D/12 to /28", svc_range);
			return -1;
		}
		snprintf(pn.svc_s, sizeof pn.svc_s, "%s", svc_range);
	}
	return 0;
}

int
podnet_serving_names(const char **names)
{
	static char gw[16], kube[16];
	int k = 0;

	if (pn.want == WANT_HOST || geteuid() != 0)
		return 0;
	ipstr(pn.net + 1, gw, sizeof gw);
	ipstr(pn.svc_net + 1, kube, sizeof kube);
	names[k++] = gw;
	names[k++] = kube;		/* the registry's first choice */
	names[k++] = "kubernetes";
	names[k++] = "kubernetes.default";
	names[k++] = "kubernetes.default.svc";
	names[k++] = "kubernetes.default.svc.cluster.local";
	return k;
}

int
podnet_on(void)
{
	return pn.on;
}

const char *
podnet_cidr(void)
{
	return pn.on ? pn.cidr_s : NULL;
}

const char *
podnet_gateway(void)
{
	return pn.on ? pn.gw : NULL;
}

const char *
podnet_nameserver(const struct node_pod *p)
{
	return podnet_has(p) ? pn.gw : NULL;
}

/* The program in /usr/sbin, /sbin or PATH, into out; -1 when none. */
static int
find_tool(const char *name, char *out, size_t size)
{
	const char *dirs[] = { "/usr/sbin", "/sbin", "/usr/bin", "/bin" };
	const char *path = getenv("PATH");
	char buf[4096], *save = NULL, *d;
	size_t i;

	for (i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		util_strf(out, size, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	util_strf(buf, sizeof buf, "%s", path ? path : "");
	for (d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		util_strf(out, size, "%s/%s", d, name);
		if (access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/*
 * Run argv with input on its stdin; 0 when it exits 0, else -1 with
 * *cause (its first line of stderr), when why is not NULL.
 */
static int
run(char *const argv[], const char *input, char **cause)
{
	posix_spawn_file_actions_t fa;
	int in[2], err[2], status, r;
	char buf[1024], *nl;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) != 0)
		goto fail;
	if (pipe2(err, O_CLOEXEC) != 0) {
		close(in[0]);
		close(in[1]);
		goto fail;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, err[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(err[1]);
	if (r != 0) {
		close(in[1]);
		close(err[0]);
		errno = r;
		goto fail;
	}
	if (input != NULL && write(in[1], input, strlen(input)) < 0) {
		/* It will say what it missed. */
	}
	close(in[1]);
	while (len < sizeof buf - 1 && (n = read(err[0], buf + len,
	    sizeof buf - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	{
		char rest[256];

		while (read(err[0], rest, sizeof rest) > 0)
			;	/* the first line says enough */
	}
	close(err[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if ((nl = strchr(buf, '\n')) != NULL)
		*nl = '\0';
	if (cause != NULL)
		*cause = util_printf("%s: %s", argv[0], buf[0] ? buf :
		    "failed");
	return -1;
fail:
	if (cause != NULL)
		*cause = util_printf("%s: %s", argv[0], strerror(errno));
	return -1;
}

/* ip [-n NS] -batch - with the lines in script. */
static int
ip_batch(const char *ns, const char *script, char **cause)
{
	char *argv[] = { pn.ip, "-n", (char *)ns, "-batch", "-", NULL };
	char *argv0[] = { pn.ip, "-batch", "-", NULL };

	return run(ns != NULL ? argv : argv0, script, cause);
}

/* Whether a network namespace of that name exists. */
static int
netns_exists(const char *name)
{
	char path[PATH_MAX];

	util_strf(path, sizeof path, NETNS_DIR "/%s", name);
	return access(path, F_OK) == 0;
}

static int
netns_add(const char *name, char **cause)
{
	char *argv[] = { pn.ip, "netns", "add", (char *)name, NULL };

	return run(argv, NULL, cause);
}

static void
netns_del(const char *name)
{
	char *argv[] = { pn.ip, "netns", "delete", (char *)name, NULL };
	char *why = NULL;

	if (netns_exists(name) && run(argv, NULL, &why) != 0) {
		log_warn("podnet: %s", why);
		free(why);
	}
}

static int
overlaps(uint32_t a, int alen, uint32_t b, int blen)
{
	int l = alen < blen ? alen : blen;

	return (a & mask(l)) == (b & mask(l));
}

/*
 * Whether an address of the host (but our own link's end) is in net/plen
 * or its network contains it; *hit names it.
 */
static int
host_uses(uint32_t net, int plen, char *hit, size_t size)
{
	struct ifaddrs *ifa, *i;
	uint32_t a, m;
	int found = 0;

	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL && !found; i = i->ifa_next) {
		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
		    strcmp(i->ifa_name, pn.host_if) == 0)
			continue;
		a = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
		m = i->ifa_netmask ? ntohl(((struct sockaddr_in *)
		    i->ifa_netmask)->sin_addr.s_addr) : 0xffffffffu;
		if ((a & mask(plen)) == net || (net & m) == (a & m)) {
			found = 1;
			snprintf(hit, size, "%s on %s", inet_ntoa(((struct
			    sockaddr_in *)i->ifa_addr)->sin_addr), i->ifa_name);
		}
	}
	freeifaddrs(ifa);
	return found;
}

/* Our host end's address when a previous volrayd left it, else 0. */
static uint32_t
own_link(void)
{
	struct ifaddrs *ifa, *i;
	uint32_t a = 0;

	if (getifaddrs(&ifa) != 0)
		return 0;
	for (i = ifa; i != NULL; i = i->ifa_next)
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, pn.host_if) == 0)
			a = ntohl(((struct sockaddr_in *)i->ifa_addr)->
			    sin_addr.s_addr);
	freeifaddrs(ifa);
	return a & mask(30);
}

/* A /30 of the link range no address of the host is on. */
static int
pick_link(unsigned h, char **cause)
{
	uint32_t count = 1u << (30 - pn.link_plen), i, cand;
	char hit[64];

	if ((pn.link = own_link()) != 0)
		return 0;
	for (i = 0; i < count; i++) {
		cand = pn.link_net + (((h + i) % count) << 2);
		if (!host_uses(cand, 30, hit, sizeof hit)) {
			pn.link = cand;
			return 0;
		}
	}
	*cause = util_printf("no free /30 in --node-link-range for the host's "
	    "link to the pods");
	return -1;
}

/* 32 bits of s's FNV-1a. */
static unsigned
hash(const char *s)
{
	return (uint32_t)util_fnv1a(UTIL_FNV_SEED, s, strlen(s));
}

/* The table volray of the node's namespace, replaced whole. */
static int
write_rules(char **cause)
{
	char *argv[] = { pn.nft, "-f", "-", NULL };
	char *svc = svcproxy_rules(pn.m, pn.gw, pn.svc_s), *rules;
	int r;

	rules = util_printf("table ip volray\ndelete table ip volray\n"
	    "table ip volray {\n%s"
	    "\tchain postrouting {\n"
	    "\t\ttype nat hook postrouting priority srcnat; policy accept;\n"
	    "\t\tip saddr %s oifname \"host0\" masquerade\n"
	    "\t\tct status dnat oifname \"br0\" masquerade\n"
	    "\t}\n"
	    "}\n", svc, pn.cidr_s);
	free(svc);
	/* nft runs in the node's namespace: a child inherits the
	   thread's. Never in the host's. */
	if (podnet_enter() != 0) {
		*cause = util_printf(
		    "into %s: %s", pn.node_ns, strerror(errno));
		free(rules);
		return -1;
	}
	r = run(argv, rules, cause);
	podnet_leave();
	free(rules);
	return r;
}

int
podnet_refresh(void)
{
	char *why = NULL;

	if (!pn.on)
		return 0;
	if (write_rules(&why) != 0) {
		log_error("podnet: %s", why);
		free(why);
		return -1;
	}
	return 0;
}

#define SVC_DEBOUNCE_MS	20

static uv_timer_t svc_timer;
static int svc_timer_init;

static void
on_svc_timer(uv_timer_t *t)
{
	(void)t;
	podnet_refresh();
	clusterdns_refresh();
}

/* A Service or Endpoints changed: the rules and the DNS records again,
   20 ms after the first change of a burst. */
void
podnet_services_changed(node_mgr *m)
{
	if (!pn.on)
		return;
	if (!svc_timer_init) {
		uv_timer_init(m->loop, &svc_timer);
		uv_unref((uv_handle_t *)&svc_timer);
		svc_timer_init = 1;
	}
	if (!uv_is_active((uv_handle_t *)&svc_timer))
		uv_timer_start(&svc_timer, on_svc_timer, SVC_DEBOUNCE_MS, 0);
}

/* ip_forward on in the node's namespace (per namespace, /proc/sys/net),
   bridged frames kept from the ip hooks there. */
static int
forward_on(char **cause)
{
	int fd, ok;

	if (podnet_enter() != 0) {
		*cause = util_printf(
		    "into %s: %s", pn.node_ns, strerror(errno));
		return -1;
	}
	fd = open("/proc/sys/net/ipv4/ip_forward", O_WRONLY | O_CLOEXEC);
	ok = fd >= 0 && write(fd, "1\n", 2) == 2;
	if (fd >= 0)
		close(fd);
	/*
	 * With br_netfilter, frames between two pods on the bridge would
	 * pass the ip hooks too, and a Service's DNAT to a pod on the same
	 * bridge would never be routed back: only routed traffic there
	 * (per namespace; the host's setting stays).
	 */
	if ((fd = open("/proc/sys/net/bridge/bridge-nf-call-iptables",
	    O_WRONLY | O_CLOEXEC)) >= 0) {
		if (write(fd, "0\n", 2) != 2)
			log_warn("podnet: bridge-nf-call-iptables in %s: %s",
			    pn.node_ns, strerror(errno));
		close(fd);
	}
	podnet_leave();
	if (!ok)
		*cause = util_printf("ip_forward in %s: %s", pn.node_ns,
		    strerror(errno));
	return ok ? 0 : -1;
}

/* The node's namespace, its bridge and link, made or mended. */
static int
node_up(char **cause)
{
	char path[PATH_MAX], hl[16], nl[16], *script;
	unsigned g[4] = { 0 };
	int r;

	if (!netns_exists(pn.node_ns) && netns_add(pn.node_ns, cause) != 0)
		return -1;
	util_strf(path, sizeof path, NETNS_DIR "/%s", pn.node_ns);
	if (pn.node_fd < 0 && (pn.node_fd = open(path, O_RDONLY |
	    O_CLOEXEC)) < 0) {
		*cause = util_printf("%s: %s", path, strerror(errno));
		return -1;
	}
	ipstr(pn.link + 1, hl, sizeof hl);
	ipstr(pn.link + 2, nl, sizeof nl);
	if (if_nametoindex(pn.host_if) == 0) {
		script = util_printf("link add %s type veth peer name host0 "
		    "netns %s\n", pn.host_if, pn.node_ns);
		r = ip_batch(NULL, script, cause);
		free(script);
		if (r != 0)
			return -1;
	}
	script = util_printf("addr replace %s/30 dev %s\nlink set %s up\n",
	    hl, pn.host_if, pn.host_if);
	r = ip_batch(NULL, script, cause);
	free(script);
	if (r != 0)
		return -1;
	/* The bridge may be there already (a restart): no error then. */
	ip_batch(pn.node_ns, "link set lo up\nlink add br0 type bridge\n",
	    NULL);
	/*
	 * The bridge's MAC set, from the gateway's address (0a:58:IP, as
	 * OVN-Kubernetes makes them): a bridge left to itself takes the
	 * lowest of its ports' MACs, so it changed as pods came and went,
	 * and the pods' ARP entries for their gateway (DNS, Services) went
	 * stale for seconds.
	 */
	sscanf(pn.gw, "%u.%u.%u.%u", &g[0], &g[1], &g[2], &g[3]);
	script = util_printf("addr replace %s/%d dev br0\n"
	    "link set br0 address 0a:58:%02x:%02x:%02x:%02x up\n"
	    "addr replace %s/30 dev host0\nlink set host0 up\n"
	    "route replace default via %s dev host0\n", pn.gw, pn.plen,
	    g[0] & 255, g[1] & 255, g[2] & 255, g[3] & 255, nl, hl);
	r = ip_batch(pn.node_ns, script, cause);
	free(script);
	if (r != 0 || forward_on(cause) != 0 || write_rules(cause) != 0)
		return -1;
	return 0;
}

/*
 * At the node manager's start, as root with --pod-network=namespaces:
 * check the ranges against the host's addresses, then make or take back
 * the node's namespace. 0 (podnet_on says whether pods get namespaces),
 * -1 with *cause when it cannot be had (pods share the host's network).
 */
int
podnet_start(node_mgr *m, int real_ray, char **cause)
{
	char hit[64], path[PATH_MAX];
	unsigned h;

	pn.m = m;
	if (pn.want == WANT_AUTO) {
		/* Real Ray's nodes need a network each (ports, node IPs);
		   the emulated heads live in volrayd, on the host's. */
		if (geteuid() != 0 || !real_ray || find_tool("ip", path,
		    sizeof path) != 0 || find_tool("nft", path, sizeof path) !=
		    0) {
			log_info("podnet: pods share the host's network (%s)",
			    geteuid() != 0 ? "not root" : m->ray_emulated ?
			    "Ray is emulated" : !real_ray ? "no real Ray "
			    "installed" : "no ip or nft");
			return 0;
		}
	} else if (pn.want == WANT_HOST)
		return 0;
	if (geteuid() != 0) {
		*cause = xstrdup("not root: pods share the host's network");
		return -1;
	}
	if (find_tool("ip", pn.ip, sizeof pn.ip) != 0 ||
	    find_tool("nft", pn.nft, sizeof pn.nft) != 0) {
		*cause = util_printf(
		    "no %s (Debian's %s): pods share the host's "
		    "network", pn.ip[0] ? "nft" : "ip", pn.ip[0] ? "nftables" :
		    "iproute2");
		pn.ip[0] = '\0';
		return -1;
	}
	if (realpath(m->data_dir, path) == NULL)
		util_strf(path, sizeof path, "%s", m->data_dir);
	h = hash(path);
	snprintf(pn.hash, sizeof pn.hash, "%08x", h);
	snprintf(pn.node_ns, sizeof pn.node_ns, "vr%s", pn.hash);
	snprintf(pn.host_if, sizeof pn.host_if, "vr%sh", pn.hash);
	ipstr(pn.net, pn.cidr_s, sizeof pn.cidr_s);
	util_strf(pn.cidr_s + strlen(pn.cidr_s), sizeof pn.cidr_s -
	    strlen(pn.cidr_s), "/%d", pn.plen);
	ipstr(pn.net + 1, pn.gw, sizeof pn.gw);
	if (host_uses(pn.net, pn.plen, hit, sizeof hit)) {
		*cause = util_printf(
		    "the pod range %s holds the host's address "
		    "%s: pods share the host's network (--pod-cidr)",
		    pn.cidr_s, hit);
		return -1;
	}
	if (host_uses(pn.svc_net, pn.svc_plen, hit, sizeof hit)) {
		*cause = util_printf("the Service range %s holds the host's "
		    "address %s: pods share the host's network", pn.svc_s, hit);
		return -1;
	}
	if (overlaps(pn.net, pn.plen, pn.svc_net, pn.svc_plen) ||
	    overlaps(pn.svc_net, pn.svc_plen, pn.link_net, pn.link_plen) ||
	    overlaps(pn.net, pn.plen, pn.link_net, pn.link_plen)) {
		*cause = util_printf("the pod range %s overlaps the Service "
		    "range or --node-link-range", pn.cidr_s);
		return -1;
	}
	if (pick_link(h, cause) != 0)
		return -1;
	if ((pn.host_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) <
	    0) {
		*cause = util_printf("/proc/self/ns/net: %s", strerror(errno));
		return -1;
	}
	pn.size = pn.plen >= 32 ? 1 : 1u << (32 - pn.plen);
	pn.used = xcalloc(pn.size / 8 + 1, 1);
	/* The network, the gateway and the broadcast address. */
	pn.used[0] |= 3;
	pn.used[(pn.size - 1) / 8] |= (unsigned char)(1u << ((pn.size - 1) %
	    8));
	if (node_up(cause) != 0) {
		char *w = *cause;

		*cause = util_printf("%s: pods share the host's network", w);
		free(w);
		podnet_stop();
		return -1;
	}
	pn.on = 1;
	m->pod_network = 1;
	{
		char hl[16], *dwhy = NULL;

		if (clusterdns_start(m, pn.gw, pn.node_fd, pn.host_fd,
		    &dwhy) != 0) {
			log_warn("podnet: %s", dwhy);
			free(dwhy);
		}

		ipstr(pn.link + 1, hl, sizeof hl);
		log_info("podnet: the node's namespace %s: bridge br0 on %s/%d, "
		    "the host's end %s on %s/30", pn.node_ns, pn.gw, pn.plen,
		    pn.host_if, hl);
	}
	return 0;
}

int
podnet_enter(void)
{
	if (pn.node_fd < 0) {
		errno = ENOENT;
		return -1;
	}
	return setns(pn.node_fd, CLONE_NEWNET);
}

void
podnet_leave(void)
{
	if (pn.host_fd >= 0 && setns(pn.host_fd, CLONE_NEWNET) != 0)
		log_error("podnet: back to the host's network namespace: %s",
		    strerror(errno));
}

int
podnet_socket(int domain, int type, int protocol)
{
	int fd, e;

	if (!pn.on)
		return socket(domain, type, protocol);
	if (podnet_enter() != 0)
		return -1;
	fd = socket(domain, type, protocol);
	e = errno;
	podnet_leave();
	errno = e;
	return fd;
}

int
podnet_tcp_connect(uv_connect_t *req, uv_tcp_t *tcp,
    const struct sockaddr *addr, uv_connect_cb cb)
{
	int r;

	if (!pn.on)
		return uv_tcp_connect(req, tcp, addr, cb);
	if (podnet_enter() != 0)
		return uv_translate_sys_error(errno);
	r = uv_tcp_connect(req, tcp, addr, cb);
	podnet_leave();
	return r;
}

/* The pod's namespace's name. */
static void
pod_ns(const struct node_pod *p, char *out, size_t size)
{
	snprintf(out, size, "%s-%s", pn.node_ns, p->uid);
}

/* Whether pod p has a namespace of its own. */
int
podnet_has(const struct node_pod *p)
{
	return pn.on && !p->host_net && p->node->rt->exec_stream != NULL;
}

/* The pod's offset in the range, from its address; 0 when outside. */
static uint32_t
offset(const char *ip)
{
	struct in_addr a;
	uint32_t v;

	if (ip == NULL || inet_pton(AF_INET, ip, &a) != 1)
		return 0;
	v = ntohl(a.s_addr);
	if ((v & mask(pn.plen)) != pn.net)
		return 0;
	return v - pn.net;
}

static int
taken(uint32_t o)
{
	return (pn.used[o / 8] >> (o % 8)) & 1;
}

static void
mark(uint32_t o, int on)
{
	if (on)
		pn.used[o / 8] |= (unsigned char)(1u << (o % 8));
	else
		pn.used[o / 8] &= (unsigned char)~(1u << (o % 8));
}

/*
 * The pod's address: the one its status had (a restart) when it is in
 * the range and free, else the next free one. 0, or -1 with *cause.
 */
int
podnet_assign(struct node_pod *p, char **cause)
{
	uint32_t o = offset(p->ip), i;

	if (p->pod_net)
		return 0;
	if (o != 0 && !taken(o)) {
		mark(o, 1);
		p->pod_net = 1;
		return 0;
	}
	for (i = 0; i < pn.size; i++) {
		pn.next = (pn.next + 1) % pn.size;
		if (!taken(pn.next)) {
			mark(pn.next, 1);
			ipstr(pn.net + pn.next, p->ip, sizeof p->ip);
			p->pod_net = 1;
			return 0;
		}
	}
	*cause = util_printf("no free address in the pod range %s", pn.cidr_s);
	p->ip[0] = '\0';
	return -1;
}

/* Whether the node's namespace has the veth vpN of offset o. */
static int
node_has_link(uint32_t o)
{
	char name[IFNAMSIZ];
	unsigned idx;

	snprintf(name, sizeof name, "vp%x", o);
	if (podnet_enter() != 0)
		return 1;		/* then try to remove it */
	idx = if_nametoindex(name);
	podnet_leave();
	return idx != 0;
}

/*
 * The pod's namespace, made unless it is there (a restart, a second
 * container): its file into path. 0, or -1 with *cause.
 */
int
podnet_pod_up(struct node_pod *p, char *path, size_t size, char **cause)
{
	char name[320], *script;
	uint32_t o = offset(p->ip);
	int r;

	pod_ns(p, name, sizeof name);
	util_strf(path, size, NETNS_DIR "/%s", name);
	if (netns_exists(name))
		return 0;
	if (o == 0) {
		*cause = util_printf("pod %s has no address of %s", p->key,
		    pn.cidr_s);
		return -1;
	}
	if (netns_add(name, cause) != 0)
		return -1;
	if (node_has_link(o)) {
		/* A leftover of an earlier pod of this address. */
		script = util_printf("link del vp%x\n", o);
		ip_batch(pn.node_ns, script, NULL);
		free(script);
	}
	script = util_printf("link add vp%x type veth peer name eth0 netns "
	    "%s\nlink set vp%x master br0 up\n", o, name, o);
	r = ip_batch(pn.node_ns, script, cause);
	free(script);
	if (r == 0) {
		script = util_printf("link set lo up\naddr add %s/%d dev eth0\n"
		    "link set eth0 up\nroute add default via %s\n", p->ip,
		    pn.plen, pn.gw);
		r = ip_batch(name, script, cause);
		free(script);
	}
	if (r != 0)
		netns_del(name);
	return r;
}

/*
 * Into the pod's own namespace (to reach what listens on its loopback,
 * as the kubelet's port-forward does); podnet_leave goes back. 0, or -1.
 */
int
podnet_pod_enter(const struct node_pod *p)
{
	char name[320], path[PATH_MAX];
	int fd, r;

	pod_ns(p, name, sizeof name);
	util_strf(path, sizeof path, NETNS_DIR "/%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	r = setns(fd, CLONE_NEWNET);
	close(fd);
	return r;
}

/* Whether the container's spec.env names name. */
static int
env_named(const cJSON *spec, const char *name)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, json_at(spec, "env"))
		if (json_str(it, "name") && strcmp(json_str(it, "name"),
		    name) == 0)
			return 1;
	return 0;
}

/*
 * The kubernetes Service's variables, as the kubelet sets them for every
 * container (its own env wins): the API at its ClusterIP.
 */
void
podnet_env(const struct node_pod *p, const cJSON *spec, struct ctrenv *e)
{
	const store_obj *o = client_get(pn.m->c, "services", "default",
	    "kubernetes");
	cJSON *t = o ? store_obj_tree(o) : NULL;
	const char *ip = t ? json_str(t, "spec.clusterIP") : NULL;
	const cJSON *port = t ? json_at(cJSON_GetArrayItem(json_at(t,
	    "spec.ports"), 0), "port") : NULL;
	char num[16], url[64];
	const char *names[] = { "KUBERNETES_SERVICE_HOST",
	    "KUBERNETES_SERVICE_PORT", "KUBERNETES_SERVICE_PORT_HTTPS",
	    "KUBERNETES_PORT" };
	const char *vals[4];
	size_t i;

	if (podnet_has(p) && ip != NULL && cJSON_IsNumber(port)) {
		snprintf(num, sizeof num, "%d", (int)port->valuedouble);
		snprintf(url, sizeof url, "tcp://%s:%s", ip, num);
		vals[0] = ip;
		vals[1] = vals[2] = num;
		vals[3] = url;
		for (i = 0; i < 4; i++)
			if (!env_named(spec, names[i]))
				ctrenv_set(e, names[i], vals[i]);
	}
	cJSON_Delete(t);
}

/* The pod is gone: its namespace (with its veth pair) and address. */
void
podnet_pod_down(struct node_pod *p)
{
	char name[320];
	uint32_t o = offset(p->ip);

	/* A namespace without an address here: a pod a restart took back
	   but never admitted (it had ended). */
	if (podnet_has(p)) {
		pod_ns(p, name, sizeof name);
		netns_del(name);
	}
	if (p->pod_net && o != 0)
		mark(o, 0);
	p->pod_net = 0;
}

/* After a restart: the namespaces of pods no longer here go. */
void
podnet_sweep(node_mgr *m)
{
	char prefix[32];
	struct dirent *e;
	size_t len;
	DIR *d;

	if (!pn.on || (d = opendir(NETNS_DIR)) == NULL)
		return;
	len = (size_t)snprintf(prefix, sizeof prefix, "%s-", pn.node_ns);
	while ((e = readdir(d)) != NULL) {
		struct node_pod *p;

		if (strncmp(e->d_name, prefix, len) != 0)
			continue;
		p = hmap_get(m->pods, e->d_name + len);
		if (p == NULL || !podnet_has(p)) {
			log_info("podnet: removing %s, of no pod here",
			    e->d_name);
			netns_del(e->d_name);
		}
	}
	closedir(d);
}

/* volrayd stops: every pod's namespace, then the node's, go. */
void
podnet_stop(void)
{
	char prefix[32];
	struct dirent *e;
	size_t len;
	DIR *d;

	if (svc_timer_init) {
		uv_timer_stop(&svc_timer);
		uv_close((uv_handle_t *)&svc_timer, NULL);
		svc_timer_init = 0;
	}
	if (pn.ip[0] == '\0' || pn.node_ns[0] == '\0')
		return;
	clusterdns_stop();
	if ((d = opendir(NETNS_DIR)) != NULL) {
		len = (size_t)snprintf(prefix, sizeof prefix, "%s-",
		    pn.node_ns);
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, prefix, len) == 0)
				netns_del(e->d_name);
		closedir(d);
	}
	if (pn.node_fd >= 0)
		close(pn.node_fd);
	pn.node_fd = -1;
	netns_del(pn.node_ns);
	/* Its host end went with the namespace; one that did not goes now. */
	if (if_nametoindex(pn.host_if) != 0) {
		char *argv[] = { pn.ip, "link", "del", pn.host_if, NULL };

		run(argv, NULL, NULL);
	}
	pn.on = 0;
}

int
podnet_pod_ip(struct node_mgr *m, const char *ns, const char *name,
    char *out, size_t size)
{
	const store_obj *o = client_get(m->c, "pods", ns, name);
	struct node_pod *p = o ? hmap_get(m->pods, o->uid) : NULL;

	if (p == NULL) {
		snprintf(out, size, "%s", "");
		return -1;
	}
	snprintf(out, size, "%s", p->ip);
	return 0;
}
