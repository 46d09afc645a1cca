/*
 * volray describe: objects in kubectl's describe layout, then the events
 * about them, found with the involvedObject field selectors (name,
 * namespace, kind, and uid except for nodes, whose events name the node's
 * name as uid). Pods, nodes, deployments and jobs have describers of
 * their own (here and in cli_describe_kinds.c); every other kind, the Ray
 * and Volcano resources among them, gets kubectl's generic one: name,
 * namespace, labels and annotations, then every other field, keys in
 * words ("headGroupSpec" as "Head Group Spec") and nested by indentation.
 * Lines are built with tab-separated cells and laid out at the end as
 * Go's tabwriter does, so columns line up as kubectl's do.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_describe.h"
#include "cli_http.h"
#include "cli_res.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

#define LAST_APPLIED	"kubectl.kubernetes.io/last-applied-configuration"

void
cli_describe_w(struct cli_buf *b, int level, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int i;

	for (i = 0; i < level; i++)
		cli_buf_add(b, "  ", 2);
	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	cli_buf_add(b, s, strlen(s));
	free(s);
}

/* Width of UTF-8 text in characters. */
static size_t
width(const char *s, size_t n)
{
	size_t w = 0, i;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* The lines being laid out: cells of each, and widths per column. */
struct tw {
	char	**line;
	size_t	  nline;
	size_t	 *ncell;	/* cells per line, the last one unterminated */
	size_t	**w;		/* w[line][col]: width of a terminated cell */
};

/* Cell col of line l: its text and length. */
static const char *
cell(const struct tw *t, size_t l, size_t col, size_t *len)
{
	const char *p = t->line[l], *e;
	size_t i;

	for (i = 0; i < col; i++)
		p = strchr(p, '\t') + 1;
	e = strchr(p, '\t');
	*len = e != NULL ? (size_t)(e - p) : strlen(p);
	return p;
}

/* Go's tabwriter.format: widths of column col for runs of lines
 * [l0, l1) that have a terminated cell there, then the next column. */
static void
format(struct tw *t, size_t l0, size_t l1, size_t col)
{
	size_t l, start, wmax, len;

	for (l = l0; l < l1; l++) {
		if (col + 1 >= t->ncell[l])
			continue;
		start = l;
		wmax = 0;
		for (; l < l1 && col + 1 < t->ncell[l]; l++) {
			cell(t, l, col, &len);
			if (width(cell(t, l, col, &len), len) + 2 > wmax)
				wmax = width(cell(t, l, col, &len), len) + 2;
		}
		for (len = start; len < l; len++)
			t->w[len][col] = wmax;
		format(t, start, l, col + 1);
		l--;
	}
}

/* Lay the lines out and print them. */
void
cli_describe_flush(struct cli_buf *b)
{
	struct tw t = { 0 };
	char *p, *nl, *s;
	size_t l, c, len, n;

	if (b->len == 0)
		return;
	for (p = b->p; p != NULL && *p != '\0'; p = nl) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl++ = '\0';
		t.line = xrealloc(t.line, (t.nline + 1) * sizeof *t.line);
		t.ncell = xrealloc(t.ncell, (t.nline + 1) *
		    sizeof *t.ncell);
		t.w = xrealloc(t.w, (t.nline + 1) * sizeof *t.w);
		t.line[t.nline] = p;
		for (n = 1, s = p; (s = strchr(s, '\t')) != NULL; s++)
			n++;
		t.ncell[t.nline] = n;
		t.w[t.nline] = xcalloc(n, sizeof **t.w);
		t.nline++;
	}
	format(&t, 0, t.nline, 0);
	for (l = 0; l < t.nline; l++) {
		for (c = 0; c < t.ncell[l]; c++) {
			s = (char *)cell(&t, l, c, &len);
			fwrite(s, 1, len, stdout);
			if (c + 1 < t.ncell[l])
				for (n = width(s, len); n < t.w[l][c]; n++)
					fputc(' ', stdout);
		}
		fputc('\n', stdout);
		free(t.w[l]);
	}
	free(t.line);
	free(t.ncell);
	free(t.w);
	b->len = 0;
	b->p[0] = '\0';
}

/* "Labels:\tk=v" and "\tk2=v2" lines, sorted, or <none>. */
void
cli_describe_labels(struct cli_buf *b, int level, const char *title,
    const cJSON *labels)
{
	char *s = cli_table_labels(labels, "\n"), *p, *nl;
	int first = 1;

	for (p = s; p != NULL; p = nl) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl++ = '\0';
		if (first)
			cli_describe_w(b, level, "%s:\t%s\n", title, p);
		else
			cli_describe_w(b, level, "\t%s\n", p);
		first = 0;
	}
	free(s);
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp((*(const cJSON *const *)a)->string,
	    (*(const cJSON *const *)b)->string);
}

