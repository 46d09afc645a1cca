/*
 * volray kubeconfig: print the kubeconfig this client reads (the
 * daemon's DATA_DIR/kubeconfig, as a rule), or with --merge add its
 * clusters, users and contexts to another kubeconfig (FILE, else
 * ~/.kube/config), as `kubectl config` would one by one: an entry of the
 * same name is replaced, every other entry and field of FILE is kept, and
 * current-context changes only with --set-current. FILE is written to a
 * temporary file beside it (mode 0600) and renamed over it, so a failure
 * at any point leaves the old FILE whole.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli_buf.h"
#include "cli_cmd.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_opt.h"
#include "cli_print.h"
#include "lib/json.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

static const char *const sections[] = { "clusters", "users", "contexts" };

/* Print the file this client reads. */
static int
print_file(const char *path)
{
	char buf[65536];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL) {
		cli_color_error();
		fprintf(stderr, "reading kubeconfig %s: %s\n", path,
		    strerror(errno));
		return CLI_FAIL;
	}
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
	return CLI_OK;
}

static cJSON *
empty_config(void)
{
	cJSON *cfg = cJSON_CreateObject();

	cJSON_AddStringToObject(cfg, "apiVersion", "v1");
	cJSON_AddStringToObject(cfg, "kind", "Config");
	cJSON_AddObjectToObject(cfg, "preferences");
	return cfg;
}

/* The first document of a kubeconfig; NULL (reported) if unreadable. A
 * missing file, when may_miss, is an empty Config. */
static cJSON *
load(const char *path, int may_miss)
{
	char *cause = NULL;
	cJSON *docs, *cfg;

	if (may_miss && access(path, F_OK) != 0 && errno == ENOENT)
		return empty_config();
	if ((docs = yamljson_load_file(path, &cause)) == NULL) {
		cli_color_error();
		fprintf(stderr, "reading kubeconfig %s: %s\n", path, cause);
		free(cause);
		return NULL;
	}
	cfg = cJSON_DetachItemFromArray(docs, 0);
	cJSON_Delete(docs);
	if (cfg == NULL || cJSON_IsNull(cfg)) {
		cJSON_Delete(cfg);
		return empty_config();
	}
	if (!cJSON_IsObject(cfg)) {
		cli_color_error();
		fprintf(stderr, "%s is not a kubeconfig\n", path);
		cJSON_Delete(cfg);
		return NULL;
	}
	return cfg;
}

/* Put src's entries of one section into dst, replacing same names. */
static void
merge_section(cJSON *dst, const cJSON *src, const char *sec)
{
	cJSON *list = cJSON_GetObjectItemCaseSensitive(dst, sec), *el;
	const cJSON *s;
	const char *name;
	int i;

	if (!cJSON_IsArray(list)) {
		cJSON_DeleteItemFromObjectCaseSensitive(dst, sec);
		list = cJSON_AddArrayToObject(dst, sec);
	}
	cJSON_ArrayForEach(s, json_at(src, sec)) {
		if ((name = json_str(s, "name")) == NULL)
			continue;
		i = 0;
		cJSON_ArrayForEach(el, list) {
			if (json_str(el, "name") != NULL &&
			    strcmp(json_str(el, "name"), name) == 0)
				break;
			i++;
		}
		if (el != NULL)
			cJSON_ReplaceItemInArray(list, i, cJSON_Duplicate(s, 1));
		else
			cJSON_AddItemToArray(list, cJSON_Duplicate(s, 1));
		printf("%s %s \"%s\"\n", el != NULL ? "replaced" : "added",
		    strcmp(sec, "clusters") == 0 ? "cluster" :
		    strcmp(sec, "users") == 0 ? "user" : "context", name);
	}
}

