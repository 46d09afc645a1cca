/*
 * Where a Kubernetes API server is and how to talk to it, read as kubectl
 * reads it: from one context of a kubeconfig file (its cluster and user),
 * or from the environment a pod runs in (in-cluster). The volray client
 * and volrayd's remote roles both start from a struct kubecfg; neither
 * reads a kubeconfig on its own.
 *
 * A kubeconfig's certificate-authority, client-certificate, client-key and
 * tokenFile are paths relative to the kubeconfig's directory when they are
 * not absolute, as kubectl resolves them; every one is read when the
 * config is loaded, so a missing file is an error then and not at the
 * first request. A *-data field (base64) wins over its file form.
 *
 * What volray does not support is refused by name rather than ignored:
 * a user whose only credentials are an exec plugin, an auth-provider or a
 * username and password, and impersonation (as, as-groups, as-uid).
 *
 * The struct is plain, not opaque: it is a record of values with nothing
 * to keep consistent, read by two callers that hand its fields to libcurl
 * or OpenSSL; the client replaces some of them with its flags' values
 * (free the old one, xstrdup the new one). kubecfg_free frees every field.
 */
#ifndef VOLRAY_KUBECFG_H
#define VOLRAY_KUBECFG_H

#include <stddef.h>

/* PEM bytes (NUL-terminated too) and the file they were read from. */
struct kubecfg_pem {
	char	*data;		/* NULL when the kubeconfig names none */
	size_t	 len;
	char	*file;		/* resolved path, or NULL when from *-data */
};

struct kubecfg {
	char			*path;	/* the kubeconfig read; NULL in-cluster */
	char			*context, *cluster, *user;	/* the entries
					   used; NULL in-cluster */
	char			*server;	/* URL, no trailing '/' */
	char			*tls_server_name;	/* name to verify the
					   server's certificate against,
					   or NULL: the URL's host */
	int			 insecure;	/* insecure-skip-tls-verify */
	struct kubecfg_pem	 ca;	/* none: the system's CAs */
	char			*token;	/* bearer token, or NULL */
	char			*token_file;	/* where token was read (it may
					   rotate: read it again), or NULL */
	struct kubecfg_pem	 cert, key;	/* client certificate and key,
					   both or neither */
	char			*ns;	/* the context's namespace, never
					   NULL ("default") */
};

/*
 * The kubeconfig file to read (malloc'd): path when not NULL, else the
 * first readable file of the colon-separated $KUBECONFIG (its first file
 * when none is readable), else $HOME/.kube/config. Only that one file is
 * read: the files of $KUBECONFIG are not merged as kubectl merges them.
 */
char *kubecfg_path(const char *path);
/*
 * Read the kubeconfig kubecfg_path(path) names and take context (NULL or
 * "": its current-context) with that context's cluster and user. 0 and a new
 * *out, or -1 and *cause (malloc'd) naming the file and what is missing
 * or refused: an unreadable or empty file, a context, cluster or user
 * not found, a cluster without a server, bad base64, an unreadable
 * certificate, key or token file, a certificate without its key, or a
 * user with no credentials volray supports.
 */
int kubecfg_load(const char *path, const char *context,
    struct kubecfg **out, char **cause);
/*
 * The config of a pod, as client-go's rest.InClusterConfig builds it:
 * server https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an
 * IPv6 address in brackets), the service account's token, ca.crt (the
 * system's CAs when it cannot be read) and namespace ($POD_NAMESPACE
 * first, "default" last) from /var/run/secrets/kubernetes.io/
 * serviceaccount, or from the directory $VOLRAY_SERVICEACCOUNT_DIR when
 * that is set (for tests). -1 and *cause when the two variables are not
 * set or the token cannot be read.
 */
int kubecfg_in_cluster(struct kubecfg **out, char **cause);
void kubecfg_free(struct kubecfg *);

#endif
