/*
 * The node manager. It follows the client's events (durable ones, in
 * the embedded case): a Node labelled volray.io/runtime=virtual (or
 * this machine's own, labelled local) is taken in charge by that
 * runtime (its status made Ready with capacity, allocatable, addresses
 * and node info; a Lease in kube-node-lease renewed every quarter of
 * its duration, each node at its own offset in the period so that
 * thousands of nodes cost a steady trickle of writes, not a burst); a
 * pod bound to a managed node gets a pod worker (podworker.c), taken on
 * in the flush slice; a pod marked for deletion is terminated with its
 * grace period; a deleted node's pods are removed at once. The flush
 * slice, a check handle at the end of each loop turn, writes the status
 * of the pods that changed (podstatus.c) and takes on the waiting ones.
 * The runtimes are reached only through their tables (runtime.h), also
 * for what they keep across pods at start and exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/log.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"
#include "node/podnet.h"

const char *const node_mgr_kinds[] = {
	"nodes", "pods", "namespaces", "leases.coordination.k8s.io",
	"configmaps", "secrets",	/* env and volumes of local pods */
	"services",			/* their /etc/hosts, as root */
	"endpoints",			/* Services on the pod network */
	NULL
};

#define LEASE_SLOTS	100
#define LEASE_SECONDS	40		/* renewed every quarter of it */
#define LEASE_NS	"kube-node-lease"

/* The runtimes, each once: their steps at start and exit. */
static const struct node_runtime *const runtimes[] = {
	&sim_runtime, &local_runtime
};
#define NRUNTIMES (sizeof runtimes / sizeof runtimes[0])

