/*
 * PodSpec defaults and checks shared by the admission of pods and of the
 * kinds that hold a pod template (podtemplate.c).
 */
#ifndef VOLRAY_PODTEMPLATE_H
#define VOLRAY_PODTEMPLATE_H

#include <cjson/cJSON.h>

/* Whether s is a DNS-1123 label of at most max characters. */
int podtemplate_is_dns_label(const char *s, int max, int letter_first);
/* Fill a PodSpec's defaults (no-op when spec is not an object). */
void podtemplate_defaults(cJSON *spec);
/* The same for a Job's template, where restartPolicy is not defaulted. */
void podtemplate_defaults_job(cJSON *spec);
/* Append a cause per problem of the PodSpec at path; job: no Always. */
void podtemplate_check(const cJSON *spec, const char *path, cJSON *causes,
    int job);
/* spec.selector is given and matches spec.template.metadata.labels. */
void podtemplate_check_selector(const cJSON *obj, cJSON *causes);
/* The number at path, if any, is not negative. */
void podtemplate_check_nonneg(const cJSON *obj, const char *path,
    cJSON *causes);

#endif
