/*
 * Internals of core/ray/: the heads (head.c), the dashboard's HTTP side
 * (jobsapi.c), their jobs (jobs.c) kept in a journal (journal.c), and
 * Serve applications (serve.c). Calls go that way down: head.c to
 * jobsapi.c, jobs.c and serve.c; jobsapi.c to jobs.c and serve.c; jobs.c
 * to journal.c.
 */
#ifndef VOLRAY_RAY_INT_H
#define VOLRAY_RAY_INT_H

#include <stdint.h>
#include <cjson/cJSON.h>

#include "lib/hmap.h"
#include "node/node.h"
#include "node/wheel.h"
#include "ray/ray.h"

enum job_status {
	JOB_PENDING, JOB_RUNNING, JOB_STOPPED, JOB_SUCCEEDED, JOB_FAILED
};

struct ray_head;

/* A simulated job's demand: resources, and the pod it is placed on. */
struct bundle {
	int64_t cpu_m, gpu, mem;	/* millicores, GPUs, bytes */
	char *node;			/* NULL until placed */
};

struct ray_job {
	struct ray_head *head;
	char *id;			/* submission_id */
	char *driver_id;		/* job_id ("02000000"), once running */
	char *entrypoint;
	cJSON *req;			/* the submission's other fields */
	enum job_status status;
	char *message;
	char *error_type;		/* NULL when none */
	uint64_t start_ms, end_ms;	/* Unix ms; end 0 until terminal */
	int exit_code, has_exit;
	char *log_path;
	node_proc *proc;		/* local: the running entrypoint */
	wheel_timer timer;		/* simulated: start and end */
	int64_t sim_ms;			/* simulated duration, -1: forever */
	int sim_exit;
	int stopping;
	int simulated;			/* on a virtual node: no process, no file */
	struct bundle *bundles;		/* demand.c */
	int nbundles;
	size_t bundle_cap;
	int placed;			/* all bundles placed: running */
	int driver_bundle;		/* bundles[0] is the entrypoint's */
	uint64_t placed_ms;		/* when placed (Unix ms) */
};

struct serve_app;

/* One of a local head's 127.0.0.1 listeners. */
struct listener {
	const char *what;		/* "dashboard", "dashboard agent" */
	http_server *srv;
	int port;			/* listening on it */
	int clash;			/* in use by someone else: warned */
};

struct ray_head {
	ray *r;
	char *ns, *name, *uid;
	char *node;			/* spec.nodeName */
	const char *runtime;		/* "local", "virtual" or NULL */
	int running;			/* phase Running, not deleting */
	int dead;			/* deleting, Failed or Succeeded */
	int port;			/* dashboard port */
	char *dir;			/* the pod's directory */
	hmap *jobs;			/* submission_id -> job */
	struct ray_job **order;		/* in submission order */
	int njobs;
	size_t cap;
	unsigned next_driver;		/* job ids 01000000, 02000000, ... */
	int agent_port;			/* --dashboard-agent-listen-port */
	struct listener dash, agent;	/* 127.0.0.1, local heads */
	struct listener fwd;		/* 127.0.0.1:0, a simulated head's
					   dashboard for port-forward */
	int journal;			/* ray-jobs.jsonl, append; -1: closed */
	int journal_lines;
	int loading;			/* reading the journal: no appends */
	cJSON *serve_config;		/* the last PUT body */
	struct serve_app *apps;
	uint64_t serve_ms;		/* simulated deploy time */
	char *sim_serve_duration;
	wheel_timer place_timer;	/* jobs.c: jobs wait to be placed */
	hmap *idle_since;		/* pod name -> struct idle (demand.c) */
	char *cluster;			/* its ray.io/cluster label, or NULL */
	char *session;			/* the GCS's session name */
	int loaded;			/* its jobs were read (journal, GCS) */
	int ft;				/* GCS fault tolerance (gcsstore.c) */
	struct gcs_store *gcs;		/* its GCS storage, NULL: none */
	int recovering;			/* reading GCS storage: not serving */
};

struct ray_history;

struct ray {
	uv_loop_t *loop;
	client *c;
	node_mgr *nodes;
	wheel *wheel;
	hmap *heads;			/* uid -> head */
	struct ray_history *history;	/* history.c, NULL: none kept */
	hmap *raylets;			/* raylet.c: simulated workers,
					   "ns/cluster" -> their group */
	char *data_dir;			/* for the embedded GCS storage */
	struct podenv *podenv;		/* podenv.c, NULL: none */
};

/* head.c: the head pod ns/name, or NULL. */
struct ray_head *ray_head_find(ray *, const char *ns, const char *name);

/* jobsapi.c: answer a dashboard request (path "/api/...") for h. */
void ray_jobsapi_serve(struct ray_head *h, http_req *, const char *path);

