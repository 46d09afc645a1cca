/*
 * Resources of the API server for volray(1): discovery, read once, and
 * the resources that command-line words and documents name, with their
 * URL paths.
 */
#ifndef VOLRAY_CLI_RES_H
#define VOLRAY_CLI_RES_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "cli_buf.h"

/* One resource from discovery; the strings point into kept documents. */
struct cli_res {
	const char	*group, *version, *name, *singular, *kind;
	const cJSON	*shorts, *verbs, *categories;
	int		 namespaced, preferred;
};

/* Every resource the server serves, preferred versions first; discovery
 * runs once. Returns 0, or -1 after reporting a failure. */
int cli_res_discover(const struct cli_res **res, size_t *n);
/* The resource a command-line word names, as kubectl finds it; NULL
 * (reported) if none does. */
const struct cli_res *cli_res_resolve(const char *word);
/* The resource of a document's apiVersion and kind; NULL (reported). */
const struct cli_res *cli_res_kind(const char *apiversion,
    const char *kind);
/* Append the path of a collection (name NULL), of one object, or of one
 * object's subresource; ns NULL for every namespace. */
void cli_res_path(struct cli_buf *, const struct cli_res *,
    const char *ns, const char *name, const char *sub);
/* kubectl's name for a type in messages: "pod", "rayjob.ray.io" (free it). */
char *cli_res_type(const struct cli_res *);

/* Let go of what discovery kept (the connection's close hook, set by the
 * first discovery). */
void cli_res_free(void);

#endif
