/*
 * kubectl's pod describer and the pieces of it that pod templates share:
 * containers with their ports, command, state, resources, environment and
 * mounts; volumes, node selectors and tolerations; conditions. Each writes
 * tab-separated lines that cli_describe_flush lays out as kubectl does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_describe.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

static const char *
str(const cJSON *o, const char *path)
{
	const char *s = json_str(o, path);

	return s != NULL ? s : "";
}

/* A container state: Running, Waiting or Terminated and its details. */
static void
state(struct cli_buf *b, const char *title, const cJSON *s)
{
	const cJSON *r = json_at(s, "running"), *w = json_at(s, "waiting");
	const cJSON *t = json_at(s, "terminated");
	char *tm, *v;

	if (r != NULL) {
		cli_describe_w(b, 2, "%s:\tRunning\n", title);
		tm = cli_describe_time(json_str(r, "startedAt"));
		cli_describe_w(b, 3, "Started:\t%s\n", tm);
		free(tm);
	} else if (t != NULL) {
		cli_describe_w(b, 2, "%s:\tTerminated\n", title);
		if (json_str(t, "reason") != NULL)
			cli_describe_w(b, 3, "Reason:\t%s\n", str(t, "reason"));
		if (json_str(t, "message") != NULL)
			cli_describe_w(b, 3, "Message:\t%s\n", str(t, "message"));
		v = cli_describe_value(json_at(t, "exitCode"));
		cli_describe_w(b, 3, "Exit Code:\t%s\n", v);
		free(v);
		tm = cli_describe_time(json_str(t, "startedAt"));
		cli_describe_w(b, 3, "Started:\t%s\n", tm);
		free(tm);
		tm = cli_describe_time(json_str(t, "finishedAt"));
		cli_describe_w(b, 3, "Finished:\t%s\n", tm);
		free(tm);
	} else {
		cli_describe_w(b, 2, "%s:\tWaiting\n", title);
		if (json_str(w, "reason") != NULL)
			cli_describe_w(b, 3, "Reason:\t%s\n", str(w, "reason"));
	}
}

/* Port: or Ports: and Host Port(s): of a container. */
static void
ports(struct cli_buf *b, const cJSON *c)
{
	struct cli_buf p = { 0 }, h = { 0 };
	const cJSON *el;
	int n = cJSON_GetArraySize(json_at(c, "ports"));

	cli_buf_add(&p, "", 0);
	cli_buf_add(&h, "", 0);
	cJSON_ArrayForEach(el, json_at(c, "ports")) {
		const char *proto = json_str(el, "protocol");
		const cJSON *hp = json_at(el, "hostPort");

		cli_buf_printf(&p, "%s%.0f/%s", p.len ? ", " : "",
		    json_at(el, "containerPort") ?
		    json_at(el, "containerPort")->valuedouble : 0,
		    proto ? proto : "TCP");
		cli_buf_printf(&h, "%s%.0f/%s", h.len ? ", " : "",
		    hp ? hp->valuedouble : 0, proto ? proto : "TCP");
	}
	if (n == 0) {
		cli_describe_w(b, 2, "Port:\t<none>\n");
		cli_describe_w(b, 2, "Host Port:\t<none>\n");
	} else {
		cli_describe_w(b, 2, "Port%s:\t%s\n", n > 1 ? "s" : "", p.p);
		cli_describe_w(b, 2, "Host Port%s:\t%s\n", n > 1 ? "s" : "",
		    h.p);
	}
	cli_buf_free(&p);
	cli_buf_free(&h);
}

