/*
 * The writer behind volray describe: lines at an indentation level with
 * cells separated by tabs, laid out at the end as kubectl's tabwriter
 * lays them out (a column block is a run of lines that have that cell,
 * two spaces after its widest entry), and the pieces of kubectl's
 * describers that several kinds share.
 */
#ifndef VOLRAY_CLI_DESCRIBE_H
#define VOLRAY_CLI_DESCRIBE_H

#include <cjson/cJSON.h>

#include "cli_buf.h"

/* Write one line at level (two spaces each); cells split by \t. */
void cli_describe_w(struct cli_buf *, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Lay out the lines and print them. */
void cli_describe_flush(struct cli_buf *);
/* "Labels:\tk=v" then "\tk2=v2" lines, or <none>; sorted by key. */
void cli_describe_labels(struct cli_buf *, int level, const char *title,
    const cJSON *labels);
/* "Annotations:\tk: v" lines, without kubectl's last-applied one. */
void cli_describe_annotations(struct cli_buf *, int level,
    const cJSON *annotations);
/* An RFC 3339 time as kubectl shows it: "Tue, 01 Dec 2026 10:42:35 +0000". */
char *cli_describe_time(const char *rfc3339);
/* A number or string value as %v prints it (free it). */
char *cli_describe_value(const cJSON *);
/* A pod template's or pod's containers under title. */
void cli_describe_containers(struct cli_buf *, const char *title,
    const cJSON *containers, const cJSON *statuses, const char *space);
/* Volumes:, QoS Class: (unless NULL), Node-Selectors: and Tolerations:
 * of a pod spec; level 1 in a pod template. */
void cli_describe_spec_tail(struct cli_buf *, int level, const cJSON *spec,
    const char *qos);
/* A pod template: labels, annotations, containers and the spec's tail. */
void cli_describe_template(struct cli_buf *, const cJSON *template);
/* "Conditions:" with the given columns of status.conditions. */
void cli_describe_conditions(struct cli_buf *, const cJSON *conditions,
    const char *const *cols, int ncols, int pod_style);

/* "Title:" then "k:\tv" lines of a map of quantities at level + 1,
 * binary ones as Kubernetes prints them back ("8388608Ki" as "8Gi"). */
void cli_describe_quantities(struct cli_buf *, int level, const char *title,
    const cJSON *map);

/* The kinds with describers of their own (cli_describe_pod.c and
 * cli_describe_kinds.c). */
void cli_describe_pod(struct cli_buf *, const cJSON *pod);
void cli_describe_node(struct cli_buf *, const cJSON *node);
void cli_describe_deployment(struct cli_buf *, const cJSON *deployment);
void cli_describe_job(struct cli_buf *, const cJSON *job);
/* A Namespace with its quotas and limit ranges, as kubectl shows it. */
void cli_describe_namespace(struct cli_buf *, const cJSON *ns);
/* What follows the generic part for a PodGroup (its pods) or a Queue (its
 * PodGroups by phase), in cli_describe_volcano.c; nothing for other kinds. */
void cli_describe_volcano(struct cli_buf *, const char *kind,
    const cJSON *obj);

#endif
