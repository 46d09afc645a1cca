/*
 * volray: the command-line client, volray(1). The verb table below is the
 * whole command line: each verb's synopsis, summary and options, which
 * cli_opt.c parses (anywhere on the line, as kubectl does) and prints as
 * `volray help VERB`. main finds the verb, opens the connection the
 * kubeconfig describes and runs it; the verbs live in cli_get.c,
 * cli_apply.c, cli_delete.c, cli_edit.c, cli_describe.c and cli_misc.c,
 * and speak the same HTTP API as kubectl through cli_http.c.
 *
 * Exit status: 0 on success, 1 when the server refused or a condition was
 * not met, 2 for a usage error (an unknown flag, a missing argument, a bad
 * value).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_opt.h"
#include "cli_print.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

#define O(name, letter, type, field, arg, help) \
	{ name, letter, CLI_OPT_##type, &cli_opts.field, arg, help }
#define END	{ NULL, 0, 0, NULL, NULL, NULL }

#define OPT_SELECTOR O("selector", 'l', STR, selector, "SELECTOR", \
	"only objects whose labels match, as app=web,tier!=db")
#define OPT_FSELECTOR O("field-selector", 0, STR, fselector, "SELECTOR", \
	"only objects whose fields match, as status.phase=Running")
#define OPT_FILES O("filename", 'f', FILES, files, "FILE", \
	"a YAML or JSON file, - for standard input; may be repeated")
#define OPT_OUTPUT O("output", 'o', STR, output, "FORMAT", \
	"json, yaml, name, wide, jsonpath=TEMPLATE or custom-columns=SPEC")
#define OPT_ALLNS O("all-namespaces", 'A', FLAG, all_ns, NULL, \
	"across every namespace")
#define OPT_TIMEOUT O("timeout", 0, DURATION, timeout_ms, "DURATION", \
	"give up after this long (default 30s)")

static const struct cli_opt get_opts[] = {
	OPT_ALLNS, OPT_SELECTOR, OPT_FSELECTOR, OPT_OUTPUT,
	O("watch", 'w', FLAG, watch, NULL,
	    "after the list, print each change until interrupted"),
	O("show-labels", 0, FLAG, show_labels, NULL,
	    "add a LABELS column to the table"),
	O("sort-by", 0, STR, sort_by, "JSONPATH",
	    "order objects by this field, as .metadata.name"),
	O("show-managed-fields", 0, FLAG, managed, NULL,
	    "keep metadata.managedFields in json and yaml"),
	END
};
#define OPT_RECURSIVE O("recursive", 'R', FLAG, recursive, NULL, \
	"with -f DIR, the files of its subdirectories too")

static const struct cli_opt files_opts[] = {
	OPT_FILES, OPT_RECURSIVE,
	O("save-config", 0, FLAG, save_config, NULL,
	    "keep the configuration in kubectl's last-applied annotation, "
	    "for apply"),
	END
};
static const struct cli_opt apply_opts[] = {
	OPT_FILES, OPT_RECURSIVE,
	O("server-side", 0, FLAG, server_side, NULL,
	    "server-side apply instead of kubectl's client-side apply"),
	O("field-manager", 0, STR, field_manager, "NAME",
	    "the manager of the fields set (volray with --server-side, "
	    "else volray-client-side-apply)"),
	O("force-conflicts", 0, FLAG, force_conflicts, NULL,
	    "with --server-side, take fields other managers own"),
	END
};
static const struct cli_opt delete_opts[] = {
	OPT_FILES, OPT_RECURSIVE, OPT_SELECTOR, OPT_FSELECTOR,
	O("all", 0, FLAG, all, NULL, "every object of the resource"),
	O("ignore-not-found", 0, FLAG, ignore_nf, NULL,
	    "an object that does not exist is not an error"),
	O("cascade", 0, STR, cascade, "MODE",
	    "background (default), foreground or orphan the dependents"),
	O("grace-period", 0, LONG, grace, "SECONDS",
	    "seconds a pod is given to stop; 0 at once"),
	O("wait", 0, FLAG, wait, NULL, "wait until each object is gone"),
	OPT_TIMEOUT, END
};
static const struct cli_opt describe_opts[] = { OPT_SELECTOR, END };
static const struct cli_opt patch_opts[] = {
	O("patch", 'p', STR, patch, "PATCH", "the patch, JSON or YAML"),
	O("type", 0, STR, patch_type, "TYPE",
	    "strategic (default), merge or json"),
	O("subresource", 0, STR, subresource, "NAME",
	    "patch this subresource, as status or scale"),
	END
};
static const struct cli_opt keys_opts[] = {
	O("overwrite", 0, FLAG, overwrite, NULL,
	    "replace the value of a key that has one"),
	END
};
static const struct cli_opt scale_opts[] = {
	O("replicas", 0, LONG, replicas, "N", "the new number of replicas"),
	END
};
static const struct cli_opt logs_opts[] = {
	O("container", 'c', STR, container, "NAME", "the container to read"),
	O("tail", 0, LONG, tail, "N", "only the last N lines"),
	O("follow", 'f', FLAG, follow, NULL,
	    "go on printing lines as they come, until the container ends"),
	O("previous", 'p', FLAG, previous, NULL,
	    "the log of the container's previous run"),
	O("since", 0, STR, since, "DURATION",
	    "only lines newer than this, as 5s, 2m or 3h"),
	O("since-time", 0, STR, since_time, "TIME",
	    "only lines after this RFC 3339 time"),
	O("timestamps", 0, FLAG, timestamps, NULL,
	    "start each line with its RFC 3339 time"),
	O("limit-bytes", 0, LONG, limit_bytes, "N",
	    "stop after N bytes of log"),
	END
};
static const struct cli_opt wait_opts[] = {
	O("for", 0, STR, forcond, "CONDITION",
	    "condition=TYPE[=VALUE], jsonpath='{PATH}'[=VALUE], create or "
	    "delete"),
	OPT_TIMEOUT, END
};
static const struct cli_opt api_opts[] = {
	O("output", 'o', STR, output, "FORMAT", "name or wide"), END
};
static const struct cli_opt node_opts[] = {
	O("virtual", 0, FLAG, node.is_virtual, NULL, "simulated nodes"),
	O("count", 0, LONG, node.count, "N", "how many nodes"),
	O("cpu", 0, STR, node.cpu, "QUANTITY", "CPU of each node"),
	O("memory", 0, STR, node.memory, "QUANTITY", "memory of each node"),
	O("pods", 0, STR, node.pods, "N", "pods each node takes (110)"),
	O("labels", 0, STR, node.labels, "K=V,...", "labels of each node"),
	O("taints", 0, STR, node.taints, "K=V:EFFECT,...",
	    "taints of each node"),
	O("name-prefix", 0, STR, node.prefix, "PREFIX",
	    "names are PREFIX-0, PREFIX-1, ... (vnode)"),
	O("topology", 0, STR, node.topology, "N[,M,...]",
	    "label nodes into HyperNodes: N nodes a tier-1 group, M of those "
	    "a tier-2 group, ..."),
	END
};
static const struct cli_opt queue_opts[] = {
	O("weight", 0, LONG, queue.weight, "N",
	    "create / operate --action update: the queue's weight"),
	O("priority", 0, LONG, queue.priority, "N", "create: spec.priority"),
	O("parent", 0, STR, queue.parent, "QUEUE", "create: the parent queue"),
	O("capability", 0, STR, queue.capability, "K=V,...",
	    "create: the most the queue may use, as cpu=8,memory=32Gi"),
	O("deserved", 0, STR, queue.deserved, "K=V,...",
	    "create: what it is entitled to (capacity)"),
	O("guarantee", 0, STR, queue.guarantee, "K=V,...",
	    "create: what is set aside for it"),
	O("reclaimable", 0, STR, queue.reclaimable, "true|false",
	    "create: whether others may reclaim from it (true)"),
	O("action", 0, STR, queue.action, "open|close|update",
	    "operate: what to do"),
	END
};
static const struct cli_opt job_opts[] = {
	O("name", 'N', STR, job.name, "NAME", "run: the job's name"),
	O("image", 'i', STR, job.image, "IMAGE", "run: the image (busybox)"),
	O("replicas", 'r', LONG, job.replicas, "N", "run: pods of the task (1)"),
	O("min", 'm', LONG, job.min, "N", "run: minAvailable (1)"),
	O("requests", 'R', STR, job.requests, "K=V,...",
	    "run: each pod's requests (cpu=1000m,memory=100Mi)"),
	O("limits", 'L', STR, job.limits, "K=V,...", "run: each pod's limits"),
	O("queue", 'q', STR, job.queue, "QUEUE", "run: the queue (default)"),
	O("scheduler", 'S', STR, job.scheduler, "NAME",
	    "run: the scheduler (volcano)"),
	OPT_FILES, OPT_ALLNS, END
};
static const struct cli_opt policy_opts[] = {
	O("output", 'o', STR, output, "FORMAT",
	    "policy list as json, yaml or wide (with failurePolicy and the "
	    "arguments)"), END
};
static const struct cli_opt explain_opts[] = {
	O("output", 'o', STR, output, "FORMAT",
	    "the whole record as json or yaml"), END
};
static const struct cli_opt session_opts[] = {
	O("policy-dir", 0, STR, policy_dir, "DIR",
	    "replay with DIR's scheduler.yaml and plugins over the recorded "
	    "ones"),
	O("output", 'o', STR, output, "FORMAT",
	    "replay's decisions as json or yaml"), END
};
static const struct cli_opt sim_opts[] = {
	O("nodes", 0, LONG, sim.nodes, "N", "simulated nodes (100)"),
	O("node-cpu", 0, STR, sim.cpu, "QUANTITY", "CPU of each node (32)"),
	O("node-memory", 0, STR, sim.memory, "QUANTITY",
	    "memory of each node (128Gi)"),
	O("nodes-file", 0, STR, sim.nodes_file, "FILE",
	    "the nodes of FILE (YAML: name, count, cpu, memory, labels; or "
	    "Node objects) instead"),
	O("node-labels", 0, STR, sim.labels, "K=V,...",
	    "labels of every node"),
	O("queue-weights", 0, STR, sim.weights, "Q=W,...",
	    "queues' weights (1 each)"),
	O("csv", 0, STR, sim.csv, "FILE",
	    "the cluster over time, per policy and queue, as CSV"),
	O("svg", 0, STR, sim.svg, "PREFIX",
	    "plots: PREFIX-util.svg, PREFIX-shares.svg, PREFIX-wait.svg"), END
};
static const struct cli_opt rayjob_opts[] = {
	O("follow", 'f', FLAG, follow, NULL,
	    "go on printing the logs until the Ray job ends"), END
};
static const struct cli_opt ray_opts[] = {
	O("ray-version", 0, STR, ray.ray_version, "VERSION",
	    "create cluster, job submit: rayVersion (2.52.0)"),
	O("image", 0, STR, ray.image, "IMAGE",
	    "the Ray image (rayproject/ray:VERSION)"),
	O("head-cpu", 0, STR, ray.head_cpu, "QUANTITY", "the head's CPUs (2)"),
	O("head-memory", 0, STR, ray.head_memory, "QUANTITY",
	    "the head's memory (4Gi)"),
	O("head-gpu", 0, STR, ray.head_gpu, "QUANTITY", "the head's GPUs (0)"),
	O("head-ray-start-params", 0, STR, ray.head_params, "K=V,...",
	    "the head's rayStartParams"),
	O("worker-replicas", 0, LONG, replicas, "N",
	    "create: the worker group's replicas (1)"),
	O("worker-cpu", 0, STR, ray.worker_cpu, "QUANTITY",
	    "each worker's CPUs (2)"),
	O("worker-memory", 0, STR, ray.worker_memory, "QUANTITY",
	    "each worker's memory (4Gi)"),
	O("worker-gpu", 0, STR, ray.worker_gpu, "QUANTITY",
	    "each worker's GPUs (0)"),
	O("worker-ray-start-params", 0, STR, ray.worker_params, "K=V,...",
	    "the workers' rayStartParams"),
	O("worker-min-replicas", 0, LONG, ray.min_replicas, "N",
	    "create workergroup: minReplicas"),
	O("worker-max-replicas", 0, LONG, ray.max_replicas, "N",
	    "create workergroup: maxReplicas"),
	O("num-of-hosts", 0, LONG, ray.hosts, "N",
	    "create: hosts per worker replica (1)"),
	O("labels", 0, STR, ray.labels, "K=V,...", "create cluster: labels"),
	O("annotations", 0, STR, ray.annotations, "K=V,...",
	    "create cluster: annotations"),
	O("autoscaler", 0, STR, ray.autoscaler, "v1|v2",
	    "create cluster: in-tree autoscaling of that version"),
	O("file", 0, STR, ray.file, "FILE",
	    "create cluster: the plugin's cluster config (YAML)"),
	O("dry-run", 0, FLAG, ray.dry_run, NULL,
	    "create cluster, job submit: print the object, create nothing"),
	O("wait", 0, FLAG, wait, NULL,
	    "create cluster: until it is RayClusterProvisioned"),
	O("timeout", 0, DURATION, ray.timeout_ms, "DURATION",
	    "create --wait, job submit: give up after this long (5m)"),
	O("ray-cluster", 'c', STR, ray.cluster, "CLUSTER",
	    "create workergroup, get workergroup|node: the Ray cluster"),
	O("worker-group", 'w', STR, ray.worker_group, "GROUP",
	    "scale cluster: the worker group"),
	O("replicas", 'r', LONG, replicas, "N", "scale cluster: replicas"),
	O("min-replicas", 0, LONG, ray.min_replicas, "N",
	    "scale cluster: minReplicas"),
	O("max-replicas", 0, LONG, ray.max_replicas, "N",
	    "scale cluster: maxReplicas"),
	O("name", 0, STR, ray.job_name, "NAME", "job submit: the RayJob's name"),
	O("submission-id", 0, STR, ray.submission_id, "ID",
	    "job submit: the Ray job's id (raysubmit_...)"),
	O("working-dir", 0, STR, ray.working_dir, "DIR",
	    "job submit: zip DIR and upload it as the job's working_dir"),
	O("runtime-env-json", 0, STR, ray.runtime_env_json, "JSON",
	    "job submit: the job's runtime_env"),
	O("metadata-json", 0, STR, ray.metadata_json, "JSON",
	    "job submit: the job's metadata"),
	O("entrypoint-num-cpus", 0, STR, ray.ep_cpus, "N",
	    "job submit: CPUs for the entrypoint"),
	O("entrypoint-num-gpus", 0, STR, ray.ep_gpus, "N",
	    "job submit: GPUs for the entrypoint"),
	O("entrypoint-memory", 0, LONG, ray.ep_memory, "BYTES",
	    "job submit: memory for the entrypoint"),
	O("entrypoint-resources", 0, STR, ray.entrypoint_resources, "JSON",
	    "job submit: custom resources for the entrypoint"),
	O("no-wait", 0, FLAG, ray.no_wait, NULL,
	    "job submit: return once the job is submitted"),
	O("node-type", 0, STR, ray.node_type, "all|head|worker",
	    "log: whose logs (all)"),
	O("out-dir", 0, STR, ray.out_dir, "DIR",
	    "log: where the logs go (.)"),
	O("yes", 'y', FLAG, ray.yes, NULL, "delete: do not ask"),
	O("verbose", 'v', FLAG, ray.verbose, NULL,
	    "session: print the kubectl command it runs"),
	OPT_ALLNS, END
};
static const struct cli_opt kubeconfig_opts[] = {
	O("merge", 0, FLAG, merge, NULL,
	    "add its cluster, user and context to FILE, keeping the others"),
	O("set-current", 0, FLAG, set_current, NULL,
	    "with --merge, make its context FILE's current-context"),
	END
};
static const struct cli_opt version_opts[] = {
	O("client", 0, FLAG, client_only, NULL, "only the client's version"), END
};

static int run_help(int, char **);

const struct cli_verb cli_verbs[] = {
	{ "get", "RESOURCE[,RESOURCE...] [NAME...] | RESOURCE/NAME...",
	    "Print objects as the server's tables or in an -o format.",
	    get_opts, cli_get_run, 0 },
	{ "describe", "RESOURCE [NAME...] | RESOURCE/NAME",
	    "Show objects in detail, with their events.", describe_opts,
	    cli_describe_run, 0 },
	{ "apply", "-f FILE|DIR|-...",
	    "Create or update objects as kubectl apply does.", apply_opts,
	    cli_apply_run, 0 },
	{ "create", "-f FILE...", "Create objects; existing ones are errors.",
	    files_opts, cli_apply_create, 0 },
	{ "replace", "-f FILE...", "Replace existing objects whole.",
	    files_opts, cli_apply_replace, 0 },
	{ "delete", "RESOURCE NAME... | RESOURCE -l SELECTOR | -f FILE...",
	    "Delete objects.", delete_opts, cli_delete_run, 0 },
	{ "patch", "RESOURCE NAME... -p PATCH",
	    "Change fields of objects with a patch.", patch_opts,
	    cli_edit_patch, 0 },
	{ "label", "RESOURCE NAME... KEY=VALUE... KEY-...",
	    "Set or remove labels.", keys_opts, cli_edit_label, 0 },
	{ "annotate", "RESOURCE NAME... KEY=VALUE... KEY-...",
	    "Set or remove annotations.", keys_opts, cli_edit_annotate, 0 },
	{ "scale", "RESOURCE NAME... --replicas N",
	    "Set the replicas of a deployment, replica set or job.",
	    scale_opts, cli_edit_scale, 0 },
	{ "logs", "POD", "Print a container's log.", logs_opts,
	    cli_misc_logs, 0 },
	{ "wait", "RESOURCE/NAME --for CONDITION",
	    "Wait for a condition or a deletion.", wait_opts,
	    cli_delete_wait, 0 },
	{ "node", "add --virtual --count N --cpu C --memory M",
	    "Add simulated nodes.", node_opts, cli_misc_node, 0 },
	{ "queue", "list | get NAME | pending NAME | open NAME | close NAME | "
	    "create NAME | delete NAME | operate NAME --action A",
	    "List Volcano queues, show one or its waiting jobs in line, "
	    "create, delete, open, close or update one (vcctl's verbs).",
	    queue_opts, cli_queue_run, 0 },
	{ "job", "run --name NAME [...] | run -f FILE | list [-A] | view NAME | "
	    "delete NAME | suspend NAME | resume NAME",
	    "Volcano Jobs with vcctl's verbs: run, list, view, delete, suspend, "
	    "resume.", job_opts, cli_job_run, 0 },
	{ "hypernode", "list | get NAME",
	    "Draw the network topology (HyperNodes) as a tree.", NULL,
	    cli_hypernode_run, 0 },
	{ "explain", "pod|podgroup|vcjob|rayjob|raycluster|queue/NAME | KIND NAME",
	    "Why a job waits: what the scheduler's last sessions did with "
	    "it.", explain_opts, cli_explain_run, 0 },
	{ "policy", "list | reload | check DIR | test [DIR] | dry-run DIR",
	    "List or reload the daemon's policies; check or test a policy "
	    "directory offline; what DIR would change on the live cluster.",
	    policy_opts, cli_policy_run, 1 },
	{ "sim", "TRACE [POLICY-DIR...]",
	    "Play a job trace in virtual time with each policy, side by side.",
	    sim_opts, cli_sim_run, 1 },
	{ "session", "record FILE | replay FILE [--policy-dir DIR]",
	    "Save what a scheduling session reads, or run one on a saved "
	    "file offline.", session_opts, cli_session_run, 1 },
	{ "rayjob", "logs NAME [-f]",
	    "Print a RayJob's Ray job logs, read from its head.", rayjob_opts,
	    cli_rayjob_run, 0 },
	{ "ray", "create cluster|workergroup NAME | get cluster|workergroup|"
	    "node [NAME] | get token CLUSTER | scale cluster NAME -w GROUP -r N"
	    " | job submit --name NAME -- ENTRYPOINT... | session NAME | log "
	    "NAME | delete NAME...",
	    "What KubeRay's kubectl ray plugin does: Ray clusters, worker "
	    "groups, jobs, logs.", ray_opts, cli_ray_run, 0 },
	{ "api-resources", "", "List the resources the server serves.",
	    api_opts, cli_misc_api_resources, 0 },
	{ "version", "", "Print the client's and the server's version.",
	    version_opts, cli_misc_version, 0 },
	{ "kubeconfig", "[--merge [FILE] [--set-current]]",
	    "Print the kubeconfig this client reads, or merge it into FILE "
	    "(~/.kube/config).", kubeconfig_opts, cli_kubeconfig_run, 1 },
	{ "completion", "bash", "Print a bash completion script.", NULL,
	    cli_misc_completion, 1 },
	{ "help", "[VERB]", "Print the help of a verb, or the list of verbs.",
	    NULL, run_help, 1 },
	{ NULL, NULL, NULL, NULL, NULL, 0 }
};

/* The list of verbs, for `volray help` and a missing verb. */
static void
usage(FILE *f)
{
	const struct cli_verb *v;

	fprintf(f, "usage: volray [--kubeconfig FILE] [-s URL] [-n NS] "
	    "VERB [ARGUMENT...] [OPTION...]\n\nVerbs:\n");
	for (v = cli_verbs; v->name != NULL; v++)
		fprintf(f, "  %-14s %s\n", v->name, v->summary);
	fprintf(f, "\nSee 'volray help VERB' for a verb's options.\n");
}

