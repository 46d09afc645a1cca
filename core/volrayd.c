/*
 * volrayd: the daemon. It opens the store under --data-dir (replaying the
 * log), installs the built-in CRDs and namespaces, starts the watch hub,
 * garbage collector, Lua controllers and the HTTPS API on one libuv loop,
 * writes the kubeconfig once the API is ready, and runs until SIGTERM
 * (drain, flush, exit 0). Flags are parsed in daemon/flags.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/limits.h"
#include "api/looplag.h"
#include "api/watch.h"
#include "auth/authn.h"
#include "auth/kubeconfig.h"
#include "auth/pki.h"
#include "auth/pki_etcd.h"
#include "auth/rbac.h"
#include "client/embedded.h"
#include "client/leader.h"
#include "client/remote.h"
#include "ctrl/controller.h"
#include "ctrl/luahttp.h"
#include "daemon/endpoint.h"
#include "daemon/etcd.h"
#include "daemon/explain.h"
#include "daemon/flags.h"
#include "daemon/metrics.h"
#include "daemon/remote.h"
#include "lib/hmap.h"
#include "lib/kubecfg.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "luahost/luahost.h"
#include "net/http.h"
#include "net/tls.h"
#include "node/endpoint.h"
#include "node/lifecycle.h"
#include "node/node.h"
#include "node/podnet.h"
#include "node/rayimage.h"
#include "node/wheel.h"
#include "ray/ray.h"
#include "registry/admission.h"
#include "registry/crdfollow.h"
#include "registry/gc.h"
#include "registry/registry.h"
#include "registry/resource.h"
#include "sched/sched.h"
#include "store/store.h"

struct daemon {
	struct volrayd_flags f;
	uv_loop_t *loop;
	store *st;
	registry *rg;
	client *client;		/* how the workers below the API see it */
	watch_hub *hub;
	gc *gc;
	luahost *lua;
	controller_rt *ctrl;
	luahttp *http;
	node_mgr *nodes;
	node_endpoint *endpoint;	/* an agent's, for another API */
	node_endpoint *sched_ep;	/* the scheduler's, for another API */
	char sched_url[300];		/* advertised on its Lease, or "" */
	ray *ray;
	sched *sched;
	lifecycle *life;
	authn *authn;
	rbac *rbac;
	tls_ctx *tls;
	limits *limits;
	char *admin_token;
	char *ca_file;		/* for the kubeconfig; NULL for plain HTTP */
	api *api;
	http_server *srv;
	http_server *pod_srv;	/* the API in the pods' network (podnet.h) */
	uv_signal_t sigterm, sigint, sighup;
	int stopping;
	int ready;		/* roles started (/readyz of --metrics-listen) */
	remote *rm;		/* --kubeconfig: the remote API's client */
	char *remote_token;	/* its bearer token (volray.http's too) */
	char *remote_ca;	/* its CA, written to DATA_DIR/remote-ca.crt */
	char *remote_cert, *remote_key;	/* its client certificate (PEM) */
	size_t remote_cert_len, remote_key_len;
	int remote_foreign;	/* the remote API is not volrayd's */
	int leader_elect;	/* the controllers and scheduler elect */
	leader *elect_ctrl, *elect_sched;
	hmap *sa_tokens;	/* "ns/sa" -> the local pods' token */
	char *root_ca;		/* volray.config.root_ca */
};

/* The names the serving certificate must cover. */
static const char **
serving_names(struct daemon *d, int *n)
{
	static char hostname[256];
	const char **names = xcalloc(d->f.nsans + 5 + PODNET_SANS,
	    sizeof *names);
	int i, k = 0;

	names[k++] = "localhost";
	names[k++] = "127.0.0.1";
	names[k++] = "::1";
	if (gethostname(hostname, sizeof hostname - 1) == 0 && *hostname &&
	    strcmp(hostname, "localhost") != 0)
		names[k++] = hostname;
	if (strcmp(d->f.host, "0.0.0.0") != 0 && strcmp(d->f.host, "::") != 0 &&
	    strcmp(d->f.host, "localhost") != 0 &&
	    strcmp(d->f.host, "127.0.0.1") != 0 && strcmp(d->f.host, "::1") != 0 &&
	    strcmp(d->f.host, hostname) != 0)
		names[k++] = d->f.host;
	for (i = 0; i < d->f.nsans; i++)
		names[k++] = d->f.tls_sans[i];
	/* The local node's pods' names for it (--pod-network=namespaces). */
	k += podnet_serving_names(names + k);
	*n = k;
	return names;
}

/*
 * On etcd, the CA and admin token this server made go to etcd unless
 * another server's are there; then this server takes those and makes its
 * serving certificate again under their CA (auth/pki_etcd.c). With
 * --plain-http there is no CA, but the token is shared all the same: the
 * servers of one cluster accept one admin token.
 */
static int
share_pki(struct daemon *d, const char *pki, char **cause)
{
	const char **names;
	int nnames, rc;

	if ((rc = pki_etcd_push(d->st, pki, cause)) <= 0)
		return rc;
	log_info("volrayd: another server's CA and admin token are in etcd: "
	    "taking them");
	if (pki_etcd_pull(d->st, pki, cause) != 0)
		return -1;
	free(d->admin_token);
	authn_free(d->authn);
	d->authn = authn_new();
	if ((d->admin_token = authn_admin_token(d->authn, pki, cause)) == NULL)
		return -1;
	if (d->f.token_auth_file != NULL &&
	    authn_load_token_file(d->authn, d->f.token_auth_file, cause) != 0)
		return -1;
	if (d->f.plain_http)
		return 0;
	names = serving_names(d, &nnames);
	rc = pki_ensure(pki, names, nnames, cause);
	free(names);
	return rc;
}

