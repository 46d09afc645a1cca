/*
 * The status of stored APIServices, as kube-aggregator's availability
 * controllers write it, and the way to a service-backed one's server
 * (apiservice_backend, which the proxy in apiservice.c follows too).
 *
 * Once a second a timer looks at every stored APIService. A Local one
 * (spec.service null) is Available, reason Local. A service-backed one is
 * checked when it, its Service or its Endpoints changed, and every 30 s:
 * the Service must exist (else ServiceNotFound) and have the port
 * spec.service.port (ServicePortError); its Endpoints must exist
 * (EndpointsNotFound) and hold a ready address with that port's name
 * (MissingEndpoints); then GET https://ADDRESS:TARGETPORT/apis/GROUP/
 * VERSION must answer 2xx within 5 s (FailedDiscoveryCheck), and it is
 * Available with reason Passed. There is no cluster-IP routing in volray,
 * so the server is reached at the endpoint's address, as kube-apiserver
 * does with --enable-aggregator-routing; its certificate is checked
 * against spec.caBundle (and that address) unless insecureSkipTLSVerify.
 * The client certificate is the one the API server shows the nodes'
 * endpoints, when it has one. A status is written only when the
 * condition's status, reason or message changed, keeping the
 * lastTransitionTime while the status holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_int.h"
#include "client/client.h"
#include "lib/hmap.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "net/hclient.h"

#define AVAIL_TICK_MS		1000
#define AVAIL_RECHECK_MS	30000
#define AVAIL_TIMEOUT_MS	5000
#define APISERVICES		"apiservices.apiregistration.k8s.io"

struct backend {
	struct apiservice_avail *av;
	char *name;
	char sig[160];		/* the objects' revisions when last checked */
	uint64_t checked_ms;
	hclient_req *hr;	/* the discovery check in flight */
	hclient *hc;
	char *tls;		/* what hc trusts: "-" (no check) or a CA */
	char url[700];
	int seen;
};

/* An integer at path, or dflt when absent or not a number. */
static int
num_at(const cJSON *o, const char *path, int dflt)
{
	const cJSON *v = json_at(o, path);

	return cJSON_IsNumber(v) ? v->valueint : dflt;
}

struct apiservice_avail {
	api *a;
	uv_timer_t timer;
	hmap *backends;		/* stored name -> struct backend */
	hclient **retired;	/* replaced clients with proxied requests
				   still going: freed once they are done */
	size_t nretired;
};

/* Free hc now, or once its proxied requests are over (a request's
   close handler still cancels through it). */
static void
retire(struct apiservice_avail *av, hclient *hc)
{
	if (hc == NULL)
		return;
	if (hclient_inflight(hc) == 0) {
		hclient_free(hc);
		return;
	}
	av->retired = xreallocarray(av->retired, av->nretired + 1,
	    sizeof *av->retired);
	av->retired[av->nretired++] = hc;
}

static const cJSON *
port_of(const cJSON *svc, int port)
{
	const cJSON *p;

	cJSON_ArrayForEach(p, json_at(svc, "spec.ports"))
		if (num_at(p, "port", 0) == port)
			return p;
	return NULL;
}

/* A ready address of ep with a port named pname: "IP:PORT" into out. */
static int
ready_address(const cJSON *ep, const char *pname, char *out, size_t n)
{
	const cJSON *sub, *p, *ad;

	cJSON_ArrayForEach(sub, json_at(ep, "subsets")) {
		int port = 0;

		cJSON_ArrayForEach(p, json_at(sub, "ports")) {
			const char *nm = json_str(p, "name");

			if (strcmp(nm ? nm : "", pname) == 0)
				port = num_at(p, "port", 0);
		}
		ad = cJSON_GetArrayItem(json_at(sub, "addresses"), 0);
		if (port > 0 && json_str(ad, "ip") != NULL) {
			const char *ip = json_str(ad, "ip");

			snprintf(out, n, strchr(ip, ':') ? "[%s]:%d" : "%s:%d",
			    ip, port);
			return 0;
		}
	}
	return -1;
}