/* demand.c: simulated jobs' bundles and the cluster's resources. */
/* The job's bundles from its request: 0, or -1 with *cause (malloc'd). */
int ray_demand_parse(struct ray_job *, char **cause);
/* Place waiting jobs' bundles where they fit: the jobs placed now in
   *placed (malloc'd, *n of them); 1 if some job still waits. */
int ray_demand_place(struct ray_head *, struct ray_job ***placed,
    size_t *n);
/* A job is over: its bundles leave their nodes; 1 if it had any placed. */
int ray_demand_release(struct ray_job *);
void ray_demand_free(struct ray_job *);
void ray_demand_head_free(struct ray_head *);
/* GET /api/volray/autoscaler's answer (new tree). */
cJSON *ray_demand_report(struct ray_head *);

/* auth.c: Ray's token authentication. */
/* An env variable of container c in namespace ns: its value, or the
   Secret key it refers to (malloc'd); NULL when absent. */
char *ray_pod_env(client *, const char *ns, const cJSON *c,
    const char *name);
/*
 * The token a pod's container (the first, or the one whose env has
 * `with`) carries in RAY_AUTH_TOKEN (malloc'd, NULL if none);
 * *mode_token says RAY_AUTH_MODE is token.
 */
char *ray_auth_pod_token(ray *, const char *ns, const char *pod,
    const char *with, int *mode_token);
/* 0 when head h may answer the request; else it was answered (401, 403,
   or /api/authentication_mode) and -1. proxied: came through the API. */
int ray_auth_check(struct ray_head *, http_req *, const char *path,
    int proxied);

/* history.c: ended jobs kept after their cluster. */
struct ray_history *ray_history_new(const char *dir, long max_jobs,
    long long max_bytes);
void ray_history_free(struct ray_history *);
/* Keep a job that ended: its details (JobDetails) and log. */
void ray_history_add(struct ray_history *, const char *ns,
    const char *cluster, const char *rayjob, const cJSON *details,
    const char *logs);

/* jobs.c */
const char *ray_job_status_name(enum job_status);
int ray_job_terminal(const struct ray_job *);
/*
 * Submit: 0, or an HTTP status with *text (Ray's answer, malloc'd) when
 * refused; *out is the new job.
 */
int ray_job_submit(struct ray_head *, const cJSON *body, struct ray_job **out,
    char **text);
struct ray_job *ray_job_find(struct ray_head *, const char *id);
/* Stop: 1 if it was running (it will be STOPPED), 0 if already over. */
int ray_job_stop(struct ray_job *);
/* Delete a terminal job: 0, or -1 (non-terminal: *text says why). */
int ray_job_delete(struct ray_job *, char **text);
/* Ray's JobDetails for the job (new tree). */
cJSON *ray_job_details(const struct ray_job *);
/* The job's log text so far (malloc'd, "" when none). */
char *ray_job_logs(const struct ray_job *);
/* The head is gone: every job not over fails with why. */
void ray_jobs_fail_all(struct ray_head *, const char *why);
/* Free every job (no state changes). */
void ray_jobs_free(struct ray_head *);
/* The jobs the head's journal kept (those that were running are
   resolved), then the journal rewritten. */
void ray_jobs_load(struct ray_head *);

/* A job's record, as the journal and GCS storage keep it (new tree). */
cJSON *ray_job_record(const struct ray_job *);
/* A new head's jobs from its cluster's GCS storage (gcsstore.c). */
void ray_jobs_recover(struct ray_head *, const cJSON *records);

/* gcsstore.c: GCS fault tolerance on Redis. */
struct gcs_target {
	char *address;			/* as given */
	char *host;			/* an IP address */
	int port;
	char *user, *pass;		/* NULL: none */
	char *storage_ns;		/* the external storage namespace */
};
/* Redis as a pod's Ray container names it: 0, or -1 with *cause. */
int ray_gcs_target(ray *, const char *ns, const cJSON *pod,
    struct gcs_target *, char **cause);
void ray_gcs_target_free(struct gcs_target *);
struct gcs_store;
typedef cJSON *(*ray_gcs_record_fn)(const struct ray_job *);
typedef cJSON *(*ray_gcs_serve_fn)(const struct ray_head *);
typedef void (*ray_gcs_loaded_fn)(struct ray_head *, const cJSON *records,
    const char *session, const cJSON *serve);
/* A head's storage; load: read it first (loaded), else write it. Jobs
   are written as record makes them, Serve's applications as serve. */
struct gcs_store *ray_gcs_open(struct ray_head *, const struct gcs_target *,
    int load, ray_gcs_record_fn record, ray_gcs_serve_fn serve,
    ray_gcs_loaded_fn loaded);
