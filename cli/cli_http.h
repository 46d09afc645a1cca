/*
 * The client's connection to the API server, for volray(1): kubeconfig,
 * requests through one libcurl handle, and watches.
 * There is one connection per process, opened by cli_http_open.
 */
#ifndef VOLRAY_CLI_HTTP_H
#define VOLRAY_CLI_HTTP_H

#include <stddef.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#include "cli_buf.h"

/* A whole reply. */
struct cli_http_resp {
	long		code;	/* HTTP status, or -1 if the server was unreachable */
	struct cli_buf	body;
};

/* Called with each event of a watch; nonzero ends the watch. */
typedef int (*cli_http_event_cb)(const cJSON *ev, void *arg);

/* Where to connect and as whom; NULL fields come from the kubeconfig. */
struct cli_http_conf {
	const char	*kubeconfig;	/* --kubeconfig */
	const char	*server;	/* --server */
	const char	*token;		/* --token */
	const char	*ca_file;	/* --certificate-authority */
	int		 insecure;	/* --insecure-skip-tls-verify */
	long		 req_timeout_ms;	/* per request, 0: no bound */
};

/*
 * Read the kubeconfig (--kubeconfig, else the first readable file of
 * $KUBECONFIG, else ~/.kube/config): server, CA, token or client
 * certificate of the current context, each replaced by conf's field when
 * that is set, and set up the connection. Returns 0, or -1 after saying
 * why on stderr.
 */
int cli_http_open(const struct cli_http_conf *);
void cli_http_close(void);
/* fn is called when the connection closes (cli_res_free: discovery
 * forgets this server); one hook, NULL removes it. */
void cli_http_on_close(void (*fn)(void));
/* The path of the kubeconfig cli_http_open reads for conf (free it). */
char *cli_http_kubeconfig(const struct cli_http_conf *conf);
/* The namespace of the current context, or "default". */
const char *cli_http_namespace(void);

/* Send one request and read the whole reply into r (free r->body after);
 * r->code is -1, already reported, if the server could not be reached. */
void cli_http_request(const char *method, const char *path, const char *ctype,
    const char *body, const char *accept, struct cli_http_resp *r);
/* The same with a body of len bytes (binary). */
void cli_http_request_bytes(const char *method, const char *path,
    const char *ctype, const char *body, size_t len, const char *accept,
    struct cli_http_resp *r);
/* Print a failed reply as kubectl does, from the Status the server sent. */
void cli_http_report(const struct cli_http_resp *);
/* GET a JSON document; NULL (reported) unless the server answered 200. */
cJSON *cli_http_get_json(const char *path, const char *accept);
/* Read every page of a list (JSON, or a Table when accept asks for one)
 * into one document; NULL (reported) on failure. */
cJSON *cli_http_list(const char *path, const char *accept);
/* Append key=value (escaped) to a path; nothing when value is NULL. */
void cli_http_query_add(struct cli_buf *path, const char *key,
    const char *value);
/*
 * Watch path from resourceVersion rv for up to timeout_ms, handing every
 * event to cb until it returns nonzero or the server ends the stream.
 * *code is set to the reply's status as soon as its body starts (and left
 * as it was if no body comes). Returns 0 when the watch ended, or expired
 * (*code 410); -1 after reporting a failure.
 */
int cli_http_watch(const char *path, const char *rv, long timeout_ms,
    cli_http_event_cb cb, void *arg, long *code);
/* The same with an Accept header (NULL: JSON), such as a Table's. */
int cli_http_watch_as(const char *path, const char *rv, long timeout_ms,
    const char *accept, cli_http_event_cb cb, void *arg, long *code);
/* GET path and copy the reply to out as it arrives, with no time limit
 * (logs -f): until the server ends it or the user interrupts. Returns 0,
 * or -1 after reporting a refusal or a broken connection. */
int cli_http_stream(const char *path, const char *accept, FILE *out);

#endif
