/*
 * Table rows of the storage.k8s.io and resource.k8s.io kinds, cell for
 * cell as kube-apiserver's printers (pkg/printers/internalversion) make
 * them: the defaults an unset field prints as (a StorageClass's Delete
 * and Immediate, a CSIDriver's attachRequired true), booleans as
 * booleans, a ResourceClaim's state from its allocation and reservations.
 * The columns are the kinds' descriptors' (kinds/storage.c).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/kinds/cell.h"
#include "registry/kinds/rows.h"

static void
str(cJSON *cells, const char *s)
{
	cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

static void
boolean(cJSON *cells, const cJSON *o, const char *path, int dflt)
{
	const cJSON *v = json_at(o, path);

	cJSON_AddItemToArray(cells, cJSON_CreateBool(cJSON_IsBool(v) ?
	    cJSON_IsTrue(v) : dflt));
}

/* A is-default-class annotation, GA or beta, of "true". */
static int
default_class(const cJSON *o)
{
	const cJSON *a = json_at(o, "metadata.annotations"), *v;

	v = cJSON_GetObjectItemCaseSensitive(a,
	    "storageclass.kubernetes.io/is-default-class");
	if (v == NULL)
		v = cJSON_GetObjectItemCaseSensitive(a,
		    "storageclass.beta.kubernetes.io/is-default-class");
	return cJSON_IsString(v) && strcmp(v->valuestring, "true") == 0;
}

void
rows_storage_class(cJSON *cells, const cJSON *o)
{
	const char *rp = json_str(o, "reclaimPolicy");
	const char *bm = json_str(o, "volumeBindingMode");
	char name[320];

	if (default_class(o)) {
		snprintf(name, sizeof name, "%s (default)",
		    json_str(o, "metadata.name"));
		cJSON_ReplaceItemInArray(cells, cJSON_GetArraySize(cells) - 1,
		    cJSON_CreateString(name));
	}
	str(cells, json_str(o, "provisioner"));
	str(cells, rp ? rp : "Delete");
	str(cells, bm ? bm : "Immediate");
	boolean(cells, o, "allowVolumeExpansion", 0);
	cell_age(cells, o);
}

/* TOKENREQUESTS: the audiences, <unset> without the list. */
void
rows_storage_csidriver(cJSON *cells, const cJSON *o)
{
	const cJSON *tr = json_at(o, "spec.tokenRequests"), *it;
	char buf[1024];
	size_t len = 0;

	boolean(cells, o, "spec.attachRequired", 1);
	boolean(cells, o, "spec.podInfoOnMount", 0);
	boolean(cells, o, "spec.storageCapacity", 0);
	buf[0] = '\0';
	cJSON_ArrayForEach(it, tr)
		if (len < sizeof buf)
			len += snprintf(buf + len, sizeof buf - len, "%s%s",
			    len ? "," : "", json_str(it, "audience") ?
			    json_str(it, "audience") : "");
	str(cells, cJSON_IsArray(tr) ? buf : "<unset>");
	boolean(cells, o, "spec.requiresRepublish", 0);
	len = 0;
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "spec.volumeLifecycleModes"))
		if (cJSON_IsString(it) && len < sizeof buf)
			len += snprintf(buf + len, sizeof buf - len, "%s%s",
			    len ? "," : "", it->valuestring);
	str(cells, len ? buf : "<none>");
	cell_age(cells, o);
}

/* deleted, pending, allocated and reserved, as they apply. */
void
rows_storage_claim(cJSON *cells, const cJSON *o)
{
	int deleted = json_at(o, "metadata.deletionTimestamp") != NULL;
	char buf[64];

	buf[0] = '\0';
	if (deleted)
		strcat(buf, "deleted");
	if (json_at(o, "status.allocation") == NULL) {
		if (!deleted)
			strcat(buf, "pending");
	} else {
		strcat(buf, deleted ? ",allocated" : "allocated");
		if (cJSON_GetArraySize(json_at(o, "status.reservedFor")) > 0)
			strcat(buf, ",reserved");
	}
	str(cells, buf);
	cell_age(cells, o);
}

void
rows_storage_csinode(cJSON *cells, const cJSON *o)
{
	cJSON_AddItemToArray(cells, cJSON_CreateNumber(
	    cJSON_GetArraySize(json_at(o, "spec.drivers"))));
	cell_age(cells, o);
}

void
rows_storage_capacity(cJSON *cells, const cJSON *o)
{
	const cJSON *cap = json_at(o, "capacity");

	str(cells, json_str(o, "storageClassName"));
	str(cells, cJSON_IsString(cap) ? cap->valuestring : "<unset>");
}

void
rows_storage_attachment(cJSON *cells, const cJSON *o)
{
	str(cells, json_str(o, "spec.attacher"));
	str(cells, json_str(o, "spec.source.persistentVolumeName"));
	str(cells, json_str(o, "spec.nodeName"));
	boolean(cells, o, "status.attached", 0);
	cell_age(cells, o);
}
