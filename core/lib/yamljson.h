/*
 * YAML to JSON: parse YAML 1.1 documents (libyaml) into cJSON trees with
 * Kubernetes' typing of plain scalars (int, float, true/false, null; quoted
 * scalars are always strings). Anchors and aliases are resolved.
 */
#ifndef VOLRAY_YAMLJSON_H
#define VOLRAY_YAMLJSON_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* The first document; NULL with *cause (malloc'd, with line) on error. */
cJSON *yamljson_parse(const char *buf, size_t len, char **cause);
/* All documents as a JSON array; empty documents are skipped. */
cJSON *yamljson_parse_all(const char *buf, size_t len, char **cause);
/* Read and parse all documents of a file. */
cJSON *yamljson_load_file(const char *path, char **cause);
/*
 * Every document of the *.yaml files of dir, in file-name order, as one
 * array. A file that cannot be read or parsed is skipped and named in
 * *cause (the first such; the caller frees it); NULL with *cause when
 * dir itself cannot be read.
 */
cJSON *yamljson_load_dir(const char *dir, char **cause);

#endif
