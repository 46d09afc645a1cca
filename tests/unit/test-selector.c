/*
 * Tests for selector.c: every label operator both ways, missing labels,
 * combinations, parse errors with their causes, field selectors on nested
 * paths with escapes, metav1.LabelSelector objects and selector_field_equals.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "check.h"
#include "lib/selector.h"

static cJSON *
json(const char *s)
{
	cJSON	*j;

	if ((j = cJSON_Parse(s)) == NULL) {
		fprintf(stderr, "bad test JSON: %s\n", s);
		exit(2);
	}
	return j;
}

/* Parse a label selector and match it against a labels object in JSON. */
static int
lmatch(const char *sel, const char *labels)
{
	selector	*s;
	cJSON		*l;
	char		*cause = NULL;
	int		 ok;

	if ((s = selector_parse_labels(sel, &cause)) == NULL) {
		fprintf(stderr, "unexpected parse error for '%s': %s\n", sel,
		    cause);
		free(cause);
		return -1;
	}
	l = labels != NULL ? json(labels) : NULL;
	ok = selector_match_labels(s, l);
	cJSON_Delete(l);
	selector_free(s);
	return ok;
}

/* Parse a field selector and match it against an object in JSON. */
static int
fmatch(const char *sel, const char *obj)
{
	selector	*s;
	cJSON		*o;
	char		*cause = NULL;
	int		 ok;

	if ((s = selector_parse_fields(sel, &cause)) == NULL) {
		fprintf(stderr, "unexpected parse error for '%s': %s\n", sel,
		    cause);
		free(cause);
		return -1;
	}
	o = json(obj);
	ok = selector_match_fields(s, o);
	cJSON_Delete(o);
	selector_free(s);
	return ok;
}

/* True if parsing fails with a cause that contains want. */
static int
label_error(const char *sel, const char *want)
{
	selector	*s;
	char		*cause = NULL;
	int		 ok;

	s = selector_parse_labels(sel, &cause);
	ok = s == NULL && cause != NULL && strstr(cause, want) != NULL;
	if (!ok)
		fprintf(stderr, "label '%s': got cause '%s', want '%s'\n", sel,
		    cause ? cause : "(none)", want);
	selector_free(s);
	free(cause);
	return ok;
}

static int
field_error(const char *sel, const char *want)
{
	selector	*s;
	char		*cause = NULL;
	int		 ok;

	s = selector_parse_fields(sel, &cause);
	ok = s == NULL && cause != NULL && strstr(cause, want) != NULL;
	if (!ok)
		fprintf(stderr, "field '%s': got cause '%s', want '%s'\n", sel,
		    cause ? cause : "(none)", want);
	selector_free(s);
	free(cause);
	return ok;
}

/* Build a selector from LabelSelector JSON and match it against labels. */
static int
jmatch(const char *ls, const char *labels)
{
	selector	*s;
	cJSON		*j, *l;
	char		*cause = NULL;
	int		 ok;

	j = ls != NULL ? json(ls) : NULL;
	s = selector_from_json(j, &cause);
	cJSON_Delete(j);
	if (s == NULL) {
		fprintf(stderr, "unexpected error for %s: %s\n", ls, cause);
		free(cause);
		return -1;
	}
	l = json(labels);
	ok = selector_match_labels(s, l);
	cJSON_Delete(l);
	selector_free(s);
	return ok;
}

static int
json_error(const char *ls, const char *want)
{
	selector	*s;
	cJSON		*j;
	char		*cause = NULL;
	int		 ok;

	j = json(ls);
	s = selector_from_json(j, &cause);
	cJSON_Delete(j);
	ok = s == NULL && cause != NULL && strstr(cause, want) != NULL;
	if (!ok)
		fprintf(stderr, "json %s: got cause '%s', want '%s'\n", ls,
		    cause ? cause : "(none)", want);
	selector_free(s);
	free(cause);
	return ok;
}

