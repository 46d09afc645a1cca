/*
 * Certificates with OpenSSL's X509 API. The CA is self-signed for ten
 * years (basicConstraints CA:TRUE, keyCertSign); the serving certificate
 * for one year (serverAuth, the subjectAltNames given); client
 * certificates carry the user as CN and the groups as O entries, the
 * convention kube-apiserver reads. Files are written to a temporary name,
 * fsynced and renamed, keys with mode 0600, so a crash leaves either the
 * old file or the new one.
 */
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "auth/pki.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

#define CA_DAYS		3650
#define SERVER_DAYS	365
#define RENEW_DAYS	30	/* issue again when fewer remain */

static int
fail(char **cause, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[256] = "";

	if (e != 0)
		ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	*cause = util_printf("%s%s%s", what, e ? ": " : "", buf);
	return -1;
}

static EVP_PKEY *
new_key(void)
{
	return EVP_EC_gen("P-256");
}

/* Add an extension by its configuration text (issuer may be NULL: self). */
static int
add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
	if ((ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value)) == NULL)
		return -1;
	X509_add_ext(x, ext, -1);
	X509_EXTENSION_free(ext);
	return 0;
}

/*
 * A certificate for key with subject cn (and organizations), valid for days,
 * signed by issuer_key (itself when issuer is NULL); a leaf gets the
 * extended key usage eku and, when san is not NULL, those names.
 */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, const char *const *orgs, int norgs,
    int days, X509 *issuer, EVP_PKEY *issuer_key, const char *eku,
    const char *san)
{
	X509 *x = X509_new();
	X509_NAME *name;
	unsigned char serial[16];
	BIGNUM *bn;
	int i;

	if (x == NULL || RAND_bytes(serial, sizeof serial) != 1)
		goto fail;
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof serial, NULL);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
	BN_free(bn);
	X509_set_version(x, 2);
	/* A little slack for clocks that are behind. */
	X509_gmtime_adj(X509_getm_notBefore(x), -3600);
	X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400);
	X509_set_pubkey(x, key);
	name = X509_get_subject_name(x);
	for (i = 0; i < norgs; i++)
		X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
		    (const unsigned char *)orgs[i], -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
	    (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) :
	    name);
	if (add_ext(x, issuer, NID_subject_key_identifier, "hash") != 0)
		goto fail;
	if (issuer == NULL) {
		if (add_ext(x, NULL, NID_basic_constraints,
		    "critical,CA:TRUE") != 0 ||
		    add_ext(x, NULL, NID_key_usage,
		    "critical,digitalSignature,keyCertSign,cRLSign") != 0)
			goto fail;
	} else if (add_ext(x, issuer, NID_authority_key_identifier,
	    "keyid:always") != 0 ||
	    add_ext(x, issuer, NID_basic_constraints, "critical,CA:FALSE") !=
	    0 || add_ext(x, issuer, NID_key_usage,
	    "critical,digitalSignature,keyEncipherment") != 0 ||
	    add_ext(x, issuer, NID_ext_key_usage, eku) != 0 ||
	    (san != NULL && add_ext(x, issuer, NID_subject_alt_name, san) != 0))
		goto fail;
	if (X509_sign(x, issuer_key, EVP_sha256()) == 0)
		goto fail;
	return x;
fail:
	X509_free(x);
	return NULL;
}

/* Write a file through a temporary name; mode 0600 or 0644. */
static int
write_pem(const char *path, int secret, X509 *x, EVP_PKEY *key)
{
	char tmp[PATH_MAX];
	FILE *f;
	int fd, ok;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, secret ? 0600 : 0644);
	if (fd < 0 || (f = fdopen(fd, "w")) == NULL) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ok = x != NULL ? PEM_write_X509(f, x) :
	    PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
	if (!ok || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		fclose(f);
		unlink(tmp);
		return -1;
	}
	fclose(f);
	return rename(tmp, path);
}

static X509 *
read_cert(const char *path)
{
	FILE *f = fopen(path, "r");
	X509 *x;

	if (f == NULL)
		return NULL;
	x = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	return x;
}

static EVP_PKEY *
read_key(const char *path)
{
	FILE *f = fopen(path, "r");
	EVP_PKEY *k;

	if (f == NULL)
		return NULL;
	k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	return k;
}

/* Whether x expires within RENEW_DAYS. */
static int
expiring(X509 *x)
{
	time_t t = time(NULL) + (time_t)RENEW_DAYS * 86400;

	return X509_cmp_time(X509_get0_notAfter(x), &t) <= 0;
}

/* Whether x names san (an IP address or a DNS name) among its SANs. */
static int
has_san(X509 *x, const char *san)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL,
	    NULL);
	unsigned char ip[16];
	int iplen = 0, i, found = 0;

	if (inet_pton(AF_INET, san, ip) == 1)
		iplen = 4;
	else if (inet_pton(AF_INET6, san, ip) == 1)
		iplen = 16;
	for (i = 0; gens != NULL && i < sk_GENERAL_NAME_num(gens); i++) {
		GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);

		if (iplen != 0 && g->type == GEN_IPADD &&
		    ASN1_STRING_length(g->d.iPAddress) == iplen &&
		    memcmp(ASN1_STRING_get0_data(g->d.iPAddress), ip, iplen) ==
		    0)
			found = 1;
		else if (iplen == 0 && g->type == GEN_DNS &&
		    (size_t)ASN1_STRING_length(g->d.dNSName) == strlen(san) &&
		    strncasecmp((const char *)ASN1_STRING_get0_data(
		    g->d.dNSName), san, strlen(san)) == 0)
			found = 1;
	}
	GENERAL_NAMES_free(gens);
	return found;
}

