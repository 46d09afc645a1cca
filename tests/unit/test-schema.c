/*
 * Tests for schema: every keyword with a passing and a failing value and the
 * exact Kubernetes-style cause, defaults (nested and inside defaulted
 * objects), pruning against x-kubernetes-preserve-unknown-fields, field
 * paths through arrays and maps, and a whole CRD read from YAML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/yamljson.h"
#include "registry/schema.h"

static schema *
compile_yaml(const char *yaml)
{
	cJSON	*j;
	schema	*s;
	char	*cause = NULL;

	j = yamljson_parse(yaml, strlen(yaml), &cause);
	if (j == NULL) {
		fprintf(stderr, "bad test schema: %s\n", cause);
		free(cause);
		return NULL;
	}
	s = schema_compile(j, &cause);
	if (s == NULL) {
		fprintf(stderr, "schema_compile: %s\n", cause);
		free(cause);
	}
	cJSON_Delete(j);
	return s;
}

/* The cause of compiling a schema that must fail. */
static char *
compile_error(const char *yaml)
{
	cJSON	*j;
	schema	*s;
	char	*cause = NULL;

	j = yamljson_parse(yaml, strlen(yaml), NULL);
	s = schema_compile(j, &cause);
	cJSON_Delete(j);
	if (s != NULL) {
		schema_free(s);
		return strdup("(compiled)");
	}
	return cause;
}

struct result {
	int	 n;
	char	*obj;		/* the object after defaulting and pruning */
	char	*causes;
};

static struct result
run(const schema *s, const char *yaml)
{
	struct result	 r;
	cJSON		*obj, *causes = cJSON_CreateArray();

	obj = yamljson_parse(yaml, strlen(yaml), NULL);
	r.n = schema_validate(s, obj, causes);
	r.obj = cJSON_PrintUnformatted(obj);
	r.causes = cJSON_PrintUnformatted(causes);
	cJSON_Delete(obj);
	cJSON_Delete(causes);
	return r;
}

static void
done(struct result *r)
{
	free(r->obj);
	free(r->causes);
}

/* Validate yaml; expect no violation and the given resulting object. */
#define CHECK_OK(s_, yaml_, want_) do {					\
	struct result r_ = run((s_), (yaml_));				\
	CHECK_STR(r_.causes, "[]");					\
	CHECK(r_.n == 0);						\
	CHECK_STR(r_.obj, (want_));					\
	done(&r_);							\
} while (0)

/* Validate yaml; expect exactly the given causes (as compact JSON). */
#define CHECK_BAD(s_, yaml_, n_, want_) do {				\
	struct result r_ = run((s_), (yaml_));				\
	CHECK(r_.n == (n_));						\
	CHECK_STR(r_.causes, (want_));					\
	done(&r_);							\
} while (0)

#define CAUSE(reason, msg, field)					\
	"{\"reason\":\"" reason "\",\"message\":\"" msg "\",\"field\":\""	\
	field "\"}"

static void
test_types(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      s: {type: string}\n"
	    "      i: {type: integer}\n"
	    "      n: {type: number}\n"
	    "      b: {type: boolean}\n"
	    "      a: {type: array, items: {type: string}}\n"
	    "      o: {type: object, x-kubernetes-preserve-unknown-fields: true}\n"
	    "      any: {}\n");

	CHECK(s != NULL);
	CHECK_OK(s, "spec: {s: x, i: 3, n: 1.5, b: true, a: [x], o: {k: 1},"
	    " any: [1, {x: 2}]}",
	    "{\"spec\":{\"s\":\"x\",\"i\":3,\"n\":1.5,\"b\":true,\"a\":[\"x\"],"
	    "\"o\":{\"k\":1},\"any\":[1,{\"x\":2}]}}");
	/* integer accepts 2.0, number accepts integers. */
	CHECK_OK(s, "{\"spec\": {\"i\": 2.0, \"n\": 4}}",
	    "{\"spec\":{\"i\":2,\"n\":4}}");
	CHECK_BAD(s, "spec: {i: 1.5}", 1, "[" CAUSE("FieldValueTypeInvalid",
	    "Invalid value: \\\"number\\\": spec.i in body must be of type "
	    "integer: \\\"number\\\"", "spec.i") "]");
	CHECK_BAD(s, "spec: {i: \"3\"}", 1, "[" CAUSE("FieldValueTypeInvalid",
	    "Invalid value: \\\"string\\\": spec.i in body must be of type "
	    "integer: \\\"string\\\"", "spec.i") "]");
	CHECK_BAD(s, "spec: {s: 1, b: yes_please, n: x, a: x, o: []}", 5, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"integer\\\": "
	    "spec.s in body must be of type string: \\\"integer\\\"", "spec.s")
	    ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"string\\\": "
	    "spec.b in body must be of type boolean: \\\"string\\\"", "spec.b")
	    ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"string\\\": "
	    "spec.n in body must be of type number: \\\"string\\\"", "spec.n")
	    ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"string\\\": "
	    "spec.a in body must be of type array: \\\"string\\\"", "spec.a")
	    ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"array\\\": "
	    "spec.o in body must be of type object: \\\"array\\\"", "spec.o")
	    "]");
	CHECK_BAD(s, "spec: {a: [x, 2]}", 1, "[" CAUSE("FieldValueTypeInvalid",
	    "Invalid value: \\\"integer\\\": spec.a[1] in body must be of type "
	    "string: \\\"integer\\\"", "spec.a[1]") "]");
	/* A null where a type is wanted, with no default. */
	CHECK_BAD(s, "spec: {s: null}", 1, "[" CAUSE("FieldValueTypeInvalid",
	    "Invalid value: \\\"null\\\": spec.s in body must be of type "
	    "string: \\\"null\\\"", "spec.s") "]");
	/* A typeless field takes anything, null too. */
	CHECK_OK(s, "spec: {any: null}", "{\"spec\":{\"any\":null}}");
	CHECK_BAD(s, "spec: 5", 1, "[" CAUSE("FieldValueTypeInvalid",
	    "Invalid value: \\\"integer\\\": spec in body must be of type "
	    "object: \\\"integer\\\"", "spec") "]");
	schema_free(s);
}