static void
test_label_empty(void)
{
	selector	*s;
	char		*cause = NULL;

	s = selector_parse_labels(NULL, &cause);
	CHECK(s != NULL && selector_empty(s));
	CHECK(selector_match_labels(s, NULL));
	selector_free(s);
	s = selector_parse_labels("", &cause);
	CHECK(s != NULL && selector_empty(s));
	selector_free(s);
	s = selector_parse_labels("  \t ", &cause);
	CHECK(s != NULL && selector_empty(s));
	selector_free(s);
	s = selector_parse_labels("a=b", &cause);
	CHECK(s != NULL && !selector_empty(s));
	selector_free(s);
	CHECK(cause == NULL);
	CHECK(selector_empty(NULL));
	selector_free(NULL);

	CHECK(lmatch("", "{\"a\":\"b\"}") == 1);
	CHECK(lmatch("", NULL) == 1);
}

static void
test_label_operators(void)
{
	const char	*ab = "{\"a\":\"b\",\"c\":\"d\"}";

	CHECK(lmatch("a=b", ab) == 1);
	CHECK(lmatch("a=x", ab) == 0);
	CHECK(lmatch("z=b", ab) == 0);
	CHECK(lmatch("a==b", ab) == 1);
	CHECK(lmatch("a==x", ab) == 0);
	CHECK(lmatch("a!=x", ab) == 1);
	CHECK(lmatch("a!=b", ab) == 0);
	CHECK(lmatch("z!=b", ab) == 1);		/* missing key matches != */
	CHECK(lmatch("a in (x,b)", ab) == 1);
	CHECK(lmatch("a in (x,y)", ab) == 0);
	CHECK(lmatch("z in (b)", ab) == 0);
	CHECK(lmatch("a notin (x,y)", ab) == 1);
	CHECK(lmatch("a notin (x,b)", ab) == 0);
	CHECK(lmatch("z notin (b)", ab) == 1);	/* missing key matches notin */
	CHECK(lmatch("a", ab) == 1);
	CHECK(lmatch("z", ab) == 0);
	CHECK(lmatch("!z", ab) == 1);
	CHECK(lmatch("!a", ab) == 0);
	CHECK(lmatch("a>3", "{\"a\":\"5\"}") == 1);
	CHECK(lmatch("a>5", "{\"a\":\"5\"}") == 0);
	CHECK(lmatch("a<10", "{\"a\":\"5\"}") == 1);
	CHECK(lmatch("a<10", "{\"a\":\"five\"}") == 0);
	CHECK(lmatch("a<10", "{}") == 0);

	/* No labels at all. */
	CHECK(lmatch("a=b", NULL) == 0);
	CHECK(lmatch("a!=b", NULL) == 1);
	CHECK(lmatch("!a", NULL) == 1);
	CHECK(lmatch("a", "{}") == 0);

	/* Empty values. */
	CHECK(lmatch("a=", "{\"a\":\"\"}") == 1);
	CHECK(lmatch("a=", ab) == 0);
	CHECK(lmatch("a=", "{}") == 0);
	CHECK(lmatch("a!=", ab) == 1);
	CHECK(lmatch("a in (x,)", "{\"a\":\"\"}") == 1);
	CHECK(lmatch("a in (,x)", "{\"a\":\"x\"}") == 1);
	CHECK(lmatch("a==,c=d", "{\"a\":\"\",\"c\":\"d\"}") == 1);

	/* Keywords are plain words where a value or key is expected. */
	CHECK(lmatch("a in (in,notin)", "{\"a\":\"notin\"}") == 1);
	CHECK(lmatch("in=notin", "{\"in\":\"notin\"}") == 1);
}

static void
test_label_combinations(void)
{
	const char	*pod = "{\"app\":\"web\",\"tier\":\"frontend\","
	    "\"example.com/team\":\"blue\",\"app.kubernetes.io/name\":\"x\"}";

	CHECK(lmatch("app=web,tier=frontend", pod) == 1);
	CHECK(lmatch("app=web,tier=backend", pod) == 0);
	CHECK(lmatch("app=web,!canary", pod) == 1);
	CHECK(lmatch("app=web,canary", pod) == 0);
	CHECK(lmatch("app in (web,api),tier notin (backend),env!=prod", pod)
	    == 1);
	CHECK(lmatch("  app = web ,  tier  in ( frontend , x )  , ! canary ",
	    pod) == 1);
	CHECK(lmatch("app\tin(web)", pod) == 1);
	CHECK(lmatch("example.com/team=blue", pod) == 1);
	CHECK(lmatch("example.com/team in (red)", pod) == 0);
	CHECK(lmatch("app.kubernetes.io/name", pod) == 1);
	CHECK(lmatch("!app.kubernetes.io/name", pod) == 0);
	CHECK(lmatch("a.b_c-d=E.f_G-1", "{\"a.b_c-d\":\"E.f_G-1\"}") == 1);
}

