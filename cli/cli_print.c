/*
 * Output of the client, volray(1), in kubectl's formats. The default is a
 * meta.k8s.io Table that the server filled in, which cli_table.c lays out
 * (-o wide adds the columns of non-zero priority); -o json is
 * indented four spaces with members sorted; -o yaml is written block style
 * by the emitter here, which quotes only the strings a YAML 1.1 reader
 * would otherwise take for something else; -o name prints TYPE/NAME;
 * -o jsonpath=T evaluates kubectl's template language of text, {.path} and
 * {"literal"}.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "cli_color.h"
#include "cli_print.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

/* Print a number as the shortest text that reads back the same. */
static void
num_out(FILE *f, double d)
{
	char s[64];
	int prec;

	if (d == (double)(long long)d && d < 1e18 && d > -1e18) {
		fprintf(f, "%lld", (long long)d);
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(s, sizeof s, "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	fputs(s, f);
}

static void
indent(FILE *f, int n)
{
	while (n-- > 0)
		fputc(' ', f);
}

/* Indented JSON as kubectl prints it (four spaces, "key": value). */
static void
json_out(FILE *f, const cJSON *v, int depth)
{
	const cJSON *el;
	char *s;
	int obj = cJSON_IsObject(v);

	if (cJSON_IsNumber(v)) {
		num_out(f, v->valuedouble);
		return;
	}
	if (!obj && !cJSON_IsArray(v)) {
		s = cJSON_PrintUnformatted(v);
		fputs(s, f);
		free(s);
		return;
	}
	if (v->child == NULL) {
		fputs(obj ? "{}" : "[]", f);
		return;
	}
	fputs(obj ? "{\n" : "[\n", f);
	cJSON_ArrayForEach(el, v) {
		indent(f, (depth + 1) * 4);
		if (obj) {
			cJSON *k = cJSON_CreateString(el->string);

			s = cJSON_PrintUnformatted(k);
			fprintf(f, "%s: ", s);
			free(s);
			cJSON_Delete(k);
		}
		json_out(f, el, depth + 1);
		fputs(el->next != NULL ? ",\n" : "\n", f);
	}
	indent(f, depth * 4);
	fputs(obj ? "}" : "]", f);
}

/* Would a YAML 1.1 reader (ours, PyYAML, go-yaml) type plain s as a string? */
static int
yaml_typed_string(const char *s)
{
	static const char *words[] = { "true", "false", "yes", "no", "on",
	    "off", "y", "n", "null", "~", "<<", "=", ".inf", "-.inf", "+.inf",
	    ".nan" };
	size_t i;
	char *cause = NULL;
	cJSON *j;
	int ok;

	for (i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strcasecmp(s, words[i]) == 0)
			return 0;
	if (strchr("0123456789+-.", s[0]) == NULL)
		return 1;
	/* Timestamps, and 1:20 or 1_000 that YAML 1.1 reads as numbers. */
	if (strspn(s, "0123456789") == 4 && s[4] == '-' &&
	    isdigit((unsigned char)s[5]))
		return 0;
	if (s[strspn(s, "0123456789:_.+-eE")] == '\0' && strpbrk(s, ":_"))
		return 0;
	j = yamljson_parse(s, strlen(s), &cause);
	ok = cJSON_IsString(j) && strcmp(j->valuestring, s) == 0;
	cJSON_Delete(j);
	free(cause);
	return ok;
}

/* Is s free of YAML syntax that rules out a plain scalar? */
static int
yaml_plain_syntax(const char *s)
{
	size_t len = strlen(s);
	const char *p;

	if (len == 0 || strchr("?:,[]{}#&*!|>'\"%@` \t", s[0]) != NULL)
		return 0;
	if (s[0] == '-' && (s[1] == ' ' || s[1] == '\0' ||
	    strncmp(s, "---", 3) == 0))
		return 0;
	if (s[len - 1] == ' ' || s[len - 1] == ':')
		return 0;
	for (p = s; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
		if ((p[0] == ':' && p[1] == ' ') || (p[0] == ' ' && p[1] == '#'))
			return 0;
	}
	return 1;
}

static int
has_control(const char *s, int newline_ok)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t' &&
		    !(newline_ok && *s == '\n')) || *s == 0x7f)
			return 1;
	return 0;
}

