/*
 * The RayCluster the kubectl ray plugin generates (cli_ray.c): from its
 * cluster config, a YAML file (create cluster --file) or the flags turned
 * into one, with the plugin's defaults (rayVersion 2.52.0, the image
 * rayproject/ray:VERSION, a head of 2 CPUs and 4Gi, one worker group
 * "default-group" of 1 replica of 2 CPUs and 4Gi). The config's keys:
 * namespace, name, labels, annotations, ray-version, image,
 * service-account, head {cpu, gpu, memory, ephemeral-storage,
 * ray-start-params, node-selectors}, worker-groups [{name, replicas,
 * num-of-hosts, cpu, gpu, tpu, memory, ephemeral-storage,
 * ray-start-params, node-selectors}], autoscaler {version}; any other key
 * is refused, as the plugin parses strictly. Requests get every non-zero
 * quantity, limits memory, ephemeral storage and accelerators.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_color.h"
#include "cli_opt.h"
#include "cli_ray.h"
#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/yamljson.h"

#define RAY_VERSION	"2.52.0"

static const char *const top_keys[] = { "namespace", "name", "labels",
	"annotations", "ray-version", "image", "service-account", "head",
	"worker-groups", "autoscaler", NULL };
static const char *const head_keys[] = { "cpu", "gpu", "memory",
	"ephemeral-storage", "ray-start-params", "node-selectors", NULL };
static const char *const group_keys[] = { "name", "replicas",
	"num-of-hosts", "cpu", "gpu", "tpu", "memory", "ephemeral-storage",
	"ray-start-params", "node-selectors", NULL };

static int
known(const char *k, const char *const *keys)
{
	for (; *keys != NULL; keys++)
		if (strcmp(k, *keys) == 0)
			return 1;
	return 0;
}

/* Every key of o is one of keys: 0, or -1 (reported, where it is). */
static int
strict(const cJSON *o, const char *const *keys, const char *where)
{
	const cJSON *m;

	if (o == NULL)
		return 0;
	if (!cJSON_IsObject(o)) {
		cli_color_errorf("failed to parse config file: %s is not a "
		    "mapping\n", where);
		return -1;
	}
	cJSON_ArrayForEach(m, o)
		if (!known(m->string, keys)) {
			cli_color_errorf("failed to parse config file: unknown "
			    "field \"%s\" in %s\n", m->string, where);
			return -1;
		}
	return 0;
}

/* A quantity field, checked: the string, NULL when absent. */
static int
quantity(const cJSON *o, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	double d;

	*out = NULL;
	if (v == NULL)
		return 0;
	if (cJSON_IsNumber(v)) {
		cli_color_errorf("failed to validate config file: %s must be a "
		    "quoted quantity\n", key);
		return -1;
	}
	if (!cJSON_IsString(v) || quantity_parse(v->valuestring, &d) != 0) {
		cli_color_errorf("failed to validate config file: %s is not a "
		    "quantity\n", key);
		return -1;
	}
	*out = v->valuestring;
	return 0;
}

cJSON *
cli_ray_config_read(const char *file)
{
	size_t n;
	char *text = util_read_file(file, &n), *why = NULL;
	const cJSON *g;
	cJSON *cfg;
	int i = 0;

	if (text == NULL) {
		cli_color_errorf("config file %s does not exist\n", file);
		return NULL;
	}
	cfg = yamljson_parse(text, n, &why);
	free(text);
	if (cfg == NULL) {
		cli_color_errorf("failed to parse config file: %s\n",
		    why ? why : "not YAML");
		free(why);
		return NULL;
	}
	if (strict(cfg, top_keys, "the config") != 0 ||
	    strict(json_at(cfg, "head"), head_keys, "head") != 0 ||
	    strict(json_at(cfg, "autoscaler"), (const char *const[]){
	    "version", NULL }, "autoscaler") != 0) {
		cJSON_Delete(cfg);
		return NULL;
	}
	cJSON_ArrayForEach(g, json_at(cfg, "worker-groups")) {
		char where[32];

		snprintf(where, sizeof where, "worker-groups[%d]", i++);
		if (strict(g, group_keys, where) != 0) {
			cJSON_Delete(cfg);
			return NULL;
		}
	}
	return cfg;
}