/* Annotations as "k: v" lines, sorted, long values cut at 140. */
void
cli_describe_annotations(struct cli_buf *b, int level, const cJSON *ann)
{
	const cJSON *el, **v;
	size_t n = 0, i;
	const char *val;

	v = xmalloc((cJSON_GetArraySize(ann) + 1) * sizeof *v);
	cJSON_ArrayForEach(el, ann)
		if (strcmp(el->string, LAST_APPLIED) != 0)
			v[n++] = el;
	qsort(v, n, sizeof *v, key_cmp);
	if (n == 0)
		cli_describe_w(b, level, "Annotations:\t<none>\n");
	for (i = 0; i < n; i++) {
		val = cJSON_IsString(v[i]) ? v[i]->valuestring : "";
		cli_describe_w(b, level, "%s%s: %.140s%s\n", i == 0 ?
		    "Annotations:\t" : "\t", v[i]->string, val,
		    strlen(val) > 140 ? "..." : "");
	}
	free(v);
}

char *
cli_describe_time(const char *ts)
{
	struct tm tm = { 0 };
	char out[64];
	time_t t;

	if (ts == NULL || strptime(ts, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return xstrdup("<unknown>");
	t = timegm(&tm);
	strftime(out, sizeof out, "%a, %d %b %Y %H:%M:%S %z", localtime(&t));
	return xstrdup(out);
}

char *
cli_describe_value(const cJSON *v)
{
	char buf[64];

	if (cJSON_IsString(v))
		return xstrdup(v->valuestring);
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble == (double)(long long)v->valuedouble)
			snprintf(buf, sizeof buf, "%lld",
			    (long long)v->valuedouble);
		else
			snprintf(buf, sizeof buf, "%g", v->valuedouble);
		return xstrdup(buf);
	}
	if (cJSON_IsBool(v))
		return xstrdup(cJSON_IsTrue(v) ? "true" : "false");
	if (v == NULL || cJSON_IsNull(v))
		return xstrdup("<nil>");
	return cJSON_PrintUnformatted(v);
}

/* kubectl's smartLabelFor: "headGroupSpec" as "Head Group Spec". */
static char *
smart_label(const char *f)
{
	static const char *const acronyms[] = { "API", "URL", "UID", "OSB",
	    "GUID" };
	struct cli_buf b = { 0 }, part = { 0 };
	const char *p, *q;
	size_t i;

	for (p = f; *p != '\0'; p++)
		if (!isalpha((unsigned char)*p) && *p != '-')
			return xstrdup(f);
	cli_buf_add(&b, "", 0);
	for (p = f; *p != '\0'; p = q) {
		/* A part: a run of capitals (less the one starting the next
		 * word), or one capital and lower-case letters, or a run of
		 * dashes, which kubectl keeps: "gcs-server" is "Gcs - Server". */
		q = p + 1;
		if (*p == '-') {
			while (*q == '-')
				q++;
		} else if (isupper((unsigned char)*p)) {
			while (isupper((unsigned char)*q))
				q++;
			if (q - p > 1 && islower((unsigned char)*q))
				q--;
			else
				while (islower((unsigned char)*q))
					q++;
		} else
			while (islower((unsigned char)*q))
				q++;
		part.len = 0;
		cli_buf_add(&part, p, (size_t)(q - p));
		for (i = 0; i < part.len; i++)
			part.p[i] = toupper((unsigned char)part.p[i]);
		for (i = 0; i < sizeof acronyms / sizeof acronyms[0]; i++)
			if (strcmp(part.p, acronyms[i]) == 0)
				break;
		if (i == sizeof acronyms / sizeof acronyms[0]) {
			part.len = 0;
			cli_buf_add(&part, p, (size_t)(q - p));
			part.p[0] = toupper((unsigned char)part.p[0]);
		}
		cli_buf_printf(&b, "%s%s", b.len > 0 ? " " : "", part.p);
	}
	cli_buf_free(&part);
	return b.p;
}

