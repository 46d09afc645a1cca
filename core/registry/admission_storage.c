/*
 * Admission for the storage.k8s.io and resource.k8s.io kinds, which
 * volray stores and serves for schedulers' informers without acting on
 * them: kube-apiserver's v1 defaults (a StorageClass's Delete and
 * Immediate, a CSIDriver's attachRequired true and Persistent mode, an
 * exact device request's ExactCount of 1) and the checks of its
 * pkg/apis/storage/validation and pkg/apis/resource/validation a user
 * meets first: required fields, the supported values, qualified and
 * DNS names, and the fields an update may not change, each a cause with
 * the field's path and kube-apiserver's words.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "registry/admission.h"
#include "registry/admission_kinds.h"
#include "registry/status.h"

#define SUBDOMAIN_MSG	"a lowercase RFC 1123 subdomain must consist of " \
	"lower case alphanumeric characters, '-' or '.', and must start and " \
	"end with an alphanumeric character (e.g. 'example.com', regex used " \
	"for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]" \
	"([-a-z0-9]*[a-z0-9])?)*')"

static void
default_str(cJSON *o, const char *key, const char *v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddStringToObject(o, key, v);
}

static void
default_bool(cJSON *o, const char *key, int v)
{
	if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
		cJSON_AddBoolToObject(o, key, v);
}

static const char *
str_or_empty(const cJSON *o, const char *path)
{
	const char *s = json_str(o, path);

	return s ? s : "";
}

/* Go's IsDNS1123Subdomain of s, lowered first when fold. */
static int
is_subdomain(const char *s, int fold)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 253)
		return 0;
	for (i = 0; i < n; i++) {
		int c = fold ? tolower((unsigned char)s[i]) : s[i];
		int alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (alnum)
			continue;
		if ((c != '-' && c != '.') || i == 0 || i == n - 1)
			return 0;
		/* A part starts and ends with an alphanumeric. */
		if (c == '.' && (s[i - 1] == '.' || s[i - 1] == '-' ||
		    s[i + 1] == '-'))
			return 0;
	}
	return 1;
}

/* Go's IsQualifiedName: [prefix/]name; the first fault's words, or NULL. */
static const char *
qualified_fault(const char *s)
{
	const char *slash = strchr(s, '/'), *name = slash ? slash + 1 : s;
	size_t i, n = strlen(name);
	char prefix[256];

	if (slash != NULL) {
		if (strchr(name, '/') != NULL)
			return "a qualified name must consist of alphanumeric "
			    "characters, '-', '_' or '.', and must start and "
			    "end with an alphanumeric character (e.g. "
			    "'MyName',  or 'my.name',  or '123-abc', regex used "
			    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
			    "[A-Za-z0-9]') with an optional DNS subdomain prefix "
			    "and '/' (e.g. 'example.com/MyName')";
		snprintf(prefix, sizeof prefix, "%.*s", (int)(slash - s), s);
		if (slash == s)
			return "prefix part must be non-empty";
		if (!is_subdomain(prefix, 0))
			return "prefix part " SUBDOMAIN_MSG;
	}
	if (n == 0)
		return "name part must be non-empty";
	if (n > 63)
		return "name part must be no more than 63 characters";
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && ((name[i] != '-' &&
		    name[i] != '_' && name[i] != '.') || i == 0 || i == n - 1))
			return "name part must consist of alphanumeric "
			    "characters, '-', '_' or '.', and must start and "
			    "end with an alphanumeric character (e.g. "
			    "'MyName',  or 'my.name',  or '123-abc', regex used "
			    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
			    "[A-Za-z0-9]')";
	return NULL;
}

