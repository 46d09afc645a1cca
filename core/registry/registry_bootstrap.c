/*
 * What a cluster starts with: the CRDs already stored are registered
 * first, so that their objects resolve; then the namespaces default,
 * kube-system, kube-public and kube-node-lease (kube-apiserver's system
 * namespaces), the CRD files of a directory (each
 * created, or updated to the file's version), and the root and default
 * Volcano queues. Objects that exist are left as they are; every write
 * goes through registry_create or registry_update, unchecked (no user).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/yamljson.h"
#include "registry/admission.h"
#include "registry/registry_int.h"

/* Install every CRD file of a directory (create or update). */
static int
install_crds(registry *rg, const char *dir, char **cause)
{
	const resource *crdres = resource_find("apiextensions.k8s.io", "v1",
	    "customresourcedefinitions");
	cJSON *docs, *d;
	int rc = 0;

	if ((docs = yamljson_load_dir(dir, cause)) == NULL)
		return -1;
	if (*cause != NULL)
		rc = -1;
	cJSON_ArrayForEach(d, docs) {
		struct reg_result res;
		const char *name = json_str(d, "metadata.name");
		const store_obj *o;

		if (name == NULL)
			continue;
		o = store_get(rg->st, crdres->store_key, "", name);
		if (o != NULL) {
			cJSON *cur = store_obj_tree(o);

			json_set_str(json_obj(d, "metadata"), "resourceVersion",
			    json_str(cur, "metadata.resourceVersion"));
			cJSON_Delete(cur);
			registry_update(rg, crdres, "", name,
			    cJSON_Duplicate(d, 1), NULL, &res);
		} else
			registry_create(rg, crdres, "", cJSON_Duplicate(d, 1),
			    NULL, &res);
		if (res.code >= 300) {
			char *s = json_print(res.body);

			log_error("installing CRD %s from %s: %s", name, dir, s);
			free(s);
			rc = -1;
		}
		cJSON_Delete(res.body);
	}
	cJSON_Delete(docs);
	return rc;
}

static void
ensure(registry *rg, const char *group, const char *plural, const char *ns,
    const char *json)
{
	const resource *r = resource_find(group, group[0] == '\0' ? "v1" :
	    strcmp(group, "scheduling.volcano.sh") == 0 ? "v1beta1" : "v1",
	    plural);
	cJSON *obj = cJSON_Parse(json);
	struct reg_result res;

	if (r == NULL || obj == NULL) {
		cJSON_Delete(obj);
		return;
	}
	if (store_get(rg->st, r->store_key, r->namespaced ? ns : "",
	    json_str(obj, "metadata.name")) != NULL) {
		cJSON_Delete(obj);
		return;
	}
	registry_create(rg, r, ns, obj, NULL, &res);
	if (res.code >= 300) {
		char *s = json_print(res.body);

		log_error("bootstrap %s: %s", plural, s);
		free(s);
	}
	cJSON_Delete(res.body);
}

int
registry_bootstrap(registry *rg, const char *crd_dir, char **cause)
{
	const resource *crdres = resource_find("apiextensions.k8s.io", "v1",
	    "customresourcedefinitions");
	store_obj *const *objs;
	size_t n, i;

	/* CRDs already stored come back first, so their objects resolve. */
	n = store_list(rg->st, crdres->store_key, NULL, &objs);
	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);
		char *c = NULL;

		if (resource_register_crd(t, &c) != 0) {
			log_error("stored CRD %s: %s", objs[i]->name, c);
			free(c);
		}
		cJSON_Delete(t);
	}
	ensure(rg, "", "namespaces", "", "{\"metadata\":{\"name\":\"default\"}}");
	ensure(rg, "", "namespaces", "",
	    "{\"metadata\":{\"name\":\"kube-system\"}}");
	ensure(rg, "", "namespaces", "",
	    "{\"metadata\":{\"name\":\"kube-public\"}}");
	ensure(rg, "", "namespaces", "",
	    "{\"metadata\":{\"name\":\"kube-node-lease\"}}");
	if (crd_dir != NULL && install_crds(rg, crd_dir, cause) != 0)
		return -1;
	ensure(rg, "scheduling.volcano.sh", "queues", "",
	    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
	    "\"Queue\",\"metadata\":{\"name\":\"root\"},\"spec\":{\"weight\":"
	    "1,\"reclaimable\":false}}");
	ensure(rg, "scheduling.volcano.sh", "queues", "",
	    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
	    "\"Queue\",\"metadata\":{\"name\":\"default\"},\"spec\":{\"weight\":"
	    "1,\"reclaimable\":true,\"parent\":\"root\"}}");
	return 0;
}

/*
 * The kubernetes Service in default, as kube-apiserver keeps it: the
 * Service range's first address (10.96.0.1 by default, unless another
 * Service took it before) and port
 * 443 to the port the API listens on (updated when that changed: --listen
 * HOST:0 picks a new one at each start).
 */
void
registry_ensure_api_service(registry *rg, int port)
{
	const resource *r = resource_find("", "v1", "services");
	const store_obj *o = store_get(rg->st, "services", "default",
	    "kubernetes");
	struct reg_result res;
	cJSON *t, *p;
	char *json, first[16], cip[48];

	if (r == NULL || port <= 0)
		return;
	admission_service_ip(1, first, sizeof first);
	if (o != NULL) {
		t = store_obj_tree(o);
		p = cJSON_GetArrayItem(json_at(t, "spec.ports"), 0);
		if (p == NULL || cJSON_GetNumberValue(json_at(p,
		    "targetPort")) == port) {
			cJSON_Delete(t);
			return;
		}
		json_set_num(p, "targetPort", port);
		registry_update(rg, r, "default", "kubernetes", t, NULL, &res);
	} else {
		snprintf(cip, sizeof cip, "\"clusterIP\":\"%s\",", first);
		json = util_printf("{\"apiVersion\":\"v1\",\"kind\":\"Service\","
		    "\"metadata\":{\"name\":\"kubernetes\",\"namespace\":"
		    "\"default\",\"labels\":{\"component\":\"apiserver\","
		    "\"provider\":\"kubernetes\"}},\"spec\":{\"type\":"
		    "\"ClusterIP\",%s\"ports\":[{\"name\":\"https\",\"port\":"
		    "443,\"protocol\":\"TCP\",\"targetPort\":%d}]}}",
		    admission_ip_used(rg->st, first) ? "" : cip, port);
		registry_create(rg, r, "default", cJSON_Parse(json), NULL,
		    &res);
		free(json);
	}
	if (res.code >= 300) {
		char *s = json_print(res.body);

		log_error("bootstrap: the kubernetes Service: %s", s);
		free(s);
	}
	cJSON_Delete(res.body);
}
