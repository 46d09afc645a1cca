/*
 * Tests for yamljson: the typing of plain scalars against quoted and block
 * ones, multi-document streams, anchors and merge keys, error causes with
 * line numbers, and JSON input that must come out as cJSON_Parse makes it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/json.h"
#include "lib/yamljson.h"

/* Parse one document and print it as compact JSON (or "ERR: cause"). */
static char *
yj(const char *yaml)
{
	char	*cause = NULL, *out;
	cJSON	*j;

	j = yamljson_parse(yaml, strlen(yaml), &cause);
	if (j == NULL) {
		if ((out = malloc(strlen(cause) + 6)) == NULL)
			abort();
		sprintf(out, "ERR: %s", cause);
		free(cause);
		return out;
	}
	out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return out;
}

static char *
yj_all(const char *yaml)
{
	char	*cause = NULL, *out;
	cJSON	*j;

	j = yamljson_parse_all(yaml, strlen(yaml), &cause);
	if (j == NULL) {
		if ((out = malloc(strlen(cause) + 6)) == NULL)
			abort();
		sprintf(out, "ERR: %s", cause);
		free(cause);
		return out;
	}
	out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	return out;
}

#define CHECK_YJ(yaml, want) do {					\
	char *got_ = yj(yaml);						\
	CHECK_STR(got_, want);						\
	free(got_);							\
} while (0)

#define CHECK_YJ_ALL(yaml, want) do {					\
	char *got_ = yj_all(yaml);					\
	CHECK_STR(got_, want);						\
	free(got_);							\
} while (0)

static const struct {
	const char	*in;
	const char	*want;
} scalars[] = {
	{ "v: ~", "{\"v\":null}" },
	{ "v:", "{\"v\":null}" },
	{ "v: null", "{\"v\":null}" },
	{ "v: Null", "{\"v\":null}" },
	{ "v: NULL", "{\"v\":null}" },
	{ "v: nULL", "{\"v\":\"nULL\"}" },
	{ "v: true", "{\"v\":true}" },
	{ "v: True", "{\"v\":true}" },
	{ "v: TRUE", "{\"v\":true}" },
	{ "v: false", "{\"v\":false}" },
	{ "v: False", "{\"v\":false}" },
	{ "v: FALSE", "{\"v\":false}" },
	{ "v: yes", "{\"v\":true}" },
	{ "v: Yes", "{\"v\":true}" },
	{ "v: on", "{\"v\":true}" },
	{ "v: ON", "{\"v\":true}" },
	{ "v: no", "{\"v\":false}" },
	{ "v: off", "{\"v\":false}" },
	{ "v: Off", "{\"v\":false}" },
	{ "v: y", "{\"v\":\"y\"}" },
	{ "v: n", "{\"v\":\"n\"}" },
	{ "v: Y", "{\"v\":\"Y\"}" },
	{ "v: 0", "{\"v\":0}" },
	{ "v: 42", "{\"v\":42}" },
	{ "v: -17", "{\"v\":-17}" },
	{ "v: +12", "{\"v\":12}" },
	{ "v: 1_000", "{\"v\":1000}" },
	{ "v: 0x1F", "{\"v\":31}" },
	{ "v: 0o17", "{\"v\":15}" },
	{ "v: 017", "{\"v\":15}" },
	{ "v: 0b101", "{\"v\":5}" },
	{ "v: 08", "{\"v\":8}" },
	{ "v: 1.5", "{\"v\":1.5}" },
	{ "v: -0.25", "{\"v\":-0.25}" },
	{ "v: .5", "{\"v\":0.5}" },
	{ "v: 1e3", "{\"v\":1000}" },
	{ "v: 2.5E-1", "{\"v\":0.25}" },
	{ "v: .inf", "{\"v\":\".inf\"}" },
	{ "v: -.inf", "{\"v\":\"-.inf\"}" },
	{ "v: .nan", "{\"v\":\".nan\"}" },
	{ "v: 1e999", "{\"v\":\"1e999\"}" },
	{ "v: 0x", "{\"v\":\"0x\"}" },
	{ "v: 1.2.3", "{\"v\":\"1.2.3\"}" },
	{ "v: 12abc", "{\"v\":\"12abc\"}" },
	{ "v: 2024-01-02", "{\"v\":\"2024-01-02\"}" },
	{ "v: 10:30", "{\"v\":\"10:30\"}" },
	{ "v: hello world", "{\"v\":\"hello world\"}" },
	{ "v: -x", "{\"v\":\"-x\"}" },
	{ "v: +", "{\"v\":\"+\"}" },
	{ "v: .", "{\"v\":\".\"}" },
	{ "v: '1'", "{\"v\":\"1\"}" },
	{ "v: \"true\"", "{\"v\":\"true\"}" },
	{ "v: 'null'", "{\"v\":\"null\"}" },
	{ "v: ''", "{\"v\":\"\"}" },
	{ "v: \"yes\"", "{\"v\":\"yes\"}" },
	{ "v: \"a\\tb\\u00e9\"", "{\"v\":\"a\\tbé\"}" },
	{ "v: 'it''s'", "{\"v\":\"it's\"}" },
	{ "v: !!str 12", "{\"v\":\"12\"}" },
	{ "v: !!str true", "{\"v\":\"true\"}" },
	{ "v: !!int \"12\"", "{\"v\":12}" },
	{ "v: !!float 1", "{\"v\":1}" },
	{ "v: !!float \"2.5\"", "{\"v\":2.5}" },
	{ "v: !!bool \"yes\"", "{\"v\":true}" },
	{ "v: !!null ''", "{\"v\":null}" },
	{ "v: ! 12", "{\"v\":\"12\"}" },
	{ "v: !custom 12", "{\"v\":12}" },
};

