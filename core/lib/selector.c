/*
 * Label and field selectors, parsed and matched as Kubernetes apimachinery
 * does (labels.Parse, fields.ParseSelector, metav1.LabelSelectorAsSelector).
 *
 * A selector is a list of requirements that must all hold. Each requirement
 * is a key, an operator and a set of values. Label selectors are read by a
 * small lexer and recursive-descent parser that follow apimachinery token for
 * token, so the same strings are accepted and the error messages read alike;
 * keys and values are then checked as qualified names and label values. Field
 * selectors are simpler: terms split on unescaped commas, each term split at
 * its first "!=", "==" or "=", and the value unescaped (\, \= \\).
 *
 * Labels and fields differ only in what "absent" means: a missing label makes
 * "=" false and "!=" true, while a missing field reads as the empty string.
 * Both are matched by one function that takes the looked-up value, or NULL
 * when there is none. A field that is an object or an array has no text form
 * and is passed as NULL too, so it never equals a value.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

enum op {
	OP_EQ,
	OP_NE,
	OP_IN,
	OP_NOTIN,
	OP_EXISTS,
	OP_NOTEXISTS,
	OP_GT,
	OP_LT
};

struct req {
	char		*key;
	enum op		 op;
	char		**values;
	size_t		 nvalues;
};

struct selector {
	int		 fields;
	struct req	*reqs;
	size_t		 nreqs;
};

enum tok {
	T_END,
	T_IDENT,
	T_IN,
	T_NOTIN,
	T_NOT,
	T_NE,
	T_EQ,
	T_DEQ,
	T_GT,
	T_LT,
	T_OPEN,
	T_CLOSE,
	T_COMMA
};

/* Whether "in" and "notin" are keywords (after a key) or plain identifiers. */
enum context {
	CTX_VALUES,
	CTX_KEYOP
};

struct lexer {
	const char	*s;
	size_t		 pos;
};

struct token {
	enum tok	 t;
	const char	*p;
	int		 len;
};

#define NAME_MAX_LEN 63
#define PREFIX_MAX_LEN 253
#define VALUE_MAX_LEN 63

static const char name_msg[] = "name part must consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
static const char value_msg[] = "a valid label must be an empty string or "
    "consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character";
static const char prefix_msg[] = "prefix part a lowercase RFC 1123 subdomain "
    "must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character";
static const char qualified_msg[] = "a qualified name must consist of "
    "alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character, with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')";

static void
set_cause(char **cause, char *msg)
{
	if (cause != NULL)
		*cause = msg;
	else
		free(msg);
}

static selector *
selector_new(int fields)
{
	selector	*sel;

	sel = xcalloc(1, sizeof *sel);
	sel->fields = fields;
	return sel;
}

/* Free a selector with its requirements; NULL is allowed. */
void
selector_free(selector *sel)
{
	size_t	 i, j;

	if (sel == NULL)
		return;
	for (i = 0; i < sel->nreqs; i++) {
		for (j = 0; j < sel->reqs[i].nvalues; j++)
			free(sel->reqs[i].values[j]);
		free(sel->reqs[i].values);
		free(sel->reqs[i].key);
	}
	free(sel->reqs);
	free(sel);
}

static void
req_clear(struct req *r)
{
	size_t	 i;

	for (i = 0; i < r->nvalues; i++)
		free(r->values[i]);
	free(r->values);
	free(r->key);
	memset(r, 0, sizeof *r);
}

/* Add a value to a requirement, keeping the values a set. */
static void
req_add_value(struct req *r, const char *v, size_t len)
{
	size_t	 i;

	for (i = 0; i < r->nvalues; i++) {
		if (strlen(r->values[i]) == len &&
		    memcmp(r->values[i], v, len) == 0)
			return;
	}
	r->values = xreallocarray(r->values, r->nvalues + 1,
	    sizeof *r->values);
	r->values[r->nvalues++] = xstrndup(v, len);
}

/* Move a finished requirement into the selector. */
static void
selector_add(selector *sel, struct req *r)
{
	sel->reqs = xreallocarray(sel->reqs, sel->nreqs + 1, sizeof *sel->reqs);
	sel->reqs[sel->nreqs++] = *r;
	memset(r, 0, sizeof *r);
}

int
selector_empty(const selector *sel)
{
	return sel == NULL || sel->nreqs == 0;
}

