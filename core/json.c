/*
 * cJSON helpers. Paths are dotted member names; no array indexing (callers
 * that need it walk arrays themselves). Setters replace in place so member
 * order stays stable, which keeps printed objects readable.
 */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"

cJSON *
json_at(const cJSON *o, const char *path)
{
	char part[256];
	const char *dot;
	size_t n;

	while (o != NULL && *path) {
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof part)
			return NULL;
		memcpy(part, path, n);
		part[n] = '\0';
		o = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, part) :
		    NULL;
		path += n + (dot != NULL);
	}
	return (cJSON *)o;
}

const char *
json_str(const cJSON *o, const char *path)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

cJSON *
json_obj(cJSON *o, const char *key)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsObject(v))
		return v;
	v = cJSON_CreateObject();
	json_set(o, key, v);
	return v;
}

void
json_set(cJSON *o, const char *key, cJSON *item)
{
	if (item == NULL)
		fatal("out of memory");
	if (cJSON_GetObjectItemCaseSensitive(o, key) != NULL)
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, item);
	else
		cJSON_AddItemToObject(o, key, item);
}

void
json_set_str(cJSON *o, const char *key, const char *value)
{
	json_set(o, key, cJSON_CreateString(value));
}

void
json_set_num(cJSON *o, const char *key, double value)
{
	json_set(o, key, cJSON_CreateNumber(value));
}

void
json_del(cJSON *o, const char *key)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
}

int
json_equal(const cJSON *a, const cJSON *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return cJSON_Compare(a, b, 1);
}

char *
json_print(const cJSON *o)
{
	char *s = cJSON_PrintUnformatted(o);

	if (s == NULL)
		fatal("out of memory");
	return s;
}