static void
test_scalars(void)
{
	size_t	 i;
	char	*got;
	cJSON	*j;

	for (i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
		got = yj(scalars[i].in);
		if (strcmp(got, scalars[i].want) != 0)
			fprintf(stderr, "input: %s\n", scalars[i].in);
		CHECK_STR(got, scalars[i].want);
		free(got);
	}
	/* A bare scalar document. */
	CHECK_YJ("hello", "\"hello\"");
	CHECK_YJ("12", "12");
	/* Integers past 2^53 stay numbers (as doubles). */
	j = yamljson_parse("v: 9007199254740993", 19, NULL);
	CHECK(j != NULL && cJSON_IsNumber(cJSON_GetObjectItem(j, "v")) &&
	    cJSON_GetObjectItem(j, "v")->valuedouble == 9007199254740992.0);
	cJSON_Delete(j);
}

static void
test_blocks(void)
{
	CHECK_YJ("v: |\n  line one\n  line two\n",
	    "{\"v\":\"line one\\nline two\\n\"}");
	CHECK_YJ("v: |-\n  123\n", "{\"v\":\"123\"}");
	CHECK_YJ("v: >\n  folded\n  text\n\n  para\n",
	    "{\"v\":\"folded text\\npara\\n\"}");
	CHECK_YJ("v: >-\n  true\n", "{\"v\":\"true\"}");
	CHECK_YJ("v: |\n  null\nw: 1\n", "{\"v\":\"null\\n\",\"w\":1}");
	/* Plain multi-line scalars fold into one string. */
	CHECK_YJ("v: a\n  b\n", "{\"v\":\"a b\"}");
}

