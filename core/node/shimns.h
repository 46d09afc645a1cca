/*
 * volray-shim's mount namespace (shimns.c): a local container's volumes
 * at their mountPath, the host untouched.
 */
#ifndef VOLRAY_SHIMNS_H
#define VOLRAY_SHIMNS_H

#include <stddef.h>

/*
 * Into a mount namespace of our own with the plan's mounts (overlays'
 * upper layers on a tmpfs at tmp). 0, or -1 with why.
 */
int shimns_apply(const char *plan, const char *tmp, char *why, size_t size);
/* Into the mount namespace of process pid (kubectl exec, probes). */
int shimns_join(int pid);
/* Into the network (and UTS) namespace of process pid; into the network
   namespace whose file path is. */
int shimns_join_net(int pid);
int shimns_enter_net(const char *path);
/*
 * The container's own cgroups at the hierarchies' roots, as a container
 * runtime shows them (Ray reads its memory and CPU limits at
 * /sys/fs/cgroup/memory/memory.limit_in_bytes, /sys/fs/cgroup/memory.max,
 * cpu.cfs_quota_us, cpu.max): a mount namespace of the caller's own
 * (inside the shim's, whose view its own bookkeeping keeps) where each
 * group G ("ROOT/volray/...") is bound at ROOT. Best effort: a group
 * that cannot be shown leaves the hierarchy as it was.
 */
void shimns_cgroup_view(const char *const *groups, int ngroups);
/* Into a UTS namespace of our own named name. */
int shimns_hostname(const char *name);

#endif
