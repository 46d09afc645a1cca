/*
 * The bootstrap RBAC policy and ClusterRole aggregation.
 *
 * The policy is the set of ClusterRoles and ClusterRoleBindings every
 * cluster starts with, written below as YAML: Kubernetes' own (cluster-admin
 * for system:masters; admin, edit and view, aggregated from the
 * system:aggregate-to-* roles, which cover the kinds volray serves, Ray's
 * and Volcano's among them; system:basic-user, system:discovery and
 * system:public-info-viewer for everyone), and a least-privilege role for
 * each component inside volrayd: every Lua controller in lua/controllers/
 * (system:controller:NAME-controller, or kube's name for it as
 * controller_user_name() gives it, exactly the verbs its script uses),
 * the garbage collector, the ClusterRole aggregator and the scheduler.
 *
 * At every start the policy is reconciled as kube-apiserver does it: a
 * missing object is created; an existing one whose annotation
 * rbac.authorization.kubernetes.io/autoupdate is not "false" gets the rules,
 * aggregation selectors, subjects, labels and annotations it lacks, and
 * nothing it has is taken away (a binding whose roleRef differs is
 * recreated, since roleRef cannot change). A role or binding an older
 * volray made under another name (system:controller:endpoints-controller
 * before its user became kube's endpoint-controller) is left alone, as
 * kube-apiserver leaves roles it no longer ships; the new name is missing
 * at the first start after the upgrade, so it is created then, before any
 * controller runs.
 *
 * Aggregation keeps each ClusterRole that has an aggregationRule equal to
 * the union (in name order, without duplicates) of the rules of the other
 * ClusterRoles its selectors match, written through the registry as the
 * clusterrole-aggregation controller's user, like kube-controller-manager.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/rbac_int.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/selector.h"
#include "lib/util.h"
#include "lib/xmalloc.h"
#include "lib/yamljson.h"

#define AUTOUPDATE	"rbac.authorization.kubernetes.io/autoupdate"
#define BOOTSTRAPPING	"kubernetes.io/bootstrapping"

/* Read verbs, and the write verbs edit adds to them. */
#define READ	"[get, list, watch]"
#define WRITE	"[create, delete, deletecollection, patch, update]"
#define EVENTS	"- {apiGroups: ['', events.k8s.io], resources: [events], " \
		"verbs: [create, patch, update]}\n"

static const char policy[] =
"kind: ClusterRole\n"
"metadata: {name: cluster-admin}\n"
"rules:\n"
"- {apiGroups: ['*'], resources: ['*'], verbs: ['*']}\n"
"- {nonResourceURLs: ['*'], verbs: ['*']}\n"
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:discovery'}\n"
"rules:\n"
"- nonResourceURLs: [/livez, /readyz, /healthz, /version, /version/,\n"
"    /openapi, /openapi/*, /api, /api/*, /apis, /apis/*]\n"
"  verbs: [get]\n"
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:public-info-viewer'}\n"
"rules:\n"
"- nonResourceURLs: [/livez, /readyz, /healthz, /version, /version/]\n"
"  verbs: [get]\n"
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:basic-user'}\n"
"rules:\n"
"- apiGroups: [authorization.k8s.io]\n"
"  resources: [selfsubjectaccessreviews, selfsubjectrulesreviews]\n"
"  verbs: [create]\n"
"- apiGroups: [authentication.k8s.io]\n"
"  resources: [selfsubjectreviews]\n"
"  verbs: [create]\n"
/*
 * admin > edit > view: each is the union of the aggregate-to roles its
 * selector matches, and view and edit carry the label of the next one up.
 */
