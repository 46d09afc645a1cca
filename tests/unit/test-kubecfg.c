/*
 * Tests for kubecfg: kubeconfigs written into a temporary directory and
 * read back: the *-data and file forms (relative to the kubeconfig's
 * directory), tokenFile, context selection and current-context, the
 * namespace default, the errors that name what is missing or refused,
 * $KUBECONFIG and ~/.kube/config, the in-cluster config from a service
 * account directory, and the kubeconfig volrayd writes.
 */
#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "auth/kubeconfig.h"
#include "lib/kubecfg.h"
#include "lib/util.h"

#define CA_PEM	"-----BEGIN CERTIFICATE-----\nCA1\n-----END CERTIFICATE-----\n"
#define CA_B64	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBMQotLS0tLUVORCBDRVJU" \
		"SUZJQ0FURS0tLS0tCg=="
#define CERT_PEM "-----BEGIN CERTIFICATE-----\nCLIENT\n" \
		"-----END CERTIFICATE-----\n"
#define CERT_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNMSUVOVAotLS0tLUVORC" \
		"BDRVJUSUZJQ0FURS0tLS0tCg=="
#define KEY_PEM	"-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n"
#define KEY_B64	"LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCktFWQotLS0tLUVORCBQUklW" \
		"QVRFIEtFWS0tLS0tCg=="

static char dir[64];

/* Write text to dir/name (creating its directories); the path. */
static char *
put(const char *name, const char *text)
{
	char *path = util_printf("%s/%s", dir, name), *slash;
	FILE *f;

	for (slash = path + strlen(dir) + 1; (slash = strchr(slash, '/')) !=
	    NULL; slash++) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	if ((f = fopen(path, "w")) == NULL || fputs(text, f) == EOF ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return path;
}

/* Load path with context; the config, or NULL with the cause in *why. */
static struct kubecfg *
load(const char *path, const char *context, char **why)
{
	struct kubecfg *kc;
	char *cause;

	*why = NULL;
	if (kubecfg_load(path, context, &kc, &cause) != 0) {
		CHECK(kc == NULL && cause != NULL);
		*why = cause;
		return NULL;
	}
	CHECK(cause == NULL);
	return kc;
}

/* Expect loading to fail with a cause that contains want. */
#define CHECK_FAILS(path, context, want) do {				\
	char *why_;							\
	struct kubecfg *kc_ = load((path), (context), &why_);		\
	CHECK(kc_ == NULL);						\
	CHECK(why_ != NULL && strstr(why_, (want)) != NULL);		\
	if (why_ != NULL && strstr(why_, (want)) == NULL)		\
		fprintf(stderr, "  cause: %s\n  want: %s\n", why_, (want)); \
	kubecfg_free(kc_);						\
	free(why_);							\
} while (0)

#define CHECK_PEM(pem, want, wantfile) do {				\
	CHECK((pem).data != NULL && (pem).len == strlen(want) &&	\
	    memcmp((pem).data, (want), (pem).len) == 0);		\
	if ((wantfile) == NULL)						\
		CHECK((pem).file == NULL);				\
	else								\
		CHECK_STR((pem).file, (wantfile));			\
} while (0)

/* The data forms, tls-server-name, insecure, a trailing '/' dropped. */
static void
test_data(void)
{
	struct kubecfg *kc;
	char *path, *why;

	path = put("data.yaml",
	    "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster:\n"
	    "    server: https://k.example:6443//\n"
	    "    certificate-authority-data: " CA_B64 "\n"
	    "    certificate-authority: /nonexistent/ca.crt\n"
	    "    tls-server-name: kubernetes\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate-data: " CERT_B64 "\n"
	    "    client-key-data: |\n"
	    "      LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCktFWQotLS0tLUVORCBQ\n"
	    "      UklWQVRFIEtFWS0tLS0tCg==\n"
	    "    token: abc.def\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context:\n"
	    "    cluster: c\n"
	    "    user: u\n"
	    "    namespace: team\n"
	    "current-context: x\n");
	if ((kc = load(path, NULL, &why)) == NULL) {
		fprintf(stderr, "data: %s\n", why);
		CHECK(0);
		free(why);
		free(path);
		return;
	}
	CHECK_STR(kc->path, path);
	CHECK_STR(kc->context, "x");
	CHECK_STR(kc->cluster, "c");
	CHECK_STR(kc->user, "u");
	CHECK_STR(kc->server, "https://k.example:6443");
	CHECK_STR(kc->tls_server_name, "kubernetes");
	CHECK(kc->insecure == 0);
	CHECK_PEM(kc->ca, CA_PEM, (const char *)NULL);
	CHECK_PEM(kc->cert, CERT_PEM, (const char *)NULL);
	CHECK_PEM(kc->key, KEY_PEM, (const char *)NULL);
	CHECK_STR(kc->token, "abc.def");
	CHECK(kc->token_file == NULL);
	CHECK_STR(kc->ns, "team");
	kubecfg_free(kc);
	free(path);
}