/* A string field one of the values listed (NULL-terminated) or unset. */
static void
check_enum(const cJSON *o, const char *path, const char *const *vals,
    const char *supported, cJSON *causes)
{
	const char *v = json_str(o, path);
	int i;

	if (v == NULL)
		return;
	for (i = 0; vals[i] != NULL; i++)
		if (strcmp(v, vals[i]) == 0)
			return;
	status_add_cause(causes, "FieldValueNotSupported", path,
	    "Unsupported value: \"%s\": supported values: %s", v, supported);
}

/* Forbidden or immutable: path differs between obj and old. */
static int
changed(const cJSON *obj, const cJSON *old, const char *path)
{
	return old != NULL && !json_equal(json_at(obj, path), json_at(old,
	    path));
}

static void
immutable(const cJSON *obj, const cJSON *old, const char *path,
    cJSON *causes)
{
	const char *s = json_str(obj, path);

	if (!changed(obj, old, path))
		return;
	if (s != NULL)
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": field is immutable", s);
	else
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: field is immutable");
}

/* A CSI or DRA driver's name (ValidateCSIDriverName): required, 63 at
   most, a DNS subdomain once lowered. */
static void
check_driver(const char *s, const char *path, int required, cJSON *causes)
{
	/* Empty: both words, as kube-apiserver gives them. */
	if (*s == '\0' && required)
		status_add_cause(causes, "FieldValueRequired", path,
		    "Required value");
	if (strlen(s) > 63)
		status_add_cause(causes, "FieldValueTooLong", path,
		    "Too long: may not be more than 63 bytes");
	if (!is_subdomain(s, 1))
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": %s", s, SUBDOMAIN_MSG);
}

/* A provisioner or a VolumeAttributesClass's driver: a qualified name,
   lowered first (validateProvisioner). */
static void
check_provisioner(const cJSON *obj, const char *path, cJSON *causes)
{
	const char *p = str_or_empty(obj, path), *fault;
	char low[512];
	size_t i;

	if (*p == '\0') {
		status_add_cause(causes, "FieldValueRequired", path,
		    "Required value");
		return;
	}
	for (i = 0; p[i] != '\0' && i < sizeof low - 1; i++)
		low[i] = tolower((unsigned char)p[i]);
	low[i] = '\0';
	if ((fault = qualified_fault(low)) != NULL)
		status_add_cause(causes, "FieldValueInvalid", path,
		    "Invalid value: \"%s\": %s", low, fault);
}

static void
storageclass_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	static const char *const reclaim[] = { "Delete", "Retain", NULL };
	static const char *const binding[] = { "Immediate",
	    "WaitForFirstConsumer", NULL };

	check_provisioner(obj, "provisioner", causes);
	check_enum(obj, "reclaimPolicy", reclaim,
	    "\"Delete\", \"Retain\"", causes);
	check_enum(obj, "volumeBindingMode", binding,
	    "\"Immediate\", \"WaitForFirstConsumer\"", causes);
	if (changed(obj, old, "parameters"))
		status_add_cause(causes, "FieldValueForbidden", "parameters",
		    "Forbidden: updates to parameters are forbidden.");
	if (changed(obj, old, "provisioner"))
		status_add_cause(causes, "FieldValueForbidden", "provisioner",
		    "Forbidden: updates to provisioner are forbidden.");
	if (changed(obj, old, "reclaimPolicy"))
		status_add_cause(causes, "FieldValueForbidden",
		    "reclaimPolicy",
		    "Forbidden: updates to reclaimPolicy are forbidden.");
	immutable(obj, old, "volumeBindingMode", causes);
}

static void
attributesclass_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	/* The object's checks, then the update's, as kube-apiserver. */
	check_provisioner(obj, "driverName", causes);
	if (cJSON_GetArraySize(json_at(obj, "parameters")) == 0)
		status_add_cause(causes, "FieldValueRequired", "parameters",
		    "Required value: must contain at least one key/value pair");
	if (changed(obj, old, "driverName"))
		status_add_cause(causes, "FieldValueForbidden", "driverName",
		    "Forbidden: updates to driverName are forbidden.");
	if (changed(obj, old, "parameters"))
		status_add_cause(causes, "FieldValueForbidden", "parameters",
		    "Forbidden: updates to parameters are forbidden.");
}