int
apiservice_backend(api *a, const cJSON *as, char *base, size_t n,
    const char **reason, char *msg, size_t msgn, char *sig, size_t sign)
{
	const char *ns = json_str(as, "spec.service.namespace");
	const char *name = json_str(as, "spec.service.name");
	int port = num_at(as, "spec.service.port", 443);
	const store_obj *so, *eo;
	const cJSON *sp;
	cJSON *svc = NULL, *ep = NULL;
	char addr[300];
	int rc = -1;

	so = store_get(a->st, "services", ns ? ns : "", name ? name : "");
	eo = store_get(a->st, "endpoints", ns ? ns : "", name ? name : "");
	if (sig != NULL)
		snprintf(sig, sign, "%d/%llu/%llu", num_at(as,
		    "metadata.generation", 0), so ? (unsigned long long)
		    so->rev : 0ULL, eo ? (unsigned long long)eo->rev : 0ULL);
	if (so == NULL) {
		*reason = "ServiceNotFound";
		snprintf(msg, msgn, "service/%s in \"%s\" is not present", name,
		    ns);
		return -1;
	}
	svc = store_obj_tree(so);
	if ((sp = port_of(svc, port)) == NULL) {
		*reason = "ServicePortError";
		snprintf(msg, msgn, "service/%s in \"%s\" is not listening on "
		    "port %d", name, ns, port);
		goto out;
	}
	if (eo == NULL) {
		*reason = "EndpointsNotFound";
		snprintf(msg, msgn, "cannot find endpoints for service/%s in "
		    "\"%s\"", name, ns);
		goto out;
	}
	ep = store_obj_tree(eo);
	if (ready_address(ep, json_str(sp, "name") ? json_str(sp, "name") :
	    "", addr, sizeof addr) != 0) {
		*reason = "MissingEndpoints";
		snprintf(msg, msgn, "endpoints for service/%s in \"%s\" have no "
		    "addresses with port name \"%s\"", name, ns,
		    json_str(sp, "name") ? json_str(sp, "name") : "");
		goto out;
	}
	snprintf(base, n, "https://%s", addr);
	rc = 0;
out:
	cJSON_Delete(svc);
	cJSON_Delete(ep);
	return rc;
}

/* The entry of the stored APIService name, made when first asked. */
static struct backend *
backend_of(struct apiservice_avail *av, const char *name)
{
	struct backend *b = hmap_get(av->backends, name);

	if (b == NULL) {
		b = xcalloc(1, sizeof *b);
		b->av = av;
		b->name = xstrdup(name);
		b->seen = 1;
		hmap_put(av->backends, b->name, b);
	}
	return b;
}

hclient *
apiservice_client(api *a, const cJSON *as)
{
	struct hclient_conf conf;
	struct backend *b;
	const char *ca = json_str(as, "spec.caBundle");
	const char *name = json_str(as, "metadata.name");
	int insecure = cJSON_IsTrue(json_at(as, "spec.insecureSkipTLSVerify"));
	char *pem = NULL, *cause = NULL;
	size_t len = 0;
	const char *want = insecure ? "-" : ca ? ca : "";

	if (a->avail == NULL || name == NULL)
		return NULL;
	b = backend_of(a->avail, name);
	if (b->hc != NULL && b->tls != NULL && strcmp(b->tls, want) == 0)
		return b->hc;
	memset(&conf, 0, sizeof conf);
	conf.insecure = insecure;
	if (!insecure && ca != NULL && util_base64_decode(ca, &pem, &len) == 0) {
		conf.ca_pem = pem;
		conf.ca_pem_len = len;
	}
	conf.cert_pem = a->node_cert;
	conf.cert_pem_len = a->node_cert ? strlen(a->node_cert) : 0;
	conf.key_pem = a->node_key;
	conf.key_pem_len = a->node_key ? strlen(a->node_key) : 0;
	conf.user_agent = "volray-aggregator";
	if (b->hc != NULL) {
		/* Its check goes with it: made again next tick. */
		if (b->hr != NULL)
			hclient_cancel(b->hr);
		b->hr = NULL;
		b->sig[0] = '\0';
		retire(a->avail, b->hc);
		b->hc = NULL;
	}
	free(b->tls);
	b->tls = xstrdup(want);
	if ((b->hc = hclient_new(a->loop, &conf, &cause)) == NULL) {
		log_warn("apiservice: no client for %s: %s", name, cause);
		free(cause);
	}
	free(pem);
	return b->hc;
}

