/*
 * volrayd: the daemon. It opens the store under --data-dir (replaying the
 * log), installs the built-in CRDs and namespaces, starts the watch hub,
 * garbage collector and HTTP API on one libuv loop, writes the kubeconfig
 * once the API is ready, and runs until SIGTERM (drain, flush, exit 0).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/http.h"
#include "api/watch.h"
#include "ctrl/controller.h"
#include "ctrl/luahost.h"
#include "lib/log.h"
#include "lib/util.h"
#include "registry/gc.h"
#include "registry/registry.h"
#include "registry/resource.h"
#include "store/store.h"

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/volray"
#endif

struct daemon {
	uv_loop_t *loop;
	char *data_dir;
	char *share_dir;
	char host[256];
	int port;
	char **policy_dirs;
	int npolicy;
	int no_local_node;
	int watch_history;
	int lua_memory_mb;
	unsigned long long lua_instructions;
	int request_timeout;
	store *st;
	registry *rg;
	watch_hub *hub;
	gc *gc;
	luahost *lua;
	controller_rt *ctrl;
	api *api;
	http_server *srv;
	uv_signal_t sigterm, sigint, sighup;
	int stopping;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: volrayd [--data-dir DIR] [--listen HOST:PORT] "
	    "[--policy-dir DIR]... [--no-local-node]\n"
	    "               [--share-dir DIR] [--watch-history N] "
	    "[--request-timeout SECONDS]\n"
	    "               [--lua-memory MB] [--lua-instructions N] "
	    "[--debug]\n");
}

static int
has_crds(const char *dir)
{
	char path[PATH_MAX];
	struct stat sb;

	return snprintf(path, sizeof path, "%s/crds", dir) < (int)sizeof path &&
	    stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/*
 * Where crds/, lua/ and policies/ are when --share-dir is not given: the
 * source tree when this binary runs from the build tree it was built in
 * (in-tree or out-of-tree), else beside the binary, else the installed
 * PKGDATADIR. NULL with *cause naming every place looked in.
 */
static char *
share_dir_find(char **cause)
{
	const char *look[3];
	char exe[PATH_MAX], *slash, *places;
	ssize_t n;
	int nlook = 0, i;

	n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
#if defined(VOLRAY_SRCDIR) && defined(VOLRAY_BUILDDIR)
		{
			char built[PATH_MAX];

			if (realpath(VOLRAY_BUILDDIR, built) != NULL &&
			    strcmp(built, exe) == 0)
				look[nlook++] = VOLRAY_SRCDIR;
		}
#endif
		look[nlook++] = exe;
	}
	look[nlook++] = PKGDATADIR;
	for (i = 0; i < nlook; i++) {
		char real[PATH_MAX];

		if (has_crds(look[i]))
			return strdup(realpath(look[i], real) ? real : look[i]);
	}
	places = strdup("");
	for (i = 0; i < nlook; i++) {
		char *p = util_printf("%s%s%s/crds", places, i ? ", " : "",
		    look[i]);

		free(places);
		places = p;
	}
	*cause = util_printf("no CRD directory found (looked in %s); give "
	    "--share-dir DIR", places);
	free(places);
	return NULL;
}

static int
mkdir_p(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof buf, "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(buf, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int
is_loopback(const char *host)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (strcmp(host, "localhost") == 0)
		return 1;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return 0;
}

static int
parse_listen(struct daemon *d, const char *s)
{
	const char *colon = strrchr(s, ':');
	size_t hl;

	if (colon == NULL)
		return -1;
	hl = (size_t)(colon - s);
	if (hl >= sizeof d->host)
		return -1;
	if (s[0] == '[' && hl >= 2 && s[hl - 1] == ']') {
		memcpy(d->host, s + 1, hl - 2);
		d->host[hl - 2] = '\0';
	} else {
		memcpy(d->host, s, hl);
		d->host[hl] = '\0';
	}
	d->port = atoi(colon + 1);
	return d->port > 0 && d->port < 65536 ? 0 : -1;
}