/* base64 as Go's decoder takes it (padding optional here). */
static void
test_base64(void)
{
	static const struct {
		const char	*in, *want;
	} cases[] = {
		{ "YQ==", "a" }, { "YWI=", "ab" }, { "YWJj", "abc" },
		{ "YWI", "ab" }, { "Y W\\nI =", "ab" },
		{ "Y", NULL }, { "YQ=", NULL }, { "YQ==YQ==", NULL },
		{ "YQ===", NULL }, { "YQ-_", NULL },
	};
	struct kubecfg *kc;
	char *path, *yaml, *why;
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		yaml = util_printf("clusters: [{name: c, cluster: {server: "
		    "https://h, certificate-authority-data: \"%s\"}}]\n"
		    "contexts: [{name: x, context: {cluster: c}}]\n"
		    "current-context: x\n", cases[i].in);
		path = put("b64.yaml", yaml);
		kc = load(path, NULL, &why);
		if (cases[i].want == NULL) {
			CHECK(kc == NULL && why != NULL && strstr(why,
			    "bad base64 in certificate-authority-data") !=
			    NULL);
		} else if (kc == NULL)
			CHECK(0);
		else
			CHECK_PEM(kc->ca, cases[i].want, (const char *)NULL);
		if (kc == NULL && cases[i].want != NULL)
			fprintf(stderr, "  base64 %s: %s\n", cases[i].in, why);
		kubecfg_free(kc);
		free(why);
		free(path);
		free(yaml);
	}
}

/* File forms relative to the kubeconfig's directory, and absolute. */
static void
test_files(void)
{
	struct kubecfg *kc;
	char *path, *ca, *cert, *key, *tok, *yaml, *why;

	ca = put("conf/pki/ca.crt", CA_PEM);
	cert = put("conf/pki/client.crt", CERT_PEM);
	key = put("key.pem", KEY_PEM);
	tok = put("conf/token", "\n  tok-from-file\n\n");
	yaml = util_printf(
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster:\n"
	    "    server: https://10.0.0.1\n"
	    "    certificate-authority: pki/ca.crt\n"
	    "    insecure-skip-tls-verify: true\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate: pki/client.crt\n"
	    "    client-key: %s\n"
	    "    tokenFile: token\n"
	    "    token: overridden\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context: {cluster: c, user: u}\n"
	    "current-context: x\n", key);
	path = put("conf/kubeconfig", yaml);
	if ((kc = load(path, NULL, &why)) == NULL) {
		fprintf(stderr, "files: %s\n", why);
		CHECK(0);
		free(why);
	} else {
		CHECK_PEM(kc->ca, CA_PEM, ca);
		CHECK_PEM(kc->cert, CERT_PEM, cert);
		CHECK_PEM(kc->key, KEY_PEM, key);
		CHECK_STR(kc->token, "tok-from-file");
		CHECK_STR(kc->token_file, tok);
		CHECK(kc->insecure == 1);
		CHECK(kc->tls_server_name == NULL);
		CHECK_STR(kc->ns, "default");
		kubecfg_free(kc);
	}

	/* An unreadable tokenFile falls back to token, if there is one. */
	unlink(tok);
	if ((kc = load(path, NULL, &why)) == NULL) {
		CHECK(0);
		free(why);
	} else {
		CHECK_STR(kc->token, "overridden");
		kubecfg_free(kc);
	}
	free(path);
	free(yaml);

	/* A relative kubeconfig path resolves from the current directory. */
	if (chdir(dir) != 0) {
		perror(dir);
		exit(1);
	}
	if ((kc = load("conf/kubeconfig", NULL, &why)) == NULL) {
		CHECK(0);
		free(why);
	} else {
		CHECK_PEM(kc->ca, CA_PEM, "conf/pki/ca.crt");
		kubecfg_free(kc);
	}
	free(ca);
	free(cert);
	free(key);
	free(tok);
}

