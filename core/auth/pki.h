/*
 * The daemon's own certificate authority, as kubeadm makes one: on first
 * start DATA_DIR/pki/ gets a CA (ca.crt, ca.key) and a serving certificate
 * signed by it (server.crt, server.key) whose subjectAltNames cover the
 * names clients use. Later starts reuse them; the serving certificate is
 * issued again when it is near its end, was signed by another CA, or lacks
 * a name asked for (a new --tls-san). Keys are ECDSA P-256, mode 0600.
 */
#ifndef VOLRAY_PKI_H
#define VOLRAY_PKI_H

/*
 * Make dir hold a CA and a serving certificate valid for every name in
 * sans (DNS names or IP addresses). -1 with *cause.
 */
int pki_ensure(const char *dir, const char *const *sans, int nsans,
    char **cause);
/*
 * Issue a client certificate signed by dir's CA for user cn in groups
 * orgs (PEM, malloc'd). -1 with *cause.
 */
int pki_issue_client(const char *dir, const char *cn,
    const char *const *orgs, int norgs, int days, char **cert_pem,
    char **key_pem, char **cause);

#endif
