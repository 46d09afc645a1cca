/*
 * kube-apiserver's layout of objects in etcd, for the etcd-backed store
 * (store/store.h, store_etcd_open): etcdlayout.c says which keys.
 */
#ifndef VOLRAY_ETCDLAYOUT_H
#define VOLRAY_ETCDLAYOUT_H

#include "store/store.h"

extern const struct store_etcd_layout registry_etcd_layout;

#endif
