/*
 * TLS sessions on memory BIOs. Each connection's SSL object reads from one
 * memory BIO (fed with what the socket delivered) and writes to another
 * (drained into an rbuf that http_conn.c hands to uv_write), so OpenSSL never
 * touches a socket and the event loop never blocks. The server side is
 * put in accept state; the handshake runs inside the first reads.
 *
 * Client certificates are requested but not required: one that does not
 * chain to the configured CA fails the handshake (as kube-apiserver's
 * VerifyClientCertIfGiven does); none at all leaves authentication to the
 * bearer token. After the handshake the verified subject's CN and O
 * entries are copied out once, for the authenticator.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/tls.h"

#define MAX_ORGS 32

struct tls_ctx {
	SSL_CTX *ctx;
};

struct tls_conn {
	SSL *ssl;
	BIO *in;		/* ciphertext from the peer */
	BIO *out;		/* ciphertext to the peer */
	int peer_done;		/* subject looked at */
	char *cn;
	char *orgs[MAX_ORGS];
	int norgs;
	char err[160];
};

static void note_error(tls_conn *, int);

static void
set_cause(char **cause, const char *what, const char *file)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	if (cause != NULL)
		*cause = util_printf("%s%s%s: %s", what, file ? " " : "",
		    file ? file : "", e ? buf : "failed");
}

/* Choose http/1.1 when the client offers it (kubectl offers h2 first). */
static int
select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen,
    const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char h1[] = "\x08http/1.1";
	unsigned char *sel;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&sel, outlen, h1, sizeof h1 - 1, in,
	    inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