"---\n"
"kind: ClusterRole\n"
"metadata: {name: admin}\n"
"aggregationRule:\n"
"  clusterRoleSelectors:\n"
"  - matchLabels: {rbac.authorization.k8s.io/aggregate-to-admin: 'true'}\n"
"---\n"
"kind: ClusterRole\n"
"metadata:\n"
"  name: edit\n"
"  labels: {rbac.authorization.k8s.io/aggregate-to-admin: 'true'}\n"
"aggregationRule:\n"
"  clusterRoleSelectors:\n"
"  - matchLabels: {rbac.authorization.k8s.io/aggregate-to-edit: 'true'}\n"
"---\n"
"kind: ClusterRole\n"
"metadata:\n"
"  name: view\n"
"  labels: {rbac.authorization.k8s.io/aggregate-to-edit: 'true'}\n"
"aggregationRule:\n"
"  clusterRoleSelectors:\n"
"  - matchLabels: {rbac.authorization.k8s.io/aggregate-to-view: 'true'}\n"
"---\n"
"kind: ClusterRole\n"
"metadata:\n"
"  name: 'system:aggregate-to-admin'\n"
"  labels: {rbac.authorization.k8s.io/aggregate-to-admin: 'true'}\n"
"rules:\n"
"- apiGroups: [rbac.authorization.k8s.io]\n"
"  resources: [roles, rolebindings]\n"
"  verbs: " READ "\n"
"- apiGroups: [rbac.authorization.k8s.io]\n"
"  resources: [roles, rolebindings]\n"
"  verbs: " WRITE "\n"
"---\n"
"kind: ClusterRole\n"
"metadata:\n"
"  name: 'system:aggregate-to-edit'\n"
"  labels: {rbac.authorization.k8s.io/aggregate-to-edit: 'true'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [secrets], verbs: " READ "}\n"
"- apiGroups: ['']\n"
"  resources: [pods, services, configmaps, secrets, serviceaccounts,\n"
"    endpoints, replicationcontrollers, replicationcontrollers/scale,\n"
"    persistentvolumeclaims]\n"
"  verbs: " WRITE "\n"
"- {apiGroups: [''], resources: [pods/eviction], verbs: [create]}\n"
"- apiGroups: [apps]\n"
"  resources: [deployments, deployments/scale, deployments/rollback,\n"
"    replicasets, replicasets/scale, daemonsets, statefulsets,\n"
"    statefulsets/scale]\n"
"  verbs: " WRITE "\n"
"- {apiGroups: [batch], resources: [jobs, cronjobs], verbs: " WRITE "}\n"
"- {apiGroups: [policy], resources: [poddisruptionbudgets],\n"
"  verbs: " WRITE "}\n"
"- {apiGroups: [networking.k8s.io], resources: [networkpolicies, ingresses],\n"
"  verbs: " WRITE "}\n"
"- {apiGroups: [resource.k8s.io], resources: [resourceclaims,\n"
"    resourceclaimtemplates], verbs: " WRITE "}\n"
"- apiGroups: [ray.io]\n"
"  resources: [rayclusters, rayjobs, rayservices, raycronjobs]\n"
"  verbs: " WRITE "\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: " WRITE "}\n"
"- {apiGroups: [scheduling.k8s.io], resources: [podgroups, workloads],\n"
"  verbs: " WRITE "}\n"
"- {apiGroups: [batch.volcano.sh], resources: [jobs], verbs: " WRITE "}\n"
"---\n"
"kind: ClusterRole\n"
"metadata:\n"
"  name: 'system:aggregate-to-view'\n"
"  labels: {rbac.authorization.k8s.io/aggregate-to-view: 'true'}\n"
"rules:\n"
"- apiGroups: ['']\n"
"  resources: [pods, pods/status, pods/log, services, services/status,\n"
"    configmaps, serviceaccounts, events, namespaces, namespaces/status,\n"
"    endpoints, replicationcontrollers, replicationcontrollers/status,\n"
"    replicationcontrollers/scale, limitranges, resourcequotas,\n"
"    resourcequotas/status, persistentvolumeclaims,\n"
"    persistentvolumeclaims/status]\n"
"  verbs: " READ "\n"
"- apiGroups: [apps]\n"
"  resources: [deployments, deployments/status, deployments/scale,\n"
"    replicasets, replicasets/status, replicasets/scale, daemonsets,\n"
"    daemonsets/status, statefulsets, statefulsets/status,\n"
"    statefulsets/scale, controllerrevisions]\n"
"  verbs: " READ "\n"
"- apiGroups: [batch]\n"
"  resources: [jobs, jobs/status, cronjobs, cronjobs/status]\n"
"  verbs: " READ "\n"
"- apiGroups: [policy]\n"
"  resources: [poddisruptionbudgets, poddisruptionbudgets/status]\n"
"  verbs: " READ "\n"
"- apiGroups: [networking.k8s.io]\n"
"  resources: [networkpolicies, ingresses, ingresses/status]\n"
"  verbs: " READ "\n""- apiGroups: [resource.k8s.io]\n"
"  resources: [resourceclaims, resourceclaims/status,\n"
"    resourceclaimtemplates]\n"
"  verbs: " READ "\n"
"- {apiGroups: [discovery.k8s.io], resources: [endpointslices],\n"
"  verbs: " READ "}\n"
"- apiGroups: [ray.io]\n"
"  resources: [rayclusters, rayclusters/status, rayjobs, rayjobs/status,\n"
"    rayservices, rayservices/status, raycronjobs, raycronjobs/status]\n"
"  verbs: " READ "\n"
"- apiGroups: [scheduling.volcano.sh]\n"
"  resources: [podgroups, podgroups/status, queues, queues/status]\n"
"  verbs: " READ "\n"
"- apiGroups: [scheduling.k8s.io]\n"
"  resources: [podgroups, podgroups/status, workloads]\n"
"  verbs: " READ "\n"
"- apiGroups: [batch.volcano.sh]\n"
"  resources: [jobs, jobs/status]\n"
"  verbs: " READ "\n"
/*
 * volrayd's own components. Each Lua controller runs as the user of its
 * role's name; the rules are what lua/controllers/NAME.lua and the
 * lua/lib/ modules it requires read and write (volray.get, list, create,
 * patch, update_status, delete, event), plus get/list/watch on the
 * controller's primary and owned kinds, which the runtime follows for it.
 */
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:deployment-controller'}\n"
"rules:\n"
"- {apiGroups: [apps], resources: [deployments],\n"
"  verbs: [get, list, watch, patch]}\n"
"- {apiGroups: [apps], resources: [deployments/status], verbs: [update]}\n"
"- {apiGroups: [apps], resources: [replicasets],\n"
"  verbs: [get, list, watch, create, patch, delete]}\n"
"- {apiGroups: [''], resources: [pods], verbs: [list]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:replicaset-controller'}\n"
"rules:\n"
"- {apiGroups: [apps], resources: [replicasets], verbs: " READ "}\n"
"- {apiGroups: [apps], resources: [replicasets/status], verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:daemon-set-controller'}\n"
"rules:\n"
"- {apiGroups: [apps], resources: [daemonsets], verbs: " READ "}\n"
"- {apiGroups: [apps], resources: [daemonsets/status], verbs: [update]}\n"
"- {apiGroups: [apps], resources: [controllerrevisions],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, delete]}\n"
"- {apiGroups: [''], resources: [nodes], verbs: " READ "}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:statefulset-controller'}\n"
"rules:\n"
"- {apiGroups: [apps], resources: [statefulsets], verbs: " READ "}\n"
"- {apiGroups: [apps], resources: [statefulsets/status], verbs: [update]}\n"
"- {apiGroups: [apps], resources: [controllerrevisions],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, delete]}\n"
"- {apiGroups: [''], resources: [persistentvolumeclaims],\n"
"  verbs: [get, list, watch, create]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:replication-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [replicationcontrollers], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [replicationcontrollers/status],\n"
"  verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:cronjob-controller'}\n"
"rules:\n"
"- {apiGroups: [batch], resources: [cronjobs], verbs: " READ "}\n"
"- {apiGroups: [batch], resources: [cronjobs/status], verbs: [update]}\n"
"- {apiGroups: [batch], resources: [jobs],\n"
"  verbs: [get, list, watch, create, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:raycronjob-controller'}\n"
"rules:\n"
"- {apiGroups: [ray.io], resources: [raycronjobs], verbs: " READ "}\n"
"- {apiGroups: [ray.io], resources: [raycronjobs/status], verbs: [update]}\n"
"- {apiGroups: [ray.io], resources: [rayjobs], verbs: [create]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:disruption-controller'}\n"
"rules:\n"
"- {apiGroups: [policy], resources: [poddisruptionbudgets],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [policy], resources: [poddisruptionbudgets/status],\n"
"  verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods, replicationcontrollers],\n"
"  verbs: " READ "}\n"
"- apiGroups: [apps]\n"
"  resources: [replicasets, deployments, statefulsets]\n"
"  verbs: " READ "\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:resource-claim-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [pods], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [pods/finalizers], verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods/status], verbs: [update, patch]}\n"
"- apiGroups: [resource.k8s.io]\n"
"  resources: [resourceclaims]\n"
"  verbs: [get, list, watch, create, delete, update, patch]\n"
"- apiGroups: [resource.k8s.io]\n"
"  resources: [resourceclaims/status]\n"
"  verbs: [update, patch]\n"
"- {apiGroups: [resource.k8s.io], resources: [resourceclaimtemplates],\n"
"  verbs: " READ "}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:resourcequota-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [resourcequotas], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [resourcequotas/status], verbs: [update]}\n"
"- {apiGroups: ['*'], resources: ['*'], verbs: [list, watch]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:job-controller'}\n"
"rules:\n"
"- {apiGroups: [batch], resources: [jobs],\n"
"  verbs: [get, list, watch, delete]}\n"
"- {apiGroups: [batch], resources: [jobs/status], verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:podgroup-controller'}\n"
"rules:\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups/status],\n"
"  verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods], verbs: [list, watch, patch]}\n"
"- {apiGroups: [apps], resources: [replicasets], verbs: [get]}\n"
"- {apiGroups: [batch], resources: [jobs], verbs: [get]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:hypernode-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [nodes], verbs: " READ "}\n"
"- {apiGroups: [topology.volcano.sh], resources: [hypernodes],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
"- {apiGroups: [topology.volcano.sh], resources: [hypernodes/status],\n"
"  verbs: [update]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:queue-controller'}\n"
"rules:\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [queues],\n"
"  verbs: [get, list, watch, patch]}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [queues/status],\n"
"  verbs: [update]}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: [list, watch]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:vcjob-controller'}\n"
"rules:\n"
"- {apiGroups: [batch.volcano.sh], resources: [jobs],\n"
"  verbs: [get, list, watch, update]}\n"
"- {apiGroups: [batch.volcano.sh], resources: [jobs/status],\n"
"  verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [list, watch, create, patch, delete]}\n"
"- {apiGroups: [''], resources: [persistentvolumeclaims],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
"- {apiGroups: [bus.volcano.sh], resources: [commands],\n"
"  verbs: [get, list, watch, delete]}\n"
"- {apiGroups: [''], resources: [configmaps, services],\n"
"  verbs: [get, create, update]}\n"
"- {apiGroups: [''], resources: [secrets], verbs: [get, create]}\n"
"- {apiGroups: [networking.k8s.io], resources: [networkpolicies],\n"
"  verbs: [get, create]}\n"
"- {apiGroups: [scheduling.k8s.io], resources: [priorityclasses],\n"
"  verbs: [get]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:raycluster-controller'}\n"
"rules:\n"
"- {apiGroups: [ray.io], resources: [rayclusters],\n"
"  verbs: [get, list, watch, patch]}\n"
"- {apiGroups: [ray.io], resources: [rayclusters/status], verbs: [update]}\n"
"- {apiGroups: [''], resources: [pods],\n"
"  verbs: [get, list, watch, create, delete, patch]}\n"
"- {apiGroups: [''], resources: [pods/resize], verbs: [patch]}\n"
"- {apiGroups: [''], resources: [serviceaccounts, secrets],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [rbac.authorization.k8s.io], resources: [roles, rolebindings],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [''], resources: [services],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: [get, list, watch, create, patch]}\n"
"- {apiGroups: [scheduling.k8s.io], resources: [workloads, podgroups],\n"
"  verbs: [get, list, watch, create, delete]}\n"
"- {apiGroups: [batch], resources: [jobs],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [''], resources: [persistentvolumeclaims],\n"
"  verbs: [get, list, watch, create]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:rayautoscaler-controller'}\n"
"rules:\n"
"- {apiGroups: [ray.io], resources: [rayclusters],\n"
"  verbs: [get, list, watch, update, patch]}\n"
"- {apiGroups: [''], resources: [pods], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [services/proxy], verbs: [get]}\n"
"- {apiGroups: [''], resources: [secrets], verbs: " READ "}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:rayjob-controller'}\n"
"rules:\n"
"- {apiGroups: [ray.io], resources: [rayjobs],\n"
"  verbs: [get, list, watch, patch, delete]}\n"
"- {apiGroups: [ray.io], resources: [rayjobs/status], verbs: [update]}\n"
"- {apiGroups: [ray.io], resources: [rayclusters],\n"
"  verbs: [get, list, watch, create, patch, delete]}\n"
"- {apiGroups: [batch], resources: [jobs],\n"
"  verbs: [get, list, watch, create, delete]}\n"
"- {apiGroups: [''], resources: [services/proxy],\n"
"  verbs: [get, create]}\n"
"- {apiGroups: [''], resources: [secrets, pods], verbs: " READ "}\n"
"- {apiGroups: [scheduling.volcano.sh], resources: [podgroups],\n"
"  verbs: [get, list, watch, create, patch]}\n"
"- {apiGroups: [scheduling.k8s.io], resources: [workloads, podgroups],\n"
"  verbs: [get, list, watch, create, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:rayservice-controller'}\n"
"rules:\n"
"- {apiGroups: [ray.io], resources: [rayservices], verbs: " READ "}\n"
"- {apiGroups: [ray.io], resources: [rayservices/status], verbs: [update]}\n"
"- {apiGroups: [ray.io], resources: [rayclusters],\n"
"  verbs: [get, list, watch, create, delete]}\n"
"- {apiGroups: [''], resources: [services],\n"
"  verbs: [get, list, watch, create, patch]}\n"
"- {apiGroups: [''], resources: [services/proxy],\n"
"  verbs: [get, update]}\n"
"- {apiGroups: [''], resources: [pods], verbs: [list]}\n"
"- {apiGroups: [''], resources: [secrets], verbs: " READ "}\n"
"- {apiGroups: [gateway.networking.k8s.io], resources: [gateways, httproutes],\n"
"  verbs: [get, list, watch, create, update, patch]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:gateway-controller'}\n"
"rules:\n"
"- {apiGroups: [gateway.networking.k8s.io], resources: [gateways, httproutes],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [gateway.networking.k8s.io],\n"
"  resources: [gateways/status, httproutes/status], verbs: [update]}\n"
"- {apiGroups: [''], resources: [services],\n"
"  verbs: [get, list, watch, create]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:endpoint-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [services, pods], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [endpoints],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
"- {apiGroups: [discovery.k8s.io], resources: [endpointslices],\n"
"  verbs: [get, list, watch, create, update, delete]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:service-account-controller'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [namespaces], verbs: " READ "}\n"
"- {apiGroups: [''], resources: [serviceaccounts, secrets],\n"
"  verbs: [get, list, watch, create]}\n"
"- {apiGroups: [''], resources: [configmaps],\n"
"  verbs: [get, list, watch, create, update]}\n"
EVENTS
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:generic-garbage-collector'}\n"
"rules:\n"
"- apiGroups: ['*']\n"
"  resources: ['*']\n"
"  verbs: [get, list, watch, patch, update, delete]\n"
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:controller:clusterrole-aggregation-controller'}\n"
"rules:\n"
"- apiGroups: [rbac.authorization.k8s.io]\n"
"  resources: [clusterroles]\n"
"  verbs: [escalate, get, list, watch, update, patch]\n"
"---\n"
"kind: ClusterRole\n"
"metadata: {name: 'system:kube-scheduler'}\n"
"rules:\n"
"- {apiGroups: [''], resources: [pods, nodes, resourcequotas],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [''], resources: [pods], verbs: [patch]}\n"
"- {apiGroups: [''], resources: [pods/binding], verbs: [create]}\n"
"- {apiGroups: [policy], resources: [poddisruptionbudgets],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [topology.volcano.sh], resources: [hypernodes],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [''], resources: [pods/status], verbs: [update]}\n"
"- apiGroups: [scheduling.volcano.sh]\n"
"  resources: [podgroups, queues]\n"
"  verbs: " READ "\n"
"- apiGroups: [scheduling.volcano.sh]\n"
"  resources: [podgroups/status, queues/status]\n"
"  verbs: [update]\n"
"- apiGroups: [scheduling.k8s.io]\n"
"  resources: [priorityclasses, podgroups, workloads]\n"
"  verbs: " READ "\n"
"- {apiGroups: [scheduling.k8s.io], resources: [podgroups/status],\n"
"  verbs: [update, patch]}\n"
"- {apiGroups: ['', events.k8s.io], resources: [events],\n"
"  verbs: [create, patch]}\n"
/* What kube-scheduler's and Volcano's informers list besides (volume
   binding and limits, DRA); storageclasses come from
   system:volume-scheduler upstream. */