static void
test_label_errors(void)
{
	char	 long_name[80], buf[160];

	CHECK(label_error("=a", "found '=', expected: !, identifier"));
	CHECK(label_error("a=b=c", "found '=', expected: ',' or 'end of string'"));
	CHECK(label_error("a in ()", "unable to parse requirement: for 'in', "
	    "'notin' operators, values set can't be empty"));
	CHECK(label_error("a notin ()", "values set can't be empty"));
	CHECK(label_error("a in (x", "found '', expected: ',' or ')'"));
	CHECK(label_error("a in x", "found 'x', expected: '('"));
	CHECK(label_error("a in (x y)", "found 'y', expected: ',' or ')'"));
	CHECK(label_error("a in (=)", "found '=', expected: ',', ')' or identifier"));
	CHECK(label_error("a,", "expected: identifier after ','"));
	CHECK(label_error(",a", "found ',', expected: !, identifier"));
	CHECK(label_error("a,,b", "found ',', expected: identifier after ','"));
	CHECK(label_error("!", "unable to parse requirement: found '', "
	    "expected: identifier"));
	CHECK(label_error("!!a", "found '!', expected: identifier"));
	CHECK(label_error("!a=b", "found '=', expected: ',' or 'end of string'"));
	CHECK(label_error("a b", "found 'b', expected: in, notin, =, ==, !=, gt, lt"));
	CHECK(label_error("a=(b)", "found '(', expected: identifier"));
	CHECK(label_error("a$b=c", "unable to parse requirement: key: Invalid value: "
	    "\"a$b\": name part must consist of alphanumeric characters"));
	CHECK(label_error("-a=b", "key: Invalid value: \"-a\""));
	CHECK(label_error("a-=b", "key: Invalid value: \"a-\""));
	CHECK(label_error("a=-b", "values[0]: Invalid value: \"-b\": a valid label "
	    "must be an empty string"));
	CHECK(label_error("a in (x,b_)", "Invalid value: \"b_\""));
	CHECK(label_error("a/b/c=d", "a qualified name must consist of"));
	CHECK(label_error("/a=b", "prefix part must be non-empty"));
	CHECK(label_error("a/=b", "name part must be non-empty"));
	CHECK(label_error("Example.com/a=b", "prefix part a lowercase RFC 1123"));
	CHECK(label_error("example..com/a=b", "prefix part a lowercase RFC 1123"));
	CHECK(label_error("example.com-/a=b", "prefix part a lowercase RFC 1123"));
	CHECK(label_error("a>b", "for 'Gt', 'Lt' operators, the value must be an "
	    "integer"));
	CHECK(label_error("a>", "the value must be an integer"));

	memset(long_name, 'n', 64);
	long_name[64] = '\0';
	snprintf(buf, sizeof buf, "%s=x", long_name);
	CHECK(label_error(buf, "name part must be no more than 63 characters"));
	snprintf(buf, sizeof buf, "x=%s", long_name);
	CHECK(label_error(buf, "must be no more than 63 characters"));
	long_name[63] = '\0';
	snprintf(buf, sizeof buf, "%s=%s", long_name, long_name);
	CHECK(lmatch(buf, "{}") == 0);

	/* A NULL cause pointer is allowed. */
	CHECK(selector_parse_labels("a in ()", NULL) == NULL);
}