/* One env entry's value as kubectl shows it. */
static void
env_line(struct cli_buf *b, const cJSON *e)
{
	const cJSON *vf = json_at(e, "valueFrom");

	if (vf == NULL)
		cli_describe_w(b, 3, "%s:\t%s\n", str(e, "name"), str(e, "value"));
	else if (json_at(vf, "fieldRef") != NULL)
		cli_describe_w(b, 3, "%s:\t (%s:%s)\n", str(e, "name"),
		    str(vf, "fieldRef.apiVersion"),
		    str(vf, "fieldRef.fieldPath"));
	else if (json_at(vf, "secretKeyRef") != NULL)
		cli_describe_w(b, 3, "%s:\t<set to the key '%s' in secret "
		    "'%s'>\tOptional: %s\n", str(e, "name"),
		    str(vf, "secretKeyRef.key"), str(vf, "secretKeyRef.name"),
		    cJSON_IsTrue(json_at(vf, "secretKeyRef.optional")) ?
		    "true" : "false");
	else if (json_at(vf, "configMapKeyRef") != NULL)
		cli_describe_w(b, 3, "%s:\t<set to the key '%s' of config "
		    "map '%s'>\tOptional: %s\n", str(e, "name"),
		    str(vf, "configMapKeyRef.key"),
		    str(vf, "configMapKeyRef.name"),
		    cJSON_IsTrue(json_at(vf, "configMapKeyRef.optional")) ?
		    "true" : "false");
	else
		cli_describe_w(b, 3, "%s:\t<unknown>\n", str(e, "name"));
}

/* Command: or Args: with one item per line. */
static void
words(struct cli_buf *b, const char *title, const cJSON *list)
{
	const cJSON *el;

	if (cJSON_GetArraySize(list) == 0)
		return;
	cli_describe_w(b, 2, "%s:\n", title);
	cJSON_ArrayForEach(el, list)
		cli_describe_w(b, 3, "%s\n", cJSON_IsString(el) ?
		    el->valuestring : "");
}

void
cli_describe_containers(struct cli_buf *b, const char *title,
    const cJSON *containers, const cJSON *statuses, const char *space)
{
	const cJSON *c, *st, *s, *el;
	char *v;

	cli_describe_w(b, 0, "%s%s:\n", space, title);
	cJSON_ArrayForEach(c, containers) {
		st = NULL;
		cJSON_ArrayForEach(s, statuses)
			if (strcmp(str(s, "name"), str(c, "name")) == 0)
				st = s;
		cli_describe_w(b, 1, "%s%s:\n", *space ? " " : "",
		    str(c, "name"));
		if (st != NULL && json_str(st, "containerID") != NULL)
			cli_describe_w(b, 2, "Container ID:\t%s\n",
			    str(st, "containerID"));
		cli_describe_w(b, 2, "Image:\t%s\n", str(c, "image"));
		if (st != NULL)
			cli_describe_w(b, 2, "Image ID:\t%s\n",
			    str(st, "imageID"));
		ports(b, c);
		words(b, "Command", json_at(c, "command"));
		words(b, "Args", json_at(c, "args"));
		if (st != NULL) {
			state(b, "State", json_at(st, "state"));
			if (cJSON_GetArraySize(json_at(st, "lastState")) > 0)
				state(b, "Last State", json_at(st, "lastState"));
			cli_describe_w(b, 2, "Ready:\t%s\n",
			    cJSON_IsTrue(json_at(st, "ready")) ? "True" :
			    "False");
			v = cli_describe_value(json_at(st, "restartCount"));
			cli_describe_w(b, 2, "Restart Count:\t%s\n", v);
			free(v);
		}
		if (cJSON_GetArraySize(json_at(c, "resources.limits")) > 0)
			cli_describe_quantities(b, 2, "Limits", json_at(c,
			    "resources.limits"));
		if (cJSON_GetArraySize(json_at(c, "resources.requests")) > 0)
			cli_describe_quantities(b, 2, "Requests", json_at(c,
			    "resources.requests"));
		if (cJSON_GetArraySize(json_at(c, "env")) == 0)
			cli_describe_w(b, 2, "Environment:\t<none>\n");
		else {
			cli_describe_w(b, 2, "Environment:\n");
			cJSON_ArrayForEach(el, json_at(c, "env"))
				env_line(b, el);
		}
		if (cJSON_GetArraySize(json_at(c, "volumeMounts")) == 0)
			cli_describe_w(b, 2, "Mounts:\t<none>\n");
		else {
			cli_describe_w(b, 2, "Mounts:\n");
			cJSON_ArrayForEach(el, json_at(c, "volumeMounts"))
				cli_describe_w(b, 3, "%s from %s (%s)\n",
				    str(el, "mountPath"), str(el, "name"),
				    cJSON_IsTrue(json_at(el, "readOnly")) ?
				    "ro" : "rw");
		}
	}
}

