/*
 * kubectl attach to a running local container (attach.c): its output from
 * now on, its stdin when its spec asks for one. The callbacks are
 * execproc's: output per stream, and the end (code 0) once the instance
 * is gone.
 */
#ifndef VOLRAY_ATTACH_H
#define VOLRAY_ATTACH_H

#include <stddef.h>

#include "node/execproc.h"
#include "node/node.h"

struct node_ctr;
struct attach;

/* NULL with *cause when its log cannot be read. */
struct attach *attach_start(node_mgr *, struct node_ctr *, int in,
    const struct execproc_cb *, void *arg, char **cause);
void attach_write(struct attach *, const char *data, size_t len);
void attach_pause(struct attach *, int paused);
void attach_free(struct attach *);

#endif
