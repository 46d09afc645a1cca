/*
 * ray: the Ray command line, for pods on volray's local node, where no
 * Ray is installed. `ray job submit|status|logs|stop|delete|list` speak
 * the Ray dashboard's Jobs REST API (served by volrayd for every head
 * pod) with Ray's flags, output lines and exit codes; `ray start ...
 * --block` blocks until SIGTERM so KubeRay's head and worker command
 * lines run unchanged; `ray health-check` asks whether the head answers
 * (KubeRay's wait-gcs-ready init container); `ray stop` stops the
 * `ray start --block` processes of the same pod (SIGTERM, SIGKILL after
 * the grace period, or at once with --force): they are found in /proc by
 * their command line, and by VOLRAY_POD_ROOT in their environment, which
 * is the pod's own (a process outside any pod stops only those outside
 * pods); Ray's own lines say how many it stopped.
 *
 * The dashboard address is --address, else RAY_API_SERVER_ADDRESS, else
 * RAY_DASHBOARD_ADDRESS, else RAY_ADDRESS, else http://127.0.0.1:8265
 * (http://HOST:PORT or HOST:PORT). Service host names do not resolve on
 * the local node, so when volrayd gave this pod its API
 * (VOLRAY_API_SERVER, VOLRAY_CA_FILE, VOLRAY_TOKEN, VOLRAY_NAMESPACE),
 * SVC.NS.svc.cluster.local:PORT, SVC.NS.svc:PORT, and SVC.NS:PORT or
 * SVC:PORT that do not resolve (or resolve to a cluster IP, 10.96.0.0/16,
 * as the pod's /etc/hosts says as root) are reached through the API
 * server's service proxy instead. Documented in ray(1).
 */
#include <sys/syscall.h>
#include <sys/types.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "lib/util.h"

#define RAY_VERSION "2.46.0"

struct conn {
	CURL *c;
	char *base;		/* URL the API paths are appended to */
	char *shown;		/* the address as the user gave it */
	char *ca;		/* CA file, for the service proxy */
	char *auth;		/* "Authorization: Bearer ..." or NULL */
	char *ray_auth;		/* Ray's token header (RAY_AUTH_TOKEN), or NULL */
};

struct buf {
	char *p;
	size_t n;
};

static size_t
on_data(char *p, size_t size, size_t n, void *arg)
{
	struct buf *b = arg;
	char *q = realloc(b->p, b->n + size * n + 1);

	if (q == NULL)
		return 0;
	b->p = q;
	memcpy(b->p + b->n, p, size * n);
	b->n += size * n;
	b->p[b->n] = '\0';
	return size * n;
}

static void
usage(void)
{
	fprintf(stderr,
	    "usage: ray job submit [--address A] [--submission-id ID] "
	    "[--no-wait]\n"
	    "                      [--runtime-env-json J] [--metadata-json J] "
	    "[--working-dir D]\n"
	    "                      [--entrypoint-num-cpus N] "
	    "[--entrypoint-num-gpus N]\n"
	    "                      [--entrypoint-memory N] "
	    "[--entrypoint-resources J] -- ENTRYPOINT...\n"
	    "       ray job status|stop|delete [--address A] ID\n"
	    "       ray job logs [--address A] [--follow] ID\n"
	    "       ray job list [--address A]\n"
	    "       ray start [--head | --address A] [--block] [...]\n"
	    "       ray health-check [--address HOST:PORT]\n"
	    "       ray stop [--force] [--grace-period SECONDS]\n"
	    "       ray --version\n");
	exit(2);
}

static int
resolves(const char *host)
{
	struct addrinfo *ai = NULL, hints;
	const unsigned char *a;
	int ok;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_INET;
	ok = getaddrinfo(host, NULL, &hints, &ai) == 0;
	/* A Service's cluster IP (10.96.0.0/16, from the pod's /etc/hosts)
	   is not routed on the local node: that is no way there either. */
	if (ok && ai->ai_addr->sa_family == AF_INET) {
		a = (const unsigned char *)&((struct sockaddr_in *)
		    (void *)ai->ai_addr)->sin_addr;
		if (a[0] == 10 && a[1] == 96)
			ok = 0;
	}
	if (ai != NULL)
		freeaddrinfo(ai);
	return ok;
}

