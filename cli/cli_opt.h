/*
 * Command-line options of volray(1). Every verb has one table of options
 * (struct cli_verb); the same table parses the command line and prints
 * `volray help VERB`, so the two cannot drift. Each option names where its
 * value goes in cli_opts, the one set of values every verb reads.
 */
#ifndef VOLRAY_CLI_OPT_H
#define VOLRAY_CLI_OPT_H

#include <stdio.h>

#include "cli_http.h"
#include "cli_node.h"

/* Exit statuses (volray(1) EXIT STATUS). */
#define CLI_OK		0
#define CLI_FAIL	1	/* the server refused, a condition not met */
#define CLI_USAGE	2	/* unknown flag, missing argument, bad value */

/* The values of every option; each verb reads the ones it has. */
struct cli_opts {
	const char	*ns, *selector, *fselector, *output, *container;
	const char	*forcond, *sort_by, *patch, *patch_type, *subresource;
	const char	*cascade, *field_manager, *since, *since_time;
	const char	*color, *policy_dir;
	const char	**files;
	int		 nfiles, all_ns, ignore_nf, managed, watch;
	int		 show_labels, overwrite, wait, all, help, client_only;
	int		 recursive, server_side, force_conflicts, follow;
	int		 previous, timestamps, merge, set_current;
	int		 save_config;
	long		 tail, timeout_ms, replicas, grace, limit_bytes;
	struct cli_http_conf conn;	/* --kubeconfig, --server, --token, ... */
	struct cli_node_opts node;	/* node add: --virtual, --count, ... */
	struct cli_sim_opts {		/* sim: --nodes, --node-cpu, ... */
		long		 nodes;
		const char	*cpu, *memory, *weights, *csv, *svg;
		const char	*nodes_file, *labels;
	} sim;
	struct cli_job_opts {		/* job run */
		long		 replicas, min;
		const char	*name, *image, *requests, *limits, *queue;
		const char	*scheduler;
	} job;
	struct cli_ray_opts {		/* ray: the kubectl ray plugin's */
		const char	*ray_version, *image, *head_cpu, *head_memory;
		const char	*head_gpu, *worker_cpu, *worker_memory;
		const char	*worker_gpu, *labels, *annotations;
		const char	*head_params, *worker_params, *autoscaler;
		const char	*cluster, *worker_group, *node_type, *out_dir;
		const char	*job_name, *working_dir, *runtime_env_json;
		const char	*metadata_json, *entrypoint_resources;
		const char	*ep_cpus, *ep_gpus, *submission_id, *file;
		long		 min_replicas, max_replicas, hosts, ep_memory;
		long		 timeout_ms;
		int		 dry_run, yes, no_wait, verbose;
	} ray;
	struct cli_queue_opts {		/* queue create / operate */
		long		 weight, priority;
		const char	*parent, *capability, *deserved, *guarantee;
		const char	*reclaimable, *action;
	} queue;
};
extern struct cli_opts cli_opts;

enum cli_opt_type {
	CLI_OPT_FLAG,		/* int, set to 1 */
	CLI_OPT_STR,		/* const char * */
	CLI_OPT_FILES,		/* appended to cli_opts.files */
	CLI_OPT_LONG,		/* long, a decimal number */
	CLI_OPT_DURATION	/* long milliseconds from "30s", "1m30s" */
};

/* One option: --name (and -c); arg names its value in help. */
struct cli_opt {
	const char		*name;
	int			 letter;
	enum cli_opt_type	 type;
	void			*dst;
	const char		*arg, *help;
};

/* One verb: its synopsis, its options (ending with a zeroed entry), the
 * function that runs it, and whether it talks to the server. */
struct cli_verb {
	const char		*name, *args, *summary;
	const struct cli_opt	*opts;
	int			(*run)(int argc, char **argv);
	int			 offline;
};

/* The global options, shared by every verb. */
extern const struct cli_opt cli_opt_global[];

/*
 * Parse the whole command line: the first word that is not an option (or
 * an option's value) names the verb, looked up in verbs (ending with a
 * zeroed entry); options may come before or after it. *verb is NULL when
 * there is none. The remaining words are left in argc and argv. Returns 0,
 * or CLI_USAGE after saying why on stderr.
 */
int cli_opt_parse(const struct cli_verb *verbs, int *argc, char ***argv,
    const struct cli_verb **verb);
/* Print a verb's usage, summary and options (global ones after). */
void cli_opt_help(FILE *, const struct cli_verb *);
/* A duration in milliseconds: "30s", "500ms", "1h30m" or seconds; -1 if
 * malformed. */
long cli_opt_duration(const char *);
/* Say a usage error about a verb on stderr; returns CLI_USAGE. */
int cli_opt_usage(const char *verb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