static void
test_fields(void)
{
	const char	*pod = "{\"metadata\":{\"name\":\"web-1\","
	    "\"namespace\":\"default\",\"uid\":\"u1\",\"labels\":"
	    "{\"app.kubernetes.io/name\":\"web\"}},"
	    "\"spec\":{\"nodeName\":\"node-a\",\"schedulerName\":\"volcano\","
	    "\"unschedulable\":true,\"priority\":100,\"ratio\":0.5,"
	    "\"containers\":[{\"name\":\"c\"}],\"hostNetwork\":null},"
	    "\"status\":{\"phase\":\"Running\"}}";
	const char	*pending = "{\"metadata\":{\"name\":\"p\"},"
	    "\"status\":{\"phase\":\"Pending\"}}";
	const char	*event = "{\"type\":\"Warning\",\"reason\":"
	    "\"FailedScheduling\",\"involvedObject\":{\"kind\":\"Pod\","
	    "\"name\":\"a,b=c\\\\d\",\"namespace\":\"default\",\"uid\":\"u1\"}}";

	CHECK(fmatch("", pod) == 1);
	CHECK(fmatch(NULL, pod) == 1);
	CHECK(fmatch("metadata.name=web-1", pod) == 1);
	CHECK(fmatch("metadata.name=web-2", pod) == 0);
	CHECK(fmatch("metadata.name==web-1", pod) == 1);
	CHECK(fmatch("metadata.name!=web-1", pod) == 0);
	CHECK(fmatch("metadata.name!=web-2", pod) == 1);
	CHECK(fmatch("metadata.namespace=default,status.phase=Running", pod)
	    == 1);
	CHECK(fmatch("metadata.namespace=default,status.phase!=Running", pod)
	    == 0);
	CHECK(fmatch("spec.nodeName=node-a,spec.schedulerName=volcano", pod)
	    == 1);
	CHECK(fmatch(" metadata.name =web-1, status.phase = Running", pod)
	    == 0);		/* spaces around a value are part of it */
	CHECK(fmatch(" metadata.name =web-1, status.phase =Running", pod)
	    == 1);
	CHECK(fmatch("metadata.name=web-1,,", pod) == 1);

	/* Missing fields read as the empty string. */
	CHECK(fmatch("spec.nodeName=", pending) == 1);
	CHECK(fmatch("spec.nodeName!=", pending) == 0);
	CHECK(fmatch("spec.nodeName!=", pod) == 1);
	CHECK(fmatch("spec.nodeName=node-a", pending) == 0);
	CHECK(fmatch("spec.nodeName!=node-a", pending) == 1);
	CHECK(fmatch("no.such.path=", pod) == 1);
	CHECK(fmatch("metadata.name.deeper=", pod) == 1);
	CHECK(fmatch("spec.hostNetwork=", pod) == 1);

	/* Non-string scalars compare by their text. */
	CHECK(fmatch("spec.unschedulable=true", pod) == 1);
	CHECK(fmatch("spec.unschedulable=false", pod) == 0);
	CHECK(fmatch("spec.priority=100", pod) == 1);
	CHECK(fmatch("spec.priority=100.0", pod) == 0);
	CHECK(fmatch("spec.ratio=0.5", pod) == 1);
	CHECK(fmatch("spec.containers=", pod) == 0);
	CHECK(fmatch("spec.containers!=", pod) == 1);
	CHECK(fmatch("metadata=", pod) == 0);

	/* Keys holding dots are still found. */
	CHECK(fmatch("metadata.labels.app.kubernetes.io/name=web", pod) == 1);

	/* Events and escapes. */
	CHECK(fmatch("involvedObject.kind=Pod,involvedObject.uid=u1,"
	    "involvedObject.namespace=default,type=Warning,"
	    "reason=FailedScheduling", event) == 1);
	CHECK(fmatch("involvedObject.name=a\\,b\\=c\\\\d", event) == 1);
	CHECK(fmatch("involvedObject.name=a\\,b\\=c\\\\d,type=Normal", event)
	    == 0);
	CHECK(fmatch("involvedObject.name!=a\\,b\\=c\\\\d", event) == 0);
	CHECK(fmatch("involvedObject.name=a", event) == 0);
	CHECK(fmatch("type=Warning,reason!=x", event) == 1);
}

