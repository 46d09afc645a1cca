/*
 * Fuzz target: Kubernetes protobuf request bodies (api/protobuf.c, with
 * the tables of registry/kinds/protobuf_msgs.c, found through the kinds'
 * descriptors), the decoder behind Content-Type
 * application/vnd.kubernetes.protobuf. A body
 * decodes to a JSON object with apiVersion and kind, or is refused with a
 * cause; the object prints and parses back unchanged.
 */
#include "api/protobuf.h"
#include "registry/resource.h"
#include "fuzz.h"

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	resource_init();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *cause = NULL;
	cJSON *obj;

	fuzz_quiet();
	obj = protobuf_decode(data, size, &cause);
	FUZZ_ASSERT(obj != NULL || cause != NULL);
	FUZZ_ASSERT(obj == NULL || cJSON_IsObject(obj));
	fuzz_roundtrip(obj);
	cJSON_Delete(obj);
	free(cause);
	return 0;
}
