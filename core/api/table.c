/*
 * Table rendering for `kubectl get`. Each built-in kind has a row function
 * that computes its cells the way the API server's printers do (Pod READY
 * and STATUS, Deployment READY, Job COMPLETIONS, ...); custom resources use
 * their CRD's additionalPrinterColumns; anything else gets Name and Age.
 * Columns with priority 1 appear only with `-o wide`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/table.h"
#include "api/table_int.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/util.h"

struct col {
	const char *name, *type;
	int priority;
};

struct kindcols {
	const char *store_key;
	struct col cols[12];
};

static const struct kindcols kinds[] = {
	{ "pods", { { "Name", "string", 0 }, { "Ready", "string", 0 },
	    { "Status", "string", 0 }, { "Restarts", "string", 0 },
	    { "Age", "string", 0 }, { "IP", "string", 1 },
	    { "Node", "string", 1 }, { "Nominated Node", "string", 1 },
	    { "Readiness Gates", "string", 1 } } },
	{ "nodes", { { "Name", "string", 0 }, { "Status", "string", 0 },
	    { "Roles", "string", 0 }, { "Age", "string", 0 },
	    { "Version", "string", 0 }, { "Internal-IP", "string", 1 },
	    { "External-IP", "string", 1 }, { "OS-Image", "string", 1 },
	    { "Kernel-Version", "string", 1 },
	    { "Container-Runtime", "string", 1 } } },
	{ "services", { { "Name", "string", 0 }, { "Type", "string", 0 },
	    { "Cluster-IP", "string", 0 }, { "External-IP", "string", 0 },
	    { "Port(s)", "string", 0 }, { "Age", "string", 0 },
	    { "Selector", "string", 1 } } },
	{ "jobs.batch", { { "Name", "string", 0 }, { "Status", "string", 0 },
	    { "Completions", "string", 0 }, { "Duration", "string", 0 },
	    { "Age", "string", 0 }, { "Containers", "string", 1 },
	    { "Images", "string", 1 }, { "Selector", "string", 1 } } },
	{ "cronjobs.batch", { { "Name", "string", 0 },
	    { "Schedule", "string", 0 }, { "Timezone", "string", 0 },
	    { "Suspend", "boolean", 0 }, { "Active", "integer", 0 },
	    { "Last Schedule", "string", 0 }, { "Age", "string", 0 },
	    { "Containers", "string", 1 }, { "Images", "string", 1 },
	    { "Selector", "string", 1 } } },
	{ "deployments.apps", { { "Name", "string", 0 },
	    { "Ready", "string", 0 }, { "Up-to-date", "string", 0 },
	    { "Available", "string", 0 }, { "Age", "string", 0 },
	    { "Containers", "string", 1 }, { "Images", "string", 1 },
	    { "Selector", "string", 1 } } },
	{ "replicasets.apps", { { "Name", "string", 0 },
	    { "Desired", "integer", 0 }, { "Current", "integer", 0 },
	    { "Ready", "integer", 0 }, { "Age", "string", 0 },
	    { "Containers", "string", 1 }, { "Images", "string", 1 },
	    { "Selector", "string", 1 } } },
	{ "replicationcontrollers", { { "Name", "string", 0 },
	    { "Desired", "integer", 0 }, { "Current", "integer", 0 },
	    { "Ready", "integer", 0 }, { "Age", "string", 0 },
	    { "Containers", "string", 1 }, { "Images", "string", 1 },
	    { "Selector", "string", 1 } } },
	{ "daemonsets.apps", { { "Name", "string", 0 },
	    { "Desired", "integer", 0 }, { "Current", "integer", 0 },
	    { "Ready", "integer", 0 }, { "Up-to-date", "integer", 0 },
	    { "Available", "integer", 0 }, { "Node Selector", "string", 0 },
	    { "Age", "string", 0 }, { "Containers", "string", 1 },
	    { "Images", "string", 1 }, { "Selector", "string", 1 } } },
	{ "statefulsets.apps", { { "Name", "string", 0 },
	    { "Ready", "string", 0 }, { "Age", "string", 0 },
	    { "Containers", "string", 1 }, { "Images", "string", 1 } } },
	{ "controllerrevisions.apps", { { "Name", "string", 0 },
	    { "Controller", "string", 0 }, { "Revision", "integer", 0 },
	    { "Age", "string", 0 } } },
	{ "poddisruptionbudgets.policy", { { "Name", "string", 0 },
	    { "Min Available", "string", 0 }, { "Max Unavailable", "string", 0 },
	    { "Allowed Disruptions", "integer", 0 }, { "Age", "string", 0 } } },
	{ "endpointslices.discovery.k8s.io", { { "Name", "string", 0 },
	    { "AddressType", "string", 0 }, { "Ports", "string", 0 },
	    { "Endpoints", "string", 0 }, { "Age", "string", 0 } } },
	{ "apiservices.apiregistration.k8s.io", { { "Name", "string", 0 },
	    { "Service", "string", 0 }, { "Available", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "persistentvolumeclaims", { { "Name", "string", 0 },
	    { "Status", "string", 0 }, { "Volume", "string", 0 },
	    { "Capacity", "string", 0 }, { "Access Modes", "string", 0 },
	    { "StorageClass", "string", 0 },
	    { "VolumeAttributesClass", "string", 0 }, { "Age", "string", 0 },
	    { "VolumeMode", "string", 1 } } },
	{ "persistentvolumes", { { "Name", "string", 0 },
	    { "Capacity", "string", 0 }, { "Access Modes", "string", 0 },
	    { "Reclaim Policy", "string", 0 }, { "Status", "string", 0 },
	    { "Claim", "string", 0 }, { "StorageClass", "string", 0 },
	    { "VolumeAttributesClass", "string", 0 }, { "Reason", "string", 0 },
	    { "Age", "string", 0 }, { "VolumeMode", "string", 1 } } },
	{ "limitranges", { { "Name", "string", 0 },
	    { "Created At", "date", 0 } } },
	{ "resourcequotas", { { "Name", "string", 0 }, { "Age", "string", 0 },
	    { "Request", "string", 0 }, { "Limit", "string", 0 } } },
	{ "networkpolicies.networking.k8s.io", { { "Name", "string", 0 },
	    { "Pod-Selector", "string", 0 }, { "Age", "string", 0 } } },
	{ "ingresses.networking.k8s.io", { { "Name", "string", 0 },
	    { "Class", "string", 0 }, { "Hosts", "string", 0 },
	    { "Address", "string", 0 }, { "Ports", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "ingressclasses.networking.k8s.io", { { "Name", "string", 0 },
	    { "Controller", "string", 0 }, { "Parameters", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "storageclasses.storage.k8s.io", { { "Name", "string", 0 },
	    { "Provisioner", "string", 0 }, { "ReclaimPolicy", "string", 0 },
	    { "VolumeBindingMode", "string", 0 },
	    { "AllowVolumeExpansion", "string", 0 }, { "Age", "string", 0 } } },
	{ "csinodes.storage.k8s.io", { { "Name", "string", 0 },
	    { "Drivers", "integer", 0 }, { "Age", "string", 0 } } },
	{ "csidrivers.storage.k8s.io", { { "Name", "string", 0 },
	    { "AttachRequired", "boolean", 0 },
	    { "PodInfoOnMount", "boolean", 0 },
	    { "StorageCapacity", "boolean", 0 },
	    { "TokenRequests", "string", 0 },
	    { "RequiresRepublish", "boolean", 0 }, { "Modes", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "csistoragecapacities.storage.k8s.io", { { "Name", "string", 0 },
	    { "StorageClassName", "string", 0 },
	    { "Capacity", "string", 0 } } },
	{ "volumeattachments.storage.k8s.io", { { "Name", "string", 0 },
	    { "Attacher", "string", 0 }, { "PV", "string", 0 },
	    { "Node", "string", 0 }, { "Attached", "boolean", 0 },
	    { "Age", "string", 0 } } },
	{ "volumeattributesclasses.storage.k8s.io", { { "Name", "string", 0 },
	    { "DriverName", "string", 0 }, { "Age", "string", 0 } } },
	{ "deviceclasses.resource.k8s.io", { { "Name", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "resourceclaims.resource.k8s.io", { { "Name", "string", 0 },
	    { "State", "string", 0 }, { "Age", "string", 0 } } },
	{ "resourceclaimtemplates.resource.k8s.io", { { "Name", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "resourceslices.resource.k8s.io", { { "Name", "string", 0 },
	    { "Node", "string", 0 }, { "Driver", "string", 0 },
	    { "Pool", "string", 0 }, { "Age", "string", 0 } } },
	{ "podgroups.scheduling.k8s.io", { { "Name", "string", 0 },
	    { "Policy", "string", 0 }, { "Min-Count", "integer", 0 },
	    { "Scheduled", "string", 0 }, { "Reason", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "workloads.scheduling.k8s.io", { { "Name", "string", 0 },
	    { "Templates", "string", 0 }, { "Age", "string", 0 } } },
	{ "namespaces", { { "Name", "string", 0 }, { "Status", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "events", { { "Last Seen", "string", 0 }, { "Type", "string", 0 },
	    { "Reason", "string", 0 }, { "Object", "string", 0 },
	    { "Subobject", "string", 1 }, { "Source", "string", 1 },
	    { "Message", "string", 0 }, { "First Seen", "string", 1 },
	    { "Count", "string", 1 }, { "Name", "string", 1 } } },
	{ "serviceaccounts", { { "Name", "string", 0 },
	    { "Secrets", "string", 0 }, { "Age", "string", 0 } } },
	{ "configmaps", { { "Name", "string", 0 }, { "Data", "string", 0 },
	    { "Age", "string", 0 } } },
	{ "secrets", { { "Name", "string", 0 }, { "Type", "string", 0 },
	    { "Data", "string", 0 }, { "Age", "string", 0 } } },
	{ "priorityclasses.scheduling.k8s.io", { { "Name", "string", 0 },
	    { "Value", "integer", 0 }, { "Global-Default", "boolean", 0 },
	    { "Age", "string", 0 } } },
	{ "leases.coordination.k8s.io", { { "Name", "string", 0 },
	    { "Holder", "string", 0 }, { "Age", "string", 0 } } },
	{ "customresourcedefinitions.apiextensions.k8s.io", {
	    { "Name", "string", 0 }, { "Created At", "date", 0 } } },
	{ "roles.rbac.authorization.k8s.io", { { "Name", "string", 0 },
	    { "Created At", "date", 0 } } },
	{ "clusterroles.rbac.authorization.k8s.io", { { "Name", "string", 0 },
	    { "Created At", "date", 0 } } },
	{ "rolebindings.rbac.authorization.k8s.io", { { "Name", "string", 0 },
	    { "Role", "string", 0 }, { "Age", "string", 0 },
	    { "Users", "string", 1 }, { "Groups", "string", 1 },
	    { "ServiceAccounts", "string", 1 } } },
	{ "clusterrolebindings.rbac.authorization.k8s.io", {
	    { "Name", "string", 0 }, { "Role", "string", 0 },
	    { "Age", "string", 0 }, { "Users", "string", 1 },
	    { "Groups", "string", 1 }, { "ServiceAccounts", "string", 1 } } },
};

static const struct kindcols *
kind_of(const resource *r)
{
	size_t i;

	if (!r->builtin)
		return NULL;
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(kinds[i].store_key, r->store_key) == 0)
			return &kinds[i];
	return NULL;
}

static void
add_coldef(cJSON *defs, const char *name, const char *type,
    const char *format, const char *desc, int priority)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "name", name);
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "format", format ? format : "");
	cJSON_AddStringToObject(c, "description", desc ? desc : "");
	cJSON_AddNumberToObject(c, "priority", priority);
	cJSON_AddItemToArray(defs, c);
}

cJSON *
table_new(const resource *r, const char *rv)
{
	cJSON *t = cJSON_CreateObject(), *defs;
	const struct kindcols *k = kind_of(r);
	int i;

	cJSON_AddStringToObject(t, "kind", "Table");
	cJSON_AddStringToObject(t, "apiVersion", "meta.k8s.io/v1");
	cJSON_AddStringToObject(cJSON_AddObjectToObject(t, "metadata"),
	    "resourceVersion", rv ? rv : "");
	defs = cJSON_AddArrayToObject(t, "columnDefinitions");
	if (k != NULL) {
		for (i = 0; i < 12 && k->cols[i].name != NULL; i++)
			add_coldef(defs, k->cols[i].name, k->cols[i].type,
			    strcmp(k->cols[i].name, "Name") == 0 ? "name" :
			    NULL, NULL, k->cols[i].priority);
	} else {
		add_coldef(defs, "Name", "string", "name", "Name must be "
		    "unique within a namespace.", 0);
		for (i = 0; i < r->ncols; i++)
			add_coldef(defs, r->cols[i].name, r->cols[i].type,
			    r->cols[i].format, r->cols[i].description,
			    r->cols[i].priority);
		if (r->ncols == 0)
			add_coldef(defs, "Age", "date", NULL, NULL, 0);
	}
	cJSON_AddArrayToObject(t, "rows");
	return t;
}

enum table_include
table_include_parse(const char *s)
{
	if (s == NULL || *s == '\0' || strcmp(s, "Metadata") == 0)
		return TABLE_METADATA;
	if (strcmp(s, "None") == 0)
		return TABLE_NONE;
	return TABLE_OBJECT;
}

static void
age_of(const cJSON *obj, const char *path, char out[16])
{
	time_t t = util_time_parse(json_str(obj, path));

	if (t < 0)
		snprintf(out, 16, "<unknown>");
	else
		util_age(t, out);
}

static void
cell_str(cJSON *cells, const char *s)
{
	cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

static void
cell_num(cJSON *cells, double v)
{
	cJSON_AddItemToArray(cells, cJSON_CreateNumber(v));
}

static double
num(const cJSON *o, const char *path)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* "a,b" of a field of every container of a pod template. */
static void
containers_field(const cJSON *spec, const char *field, char *out, size_t n)
{
	const cJSON *c;
	size_t len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(c, json_at(spec, "containers")) {
		const char *v = json_str(c, field);

		len += snprintf(out + len, len < n ? n - len : 0, "%s%s",
		    len ? "," : "", v ? v : "");
	}
}