static void
test_required(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "required: [spec]\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    required: [name, replicas, extra]\n"
	    "    x-kubernetes-preserve-unknown-fields: true\n"
	    "    properties:\n"
	    "      name: {type: string}\n"
	    "      replicas: {type: integer}\n");

	CHECK_OK(s, "spec: {name: a, replicas: 1, extra: 0}",
	    "{\"spec\":{\"name\":\"a\",\"replicas\":1,\"extra\":0}}");
	CHECK_BAD(s, "kind: X", 1, "[" CAUSE("FieldValueRequired",
	    "Required value", "spec") "]");
	CHECK_BAD(s, "spec: {name: a}", 2, "["
	    CAUSE("FieldValueRequired", "Required value", "spec.replicas") ","
	    CAUSE("FieldValueRequired", "Required value", "spec.extra") "]");
	/* Present but null is a type problem, not a missing field. */
	CHECK_BAD(s, "spec: {name: a, replicas: null, extra: 1}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"null\\\": "
	    "spec.replicas in body must be of type integer: \\\"null\\\"",
	    "spec.replicas") "]");
	schema_free(s);
}

static void
test_enum(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      policy: {type: string, enum: [A, B]}\n"
	    "      level: {type: integer, enum: [1, 2]}\n");

	CHECK_OK(s, "spec: {policy: B, level: 2}",
	    "{\"spec\":{\"policy\":\"B\",\"level\":2}}");
	CHECK_BAD(s, "spec: {policy: Foo, level: 3}", 2, "["
	    CAUSE("FieldValueNotSupported", "Unsupported value: \\\"Foo\\\": "
	    "supported values: \\\"A\\\", \\\"B\\\"", "spec.policy") ","
	    CAUSE("FieldValueNotSupported", "Unsupported value: 3: "
	    "supported values: \\\"1\\\", \\\"2\\\"", "spec.level") "]");
	schema_free(s);
}

static void
test_numbers(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      replicas: {type: integer, minimum: 1, maximum: 10}\n"
	    "      ratio: {type: number, minimum: 0, exclusiveMinimum: true,\n"
	    "              maximum: 1, exclusiveMaximum: true}\n"
	    "      step: {type: number, multipleOf: 0.5}\n"
	    "      small: {type: integer, format: int32}\n"
	    "      big: {type: integer, format: int64}\n");

	CHECK_OK(s, "spec: {replicas: 1, ratio: 0.5, step: 1.5, small: -5,"
	    " big: 5000000000}",
	    "{\"spec\":{\"replicas\":1,\"ratio\":0.5,\"step\":1.5,"
	    "\"small\":-5,\"big\":5000000000}}");
	CHECK_OK(s, "spec: {replicas: 10}", "{\"spec\":{\"replicas\":10}}");
	CHECK_BAD(s, "spec: {replicas: 0}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 0: spec.replicas in body should be greater than or "
	    "equal to 1", "spec.replicas") "]");
	CHECK_BAD(s, "spec: {replicas: 11}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 11: spec.replicas in body should be less than or "
	    "equal to 10", "spec.replicas") "]");
	CHECK_BAD(s, "spec: {ratio: 0}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 0: spec.ratio in body should be greater than 0",
	    "spec.ratio") "]");
	CHECK_BAD(s, "spec: {ratio: 1}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 1: spec.ratio in body should be less than 1",
	    "spec.ratio") "]");
	CHECK_BAD(s, "spec: {ratio: 1.25}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 1.25: spec.ratio in body should be less than 1",
	    "spec.ratio") "]");
	CHECK_BAD(s, "spec: {step: 0.75}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 0.75: spec.step in body should be a multiple of 0.5",
	    "spec.step") "]");
	CHECK_BAD(s, "spec: {small: 2147483648}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"2147483648\\\": "
	    "spec.small in body must be of type int32: \\\"2147483648\\\"",
	    "spec.small") "]");
	CHECK_OK(s, "spec: {small: -2147483648}",
	    "{\"spec\":{\"small\":-2147483648}}");
	CHECK_BAD(s, "spec: {big: 1e19}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: "
	    "\\\"10000000000000000000\\\": spec.big in body must be of type "
	    "int64: \\\"10000000000000000000\\\"", "spec.big") "]");
	schema_free(s);
}

