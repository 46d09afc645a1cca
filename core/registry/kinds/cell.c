/*
 * Table cells, as kube-apiserver's printers make them (ages as kubectl
 * prints them, selectors, int-or-string fields), for the built-in kinds'
 * rows (kinds/rows*.c) and api/table.c.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/json.h"
#include "lib/util.h"
#include "registry/kinds/cell.h"

void
cell_age_of(const cJSON *obj, const char *path, char out[16])
{
	time_t t = util_time_parse(json_str(obj, path));

	if (t < 0)
		snprintf(out, 16, "<unknown>");
	else
		util_age(t, out);
}

void
cell_str(cJSON *cells, const char *s)
{
	cJSON_AddItemToArray(cells, cJSON_CreateString(s ? s : ""));
}

void
cell_num(cJSON *cells, double v)
{
	cJSON_AddItemToArray(cells, cJSON_CreateNumber(v));
}

double
cell_field_num(const cJSON *o, const char *path)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* "a,b" of a field of every container of a pod template. */
void
cell_containers(const cJSON *spec, const char *field, char *out, size_t n)
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

void
cell_selector(const cJSON *sel, char *out, size_t n)
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

/* An int-or-string field as kubectl prints it, N/A when absent. */
void
cell_intstr(cJSON *cells, const cJSON *v)
{
	char buf[64];

	if (cJSON_IsNumber(v)) {
		snprintf(buf, sizeof buf, "%d", v->valueint);
		cell_str(cells, buf);
	} else
		cell_str(cells, cJSON_IsString(v) ? v->valuestring : "N/A");
}

void
cell_age(cJSON *cells, const cJSON *obj)
{
	char age[16];

	cell_age_of(obj, "metadata.creationTimestamp", age);
	cell_str(cells, age);
}
