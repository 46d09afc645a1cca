/*
 * kubectl's last-applied-configuration annotation (cli_lastapplied.c):
 * encoded byte for byte as kubectl writes it, so that volray apply and
 * kubectl apply read each other's.
 */
#ifndef VOLRAY_CLI_LASTAPPLIED_H
#define VOLRAY_CLI_LASTAPPLIED_H

#include <cjson/cJSON.h>

#define CLI_LASTAPPLIED "kubectl.kubernetes.io/last-applied-configuration"

/* A value as Go's encoding/json writes a map of it, with kubectl's
 * trailing newline (free it). */
char *cli_lastapplied_encode(const cJSON *);
/* kubectl's "modified" configuration of a document: a copy whose
 * annotation holds the document's own encoding (cJSON_Delete it). */
cJSON *cli_lastapplied_modified(const cJSON *doc);
/* The configuration a live object was last applied with, or NULL; *missing
 * is set when the object has no annotation at all. */
cJSON *cli_lastapplied_of(const cJSON *live, int *missing);

#endif