static void
test_strings(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      name: {type: string, minLength: 2, maxLength: 4}\n"
	    "      id: {type: string, pattern: '^[a-z](?:[-a-z0-9]*[a-z0-9])?$'}\n"
	    "      ver: {type: string, pattern: '^v\\d+\\.\\d+$'}\n"
	    "      word: {type: string, pattern: '^\\w+\\s\\S+$'}\n"
	    "      br: {type: string, pattern: '^[\\d\\-x\\]]+$'}\n"
	    "      when: {type: string, format: date-time}\n"
	    "      other: {type: string, format: email}\n");

	CHECK_OK(s, "spec: {name: \xc3\xa9t\xc3\xa9s, id: my-app-1, ver: v1.25,"
	    " word: hello wo-rld, br: '1-x]2', when: '2024-05-01T10:20:30Z',"
	    " other: anything}",
	    "{\"spec\":{\"name\":\"\xc3\xa9t\xc3\xa9s\",\"id\":\"my-app-1\","
	    "\"ver\":\"v1.25\",\"word\":\"hello wo-rld\",\"br\":\"1-x]2\","
	    "\"when\":\"2024-05-01T10:20:30Z\",\"other\":\"anything\"}}");
	CHECK_OK(s, "spec: {when: '2024-05-01T10:20:30.123+02:00'}",
	    "{\"spec\":{\"when\":\"2024-05-01T10:20:30.123+02:00\"}}");
	CHECK_BAD(s, "spec: {name: a}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"a\\\": spec.name in body should be at least 2 "
	    "chars long", "spec.name") "]");
	CHECK_BAD(s, "spec: {name: abcde}", 1, "[" CAUSE("FieldValueTooLong",
	    "Too long: may not be longer than 4", "spec.name") "]");
	CHECK_BAD(s, "spec: {id: My-App}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"My-App\\\": spec.id in body should match "
	    "'^[a-z](?:[-a-z0-9]*[a-z0-9])?$'", "spec.id") "]");
	CHECK_BAD(s, "spec: {id: app-}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"app-\\\": spec.id in body should match "
	    "'^[a-z](?:[-a-z0-9]*[a-z0-9])?$'", "spec.id") "]");
	CHECK_BAD(s, "spec: {ver: v1x2}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"v1x2\\\": spec.ver in body should match "
	    "'^v\\\\d+\\\\.\\\\d+$'", "spec.ver") "]");
	CHECK_BAD(s, "spec: {word: 'a-b c'}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"a-b c\\\": spec.word"
	    " in body should match '^\\\\w+\\\\s\\\\S+$'", "spec.word") "]");
	CHECK_BAD(s, "spec: {br: '1\\2'}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"1\\\\\\\\2\\\": spec.br in body should match "
	    "'^[\\\\d\\\\-x\\\\]]+$'", "spec.br") "]");
	CHECK_BAD(s, "spec: {when: yesterday}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"yesterday\\\": "
	    "spec.when in body must be of type date-time: \\\"yesterday\\\"",
	    "spec.when") "]");
	CHECK_BAD(s, "spec: {when: '2024-13-01T00:00:00Z'}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: "
	    "\\\"2024-13-01T00:00:00Z\\\": spec.when in body must be of type "
	    "date-time: \\\"2024-13-01T00:00:00Z\\\"", "spec.when") "]");
	schema_free(s);
}