/* A toleration as kubectl writes it: key=value:Effect op=Exists for Ns. */
static char *
toleration(const cJSON *t)
{
	struct cli_buf b = { 0 };
	const char *key = str(t, "key"), *val = str(t, "value");
	const char *eff = str(t, "effect");

	cli_buf_add(&b, "", 0);
	cli_buf_printf(&b, "%s", key);
	if (*val)
		cli_buf_printf(&b, "=%s", val);
	if (*eff)
		cli_buf_printf(&b, ":%s", eff);
	if (strcmp(str(t, "operator"), "Exists") == 0 && *val == '\0')
		cli_buf_printf(&b, "%sop=Exists", *key || *eff ? " " : "");
	if (json_at(t, "tolerationSeconds") != NULL)
		cli_buf_printf(&b, " for %.0fs",
		    json_at(t, "tolerationSeconds")->valuedouble);
	return b.p;
}

static int
tol_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* An optional flag as kubectl prints its pointer: unset is <nil>. */
static const char *
optional(const cJSON *v)
{
	return v == NULL ? "<nil>" : cJSON_IsTrue(v) ? "true" : "false";
}

/* A projected volume's sources, as kubectl's printProjectedVolumeSource. */
static void
describe_projected(struct cli_buf *b, const cJSON *sources)
{
	const cJSON *s;

	cli_describe_w(b, 2, "Type:\tProjected (a volume that contains "
	    "injected data from multiple sources)\n");
	cJSON_ArrayForEach(s, sources) {
		if (json_at(s, "secret") != NULL) {
			cli_describe_w(b, 2, "SecretName:\t%s\n",
			    str(s, "secret.name"));
			cli_describe_w(b, 2, "SecretOptionalName:\t%s\n",
			    optional(json_at(s, "secret.optional")));
		} else if (json_at(s, "downwardAPI") != NULL)
			cli_describe_w(b, 2, "DownwardAPI:\ttrue\n");
		else if (json_at(s, "configMap") != NULL) {
			cli_describe_w(b, 2, "ConfigMapName:\t%s\n",
			    str(s, "configMap.name"));
			cli_describe_w(b, 2, "ConfigMapOptional:\t%s\n",
			    optional(json_at(s, "configMap.optional")));
		} else if (json_at(s, "serviceAccountToken") != NULL)
			cli_describe_w(b, 2, "TokenExpirationSeconds:\t%d\n",
			    json_at(s, "serviceAccountToken.expirationSeconds") ?
			    (int)cJSON_GetNumberValue(json_at(s,
			    "serviceAccountToken.expirationSeconds")) : 3607);
	}
}

