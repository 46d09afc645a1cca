/*
 * Fuzz target: YAML request bodies and manifests (lib/yamljson.c), the
 * decoder behind Content-Type application/yaml, server-side apply and the
 * CRD and policy files: the first document (yamljson_parse) and every
 * document (yamljson_parse_all). What comes out must be JSON that prints
 * and parses back unchanged; an error must come with a cause.
 */
#include "fuzz.h"
#include "lib/yamljson.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *cause = NULL;
	cJSON *doc, *all;

	fuzz_quiet();
	doc = yamljson_parse((const char *)data, size, &cause);
	FUZZ_ASSERT(doc != NULL || cause != NULL);
	fuzz_roundtrip(doc);
	cJSON_Delete(doc);
	free(cause);
	cause = NULL;
	all = yamljson_parse_all((const char *)data, size, &cause);
	FUZZ_ASSERT(all != NULL || cause != NULL);
	FUZZ_ASSERT(all == NULL || cJSON_IsArray(all));
	fuzz_roundtrip(all);
	cJSON_Delete(all);
	free(cause);
	return 0;
}
