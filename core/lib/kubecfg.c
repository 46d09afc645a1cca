/*
 * Reading a kubeconfig as kubectl does, for one context. The file is
 * parsed by yamljson (so JSON kubeconfigs read too); the context names a
 * cluster and a user, each looked up by name in its list, and every
 * credential is turned into bytes at once: *-data fields are base64
 * decoded, file forms are resolved against the kubeconfig's directory
 * and read. The in-cluster config reads the service account's files the
 * same way. Nothing here talks to a server.
 */
#include <errno.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "lib/json.h"
#include "lib/kubecfg.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

/* No certificate bundle or token comes near this. */
#define FILE_MAX	(16 << 20)

#define SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"

/* A whole file into *data (NUL-terminated) and *len; -1 with errno. */
static int
read_all(const char *path, char **data, size_t *len)
{
	FILE *f;
	char *buf = NULL;
	size_t used = 0, cap = 0, n;
	int saved;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	for (;;) {
		if (used + 1 >= cap) {
			if (cap >= FILE_MAX) {
				fclose(f);
				free(buf);
				errno = EFBIG;
				return -1;
			}
			cap = cap == 0 ? 4096 : cap * 2;
			buf = xrealloc(buf, cap);
		}
		if ((n = fread(buf + used, 1, cap - used - 1, f)) == 0)
			break;
		used += n;
	}
	if (ferror(f)) {
		saved = errno;
		fclose(f);
		free(buf);
		errno = saved != 0 ? saved : EIO;
		return -1;
	}
	fclose(f);
	buf[used] = '\0';
	*data = buf;
	*len = used;
	return 0;
}