static void
test_field_errors(void)
{
	CHECK(field_error("metadata.name", "invalid selector: 'metadata.name'; "
	    "can't understand 'metadata.name'"));
	CHECK(field_error("a=b,c", "can't understand 'c'"));
	CHECK(field_error("a=b=c", "unescaped character in value: ="));
	CHECK(field_error("a==b=c", "unescaped character in value: ="));
	CHECK(field_error("a=b\\x", "invalid escape sequence: \\x"));
	CHECK(field_error("a=b\\", "invalid escape sequence: \\"));
	CHECK(field_error("=b", "empty field path"));
	CHECK(field_error(" != b", "empty field path"));
	CHECK(selector_parse_fields("a", NULL) == NULL);
}

static void
test_field_equals(void)
{
	selector	*s;
	char		*cause = NULL;

	s = selector_parse_fields("metadata.namespace!=kube-system,"
	    "metadata.name==web\\,1,spec.nodeName=", &cause);
	CHECK(s != NULL);
	CHECK_STR(selector_field_equals(s, "metadata.name"), "web,1");
	CHECK_STR(selector_field_equals(s, "spec.nodeName"), "");
	CHECK(selector_field_equals(s, "metadata.namespace") == NULL);
	CHECK(selector_field_equals(s, "metadata") == NULL);
	CHECK(selector_field_equals(s, "status.phase") == NULL);
	selector_free(s);

	s = selector_parse_fields("", &cause);
	CHECK(selector_field_equals(s, "metadata.name") == NULL);
	selector_free(s);
	CHECK(selector_field_equals(NULL, "metadata.name") == NULL);

	/* A label requirement is not a field requirement. */
	s = selector_parse_labels("metadata.name=x", &cause);
	CHECK(s != NULL);
	CHECK(selector_field_equals(s, "metadata.name") == NULL);
	selector_free(s);
	CHECK(cause == NULL);
}

static void
test_fields_may_match(void)
{
	static const char pod[] = "{\"spec\":{\"schedulerName\":\"volcano\"}}";
	cJSON		*tree = cJSON_Parse(pod);
	selector	*s;

	s = selector_parse_fields("spec.schedulerName=volcano", NULL);
	CHECK(selector_fields_may_match(s, pod, sizeof pod - 1) == 1);
	CHECK(selector_fields_may_match(s, "{\"spec\":{}}", 11) == 0);
	selector_free(s);
	/* Only a hint: text that has the value somewhere may still not match. */
	s = selector_parse_fields("metadata.name=volcano", NULL);
	CHECK(selector_fields_may_match(s, pod, sizeof pod - 1) == 1);
	CHECK(selector_match_fields(s, tree) == 0);
	selector_free(s);
	/* Inequalities, and values JSON would escape, are not checked. */
	s = selector_parse_fields("spec.schedulerName!=x,metadata.name=a\\,b",
	    NULL);
	CHECK(s != NULL);
	CHECK(selector_fields_may_match(s, "{}", 2) == 1);
	selector_free(s);
	CHECK(selector_fields_may_match(NULL, "{}", 2) == 1);
	/* An inequality to "" asks for the field: without its key in the
	   text it cannot match (the resourceclaim controller's pod filter). */
	s = selector_parse_fields("spec.resourceClaims!=", NULL);
	CHECK(s != NULL);
	CHECK(selector_fields_may_match(s, pod, sizeof pod - 1) == 0);
	CHECK(selector_match_fields(s, tree) == 0);
	CHECK(selector_fields_may_match(s,
	    "{\"spec\":{\"resourceClaims\":[{\"name\":\"g\"}]}}", 42) == 1);
	/* A key with dots: its last part still ends the key in the text. */
	selector_free(s);
	s = selector_parse_fields("metadata.labels.app.kubernetes.io/name!=",
	    NULL);
	CHECK(selector_fields_may_match(s,
	    "{\"metadata\":{\"labels\":{\"app.kubernetes.io/name\":\"x\"}}}",
	    54) == 1);
	CHECK(selector_fields_may_match(s, pod, sizeof pod - 1) == 0);
	selector_free(s);
	cJSON_Delete(tree);
}