/* Write DATA_DIR/kubeconfig atomically (temporary file, rename). */
static int
write_kubeconfig(struct daemon *d)
{
	char path[PATH_MAX], tmp[PATH_MAX], token[40], server[300];
	FILE *f;

	util_uuid(token);
	if (strchr(d->host, ':') != NULL)
		snprintf(server, sizeof server, "http://[%s]:%d", d->host,
		    d->port);
	else
		snprintf(server, sizeof server, "http://%s:%d", d->host,
		    d->port);
	snprintf(path, sizeof path, "%s/kubeconfig", d->data_dir);
	snprintf(tmp, sizeof tmp, "%s/kubeconfig.tmp", d->data_dir);
	if ((f = fopen(tmp, "w")) == NULL)
		return -1;
	fprintf(f, "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: volray\n"
	    "  cluster:\n"
	    "    server: %s\n"
	    "users:\n"
	    "- name: volray-admin\n"
	    "  user:\n"
	    "    token: %s\n"
	    "contexts:\n"
	    "- name: volray\n"
	    "  context:\n"
	    "    cluster: volray\n"
	    "    user: volray-admin\n"
	    "    namespace: default\n"
	    "current-context: volray\n", server, token);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		return -1;
	}
	fclose(f);
	chmod(tmp, 0600);
	return rename(tmp, path);
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
	api_set_draining(d->api, 1);
	uv_stop(d->loop);
}

