/*
 * A local container's mounts, as root (mountplan.h): what volray-shim -M
 * shows the container at each volumeMount's mountPath (shimns.c does the
 * mounting), and the pod's /etc/hosts and /etc/resolv.conf.
 *
 * A volume is what ctrenv_mount materialised under the pod's root at the
 * mountPath (ConfigMap, Secret, downwardAPI files, emptyDir), the
 * host's path for a hostPath volume, or for a persistentVolumeClaim the
 * claim's directory DATA/volumes/NS/CLAIM on this node (volray has no
 * volume provisioner: the claim's pods on one node share it, and it
 * outlives them and the claim); subPath picks a file or directory
 * inside it; readOnly makes the mount read-only. The pod's /etc/hosts
 * names localhost, the pod (hostname, and hostname.subdomain when set)
 * and every Service of its namespace known at the start with a cluster
 * IP (svc, svc.NS, svc.NS.svc, svc.NS.svc.cluster.local), as cluster DNS
 * answers; while pods share the host's network nothing routes cluster
 * IPs, so a client must go through the API server's service proxy (the
 * pods' ray command does, ray(1)). resolv.conf keeps this machine's nameservers, with the
 * cluster's search path first. A pod in a network namespace of its own
 * (podnet.c) has cluster DNS instead: its resolv.conf names it, as the
 * kubelet writes one, and its hosts file no Services. A container of a
 * Ray image with real Ray (rayimage.c) gets a /tmp of its pod's, as an
 * image has its own: Ray nodes take their temp dir's path from the head,
 * and two pods must not share one (/tmp/ray/session_*). /dev/shm is a
 * tmpfs of 64 MiB per container, as a container runtime gives it, unless
 * an emptyDir of medium Memory is mounted there; such an emptyDir is a
 * tmpfs of its sizeLimit (else the container's memory limit), one per
 * container rather than per pod.
 */
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json.h"
#include "lib/podspec.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "node/node_int.h"

#define SHM_DEFAULT	(64 << 20)	/* a container runtime's /dev/shm */

static int enabled = -1;

int
mountplan_enabled(void)
{
	if (enabled < 0)
		enabled = geteuid() == 0 && access("/proc/self/ns/mnt",
		    F_OK) == 0;
	return enabled;
}

static void
hosts_line(FILE *f, const char *ip, const char *svc, const char *ns)
{
	fprintf(f, "%s\t%s %s.%s %s.%s.svc %s.%s.svc.cluster.local\n",
	    ip, svc, svc, ns, svc, ns, svc, ns);
}

/* Append word (one without blanks) to a list of them in buf. */
static void
word_add(char *buf, size_t size, const char *word)
{
	size_t n = strlen(buf);

	if (word != NULL && *word != '\0' && strpbrk(word, " \t\n") == NULL)
		snprintf(buf + n, size - n, " %s", word);
}

/* The words after key, on a line that starts with key, added to buf. */
static void
words_of(const char *line, const char *key, char *buf, size_t size)
{
	char copy[512], *save = NULL, *w;
	size_t kl = strlen(key);

	if (strncmp(line, key, kl) != 0 || (line[kl] != ' ' &&
	    line[kl] != '\t'))
		return;
	snprintf(copy, sizeof copy, "%s", line + kl);
	for (w = strtok_r(copy, " \t\n", &save); w != NULL;
	    w = strtok_r(NULL, " \t\n", &save))
		word_add(buf, size, w);
}

/*
 * resolv.conf as the kubelet writes it for a pod on cluster DNS
 * (podnet.c), by spec.dnsPolicy: ClusterFirst (the default) the cluster's
 * search path, nameserver and ndots:5; Default this machine's
 * resolv.conf; None nothing but spec.dnsConfig, whose searches,
 * nameservers and options are added to the others'.
 */
