/*
 * Token and certificate authentication. Tokens are never kept as they
 * are: each is stored as its SHA-256 digest, and a presented token is
 * hashed and looked up by digest, then compared with CRYPTO_memcmp. The
 * time a lookup takes depends on the digest, which says nothing about how
 * close the guess was to a real token; no token reaches a log line.
 *
 * The static token file is kube-apiserver's: CSV with at least three
 * columns (token, user name, uid) and an optional fourth, the groups,
 * quoted when it holds commas. A later line for the same token replaces
 * an earlier one.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "auth/authn.h"
#include "lib/hmap.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define MAX_GROUPS 64
#define MAX_FIELDS 8

struct token_user {
	char key[65];			/* hex SHA-256 of the token */
	unsigned char digest[32];
	user_info info;
	char *name;
	char *uid;
	char *groups[MAX_GROUPS + 1];
	int ngroups;
};

struct authn {
	hmap *tokens;
};

authn *
authn_new(void)
{
	authn *a = xcalloc(1, sizeof *a);

	a->tokens = hmap_new();
	return a;
}

static void
token_user_free(struct token_user *t)
{
	int i;

	if (t == NULL)
		return;
	free(t->name);
	free(t->uid);
	for (i = 0; i < t->ngroups; i++)
		free(t->groups[i]);
	free(t);
}

static int
free_one(const char *key, void *value, void *arg)
{
	(void)key;
	(void)arg;
	token_user_free(value);
	return 0;
}

void
authn_free(authn *a)
{
	if (a == NULL)
		return;
	hmap_each(a->tokens, free_one, NULL);
	hmap_free(a->tokens);
	free(a);
}

/* A token's SHA-256 and its lowercase hex, the map's key; once a
   request (written a snprintf a byte, the hex took 1.0 us of 1.4). */
static void
digest(const char *token, unsigned char out[32], char hex[65])
{
	static const char digits[] = "0123456789abcdef";
	unsigned int n = 32;
	int i;

	if (EVP_Digest(token, strlen(token), out, &n, EVP_sha256(), NULL) != 1)
		fatal("authn: SHA-256 failed");
	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[out[i] >> 4];
		hex[2 * i + 1] = digits[out[i] & 0xf];
	}
	hex[64] = '\0';
}

static int
has_group(const struct token_user *t, const char *g)
{
	int i;

	for (i = 0; i < t->ngroups; i++)
		if (strcmp(t->groups[i], g) == 0)
			return 1;
	return 0;
}

void
authn_add_token(authn *a, const char *token, const char *user,
    const char *uid, const char *groups)
{
	struct token_user *t = xcalloc(1, sizeof *t);
	const char *p = groups, *e;

	digest(token, t->digest, t->key);
	t->name = xstrdup(user);
	t->uid = xstrdup(uid);
	while (p != NULL && *p != '\0' && t->ngroups < MAX_GROUPS) {
		e = strchr(p, ',');
		if (e == NULL)
			e = p + strlen(p);
		if (e > p) {
			char *g = xstrndup(p, (size_t)(e - p));

			if (has_group(t, g))
				free(g);
			else
				t->groups[t->ngroups++] = g;
		}
		p = *e ? e + 1 : e;
	}
	if (!has_group(t, USER_GROUP_AUTHENTICATED))
		t->groups[t->ngroups++] = xstrdup(USER_GROUP_AUTHENTICATED);
	t->info.name = t->name;
	t->info.uid = t->uid;
	t->info.groups = (const char *const *)t->groups;
	t->info.ngroups = t->ngroups;
	token_user_free(hmap_put(a->tokens, t->key, t));
}

const user_info *
authn_token(const authn *a, const char *token)
{
	unsigned char d[32];
	char hex[65];
	const struct token_user *t;

	if (token == NULL || *token == '\0')
		return NULL;
	digest(token, d, hex);
	t = hmap_get(a->tokens, hex);
	if (t == NULL || CRYPTO_memcmp(t->digest, d, sizeof d) != 0)
		return NULL;
	return &t->info;
}

int
authn_token_count(const authn *a)
{
	return (int)hmap_count(a->tokens);
}

