/*
 * Admission for Volcano's kinds, as Volcano 1.15's webhooks admit them
 * (pkg/webhooks/admission/queues, jobs): a Queue's parent must exist, not
 * be the queue itself or its descendant, and not hold PodGroups (jobs go
 * in leaf queues); its deserved must lie between its guarantee and its
 * capability; the root and default queues, and a queue with child
 * queues, cannot be deleted; a PodGroup or Volcano Job goes in a leaf
 * queue only; a HyperNode member's selector is exactly one of
 * exactMatch, regexMatch (a pattern that compiles, POSIX ERE as the
 * scheduler reads it) and labelMatch (Node members only).
 */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "registry/admission.h"
#include "registry/status.h"

#define QUEUES		"queues.scheduling.volcano.sh"
#define PODGROUPS	"podgroups.scheduling.volcano.sh"
#define VCJOBS		"jobs.batch.volcano.sh"
#define HYPERNODES	"hypernodes.topology.volcano.sh"
#define MAX_DEPTH	64

/* A queue's parent as the scheduler reads it: root for all but root. */
static char *
parent_of(store *st, const char *name)
{
	const store_obj *o = store_get(st, QUEUES, "", name);
	cJSON *t;
	char *p;

	if (o == NULL || strcmp(name, "root") == 0)
		return NULL;
	t = store_obj_tree(o);
	p = json_str(t, "spec.parent") != NULL &&
	    *json_str(t, "spec.parent") != '\0' ?
	    xstrdup(json_str(t, "spec.parent")) : xstrdup("root");
	cJSON_Delete(t);
	return p;
}

/* Queues whose parent is name (root: those without one too). */
static int
children(store *st, const char *name)
{
	store_obj *const *objs;
	size_t n = store_list(st, QUEUES, NULL, &objs), i;
	int k = 0;

	for (i = 0; i < n; i++) {
		cJSON *t;
		const char *p;

		if (strcmp(objs[i]->name, name) == 0)
			continue;
		t = store_obj_tree(objs[i]);
		p = json_str(t, "spec.parent");
		if ((p != NULL && *p != '\0' && strcmp(p, name) == 0) ||
		    ((p == NULL || *p == '\0') && strcmp(name, "root") == 0 &&
		    strcmp(objs[i]->name, "root") != 0))
			k++;
		cJSON_Delete(t);
	}
	return k;
}

/* PodGroups in queue name that have not finished. */
static int
podgroups_in(store *st, const char *name)
{
	store_obj *const *objs;
	size_t n = store_list(st, PODGROUPS, NULL, &objs), i;
	int k = 0;

	for (i = 0; i < n; i++) {
		cJSON *t = store_obj_tree(objs[i]);
		const char *q = json_str(t, "spec.queue");
		const char *ph = json_str(t, "status.phase");

		if (q == NULL || *q == '\0')
			q = "default";
		if (strcmp(q, name) == 0 && (ph == NULL ||
		    strcmp(ph, "Completed") != 0))
			k++;
		cJSON_Delete(t);
	}
	return k;
}

/* deserved within [guarantee, capability], resource by resource. */
static void
check_quantities(const cJSON *obj, cJSON *causes)
{
	const cJSON *des = json_at(obj, "spec.deserved"), *it, *o;
	double d, x;
	char field[300], *msg;

	cJSON_ArrayForEach(it, des) {
		if (quantity_json(it, &d) != 0)
			continue;
		o = cJSON_GetObjectItemCaseSensitive(json_at(obj,
		    "spec.guarantee.resource"), it->string);
		snprintf(field, sizeof field, "spec.deserved.%s", it->string);
		if (o != NULL && quantity_json(o, &x) == 0 && d < x) {
			msg = util_printf("Invalid value: deserved[%s] must be "
			    ">= guarantee[%s]", it->string, it->string);
			status_add_cause(causes, "FieldValueInvalid", field, msg);
			free(msg);
		}
		o = cJSON_GetObjectItemCaseSensitive(json_at(obj,
		    "spec.capability"), it->string);
		if (o != NULL && quantity_json(o, &x) == 0 && d > x) {
			msg = util_printf("Invalid value: deserved[%s] must be "
			    "<= capability[%s]", it->string, it->string);
			status_add_cause(causes, "FieldValueInvalid", field, msg);
			free(msg);
		}
	}
}

