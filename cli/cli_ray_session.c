/*
 * volray ray session (cli_ray.c): forward local ports to a Ray head as
 * KubeRay's plugin does, by running `kubectl port-forward` on the head's
 * Service (the plugin runs kubectl too), again every 3 s when it fails,
 * until interrupted. A RayCluster forwards the dashboard (8265) and the
 * Ray client (10001), a RayJob its cluster's dashboard, a RayService its
 * dashboard and Serve (8000). kubectl gets this client's connection: its
 * --kubeconfig, --server, --token, --certificate-authority and
 * --insecure-skip-tls-verify.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_opt.h"
#include "cli_ray.h"
#include "lib/json.h"
#include "lib/util.h"

#define RETRY_S		3
#define NOT_FOUND	127	/* the child could not run kubectl */

struct port {
	const char *name;
	int port;
};

static const struct port dashboard = { "Ray Dashboard", 8265 };
static const struct port client = { "Ray Interactive Client", 10001 };
static const struct port serve = { "Ray Serve", 8000 };

static volatile sig_atomic_t stop;
static pid_t child;

static void
on_signal(int sig)
{
	stop = 1;
	if (child > 0)
		kill(child, sig);
}

/* The head Service of type/name, or NULL (reported); ports in *ports. */
static char *
head_service(const char *ns, const char *type, const char *name,
    const struct port **ports, int *n)
{
	struct cli_buf path = { 0 };
	const char *cl;
	char *svc = NULL;
	cJSON *o;

	cli_buf_printf(&path, "/apis/ray.io/v1/namespaces/%s/%ss/%s", ns, type,
	    name);
	o = cli_http_get_json(path.p, NULL);
	cli_buf_free(&path);
	if (o == NULL)
		return NULL;
	*n = 0;
	if (strcmp(type, "rayjob") == 0) {
		cl = json_str(o, "status.rayClusterName");
		if (cl == NULL || *cl == '\0')
			cli_color_errorf("RayJob %s has no RayCluster yet\n",
			    name);
		else
			svc = util_printf("%s-head-svc", cl);
		ports[(*n)++] = &dashboard;
	} else {
		svc = util_printf("%s-head-svc", name);
		ports[(*n)++] = &dashboard;
		ports[(*n)++] = strcmp(type, "rayservice") == 0 ? &serve :
		    &client;
	}
	cJSON_Delete(o);
	return svc;
}

static void
add(char **argv, int *n, const char *a, const char *b)
{
	argv[(*n)++] = (char *)a;
	if (b != NULL)
		argv[(*n)++] = (char *)b;
}

/* Run kubectl once: its exit status, NOT_FOUND when it is not there. */
static int
run(char **argv)
{
	int st;

	if ((child = fork()) < 0) {
		cli_color_errorf("fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		execvp(argv[0], argv);
		_exit(NOT_FOUND);
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	child = 0;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int
cli_ray_session(int argc, char **argv)
{
	const char *ns = cli_ray_ns(), *type = "raycluster", *name;
	const struct port *ports[2];
	const struct cli_http_conf *c = &cli_opts.conn;
	char *args[32], *svc, *target, fwd[2][16];
	int i, n = 0, np = 0, rc;

	if (argc != 1)
		return cli_opt_usage("ray", "usage: volray ray session "
		    "(RAYCLUSTER | TYPE/NAME)");
	name = argv[0];
	if (strchr(name, '/') != NULL) {
		if (strncmp(name, "raycluster/", 11) == 0)
			type = "raycluster";
		else if (strncmp(name, "rayjob/", 7) == 0)
			type = "rayjob";
		else if (strncmp(name, "rayservice/", 11) == 0)
			type = "rayservice";
		else
			return cli_opt_usage("ray", "unsupported resource "
			    "type: %s", name);
		name = strchr(name, '/') + 1;
	}
	if ((svc = head_service(ns, type, name, ports, &np)) == NULL)
		return CLI_FAIL;
	printf("Forwarding ports to service %s\n", svc);
	add(args, &n, "kubectl", NULL);
	if (c->kubeconfig != NULL)
		add(args, &n, "--kubeconfig", c->kubeconfig);
	if (c->server != NULL)
		add(args, &n, "--server", c->server);
	if (c->token != NULL)
		add(args, &n, "--token", c->token);
	if (c->ca_file != NULL)
		add(args, &n, "--certificate-authority", c->ca_file);
	if (c->insecure)
		add(args, &n, "--insecure-skip-tls-verify", NULL);
	target = util_printf("service/%s", svc);
	add(args, &n, "port-forward", "-n");
	add(args, &n, ns, target);
	for (i = 0; i < np; i++) {
		snprintf(fwd[i], sizeof fwd[i], "%d:%d", ports[i]->port,
		    ports[i]->port);
		add(args, &n, fwd[i], NULL);
		printf("%s: http://localhost:%d\n", ports[i]->name,
		    ports[i]->port);
	}
	args[n] = NULL;
	printf("\n");
	if (cli_opts.ray.verbose) {
		printf("Running:");
		for (i = 0; i < n; i++)
			printf(" %s", args[i]);
		printf("\n");
	}
	fflush(stdout);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (;;) {
		rc = run(args);
		if (rc == 0 || stop)
			break;
		if (rc == NOT_FOUND) {
			cli_color_errorf("kubectl not found on PATH: volray ray "
			    "session runs kubectl port-forward, as the kubectl "
			    "ray plugin does\n");
			break;
		}
		printf("failed to port-forward: exit status %d. Retrying in "
		    "%ds ...\n\n", rc, RETRY_S);
		fflush(stdout);
		sleep(RETRY_S);
		if (stop)
			break;
	}
	free(target);
	free(svc);
	return rc == 0 || stop ? CLI_OK : CLI_FAIL;
}
