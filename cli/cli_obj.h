/*
 * What volray(1) verbs act on: resources and names from the command line
 * (TYPE NAME..., TYPE/NAME, TYPE1,TYPE2), documents from -f files, the
 * namespace each goes to, and small helpers that every verb shares.
 */
#ifndef VOLRAY_CLI_OBJ_H
#define VOLRAY_CLI_OBJ_H

#include <cjson/cJSON.h>

#include "cli_res.h"

#define CLI_TABLE_ACCEPT "application/json;as=Table;v=v1;g=meta.k8s.io"

/*
 * The resource of "TYPE/NAME" or "TYPE NAME..." at the front of the
 * arguments; *name is the first name or NULL, *rest the index of the
 * arguments after it. Returns CLI_OK, CLI_USAGE when there is no type, or
 * CLI_FAIL when the server has none of that name (both reported).
 */
int cli_obj_target(const char *verb, int argc, char **argv,
    const struct cli_res **r, const char **name, int *rest);
/* The namespace a resource is used in: -n, else the context's; NULL for
 * a cluster-scoped resource. */
const char *cli_obj_ns(const struct cli_res *);
/* Every document of the -f files, Lists spread out; NULL (reported) on
 * failure, with *rc CLI_USAGE when no file was given. */
cJSON *cli_obj_load(const char *verb, int *rc);
/* The resource, namespace and name a document is about (the namespace
 * filled in); NULL (reported) if there is none. */
const struct cli_res *cli_obj_of_doc(cJSON *doc, const char **ns,
    const char **name);
/* Send a request with a JSON (or patch) body; the reply's object if the
 * server answered 2xx, else NULL after reporting its reason. */
cJSON *cli_obj_send(const char *method, const char *path, const char *ctype,
    const char *body);
/* Put key: value in front of an object's members. */
void cli_obj_prepend(cJSON *obj, const char *key, const char *value);
/* Milliseconds on a monotonic clock. */
long cli_obj_now_ms(void);
/* kubectl's age of an RFC 3339 time: "5s", "3m12s", "2d"; "<unknown>". */
char *cli_obj_age(const char *rfc3339);

#endif