/*
 * Credentials before the API opens: the CA and serving certificate (made
 * in DATA_DIR/pki/ unless the user gave theirs), the TLS context, the
 * admin's token and the token file's users.
 */
static int
security_init(struct daemon *d, char **cause)
{
	char pki[PATH_MAX], crt[PATH_MAX], key[PATH_MAX];
	const char **names;
	int nnames, rc;

	snprintf(pki, sizeof pki, "%s/pki", d->f.data_dir);
	if (mkdir(pki, 0700) != 0 && errno != EEXIST) {
		*cause = util_printf("creating %s: %s", pki, strerror(errno));
		return -1;
	}
	if (d->f.netcd > 0 &&
	    pki_etcd_pull(d->st, pki, cause) != 0)
		return -1;
	d->authn = authn_new();
	if ((d->admin_token = authn_admin_token(d->authn, pki, cause)) == NULL)
		return -1;
	if (d->f.token_auth_file != NULL &&
	    authn_load_token_file(d->authn, d->f.token_auth_file, cause) != 0)
		return -1;
	if (d->f.plain_http)
		return d->f.netcd > 0 ? share_pki(d, pki, cause) : 0;
	names = serving_names(d, &nnames);
	rc = pki_ensure(pki, names, nnames, cause);
	free(names);
	if (rc != 0)
		return -1;
	if (snprintf(crt, sizeof crt, "%s/server.crt", pki) >= (int)sizeof crt ||
	    snprintf(key, sizeof key, "%s/server.key", pki) >= (int)sizeof key) {
		*cause = util_printf("--data-dir %s: path too long", d->f.data_dir);
		return -1;
	}
	if (d->f.netcd > 0 && share_pki(d, pki, cause) != 0)
		return -1;
	d->ca_file = util_printf("%s/ca.crt", pki);
	d->tls = tls_ctx_new(d->f.tls_cert_file ? d->f.tls_cert_file : crt,
	    d->f.tls_key_file ? d->f.tls_key_file : key, d->ca_file, cause);
	return d->tls != NULL ? 0 : -1;
}

/*
 * DATA_DIR/kubeconfig for the admin. With the user's own serving
 * certificate the kubeconfig's CA is still ours only when that certificate
 * chains to it; otherwise it names no CA and the user supplies theirs.
 */
static int
write_kubeconfig(struct daemon *d, char **cause)
{
	char path[PATH_MAX], *server;
	const char *scheme = d->f.plain_http ? "http" : "https";
	const char *host = d->f.host;
	int rc;

	if (strcmp(host, "0.0.0.0") == 0)
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	if (strchr(host, ':') != NULL)
		server = util_printf("%s://[%s]:%d", scheme, host, d->f.port);
	else
		server = util_printf("%s://%s:%d", scheme, host, d->f.port);
	snprintf(path, sizeof path, "%s/kubeconfig", d->f.data_dir);
	rc = kubeconfig_write(path, server,
	    d->f.tls_cert_file != NULL ? NULL : d->ca_file, d->admin_token,
	    cause);
	free(server);
	return rc;
}

/* The URL the daemon's own components reach its API on. */
static char *
self_url(struct daemon *d)
{
	const char *host = d->f.host;
	int port = d->srv != NULL ? http_server_port(d->srv) : d->f.port;

	if (strcmp(host, "0.0.0.0") == 0)
		host = "127.0.0.1";
	else if (strcmp(host, "::") == 0)
		host = "::1";
	return util_printf(strchr(host, ':') ? "%s://[%s]:%d" : "%s://%s:%d",
	    d->f.plain_http ? "http" : "https", host, port);
}

/* A controller's token for its own HTTP calls: its user, no more. */
static char *
controller_token(void *arg, const char *user)
{
	struct daemon *d = arg;

	return authn_mint_token(d->authn, user, USER_GROUP_COMPONENTS);
}

/* A token for the identity of a namespace's local pods (podenv.c). */
static char *
pod_token(void *arg, const char *user, const char *groups)
{
	struct daemon *d = arg;

	return authn_mint_token(d->authn, user, groups);
}

/*
 * A local pod's service-account token (node_mgr_set_token_hook): one per
 * account, minted on first use and accepted until exit, for
 * system:serviceaccount:NS:SA in system:serviceaccounts and
 * system:serviceaccounts:NS, as kube-apiserver's bound tokens name them.
 * A restart mints new ones (the node writes them again into the pods it
 * takes back).
 */
static const char *
sa_token(void *arg, const char *ns, const char *sa)
{
	struct daemon *d = arg;
	char *key = util_printf("%s/%s", ns, sa), *tok, *user, *groups;

	if ((tok = hmap_get(d->sa_tokens, key)) == NULL) {
		user = util_printf("system:serviceaccount:%s:%s", ns, sa);
		groups = util_printf("system:serviceaccounts,"
		    "system:serviceaccounts:%s", ns);
		tok = authn_mint_token(d->authn, user, groups);
		free(user);
		free(groups);
		if (tok != NULL) {
			hmap_put(d->sa_tokens, key, tok);	/* owns key */
			return tok;
		}
	}
	free(key);
	return tok;
}

/* The build tree this volrayd runs from, or NULL (an installed one). */
static const char *
build_tree(void)
{
#ifdef VOLRAY_BUILDDIR
	static char built[PATH_MAX];
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

	if (n > 0) {
		self[n] = '\0';
		if (realpath(VOLRAY_BUILDDIR, built) != NULL &&
		    strncmp(self, built, strlen(built)) == 0 &&
		    self[strlen(built)] == '/')
			return built;
	}
#endif
	return NULL;
}