/* kubectl's printUnstructuredContent: fields sorted, nested by level. */
static void
generic(struct cli_buf *b, int level, const cJSON *obj, const char *prefix)
{
	static const char *const skip[] = { ".metadata.managedFields",
	    ".metadata.name", ".metadata.namespace", ".metadata.labels",
	    ".metadata.annotations" };
	struct cli_buf path = { 0 };
	const cJSON *el, **v, *ch;
	size_t n = 0, i, k;
	char *label, *val;

	v = xmalloc((cJSON_GetArraySize(obj) + 1) * sizeof *v);
	cJSON_ArrayForEach(el, obj)
		v[n++] = el;
	qsort(v, n, sizeof *v, key_cmp);
	for (i = 0; i < n; i++) {
		path.len = 0;
		cli_buf_printf(&path, "%s.%s", prefix, v[i]->string);
		for (k = 0; k < sizeof skip / sizeof skip[0]; k++)
			if (strcmp(path.p, skip[k]) == 0)
				break;
		if (k < sizeof skip / sizeof skip[0])
			continue;
		label = smart_label(v[i]->string);
		if (cJSON_IsObject(v[i])) {
			cli_describe_w(b, level, "%s:\n", label);
			generic(b, level + 1, v[i], path.p);
		} else if (cJSON_IsArray(v[i])) {
			cli_describe_w(b, level, "%s:\n", label);
			cJSON_ArrayForEach(ch, v[i]) {
				if (cJSON_IsObject(ch)) {
					generic(b, level + 1, ch, path.p);
					continue;
				}
				val = cli_describe_value(ch);
				cli_describe_w(b, level + 1, "%s\n", val);
				free(val);
			}
		} else {
			val = cli_describe_value(v[i]);
			cli_describe_w(b, level, "%s:\t%s\n", label, val);
			free(val);
		}
		free(label);
	}
	cli_buf_free(&path);
	free(v);
}

/* The Name/Namespace/Labels/Annotations head of most describers. */
static void
head(struct cli_buf *b, const cJSON *obj)
{
	const char *ns = json_str(obj, "metadata.namespace");

	cli_describe_w(b, 0, "Name:\t%s\n", json_str(obj, "metadata.name"));
	cli_describe_w(b, 0, "Namespace:\t%s\n", ns != NULL ? ns : "");
	cli_describe_labels(b, 0, "Labels", json_at(obj, "metadata.labels"));
	cli_describe_annotations(b, 0, json_at(obj, "metadata.annotations"));
}

static int
event_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	const char *tx = json_str(x, "lastTimestamp"), *ty;

	ty = json_str(y, "lastTimestamp");
	if (tx == NULL)
		tx = json_str(x, "eventTime");
	if (ty == NULL)
		ty = json_str(y, "eventTime");
	return strcmp(tx != NULL ? tx : "", ty != NULL ? ty : "");
}

/* The Events: section, from the events about obj. */
static void
events(struct cli_buf *b, const struct cli_res *r, const cJSON *obj)
{
	const struct cli_res *er = cli_res_resolve("events");
	struct cli_buf path = { 0 }, sel = { 0 }, age = { 0 }, from = { 0 };
	const char *ns = json_str(obj, "metadata.namespace"), *last, *uid;
	const cJSON *el, **v;
	size_t n = 0, i;
	char *a, *a0;
	cJSON *list;
	double cnt;

	if (er == NULL)
		return;
	cli_buf_printf(&sel, "involvedObject.name=%s",
	    json_str(obj, "metadata.name"));
	if (ns != NULL)
		cli_buf_printf(&sel, ",involvedObject.namespace=%s", ns);
	cli_buf_printf(&sel, ",involvedObject.kind=%s", r->kind);
	uid = json_str(obj, "metadata.uid");
	if (uid != NULL && strcmp(r->kind, "Node") != 0)
		cli_buf_printf(&sel, ",involvedObject.uid=%s", uid);
	cli_res_path(&path, er, ns, NULL, NULL);
	cli_http_query_add(&path, "fieldSelector", sel.p);
	list = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	cli_buf_free(&sel);
	v = xmalloc((cJSON_GetArraySize(json_at(list, "items")) +
	    1) * sizeof *v);
	cJSON_ArrayForEach(el, json_at(list, "items"))
		v[n++] = el;
	qsort(v, n, sizeof *v, event_cmp);
	if (n == 0)
		cli_describe_w(b, 0, "Events:\t<none>\n");
	else {
		cli_describe_w(b, 0, "Events:\n");
		cli_describe_w(b, 1, "Type\tReason\tAge\tFrom\tMessage\n");
		cli_describe_w(b, 1, "----\t------\t----\t----\t-------\n");
	}
	for (i = 0; i < n; i++) {
		el = v[i];
		if ((last = json_str(el, "lastTimestamp")) == NULL)
			last = json_str(el, "eventTime");
		a = cli_obj_age(last);
		age.len = from.len = 0;
		cnt = json_at(el, "count") != NULL ?
		    json_at(el, "count")->valuedouble : 1;
		if (cnt > 1) {
			a0 = cli_obj_age(json_str(el, "firstTimestamp"));
			cli_buf_printf(&age, "%s (x%.0f over %s)", a, cnt, a0);
			free(a0);
		} else
			cli_buf_printf(&age, "%s", a);
		free(a);
		cli_buf_add(&from, "", 0);
		if (json_str(el, "source.component") != NULL &&
		    *json_str(el, "source.component") != '\0')
			cli_buf_printf(&from, "%s", json_str(el,
			    "source.component"));
		else if (json_str(el, "reportingController") != NULL)
			cli_buf_printf(&from, "%s", json_str(el,
			    "reportingController"));
		if (json_str(el, "source.host") != NULL &&
		    *json_str(el, "source.host") != '\0')
			cli_buf_printf(&from, ", %s", json_str(el,
			    "source.host"));
		cli_describe_w(b, 1, "%s\t%s\t%s\t%s\t%s\n",
		    json_str(el, "type") ? json_str(el, "type") : "",
		    json_str(el, "reason") ? json_str(el, "reason") : "",
		    age.p, from.p,
		    json_str(el, "message") ? json_str(el, "message") : "");
	}
	free(v);
	cli_buf_free(&age);
	cli_buf_free(&from);
	cJSON_Delete(list);
}