static void
test_arrays(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      tags: {type: array, minItems: 1, maxItems: 3,\n"
	    "             items: {type: string}}\n"
	    "      uniq: {type: array, uniqueItems: true, items: {}}\n"
	    "      set: {type: array, x-kubernetes-list-type: set,\n"
	    "            items: {type: string}}\n"
	    "      ports:\n"
	    "        type: array\n"
	    "        x-kubernetes-list-type: map\n"
	    "        x-kubernetes-list-map-keys: [port, protocol]\n"
	    "        items:\n"
	    "          type: object\n"
	    "          properties:\n"
	    "            port: {type: integer}\n"
	    "            protocol: {type: string, default: TCP}\n"
	    "            name: {type: string}\n");

	CHECK_OK(s, "spec: {tags: [a, b], uniq: [1, '1', {a: 1}], set: [x, y],"
	    " ports: [{port: 80}, {port: 80, protocol: UDP}]}",
	    "{\"spec\":{\"tags\":[\"a\",\"b\"],\"uniq\":[1,\"1\",{\"a\":1}],"
	    "\"set\":[\"x\",\"y\"],\"ports\":[{\"port\":80,\"protocol\":"
	    "\"TCP\"},{\"port\":80,\"protocol\":\"UDP\"}]}}");
	CHECK_BAD(s, "spec: {tags: []}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 0: spec.tags in body should have at least 1 items",
	    "spec.tags") "]");
	CHECK_BAD(s, "spec: {tags: [a, b, c, d]}", 1, "["
	    CAUSE("FieldValueTooMany", "Too many: 4: must have at most 3 items",
	    "spec.tags") "]");
	CHECK_BAD(s, "spec: {uniq: [{a: 1}, 2, {a: 1}]}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": spec.uniq in "
	    "body shouldn't contain duplicates", "spec.uniq") "]");
	CHECK_BAD(s, "spec: {set: [x, y, x]}", 1, "["
	    CAUSE("FieldValueDuplicate", "Duplicate value: \\\"x\\\"",
	    "spec.set[2]") "]");
	/* The map key tuple is compared after defaulting. */
	CHECK_BAD(s, "spec: {ports: [{port: 80, name: a},"
	    " {port: 80, protocol: TCP, name: b}]}", 1, "["
	    CAUSE("FieldValueDuplicate", "Duplicate value: {\\\"port\\\":80,"
	    "\\\"protocol\\\":\\\"TCP\\\"}", "spec.ports[1]") "]");
	schema_free(s);
}

static void
test_nullable_defaults(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    default: {}\n"
	    "    properties:\n"
	    "      mode: {type: string, default: auto}\n"
	    "      opt: {type: string, nullable: true}\n"
	    "      optd: {type: string, nullable: true, default: d}\n"
	    "      resources:\n"
	    "        type: object\n"
	    "        default: {}\n"
	    "        properties:\n"
	    "          cpu: {type: string, default: '1'}\n"
	    "          limits:\n"
	    "            type: object\n"
	    "            default: {memory: 1Gi}\n"
	    "            properties:\n"
	    "              memory: {type: string}\n"
	    "              burst: {type: integer, default: 2}\n"
	    "      list:\n"
	    "        type: array\n"
	    "        items:\n"
	    "          type: object\n"
	    "          properties:\n"
	    "            weight: {type: integer, default: 1}\n"
	    "            tags: {type: array, default: [a], items: {type: string}}\n");
	const char *full =
	    "{\"spec\":{\"mode\":\"auto\",\"optd\":\"d\",\"resources\":"
	    "{\"cpu\":\"1\",\"limits\":{\"memory\":\"1Gi\",\"burst\":2}}}}";

	/* A missing spec is defaulted, and so is everything below it. */
	CHECK_OK(s, "kind: X", "{\"kind\":\"X\",\"spec\":{\"mode\":\"auto\","
	    "\"optd\":\"d\",\"resources\":{\"cpu\":\"1\",\"limits\":"
	    "{\"memory\":\"1Gi\",\"burst\":2}}}}");
	CHECK_OK(s, "{}", full);
	/* Nulls of non-nullable fields with a default take the default. */
	CHECK_OK(s, "spec: null", full);
	CHECK_OK(s, "spec: {mode: null, resources: null}",
	    "{\"spec\":{\"mode\":\"auto\",\"resources\":{\"cpu\":\"1\","
	    "\"limits\":{\"memory\":\"1Gi\",\"burst\":2}},\"optd\":\"d\"}}");
	/* Nullable nulls stay and are not defaulted. */
	CHECK_OK(s, "spec: {opt: null, optd: null}",
	    "{\"spec\":{\"opt\":null,\"optd\":null,\"mode\":\"auto\","
	    "\"resources\":{\"cpu\":\"1\",\"limits\":{\"memory\":\"1Gi\","
	    "\"burst\":2}}}}");
	/* Given values win; defaults fill around them. */
	CHECK_OK(s, "spec: {mode: manual, resources: {limits: {burst: 5}}}",
	    "{\"spec\":{\"mode\":\"manual\",\"resources\":{\"limits\":"
	    "{\"burst\":5},\"cpu\":\"1\"},\"optd\":\"d\"}}");
	CHECK_OK(s, "spec: {list: [{}, {weight: 3, tags: []}]}",
	    "{\"spec\":{\"list\":[{\"weight\":1,\"tags\":[\"a\"]},"
	    "{\"weight\":3,\"tags\":[]}],\"mode\":\"auto\",\"optd\":\"d\","
	    "\"resources\":{\"cpu\":\"1\",\"limits\":{\"memory\":\"1Gi\","
	    "\"burst\":2}}}}");
	schema_free(s);

	/* Defaults are validated like anything else. */
	s = compile_yaml("type: object\nproperties:\n  n: {type: integer, "
	    "minimum: 5, default: 1}\n");
	CHECK_BAD(s, "{}", 1, "[" CAUSE("FieldValueInvalid", "Invalid value: "
	    "1: n in body should be greater than or equal to 5", "n") "]");
	schema_free(s);
}

