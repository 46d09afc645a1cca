/*
 * TLS for the HTTP server: OpenSSL over memory BIOs, so libuv keeps the
 * sockets and the server (http*.c) keeps its buffers. A tls_ctx holds the
 * serving certificate and the CA that client certificates must chain to; a
 * tls_conn is one connection's session: ciphertext from the socket goes in
 * with tls_conn_feed, plaintext comes out of tls_conn_read; plaintext to
 * send goes in with tls_conn_write and the ciphertext to put on the socket
 * comes out of tls_conn_take. TLS 1.2 and later, ALPN "http/1.1".
 */
#ifndef VOLRAY_TLS_H
#define VOLRAY_TLS_H

#include <stddef.h>
#include <sys/types.h>

#include "lib/rbuf.h"

typedef struct tls_ctx tls_ctx;
typedef struct tls_conn tls_conn;

/*
 * Load the serving certificate chain and key; client_ca (may be NULL) is
 * the CA whose client certificates are accepted. NULL with *cause.
 */
tls_ctx *tls_ctx_new(const char *cert_file, const char *key_file,
    const char *client_ca_file, char **cause);
/*
 * A client's context (dial.c): shows the certificate and key (PEM text;
 * both NULL: none) and verifies nothing of the server, as kube-apiserver
 * without --kubelet-certificate-authority. NULL with *cause.
 */
tls_ctx *tls_ctx_new_client(const char *cert_pem, const char *key_pem,
    char **cause);
void tls_ctx_free(tls_ctx *);

tls_conn *tls_conn_new(tls_ctx *);
void tls_conn_free(tls_conn *);
/* Drive the handshake: 1 done, 0 waiting for the peer, -1 failed. */
int tls_conn_handshake(tls_conn *);
/* Ciphertext arrived from the peer. -1 on a fatal error. */
int tls_conn_feed(tls_conn *, const char *data, size_t len);
/*
 * Decrypted bytes into buf: > 0 bytes, 0 when no more for now, -1 on an
 * error (the connection must close), -2 when the peer closed the session.
 */
ssize_t tls_conn_read(tls_conn *, char *buf, size_t cap);
/* Encrypt plaintext for sending. -1 on error. */
int tls_conn_write(tls_conn *, const void *data, size_t len);
/* Queue the close_notify alert. */
void tls_conn_shutdown(tls_conn *);
/* The ciphertext waiting to be sent, or NULL when none. */
rbuf *tls_conn_take(tls_conn *);
/*
 * The verified client certificate's subject after the handshake: the
 * common name and the organizations; -1 when the peer presented none.
 */
int tls_conn_peer(const tls_conn *, const char **cn,
    const char *const **orgs, int *norgs);
/* Why the last call failed, for a debug log line (static storage). */
const char *tls_conn_error(const tls_conn *);

#endif
