/*
 * Table rows of the built-in kinds, cell for cell as kube-apiserver's
 * printers (pkg/printers/internalversion) make them: a Pod's READY and
 * STATUS, a Deployment's READY, a Job's COMPLETIONS, ... Each row function
 * appends the cells after NAME (an Event's all of them: its NAME comes
 * last); the columns are the kind's descriptor's (registry/kinds/). The
 * storage.k8s.io and resource.k8s.io kinds' rows are in rows_storage.c,
 * the gang API's in rows_gang.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/kinds/cell.h"
#include "registry/kinds/rows.h"

void
rows_pod(cJSON *cells, const cJSON *o)
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
		restarts += (int)cell_field_num(c, "restartCount");
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
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_str(cells, json_str(o, "status.podIP") ?
	    json_str(o, "status.podIP") : "<none>");
	cell_str(cells, json_str(o, "spec.nodeName") ?
	    json_str(o, "spec.nodeName") : "<none>");
	cell_str(cells, json_str(o, "status.nominatedNodeName") ?
	    json_str(o, "status.nominatedNodeName") : "<none>");
	cell_str(cells, "<none>");
}

void
rows_node(cJSON *cells, const cJSON *o)
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
	cell_age_of(o, "metadata.creationTimestamp", age);
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

void
rows_service(cJSON *cells, const cJSON *o)
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
			    "", (int)cell_field_num(p, "port"), (int)cell_field_num(p, "nodePort"),
			    proto ? proto : "TCP");
		else
			len += snprintf(ports + len, len < sizeof ports ?
			    sizeof ports - len : 0, "%s%d/%s", len ? "," : "",
			    (int)cell_field_num(p, "port"), proto ? proto : "TCP");
	}
	cell_str(cells, len ? ports : "<none>");
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_selector(json_at(o, "spec.selector"), sel, sizeof sel);
	cell_str(cells, sel);
}

static void
wide_template(cJSON *cells, const cJSON *o)
{
	char buf[1024];

	cell_containers(json_at(o, "spec.template.spec"), "name", buf,
	    sizeof buf);
	cell_str(cells, buf);
	cell_containers(json_at(o, "spec.template.spec"), "image", buf,
	    sizeof buf);
	cell_str(cells, buf);
	cell_selector(json_at(o, "spec.selector"), buf, sizeof buf);
	cell_str(cells, buf);
}

void
rows_job(cJSON *cells, const cJSON *o)
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
	snprintf(buf, sizeof buf, "%d/%d", (int)cell_field_num(o, "status.succeeded"),
	    (int)(json_at(o, "spec.completions") ? cell_field_num(o, "spec.completions") :
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
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

void
rows_cronjob(cJSON *cells, const cJSON *o)
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
		cell_age_of(o, "status.lastScheduleTime", age);
	else
		snprintf(age, sizeof age, "<none>");
	cell_str(cells, age);
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_containers(spec, "name", buf, sizeof buf);
	cell_str(cells, buf);
	cell_containers(spec, "image", buf, sizeof buf);
	cell_str(cells, buf);
	cell_selector(json_at(o, "spec.jobTemplate.spec.selector"), buf,
	    sizeof buf);
	cell_str(cells, buf);
}

void
rows_deployment(cJSON *cells, const cJSON *o)
{
	char buf[64], age[16];

	snprintf(buf, sizeof buf, "%d/%d", (int)cell_field_num(o, "status.readyReplicas"),
	    (int)cell_field_num(o, "spec.replicas"));
	cell_str(cells, buf);
	cell_num(cells, cell_field_num(o, "status.updatedReplicas"));
	cell_num(cells, cell_field_num(o, "status.availableReplicas"));
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

void
rows_replicaset(cJSON *cells, const cJSON *o)
{
	char age[16];

	cell_num(cells, cell_field_num(o, "spec.replicas"));
	cell_num(cells, cell_field_num(o, "status.replicas"));
	cell_num(cells, cell_field_num(o, "status.readyReplicas"));
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

/* DESIRED ... NODE SELECTOR as kubectl prints a DaemonSet. */
void
rows_daemonset(cJSON *cells, const cJSON *o)
{
	const cJSON *it;
	char buf[1024], age[16];
	size_t len = 0;

	cell_num(cells, cell_field_num(o, "status.desiredNumberScheduled"));
	cell_num(cells, cell_field_num(o, "status.currentNumberScheduled"));
	cell_num(cells, cell_field_num(o, "status.numberReady"));
	cell_num(cells, cell_field_num(o, "status.updatedNumberScheduled"));
	cell_num(cells, cell_field_num(o, "status.numberAvailable"));
	buf[0] = '\0';
	cJSON_ArrayForEach(it, json_at(o, "spec.template.spec.nodeSelector"))
		if (cJSON_IsString(it))
			len += snprintf(buf + len, len < sizeof buf ?
			    sizeof buf - len : 0, "%s%s=%s", len ? "," : "",
			    it->string, it->valuestring);
	cell_str(cells, len ? buf : "<none>");
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	wide_template(cells, o);
}