"- {apiGroups: [''], resources: [namespaces, services,\n"
"    replicationcontrollers, persistentvolumeclaims, persistentvolumes],\n"
"  verbs: " READ "}\n"
"- {apiGroups: [apps], resources: [replicasets, statefulsets],\n"
"  verbs: " READ "}\n"
"- apiGroups: [storage.k8s.io]\n"
"  resources: [storageclasses, csinodes, csidrivers, csistoragecapacities,\n"
"    volumeattachments, volumeattributesclasses]\n"
"  verbs: " READ "\n"
"- {apiGroups: [resource.k8s.io], resources: [deviceclasses,\n"
"    resourceslices], verbs: " READ "}\n"
"- {apiGroups: [resource.k8s.io], resources: [resourceclaims,\n"
"    resourceclaims/status], verbs: [get, list, watch, update, patch]}\n"
/* Bindings. */
"---\n"
"kind: ClusterRoleBinding\n"
"metadata: {name: cluster-admin}\n"
"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,\n"
"  name: cluster-admin}\n"
"subjects:\n"
"- {apiGroup: rbac.authorization.k8s.io, kind: Group,\n"
"  name: 'system:masters'}\n"
"---\n"
"kind: ClusterRoleBinding\n"
"metadata: {name: 'system:discovery'}\n"
"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,\n"
"  name: 'system:discovery'}\n"
"subjects:\n"
"- {apiGroup: rbac.authorization.k8s.io, kind: Group,\n"
"  name: 'system:authenticated'}\n"
"---\n"
"kind: ClusterRoleBinding\n"
"metadata: {name: 'system:basic-user'}\n"
"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,\n"
"  name: 'system:basic-user'}\n"
"subjects:\n"
"- {apiGroup: rbac.authorization.k8s.io, kind: Group,\n"
"  name: 'system:authenticated'}\n"
"---\n"
"kind: ClusterRoleBinding\n"
"metadata: {name: 'system:public-info-viewer'}\n"
"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole,\n"
"  name: 'system:public-info-viewer'}\n"
"subjects:\n"
"- {apiGroup: rbac.authorization.k8s.io, kind: Group,\n"
"  name: 'system:authenticated'}\n"
"- {apiGroup: rbac.authorization.k8s.io, kind: Group,\n"
"  name: 'system:unauthenticated'}\n";

