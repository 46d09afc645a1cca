/*
 * The two ends of the API server's way to nodes run by another process:
 * the nodes role's endpoint (node/endpoint.h) as an agent serves it,
 * with where it listens, the address its Nodes advertise and its
 * certificate; and the client certificate the API role shows it.
 */
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/pki.h"
#include "daemon/endpoint.h"
#include "daemon/flags.h"
#include "lib/log.h"
#include "lib/util.h"
#include "net/tls.h"
#include "node/endpoint.h"
#include "node/node.h"

#define ENDPOINT_PORT	10250		/* the kubelet's */
#define SCHED_ENDPOINT_PORT 10259	/* kube-scheduler's secure port */

static int
wildcard(const char *host)
{
	return *host == '\0' || strcmp(host, "0.0.0.0") == 0 ||
	    strcmp(host, "::") == 0;
}

/*
 * The address of the interface the default route leaves by (a UDP
 * socket connected to a public address sends nothing), else loopback.
 */
static void
primary_address(char *buf, size_t len)
{
	struct sockaddr_in to, me;
	socklen_t n = sizeof me;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	snprintf(buf, len, "127.0.0.1");
	if (fd < 0)
		return;
	memset(&to, 0, sizeof to);
	to.sin_family = AF_INET;
	to.sin_port = htons(53);
	inet_pton(AF_INET, "192.0.2.1", &to.sin_addr);
	if (connect(fd, (struct sockaddr *)&to, sizeof to) == 0 &&
	    getsockname(fd, (struct sockaddr *)&me, &n) == 0 &&
	    me.sin_addr.s_addr != htonl(INADDR_ANY))
		inet_ntop(AF_INET, &me.sin_addr, buf, (socklen_t)len);
	close(fd);
}

/*
 * An endpoint on host:port for the API server of another process, its
 * certificate made for addr (the address advertised) among its names.
 */
static node_endpoint *
endpoint_open(uv_loop_t *loop, client *c, const struct volrayd_flags *f,
    const char *host, int port, const char *addr, const char *client_ca,
    const char *flag, char **cause)
{
	char pki[PATH_MAX], crt[PATH_MAX], key[PATH_MAX];
	char hostname[256] = "";
	const char *sans[4];
	int nsans = 0;
	node_endpoint *e;
	tls_ctx *tls;

	sans[nsans++] = addr;
	sans[nsans++] = "127.0.0.1";
	sans[nsans++] = "localhost";
	if (gethostname(hostname, sizeof hostname - 1) == 0 && *hostname)
		sans[nsans++] = hostname;
	if (snprintf(pki, sizeof pki, "%s/pki", f->data_dir) >= (int)sizeof pki ||
	    snprintf(crt, sizeof crt, "%s/server.crt", pki) >= (int)sizeof crt ||
	    snprintf(key, sizeof key, "%s/server.key", pki) >= (int)sizeof key) {
		*cause = util_printf("--data-dir %s: path too long",
		    f->data_dir);
		return NULL;
	}
	if (pki_ensure(pki, sans, nsans, cause) != 0)
		return NULL;
	if (client_ca == NULL)
		log_warn("volrayd: the kubeconfig names no CA: the endpoint "
		    "can verify no API server and refuses every request");
	if ((tls = tls_ctx_new(crt, key, client_ca, cause)) == NULL)
		return NULL;
	e = node_endpoint_new(loop, c, f->data_dir, tls);
	if (node_endpoint_listen(e, wildcard(host) && *host == '\0' ?
	    "0.0.0.0" : host, port, cause) != 0) {
		char *why = util_printf("%s %s:%d: %s", flag, host, port,
		    *cause);

		free(*cause);
		*cause = why;
		node_endpoint_free(e);
		return NULL;
	}
	return e;
}

node_endpoint *
volrayd_endpoint_start(uv_loop_t *loop, client *c, node_mgr *nodes,
    const struct volrayd_flags *f, const char *client_ca, char **cause)
{
	char addr[256];
	const char *host = f->node_host;
	int port = f->node_port;
	node_endpoint *e;

	if (port < 0 && (f->kubeconfig == NULL || (f->roles & ROLE_API)))
		return NULL;		/* the API is in this process */
	if (port < 0) {
		host = "0.0.0.0";
		port = ENDPOINT_PORT;
	}
	if (f->node_ip[0] != '\0')
		snprintf(addr, sizeof addr, "%s", f->node_ip);
	else if (!wildcard(host))
		snprintf(addr, sizeof addr, "%s", host);
	else
		primary_address(addr, sizeof addr);
	if ((e = endpoint_open(loop, c, f, host, port, addr, client_ca,
	    "--node-listen", cause)) == NULL)
		return NULL;
	node_mgr_set_endpoint(nodes, addr, node_endpoint_port(e));
	log_info("volrayd: the nodes' endpoint on %s:%d, advertised as %s:%d",
	    host, node_endpoint_port(e), addr, node_endpoint_port(e));
	return e;
}

node_endpoint *
volrayd_sched_endpoint_start(uv_loop_t *loop, client *c,
    const struct volrayd_flags *f, const char *client_ca, char *url,
    size_t len, char **cause)
{
	char addr[256];
	const char *host = f->sched_host;
	int port = f->sched_port;
	node_endpoint *e;

	if (port == SCHED_LISTEN_OFF || f->kubeconfig == NULL ||
	    (f->roles & ROLE_API))
		return NULL;
	if (port < 0) {
		host = "0.0.0.0";
		port = SCHED_ENDPOINT_PORT;
	}
	if (!wildcard(host))
		snprintf(addr, sizeof addr, "%s", host);
	else
		primary_address(addr, sizeof addr);
	if ((e = endpoint_open(loop, c, f, host, port, addr, client_ca,
	    "--scheduler-listen", cause)) == NULL)
		return NULL;
	snprintf(url, len, strchr(addr, ':') ? "https://[%s]:%d" :
	    "https://%s:%d", addr, node_endpoint_port(e));
	log_info("volrayd: the scheduler's endpoint on %s:%d, advertised as "
	    "%s", host, node_endpoint_port(e), url);
	return e;
}

int
volrayd_kubelet_client(const char *data_dir, char **cert, char **key,
    char **cause)
{
	static const char *const orgs[] = { "system:masters" };
	char pki[PATH_MAX];

	snprintf(pki, sizeof pki, "%s/pki", data_dir);
	return pki_issue_client(pki, "kube-apiserver-kubelet-client", orgs, 1,
	    365, cert, key, cause);
}
