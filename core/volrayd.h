/*
 * volrayd's command line: every flag as a field, parsed and checked in
 * volrayd_flags.c before the daemon starts anything.
 */
#ifndef VOLRAY_VOLRAYD_H
#define VOLRAY_VOLRAYD_H

struct volrayd_flags {
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
/* Whether host names a loopback address. */
int volrayd_is_loopback(const char *host);

#endif
