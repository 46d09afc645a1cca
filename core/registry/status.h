/*
 * Kubernetes Status objects: every API error is built here, so codes,
 * reasons and message wording stay consistent across the API.
 */
#ifndef VOLRAY_STATUS_H
#define VOLRAY_STATUS_H

#include <cjson/cJSON.h>

struct resource;

/* A Failure Status with code, reason and a printf-style message. */
cJSON *status_error(int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Add details {name, group, kind} (kind is the resource's plural). */
void status_details(cJSON *status, const struct resource *, const char *name);
cJSON *status_success(void);
cJSON *status_not_found(const struct resource *, const char *name);
cJSON *status_already_exists(const struct resource *, const char *name);
cJSON *status_conflict(const struct resource *, const char *name);
/* 422 Invalid with causes (a cJSON array, taken over). */
cJSON *status_invalid(const struct resource *, const char *kind,
    const char *name, cJSON *causes);
cJSON *status_bad_request(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
/*
 * kube-apiserver's refusal under fieldValidation=Strict, 400: "Pod in
 * version "v1" cannot be handled as a Pod: strict decoding error: unknown
 * field "spec.x", unknown field "spec.y"" for paths one a line; what is
 * "unknown field" or "duplicate field". api_version may carry its group.
 */
cJSON *status_strict_decoding(const char *kind, const char *api_version,
    const char *what, const char *paths);
/* The HTTP code of a Status. */
int status_code(const cJSON *status);
/* One cause for status_invalid. */
void status_add_cause(cJSON *causes, const char *reason, const char *field,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
