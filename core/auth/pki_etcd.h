/*
 * The CA and admin token shared through etcd by the API servers of one
 * cluster (auth/pki_etcd.c), kept in etcd under PREFIX/volray.io/pki/.
 */
#ifndef VOLRAY_PKI_ETCD_H
#define VOLRAY_PKI_ETCD_H

struct store;

/*
 * Take the CA and admin token etcd holds into dir (before the server
 * makes its own). 0, or -1 with *cause.
 */
int pki_etcd_pull(struct store *, const char *dir, char **cause);
/*
 * Write dir's CA and admin token to etcd when absent there. 0; 1 when
 * another server wrote different ones first (pull again and redo); -1
 * with *cause.
 */
int pki_etcd_push(struct store *, const char *dir, char **cause);

#endif
