/*
 * Ray's package store on a head: what `ray job submit --working-dir`
 * uploads. GET /api/packages/PROTOCOL/NAME answers whether the package is
 * there (200, else 404), PUT stores the body, a zip, as
 * DIR/packages/NAME (DIR the head pod's directory; a body is at most the
 * API server's 3 MiB when it comes through the proxies). A job whose
 * runtime_env working_dir is gcs://NAME (Ray's URI for it) needs the
 * package: on the local node it runs in DIR/working_dirs/NAME/, the zip
 * extracted there the first time (libzip; entries that would leave the
 * directory are refused); a simulated job only checks that it is there.
 * Package names are Ray's: letters, digits, '_', '-', '.', ending .zip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#include "lib/util.h"
#include "lib/xmalloc.h"
#include "ray/ray_int.h"

#define MAX_NAME	200

int
ray_package_name_ok(const char *name)
{
	size_t n = strlen(name), i;

	if (n < 5 || n > MAX_NAME || strcmp(name + n - 4, ".zip") != 0 ||
	    name[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' &&
		    name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') ||
		    name[i] == '_' || name[i] == '-' || name[i] == '.'))
			return 0;
	return 1;
}

static char *
package_path(const struct ray_head *h, const char *name)
{
	return util_printf("%s/packages/%s", h->dir, name);
}

int
ray_package_has(const struct ray_head *h, const char *name)
{
	char *path;
	struct stat sb;
	int ok;

	if (!ray_package_name_ok(name))
		return 0;
	path = package_path(h, name);
	ok = stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
	free(path);
	return ok;
}

int
ray_package_put(const struct ray_head *h, const char *name, const char *body,
    size_t len, char **cause)
{
	char *dir = util_printf("%s/packages", h->dir);
	char *path = package_path(h, name), *tmp = util_printf("%s.tmp", path);
	int fd, rc = -1;

	*cause = NULL;
	if (util_mkdirs(dir, 0755) != 0 || (fd = open(tmp, O_WRONLY | O_CREAT |
	    O_TRUNC, 0644)) < 0) {
		*cause = util_printf(
		    "cannot store %s: %s", name, strerror(errno));
		goto out;
	}
	if (write(fd, body, len) != (ssize_t)len || fsync(fd) != 0) {
		*cause = util_printf(
		    "cannot store %s: %s", name, strerror(errno));
		close(fd);
		unlink(tmp);
		goto out;
	}
	close(fd);
	if (rename(tmp, path) != 0) {
		*cause = util_printf(
		    "cannot store %s: %s", name, strerror(errno));
		unlink(tmp);
		goto out;
	}
	rc = 0;
out:
	free(dir);
	free(path);
	free(tmp);
	return rc;
}

/* An entry's name is safe: relative, no "..", no empty part. */
static int
safe_entry(const char *name)
{
	const char *p;

	if (name[0] == '/' || name[0] == '\0')
		return 0;
	for (p = name; *p; p++)
		if ((p == name || p[-1] == '/') && p[0] == '.' && p[1] == '.' &&
		    (p[2] == '/' || p[2] == '\0'))
			return 0;
	return 1;
}

static int
extract(const char *zip_path, const char *dir, char **cause)
{
	zip_t *z;
	zip_int64_t n, i;
	int err = 0;

	if ((z = zip_open(zip_path, ZIP_RDONLY, &err)) == NULL) {
		*cause = util_printf("not a zip file (libzip error %d)", err);
		return -1;
	}
	n = zip_get_num_entries(z, 0);
	for (i = 0; i < n; i++) {
		const char *name = zip_get_name(z, (zip_uint64_t)i, 0);
		char *path, *slash, buf[65536];
		zip_file_t *f;
		zip_int64_t got;
		FILE *out;

		if (name == NULL || !safe_entry(name)) {
			*cause = util_printf("entry %s leaves the working "
			    "directory", name ? name : "?");
			zip_close(z);
			return -1;
		}
		path = util_printf("%s/%s", dir, name);
		if (name[strlen(name) - 1] == '/') {
			util_mkdirs(path, 0755);
			free(path);
			continue;
		}
		if ((slash = strrchr(path, '/')) != NULL) {
			*slash = '\0';
			util_mkdirs(path, 0755);
			*slash = '/';
		}
		f = zip_fopen_index(z, (zip_uint64_t)i, 0);
		out = f != NULL ? fopen(path, "wb") : NULL;
		while (out != NULL && (got = zip_fread(f, buf, sizeof buf)) > 0)
			fwrite(buf, 1, (size_t)got, out);
		if (out == NULL || ferror(out)) {
			*cause = util_printf("cannot extract %s", name);
			if (out != NULL)
				fclose(out);
			if (f != NULL)
				zip_fclose(f);
			free(path);
			zip_close(z);
			return -1;
		}
		fclose(out);
		zip_fclose(f);
		free(path);
	}
	zip_close(z);
	return 0;
}

char *
ray_package_dir(const struct ray_head *h, const char *name, char **cause)
{
	char *dir, *zip, *done;
	struct stat sb;

	*cause = NULL;
	if (!ray_package_has(h, name)) {
		*cause = util_printf("the package gcs://%s is not on the head "
		    "(was it uploaded?)", name);
		return NULL;
	}
	dir = util_printf("%s/working_dirs/%s", h->dir, name);
	done = util_printf("%s.extracted", dir);
	if (stat(done, &sb) != 0) {
		zip = package_path(h, name);
		if (util_mkdirs(dir, 0755) != 0 || extract(zip, dir, cause) !=
		    0) {
			if (*cause == NULL)
				*cause = util_printf("cannot make %s", dir);
			free(zip);
			free(done);
			free(dir);
			return NULL;
		}
		free(zip);
		close(open(done, O_WRONLY | O_CREAT, 0644));
	}
	free(done);
	return dir;
}