static void
selector_text(const cJSON *sel, char *out, size_t n)
{
	const cJSON *it;
	size_t len = 0;

	out[0] = '\0';
	if (json_at(sel, "matchLabels") != NULL)
		sel = json_at(sel, "matchLabels");
	cJSON_ArrayForEach(it, sel)
		if (cJSON_IsString(it))
			len += snprintf(out + len, len < n ? n - len : 0,
			    "%s%s=%s", len ? "," : "", it->string,
			    it->valuestring);
	if (len == 0)
		snprintf(out, n, "<none>");
}

static void
pod_row(cJSON *cells, const cJSON *o)
{
	const cJSON *cs = json_at(o, "status.containerStatuses"), *c;
	const char *reason = json_str(o, "status.reason");
	const char *phase = json_str(o, "status.phase");
	int total = cJSON_GetArraySize(json_at(o, "spec.containers"));
	int ready = 0, restarts = 0;
	char buf[256], age[16];
	const char *status = reason ? reason : phase ? phase : "Pending";

	cJSON_ArrayForEach(c, cs) {
		const char *w = json_str(c, "state.waiting.reason");
		const char *t = json_str(c, "state.terminated.reason");

		if (cJSON_IsTrue(json_at(c, "ready")))
			ready++;
		restarts += (int)num(c, "restartCount");
		if (w != NULL && *w)
			status = w;
		else if (t != NULL && *t && strcmp(phase ? phase : "",
		    "Running") != 0)
			status = t;
	}
	if (json_at(o, "metadata.deletionTimestamp") != NULL)
		status = "Terminating";
	snprintf(buf, sizeof buf, "%d/%d", ready, total);
	cell_str(cells, buf);
	cell_str(cells, status);
	snprintf(buf, sizeof buf, "%d", restarts);
	cell_str(cells, buf);
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_str(cells, json_str(o, "status.podIP") ?
	    json_str(o, "status.podIP") : "<none>");
	cell_str(cells, json_str(o, "spec.nodeName") ?
	    json_str(o, "spec.nodeName") : "<none>");
	cell_str(cells, json_str(o, "status.nominatedNodeName") ?
	    json_str(o, "status.nominatedNodeName") : "<none>");
	cell_str(cells, "<none>");
}