/* Describe one object of r. */
static void
describe_one(const struct cli_res *r, const cJSON *obj)
{
	struct cli_buf b = { 0 };

	cli_buf_add(&b, "", 0);
	if (*r->group == '\0' && strcmp(r->kind, "Pod") == 0)
		cli_describe_pod(&b, obj);
	else if (*r->group == '\0' && strcmp(r->kind, "Node") == 0)
		cli_describe_node(&b, obj);
	else if (strcmp(r->group, "apps") == 0 &&
	    strcmp(r->kind, "Deployment") == 0)
		cli_describe_deployment(&b, obj);
	else if (strcmp(r->group, "batch") == 0 && strcmp(r->kind, "Job") == 0)
		cli_describe_job(&b, obj);
	else if (*r->group == '\0' && strcmp(r->kind, "Namespace") == 0) {
		cli_describe_namespace(&b, obj);
		cli_describe_flush(&b);
		cli_buf_free(&b);
		return;
	}
	else {
		head(&b, obj);
		generic(&b, 0, obj, "");
		if (strcmp(r->group, "scheduling.volcano.sh") == 0)
			cli_describe_volcano(&b, r->kind, obj);
	}
	events(&b, r, obj);
	cli_describe_flush(&b);
	cli_buf_free(&b);
}

/* describe TYPE [NAME...] | TYPE/NAME [-l SEL]: each object, two blank
 * lines apart. */
int
cli_describe_run(int argc, char **argv)
{
	const struct cli_res *r;
	struct cli_buf path = { 0 };
	const char *name, *ns;
	int rest, rc, i, n = 0;
	const cJSON *el;
	cJSON *obj;

	if ((rc = cli_obj_target("describe", argc, argv, &r, &name, &rest)) !=
	    CLI_OK)
		return rc;
	ns = cli_obj_ns(r);
	if (name == NULL) {
		cli_res_path(&path, r, ns, NULL, NULL);
		cli_http_query_add(&path, "labelSelector", cli_opts.selector);
		obj = cli_http_list(path.p, NULL);
		cli_buf_free(&path);
		if (obj == NULL)
			return CLI_FAIL;
		cJSON_ArrayForEach(el, json_at(obj, "items")) {
			if (n++ > 0)
				fputs("\n\n", stdout);
			describe_one(r, el);
		}
		if (n == 0)
			fprintf(stderr, "No resources found in %s namespace.\n",
			    ns != NULL ? ns : "any");
		cJSON_Delete(obj);
		return CLI_OK;
	}
	for (i = rest - 1; i < argc; i++) {
		path.len = 0;
		cli_res_path(&path, r, ns, i == rest - 1 ? name : argv[i],
		    NULL);
		if ((obj = cli_http_get_json(path.p, NULL)) == NULL) {
			rc = CLI_FAIL;
			continue;
		}
		if (n++ > 0)
			fputs("\n\n", stdout);
		describe_one(r, obj);
		cJSON_Delete(obj);
	}
	cli_buf_free(&path);
	return rc;
}
