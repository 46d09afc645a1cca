/*
 * kube-apiserver's user impersonation (Impersonate-User, -Group, -Uid):
 * see impersonate.c.
 */
#ifndef VOLRAY_IMPERSONATE_H
#define VOLRAY_IMPERSONATE_H

#include "api/route.h"
#include "net/http.h"

struct rbac;

/*
 * After authentication: when the request asks to impersonate and its
 * sender may, rt->user becomes the impersonated user (kept in rt);
 * 0, or -1 once answered (403, or 400 for a group without a user).
 */
int impersonate(struct rbac *authz, http_req *req, struct route *rt);

#endif
