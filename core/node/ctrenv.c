/*
 * What a local container sees of its pod: the environment (volrayd's
 * PATH, the node manager's hook, a Ray image's install, envFrom and env with ConfigMap and
 * Secret keys and the downward API, Kubernetes' $(VAR) expansion) and its
 * volumes (ConfigMap, Secret and downwardAPI files, emptyDir directories)
 * materialised under the pod's root, at their mountPath rewritten into
 * it. local.c runs containers, exec probes and a pod's other processes
 * with these.
 */
#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

/* mkdir -p, mode 0700 for what it creates. */
int
ctrenv_mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
		return -1;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Write a file under root at rel (a volume's item), making directories. */
static int
write_file(const char *dir, const char *rel, const char *data, size_t len)
{
	char path[PATH_MAX], *slash;
	int fd;

	if (strstr(rel, "..") != NULL || rel[0] == '/' ||
	    snprintf(path, sizeof path, "%s/%s", dir, rel) >= (int)sizeof path)
		return -1;
	if ((slash = strrchr(path, '/')) != NULL) {
		*slash = '\0';
		ctrenv_mkdirs(path);
		*slash = '/';
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* A Secret's value, base64-decoded into buf; -1 if bad. */
static int
b64_decode(const char *in, char **out, size_t *len)
{
	static const char tbl[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t n = strlen(in), o = 0;
	unsigned v = 0;
	int bits = 0;
	char *b = malloc(n + 1);
	const char *p;

	if (b == NULL)
		return -1;
	for (p = in; *p; p++) {
		const char *q;

		if (*p == '=' || *p == '\n' || *p == '\r')
			continue;
		if ((q = strchr(tbl, *p)) == NULL) {
			free(b);
			return -1;
		}
		v = (v << 6) | (unsigned)(q - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			b[o++] = (char)((v >> bits) & 255);
		}
	}
	b[o] = '\0';
	*out = b;
	*len = o;
	return 0;
}

static cJSON *
get_obj(struct node *n, const char *res, const char *ns, const char *name)
{
	const store_obj *o = client_get(n->m->c, res, ns, name);

	return o != NULL ? store_obj_tree(o) : NULL;
}

/* A value of a ConfigMap (data, binaryData) or a Secret (decoded). */
static char *
key_value(struct node *n, const char *res, const char *ns, const char *name,
    const char *key, size_t *len)
{
	cJSON *t = get_obj(n, res, ns, name);
	const cJSON *v;
	char *out = NULL;

	if (t == NULL)
		return NULL;
	v = cJSON_GetObjectItemCaseSensitive(json_at(t, "data"), key);
	if (cJSON_IsString(v)) {
		if (strcmp(res, "secrets") == 0) {
			if (b64_decode(v->valuestring, &out, len) != 0)
				out = NULL;
		} else {
			out = xstrdup(v->valuestring);
			*len = strlen(out);
		}
	} else if (cJSON_IsString(v = cJSON_GetObjectItemCaseSensitive(json_at(t,
	    "binaryData"), key)) && b64_decode(v->valuestring, &out, len) != 0)
		out = NULL;
	cJSON_Delete(t);
	return out;
}

/* metadata.name, spec.nodeName, status.podIP, metadata.labels['k'] ... */
static char *
field_value(const cJSON *pod, const struct node_pod *p, const char *path)
{
	char key[256];
	const char *v;

	if (strcmp(path, "status.podIP") == 0)
		return xstrdup(p->ip);
	if (strcmp(path, "status.hostIP") == 0)
		return xstrdup(p->node->ip);
	if (sscanf(path, "metadata.labels['%255[^']']", key) == 1 ||
	    sscanf(path, "metadata.annotations['%255[^']']", key) == 1) {
		const cJSON *m = json_at(pod, path[9] == 'l' ?
		    "metadata.labels" : "metadata.annotations");
		const cJSON *e = cJSON_GetObjectItemCaseSensitive(m, key);

		return xstrdup(cJSON_IsString(e) ? e->valuestring : "");
	}
	v = json_str(pod, path);
	return xstrdup(v != NULL ? v : "");
}

void
ctrenv_set(struct ctrenv *e, const char *k, const char *v)
{
	size_t kl = strlen(k);
	int i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->kv[i], k, kl) == 0 && e->kv[i][kl] == '=') {
			free(e->kv[i]);
			e->kv[i] = util_printf("%s=%s", k, v);
			return;
		}
	XGROW(e->kv, e->cap, (size_t)e->n + 2);
	e->kv[e->n++] = util_printf("%s=%s", k, v);
	e->kv[e->n] = NULL;
}

static const char *
env_get(const struct ctrenv *e, const char *k, size_t kl)
{
	int i;

	for (i = 0; i < e->n; i++)
		if (strncmp(e->kv[i], k, kl) == 0 && e->kv[i][kl] == '=')
			return e->kv[i] + kl + 1;
	return NULL;
}

/* Kubernetes' $(VAR) expansion: defined names expand, $$ is a $. */
char *
ctrenv_expand(const struct ctrenv *e, const char *s)
{
	size_t cap = strlen(s) * 2 + 16, n = 0;
	char *out = xmalloc(cap);
	const char *p, *end, *v;

	for (p = s; *p; p++) {
		size_t need;

		if (p[0] == '$' && p[1] == '$') {
			v = "$";
			p++;
		} else if (p[0] == '$' && p[1] == '(' &&
		    (end = strchr(p + 2, ')')) != NULL &&
		    (v = env_get(e, p + 2, (size_t)(end - p - 2))) != NULL)
			p = end;
		else {
			if (n + 2 > cap)
				out = xrealloc(out, cap *= 2);
			out[n++] = *p;
			continue;
		}
		need = n + strlen(v) + 1;
		if (need > cap)
			out = xrealloc(out, cap = need * 2);
		memcpy(out + n, v, strlen(v));
		n += strlen(v);
	}
	out[n] = '\0';
	return out;
}

static void
hook_set(void *e, const char *k, const char *v)
{
	ctrenv_set(e, k, v);
}

/*
 * The environment of one container: volrayd's PATH, what the node
 * manager's hook adds, a Ray image's (rayimage.c), the pod's, its own.
 */
int
ctrenv_build(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, struct ctrenv *e, char **cause)
{
	const cJSON *it;
	const char *path = getenv("PATH");
	char venv[PATH_MAX], msg[16];

	ctrenv_set(e, "PATH", path ? path : "/usr/local/bin:/usr/bin:/bin");
	ctrenv_set(e, "HOSTNAME", p->name);
	ctrenv_set(e, "HOME", root);
	ctrenv_set(e, "VOLRAY_POD_ROOT", root);
	if (n->m->env_hook != NULL)
		n->m->env_hook(n->m->env_arg, p->ns, p->name, hook_set, e);
	/* A Ray image's install replaces volray's own `ray` on PATH. */
	if (rayimage_check(n->m, json_str(spec, "name"), json_str(spec,
	    "image"), venv, sizeof venv, msg, sizeof msg) == 1)
		rayimage_env(venv, p->uid, n->m->own_mounts, hook_set, e);
	cJSON_ArrayForEach(it, json_at(spec, "envFrom")) {
		const char *prefix = json_str(it, "prefix");
		const char *cm = json_str(it, "configMapRef.name");
		const char *sec = json_str(it, "secretRef.name");
		cJSON *t = cm ? get_obj(n, "configmaps", p->ns, cm) :
		    sec ? get_obj(n, "secrets", p->ns, sec) : NULL;
		const cJSON *kv;

		if (t == NULL) {
			if (!cJSON_IsTrue(json_at(it, cm ? "configMapRef.optional" :
			    "secretRef.optional"))) {
				*cause = util_printf(
				    "CreateContainerConfigError: "
				    "%s \"%s\" not found", cm ? "configmap" :
				    "secret", cm ? cm : sec ? sec : "");
				return -1;
			}
			continue;
		}
		cJSON_ArrayForEach(kv, json_at(t, "data")) {
			char *k = util_printf("%s%s", prefix ? prefix : "",
			    kv->string), *v = NULL;
			size_t len;

			if (!cJSON_IsString(kv)) {
				free(k);
				continue;
			}
			if (sec != NULL && b64_decode(kv->valuestring, &v, &len) ==
			    0)
				ctrenv_set(e, k, v);
			else if (sec == NULL)
				ctrenv_set(e, k, kv->valuestring);
			free(v);
			free(k);
		}
		cJSON_Delete(t);
	}
	cJSON_ArrayForEach(it, json_at(spec, "env")) {
		const char *name = json_str(it, "name");
		const cJSON *vf = json_at(it, "valueFrom");
		char *v = NULL;
		size_t len;

		if (name == NULL)
			continue;
		if (vf == NULL) {
			v = ctrenv_expand(e, json_str(it, "value") ? json_str(it,
			    "value") : "");
		} else if (json_at(vf, "fieldRef") != NULL) {
			v = field_value(pod, p, json_str(vf, "fieldRef.fieldPath") ?
			    json_str(vf, "fieldRef.fieldPath") : "");
		} else {
			const char *kind = json_at(vf, "configMapKeyRef") ?
			    "configMapKeyRef" : "secretKeyRef";
			const cJSON *ref = json_at(vf, kind);
			const char *rn = json_str(ref, "name");
			const char *rk = json_str(ref, "key");

			v = rn && rk ? key_value(n, kind[0] == 'c' ? "configmaps" :
			    "secrets", p->ns, rn, rk, &len) : NULL;
			if (v == NULL && !cJSON_IsTrue(json_at(ref, "optional"))) {
				*cause = util_printf(
				    "CreateContainerConfigError: "
				    "couldn't find key %s in %s %s/%s",
				    rk ? rk : "", kind[0] == 'c' ? "ConfigMap" :
				    "Secret", p->ns, rn ? rn : "");
				return -1;
			}
		}
		if (v != NULL)
			ctrenv_set(e, name, v);
		free(v);
	}
	return 0;
}

/* A ConfigMap's or a Secret's keys (src: its volume source) into dir. */
static int
write_keys(struct node *n, struct node_pod *p, const cJSON *src, int secret,
    const char *dir, char **cause)
{
	const char *name = json_str(src, secret ? "secretName" : "name");
	cJSON *t = name ? get_obj(n, secret ? "secrets" : "configmaps", p->ns,
	    name) : NULL;
	const cJSON *items = json_at(src, "items"), *kv, *it;

	if (t == NULL) {
		if (cJSON_IsTrue(json_at(src, "optional")))
			return 0;
		*cause = util_printf(
		    "CreateContainerConfigError: %s \"%s\" not "
		    "found", secret ? "secret" : "configmap", name ? name : "");
		return -1;
	}
	cJSON_ArrayForEach(kv, json_at(t, "data")) {
		const char *rel = kv->string;
		char *v = NULL;
		size_t len = 0;

		if (!cJSON_IsString(kv))
			continue;
		if (items != NULL) {
			rel = NULL;
			cJSON_ArrayForEach(it, items)
				if (json_str(it, "key") && strcmp(json_str(it,
				    "key"), kv->string) == 0)
					rel = json_str(it, "path");
			if (rel == NULL)
				continue;
		}
		if (secret && b64_decode(kv->valuestring, &v, &len) != 0)
			continue;
		if (!secret) {
			v = xstrdup(kv->valuestring);
			len = strlen(v);
		}
		write_file(dir, rel, v, len);
		free(v);
	}
	cJSON_Delete(t);
	return 0;
}

/* A downwardAPI source's fields (items) into dir. */
static void
write_fields(const cJSON *pod, const struct node_pod *p, const cJSON *items,
    const char *dir)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, items) {
		const char *rel = json_str(it, "path");
		const char *fp = json_str(it, "fieldRef.fieldPath");
		char *v;

		if (rel == NULL || fp == NULL)
			continue;
		v = field_value(pod, p, fp);
		write_file(dir, rel, v, strlen(v));
		free(v);
	}
}

