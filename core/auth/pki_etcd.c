/*
 * The credentials the API servers of one etcd cluster share. Every server
 * of one cluster serves the same CA and accepts the same admin token, so
 * one kubeconfig works against any of them. The CA's certificate and key
 * and the admin's token live in etcd under PREFIX/volray.io/pki/ (ca.crt,
 * ca.key, admin.token): the first server to start writes the ones it made
 * (create-if-absent), every other server takes them into its
 * DATA_DIR/pki/ before it makes anything, and its serving certificate is
 * then signed by that CA for its own names (--tls-san). Whoever can read
 * etcd can read the CA's key, as they can read every Secret with
 * kube-apiserver.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/pki_etcd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "store/store.h"

static const char *const shared[] = { "ca.crt", "ca.key", "admin.token" };
#define NSHARED	(sizeof shared / sizeof shared[0])

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
pki_etcd_pull(store *st, const char *dir, char **cause)
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
pki_etcd_push(store *st, const char *dir, char **cause)
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
