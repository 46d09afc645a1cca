/*
 * The kubeconfig is written to a temporary file that is fsynced and
 * renamed over the old one, so a reader never sees half a file.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "auth/kubeconfig.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

/* A whole file, base64-encoded on one line (malloc'd), or NULL. */
static char *
base64_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data = NULL;
	char *out = NULL;
	long n;

	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    n < 1 << 20 && fseek(f, 0, SEEK_SET) == 0) {
		data = xmalloc((size_t)n);
		if (fread(data, 1, (size_t)n, f) == (size_t)n) {
			out = xmalloc(((size_t)n + 2) / 3 * 4 + 1);
			EVP_EncodeBlock((unsigned char *)out, data, (int)n);
		}
	}
	free(data);
	fclose(f);
	return out;
}

int
kubeconfig_write(const char *path, const char *server, const char *ca_file,
    const char *token, char **cause)
{
	char tmp[PATH_MAX], *ca = NULL, *text;
	size_t len;
	int fd;

	if (ca_file != NULL && (ca = base64_file(ca_file)) == NULL) {
		*cause = util_printf("reading %s: %s", ca_file,
		    strerror(errno ? errno : EINVAL));
		return -1;
	}
	text = util_printf("apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: volray\n"
	    "  cluster:\n"
	    "    server: %s\n"
	    "%s%s%s"
	    "users:\n"
	    "- name: " "volray-admin\n"
	    "  user:\n"
	    "    token: %s\n"
	    "contexts:\n"
	    "- name: volray\n"
	    "  context:\n"
	    "    cluster: volray\n"
	    "    user: volray-admin\n"
	    "    namespace: default\n"
	    "current-context: volray\n", server,
	    ca ? "    certificate-authority-data: " : "", ca ? ca : "",
	    ca ? "\n" : "", token);
	free(ca);
	len = strlen(text);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) != 0 ||
	    fchmod(fd, 0600) != 0) {
		*cause = util_printf("writing %s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(text);
		return -1;
	}
	close(fd);
	free(text);
	if (rename(tmp, path) != 0) {
		*cause = util_printf("renaming %s: %s", tmp, strerror(errno));
		return -1;
	}
	return 0;
}