/* Two contexts: current-context, --context, the namespace default. */
static void
test_contexts(void)
{
	struct kubecfg *kc;
	char *path, *why;

	path = put("two.yaml",
	    "clusters:\n"
	    "- {name: prod, cluster: {server: 'https://prod:6443'}}\n"
	    "- {name: dev, cluster: {server: 'http://127.0.0.1:8080'}}\n"
	    "users:\n"
	    "- {name: alice, user: {token: a-token}}\n"
	    "- {name: bob, user: {token: b-token}}\n"
	    "contexts:\n"
	    "- {name: prod, context: {cluster: prod, user: alice, "
	    "namespace: ops}}\n"
	    "- {name: dev.local, context: {cluster: dev, user: bob}}\n"
	    "current-context: prod\n");
	if ((kc = load(path, NULL, &why)) != NULL) {
		CHECK_STR(kc->context, "prod");
		CHECK_STR(kc->server, "https://prod:6443");
		CHECK_STR(kc->token, "a-token");
		CHECK_STR(kc->ns, "ops");
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(why);
	}
	if ((kc = load(path, "dev.local", &why)) != NULL) {
		CHECK_STR(kc->context, "dev.local");
		CHECK_STR(kc->cluster, "dev");
		CHECK_STR(kc->user, "bob");
		CHECK_STR(kc->server, "http://127.0.0.1:8080");
		CHECK_STR(kc->token, "b-token");
		CHECK_STR(kc->ns, "default");
		CHECK(kc->ca.data == NULL && kc->cert.data == NULL);
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(why);
	}
	if ((kc = load(path, "", &why)) != NULL) {
		CHECK_STR(kc->context, "prod");
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(why);
	}
	CHECK_FAILS(path, "staging",
	    "context \"staging\" not found in ");
	free(path);

	/* JSON reads too; a context without a user is anonymous. */
	path = put("anon.json", "{\"clusters\": [{\"name\": \"c\", "
	    "\"cluster\": {\"server\": \"https://h\"}}], \"contexts\": "
	    "[{\"name\": \"x\", \"context\": {\"cluster\": \"c\"}}], "
	    "\"current-context\": \"x\"}");
	if ((kc = load(path, NULL, &why)) != NULL) {
		CHECK(kc->user == NULL && kc->token == NULL &&
		    kc->cert.data == NULL);
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(why);
	}
	free(path);
}

