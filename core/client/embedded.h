/*
 * The embedded client: the client (client.h) of the API server in this
 * process. Its cache is the server's store and its writes are registry
 * calls, so a controller's write takes the path an HTTP write takes after
 * authentication (validation, admission, revision, log, watch).
 */
#ifndef VOLRAY_EMBEDDED_H
#define VOLRAY_EMBEDDED_H

#include "client/client.h"
#include "registry/registry.h"
#include "store/store.h"

client *embedded_new(store *, registry *);

#endif