static void
node_row(cJSON *cells, const cJSON *o)
{
	const cJSON *c, *labels = json_at(o, "metadata.labels");
	const char *status = "Unknown";
	char roles[256] = "", age[16];
	size_t len = 0;

	cJSON_ArrayForEach(c, json_at(o, "status.conditions")) {
		const char *t = json_str(c, "type");

		if (t && strcmp(t, "Ready") == 0)
			status = strcmp(json_str(c, "status") ?
			    json_str(c, "status") : "", "True") == 0 ?
			    "Ready" : "NotReady";
	}
	if (cJSON_IsTrue(json_at(o, "spec.unschedulable")))
		status = strcmp(status, "Ready") == 0 ?
		    "Ready,SchedulingDisabled" : status;
	cJSON_ArrayForEach(c, labels)
		if (strncmp(c->string, "node-role.kubernetes.io/", 24) == 0)
			len += snprintf(roles + len, len < sizeof roles ?
			    sizeof roles - len : 0, "%s%s", len ? "," : "",
			    c->string + 24);
	cell_str(cells, status);
	cell_str(cells, len ? roles : "<none>");
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_str(cells, json_str(o, "status.nodeInfo.kubeletVersion") ?
	    json_str(o, "status.nodeInfo.kubeletVersion") : "");
	{
		const char *in = "<none>", *ex = "<none>";

		cJSON_ArrayForEach(c, json_at(o, "status.addresses")) {
			const char *t = json_str(c, "type");

			if (t && strcmp(t, "InternalIP") == 0)
				in = json_str(c, "address");
			if (t && strcmp(t, "ExternalIP") == 0)
				ex = json_str(c, "address");
		}
		cell_str(cells, in);
		cell_str(cells, ex);
	}
	cell_str(cells, json_str(o, "status.nodeInfo.osImage") ?
	    json_str(o, "status.nodeInfo.osImage") : "<unknown>");
	cell_str(cells, json_str(o, "status.nodeInfo.kernelVersion") ?
	    json_str(o, "status.nodeInfo.kernelVersion") : "<unknown>");
	cell_str(cells, json_str(o,
	    "status.nodeInfo.containerRuntimeVersion") ? json_str(o,
	    "status.nodeInfo.containerRuntimeVersion") : "<unknown>");
}

