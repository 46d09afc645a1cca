/*
 * volrayd on an etcd cluster (--etcd-servers): the store opened as a cache
 * of etcd (store/store_etcd.c) with kube-apiserver's key layout, and
 * --migrate-to-etcd, which copies an embedded store's objects there
 * (store/store_migrate.c) with the CA and admin token the servers of one
 * cluster share (auth/pki_etcd.c).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "auth/pki_etcd.h"
#include "daemon/etcd.h"
#include "daemon/flags.h"
#include "lib/log.h"
#include "registry/etcdlayout.h"
#include "store/store.h"

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

int
volrayd_etcd_migrate(uv_loop_t *loop, const struct volrayd_flags *f,
    char **cause)
{
	struct store_migrate_counts n;
	store *from, *to;
	char pki[PATH_MAX];
	int rc;

	if (store_open(loop, f->data_dir, &from, cause) != 0)
		return -1;
	if (volrayd_etcd_open(loop, f, &to, cause) != 0) {
		store_close(from);
		return -1;
	}
	log_info("volrayd: migrating %s (revision %llu) to etcd %s under %s",
	    f->data_dir, (unsigned long long)store_rev(from),
	    f->etcd_servers[0], f->etcd_prefix);
	rc = store_migrate(from, to, &n, cause);
	snprintf(pki, sizeof pki, "%s/pki", f->data_dir);
	if (rc == 0 && (rc = pki_etcd_push(to, pki, cause)) == 1) {
		log_warn("volrayd: etcd has another cluster's CA and admin "
		    "token: kept them; this data dir's kubeconfig will not "
		    "work against servers on etcd");
		rc = 0;
	}
	log_info("volrayd: %zu objects copied, %zu already in etcd (left "
	    "alone), %zu written meanwhile by others", n.copied, n.there,
	    n.lost);
	store_close(to);
	store_close(from);
	return rc;
}