/* Components bound to the ClusterRole of their own name, as a User. */
static const char *const components[] = {
	"system:controller:deployment-controller",
	"system:controller:replicaset-controller",
	"system:controller:job-controller",
	"system:controller:daemon-set-controller",
	"system:controller:statefulset-controller",
	"system:controller:replication-controller",
	"system:controller:cronjob-controller",
	"system:controller:disruption-controller",
	"system:controller:resourcequota-controller",
	"system:controller:resource-claim-controller",
	"system:controller:podgroup-controller",
	"system:controller:queue-controller",
	"system:controller:hypernode-controller",
	"system:controller:vcjob-controller",
	"system:controller:raycluster-controller",
	"system:controller:rayautoscaler-controller",
	"system:controller:rayjob-controller",
	"system:controller:raycronjob-controller",
	"system:controller:rayservice-controller",
	"system:controller:endpoint-controller",
	"system:controller:gateway-controller",
	"system:controller:service-account-controller",
	"system:controller:generic-garbage-collector",
	"system:controller:clusterrole-aggregation-controller",
	"system:kube-scheduler",
	NULL
};

cJSON *
rbac_policy_objects(char **cause)
{
	cJSON *docs = yamljson_parse_all(policy, sizeof policy - 1, cause);
	cJSON *d, *b, *md;
	int i;

	if (docs == NULL)
		return NULL;
	for (i = 0; components[i] != NULL; i++) {
		b = cJSON_CreateObject();
		cJSON_AddStringToObject(b, "kind", "ClusterRoleBinding");
		json_set_str(json_obj(b, "metadata"), "name", components[i]);
		md = json_obj(b, "roleRef");
		json_set_str(md, "apiGroup", RBAC_GROUP);
		json_set_str(md, "kind", "ClusterRole");
		json_set_str(md, "name", components[i]);
		md = cJSON_CreateObject();
		json_set_str(md, "apiGroup", RBAC_GROUP);
		json_set_str(md, "kind", "User");
		json_set_str(md, "name", components[i]);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(b, "subjects"), md);
		cJSON_AddItemToArray(docs, b);
	}
	cJSON_ArrayForEach(d, docs) {
		json_set_str(d, "apiVersion", RBAC_GROUP "/v1");
		md = json_obj(d, "metadata");
		json_set_str(json_obj(md, "labels"), BOOTSTRAPPING,
		    "rbac-defaults");
		json_set_str(json_obj(md, "annotations"), AUTOUPDATE, "true");
	}
	return docs;
}

