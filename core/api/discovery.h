/*
 * API discovery and OpenAPI: /api, /apis, /api/v1, /apis/G, /apis/G/V and
 * /openapi/v3[/...], generated from the resource registry so a CRD is
 * discoverable the moment it is created.
 */
#ifndef VOLRAY_DISCOVERY_H
#define VOLRAY_DISCOVERY_H

#include <cjson/cJSON.h>

/* The document for a discovery path, or NULL if the path is not one. */
cJSON *discovery_document(const char *path);
/* The OpenAPI v3 root or a group-version document; NULL if unknown. */
cJSON *discovery_openapi(const char *path);
/* /version */
cJSON *discovery_version(void);

#endif