static void
test_structure(void)
{
	CHECK_YJ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
	    "  labels:\n    app.kubernetes.io/name: web\n"
	    "spec:\n  containers:\n  - name: c\n    image: nginx\n"
	    "    ports:\n    - containerPort: 80\n",
	    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
	    "\"p\",\"labels\":{\"app.kubernetes.io/name\":\"web\"}},\"spec\":"
	    "{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\",\"ports\":"
	    "[{\"containerPort\":80}]}]}}");
	CHECK_YJ("a: [1, two, {b: c}]\nd: {}\ne: []\n",
	    "{\"a\":[1,\"two\",{\"b\":\"c\"}],\"d\":{},\"e\":[]}");
	/* Keys become strings, typed first as go-yaml does. */
	CHECK_YJ("1: a\ntrue: b\nyes: c\n1.5: d\n0x10: e\n\"2\": f\n",
	    "{\"1\":\"a\",\"true\":\"c\",\"1.5\":\"d\",\"16\":\"e\","
	    "\"2\":\"f\"}");
	/* A later duplicate key wins but keeps the first position. */
	CHECK_YJ("a: 1\nb: 2\na: 3\n", "{\"a\":3,\"b\":2}");
	CHECK_YJ("k0: 0\nk1: 1\nk2: 2\nk3: 3\nk4: 4\nk5: 5\nk6: 6\nk7: 7\n"
	    "k8: 8\nk9: 9\nk10: 10\nk11: 11\nk12: 12\nk13: 13\nk14: 14\n"
	    "k15: 15\nk16: 16\nk3: x\nk16: y\nk3: z\n",
	    "{\"k0\":0,\"k1\":1,\"k2\":2,\"k3\":\"z\",\"k4\":4,\"k5\":5,"
	    "\"k6\":6,\"k7\":7,\"k8\":8,\"k9\":9,\"k10\":10,\"k11\":11,"
	    "\"k12\":12,\"k13\":13,\"k14\":14,\"k15\":15,\"k16\":\"y\"}");
	/* Comments anywhere are ignored. */
	CHECK_YJ("# head\na: 1 # trailing\n# between\nb: '# not a comment'\n",
	    "{\"a\":1,\"b\":\"# not a comment\"}");
}

static void
test_anchors(void)
{
	CHECK_YJ("base: &b {cpu: 1, mem: 2Gi}\nother: *b\n",
	    "{\"base\":{\"cpu\":1,\"mem\":\"2Gi\"},\"other\":{\"cpu\":1,"
	    "\"mem\":\"2Gi\"}}");
	CHECK_YJ("a: &x 5\nb: [*x, *x]\n", "{\"a\":5,\"b\":[5,5]}");
	/* An anchor may be redefined; aliases see the latest. */
	CHECK_YJ("a: &x 1\nb: &x 2\nc: *x\n", "{\"a\":1,\"b\":2,\"c\":2}");
	/* Merge keys: explicit keys win, earlier merge sources win. */
	CHECK_YJ("d: &d {a: 1, b: 2}\ne: &e {b: 3, c: 4}\n"
	    "m:\n  <<: [*d, *e]\n  a: 9\n",
	    "{\"d\":{\"a\":1,\"b\":2},\"e\":{\"b\":3,\"c\":4},"
	    "\"m\":{\"a\":9,\"b\":2,\"c\":4}}");
	CHECK_YJ("m:\n  x: 0\n  <<: {x: 1, y: 2}\n",
	    "{\"m\":{\"x\":0,\"y\":2}}");
	CHECK_YJ("m:\n  \"<<\": 1\n", "{\"m\":{\"<<\":1}}");
	/* Changing a copy leaves the anchor intact. */
	CHECK_YJ("a: &x {k: 1}\nb:\n  <<: *x\n  k: 2\nc: *x\n",
	    "{\"a\":{\"k\":1},\"b\":{\"k\":2},\"c\":{\"k\":1}}");
	/* Anchors do not cross documents. */
	CHECK_YJ_ALL("a: &x 1\n---\nb: *x\n",
	    "ERR: yaml: line 3: unknown anchor 'x' referenced");
}

