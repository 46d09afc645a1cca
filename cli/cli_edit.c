/*
 * volray patch, label, annotate and scale: changes to objects that exist,
 * each one PATCH. patch sends -p as a merge, JSON or strategic merge patch
 * (to a subresource with --subresource); label and annotate read the
 * object first, refuse to change a key's value without --overwrite, then
 * send a merge patch setting or removing (null) the keys; scale patches
 * the /scale subresource's spec.replicas. Each reports as kubectl does,
 * "(no change)" when the resourceVersion did not move.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_obj.h"
#include "cli_opt.h"
#include "cli_res.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

/* The objects a verb changes: one resource, several names. */
struct targets {
	const struct cli_res	*r;
	const char			**names;
	int				 n;
};

/* TYPE NAME... or TYPE/NAME...; words that keep() takes are left in
 * *ops (label and annotate keys). */
static int
targets_of(const char *verb, int argc, char **argv, struct targets *t,
    int (*keep)(const char *), char ***ops, int *nops)
{
	const char *name;
	int rest, rc, i;

	memset(t, 0, sizeof *t);
	*nops = 0;
	if ((rc = cli_obj_target(verb, argc, argv, &t->r, &name, &rest)) !=
	    CLI_OK)
		return rc;
	t->names = xmalloc((argc + 1) * sizeof *t->names);
	*ops = xmalloc((argc + 1) * sizeof **ops);
	if (name != NULL && !(keep != NULL && rest == 2 && keep(name)))
		t->names[t->n++] = name;
	else if (name != NULL)
		(*ops)[(*nops)++] = (char *)name;
	for (i = rest; i < argc; i++) {
		if (keep != NULL && keep(argv[i]))
			(*ops)[(*nops)++] = argv[i];
		else if (strchr(argv[i], '/') != NULL) {
			free(t->names);
			free(*ops);
			return cli_opt_usage(verb, "give TYPE NAME... or one "
			    "TYPE/NAME");
		} else
			t->names[t->n++] = argv[i];
	}
	if (t->n == 0) {
		free(t->names);
		free(*ops);
		return cli_opt_usage(verb, "%s needs the name of an object",
		    verb);
	}
	return CLI_OK;
}

/* PATCH one object (or subresource) and say what happened. */
static int
patch_one(const struct cli_res *r, const char *name, const char *sub,
    const char *ctype, const char *body, const char *done,
    const char *unchanged)
{
	struct cli_buf path = { 0 };
	const char *ns = cli_obj_ns(r), *rv0, *rv1;
	cJSON *before, *after;
	char *type;
	int rc = CLI_FAIL;

	cli_res_path(&path, r, ns, name, sub);
	if ((before = cli_http_get_json(path.p, NULL)) == NULL)
		goto out;
	if ((after = cli_obj_send("PATCH", path.p, ctype, body)) == NULL)
		goto out;
	rv0 = json_str(before, "metadata.resourceVersion");
	rv1 = json_str(after, "metadata.resourceVersion");
	type = cli_res_type(r);
	printf("%s/%s %s\n", type, name, rv0 != NULL && rv1 != NULL &&
	    strcmp(rv0, rv1) == 0 ? unchanged : done);
	free(type);
	cJSON_Delete(after);
	rc = CLI_OK;
out:
	cJSON_Delete(before);
	cli_buf_free(&path);
	return rc;
}

/* patch TYPE NAME -p PATCH [--type merge|json|strategic] [--subresource]. */
int
cli_edit_patch(int argc, char **argv)
{
	static const char *const types[][2] = {
		{ "strategic", "application/strategic-merge-patch+json" },
		{ "merge", "application/merge-patch+json" },
		{ "json", "application/json-patch+json" }
	};
	const char *pt = cli_opts.patch_type != NULL ? cli_opts.patch_type :
	    "strategic";
	struct targets t;
	char **ops, *cause = NULL, *body;
	cJSON *p;
	size_t i;
	int rc, nops, k;

	for (i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(pt, types[i][0]) == 0)
			break;
	if (i == sizeof types / sizeof types[0])
		return cli_opt_usage("patch", "--type must be one of json, "
		    "merge or strategic, not \"%s\"", pt);
	if (cli_opts.patch == NULL)
		return cli_opt_usage("patch", "must specify -p PATCH");
	if ((p = yamljson_parse(cli_opts.patch, strlen(cli_opts.patch),
	    &cause)) == NULL) {
		rc = cli_opt_usage("patch", "-p is not JSON or YAML: %s",
		    cause);
		free(cause);
		return rc;
	}
	if ((rc = targets_of("patch", argc, argv, &t, NULL, &ops, &nops)) !=
	    CLI_OK) {
		cJSON_Delete(p);
		return rc;
	}
	body = cJSON_PrintUnformatted(p);
	for (k = 0; k < t.n; k++)
		if (patch_one(t.r, t.names[k], cli_opts.subresource,
		    types[i][1], body, "patched", "patched (no change)") !=
		    CLI_OK)
			rc = CLI_FAIL;
	free(body);
	cJSON_Delete(p);
	free(t.names);
	free(ops);
	return rc;
}