/* Reload Lua controllers (and, later, policies): all or nothing. */
static int
reload(void *arg, char **cause)
{
	struct daemon *d = arg;

	if (controller_reload(d->ctrl, cause) != 0) {
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

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "data-dir", required_argument, NULL, 'd' },
		{ "listen", required_argument, NULL, 'l' },
		{ "policy-dir", required_argument, NULL, 'p' },
		{ "no-local-node", no_argument, NULL, 'N' },
		{ "share-dir", required_argument, NULL, 's' },
		{ "watch-history", required_argument, NULL, 'W' },
		{ "request-timeout", required_argument, NULL, 'T' },
		{ "lua-memory", required_argument, NULL, 'M' },
		{ "lua-instructions", required_argument, NULL, 'I' },
		{ "debug", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct daemon d;
	char *cause = NULL, crds[PATH_MAX];
	int c;

	memset(&d, 0, sizeof d);
	d.data_dir = strdup("/var/lib/volray");
	snprintf(d.host, sizeof d.host, "127.0.0.1");
	d.port = 6443;
	d.lua_memory_mb = 256;
	d.lua_instructions = 200000000ULL;
	while ((c = getopt_long(argc, argv, "d:l:p:Ns:W:T:M:I:DhV", longopts, NULL)) !=
	    -1) {
		switch (c) {
		case 'd':
			free(d.data_dir);
			d.data_dir = strdup(optarg);
			break;
		case 'l':
			if (parse_listen(&d, optarg) != 0) {
				fprintf(stderr, "volrayd: bad --listen %s: want "
				    "HOST:PORT\n", optarg);
				return 2;
			}
			break;
		case 'p':
			d.policy_dirs = realloc(d.policy_dirs,
			    (d.npolicy + 1) * sizeof *d.policy_dirs);
			d.policy_dirs[d.npolicy++] = strdup(optarg);
			break;
		case 'N':
			d.no_local_node = 1;
			break;
		case 's':
			free(d.share_dir);
			d.share_dir = strdup(optarg);
			break;
		case 'W':
			d.watch_history = atoi(optarg);
			if (d.watch_history < 1) {
				fprintf(stderr, "volrayd: bad --watch-history "
				    "%s\n", optarg);
				return 2;
			}
			break;
		case 'T':
			d.request_timeout = atoi(optarg);
			if (d.request_timeout < 1) {
				fprintf(stderr, "volrayd: bad --request-timeout "
				    "%s\n", optarg);
				return 2;
			}
			break;
		case 'M':
			d.lua_memory_mb = atoi(optarg);
			if (d.lua_memory_mb < 4) {
				fprintf(stderr, "volrayd: --lua-memory wants "
				    "megabytes, at least 4\n");
				return 2;
			}
			break;
		case 'I':
			d.lua_instructions = strtoull(optarg, NULL, 10);
			if (d.lua_instructions < 100000) {
				fprintf(stderr, "volrayd: --lua-instructions "
				    "wants at least 100000\n");
				return 2;
			}
			break;
		case 'D':
			log_set_level(LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("volrayd %s\n", PACKAGE_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!is_loopback(d.host)) {
		fprintf(stderr, "volrayd: --listen %s: plain HTTP is allowed "
		    "only on loopback, and TLS is not available in this "
		    "build\n", d.host);
		return 2;
	}
	if (d.share_dir == NULL && (d.share_dir = share_dir_find(&cause)) ==
	    NULL) {
		fprintf(stderr, "volrayd: %s\n", cause);
		return 1;
	}
	if (!has_crds(d.share_dir)) {
		fprintf(stderr, "volrayd: --share-dir %s has no crds/ "
		    "directory\n", d.share_dir);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (mkdir_p(d.data_dir) != 0) {
		fprintf(stderr, "volrayd: cannot create %s: %s\n", d.data_dir,
		    strerror(errno));
		return 1;
	}
	d.loop = uv_default_loop();
	resource_init();
	if (store_open(d.loop, d.data_dir, &d.st, &cause) != 0) {
		log_error("volrayd: opening the store: %s", cause);
		return 1;
	}
	log_info("volrayd: store at revision %llu",
	    (unsigned long long)store_rev(d.st));
	d.rg = registry_new(d.st);
	d.hub = watch_hub_new(d.loop, d.st);
	if (d.watch_history > 0)
		watch_set_history(d.hub, d.watch_history);
	if (d.request_timeout > 0)
		http_set_timeouts((unsigned)d.request_timeout * 1000,
		    300 * 1000);
	d.gc = gc_new(d.rg, d.st);
	snprintf(crds, sizeof crds, "%s/crds", d.share_dir);
	if (registry_bootstrap(d.rg, crds, &cause) != 0) {
		log_error("volrayd: bootstrap: %s", cause ? cause : "failed");
		return 1;
	}
	log_info("volrayd: CRDs, Lua and policies from %s", d.share_dir);
	gc_sweep(d.gc);
	{
		char lroot[PATH_MAX], proot[PATH_MAX];
		const char **roots = calloc(d.npolicy + 3, sizeof *roots);
		struct luahost_limits lim = { (size_t)d.lua_memory_mb << 20,
		    d.lua_instructions };
		int i;

		snprintf(lroot, sizeof lroot, "%s/lua", d.share_dir);
		snprintf(proot, sizeof proot, "%s/policies", d.share_dir);
		roots[0] = lroot;
		roots[1] = proot;
		for (i = 0; i < d.npolicy; i++)
			roots[2 + i] = d.policy_dirs[i];
		d.lua = luahost_new(roots, d.npolicy + 2, &lim);
		free(roots);
	}
	d.ctrl = controller_new(d.loop, d.st, d.rg, d.lua);
	if (reload(&d, &cause) != 0)
		return 1;
	d.api = api_new(d.loop, d.st, d.rg, d.hub, d.data_dir);
	api_set_reload(d.api, reload, &d);
	if (http_server_listen(d.loop, d.host, d.port, api_handle, d.api,
	    &d.srv, &cause) != 0) {
		log_error("volrayd: listen %s:%d: %s", d.host, d.port, cause);
		return 1;
	}
	api_set_server(d.api, d.srv);
	uv_signal_init(d.loop, &d.sigterm);
	uv_signal_init(d.loop, &d.sigint);
	uv_signal_init(d.loop, &d.sighup);
	d.sigterm.data = d.sigint.data = d.sighup.data = &d;
	uv_signal_start(&d.sigterm, on_signal, SIGTERM);
	uv_signal_start(&d.sigint, on_signal, SIGINT);
	uv_signal_start(&d.sighup, on_signal, SIGHUP);
	if (write_kubeconfig(&d) != 0) {
		log_error("volrayd: writing %s/kubeconfig: %s", d.data_dir,
		    strerror(errno));
		return 1;
	}
	api_set_ready(d.api, 1);
	log_info("volrayd: serving on %s:%d, kubeconfig %s/kubeconfig",
	    d.host, d.port, d.data_dir);
	uv_run(d.loop, UV_RUN_DEFAULT);

	/* Drain: no new connections, flush the log, answer what is durable. */
	http_server_close(d.srv);
	store_close(d.st);
	uv_walk(d.loop, on_closed_walk, NULL);
	uv_run(d.loop, UV_RUN_NOWAIT);
	log_info("volrayd: stopped");
	return 0;
}
