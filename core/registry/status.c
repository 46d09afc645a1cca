/*
 * Status construction. Messages follow the API server's wording (kubectl
 * prints them verbatim): `pods "p1" not found`, `jobs.batch "j1" already
 * exists`, the Conflict text, and Invalid with one cause per field.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/xmalloc.h"
#include "registry/resource.h"
#include "registry/status.h"

static cJSON *
make(int code, const char *reason, const char *msg)
{
	cJSON *s = cJSON_CreateObject();

	cJSON_AddStringToObject(s, "kind", "Status");
	cJSON_AddStringToObject(s, "apiVersion", "v1");
	cJSON_AddObjectToObject(s, "metadata");
	cJSON_AddStringToObject(s, "status", code < 300 ? "Success" :
	    "Failure");
	if (msg != NULL)
		cJSON_AddStringToObject(s, "message", msg);
	if (reason != NULL)
		cJSON_AddStringToObject(s, "reason", reason);
	cJSON_AddNumberToObject(s, "code", code);
	return s;
}

cJSON *
status_error(int code, const char *reason, const char *fmt, ...)
{
	va_list ap;
	char *msg;
	cJSON *s;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	s = make(code, reason, msg);
	free(msg);
	return s;
}

cJSON *
status_bad_request(const char *fmt, ...)
{
	va_list ap;
	char *msg;
	cJSON *s;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	s = make(400, "BadRequest", msg);
	free(msg);
	return s;
}

void
status_details(cJSON *s, const resource *r, const char *name)
{
	cJSON *d = json_obj(s, "details");

	if (name != NULL && *name != '\0')	/* omitempty */
		json_set_str(d, "name", name);
	if (r != NULL) {
		if (*r->group)
			json_set_str(d, "group", r->group);
		json_set_str(d, "kind", r->plural);
	}
}

cJSON *
status_success(void)
{
	return make(200, NULL, NULL);
}

cJSON *
status_not_found(const resource *r, const char *name)
{
	cJSON *s = status_error(404, "NotFound", "%s \"%s\" not found",
	    resource_qualified(r), name);

	status_details(s, r, name);
	return s;
}

cJSON *
status_already_exists(const resource *r, const char *name)
{
	cJSON *s = status_error(409, "AlreadyExists",
	    "%s \"%s\" already exists", resource_qualified(r), name);

	status_details(s, r, name);
	return s;
}

cJSON *
status_conflict(const resource *r, const char *name)
{
	cJSON *s = status_error(409, "Conflict", "Operation cannot be "
	    "fulfilled on %s \"%s\": the object has been modified; please "
	    "apply your changes to the latest version and try again",
	    resource_qualified(r), name);

	status_details(s, r, name);
	return s;
}

cJSON *
status_strict_decoding(const char *kind, const char *api_version,
    const char *what, const char *paths)
{
	const char *v = api_version != NULL && strchr(api_version, '/') ?
	    strchr(api_version, '/') + 1 : api_version != NULL ? api_version :
	    "";
	size_t n = 1, len = 0;
	const char *p, *e;
	char *list;
	cJSON *s;

	for (p = paths; *p != '\0'; p++)
		n += *p == '\n';
	list = xmalloc(strlen(paths) + n * (strlen(what) + 6));
	for (p = paths; *p != '\0'; p = *e ? e + 1 : e) {
		e = p + strcspn(p, "\n");
		len += (size_t)sprintf(list + len, "%s%s \"%.*s\"", len ? ", " :
		    "", what, (int)(e - p), p);
	}
	list[len] = '\0';
	kind = kind != NULL ? kind : "object";
	s = status_bad_request("%s in version \"%s\" cannot be handled as a "
	    "%s: strict decoding error: %s", kind, v, kind, list);
	free(list);
	return s;
}

void
status_add_cause(cJSON *causes, const char *reason, const char *field,
    const char *fmt, ...)
{
	cJSON *c = cJSON_CreateObject();
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", msg);
	cJSON_AddStringToObject(c, "field", field);
	cJSON_AddItemToArray(causes, c);
	free(msg);
}

cJSON *
status_invalid(const resource *r, const char *kind, const char *name,
    cJSON *causes)
{
	char *msg = NULL, *p;
	size_t len = 0;
	FILE *f = open_memstream(&msg, &len);
	const cJSON *c;
	int n = 0, total = cJSON_GetArraySize(causes);
	cJSON *s;

	fprintf(f, "%s.%s \"%s\" is invalid: ", kind,
	    r && *r->group ? r->group : "", name ? name : "");
	if (total > 1)
		fputc('[', f);
	cJSON_ArrayForEach(c, causes) {
		const char *field = json_str(c, "field");
		const char *m = json_str(c, "message");

		fprintf(f, "%s%s%s%s", n++ ? ", " : "", field ? field : "",
		    field && *field ? ": " : "", m ? m : "");
	}
	if (total > 1)
		fputc(']', f);
	fclose(f);
	/* Core kinds have no group: "Pod \"x\" is invalid". */
	if (r == NULL || *r->group == '\0') {
		p = strstr(msg, ". \"");
		if (p != NULL)
			memmove(p, p + 1, strlen(p + 1) + 1);
	}
	s = make(422, "Invalid", msg);
	free(msg);
	status_details(s, r, name);
	json_set_str(json_obj(s, "details"), "kind", kind);
	cJSON_AddItemToObject(json_obj(s, "details"), "causes", causes);
	return s;
}

int
status_code(const cJSON *s)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(s, "code");

	return cJSON_IsNumber(c) ? c->valueint : 500;
}
