/*
 * The smaller verbs of volray(1): logs, version, api-resources, node
 * (cli_node.c does the work) and completion. completion writes a bash function whose verbs and flags come
 * from the verb table, so it cannot drift from the parser either; kinds
 * and names it asks the server for when the user presses tab.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_res.h"
#include "cli_node.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/xmalloc.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.0.0"
#endif

/* The query of pods/log from the options, as kubectl sends them. */
static int
logs_query(struct cli_buf *path)
{
	char n[32];
	long ms;

	cli_http_query_add(path, "container", cli_opts.container);
	if (cli_opts.follow)
		cli_http_query_add(path, "follow", "true");
	if (cli_opts.previous)
		cli_http_query_add(path, "previous", "true");
	if (cli_opts.tail >= 0) {
		snprintf(n, sizeof n, "%ld", cli_opts.tail);
		cli_http_query_add(path, "tailLines", n);
	}
	if (cli_opts.since != NULL && cli_opts.since_time != NULL)
		return cli_opt_usage("logs", "at most one of --since and "
		    "--since-time may be given");
	if (cli_opts.since != NULL) {
		if ((ms = cli_opt_duration(cli_opts.since)) <= 0)
			return cli_opt_usage("logs", "invalid argument \"%s\" "
			    "for \"--since\" flag: want a duration such as 5m",
			    cli_opts.since);
		snprintf(n, sizeof n, "%ld", (ms + 999) / 1000);
		cli_http_query_add(path, "sinceSeconds", n);
	}
	cli_http_query_add(path, "sinceTime", cli_opts.since_time);
	if (cli_opts.timestamps)
		cli_http_query_add(path, "timestamps", "true");
	if (cli_opts.limit_bytes >= 0) {
		if (cli_opts.limit_bytes == 0)
			return cli_opt_usage("logs", "--limit-bytes must be "
			    "greater than 0");
		snprintf(n, sizeof n, "%ld", cli_opts.limit_bytes);
		cli_http_query_add(path, "limitBytes", n);
	}
	return CLI_OK;
}

/* logs: a container's log as the server keeps it; with -f, followed. */
int
cli_misc_logs(int argc, char **argv)
{
	const struct cli_res *r;
	struct cli_buf path = { 0 };
	const char *name = argv[0], *slash;
	struct cli_http_resp rsp;
	int rc;

	if (argc != 1)
		return cli_opt_usage("logs", "logs takes one pod name");
	if ((slash = strchr(name, '/')) != NULL) {
		if (strncmp(name, "pod/", 4) != 0 &&
		    strncmp(name, "pods/", 5) != 0 &&
		    strncmp(name, "po/", 3) != 0)
			return cli_opt_usage("logs", "logs reads pods only");
		name = slash + 1;
	}
	if ((r = cli_res_resolve("pods")) == NULL)
		return CLI_FAIL;
	cli_res_path(&path, r, cli_obj_ns(r), name, "log");
	if ((rc = logs_query(&path)) != CLI_OK) {
		cli_buf_free(&path);
		return rc;
	}
	if (cli_opts.follow) {
		rc = cli_http_stream(path.p, "*/*", stdout) == 0 ? CLI_OK :
		    CLI_FAIL;
		cli_buf_free(&path);
		return rc;
	}
	cli_http_request("GET", path.p, NULL, NULL, "*/*", &rsp);
	cli_buf_free(&path);
	if (rsp.code != 200) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return CLI_FAIL;
	}
	fwrite(rsp.body.p, 1, rsp.body.len, stdout);
	cli_buf_free(&rsp.body);
	return CLI_OK;
}