/* Volumes:, Node-Selectors: and Tolerations: with a space prefix. */
void
cli_describe_spec_tail(struct cli_buf *b, int level, const cJSON *spec,
    const char *qos)
{
	const char *sp = level > 0 ? "  " : "";
	const cJSON *el;
	char **t;
	size_t n = 0, i;

	if (cJSON_GetArraySize(json_at(spec, "volumes")) == 0)
		cli_describe_w(b, 0, "%sVolumes:\t<none>\n", sp);
	else {
		cli_describe_w(b, 0, "%sVolumes:\n", sp);
		cJSON_ArrayForEach(el, json_at(spec, "volumes")) {
			cli_describe_w(b, 1, "%s%s:\n", sp, str(el, "name"));
			if (json_at(el, "configMap") != NULL) {
				cli_describe_w(b, 2, "Type:\tConfigMap (a volume "
				    "populated by a ConfigMap)\n");
				cli_describe_w(b, 2, "Name:\t%s\n",
				    str(el, "configMap.name"));
				cli_describe_w(b, 2, "Optional:\t%s\n",
				    cJSON_IsTrue(json_at(el,
				    "configMap.optional")) ? "true" : "false");
			} else if (json_at(el, "emptyDir") != NULL) {
				cli_describe_w(b, 2, "Type:\tEmptyDir (a "
				    "temporary directory that shares a pod's "
				    "lifetime)\n");
				cli_describe_w(b, 2, "Medium:\t%s\n",
				    str(el, "emptyDir.medium"));
				cli_describe_w(b, 2, "SizeLimit:\t%s\n",
				    json_str(el, "emptyDir.sizeLimit") ?
				    str(el, "emptyDir.sizeLimit") : "<unset>");
			} else if (json_at(el, "hostPath") != NULL) {
				cli_describe_w(b, 2, "Type:\tHostPath (bare host "
				    "directory volume)\n");
				cli_describe_w(b, 2, "Path:\t%s\n",
				    str(el, "hostPath.path"));
			} else if (json_at(el, "secret") != NULL) {
				cli_describe_w(b, 2, "Type:\tSecret (a volume "
				    "populated by a Secret)\n");
				cli_describe_w(b, 2, "SecretName:\t%s\n",
				    str(el, "secret.secretName"));
			} else if (json_at(el, "projected") != NULL)
				describe_projected(b, json_at(el,
				    "projected.sources"));
		}
	}
	if (qos != NULL)
		cli_describe_w(b, 0, "QoS Class:\t%s\n", qos);
	cli_describe_labels(b, 0, level > 0 ? "  Node-Selectors" :
	    "Node-Selectors", json_at(spec, "nodeSelector"));
	t = xmalloc((cJSON_GetArraySize(json_at(spec,
	    "tolerations")) + 1) * sizeof *t);
	cJSON_ArrayForEach(el, json_at(spec, "tolerations"))
		t[n++] = toleration(el);
	qsort(t, n, sizeof *t, tol_cmp);
	if (n == 0)
		cli_describe_w(b, 0, "%sTolerations:\t<none>\n", sp);
	for (i = 0; i < n; i++) {
		cli_describe_w(b, 0, "%s%s\t%s\n", i == 0 ? sp : "",
		    i == 0 ? "Tolerations:" : "", t[i]);
		free(t[i]);
	}
	free(t);
}

/* Pod Template: of a deployment or job. */
void
cli_describe_template(struct cli_buf *b, const cJSON *tpl)
{
	const cJSON *spec = json_at(tpl, "spec");

	cli_describe_w(b, 0, "Pod Template:\n");
	cli_describe_labels(b, 1, "Labels", json_at(tpl, "metadata.labels"));
	if (cJSON_GetArraySize(json_at(tpl, "metadata.annotations")) > 0)
		cli_describe_annotations(b, 1, json_at(tpl,
		    "metadata.annotations"));
	if (json_str(spec, "serviceAccountName") != NULL)
		cli_describe_w(b, 1, "Service Account:\t%s\n",
		    str(spec, "serviceAccountName"));
	if (cJSON_GetArraySize(json_at(spec, "initContainers")) > 0)
		cli_describe_containers(b, "Init Containers",
		    json_at(spec, "initContainers"), NULL, "  ");
	cli_describe_containers(b, "Containers", json_at(spec, "containers"),
	    NULL, "  ");
	cli_describe_spec_tail(b, 1, spec, NULL);
}

/* Conditions: with the given keys as columns; pod style has no dashes
 * and a space after every cell, the others a space after all but the
 * last. */
void
cli_describe_conditions(struct cli_buf *b, const cJSON *conds,
    const char *const *cols, int n, int pod_style)
{
	struct cli_buf l = { 0 };
	const cJSON *c;
	int i;
	char *t;

	cli_describe_w(b, 0, "Conditions:\n");
	for (i = 0; i < n; i++) {
		cli_buf_printf(&l, "%c%s", i ? '\t' : ' ', cols[i]);
		l.p[l.len - strlen(cols[i])] = (char)(l.p[l.len -
		    strlen(cols[i])] - 'a' + 'A');
	}
	cli_describe_w(b, 1, "%s\n", l.p + 1);
	if (!pod_style) {
		l.len = 0;
		for (i = 0; i < n; i++) {
			cli_buf_printf(&l, "%s", i ? "\t" : "");
			for (t = (char *)cols[i]; *t != '\0'; t++)
				cli_buf_add(&l, "-", 1);
		}
		cli_describe_w(b, 1, "%s\n", l.p);
	}
	cJSON_ArrayForEach(c, conds) {
		l.len = 0;
		for (i = 0; i < n; i++) {
			if (strstr(cols[i], "Time") != NULL) {
				t = cli_describe_time(json_str(c, cols[i]));
				cli_buf_printf(&l, "%s ", t);
				free(t);
			} else
				cli_buf_printf(&l, "%s%s", str(c, cols[i]),
				    pod_style || i + 1 < n ? " " : "");
			if (i + 1 < n)
				cli_buf_add(&l, "\t", 1);
		}
		cli_describe_w(b, 1, "%s\n", l.p);
	}
	cli_buf_free(&l);
}

