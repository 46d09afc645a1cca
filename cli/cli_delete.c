/*
 * volray delete and wait. delete sends DELETE with DeleteOptions (the
 * propagation policy of --cascade, --grace-period) for named objects,
 * those a selector matches, or a file's documents; with --wait it then
 * waits, as wait --for=delete does, until each is gone. wait reads the
 * object (with --for=create, the list of that one name while it is not
 * there), then follows a watch on that one name and reads it again
 * whenever the watch ends or expires (410), until the condition holds or
 * the time is up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_res.h"
#include "lib/json.h"
#include "lib/jsonpath.h"
#include "lib/xmalloc.h"

/* What wait waits for. */
struct waitfor {
	int		 deletion;	/* --for=delete */
	int		 creation;	/* --for=create */
	char		*cond, *value;	/* --for=condition=COND[=VALUE] */
	char		*path;		/* --for=jsonpath=PATH[=VALUE] */
	int		 met, gone, expired;
	char		*rv;
	long		 code;
};

/* Does the jsonpath match (with the awaited value, if one was given)? A
 * map or a list is never a value, as in kubectl. */
static int
jsonpath_met(const struct waitfor *w, const cJSON *obj)
{
	const cJSON *m = jsonpath_first(obj, w->path);
	char num[64];

	if (m == NULL)
		return 0;
	if (w->value == NULL)
		return 1;
	if (cJSON_IsString(m))
		return strcmp(m->valuestring, w->value) == 0;
	if (cJSON_IsBool(m))
		return strcmp(cJSON_IsTrue(m) ? "true" : "false", w->value) == 0;
	if (cJSON_IsNumber(m)) {
		snprintf(num, sizeof num, "%.17g", m->valuedouble);
		if (m->valuedouble == (double)(long long)m->valuedouble)
			snprintf(num, sizeof num, "%lld",
			    (long long)m->valuedouble);
		return strcmp(num, w->value) == 0;
	}
	return cJSON_IsNull(m) && strcmp(w->value, "<nil>") == 0;
}

/* Does status.conditions have the awaited type with the awaited status,
 * or the jsonpath its value? */
static int
condition_met(const struct waitfor *w, const cJSON *obj)
{
	const cJSON *c;
	const char *status;

	if (w->path != NULL)
		return jsonpath_met(w, obj);
	cJSON_ArrayForEach(c, json_at(obj, "status.conditions")) {
		if (json_str(c, "type") == NULL ||
		    strcasecmp(json_str(c, "type"), w->cond) != 0)
			continue;
		status = json_str(c, "status");
		return status != NULL && strcasecmp(status, w->value) == 0;
	}
	return 0;
}

/* Look at one watch event; nonzero ends the watch. */
static int
wait_event(const cJSON *ev, void *arg)
{
	struct waitfor *w = arg;
	const char *type = json_str(ev, "type");
	const cJSON *obj = json_at(ev, "object");
	const char *rv = json_str(obj, "metadata.resourceVersion");

	if (type == NULL)
		return 0;
	if (strcmp(type, "ERROR") == 0) {
		w->expired = 1;
		return 1;
	}
	if (rv != NULL) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
	if (strcmp(type, "DELETED") == 0) {
		w->gone = !w->creation;
		return w->gone;
	}
	if (strcmp(type, "BOOKMARK") == 0)
		return 0;
	if (!w->deletion && (w->creation || condition_met(w, obj)))
		w->met = 1;
	return w->met;
}

/* Wait until one object meets w (or is gone); CLI_OK or CLI_FAIL. */
static int
wait_object(const struct cli_res *r, const char *ns, const char *name,
    struct waitfor *w, long deadline)
{
	struct cli_buf path = { 0 }, list = { 0 }, sel = { 0 };
	struct cli_http_resp rsp;
	long left, started;
	const char *rv;
	int rc = CLI_FAIL;
	cJSON *obj;

