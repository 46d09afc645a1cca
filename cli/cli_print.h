/*
 * Output of the client, volray(1), in kubectl's formats: meta.k8s.io Tables
 * and plain columns, and objects as json, yaml, name or jsonpath=TEMPLATE.
 */
#ifndef VOLRAY_CLI_PRINT_H
#define VOLRAY_CLI_PRINT_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

/* Text of a table cell or JSONPath match as kubectl shows it (free it). */
char *cli_print_cell(const cJSON *);

/* A value as YAML, block style, its members in their order. */
void cli_print_yaml(FILE *, const cJSON *);
/* Is output an -o format known here (NULL: the default table)? */
int cli_print_known(const char *output);
/*
 * Print an object or a list on stdout in the -o format output (json, yaml,
 * name or jsonpath=TEMPLATE); -o name calls each object type/NAME. json and
 * yaml sort members and drop metadata.managedFields unless managed is set.
 * Returns 0, or -1 after a template error.
 */
int cli_print_objects(cJSON *doc, const char *output, const char *type,
    int managed);

#endif