static void
test_pruning(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      known: {type: string}\n"
	    "      closed: {type: object}\n"
	    "      open:\n"
	    "        type: object\n"
	    "        x-kubernetes-preserve-unknown-fields: true\n"
	    "        properties:\n"
	    "          n: {type: integer}\n"
	    "          inner:\n"
	    "            type: object\n"
	    "            properties:\n"
	    "              a: {type: string}\n"
	    "      list:\n"
	    "        type: array\n"
	    "        items:\n"
	    "          type: object\n"
	    "          properties:\n"
	    "            a: {type: string}\n"
	    "      raw: {x-kubernetes-preserve-unknown-fields: true}\n"
	    "  status:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      phase: {type: string}\n");

	/* Unknown fields go silently; the root's metadata stays. */
	CHECK_OK(s, "apiVersion: x/v1\nkind: K\nmetadata: {name: n, labels: "
	    "{a: b}}\nextra: 1\nspec: {known: k, unknown: u, closed: {x: 1},"
	    " list: [{a: x, b: y}], raw: {any: [1, {deep: true}]}}\n"
	    "status: {phase: Ok, junk: 1}\n",
	    "{\"apiVersion\":\"x/v1\",\"kind\":\"K\",\"metadata\":{\"name\":"
	    "\"n\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"known\":\"k\","
	    "\"closed\":{},\"list\":[{\"a\":\"x\"}],\"raw\":{\"any\":[1,"
	    "{\"deep\":true}]}},\"status\":{\"phase\":\"Ok\"}}");
	/* Below preserve-unknown-fields known fields are still checked and
	 * pruned by their own schema. */
	CHECK_OK(s, "spec: {open: {n: 1, free: {x: 1}, inner: {a: s, b: t}}}",
	    "{\"spec\":{\"open\":{\"n\":1,\"free\":{\"x\":1},\"inner\":"
	    "{\"a\":\"s\"}}}}");
	CHECK_BAD(s, "spec: {open: {n: x}}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"string\\\": "
	    "spec.open.n in body must be of type integer: \\\"string\\\"",
	    "spec.open.n") "]");
	/* Pruned fields are not validated. */
	CHECK_OK(s, "spec: {list: [{a: x, b: [1, 2]}]}",
	    "{\"spec\":{\"list\":[{\"a\":\"x\"}]}}");
	schema_free(s);

	/* A preserving root keeps everything it does not know. */
	s = compile_yaml("type: object\nx-kubernetes-preserve-unknown-fields:"
	    " true\nproperties:\n  spec: {type: object}\n");
	CHECK_OK(s, "spec: {a: 1}\nother: {b: 2}\n",
	    "{\"spec\":{},\"other\":{\"b\":2}}");
	schema_free(s);
}

static void
test_int_or_string(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      maxUnavailable:\n"
	    "        x-kubernetes-int-or-string: true\n"
	    "        anyOf: [{type: integer}, {type: string}]\n"
	    "        pattern: '^\\d+%?$'\n");

	CHECK_OK(s, "spec: {maxUnavailable: 1}",
	    "{\"spec\":{\"maxUnavailable\":1}}");
	CHECK_OK(s, "spec: {maxUnavailable: 25%}",
	    "{\"spec\":{\"maxUnavailable\":\"25%\"}}");
	CHECK_BAD(s, "spec: {maxUnavailable: true}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"boolean\\\": "
	    "spec.maxUnavailable in body must be of type integer,string: "
	    "\\\"boolean\\\"", "spec.maxUnavailable") "]");
	CHECK_BAD(s, "spec: {maxUnavailable: 1.5}", 1, "["
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"number\\\": "
	    "spec.maxUnavailable in body must be of type integer,string: "
	    "\\\"number\\\"", "spec.maxUnavailable") "]");
	CHECK_BAD(s, "spec: {maxUnavailable: lots}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"lots\\\": "
	    "spec.maxUnavailable in body should match '^\\\\d+%?$'",
	    "spec.maxUnavailable") "]");
	schema_free(s);
}