/*
 * Where `ray` is: libexec/ in the build tree when this volrayd runs from
 * it, else $(pkglibexecdir).
 */
static const char *
ray_bin_dir(void)
{
	static char dir[PATH_MAX + 16];

	if (build_tree() != NULL) {
		snprintf(dir, sizeof dir, "%s/libexec", build_tree());
		if (access(dir, X_OK) == 0)
			return dir;
	}
	return PKGLIBEXECDIR;
}

/* volray-shim: beside volrayd in the build tree, else $(pkglibexecdir). */
static const char *
shim_path(void)
{
	static char path[PATH_MAX + 16];

	if (build_tree() != NULL) {
		snprintf(path, sizeof path, "%s/volray-shim", build_tree());
		if (access(path, X_OK) == 0)
			return path;
	}
	snprintf(path, sizeof path, "%s/volray-shim", PKGLIBEXECDIR);
	return access(path, X_OK) == 0 ? path : NULL;
}

/* The Ray job history (ray/history.c), served by the API. */
static int
history_serve(void *arg, http_req *req)
{
	return ray_history_serve(arg, req);
}

/* The API's service and pod proxies reach the Ray heads. */
static int
proxy_dashboard(void *arg, http_req *req, const char *ns, const char *pod,
    int port, const char *path)
{
	return ray_dashboard(arg, req, ns, pod, port, path, 1);
}

static int
proxy_serves(void *arg, const char *ns, const char *pod, int port)
{
	return ray_serves(arg, ns, pod, port);
}

/* The API's proxies reach the local node's pods at their address. */
static int
pod_addr(void *arg, const char *ns, const char *pod, char *host, size_t size)
{
	return node_mgr_pod_addr(arg, ns, pod, host, size);
}

/* node_mgr_set_portmap's hook: port-forward to a simulated Ray head. */
static int
forward_port(void *arg, const char *ns, const char *pod, int port)
{
	return ray_forward_port(arg, ns, pod, port);
}

static void
on_closed_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static void
stop(struct daemon *d)
{
	if (d->stopping)
		return;
	d->stopping = 1;
	log_info("volrayd: shutting down");
	if (d->api != NULL)
		api_set_draining(d->api, 1);
	uv_stop(d->loop);
}

/*
 * Reload the scheduler's policy and the Lua controllers. Each is built
 * beside the running set and swapped only if it loads; a refused one
 * keeps what runs.
 */
static int
reload(void *arg, char **cause)
{
	struct daemon *d = arg;

	if (d->sched != NULL && sched_reload(d->sched, cause) != 0)
		return -1;
	if (d->ctrl != NULL && controller_reload(d->ctrl, cause) != 0) {
		log_error("volrayd: reload failed, keeping the running set: %s",
		    *cause);
		return -1;
	}
	log_info("volrayd: reloaded Lua scripts");
	return 0;
}

static void
on_signal(uv_signal_t *s, int signum)
{
	struct daemon *d = s->data;
	char *cause = NULL;

	if (signum == SIGHUP) {
		reload(d, &cause);
		free(cause);
		return;
	}
	stop(d);
}

/* The remote mirror's counts, at /metrics. */
static void
print_remote_metrics(FILE *f, void *arg)
{
	remote_print_metrics(f, arg);
}

/* The node runtimes' counts, at /metrics. */
static void
print_node_metrics(FILE *f, void *arg)
{
	struct node_stats ns;

	node_mgr_stats(arg, &ns);
	fprintf(f, "# TYPE volray_node_managed_nodes gauge\n"
	    "volray_node_managed_nodes %llu\n"
	    "# TYPE volray_node_managed_pods gauge\n"
	    "volray_node_managed_pods %llu\n"
	    "# TYPE volray_node_pods_waiting gauge\n"
	    "volray_node_pods_waiting %llu\n"
	    "# TYPE volray_node_pod_status_writes_total counter\n"
	    "volray_node_pod_status_writes_total %llu\n"
	    "# TYPE volray_node_container_starts_total counter\n"
	    "volray_node_container_starts_total %llu\n",
	    (unsigned long long)ns.nodes, (unsigned long long)ns.pods,
	    (unsigned long long)ns.waiting,
	    (unsigned long long)ns.status_writes,
	    (unsigned long long)ns.starts);
	node_mgr_print_usage(f, arg);
}

