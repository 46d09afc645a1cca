/*
 * volray ray job submit --working-dir (cli_ray_job.c): the directory is
 * packed as `ray job submit` packs it, a zip of its files (at the
 * archive's root; libzip), named _ray_pkg_<hash of the bytes>.zip, and
 * uploaded to the head's package store unless it is there already (GET,
 * then PUT /api/packages/gcs/NAME through the API server's service proxy,
 * core/ray/packages.c); the job's runtime_env working_dir is then
 * gcs://NAME. The proxies take at most 3 MiB.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "cli_buf.h"
#include "cli_color.h"
#include "cli_http.h"
#include "cli_ray.h"
#include "lib/util.h"

/* Add dir/rel's files and directories to z; -1 on failure. */
static int
add_tree(zip_t *z, const char *root, const char *rel)
{
	struct cli_buf path = { 0 }, name = { 0 };
	struct dirent *e;
	struct stat sb;
	DIR *d;
	int rc = 0;

	cli_buf_printf(&path, "%s%s%s", root, *rel ? "/" : "", rel);
	if ((d = opendir(path.p)) == NULL) {
		cli_color_errorf("--working-dir: cannot read %s\n", path.p);
		cli_buf_free(&path);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		zip_source_t *src;
		char *full;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		name.len = 0;
		cli_buf_printf(&name, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		full = util_printf("%s/%s", root, name.p);
		if (lstat(full, &sb) != 0)
			rc = -1;
		else if (S_ISDIR(sb.st_mode)) {
			zip_int64_t idx = zip_dir_add(z, name.p,
			    ZIP_FL_ENC_UTF_8);

			/* The directory's own time, not the packing's: the
			   same tree packs to the same bytes (and name). */
			if (idx < 0 || zip_file_set_mtime(z, (zip_uint64_t)idx,
			    sb.st_mtime, 0) < 0)
				rc = -1;
			else
				rc = add_tree(z, root, name.p);
		} else if (S_ISREG(sb.st_mode)) {
			if ((src = zip_source_file(z, full, 0, -1)) == NULL ||
			    zip_file_add(z, name.p, src, ZIP_FL_ENC_UTF_8) < 0) {
				zip_source_free(src);
				rc = -1;
			}
		}
		free(full);
	}
	closedir(d);
	cli_buf_free(&path);
	cli_buf_free(&name);
	return rc;
}

/* The directory zipped into out (bytes); 0, or -1 (reported). */
static int
pack(const char *dir, struct cli_buf *out)
{
	char tmp[] = "/tmp/volray-pkg-XXXXXX";
	int fd = mkstemp(tmp), err = 0, rc = -1;
	char buf[65536];
	ssize_t n;
	zip_t *z;

	if (fd < 0) {
		cli_color_errorf("--working-dir: no temporary file\n");
		return -1;
	}
	close(fd);
	if ((z = zip_open(tmp, ZIP_CREATE | ZIP_TRUNCATE, &err)) == NULL) {
		cli_color_errorf("--working-dir: libzip error %d\n", err);
		unlink(tmp);
		return -1;
	}
	if (add_tree(z, dir, "") != 0) {
		cli_color_errorf("--working-dir: cannot pack %s: %s\n", dir,
		    zip_strerror(z));
		zip_discard(z);
		unlink(tmp);
		return -1;
	}
	if (zip_close(z) != 0) {
		cli_color_errorf("--working-dir: %s\n", zip_strerror(z));
		zip_discard(z);
		unlink(tmp);
		return -1;
	}
	if ((fd = open(tmp, O_RDONLY)) >= 0) {
		while ((n = read(fd, buf, sizeof buf)) > 0)
			cli_buf_add(out, buf, (size_t)n);
		rc = n == 0 ? 0 : -1;
		close(fd);
	}
	unlink(tmp);
	return rc;
}

int
cli_ray_upload(const char *head, const char *dir, char **uri)
{
	struct cli_buf zip = { 0 }, path = { 0 };
	struct cli_http_resp r;
	uint64_t hash = 14695981039346656037ULL;
	char name[64];
	size_t i;

	*uri = NULL;
	printf("Creating a file package for local directory '%s'.\n", dir);
	if (pack(dir, &zip) != 0) {
		cli_buf_free(&zip);
		return -1;
	}
	for (i = 0; i < zip.len; i++)
		hash = (hash ^ (unsigned char)zip.p[i]) * 1099511628211ULL;
	snprintf(name, sizeof name, "_ray_pkg_%016llx.zip",
	    (unsigned long long)hash);
	cli_buf_printf(&path, "%s/api/packages/gcs/%s", head, name);
	cli_http_request("GET", path.p, NULL, NULL, NULL, &r);
	if (r.code != 200) {
		cli_buf_free(&r.body);
		printf("Uploading package gcs://%s.\n", name);
		cli_http_request_bytes("PUT", path.p,
		    "application/octet-stream", zip.p, zip.len, NULL, &r);
		if (r.code != 200) {
			cli_color_errorf("uploading gcs://%s (%zu bytes): HTTP "
			    "%ld %s\n", name, zip.len, r.code,
			    r.body.p ? r.body.p : "");
			cli_buf_free(&r.body);
			cli_buf_free(&path);
			cli_buf_free(&zip);
			return -1;
		}
	} else
		printf("Package gcs://%s already exists, skipping upload.\n",
		    name);
	cli_buf_free(&r.body);
	cli_buf_free(&path);
	cli_buf_free(&zip);
	*uri = util_printf("gcs://%s", name);
	return 0;
}
