/*
 * An SSH key pair for the vcjob ssh plugin, as Volcano's makes it: an RSA
 * key, the private half PEM in PKCS#1 ("RSA PRIVATE KEY"), the public
 * half as an authorized_keys line ("ssh-rsa AAAA...\n": the key in SSH's
 * wire format, RFC 4253 6.6, in base64).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include "auth/sshkey.h"
#include "lib/util.h"
#include "lib/xmalloc.h"

struct wire {
	unsigned char *p;
	size_t n, cap;
};

static void
put(struct wire *w, const void *p, size_t n)
{
	XGROW(w->p, w->cap, w->n + n);
	memcpy(w->p + w->n, p, n);
	w->n += n;
}

static void
put_u32(struct wire *w, uint32_t x)
{
	unsigned char b[4] = { x >> 24, x >> 16, x >> 8, x };

	put(w, b, 4);
}

static void
put_string(struct wire *w, const void *p, size_t n)
{
	put_u32(w, (uint32_t)n);
	put(w, p, n);
}

/* An mpint: big-endian, a 0 in front when the top bit is set. */
static void
put_mpint(struct wire *w, const BIGNUM *bn)
{
	int n = BN_num_bytes(bn);
	unsigned char *b = xmalloc((size_t)n + 2);

	b[0] = 0;
	BN_bn2bin(bn, b + 1);
	if (n > 0 && (b[1] & 0x80))
		put_string(w, b, (size_t)n + 1);
	else
		put_string(w, b + 1, (size_t)n);
	free(b);
}

static char *
private_pem(EVP_PKEY *k)
{
	BIO *bio = BIO_new(BIO_s_mem());
	char *data, *out = NULL;
	long n;

	if (bio != NULL && PEM_write_bio_PrivateKey_traditional(bio, k, NULL,
	    NULL, 0, NULL, NULL) == 1 && (n = BIO_get_mem_data(bio, &data)) > 0) {
		out = xmalloc((size_t)n + 1);
		memcpy(out, data, (size_t)n);
		out[n] = '\0';
	}
	BIO_free(bio);
	return out;
}

static char *
public_line(EVP_PKEY *k)
{
	struct wire w = { NULL, 0, 0 };
	BIGNUM *n = NULL, *e = NULL;
	unsigned char *b64;
	char *out = NULL;
	int len;

	if (EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n) != 1 ||
	    EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_E, &e) != 1)
		goto done;
	put_string(&w, "ssh-rsa", 7);
	put_mpint(&w, e);
	put_mpint(&w, n);
	b64 = xmalloc(4 * ((w.n + 2) / 3) + 1);
	len = EVP_EncodeBlock(b64, w.p, (int)w.n);
	out = util_printf("ssh-rsa %.*s\n", len, (char *)b64);
	free(b64);
done:
	BN_free(n);
	BN_free(e);
	free(w.p);
	return out;
}

int
sshkey_rsa(unsigned bits, char **priv, char **pub, char **cause)
{
	EVP_PKEY *k;

	*priv = *pub = NULL;
	if (bits < 1024 || bits > 8192) {
		*cause = util_printf("an RSA key of %u bits: want 1024 to 8192",
		    bits);
		return -1;
	}
	if ((k = EVP_RSA_gen(bits)) == NULL) {
		*cause = xstrdup("RSA key generation failed");
		return -1;
	}
	*priv = private_pem(k);
	*pub = public_line(k);
	EVP_PKEY_free(k);
	if (*priv == NULL || *pub == NULL) {
		free(*priv);
		free(*pub);
		*priv = *pub = NULL;
		*cause = xstrdup("cannot encode the RSA key");
		return -1;
	}
	return 0;
}
