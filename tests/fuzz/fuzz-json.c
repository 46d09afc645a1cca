/*
 * Fuzz target: JSON request bodies as the API decodes them
 * (cJSON_ParseWithLength in api_write.c), then the lib/json.c helpers every
 * layer applies to a decoded object: the dotted-path lookups the registry
 * and admission make, json_has_string on finalizers, json_equal and the
 * print/parse round trip the store relies on.
 */
#include "fuzz.h"

static const char *const paths[] = {
	"apiVersion", "kind", "metadata", "metadata.name",
	"metadata.namespace", "metadata.labels", "metadata.finalizers",
	"metadata.ownerReferences", "metadata.resourceVersion",
	"metadata.deletionTimestamp", "spec.nodeName", "spec.replicas",
	"status", "status.phase", ".", "..", "a..b", "",
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *obj, *copy;
	size_t i;

	fuzz_quiet();
	obj = cJSON_ParseWithLength((const char *)data, size);
	if (obj == NULL)
		return 0;
	for (i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		(void)json_at(obj, paths[i]);
		(void)json_str(obj, paths[i]);
		(void)json_has_string(obj, paths[i], "kubernetes");
	}
	fuzz_roundtrip(obj);
	copy = cJSON_Duplicate(obj, 1);
	FUZZ_ASSERT(copy != NULL);
	FUZZ_ASSERT(fuzz_has_dupkeys(obj) || json_equal(obj, copy));
	if (cJSON_IsObject(copy)) {
		json_set_str(json_obj(copy, "metadata"), "name", "x");
		json_del(json_obj(copy, "metadata"), "labels");
		FUZZ_ASSERT(json_str(copy, "metadata.name") != NULL);
	}
	cJSON_Delete(copy);
	cJSON_Delete(obj);
	return 0;
}
