/*
 * kube-apiserver's ServiceAccount admission for a new pod: without
 * spec.serviceAccountName it runs as "default" (or as the deprecated
 * spec.serviceAccount says), and serviceAccount mirrors it. Unless the pod
 * or its ServiceAccount says automountServiceAccountToken: false, or a
 * container already mounts something at the token's directory, the pod
 * gets the kube-api-access-XXXXX projected volume kube-apiserver adds (a
 * bound service-account token, the cluster's CA from the namespace's
 * kube-root-ca.crt ConfigMap, and the namespace), mounted read-only at
 * /var/run/secrets/kubernetes.io/serviceaccount in every container and
 * init container: what in-cluster clients (client-go's, Python's, Ray's
 * autoscaler) read. The account need not exist (volray does not refuse
 * the pod as kube-apiserver does: its namespaces' default accounts are
 * made by a controller, a moment after the namespace, and an API server
 * may run without the controllers), but a pod whose account does not
 * exist yet gets no token volume: nothing would publish its CA either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/admission.h"

#define SA_DIR		"/var/run/secrets/kubernetes.io/serviceaccount"
#define VOLUME_PREFIX	"kube-api-access-"

static int mount_tokens = 1;

void
admission_set_token_volumes(int on)
{
	mount_tokens = on;
}

/* Whether a container of spec already mounts something at SA_DIR. */
static int
mounts_sa_dir(const cJSON *spec)
{
	static const char *const lists[] = { "initContainers", "containers" };
	const cJSON *c, *m;
	size_t i;

	for (i = 0; i < sizeof lists / sizeof *lists; i++)
		cJSON_ArrayForEach(c, json_at(spec, lists[i]))
			cJSON_ArrayForEach(m, json_at(c, "volumeMounts"))
				if (json_str(m, "mountPath") != NULL &&
				    strcmp(json_str(m, "mountPath"), SA_DIR) == 0)
					return 1;
	return 0;
}

/* Whether the pod's account is missing or turns automounting off. */
static int
no_account_token(store *st, const char *ns, const char *name)
{
	const store_obj *o = ns ? store_get(st, "serviceaccounts", ns, name) :
	    NULL;
	cJSON *t;
	int no;

	if (o == NULL)
		return 1;
	t = store_obj_tree(o);
	no = cJSON_IsFalse(json_at(t, "automountServiceAccountToken"));
	cJSON_Delete(t);
	return no;
}

/* The projected volume, as kube-apiserver's TokenVolumeSource makes it. */
static cJSON *
token_volume(const char *name)
{
	char *text = util_printf("{\"name\":\"%s\",\"projected\":{"
	    "\"defaultMode\":420,\"sources\":["
	    "{\"serviceAccountToken\":{\"expirationSeconds\":3607,"
	    "\"path\":\"token\"}},"
	    "{\"configMap\":{\"name\":\"kube-root-ca.crt\",\"items\":["
	    "{\"key\":\"ca.crt\",\"path\":\"ca.crt\"}]}},"
	    "{\"downwardAPI\":{\"items\":[{\"path\":\"namespace\","
	    "\"fieldRef\":{\"apiVersion\":\"v1\","
	    "\"fieldPath\":\"metadata.namespace\"}}]}}]}}", name);
	cJSON *v = cJSON_Parse(text);

	free(text);
	return v;
}

static void
add_mounts(cJSON *spec, const char *list, const char *name)
{
	cJSON *c, *mounts, *m;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(spec, list)) {
		mounts = cJSON_GetObjectItemCaseSensitive(c, "volumeMounts");
		if (!cJSON_IsArray(mounts)) {
			cJSON_DeleteItemFromObjectCaseSensitive(c,
			    "volumeMounts");
			mounts = cJSON_AddArrayToObject(c, "volumeMounts");
		}
		m = cJSON_CreateObject();
		cJSON_AddStringToObject(m, "name", name);
		cJSON_AddTrueToObject(m, "readOnly");
		cJSON_AddStringToObject(m, "mountPath", SA_DIR);
		cJSON_AddItemToArray(mounts, m);
	}
}

void
admission_service_account(store *st, const char *ns, cJSON *spec)
{
	const char *name = json_str(spec, "serviceAccountName");
	cJSON *vols;
	char vname[32];

	if (name == NULL || *name == '\0') {
		name = json_str(spec, "serviceAccount");
		json_set_str(spec, "serviceAccountName", name != NULL &&
		    *name ? name : "default");
	}
	json_set_str(spec, "serviceAccount", json_str(spec,
	    "serviceAccountName"));
	if (!mount_tokens || cJSON_IsFalse(json_at(spec,
	    "automountServiceAccountToken")) || mounts_sa_dir(spec) ||
	    no_account_token(st, ns, json_str(spec, "serviceAccountName")))
		return;
	snprintf(vname, sizeof vname, VOLUME_PREFIX);
	util_random_suffix(vname + strlen(vname), 5);
	vols = cJSON_GetObjectItemCaseSensitive(spec, "volumes");
	if (!cJSON_IsArray(vols)) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "volumes");
		vols = cJSON_AddArrayToObject(spec, "volumes");
	}
	cJSON_AddItemToArray(vols, token_volume(vname));
	add_mounts(spec, "initContainers", vname);
	add_mounts(spec, "containers", vname);
}