static void
test_maps(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      selector:\n"
	    "        type: object\n"
	    "        maxProperties: 2\n"
	    "        additionalProperties: {type: string, maxLength: 3}\n"
	    "      free: {type: object, additionalProperties: true}\n"
	    "      resources:\n"
	    "        type: object\n"
	    "        additionalProperties:\n"
	    "          x-kubernetes-int-or-string: true\n"
	    "          default: 0\n");

	CHECK_OK(s, "spec: {selector: {app: web}, free: {a: {b: 1}},"
	    " resources: {cpu: 2, memory: 1Gi, gpu: null}}",
	    "{\"spec\":{\"selector\":{\"app\":\"web\"},\"free\":{\"a\":{\"b\":"
	    "1}},\"resources\":{\"cpu\":2,\"memory\":\"1Gi\",\"gpu\":0}}}");
	CHECK_BAD(s, "spec: {selector: {app.kubernetes.io/name: long, x: 1}}",
	    2, "["
	    CAUSE("FieldValueTooLong", "Too long: may not be longer than 3",
	    "spec.selector[app.kubernetes.io/name]") ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"integer\\\": "
	    "spec.selector.x in body must be of type string: \\\"integer\\\"",
	    "spec.selector.x") "]");
	CHECK_BAD(s, "spec: {selector: {a: x, b: y, c: z}}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": spec.selector"
	    " in body should have at most 2 properties", "spec.selector") "]");
	schema_free(s);
}

static void
test_embedded(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      template:\n"
	    "        type: object\n"
	    "        x-kubernetes-embedded-resource: true\n"
	    "        properties:\n"
	    "          spec: {type: object, x-kubernetes-preserve-unknown-fields:"
	    " true}\n");

	CHECK_OK(s, "spec: {template: {apiVersion: v1, kind: Pod, metadata: "
	    "{name: p}, spec: {containers: []}, junk: 1}}",
	    "{\"spec\":{\"template\":{\"apiVersion\":\"v1\",\"kind\":\"Pod\","
	    "\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[]}}}}");
	CHECK_BAD(s, "spec: {template: {metadata: {}}}", 2, "["
	    CAUSE("FieldValueRequired", "Required value: must not be empty",
	    "spec.template.apiVersion") ","
	    CAUSE("FieldValueRequired", "Required value: must not be empty",
	    "spec.template.kind") "]");
	schema_free(s);
}

static void
test_combinators(void)
{
	schema	*s = compile_yaml(
	    "type: object\n"
	    "properties:\n"
	    "  spec:\n"
	    "    type: object\n"
	    "    properties:\n"
	    "      all: {type: integer, allOf: [{minimum: 1}, {maximum: 5}]}\n"
	    "      any: {type: string, anyOf: [{pattern: '^a'}, {pattern: 'z$'}]}\n"
	    "      one:\n"
	    "        type: object\n"
	    "        properties: {a: {type: string}, b: {type: string}}\n"
	    "        oneOf: [{required: [a]}, {required: [b]}]\n"
	    "      not: {type: string, not: {enum: [forbidden]}}\n");

	CHECK_OK(s, "spec: {all: 3, any: abz, one: {a: x}, not: fine}",
	    "{\"spec\":{\"all\":3,\"any\":\"abz\",\"one\":{\"a\":\"x\"},"
	    "\"not\":\"fine\"}}");
	CHECK_OK(s, "spec: {any: xyz, one: {b: x}}",
	    "{\"spec\":{\"any\":\"xyz\",\"one\":{\"b\":\"x\"}}}");
	CHECK_BAD(s, "spec: {all: 9}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: 9: spec.all in body should be less than or equal "
	    "to 5", "spec.all") "]");
	CHECK_BAD(s, "spec: {any: mmm}", 1, "[" CAUSE("FieldValueInvalid",
	    "Invalid value: \\\"\\\": spec.any in body must validate at least "
	    "one schema (anyOf)", "spec.any") "]");
	CHECK_BAD(s, "spec: {one: {a: x, b: y}}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": spec.one in "
	    "body must validate one and only one schema (oneOf)", "spec.one")
	    "]");
	CHECK_BAD(s, "spec: {one: {}}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": spec.one in "
	    "body must validate one and only one schema (oneOf)", "spec.one")
	    "]");
	CHECK_BAD(s, "spec: {not: forbidden}", 1, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": spec.not in "
	    "body must not validate the schema (not)", "spec.not") "]");
	schema_free(s);
}