static void
service_row(cJSON *cells, const cJSON *o)
{
	const cJSON *p;
	char ports[512] = "", age[16], sel[512];
	size_t len = 0;
	const char *type = json_str(o, "spec.type");

	cell_str(cells, type ? type : "ClusterIP");
	cell_str(cells, json_str(o, "spec.clusterIP") ?
	    json_str(o, "spec.clusterIP") : "<none>");
	cell_str(cells, "<none>");
	cJSON_ArrayForEach(p, json_at(o, "spec.ports")) {
		const char *proto = json_str(p, "protocol");

		if (json_at(p, "nodePort") != NULL)
			len += snprintf(ports + len, len < sizeof ports ?
			    sizeof ports - len : 0, "%s%d:%d/%s", len ? "," :
			    "", (int)num(p, "port"), (int)num(p, "nodePort"),
			    proto ? proto : "TCP");
		else
			len += snprintf(ports + len, len < sizeof ports ?
			    sizeof ports - len : 0, "%s%d/%s", len ? "," : "",
			    (int)num(p, "port"), proto ? proto : "TCP");
	}
	cell_str(cells, len ? ports : "<none>");
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	selector_text(json_at(o, "spec.selector"), sel, sizeof sel);
	cell_str(cells, sel);
}

static void
wide_template(cJSON *cells, const cJSON *o)
{
	char buf[1024];

	containers_field(json_at(o, "spec.template.spec"), "name", buf,
	    sizeof buf);
	cell_str(cells, buf);
	containers_field(json_at(o, "spec.template.spec"), "image", buf,
	    sizeof buf);
	cell_str(cells, buf);
	selector_text(json_at(o, "spec.selector"), buf, sizeof buf);
	cell_str(cells, buf);
}

