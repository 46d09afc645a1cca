/*
 * Option parsing for volray(1), kubectl's way: options anywhere on the
 * line, --name=value or --name value, -x value, -xvalue and -x=value,
 * flags that may be combined (-Aw) or given =true/=false, and "--" to end
 * them. The verb is found first, so that the parser knows its table: a word
 * is the verb if it is the first that is neither an option nor the value of
 * an option that takes one (whichever verb's it is). Help is printed from
 * the same tables.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_opt.h"
#include "lib/xmalloc.h"

struct cli_opts cli_opts = { .tail = -1, .timeout_ms = 30000,
    .replicas = -1, .grace = -1, .limit_bytes = -1,
    .ray = { .min_replicas = -1, .max_replicas = -1 } };

const struct cli_opt cli_opt_global[] = {
	{ "kubeconfig", 0, CLI_OPT_STR, &cli_opts.conn.kubeconfig, "FILE",
	    "read this kubeconfig" },
	{ "server", 's', CLI_OPT_STR, &cli_opts.conn.server, "URL",
	    "talk to this server instead of the kubeconfig's" },
	{ "token", 0, CLI_OPT_STR, &cli_opts.conn.token, "TOKEN",
	    "send this bearer token" },
	{ "certificate-authority", 0, CLI_OPT_STR, &cli_opts.conn.ca_file,
	    "FILE", "verify the server against these CA certificates" },
	{ "insecure-skip-tls-verify", 0, CLI_OPT_FLAG,
	    &cli_opts.conn.insecure, NULL,
	    "do not verify the server's certificate" },
	{ "namespace", 'n', CLI_OPT_STR, &cli_opts.ns, "NS",
	    "work in this namespace" },
	{ "request-timeout", 0, CLI_OPT_DURATION,
	    &cli_opts.conn.req_timeout_ms, "DURATION",
	    "give up on a request after this long" },
	{ "no-color", 0, CLI_OPT_FLAG, &cli_color_disabled, NULL,
	    "no colour even on a terminal (as NO_COLOR=1)" },
	{ "help", 'h', CLI_OPT_FLAG, &cli_opts.help, NULL,
	    "print this help" },
	{ NULL, 0, 0, NULL, NULL, NULL }
};

/* Say a usage error about a verb on stderr; CLI_USAGE. */
int
cli_opt_usage(const char *verb, const char *fmt, ...)
{
	va_list ap;

	cli_color_error();
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (verb != NULL)
		fprintf(stderr, "\nSee 'volray help %s' for usage.\n", verb);
	else
		fputs("\nSee 'volray help' for usage.\n", stderr);
	return CLI_USAGE;
}

/* Parse "30s", "500ms", "2m", "1h30m" or a plain number of seconds. */
long
cli_opt_duration(const char *s)
{
	long total = 0, n;
	char *end;

	if (*s == '\0')
		return -1;
	n = strtol(s, &end, 10);
	if (*end == '\0')
		return n < 0 ? -1 : n * 1000;
	while (*s != '\0') {
		if (!isdigit((unsigned char)*s))
			return -1;
		n = strtol(s, &end, 10);
		if (strncmp(end, "ms", 2) == 0) {
			total += n;
			end += 2;
		} else if (*end == 's')
			total += n * 1000, end++;
		else if (*end == 'm')
			total += n * 60000, end++;
		else if (*end == 'h')
			total += n * 3600000, end++;
		else
			return -1;
		s = end;
	}
	return total;
}

/* The option of a table called name (len bytes) or letter. */
static const struct cli_opt *
find(const struct cli_opt *t, const char *name, size_t len, int letter)
{
	for (; t != NULL && t->name != NULL; t++) {
		if (letter != 0 && t->letter == letter)
			return t;
		if (letter == 0 && strlen(t->name) == len &&
		    strncmp(t->name, name, len) == 0)
			return t;
	}
	return NULL;
}