static void
set_nonzero(cJSON *o, const char *key, const char *q)
{
	double d;

	if (q != NULL && quantity_parse(q, &d) == 0 && d != 0)
		cJSON_AddStringToObject(o, key, q);
}

/* A Ray container's resources from a config part. */
static cJSON *
resources(const cJSON *part, const char *def_cpu, const char *def_mem,
    int *bad)
{
	const char *cpu, *mem, *gpu, *tpu, *eph;
	cJSON *r = cJSON_CreateObject(), *req = cJSON_CreateObject();
	cJSON *lim = cJSON_CreateObject();

	if (quantity(part, "cpu", &cpu) || quantity(part, "memory", &mem) ||
	    quantity(part, "gpu", &gpu) || quantity(part, "tpu", &tpu) ||
	    quantity(part, "ephemeral-storage", &eph))
		*bad = 1;
	if (part == NULL || cJSON_GetObjectItemCaseSensitive(part, "cpu") ==
	    NULL)
		cpu = def_cpu;
	if (part == NULL || cJSON_GetObjectItemCaseSensitive(part, "memory") ==
	    NULL)
		mem = def_mem;
	set_nonzero(req, "cpu", cpu);
	set_nonzero(req, "memory", mem);
	set_nonzero(req, "ephemeral-storage", eph);
	set_nonzero(req, "nvidia.com/gpu", gpu);
	set_nonzero(req, "google.com/tpu", tpu);
	set_nonzero(lim, "memory", mem);
	set_nonzero(lim, "ephemeral-storage", eph);
	set_nonzero(lim, "nvidia.com/gpu", gpu);
	set_nonzero(lim, "google.com/tpu", tpu);
	cJSON_AddItemToObject(r, "requests", req);
	cJSON_AddItemToObject(r, "limits", lim);
	return r;
}

static cJSON *
port(int n, const char *name)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddNumberToObject(p, "containerPort", n);
	cJSON_AddStringToObject(p, "name", name);
	return p;
}

/* A string map (ray-start-params, node-selectors), as strings. */
static cJSON *
string_map(const cJSON *m)
{
	cJSON *out = cJSON_CreateObject();
	const cJSON *v;

	cJSON_ArrayForEach(v, m) {
		if (cJSON_IsString(v))
			cJSON_AddStringToObject(out, v->string, v->valuestring);
		else if (cJSON_IsNumber(v)) {
			char b[32];

			snprintf(b, sizeof b, "%g", v->valuedouble);
			cJSON_AddStringToObject(out, v->string, b);
		} else if (cJSON_IsBool(v))
			cJSON_AddStringToObject(out, v->string,
			    cJSON_IsTrue(v) ? "true" : "false");
	}
	return out;
}

/* A pod template with one container c (and the config's selectors). */
static cJSON *
template(cJSON *c, const cJSON *part, const char *sa)
{
	cJSON *t = cJSON_CreateObject(), *spec = cJSON_AddObjectToObject(t,
	    "spec");
	const cJSON *sel = json_at(part, "node-selectors");

	if (cJSON_GetArraySize((cJSON *)sel) > 0)
		cJSON_AddItemToObject(spec, "nodeSelector", string_map(sel));
	if (sa != NULL)
		cJSON_AddStringToObject(spec, "serviceAccountName", sa);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "containers"), c);
	return t;
}