/* The store, the registry and the client the workers use; CRDs, RBAC. */
static int
start_store(struct daemon *d, char **cause)
{
	char crds[PATH_MAX];

	resource_init();
	/* What kubectl explain says of the built-in kinds: optional. */
	snprintf(crds, sizeof crds, "%s/openapi", d->f.share_dir);
	if (resource_load_schemas(crds, cause) != 0 || *cause != NULL) {
		log_warn("volrayd: schemas of built-in kinds: %s", *cause);
		free(*cause);
		*cause = NULL;
	}
	sched_derive();
	if (d->f.netcd > 0) {
		if (volrayd_etcd_open(d->loop, &d->f, &d->st, cause) != 0) {
			log_error("volrayd: opening the store on etcd %s: %s",
			    d->f.etcd_servers[0], *cause);
			return -1;
		}
		crdfollow_start(d->st);
	} else if (store_open(d->loop, d->f.data_dir, &d->st, cause) != 0) {
		log_error("volrayd: opening the store: %s", *cause);
		return -1;
	}
	log_info("volrayd: store at revision %llu",
	    (unsigned long long)store_rev(d->st));
	d->rg = registry_new(d->st);
	d->client = embedded_new(d->st, d->rg);
	admission_set_toleration_seconds(d->f.not_ready_seconds,
	    d->f.unreachable_seconds);
	/* No CA (--plain-http): no kube-root-ca.crt, so no token volumes. */
	admission_set_token_volumes(!d->f.plain_http);
	d->hub = watch_hub_new(d->loop, d->st);
	if (d->f.watch_history > 0)
		watch_set_history(d->hub, d->f.watch_history);
	if (d->f.request_timeout > 0)
		http_set_timeouts((unsigned)d->f.request_timeout * 1000,
		    300 * 1000);
	d->gc = gc_new(d->rg, d->st);
	snprintf(crds, sizeof crds, "%s/crds", d->f.share_dir);
	if (registry_bootstrap(d->rg, crds, cause) != 0) {
		log_error("volrayd: bootstrap: %s", *cause ? *cause : "failed");
		return -1;
	}
	log_info("volrayd: CRDs, Lua and policies from %s", d->f.share_dir);
	/* RBAC before anything acts: the controllers ask it from their start. */
	d->rbac = rbac_new(d->st, d->rg);
	if (rbac_bootstrap(d->rbac, cause) != 0) {
		log_error("volrayd: RBAC bootstrap policy: %s", *cause);
		return -1;
	}
	if (d->f.always_allow) {
		rbac_set_always_allow(d->rbac, 1);
		log_warn("volrayd: --authorization-mode=AlwaysAllow: every "
		    "authenticated user may do everything");
	}
	gc_sweep(d->gc);
	return 0;
}

/* One Lua host for the controllers and the scheduler: lua/, policies/,
   then each --policy-dir. */
static void
start_lua(struct daemon *d)
{
	char lroot[PATH_MAX], proot[PATH_MAX];
	const char **roots = xcalloc(d->f.npolicy + 3, sizeof *roots);
	struct luahost_limits lim = { (size_t)d->f.lua_memory_mb << 20,
	    d->f.lua_instructions };
	int i;

	snprintf(lroot, sizeof lroot, "%s/lua", d->f.share_dir);
	snprintf(proot, sizeof proot, "%s/policies", d->f.share_dir);
	roots[0] = lroot;
	roots[1] = proot;
	for (i = 0; i < d->f.npolicy; i++)
		roots[2 + i] = d->f.policy_dirs[i];
	d->lua = luahost_new(roots, d->f.npolicy + 2, &lim);
	free(roots);
}