static void
test_documents(void)
{
	CHECK_YJ_ALL("a: 1\n---\nb: 2\n...\n---\n- 3\n",
	    "[{\"a\":1},{\"b\":2},[3]]");
	CHECK_YJ_ALL("# only a comment\n---\n# another\n---\na: 1\n---\n",
	    "[{\"a\":1}]");
	CHECK_YJ_ALL("--- ~\n--- 0\n", "[0]");
	CHECK_YJ_ALL("", "[]");
	CHECK_YJ_ALL("# nothing\n", "[]");
	CHECK_YJ("---\n# comment\n---\nkind: A\n---\nkind: B\n",
	    "{\"kind\":\"A\"}");
	CHECK_YJ("", "ERR: empty document");
	CHECK_YJ("# just comments\n---\n", "ERR: empty document");
	/* parse stops at the first document; later errors do not matter. */
	CHECK_YJ("a: 1\n---\nb: [\n", "{\"a\":1}");
	CHECK_YJ_ALL("a: 1\n---\nb: [\n",
	    "ERR: yaml: line 3: did not find expected node content");
}

static void
test_errors(void)
{
	CHECK_YJ("a: b\nc: d: e\n",
	    "ERR: yaml: line 2: mapping values are not allowed in this context");
	CHECK_YJ("a:\n  - 1\n - 2\n",
	    "ERR: yaml: line 3: did not find expected key");
	CHECK_YJ("a: 1\nb: *nope\n",
	    "ERR: yaml: line 2: unknown anchor 'nope' referenced");
	CHECK_YJ("{a: [b", "ERR: yaml: line 1: did not find expected ',' or ']'");
	CHECK_YJ("a: 1\nb: 'open\n",
	    "ERR: yaml: line 2: found unexpected end of stream");
	CHECK_YJ("a: 1\n\tb: 2\n",
	    "ERR: yaml: line 2: found a tab character that violates indentation");
	CHECK_YJ("a: 1\nb: \xff\n",
	    "ERR: yaml: line 2: invalid leading UTF-8 octet");
	CHECK_YJ("v: !!int abc\n",
	    "ERR: yaml: line 1: cannot decode !!str `abc` as a !!int");
	CHECK_YJ("v: !!bool maybe\n",
	    "ERR: yaml: line 1: cannot decode !!str `maybe` as a !!bool");
	CHECK_YJ("x: 1\n? [a]\n: b\n", "ERR: yaml: line 2: unsupported map key");
	CHECK_YJ("m:\n  <<: 5\n", "ERR: yaml: line 2: map merge requires map "
	    "or sequence of maps as the value");
}

static void
test_limits(void)
{
	static char	 buf[4096];
	char		*got, c;
	size_t		 i, j, n = 0;

	/* Exponential aliasing is refused. */
	n += (size_t)snprintf(buf + n, sizeof buf - n,
	    "a: &a [x,x,x,x,x,x,x,x,x,x]\n");
	for (i = 1; i < 9; i++) {
		c = (char)('a' + i);
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%c: &%c [", c, c);
		for (j = 0; j < 10; j++) {
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s*%c",
			    j ? "," : "", c - 1);
		}
		n += (size_t)snprintf(buf + n, sizeof buf - n, "]\n");
	}
	got = yj(buf);
	CHECK(strstr(got, "excessive aliasing") != NULL);
	free(got);

	/* Deep nesting is refused, not a stack overflow. */
	n = 0;
	buf[n++] = '-';
	buf[n++] = ' ';
	for (i = 0; i < 1200; i++)
		buf[n++] = '[';
	for (i = 0; i < 1200; i++)
		buf[n++] = ']';
	buf[n] = '\0';
	got = yj(buf);
	CHECK_STR(got, "ERR: yaml: line 1: exceeded max depth of 1000");
	free(got);
}

