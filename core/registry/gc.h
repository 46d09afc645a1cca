/*
 * Garbage collection by ownerReferences (Background and Foreground
 * propagation; Orphan is done at delete time by the registry) and
 * namespace termination: a deleted namespace's contents are deleted, then
 * the namespace itself.
 */
#ifndef VOLRAY_GC_H
#define VOLRAY_GC_H

#include "registry/registry.h"
#include "store/store.h"

typedef struct gc gc;

gc *gc_new(registry *, store *);
void gc_free(gc *);
/* Collect whatever a crash or restart left dangling. */
void gc_sweep(gc *);

#endif