/*
 * A serviceAccountToken source: a token of the pod's service account,
 * as the node's token hook mints it (none: no file, said once).
 */
static void
write_token(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *src, const char *dir)
{
	static int said;
	const char *sa = json_str(pod, "spec.serviceAccountName");
	const char *rel = json_str(src, "path");
	const char *tok;

	if (rel == NULL)
		return;
	tok = n->m->token_hook != NULL ? n->m->token_hook(n->m->token_arg,
	    p->ns, sa != NULL && *sa ? sa : "default") : NULL;
	if (tok == NULL) {
		if (!said++)
			log_warn("node %s: no service-account tokens here "
			    "(pod %s/%s's volume gets none)", n->name, p->ns,
			    p->name);
		return;
	}
	write_file(dir, rel, tok, strlen(tok));
}

/*
 * What volume vol holds, written into dir: ConfigMap and Secret keys,
 * downwardAPI fields, a projected volume's sources (with service-account
 * tokens); with tokens_only, only the tokens (written again after a
 * restart: the ones minted before are gone).
 */
static int
write_volume(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *vol, const char *dir, int tokens_only, char **cause)
{
	const cJSON *src;

	if (tokens_only) {
		cJSON_ArrayForEach(src, json_at(vol, "projected.sources"))
			if (json_at(src, "serviceAccountToken") != NULL)
				write_token(n, p, pod, json_at(src,
				    "serviceAccountToken"), dir);
		return 0;
	}
	if (json_at(vol, "configMap") != NULL)
		return write_keys(n, p, json_at(vol, "configMap"), 0, dir,
		    cause);
	if (json_at(vol, "secret") != NULL)
		return write_keys(n, p, json_at(vol, "secret"), 1, dir, cause);
	if (json_at(vol, "downwardAPI") != NULL)
		write_fields(pod, p, json_at(vol, "downwardAPI.items"), dir);
	cJSON_ArrayForEach(src, json_at(vol, "projected.sources")) {
		if (json_at(src, "configMap") != NULL &&
		    write_keys(n, p, json_at(src, "configMap"), 0, dir,
		        cause) != 0)
			return -1;
		if (json_at(src, "secret") != NULL &&
		    write_keys(n, p, json_at(src, "secret"), 1, dir, cause) !=
		        0)
			return -1;
		if (json_at(src, "downwardAPI") != NULL)
			write_fields(pod, p, json_at(src, "downwardAPI.items"),
			    dir);
		if (json_at(src, "serviceAccountToken") != NULL)
			write_token(n, p, pod, json_at(src,
			    "serviceAccountToken"), dir);
	}
	/* emptyDir and anything else: the directory is the volume. */
	return 0;
}