/* What is missing or refused is named. */
static void
test_errors(void)
{
	char *path;

	CHECK_FAILS("/nonexistent/kubeconfig", NULL,
	    "/nonexistent/kubeconfig: No such file or directory");
	CHECK_FAILS("/dev/null", NULL, "/dev/null is empty");
	path = put("list.yaml", "- a\n- b\n");
	CHECK_FAILS(path, NULL, "is not a kubeconfig");
	free(path);

	path = put("nocur.yaml",
	    "clusters: [{name: c, cluster: {server: https://h}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n");
	CHECK_FAILS(path, NULL, "no current-context in ");
	free(path);

	path = put("refs.yaml",
	    "clusters:\n"
	    "- {name: c, cluster: {server: https://h}}\n"
	    "- {name: noserver, cluster: {}}\n"
	    "users:\n"
	    "- name: ex\n"
	    "  user:\n"
	    "    exec:\n"
	    "      apiVersion: client.authentication.k8s.io/v1\n"
	    "      command: aws\n"
	    "- name: ap\n"
	    "  user: {auth-provider: {name: oidc}}\n"
	    "- name: basic\n"
	    "  user: {username: admin, password: secret}\n"
	    "- name: extok\n"
	    "  user: {token: t, exec: {command: x}}\n"
	    "- name: as\n"
	    "  user: {token: t, as: admin}\n"
	    "- name: certonly\n"
	    "  user: {client-certificate-data: " CERT_B64 "}\n"
	    "- name: badb64\n"
	    "  user: {client-certificate-data: 'not*base64', "
	    "client-key-data: " KEY_B64 "}\n"
	    "- name: nofile\n"
	    "  user: {tokenFile: missing-token}\n"
	    "contexts:\n"
	    "- {name: ex, context: {cluster: c, user: ex}}\n"
	    "- {name: ap, context: {cluster: c, user: ap}}\n"
	    "- {name: basic, context: {cluster: c, user: basic}}\n"
	    "- {name: extok, context: {cluster: c, user: extok}}\n"
	    "- {name: as, context: {cluster: c, user: as}}\n"
	    "- {name: certonly, context: {cluster: c, user: certonly}}\n"
	    "- {name: badb64, context: {cluster: c, user: badb64}}\n"
	    "- {name: nofile, context: {cluster: c, user: nofile}}\n"
	    "- {name: nouser, context: {cluster: c, user: ghost}}\n"
	    "- {name: nocluster, context: {cluster: ghost}}\n"
	    "- {name: nocl, context: {user: ex}}\n"
	    "- {name: noserver, context: {cluster: noserver}}\n"
	    "current-context: ex\n");
	CHECK_FAILS(path, NULL, "user \"ex\" in ");
	CHECK_FAILS(path, NULL, "has no credentials volray supports (exec "
	    "plugins are not supported)");
	CHECK_FAILS(path, "ap", "(auth-provider plugins are not supported)");
	CHECK_FAILS(path, "basic", "(basic authentication is not supported)");
	CHECK_FAILS(path, "as", "impersonates another");
	CHECK_FAILS(path, "certonly", "user \"certonly\" in ");
	CHECK_FAILS(path, "certonly", "has a client certificate without its "
	    "key");
	CHECK_FAILS(path, "badb64", "bad base64 in client-certificate-data "
	    "in ");
	CHECK_FAILS(path, "nofile", "reading tokenFile ");
	CHECK_FAILS(path, "nofile", "missing-token");
	CHECK_FAILS(path, "nouser", "user \"ghost\" not found in ");
	CHECK_FAILS(path, "nocluster", "cluster \"ghost\" not found in ");
	CHECK_FAILS(path, "nocl", "context \"nocl\" in ");
	CHECK_FAILS(path, "noserver", "cluster \"noserver\" in ");
	CHECK_FAILS(path, "noserver", "has no server");
	{
		struct kubecfg *kc;
		char *why;

		/* A token beside an exec plugin is enough. */
		if ((kc = load(path, "extok", &why)) != NULL) {
			CHECK_STR(kc->token, "t");
			kubecfg_free(kc);
		} else {
			CHECK(0);
			free(why);
		}
	}
	free(path);

	path = put("badca.yaml",
	    "clusters: [{name: c, cluster: {server: https://h, "
	    "certificate-authority: nothere.crt}}]\n"
	    "contexts: [{name: x, context: {cluster: c}}]\n"
	    "current-context: x\n");
	CHECK_FAILS(path, NULL, "reading certificate-authority ");
	CHECK_FAILS(path, NULL, "nothere.crt");
	free(path);
}

/* $KUBECONFIG's first readable file, else ~/.kube/config. */
static void
test_path(void)
{
	char *home, *env, *p, *a, *b;

	a = put("a.yaml", "");
	b = put("b.yaml", "");
	env = util_printf("%s/none.yaml:%s:%s", dir, b, a);
	setenv("KUBECONFIG", env, 1);
	p = kubecfg_path(NULL);
	CHECK_STR(p, b);
	free(p);
	free(env);
	env = util_printf("%s/none.yaml:%s/none2.yaml", dir, dir);
	setenv("KUBECONFIG", env, 1);
	p = kubecfg_path(NULL);
	env[strlen(dir) + strlen("/none.yaml")] = '\0';
	CHECK_STR(p, env);
	free(p);
	free(env);
	p = kubecfg_path("/given");
	CHECK_STR(p, "/given");
	free(p);
	setenv("KUBECONFIG", "", 1);
	home = util_printf("%s/home", dir);
	setenv("HOME", home, 1);
	p = kubecfg_path(NULL);
	env = util_printf("%s/.kube/config", home);
	CHECK_STR(p, env);
	free(p);
	free(env);
	free(home);
	unsetenv("KUBECONFIG");
	free(a);
	free(b);
}