/* s without leading and trailing white space, in place (a token file's). */
static char *
trim(char *s)
{
	size_t skip = 0, n;

	while (isspace((unsigned char)s[skip]))
		skip++;
	n = strlen(s + skip);
	memmove(s, s + skip, n + 1);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* A path of the kubeconfig resolved against its directory dir. */
static char *
resolve(const char *dir, const char *path)
{
	if (path[0] == '/' || dir == NULL)
		return xstrdup(path);
	return util_printf("%s/%s", dir, path);
}

/* The entry of a kubeconfig list (clusters, users, contexts) named name. */
static const cJSON *
find(const cJSON *cfg, const char *list, const char *name)
{
	const cJSON *el;
	const char *s;

	cJSON_ArrayForEach(el, json_at(cfg, list)) {
		if ((s = json_str(el, "name")) != NULL && strcmp(s, name) == 0)
			return el;
	}
	return NULL;
}

/* A non-empty string member, or NULL (kubectl reads "" as unset). */
static const char *
field(const cJSON *obj, const char *name)
{
	const char *s = json_str(obj, name);

	return s != NULL && *s != '\0' ? s : NULL;
}

/*
 * Fill pem from obj's name-data (base64, which wins) or from the file
 * name names; nothing when neither is there.
 */
static int
load_pem(const cJSON *obj, const char *name, const char *dir,
    const char *path, struct kubecfg_pem *pem, char **cause)
{
	char data_name[64];
	const char *s;

	snprintf(data_name, sizeof data_name, "%s-data", name);
	if ((s = field(obj, data_name)) != NULL) {
		if (util_base64_decode(s, &pem->data, &pem->len) != 0) {
			*cause = util_printf("bad base64 in %s in %s",
			    data_name, path);
			return -1;
		}
		return 0;
	}
	if ((s = field(obj, name)) == NULL)
		return 0;
	pem->file = resolve(dir, s);
	if (read_all(pem->file, &pem->data, &pem->len) != 0) {
		*cause = util_printf("reading %s %s (from %s): %s", name,
		    pem->file, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* The user's credentials: a token or a token file, a client certificate. */
static int
load_user(struct kubecfg *kc, const cJSON *user, const char *dir,
    char **cause)
{
	const char *s, *why = NULL;
	size_t len;
	char *tok;

	if (json_at(user, "as") != NULL || json_at(user, "as-groups") != NULL ||
	    json_at(user, "as-uid") != NULL) {
		*cause = util_printf("user \"%s\" in %s impersonates another "
		    "(as, as-groups, as-uid): volray does not support that",
		    kc->user, kc->path);
		return -1;
	}
	if ((s = field(user, "token")) != NULL)
		kc->token = xstrdup(s);
	if ((s = field(user, "tokenFile")) != NULL) {
		/* The file wins over token, as client-go reads it. */
		kc->token_file = resolve(dir, s);
		if (read_all(kc->token_file, &tok, &len) == 0) {
			free(kc->token);
			kc->token = xstrdup(trim(tok));
			free(tok);
		} else if (kc->token == NULL) {
			*cause = util_printf("reading tokenFile %s (from %s): "
			    "%s", kc->token_file, kc->path, strerror(errno));
			return -1;
		}
	}
	if (load_pem(user, "client-certificate", dir, kc->path, &kc->cert,
	    cause) != 0 || load_pem(user, "client-key", dir, kc->path,
	    &kc->key, cause) != 0)
		return -1;
	if ((kc->cert.data == NULL) != (kc->key.data == NULL)) {
		*cause = util_printf("user \"%s\" in %s has a client %s "
		    "without its %s", kc->user, kc->path,
		    kc->cert.data != NULL ? "certificate" : "key",
		    kc->cert.data != NULL ? "key" : "certificate");
		return -1;
	}
	if (kc->token != NULL || kc->cert.data != NULL)
		return 0;
	if (json_at(user, "exec") != NULL)
		why = "exec plugins are not supported";
	else if (json_at(user, "auth-provider") != NULL)
		why = "auth-provider plugins are not supported";
	else if (field(user, "username") != NULL ||
	    field(user, "password") != NULL)
		why = "basic authentication is not supported";
	if (why == NULL)
		return 0;	/* anonymous */
	*cause = util_printf("user \"%s\" in %s has no credentials volray "
	    "supports (%s)", kc->user, kc->path, why);
	return -1;
}

/* The context, its cluster and its user from the parsed cfg into kc. */
static int
load_context(struct kubecfg *kc, const cJSON *cfg, const char *context,
    char **cause)
{
	const cJSON *ctx, *cluster, *user = NULL, *v;
	const char *s;
	char *dir = NULL, *slash;
	int rc = -1;

	if (context != NULL && *context == '\0')
		context = NULL;
	if (context == NULL && (context = field(cfg, "current-context")) ==
	    NULL) {
		*cause = util_printf("no current-context in %s (name a "
		    "context)", kc->path);
		return -1;
	}
	if ((ctx = find(cfg, "contexts", context)) == NULL) {
		*cause = util_printf("context \"%s\" not found in %s", context,
		    kc->path);
		return -1;
	}
	kc->context = xstrdup(context);
	ctx = json_at(ctx, "context");
	if ((s = field(ctx, "cluster")) == NULL) {
		*cause = util_printf("context \"%s\" in %s names no cluster",
		    context, kc->path);
		return -1;
	}
	kc->cluster = xstrdup(s);
	if ((cluster = find(cfg, "clusters", s)) == NULL) {
		*cause = util_printf("cluster \"%s\" not found in %s", s,
		    kc->path);
		return -1;
	}
	cluster = json_at(cluster, "cluster");
	if ((s = field(ctx, "user")) != NULL) {
		kc->user = xstrdup(s);
		if ((user = find(cfg, "users", s)) == NULL) {
			*cause = util_printf("user \"%s\" not found in %s", s,
			    kc->path);
			return -1;
		}
		user = json_at(user, "user");
	}
	kc->ns = xstrdup((s = field(ctx, "namespace")) != NULL ? s :
	    "default");
	if ((s = field(cluster, "server")) == NULL) {
		*cause = util_printf("cluster \"%s\" in %s has no server",
		    kc->cluster, kc->path);
		return -1;
	}
	kc->server = xstrdup(s);
	if ((s = field(cluster, "tls-server-name")) != NULL)
		kc->tls_server_name = xstrdup(s);
	v = json_at(cluster, "insecure-skip-tls-verify");
	kc->insecure = cJSON_IsTrue(v);
	if ((slash = strrchr(kc->path, '/')) != NULL)
		dir = xstrndup(kc->path, (size_t)(slash - kc->path));
	if (load_pem(cluster, "certificate-authority", dir, kc->path, &kc->ca,
	    cause) == 0 && load_user(kc, user, dir, cause) == 0)
		rc = 0;
	free(dir);
	return rc;
}

/* Drop the server URL's trailing slashes: callers append paths to it. */
static void
trim_server(char *server)
{
	size_t n = strlen(server);

	while (n > 0 && server[n - 1] == '/')
		server[--n] = '\0';
}

/* The file to read: path, $KUBECONFIG's first readable, ~/.kube/config. */
char *
kubecfg_path(const char *path)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	char *list, *p, *save, *first = NULL, *out;

	if (path != NULL)
		return xstrdup(path);
	if (env != NULL && *env != '\0') {
		list = xstrdup(env);
		for (p = strtok_r(list, ":", &save); p != NULL;
		    p = strtok_r(NULL, ":", &save)) {
			if (first == NULL)
				first = p;
			if (access(p, R_OK) == 0) {
				first = p;
				break;
			}
		}
		out = xstrdup(first != NULL ? first : env);
		free(list);
		return out;
	}
	return util_printf("%s/.kube/config", home != NULL ? home : ".");
}

/* Parse the file and take one context with its cluster and user. */
int
kubecfg_load(const char *path, const char *context, struct kubecfg **out,
    char **cause)
{
	struct kubecfg *kc;
	const cJSON *cfg;
	cJSON *docs;

	*out = NULL;
	*cause = NULL;
	kc = xcalloc(1, sizeof *kc);
	kc->path = kubecfg_path(path);
	if ((docs = yamljson_load_file(kc->path, cause)) == NULL)
		goto fail;
	cfg = cJSON_GetArrayItem(docs, 0);
	if (!cJSON_IsObject(cfg)) {
		*cause = util_printf("%s is %s", kc->path, cfg == NULL ?
		    "empty" : "not a kubeconfig");
		goto fail;
	}
	if (load_context(kc, cfg, context, cause) != 0)
		goto fail;
	cJSON_Delete(docs);
	trim_server(kc->server);
	*out = kc;
	return 0;
fail:
	cJSON_Delete(docs);
	kubecfg_free(kc);
	return -1;
}

/* A service account file, trimmed; NULL with errno when unreadable. */
static char *
read_sa(const char *dir, const char *name, char **file)
{
	char *path = util_printf("%s/%s", dir, name), *data, *s;
	size_t len;

	if (read_all(path, &data, &len) != 0) {
		if (file != NULL)
			*file = path;
		else
			free(path);
		return NULL;
	}
	s = xstrdup(trim(data));
	free(data);
	if (file != NULL)
		*file = path;
	else
		free(path);
	return s;
}

/* A pod's config from the environment and the service account files. */
int
kubecfg_in_cluster(struct kubecfg **out, char **cause)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	const char *dir = getenv("VOLRAY_SERVICEACCOUNT_DIR"), *ns;
	struct kubecfg *kc;
	char *ca_file;

	*out = NULL;
	*cause = NULL;
	if (host == NULL || *host == '\0' || port == NULL || *port == '\0') {
		*cause = xstrdup("not in a cluster: KUBERNETES_SERVICE_HOST "
		    "and KUBERNETES_SERVICE_PORT are not both set");
		return -1;
	}
	if (dir == NULL || *dir == '\0')
		dir = SA_DIR;
	kc = xcalloc(1, sizeof *kc);
	kc->server = util_printf("https://%s%s%s:%s",
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", port);
	if ((kc->token = read_sa(dir, "token", &kc->token_file)) == NULL ||
	    *kc->token == '\0') {
		*cause = util_printf("reading the service account token %s: "
		    "%s", kc->token_file, kc->token == NULL ? strerror(errno) :
		    "it is empty");
		kubecfg_free(kc);
		return -1;
	}
	ca_file = util_printf("%s/ca.crt", dir);
	if (read_all(ca_file, &kc->ca.data, &kc->ca.len) == 0)
		kc->ca.file = ca_file;
	else
		free(ca_file);
	if ((ns = getenv("POD_NAMESPACE")) != NULL && *ns != '\0')
		kc->ns = xstrdup(ns);
	else if ((kc->ns = read_sa(dir, "namespace", NULL)) != NULL &&
	    *kc->ns == '\0') {
		free(kc->ns);
		kc->ns = NULL;
	}
	if (kc->ns == NULL)
		kc->ns = xstrdup("default");
	*out = kc;
	return 0;
}

static void
pem_free(struct kubecfg_pem *pem)
{
	free(pem->data);
	free(pem->file);
}

void
kubecfg_free(struct kubecfg *kc)
{
	if (kc == NULL)
		return;
	free(kc->path);
	free(kc->context);
	free(kc->cluster);
	free(kc->user);
	free(kc->server);
	free(kc->tls_server_name);
	pem_free(&kc->ca);
	free(kc->token);
	free(kc->token_file);
	pem_free(&kc->cert);
	pem_free(&kc->key);
	free(kc->ns);
	free(kc);
}
