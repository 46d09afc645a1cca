/*
 * Fuzz target: JSONPath as printer columns use it (lib/jsonpath.c). Input:
 * the path, a NUL, then the JSON object it is evaluated on. The number of
 * matches jsonpath_each reports is the number of calls it made, and
 * jsonpath_first finds a match exactly when there is one.
 */
#include "fuzz.h"
#include "lib/jsonpath.h"

static void
count(const cJSON *match, void *arg)
{
	FUZZ_ASSERT(match != NULL);
	(*(int *)arg)++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *path, *json;
	size_t plen, jlen;
	cJSON *obj;
	int n = 0, r;

	fuzz_quiet();
	fuzz_split(data, size, &path, &plen, &json, &jlen);
	obj = cJSON_ParseWithLength(json, jlen);
	if (obj == NULL)
		obj = cJSON_CreateObject();
	r = jsonpath_each(obj, path, count, &n);
	FUZZ_ASSERT(r == n);
	FUZZ_ASSERT((jsonpath_first(obj, path) != NULL) == (n > 0));
	cJSON_Delete(obj);
	free(path);
	free(json);
	return 0;
}