/* Add to map cur the keys of want it lacks; 1 if it changed. */
static int
merge_map(cJSON *cur_md, const cJSON *want_md, const char *key)
{
	const cJSON *it;
	cJSON *m = NULL;
	int changed = 0;

	cJSON_ArrayForEach(it, json_at(want_md, key)) {
		if (m == NULL)
			m = json_obj(cur_md, key);
		if (cJSON_GetObjectItemCaseSensitive(m, it->string) == NULL) {
			cJSON_AddItemToObject(m, it->string,
			    cJSON_Duplicate(it, 1));
			changed = 1;
		}
	}
	return changed;
}

/* Append to array key of cur each member of want's that is not in it. */
static int
merge_list(cJSON *cur, const cJSON *want, const char *key)
{
	const cJSON *it, *have;
	cJSON *a = cJSON_GetObjectItemCaseSensitive(cur, key);
	int changed = 0, found;

	cJSON_ArrayForEach(it, json_at(want, key)) {
		found = 0;
		if (cJSON_IsArray(a))
			cJSON_ArrayForEach(have, a)
				if (json_equal(have, it))
					found = 1;
		if (found)
			continue;
		if (!cJSON_IsArray(a)) {
			a = cJSON_CreateArray();
			json_set(cur, key, a);
		}
		cJSON_AddItemToArray(a, cJSON_Duplicate(it, 1));
		changed = 1;
	}
	return changed;
}