cJSON *
cli_ray_worker_group(const cJSON *g, int index, const char *image,
    const char *sa, int *bad)
{
	cJSON *out = cJSON_CreateObject(), *c = cJSON_CreateObject();
	const cJSON *v;
	char name[64];

	if (json_str(g, "name") != NULL)
		snprintf(name, sizeof name, "%s", json_str(g, "name"));
	else if (index == 0)
		snprintf(name, sizeof name, "default-group");
	else
		snprintf(name, sizeof name, "default-group-%d", index);
	cJSON_AddItemToObject(out, "rayStartParams",
	    string_map(json_at(g, "ray-start-params")));
	cJSON_AddStringToObject(out, "groupName", name);
	v = json_at(g, "replicas");
	cJSON_AddNumberToObject(out, "replicas", cJSON_IsNumber(v) ?
	    v->valuedouble : 1);
	if ((v = json_at(g, "min-replicas")) != NULL && cJSON_IsNumber(v))
		cJSON_AddNumberToObject(out, "minReplicas", v->valuedouble);
	if ((v = json_at(g, "max-replicas")) != NULL && cJSON_IsNumber(v))
		cJSON_AddNumberToObject(out, "maxReplicas", v->valuedouble);
	if ((v = json_at(g, "num-of-hosts")) != NULL && cJSON_IsNumber(v))
		cJSON_AddNumberToObject(out, "numOfHosts", v->valuedouble);
	cJSON_AddStringToObject(c, "name", "ray-worker");
	cJSON_AddStringToObject(c, "image", image);
	cJSON_AddItemToObject(c, "resources", resources(g, "2", "4Gi", bad));
	cJSON_AddItemToObject(out, "template", template(c, g, sa));
	return out;
}

cJSON *
cli_ray_spec_from_config(const cJSON *cfg)
{
	const char *version = json_str(cfg, "ray-version");
	const char *sa = json_str(cfg, "service-account");
	const cJSON *head = json_at(cfg, "head"), *g, *av;
	cJSON *spec = cJSON_CreateObject(), *c, *ports, *groups, *hg;
	char image[256];
	int bad = 0, i = 0;

	if (version == NULL)
		version = RAY_VERSION;
	snprintf(image, sizeof image, "rayproject/ray:%s", version);
	if (json_str(cfg, "image") != NULL)
		snprintf(image, sizeof image, "%s", json_str(cfg, "image"));
	cJSON_AddStringToObject(spec, "rayVersion", version);
	hg = cJSON_AddObjectToObject(spec, "headGroupSpec");
	cJSON_AddItemToObject(hg, "rayStartParams",
	    string_map(json_at(head, "ray-start-params")));
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "name", "ray-head");
	cJSON_AddStringToObject(c, "image", image);
	cJSON_AddItemToObject(c, "resources", resources(head, "2", "4Gi",
	    &bad));
	ports = cJSON_AddArrayToObject(c, "ports");
	cJSON_AddItemToArray(ports, port(6379, "gcs-server"));
	cJSON_AddItemToArray(ports, port(8265, "dashboard"));
	cJSON_AddItemToArray(ports, port(10001, "client"));
	cJSON_AddItemToObject(hg, "template", template(c, head, sa));
	groups = cJSON_AddArrayToObject(spec, "workerGroupSpecs");
	if (json_at(cfg, "worker-groups") == NULL) {
		cJSON *one = cJSON_CreateObject();

		cJSON_AddItemToArray(groups, cli_ray_worker_group(one, 0, image,
		    sa, &bad));
		cJSON_Delete(one);
	}
	cJSON_ArrayForEach(g, json_at(cfg, "worker-groups"))
		cJSON_AddItemToArray(groups, cli_ray_worker_group(g, i++, image,
		    sa, &bad));
	av = json_at(cfg, "autoscaler.version");
	if (av != NULL) {
		if (!cJSON_IsString(av) || (strcmp(av->valuestring, "v1") != 0 &&
		    strcmp(av->valuestring, "v2") != 0)) {
			cli_color_errorf("autoscaler version: \"v1\" or \"v2\"\n");
			bad = 1;
		} else {
			cJSON_AddTrueToObject(spec, "enableInTreeAutoscaling");
			cJSON_AddStringToObject(cJSON_AddObjectToObject(spec,
			    "autoscalerOptions"), "version", av->valuestring);
		}
	}
	if (bad) {
		cJSON_Delete(spec);
		return NULL;
	}
	return spec;
}