static void
job_row(cJSON *cells, const cJSON *o)
{
	char buf[64], age[16];
	const char *status = "Running";
	time_t start = util_time_parse(json_str(o, "status.startTime"));
	time_t end = util_time_parse(json_str(o, "status.completionTime"));

	if (json_condition_true(o, "Complete"))
		status = "Complete";
	else if (json_condition_true(o, "Failed"))
		status = "Failed";
	else if (json_condition_true(o, "Suspended"))
		status = "Suspended";
	else if (json_at(o, "metadata.deletionTimestamp") != NULL)
		status = "Terminating";
	cell_str(cells, status);
	snprintf(buf, sizeof buf, "%d/%d", (int)num(o, "status.succeeded"),
	    (int)(json_at(o, "spec.completions") ? num(o, "spec.completions") :
	    1));
	cell_str(cells, buf);
	if (start < 0)
		cell_str(cells, "");
	else {
		long d = (long)((end >= 0 ? end : time(NULL)) - start);

		snprintf(buf, sizeof buf, d < 120 ? "%lds" : "%ldm", d < 120 ?
		    d : d / 60);
		cell_str(cells, buf);
	}
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

static void
cronjob_row(cJSON *cells, const cJSON *o)
{
	const cJSON *spec = json_at(o, "spec.jobTemplate.spec.template.spec");
	char buf[1024], age[16];

	cell_str(cells, json_str(o, "spec.schedule"));
	cell_str(cells, json_str(o, "spec.timeZone") ?
	    json_str(o, "spec.timeZone") : "<none>");
	/* kubectl's printBoolPtr: a string, "<unset>" when absent. */
	cell_str(cells, json_at(o, "spec.suspend") == NULL ? "<unset>" :
	    cJSON_IsTrue(json_at(o, "spec.suspend")) ? "True" : "False");
	cell_num(cells, cJSON_GetArraySize(json_at(o, "status.active")));
	if (json_str(o, "status.lastScheduleTime") != NULL)
		age_of(o, "status.lastScheduleTime", age);
	else
		snprintf(age, sizeof age, "<none>");
	cell_str(cells, age);
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	containers_field(spec, "name", buf, sizeof buf);
	cell_str(cells, buf);
	containers_field(spec, "image", buf, sizeof buf);
	cell_str(cells, buf);
	selector_text(json_at(o, "spec.jobTemplate.spec.selector"), buf,
	    sizeof buf);
	cell_str(cells, buf);
}

static void
deployment_row(cJSON *cells, const cJSON *o)
{
	char buf[64], age[16];

	snprintf(buf, sizeof buf, "%d/%d", (int)num(o, "status.readyReplicas"),
	    (int)num(o, "spec.replicas"));
	cell_str(cells, buf);
	cell_num(cells, num(o, "status.updatedReplicas"));
	cell_num(cells, num(o, "status.availableReplicas"));
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

static void
replicaset_row(cJSON *cells, const cJSON *o)
{
	char age[16];

	cell_num(cells, num(o, "spec.replicas"));
	cell_num(cells, num(o, "status.replicas"));
	cell_num(cells, num(o, "status.readyReplicas"));
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

/* DESIRED ... NODE SELECTOR as kubectl prints a DaemonSet. */
static void
daemonset_row(cJSON *cells, const cJSON *o)
{
	const cJSON *it;
	char buf[1024], age[16];
	size_t len = 0;

	cell_num(cells, num(o, "status.desiredNumberScheduled"));
	cell_num(cells, num(o, "status.currentNumberScheduled"));
	cell_num(cells, num(o, "status.numberReady"));
	cell_num(cells, num(o, "status.updatedNumberScheduled"));
	cell_num(cells, num(o, "status.numberAvailable"));
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "spec.template.spec.nodeSelector"))
		if (cJSON_IsString(it))
			len += snprintf(buf + len, len < sizeof buf ?
			    sizeof buf - len : 0, "%s%s=%s", len ? "," : "",
			    it->string, it->valuestring);
	cell_str(cells, len ? buf : "<none>");
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

static void
statefulset_row(cJSON *cells, const cJSON *o)
{
	char buf[1024], age[16];

	snprintf(buf, sizeof buf, "%d/%d", (int)num(o, "status.readyReplicas"),
	    (int)(json_at(o, "spec.replicas") ? num(o, "spec.replicas") : 1));
	cell_str(cells, buf);
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	containers_field(json_at(o, "spec.template.spec"), "name", buf,
	    sizeof buf);
	cell_str(cells, buf);
	containers_field(json_at(o, "spec.template.spec"), "image", buf,
	    sizeof buf);
	cell_str(cells, buf);
}

/* An int-or-string field as kubectl prints it, N/A when absent. */
static void
cell_intstr(cJSON *cells, const cJSON *v)
{
	char buf[64];

	if (cJSON_IsNumber(v)) {
		snprintf(buf, sizeof buf, "%d", v->valueint);
		cell_str(cells, buf);
	} else
		cell_str(cells, cJSON_IsString(v) ? v->valuestring : "N/A");
}

/* PORTS and the first three ENDPOINTS, as kubectl prints a slice. */
static void
endpointslice_row(cJSON *cells, const cJSON *o)
{
	const cJSON *it, *a;
	char buf[1024], age[16];
	size_t len = 0;
	int n = 0;

	cell_str(cells, json_str(o, "addressType"));
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "ports"))
		if (cJSON_IsNumber(json_at(it, "port")))
			len += snprintf(buf + len, len < sizeof buf ?
			    sizeof buf - len : 0, "%s%d", len ? "," : "",
			    json_at(it, "port")->valueint);
	cell_str(cells, len ? buf : "<unset>");
	len = 0;
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "endpoints"))
		cJSON_ArrayForEach(a, json_at(it, "addresses")) {
			if (n++ < 3 && cJSON_IsString(a))
				len += snprintf(buf + len, len < sizeof buf ?
				    sizeof buf - len : 0, "%s%s", len ? "," :
				    "", a->valuestring);
		}
	if (n > 3)
		len += snprintf(buf + len, len < sizeof buf ? sizeof buf - len :
		    0, " + %d more...", n - 3);
	cell_str(cells, n ? buf : "<unset>");
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}

/* AGE REQUEST LIMIT: "pods: 1/2, requests.cpu: 0/1" as kubectl has it. */
static int
by_key(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string,
	    (*(const cJSON *const *)b)->string);
}

/* kubectl's access modes: RWO, ROX, RWX, RWOP, comma-joined. */
static void
access_modes(const cJSON *modes, char *out, size_t n)
{
	static const char *const names[][2] = { { "ReadWriteOnce", "RWO" },
	    { "ReadOnlyMany", "ROX" }, { "ReadWriteMany", "RWX" },
	    { "ReadWriteOncePod", "RWOP" } };
	const cJSON *m;
	size_t i, len = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(m, modes)
		for (i = 0; i < 4; i++)
			if (cJSON_IsString(m) &&
			    strcmp(m->valuestring, names[i][0]) == 0 &&
			    len + 6 < n)
				len += (size_t)snprintf(out + len, n - len,
				    "%s%s", len ? "," : "", names[i][1]);
}