/* Map a service host name to the API server's service proxy. */
static int
service_proxy(struct conn *k, const char *host, const char *port)
{
	const char *api = getenv("VOLRAY_API_SERVER");
	const char *myns = getenv("VOLRAY_NAMESPACE");
	const char *tok = getenv("VOLRAY_TOKEN");
	char svc[256], ns[256], rest[256];
	int n;

	if (api == NULL || *api == '\0')
		return 0;
	n = sscanf(host, "%255[^.].%255[^.].%255s", svc, ns, rest);
	if (n == 3 && strcmp(rest, "svc") != 0 &&
	    strcmp(rest, "svc.cluster.local") != 0)
		return 0;
	if (n == 2 && resolves(host))
		return 0;
	if (n == 1) {
		if (resolves(host) || myns == NULL)
			return 0;
		snprintf(ns, sizeof ns, "%s", myns);
	}
	if (n < 1)
		return 0;
	k->base = util_printf("%s/api/v1/namespaces/%s/services/%s:%s/proxy",
	    api, ns, svc, port);
	if (getenv("VOLRAY_CA_FILE") != NULL)
		k->ca = strdup(getenv("VOLRAY_CA_FILE"));
	if (tok != NULL)
		k->auth = util_printf("Authorization: Bearer %s", tok);
	return 1;
}

/* host:6379, the GCS port KubeRay's RAY_ADDRESS names. */
static int
gcs_address(const char *addr)
{
	const char *c = strrchr(addr, ':');

	return c != NULL && strcmp(c + 1, "6379") == 0;
}

/* The connection a verb opened, closed when the program ends. */
static struct conn *opened;

static void
conn_close(void)
{
	struct conn *k = opened;

	if (k == NULL)
		return;
	opened = NULL;
	if (k->c != NULL)
		curl_easy_cleanup(k->c);
	free(k->base);
	free(k->shown);
	free(k->ca);
	free(k->auth);
	free(k->ray_auth);
	curl_global_cleanup();
}

static void
conn_open(struct conn *k, const char *addr)
{
	char host[256], port[16] = "8265";
	const char *p;
	size_t n;

	memset(k, 0, sizeof k[0]);
	/* Every way out (a verb's return, exit(1) on an error) closes it:
	   a sanitizer build reports no leak at exit. */
	opened = k;
	atexit(conn_close);
	if (addr == NULL || *addr == '\0')
		addr = getenv("RAY_API_SERVER_ADDRESS");
	if (addr == NULL || *addr == '\0')
		addr = getenv("RAY_DASHBOARD_ADDRESS");
	if (addr == NULL || *addr == '\0')
		addr = getenv("RAY_ADDRESS");
	if (addr == NULL || *addr == '\0' || strcmp(addr, "auto") == 0)
		addr = "http://127.0.0.1:8265";
	if (strncmp(addr, "ray://", 6) == 0 || (strstr(addr, "://") == NULL &&
	    gcs_address(addr))) {
		/*
		 * A GCS (host:6379) or Ray Client (ray://host:10001) address,
		 * as KubeRay gives RAY_ADDRESS: Ray's SDK asks the GCS for
		 * the dashboard; here it is the head's default one.
		 */
		const char *h = strncmp(addr, "ray://", 6) == 0 ? addr + 6 : addr;
		size_t hl = strcspn(h, ":/");

		k->shown = util_printf("http://%.*s:8265", (int)hl, h);
	} else if (strstr(addr, "://") == NULL) {
		k->shown = util_printf("http://%s", addr);
	} else
		k->shown = strdup(addr);
	n = strlen(k->shown);
	while (n > 0 && k->shown[n - 1] == '/')
		k->shown[--n] = '\0';
	p = strstr(k->shown, "://") + 3;
	if (sscanf(p, "%255[^:/]:%15[0-9]", host, port) < 1)
		host[0] = '\0';
	if (strncmp(k->shown, "http://", 7) != 0 || !service_proxy(k, host,
	    port))
		k->base = strdup(k->shown);
	/* Ray's token (RAY_AUTH_MODE=token): in Authorization to the head
	   itself, in X-Ray-Authorization through the API's proxy, whose
	   Authorization is the API's. */
	if (getenv("RAY_AUTH_TOKEN") != NULL && *getenv("RAY_AUTH_TOKEN"))
		k->ray_auth = util_printf("%s: Bearer %s", k->auth != NULL ?
		    "X-Ray-Authorization" : "Authorization",
		    getenv("RAY_AUTH_TOKEN"));
	k->c = curl_easy_init();
	if (k->c == NULL)
		exit(1);
}

/*
 * One request; returns the HTTP status with the body in *out, or exits 1
 * as Ray's SDK fails when the server cannot be reached.
 */
