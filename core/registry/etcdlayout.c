/*
 * Where objects live in etcd: kube-apiserver's key layout, so that
 * `etcdctl get --prefix /registry/pods` shows what users expect.
 *
 *   built-in kinds   PREFIX/<plural>/<namespace>/<name>, or
 *                    PREFIX/<plural>/<name> when cluster-scoped, whatever
 *                    the group (deployments, leases, clusterroles), with
 *                    kube's historical directories: services/specs,
 *                    services/endpoints, minions (nodes), controllers
 *                    (replicationcontrollers), and APIServices under
 *                    apiregistration.k8s.io/apiservices as kube's
 *   custom resources PREFIX/<group>/<plural>/[<namespace>/]<name>
 *                    (ray.io/rayjobs/default/x; the CRDs themselves under
 *                    apiextensions.k8s.io/customresourcedefinitions)
 *
 * A path's first segment has a dot exactly when it is a group's, which is
 * how split tells the two apart without knowing the custom resources
 * (their CRDs may come later in a listing than their objects).
 */
#include <stdio.h>
#include <string.h>

#include "registry/etcdlayout.h"
#include "registry/resource.h"

/* kube's directories that are not the plural. */
static const struct {
	const char *store_key;
	const char *dir;
} quirks[] = {
	{ "services", "services/specs" },
	{ "endpoints", "services/endpoints" },
	{ "nodes", "minions" },
	{ "replicationcontrollers", "controllers" },
	{ "apiservices.apiregistration.k8s.io",
	    "apiregistration.k8s.io/apiservices" },
};

static const char *
quirk_dir(const char *store_key)
{
	size_t i;

	for (i = 0; i < sizeof quirks / sizeof quirks[0]; i++)
		if (strcmp(quirks[i].store_key, store_key) == 0)
			return quirks[i].dir;
	return NULL;
}

/* The built-in store key ("deployments.apps") whose directory is dir. */
static const char *
builtin_of_dir(const char *dir, size_t len)
{
	size_t i;
	int n = resource_count(), j;

	for (i = 0; i < sizeof quirks / sizeof quirks[0]; i++)
		if (strlen(quirks[i].dir) == len &&
		    memcmp(quirks[i].dir, dir, len) == 0)
			return quirks[i].store_key;
	for (j = 0; j < n; j++) {
		const resource *r = resource_at(j);

		if (r->builtin && !r->computed && !r->create_only &&
		    strlen(r->plural) == len &&
		    memcmp(r->plural, dir, len) == 0 &&
		    quirk_dir(r->store_key) == NULL)
			return r->store_key;
	}
	return NULL;
}

static int
is_builtin(const char *store_key)
{
	const resource *r = resource_by_store_key(store_key);

	/* Unknown store keys with a group are custom resources to be. */
	return r != NULL ? r->builtin : strchr(store_key, '.') == NULL;
}

static int
join(const char *res, const char *ns, const char *name, char *buf,
    size_t size)
{
	const char *dot = strchr(res, '.'), *q;
	int n;

	if (*name == '\0' || strchr(name, '/') != NULL ||
	    strchr(ns, '/') != NULL)
		return -1;
	if ((q = quirk_dir(res)) != NULL)
		n = snprintf(buf, size, "%s/", q);
	else if (is_builtin(res))
		n = snprintf(buf, size, "%.*s/", dot ? (int)(dot - res) :
		    (int)strlen(res), res);
	else if (dot != NULL)
		n = snprintf(buf, size, "%s/%.*s/", dot + 1, (int)(dot - res),
		    res);
	else
		return -1;
	if (n < 0 || (size_t)n >= size)
		return -1;
	if (*ns != '\0')
		n += snprintf(buf + n, size - (size_t)n, "%s/", ns);
	if ((size_t)n >= size)
		return -1;
	n += snprintf(buf + n, size - (size_t)n, "%s", name);
	return (size_t)n < size ? 0 : -1;
}

/* Copy [s, s+len) into buf of size; -1 when it does not fit or is empty. */
static int
copy(char *buf, size_t size, const char *s, size_t len)
{
	if (len == 0 || len >= size)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return 0;
}

static int
split(const char *path, char *res, size_t rsize, char *ns, size_t nssize,
    char *name, size_t namesize)
{
	const char *seg[5], *p = path;
	size_t len[5];
	int n = 0, used;
	const char *key;

	while (n < 5) {
		const char *slash = strchr(p, '/');

		seg[n] = p;
		len[n] = slash ? (size_t)(slash - p) : strlen(p);
		if (len[n] == 0)
			return -1;
		n++;
		if (slash == NULL)
			break;
		p = slash + 1;
	}
	if (n == 5 || n < 2)
		return -1;
	if (memchr(seg[0], '.', len[0]) != NULL) {
		/* group/plural/... */
		if (len[0] + len[1] + 2 > rsize)
			return -1;
		snprintf(res, rsize, "%.*s.%.*s", (int)len[1], seg[1],
		    (int)len[0], seg[0]);
		used = 2;
	} else {
		key = NULL;
		if (n >= 3)	/* services/specs, services/endpoints */
			key = builtin_of_dir(seg[0], len[0] + 1 + len[1]);
		used = key != NULL ? 2 : 1;
		if (key == NULL)
			key = builtin_of_dir(seg[0], len[0]);
		if (key == NULL || strlen(key) >= rsize)
			return -1;
		strcpy(res, key);
	}
	switch (n - used) {
	case 1:
		*ns = '\0';
		return copy(name, namesize, seg[used], len[used]);
	case 2:
		if (copy(ns, nssize, seg[used], len[used]) != 0)
			return -1;
		return copy(name, namesize, seg[used + 1], len[used + 1]);
	default:
		return -1;
	}
}

static const char *
kind_of(const char *res)
{
	const resource *r = resource_by_store_key(res);

	return r != NULL ? r->kind : NULL;
}

const struct store_etcd_layout registry_etcd_layout = { join, split, kind_of };