/* A PersistentVolumeClaim's or PersistentVolume's row. */
static void
storage_row(cJSON *cells, const cJSON *o, int pv)
{
	char modes[64], claim[512], age[16];
	const char *sc = json_str(o, "spec.storageClassName");
	const char *vac = json_str(o, "spec.volumeAttributesClassName");
	const char *cap = json_str(o, pv ? "spec.capacity.storage" :
	    "status.capacity.storage");

	access_modes(json_at(o, pv ? "spec.accessModes" : "status.accessModes"),
	    modes, sizeof modes);
	age_of(o, "metadata.creationTimestamp", age);
	if (!pv) {
		cell_str(cells, json_str(o, "status.phase"));
		cell_str(cells, json_str(o, "spec.volumeName") ?
		    json_str(o, "spec.volumeName") : "");
		cell_str(cells, cap ? cap : "");
		cell_str(cells, modes);
		cell_str(cells, sc ? sc : "<unset>");
		cell_str(cells, vac ? vac : "<unset>");
		cell_str(cells, age);
	} else {
		const char *cn = json_str(o, "spec.claimRef.name");

		snprintf(claim, sizeof claim, "%s/%s",
		    json_str(o, "spec.claimRef.namespace") ?
		    json_str(o, "spec.claimRef.namespace") : "", cn ? cn : "");
		cell_str(cells, cap ? cap : "");
		cell_str(cells, modes);
		cell_str(cells, json_str(o, "spec.persistentVolumeReclaimPolicy"));
		cell_str(cells, json_str(o, "status.phase"));
		cell_str(cells, cn ? claim : "");
		cell_str(cells, sc ? sc : "");
		cell_str(cells, vac ? vac : "<unset>");
		cell_str(cells, json_str(o, "status.reason") ?
		    json_str(o, "status.reason") : "");
		cell_str(cells, age);
	}
	cell_str(cells, json_str(o, "spec.volumeMode") ?
	    json_str(o, "spec.volumeMode") : "Filesystem");
}

static void
quota_row(cJSON *cells, const cJSON *o)
{
	const cJSON *h, *keys[64];
	char col[2][1024], age[16];
	size_t len[2] = { 0, 0 }, nk = 0, j;
	int i;

	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	col[0][0] = col[1][0] = '\0';
	cJSON_ArrayForEach(h, json_at(o, "status.hard"))
		if (nk < 64)
			keys[nk++] = h;
	qsort(keys, nk, sizeof keys[0], by_key);
	for (j = 0; j < nk; j++) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(json_at(o,
		    "status.used"), keys[j]->string);

		h = keys[j];
		i = strncmp(h->string, "limits", 6) == 0;
		len[i] += snprintf(col[i] + len[i], len[i] < sizeof col[i] ?
		    sizeof col[i] - len[i] : 0, "%s%s: %s/%s", len[i] ? ", " :
		    "", h->string, cJSON_IsString(u) ? u->valuestring : "0",
		    cJSON_IsString(h) ? h->valuestring : "");
	}
	cell_str(cells, col[0]);
	cell_str(cells, col[1]);
}

/* CLASS HOSTS ADDRESS PORTS as kubectl prints an Ingress. */
static void
ingress_row(cJSON *cells, const cJSON *o)
{
	const cJSON *it;
	char buf[1024], age[16];
	size_t len = 0;

	cell_str(cells, json_str(o, "spec.ingressClassName") ?
	    json_str(o, "spec.ingressClassName") : "<none>");
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "spec.rules"))
		len += snprintf(buf + len, len < sizeof buf ? sizeof buf - len :
		    0, "%s%s", len ? "," : "", json_str(it, "host") ?
		    json_str(it, "host") : "*");
	cell_str(cells, len ? buf : "*");
	len = 0;
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "status.loadBalancer.ingress")) {
		const char *a = json_str(it, "ip") ? json_str(it, "ip") :
		    json_str(it, "hostname");

		if (a != NULL)
			len += snprintf(buf + len, len < sizeof buf ?
			    sizeof buf - len : 0, "%s%s", len ? "," : "", a);
	}
	cell_str(cells, buf);
	cell_str(cells, cJSON_GetArraySize(json_at(o, "spec.tls")) > 0 ?
	    "80, 443" : "80");
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}