/* The answer to an Available condition's write; arg is the APIService's
   name. A conflict is left to the next check. */
static void
on_status_written(void *arg, struct reg_result *res)
{
	char *name = arg;

	if (res->code >= 300 && res->code != 409)
		log_warn("apiservice: status of %s: %d", name, res->code);
	cJSON_Delete(res->body);
	free(name);
}

/* Write the Available condition of the stored APIService name. */
static void
set_available(api *a, const char *name, int ok, const char *reason,
    const char *msg)
{
	const resource *r = resource_by_store_key(APISERVICES);
	const store_obj *o = store_get(a->st, APISERVICES, "", name);
	cJSON *cur, *st, *conds, *c = NULL, *it;
	const char *want = ok ? "True" : "False";
	char now[32];

	if (o == NULL || r == NULL || a->client == NULL)
		return;
	cur = store_obj_tree(o);
	cJSON_ArrayForEach(it, json_at(cur, "status.conditions"))
		if (strcmp(json_str(it, "type") ? json_str(it, "type") : "",
		    "Available") == 0)
			c = it;
	if (c != NULL && strcmp(json_str(c, "status") ? json_str(c, "status")
	    : "", want) == 0 && strcmp(json_str(c, "reason") ?
	    json_str(c, "reason") : "", reason) == 0 && strcmp(json_str(c,
	    "message") ? json_str(c, "message") : "", msg) == 0) {
		cJSON_Delete(cur);
		return;
	}
	st = cJSON_Duplicate(json_obj(cur, "status"), 1);
	conds = json_at(st, "conditions");
	if (!cJSON_IsArray(conds)) {
		cJSON_DeleteItemFromObject(st, "conditions");
		conds = cJSON_AddArrayToObject(st, "conditions");
	}
	c = NULL;
	cJSON_ArrayForEach(it, conds)
		if (strcmp(json_str(it, "type") ? json_str(it, "type") : "",
		    "Available") == 0)
			c = it;
	if (c == NULL) {
		c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "type", "Available");
		cJSON_AddItemToArray(conds, c);
	}
	if (json_str(c, "status") == NULL ||
	    strcmp(json_str(c, "status"), want) != 0 ||
	    json_str(c, "lastTransitionTime") == NULL) {
		util_now(now);
		json_set_str(c, "lastTransitionTime", now);
	}
	json_set_str(c, "status", want);
	json_set_str(c, "reason", reason);
	json_set_str(c, "message", msg);
	/* Without waiting: on an etcd store the API server's own client
	   answers once the transaction is back, and the loop goes on. */
	client_update_status_async(a->client, r, "", name, cur, st, NULL,
	    on_status_written, xstrdup(name));
}

static void
on_checked(void *arg, long status, const char *body, size_t len,
    const char *err)
{
	struct backend *b = arg;
	char msg[sizeof b->url * 2 + 96];

	(void)body;
	(void)len;
	b->hr = NULL;
	if (status >= 200 && status < 300) {
		set_available(b->av->a, b->name, 1, "Passed",
		    "all checks passed");
		return;
	}
	if (status == 0)
		snprintf(msg, sizeof msg, "failing or missing response from "
		    "%s: %s", b->url, err ? err : "no answer");
	else
		snprintf(msg, sizeof msg, "failing or missing response from "
		    "%s: bad status from %s: %ld", b->url, b->url, status);
	set_available(b->av->a, b->name, 0, "FailedDiscoveryCheck", msg);
}