static int
mount_all(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, int tokens_only, char **cause)
{
	const cJSON *m, *vol = NULL;

	cJSON_ArrayForEach(m, json_at(spec, "volumeMounts")) {
		const char *vname = json_str(m, "name");
		const char *mp = json_str(m, "mountPath");
		char dir[PATH_MAX];

		if (vname == NULL || mp == NULL || strstr(mp, "..") != NULL)
			continue;
		cJSON_ArrayForEach(vol, json_at(pod, "spec.volumes"))
			if (json_str(vol, "name") && strcmp(json_str(vol, "name"),
			    vname) == 0)
				break;
		if (vol == NULL)
			continue;
		if (util_strf(dir, sizeof dir, "%s%s%s", root, mp[0] == '/' ? "" :
		    "/", mp) != 0)
			continue;
		if (ctrenv_mkdirs(dir) != 0) {
			*cause = util_printf(
			    "CreateContainerError: %s: %s", dir,
			    strerror(errno));
			return -1;
		}
		if (write_volume(n, p, pod, vol, dir, tokens_only, cause) != 0)
			return -1;
	}
	return 0;
}

/* Materialise the volumes the container mounts under root. */
int
ctrenv_mount(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, char **cause)
{
	return mount_all(n, p, pod, spec, root, 0, cause);
}

void
ctrenv_renew_tokens(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root)
{
	char *why = NULL;

	mount_all(n, p, pod, spec, root, 1, &why);
	free(why);
}

void
ctrenv_free(struct ctrenv *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		free(e->kv[i]);
	free(e->kv);
	e->kv = NULL;
	e->n = 0;
	e->cap = 0;
}