/* CONTROLLER is kind.group/name of the controller owner, as kubectl's. */
static void
revision_row(cJSON *cells, const cJSON *o)
{
	const cJSON *ref;
	char buf[512] = "<none>", age[16];

	cJSON_ArrayForEach(ref, json_at(o, "metadata.ownerReferences")) {
		const char *av = json_str(ref, "apiVersion");
		const char *slash = av ? strchr(av, '/') : NULL;
		char kind[128];

		if (!cJSON_IsTrue(json_at(ref, "controller")))
			continue;
		snprintf(kind, sizeof kind, "%s", json_str(ref, "kind") ?
		    json_str(ref, "kind") : "");
		for (char *p = kind; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p += 'a' - 'A';
		snprintf(buf, sizeof buf, "%s%s%.*s/%s", kind, slash ? "." : "",
		    slash ? (int)(slash - av) : 0, slash ? av : "",
		    json_str(ref, "name") ? json_str(ref, "name") : "");
	}
	cell_str(cells, buf);
	cell_num(cells, num(o, "revision"));
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}

static void
event_row(cJSON *cells, const cJSON *o)
{
	char age[16], obj[512];
	const char *last = json_str(o, "lastTimestamp");

	if (last == NULL)
		last = json_str(o, "eventTime");
	if (last == NULL)
		last = json_str(o, "metadata.creationTimestamp");
	if (util_time_parse(last) < 0)
		snprintf(age, sizeof age, "<unknown>");
	else
		util_age(util_time_parse(last), age);
	cell_str(cells, age);
	cell_str(cells, json_str(o, "type"));
	cell_str(cells, json_str(o, "reason"));
	snprintf(obj, sizeof obj, "%s/%s", json_str(o, "involvedObject.kind") ?
	    json_str(o, "involvedObject.kind") : "",
	    json_str(o, "involvedObject.name") ?
	    json_str(o, "involvedObject.name") : "");
	for (char *p = obj; *p && *p != '/'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p += 'a' - 'A';
	cell_str(cells, obj);
	/* -o wide's: kube-apiserver's printEvent. */
	cell_str(cells, json_str(o, "involvedObject.fieldPath") ?
	    json_str(o, "involvedObject.fieldPath") : "");
	{
		const char *c = json_str(o, "source.component");
		const char *h = json_str(o, "source.host");
		char src[512];

		if (c == NULL || *c == '\0') {
			c = json_str(o, "reportingComponent");
			h = json_str(o, "reportingInstance");
		}
		snprintf(src, sizeof src, "%s%s%s", c ? c : "",
		    h && *h ? ", " : "", h && *h ? h : "");
		cell_str(cells, src);
	}
	cell_str(cells, json_str(o, "message"));
	last = json_str(o, "firstTimestamp");
	if (last == NULL)
		last = json_str(o, "eventTime");
	if (last == NULL || util_time_parse(last) < 0)
		snprintf(age, sizeof age, "<unknown>");
	else
		util_age(util_time_parse(last), age);
	cell_str(cells, age);
	cell_num(cells, cJSON_IsNumber(json_at(o, "count")) ?
	    json_at(o, "count")->valuedouble : 1);
	cell_str(cells, json_str(o, "metadata.name"));
}

static void
cell_jsonpath(cJSON *cells, const cJSON *o, const struct printer_col *c)
{
	const cJSON *v = jsonpath_first(o, c->jsonpath);
	char age[16];

	if (v == NULL) {
		cJSON_AddItemToArray(cells, cJSON_CreateNull());
		return;
	}
	if (strcmp(c->type, "date") == 0 && cJSON_IsString(v)) {
		time_t t = util_time_parse(v->valuestring);

		if (t >= 0) {
			util_age(t, age);
			cell_str(cells, age);
			return;
		}
	}
	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		char *s = json_print(v);

		cell_str(cells, s);
		free(s);
		return;
	}
	cJSON_AddItemToArray(cells, cJSON_Duplicate(v, 1));
}

/*
 * A binding's ROLE (kind/name) and, for -o wide, its subjects by kind
 * joined with ", " as kubectl shows them (service accounts as ns/name).
 */
static void
binding_row(cJSON *cells, const cJSON *o)
{
	static const char *subject_kinds[] = {
		"User", "Group", "ServiceAccount"
	};
	const cJSON *s;
	char buf[1024], age[16];
	size_t len;
	int i;

	snprintf(buf, sizeof buf, "%s/%s", json_str(o, "roleRef.kind") ?
	    json_str(o, "roleRef.kind") : "", json_str(o, "roleRef.name") ?
	    json_str(o, "roleRef.name") : "");
	cell_str(cells, buf);
	age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	for (i = 0; i < 3; i++) {
		buf[0] = '\0';
		len = 0;
		cJSON_ArrayForEach(s, json_at(o, "subjects")) {
			const char *k = json_str(s, "kind");
			const char *n = json_str(s, "name");
			const char *ns = json_str(s, "namespace");

			if (k == NULL || strcmp(k, subject_kinds[i]) != 0)
				continue;
			if (i == 2)
				len += snprintf(buf + len, len < sizeof buf ?
				    sizeof buf - len : 0, "%s%s/%s", len ?
				    ", " : "", ns ? ns : "", n ? n : "");
			else
				len += snprintf(buf + len, len < sizeof buf ?
				    sizeof buf - len : 0, "%s%s", len ? ", " :
				    "", n ? n : "");
		}
		cell_str(cells, buf);
	}
}

/* The row's object: full, or PartialObjectMetadata. */
static cJSON *
row_object(const resource *r, const cJSON *obj, enum table_include inc)
{
	cJSON *m;

	if (inc == TABLE_OBJECT)
		return cJSON_Duplicate(obj, 1);
	m = cJSON_CreateObject();
	cJSON_AddStringToObject(m, "kind", "PartialObjectMetadata");
	cJSON_AddStringToObject(m, "apiVersion", "meta.k8s.io/v1");
	cJSON_AddItemToObject(m, "metadata", cJSON_Duplicate(json_at(obj,
	    "metadata"), 1));
	json_del(json_at(m, "metadata"), "managedFields");
	return m;
}

void
table_add_row(cJSON *t, const resource *r, const cJSON *o,
    enum table_include inc)
{
	cJSON *row = cJSON_CreateObject(), *cells;
	const char *k = r->store_key;
	char age[16], buf[64];
	int i;

	cells = cJSON_AddArrayToObject(row, "cells");
	if (strcmp(k, "events") != 0)
		cell_str(cells, json_str(o, "metadata.name"));
	if (r->builtin && (table_storage_row(cells, k, o) ||
	    table_gang_row(cells, k, o)))
		;
	else if (!r->builtin) {
		for (i = 0; i < r->ncols; i++)
			cell_jsonpath(cells, o, &r->cols[i]);
		if (r->ncols == 0) {
			age_of(o, "metadata.creationTimestamp", age);
			cell_str(cells, age);
		}
	} else if (strcmp(k, "pods") == 0)
		pod_row(cells, o);
	else if (strcmp(k, "nodes") == 0)
		node_row(cells, o);
	else if (strcmp(k, "services") == 0)
		service_row(cells, o);
	else if (strcmp(k, "jobs.batch") == 0)
		job_row(cells, o);
	else if (strcmp(k, "cronjobs.batch") == 0)
		cronjob_row(cells, o);
	else if (strcmp(k, "deployments.apps") == 0)
		deployment_row(cells, o);
	else if (strcmp(k, "replicasets.apps") == 0 ||
	    strcmp(k, "replicationcontrollers") == 0)
		replicaset_row(cells, o);
	else if (strcmp(k, "daemonsets.apps") == 0)
		daemonset_row(cells, o);
	else if (strcmp(k, "statefulsets.apps") == 0)
		statefulset_row(cells, o);
	else if (strcmp(k, "controllerrevisions.apps") == 0)
		revision_row(cells, o);
	else if (strcmp(k, "ingresses.networking.k8s.io") == 0)
		ingress_row(cells, o);
	else if (strcmp(k, "endpointslices.discovery.k8s.io") == 0)
		endpointslice_row(cells, o);
	else if (strcmp(k, "resourcequotas") == 0)
		quota_row(cells, o);
	else if (strcmp(k, "apiservices.apiregistration.k8s.io") == 0) {
		const char *svc = json_str(o, "spec.service.name");
		const cJSON *c, *avail = NULL;

		snprintf(buf, sizeof buf, "%s/%s", json_str(o,
		    "spec.service.namespace") ? json_str(o,
		    "spec.service.namespace") : "", svc ? svc : "");
		cell_str(cells, svc ? buf : "Local");
		/* kube-aggregator's printer: True, "False (Reason)", or
		   Unknown without the condition. */
		cJSON_ArrayForEach(c, json_at(o, "status.conditions"))
			if (json_str(c, "type") != NULL &&
			    strcmp(json_str(c, "type"), "Available") == 0)
				avail = c;
		if (avail == NULL || json_str(avail, "status") == NULL)
			cell_str(cells, "Unknown");
		else if (strcmp(json_str(avail, "status"), "True") != 0 &&
		    json_str(avail, "reason") != NULL &&
		    *json_str(avail, "reason") != '\0') {
			snprintf(buf, sizeof buf, "%s (%s)", json_str(avail,
			    "status"), json_str(avail, "reason"));
			cell_str(cells, buf);
		} else
			cell_str(cells, json_str(avail, "status"));
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	}
	else if (strcmp(k, "persistentvolumeclaims") == 0 ||
	    strcmp(k, "persistentvolumes") == 0)
		storage_row(cells, o, strcmp(k, "persistentvolumes") == 0);
	else if (strcmp(k, "networkpolicies.networking.k8s.io") == 0) {
		selector_text(json_at(o, "spec.podSelector"), buf, sizeof buf);
		cell_str(cells, buf);
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "ingressclasses.networking.k8s.io") == 0) {
		const char *pk = json_str(o, "spec.parameters.kind");
		char p[512];

		cell_str(cells, json_str(o, "spec.controller"));
		snprintf(p, sizeof p, "%s/%s", pk ? pk : "",
		    json_str(o, "spec.parameters.name") ?
		    json_str(o, "spec.parameters.name") : "");
		cell_str(cells, pk ? p : "<none>");
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "poddisruptionbudgets.policy") == 0) {
		cell_intstr(cells, json_at(o, "spec.minAvailable"));
		cell_intstr(cells, json_at(o, "spec.maxUnavailable"));
		cell_num(cells, num(o, "status.disruptionsAllowed"));
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	}
	else if (strcmp(k, "events") == 0)
		event_row(cells, o);
	else if (strcmp(k, "namespaces") == 0) {
		cell_str(cells, json_str(o, "status.phase") ?
		    json_str(o, "status.phase") : "Active");
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "configmaps") == 0 ||
	    strcmp(k, "secrets") == 0) {
		int n = cJSON_GetArraySize(json_at(o, "data")) +
		    cJSON_GetArraySize(json_at(o, "binaryData"));

		if (strcmp(k, "secrets") == 0)
			cell_str(cells, json_str(o, "type") ?
			    json_str(o, "type") : "Opaque");
		cell_num(cells, n);	/* a number, as kube-apiserver's */
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "serviceaccounts") == 0) {
		cell_num(cells, cJSON_GetArraySize(json_at(o, "secrets")));
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "priorityclasses.scheduling.k8s.io") == 0) {
		cell_num(cells, num(o, "value"));
		cJSON_AddItemToArray(cells, cJSON_CreateBool(cJSON_IsTrue(
		    json_at(o, "globalDefault"))));
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k, "leases.coordination.k8s.io") == 0) {
		cell_str(cells, json_str(o, "spec.holderIdentity") ?
		    json_str(o, "spec.holderIdentity") : "");
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	} else if (strcmp(k,
	    "customresourcedefinitions.apiextensions.k8s.io") == 0 ||
	    strcmp(k, "roles.rbac.authorization.k8s.io") == 0 ||
	    strcmp(k, "limitranges") == 0 ||
	    strcmp(k, "clusterroles.rbac.authorization.k8s.io") == 0) {
		cell_str(cells, json_str(o, "metadata.creationTimestamp"));
	} else if (strcmp(k, "rolebindings.rbac.authorization.k8s.io") == 0 ||
	    strcmp(k, "clusterrolebindings.rbac.authorization.k8s.io") == 0) {
		binding_row(cells, o);
	} else {
		age_of(o, "metadata.creationTimestamp", age);
		cell_str(cells, age);
	}
	if (inc != TABLE_NONE)
		cJSON_AddItemToObject(row, "object", row_object(r, o, inc));
	cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(t, "rows"), row);
}