static const char crd[] =
"apiVersion: apiextensions.k8s.io/v1\n"
"kind: CustomResourceDefinition\n"
"metadata:\n"
"  name: rayclusters.ray.io\n"
"spec:\n"
"  group: ray.io\n"
"  names: {kind: RayCluster, plural: rayclusters}\n"
"  scope: Namespaced\n"
"  versions:\n"
"  - name: v1\n"
"    served: true\n"
"    storage: true\n"
"    schema:\n"
"      openAPIV3Schema:\n"
"        type: object\n"
"        properties:\n"
"          apiVersion: {type: string}\n"
"          kind: {type: string}\n"
"          metadata: {type: object}\n"
"          spec:\n"
"            type: object\n"
"            required: [headGroupSpec]\n"
"            properties:\n"
"              rayVersion: {type: string, pattern: '^\\d+\\.\\d+\\.\\d+$'}\n"
"              headGroupSpec:\n"
"                type: object\n"
"                required: [template]\n"
"                properties:\n"
"                  serviceType:\n"
"                    type: string\n"
"                    enum: [ClusterIP, NodePort, LoadBalancer]\n"
"                    default: ClusterIP\n"
"                  rayStartParams:\n"
"                    type: object\n"
"                    additionalProperties: {type: string}\n"
"                  template:\n"
"                    type: object\n"
"                    x-kubernetes-preserve-unknown-fields: true\n"
"              workerGroupSpecs:\n"
"                type: array\n"
"                items:\n"
"                  type: object\n"
"                  required: [groupName, template]\n"
"                  properties:\n"
"                    groupName: {type: string, minLength: 1}\n"
"                    replicas:\n"
"                      type: integer\n"
"                      format: int32\n"
"                      minimum: 0\n"
"                      default: 1\n"
"                    minReplicas: {type: integer, format: int32, default: 0}\n"
"                    maxReplicas: {type: integer, format: int32,\n"
"                                  default: 2147483647}\n"
"                    scaleStrategy:\n"
"                      type: object\n"
"                      properties:\n"
"                        workersToDelete:\n"
"                          type: array\n"
"                          items: {type: string}\n"
"                    template:\n"
"                      type: object\n"
"                      x-kubernetes-preserve-unknown-fields: true\n"
"          status:\n"
"            type: object\n"
"            x-kubernetes-preserve-unknown-fields: true\n"
"    subresources: {status: {}}\n";

static void
test_crd(void)
{
	cJSON		*doc, *os;
	schema		*s;
	char		*cause = NULL;

	doc = yamljson_parse(crd, strlen(crd), &cause);
	CHECK(doc != NULL);
	os = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
	    cJSON_GetObjectItem(doc, "spec"), "versions"), 0), "schema");
	os = cJSON_GetObjectItem(os, "openAPIV3Schema");
	CHECK(os != NULL);
	s = schema_compile(os, &cause);
	CHECK(s != NULL);
	cJSON_Delete(doc);

	CHECK_OK(s,
	    "apiVersion: ray.io/v1\n"
	    "kind: RayCluster\n"
	    "metadata: {name: rc, namespace: default}\n"
	    "spec:\n"
	    "  rayVersion: '2.9.0'\n"
	    "  enableInTreeAutoscaling: true\n"
	    "  headGroupSpec:\n"
	    "    rayStartParams: {dashboard-host: 0.0.0.0}\n"
	    "    template: {spec: {containers: [{name: head}]}}\n"
	    "  workerGroupSpecs:\n"
	    "  - groupName: small\n"
	    "    replicas: 2\n"
	    "    template: {spec: {}}\n",
	    "{\"apiVersion\":\"ray.io/v1\",\"kind\":\"RayCluster\",\"metadata\":"
	    "{\"name\":\"rc\",\"namespace\":\"default\"},\"spec\":{\"rayVersion\":"
	    "\"2.9.0\",\"headGroupSpec\":{\"rayStartParams\":{\"dashboard-host\":"
	    "\"0.0.0.0\"},\"template\":{\"spec\":{\"containers\":[{\"name\":"
	    "\"head\"}]}},\"serviceType\":\"ClusterIP\"},\"workerGroupSpecs\":"
	    "[{\"groupName\":\"small\",\"replicas\":2,\"template\":{\"spec\":{}},"
	    "\"minReplicas\":0,\"maxReplicas\":2147483647}]}}");

	CHECK_BAD(s,
	    "apiVersion: ray.io/v1\n"
	    "kind: RayCluster\n"
	    "metadata: {name: rc}\n"
	    "spec:\n"
	    "  rayVersion: latest\n"
	    "  headGroupSpec:\n"
	    "    serviceType: Foo\n"
	    "    rayStartParams: {num-cpus: 1}\n"
	    "  workerGroupSpecs:\n"
	    "  - groupName: ok\n"
	    "    template: {}\n"
	    "  - groupName: ''\n"
	    "    replicas: -1\n"
	    "    scaleStrategy: {workersToDelete: [a, 3]}\n",
	    8, "["
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"latest\\\": "
	    "spec.rayVersion in body should match "
	    "'^\\\\d+\\\\.\\\\d+\\\\.\\\\d+$'", "spec.rayVersion") ","
	    CAUSE("FieldValueNotSupported", "Unsupported value: \\\"Foo\\\": "
	    "supported values: \\\"ClusterIP\\\", \\\"NodePort\\\", "
	    "\\\"LoadBalancer\\\"", "spec.headGroupSpec.serviceType") ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"integer\\\": "
	    "spec.headGroupSpec.rayStartParams.num-cpus in body must be of "
	    "type string: "
	    "\\\"integer\\\"", "spec.headGroupSpec.rayStartParams.num-cpus")
	    ","
	    CAUSE("FieldValueRequired", "Required value",
	    "spec.headGroupSpec.template") ","
	    CAUSE("FieldValueInvalid", "Invalid value: \\\"\\\": "
	    "spec.workerGroupSpecs[1].groupName in body should be at least 1 "
	    "chars long", "spec.workerGroupSpecs[1].groupName") ","
	    CAUSE("FieldValueInvalid", "Invalid value: -1: "
	    "spec.workerGroupSpecs[1].replicas in body should be greater than "
	    "or equal to 0", "spec.workerGroupSpecs[1].replicas") ","
	    CAUSE("FieldValueTypeInvalid", "Invalid value: \\\"integer\\\": "
	    "spec.workerGroupSpecs[1].scaleStrategy.workersToDelete[1] in body "
	    "must be of type string: \\\"integer\\\"",
	    "spec.workerGroupSpecs[1].scaleStrategy.workersToDelete[1]") ","
	    CAUSE("FieldValueRequired", "Required value",
	    "spec.workerGroupSpecs[1].template") "]");
	schema_free(s);
}