static const char *
annotation(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_at(obj,
	    "metadata.annotations"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *
node_label(const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(json_at(obj,
	    "metadata.labels"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/*
 * The runtime that serves a Node object, or NULL. Only the node this
 * daemon registered runs processes: labelling another Node "local" does
 * not make this machine run its pods.
 */
static const struct node_runtime *
runtime_for(node_mgr *m, const cJSON *obj)
{
	const char *rt = node_label(obj, "volray.io/runtime");
	const char *name = json_str(obj, "metadata.name");

	if (rt != NULL && strcmp(rt, "virtual") == 0)
		return m->no_virtual || (m->virtual_sel != NULL &&
		    !selector_match_labels(m->virtual_sel, json_at(obj,
		    "metadata.labels"))) ? NULL : &sim_runtime;
	if (rt != NULL && strcmp(rt, "local") == 0 && m->local_name != NULL &&
	    name != NULL && strcmp(name, m->local_name) == 0)
		return &local_runtime;
	return NULL;
}

static uint32_t
name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static void
write_result(const char *what, const char *name, struct reg_result *res)
{
	if (res->code >= 300 && res->code != 409)
		log_warn("node %s: %s: code %d", name, what, res->code);
	cJSON_Delete(res->body);
}

/* A write of a node's (its Lease, its status) on its way: n may be gone
   when the answer comes, looked up again by name. */
struct node_wait {
	node_mgr *m;
	char name[];
};

/* A renewal's answer. */
static void
on_lease_written(void *arg, struct reg_result *res)
{
	struct node_wait *w = arg;
	struct node *n = hmap_get(w->m->nodes, w->name);

	if (n != NULL)
		n->lease_writing = 0;
	if (res->code < 300)
		w->m->stats.lease_writes++;
	write_result("lease", w->name, res);
	free(w);
}

/* Renew (or create) the node's Lease, then come back in a period. */
static void
on_lease(wheel_timer *t)
{
	struct node *n = t->data;
	node_mgr *m = n->m;
	const resource *r = resource_find("coordination.k8s.io", "v1",
	    "leases");
	const store_obj *no = client_get(m->c, "nodes", "", n->name);
	size_t len = strlen(n->name) + 1;
	struct node_wait *w;
	char now[40];
	cJSON *l;
	int create;

	wheel_add(m->wheel, &n->lease_timer, n->lease_period_ms, on_lease, n);
	if (n->failing || no == NULL || n->lease_writing)
		return;
	util_now_micro(now);
	l = client_get_tree(m->c, r, LEASE_NS, n->name);
	if (l == NULL && m->lease_ns_writing) {
		/* Its namespace is on its way (node_mgr_start): soon. */
		wheel_add(m->wheel, &n->lease_timer, 100, on_lease, n);
		return;
	}
	if ((create = l == NULL)) {
		cJSON *md, *own, *o;

		l = cJSON_CreateObject();
		cJSON_AddStringToObject(l, "apiVersion", "coordination.k8s.io/v1");
		cJSON_AddStringToObject(l, "kind", "Lease");
		md = json_obj(l, "metadata");
		json_set_str(md, "name", n->name);
		json_set_str(md, "namespace", LEASE_NS);
		own = cJSON_AddArrayToObject(md, "ownerReferences");
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "apiVersion", "v1");
		cJSON_AddStringToObject(o, "kind", "Node");
		cJSON_AddStringToObject(o, "name", n->name);
		cJSON_AddStringToObject(o, "uid", no->uid);
		cJSON_AddItemToArray(own, o);
		json_set_str(json_obj(l, "spec"), "holderIdentity", n->name);
		json_set_num(json_obj(l, "spec"), "leaseDurationSeconds",
		    m->lease_seconds);
	}
	json_set_str(json_obj(l, "spec"), "renewTime", now);
	/* Without waiting: thousands of nodes renew every period. */
	w = xmalloc(sizeof *w + len);
	w->m = m;
	memcpy(w->name, n->name, len);
	n->lease_writing = 1;
	if (create)
		client_create_async(m->c, r, LEASE_NS, l, NULL,
		    on_lease_written, w);
	else
		client_update_async(m->c, r, LEASE_NS, n->name, l, NULL,
		    on_lease_written, w);
}

static cJSON *
condition(const char *type, const char *status, const char *reason,
    const char *message, const char *now, const cJSON *old)
{
	cJSON *c = cJSON_CreateObject();
	const cJSON *it;
	const char *since = now;

	cJSON_ArrayForEach(it, json_at(old, "conditions"))
		if (json_str(it, "type") && strcmp(json_str(it, "type"), type) ==
		    0 && json_str(it, "status") && strcmp(json_str(it, "status"),
		    status) == 0 && json_str(it, "lastTransitionTime"))
			since = json_str(it, "lastTransitionTime");
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddStringToObject(c, "status", status);
	cJSON_AddStringToObject(c, "lastHeartbeatTime", since);
	cJSON_AddStringToObject(c, "lastTransitionTime", since);
	cJSON_AddStringToObject(c, "reason", reason);
	cJSON_AddStringToObject(c, "message", message);
	return c;
}

static void
put_list(cJSON *st, const char *key, const struct podspec_res *r)
{
	cJSON *l = cJSON_CreateObject();
	char buf[64];
	int i;

	snprintf(buf, sizeof buf, "%lldm", (long long)r->cpu);
	if (r->cpu % 1000 == 0)
		snprintf(buf, sizeof buf, "%lld", (long long)(r->cpu / 1000));
	cJSON_AddStringToObject(l, "cpu", buf);
	snprintf(buf, sizeof buf, "%lld", (long long)r->memory);
	if (r->memory % 1024 == 0)
		snprintf(buf, sizeof buf, "%lldKi", (long long)(r->memory /
		    1024));
	cJSON_AddStringToObject(l, "memory", buf);
	snprintf(buf, sizeof buf, "%lld", (long long)r->pods);
	cJSON_AddStringToObject(l, "pods", buf);
	for (i = 0; i < r->next; i++) {
		snprintf(buf, sizeof buf, "%lld", (long long)r->ext[i].value);
		cJSON_AddStringToObject(l, r->ext[i].name, buf);
	}
	cJSON_AddItemToObject(st, key, l);
}

static void write_node_status(node_mgr *, struct node *, const store_obj *);

/* A node status write's answer: n may be gone, looked up again by name;
   a change that came meanwhile is written now, over the newest version. */
static void
on_status_written(void *arg, struct reg_result *res)
{
	struct node_wait *w = arg;
	struct node *n = hmap_get(w->m->nodes, w->name);
	const store_obj *o;

	write_result("status", w->name, res);
	if (n != NULL) {
		n->status_writing = 0;
		if (n->status_again && !n->failing &&
		    (o = client_get(w->m->c, "nodes", "", n->name)) != NULL)
			write_node_status(w->m, n, o);
		n->status_again = 0;
	}
	free(w);
}

/*
 * The status the kubelet keeps on its Node, written when it changes,
 * without waiting: one write of a node's status on its way at a time (a
 * change meanwhile is written after its answer, from the newest version;
 * a conflict is written again over the server's version by the client,
 * reg_opts.own_status).
 */
static void
write_node_status(node_mgr *m, struct node *n, const store_obj *o)
{
	const resource *r = resource_find("", "v1", "nodes");
	cJSON *t, *old, *st, *conds, *addr, *a, *info;
	cJSON *images;
	struct node_wait *w;
	size_t len;
	/* The status is this node's to write (reg_opts.own_status). */
	static const struct reg_opts own = { .own_status = 1 };
	char now[32];

	if (n->status_writing) {
		n->status_again = 1;
		return;
	}
	t = store_obj_tree(o);
	util_now(now);
	old = json_at(t, "status");
	st = cJSON_CreateObject();
	if (json_at(old, "capacity") != NULL)
		cJSON_AddItemToObject(st, "capacity",
		    cJSON_Duplicate(json_at(old, "capacity"), 1));
	else
		put_list(st, "capacity", &n->alloc);
	if (json_at(old, "allocatable") != NULL)
		cJSON_AddItemToObject(st, "allocatable",
		    cJSON_Duplicate(json_at(old, "allocatable"), 1));
	else
		put_list(st, "allocatable", &n->alloc);
	conds = cJSON_AddArrayToObject(st, "conditions");
	cJSON_AddItemToArray(conds, condition("MemoryPressure", "False",
	    "KubeletHasSufficientMemory", "kubelet has sufficient memory "
	    "available", now, old));
	cJSON_AddItemToArray(conds, condition("DiskPressure", "False",
	    "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now,
	    old));
	cJSON_AddItemToArray(conds, condition("PIDPressure", "False",
	    "KubeletHasSufficientPID", "kubelet has sufficient PID available",
	    now, old));
	cJSON_AddItemToArray(conds, condition("Ready", "True", "KubeletReady",
	    "kubelet is posting ready status", now, old));
	addr = cJSON_AddArrayToObject(st, "addresses");
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "InternalIP");
	cJSON_AddStringToObject(a, "address", m->ep_addr ? m->ep_addr : n->ip);
	cJSON_AddItemToArray(addr, a);
	a = cJSON_CreateObject();
	cJSON_AddStringToObject(a, "type", "Hostname");
	cJSON_AddStringToObject(a, "address", n->name);
	cJSON_AddItemToArray(addr, a);
	json_set_num(json_obj(json_obj(st, "daemonEndpoints"),
	    "kubeletEndpoint"), "Port", m->ep_port > 0 ? m->ep_port : 10250);
	info = json_obj(st, "nodeInfo");
	json_set_str(info, "architecture", "amd64");
	json_set_str(info, "operatingSystem", "linux");
	json_set_str(info, "osImage", n->rt->os_image);
	json_set_str(info, "kernelVersion", "");
	json_set_str(info, "kubeletVersion", "v1.32.0-volray");
	json_set_str(info, "kubeProxyVersion", "");
	json_set_str(info, "containerRuntimeVersion", n->rt->version);
	json_set_str(info, "machineID", "");
	json_set_str(info, "systemUUID", "");
	json_set_str(info, "bootID", "");
	/* The local node's images: its Ray installs (rayimage.c). */
	if (strcmp(n->rt->name, "local") == 0 &&
	    (images = rayimage_node_images(m)) != NULL)
		cJSON_AddItemToObject(st, "images", images);
	if (json_equal(st, old)) {
		cJSON_Delete(st);
		cJSON_Delete(t);
		return;
	}
	len = strlen(n->name) + 1;
	w = xmalloc(sizeof *w + len);
	w->m = m;
	memcpy(w->name, n->name, len);
	n->status_writing = 1;
	client_update_status_async(m->c, r, "", n->name, t, st, &own,
	    on_status_written, w);
}

/*
 * The first InternalIP of a Node, else one made up from its index (its
 * pods' hostIP). With an endpoint the InternalIP is the endpoint's, as
 * kwok's nodes share its address: the runtime's own is kept then.
 */
static void
node_ip(struct node *n, const cJSON *obj)
{
	const cJSON *it, *addrs = n->m->ep_addr != NULL ? NULL :
	    json_at(obj, "status.addresses");

	cJSON_ArrayForEach(it, addrs)
		if (json_str(it, "type") && strcmp(json_str(it, "type"),
		    "InternalIP") == 0 && json_str(it, "address")) {
			snprintf(n->ip, sizeof n->ip, "%s",
			    json_str(it, "address"));
			return;
		}
	if (n->rt->ip != NULL)
		snprintf(n->ip, sizeof n->ip, "%s", n->rt->ip);
	else
		snprintf(n->ip, sizeof n->ip, "10.0.%u.%u", (n->idx >> 8) & 255,
		    n->idx & 255);
}

static struct node *
manage(node_mgr *m, const store_obj *o, const cJSON *obj,
    const struct node_runtime *rt)
{
	struct node *n = xcalloc(1, sizeof *n);

	n->pods = hmap_new();
	n->m = m;
	n->name = xstrdup(o->name);
	n->rt = rt;
	n->idx = ++m->next_node_idx;
	n->lease_period_ms = (uint64_t)m->lease_seconds * 250;
	podspec_allocatable(obj, &n->alloc);
	node_ip(n, obj);
	log_info("node %s: managed by the %s runtime", n->name, rt->name);
	hmap_put(m->nodes, n->name, n);
	m->stats.nodes++;
	/*
	 * Spread the heartbeats over the period, in LEASE_SLOTS slots: no
	 * burst at start, and the renewals of one slot share a group commit
	 * (5,000 nodes: 50 writes per fsync, 10 fsyncs a second).
	 */
	wheel_add(m->wheel, &n->lease_timer, (name_hash(n->name) %
	    LEASE_SLOTS) * (n->lease_period_ms / LEASE_SLOTS), on_lease, n);
	return n;
}

static int
collect_pod(const char *key, void *value, void *arg)
{
	struct node_pod ***list = arg;

	(void)key;
	*(*list)++ = value;
	return 0;
}

/* Stop managing a node; its pods are forgotten (deleted elsewhere). */
static void
unmanage(node_mgr *m, struct node *n)
{
	size_t count = hmap_count(n->pods), i;
	struct node_pod **pods = xcalloc(count + 1, sizeof *pods), **end = pods;

	hmap_each(n->pods, collect_pod, &end);
	for (i = 0; i < count; i++)
		podworker_forget(pods[i]);
	free(pods);
	wheel_cancel(m->wheel, &n->lease_timer);
	hmap_del(m->nodes, n->name);
	hmap_free(n->pods);
	free(n->name);
	free(n);
	m->stats.nodes--;
}

static void adopt_later(node_mgr *, const store_obj *);

/*
 * A node that appears after pods were bound to it runs them, as a
 * kubelet that starts does (at start-up node_mgr_start takes them all).
 */
static void
adopt_bound(node_mgr *m, struct node *n)
{
	const char **keys;
	const store_obj *o;
	size_t np, i;

	if (!m->started)
		return;
	/* adopt_later writes nothing: the index stays as it is. */
	np = client_on_node(m->c, n->name, &keys);
	for (i = 0; i < np; i++)
		if (strncmp(keys[i], "pods/", 5) == 0 &&
		    (o = client_get_key(m->c, keys[i])) != NULL &&
		    hmap_get(m->pods, o->uid) == NULL &&
		    hmap_get(m->adopting, o->uid) == NULL)
			adopt_later(m, o);
}

static void
node_event(node_mgr *m, const store_event *ev)
{
	struct node *n = hmap_get(m->nodes, ev->obj->name);
	const struct node_runtime *rt;
	int was_failing;
	cJSON *t;

	if (ev->type == STORE_DELETED) {
		const char **on;
		size_t np, i;
		char **keys;

		if (n != NULL)
			unmanage(m, n);
		/* Pods bound to a node that is gone go at once (pod GC): the
		   store's index by node (the removals change it: a copy). */
		np = client_on_node(m->c, ev->obj->name, &on);
		keys = xcalloc(np + 1, sizeof *keys);
		for (i = 0; i < np; i++)
			keys[i] = xstrdup(on[i]);
		for (i = 0; i < np; i++) {
			/* "pods/NS/NAME" */
			char *slash = strncmp(keys[i], "pods/", 5) == 0 ?
			    strchr(keys[i] + 5, '/') : NULL;

			if (slash != NULL) {
				*slash = '\0';
				podworker_remove(m, keys[i] + 5, slash + 1);
			}
			free(keys[i]);
		}
		free(keys);
		return;
	}
	t = store_obj_tree(ev->obj);
	rt = runtime_for(m, t);
	if (rt == NULL) {
		if (n != NULL)
			unmanage(m, n);
		cJSON_Delete(t);
		return;
	}
	if (n == NULL) {
		n = manage(m, ev->obj, t, rt);
		adopt_bound(m, n);
	} else
		podspec_allocatable(t, &n->alloc);
	was_failing = n->failing;
	n->failing = annotation(t, "volray.io/sim-fail") != NULL &&
	    strcmp(annotation(t, "volray.io/sim-fail"), "true") == 0;
	cJSON_Delete(t);
	/*
	 * A failing node posts nothing (the lifecycle controller marks it
	 * Unknown); one that comes back renews its Lease at once, then
	 * writes Ready=True over the controller's Unknown.
	 */
	if (was_failing && !n->failing)
		on_lease(&n->lease_timer);
	if (!n->failing)
		write_node_status(m, n, ev->obj);
}

/*
 * A pod bound to a managed node that we have not seen: take it on. With
 * write_now its first status is written at once, from the tree parsed
 * here (one parse for both; else the flush parses the pod again).
 */
static void
adopt_pod(node_mgr *m, struct node *n, const store_obj *o, int write_now)
{
	cJSON *t = store_obj_tree(o);
	const char *phase = json_str(t, "status.phase");
	struct node_pod *p, **at;

	if (phase != NULL && (strcmp(phase, "Succeeded") == 0 ||
	    strcmp(phase, "Failed") == 0)) {
		cJSON_Delete(t);
		return;
	}
	if (o->deleting) {
		/* Nothing of it runs here: it can go at once. */
		cJSON_Delete(t);
		podworker_remove(m, o->ns, o->name);
		return;
	}
	p = podworker_new(n, o, t);
	podrestore_apply(p, json_at(t, "status"));
	at = m->dirty_tail;
	podworker_start(p, t);
	if (write_now)
		podstatus_flush_now(p, at, o, t);
	else
		cJSON_Delete(t);
}

/*
 * A bound pod waiting to be taken on in the flush slice, where its
 * first status is written right after (its tree still warm): a burst of
 * binds is taken on as fast as its statuses are written, not all at
 * once. o is the version that was seen; the stored one is taken on.
 */
struct adoption {
	struct adoption *next;
	store_obj *o;			/* NULL: deleted meanwhile */
};

static void
adopt_later(node_mgr *m, const store_obj *o)
{
	struct adoption *a = xmalloc(sizeof *a);

	a->next = NULL;
	a->o = store_obj_ref((store_obj *)o);
	hmap_put(m->adopting, a->o->uid, a);
	*m->adopt_tail = a;
	m->adopt_tail = &a->next;
}

/* Take on the waiting pods until the slice that began at t0 is over. */
static void
adopt_waiting(node_mgr *m, uint64_t t0)
{
	struct adoption *a;
	const store_obj *o;
	struct node *n;
	int count = 0;

	while ((a = m->adopt) != NULL) {
		if ((++count & 31) == 0 && util_usec() - t0 > FLUSH_US)
			return;
		if ((m->adopt = a->next) == NULL)
			m->adopt_tail = &m->adopt;
		if (a->o == NULL) {
			free(a);
			continue;
		}
		hmap_del(m->adopting, a->o->uid);
		o = client_get(m->c, "pods", a->o->ns, a->o->name);
		if (o != NULL && strcmp(o->uid, a->o->uid) == 0 &&
		    hmap_get(m->pods, o->uid) == NULL &&
		    !podworker_finishing(m, o->uid) &&
		    (n = hmap_get(m->nodes, o->node_name)) != NULL)
			adopt_pod(m, n, o, 1);
		store_obj_unref(a->o);
		free(a);
	}
}

static void
pod_event(node_mgr *m, const store_event *ev)
{
	const store_obj *o = ev->obj;
	struct node_pod *p = hmap_get(m->pods, o->uid);
	struct adoption *a;

	if (p != NULL) {
		if (ev->type == STORE_DELETED) {
			podworker_forget(p);
			return;
		}
		if (p->stale) {
			/* A newer version than the one its write was refused
			   over: the status goes again on top of it. */
			p->stale = 0;
			podstatus_dirty(p);
		}
		if (o->deleting) {
			cJSON *t = store_obj_tree(o);
			double g = cJSON_GetNumberValue(json_at(t,
			    "metadata.deletionGracePeriodSeconds"));

			cJSON_Delete(t);
			podworker_terminate(p, g > 0 ? (uint64_t)(g * 1000) : 0);
		}
		return;
	}
	/* Its last status and its delete on their way: it is not back. */
	if (podworker_finishing(m, o->uid))
		return;
	if ((a = hmap_get(m->adopting, o->uid)) != NULL) {
		/* Still waiting: the stored version is taken on then. */
		if (ev->type == STORE_DELETED) {
			hmap_del(m->adopting, o->uid);
			store_obj_unref(a->o);
			a->o = NULL;
		}
		return;
	}
	if (ev->type == STORE_DELETED || o->node_name[0] == '\0' ||
	    hmap_get(m->nodes, o->node_name) == NULL)
		return;
	adopt_later(m, o);
}

static void
on_event(void *arg, const store_event *ev)
{
	node_mgr *m = arg;

	if (strcmp(ev->obj->res, "pods") == 0)
		pod_event(m, ev);
	else if (strcmp(ev->obj->res, "nodes") == 0)
		node_event(m, ev);
	else if (strcmp(ev->obj->res, "services") == 0 ||
	    strcmp(ev->obj->res, "endpoints") == 0)
		podnet_services_changed(m);
}

static void
on_flush_more(uv_idle_t *h)
{
	uv_idle_stop(h);
}

static void
on_check(uv_check_t *h)
{
	node_mgr *m = h->data;
	uint64_t t0;

	if (m->dirty == NULL && m->adopt == NULL)
		return;
	/* Both in one slice; each does at least 31 before it looks at the
	   time, so neither starves the other. */
	t0 = util_usec();
	podstatus_flush_slice(m, t0);
	adopt_waiting(m, t0);
	/* What the slice left: the next turn, without waiting in poll. */
	if (m->dirty != NULL || m->adopt != NULL)
		uv_idle_start(&m->flush_more, on_flush_more);
}

void
node_mgr_set_virtual(node_mgr *m, int enabled, struct selector *sel)
{
	m->no_virtual = !enabled;
	selector_free(m->virtual_sel);
	m->virtual_sel = sel;
}

void
node_mgr_set_endpoint(node_mgr *m, const char *addr, int port)
{
	free(m->ep_addr);
	m->ep_addr = xstrdup(addr);
	m->ep_port = port;
}

int
node_mgr_has_runtime(void *mgr, const char *node)
{
	node_mgr *m = mgr;

	return hmap_get(m->nodes, node) != NULL;
}

node_mgr *
node_mgr_new(uv_loop_t *loop, client *c)
{
	node_mgr *m = xcalloc(1, sizeof *m);

	m->nodes = hmap_new();
	m->pods = hmap_new();
	m->adopting = hmap_new();
	m->finishing = hmap_new();
	m->loop = loop;
	m->c = c;
	m->lease_seconds = LEASE_SECONDS;
	m->dirty_tail = &m->dirty;
	m->adopt_tail = &m->adopt;
	m->wheel = wheel_new(loop);
	m->events = recorder_new(c, "kubelet");
	uv_check_init(loop, &m->flush);
	m->flush.data = m;
	uv_check_start(&m->flush, on_check);
	uv_unref((uv_handle_t *)&m->flush);
	uv_idle_init(loop, &m->flush_more);
	uv_unref((uv_handle_t *)&m->flush_more);
	client_subscribe(c, on_event, m);
	return m;
}

/* This machine's CPUs and memory, as Node annotations. */
static void
local_capacity(char *cpu, char *mem, size_t size)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long kb = 0;
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	snprintf(cpu, size, "%ld", n > 0 ? n : 1);
	snprintf(mem, size, "%lluKi", kb);
}

static void
on_local_registered(void *arg, struct reg_result *res)
{
	node_mgr *m = arg;

	write_result("registering the local node", m->local_name, res);
}

/*
 * Create (or bring up to date) the Node for this machine, without
 * waiting: its event (the create's, written through) makes it managed
 * and adopts its pods (adopt_bound), whether the answer comes before
 * node_mgr_start lists the nodes (the embedded client's) or after.
 */
static void
register_local(node_mgr *m)
{
	const resource *r = resource_find("", "v1", "nodes");
	char cpu[32], mem[32];
	cJSON *t = client_get_tree(m->c, r, "", m->local_name), *md, *l, *a;
	int create = t == NULL;

	local_capacity(cpu, mem, sizeof cpu);
	if (create) {
		t = cJSON_CreateObject();
		cJSON_AddStringToObject(t, "apiVersion", "v1");
		cJSON_AddStringToObject(t, "kind", "Node");
		json_set_str(json_obj(t, "metadata"), "name", m->local_name);
	}
	md = json_obj(t, "metadata");
	l = json_obj(md, "labels");
	json_set_str(l, "volray.io/runtime", "local");
	json_set_str(l, "kubernetes.io/hostname", m->local_name);
	json_set_str(l, "kubernetes.io/os", "linux");
	json_set_str(l, "kubernetes.io/arch", "amd64");
	a = json_obj(md, "annotations");
	json_set_str(a, "volray.io/cpu", cpu);
	json_set_str(a, "volray.io/memory", mem);
	if (podnet_cidr() != NULL) {
		cJSON *spec = json_obj(t, "spec"), *cidrs;

		json_set_str(spec, "podCIDR", podnet_cidr());
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "podCIDRs");
		cidrs = cJSON_AddArrayToObject(spec, "podCIDRs");
		cJSON_AddItemToArray(cidrs, cJSON_CreateString(podnet_cidr()));
	}
	/* The client owns t now. */
	if (create)
		client_create_async(m->c, r, "", t, NULL, on_local_registered,
		    m);
	else
		client_update_async(m->c, r, "", m->local_name, t, NULL,
		    on_local_registered, m);
	log_info("node %s: the local node runs containers' commands as "
	    "processes of this user under %s; no images; %s; resource "
	    "limits are %s; %s%s", m->local_name,
	    m->shim ? m->shim : "no volray-shim (containers cannot start)",
	    mountplan_enabled() ? "volumes at their mountPath in a mount "
	    "namespace per container, the host's files otherwise" :
	    "not root: volumes only under each pod's directory "
	    "($VOLRAY_POD_ROOT), not at their mountPath",
	    cgroup_mode(), podnet_cidr() ? "a network namespace per pod, "
	    "addresses from " : "pods share the host's network",
	    podnet_cidr() ? podnet_cidr() : "");
}

void
node_mgr_set_local(node_mgr *m, const char *data_dir, const char *name)
{
	free(m->data_dir);
	m->data_dir = xstrdup(data_dir);
	free(m->local_name);
	m->local_name = name != NULL ? xstrdup(name) : NULL;
}

void
node_mgr_set_shim(node_mgr *m, const char *path)
{
	free(m->shim);
	m->shim = path != NULL ? xstrdup(path) : NULL;
}

const char *
node_mgr_runtime(node_mgr *m, const char *node_name)
{
	struct node *n = node_name != NULL ? hmap_get(m->nodes, node_name) :
	    NULL;

	return n != NULL ? n->rt->name : NULL;
}

/*
 * Where this process reaches pod ns/name's ports: the address of a pod
 * whose node runs processes here (the local node's pods share its
 * network, so 127.0.0.1, the address it got when admitted). The one
 * place that says so: the API's proxies and the probes go there.
 */
int
node_mgr_pod_addr(node_mgr *m, const char *ns, const char *name, char *host,
    size_t size)
{
	const store_obj *o = client_get(m->c, "pods", ns, name);
	struct node_pod *p = o ? hmap_get(m->pods, o->uid) : NULL;

	if (p == NULL || p->node->rt->exec_stream == NULL || p->ip[0] == '\0' ||
	    !p->admitted)
		return -1;
	return util_strf(host, size, "%s", p->ip);
}

/* The running instance of container ctr of pod ns/name here, or NULL. */
struct node_ctr *
node_mgr_find_ctr(node_mgr *m, const char *ns, const char *name, const char *ctr,
    int *code, char **msg)
{
	const store_obj *o = client_get(m->c, "pods", ns, name);
	struct node_pod *p = o ? hmap_get(m->pods, o->uid) : NULL;
	int i;

	if (p == NULL) {
		*code = 404;
		*msg = util_printf("pod %s/%s is not running on this node", ns,
		    name);
		return NULL;
	}
	for (i = 0; i < p->nctrs; i++)
		if (strcmp(p->ctrs[i].name, ctr) == 0)
			break;
	if (i == p->nctrs) {
		*code = 404;
		*msg = util_printf("container not found (\"%s\")", ctr);
		return NULL;
	}
	if (p->ctrs[i].state != CTR_RUNNING || p->ctrs[i].rt == NULL) {
		*code = 400;
		*msg = util_printf("container %s is not running", ctr);
		return NULL;
	}
	return &p->ctrs[i];
}

char *
node_mgr_pod_dir(node_mgr *m, const char *ns, const char *name)
{
	return util_printf("%s/pods/%s/%s", m->data_dir ? m->data_dir : ".",
	    ns, name);
}

void
node_mgr_set_sim_effect(node_mgr *m, node_sim_effect_fn start,
    void (*cancel)(void *), void *arg)
{
	m->sim_effect = start;
	m->sim_cancel = cancel;
	m->sim_effect_arg = arg;
}

void
node_mgr_set_portmap(node_mgr *m, node_portmap_fn fn, void *arg)
{
	m->portmap = fn;
	m->portmap_arg = arg;
}

void
node_mgr_set_token_hook(node_mgr *m, node_token_fn hook, void *arg)
{
	m->token_hook = hook;
	m->token_arg = arg;
}

void
node_mgr_set_env_hook(node_mgr *m, node_env_hook hook, void *arg)
{
	m->env_hook = hook;
	m->env_arg = arg;
}

struct wheel *
node_mgr_wheel(node_mgr *m)
{
	return m->wheel;
}

static int
forget_ray(const char *uid, void *v, void *arg)
{
	const struct node_pod *p = v;

	(void)arg;
	if (p->node->rt->exec_stream != NULL)
		rayimage_forget(uid);
	return 0;
}

void
node_mgr_shutdown(node_mgr *m)
{
	size_t i;

	for (i = 0; i < NRUNTIMES; i++)
		if (runtimes[i]->kill_all != NULL)
			runtimes[i]->kill_all();
	/* What the killed Ray sessions left in /tmp goes with them. */
	hmap_each(m->pods, forget_ray, NULL);
}

void
node_mgr_set_lease_duration(node_mgr *m, int seconds)
{
	if (seconds > 0)
		m->lease_seconds = seconds;
}

/* kube-node-lease is there (or could not be made): Leases can be. */
static void
on_lease_ns(void *arg, struct reg_result *res)
{
	node_mgr *m = arg;

	m->lease_ns_writing = 0;
	write_result("namespace " LEASE_NS, "-", res);
}

void
node_mgr_start(node_mgr *m)
{
	const resource *nsr = resource_find("", "v1", "namespaces");
	store_obj *const *objs;
	size_t n, i;
	cJSON *ns;

	/* Without waiting; the Leases to create wait for it (on_lease). */
	if (client_get(m->c, "namespaces", "", LEASE_NS) == NULL) {
		ns = cJSON_Parse("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		    "\"metadata\":{\"name\":\"" LEASE_NS "\"}}");
		m->lease_ns_writing = 1;
		client_create_async(m->c, nsr, "", ns, NULL, on_lease_ns, m);
	}
	/*
	 * Start-up took a while and the loop has not run: timers set from
	 * here on (a resumed container's end) count from now.
	 */
	uv_update_time(m->loop);
	for (i = 0; i < NRUNTIMES; i++)
		if (runtimes[i]->restore != NULL)
			runtimes[i]->restore(m);
	if (m->local_name != NULL)
		register_local(m);
	n = client_list(m->c, "nodes", NULL, &objs);
	{
		/* The list changes under the writes below: copy the names. */
		char **names = xcalloc(n + 1, sizeof *names);

		for (i = 0; i < n; i++)
			names[i] = xstrdup(objs[i]->name);
		for (i = 0; i < n; i++) {
			const store_obj *o = client_get(m->c, "nodes", "",
			    names[i]);
			store_event ev = { STORE_MODIFIED, (store_obj *)o, NULL };

			if (o != NULL)
				node_event(m, &ev);
			free(names[i]);
		}
		free(names);
	}
	n = client_list(m->c, "pods", NULL, &objs);
	{
		char **keys = xcalloc(n + 1, sizeof *keys);

		for (i = 0; i < n; i++)
			if (objs[i]->node_name[0] != '\0' &&
			    hmap_get(m->nodes, objs[i]->node_name) != NULL)
				keys[i] = util_printf("%s/%s", objs[i]->ns,
				    objs[i]->name);
		for (i = 0; i < n; i++) {
			const store_obj *o;
			char *slash;

			if (keys[i] == NULL)
				continue;
			slash = strchr(keys[i], '/');
			*slash = '\0';
			o = client_get(m->c, "pods", keys[i], slash + 1);
			if (o != NULL && hmap_get(m->pods, o->uid) == NULL &&
			    hmap_get(m->nodes, o->node_name) != NULL)
				adopt_pod(m, hmap_get(m->nodes, o->node_name),
				    o, 0);
			free(keys[i]);
		}
		free(keys);
	}
	m->started = 1;
	usage_start(m);
	/* What no pod took back is killed, with its cgroups. */
	for (i = 0; i < NRUNTIMES; i++)
		if (runtimes[i]->restored != NULL)
			runtimes[i]->restored();
	log_info("node: %llu nodes managed, %llu pods",
	    (unsigned long long)m->stats.nodes,
	    (unsigned long long)m->stats.pods);
}

void
node_mgr_free(node_mgr *m)
{
	struct adoption *a;

	if (m == NULL)
		return;
	while ((a = m->adopt) != NULL) {
		m->adopt = a->next;
		store_obj_unref(a->o);
		free(a);
	}
	hmap_free(m->adopting);
	/* Writes still on their way (removals, Leases, statuses) point at
	   m, as they always have: free it once its client is gone. */
	hmap_free(m->finishing);
	if (m->started)
		usage_stop(m);
	free(m->ep_addr);
	free(m->ray_dir);
	selector_free(m->virtual_sel);
	uv_check_stop(&m->flush);
	uv_idle_stop(&m->flush_more);
	wheel_free(m->wheel);
	grpcprobe_free(m->grpc);
	recorder_free(m->events);
}

void
node_mgr_stats(const node_mgr *m, struct node_stats *out)
{
	*out = m->stats;
	out->waiting = hmap_count(m->adopting);
}
