/*
 * What the roles other than api need of a remote API server
 * (--kubeconfig), found by daemon/remote.c: the kinds they mirror and
 * the CRDs they register here and ensure there.
 */
#ifndef VOLRAY_DAEMON_REMOTE_H
#define VOLRAY_DAEMON_REMOTE_H

#include <cjson/cJSON.h>

struct remote;

/*
 * The CRD files of dir, registered in the resource table (an array of
 * their objects; the caller frees it), or NULL with *cause.
 */
cJSON *volrayd_crds_load(const char *dir, char **cause);
/* Each of crds on the remote server: created when missing (install), or
   named in a refusal. 0, or -1 with *cause. */
int volrayd_crds_ensure(struct remote *, const cJSON *crds, int install,
    char **cause);
/*
 * Whether the remote API server is not a volrayd (its /version names
 * another gitCommit: kube-apiserver's), so that the controllers reach the
 * Ray heads of volray's nodes through its node proxy. 0 when unsure.
 */
int volrayd_remote_foreign(struct remote *);
/*
 * The kinds (store keys) the roles other than api mirror of a remote API:
 * those their subsystems read (sched_kinds, node_mgr_kinds, ray_kinds,
 * the Leases of leader election); NULL (all) with the controllers role.
 * An array to free, NULL-terminated.
 */
const char **volrayd_remote_kinds(int roles);

#endif