/* version: this client's and the server's. */
int
cli_misc_version(int argc, char **argv)
{
	const char *gv;
	cJSON *v;

	if (argc != 0)
		return cli_opt_usage("version", "version takes no arguments");
	printf("Client Version: v%s\n", PACKAGE_VERSION);
	if ((v = cli_http_get_json("/version", NULL)) == NULL)
		return CLI_FAIL;
	gv = json_str(v, "gitVersion");
	printf("Server Version: %s\n", gv != NULL ? gv : "unknown");
	cJSON_Delete(v);
	return CLI_OK;
}

static int
res_cmp(const void *a, const void *b)
{
	const struct cli_res *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c != 0 ? c : strcmp(x->name, y->name);
}

static char *
join(const cJSON *list)
{
	struct cli_buf b = { 0 };
	const cJSON *el;

	cli_buf_add(&b, "", 0);
	cJSON_ArrayForEach(el, list)
		if (cJSON_IsString(el))
			cli_buf_printf(&b, "%s%s", b.len ? "," : "",
			    el->valuestring);
	return b.p;
}

/* Add a row of seven cells, dropping VERBS and CATEGORIES unless wide. */
static void
api_row(struct cli_table *t, char **cells)
{
	int i;

	for (i = t->ncol; i < 7; i++)
		free(cells[i]);
	cli_table_add(t, cells);
}

/* api-resources: the resources discovery found, preferred versions only. */
int
cli_misc_api_resources(int argc, char **argv)
{
	static const char *const head[] = { "NAME", "SHORTNAMES",
	    "APIVERSION", "NAMESPACED", "KIND", "VERBS", "CATEGORIES" };
	const char *out = cli_opts.output;
	const struct cli_res *all;
	struct cli_res *sorted, *r;
	struct cli_table t = { 0 };
	struct cli_buf av = { 0 };
	char *cells[7];
	size_t i, n = 0, nall;

	if (argc != 0)
		return cli_opt_usage("api-resources", "api-resources takes no "
		    "arguments");
	if (out != NULL && strcmp(out, "name") != 0 && strcmp(out, "wide") != 0)
		return cli_opt_usage("api-resources", "-o must be name or "
		    "wide, not %s", out);
	if (cli_res_discover(&all, &nall) != 0)
		return CLI_FAIL;
	sorted = xmalloc((nall + 1) * sizeof *sorted);
	for (i = 0; i < nall; i++)
		if (all[i].preferred)
			sorted[n++] = all[i];
	qsort(sorted, n, sizeof *sorted, res_cmp);
	if (out != NULL && strcmp(out, "name") == 0) {
		for (i = 0; i < n; i++)
			printf("%s%s%s\n", sorted[i].name,
			    *sorted[i].group ? "." : "", sorted[i].group);
		free(sorted);
		return CLI_OK;
	}
	t.ncol = out != NULL ? 7 : 5;
	for (i = 0; i < 7; i++)
		cells[i] = xstrdup(head[i]);
	api_row(&t, cells);
	for (i = 0; i < n; i++) {
		r = &sorted[i];
		av.len = 0;
		cli_buf_printf(&av, "%s%s%s", r->group, *r->group ? "/" : "",
		    r->version);
		cells[0] = xstrdup(r->name);
		cells[1] = join(r->shorts);
		cells[2] = xstrdup(av.p);
		cells[3] = xstrdup(r->namespaced ? "true" : "false");
		cells[4] = xstrdup(r->kind);
		cells[5] = join(r->verbs);
		cells[6] = join(r->categories);
		api_row(&t, cells);
	}
	cli_table_flush(&t);
	cli_buf_free(&av);
	free(sorted);
	return CLI_OK;
}

/* node add ...: simulated nodes (cli_node.c). */
int
cli_misc_node(int argc, char **argv)
{
	return cli_node(argc, argv, &cli_opts.node);
}