/* Check one stored APIService when it is due. */
static void
check(struct apiservice_avail *av, const store_obj *o, uint64_t now)
{
	api *a = av->a;
	cJSON *as = store_obj_tree(o);
	const char *name = json_str(as, "metadata.name");
	const char *group = json_str(as, "spec.group");
	const char *reason = NULL;
	struct backend *b;
	struct hclient_call call;
	char base[400], msg[1024], sig[160], *err = NULL;

	if (name == NULL)
		goto out;
	b = backend_of(av, name);
	b->seen = 1;
	if (!cJSON_IsObject(json_at(as, "spec.service"))) {
		if (b->hr != NULL)
			hclient_cancel(b->hr);
		b->hr = NULL;
		set_available(a, name, 1, "Local",
		    "Local APIServices are always available");
		goto out;
	}
	if (b->hr != NULL)
		goto out;
	if (apiservice_backend(a, as, base, sizeof base, &reason, msg,
	    sizeof msg, sig, sizeof sig) != 0) {
		if (strcmp(sig, b->sig) != 0 ||
		    now - b->checked_ms >= AVAIL_RECHECK_MS) {
			snprintf(b->sig, sizeof b->sig, "%s", sig);
			b->checked_ms = now;
			set_available(a, name, 0, reason, msg);
		}
		goto out;
	}
	if (strcmp(sig, b->sig) == 0 && now - b->checked_ms < AVAIL_RECHECK_MS)
		goto out;
	snprintf(b->sig, sizeof b->sig, "%s", sig);
	b->checked_ms = now;
	snprintf(b->url, sizeof b->url, "%s/apis/%s/%s", base,
	    group ? group : "", json_str(as, "spec.version"));
	if (apiservice_client(a, as) == NULL)
		goto out;
	memset(&call, 0, sizeof call);
	call.url = b->url;
	call.accept = "application/json";
	call.timeout_ms = AVAIL_TIMEOUT_MS;
	if ((b->hr = hclient_start(b->hc, &call, NULL, on_checked, b,
	    &err)) == NULL) {
		snprintf(msg, sizeof msg, "failing or missing response from "
		    "%s: %s", b->url, err);
		free(err);
		set_available(a, name, 0, "FailedDiscoveryCheck", msg);
	}
out:
	cJSON_Delete(as);
}

static void
backend_free(struct backend *b)
{
	if (b->hr != NULL)
		hclient_cancel(b->hr);
	retire(b->av, b->hc);
	free(b->tls);
	free(b->name);
	free(b);
}

/* Forget the APIServices gone since the last tick. */
static int
sweep(const char *key, void *value, void *arg)
{
	struct backend *b = value;
	struct backend ***gone = arg;

	(void)key;
	if (!b->seen) {
		**gone = b;
		(*gone)++;
	}
	b->seen = 0;
	return 0;
}

static void
on_tick(uv_timer_t *t)
{
	struct apiservice_avail *av = t->data;
	store_obj *const *objs;
	struct backend **gone, **end;
	size_t n, i;
	uint64_t now = uv_now(t->loop);

	for (i = 0; i < av->nretired; i++)
		if (hclient_inflight(av->retired[i]) == 0) {
			hclient_free(av->retired[i]);
			av->retired[i--] = av->retired[--av->nretired];
		}
	n = store_list(av->a->st, APISERVICES, NULL, &objs);
	for (i = 0; i < n; i++)
		check(av, objs[i], now);
	if (hmap_count(av->backends) == 0)
		return;
	gone = end = xcalloc(hmap_count(av->backends), sizeof *gone);
	hmap_each(av->backends, sweep, &end);
	for (i = 0; gone + i < end; i++) {
		hmap_del(av->backends, gone[i]->name);
		backend_free(gone[i]);
	}
	free(gone);
}

void
apiservice_avail_start(api *a)
{
	struct apiservice_avail *av;

	if (a->avail != NULL)
		return;
	av = xcalloc(1, sizeof *av);
	av->a = a;
	av->backends = hmap_new();
	uv_timer_init(a->loop, &av->timer);
	av->timer.data = av;
	uv_unref((uv_handle_t *)&av->timer);
	uv_timer_start(&av->timer, on_tick, AVAIL_TICK_MS, AVAIL_TICK_MS);
	a->avail = av;
}