/* Append the wanted rules the current ones do not already cover. */
static int
merge_rules(cJSON *cur, const cJSON *want)
{
	struct rbac_rule *have, *one;
	const struct rbac_rule **owner;
	const cJSON *it;
	cJSON *a, *single;
	int nhave, none, i, changed = 0;

	have = rbac_rule_compile(json_at(cur, "rules"), &nhave);
	owner = xcalloc(nhave + 1, sizeof *owner);
	for (i = 0; i < nhave; i++)
		owner[i] = &have[i];
	cJSON_ArrayForEach(it, json_at(want, "rules")) {
		single = cJSON_CreateArray();
		cJSON_AddItemToArray(single, cJSON_Duplicate(it, 1));
		one = rbac_rule_compile(single, &none);
		if (!rbac_rule_covers(owner, nhave, one, none, NULL)) {
			a = cJSON_GetObjectItemCaseSensitive(cur, "rules");
			if (!cJSON_IsArray(a)) {
				a = cJSON_CreateArray();
				json_set(cur, "rules", a);
			}
			cJSON_AddItemToArray(a, cJSON_Duplicate(it, 1));
			changed = 1;
		}
		rbac_rule_free(one, none);
		cJSON_Delete(single);
	}
	rbac_rule_free(have, nhave);
	free(owner);
	return changed;
}

