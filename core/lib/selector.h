/*
 * Label and field selectors as Kubernetes parses them.
 * Label syntax: "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x)", "a", "!a",
 * comma-separated (AND). Field syntax: "path=value", "path==value",
 * "path!=value", comma-separated, where path is a dotted JSON path into the
 * object ("metadata.name", "spec.nodeName", "involvedObject.uid").
 */
#ifndef VOLRAY_SELECTOR_H
#define VOLRAY_SELECTOR_H

#include <cjson/cJSON.h>

typedef struct selector selector;

/* NULL or "" parse to an empty selector that matches everything. */
selector *selector_parse_labels(const char *s, char **cause);
selector *selector_parse_fields(const char *s, char **cause);
/* A metav1.LabelSelector object: matchLabels and matchExpressions. */
selector *selector_from_json(const cJSON *label_selector, char **cause);

int selector_empty(const selector *);
/* labels is a JSON object (metadata.labels) or NULL. */
int selector_match_labels(const selector *, const cJSON *labels);
/* Field selectors match against the whole object. */
int selector_match_fields(const selector *, const cJSON *obj);
/*
 * The i-th requirement of a label selector that asks for one value
 * exactly ("k=v", "k==v", "k in (v)", matchLabels): 1 with its key and
 * value (the selector's own strings), 0 past the last. An index of labels
 * can start from any of them.
 */
int selector_label_equals(const selector *, size_t i, const char **key,
    const char **value);
/* If the selector requires field path == value exactly, return that value. */
const char *selector_field_equals(const selector *, const char *path);
void selector_free(selector *);
/* 0 when a field selector's plain equality value is nowhere in the JSON
 * text, or a field it asks to be there (!= "") has no key there, so the
 * object cannot match; 1 when it may (then parse and match). */
int selector_fields_may_match(const selector *, const char *json, size_t len);

#endif