/* The option in the global table or the verb's; any verb's if v is NULL. */
static const struct cli_opt *
lookup(const struct cli_verb *verbs, const struct cli_verb *v,
    const char *name, size_t len, int letter)
{
	const struct cli_opt *o;

	if ((o = find(cli_opt_global, name, len, letter)) != NULL)
		return o;
	if (v != NULL)
		return find(v->opts, name, len, letter);
	for (v = verbs; v->name != NULL; v++)
		if ((o = find(v->opts, name, len, letter)) != NULL)
			return o;
	return NULL;
}

/* Store one option's value (NULL for a flag without =value). */
static int
set(const struct cli_verb *v, const struct cli_opt *o, const char *value)
{
	char *end;
	long n;

	switch (o->type) {
	case CLI_OPT_FLAG:
		if (value == NULL || strcmp(value, "true") == 0)
			*(int *)o->dst = 1;
		else if (strcmp(value, "false") == 0)
			*(int *)o->dst = 0;
		else
			return cli_opt_usage(v->name, "invalid argument \"%s\" "
			    "for \"--%s\" flag: want true or false", value,
			    o->name);
		break;
	case CLI_OPT_STR:
		*(const char **)o->dst = value;
		break;
	case CLI_OPT_FILES:
		cli_opts.files = xrealloc(cli_opts.files,
		    (cli_opts.nfiles + 1) * sizeof *cli_opts.files);
		cli_opts.files[cli_opts.nfiles++] = value;
		break;
	case CLI_OPT_LONG:
		n = strtol(value, &end, 10);
		if (*value == '\0' || *end != '\0')
			return cli_opt_usage(v->name, "invalid argument \"%s\" "
			    "for \"--%s\" flag: want a number", value, o->name);
		*(long *)o->dst = n;
		break;
	case CLI_OPT_DURATION:
		if ((n = cli_opt_duration(value)) < 0)
			return cli_opt_usage(v->name, "invalid argument \"%s\" "
			    "for \"--%s\" flag: want a duration such as 30s",
			    value, o->name);
		*(long *)o->dst = n;
		break;
	}
	return 0;
}

/* Does argv[i] start an option (not "-" alone, not after "--")? */
static int
is_option(const char *a)
{
	return a[0] == '-' && a[1] != '\0';
}

/* Index of the verb's word, or argc; skips options and their values. */
static int
verb_index(const struct cli_verb *verbs, int argc, char **argv)
{
	const struct cli_opt *o;
	const char *a, *eq;
	int i;

	for (i = 1; i < argc; i++) {
		a = argv[i];
		if (strcmp(a, "--") == 0)
			return i + 1;
		if (!is_option(a))
			return i;
		if (a[1] == '-') {
			eq = strchr(a + 2, '=');
			o = lookup(verbs, NULL, a + 2, eq != NULL ?
			    (size_t)(eq - a - 2) : strlen(a + 2), 0);
			if (o != NULL && o->type != CLI_OPT_FLAG && eq == NULL)
				i++;
		} else {
			o = lookup(verbs, NULL, NULL, 0, (unsigned char)a[1]);
			if (o != NULL && o->type != CLI_OPT_FLAG && a[2] == '\0')
				i++;
		}
	}
	return argc;
}

/* Parse one "-xyz" word of letters; *i moves past a value it takes. */
static int
parse_letters(const struct cli_verb *verbs, const struct cli_verb *v,
    int argc, char **argv, int *i)
{
	const struct cli_opt *o;
	const char *p = argv[*i] + 1;
	int rc;

	for (; *p != '\0'; p++) {
		o = lookup(verbs, v, NULL, 0, (unsigned char)*p);
		if (o == NULL)
			return cli_opt_usage(v->name, "unknown shorthand flag: "
			    "'%c' in %s", *p, argv[*i]);
		if (o->type == CLI_OPT_FLAG) {
			if ((rc = set(v, o, NULL)) != 0)
				return rc;
			continue;
		}
		if (p[1] == '=')
			return set(v, o, p + 2);
		if (p[1] != '\0')
			return set(v, o, p + 1);
		if (*i + 1 >= argc)
			return cli_opt_usage(v->name, "flag needs an argument: "
			    "'%c' in -%c", *p, *p);
		return set(v, o, argv[++*i]);
	}
	return 0;
}

