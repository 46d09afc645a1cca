/*
 * volrayd's command line: every flag as a field, parsed and checked in
 * daemon/flags.c before the daemon starts anything.
 */
#ifndef VOLRAY_DAEMON_FLAGS_H
#define VOLRAY_DAEMON_FLAGS_H

/* What a volrayd runs (--roles); the default is all of them. */
enum volrayd_role {
	ROLE_API = 1 << 0,		/* the store and the Kubernetes API */
	ROLE_CONTROLLERS = 1 << 1,	/* Lua controllers, node lifecycle */
	ROLE_SCHEDULER = 1 << 2,
	ROLE_NODES = 1 << 3,		/* the local and simulated nodes */
	ROLE_RAY = 1 << 4,		/* the Ray head emulation */
	ROLE_ALL = (1 << 5) - 1
};

/* --scheduler-listen off: the scheduler serves no endpoint. */
#define SCHED_LISTEN_OFF	(-2)

typedef struct ctrlsel ctrlsel;

struct volrayd_flags {
	int roles;			/* enum volrayd_role bits */
	ctrlsel *controllers;		/* --controllers, or NULL: all */
	char *kubeconfig;		/* --kubeconfig: the roles but api
					   are clients of that server */
	char *context;
	char metrics_host[256];		/* --metrics-listen, or "" */
	int metrics_port;
	char **scheduler_names;		/* --scheduler-name (volcano) */
	int nscheduler_names;
	int no_install_crds;
	int leader_elect;		/* -1: the default (on when a role
					   runs against a remote API) */
	long long lease_ms, renew_ms, retry_ms;
	char *leader_ns;
	double kube_qps;		/* --kube-api-qps, --kube-api-burst */
	int kube_burst;
	char node_host[256];		/* --node-listen: the nodes' endpoint */
	int node_port;			/* -1: none asked for */
	char sched_host[256];		/* --scheduler-listen: the scheduler's
					   endpoint (explain) */
	int sched_port;			/* -1: the default, SCHED_LISTEN_OFF */
	char node_ip[64];		/* --node-ip, or "" */
	int no_virtual_nodes;		/* --no-virtual-nodes */
	char *virtual_selector;		/* --virtual-node-selector */
	char **etcd_servers;		/* --etcd-servers: the store in etcd */
	int netcd;
	char *etcd_ca, *etcd_cert, *etcd_key;
	char *etcd_prefix;		/* --etcd-prefix: /registry */
	long long etcd_compaction_ms;	/* --etcd-compaction-interval */
	int migrate;			/* --migrate-to-etcd */

	char *data_dir;
	char *share_dir;		/* NULL: found by volrayd_share_dir */
	char host[256];
	int port;
	char **policy_dirs;
	int npolicy;
	int no_local_node;
	int watch_history;
	int request_timeout;
	int lua_memory_mb;
	unsigned long long lua_instructions;
	int explain_sessions;		/* --explain-sessions */
	char *record_dir;		/* --record-sessions, or NULL */
	int record_keep;		/* --record-sessions-keep */
	long ray_history_max;		/* --ray-history-max (jobs) */
	long long ray_history_bytes;	/* --ray-history-max-bytes */
	char *ray_dir;			/* --ray-dir: Ray installs, or NULL */
	int ray_emulated;		/* --ray-emulated */
	int plain_http;
	char *tls_cert_file;
	char *tls_key_file;
	char **tls_sans;
	int nsans;
	char *token_auth_file;
	int always_allow;		/* --authorization-mode=AlwaysAllow */
	char *batch_scheduler;
	int max_readonly;		/* --max-requests-inflight */
	int max_mutating;		/* --max-mutating-requests-inflight */
	double user_qps;		/* --user-qps */
	int user_burst;			/* --user-burst */
	int max_watches;		/* --max-watches-per-user */
	unsigned long long node_grace_ms; /* --node-monitor-grace-period */
	int node_lease_seconds;		/* --node-lease-duration-seconds */
	long not_ready_seconds;		/* --default-not-ready-toleration-seconds */
	long unreachable_seconds;	/* --default-unreachable-toleration-seconds */
};

/*
 * Parse argv into f. 0 to run; 1 when --help or --version was answered;
 * 2 on a usage error (the message is printed).
 */
int volrayd_flags_parse(struct volrayd_flags *f, int argc, char **argv);
/*
 * Where crds/, lua/ and policies/ are when --share-dir is not given (see
 * volrayd(8)). NULL with *cause naming every place looked in.
 */
char *volrayd_share_dir(char **cause);
/* Whether dir has a crds/ directory. */
int volrayd_has_crds(const char *dir);
/* "api,scheduler" as the role bits; 0 with a name it does not know. */
int volrayd_roles_parse(const char *list);
/* The role bits as a comma-separated list (a static buffer). */
const char *volrayd_roles_text(int roles);
/* Whether host names a loopback address. */
int volrayd_is_loopback(const char *host);

#endif
