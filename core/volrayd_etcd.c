/*
 * volrayd on an etcd cluster (--etcd-servers): the store opened as a cache
 * of etcd (store/store_etcd.c) with kube-apiserver's key layout, and what
 * several API servers of one cluster must share besides objects.
 *
 * Credentials. Every server of one cluster serves the same CA and accepts
 * the same admin token, so one kubeconfig works against any of them. The
 * CA's certificate and key and the admin's token live in etcd under
 * PREFIX/volray.io/pki/ (ca.crt, ca.key, admin.token): the first server
 * to start writes the ones it made (create-if-absent), every other server
 * takes them into its DATA_DIR/pki/ before it makes anything, and its
 * serving certificate is then signed by that CA for its own names
 * (--tls-san). Whoever can read etcd can read the CA's key, as they can
 * read every Secret with kube-apiserver.
 *
 * Custom resources. A CRD created through one server is registered by the
 * others when their watch brings it (and dropped when it is deleted).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/etcdlayout.h"
#include "registry/resource.h"
#include "store/store.h"
#include "volrayd.h"

static const char *const shared[] = { "ca.crt", "ca.key", "admin.token" };
#define NSHARED	(sizeof shared / sizeof shared[0])

int
volrayd_etcd_open(uv_loop_t *loop, const struct volrayd_flags *f,
    store **st, char **cause)
{
	struct store_etcd_conf c;

	memset(&c, 0, sizeof c);
	c.servers = (const char *const *)f->etcd_servers;
	c.nservers = f->netcd;
	c.ca_file = f->etcd_ca;
	c.cert_file = f->etcd_cert;
	c.key_file = f->etcd_key;
	c.prefix = f->etcd_prefix;
	c.compaction_s = (unsigned)((f->etcd_compaction_ms + 999) / 1000);
	c.layout = &registry_etcd_layout;
	return store_etcd_open(loop, &c, st, cause);
}

/* The whole of a small file (malloc'd), or NULL. */
static char *
slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	long n;

	if (fp == NULL)
		return NULL;
	if (fseek(fp, 0, SEEK_END) != 0 || (n = ftell(fp)) < 0 ||
	    n > 1 << 20 || fseek(fp, 0, SEEK_SET) != 0) {
		fclose(fp);
		return NULL;
	}
	buf = xmalloc((size_t)n + 1);
	*len = fread(buf, 1, (size_t)n, fp);
	buf[*len] = '\0';
	fclose(fp);
	return buf;
}

/* Write val to path (mode 0600) through a temporary file; 0 or -1. */
static int
spill(const char *path, const char *val, size_t len)
{
	char *tmp = util_printf("%s.tmp", path);
	int fd, rc = -1;
	ssize_t w;

	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600)) >= 0) {
		w = write(fd, val, len);
		if (w == (ssize_t)len && fsync(fd) == 0)
			rc = 0;
		close(fd);
		if (rc == 0)
			rc = rename(tmp, path);
		else
			unlink(tmp);
	}
	free(tmp);
	return rc;
}

int
volrayd_etcd_pki_pull(store *st, const char *dir, char **cause)
{
	char path[PATH_MAX], key[64], *val, *have, *err = NULL;
	size_t len, hlen, i;
	int rc;

	for (i = 0; i < NSHARED; i++) {
		snprintf(key, sizeof key, "pki/%s", shared[i]);
		rc = store_etcd_get_raw(st, key, &val, &len, &err);
		if (rc < 0) {
			*cause = util_printf("reading %s from etcd: %s", key,
			    err);
			free(err);
			return -1;
		}
		if (rc == 1)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, shared[i]);
		have = slurp(path, &hlen);
		if (have == NULL || hlen != len || memcmp(have, val, len) != 0) {
			if (spill(path, val, len) != 0) {
				*cause = util_printf("writing %s: %s", path,
				    strerror(errno));
				free(have);
				free(val);
				return -1;
			}
			log_info("volrayd: %s from etcd", shared[i]);
		}
		free(have);
		free(val);
	}
	return 0;
}

int
volrayd_etcd_pki_push(store *st, const char *dir, char **cause)
{
	char path[PATH_MAX], key[64], *val, *err = NULL;
	size_t len, i;
	int rc, lost = 0;

	for (i = 0; i < NSHARED; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, shared[i]);
		if ((val = slurp(path, &len)) == NULL)
			continue;
		snprintf(key, sizeof key, "pki/%s", shared[i]);
		rc = store_etcd_create_raw(st, key, val, len, &err);
		free(val);
		if (rc < 0) {
			*cause = util_printf("writing %s to etcd: %s", key,
			    err);
			free(err);
			return -1;
		}
		if (rc == 1)
			lost = 1;	/* someone's is there: compare */
	}
	if (!lost)
		return 0;
	/* Another server wrote first: are they ours? */
	for (i = 0; i < NSHARED; i++) {
		char *theirs, *mine;
		size_t tl, ml;
		int same;

		snprintf(key, sizeof key, "pki/%s", shared[i]);
		if (store_etcd_get_raw(st, key, &theirs, &tl, &err) != 0) {
			free(err);
			err = NULL;
			continue;
		}
		snprintf(path, sizeof path, "%s/%s", dir, shared[i]);
		mine = slurp(path, &ml);
		same = mine != NULL && ml == tl && memcmp(mine, theirs, tl) == 0;
		free(mine);
		free(theirs);
		if (!same)
			return 1;
	}
	return 0;
}