void
authn_cert(const char *cn, const char *const *orgs, int norgs, user_info *out,
    const char **groups, int cap)
{
	int i, n = 0;

	for (i = 0; i < norgs && n < cap - 1; i++)
		groups[n++] = orgs[i];
	groups[n++] = USER_GROUP_AUTHENTICATED;
	out->name = cn;
	out->uid = "";
	out->groups = groups;
	out->ngroups = n;
}

/*
 * Split one CSV line into fields in place (RFC 4180 quoting: "a,b" and
 * "" for a quote). Returns the number of fields, -1 on a broken quote.
 */
static int
csv_split(char *line, char **fields, int max)
{
	char *r = line, *w = line;
	int n = 0;

	for (;;) {
		if (n == max)
			return n;
		fields[n++] = w;
		if (*r == '"') {
			r++;
			for (;;) {
				if (*r == '\0')
					return -1;
				if (*r == '"' && r[1] == '"') {
					*w++ = '"';
					r += 2;
				} else if (*r == '"') {
					r++;
					break;
				} else
					*w++ = *r++;
			}
			if (*r != ',' && *r != '\0')
				return -1;
		} else {
			while (*r != ',' && *r != '\0')
				*w++ = *r++;
		}
		if (*r == '\0') {
			*w = '\0';
			return n;
		}
		r++;
		*w++ = '\0';
		w = r;	/* fields never grow: writing can restart here */
	}
}

int
authn_load_token_file(authn *a, const char *path, char **cause)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *fields[MAX_FIELDS];
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, n, count = 0;

	if (f == NULL) {
		*cause = util_printf("--token-auth-file %s: %s", path,
		    strerror(errno));
		return -1;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' ||
		    line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		n = csv_split(line, fields, MAX_FIELDS);
		if (n < 3 || *fields[0] == '\0' || *fields[1] == '\0') {
			*cause = util_printf("--token-auth-file %s line %d: "
			    "want token,user,uid[,\"group1,group2\"]", path,
			    lineno);
			free(line);
			fclose(f);
			return -1;
		}
		authn_add_token(a, fields[0], fields[1], fields[2],
		    n > 3 ? fields[3] : "");
		count++;
	}
	free(line);
	fclose(f);
	log_info("authn: %d tokens from %s", count, path);
	return 0;
}

char *
authn_admin_token(authn *a, const char *dir, char **cause)
{
	char path[PATH_MAX], buf[129];
	unsigned char raw[32];
	FILE *f;
	int fd, i;
	size_t n;

	snprintf(path, sizeof path, "%s/admin.token", dir);
	if ((f = fopen(path, "r")) != NULL) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			n--;
		buf[n] = '\0';
		if (n < 32) {
			*cause = util_printf("%s is too short to be a token; "
			    "remove it to make a new one", path);
			return NULL;
		}
	} else {
		if (RAND_bytes(raw, sizeof raw) != 1) {
			*cause = util_printf("no randomness for the admin token");
			return NULL;
		}
		for (i = 0; i < 32; i++)
			snprintf(buf + 2 * i, 3, "%02x", raw[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || write(fd, buf, 64) != 64 || write(fd, "\n", 1) !=
		    1 || fsync(fd) != 0) {
			*cause = util_printf("writing %s: %s", path,
			    strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		close(fd);
	}
	authn_add_token(a, buf, AUTHN_ADMIN_USER, "", USER_GROUP_MASTERS);
	return xstrdup(buf);
}

/*
 * A fresh random token for an in-process identity (a controller's HTTP
 * calls, the pods of a namespace), accepted from now on and forgotten at
 * exit: nothing holds it across a restart.
 */
char *
authn_mint_token(authn *a, const char *user, const char *groups)
{
	unsigned char raw[32];
	char buf[65];
	int i;

	if (RAND_bytes(raw, sizeof raw) != 1)
		return NULL;
	for (i = 0; i < 32; i++)
		snprintf(buf + 2 * i, 3, "%02x", raw[i]);
	authn_add_token(a, buf, user, "", groups ? groups : "");
	return xstrdup(buf);
}