/* kubectl's pod describer, the fields it prints for a pod like ours. */
void
cli_describe_pod(struct cli_buf *b, const cJSON *p)
{
	static const char *const cond_cols[] = { "type", "status" };
	const cJSON *spec = json_at(p, "spec"), *st = json_at(p, "status"), *el;
	const char *node = json_str(spec, "nodeName"), *s;
	char *t, *v;

	cli_describe_w(b, 0, "Name:\t%s\n", json_str(p, "metadata.name"));
	cli_describe_w(b, 0, "Namespace:\t%s\n",
	    json_str(p, "metadata.namespace"));
	if (json_at(spec, "priority") != NULL) {
		v = cli_describe_value(json_at(spec, "priority"));
		cli_describe_w(b, 0, "Priority:\t%s\n", v);
		free(v);
	}
	if ((s = json_str(spec, "priorityClassName")) != NULL)
		cli_describe_w(b, 0, "Priority Class Name:\t%s\n", s);
	if ((s = json_str(spec, "serviceAccountName")) != NULL)
		cli_describe_w(b, 0, "Service Account:\t%s\n", s);
	if (node == NULL)
		cli_describe_w(b, 0, "Node:\t<none>\n");
	else
		cli_describe_w(b, 0, "Node:\t%s/%s\n", node,
		    json_str(st, "hostIP") ? json_str(st, "hostIP") : "");
	if ((s = json_str(st, "startTime")) != NULL) {
		t = cli_describe_time(s);
		cli_describe_w(b, 0, "Start Time:\t%s\n", t);
		free(t);
	}
	cli_describe_labels(b, 0, "Labels", json_at(p, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(p, "metadata.annotations"));
	if (json_str(p, "metadata.deletionTimestamp") != NULL) {
		t = cli_describe_time(json_str(p, "metadata.deletionTimestamp"));
		cli_describe_w(b, 0, "Status:\tTerminating (lasts %s)\n", t);
		free(t);
	} else
		cli_describe_w(b, 0, "Status:\t%s\n", json_str(st, "phase") ?
		    json_str(st, "phase") : "");
	if ((s = json_str(st, "reason")) != NULL)
		cli_describe_w(b, 0, "Reason:\t%s\n", s);
	if ((s = json_str(st, "message")) != NULL)
		cli_describe_w(b, 0, "Message:\t%s\n", s);
	cli_describe_w(b, 0, "IP:\t%s\n", json_str(st, "podIP") ?
	    json_str(st, "podIP") : "");
	if (cJSON_GetArraySize(json_at(st, "podIPs")) == 0)
		cli_describe_w(b, 0, "IPs:\t<none>\n");
	else {
		cli_describe_w(b, 0, "IPs:\n");
		cJSON_ArrayForEach(el, json_at(st, "podIPs"))
			cli_describe_w(b, 1, "IP:\t%s\n", json_str(el, "ip"));
	}
	cJSON_ArrayForEach(el, json_at(p, "metadata.ownerReferences"))
		if (cJSON_IsTrue(json_at(el, "controller")))
			cli_describe_w(b, 0, "Controlled By:\t%s/%s\n",
			    json_str(el, "kind"), json_str(el, "name"));
	if (cJSON_GetArraySize(json_at(spec, "initContainers")) > 0)
		cli_describe_containers(b, "Init Containers",
		    json_at(spec, "initContainers"),
		    json_at(st, "initContainerStatuses"), "");
	cli_describe_containers(b, "Containers", json_at(spec, "containers"),
	    json_at(st, "containerStatuses"), "");
	if (cJSON_GetArraySize(json_at(st, "conditions")) > 0)
		cli_describe_conditions(b, json_at(st, "conditions"),
		    cond_cols, 2, 1);
	cli_describe_spec_tail(b, 0, spec, json_str(st, "qosClass") != NULL ?
	    json_str(st, "qosClass") : "BestEffort");
}