/* This machine's Node name: the host name, lowercase (a DNS name). */
static void
local_node_name(char *host, size_t size)
{
	if (gethostname(host, size - 1) != 0 || host[0] == '\0')
		snprintf(host, size, "localhost");
	host[size - 1] = '\0';
	for (char *c = host; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
}

static int start_nodes(struct daemon *, char **);
static void start_sched_endpoint(struct daemon *);
static void set_http_self(struct daemon *);
static int start_controllers(struct daemon *, client *, char **);
static int start_scheduler(struct daemon *, client *, char **);
static void elect(struct daemon *, const char *lease, leader **);
/* The one daemon, for the leader election's callbacks. */
static struct daemon *daemon_of;

/*
 * The workers above the client seam: controllers, scheduler, node
 * runtimes, Ray heads and node lifecycle, each given the client.
 */
static int
start_workers(struct daemon *d, char **cause)
{
	int roles = d->f.roles;

	if ((roles & ROLE_NODES) && start_nodes(d, cause) != 0)
		return -1;
	if (roles & ROLE_SCHEDULER)
		start_sched_endpoint(d);
	if (d->leader_elect) {
		/* The roles that want one writer start when elected. */
		if (roles & ROLE_CONTROLLERS)
			elect(d, "volray-controllers", &d->elect_ctrl);
		if (roles & ROLE_SCHEDULER)
			elect(d, "volray-scheduler", &d->elect_sched);
		return 0;
	}
	if ((roles & ROLE_CONTROLLERS) && start_controllers(d, d->client,
	    cause) != 0)
		return -1;
	if ((roles & ROLE_SCHEDULER) && start_scheduler(d, d->client,
	    cause) != 0)
		return -1;
	if (roles & (ROLE_CONTROLLERS | ROLE_SCHEDULER))
		log_info("volrayd: reloaded Lua scripts");
	return 0;
}

/*
 * Against a remote API, the scheduler's endpoint: the API server relays
 * explain requests there, at the URL the scheduler's Lease advertises.
 * Not being able to listen costs explain through the API, not the
 * scheduler: said, and gone on.
 */
static void
start_sched_endpoint(struct daemon *d)
{
	char *cause = NULL;

	d->sched_ep = volrayd_sched_endpoint_start(d->loop, d->client, &d->f,
	    d->remote_ca, d->sched_url, sizeof d->sched_url, &cause);
	if (d->sched_ep == NULL) {
		if (cause != NULL)
			log_warn("volrayd: no scheduler endpoint, so no explain "
			    "through the API: %s", cause);
		free(cause);
		d->sched_url[0] = '\0';
		return;
	}
	node_endpoint_set_handler(d->sched_ep, "/volray/explain/",
	    volrayd_explain_serve, &d->sched);
	if (!d->leader_elect)
		log_warn("volrayd: without leader election the API server "
		    "cannot find the scheduler's endpoint (its Lease names it): "
		    "explain through the API answers 503");
}

/* The PEM of the CA clients verify the API with: ours, or the remote's. */
static void
root_ca(struct daemon *d)
{
	const char *file = d->rm != NULL ? d->remote_ca : d->ca_file;
	FILE *f = file != NULL ? fopen(file, "r") : NULL;
	char buf[65536];
	size_t n;

	if (f == NULL || d->root_ca != NULL) {
		if (f != NULL)
			fclose(f);
		return;
	}
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (n > 0)
		d->root_ca = xstrdup(buf);
}

/* The Lua controllers and the node lifecycle controller, writing
   through c. */
static int
start_controllers(struct daemon *d, client *c, char **cause)
{
	d->ctrl = controller_new(d->loop, c, d->lua);
	controller_set_authorizer(d->ctrl, d->rbac);
	controller_set_batch_scheduler(d->ctrl, d->f.batch_scheduler);
	root_ca(d);
	controller_set_root_ca(d->ctrl, d->root_ca);
	controller_set_selection(d->ctrl, d->f.controllers);
	d->http = luahttp_new(d->loop);
	controller_set_http(d->ctrl, d->http);
	if (d->api != NULL || d->rm != NULL)
		set_http_self(d);
	if (controller_reload(d->ctrl, cause) != 0) {
		log_error("volrayd: %s", *cause);
		return -1;
	}
	/* Node health for every Node: Unknown, taints, evictions. */
	d->life = lifecycle_new(d->loop, c, d->nodes != NULL ?
	    node_mgr_wheel(d->nodes) : wheel_new(d->loop), d->f.node_grace_ms);
	lifecycle_start(d->life);
	return 0;
}

/* The scheduler, binding pending pods through c. */
static int
start_scheduler(struct daemon *d, client *c, char **cause)
{
	d->sched = sched_new(d->loop, c, d->lua);
	sched_set_explain_sessions(d->sched, d->f.explain_sessions);
	if (sched_set_record_sessions(d->sched, d->f.record_dir,
	    d->f.record_keep, cause) != 0) {
		log_error("volrayd: %s", *cause);
		return -1;
	}
	if (sched_reload(d->sched, cause) != 0) {
		log_error("volrayd: %s", *cause);
		return -1;
	}
	sched_start(d->sched);
	return 0;
}

static int
is_leader(void *arg)
{
	return leader_is_leader(arg);
}

/* Elected: the role starts, writing through a client gated on the
   Lease, so that no write of it leaves once the Lease may have passed. */
static void
on_elected(void *arg)
{
	leader **slot = arg;
	struct daemon *d = daemon_of;
	char *cause = NULL;
	int rc;

	if (slot == &d->elect_ctrl)
		rc = start_controllers(d, client_gated(d->client, is_leader,
		    *slot), &cause);
	else
		rc = start_scheduler(d, client_gated(d->client, is_leader,
		    *slot), &cause);
	if (rc != 0)
		exit(1);
	d->ready = 1;
}

/* As kube-scheduler and kube-controller-manager: a leader that lost its
   Lease exits, and its supervisor starts it again as a candidate. */
static void
on_deposed(void *arg)
{
	(void)arg;
	log_error("volrayd: leader election lost; exiting");
	exit(1);
}

static void
elect(struct daemon *d, const char *lease, leader **slot)
{
	struct leader_conf lc;

	memset(&lc, 0, sizeof lc);
	lc.ns = d->f.leader_ns;
	lc.name = lease;
	lc.lease_ms = (unsigned)d->f.lease_ms;
	lc.renew_ms = (unsigned)d->f.renew_ms;
	lc.retry_ms = (unsigned)d->f.retry_ms;
	lc.release_on_cancel = 1;
	if (slot == &d->elect_sched && d->sched_url[0] != '\0') {
		lc.note_key = "volray.io/endpoint";
		lc.note_value = d->sched_url;
	}
	lc.on_started = on_elected;
	lc.on_stopped = on_deposed;
	lc.arg = slot;
	if ((*slot = leader_new(d->loop, d->client, &lc)) == NULL) {
		log_error("volrayd: leader election for %s: bad settings",
		    lease);
		exit(2);
	}
}

/*
 * The node runtimes (simulated nodes and the local node, with the pods
 * bound to them) and, with the ray role, the Ray heads on them.
 */
static int
start_nodes(struct daemon *d, char **cause)
{
	char host[256] = "", *self;

	d->nodes = node_mgr_new(d->loop, d->client);
	if (d->rg != NULL && d->authn != NULL) {
		d->sa_tokens = hmap_new();
		node_mgr_set_token_hook(d->nodes, sa_token, d);
	}
	if (d->rg != NULL)
		registry_set_pod_runtime(d->rg, node_mgr_has_runtime, d->nodes);
	metrics_add_source(print_node_metrics, d->nodes);
	node_mgr_set_lease_duration(d->nodes, d->f.node_lease_seconds);
	if (!d->f.no_local_node)
		local_node_name(host, sizeof host);
	node_mgr_set_local(d->nodes, d->f.data_dir, d->f.no_local_node ?
	    NULL : host);
	rayimage_set(d->nodes, d->f.ray_dir, d->f.ray_emulated);
	node_mgr_set_shim(d->nodes, shim_path());
	if (d->f.no_virtual_nodes || d->f.virtual_selector != NULL)
		node_mgr_set_virtual(d->nodes, !d->f.no_virtual_nodes,
		    d->f.virtual_selector != NULL ? selector_parse_labels(
		    d->f.virtual_selector, NULL) : NULL);
	/* An agent's: the API server of another process reaches it. */
	d->endpoint = volrayd_endpoint_start(d->loop, d->client, d->nodes,
	    &d->f, d->remote_ca, cause);
	if (d->endpoint == NULL && *cause != NULL) {
		log_error("volrayd: %s", *cause);
		return -1;
	}
	if (d->endpoint != NULL)
		node_endpoint_set_mgr(d->endpoint, d->nodes);
	/* Ray heads: the Jobs and Serve APIs of every head pod served here. */
	if (d->f.roles & ROLE_RAY)
		d->ray = ray_new(d->loop, d->client, d->nodes);
	if (d->ray != NULL) {
		char *hd = util_printf("%s/ray-history", d->f.data_dir);

		ray_set_history(d->ray, hd, d->f.ray_history_max,
		    d->f.ray_history_bytes);
		ray_set_data_dir(d->ray, d->f.data_dir);
		free(hd);
	}
	if (d->ray != NULL && d->endpoint != NULL)
		node_endpoint_set_proxy(d->endpoint, proxy_dashboard,
		    proxy_serves, d->ray);
	if (d->ray != NULL && d->nodes != NULL) {
		node_mgr_set_portmap(d->nodes, forward_port, d->ray);
		node_mgr_set_sim_effect(d->nodes, ray_sim_effect,
		    ray_sim_effect_cancel, d->ray);
	}
	if (d->ray != NULL && d->rg != NULL) {
		/* The pods' way to the API: this process's, when it serves
		   one. */
		self = self_url(d);
		ray_set_pod_env(d->ray, ray_bin_dir(), self, d->ca_file,
		    pod_token, d);
		free(self);
	}
	node_mgr_start(d->nodes);
	if (d->ray != NULL)
		ray_start(d->ray);
	return 0;
}

/* The remote API's token, for volray.http's calls to it. */
static char *
remote_token(void *arg, const char *user)
{
	struct daemon *d = arg;

	(void)user;
	return d->remote_token != NULL ? xstrdup(d->remote_token) : NULL;
}

/*
 * volray.http's own API: this process's when it serves one, else the
 * remote API (its service proxy reaches the Ray heads), as the
 * kubeconfig's user.
 */
static void
set_http_self(struct daemon *d)
{
	char *self;

	if (d->api == NULL && d->rm != NULL) {
		luahttp_set_self_cert(d->http, d->remote_cert,
		    d->remote_cert_len, d->remote_key, d->remote_key_len);
		luahttp_set_self(d->http, remote_server(d->rm), d->remote_ca,
		    remote_token, d);
		luahttp_set_node_proxy(d->http, d->remote_foreign);
		return;
	}
	self = self_url(d);
	luahttp_set_self(d->http, self, d->ca_file, controller_token, d);
	free(self);
}

/*
 * The Kubernetes API on --listen, with its limits, authn and RBAC. It
 * binds before the other roles start, so that they (the pods' way to the
 * API, volray.http's) know the port the kernel chose for HOST:0; no
 * request is read before the loop runs, after wire_api.
 */
static int
start_api(struct daemon *d, char **cause)
{
	struct limits_conf lc = { d->f.max_readonly, d->f.max_mutating,
	    d->f.user_qps, d->f.user_burst, d->f.max_watches };

	d->api = api_new(d->loop, d->st, d->rg, d->hub, d->f.data_dir);
	api_set_reload(d->api, reload, d);
	api_set_authn(d->api, d->authn);
	api_set_authorizer(d->api, d->rbac);
	api_set_client(d->api, d->client);
	d->limits = limits_new(&lc);
	api_set_limits(d->api, d->limits);
	if (http_server_listen(d->loop, d->f.host, d->f.port, api_handle,
	    d->api, &d->srv, cause) != 0) {
		log_error("volrayd: listen %s:%d: %s", d->f.host, d->f.port,
		    *cause);
		return -1;
	}
	/* --listen HOST:0: the kernel's choice, in the kubeconfig and log. */
	d->f.port = http_server_port(d->srv);
	if (d->tls != NULL)
		http_server_use_tls(d->srv, d->tls);
	api_set_server(d->api, d->srv);
	return 0;
}

/*
 * The API for the local node's pods in namespaces of their own: the same
 * server on their gateway's address, in the node's namespace
 * (podnet.c), where the kubernetes Service's ClusterIP leads.
 */
static void
serve_pods(struct daemon *d)
{
	char *cause = NULL;
	int r;

	if (podnet_enter() != 0) {
		log_error("volrayd: the pods' network: %s", strerror(errno));
		return;
	}
	r = http_server_listen(d->loop, podnet_gateway(), d->f.port,
	    api_handle, d->api, &d->pod_srv, &cause);
	podnet_leave();
	if (r != 0) {
		log_error("volrayd: the API for pods on %s:%d: %s",
		    podnet_gateway(), d->f.port, cause);
		free(cause);
		return;
	}
	if (d->tls != NULL)
		http_server_use_tls(d->pod_srv, d->tls);
	if (d->ray != NULL) {
		char *url = util_printf("%s://%s:%d", d->f.plain_http ? "http" :
		    "https", podnet_gateway(), d->f.port);

		ray_set_pods_api(d->ray, url);
		free(url);
	}
	podnet_refresh();
	log_info("volrayd: the local node's pods reach the API on "
	    "%s:%d", podnet_gateway(), d->f.port);
}

/* The API's links to the roles started after it. */
static void
wire_api(struct daemon *d)
{
	char *cert = NULL, *key = NULL, *cause = NULL;

	/* The nodes of other processes (agents): their endpoints, with a
	   certificate of our CA (plain HTTP has none). */
	if (!d->f.plain_http && volrayd_kubelet_client(d->f.data_dir, &cert,
	    &key, &cause) != 0) {
		log_warn("volrayd: no client certificate for the nodes' "
		    "endpoints: %s", cause);
		free(cause);
	}
	api_set_nodes(d->api, d->nodes != NULL ? node_mgr_has_runtime : NULL,
	    d->nodes, cert, key);
	if (d->nodes != NULL) {
		api_set_usage(d->api, node_mgr_usage, d->nodes);
		api_set_streams(d->api, node_exec_serve, node_attach_serve,
		    node_portforward_serve, d->nodes);
		api_set_pod_addr(d->api, pod_addr, podnet_socket, d->nodes);
	}
	free(cert);
	free(key);
	api_set_policy_sources(d->api, d->ctrl, d->sched);
	if (d->ray != NULL) {
		api_set_proxy(d->api, proxy_dashboard, proxy_serves, d->ray);
		api_set_history(d->api, history_serve, d->ray);
	}
	registry_ensure_api_service(d->rg, d->f.port);
	if (podnet_gateway() != NULL)
		serve_pods(d);
	if (d->http != NULL)
		set_http_self(d);
}

static void
start_signals(struct daemon *d)
{
	uv_signal_init(d->loop, &d->sigterm);
	uv_signal_init(d->loop, &d->sigint);
	uv_signal_init(d->loop, &d->sighup);
	d->sigterm.data = d->sigint.data = d->sighup.data = d;
	uv_signal_start(&d->sigterm, on_signal, SIGTERM);
	uv_signal_start(&d->sigint, on_signal, SIGINT);
	uv_signal_start(&d->sighup, on_signal, SIGHUP);
}

/* Drain: no new connections, flush the log, answer what is durable. */
static void
shutdown_daemon(struct daemon *d)
{
	if (d->ray != NULL)
		ray_shutdown(d->ray);
	node_endpoint_free(d->endpoint);
	node_endpoint_free(d->sched_ep);
	d->endpoint = NULL;
	if (d->nodes != NULL)
		node_mgr_shutdown(d->nodes);
	if (d->elect_ctrl != NULL)
		leader_free(d->elect_ctrl);
	if (d->elect_sched != NULL)
		leader_free(d->elect_sched);
	if (d->srv != NULL)
		http_server_close(d->srv);
	if (d->pod_srv != NULL)
		http_server_close(d->pod_srv);
	if (d->st != NULL)
		store_close(d->st);
	uv_walk(d->loop, on_closed_walk, NULL);
	uv_run(d->loop, UV_RUN_NOWAIT);
	if (d->tls != NULL)
		tls_ctx_free(d->tls);
	if (d->authn != NULL)
		authn_free(d->authn);
	if (d->limits != NULL)
		limits_free(d->limits);
	if (d->rbac != NULL)
		rbac_free(d->rbac);
	log_info("volrayd: stopped");
}

/* The informers have listed: the roles can start on the mirror. */
static void
on_remote_synced(void *arg)
{
	struct daemon *d = arg;
	char *cause = NULL;

	log_info("volrayd: the mirror of %s is filled; starting %s",
	    remote_server(d->rm), volrayd_roles_text(d->f.roles & ~ROLE_API));
	if (start_workers(d, &cause) != 0)
		exit(1);
	if (!d->leader_elect)
		d->ready = 1;
}

/* The remote API's CA as a file, for volray.http (DATA_DIR/remote-ca.crt). */
static int
write_remote_ca(struct daemon *d, const struct kubecfg *kc, char **cause)
{
	char *path = util_printf("%s/remote-ca.crt", d->f.data_dir);
	FILE *f = fopen(path, "w");
	int ok = f != NULL && fwrite(kc->ca.data, 1, kc->ca.len, f) ==
	    kc->ca.len;

	if (f != NULL && fclose(f) != 0)
		ok = 0;
	if (!ok) {
		*cause = util_printf("writing %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	d->remote_ca = path;
	return 0;
}

/*
 * The roles' client when they run against another API server: the
 * kubeconfig (or the in-cluster config), the CRDs there, and a remote
 * client whose informers start filling the mirror when the loop runs.
 */
static int
start_remote(struct daemon *d, char **cause)
{
	struct remote_conf rc;
	struct kubecfg *kc;
	char crds[PATH_MAX], host[256] = "", *by_node = NULL, *by_name = NULL;
	const char *fields[] = { "pods", NULL, "nodes", NULL,
	    "leases.coordination.k8s.io", NULL, NULL };
	const char **kinds;
	cJSON *docs;
	int r;

	if (d->f.kubeconfig != NULL && strcmp(d->f.kubeconfig, "") != 0)
		r = kubecfg_load(d->f.kubeconfig, d->f.context, &kc, cause);
	else
		r = kubecfg_in_cluster(&kc, cause);
	if (r != 0)
		return -1;
	if (kc->token != NULL)
		d->remote_token = xstrdup(kc->token);
	if (kc->cert.data != NULL && kc->key.data != NULL) {
		d->remote_cert = xmalloc(kc->cert.len + 1);
		memcpy(d->remote_cert, kc->cert.data, kc->cert.len + 1);
		d->remote_cert_len = kc->cert.len;
		d->remote_key = xmalloc(kc->key.len + 1);
		memcpy(d->remote_key, kc->key.data, kc->key.len + 1);
		d->remote_key_len = kc->key.len;
	}
	if (kc->ca.file != NULL)
		d->remote_ca = xstrdup(kc->ca.file);
	else if (kc->ca.data != NULL && write_remote_ca(d, kc, cause) != 0) {
		kubecfg_free(kc);
		return -1;
	}
	snprintf(crds, sizeof crds, "%s/crds", d->f.share_dir);
	if ((docs = volrayd_crds_load(crds, cause)) == NULL) {
		kubecfg_free(kc);
		return -1;
	}
	memset(&rc, 0, sizeof rc);
	rc.qps = d->f.kube_qps;
	rc.burst = d->f.kube_burst;
	rc.on_synced = on_remote_synced;
	rc.arg = d;
	/* Only the kinds the roles read; an agent of its own machine
	   alone, as a kubelet, only its Node and the pods bound to it. */
	kinds = volrayd_remote_kinds(d->f.roles);
	rc.resources = kinds;
	if ((d->f.roles & ~ROLE_RAY) == ROLE_NODES && d->f.no_virtual_nodes &&
	    !d->f.no_local_node) {
		local_node_name(host, sizeof host);
		by_node = util_printf("spec.nodeName=%s", host);
		by_name = util_printf("metadata.name=%s", host);
		fields[1] = by_node;
		fields[3] = fields[5] = by_name;
		rc.field_selectors = fields;
	}
	d->rm = remote_new(d->loop, kc, &rc, cause);
	free(kinds);
	free(by_node);
	free(by_name);
	kubecfg_free(kc);
	if (d->rm == NULL ||
	    volrayd_crds_ensure(d->rm, docs, !d->f.no_install_crds, cause) !=
	    0) {
		cJSON_Delete(docs);
		return -1;
	}
	cJSON_Delete(docs);
	if (d->f.roles & ROLE_CONTROLLERS)
		d->remote_foreign = volrayd_remote_foreign(d->rm);
	d->client = remote_client(d->rm);
	metrics_add_source(print_remote_metrics, d->rm);
	log_info("volrayd: roles %s against %s", volrayd_roles_text(
	    d->f.roles & ~ROLE_API), remote_server(d->rm));
	return 0;
}

int
main(int argc, char **argv)
{
	struct daemon d;
	char *cause = NULL;
	int rc;

	memset(&d, 0, sizeof d);
	if ((rc = volrayd_flags_parse(&d.f, argc, argv)) != 0)
		return rc == 1 ? 0 : rc;
	if (d.f.share_dir == NULL &&
	    (d.f.share_dir = volrayd_share_dir(&cause)) == NULL) {
		fprintf(stderr, "volrayd: %s\n", cause);
		return 1;
	}
	if (!volrayd_has_crds(d.f.share_dir)) {
		fprintf(stderr, "volrayd: --share-dir %s has no crds/ "
		    "directory\n", d.f.share_dir);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Grow malloc's heaps 16 MiB at a time, not by the page: a session
	 * builds 100,000 tasks on its thread's arena, and growing it by
	 * mprotect in small steps was a tenth of a cold session's time
	 * (measured when that session still parsed every pod). glibc's
	 * malloc only: tcmalloc, when linked (configure), ignores it.
	 */
	mallopt(M_TOP_PAD, 16 << 20);
	if (util_mkdirs(d.f.data_dir, 0700) != 0) {
		fprintf(stderr, "volrayd: cannot create %s: %s\n",
		    d.f.data_dir, strerror(errno));
		return 1;
	}
	d.loop = uv_default_loop();
	if (d.f.migrate) {
		resource_init();
		if (volrayd_etcd_migrate(d.loop, &d.f, &cause) != 0) {
			log_error("volrayd: --migrate-to-etcd: %s", cause);
			return 1;
		}
		return 0;
	}
	/* On etcd the credentials are the cluster's: the store comes first. */
	if ((d.f.roles & ROLE_API) && d.f.netcd > 0 &&
	    start_store(&d, &cause) != 0)
		return 1;
	if ((d.f.roles & ROLE_API) && security_init(&d, &cause) != 0) {
		log_error("volrayd: %s", cause);
		return 1;
	}
	daemon_of = &d;
	/* Alone, volray schedules the default scheduler's pods too; on a
	   cluster that has its own, only those named for it. */
	sched_set_names((const char *const *)d.f.scheduler_names,
	    d.f.nscheduler_names, d.f.kubeconfig == NULL);
	if (d.f.roles & ROLE_API) {
		if (d.f.netcd == 0 && start_store(&d, &cause) != 0)
			return 1;
	} else {
		resource_init();
		sched_derive();
	}
	/* Several replicas may run the roles: against a remote API, or
	   beside other API servers on one etcd. */
	d.leader_elect = d.f.leader_elect == -1 ? d.f.kubeconfig != NULL ||
	    d.f.netcd > 0 : d.f.leader_elect;
	if (d.f.kubeconfig != NULL && start_remote(&d, &cause) != 0) {
		log_error("volrayd: %s", cause);
		return 1;
	}
	if (d.f.roles & (ROLE_CONTROLLERS | ROLE_SCHEDULER))
		start_lua(&d);
	if ((d.f.roles & ROLE_API) && start_api(&d, &cause) != 0)
		return 1;
	/* Against a remote API the roles start once its mirror is full. */
	if (d.rm == NULL && start_workers(&d, &cause) != 0)
		return 1;
	if (d.api != NULL)
		wire_api(&d);
	if (d.f.metrics_port > 0 && volrayd_metrics_listen(d.loop,
	    d.f.metrics_host, d.f.metrics_port, &d.ready, &cause) != 0) {
		log_error("volrayd: --metrics-listen %s:%d: %s",
		    d.f.metrics_host, d.f.metrics_port, cause);
		return 1;
	}
	start_signals(&d);
	if ((d.f.roles & ROLE_API) && write_kubeconfig(&d, &cause) != 0) {
		log_error("volrayd: %s", cause);
		return 1;
	}
	if (d.api != NULL)
		api_set_ready(d.api, 1);
	if (d.rm == NULL && !d.leader_elect)
		d.ready = 1;
	looplag_start(d.loop);
	if (d.api != NULL)
		log_info("volrayd: roles %s; serving %s on %s:%d, kubeconfig "
		    "%s/kubeconfig", volrayd_roles_text(d.f.roles),
		    d.tls ? "HTTPS" : "plain HTTP", d.f.host, d.f.port,
		    d.f.data_dir);
	uv_run(d.loop, UV_RUN_DEFAULT);
	shutdown_daemon(&d);
	return 0;
}
