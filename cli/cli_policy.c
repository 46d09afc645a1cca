/*
 * volray policy: list and reload talk to the daemon; check and test run
 * the scheduler framework in this process (libvolray_sched.a) and need no
 * daemon. list reads GET /apis/volray.io/v1/policy (core/api/policyinfo.c)
 * and prints one row per Lua controller, scheduler plugin and the
 * scheduler.yaml in force, with the file each was loaded from and when
 * (-o wide: a plugin's failurePolicy and arguments too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "cli_table.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/sharedir.h"
#include "lib/xmalloc.h"
#include "sched/policytest.h"

#define POLICY_PATH	"/apis/volray.io/v1/policy"
#define RELOAD_PATH	"/apis/volray.io/v1/policy/reload"

/* policy check DIR / policy test [DIR]: the framework in this process. */
static int
policy_offline(const char *verb, const char *dir)
{
	char *share, *cause = NULL;
	int rc;

	if ((share = share_dir_find(&cause)) == NULL) {
		fprintf(stderr, "volray: %s\n", cause);
		free(cause);
		return CLI_FAIL;
	}
	if (strcmp(verb, "check") == 0)
		rc = policytest_check(share, dir, stdout, &cause);
	else {
		/* A plugin's failure is told once, in its case's verdict,
		   not again by the scheduler's log. */
		log_set_level(LOG_ERROR);
		rc = policytest_run(share, dir, stdout, &cause);
	}
	free(share);
	if (rc < 0) {
		fprintf(stderr, "volray: policy %s: %s\n", verb, cause);
		free(cause);
		return CLI_FAIL;
	}
	return rc == 0 ? CLI_OK : CLI_FAIL;
}

/* One row: KIND NAME TIER FILE LOADED [FAILUREPOLICY ARGUMENTS]. */
static void
row(struct cli_table *t, const char *kind, const cJSON *el, int wide)
{
	char *cells[7];
	const cJSON *tier = json_at(el, "tier");
	struct cli_buf b = { 0 };

	cells[0] = xstrdup(kind);
	cells[1] = xstrdup(json_str(el, "name") != NULL ?
	    json_str(el, "name") : "scheduler.yaml");
	cli_buf_add(&b, "", 0);
	if (cJSON_IsNumber(tier))
		cli_buf_printf(&b, "%d", tier->valueint);
	else
		cli_buf_printf(&b, "<none>");
	cells[2] = b.p;
	cells[3] = xstrdup(json_str(el, "file") != NULL ?
	    json_str(el, "file") : "");
	cells[4] = cli_obj_age(json_str(el, "loadedAt"));
	if (wide) {
		/* Ignore (skipped for the session) or Fail (a rejection)
		   when a plugin errs; controllers and the config have none. */
		cells[5] = xstrdup(json_str(el, "failurePolicy") != NULL ?
		    json_str(el, "failurePolicy") : "<none>");
		cells[6] = json_at(el, "arguments") != NULL ?
		    cJSON_PrintUnformatted(json_at(el, "arguments")) :
		    xstrdup("<none>");
	}
	cli_table_add(t, cells);
}

/* policy list: what the daemon runs. */
static int
policy_list(void)
{
	static const char *const head[] = { "KIND", "NAME", "TIER", "FILE",
	    "LOADED", "FAILUREPOLICY", "ARGUMENTS" };
	const char *out = cli_opts.output;
	struct cli_table t = { 0 };
	const cJSON *el;
	char *cells[7];
	cJSON *doc;
	int i, wide = out != NULL && strcmp(out, "wide") == 0;

	if (out != NULL && !wide && strcmp(out, "json") != 0 &&
	    strcmp(out, "yaml") != 0)
		return cli_opt_usage("policy", "policy list -o must be json, "
		    "yaml or wide, not %s", out);
	if (cli_http_open(&cli_opts.conn) != 0)
		return CLI_FAIL;
	if ((doc = cli_http_get_json(POLICY_PATH, NULL)) == NULL) {
		cli_http_close();
		return CLI_FAIL;
	}
	if (out != NULL && !wide) {
		i = cli_print_objects(doc, out, NULL, 0);
		cJSON_Delete(doc);
		cli_http_close();
		return i == 0 ? CLI_OK : CLI_FAIL;
	}
	t.ncol = wide ? 7 : 5;
	for (i = 0; i < t.ncol; i++)
		cells[i] = xstrdup(head[i]);
	cli_table_add(&t, cells);
	cJSON_ArrayForEach(el, json_at(doc, "controllers"))
		row(&t, "controller", el, wide);
	cJSON_ArrayForEach(el, json_at(doc, "plugins"))
		row(&t, "plugin", el, wide);
	if (json_at(doc, "config") != NULL)
		row(&t, "config", json_at(doc, "config"), wide);
	cli_table_flush(&t);
	cJSON_Delete(doc);
	cli_http_close();
	return CLI_OK;
}

/* policy reload: ask the daemon to reload Lua policies and scheduler.yaml. */
static int
policy_reload(void)
{
	struct cli_http_resp rsp;
	const char *msg;
	cJSON *st;

	if (cli_http_open(&cli_opts.conn) != 0)
		return CLI_FAIL;
	cli_http_request("POST", RELOAD_PATH, "application/json", "{}", NULL,
	    &rsp);
	if (rsp.code < 200 || rsp.code > 299) {
		cli_http_report(&rsp);
		if (rsp.code == 404 || rsp.code == 405)
			fprintf(stderr, "volray: this server has no policy "
			    "reload endpoint; send volrayd SIGHUP instead\n");
		cli_buf_free(&rsp.body);
		cli_http_close();
		return CLI_FAIL;
	}
	st = cJSON_Parse(rsp.body.p);
	msg = json_str(st, "message");
	printf("%s\n", msg != NULL && *msg != '\0' ? msg : "policies reloaded");
	cJSON_Delete(st);
	cli_buf_free(&rsp.body);
	cli_http_close();
	return CLI_OK;
}

int
cli_policy_run(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[0], "check") == 0)
		return policy_offline("check", argv[1]);
	if ((argc == 1 || argc == 2) && strcmp(argv[0], "test") == 0)
		return policy_offline("test", argc == 2 ? argv[1] : NULL);
	if (argc == 1 && strcmp(argv[0], "list") == 0)
		return policy_list();
	if (argc == 1 && strcmp(argv[0], "reload") == 0)
		return policy_reload();
	if (argc == 2 && strcmp(argv[0], "dry-run") == 0)
		return cli_policy_dry_run(argv[1]);
	return cli_opt_usage("policy", "usage: volray policy list | reload | "
	    "check DIR | test [DIR] | dry-run DIR");
}