/* The embedded backend (gcsfile.c) in dir, with the same behaviour. */
struct gcs_store *ray_gcs_open_file(struct ray_head *, const char *dir,
    ray_gcs_record_fn record, ray_gcs_serve_fn serve,
    ray_gcs_loaded_fn loaded);
/* Serve's applications changed (their state through the store's serve). */
void ray_gcs_put_serve(struct gcs_store *, const struct ray_head *);

/* gcsfile.c: the embedded backend's document. */
struct gcs_file;
struct gcs_file *ray_gcs_file_open(wheel *, const char *dir,
    void (*loaded)(void *arg, const cJSON *doc), void *arg);
/* Set key (with id: key's member id) to value; NULL deletes it. */
void ray_gcs_file_set(struct gcs_file *, const char *key, const char *id,
    const cJSON *value);
void ray_gcs_file_close(struct gcs_file *);
/* The storage of the claim of that uid goes (the claim was deleted). */
void ray_gcs_file_remove(const char *data_dir, const char *uid);
void ray_gcs_put(struct gcs_store *, const char *id, const cJSON *rec);
void ray_gcs_del(struct gcs_store *, const char *id);
void ray_gcs_close(struct gcs_store *);
/* A new session name, "session_<UTC time>_<6 digits from seed>". */
char *ray_session_name(const char *seed);
/* KubeRay's Redis cleanup: delete the storage namespace's keys, then
   done(arg, 0), or done(arg, 1) after max_tries connections failed. */
struct gcs_clean;
struct gcs_clean *ray_gcs_clean(ray *, const struct gcs_target *,
    int max_tries, int wait_ms, void (*done)(void *, int), void *arg);
void ray_gcs_clean_cancel(struct gcs_clean *);

/* raylet.c: simulated workers, which lose their head as Ray's do. */
struct raylet;
struct raylet *ray_raylet_start(ray *, const char *ns, const char *pod,
    const char *cluster, int timeout_s, void (*done)(void *, int),
    void *arg);
void ray_raylet_cancel(struct raylet *);
/* A head of cluster ns/cluster changed: its raylets look again. */
void ray_raylets_check(ray *, const char *ns, const char *cluster);

/* simsubmit.c: a KubeRay submitter on a simulated node: submit job id
   to the head address names, unless it has it, and follow it; done gets
   the `ray job` command's exit code. */
void *ray_sim_submit(ray *, const char *ns, const char *pod,
    const char *address, const char *id, void (*done)(void *, int),
    void *arg);
void ray_sim_submit_cancel(void *handle);

/* packages.c: Ray's package store (working_dir uploads). */
int ray_package_name_ok(const char *name);
int ray_package_has(const struct ray_head *, const char *name);
/* Store a package: 0, or -1 with *cause (malloc'd). */
int ray_package_put(const struct ray_head *, const char *name,
    const char *body, size_t len, char **cause);
/* The package extracted for a local job: its directory (malloc'd), or
   NULL with *cause (malloc'd). */
char *ray_package_dir(const struct ray_head *, const char *name,
    char **cause);

/* journal.c */
/* A job as the journal keeps it (a new tree). */
typedef cJSON *(*ray_journal_record_fn)(const struct ray_job *);
/* Append rec (taken); rewrite first, with record, when it has grown. */
void ray_journal_append(struct ray_head *, cJSON *rec,
    ray_journal_record_fn record);
/* Rewrite it: the uid line, then record of each job in order. */
void ray_journal_rewrite(struct ray_head *, ray_journal_record_fn record);
/* The last record of each job kept (a new array), or NULL when there is
   no journal or it is another pod's. */
cJSON *ray_journal_read(struct ray_head *);
void ray_journal_close(struct ray_head *);

/* serve.c */
/* PUT, GET, DELETE /api/serve/applications/: HTTP status, body. */
int ray_serve_put(struct ray_head *, const char *body, size_t len,
    char **text);
cJSON *ray_serve_get(struct ray_head *);
void ray_serve_delete(struct ray_head *);
void ray_serve_free(struct ray_head *);
/* The applications as GCS storage keeps them (new tree), and back. */
cJSON *ray_serve_state(const struct ray_head *);
/* The application whose route_prefix takes path (the longest), or NULL;
   its prefix and whether it is RUNNING. */
const char *ray_serve_route(const struct ray_head *, const char *path,
    const char **prefix, int *running);
/* Serve's /-/routes: route prefix -> application (new tree). */
cJSON *ray_serve_routes(const struct ray_head *);

/* jobsapi.c: Serve's HTTP proxy on port 8000 of pod (of h's cluster). */
void ray_serve_http(struct ray_head *h, http_req *, const char *path,
    const char *pod);
void ray_serve_restore(struct ray_head *, const cJSON *state);

#endif
