/*
 * The verbs of volray(1), one function each, grouped by file: cli_get.c
 * (get), cli_apply.c (apply, create, replace), cli_delete.c (delete,
 * wait), cli_edit.c (patch, label, annotate, scale), cli_describe.c
 * (describe), cli_misc.c (logs, version, api-resources, completion),
 * cli_kubeconfig.c (kubeconfig), cli_policy.c (policy), cli_queue.c (queue), cli_rayjob.c
 * (rayjob logs), cli_ray.c (ray: the kubectl ray plugin's verbs). Each takes the words left
 * after option parsing and returns an exit status: CLI_OK, CLI_FAIL or
 * CLI_USAGE.
 */
#ifndef VOLRAY_CLI_CMD_H
#define VOLRAY_CLI_CMD_H

#include "cli_opt.h"

int cli_get_run(int argc, char **argv);
int cli_apply_run(int argc, char **argv);
int cli_apply_create(int argc, char **argv);
int cli_apply_replace(int argc, char **argv);
int cli_delete_run(int argc, char **argv);
int cli_delete_wait(int argc, char **argv);
int cli_edit_patch(int argc, char **argv);
int cli_edit_label(int argc, char **argv);
int cli_edit_annotate(int argc, char **argv);
int cli_edit_scale(int argc, char **argv);
int cli_describe_run(int argc, char **argv);
int cli_misc_logs(int argc, char **argv);
int cli_policy_run(int argc, char **argv);
int cli_misc_version(int argc, char **argv);
int cli_misc_api_resources(int argc, char **argv);
int cli_kubeconfig_run(int argc, char **argv);
int cli_misc_completion(int argc, char **argv);
int cli_misc_node(int argc, char **argv);
int cli_queue_run(int argc, char **argv);
int cli_hypernode_run(int argc, char **argv);
int cli_job_run(int argc, char **argv);
/* "cpu=8,memory=32Gi" into a JSON resource list; -1 when malformed. */
struct cJSON;
int cli_res_list(const char *s, struct cJSON *into);
int cli_queue_pending(const char *name);
int cli_explain_run(int argc, char **argv);
int cli_session_run(int argc, char **argv);
int cli_policy_dry_run(const char *dir);
int cli_sim_run(int argc, char **argv);
int cli_rayjob_run(int argc, char **argv);
int cli_ray_run(int argc, char **argv);

/* The verb table of volray.c, for help and completion. */
extern const struct cli_verb cli_verbs[];

#endif