static void
queue_validate(store *st, const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const char *name = json_str(obj, "metadata.name");
	const char *parent = json_str(obj, "spec.parent");
	const char *was = old != NULL ? json_str(old, "spec.parent") : NULL;
	char *msg = NULL, *p;
	int depth, n;

	check_quantities(obj, causes);
	if (name == NULL || parent == NULL || *parent == '\0' ||
	    (was != NULL && strcmp(was, parent) == 0))
		return;		/* the parent did not change */
	if (strcmp(parent, name) == 0)
		msg = util_printf("Invalid value: \"%s\": queue %s cannot use "
		    "itself as parent", parent, name);
	else if (strcmp(parent, "root") != 0 &&
	    store_get(st, QUEUES, "", parent) == NULL)
		msg = util_printf("Invalid value: \"%s\": parent queue %s not "
		    "found", parent, parent);
	else {
		/* No cycle: the parent's ancestors do not include it. */
		p = xstrdup(parent);
		for (depth = 0; p != NULL && depth < MAX_DEPTH; depth++) {
			char *up;

			if (strcmp(p, name) == 0) {
				msg = util_printf("Invalid value: \"%s\": queue "
				    "%s is a descendant of %s: the parent would "
				    "make a cycle", parent, parent, name);
				break;
			}
			up = parent_of(st, p);
			free(p);
			p = up;
		}
		if (msg == NULL && depth == MAX_DEPTH)
			msg = util_printf("Invalid value: \"%s\": the queue "
			    "tree is deeper than %d", parent, MAX_DEPTH);
		free(p);
	}
	if (msg == NULL && (n = podgroups_in(st, parent)) > 0)
		msg = util_printf("Invalid value: \"%s\": queue %s cannot be "
		    "the parent queue of queue %s because it has %d PodGroup%s "
		    "(jobs go in leaf queues)", parent, parent, name, n,
		    n == 1 ? "" : "s");
	if (msg != NULL) {
		status_add_cause(causes, "FieldValueInvalid", "spec.parent", msg);
		free(msg);
	}
}

/* A PodGroup's (or Volcano Job's) queue must be a leaf. */
static void
leaf_queue(store *st, const cJSON *obj, const cJSON *old, cJSON *causes)
{
	const char *q = json_str(obj, "spec.queue");
	const char *was = old != NULL ? json_str(old, "spec.queue") : NULL;
	char *msg;
	int n;

	if (q == NULL || *q == '\0')
		q = "default";
	if (was != NULL && strcmp(was, q) == 0)
		return;
	if ((n = children(st, q)) == 0)
		return;
	msg = util_printf("Invalid value: \"%s\": can only submit job to "
	    "leaf queue, queue `%s` has %d child queue%s", q, q, n,
	    n == 1 ? "" : "s");
	status_add_cause(causes, "FieldValueInvalid", "spec.queue", msg);
	free(msg);
}

static void
hypernode_validate(const cJSON *obj, cJSON *causes)
{
	const cJSON *m;
	int i = 0;

	cJSON_ArrayForEach(m, json_at(obj, "spec.members")) {
		const cJSON *sel = json_at(m, "selector");
		const char *type = json_str(m, "type");
		const char *pat = json_str(m, "selector.regexMatch.pattern");
		int n = (json_at(sel, "exactMatch") != NULL) +
		    (json_at(sel, "regexMatch") != NULL) +
		    (json_at(sel, "labelMatch") != NULL);
		char field[64];
		regex_t re;

		snprintf(field, sizeof field, "spec.members[%d].selector", i++);
		if (n != 1) {
			status_add_cause(causes, "FieldValueInvalid", field,
			    "Invalid value: exactly one of exactMatch, "
			    "regexMatch or labelMatch must be given");
			continue;
		}
		if (pat != NULL) {
			if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) != 0) {
				char *msg = util_printf("Invalid value: \"%s\": "
				    "not a regular expression", pat);

				status_add_cause(causes, "FieldValueInvalid",
				    field, msg);
				free(msg);
			} else
				regfree(&re);
		}
		if (json_at(sel, "labelMatch") != NULL && type != NULL &&
		    strcmp(type, "Node") != 0)
			status_add_cause(causes, "FieldValueInvalid", field,
			    "Invalid value: labelMatch selects nodes: only for "
			    "members of type Node");
	}
}

int
admission_volcano_validate(store *st, const resource *r, const cJSON *obj,
    const cJSON *old, cJSON *causes)
{
	if (strcmp(r->store_key, QUEUES) == 0)
		queue_validate(st, obj, old, causes);
	else if (strcmp(r->store_key, PODGROUPS) == 0 ||
	    strcmp(r->store_key, VCJOBS) == 0)
		leaf_queue(st, obj, old, causes);
	else if (strcmp(r->store_key, HYPERNODES) == 0)
		hypernode_validate(obj, causes);
	else
		return 0;
	return 1;
}

char *
admission_volcano_delete(store *st, const resource *r, const char *name)
{
	int n;

	if (strcmp(r->store_key, QUEUES) != 0)
		return NULL;
	if (strcmp(name, "default") == 0 || strcmp(name, "root") == 0)
		return util_printf("`%s` queue can not be deleted", name);
	if ((n = children(st, name)) > 0)
		return util_printf("queue %s can not be deleted because it has "
		    "%d child queue%s", name, n, n == 1 ? "" : "s");
	return NULL;
}
