/*
 * volrayd on etcd (daemon/etcd.c): the store as a cache of etcd, opened
 * from the --etcd-* flags, and --migrate-to-etcd.
 */
#ifndef VOLRAY_DAEMON_ETCD_H
#define VOLRAY_DAEMON_ETCD_H

struct uv_loop_s;
struct store;
struct volrayd_flags;

/* The store on the etcd cluster of f. 0, or -1 with *cause. */
int volrayd_etcd_open(struct uv_loop_s *, const struct volrayd_flags *f,
    struct store **, char **cause);
/*
 * --migrate-to-etcd: every object of the embedded store in DATA_DIR
 * written to etcd as it is (uid, generation, timestamps; new
 * resourceVersions), objects etcd has already left alone, and the CA and
 * admin token with them. 0, or -1 with *cause.
 */
int volrayd_etcd_migrate(struct uv_loop_s *, const struct volrayd_flags *,
    char **cause);

#endif
