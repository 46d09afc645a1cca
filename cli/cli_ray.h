/*
 * volray ray (cli_ray.c, cli_ray_get.c, cli_ray_job.c): what the pieces
 * share.
 */
#ifndef VOLRAY_CLI_RAY_H
#define VOLRAY_CLI_RAY_H

#include <cjson/cJSON.h>

/* -n, else the context's namespace. */
const char *cli_ray_ns(void);
/* v, else def. */
const char *cli_ray_or(const char *v, const char *def);
/* Set item at a dotted path, making the objects on the way. */
void cli_ray_put(cJSON *o, const char *path, cJSON *item);
/* A member whose key may have dots (a label), as a string, or NULL. */
const char *cli_ray_member(const cJSON *o, const char *key);
/* A number at path, else def. */
long cli_ray_num(const cJSON *o, const char *path, long def);
/* The RayCluster ns/name, or NULL (reported). */
cJSON *cli_ray_cluster(const char *ns, const char *name);
/*
 * Through an API server that is not volrayd (kube-apiserver), the node
 * proxy path of the dashboard of cluster's head when it runs on one of
 * volray's nodes (/api/v1/nodes/NODE/proxy/volray/proxy/NS/POD/8265),
 * appended to b: 0; -1 when the service proxy is the way.
 */
struct cli_buf;
int cli_ray_head_node_path(const char *ns, const char *cluster,
    struct cli_buf *b);
/* The flags' quantities parse: 0, or -1 (reported). */
int cli_ray_check_quantities(void);
/* The RayCluster spec the plugin generates from the flags, or NULL. */
cJSON *cli_ray_cluster_spec(void);
/* Every "pods" or Ray "rayclusters" of ns (NULL: all), by selector. */
cJSON *cli_ray_list(const char *what, const char *ns, const char *selector);

/* cli_ray_spec.c: the plugin's cluster config (YAML, strict) into a
   RayCluster spec, or NULL (reported). */
cJSON *cli_ray_config_read(const char *file);
cJSON *cli_ray_spec_from_config(const cJSON *cfg);
/* A worker group of the config (index names an unnamed one); *bad set
   on a bad quantity. */
cJSON *cli_ray_worker_group(const cJSON *g, int index, const char *image,
    const char *sa, int *bad);

/* Merge-patch the worker groups of RayCluster ns/name (taking groups),
   with rc's resourceVersion: 0, or -1 (reported). */
int cli_ray_put_groups(const char *ns, const char *name, const cJSON *rc,
    cJSON *groups);

/* The subcommands of the other files. */
int cli_ray_scale_cluster(const char *name);
int cli_ray_scale_job(const char *name);
int cli_ray_get(int argc, char **argv);
int cli_ray_log(int argc, char **argv);
int cli_ray_job_submit(int argc, char **argv);
int cli_ray_session(int argc, char **argv);
/* Pack and upload a working dir to the head at the proxy path head:
   0 with *uri (gcs://..., malloc'd), or -1 (reported). */
int cli_ray_upload(const char *head, const char *dir, char **uri);

#endif