/* Make the directory of path, as kubectl makes ~/.kube. */
static void
make_dir_of(const char *path)
{
	char *d = xstrdup(path), *slash = strrchr(d, '/');

	if (slash != NULL && slash != d) {
		*slash = '\0';
		if (mkdir(d, 0700) != 0 && errno == ENOENT) {
			make_dir_of(d);
			mkdir(d, 0700);
		}
	}
	free(d);
}

/* Write cfg to path through a temporary file and a rename. */
static int
write_file(const char *path, const cJSON *cfg)
{
	struct cli_buf tmp = { 0 };
	FILE *f;
	int fd, rc = -1;

	make_dir_of(path);
	cli_buf_printf(&tmp, "%s.volray-XXXXXX", path);
	if ((fd = mkstemp(tmp.p)) < 0 || (f = fdopen(fd, "w")) == NULL) {
		cli_color_error();
		fprintf(stderr, "writing %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	fchmod(fd, 0600);
	cli_print_yaml(f, cfg);
	if (fflush(f) != 0 || fsync(fd) != 0 || ferror(f)) {
		cli_color_error();
		fprintf(stderr, "writing %s: %s\n", tmp.p, strerror(errno));
		fclose(f);
		unlink(tmp.p);
		goto out;
	}
	fclose(f);
	if (rename(tmp.p, path) != 0) {
		cli_color_error();
		fprintf(stderr, "renaming %s to %s: %s\n", tmp.p, path,
		    strerror(errno));
		unlink(tmp.p);
		goto out;
	}
	rc = 0;
out:
	cli_buf_free(&tmp);
	return rc;
}

/* kubeconfig --merge [FILE]. */
static int
merge(const char *src_path, const char *file)
{
	struct cli_buf home = { 0 };
	const char *dst_path = file, *cur;
	char *a, *b;
	cJSON *src, *dst;
	size_t i;
	int rc = CLI_FAIL;

	if (dst_path == NULL) {
		cli_buf_printf(&home, "%s/.kube/config", getenv("HOME") != NULL ?
		    getenv("HOME") : ".");
		dst_path = home.p;
	}
	a = realpath(src_path, NULL);
	b = realpath(dst_path, NULL);
	if (a != NULL && b != NULL && strcmp(a, b) == 0) {
		cli_color_error();
		fprintf(stderr, "%s is the kubeconfig being merged; name "
		    "another with --kubeconfig or KUBECONFIG\n", dst_path);
		free(a);
		free(b);
		cli_buf_free(&home);
		return CLI_FAIL;
	}
	free(a);
	free(b);
	if ((src = load(src_path, 0)) == NULL) {
		cli_buf_free(&home);
		return CLI_FAIL;
	}
	if ((dst = load(dst_path, 1)) == NULL)
		goto out;
	for (i = 0; i < sizeof sections / sizeof sections[0]; i++)
		merge_section(dst, src, sections[i]);
	cur = json_str(src, "current-context");
	if (cli_opts.set_current && cur != NULL)
		json_set_str(dst, "current-context", cur);
	if (write_file(dst_path, dst) != 0)
		goto out;
	printf("merged into %s", dst_path);
	if (cli_opts.set_current && cur != NULL)
		printf("; current-context is now \"%s\"", cur);
	printf("\n");
	rc = CLI_OK;
out:
	cJSON_Delete(src);
	cJSON_Delete(dst);
	cli_buf_free(&home);
	return rc;
}

int
cli_kubeconfig_run(int argc, char **argv)
{
	char *path = cli_http_kubeconfig(&cli_opts.conn);
	int rc;

	if (argc > (cli_opts.merge ? 1 : 0))
		rc = cli_opt_usage("kubeconfig", "kubeconfig takes no arguments "
		    "but the FILE of --merge");
	else if (cli_opts.set_current && !cli_opts.merge)
		rc = cli_opt_usage("kubeconfig", "--set-current goes with "
		    "--merge");
	else if (cli_opts.merge)
		rc = merge(path, argc == 1 ? argv[0] : NULL);
	else
		rc = print_file(path);
	free(path);
	return rc;
}
