/*
 * Fuzz target: the patch algorithms of registry/patch.c as PATCH requests
 * reach them. Input: one mode byte, the target object, a NUL, the patch.
 * The mode picks JSON merge patch, JSON patch, strategic merge patch or
 * server-side apply, and the kind whose list merge keys apply. Apply is
 * what registry.c does with an apply body: decode it as YAML, then merge
 * it strategically (built-in kinds) or as a merge patch (custom kinds).
 * A patch must never modify its inputs, and must return a tree or a cause.
 */
#include "fuzz.h"
#include "lib/yamljson.h"
#include "registry/patch.h"

static const char *const kinds[] = {
	"Pod", "Deployment", "Service", "Node", "Job", "DaemonSet",
	"StatefulSet", "ReplicaSet", "ConfigMap", "ClusterRole", "RayCluster",
	NULL,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { MERGE, JSONP, STRATEGIC, APPLY } mode;
	char *tgt, *pat, *cause = NULL;
	size_t tlen, plen, nk = sizeof kinds / sizeof kinds[0];
	cJSON *target, *patch, *before, *pbefore, *out;
	const char *kind;

	fuzz_quiet();
	if (size < 1)
		return 0;
	mode = data[0] & 3;
	kind = kinds[(data[0] >> 2) % nk];
	fuzz_split(data + 1, size - 1, &tgt, &tlen, &pat, &plen);
	target = cJSON_ParseWithLength(tgt, tlen);
	if (target == NULL)
		target = cJSON_CreateObject();
	if (mode == APPLY)
		patch = yamljson_parse(pat, plen, &cause);
	else
		patch = cJSON_ParseWithLength(pat, plen);
	free(cause);
	cause = NULL;
	if (patch == NULL)
		goto out;
	before = cJSON_Duplicate(target, 1);
	pbefore = cJSON_Duplicate(patch, 1);
	switch (mode) {
	case MERGE:
		out = patch_merge(target, patch, &cause);
		break;
	case JSONP:
		out = patch_json(target, patch, &cause);
		break;
	case STRATEGIC:
		out = patch_strategic(target, patch, kind, &cause);
		break;
	default:
		if (kind != NULL && strcmp(kind, "RayCluster") != 0)
			out = patch_strategic(target, patch, kind, &cause);
		else
			out = patch_merge(target, patch, &cause);
		break;
	}
	FUZZ_ASSERT(out != NULL || cause != NULL);
	FUZZ_ASSERT(fuzz_has_dupkeys(target) || json_equal(target, before));
	FUZZ_ASSERT(fuzz_has_dupkeys(patch) || json_equal(patch, pbefore));
	fuzz_roundtrip(out);
	cJSON_Delete(out);
	cJSON_Delete(before);
	cJSON_Delete(pbefore);
	cJSON_Delete(patch);
	free(cause);
out:
	cJSON_Delete(target);
	free(tgt);
	free(pat);
	return 0;
}
