/*
 * Fuzz target: label and field selectors (lib/selector.c) as list and watch
 * requests carry them. Input: the selector text, a NUL, then a JSON object.
 * The text is parsed as a label selector and matched against the object's
 * metadata.labels (or the object itself when it has none), and parsed as a
 * field selector and matched against the whole object; the object is also
 * read as a metav1.LabelSelector (matchLabels, matchExpressions). A parse
 * returns a selector or a cause; an empty selector matches everything.
 */
#include "fuzz.h"
#include "lib/selector.h"

static void
try(selector *s, char *cause, const cJSON *labels, const cJSON *obj)
{
	FUZZ_ASSERT(s != NULL || cause != NULL);
	free(cause);
	if (s == NULL)
		return;
	if (selector_empty(s)) {
		FUZZ_ASSERT(selector_match_labels(s, labels));
		FUZZ_ASSERT(selector_match_fields(s, obj));
	}
	(void)selector_match_labels(s, labels);
	(void)selector_match_labels(s, NULL);
	(void)selector_match_fields(s, obj);
	(void)selector_field_equals(s, "metadata.name");
	(void)selector_field_equals(s, "spec.nodeName");
	selector_free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *json, *cause;
	size_t tlen, jlen;
	const cJSON *labels;
	cJSON *obj;
	selector *s;

	fuzz_quiet();
	fuzz_split(data, size, &text, &tlen, &json, &jlen);
	obj = cJSON_ParseWithLength(json, jlen);
	if (obj == NULL)
		obj = cJSON_CreateObject();
	labels = json_at(obj, "metadata.labels");
	if (labels == NULL)
		labels = obj;
	cause = NULL;
	s = selector_parse_labels(text, &cause);
	try(s, cause, labels, obj);
	cause = NULL;
	s = selector_parse_fields(text, &cause);
	try(s, cause, labels, obj);
	cause = NULL;
	s = selector_from_json(obj, &cause);
	try(s, cause, labels, obj);
	cJSON_Delete(obj);
	free(text);
	free(json);
	return 0;
}