/* Write s as a literal block scalar (|) with its lines at column ind. */
static void
yaml_literal(FILE *f, const char *s, int ind)
{
	size_t len = strlen(s), nl = 0;
	const char *p, *e, *end;

	while (nl < len && s[len - 1 - nl] == '\n')
		nl++;
	end = s + len - nl;
	fprintf(f, "|%s%s\n", s[0] == ' ' ? "2" : "",
	    nl == 0 ? "-" : nl > 1 ? "+" : "");
	for (p = s; p < end; p = e + 1) {
		if ((e = memchr(p, '\n', end - p)) == NULL)
			e = end;
		if (e > p) {
			indent(f, ind);
			fwrite(p, 1, e - p, f);
		}
		fputc('\n', f);
	}
	while (nl-- > 1)
		fputc('\n', f);
}

/*
 * A string as YAML, the way go-yaml writes it: plain if it may be; double
 * quoted if plain would read as another type or it holds control
 * characters; a literal block if it spans lines (and block is allowed);
 * else single quoted. Block scalars end their own line.
 */
static int
yaml_string(FILE *f, const char *s, int ind, int block)
{
	const char *p;

	if (yaml_plain_syntax(s) && yaml_typed_string(s)) {
		fputs(s, f);
		return 0;
	}
	if (block && strchr(s, '\n') != NULL && !has_control(s, 1) &&
	    strstr(s, " \n") == NULL && s[strspn(s, "\n")] != '\0') {
		yaml_literal(f, s, ind);
		return 1;
	}
	if (yaml_typed_string(s) && !has_control(s, 0) && strchr(s, '\t') ==
	    NULL) {
		fputc('\'', f);
		for (p = s; *p != '\0'; p++) {
			if (*p == '\'')
				fputc('\'', f);
			fputc(*p, f);
		}
		fputc('\'', f);
		return 0;
	}
	fputc('"', f);
	for (p = s; *p != '\0'; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\x%02x", (unsigned char)*p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
	return 0;
}

static int
yaml_is_block(const cJSON *v)
{
	return (cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child != NULL;
}

/* A scalar or empty collection; 1 if it ended its own line. */
static int
yaml_scalar(FILE *f, const cJSON *v, int ind)
{
	if (cJSON_IsString(v))
		return yaml_string(f, v->valuestring, ind, 1);
	if (cJSON_IsNumber(v))
		num_out(f, v->valuedouble);
	else if (cJSON_IsBool(v))
		fputs(cJSON_IsTrue(v) ? "true" : "false", f);
	else if (cJSON_IsObject(v))
		fputs("{}", f);
	else if (cJSON_IsArray(v))
		fputs("[]", f);
	else
		fputs("null", f);
	return 0;
}

/*
 * Emit a non-empty mapping or sequence at column ind. When inline_first is
 * set the caller has written "- " and the first line continues it.
 * Sequences under a key are not indented, as kubectl writes them.
 */
static void
yaml_block(FILE *f, const cJSON *v, int ind, int inline_first)
{
	const cJSON *el;
	int first = 1;

	cJSON_ArrayForEach(el, v) {
		if (!(first && inline_first))
			indent(f, ind);
		first = 0;
		if (cJSON_IsArray(v)) {
			fputs("- ", f);
			if (yaml_is_block(el))
				yaml_block(f, el, ind + 2, 1);
			else if (!yaml_scalar(f, el, ind + 2))
				fputc('\n', f);
			continue;
		}
		yaml_string(f, el->string, 0, 0);
		fputc(':', f);
		if (cJSON_IsObject(el) && el->child != NULL) {
			fputc('\n', f);
			yaml_block(f, el, ind + 2, 0);
		} else if (cJSON_IsArray(el) && el->child != NULL) {
			fputc('\n', f);
			yaml_block(f, el, ind, 0);
		} else {
			fputc(' ', f);
			if (!yaml_scalar(f, el, ind + 2))
				fputc('\n', f);
		}
	}
}

static void
yaml_out(FILE *f, const cJSON *v)
{
	if (yaml_is_block(v))
		yaml_block(f, v, 0, 0);
	else if (!yaml_scalar(f, v, 2))
		fputc('\n', f);
}

void
cli_print_yaml(FILE *f, const cJSON *v)
{
	yaml_out(f, v);
}

/* Text of a table cell or JSONPath match as kubectl shows it. */
char *
cli_print_cell(const cJSON *v)
{
	char *s;
	size_t len;
	FILE *f;

	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (v == NULL || cJSON_IsNull(v))
		return xstrdup("");
	if ((f = open_memstream(&s, &len)) == NULL)
		return xstrdup("?");
	if (cJSON_IsNumber(v))
		num_out(f, v->valuedouble);
	else if (cJSON_IsBool(v))
		fputs(cJSON_IsTrue(v) ? "true" : "false", f);
	else {
		char *j = cJSON_PrintUnformatted(v);

		fputs(j, f);
		free(j);
	}
	fclose(f);
	return s;
}

static void
print_match(const cJSON *m, void *arg)
{
	int *n = arg;
	char *s = cli_print_cell(m);

	printf("%s%s", (*n)++ > 0 ? " " : "", s);
	free(s);
}

/* Evaluate a kubectl JSONPath template: text, {.path} and {"literal"}. */
static int
template_out(const char *t, const cJSON *obj)
{
	const char *end, *expr;
	int n;

	while (*t != '\0') {
		if (*t != '{') {
			fputc(*t++, stdout);
			continue;
		}
		if ((end = strchr(t, '}')) == NULL) {
			cli_color_errorf("unclosed { in the template\n");
			return -1;
		}
		expr = t + 1;
		while (*expr == ' ')
			expr++;
		if (*expr == '"') {
			for (expr++; expr < end && *expr != '"'; expr++) {
				if (*expr == '\\' && expr + 1 < end) {
					expr++;
					fputc(*expr == 'n' ? '\n' : *expr == 't' ?
					    '\t' : *expr, stdout);
				} else
					fputc(*expr, stdout);
			}
		} else {
			if (*expr == '$')
				expr++;
			if (*expr != '.' && *expr != '[') {
				cli_color_errorf("unsupported template "
				    "expression: %.*s\n", (int)(end - t + 1), t);
				return -1;
			}
			n = 0;
			jsonpath_each(obj, expr, print_match, &n);
		}
		t = end + 1;
	}
	return 0;
}

static int
key_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

/* Sort members by name all the way down, as kubectl prints them. */
static void
sort_keys(cJSON *v)
{
	cJSON **kids, *el;
	size_t n = 0, i;

	for (el = v->child; el != NULL; el = el->next, n++)
		sort_keys(el);
	if (!cJSON_IsObject(v) || n < 2)
		return;
	kids = xmalloc(n * sizeof *kids);
	for (i = 0, el = v->child; el != NULL; el = el->next)
		kids[i++] = el;
	qsort(kids, n, sizeof *kids, key_cmp);
	for (i = 0; i < n; i++) {
		kids[i]->next = i + 1 < n ? kids[i + 1] : NULL;
		kids[i]->prev = i > 0 ? kids[i - 1] : kids[n - 1];
	}
	v->child = kids[0];
	free(kids);
}

/* Drop metadata.managedFields unless asked for, as kubectl does. */
static void
strip_managed(cJSON *doc, int managed)
{
	cJSON *el;

	if (managed)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(doc, "metadata"), "managedFields");
	cJSON_ArrayForEach(el, cJSON_GetObjectItemCaseSensitive(doc, "items"))
		strip_managed(el, managed);
}

/* Print objects in the -o format (json, yaml, name or jsonpath=). */
int
cli_print_objects(cJSON *doc, const char *output, const char *type, int managed)
{
	const cJSON *el;

	if (strcmp(output, "json") == 0 || strcmp(output, "yaml") == 0) {
		strip_managed(doc, managed);
		sort_keys(doc);
	}
	if (strcmp(output, "json") == 0) {
		json_out(stdout, doc, 0);
		fputc('\n', stdout);
	} else if (strcmp(output, "yaml") == 0)
		yaml_out(stdout, doc);
	else if (strcmp(output, "name") == 0) {
		if (json_at(doc, "items") == NULL)
			printf("%s/%s\n", type, json_str(doc, "metadata.name"));
		cJSON_ArrayForEach(el, json_at(doc, "items"))
			printf("%s/%s\n", type, json_str(el, "metadata.name"));
	} else if (strncmp(output, "jsonpath=", 9) == 0)
		return template_out(output + 9, doc);
	return 0;
}

/* The -o formats cli_print_objects and cli_table know. */
int
cli_print_known(const char *s)
{
	return s == NULL || strcmp(s, "json") == 0 || strcmp(s, "yaml") == 0 ||
	    strcmp(s, "name") == 0 || strcmp(s, "wide") == 0 ||
	    strncmp(s, "jsonpath=", 9) == 0 ||
	    strncmp(s, "custom-columns=", 15) == 0;
}