/* JSON is YAML flow syntax: both paths must agree with cJSON_Parse. */
static void
test_json(void)
{
	static const char *docs[] = {
		"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		"{\"name\":\"c\",\"labels\":{\"a.b/c\":\"d\"}},\"data\":"
		"{\"k\":\"v\",\"n\":\"1\"}}",
		"{\"a\": [1, -2, 3.25, 1e3, true, false, null, \"s\", {}, []],"
		" \"b\": {\"c\": {\"d\": \"e \\\"q\\\" \\\\ \\n \\t \\u00e9\"}},"
		" \"yes\": \"no\", \"num\": \"123\", \"empty\": \"\"}",
		"[{\"x\":1},{\"y\":[2]}]",
		"{\"s\":\"a\\/b\",\"u\":\"\\u00e9t\\u00e9\"}",
	};
	size_t	 i;
	cJSON	*want, *got, *all;
	char	*cause, *prefixed, *w, *g;

	for (i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		want = cJSON_Parse(docs[i]);
		CHECK(want != NULL);

		got = yamljson_parse(docs[i], strlen(docs[i]), &cause);
		CHECK(got != NULL && cJSON_Compare(want, got, 1));
		cJSON_Delete(got);

		/* "--- " forces the libyaml path. */
		if ((prefixed = malloc(strlen(docs[i]) + 5)) == NULL)
			abort();
		sprintf(prefixed, "--- %s", docs[i]);
		got = yamljson_parse(prefixed, strlen(prefixed), &cause);
		CHECK(got != NULL);
		w = cJSON_PrintUnformatted(want);
		g = got ? cJSON_PrintUnformatted(got) : NULL;
		CHECK_STR(g, w);
		free(w);
		free(g);
		cJSON_Delete(got);
		free(prefixed);

		/* cJSON's own pretty printing (tabs) through libyaml. */
		w = cJSON_Print(want);
		if ((prefixed = malloc(strlen(w) + 5)) == NULL)
			abort();
		sprintf(prefixed, "---\n%s", w);
		got = yamljson_parse(prefixed, strlen(prefixed), &cause);
		CHECK(got != NULL && cJSON_Compare(want, got, 1));
		cJSON_Delete(got);
		free(prefixed);
		free(w);

		all = yamljson_parse_all(docs[i], strlen(docs[i]), &cause);
		CHECK(all != NULL && cJSON_GetArraySize(all) == 1 &&
		    cJSON_Compare(want, cJSON_GetArrayItem(all, 0), 1));
		cJSON_Delete(all);
		cJSON_Delete(want);
	}
	/* Not exactly one JSON value: falls back to YAML. */
	CHECK_YJ_ALL("{\"a\": 1}\n---\n{\"b\": 2}\n", "[{\"a\":1},{\"b\":2}]");
	CHECK_YJ("{a: 1, b: [x, 2]}", "{\"a\":1,\"b\":[\"x\",2]}");
	/* Input need not be NUL-terminated. */
	got = yamljson_parse("{\"a\":1}garbage", 7, &cause);
	CHECK(got != NULL && cJSON_GetObjectItem(got, "a") != NULL);
	cJSON_Delete(got);
	got = yamljson_parse("a: 1\nb: 2", 4, &cause);
	g = got ? cJSON_PrintUnformatted(got) : NULL;
	CHECK_STR(g, "{\"a\":1}");
	free(g);
	cJSON_Delete(got);
}

/* Numbers print exactly (cJSON alone rounds to 15 digits, found by
 * tests/fuzz): big whole numbers as digits, others in the shortest exact
 * form, so a stored object reads back as it was written. */
static void
test_print_numbers(void)
{
	static const char *const in[] = {
		"{\"a\":9007199254740992,\"b\":1e15,\"c\":-3000000000,"
		"\"d\":0.1,\"e\":[5000000001,3.333333259334743e+42],"
		"\"f\":12,\"g\":0.30000000000000004}",
		"123456789012",
	};
	static const char *const want[] = {
		"{\"a\":9007199254740992,\"b\":1000000000000000,"
		"\"c\":-3000000000,\"d\":0.1,\"e\":[5000000001,"
		"3.333333259334743e+42],\"f\":12,"
		"\"g\":0.30000000000000004}",
		"123456789012",
	};
	size_t i;

	for (i = 0; i < sizeof in / sizeof in[0]; i++) {
		cJSON *j = cJSON_Parse(in[i]), *back;
		char *s = json_print(j);

		CHECK_STR(s, want[i]);
		back = cJSON_Parse(s);
		CHECK(json_equal(j, back));
		cJSON_Delete(back);
		cJSON_Delete(j);
		free(s);
	}
}

/* json_print's bytes are json_print_reference's (cJSON's printer). */
static void
check_same_as_cjson(const cJSON *j, const char *want)
{
	char *s = json_print(j), *ref = json_print_reference(j);

	CHECK_STR(s, ref);
	if (want != NULL)
		CHECK_STR(s, want);
	free(s);
	free(ref);
}

/* json_print writes what cJSON's printer writes: escapes at every
   position of the 8-byte scan, control bytes, UTF-8, raw items, empty
   containers, numbers of every kind. */
static void
test_print_same_as_cjson(void)
{
	static const char *const in[] = {
		"{\"a\":\"\",\"b\":\"x\",\"c\":\"12345678\",\"d\":\"123456789\"}",
		"[\"q\\\"uote\",\"back\\\\slash\",\"\\b\\f\\n\\r\\t\",\"\\u0001\\u001f\\u007f\"]",
		"[\"abcdefg\\\"\",\"abcdefgh\\\"\",\"\\\"abcdefgh\",\"abcdefghijklmnop\\n\"]",
		"{\"h\\u00e9llo w\\u00f6rld \\u65e5\\u672c\":\"\\u00ff\\ud83d\\ude00 caf\\u00e9\"}",
		"{\"e\":{},\"f\":[],\"g\":[{}],\"h\":[[],[[]]],\"n\":null,\"t\":true,\"x\":false}",
		"[0,-0,1,-1,2147483647,-2147483648,2147483648,-2147483649,9007199254740993,"
		"1e20,1e21,1e22,0.1,-0.5,3.14159265358979,1.7976931348623157e308,"
		"5e-324,123456789.123456789,1e-7,100000000000000000000000]",
		"{\"metadata\":{\"name\":\"p-000001\",\"labels\":{\"app.kubernetes.io/name\":\"ray\"}},"
		"\"spec\":{\"containers\":[{\"name\":\"c\",\"args\":[\"python -c 'print(\\\"hi\\\")'\"]}]}}",
		"\"just a string\\twith a tab\"",
		"42",
		"null",
	};
	size_t i;

	for (i = 0; i < sizeof in / sizeof in[0]; i++) {
		cJSON *j = cJSON_Parse(in[i]);

		CHECK(j != NULL);
		if (j == NULL)
			continue;
		check_same_as_cjson(j, NULL);
		cJSON_Delete(j);
	}
	{
		/* A raw item, a NULL key and a NULL string print as cJSON's. */
		cJSON *o = cJSON_CreateObject(), *r = cJSON_CreateRaw("{\"x\":1}");
		cJSON *str = cJSON_CreateString("v");

		cJSON_AddItemToObject(o, "raw", r);
		cJSON_AddItemToObject(o, "k", str);
		free(str->valuestring);
		str->valuestring = NULL;
		check_same_as_cjson(o, "{\"raw\":{\"x\":1},\"k\":\"\"}");
		cJSON_Delete(o);
	}
	{
		/* Longer than the first scratch buffer, with escapes. */
		size_t n = 20000, k;
		char *big = malloc(n + 1);
		cJSON *j;

		for (k = 0; k < n; k++)
			big[k] = (char)(k % 97 == 0 ? '"' : k % 89 == 0 ? '\n' :
			    'a' + (int)(k % 26));
		big[n] = '\0';
		j = cJSON_CreateString(big);
		check_same_as_cjson(j, NULL);
		free(big);
		cJSON_Delete(j);
	}
}

static void
test_file(void)
{
	char	 path[] = "/tmp/test-yamljson-XXXXXX", *cause = NULL, *s;
	int	 fd;
	FILE	*f;
	cJSON	*docs;

	fd = mkstemp(path);
	CHECK(fd != -1);
	f = fdopen(fd, "w");
	fputs("kind: A\n---\nkind: B\n", f);
	fclose(f);
	docs = yamljson_load_file(path, &cause);
	s = docs ? cJSON_PrintUnformatted(docs) : NULL;
	CHECK_STR(s, "[{\"kind\":\"A\"},{\"kind\":\"B\"}]");
	free(s);
	cJSON_Delete(docs);

	f = fopen(path, "w");
	fputs("a: [\n", f);
	fclose(f);
	docs = yamljson_load_file(path, &cause);
	CHECK(docs == NULL);
	CHECK(cause != NULL && strstr(cause, path) == cause &&
	    strstr(cause, ": yaml: line 1: ") != NULL);
	free(cause);
	unlink(path);

	docs = yamljson_load_file(path, &cause);
	CHECK(docs == NULL);
	CHECK(cause != NULL && strstr(cause, "No such file") != NULL);
	free(cause);
}

/* Repeated keys: the last value wins, in small and large objects. */
static void
test_duplicates(void)
{
	cJSON *o = cJSON_Parse("{\"a\":1,\"b\":{\"x\":1,\"x\":2},\"a\":3,"
	    "\"l\":[{\"k\":1,\"k\":2}]}");
	char big[2048], *dups, *p = big;
	int i;

	dups = json_drop_duplicates(o);
	CHECK(dups != NULL && strcmp(dups, "a\nb.x\nl.k") == 0);
	CHECK(cJSON_GetNumberValue(json_at(o, "a")) == 3);
	CHECK(cJSON_GetArraySize(o) == 3);
	CHECK(cJSON_GetNumberValue(json_at(o, "b.x")) == 2);
	CHECK(cJSON_GetArraySize(json_at(o, "b")) == 1);
	free(dups);
	CHECK(json_drop_duplicates(o) == NULL);
	cJSON_Delete(o);
	p += sprintf(p, "{");
	for (i = 0; i < 40; i++)
		p += sprintf(p, "\"k%d\":%d,", i % 30, i);
	sprintf(p - 1, "}");
	o = cJSON_Parse(big);
	dups = json_drop_duplicates(o);
	CHECK(dups != NULL && strncmp(dups, "k0\nk1\n", 6) == 0);
	CHECK(cJSON_GetArraySize(o) == 30);
	CHECK(cJSON_GetNumberValue(json_at(o, "k5")) == 35);
	CHECK(cJSON_GetNumberValue(json_at(o, "k29")) == 29);
	free(dups);
	cJSON_Delete(o);
}

/* A directory's *.yaml files, in name order; a bad one skipped and named. */
static void
test_dir(void)
{
	char dir[] = "/tmp/test-yamljson.XXXXXX", path[256], *cause = NULL;
	const char *files[][2] = {
		{ "b.yaml", "name: b1\n---\nname: b2\n" },
		{ "a.yaml", "name: a1\n" },
		{ "c.yaml", "name: [unclosed\n" },
		{ "d.yml", "name: not-yaml-suffix\n" },
	};
	cJSON *docs;
	size_t i;
	FILE *f;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		CHECK((f = fopen(path, "w")) != NULL);
		fputs(files[i][1], f);
		fclose(f);
	}
	docs = yamljson_load_dir(dir, &cause);
	CHECK(docs != NULL && cJSON_GetArraySize(docs) == 3);
	CHECK_STR(json_str(cJSON_GetArrayItem(docs, 0), "name"), "a1");
	CHECK_STR(json_str(cJSON_GetArrayItem(docs, 1), "name"), "b1");
	CHECK_STR(json_str(cJSON_GetArrayItem(docs, 2), "name"), "b2");
	CHECK(cause != NULL && strstr(cause, "c.yaml") != NULL);
	free(cause);
	cJSON_Delete(docs);
	for (i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
		unlink(path);
	}
	rmdir(dir);
	CHECK(yamljson_load_dir(dir, &cause) == NULL && cause != NULL);
	free(cause);
}

int
main(void)
{
	test_duplicates();
	test_scalars();
	test_blocks();
	test_structure();
	test_anchors();
	test_documents();
	test_errors();
	test_limits();
	test_json();
	test_print_numbers();
	test_print_same_as_cjson();
	test_file();
	test_dir();
	return check_result("test-yamljson");
}