	cli_res_path(&path, r, ns, name, NULL);
	cli_res_path(&list, r, ns, NULL, NULL);
	cli_buf_printf(&sel, "metadata.name=%s", name);
	cli_http_query_add(&list, "fieldSelector", sel.p);
	w->met = w->gone = w->expired = 0;
	for (;;) {
		cli_http_request("GET", path.p, NULL, NULL, NULL, &rsp);
		if (rsp.code == 404 && w->deletion) {
			cli_buf_free(&rsp.body);
			break;
		}
		if (rsp.code == 404 && w->creation) {
			/* Not there yet: watch the name from the list's
			 * revision for its ADDED. */
			cli_buf_free(&rsp.body);
			cli_http_request("GET", list.p, NULL, NULL, NULL, &rsp);
		} else if (rsp.code == 200)
			w->met = w->creation;
		if (rsp.code != 200) {
			cli_http_report(&rsp);
			cli_buf_free(&rsp.body);
			goto out;
		}
		obj = cJSON_Parse(rsp.body.p);
		cli_buf_free(&rsp.body);
		if (!w->deletion && !w->creation)
			w->met = condition_met(w, obj);
		free(w->rv);
		rv = json_str(obj, "metadata.resourceVersion");
		w->rv = xstrdup(rv != NULL ? rv : "0");
		cJSON_Delete(obj);
		while (!w->met && !w->gone && !w->expired &&
		    (left = deadline - cli_obj_now_ms()) > 0) {
			started = cli_obj_now_ms();
			if (cli_http_watch(list.p, w->rv, left, wait_event, w,
			    &w->code) != 0)
				goto out;
			if (w->code == 410)
				w->expired = 1;
			/* A server that ends watches at once is not spun on. */
			if (cli_obj_now_ms() - started < 100)
				usleep(100000);
		}
		if (w->met || (w->gone && w->deletion))
			break;
		if (w->gone) {
			cli_color_errorf("%s/%s was deleted\n", r->name,
			    name);
			goto out;
		}
		if (deadline - cli_obj_now_ms() <= 0) {
			cli_color_error();
			fprintf(stderr, "timed out waiting for the "
			    "condition on %s/%s\n", r->name, name);
			goto out;
		}
		w->expired = 0;
	}
	rc = CLI_OK;
out:
	cli_buf_free(&path);
	cli_buf_free(&list);
	cli_buf_free(&sel);
	return rc;
}

/* The DeleteOptions body of --cascade and --grace-period; NULL (reported)
 * for a bad --cascade. */
static char *
delete_body(void)
{
	static const char *const cascades[][2] = {
		{ "background", "Background" }, { "true", "Background" },
		{ "foreground", "Foreground" }, { "orphan", "Orphan" },
		{ "false", "Orphan" }
	};
	const char *c = cli_opts.cascade != NULL ? cli_opts.cascade :
	    "background";
	cJSON *b = cJSON_CreateObject();
	size_t i;
	char *s;

	cJSON_AddStringToObject(b, "kind", "DeleteOptions");
	cJSON_AddStringToObject(b, "apiVersion", "v1");
	for (i = 0; i < sizeof cascades / sizeof cascades[0]; i++)
		if (strcmp(c, cascades[i][0]) == 0)
			break;
	if (i == sizeof cascades / sizeof cascades[0]) {
		cJSON_Delete(b);
		cli_opt_usage("delete", "invalid --cascade \"%s\": want "
		    "background, foreground or orphan", c);
		return NULL;
	}
	cJSON_AddStringToObject(b, "propagationPolicy", cascades[i][1]);
	if (cli_opts.grace >= 0)
		cJSON_AddNumberToObject(b, "gracePeriodSeconds",
		    (double)cli_opts.grace);
	s = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	return s;
}