static int
is_alnum(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

/* ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], the shape of names and values. */
static int
is_label_text(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || !is_alnum(s[0]) || !is_alnum(s[len - 1]))
		return 0;
	for (i = 1; i < len - 1; i++) {
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' &&
		    s[i] != '.')
			return 0;
	}
	return 1;
}

/* An RFC 1123 subdomain: dot-joined [a-z0-9]([-a-z0-9]*[a-z0-9])? labels. */
static int
is_dns_subdomain(const char *s, size_t len)
{
	size_t	 i, start = 0;

	for (i = 0; i <= len; i++) {
		if (i < len && s[i] != '.') {
			if (!(s[i] >= 'a' && s[i] <= 'z') &&
			    !(s[i] >= '0' && s[i] <= '9') && s[i] != '-')
				return 0;
			continue;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return 0;
		start = i + 1;
	}
	return 1;
}

/* Check a label key as a qualified name; return why it is bad, or NULL. */
static const char *
check_key(const char *key)
{
	const char	*slash, *name = key;
	size_t		 len;

	if ((slash = strchr(key, '/')) != NULL) {
		if (strchr(slash + 1, '/') != NULL)
			return qualified_msg;
		len = slash - key;
		if (len == 0)
			return "prefix part must be non-empty";
		if (len > PREFIX_MAX_LEN)
			return "prefix part must be no more than 253 characters";
		if (!is_dns_subdomain(key, len))
			return prefix_msg;
		name = slash + 1;
	}
	len = strlen(name);
	if (len == 0)
		return "name part must be non-empty";
	if (len > NAME_MAX_LEN)
		return "name part must be no more than 63 characters";
	if (!is_label_text(name, len))
		return name_msg;
	return NULL;
}

/* Check a label value; return why it is bad, or NULL. */
static const char *
check_value(const char *value)
{
	size_t	 len = strlen(value);

	if (len > VALUE_MAX_LEN)
		return "must be no more than 63 characters";
	if (len != 0 && !is_label_text(value, len))
		return value_msg;
	return NULL;
}

/* Parse a whole string as a base-10 int64, as strconv.ParseInt does. */
static int
parse_int(const char *s, long long *out)
{
	unsigned long long	 v = 0, limit;
	int			 neg = 0;
	const char		*p = s;

	if (*p == '+' || *p == '-')
		neg = (*p++ == '-');
	if (*p == '\0')
		return -1;
	limit = neg ? 9223372036854775808ULL : 9223372036854775807ULL;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		if (v > (limit - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (neg)
		*out = v == limit ? (-9223372036854775807LL - 1) : -(long long)v;
	else
		*out = (long long)v;
	return 0;
}

/*
 * Check a requirement as labels.NewRequirement does: the key, the number of
 * values for the operator, and each value. Return a message or NULL.
 */
static char *
check_req(const struct req *r)
{
	const char	*why;
	long long	 n;
	size_t		 i;

	if ((why = check_key(r->key)) != NULL)
		return util_printf("key: Invalid value: \"%s\": %s", r->key, why);
	switch (r->op) {
	case OP_IN:
	case OP_NOTIN:
		if (r->nvalues == 0)
			return util_printf("for 'in', 'notin' operators, values "
			    "set can't be empty");
		break;
	case OP_EQ:
	case OP_NE:
		if (r->nvalues != 1)
			return util_printf("exact-match compatibility requires "
			    "one single value");
		break;
	case OP_EXISTS:
	case OP_NOTEXISTS:
		if (r->nvalues != 0)
			return util_printf("values set must be empty for exists "
			    "and does not exist");
		break;
	case OP_GT:
	case OP_LT:
		if (r->nvalues != 1)
			return util_printf("for 'Gt', 'Lt' operators, exactly one "
			    "value is required");
		if (parse_int(r->values[0], &n) != 0)
			return util_printf("for 'Gt', 'Lt' operators, the value "
			    "must be an integer");
		break;
	}
	for (i = 0; i < r->nvalues; i++) {
		if ((why = check_value(r->values[i])) != NULL)
			return util_printf("values[%zu]: Invalid value: \"%s\": %s",
			    i, r->values[i], why);
	}
	return NULL;
}

static int
is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int
is_special(int c)
{
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' ||
	    c == '>' || c == '<';
}

/* Read the next token: a run of special characters or an identifier. */
static void
lex(struct lexer *l, struct token *tk, enum context ctx)
{
	const char	*s = l->s;
	size_t		 start;

	while (is_space(s[l->pos]))
		l->pos++;
	tk->p = s + l->pos;
	tk->len = 1;
	switch (s[l->pos]) {
	case '\0':
		tk->t = T_END;
		tk->len = 0;
		return;
	case '(':
		tk->t = T_OPEN;
		break;
	case ')':
		tk->t = T_CLOSE;
		break;
	case ',':
		tk->t = T_COMMA;
		break;
	case '>':
		tk->t = T_GT;
		break;
	case '<':
		tk->t = T_LT;
		break;
	case '!':
		tk->t = T_NOT;
		if (s[l->pos + 1] == '=') {
			tk->t = T_NE;
			tk->len = 2;
		}
		break;
	case '=':
		tk->t = T_EQ;
		if (s[l->pos + 1] == '=') {
			tk->t = T_DEQ;
			tk->len = 2;
		}
		break;
	default:
		start = l->pos;
		while (s[l->pos] != '\0' && !is_space(s[l->pos]) &&
		    !is_special(s[l->pos]))
			l->pos++;
		tk->t = T_IDENT;
		tk->len = (int)(l->pos - start);
		if (ctx == CTX_KEYOP && tk->len == 2 &&
		    memcmp(tk->p, "in", 2) == 0)
			tk->t = T_IN;
		if (ctx == CTX_KEYOP && tk->len == 5 &&
		    memcmp(tk->p, "notin", 5) == 0)
			tk->t = T_NOTIN;
		return;
	}
	l->pos += tk->len;
}

static void
peek(const struct lexer *l, struct token *tk, enum context ctx)
{
	struct lexer	 copy = *l;

	lex(&copy, tk, ctx);
}

/* Parse "(v1, v2, ...)" into r's values; empty items are empty strings. */
static char *
parse_values(struct lexer *l, struct req *r)
{
	struct token	 tk, next;

	lex(l, &tk, CTX_VALUES);
	if (tk.t != T_OPEN)
		return util_printf("found '%.*s', expected: '('", tk.len, tk.p);
	peek(l, &tk, CTX_VALUES);
	if (tk.t == T_CLOSE) {
		lex(l, &tk, CTX_VALUES);
		return NULL;
	}
	if (tk.t != T_IDENT && tk.t != T_COMMA)
		return util_printf("found '%.*s', expected: ',', ')' or identifier",
		    tk.len, tk.p);
	for (;;) {
		lex(l, &tk, CTX_VALUES);
		if (tk.t == T_IDENT) {
			req_add_value(r, tk.p, tk.len);
			peek(l, &next, CTX_VALUES);
			if (next.t == T_CLOSE)
				break;
			if (next.t != T_COMMA)
				return util_printf("found '%.*s', expected: ',' or "
				    "')'", next.len, next.p);
		} else if (tk.t == T_COMMA) {
			/* "(," ",)" and ",," all stand for an empty value. */
			if (r->nvalues == 0)
				req_add_value(r, "", 0);
			peek(l, &next, CTX_VALUES);
			if (next.t == T_CLOSE) {
				req_add_value(r, "", 0);
				break;
			}
			if (next.t == T_COMMA) {
				lex(l, &next, CTX_VALUES);
				req_add_value(r, "", 0);
			}
		} else
			return util_printf("found '%.*s', expected: ',', or "
			    "identifier", tk.len, tk.p);
	}
	lex(l, &tk, CTX_VALUES);
	return NULL;
}

/* Parse the single value after =, == or !=, which may be empty. */
static char *
parse_exact_value(struct lexer *l, struct req *r)
{
	struct token	 tk;

	peek(l, &tk, CTX_VALUES);
	if (tk.t == T_END || tk.t == T_COMMA) {
		req_add_value(r, "", 0);
		return NULL;
	}
	lex(l, &tk, CTX_VALUES);
	if (tk.t != T_IDENT)
		return util_printf("found '%.*s', expected: identifier", tk.len,
		    tk.p);
	req_add_value(r, tk.p, tk.len);
	return NULL;
}

/* Parse one requirement: "[!]key", or "key op value(s)". */
static char *
parse_requirement(struct lexer *l, struct req *r)
{
	struct token	 tk;
	const char	*why;
	char		*error;

	lex(l, &tk, CTX_VALUES);
	r->op = OP_EQ;
	if (tk.t == T_NOT) {
		r->op = OP_NOTEXISTS;
		lex(l, &tk, CTX_VALUES);
	}
	if (tk.t != T_IDENT)
		return util_printf("found '%.*s', expected: identifier", tk.len,
		    tk.p);
	r->key = xstrndup(tk.p, tk.len);
	if ((why = check_key(r->key)) != NULL)
		return util_printf("key: Invalid value: \"%s\": %s", r->key, why);

	peek(l, &tk, CTX_VALUES);
	if (r->op != OP_NOTEXISTS && (tk.t == T_END || tk.t == T_COMMA))
		r->op = OP_EXISTS;
	if (r->op == OP_EXISTS || r->op == OP_NOTEXISTS)
		return check_req(r);

	lex(l, &tk, CTX_KEYOP);
	switch (tk.t) {
	case T_IN:
		r->op = OP_IN;
		break;
	case T_NOTIN:
		r->op = OP_NOTIN;
		break;
	case T_EQ:
	case T_DEQ:
		r->op = OP_EQ;
		break;
	case T_NE:
		r->op = OP_NE;
		break;
	case T_GT:
		r->op = OP_GT;
		break;
	case T_LT:
		r->op = OP_LT;
		break;
	default:
		return util_printf("found '%.*s', expected: in, notin, =, ==, !=, "
		    "gt, lt", tk.len, tk.p);
	}
	if (r->op == OP_IN || r->op == OP_NOTIN)
		error = parse_values(l, r);
	else
		error = parse_exact_value(l, r);
	if (error != NULL)
		return error;
	return check_req(r);
}

/* Parse a label selector string; see labels.Parse in apimachinery. */
selector *
selector_parse_labels(const char *s, char **cause)
{
	selector	*sel;
	struct lexer	 l;
	struct token	 tk;
	struct req	 r;
	char		*error;

	sel = selector_new(0);
	if (s == NULL)
		return sel;
	l.s = s;
	l.pos = 0;
	memset(&r, 0, sizeof r);

	peek(&l, &tk, CTX_VALUES);
	if (tk.t == T_END)
		return sel;
	if (tk.t != T_IDENT && tk.t != T_NOT) {
		error = util_printf("found '%.*s', expected: !, identifier, or "
		    "'end of string'", tk.len, tk.p);
		goto fail;
	}
	for (;;) {
		if ((error = parse_requirement(&l, &r)) != NULL) {
			set_cause(cause, util_printf("unable to parse requirement: "
			    "%s", error));
			free(error);
			error = NULL;
			goto fail;
		}
		selector_add(sel, &r);

		lex(&l, &tk, CTX_VALUES);
		if (tk.t == T_END)
			return sel;
		if (tk.t != T_COMMA) {
			error = util_printf("found '%.*s', expected: ',' or 'end "
			    "of string'", tk.len, tk.p);
			goto fail;
		}
		peek(&l, &tk, CTX_VALUES);
		if (tk.t != T_IDENT && tk.t != T_NOT) {
			error = util_printf("found '%.*s', expected: identifier "
			    "after ','", tk.len, tk.p);
			goto fail;
		}
	}

fail:
	if (error != NULL)
		set_cause(cause, error);
	req_clear(&r);
	selector_free(sel);
	return NULL;
}

/* Remove the escapes \\ \, \= from a field value; bare , and = are errors. */
static char *
unescape_value(const char *s, size_t len, char **out)
{
	char	*v;
	size_t	 i, n = 0;

	v = xcalloc(1, len + 1);
	for (i = 0; i < len; i++) {
		if (s[i] == '\\') {
			if (i + 1 == len) {
				free(v);
				return util_printf("invalid field selector: invalid "
				    "escape sequence: \\");
			}
			i++;
			if (s[i] != '\\' && s[i] != ',' && s[i] != '=') {
				free(v);
				return util_printf("invalid field selector: invalid "
				    "escape sequence: \\%c", s[i]);
			}
		} else if (s[i] == ',' || s[i] == '=') {
			free(v);
			return util_printf("invalid field selector: unescaped "
			    "character in value: %c", s[i]);
		}
		v[n++] = s[i];
	}
	*out = v;
	return NULL;
}

/* Parse one "path op value" term of a field selector into a requirement. */
static char *
parse_term(const char *all, const char *term, size_t len, struct req *r)
{
	size_t		 i, oplen = 0, start, end;
	char		*error;

	for (i = 0; i < len; i++) {
		if (i + 1 < len && term[i] == '!' && term[i + 1] == '=') {
			r->op = OP_NE;
			oplen = 2;
		} else if (i + 1 < len && term[i] == '=' && term[i + 1] == '=') {
			r->op = OP_EQ;
			oplen = 2;
		} else if (term[i] == '=') {
			r->op = OP_EQ;
			oplen = 1;
		} else
			continue;
		break;
	}
	if (oplen == 0)
		return util_printf("invalid selector: '%s'; can't understand '%.*s'",
		    all, (int)len, term);

	/* Paths never hold spaces: forgive them around the path. */
	for (start = 0; start < i && is_space(term[start]); start++)
		;
	for (end = i; end > start && is_space(term[end - 1]); end--)
		;
	if (start == end)
		return util_printf("invalid selector: '%s'; empty field path in "
		    "'%.*s'", all, (int)len, term);
	r->key = xstrndup(term + start, end - start);

	r->values = xcalloc(1, sizeof *r->values);
	error = unescape_value(term + i + oplen, len - i - oplen, &r->values[0]);
	if (error != NULL)
		return error;
	r->nvalues = 1;
	return NULL;
}

/* Parse a field selector string; see fields.ParseSelector in apimachinery. */
selector *
selector_parse_fields(const char *s, char **cause)
{
	selector	*sel;
	struct req	 r;
	size_t		 start = 0, i;
	int		 escaped = 0;
	char		*error;

	sel = selector_new(1);
	if (s == NULL)
		return sel;
	memset(&r, 0, sizeof r);
	for (i = 0;; i++) {
		if (escaped) {
			escaped = 0;
			if (s[i] != '\0')
				continue;
		}
		if (s[i] == '\\') {
			escaped = 1;
			continue;
		}
		if (s[i] != ',' && s[i] != '\0')
			continue;
		if (i > start) {
			error = parse_term(s, s + start, i - start, &r);
			if (error != NULL) {
				set_cause(cause, error);
				req_clear(&r);
				selector_free(sel);
				return NULL;
			}
			selector_add(sel, &r);
		}
		if (s[i] == '\0')
			break;
		start = i + 1;
	}
	return sel;
}

/* Build a requirement from a matchExpressions entry, or say why not. */
static char *
expression_req(const cJSON *expr, struct req *r)
{
	const cJSON	*key, *op, *values, *v;
	const char	*name;

	if (!cJSON_IsObject(expr))
		return util_printf("must be an object");
	key = cJSON_GetObjectItemCaseSensitive(expr, "key");
	op = cJSON_GetObjectItemCaseSensitive(expr, "operator");
	values = cJSON_GetObjectItemCaseSensitive(expr, "values");

	if (key != NULL && !cJSON_IsNull(key) && !cJSON_IsString(key))
		return util_printf("key must be a string");
	if (op != NULL && !cJSON_IsNull(op) && !cJSON_IsString(op))
		return util_printf("operator must be a string");
	name = cJSON_IsString(key) ? key->valuestring : "";
	r->key = xstrndup(name, strlen(name));

	name = cJSON_IsString(op) ? op->valuestring : "";
	if (strcmp(name, "In") == 0)
		r->op = OP_IN;
	else if (strcmp(name, "NotIn") == 0)
		r->op = OP_NOTIN;
	else if (strcmp(name, "Exists") == 0)
		r->op = OP_EXISTS;
	else if (strcmp(name, "DoesNotExist") == 0)
		r->op = OP_NOTEXISTS;
	else
		return util_printf("\"%s\" is not a valid label selector operator",
		    name);

	if (values != NULL && !cJSON_IsNull(values)) {
		if (!cJSON_IsArray(values))
			return util_printf("values must be an array of strings");
		cJSON_ArrayForEach(v, values) {
			if (!cJSON_IsString(v))
				return util_printf("values must be an array of "
				    "strings");
			req_add_value(r, v->valuestring, strlen(v->valuestring));
		}
	}
	return check_req(r);
}

/* Build a selector from a metav1.LabelSelector object. */
selector *
selector_from_json(const cJSON *ls, char **cause)
{
	selector	*sel;
	const cJSON	*labels, *exprs, *item;
	struct req	 r;
	char		*error;
	int		 i = 0;

	sel = selector_new(0);
	if (ls == NULL || cJSON_IsNull(ls))
		return sel;
	memset(&r, 0, sizeof r);
	if (!cJSON_IsObject(ls)) {
		set_cause(cause, util_printf("label selector must be an object"));
		goto fail;
	}

	labels = cJSON_GetObjectItemCaseSensitive(ls, "matchLabels");
	if (labels != NULL && !cJSON_IsNull(labels)) {
		if (!cJSON_IsObject(labels)) {
			set_cause(cause, util_printf("matchLabels must be an "
			    "object"));
			goto fail;
		}
		cJSON_ArrayForEach(item, labels) {
			if (!cJSON_IsString(item)) {
				set_cause(cause, util_printf("matchLabels: value "
				    "of \"%s\" must be a string", item->string));
				goto fail;
			}
			r.key = xstrndup(item->string, strlen(item->string));
			r.op = OP_EQ;
			req_add_value(&r, item->valuestring,
			    strlen(item->valuestring));
			if ((error = check_req(&r)) != NULL) {
				set_cause(cause, util_printf("matchLabels: %s",
				    error));
				free(error);
				goto fail;
			}
			selector_add(sel, &r);
		}
	}

	exprs = cJSON_GetObjectItemCaseSensitive(ls, "matchExpressions");
	if (exprs != NULL && !cJSON_IsNull(exprs)) {
		if (!cJSON_IsArray(exprs)) {
			set_cause(cause, util_printf("matchExpressions must be an "
			    "array"));
			goto fail;
		}
		cJSON_ArrayForEach(item, exprs) {
			if ((error = expression_req(item, &r)) != NULL) {
				set_cause(cause, util_printf("matchExpressions[%d]: "
				    "%s", i, error));
				free(error);
				goto fail;
			}
			selector_add(sel, &r);
			i++;
		}
	}
	return sel;

fail:
	req_clear(&r);
	selector_free(sel);
	return NULL;
}

/* Decide one requirement given the value found, NULL if there is none. */
static int
req_match(const struct req *r, const char *v)
{
	long long	 have, want;
	size_t		 i;
	int		 found = 0;

	if (v != NULL) {
		for (i = 0; i < r->nvalues && !found; i++)
			found = strcmp(r->values[i], v) == 0;
	}
	switch (r->op) {
	case OP_EQ:
	case OP_IN:
		return found;
	case OP_NE:
	case OP_NOTIN:
		return !found;
	case OP_EXISTS:
		return v != NULL;
	case OP_NOTEXISTS:
		return v == NULL;
	case OP_GT:
	case OP_LT:
		if (v == NULL || parse_int(v, &have) != 0 ||
		    parse_int(r->values[0], &want) != 0)
			return 0;
		return r->op == OP_GT ? have > want : have < want;
	}
	return 0;
}

/*
 * The text of a scalar as a field selector compares it: strings as they are,
 * booleans as true/false, integral numbers without a fraction. Null reads as
 * the empty string; objects and arrays have no text and give NULL.
 */
static const char *
scalar_text(const cJSON *v, char *buf, size_t len)
{
	double	 d;

	if (v == NULL || cJSON_IsNull(v))
		return "";
	if (cJSON_IsString(v))
		return v->valuestring;
	if (cJSON_IsTrue(v))
		return "true";
	if (cJSON_IsFalse(v))
		return "false";
	if (cJSON_IsNumber(v)) {
		d = v->valuedouble;
		if (d > -1e18 && d < 1e18 && (double)(long long)d == d)
			snprintf(buf, len, "%lld", (long long)d);
		else {
			snprintf(buf, len, "%.15g", d);
			if (strtod(buf, NULL) != d)
				snprintf(buf, len, "%.17g", d);
		}
		return buf;
	}
	return NULL;
}

/*
 * Find a dotted path in an object. Keys may themselves hold dots (label
 * keys such as "app.kubernetes.io/name"), so when the short split fails the
 * longer ones are tried.
 */
static const cJSON *
lookup(const cJSON *obj, const char *path)
{
	const cJSON	*child, *found;
	const char	*dot = path;
	size_t		 len;

	if (!cJSON_IsObject(obj))
		return NULL;
	for (;;) {
		dot = strchr(dot, '.');
		len = dot != NULL ? (size_t)(dot - path) : strlen(path);
		cJSON_ArrayForEach(child, obj) {
			if (child->string == NULL ||
			    strlen(child->string) != len ||
			    memcmp(child->string, path, len) != 0)
				continue;
			if (dot == NULL)
				return child;
			if ((found = lookup(child, dot + 1)) != NULL)
				return found;
		}
		if (dot == NULL)
			return NULL;
		dot++;
	}
}

/* Match a label selector against metadata.labels (an object or NULL). */
int
selector_match_labels(const selector *sel, const cJSON *labels)
{
	const cJSON	*item;
	const char	*v;
	char		 buf[64];
	size_t		 i;

	if (sel == NULL)
		return 1;
	for (i = 0; i < sel->nreqs; i++) {
		item = NULL;
		if (cJSON_IsObject(labels)) {
			item = cJSON_GetObjectItemCaseSensitive(labels,
			    sel->reqs[i].key);
		}
		v = item != NULL ? scalar_text(item, buf, sizeof buf) : NULL;
		if (!req_match(&sel->reqs[i], v))
			return 0;
	}
	return 1;
}

/* Match a field selector against a whole object. */
int
selector_match_fields(const selector *sel, const cJSON *obj)
{
	const char	*v;
	char		 buf[64];
	size_t		 i;

	if (sel == NULL)
		return 1;
	for (i = 0; i < sel->nreqs; i++) {
		v = scalar_text(lookup(obj, sel->reqs[i].key), buf, sizeof buf);
		if (!req_match(&sel->reqs[i], v))
			return 0;
	}
	return 1;
}

/* Whether a plain value's text can be found verbatim in JSON text. */
static int
plain_value(const char *v)
{
	if (*v == '\0')
		return 0;
	for (; *v != '\0'; v++)
		if (!isalnum((unsigned char)*v) && *v != '-' && *v != '.' &&
		    *v != '_' && *v != '/' && *v != ':')
			return 0;
	return 1;
}

/*
 * Whether a key ending in the last dotted part of path may be in the JSON
 * text: that part and its closing quote (1 when the part is not plain).
 */
static int
key_may_be_in(const char *path, const char *json, size_t len)
{
	const char *dot = strrchr(path, '.');
	const char *last = dot != NULL ? dot + 1 : path;
	char pat[256];
	int n;

	if (!plain_value(last))
		return 1;
	n = snprintf(pat, sizeof pat, "%s\"", last);
	if (n < 0 || (size_t)n >= sizeof pat)
		return 1;
	return memmem(json, len, pat, (size_t)n) != NULL;
}

/*
 * A quick test on an object's serialized JSON before it is parsed: 0 when
 * an equality of a field selector asks for a plain value that the text
 * does not contain at all, or an inequality to "" (the field is there)
 * names a field whose key is not in it (so the object cannot match),
 * else 1.
 */
int
selector_fields_may_match(const selector *sel, const char *json, size_t len)
{
	size_t i;

	if (sel == NULL)
		return 1;
	for (i = 0; i < sel->nreqs; i++) {
		const struct req *r = &sel->reqs[i];

		if (r->op == OP_EQ && r->nvalues == 1 &&
		    plain_value(r->values[0]) &&
		    memmem(json, len, r->values[0], strlen(r->values[0])) ==
		    NULL)
			return 0;
		if (r->op == OP_NE && r->nvalues == 1 &&
		    *r->values[0] == '\0' && !key_may_be_in(r->key, json, len))
			return 0;
	}
	return 1;
}

/* Return the value an equality on path asks for, for index lookups. */
int
selector_label_equals(const selector *sel, size_t i, const char **key,
    const char **value)
{
	size_t	 k;

	if (sel == NULL || sel->fields)
		return 0;
	for (k = 0; k < sel->nreqs; k++) {
		const struct req *r = &sel->reqs[k];

		if ((r->op == OP_EQ || (r->op == OP_IN && r->nvalues == 1)) &&
		    i-- == 0) {
			*key = r->key;
			*value = r->values[0];
			return 1;
		}
	}
	return 0;
}

const char *
selector_field_equals(const selector *sel, const char *path)
{
	size_t	 i;

	if (sel == NULL || !sel->fields || path == NULL)
		return NULL;
	for (i = 0; i < sel->nreqs; i++) {
		if (sel->reqs[i].op == OP_EQ &&
		    strcmp(sel->reqs[i].key, path) == 0)
			return sel->reqs[i].values[0];
	}
	return NULL;
}