tls_ctx *
tls_ctx_new(const char *cert_file, const char *key_file,
    const char *client_ca_file, char **cause)
{
	tls_ctx *t;
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		set_cause(cause, "creating the TLS context", NULL);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);
	/*
	 * One TLS 1.3 session ticket rather than two: each costs a session
	 * encoding and encryption, and most clients (client-go) never resume.
	 */
	SSL_CTX_set_num_tickets(ctx, 1);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_file) != 1) {
		set_cause(cause, "loading the certificate", cert_file);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		set_cause(cause, "loading the private key", key_file);
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		set_cause(cause, "the private key does not match the "
		    "certificate", cert_file);
		goto fail;
	}
	if (client_ca_file != NULL) {
		STACK_OF(X509_NAME) *names;

		if (SSL_CTX_load_verify_locations(ctx, client_ca_file, NULL) !=
		    1 || (names = SSL_load_client_CA_file(client_ca_file)) ==
		    NULL) {
			set_cause(cause, "loading the client CA",
			    client_ca_file);
			goto fail;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
		SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	}
	SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
	t = xcalloc(1, sizeof *t);
	t->ctx = ctx;
	return t;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/* PEM text into the context's certificate and key; -1 with *cause. */
static int
use_pem(SSL_CTX *ctx, const char *cert_pem, const char *key_pem,
    char **cause)
{
	BIO *b = BIO_new_mem_buf(cert_pem, -1);
	X509 *x = b ? PEM_read_bio_X509(b, NULL, NULL, NULL) : NULL;
	EVP_PKEY *k;
	int ok;

	BIO_free(b);
	b = BIO_new_mem_buf(key_pem, -1);
	k = b ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;
	BIO_free(b);
	ok = x != NULL && k != NULL && SSL_CTX_use_certificate(ctx, x) == 1 &&
	    SSL_CTX_use_PrivateKey(ctx, k) == 1;
	X509_free(x);
	EVP_PKEY_free(k);
	if (!ok)
		set_cause(cause, "loading the client certificate", NULL);
	return ok ? 0 : -1;
}

tls_ctx *
tls_ctx_new_client(const char *cert_pem, const char *key_pem, char **cause)
{
	tls_ctx *t;
	SSL_CTX *ctx;

	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		set_cause(cause, "creating the TLS context", NULL);
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_alpn_protos(ctx, (const unsigned char *)"\x08http/1.1",
	    9);
	if (cert_pem != NULL && key_pem != NULL &&
	    use_pem(ctx, cert_pem, key_pem, cause) != 0) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	t = xcalloc(1, sizeof *t);
	t->ctx = ctx;
	return t;
}

void
tls_ctx_free(tls_ctx *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

tls_conn *
tls_conn_new(tls_ctx *t)
{
	tls_conn *c = xcalloc(1, sizeof *c);

	if ((c->ssl = SSL_new(t->ctx)) == NULL ||
	    (c->in = BIO_new(BIO_s_mem())) == NULL ||
	    (c->out = BIO_new(BIO_s_mem())) == NULL)
		xoom("SSL_new, BIO_new");
	/* An empty memory BIO means "try again later", not end of file. */
	BIO_set_mem_eof_return(c->in, -1);
	BIO_set_mem_eof_return(c->out, -1);
	SSL_set_bio(c->ssl, c->in, c->out);
	if (SSL_CTX_get_ssl_method(t->ctx) == TLS_client_method())
		SSL_set_connect_state(c->ssl);
	else
		SSL_set_accept_state(c->ssl);
	return c;
}

int
tls_conn_handshake(tls_conn *c)
{
	int n, e;

	if (SSL_is_init_finished(c->ssl))
		return 1;
	if ((n = SSL_do_handshake(c->ssl)) == 1)
		return 1;
	e = SSL_get_error(c->ssl, n);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;
	note_error(c, e);
	return -1;
}

void
tls_conn_free(tls_conn *c)
{
	int i;

	if (c == NULL)
		return;
	SSL_free(c->ssl);	/* frees both BIOs */
	free(c->cn);
	for (i = 0; i < c->norgs; i++)
		free(c->orgs[i]);
	free(c);
}

int
tls_conn_feed(tls_conn *c, const char *data, size_t len)
{
	while (len > 0) {
		int n = BIO_write(c->in, data, len > INT_MAX ? INT_MAX :
		    (int)len);

		if (n <= 0) {
			snprintf(c->err, sizeof c->err, "buffering input");
			return -1;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Keep the error text for the log; OpenSSL's queue is per thread. */
static void
note_error(tls_conn *c, int code)
{
	unsigned long e = ERR_get_error();

	if (e != 0)
		ERR_error_string_n(e, c->err, sizeof c->err);
	else
		snprintf(c->err, sizeof c->err, "SSL error %d", code);
	ERR_clear_error();
}

/* Copy the verified peer's CN and O entries once. */
static void
take_peer(tls_conn *c)
{
	X509 *x;
	X509_NAME *subj;
	int i, n;

	c->peer_done = 1;
	if ((x = SSL_get_peer_certificate(c->ssl)) == NULL)
		return;
	if (SSL_get_verify_result(c->ssl) != X509_V_OK ||
	    (subj = X509_get_subject_name(x)) == NULL) {
		X509_free(x);
		return;
	}
	n = X509_NAME_entry_count(subj);
	for (i = 0; i < n; i++) {
		X509_NAME_ENTRY *e = X509_NAME_get_entry(subj, i);
		int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(e));
		unsigned char *s = NULL;

		if ((nid != NID_commonName && nid != NID_organizationName) ||
		    ASN1_STRING_to_UTF8(&s, X509_NAME_ENTRY_get_data(e)) < 0)
			continue;
		if (nid == NID_commonName) {
			free(c->cn);
			c->cn = xstrdup((char *)s);
		} else if (c->norgs < MAX_ORGS)
			c->orgs[c->norgs++] = xstrdup((char *)s);
		OPENSSL_free(s);
	}
	X509_free(x);
}

ssize_t
tls_conn_read(tls_conn *c, char *buf, size_t cap)
{
	int n, e;

	n = SSL_read(c->ssl, buf, cap > INT_MAX ? INT_MAX : (int)cap);
	if (!c->peer_done && SSL_is_init_finished(c->ssl))
		take_peer(c);
	if (n > 0)
		return n;
	e = SSL_get_error(c->ssl, n);
	switch (e) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		return 0;
	case SSL_ERROR_ZERO_RETURN:
		return -2;
	default:
		note_error(c, e);
		return -1;
	}
}

int
tls_conn_write(tls_conn *c, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		int n = SSL_write(c->ssl, p, len > INT_MAX ? INT_MAX :
		    (int)len);

		if (n <= 0) {
			note_error(c, SSL_get_error(c->ssl, n));
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
tls_conn_shutdown(tls_conn *c)
{
	if (SSL_is_init_finished(c->ssl))
		SSL_shutdown(c->ssl);
	ERR_clear_error();
}

rbuf *
tls_conn_take(tls_conn *c)
{
	size_t n = BIO_ctrl_pending(c->out);
	rbuf *b;

	if (n == 0)
		return NULL;
	b = rbuf_new(NULL, n);
	if (BIO_read(c->out, b->data, (int)n) != (int)n)
		fatal("tls: short read from a memory BIO");
	return b;
}

int
tls_conn_peer(const tls_conn *c, const char **cn, const char *const **orgs,
    int *norgs)
{
	if (c->cn == NULL)
		return -1;
	*cn = c->cn;
	*orgs = (const char *const *)c->orgs;
	*norgs = c->norgs;
	return 0;
}

const char *
tls_conn_error(const tls_conn *c)
{
	return c->err[0] ? c->err : "unknown TLS error";
}