/* The subjectAltName extension text: "DNS:a,IP:1.2.3.4,...". */
static char *
san_text(const char *const *sans, int nsans)
{
	char *s = xstrdup(""), *n;
	unsigned char ip[16];
	int i;

	for (i = 0; i < nsans; i++) {
		int isip = inet_pton(AF_INET, sans[i], ip) == 1 ||
		    inet_pton(AF_INET6, sans[i], ip) == 1;

		n = util_printf("%s%s%s:%s", s, *s ? "," : "",
		    isip ? "IP" : "DNS", sans[i]);
		free(s);
		s = n;
	}
	return s;
}

static int
load_or_make_ca(const char *dir, X509 **ca, EVP_PKEY **cakey, char **cause)
{
	char crt[PATH_MAX], key[PATH_MAX];
	struct stat sb;

	snprintf(crt, sizeof crt, "%s/ca.crt", dir);
	snprintf(key, sizeof key, "%s/ca.key", dir);
	if (stat(crt, &sb) == 0 || stat(key, &sb) == 0) {
		*ca = read_cert(crt);
		*cakey = read_key(key);
		if (*ca == NULL || *cakey == NULL ||
		    X509_check_private_key(*ca, *cakey) != 1) {
			X509_free(*ca);
			EVP_PKEY_free(*cakey);
			return fail(cause, "pki: ca.crt and ca.key are unreadable "
			    "or do not match; move them away to make new ones");
		}
		return 0;
	}
	if ((*cakey = new_key()) == NULL ||
	    (*ca = make_cert(*cakey, "volray-ca", NULL, 0, CA_DAYS, NULL,
	    *cakey, NULL, NULL)) == NULL) {
		EVP_PKEY_free(*cakey);
		return fail(cause, "pki: making the CA");
	}
	if (write_pem(key, 1, NULL, *cakey) != 0 ||
	    write_pem(crt, 0, *ca, NULL) != 0) {
		*cause = util_printf("pki: writing %s: %s", dir,
		    strerror(errno));
		X509_free(*ca);
		EVP_PKEY_free(*cakey);
		return -1;
	}
	return 0;
}

int
pki_ensure(const char *dir, const char *const *sans, int nsans, char **cause)
{
	char crt[PATH_MAX], keyp[PATH_MAX], *ext;
	X509 *ca = NULL, *srv;
	EVP_PKEY *cakey = NULL, *key, *capub;
	int i, ok = 1, rc = -1;

	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		*cause = util_printf("pki: creating %s: %s", dir,
		    strerror(errno));
		return -1;
	}
	if (load_or_make_ca(dir, &ca, &cakey, cause) != 0)
		return -1;
	snprintf(crt, sizeof crt, "%s/server.crt", dir);
	snprintf(keyp, sizeof keyp, "%s/server.key", dir);
	srv = read_cert(crt);
	key = read_key(keyp);
	capub = X509_get0_pubkey(ca);
	if (srv == NULL || key == NULL || X509_check_private_key(srv, key) != 1 ||
	    X509_verify(srv, capub) != 1 || expiring(srv))
		ok = 0;
	for (i = 0; ok && i < nsans; i++)
		ok = has_san(srv, sans[i]);
	ERR_clear_error();
	if (ok) {
		rc = 0;
		goto out;
	}
	X509_free(srv);
	EVP_PKEY_free(key);
	srv = NULL;
	ext = san_text(sans, nsans);
	if ((key = new_key()) == NULL ||
	    (srv = make_cert(key, "volray", NULL, 0, SERVER_DAYS, ca, cakey,
	    "serverAuth", ext)) == NULL) {
		free(ext);
		fail(cause, "pki: making the serving certificate");
		goto out;
	}
	free(ext);
	if (write_pem(keyp, 1, NULL, key) != 0 ||
	    write_pem(crt, 0, srv, NULL) != 0) {
		*cause = util_printf("pki: writing %s: %s", crt,
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	X509_free(srv);
	EVP_PKEY_free(key);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	return rc;
}

/* PEM text of a certificate or key, malloc'd. */
static char *
pem_text(X509 *x, EVP_PKEY *key)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data, *s;
	long n;

	if (b == NULL)
		return NULL;
	if (x != NULL ? !PEM_write_bio_X509(b, x) :
	    !PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL)) {
		BIO_free(b);
		return NULL;
	}
	n = BIO_get_mem_data(b, &data);
	s = xmalloc((size_t)n + 1);
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	BIO_free(b);
	return s;
}

int
pki_issue_client(const char *dir, const char *cn, const char *const *orgs,
    int norgs, int days, char **cert_pem, char **key_pem, char **cause)
{
	X509 *ca = NULL, *x = NULL;
	EVP_PKEY *cakey = NULL, *key = NULL;
	int rc = -1;

	if (load_or_make_ca(dir, &ca, &cakey, cause) != 0)
		return -1;
	if ((key = new_key()) == NULL ||
	    (x = make_cert(key, cn, orgs, norgs, days, ca, cakey, "clientAuth",
	    NULL)) == NULL) {
		fail(cause, "pki: making a client certificate");
		goto out;
	}
	*cert_pem = pem_text(x, NULL);
	*key_pem = pem_text(NULL, key);
	if (*cert_pem == NULL || *key_pem == NULL) {
		free(*cert_pem);
		free(*key_pem);
		fail(cause, "pki: encoding a client certificate");
		goto out;
	}
	rc = 0;
out:
	X509_free(x);
	EVP_PKEY_free(key);
	X509_free(ca);
	EVP_PKEY_free(cakey);
	return rc;
}
