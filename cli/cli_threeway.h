/*
 * kubectl apply's three-way patch (cli_threeway.c): from the configuration
 * last applied, the one in the file now and the live object.
 */
#ifndef VOLRAY_CLI_THREEWAY_H
#define VOLRAY_CLI_THREEWAY_H

#include <cjson/cJSON.h>

/*
 * The patch that takes current to modified while removing what original
 * had and modified has not (original may be NULL: nothing to remove). With
 * kind set it is a strategic merge patch for that built-in kind, else a
 * JSON merge patch. Returns the patch ({} when there is nothing to do), or
 * NULL with *cause (free it) when the file cannot be diffed.
 */
cJSON *cli_threeway_patch(const cJSON *original, const cJSON *modified,
    const cJSON *current, const char *kind, char **cause);

#endif