static void
csidriver_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	static const char *const fsgroup[] = { "ReadWriteOnceWithFSType",
	    "File", "None", NULL };
	static const char *const modes[] = { "Persistent", "Ephemeral",
	    NULL };
	const cJSON *it;

	check_enum(obj, "spec.fsGroupPolicy", fsgroup,
	    "\"File\", \"None\", \"ReadWriteOnceWithFSType\"", causes);
	cJSON_ArrayForEach(it, json_at(obj, "spec.volumeLifecycleModes")) {
		if (!cJSON_IsString(it) || (strcmp(it->valuestring,
		    modes[0]) != 0 && strcmp(it->valuestring, modes[1]) != 0))
			status_add_cause(causes, "FieldValueNotSupported",
			    "spec.volumeLifecycleModes", "Unsupported value: "
			    "\"%s\": supported values: \"Persistent\", "
			    "\"Ephemeral\"", cJSON_IsString(it) ?
			    it->valuestring : "");
	}
	if (changed(obj, old, "spec.attachRequired"))
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.attachedRequired", "Invalid value: %s: field is "
		    "immutable", cJSON_IsTrue(json_at(obj,
		    "spec.attachRequired")) ? "true" : "false");
	if (changed(obj, old, "spec.volumeLifecycleModes"))
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.volumeLifecycleModes", "Invalid value: field is "
		    "immutable");
}

static void
csinode_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const cJSON *d, *od;
	char path[96];
	int i = 0;

	cJSON_ArrayForEach(d, json_at(obj, "spec.drivers")) {
		snprintf(path, sizeof path, "spec.drivers[%d].name", i);
		check_driver(str_or_empty(d, "name"), path, 1, causes);
		if (json_str(d, "nodeID") == NULL ||
		    *json_str(d, "nodeID") == '\0') {
			snprintf(path, sizeof path, "spec.drivers[%d].nodeID",
			    i);
			status_add_cause(causes, "FieldValueRequired", path,
			    "Required value");
		}
		/* A driver already there keeps its entry (its allocatable
		   count aside). */
		cJSON_ArrayForEach(od, json_at(old, "spec.drivers")) {
			cJSON *a, *b;

			if (json_str(od, "name") == NULL || json_str(d,
			    "name") == NULL || strcmp(json_str(od, "name"),
			    json_str(d, "name")) != 0)
				continue;
			a = cJSON_Duplicate(d, 1);
			b = cJSON_Duplicate(od, 1);
			cJSON_DeleteItemFromObjectCaseSensitive(a,
			    "allocatable");
			cJSON_DeleteItemFromObjectCaseSensitive(b,
			    "allocatable");
			if (!json_equal(a, b))
				status_add_cause(causes, "FieldValueInvalid",
				    "spec.drivers", "Invalid value: field is "
				    "immutable");
			cJSON_Delete(a);
			cJSON_Delete(b);
		}
		i++;
	}
}