/* Whether the CRD name is registered with this spec already. */
static int
registered(const char *name, const cJSON *spec)
{
	int i, n = resource_count();

	for (i = 0; i < n; i++) {
		const resource *r = resource_at(i);

		if (r->crd_name != NULL && strcmp(r->crd_name, name) == 0)
			return cJSON_Compare(cJSON_GetObjectItem(r->crd,
			    "spec"), spec, 1);
	}
	return 0;
}

static void
follow_crds(void *arg, const store_event *ev)
{
	const char *name = ev->obj->name;
	char *cause = NULL;
	cJSON *t;

	(void)arg;
	if (strcmp(ev->obj->res,
	    "customresourcedefinitions.apiextensions.k8s.io") != 0)
		return;
	if (ev->type == STORE_DELETED) {
		resource_unregister_crd(name);
		return;
	}
	if ((t = store_obj_tree(ev->obj)) == NULL)
		return;
	if (registered(name, cJSON_GetObjectItem(t, "spec"))) {
		cJSON_Delete(t);
		return;
	}
	if (resource_register_crd(t, &cause) != 0) {
		log_warn("volrayd: CRD %s from etcd: %s", name, cause);
		free(cause);
	}
	cJSON_Delete(t);
}

void
volrayd_etcd_follow_crds(store *st)
{
	store_subscribe(st, follow_crds, NULL);
}

/* ---- --migrate-to-etcd ---- */

#define MIGRATE_CHUNK	100

struct migration {
	store *from, *to;
	size_t copied, there, lost;
	int failed;
	char *cause;
};

/* Copy objs (absent from etcd) as one transaction: its outcome. */
static int
copy_chunk(struct migration *m, const char *res, store_obj *const *objs,
    size_t n)
{
	uint64_t rev;
	char *err = NULL;
	size_t i;
	int out;

	store_batch_begin(m->to);
	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);

		store_put(m->to, res, objs[i]->ns, objs[i]->name, t);
		cJSON_Delete(t);
	}
	out = store_batch_commit_sync(m->to, &rev, &err);
	if (out == STORE_COMMIT_ERROR && m->cause == NULL)
		m->cause = util_printf("writing %s: %s", res, err);
	free(err);
	return out;
}

static void
migrate_res(const char *res, size_t n, void *arg)
{
	struct migration *m = arg;
	store_obj *const *all;
	store_obj **todo;
	size_t cnt, i, k = 0, j;

	(void)n;
	if (m->failed)
		return;
	cnt = store_list(m->from, res, NULL, &all);
	todo = xcalloc(cnt + 1, sizeof *todo);
	for (i = 0; i < cnt; i++) {
		if (store_get(m->to, res, all[i]->ns, all[i]->name) != NULL)
			m->there++;
		else
			todo[k++] = all[i];
	}
	for (i = 0; i < k && !m->failed; i += MIGRATE_CHUNK) {
		size_t c = k - i < MIGRATE_CHUNK ? k - i : MIGRATE_CHUNK;
		int out = copy_chunk(m, res, todo + i, c);

		if (out == STORE_COMMIT_OK)
			m->copied += c;
		else if (out == STORE_COMMIT_ERROR)
			m->failed = 1;
		else	/* someone wrote one of them meanwhile: one by one */
			for (j = i; j < i + c && !m->failed; j++) {
				out = copy_chunk(m, res, todo + j, 1);
				if (out == STORE_COMMIT_OK)
					m->copied++;
				else if (out == STORE_COMMIT_CONFLICT)
					m->lost++;
				else
					m->failed = 1;
			}
	}
	free(todo);
}

int
volrayd_etcd_migrate(uv_loop_t *loop, const struct volrayd_flags *f,
    char **cause)
{
	struct migration m;
	char pki[PATH_MAX];
	int rc;

	memset(&m, 0, sizeof m);
	if (store_open(loop, f->data_dir, &m.from, cause) != 0)
		return -1;
	if (volrayd_etcd_open(loop, f, &m.to, cause) != 0) {
		store_close(m.from);
		return -1;
	}
	log_info("volrayd: migrating %s (revision %llu) to etcd %s under %s",
	    f->data_dir, (unsigned long long)store_rev(m.from),
	    f->etcd_servers[0], f->etcd_prefix);
	store_each_res(m.from, migrate_res, &m);
	rc = m.failed ? -1 : 0;
	if (rc != 0)
		*cause = m.cause;
	else
		free(m.cause);
	snprintf(pki, sizeof pki, "%s/pki", f->data_dir);
	if (rc == 0 && (rc = volrayd_etcd_pki_push(m.to, pki, cause)) == 1) {
		log_warn("volrayd: etcd has another cluster's CA and admin "
		    "token: kept them; this data dir's kubeconfig will not "
		    "work against servers on etcd");
		rc = 0;
	}
	log_info("volrayd: %zu objects copied, %zu already in etcd (left "
	    "alone), %zu written meanwhile by others", m.copied, m.there,
	    m.lost);
	store_close(m.to);
	store_close(m.from);
	return rc;
}