/* help [VERB]. */
static int
run_help(int argc, char **argv)
{
	const struct cli_verb *v;

	if (argc == 0) {
		usage(stdout);
		return CLI_OK;
	}
	for (v = cli_verbs; v->name != NULL; v++)
		if (strcmp(v->name, argv[0]) == 0) {
			cli_opt_help(stdout, v);
			return CLI_OK;
		}
	return cli_opt_usage(NULL, "unknown command \"%s\"", argv[0]);
}

/* Parse the line, open the connection unless the verb works offline, and
 * run the verb. */
int
main(int argc, char **argv)
{
	const struct cli_verb *v;
	int rc, i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--version") == 0) {
			printf("volray %s\n", PACKAGE_VERSION);
			return CLI_OK;
		}
	}
	if ((rc = cli_opt_parse(cli_verbs, &argc, &argv, &v)) != 0)
		return rc;
	if (v == NULL) {
		usage(cli_opts.help ? stdout : stderr);
		free(argv);
		return cli_opts.help ? CLI_OK : CLI_USAGE;
	}
	if (cli_opts.help) {
		cli_opt_help(stdout, v);
		free(argv);
		return CLI_OK;
	}
	if (v->run == cli_misc_version && cli_opts.client_only) {
		printf("Client Version: v%s\n", PACKAGE_VERSION);
		free(argv);
		return CLI_OK;
	}
	if (!cli_print_known(cli_opts.output)) {
		free(argv);
		return cli_opt_usage(v->name, "unknown output format %s",
		    cli_opts.output);
	}
	if (v->offline)
		rc = v->run(argc, argv);
	else if (cli_http_open(&cli_opts.conn) != 0)
		rc = CLI_FAIL;
	else {
		rc = v->run(argc, argv);
		cli_http_close();
	}
	free(argv);
	free(cli_opts.files);
	return rc;
}
