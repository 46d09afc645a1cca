/*
 * The resource table following the CRDs of a store that other servers
 * write too (etcd): registry/crdfollow.c.
 */
#ifndef VOLRAY_CRDFOLLOW_H
#define VOLRAY_CRDFOLLOW_H

struct store;

/* Register and drop CRDs as st's events bring them. */
void crdfollow_start(struct store *st);

#endif
