/*
 * Table cells, as kube-apiserver's printers make them: the helpers the
 * built-in kinds' rows (kinds/rows*.c) and api/table.c share.
 */
#ifndef VOLRAY_CELL_H
#define VOLRAY_CELL_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* Append a string (NULL: ""), or a number. */
void cell_str(cJSON *cells, const char *s);
void cell_num(cJSON *cells, double v);
/* An int-or-string field as kubectl prints it, N/A when absent. */
void cell_intstr(cJSON *cells, const cJSON *v);
/* obj's AGE cell, as kubectl prints it (<unknown> without a time). */
void cell_age(cJSON *cells, const cJSON *obj);
/* The age of the time at path in obj, "<unknown>" without one. */
void cell_age_of(const cJSON *obj, const char *path, char out[16]);
/* The number at path in obj, 0 without one. */
double cell_field_num(const cJSON *obj, const char *path);
/* "a,b" of a field of every container of a pod template's spec. */
void cell_containers(const cJSON *spec, const char *field, char *out,
    size_t n);
/* A label selector as "k=v,k2=v2", <none> when empty. */
void cell_selector(const cJSON *sel, char *out, size_t n);

#endif