static void
policy_resolv(FILE *f, const struct node_pod *p, const cJSON *pod)
{
	const char *policy = json_str(pod, "spec.dnsPolicy");
	const cJSON *cfg = json_at(pod, "spec.dnsConfig"), *it;
	char search[2048] = "", servers[1024] = "", opts[1024] = "";
	char line[512], w[320], *save = NULL, *s;
	int host = policy != NULL && strcmp(policy, "Default") == 0;
	int none = policy != NULL && strcmp(policy, "None") == 0;
	FILE *in;

	if (!host && !none) {
		snprintf(search, sizeof search, " %s.svc.cluster.local "
		    "svc.cluster.local cluster.local", p->ns);
		word_add(servers, sizeof servers, podnet_nameserver(p));
		word_add(opts, sizeof opts, "ndots:5");
	}
	if (host && (in = fopen("/etc/resolv.conf", "re")) != NULL) {
		while (fgets(line, sizeof line, in) != NULL) {
			words_of(line, "search", search, sizeof search);
			words_of(line, "nameserver", servers, sizeof servers);
			words_of(line, "options", opts, sizeof opts);
		}
		fclose(in);
	}
	cJSON_ArrayForEach(it, json_at(cfg, "searches"))
		word_add(search, sizeof search, cJSON_GetStringValue(it));
	cJSON_ArrayForEach(it, json_at(cfg, "nameservers"))
		word_add(servers, sizeof servers, cJSON_GetStringValue(it));
	cJSON_ArrayForEach(it, json_at(cfg, "options")) {
		if (json_str(it, "name") == NULL || strchr(json_str(it,
		    "name"), ':') != NULL)
			continue;
		snprintf(w, sizeof w, json_str(it, "value") ? "%s:%s" : "%s",
		    json_str(it, "name"), json_str(it, "value"));
		word_add(opts, sizeof opts, w);
	}
	if (search[0] != '\0')
		fprintf(f, "search%s\n", search);
	for (s = strtok_r(servers, " ", &save); s != NULL;
	    s = strtok_r(NULL, " ", &save))
		fprintf(f, "nameserver %s\n", s);
	if (opts[0] != '\0')
		fprintf(f, "options%s\n", opts);
}

/* DIR/hosts and DIR/resolv.conf, the pod's. */
static int
write_etc(struct node *n, struct node_pod *p, const cJSON *pod,
    const char *dir, char **cause)
{
	char path[PATH_MAX], line[512];
	const char *host = json_str(pod, "spec.hostname");
	const char *sub = json_str(pod, "spec.subdomain");
	store_obj *const *svcs = NULL;
	size_t ns, i;
	FILE *f, *in;

	util_strf(path, sizeof path, "%s/hosts", dir);
	if ((f = fopen(path, "we")) == NULL)
		goto fail;
	if (host == NULL)
		host = p->name;
	fprintf(f, "# Kubernetes-managed hosts file (volray).\n"
	    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost "
	    "ip6-loopback\n");
	if (sub != NULL)
		fprintf(f, "%s\t%s.%s.%s.svc.cluster.local %s\n", p->ip[0] ?
		    p->ip : "127.0.0.1", host, sub, p->ns, host);
	else
		fprintf(f, "%s\t%s\n", p->ip[0] ? p->ip : "127.0.0.1", host);
	/* With cluster DNS (podnet.c) Services are its business. */
	ns = podnet_nameserver(p) ? 0 : client_list(n->m->c, "services",
	    p->ns, &svcs);
	for (i = 0; i < ns; i++) {
		cJSON *t = store_obj_tree(svcs[i]);
		const char *ip = json_str(t, "spec.clusterIP");

		if (ip != NULL && *ip != '\0' && strcmp(ip, "None") != 0)
			hosts_line(f, ip, svcs[i]->name, p->ns);
		cJSON_Delete(t);
	}
	if (fclose(f) != 0)
		goto fail;
	util_strf(path, sizeof path, "%s/resolv.conf", dir);
	if ((f = fopen(path, "we")) == NULL)
		goto fail;
	if (podnet_nameserver(p) != NULL)
		policy_resolv(f, p, pod);
	else {
		fprintf(f, "search %s.svc.cluster.local svc.cluster.local "
		    "cluster.local\n", p->ns);
		if ((in = fopen("/etc/resolv.conf", "re")) != NULL) {
			while (fgets(line, sizeof line, in) != NULL)
				if (strncmp(line, "nameserver", 10) == 0 ||
				    strncmp(line, "options", 7) == 0)
					fputs(line, f);
			fclose(in);
		}
		fprintf(f, "options ndots:5\n");
	}
	if (fclose(f) != 0)
		goto fail;
	return 0;
fail:
	*cause = util_printf("CreateContainerError: %s: %s", path,
	    strerror(errno));
	return -1;
}

/* The volume named name of the pod, or NULL. */
static const cJSON *
volume(const cJSON *pod, const char *name)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, json_at(pod, "spec.volumes"))
		if (json_str(v, "name") && strcmp(json_str(v, "name"),
		    name) == 0)
			return v;
	return NULL;
}

/*
 * The size of an emptyDir of medium Memory, as kubelet sizes it: its
 * sizeLimit, else the container's memory limit, else half this machine's
 * memory (a tmpfs's default).
 */
