/*
 * Fuzz target: CRD structural schemas (registry/schema.c). Input: an
 * openAPIV3Schema as JSON, a NUL, then a JSON object. The schema is
 * compiled as a CRD create would compile it; when it compiles, the object
 * is validated against it (defaults applied, unknown fields pruned) the way
 * every create and update of a custom resource is. Each violation is one
 * cause object with reason, message and field; validating the result a
 * second time finds nothing new to default or prune (validation is
 * idempotent on the tree).
 */
#include "fuzz.h"
#include "registry/schema.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *stext, *otext, *cause = NULL;
	size_t slen, olen;
	cJSON *sj, *obj, *causes, *c, *once;
	schema *sc;
	int n;

	fuzz_quiet();
	fuzz_split(data, size, &stext, &slen, &otext, &olen);
	sj = cJSON_ParseWithLength(stext, slen);
	if (sj == NULL)
		goto out;
	sc = schema_compile(sj, &cause);
	FUZZ_ASSERT(sc != NULL || cause != NULL);
	free(cause);
	if (sc == NULL)
		goto out_schema;
	obj = cJSON_ParseWithLength(otext, olen);
	if (obj == NULL)
		obj = cJSON_CreateObject();
	causes = cJSON_CreateArray();
	n = schema_validate(sc, obj, causes);
	FUZZ_ASSERT(n == cJSON_GetArraySize(causes));
	cJSON_ArrayForEach(c, causes) {
		FUZZ_ASSERT(cJSON_IsObject(c));
		FUZZ_ASSERT(json_str(c, "reason") != NULL);
		FUZZ_ASSERT(json_str(c, "message") != NULL);
	}
	fuzz_roundtrip(obj);
	once = cJSON_Duplicate(obj, 1);
	cJSON_Delete(causes);
	causes = cJSON_CreateArray();
	(void)schema_validate(sc, obj, causes);
	if (n == 0 && !fuzz_has_dupkeys(once))
		FUZZ_ASSERT(json_equal(obj, once));
	cJSON_Delete(once);
	cJSON_Delete(causes);
	cJSON_Delete(obj);
	schema_free(sc);
out_schema:
	cJSON_Delete(sj);
out:
	free(stext);
	free(otext);
	return 0;
}
