/*
 * GET /apis/volray.io/v1/policy: what the daemon runs, for `volray policy
 * list`. A read-only, non-resource path beside POST .../policy/reload and
 * authorized as it is (RBAC nonResourceURLs, verb get). The document:
 *   {"kind": "PolicyInfo", "apiVersion": "volray.io/v1",
 *    "controllers": [{"name", "file", "loadedAt"}],
 *    "plugins": [{"name", "file", "loadedAt", "tier", "failurePolicy",
 *                 "arguments"}],
 *    "config": {"file", "loadedAt"}}
 * with the arguments after defaults and each file after --policy-dir
 * overrides; with ?content=true each file's text besides ("content"). The data comes from the controller runtime and the scheduler
 * through their accessors (given to api_set_policy_sources); nothing is
 * cached here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "api/reply.h"
#include "ctrl/controller.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "registry/status.h"
#include "sched/sched.h"

/* The running controllers, in load order. */
static cJSON *
controllers(const controller_rt *rt)
{
	cJSON *list = cJSON_CreateArray(), *c;
	const char *name, *file, *at;
	int i;

	for (i = 0; rt != NULL && controller_info(rt, i, &name, &file, &at) ==
	    0; i++) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "name", name);
		cJSON_AddStringToObject(c, "file", file);
		cJSON_AddStringToObject(c, "loadedAt", at);
		cJSON_AddItemToArray(list, c);
	}
	return list;
}

/* The text of the file el names, as its "content" (skipped when
   unreadable or past 1 MiB). */
static void
add_content(cJSON *el)
{
	const char *path = json_str(el, "file");
	char *buf;
	FILE *f;
	long n;

	if (path == NULL || (f = fopen(path, "r")) == NULL)
		return;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    n <= (1L << 20) && fseek(f, 0, SEEK_SET) == 0) {
		buf = xmalloc((size_t)n + 1);
		buf[fread(buf, 1, (size_t)n, f)] = '\0';
		cJSON_AddStringToObject(el, "content", buf);
		free(buf);
	}
	fclose(f);
}

void
policyinfo_get(api *a, http_req *req, struct route *rt)
{
	cJSON *o, *p;
	char *q;

	rt->verb = "get";
	if (strcmp(req->method, "GET") != 0) {
		reply_status(req, rt, status_error(405, "MethodNotAllowed",
		    "GET the policy; POST to policy/reload to reload it"));
		return;
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "kind", "PolicyInfo");
	cJSON_AddStringToObject(o, "apiVersion", "volray.io/v1");
	cJSON_AddItemToObject(o, "controllers", controllers(a->policy_ctrl));
	p = a->policy_sched != NULL ? sched_policy_info(a->policy_sched) :
	    NULL;
	if (p != NULL && (q = http_query_get(req->query, "content")) != NULL) {
		/* ?content=true: the files' text, for volray session record
		   and policy dry-run (a client on another machine). */
		if (strcmp(q, "true") == 0) {
			cJSON *el;

			cJSON_ArrayForEach(el, json_at(p, "plugins"))
				add_content(el);
			add_content(json_at(p, "config"));
		}
		free(q);
	}
	if (p != NULL) {
		json_set(o, "plugins", cJSON_DetachItemFromObject(p, "plugins"));
		json_set(o, "config", cJSON_DetachItemFromObject(p, "config"));
		cJSON_Delete(p);
	}
	reply_json(req, rt, 200, o);
}