static long
call(struct conn *k, const char *method, const char *path, const char *body,
    char **out)
{
	struct buf b = { NULL, 0 };
	struct curl_slist *h = NULL;
	char *url, err[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;

	url = util_printf("%s%s", k->base, path);
	curl_easy_reset(k->c);
	curl_easy_setopt(k->c, CURLOPT_URL, url);
	curl_easy_setopt(k->c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(k->c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(k->c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(k->c, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(k->c, CURLOPT_TIMEOUT, 60L);
	if (k->ca != NULL)
		curl_easy_setopt(k->c, CURLOPT_CAINFO, k->ca);
	if (k->auth != NULL)
		h = curl_slist_append(h, k->auth);
	if (k->ray_auth != NULL)
		h = curl_slist_append(h, k->ray_auth);
	if (body != NULL) {
		h = curl_slist_append(h, "Content-Type: application/json");
		curl_easy_setopt(k->c, CURLOPT_POSTFIELDS, body);
	}
	curl_easy_setopt(k->c, CURLOPT_HTTPHEADER, h);
	rc = curl_easy_perform(k->c);
	curl_slist_free_all(h);
	free(url);
	if (rc != CURLE_OK) {
		fprintf(stderr, "ConnectionError: Failed to connect to Ray at "
		    "address: %s (%s).\n", k->shown, err[0] ? err :
		    curl_easy_strerror(rc));
		exit(1);
	}
	curl_easy_getinfo(k->c, CURLINFO_RESPONSE_CODE, &code);
	*out = b.p != NULL ? b.p : strdup("");
	return code;
}

/* A GET whose failure to connect is a status of 0, not an exit. */
static long
call_quiet(struct conn *k, const char *path, char **out)
{
	struct buf b = { NULL, 0 };
	struct curl_slist *h = NULL;
	char *url;
	long code = 0;

	url = util_printf("%s%s", k->base, path);
	curl_easy_reset(k->c);
	curl_easy_setopt(k->c, CURLOPT_URL, url);
	curl_easy_setopt(k->c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(k->c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(k->c, CURLOPT_TIMEOUT, 10L);
	if (k->ca != NULL)
		curl_easy_setopt(k->c, CURLOPT_CAINFO, k->ca);
	if (k->auth != NULL)
		h = curl_slist_append(h, k->auth);
	if (k->ray_auth != NULL)
		h = curl_slist_append(h, k->ray_auth);
	curl_easy_setopt(k->c, CURLOPT_HTTPHEADER, h);
	if (curl_easy_perform(k->c) == CURLE_OK)
		curl_easy_getinfo(k->c, CURLINFO_RESPONSE_CODE, &code);
	curl_slist_free_all(h);
	free(url);
	*out = b.p != NULL ? b.p : strdup("");
	return code;
}

/* A call that must answer 200; otherwise Ray's SDK error and exit 1. */
static cJSON *
call_ok(struct conn *k, const char *method, const char *path,
    const char *body)
{
	char *out;
	long code = call(k, method, path, body, &out);
	cJSON *t;

	if (code != 200) {
		fprintf(stderr, "RuntimeError: Request failed with status code "
		    "%ld: %s.\n", code, out);
		exit(1);
	}
	t = cJSON_Parse(out);
	free(out);
	if (t == NULL) {
		fprintf(stderr, "RuntimeError: the answer of %s%s is not JSON\n",
		    k->shown, path);
		exit(1);
	}
	return t;
}

static void
banner(const char *msg)
{
	size_t i, n = strlen(msg);

	printf("\n");
	for (i = 0; i < n; i++)
		putchar('-');
	printf("\n%s\n", msg);
	for (i = 0; i < n; i++)
		putchar('-');
	printf("\n\n");
}

static const char *
str(const cJSON *t, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static cJSON *
job_info(struct conn *k, const char *id)
{
	char *path;
	cJSON *t;

	path = util_printf("/api/jobs/%s", id);
	t = call_ok(k, "GET", path, NULL);
	free(path);
	return t;
}

/* Ray's _log_job_status: a line per status; returns the status. */
static char *
log_status(struct conn *k, const char *id)
{
	cJSON *t = job_info(k, id);
	const char *st = str(t, "status"), *msg = str(t, "message");
	char line[512], *out = strdup(st ? st : "");

	if (st != NULL && strcmp(st, "SUCCEEDED") == 0) {
		snprintf(line, sizeof line, "Job '%s' succeeded", id);
		banner(line);
	} else if (st != NULL && strcmp(st, "STOPPED") == 0)
		printf("Job '%s' was stopped\n", id);
	else if (st != NULL && strcmp(st, "FAILED") == 0) {
		snprintf(line, sizeof line, "Job '%s' failed", id);
		banner(line);
		if (msg != NULL)
			printf("Status message: %s\n", msg);
	} else {
		printf("Status for job '%s': %s\n", id, st ? st : "");
		if (msg != NULL)
			printf("Status message: %s\n", msg);
	}
	fflush(stdout);
	cJSON_Delete(t);
	return out;
}

static int
terminal(const char *st)
{
	return st != NULL && (strcmp(st, "SUCCEEDED") == 0 ||
	    strcmp(st, "FAILED") == 0 || strcmp(st, "STOPPED") == 0);
}

/* Print the job's logs as they grow until it is over. */
static void
follow(struct conn *k, const char *id)
{
	char *path;
	size_t shown = 0;

	path = util_printf("/api/jobs/%s/logs", id);
	for (;;) {
		cJSON *info = job_info(k, id), *t;
		int over = terminal(str(info, "status"));
		const char *logs;

		cJSON_Delete(info);
		t = call_ok(k, "GET", path, NULL);
		logs = str(t, "logs");
		if (logs != NULL && strlen(logs) > shown) {
			fputs(logs + shown, stdout);
			fflush(stdout);
			shown = strlen(logs);
		}
		cJSON_Delete(t);
		if (over)
			break;
		usleep(200 * 1000);
	}
	free(path);
}

/* shlex.join: words that need it are single-quoted. */
static char *
shell_join(int argc, char **argv)
{
	size_t cap = 16, n = 0;
	char *s = malloc(cap);
	int i;

	s[0] = '\0';
	for (i = 0; i < argc; i++) {
		const char *w = argv[i], *p;
		int plain = *w != '\0' && strspn(w, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_") ==
		    strlen(w);

		if (n + strlen(w) * 4 + 4 > cap) {
			cap = (n + strlen(w) * 4 + 4) * 2;
			s = realloc(s, cap);
		}
		if (i > 0)
			s[n++] = ' ';
		if (plain) {
			memcpy(s + n, w, strlen(w));
			n += strlen(w);
		} else {
			s[n++] = '\'';
			for (p = w; *p; p++) {
				if (*p == '\'') {
					memcpy(s + n, "'\"'\"'", 5);
					n += 5;
				} else
					s[n++] = *p;
			}
			s[n++] = '\'';
		}
		s[n] = '\0';
	}
	return s;
}

static cJSON *
json_arg(const char *flag, const char *v)
{
	cJSON *t = cJSON_Parse(v);

	if (t == NULL || !cJSON_IsObject(t)) {
		fprintf(stderr, "Error: Invalid value for '%s': not a JSON "
		    "object: %s\n", flag, v);
		exit(2);
	}
	return t;
}

static double
num_arg(const char *flag, const char *v)
{
	char *end;
	double d = strtod(v, &end);

	if (*v == '\0' || *end != '\0' || d < 0) {
		fprintf(stderr, "Error: Invalid value for '%s': '%s' is not a "
		    "valid float.\n", flag, v);
		exit(2);
	}
	return d;
}

/*
 * Ray's common options that change nothing here (output style, TLS
 * verification and headers of a real dashboard); 1 when argv[*i] is one.
 */
static int
ignored(int argc, char **argv, int *i)
{
	static const char *const valued[] = { "--log-style", "--log-color",
	    "--headers", "--verify", NULL };
	int k;

	if (strcmp(argv[*i], "-v") == 0 || strcmp(argv[*i], "--verbose") == 0)
		return 1;
	for (k = 0; valued[k] != NULL; k++) {
		size_t n = strlen(valued[k]);

		if (strncmp(argv[*i], valued[k], n) != 0)
			continue;
		if (argv[*i][n] == '=')
			return 1;
		if (argv[*i][n] == '\0') {
			if (*i + 1 < argc)
				++*i;
			return 1;
		}
	}
	return 0;
}

/* --flag VALUE or --flag=VALUE at argv[*i]; NULL when it is not flag. */
static const char *
opt(int argc, char **argv, int *i, const char *flag)
{
	size_t n = strlen(flag);

	if (strncmp(argv[*i], flag, n) != 0)
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		fprintf(stderr, "Error: Option '%s' requires an argument.\n",
		    flag);
		exit(2);
	}
	return argv[++*i];
}

static int
job_submit(int argc, char **argv)
{
	const char *addr = NULL, *sid = NULL, *v, *wd = NULL;
	cJSON *body = cJSON_CreateObject(), *renv = NULL, *t;
	char *s, *st, line[512];
	const char *id;
	static struct conn k;	/* closed at exit (conn_close) */
	int i, no_wait = 0, rc = 0;

	for (i = 0; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if ((v = opt(argc, argv, &i, "--address")) != NULL)
			addr = v;
		else if ((v = opt(argc, argv, &i, "--submission-id")) != NULL ||
		    (v = opt(argc, argv, &i, "--job-id")) != NULL)
			sid = v;
		else if (strcmp(argv[i], "--no-wait") == 0)
			no_wait = 1;
		else if ((v = opt(argc, argv, &i, "--runtime-env-json")) != NULL)
			renv = json_arg("--runtime-env-json", v);
		else if ((v = opt(argc, argv, &i, "--metadata-json")) != NULL)
			cJSON_AddItemToObject(body, "metadata",
			    json_arg("--metadata-json", v));
		else if ((v = opt(argc, argv, &i, "--working-dir")) != NULL)
			wd = v;
		else if ((v = opt(argc, argv, &i, "--entrypoint-num-cpus")) !=
		    NULL)
			cJSON_AddNumberToObject(body, "entrypoint_num_cpus",
			    num_arg("--entrypoint-num-cpus", v));
		else if ((v = opt(argc, argv, &i, "--entrypoint-num-gpus")) !=
		    NULL)
			cJSON_AddNumberToObject(body, "entrypoint_num_gpus",
			    num_arg("--entrypoint-num-gpus", v));
		else if ((v = opt(argc, argv, &i, "--entrypoint-memory")) != NULL)
			cJSON_AddNumberToObject(body, "entrypoint_memory",
			    num_arg("--entrypoint-memory", v));
		else if ((v = opt(argc, argv, &i, "--entrypoint-resources")) !=
		    NULL)
			cJSON_AddItemToObject(body, "entrypoint_resources",
			    json_arg("--entrypoint-resources", v));
		else if (ignored(argc, argv, &i))
			continue;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "Error: No such option: %s\n", argv[i]);
			return 2;
		} else
			break;
	}
	if (i < argc && strcmp(argv[i], "--") == 0)
		i++;
	if (i >= argc) {
		fprintf(stderr, "Error: Missing argument 'ENTRYPOINT...'.\n");
		return 2;
	}
	s = shell_join(argc - i, argv + i);
	cJSON_AddStringToObject(body, "entrypoint", s);
	free(s);
	if (sid != NULL)
		cJSON_AddStringToObject(body, "submission_id", sid);
	if (wd != NULL) {
		char real[4096];

		if (renv == NULL)
			renv = cJSON_CreateObject();
		cJSON_DeleteItemFromObject(renv, "working_dir");
		cJSON_AddStringToObject(renv, "working_dir",
		    strstr(wd, "://") == NULL && realpath(wd, real) != NULL ?
		    real : wd);
	}
	if (renv != NULL)
		cJSON_AddItemToObject(body, "runtime_env", renv);
	conn_open(&k, addr);
	printf("Job submission server address: %s\n", k.shown);
	s = cJSON_PrintUnformatted(body);
	t = call_ok(&k, "POST", "/api/jobs/", s);
	free(s);
	id = str(t, "submission_id");
	if (id == NULL)
		id = str(t, "job_id");
	snprintf(line, sizeof line, "Job '%s' submitted successfully",
	    id ? id : "");
	banner(line);
	printf("Next steps\n  Query the logs of the job:\n    ray job logs %s\n"
	    "  Query the status of the job:\n    ray job status %s\n"
	    "  Request the job to be stopped:\n    ray job stop %s\n\n", id, id,
	    id);
	fflush(stdout);
	if (!no_wait) {
		printf("Tailing logs until the job exits (disable with "
		    "--no-wait):\n");
		fflush(stdout);
		follow(&k, id);
		st = log_status(&k, id);
		rc = strcmp(st, "FAILED") == 0;
		free(st);
	}
	cJSON_Delete(t);
	cJSON_Delete(body);
	return rc;
}

/* status, logs, stop, delete, list. */
static int
job_other(const char *verb, int argc, char **argv)
{
	const char *addr = NULL, *id = NULL, *v;
	int i, follow_logs = 0, no_wait = 0;
	static struct conn k;	/* closed at exit (conn_close) */
	char *path, *st;
	cJSON *t, *it;

	for (i = 0; i < argc; i++) {
		if ((v = opt(argc, argv, &i, "--address")) != NULL)
			addr = v;
		else if (strcmp(verb, "logs") == 0 && (strcmp(argv[i],
		    "--follow") == 0 || strcmp(argv[i], "-f") == 0))
			follow_logs = 1;
		else if (strcmp(verb, "stop") == 0 && strcmp(argv[i],
		    "--no-wait") == 0)
			no_wait = 1;
		else if (ignored(argc, argv, &i))
			continue;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "Error: No such option: %s\n", argv[i]);
			return 2;
		} else if (id == NULL && strcmp(verb, "list") != 0)
			id = argv[i];
		else {
			fprintf(stderr, "Error: Got unexpected extra argument "
			    "(%s)\n", argv[i]);
			return 2;
		}
	}
	if (id == NULL && strcmp(verb, "list") != 0) {
		fprintf(stderr, "Error: Missing argument 'JOB_ID'.\n");
		return 2;
	}
	conn_open(&k, addr);
	printf("Job submission server address: %s\n", k.shown);
	fflush(stdout);
	if (strcmp(verb, "status") == 0) {
		free(log_status(&k, id));
	} else if (strcmp(verb, "logs") == 0) {
		if (follow_logs)
			follow(&k, id);
		else {
			path = util_printf("/api/jobs/%s/logs", id);
			t = call_ok(&k, "GET", path, NULL);
			fputs(str(t, "logs") ? str(t, "logs") : "", stdout);
			cJSON_Delete(t);
			free(path);
		}
	} else if (strcmp(verb, "stop") == 0) {
		printf("Attempting to stop job '%s'\n", id);
		path = util_printf("/api/jobs/%s/stop", id);
		cJSON_Delete(call_ok(&k, "POST", path, NULL));
		free(path);
		if (no_wait)
			return 0;
		printf("Waiting for job '%s' to exit (disable with --no-wait):\n",
		    id);
		for (;;) {
			t = job_info(&k, id);
			if (terminal(str(t, "status"))) {
				cJSON_Delete(t);
				break;
			}
			printf("Job has not exited yet. Status: %s\n", str(t,
			    "status") ? str(t, "status") : "");
			fflush(stdout);
			cJSON_Delete(t);
			usleep(200 * 1000);
		}
		free(log_status(&k, id));
	} else if (strcmp(verb, "delete") == 0) {
		path = util_printf("/api/jobs/%s", id);
		cJSON_Delete(call_ok(&k, "DELETE", path, NULL));
		free(path);
		printf("Job '%s' deleted successfully\n", id);
	} else {
		t = call_ok(&k, "GET", "/api/jobs/", NULL);
		printf("Jobs:\n");
		cJSON_ArrayForEach(it, t) {
			st = (char *)str(it, "status");
			printf("  %s: %s: %s\n", str(it, "submission_id") ?
			    str(it, "submission_id") : "", st ? st : "",
			    str(it, "entrypoint") ? str(it, "entrypoint") : "");
		}
		cJSON_Delete(t);
	}
	fflush(stdout);
	return 0;
}

static volatile sig_atomic_t terminated;	/* SIGTERM or SIGINT came */

static void
on_term(int sig)
{
	(void)sig;
	terminated = 1;
}

/* ray start: the head's and workers' APIs are volrayd's; just block. */
static int
start(int argc, char **argv)
{
	int i, block = 0, head = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--block") == 0)
			block = 1;
		else if (strcmp(argv[i], "--head") == 0)
			head = 1;
	}
	printf("Ray runtime started (volray: the %s's dashboard and Jobs API "
	    "are served by volrayd).\n", head ? "head" : "worker");
	fflush(stdout);
	if (!block)
		return 0;
	printf("--block\nThis command will now block forever until "
	    "terminated by a signal.\n");
	fflush(stdout);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while (!terminated)
		pause();
	return 0;
}

/*
 * ray kuberay-autoscaler: KubeRay's autoscaler sidecar. volray's
 * autoscaler is a controller of volrayd's (rayautoscaler.lua), so this
 * only says so and waits until it is stopped.
 */
static int
kuberay_autoscaler(void)
{
	printf("volray: the autoscaler of this cluster runs in volrayd "
	    "(lua/controllers/rayautoscaler.lua); this sidecar waits.\n");
	fflush(stdout);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	while (!terminated)
		pause();
	return 0;
}

/*
 * ray health-check --address HOST:6379: whether the head answers, as
 * KubeRay's wait-gcs-ready init container asks (the GCS is volrayd; its
 * port means the head's dashboard). 0 when it does, 1 otherwise.
 */
static int
health_check(int argc, char **argv)
{
	const char *addr = NULL, *v;
	static struct conn k;	/* closed at exit (conn_close) */
	char *out = NULL;
	long code;
	int i;

	for (i = 0; i < argc; i++) {
		if ((v = opt(argc, argv, &i, "--address")) != NULL)
			addr = v;
		else if (ignored(argc, argv, &i) || opt(argc, argv, &i,
		    "--component") != NULL)
			continue;
		else {
			fprintf(stderr, "Error: No such option: %s\n", argv[i]);
			return 2;
		}
	}
	conn_open(&k, addr);
	code = call_quiet(&k, "/api/gcs_healthz", &out);
	free(out);
	return code == 200 ? 0 : 1;
}

/* A file of /proc/PID (cmdline, environ): NUL-separated words; NULL. */
static char *
proc_read(long pid, const char *what, size_t *len)
{
	char path[64], *buf = NULL, *q;
	size_t cap = 0, n = 0, got;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%ld/%s", pid, what);
	if ((f = fopen(path, "rb")) == NULL)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			cap = (n + 4096 + 1) * 2;
			if ((q = realloc(buf, cap)) == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = q;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
	} while (got > 0);
	fclose(f);
	if (buf == NULL)
		return NULL;
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* NAME's value in a NUL-separated environment, or NULL. */
static const char *
env_of(const char *env, size_t len, const char *name)
{
	size_t nl = strlen(name);
	const char *p = env;

	while (p < env + len) {
		if (strncmp(p, name, nl) == 0 && p[nl] == '=')
			return p + nl + 1;
		p += strlen(p) + 1;
	}
	return NULL;
}

/*
 * Whether process pid is a `ray start` (blocking: one that did not block
 * has already ended) of the pod this one runs in: the same VOLRAY_POD_ROOT,
 * or neither in a pod.
 */
static int
ray_start_of_pod(long pid, const char *pod)
{
	size_t n, elen;
	char *cmd = proc_read(pid, "cmdline", &n), *env;
	const char *a0, *base, *root;
	int ok = 0;

	if (cmd == NULL)
		return 0;
	a0 = cmd;
	base = strrchr(a0, '/') ? strrchr(a0, '/') + 1 : a0;
	if (strcmp(base, "ray") == 0 && strlen(a0) + 1 < n &&
	    strcmp(a0 + strlen(a0) + 1, "start") == 0 &&
	    (env = proc_read(pid, "environ", &elen)) != NULL) {
		root = env_of(env, elen, "VOLRAY_POD_ROOT");
		ok = (root == NULL && pod == NULL) || (root != NULL &&
		    pod != NULL && strcmp(root, pod) == 0);
		free(env);
	}
	free(cmd);
	return ok;
}

/* Whether pid is gone: no such process, or a zombie its parent will reap. */
static int
gone(long pid)
{
	char path[64], buf[512], *rp;
	FILE *f;
	size_t n;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if ((f = fopen(path, "r")) == NULL)
		return 1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	rp = strrchr(buf, ')');
	return rp != NULL && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

/*
 * Wait up to ms for the processes left in pids (0 once gone); how many
 * are. Each is watched through a pidfd (pidfd_open(2)), which wakes this
 * the moment it ends; a check every 50 ms covers those without one.
 */
static int
wait_gone(long *pids, int n, long ms)
{
	struct pollfd *fds = calloc((size_t)n, sizeof *fds);
	struct timespec now;
	long long end;
	int i, left, step;

	clock_gettime(CLOCK_MONOTONIC, &now);
	end = now.tv_sec * 1000LL + now.tv_nsec / 1000000 + ms;
	for (i = 0; fds != NULL && i < n; i++) {
		fds[i].fd = pids[i] != 0 ? (int)syscall(SYS_pidfd_open,
		    (pid_t)pids[i], 0) : -1;
		fds[i].events = POLLIN;
	}
	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (pids[i] != 0 && gone(pids[i]))
				pids[i] = 0;
			if (pids[i] == 0 && fds != NULL && fds[i].fd >= 0) {
				close(fds[i].fd);
				fds[i].fd = -1;	/* poll skips it */
			}
			left += pids[i] != 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		ms = end - (now.tv_sec * 1000LL + now.tv_nsec / 1000000);
		if (left == 0 || ms <= 0)
			break;
		step = ms < 50 ? (int)ms : 50;
		if (fds != NULL)
			poll(fds, (nfds_t)n, step);
		else
			usleep((useconds_t)step * 1000);
	}
	for (i = 0; fds != NULL && i < n; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	free(fds);
	return n - left;
}

/*
 * ray stop [--force] [-g|--grace-period SECONDS]: stop this pod's `ray
 * start` processes as Ray stops its own: SIGTERM (SIGKILL with --force),
 * a wait of the grace period (16 s, Ray's default), SIGKILL for what is
 * left; exit 0 either way.
 */
static int
stop(int argc, char **argv)
{
	const char *pod = getenv("VOLRAY_POD_ROOT"), *v, *sep;
	long grace = 16, *pids = NULL, pid, *q;
	int i, force = 0, n = 0, cap = 0, stopped;
	struct dirent *d;
	DIR *dir;
	char *end;

	if (pod != NULL && *pod == '\0')
		pod = NULL;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--force") == 0)
			force = 1;
		else if ((v = opt(argc, argv, &i, "--grace-period")) != NULL ||
		    (v = opt(argc, argv, &i, "-g")) != NULL) {
			errno = 0;
			grace = strtol(v, &end, 10);
			if (*v == '\0' || *end != '\0' || errno != 0 || grace < 0 ||
			    grace > 86400) {
				fprintf(stderr, "Error: Invalid value for "
				    "'-g' / '--grace-period': '%s' is not a "
				    "valid integer.\n", v);
				return 2;
			}
		} else if (ignored(argc, argv, &i))
			continue;
		else {
			fprintf(stderr, "Error: No such option: %s\n", argv[i]);
			return 2;
		}
	}
	if ((dir = opendir("/proc")) == NULL) {
		fprintf(stderr, "Error: /proc: %s\n", strerror(errno));
		return 1;
	}
	while ((d = readdir(dir)) != NULL) {
		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = strtol(d->d_name, NULL, 10);
		if (pid == (long)getpid() || gone(pid) ||
		    !ray_start_of_pod(pid, pod))
			continue;
		if (kill((pid_t)pid, force ? SIGKILL : SIGTERM) != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			if ((q = realloc(pids, (size_t)cap * sizeof *pids)) ==
			    NULL)
				break;
			pids = q;
		}
		pids[n++] = pid;
	}
	closedir(dir);
	if (n == 0) {
		printf("Did not find any active Ray processes.\n");
		free(pids);
		return 0;
	}
	stopped = wait_gone(pids, n, grace * 1000);
	if (stopped == n)
		printf("Stopped all %d Ray processes.\n", n);
	else {
		printf("Stopped only %d out of %d Ray processes within the "
		    "grace period %ld seconds. Set `-v` to see more details. "
		    "Remaining processes [", stopped, n, grace);
		for (i = 0, sep = ""; i < n; i++)
			if (pids[i] != 0) {
				printf("%s%ld", sep, pids[i]);
				sep = ", ";
			}
		printf("] will be forcefully terminated.\n");
		printf("You can also use `--force` to forcefully terminate "
		    "processes or set higher `--grace-period` to wait longer "
		    "time for proper termination.\n");
		for (i = 0; i < n; i++)
			if (pids[i] != 0)
				kill((pid_t)pids[i], SIGKILL);
		wait_gone(pids, n, 2000);
	}
	fflush(stdout);
	free(pids);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "--version") == 0) {
		printf("ray, version %s (volray)\n", RAY_VERSION);
		return 0;
	}
	if (argc < 2)
		usage();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (strcmp(argv[1], "start") == 0)
		return start(argc - 2, argv + 2);
	if (strcmp(argv[1], "stop") == 0)
		return stop(argc - 2, argv + 2);
	if (strcmp(argv[1], "health-check") == 0)
		return health_check(argc - 2, argv + 2);
	if (strcmp(argv[1], "kuberay-autoscaler") == 0)
		return kuberay_autoscaler();
	if (strcmp(argv[1], "job") != 0 || argc < 3)
		usage();
	if (strcmp(argv[2], "submit") == 0)
		return job_submit(argc - 3, argv + 3);
	if (strcmp(argv[2], "status") == 0 || strcmp(argv[2], "logs") == 0 ||
	    strcmp(argv[2], "stop") == 0 || strcmp(argv[2], "delete") == 0 ||
	    strcmp(argv[2], "list") == 0)
		return job_other(argv[2], argc - 3, argv + 3);
	usage();
	return 2;
}