static void
test_json(void)
{
	const char	*both = "{\"matchLabels\":{\"app\":\"web\","
	    "\"example.com/team\":\"blue\"},\"matchExpressions\":["
	    "{\"key\":\"tier\",\"operator\":\"In\",\"values\":[\"fe\",\"be\"]},"
	    "{\"key\":\"env\",\"operator\":\"NotIn\",\"values\":[\"prod\"]},"
	    "{\"key\":\"track\",\"operator\":\"Exists\"},"
	    "{\"key\":\"canary\",\"operator\":\"DoesNotExist\",\"values\":[]}]}";
	selector	*s;
	cJSON		*j;
	char		*cause = NULL;

	CHECK(jmatch(NULL, "{}") == 1);
	CHECK(jmatch("null", "{}") == 1);
	CHECK(jmatch("{}", "{\"a\":\"b\"}") == 1);
	CHECK(jmatch("{\"matchLabels\":{},\"matchExpressions\":[]}", "{}")
	    == 1);
	s = selector_from_json(NULL, &cause);
	CHECK(s != NULL && selector_empty(s));
	selector_free(s);
	j = json("{}");
	s = selector_from_json(j, &cause);
	CHECK(s != NULL && selector_empty(s));
	selector_free(s);
	cJSON_Delete(j);
	CHECK(cause == NULL);

	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\",\"track\":\"stable\"}") == 1);
	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"be\",\"env\":\"dev\",\"track\":\"\"}") == 1);
	CHECK(jmatch(both, "{\"app\":\"api\",\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\",\"track\":\"stable\"}") == 0);
	CHECK(jmatch(both, "{\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\",\"track\":\"stable\"}") == 0);
	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"mid\",\"track\":\"stable\"}") == 0);
	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\",\"env\":\"prod\",\"track\":\"stable\"}") == 0);
	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\"}") == 0);
	CHECK(jmatch(both, "{\"app\":\"web\",\"example.com/team\":\"blue\","
	    "\"tier\":\"fe\",\"track\":\"stable\",\"canary\":\"1\"}") == 0);
	CHECK(jmatch("{\"matchLabels\":{\"app\":\"\"}}", "{\"app\":\"\"}")
	    == 1);

	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\","
	    "\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
	    "matchExpressions[0]: \"Gt\" is not a valid label selector "
	    "operator"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\"}]}",
	    "\"\" is not a valid label selector operator"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\","
	    "\"values\":[\"x\"]},{\"key\":\"b\",\"operator\":\"In\"}]}",
	    "matchExpressions[1]: for 'in', 'notin' operators, values set "
	    "can't be empty"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\","
	    "\"operator\":\"NotIn\",\"values\":[]}]}", "can't be empty"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\","
	    "\"operator\":\"Exists\",\"values\":[\"x\"]}]}",
	    "values set must be empty for exists and does not exist"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\","
	    "\"operator\":\"DoesNotExist\",\"values\":[\"x\"]}]}",
	    "values set must be empty"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a b\","
	    "\"operator\":\"Exists\"}]}", "key: Invalid value: \"a b\""));
	CHECK(json_error("{\"matchExpressions\":[{\"operator\":\"Exists\"}]}",
	    "name part must be non-empty"));
	CHECK(json_error("{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\","
	    "\"values\":[1]}]}", "values must be an array of strings"));
	CHECK(json_error("{\"matchExpressions\":{}}", "matchExpressions must be an "
	    "array"));
	CHECK(json_error("{\"matchLabels\":{\"a\":1}}", "matchLabels: value of "
	    "\"a\" must be a string"));
	CHECK(json_error("{\"matchLabels\":{\"a\":\"-x\"}}", "matchLabels: "
	    "values[0]: Invalid value: \"-x\""));
	CHECK(json_error("{\"matchLabels\":{\"a/b/c\":\"x\"}}", "matchLabels: key: "
	    "Invalid value: \"a/b/c\""));
	CHECK(json_error("{\"matchLabels\":[]}", "matchLabels must be an object"));
	CHECK(json_error("[]", "label selector must be an object"));
}

int
main(void)
{
	test_label_empty();
	test_label_operators();
	test_label_combinations();
	test_label_errors();
	test_fields();
	test_field_errors();
	test_field_equals();
	test_fields_may_match();
	test_json();
	return check_result("test-selector");
}