/* DELETE one object, said as kubectl says it; with --wait, until gone. */
static int
delete_one(const struct cli_res *r, const char *ns, const char *name,
    const char *body)
{
	struct cli_buf path = { 0 };
	struct cli_http_resp rsp;
	struct waitfor w = { 0 };
	char *type;
	int rc;

	cli_res_path(&path, r, ns, name, NULL);
	cli_http_request("DELETE", path.p, "application/json", body, NULL,
	    &rsp);
	cli_buf_free(&path);
	if (rsp.code == 404 && cli_opts.ignore_nf) {
		cli_buf_free(&rsp.body);
		return CLI_OK;
	}
	if (rsp.code != 200 && rsp.code != 202) {
		cli_http_report(&rsp);
		cli_buf_free(&rsp.body);
		return CLI_FAIL;
	}
	cli_buf_free(&rsp.body);
	type = cli_res_type(r);
	printf("%s \"%s\" deleted\n", type, name);
	fflush(stdout);
	free(type);
	if (!cli_opts.wait)
		return CLI_OK;
	w.deletion = 1;
	rc = wait_object(r, ns, name, &w, cli_obj_now_ms() +
	    cli_opts.timeout_ms);
	free(w.rv);
	return rc;
}

/* Delete what a file describes. */
static int
delete_files(const char *body)
{
	const struct cli_res *r;
	const char *ns, *name;
	cJSON *docs, *doc;
	int rc;

	if ((docs = cli_obj_load("delete", &rc)) == NULL)
		return rc;
	cJSON_ArrayForEach(doc, docs) {
		if ((r = cli_obj_of_doc(doc, &ns, &name)) == NULL ||
		    name == NULL)
			rc = CLI_FAIL;
		else if (delete_one(r, ns, name, body) != CLI_OK)
			rc = CLI_FAIL;
	}
	cJSON_Delete(docs);
	return rc;
}

/* delete: named objects, those a selector matches, or a file's documents. */
int
cli_delete_run(int argc, char **argv)
{
	const struct cli_res *r;
	const char *name, *ns;
	struct cli_buf path = { 0 };
	int rest, rc, i;
	const cJSON *el;
	char *body;
	cJSON *docs;

	if ((body = delete_body()) == NULL)
		return CLI_USAGE;
	if (cli_opts.nfiles > 0) {
		rc = argc == 0 ? delete_files(body) : cli_opt_usage("delete",
		    "delete -f takes no other arguments");
		free(body);
		return rc;
	}
	if ((rc = cli_obj_target("delete", argc, argv, &r, &name, &rest)) !=
	    CLI_OK)
		goto out;
	ns = cli_obj_ns(r);
	if (name != NULL) {
		if (cli_opts.selector != NULL || cli_opts.all) {
			rc = cli_opt_usage("delete", "names cannot be given "
			    "with -l or --all");
			goto out;
		}
		rc = delete_one(r, ns, name, body);
		for (i = rest; i < argc; i++)
			if (delete_one(r, ns, argv[i], body) != CLI_OK)
				rc = CLI_FAIL;
		goto out;
	}
	if (cli_opts.selector == NULL && cli_opts.fselector == NULL &&
	    !cli_opts.all) {
		rc = cli_opt_usage("delete", "resource(s) were provided, but no "
		    "name was specified (give names, -l SELECTOR or --all)");
		goto out;
	}
	cli_res_path(&path, r, ns, NULL, NULL);
	cli_http_query_add(&path, "labelSelector", cli_opts.selector);
	cli_http_query_add(&path, "fieldSelector", cli_opts.fselector);
	docs = cli_http_list(path.p, NULL);
	cli_buf_free(&path);
	if (docs == NULL) {
		rc = CLI_FAIL;
		goto out;
	}
	cJSON_ArrayForEach(el, json_at(docs, "items"))
		if (delete_one(r, ns, json_str(el, "metadata.name"), body) !=
		    CLI_OK)
			rc = CLI_FAIL;
	if (cJSON_GetArraySize(json_at(docs, "items")) == 0)
		fprintf(stderr, "No resources found\n");
	cJSON_Delete(docs);
out:
	free(body);
	return rc;
}