static void
test_compile_errors(void)
{
	char	*cause;

	cause = compile_error("type: object\nproperties:\n  spec:\n"
	    "    type: object\n    properties:\n      x: {type: strin}\n");
	CHECK_STR(cause, "properties.spec.properties.x: unsupported type strin");
	free(cause);
	cause = compile_error("type: object\nproperties:\n  spec:\n"
	    "    type: object\n    properties:\n      x: {type: string, "
	    "pattern: '^(?=a)'}\n");
	CHECK_STR(cause, "properties.spec.properties.x: pattern '^(?=a)' "
	    "cannot be expressed as POSIX ERE");
	free(cause);
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: 'a{2,1}'}\n");
	CHECK(cause != NULL && strncmp(cause, "items: pattern 'a{2,1}': ",
	    25) == 0);
	free(cause);
	/* Repetition RE2 refuses and regcomp would copy without end
	   (found by fuzz-schema: a hundred '+' in a row took 2 GB). */
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: 'n++++++++++++++++++++++++++++++++++++++++'}\n");
	CHECK(cause != NULL && strstr(cause, "cannot be expressed") != NULL);
	free(cause);
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: '(a{1000}){1000}'}\n");
	CHECK(cause != NULL && strstr(cause, "cannot be expressed") != NULL);
	free(cause);
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: 'a{1001}'}\n");
	CHECK(cause != NULL && strstr(cause, "cannot be expressed") != NULL);
	free(cause);
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: '(ab){2}{3}'}\n");
	CHECK(cause != NULL && strstr(cause, "cannot be expressed") != NULL);
	free(cause);
	/* Lazy quantifiers are preferences only; counts within bounds. */
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: '^a*?b+?c?\?(d{2}?)$'}\n");
	CHECK_STR(cause, "(compiled)");
	free(cause);
	cause = compile_error("type: array\nitems: {type: string, "
	    "pattern: '^[a-z]{1,63}(\\.[a-z]{1,63})*$'}\n");
	CHECK_STR(cause, "(compiled)");
	free(cause);
	cause = compile_error("type: object\nproperties:\n  a:\n    anyOf:\n"
	    "    - {minLength: -1}\n");
	CHECK_STR(cause, "properties.a.anyOf.0: minLength must be a "
	    "non-negative integer");
	free(cause);
	cause = compile_error("type: object\nrequired: name\n");
	CHECK_STR(cause, "schema: required must be an array");
	free(cause);
}

int
main(void)
{
	test_types();
	test_required();
	test_enum();
	test_numbers();
	test_strings();
	test_arrays();
	test_nullable_defaults();
	test_pruning();
	test_int_or_string();
	test_maps();
	test_embedded();
	test_combinators();
	test_crd();
	test_compile_errors();
	return check_result("test-schema");
}