static int
write_failed(const char *what, const char *name, struct reg_result *res,
    char **cause)
{
	char *s;

	if (res->code < 300) {
		cJSON_Delete(res->body);
		return 0;
	}
	s = json_print(res->body);
	if (*cause == NULL)
		*cause = util_printf("bootstrap policy: %s %s: %s", what, name,
		    s);
	log_error("bootstrap policy: %s %s: %s", what, name, s);
	free(s);
	cJSON_Delete(res->body);
	return -1;
}

/* Bring one existing object up to the policy; 1 if cur changed. */
static int
reconcile_one(cJSON *cur, const cJSON *want, int role)
{
	cJSON *md = json_obj(cur, "metadata");
	int changed = 0;

	changed |= merge_map(md, json_at(want, "metadata"), "labels");
	changed |= merge_map(md, json_at(want, "metadata"), "annotations");
	if (!role)
		return changed | merge_list(cur, want, "subjects");
	if (json_at(want, "aggregationRule") != NULL)
		/* The aggregator owns the rules of an aggregated role. */
		return changed | merge_list(json_obj(cur, "aggregationRule"),
		    json_at(want, "aggregationRule"), "clusterRoleSelectors");
	return changed | merge_rules(cur, want);
}

int
rbac_policy_reconcile(registry *rg, store *st, char **cause)
{
	const resource *roles = resource_find(RBAC_GROUP, "v1", "clusterroles");
	const resource *binds = resource_find(RBAC_GROUP, "v1",
	    "clusterrolebindings");
	cJSON *docs, *d, *cur;
	struct reg_result res;
	int rc = 0;

	(void)st;
	*cause = NULL;
	if ((docs = rbac_policy_objects(cause)) == NULL)
		return -1;
	cJSON_ArrayForEach(d, docs) {
		const char *name = json_str(d, "metadata.name");
		int role = strcmp(json_str(d, "kind"), "ClusterRole") == 0;
		const resource *r = role ? roles : binds;
		const char *au;

		cur = registry_get(rg, r, "", name);
		if (cur == NULL) {
			registry_create(rg, r, "", cJSON_Duplicate(d, 1), NULL,
			    &res);
			rc |= write_failed("creating", name, &res, cause);
			continue;
		}
		au = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		    json_at(cur, "metadata.annotations"), AUTOUPDATE));
		if (au != NULL && strcmp(au, "false") == 0) {
			cJSON_Delete(cur);
			continue;
		}
		if (!role && !json_equal(json_at(cur, "roleRef"),
		    json_at(d, "roleRef"))) {
			/* roleRef is immutable: recreate the binding. */
			registry_remove(rg, r, "", name, &res);
			cJSON_Delete(res.body);
			cJSON_Delete(cur);
			registry_create(rg, r, "", cJSON_Duplicate(d, 1), NULL,
			    &res);
			rc |= write_failed("recreating", name, &res, cause);
			continue;
		}
		if (!reconcile_one(cur, d, role)) {
			cJSON_Delete(cur);
			continue;
		}
		registry_update(rg, r, "", name, cur, NULL, &res);
		rc |= write_failed("updating", name, &res, cause);
	}
	cJSON_Delete(docs);
	return rc ? -1 : 0;
}