/*
 * Read the PATH[=VALUE] of --for=jsonpath= as kubectl 1.32 does: the path
 * with or without its braces (with them it may hold a filter's ==), one
 * '=' before the value, quotes around the value dropped; without a value,
 * any match will do.
 */
static int
parse_jsonpath(struct waitfor *w, const char *in)
{
	struct cli_buf b = { 0 };
	const char *end, *v = NULL;
	size_t n;

	if (*in == '{') {
		if ((end = strrchr(in, '}')) == NULL)
			return cli_opt_usage("wait", "unclosed jsonpath in "
			    "--for %s", cli_opts.forcond);
		end++;
	} else
		end = in + strcspn(in, "=");
	if (*end == '=')
		v = end + 1;
	else if (*end != '\0' || end == in)
		return cli_opt_usage("wait", "format for --for=jsonpath must be "
		    "JSONPath expression or JSONPath expression and a value");
	if (v != NULL && strchr(v, '=') != NULL && *in != '{')
		return cli_opt_usage("wait", "format for --for=jsonpath must be "
		    "JSONPath expression or JSONPath expression and a value");
	if (*in == '{')
		cli_buf_printf(&b, "%.*s", (int)(end - in), in);
	else
		cli_buf_printf(&b, "{%s%.*s}", *in == '.' ? "" : ".",
		    (int)(end - in), in);
	if (v != NULL) {
		n = strlen(v);
		if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0])
			w->value = xstrdup(v + 1), w->value[n - 2] = '\0';
		else
			w->value = xstrdup(v);
		if (*w->value == '\0') {
			cli_buf_free(&b);
			free(w->value);
			w->value = NULL;
			return cli_opt_usage("wait", "jsonpath wait has to have a "
			    "value after equal sign");
		}
	}
	w->path = b.p;
	return CLI_OK;
}

/* Read --for=condition=TYPE[=VALUE], --for=jsonpath=..., --for=create or
 * --for=delete. */
static int
parse_for(struct waitfor *w)
{
	const char *f = cli_opts.forcond;
	char *eq;

	if (f == NULL)
		return cli_opt_usage("wait", "wait needs --for=condition=COND "
		    "or --for=delete");
	if (strcmp(f, "delete") == 0) {
		w->deletion = 1;
		return CLI_OK;
	}
	if (strcmp(f, "create") == 0) {
		w->creation = 1;
		return CLI_OK;
	}
	if (strncmp(f, "jsonpath=", 9) == 0)
		return parse_jsonpath(w, f + 9);
	if (strncmp(f, "condition=", 10) != 0 || f[10] == '\0')
		return cli_opt_usage("wait", "unknown --for %s: want "
		    "condition=COND[=VALUE], jsonpath=PATH[=VALUE], create or "
		    "delete",
		    f);
	w->cond = xstrdup(f + 10);
	if ((eq = strchr(w->cond, '=')) != NULL) {
		*eq = '\0';
		w->value = xstrdup(eq + 1);
	} else
		w->value = xstrdup("True");
	return CLI_OK;
}

/* wait: read the object, then watch it until the condition holds. */
int
cli_delete_wait(int argc, char **argv)
{
	struct waitfor w = { 0 };
	const struct cli_res *r;
	const char *name;
	char *type;
	int rest, rc;

	if ((rc = parse_for(&w)) != CLI_OK)
		return rc;
	if ((rc = cli_obj_target("wait", argc, argv, &r, &name, &rest)) !=
	    CLI_OK)
		goto out;
	if (name == NULL || rest < argc) {
		rc = cli_opt_usage("wait", "wait takes one RESOURCE/NAME");
		goto out;
	}
	rc = wait_object(r, cli_obj_ns(r), name, &w, cli_obj_now_ms() +
	    cli_opts.timeout_ms);
	if (rc == CLI_OK) {
		type = cli_res_type(r);
		printf("%s/%s %s\n", type, name, w.deletion ? "deleted" :
		    "condition met");
		free(type);
	}
out:
	free(w.cond);
	free(w.value);
	free(w.path);
	free(w.rv);
	return rc;
}