static void
volumeattachment_validate(const cJSON *obj, const cJSON *old,
    cJSON *causes)
{
	const cJSON *pv = json_at(obj, "spec.source.persistentVolumeName");
	const cJSON *inl = json_at(obj, "spec.source.inlineVolumeSpec");
	const char *node = str_or_empty(obj, "spec.nodeName");
	const char *att = str_or_empty(obj, "spec.attacher");

	/* kube-apiserver's order: the spec's checks, then v1's name check. */
	if (*att == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.attacher", "Required value");
	if (pv == NULL && inl == NULL)
		status_add_cause(causes, "FieldValueRequired", "spec.source",
		    "Required value: must specify exactly one of "
		    "inlineVolumeSpec and persistentVolumeName");
	else if (pv != NULL && inl != NULL)
		status_add_cause(causes, "FieldValueForbidden", "spec.source",
		    "Forbidden: must specify exactly one of inlineVolumeSpec "
		    "and persistentVolumeName");
	else if (pv != NULL && (!cJSON_IsString(pv) ||
	    *pv->valuestring == '\0'))
		status_add_cause(causes, "FieldValueRequired",
		    "spec.source.persistentVolumeName", "Required value: must "
		    "specify non empty persistentVolumeName");
	if (!is_subdomain(node, 0))
		status_add_cause(causes, "FieldValueInvalid", "spec.nodeName",
		    "Invalid value: \"%s\": %s", node, SUBDOMAIN_MSG);
	check_driver(att, "spec.attacher", 0, causes);
	if (changed(obj, old, "spec"))
		status_add_cause(causes, "FieldValueInvalid", "spec",
		    "Invalid value: field is immutable");
}

static void
capacity_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const char *sc = str_or_empty(obj, "storageClassName");

	if (!is_subdomain(sc, 0))
		status_add_cause(causes, "FieldValueInvalid",
		    "storageClassName", "Invalid value: \"%s\": %s", sc,
		    SUBDOMAIN_MSG);
	if (changed(obj, old, "nodeTopology"))
		status_add_cause(causes, "FieldValueInvalid", "nodeTopology",
		    "Invalid value: field is immutable");
	immutable(obj, old, "storageClassName", causes);
}

/* A claim's (or a template's, under spec.spec) device requests. */
static void
requests_validate(const cJSON *devices, const char *base, cJSON *causes)
{
	const cJSON *rq, *ex;
	char path[160];
	int i = 0, n;

	cJSON_ArrayForEach(rq, json_at(devices, "requests")) {
		if (json_str(rq, "name") == NULL ||
		    *json_str(rq, "name") == '\0') {
			snprintf(path, sizeof path, "%s.requests[%d].name",
			    base, i);
			status_add_cause(causes, "FieldValueRequired", path,
			    "Required value");
		}
		ex = json_at(rq, "exactly");
		n = (ex != NULL) + (cJSON_GetArraySize(json_at(rq,
		    "firstAvailable")) > 0);
		snprintf(path, sizeof path, "%s.requests[%d]", base, i);
		if (n == 0)
			status_add_cause(causes, "FieldValueRequired", path,
			    "Required value: exactly one of `exactly` or "
			    "`firstAvailable` is required");
		else if (n > 1)
			status_add_cause(causes, "FieldValueInvalid", path,
			    "Invalid value: null: exactly one of `exactly` or "
			    "`firstAvailable` is required, but multiple fields "
			    "are set");
		if (ex != NULL && (json_str(ex, "deviceClassName") == NULL ||
		    *json_str(ex, "deviceClassName") == '\0')) {
			snprintf(path, sizeof path, "%s.requests[%d].exactly."
			    "deviceClassName", base, i);
			status_add_cause(causes, "FieldValueRequired", path,
			    "Required value");
		}
		i++;
	}
}

/* v1's defaults of exact requests: ExactCount, and a count of 1 then. */
static void
requests_mutate(cJSON *devices)
{
	cJSON *rq, *ex;

	cJSON_ArrayForEach(rq, json_at(devices, "requests")) {
		if ((ex = json_at(rq, "exactly")) == NULL || !cJSON_IsObject(ex))
			continue;
		default_str(ex, "allocationMode", "ExactCount");
		if (strcmp(str_or_empty(ex, "allocationMode"), "ExactCount")
		    == 0 && cJSON_GetObjectItemCaseSensitive(ex, "count") ==
		    NULL)
			cJSON_AddNumberToObject(ex, "count", 1);
	}
}

