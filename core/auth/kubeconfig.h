/*
 * DATA_DIR/kubeconfig: the admin's way in. It names the https server, the
 * CA that signed the serving certificate (certificate-authority-data) and
 * the admin's bearer token, and works unchanged with kubectl, volray and
 * the official clients.
 */
#ifndef VOLRAY_KUBECONFIG_H
#define VOLRAY_KUBECONFIG_H

/*
 * Write path atomically, mode 0600. ca_file is a PEM file to embed (NULL
 * for a plain-http server).
 */
int kubeconfig_write(const char *path, const char *server,
    const char *ca_file, const char *token, char **cause);

#endif