static long long
memory_dir_size(const cJSON *vol, const cJSON *spec)
{
	double v;

	if (quantity_json(json_at(vol, "emptyDir.sizeLimit"), &v) == 0 &&
	    v > 0)
		return (long long)v;
	if (quantity_json(json_at(spec, "resources.limits.memory"), &v) == 0 &&
	    v > 0)
		return (long long)v;
	return (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 2;
}

int
mountplan_shm_default(const cJSON *pod, const cJSON *spec)
{
	const cJSON *m, *v;

	cJSON_ArrayForEach(m, json_at(spec, "volumeMounts"))
		if (json_str(m, "mountPath") != NULL &&
		    strcmp(json_str(m, "mountPath"), "/dev/shm") == 0 &&
		    (v = volume(pod, json_str(m, "name"))) != NULL &&
		    json_str(v, "emptyDir.medium") != NULL &&
		    strcmp(json_str(v, "emptyDir.medium"), "Memory") == 0)
			return 0;
	return 1;
}

int
mountplan_write(struct node *n, struct node_pod *p, const cJSON *pod,
    const cJSON *spec, const char *root, const char *plan, char **cause)
{
	char dir[PATH_MAX], src[PATH_MAX], msg[512];
	const cJSON *m, *v;
	const char *mp, *sub, *hp, *claim;
	FILE *f;

	util_strf(dir, sizeof dir, "%s", plan);
	*strrchr(dir, '/') = '\0';
	if (write_etc(n, p, pod, dir, cause) != 0)
		return -1;
	if ((f = fopen(plan, "we")) == NULL) {
		*cause = util_printf("CreateContainerError: %s: %s", plan,
		    strerror(errno));
		return -1;
	}
	/* A Ray image's container: a /tmp of the pod's, as the image's. */
	if (rayimage_check(n->m, json_str(spec, "name"), json_str(spec,
	    "image"), src, sizeof src, msg, sizeof msg) == 1) {
		rayimage_tmp(p->uid, src, sizeof src);
		fprintf(f, "%s\t/tmp\trw\n", src);
		/* A pod's own directory under /tmp (a test's data) stays
		   where it was: its root (working directory, HOME) and
		   the shim's files beside it. */
		if (strncmp(dir, "/tmp/", 5) == 0) {
			/* Its mount point made beforehand, in the pod's
			   /tmp: the shim covers no /tmp with an overlay. */
			util_strf(src + strlen(src), sizeof src - strlen(src),
			    "%s", dir + 4);
			ctrenv_mkdirs(src);
			fprintf(f, "%s\t%s\trw\n", dir, dir);
		}
	}
	cJSON_ArrayForEach(m, json_at(spec, "volumeMounts")) {
		mp = json_str(m, "mountPath");
		if (mp == NULL || *mp != '/' || strstr(mp, "..") != NULL ||
		    strpbrk(mp, "\t\n") != NULL || json_str(m, "name") == NULL ||
		    (v = volume(pod, json_str(m, "name"))) == NULL)
			continue;
		/* Memory: a tmpfs of the container's (not shared with the
		   pod's other containers, as a kubelet's would be). */
		if (json_str(v, "emptyDir.medium") != NULL &&
		    strcmp(json_str(v, "emptyDir.medium"), "Memory") == 0) {
			fprintf(f, "tmpfs\t%s\tsize=%lld\n", mp,
			    memory_dir_size(v, spec));
			continue;
		}
		if ((hp = json_str(v, "hostPath.path")) != NULL)
			util_strf(src, sizeof src, "%s", hp);
		else if ((claim = json_str(v,
		    "persistentVolumeClaim.claimName")) != NULL &&
		    *claim != '\0' && strchr(claim, '/') == NULL &&
		    strstr(claim, "..") == NULL) {
			/* The claim's directory on this node, shared by
			   its pods here and kept after them. */
			util_strf(src, sizeof src, "%s/volumes/%s/%s",
			    n->m->data_dir, p->ns, claim);
			ctrenv_mkdirs(src);
		} else
			util_strf(src, sizeof src, "%s%s", root, mp);
		sub = json_str(m, "subPath");
		if (sub != NULL && *sub != '\0' && strstr(sub, "..") == NULL &&
		    *sub != '/')
			util_strf(src + strlen(src), sizeof src - strlen(src),
			    "/%s", sub);
		if (hp != NULL && sub == NULL &&
		    strcmp(json_str(v, "hostPath.type") ?
		    json_str(v, "hostPath.type") : "", "DirectoryOrCreate") ==
		    0)
			ctrenv_mkdirs(src);
		fprintf(f, "%s\t%s\t%s\n", src, mp,
		    cJSON_IsTrue(json_at(m, "readOnly")) ? "ro" : "rw");
	}
	/* A /dev/shm of its own, 64 MiB as a container runtime gives it,
	   unless an emptyDir of medium Memory is mounted there. */
	if (mountplan_shm_default(pod, spec))
		fprintf(f, "tmpfs\t/dev/shm\tsize=%d\n", SHM_DEFAULT);
	fprintf(f, "%s/hosts\t/etc/hosts\trw\n", dir);
	fprintf(f, "%s/resolv.conf\t/etc/resolv.conf\trw\n", dir);
	if (fclose(f) != 0) {
		*cause = util_printf("CreateContainerError: %s: %s", plan,
		    strerror(errno));
		return -1;
	}
	return 0;
}