void
rows_statefulset(cJSON *cells, const cJSON *o)
{
	char buf[1024], age[16];

	snprintf(buf, sizeof buf, "%d/%d", (int)cell_field_num(o, "status.readyReplicas"),
	    (int)(json_at(o, "spec.replicas") ? cell_field_num(o, "spec.replicas") : 1));
	cell_str(cells, buf);
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
	cell_containers(json_at(o, "spec.template.spec"), "name", buf,
	    sizeof buf);
	cell_str(cells, buf);
	cell_containers(json_at(o, "spec.template.spec"), "image", buf,
	    sizeof buf);
	cell_str(cells, buf);
}

/* PORTS and the first three ENDPOINTS, as kubectl prints a slice. */
void
rows_endpointslice(cJSON *cells, const cJSON *o)
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
	cell_age_of(o, "metadata.creationTimestamp", age);
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
	cell_age_of(o, "metadata.creationTimestamp", age);
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

void
rows_quota(cJSON *cells, const cJSON *o)
{
	const cJSON *h, *keys[64];
	char col[2][1024], age[16];
	size_t len[2] = { 0, 0 }, nk = 0, j;
	int i;

	cell_age_of(o, "metadata.creationTimestamp", age);
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
void
rows_ingress(cJSON *cells, const cJSON *o)
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
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}

/* CONTROLLER is kind.group/name of the controller owner, as kubectl's. */
void
rows_revision(cJSON *cells, const cJSON *o)
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
	cell_num(cells, cell_field_num(o, "revision"));
	cell_age_of(o, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}

void
rows_event(cJSON *cells, const cJSON *o)
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

/*
 * A binding's ROLE (kind/name) and, for -o wide, its subjects by kind
 * joined with ", " as kubectl shows them (service accounts as ns/name).
 */
void
rows_binding(cJSON *cells, const cJSON *o)
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
	cell_age_of(o, "metadata.creationTimestamp", age);
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

void
rows_pvc(cJSON *cells, const cJSON *o)
{
	storage_row(cells, o, 0);
}

void
rows_pv(cJSON *cells, const cJSON *o)
{
	storage_row(cells, o, 1);
}

/* SERVICE (ns/name, or Local) and AVAILABLE, as kube-aggregator's
   printer: True, "False (Reason)", or Unknown without the condition. */
void
rows_apiservice(cJSON *cells, const cJSON *o)
{
	const char *svc = json_str(o, "spec.service.name");
	const cJSON *c, *avail = NULL;
	char buf[64];

	snprintf(buf, sizeof buf, "%s/%s", json_str(o,
	    "spec.service.namespace") ? json_str(o,
	    "spec.service.namespace") : "", svc ? svc : "");
	cell_str(cells, svc ? buf : "Local");
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
	cell_age(cells, o);
}

void
rows_networkpolicy(cJSON *cells, const cJSON *o)
{
	char buf[64];

	cell_selector(json_at(o, "spec.podSelector"), buf, sizeof buf);
	cell_str(cells, buf);
	cell_age(cells, o);
}

void
rows_ingressclass(cJSON *cells, const cJSON *o)
{
	const char *pk = json_str(o, "spec.parameters.kind");
	char p[512];

	cell_str(cells, json_str(o, "spec.controller"));
	snprintf(p, sizeof p, "%s/%s", pk ? pk : "",
	    json_str(o, "spec.parameters.name") ?
	    json_str(o, "spec.parameters.name") : "");
	cell_str(cells, pk ? p : "<none>");
	cell_age(cells, o);
}

void
rows_pdb(cJSON *cells, const cJSON *o)
{
	cell_intstr(cells, json_at(o, "spec.minAvailable"));
	cell_intstr(cells, json_at(o, "spec.maxUnavailable"));
	cell_num(cells, cell_field_num(o, "status.disruptionsAllowed"));
	cell_age(cells, o);
}

void
rows_namespace(cJSON *cells, const cJSON *o)
{
	cell_str(cells, json_str(o, "status.phase") ?
	    json_str(o, "status.phase") : "Active");
	cell_age(cells, o);
}

/* DATA: the keys of data and binaryData, a number as kube-apiserver's. */
static void
data_cells(cJSON *cells, const cJSON *o)
{
	cell_num(cells, cJSON_GetArraySize(json_at(o, "data")) +
	    cJSON_GetArraySize(json_at(o, "binaryData")));
	cell_age(cells, o);
}

void
rows_configmap(cJSON *cells, const cJSON *o)
{
	data_cells(cells, o);
}

void
rows_secret(cJSON *cells, const cJSON *o)
{
	cell_str(cells, json_str(o, "type") ? json_str(o, "type") : "Opaque");
	data_cells(cells, o);
}

void
rows_serviceaccount(cJSON *cells, const cJSON *o)
{
	cell_num(cells, cJSON_GetArraySize(json_at(o, "secrets")));
	cell_age(cells, o);
}

void
rows_priorityclass(cJSON *cells, const cJSON *o)
{
	cell_num(cells, cell_field_num(o, "value"));
	cJSON_AddItemToArray(cells, cJSON_CreateBool(cJSON_IsTrue(
	    json_at(o, "globalDefault"))));
	cell_age(cells, o);
}

void
rows_lease(cJSON *cells, const cJSON *o)
{
	cell_str(cells, json_str(o, "spec.holderIdentity") ?
	    json_str(o, "spec.holderIdentity") : "");
	cell_age(cells, o);
}

/* CREATED AT: the timestamp itself (CRDs, Roles, LimitRanges). */
void
rows_created_at(cJSON *cells, const cJSON *o)
{
	cell_str(cells, json_str(o, "metadata.creationTimestamp"));
}
