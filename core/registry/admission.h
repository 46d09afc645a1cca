/*
 * Admission for built-in kinds: the defaults a cluster fills in (Pod
 * restartPolicy, dnsPolicy, imagePullPolicy, priority from
 * priorityClassName, schedulerName, serviceAccountName, the not-ready and
 * unreachable tolerations of DefaultTolerationSeconds; Deployment and Job
 * defaults; Service cluster IPs; Namespace finalizers) and the validation
 * kubectl users rely on (required fields, name formats, selector/template
 * agreement).
 */
#ifndef VOLRAY_ADMISSION_H
#define VOLRAY_ADMISSION_H

#include <cjson/cJSON.h>

#include "registry/resource.h"
#include "store/store.h"

/*
 * Fill defaults into obj; old is the stored object on update, else NULL.
 * A built-in kind's come from its descriptor's hooks (registry/kinds/,
 * registry/admission_kinds.h).
 */
void admission_mutate(store *, const resource *, cJSON *obj, const cJSON *old);
/* Append a cause per violation to causes. */
void admission_validate(store *, const resource *, const cJSON *obj,
    const cJSON *old, cJSON *causes);
/*
 * A pod's spec.schedulingGroup: its podGroupName a DNS subdomain, and
 * unchanged by an update (1 when an update changed it: that cause says
 * all).
 */
int admission_gang_pod_validate(const cJSON *obj, const cJSON *old,
    cJSON *causes);
/*
 * Volcano's kinds (admission_volcano.c): Queue parents and quantities,
 * PodGroups and Jobs in leaf queues; 1 if r is one of them. A delete
 * refused gets a message (free it), else NULL.
 */
int admission_volcano_validate(store *, const resource *, const cJSON *obj,
    const cJSON *old, cJSON *causes);
char *admission_volcano_delete(store *, const resource *, const char *name);
/*
 * APIServices (admission_apiservice.c; their hooks in
 * registry/admission_kinds.h): the Available condition of a service-less
 * (Local) APIService, as of since, into status.
 */
void admission_apiservice_local_status(cJSON *status, const char *since);
/* The descriptor of the served group-version named "version.group"
   (a Local APIService's name), or NULL. */
const resource *admission_apiservice_local(const char *name);
/*
 * The tolerationSeconds of the not-ready and unreachable tolerations every
 * new pod gets (--default-not-ready-toleration-seconds and
 * --default-unreachable-toleration-seconds; 300 each by default).
 */
void admission_set_toleration_seconds(long not_ready, long unreachable);
/*
 * A new pod's service account and its token volume (admission_sa.c):
 * spec.serviceAccountName defaulted, the kube-api-access-XXXXX projected
 * volume mounted at /var/run/secrets/kubernetes.io/serviceaccount unless
 * the pod or its account (in namespace ns) turns automounting off. Token
 * volumes are on unless turned off (volrayd without a CA: --plain-http).
 */
void admission_service_account(store *, const char *ns, cJSON *spec);
void admission_set_token_volumes(int on);
/* Check a name: 0 if valid, else a message (static) to show. */
const char *admission_check_name(const resource *, const char *name);

/* Whether ip is the cluster IP of a Service. */
int admission_ip_used(store *, const char *ip);
/*
 * The Service range cluster IPs are allocated from (kube-apiserver's
 * --service-cluster-ip-range; 10.96.0.0/16 by default), an IPv4 network
 * of /12 to /28: 0, or -1 when cidr is none. Before the first request.
 */
int admission_set_service_range(const char *cidr);
/* Its n-th address (1: the first, the kubernetes Service's) into out. */
void admission_service_ip(unsigned n, char *out, size_t size);

#endif