static void
slice_validate(const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const char *pool = str_or_empty(obj, "spec.pool.name");
	const cJSON *cnt = json_at(obj, "spec.pool.resourceSliceCount");
	int n;

	check_driver(str_or_empty(obj, "spec.driver"), "spec.driver", 1,
	    causes);
	if (*pool == '\0')
		status_add_cause(causes, "FieldValueRequired",
		    "spec.pool.name", "Required value");
	if (!cJSON_IsNumber(cnt) || cnt->valuedouble <= 0)
		status_add_cause(causes, "FieldValueInvalid",
		    "spec.pool.resourceSliceCount", "Invalid value: %g: must "
		    "be greater than zero", cJSON_IsNumber(cnt) ?
		    cnt->valuedouble : 0.0);
	n = (json_str(obj, "spec.nodeName") != NULL &&
	    *json_str(obj, "spec.nodeName") != '\0') +
	    (json_at(obj, "spec.nodeSelector") != NULL) +
	    cJSON_IsTrue(json_at(obj, "spec.allNodes")) +
	    cJSON_IsTrue(json_at(obj, "spec.perDeviceNodeSelection"));
	if (n == 0)
		status_add_cause(causes, "FieldValueRequired", "spec",
		    "Required value: exactly one of `nodeName`, "
		    "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
		    "required");
	else if (n > 1)
		status_add_cause(causes, "FieldValueInvalid", "spec",
		    "Invalid value: {`nodeName`, `nodeSelector`, `allNodes`, "
		    "`perDeviceNodeSelection`}: exactly one of `nodeName`, "
		    "`nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
		    "required");
	immutable(obj, old, "spec.pool.name", causes);
	immutable(obj, old, "spec.driver", causes);
	immutable(obj, old, "spec.nodeName", causes);
}

void
admission_storage_storageclass_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	default_str(obj, "reclaimPolicy", "Delete");
	default_str(obj, "volumeBindingMode", "Immediate");
}

void
admission_storage_storageclass_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	storageclass_validate(obj, old, causes);
}

void
admission_storage_csidriver_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	cJSON *spec = json_obj(obj, "spec");

	default_bool(spec, "attachRequired", 1);
	default_bool(spec, "podInfoOnMount", 0);
	default_bool(spec, "storageCapacity", 0);
	default_str(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
	default_bool(spec, "requiresRepublish", 0);
	default_bool(spec, "seLinuxMount", 0);
	if (cJSON_GetArraySize(json_at(spec, "volumeLifecycleModes")) == 0) {
		cJSON *m = cJSON_CreateArray();

		cJSON_AddItemToArray(m, cJSON_CreateString("Persistent"));
		json_set(spec, "volumeLifecycleModes", m);
	}
}

void
admission_storage_csidriver_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	csidriver_validate(obj, old, causes);
}

void
admission_storage_attributesclass_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	attributesclass_validate(obj, old, causes);
}

void
admission_storage_csinode_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	csinode_validate(obj, old, causes);
}

void
admission_storage_volumeattachment_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	volumeattachment_validate(obj, old, causes);
}

void
admission_storage_capacity_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	capacity_validate(obj, old, causes);
}

void
admission_storage_claim_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	requests_mutate(json_at(obj, "spec.devices"));
}

void
admission_storage_claim_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	requests_validate(json_at(obj, "spec.devices"), "spec.devices",
	    causes);
	if (changed(obj, old, "spec"))
		status_add_cause(causes, "FieldValueInvalid", "spec",
		    "Invalid value: field is immutable");
}

void
admission_storage_claimtemplate_mutate(store *st, const resource *r, cJSON *obj, const cJSON *old)
{
	requests_mutate(json_at(obj, "spec.spec.devices"));
}

void
admission_storage_claimtemplate_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	requests_validate(json_at(obj, "spec.spec.devices"),
	    "spec.spec.devices", causes);
	if (changed(obj, old, "spec"))
		status_add_cause(causes, "FieldValueInvalid", "spec",
		    "Invalid value: field is immutable");
}

void
admission_storage_slice_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	slice_validate(obj, old, causes);
}