/* Is a word a key operation, k=v or k-? */
static int
is_keyop(const char *s)
{
	size_t n = strlen(s);

	return strchr(s, '=') != NULL || (n > 1 && s[n - 1] == '-');
}

/* label and annotate: set k=v and remove k- in metadata.MEMBER. */
static int
keys_run(const char *verb, const char *member, int argc, char **argv)
{
	struct targets t;
	struct cli_buf path = { 0 };
	const cJSON *old, *have;
	char **ops, *key, *eq, *body, *type;
	cJSON *patch, *keys, *obj, *done;
	int rc, nops, i, k, removing, changed;

	if ((rc = targets_of(verb, argc, argv, &t, is_keyop, &ops, &nops)) !=
	    CLI_OK)
		return rc;
	if (nops == 0) {
		rc = cli_opt_usage(verb, "at least one %s update is required",
		    strcmp(verb, "label") == 0 ? "label" : "annotation");
		goto out;
	}
	for (i = 0; i < nops; i++)
		if (ops[i][0] == '=' || ops[i][0] == '-' ||
		    (strchr(ops[i], '=') != NULL &&
		    strchr(strchr(ops[i], '=') + 1, '=') != NULL &&
		    strcmp(member, "labels") == 0)) {
			rc = cli_opt_usage(verb, "invalid %s spec: %s", verb,
			    ops[i]);
			goto out;
		}
	for (k = 0; k < t.n; k++) {
		path.len = 0;
		cli_res_path(&path, t.r, cli_obj_ns(t.r), t.names[k],
		    NULL);
		if ((obj = cli_http_get_json(path.p, NULL)) == NULL) {
			rc = CLI_FAIL;
			continue;
		}
		old = json_at(obj, "metadata");
		old = cJSON_GetObjectItemCaseSensitive(old, member);
		patch = cJSON_CreateObject();
		keys = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch,
		    "metadata"), member);
		removing = changed = 0;
		for (i = 0; i < nops; i++) {
			key = xstrdup(ops[i]);
			if ((eq = strchr(key, '=')) != NULL) {
				*eq++ = '\0';
				have = cJSON_GetObjectItemCaseSensitive(old, key);
				if (cJSON_IsString(have) &&
				    strcmp(have->valuestring, eq) != 0 &&
				    !cli_opts.overwrite) {
					cli_color_errorf("'%s' already "
					    "has a value (%s), and --overwrite "
					    "is false\n", key, have->valuestring);
					free(key);
					rc = CLI_FAIL;
					goto next;
				}
				changed |= !cJSON_IsString(have) ||
				    strcmp(have->valuestring, eq) != 0;
				cJSON_AddStringToObject(keys, key, eq);
			} else {
				key[strlen(key) - 1] = '\0';
				if (cJSON_GetObjectItemCaseSensitive(old, key)) {
					removing = changed = 1;
					cJSON_AddNullToObject(keys, key);
				}
			}
			free(key);
		}
		type = cli_res_type(t.r);
		if (!changed)
			printf("%s/%s not %s\n", type, t.names[k],
			    strcmp(verb, "label") == 0 ? "labeled" :
			    "annotated");
		else {
			body = cJSON_PrintUnformatted(patch);
			done = cli_obj_send("PATCH", path.p,
			    "application/merge-patch+json", body);
			free(body);
			if (done == NULL) {
				rc = CLI_FAIL;
				free(type);
				goto next;
			}
			cJSON_Delete(done);
			printf("%s/%s %s\n", type, t.names[k],
			    strcmp(verb, "annotate") == 0 ? "annotated" :
			    removing && !cli_opts.overwrite &&
			    cJSON_GetArraySize(keys) == 1 ? "unlabeled" :
			    "labeled");
		}
		free(type);
next:
		cJSON_Delete(patch);
		cJSON_Delete(obj);
	}
out:
	cli_buf_free(&path);
	free(t.names);
	free(ops);
	return rc;
}

int
cli_edit_label(int argc, char **argv)
{
	return keys_run("label", "labels", argc, argv);
}

int
cli_edit_annotate(int argc, char **argv)
{
	return keys_run("annotate", "annotations", argc, argv);
}

/* scale TYPE NAME... --replicas N: PATCH the /scale subresource. */
int
cli_edit_scale(int argc, char **argv)
{
	struct targets t;
	char **ops, body[64];
	int rc, nops, k;

	if (cli_opts.replicas < 0)
		return cli_opt_usage("scale", "--replicas=COUNT is required, "
		    "and COUNT must be greater than or equal to 0");
	if ((rc = targets_of("scale", argc, argv, &t, NULL, &ops, &nops)) !=
	    CLI_OK)
		return rc;
	snprintf(body, sizeof body, "{\"spec\":{\"replicas\":%ld}}",
	    cli_opts.replicas);
	for (k = 0; k < t.n; k++)
		if (patch_one(t.r, t.names[k], "scale",
		    "application/merge-patch+json", body, "scaled", "scaled") !=
		    CLI_OK)
			rc = CLI_FAIL;
	free(t.names);
	free(ops);
	return rc;
}