/* The service account directory and the two variables. */
static void
test_in_cluster(void)
{
	struct kubecfg *kc;
	char *sa, *cause, *f;

	sa = util_printf("%s/sa", dir);
	mkdir(sa, 0700);
	setenv("VOLRAY_SERVICEACCOUNT_DIR", sa, 1);
	unsetenv("POD_NAMESPACE");
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CHECK(kubecfg_in_cluster(&kc, &cause) == -1 && kc == NULL);
	CHECK(cause != NULL && strstr(cause, "KUBERNETES_SERVICE_HOST"));
	free(cause);

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	CHECK(kubecfg_in_cluster(&kc, &cause) == -1);
	CHECK(cause != NULL && strstr(cause, "service account token") &&
	    strstr(cause, "/sa/token"));
	free(cause);

	f = put("sa/token", "sa-token\n");
	free(f);
	if (kubecfg_in_cluster(&kc, &cause) != 0) {
		CHECK(0);
		free(cause);
	} else {
		CHECK(cause == NULL);
		CHECK_STR(kc->server, "https://10.96.0.1:443");
		CHECK_STR(kc->token, "sa-token");
		CHECK(kc->token_file != NULL &&
		    strstr(kc->token_file, "/sa/token") != NULL);
		CHECK(kc->ca.data == NULL && kc->ca.file == NULL);
		CHECK_STR(kc->ns, "default");
		CHECK(kc->path == NULL && kc->context == NULL);
		kubecfg_free(kc);
	}

	f = put("sa/ca.crt", CA_PEM);
	free(f);
	f = put("sa/namespace", "team-a");
	free(f);
	setenv("KUBERNETES_SERVICE_HOST", "fd00:10:96::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
	if (kubecfg_in_cluster(&kc, &cause) != 0) {
		CHECK(0);
		free(cause);
	} else {
		CHECK_STR(kc->server, "https://[fd00:10:96::1]:6443");
		f = util_printf("%s/ca.crt", sa);
		CHECK_PEM(kc->ca, CA_PEM, f);
		free(f);
		CHECK_STR(kc->ns, "team-a");
		kubecfg_free(kc);
	}
	setenv("POD_NAMESPACE", "from-env", 1);
	if (kubecfg_in_cluster(&kc, &cause) == 0) {
		CHECK_STR(kc->ns, "from-env");
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(cause);
	}
	unsetenv("POD_NAMESPACE");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
	unsetenv("VOLRAY_SERVICEACCOUNT_DIR");
	free(sa);
}

/* DATA_DIR/kubeconfig as volrayd writes it reads back whole. */
static void
test_daemon(void)
{
	struct kubecfg *kc;
	char *ca, *path, *cause = NULL;

	ca = put("pki-ca.crt", CA_PEM);
	path = util_printf("%s/daemon-kubeconfig", dir);
	CHECK(kubeconfig_write(path, "https://127.0.0.1:6443", ca,
	    "0123abcdef", &cause) == 0);
	free(cause);
	if ((kc = load(path, NULL, &cause)) != NULL) {
		CHECK_STR(kc->context, "volray");
		CHECK_STR(kc->cluster, "volray");
		CHECK_STR(kc->user, "volray-admin");
		CHECK_STR(kc->server, "https://127.0.0.1:6443");
		CHECK_PEM(kc->ca, CA_PEM, (const char *)NULL);
		CHECK_STR(kc->token, "0123abcdef");
		CHECK_STR(kc->ns, "default");
		CHECK(kc->insecure == 0 && kc->cert.data == NULL);
		kubecfg_free(kc);
	} else {
		fprintf(stderr, "daemon: %s\n", cause);
		CHECK(0);
		free(cause);
	}
	/* Plain http: no CA. */
	CHECK(kubeconfig_write(path, "http://127.0.0.1:8080", NULL, "t",
	    &cause) == 0);
	if ((kc = load(path, NULL, &cause)) != NULL) {
		CHECK_STR(kc->server, "http://127.0.0.1:8080");
		CHECK(kc->ca.data == NULL);
		kubecfg_free(kc);
	} else {
		CHECK(0);
		free(cause);
	}
	free(ca);
	free(path);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");
	char *cmd;
	int rc;

	snprintf(dir, sizeof dir, "%s/kubecfg.XXXXXX",
	    tmp != NULL && *tmp != '\0' && strlen(tmp) < 40 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror(dir);
		return 1;
	}
	test_data();
	test_base64();
	test_contexts();
	test_errors();
	test_path();
	test_in_cluster();
	test_daemon();
	test_files();	/* last: it changes directory */
	rc = check_result("test-kubecfg");
	cmd = util_printf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	free(cmd);
	return rc;
}
