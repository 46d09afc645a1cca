/*
 * List options (apimachinery's ValidateListOptions and
 * SetListOptionsDefaults with the WatchList feature on, as kube-apiserver
 * 1.34 has it by default).
 *
 * Only the watch query parameter makes a request a watch here, as in
 * kube-apiserver: a /watch/ path without it is validated as a list. A
 * watch from resourceVersion "" or "0" that names neither
 * sendInitialEvents nor resourceVersionMatch is defaulted to
 * sendInitialEvents=true with resourceVersionMatch=NotOlderThan, so with
 * allowWatchBookmarks its initial events end with the
 * k8s.io/initial-events-end bookmark too. sendInitialEvents needs
 * resourceVersionMatch=NotOlderThan on a watch and is forbidden on a
 * list; resourceVersionMatch on a watch needs sendInitialEvents and never
 * goes with continue; on a list it needs a resourceVersion, is Exact or
 * NotOlderThan, and Exact is forbidden with "0".
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/listopts.h"
#include "api/reply.h"
#include "lib/json.h"
#include "registry/status.h"

/* The option as runtime.Convert_Slice_string_To_Pointer_bool reads it. */
static int
query_tristate(const char *query, const char *key)
{
	char *v = http_query_get(query, key);
	int b;

	if (v == NULL)
		return -1;
	b = !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0);
	free(v);
	return b;
}

static void
forbid(cJSON *causes, const char *field, const char *why)
{
	status_add_cause(causes, "FieldValueForbidden", field,
	    "Forbidden: %s", why);
}

static void
watch_errors(cJSON *causes, int sie, const char *match, const char *cont)
{
	if (sie >= 0 && strcmp(match, "NotOlderThan") != 0)
		forbid(causes, "resourceVersionMatch", "sendInitialEvents "
		    "requires setting resourceVersionMatch to NotOlderThan");
	if (*match == '\0')
		return;
	if (sie < 0)
		forbid(causes, "resourceVersionMatch", "resourceVersionMatch "
		    "is forbidden for watch unless sendInitialEvents is "
		    "provided");
	if (strcmp(match, "NotOlderThan") != 0)
		status_add_cause(causes, "FieldValueNotSupported",
		    "resourceVersionMatch", "Unsupported value: \"%s\": "
		    "supported values: \"NotOlderThan\"", match);
	if (*cont != '\0')
		forbid(causes, "resourceVersionMatch", "resourceVersionMatch "
		    "is forbidden when continue is provided");
}

static void
list_errors(cJSON *causes, int sie, const char *match, const char *rv,
    const char *cont)
{
	if (*match != '\0') {
		if (*rv == '\0')
			forbid(causes, "resourceVersionMatch",
			    "resourceVersionMatch is forbidden unless "
			    "resourceVersion is provided");
		if (*cont != '\0')
			forbid(causes, "resourceVersionMatch",
			    "resourceVersionMatch is forbidden when continue "
			    "is provided");
		if (strcmp(match, "Exact") != 0 &&
		    strcmp(match, "NotOlderThan") != 0)
			status_add_cause(causes, "FieldValueNotSupported",
			    "resourceVersionMatch", "Unsupported value: "
			    "\"%s\": supported values: \"Exact\", "
			    "\"NotOlderThan\", \"\"", match);
		if (strcmp(match, "Exact") == 0 && strcmp(rv, "0") == 0)
			forbid(causes, "resourceVersionMatch",
			    "resourceVersionMatch \"exact\" is forbidden for "
			    "resourceVersion \"0\"");
	}
	if (sie >= 0)
		forbid(causes, "sendInitialEvents",
		    "sendInitialEvents is forbidden for list");
}

int
listopts_check(http_req *req, struct route *rt, int *send_initial)
{
	static const resource meta = { .group = "meta.k8s.io", .plural = "" };
	char *rv = http_query_get(req->query, "resourceVersion");
	char *match = http_query_get(req->query, "resourceVersionMatch");
	char *cont = http_query_get(req->query, "continue");
	int watch = http_query_bool(req->query, "watch", 0);
	int sie = query_tristate(req->query, "sendInitialEvents");
	const char *r = rv ? rv : "", *m = match ? match : "";
	cJSON *causes = cJSON_CreateArray();
	int rc = 0;

	if (watch && sie < 0 && *m == '\0' &&
	    (*r == '\0' || strcmp(r, "0") == 0)) {
		sie = 1;
		m = "NotOlderThan";
	}
	if (watch)
		watch_errors(causes, sie, m, cont ? cont : "");
	else
		list_errors(causes, sie, m, r, cont ? cont : "");
	if (cJSON_GetArraySize(causes) > 0) {
		reply_status(req, rt, status_invalid(&meta, "ListOptions",
		    NULL, causes));
		rc = -1;
	} else
		cJSON_Delete(causes);
	*send_initial = sie;
	free(rv);
	free(match);
	free(cont);
	return rc;
}