/* Parse the command line with the global table and the verb's. */
int
cli_opt_parse(const struct cli_verb *verbs, int *argc, char ***argv,
    const struct cli_verb **verb)
{
	static const struct cli_verb none = { "", "", "", NULL, NULL, 1 };
	const struct cli_verb *v = &none;
	const struct cli_opt *o;
	char **rest, *a, *eq;
	int i, vi, n = 0, rc, dashes = 0;
	size_t len;

	*verb = NULL;
	vi = verb_index(verbs, *argc, *argv);
	if (vi < *argc) {
		for (v = verbs; v->name != NULL; v++)
			if (strcmp(v->name, (*argv)[vi]) == 0)
				break;
		if (v->name == NULL)
			return cli_opt_usage(NULL, "unknown command \"%s\"",
			    (*argv)[vi]);
		*verb = v;
	}
	rest = xmalloc((*argc + 1) * sizeof *rest);
	for (i = 1; i < *argc; i++) {
		a = (*argv)[i];
		if (i == vi)
			continue;
		if (dashes || !is_option(a)) {
			rest[n++] = a;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			dashes = 1;
			continue;
		}
		if (a[1] != '-') {
			if ((rc = parse_letters(verbs, v, *argc, *argv, &i)) != 0)
				goto fail;
			continue;
		}
		eq = strchr(a + 2, '=');
		len = eq != NULL ? (size_t)(eq - a - 2) : strlen(a + 2);
		if ((o = lookup(verbs, v, a + 2, len, 0)) == NULL) {
			rc = cli_opt_usage(v->name[0] ? v->name : NULL,
			    "unknown flag: --%.*s", (int)len, a + 2);
			goto fail;
		}
		if (eq == NULL && o->type != CLI_OPT_FLAG) {
			if (i + 1 >= *argc) {
				rc = cli_opt_usage(v->name, "flag needs an "
				    "argument: --%s", o->name);
				goto fail;
			}
			eq = (*argv)[++i] - 1;
		}
		if ((rc = set(v, o, eq != NULL ? eq + 1 : NULL)) != 0)
			goto fail;
	}
	rest[n] = NULL;
	*argc = n;
	*argv = rest;
	return 0;
fail:
	free(rest);
	return rc;
}

/* An option as help shows it: "-l, --selector SELECTOR" (free it). */
static char *
opt_words(const struct cli_opt *o)
{
	struct cli_buf b = { 0 };

	cli_buf_printf(&b, "%s%c%s--%s", o->letter ? "-" : "",
	    o->letter ? o->letter : ' ', o->letter ? ", " : "   ", o->name);
	if (o->arg != NULL)
		cli_buf_printf(&b, " %s", o->arg);
	return b.p;
}

/* The widest option of a table, for lining up help. */
static int
opt_width(const struct cli_opt *t, int w)
{
	char *s;

	for (; t != NULL && t->name != NULL; t++) {
		s = opt_words(t);
		if ((int)strlen(s) > w)
			w = (int)strlen(s);
		free(s);
	}
	return w;
}

/* One option's line of help: "  -l, --selector SEL   help". */
static void
help_opt(FILE *f, const struct cli_opt *o, int w)
{
	char *s = opt_words(o);

	fprintf(f, "  %-*s  %s\n", w, s, o->help);
	free(s);
}

/* Print a verb's usage, summary and options. */
void
cli_opt_help(FILE *f, const struct cli_verb *v)
{
	const struct cli_opt *o;
	int w = opt_width(v->opts, opt_width(cli_opt_global, 0));

	fprintf(f, "usage: volray %s%s%s\n\n%s\n", v->name, *v->args ? " " : "",
	    v->args, v->summary);
	if (v->opts != NULL && v->opts->name != NULL) {
		fputs("\nOptions:\n", f);
		for (o = v->opts; o->name != NULL; o++)
			help_opt(f, o, w);
	}
	fputs("\nGlobal options:\n", f);
	for (o = cli_opt_global; o->name != NULL; o++)
		help_opt(f, o, w);
}