/* Does any of the selectors of an aggregationRule match these labels? */
static int
selected(const cJSON *rule, const cJSON *labels)
{
	const cJSON *s;
	char *cause = NULL;
	int m = 0;

	cJSON_ArrayForEach(s, json_at(rule, "clusterRoleSelectors")) {
		selector *sel = selector_from_json(s, &cause);

		free(cause);
		cause = NULL;
		/* An empty selector would match everything; none does. */
		if (sel != NULL && !selector_empty(sel) &&
		    selector_match_labels(sel, labels))
			m = 1;
		selector_free(sel);
		if (m)
			break;
	}
	return m;
}

/* The union of the rules of the roles rule selects, name order. */
static cJSON *
union_rules(store *st, const char *self, const cJSON *rule)
{
	store_obj *const *objs;
	size_t n = store_list(st, "clusterroles." RBAC_GROUP, NULL, &objs), i;
	cJSON *out = cJSON_CreateArray(), *t;
	const cJSON *r, *have;

	for (i = 0; i < n; i++) {
		if (strcmp(objs[i]->name, self) == 0 ||
		    !selected(rule, objs[i]->labels))
			continue;
		t = store_obj_tree(objs[i]);
		cJSON_ArrayForEach(r, json_at(t, "rules")) {
			int dup = 0;

			cJSON_ArrayForEach(have, out)
				if (json_equal(have, r))
					dup = 1;
			if (!dup)
				cJSON_AddItemToArray(out, cJSON_Duplicate(r, 1));
		}
		cJSON_Delete(t);
	}
	return out;
}

static int
same_rules(const cJSON *a, const cJSON *b)
{
	if (cJSON_GetArraySize(a) == 0 && cJSON_GetArraySize(b) == 0)
		return 1;
	return json_equal(a, b);
}

int
rbac_policy_aggregate(registry *rg, store *st, const user_info *user,
    int wait)
{
	const resource *r = resource_find(RBAC_GROUP, "v1", "clusterroles");
	store_obj *const *objs;
	struct reg_opts o;
	struct reg_result res;
	char **names;
	size_t n, i, k;
	int round, changed, inflight = 0, total = 0;

	memset(&o, 0, sizeof o);
	o.user = user;
	o.field_manager = "clusterrole-aggregation-controller";
	for (round = 0; round < 8; round++) {
		changed = 0;
		n = store_list(st, r->store_key, NULL, &objs);
		names = xcalloc(n + 1, sizeof *names);
		for (i = 0, k = 0; i < n; i++)
			names[k++] = xstrdup(objs[i]->name);
		for (i = 0; i < k; i++) {
			cJSON *t = registry_get(rg, r, "", names[i]), *rules;
			const cJSON *agg = json_at(t, "aggregationRule");

			if (t == NULL || agg == NULL || cJSON_IsNull(agg)) {
				cJSON_Delete(t);
				continue;
			}
			rules = union_rules(st, names[i], agg);
			if (same_rules(rules, json_at(t, "rules"))) {
				cJSON_Delete(rules);
				cJSON_Delete(t);
				continue;
			}
			json_set(t, "rules", rules);
			if (!wait)
				registry_stage(rg);
			registry_update(rg, r, "", names[i], t, &o, &res);
			if (res.code >= 300) {
				char *s = json_print(res.body);

				log_warn("aggregating ClusterRole %s: %s",
				    names[i], s);
				free(s);
			} else
				changed++;
			if (!wait)
				inflight += registry_commit(rg, &res, NULL,
				    NULL);
			cJSON_Delete(res.body);
		}
		for (i = 0; i < k; i++)
			free(names[i]);
		free(names);
		total += changed;
		/* On etcd the writes are on their way: their events bring
		   the next round (rbac.c), the cache has none of them yet. */
		if (changed == 0 || inflight > 0)
			break;
	}
	return total;
}