/* The bash completion function; verbs and flags from the verb table. */
int
cli_misc_completion(int argc, char **argv)
{
	const struct cli_verb *v;
	const struct cli_opt *o;

	if (argc != 1 || strcmp(argv[0], "bash") != 0)
		return cli_opt_usage("completion", "usage: volray completion "
		    "bash");
	printf("# bash completion for volray; load with\n"
	    "#   source <(volray completion bash)\n"
	    "_volray_flags() {\n\tcase $1 in\n");
	for (v = cli_verbs; v->name != NULL; v++) {
		printf("\t%s) echo", v->name);
		for (o = v->opts; o != NULL && o->name != NULL; o++)
			printf(" --%s", o->name);
		printf(" ;;\n");
	}
	printf("\tesac\n\techo");
	for (o = cli_opt_global; o->name != NULL; o++)
		printf(" --%s", o->name);
	printf("\n}\n\n_volray() {\n"
	    "\tlocal cur=${COMP_WORDS[COMP_CWORD]} verb= kind= ns= i w\n"
	    "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	    "\t\tw=${COMP_WORDS[i]}\n"
	    "\t\tcase $w in\n"
	    "\t\t-n|--namespace) ns=\"-n ${COMP_WORDS[i+1]}\"; i=$((i + 1)) ;;\n"
	    "\t\t-*) ;;\n"
	    "\t\t*) if [ -z \"$verb\" ]; then verb=$w; "
	    "elif [ -z \"$kind\" ]; then kind=$w; fi ;;\n"
	    "\t\tesac\n\tdone\n"
	    "\tcase $cur in -*)\n"
	    "\t\tCOMPREPLY=($(compgen -W \"$(_volray_flags \"$verb\")\" -- "
	    "\"$cur\")); return ;;\n\tesac\n"
	    "\tif [ -z \"$verb\" ]; then\n"
	    "\t\tCOMPREPLY=($(compgen -W \"");
	for (v = cli_verbs; v->name != NULL; v++)
		printf("%s%s", v == cli_verbs ? "" : " ", v->name);
	printf("\" -- \"$cur\")); return\n\tfi\n"
	    "\tcase $verb in\n"
	    "\thelp) COMPREPLY=($(compgen -W \"");
	for (v = cli_verbs; v->name != NULL; v++)
		printf("%s%s", v == cli_verbs ? "" : " ", v->name);
	printf("\" -- \"$cur\")) ;;\n"
	    "\tpolicy) COMPREPLY=($(compgen -W \"list reload check test\" -- \"$cur\")) ;;\n"
	    "\tnode) COMPREPLY=($(compgen -W add -- \"$cur\")) ;;\n"
	    "\trayjob) if [ -z \"$kind\" ]; then COMPREPLY=($(compgen -W logs "
	    "-- \"$cur\")); else COMPREPLY=($(compgen -W \"$(volray $ns get "
	    "rayjobs -o 'jsonpath={.items[*].metadata.name}' 2>/dev/null)\" "
	    "-- \"$cur\")); fi ;;\n"
	    "\tcompletion) COMPREPLY=($(compgen -W bash -- \"$cur\")) ;;\n"
	    "\tlogs) COMPREPLY=($(compgen -W \"$(volray $ns get pods "
	    "-o 'jsonpath={.items[*].metadata.name}' 2>/dev/null)\" -- "
	    "\"$cur\")) ;;\n"
	    "\tget|describe|delete|patch|label|annotate|scale|wait)\n"
	    "\t\tif [ -z \"$kind\" ]; then\n"
	    "\t\t\tCOMPREPLY=($(compgen -W \"$(volray api-resources -o name "
	    "2>/dev/null | sed 's/\\..*//')\" -- \"$cur\"))\n"
	    "\t\telse\n"
	    "\t\t\tCOMPREPLY=($(compgen -W \"$(volray $ns get \"$kind\" "
	    "-o 'jsonpath={.items[*].metadata.name}' 2>/dev/null)\" -- "
	    "\"$cur\"))\n"
	    "\t\tfi ;;\n"
	    "\tesac\n}\n"
	    "complete -F _volray volray\n");
	return CLI_OK;
}
