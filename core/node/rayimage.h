/*
 * Real Ray on the local node (rayimage.c): a container there whose image
 * is rayproject/ray[-ml]:VERSION[-SUFFIX] runs with the Ray installed for
 * VERSION (scripts/ray.sh: a virtual environment DIR/VERSION, DIR the
 * node manager's --ray-dir) first on its PATH; one whose Ray is not
 * installed waits as an image that cannot be pulled. With --ray-emulated
 * such images run as any other (volray's own `ray`, the heads emulated
 * by core/ray/). Documented in volrayd(8), "REAL RAY".
 */
#ifndef VOLRAY_NODE_RAYIMAGE_H
#define VOLRAY_NODE_RAYIMAGE_H

#include <stddef.h>

#include "node/node.h"

/*
 * 1 when image is rayproject/ray or rayproject/ray-ml (docker.io/ or
 * index.docker.io/ before it or not), with the Ray version its tag
 * starts with (N.N.N, then the end or '-') in ver, "" when it names
 * none (latest, nightly, a digest); 0 for any other image.
 */
int rayimage_parse(const char *image, char *ver, size_t size);
/*
 * Where the installs are (dir, NULL: none) and whether the local node
 * emulates Ray instead (emulated: rayproject/ray images run as others).
 * Before the node manager starts.
 */
void rayimage_set(node_mgr *, const char *dir, int emulated);
/*
 * Whether a container of image on node runs real Ray (installed or
 * not): the local node's, not emulated, a Ray image. The Ray heads
 * (core/ray/head.c) emulate nothing for such a pod.
 */
int rayimage_real(node_mgr *, const char *node, const char *image);

#endif
