/*
 * The descriptor tables of the protobuf decoder (api/protobuf.c): the
 * k8s.io/api messages kubectl's typed clients send, one MESSAGE each, every
 * field with its number, JSON name, value kind and flags, taken from the
 * generated.proto files kubectl 1.32 is built with. The kinds' descriptors name
 * their top-level messages (KIND_MESSAGE, declared in protobuf_msgs.h).
 *
 * A field is marked PB_KEEP when JSON shows its zero value: pointer fields
 * (replicas, backoffLimit, immutable) and the few without omitempty
 * (PriorityClass value, Service port). INLINE is a Go struct embedded with
 * `json:",inline"`, whose fields JSON puts in the parent; MAP a
 * map<string, V>; opaque a message whose fields are all ignored, which JSON
 * still shows as {}. Fields left out are skipped by the decoder. Status is
 * dropped by the server on create, so status messages are described only as
 * far as JSON shows them for a new object, but for a Pod's: client-go's
 * typed clients (0.34) send built-in kinds in protobuf, and a scheduler's
 * pods/status update (Volcano's, kube-scheduler's) carries the whole
 * status.
 */
#include "registry/kinds/protobuf_msgs.h"

#define nitems(a)	(sizeof (a) / sizeof (a)[0])

#define STR(n, j)	{ n, j, PB_STRING, 0, NULL }
#define STR_KEEP(n, j)	{ n, j, PB_STRING, PB_KEEP, NULL }
#define STRS(n, j)	{ n, j, PB_STRING, PB_REPEATED, NULL }
#define I32(n, j)	{ n, j, PB_INT32, 0, NULL }
#define I32_KEEP(n, j)	{ n, j, PB_INT32, PB_KEEP, NULL }
#define I64(n, j)	{ n, j, PB_INT64, 0, NULL }
#define I64_KEEP(n, j)	{ n, j, PB_INT64, PB_KEEP, NULL }
#define BOOL(n, j)	{ n, j, PB_BOOL, 0, NULL }
#define BOOL_KEEP(n, j)	{ n, j, PB_BOOL, PB_KEEP, NULL }
#define MSG(n, j, m)	{ n, j, PB_MESSAGE, 0, &m }
#define MSGS(n, j, m)	{ n, j, PB_MESSAGE, PB_REPEATED, &m }
#define INLINE(n, m)	{ n, #m, PB_MESSAGE, PB_INLINE, &m }
#define MAP(n, j, k)	{ n, j, k, PB_MAP, NULL }
#define TIME(n, j)	{ n, j, PB_TIME, 0, NULL }
#define MTIME(n, j)	{ n, j, PB_MICROTIME, 0, NULL }
#define QTY(n, j)	{ n, j, PB_QUANTITY, 0, NULL }
#define INTSTR(n, j)	{ n, j, PB_INTSTR, 0, NULL }
#define RAW(n, j)	{ n, j, PB_RAW, 0, NULL }

/* Define the message var, called name in errors, with the fields listed. */
#define MESSAGE(var, name, ...)						\
	static const struct pb_field var##_fields[] = { __VA_ARGS__ };	\
	static const struct pb_msg var = { name, var##_fields,		\
	    nitems(var##_fields) }

/* The same, for a message a descriptor names (protobuf_msgs.h). */
#define KIND_MESSAGE(var, name, ...)					\
	static const struct pb_field var##_fields[] = { __VA_ARGS__ };	\
	const struct pb_msg var = { name, var##_fields,			\
	    nitems(var##_fields) }

/* A message whose fields are all ignored; JSON still shows it as {}. */
static const struct pb_msg opaque = { "opaque", NULL, 0 };

/* k8s.io/apimachinery/pkg/apis/meta/v1 */

MESSAGE(owner_reference, "OwnerReference",
	STR_KEEP(5, "apiVersion"),
	STR_KEEP(1, "kind"),
	STR_KEEP(3, "name"),
	STR_KEEP(4, "uid"),
	BOOL_KEEP(6, "controller"),
	BOOL_KEEP(7, "blockOwnerDeletion"));

MESSAGE(object_meta, "ObjectMeta",
	STR(1, "name"),
	STR(2, "generateName"),
	STR(3, "namespace"),
	STR(4, "selfLink"),
	STR(5, "uid"),
	STR(6, "resourceVersion"),
	I64(7, "generation"),
	TIME(8, "creationTimestamp"),
	TIME(9, "deletionTimestamp"),
	I64_KEEP(10, "deletionGracePeriodSeconds"),
	MAP(11, "labels", PB_STRING),
	MAP(12, "annotations", PB_STRING),
	MSGS(13, "ownerReferences", owner_reference),
	STRS(14, "finalizers"));

MESSAGE(preconditions, "Preconditions",
	STR_KEEP(1, "uid"),
	STR_KEEP(2, "resourceVersion"));

/* The body of a DELETE, as client-go's typed clients send it. */
KIND_MESSAGE(pb_delete_options, "DeleteOptions",
	I64_KEEP(1, "gracePeriodSeconds"),
	MSG(2, "preconditions", preconditions),
	BOOL_KEEP(3, "orphanDependents"),
	STR_KEEP(4, "propagationPolicy"),
	STRS(5, "dryRun"),
	BOOL_KEEP(6, "ignoreStoreReadErrorWithClusterBreakingPotential"));

MESSAGE(label_selector_requirement, "LabelSelectorRequirement",
	STR_KEEP(1, "key"),
	STR_KEEP(2, "operator"),
	STRS(3, "values"));

MESSAGE(label_selector, "LabelSelector",
	MAP(1, "matchLabels", PB_STRING),
	MSGS(2, "matchExpressions", label_selector_requirement));

/* k8s.io/api/core/v1: references and the pod template. */

MESSAGE(local_object_reference, "LocalObjectReference",
	STR(1, "name"));

MESSAGE(object_reference, "ObjectReference",
	STR(1, "kind"),
	STR(2, "namespace"),
	STR(3, "name"),
	STR(4, "uid"),
	STR(5, "apiVersion"),
	STR(6, "resourceVersion"),
	STR(7, "fieldPath"));

MESSAGE(typed_local_object_reference, "TypedLocalObjectReference",
	STR_KEEP(1, "apiGroup"),
	STR_KEEP(2, "kind"),
	STR_KEEP(3, "name"));

MESSAGE(key_to_path, "KeyToPath",
	STR_KEEP(1, "key"),
	STR_KEEP(2, "path"),
	I32_KEEP(3, "mode"));

MESSAGE(host_path, "HostPathVolumeSource",
	STR_KEEP(1, "path"),
	STR_KEEP(2, "type"));

MESSAGE(empty_dir, "EmptyDirVolumeSource",
	STR(1, "medium"),
	QTY(2, "sizeLimit"));

MESSAGE(secret_volume, "SecretVolumeSource",
	STR(1, "secretName"),
	MSGS(2, "items", key_to_path),
	I32_KEEP(3, "defaultMode"),
	BOOL_KEEP(4, "optional"));

MESSAGE(pvc_volume, "PersistentVolumeClaimVolumeSource",
	STR_KEEP(1, "claimName"),
	BOOL(2, "readOnly"));

MESSAGE(config_map_volume, "ConfigMapVolumeSource",
	INLINE(1, local_object_reference),
	MSGS(2, "items", key_to_path),
	I32_KEEP(3, "defaultMode"),
	BOOL_KEEP(4, "optional"));

MESSAGE(container_port, "ContainerPort",
	STR(1, "name"),
	I32(2, "hostPort"),
	I32_KEEP(3, "containerPort"),
	STR(4, "protocol"),
	STR(5, "hostIP"));

MESSAGE(object_field_selector, "ObjectFieldSelector",
	STR(1, "apiVersion"),
	STR_KEEP(2, "fieldPath"));

MESSAGE(resource_field_selector, "ResourceFieldSelector",
	STR(1, "containerName"),
	STR_KEEP(2, "resource"),
	QTY(3, "divisor"));

MESSAGE(downward_api_file, "DownwardAPIVolumeFile",
	STR_KEEP(1, "path"),
	MSG(2, "fieldRef", object_field_selector),
	MSG(3, "resourceFieldRef", resource_field_selector),
	I32(4, "mode"));

MESSAGE(downward_api_volume, "DownwardAPIVolumeSource",
	MSGS(1, "items", downward_api_file),
	I32_KEEP(2, "defaultMode"));

MESSAGE(downward_api_projection, "DownwardAPIProjection",
	MSGS(1, "items", downward_api_file));

/* SecretProjection and ConfigMapProjection share their layout. */
MESSAGE(object_projection, "ObjectProjection",
	INLINE(1, local_object_reference),
	MSGS(2, "items", key_to_path),
	BOOL(4, "optional"));

MESSAGE(sa_token_projection, "ServiceAccountTokenProjection",
	STR(1, "audience"),
	I64(2, "expirationSeconds"),
	STR_KEEP(3, "path"));

MESSAGE(volume_projection, "VolumeProjection",
	MSG(1, "secret", object_projection),
	MSG(2, "downwardAPI", downward_api_projection),
	MSG(3, "configMap", object_projection),
	MSG(4, "serviceAccountToken", sa_token_projection));

MESSAGE(projected_volume, "ProjectedVolumeSource",
	MSGS(1, "sources", volume_projection),
	I32_KEEP(2, "defaultMode"));

MESSAGE(csi_volume, "CSIVolumeSource",
	STR_KEEP(1, "driver"),
	BOOL(2, "readOnly"),
	STR(3, "fsType"),
	MAP(4, "volumeAttributes", PB_STRING),
	MSG(5, "nodePublishSecretRef", local_object_reference));

/*
 * The sources volrayd's pods use; another is dropped by the decoder, so
 * the projected token volume (kube-api-access-XXXXX) and downwardAPI are
 * here: KubeRay's operator updates its pods in protobuf and lost them.
 */
MESSAGE(volume_source, "VolumeSource",
	MSG(1, "hostPath", host_path),
	MSG(2, "emptyDir", empty_dir),
	MSG(6, "secret", secret_volume),
	MSG(10, "persistentVolumeClaim", pvc_volume),
	MSG(16, "downwardAPI", downward_api_volume),
	MSG(19, "configMap", config_map_volume),
	MSG(26, "projected", projected_volume),
	MSG(28, "csi", csi_volume));

MESSAGE(volume, "Volume",
	STR_KEEP(1, "name"),
	INLINE(2, volume_source));

/* ConfigMapKeySelector and SecretKeySelector share their layout. */
MESSAGE(key_selector, "KeySelector",
	INLINE(1, local_object_reference),
	STR_KEEP(2, "key"),
	BOOL_KEEP(3, "optional"));

MESSAGE(env_var_source, "EnvVarSource",
	MSG(1, "fieldRef", object_field_selector),
	MSG(2, "resourceFieldRef", resource_field_selector),
	MSG(3, "configMapKeyRef", key_selector),
	MSG(4, "secretKeyRef", key_selector));

MESSAGE(env_var, "EnvVar",
	STR_KEEP(1, "name"),
	STR(2, "value"),
	MSG(3, "valueFrom", env_var_source));

/* ConfigMapEnvSource and SecretEnvSource share their layout. */
MESSAGE(env_source, "EnvSource",
	INLINE(1, local_object_reference),
	BOOL_KEEP(2, "optional"));

MESSAGE(env_from_source, "EnvFromSource",
	STR(1, "prefix"),
	MSG(2, "configMapRef", env_source),
	MSG(3, "secretRef", env_source));

MESSAGE(resource_claim, "ResourceClaim",
	STR_KEEP(1, "name"),
	STR(2, "request"));

MESSAGE(resource_requirements, "ResourceRequirements",
	MAP(1, "limits", PB_QUANTITY),
	MAP(2, "requests", PB_QUANTITY),
	MSGS(3, "claims", resource_claim));

MESSAGE(volume_mount, "VolumeMount",
	STR_KEEP(1, "name"),
	BOOL(2, "readOnly"),
	STR_KEEP(7, "recursiveReadOnly"),
	STR_KEEP(3, "mountPath"),
	STR(4, "subPath"),
	STR_KEEP(5, "mountPropagation"),
	STR(6, "subPathExpr"));

MESSAGE(exec_action, "ExecAction",
	STRS(1, "command"));

MESSAGE(http_header, "HTTPHeader",
	STR_KEEP(1, "name"),
	STR_KEEP(2, "value"));

MESSAGE(http_get_action, "HTTPGetAction",
	STR(1, "path"),
	INTSTR(2, "port"),
	STR(3, "host"),
	STR(4, "scheme"),
	MSGS(5, "httpHeaders", http_header));

MESSAGE(tcp_socket_action, "TCPSocketAction",
	INTSTR(1, "port"),
	STR(2, "host"));

MESSAGE(grpc_action, "GRPCAction",
	I32_KEEP(1, "port"),
	STR_KEEP(2, "service"));

MESSAGE(probe_handler, "ProbeHandler",
	MSG(1, "exec", exec_action),
	MSG(2, "httpGet", http_get_action),
	MSG(3, "tcpSocket", tcp_socket_action),
	MSG(4, "grpc", grpc_action));

MESSAGE(probe, "Probe",
	INLINE(1, probe_handler),
	I32(2, "initialDelaySeconds"),
	I32(3, "timeoutSeconds"),
	I32(4, "periodSeconds"),
	I32(5, "successThreshold"),
	I32(6, "failureThreshold"),
	I64_KEEP(7, "terminationGracePeriodSeconds"));

MESSAGE(sleep_action, "SleepAction",
	I64_KEEP(1, "seconds"));

MESSAGE(lifecycle_handler, "LifecycleHandler",
	MSG(1, "exec", exec_action),
	MSG(2, "httpGet", http_get_action),
	MSG(3, "tcpSocket", tcp_socket_action),
	MSG(4, "sleep", sleep_action));

MESSAGE(lifecycle, "Lifecycle",
	MSG(1, "postStart", lifecycle_handler),
	MSG(2, "preStop", lifecycle_handler),
	STR_KEEP(3, "stopSignal"));

MESSAGE(capabilities, "Capabilities",
	STRS(1, "add"),
	STRS(2, "drop"));

MESSAGE(seccomp_profile, "SeccompProfile",
	STR_KEEP(1, "type"),
	STR_KEEP(2, "localhostProfile"));

MESSAGE(security_context, "SecurityContext",
	MSG(1, "capabilities", capabilities),
	BOOL_KEEP(2, "privileged"),
	I64_KEEP(4, "runAsUser"),
	I64_KEEP(8, "runAsGroup"),
	BOOL_KEEP(5, "runAsNonRoot"),
	BOOL_KEEP(6, "readOnlyRootFilesystem"),
	BOOL_KEEP(7, "allowPrivilegeEscalation"),
	STR_KEEP(9, "procMount"),
	MSG(11, "seccompProfile", seccomp_profile));

MESSAGE(container, "Container",
	STR_KEEP(1, "name"),
	STR(2, "image"),
	STRS(3, "command"),
	STRS(4, "args"),
	STR(5, "workingDir"),
	MSGS(6, "ports", container_port),
	MSGS(19, "envFrom", env_from_source),
	MSGS(7, "env", env_var),
	MSG(8, "resources", resource_requirements),
	STR_KEEP(24, "restartPolicy"),
	MSGS(9, "volumeMounts", volume_mount),
	MSG(10, "livenessProbe", probe),
	MSG(11, "readinessProbe", probe),
	MSG(22, "startupProbe", probe),
	MSG(12, "lifecycle", lifecycle),
	MSG(15, "securityContext", security_context),
	STR(13, "terminationMessagePath"),
	STR(20, "terminationMessagePolicy"),
	STR(14, "imagePullPolicy"),
	BOOL(16, "stdin"),
	BOOL(17, "stdinOnce"),
	BOOL(18, "tty"));

MESSAGE(toleration, "Toleration",
	STR(1, "key"),
	STR(2, "operator"),
	STR(3, "value"),
	STR(4, "effect"),
	I64_KEEP(5, "tolerationSeconds"));

MESSAGE(node_selector_requirement, "NodeSelectorRequirement",
	STR_KEEP(1, "key"),
	STR_KEEP(2, "operator"),
	STRS(3, "values"));

MESSAGE(node_selector_term, "NodeSelectorTerm",
	MSGS(1, "matchExpressions", node_selector_requirement),
	MSGS(2, "matchFields", node_selector_requirement));

MESSAGE(node_selector, "NodeSelector",
	MSGS(1, "nodeSelectorTerms", node_selector_term));

MESSAGE(preferred_scheduling_term, "PreferredSchedulingTerm",
	I32_KEEP(1, "weight"),
	MSG(2, "preference", node_selector_term));

MESSAGE(node_affinity, "NodeAffinity",
	MSG(1, "requiredDuringSchedulingIgnoredDuringExecution", node_selector),
	MSGS(2, "preferredDuringSchedulingIgnoredDuringExecution",
	    preferred_scheduling_term));

MESSAGE(pod_affinity_term, "PodAffinityTerm",
	MSG(1, "labelSelector", label_selector),
	STRS(2, "namespaces"),
	STR_KEEP(3, "topologyKey"),
	MSG(4, "namespaceSelector", label_selector),
	STRS(5, "matchLabelKeys"),
	STRS(6, "mismatchLabelKeys"));

MESSAGE(weighted_pod_affinity_term, "WeightedPodAffinityTerm",
	I32_KEEP(1, "weight"),
	MSG(2, "podAffinityTerm", pod_affinity_term));

MESSAGE(pod_affinity, "PodAffinity",
	MSGS(1, "requiredDuringSchedulingIgnoredDuringExecution",
	    pod_affinity_term),
	MSGS(2, "preferredDuringSchedulingIgnoredDuringExecution",
	    weighted_pod_affinity_term));

MESSAGE(affinity, "Affinity",
	MSG(1, "nodeAffinity", node_affinity),
	MSG(2, "podAffinity", pod_affinity),
	MSG(3, "podAntiAffinity", pod_affinity));

MESSAGE(pod_security_context, "PodSecurityContext",
	I64_KEEP(2, "runAsUser"),
	I64_KEEP(6, "runAsGroup"),
	BOOL_KEEP(3, "runAsNonRoot"),
	{ 4, "supplementalGroups", PB_INT64, PB_REPEATED, NULL },
	I64_KEEP(5, "fsGroup"),
	STR_KEEP(9, "fsGroupChangePolicy"),
	MSG(10, "seccompProfile", seccomp_profile));

MESSAGE(host_alias, "HostAlias",
	STR_KEEP(1, "ip"),
	STRS(2, "hostnames"));

MESSAGE(pod_dns_config_option, "PodDNSConfigOption",
	STR(1, "name"),
	STR_KEEP(2, "value"));

MESSAGE(pod_dns_config, "PodDNSConfig",
	STRS(1, "nameservers"),
	STRS(2, "searches"),
	MSGS(3, "options", pod_dns_config_option));

MESSAGE(pod_readiness_gate, "PodReadinessGate",
	STR_KEEP(1, "conditionType"));

MESSAGE(topology_spread_constraint, "TopologySpreadConstraint",
	I32_KEEP(1, "maxSkew"),
	STR_KEEP(2, "topologyKey"),
	STR_KEEP(3, "whenUnsatisfiable"),
	MSG(4, "labelSelector", label_selector),
	I32_KEEP(5, "minDomains"),
	STR_KEEP(6, "nodeAffinityPolicy"),
	STR_KEEP(7, "nodeTaintsPolicy"),
	STRS(8, "matchLabelKeys"));

/* Kubernetes' gang API (1.36): the PodGroup the pod joins. */
MESSAGE(pod_scheduling_group, "PodSchedulingGroup",
	STR_KEEP(1, "podGroupName"));

MESSAGE(pod_spec, "PodSpec",
	MSGS(1, "volumes", volume),
	MSGS(20, "initContainers", container),
	MSGS(2, "containers", container),
	STR(3, "restartPolicy"),
	I64_KEEP(4, "terminationGracePeriodSeconds"),
	I64_KEEP(5, "activeDeadlineSeconds"),
	STR(6, "dnsPolicy"),
	MAP(7, "nodeSelector", PB_STRING),
	STR(8, "serviceAccountName"),
	STR(9, "serviceAccount"),
	BOOL_KEEP(21, "automountServiceAccountToken"),
	STR(10, "nodeName"),
	BOOL(11, "hostNetwork"),
	BOOL(12, "hostPID"),
	BOOL(13, "hostIPC"),
	BOOL_KEEP(27, "shareProcessNamespace"),
	MSG(14, "securityContext", pod_security_context),
	MSGS(15, "imagePullSecrets", local_object_reference),
	STR(16, "hostname"),
	STR(17, "subdomain"),
	MSG(18, "affinity", affinity),
	STR(19, "schedulerName"),
	MSGS(22, "tolerations", toleration),
	MSGS(23, "hostAliases", host_alias),
	MSG(26, "dnsConfig", pod_dns_config),
	MSGS(28, "readinessGates", pod_readiness_gate),
	MSGS(33, "topologySpreadConstraints", topology_spread_constraint),
	STR(24, "priorityClassName"),
	I32_KEEP(25, "priority"),
	STR_KEEP(29, "runtimeClassName"),
	BOOL_KEEP(30, "enableServiceLinks"),
	STR_KEEP(31, "preemptionPolicy"),
	MAP(32, "overhead", PB_QUANTITY),
	BOOL_KEEP(35, "setHostnameAsFQDN"),
	BOOL_KEEP(37, "hostUsers"),
	MSG(40, "resources", resource_requirements),
	MSG(43, "schedulingGroup", pod_scheduling_group));

/*
 * PodStatus in full: a scheduler's client-go (Volcano's, kube-scheduler's)
 * writes pods/status in protobuf, the stored status with its condition
 * added, and what the decoder skipped would be lost. User and
 * allocatedResourcesStatus are left out (skipped).
 */
MESSAGE(pod_condition, "PodCondition",
	STR_KEEP(1, "type"),
	I64(7, "observedGeneration"),
	STR_KEEP(2, "status"),
	TIME(3, "lastProbeTime"),
	TIME(4, "lastTransitionTime"),
	STR(5, "reason"),
	STR(6, "message"));

MESSAGE(pod_ip, "PodIP",
	STR_KEEP(1, "ip"));

MESSAGE(container_state_waiting, "ContainerStateWaiting",
	STR(1, "reason"),
	STR(2, "message"));

MESSAGE(container_state_running, "ContainerStateRunning",
	TIME(1, "startedAt"));

MESSAGE(container_state_terminated, "ContainerStateTerminated",
	I32_KEEP(1, "exitCode"),
	I32(2, "signal"),
	STR(3, "reason"),
	STR(4, "message"),
	TIME(5, "startedAt"),
	TIME(6, "finishedAt"),
	STR(7, "containerID"));

MESSAGE(container_state, "ContainerState",
	MSG(1, "waiting", container_state_waiting),
	MSG(2, "running", container_state_running),
	MSG(3, "terminated", container_state_terminated));

MESSAGE(volume_mount_status, "VolumeMountStatus",
	STR_KEEP(1, "name"),
	STR_KEEP(2, "mountPath"),
	BOOL(3, "readOnly"),
	STR(4, "recursiveReadOnly"));

MESSAGE(container_status, "ContainerStatus",
	STR_KEEP(1, "name"),
	MSG(2, "state", container_state),
	MSG(3, "lastState", container_state),
	BOOL_KEEP(4, "ready"),
	I32_KEEP(5, "restartCount"),
	STR_KEEP(6, "image"),
	STR_KEEP(7, "imageID"),
	STR(8, "containerID"),
	BOOL_KEEP(9, "started"),
	MAP(10, "allocatedResources", PB_QUANTITY),
	MSG(11, "resources", resource_requirements),
	MSGS(12, "volumeMounts", volume_mount_status),
	STR(15, "stopSignal"));

MESSAGE(pod_resource_claim_status, "PodResourceClaimStatus",
	STR_KEEP(1, "name"),
	STR(2, "resourceClaimName"));

MESSAGE(pod_status, "PodStatus",
	I64(17, "observedGeneration"),
	STR(1, "phase"),
	MSGS(2, "conditions", pod_condition),
	STR(3, "message"),
	STR(4, "reason"),
	STR(11, "nominatedNodeName"),
	STR(5, "hostIP"),
	MSGS(16, "hostIPs", pod_ip),
	STR(6, "podIP"),
	MSGS(12, "podIPs", pod_ip),
	TIME(7, "startTime"),
	MSGS(10, "initContainerStatuses", container_status),
	MSGS(8, "containerStatuses", container_status),
	STR(9, "qosClass"),
	MSGS(13, "ephemeralContainerStatuses", container_status),
	STR(14, "resize"),
	MSGS(15, "resourceClaimStatuses", pod_resource_claim_status));

KIND_MESSAGE(pb_pod, "Pod",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", pod_spec),
	MSG(3, "status", pod_status));

/*
 * resource.k8s.io/v1 ResourceClaim in full: kube-scheduler's DRA plugin
 * writes a claim (its finalizer) and its status (the allocation, the pods
 * it is reserved for) in protobuf; a driver's opaque parameters and a
 * device's data are RawExtensions, the JSON they hold.
 */
MESSAGE(condition, "Condition",
	STR_KEEP(1, "type"),
	STR_KEEP(2, "status"),
	I64(3, "observedGeneration"),
	TIME(4, "lastTransitionTime"),
	STR_KEEP(5, "reason"),
	STR_KEEP(6, "message"));

MESSAGE(cel_device_selector, "CELDeviceSelector",
	STR_KEEP(1, "expression"));

MESSAGE(device_selector, "DeviceSelector",
	MSG(1, "cel", cel_device_selector));

MESSAGE(device_toleration, "DeviceToleration",
	STR(1, "key"),
	STR(2, "operator"),
	STR(3, "value"),
	STR(4, "effect"),
	I64_KEEP(5, "tolerationSeconds"));

MESSAGE(capacity_requirements, "CapacityRequirements",
	MAP(1, "requests", PB_QUANTITY));

MESSAGE(exact_device_request, "ExactDeviceRequest",
	STR_KEEP(1, "deviceClassName"),
	MSGS(2, "selectors", device_selector),
	STR(3, "allocationMode"),
	I64(4, "count"),
	BOOL_KEEP(5, "adminAccess"),
	MSGS(6, "tolerations", device_toleration),
	MSG(7, "capacity", capacity_requirements));

MESSAGE(device_sub_request, "DeviceSubRequest",
	STR_KEEP(1, "name"),
	STR_KEEP(2, "deviceClassName"),
	MSGS(3, "selectors", device_selector),
	STR(4, "allocationMode"),
	I64(5, "count"),
	MSGS(6, "tolerations", device_toleration),
	MSG(7, "capacity", capacity_requirements));

MESSAGE(device_request, "DeviceRequest",
	STR_KEEP(1, "name"),
	MSG(2, "exactly", exact_device_request),
	MSGS(3, "firstAvailable", device_sub_request));

MESSAGE(device_constraint, "DeviceConstraint",
	STRS(1, "requests"),
	STR_KEEP(2, "matchAttribute"),
	STR_KEEP(3, "distinctAttribute"));

MESSAGE(opaque_device_configuration, "OpaqueDeviceConfiguration",
	STR_KEEP(1, "driver"),
	RAW(2, "parameters"));

MESSAGE(device_configuration, "DeviceConfiguration",
	MSG(1, "opaque", opaque_device_configuration));

MESSAGE(device_claim_configuration, "DeviceClaimConfiguration",
	STRS(1, "requests"),
	INLINE(2, device_configuration));

MESSAGE(device_claim, "DeviceClaim",
	MSGS(1, "requests", device_request),
	MSGS(2, "constraints", device_constraint),
	MSGS(3, "config", device_claim_configuration));

MESSAGE(resource_claim_spec, "ResourceClaimSpec",
	MSG(1, "devices", device_claim));

MESSAGE(device_request_allocation_result, "DeviceRequestAllocationResult",
	STR_KEEP(1, "request"),
	STR_KEEP(2, "driver"),
	STR_KEEP(3, "pool"),
	STR_KEEP(4, "device"),
	BOOL_KEEP(5, "adminAccess"),
	MSGS(6, "tolerations", device_toleration),
	STRS(7, "bindingConditions"),
	STRS(8, "bindingFailureConditions"),
	STR_KEEP(9, "shareID"),
	MAP(10, "consumedCapacity", PB_QUANTITY));

MESSAGE(device_allocation_configuration, "DeviceAllocationConfiguration",
	STR_KEEP(1, "source"),
	STRS(2, "requests"),
	INLINE(3, device_configuration));

MESSAGE(device_allocation_result, "DeviceAllocationResult",
	MSGS(1, "results", device_request_allocation_result),
	MSGS(2, "config", device_allocation_configuration));

MESSAGE(allocation_result, "AllocationResult",
	MSG(1, "devices", device_allocation_result),
	MSG(3, "nodeSelector", node_selector),
	TIME(5, "allocationTimestamp"));

MESSAGE(resource_claim_consumer_reference, "ResourceClaimConsumerReference",
	STR(1, "apiGroup"),
	STR_KEEP(3, "resource"),
	STR_KEEP(4, "name"),
	STR_KEEP(5, "uid"));

MESSAGE(network_device_data, "NetworkDeviceData",
	STR(1, "interfaceName"),
	STRS(2, "ips"),
	STR(3, "hardwareAddress"));

MESSAGE(allocated_device_status, "AllocatedDeviceStatus",
	STR_KEEP(1, "driver"),
	STR_KEEP(2, "pool"),
	STR_KEEP(3, "device"),
	STR_KEEP(7, "shareID"),
	MSGS(4, "conditions", condition),
	RAW(5, "data"),
	MSG(6, "networkData", network_device_data));

MESSAGE(resource_claim_status, "ResourceClaimStatus",
	MSG(1, "allocation", allocation_result),
	MSGS(2, "reservedFor", resource_claim_consumer_reference),
	MSGS(4, "devices", allocated_device_status));

KIND_MESSAGE(pb_resource_claim_object, "ResourceClaim",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", resource_claim_spec),
	MSG(3, "status", resource_claim_status));

/*
 * What kube-scheduler's client-go sends in protobuf besides: a pod's
 * Binding (pods/binding) and core/v1 Events (its recorder falls back to
 * them without events.k8s.io).
 */
KIND_MESSAGE(pb_binding, "Binding",
	MSG(1, "metadata", object_meta),
	MSG(2, "target", object_reference));

MESSAGE(event_source, "EventSource",
	STR(1, "component"),
	STR(2, "host"));

MESSAGE(event_series, "EventSeries",
	I32(1, "count"),
	MTIME(2, "lastObservedTime"));

KIND_MESSAGE(pb_event, "Event",
	MSG(1, "metadata", object_meta),
	MSG(2, "involvedObject", object_reference),
	STR(3, "reason"),
	STR(4, "message"),
	MSG(5, "source", event_source),
	TIME(6, "firstTimestamp"),
	TIME(7, "lastTimestamp"),
	I32(8, "count"),
	STR(9, "type"),
	MTIME(10, "eventTime"),
	MSG(11, "series", event_series),
	STR(12, "action"),
	MSG(13, "related", object_reference),
	STR_KEEP(14, "reportingComponent"),
	STR_KEEP(15, "reportingInstance"));

/*
 * coordination.k8s.io/v1 Lease: node heartbeats and leader election of
 * client-go's clients (kwok's node leases, in protobuf).
 */
MESSAGE(lease_spec, "LeaseSpec",
	STR(1, "holderIdentity"),
	I32(2, "leaseDurationSeconds"),
	MTIME(3, "acquireTime"),
	MTIME(4, "renewTime"),
	I32(5, "leaseTransitions"),
	STR(6, "strategy"),
	STR(7, "preferredHolder"));

KIND_MESSAGE(pb_lease, "Lease",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", lease_spec));

MESSAGE(pod_template_spec, "PodTemplateSpec",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", pod_spec));

/* k8s.io/api/core/v1: top-level kinds. */

MESSAGE(namespace_spec, "NamespaceSpec",
	STRS(1, "finalizers"));

MESSAGE(namespace_status, "NamespaceStatus",
	STR(1, "phase"));

KIND_MESSAGE(pb_namespace, "Namespace",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", namespace_spec),
	MSG(3, "status", namespace_status));

KIND_MESSAGE(pb_config_map, "ConfigMap",
	MSG(1, "metadata", object_meta),
	BOOL_KEEP(4, "immutable"),
	MAP(2, "data", PB_STRING),
	MAP(3, "binaryData", PB_BYTES));

KIND_MESSAGE(pb_secret, "Secret",
	MSG(1, "metadata", object_meta),
	BOOL_KEEP(5, "immutable"),
	MAP(2, "data", PB_BYTES),
	MAP(4, "stringData", PB_STRING),
	STR(3, "type"));

KIND_MESSAGE(pb_service_account, "ServiceAccount",
	MSG(1, "metadata", object_meta),
	MSGS(2, "secrets", object_reference),
	MSGS(3, "imagePullSecrets", local_object_reference),
	BOOL_KEEP(4, "automountServiceAccountToken"));

MESSAGE(service_port, "ServicePort",
	STR(1, "name"),
	STR(2, "protocol"),
	STR_KEEP(6, "appProtocol"),
	I32_KEEP(3, "port"),
	INTSTR(4, "targetPort"),
	I32(5, "nodePort"));

MESSAGE(client_ip_config, "ClientIPConfig",
	I32_KEEP(1, "timeoutSeconds"));

MESSAGE(session_affinity_config, "SessionAffinityConfig",
	MSG(1, "clientIP", client_ip_config));

MESSAGE(service_spec, "ServiceSpec",
	MSGS(1, "ports", service_port),
	MAP(2, "selector", PB_STRING),
	STR(3, "clusterIP"),
	STRS(18, "clusterIPs"),
	STR(4, "type"),
	STRS(5, "externalIPs"),
	STR(7, "sessionAffinity"),
	STR(8, "loadBalancerIP"),
	STRS(9, "loadBalancerSourceRanges"),
	STR(10, "externalName"),
	STR(11, "externalTrafficPolicy"),
	I32(12, "healthCheckNodePort"),
	BOOL(13, "publishNotReadyAddresses"),
	MSG(14, "sessionAffinityConfig", session_affinity_config),
	STRS(19, "ipFamilies"),
	STR_KEEP(17, "ipFamilyPolicy"),
	BOOL_KEEP(20, "allocateLoadBalancerNodePorts"),
	STR_KEEP(21, "loadBalancerClass"),
	STR_KEEP(22, "internalTrafficPolicy"),
	STR_KEEP(23, "trafficDistribution"));

/* ServiceStatus and IngressStatus: a loadBalancer struct JSON always shows. */
MESSAGE(load_balancer_status, "LoadBalancerStatus",
	MSG(1, "loadBalancer", opaque));

KIND_MESSAGE(pb_service, "Service",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", service_spec),
	MSG(3, "status", load_balancer_status));

MESSAGE(scoped_requirement, "ScopedResourceSelectorRequirement",
	STR_KEEP(1, "scopeName"),
	STR_KEEP(2, "operator"),
	STRS(3, "values"));

MESSAGE(scope_selector, "ScopeSelector",
	MSGS(1, "matchExpressions", scoped_requirement));

MESSAGE(resource_quota_spec, "ResourceQuotaSpec",
	MAP(1, "hard", PB_QUANTITY),
	STRS(2, "scopes"),
	MSG(3, "scopeSelector", scope_selector));

KIND_MESSAGE(pb_resource_quota, "ResourceQuota",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", resource_quota_spec),
	MSG(3, "status", opaque));

/* k8s.io/api/apps/v1 */

MESSAGE(rolling_update_deployment, "RollingUpdateDeployment",
	INTSTR(1, "maxUnavailable"),
	INTSTR(2, "maxSurge"));

MESSAGE(deployment_strategy, "DeploymentStrategy",
	STR(1, "type"),
	MSG(2, "rollingUpdate", rolling_update_deployment));

MESSAGE(deployment_spec, "DeploymentSpec",
	I32_KEEP(1, "replicas"),
	MSG(2, "selector", label_selector),
	MSG(3, "template", pod_template_spec),
	MSG(4, "strategy", deployment_strategy),
	I32(5, "minReadySeconds"),
	I32_KEEP(6, "revisionHistoryLimit"),
	BOOL(7, "paused"),
	I32_KEEP(9, "progressDeadlineSeconds"));

KIND_MESSAGE(pb_deployment, "Deployment",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", deployment_spec),
	MSG(3, "status", opaque));

/* k8s.io/api/batch/v1 */

MESSAGE(job_spec, "JobSpec",
	I32_KEEP(1, "parallelism"),
	I32_KEEP(2, "completions"),
	I64_KEEP(3, "activeDeadlineSeconds"),
	I32_KEEP(7, "backoffLimit"),
	I32_KEEP(12, "backoffLimitPerIndex"),
	I32_KEEP(13, "maxFailedIndexes"),
	MSG(4, "selector", label_selector),
	BOOL_KEEP(5, "manualSelector"),
	MSG(6, "template", pod_template_spec),
	I32_KEEP(8, "ttlSecondsAfterFinished"),
	STR_KEEP(9, "completionMode"),
	BOOL_KEEP(10, "suspend"),
	STR_KEEP(14, "podReplacementPolicy"),
	STR_KEEP(15, "managedBy"));

KIND_MESSAGE(pb_job, "Job",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", job_spec),
	MSG(3, "status", opaque));

MESSAGE(job_template_spec, "JobTemplateSpec",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", job_spec));

MESSAGE(cron_job_spec, "CronJobSpec",
	STR_KEEP(1, "schedule"),
	STR_KEEP(8, "timeZone"),
	I64_KEEP(2, "startingDeadlineSeconds"),
	STR(3, "concurrencyPolicy"),
	BOOL_KEEP(4, "suspend"),
	MSG(5, "jobTemplate", job_template_spec),
	I32_KEEP(6, "successfulJobsHistoryLimit"),
	I32_KEEP(7, "failedJobsHistoryLimit"));

KIND_MESSAGE(pb_cron_job, "CronJob",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", cron_job_spec),
	MSG(3, "status", opaque));

/* k8s.io/api/scheduling/v1 */

KIND_MESSAGE(pb_priority_class, "PriorityClass",
	MSG(1, "metadata", object_meta),
	I32_KEEP(2, "value"),
	BOOL(3, "globalDefault"),
	STR(4, "description"),
	STR_KEEP(5, "preemptionPolicy"));

/* k8s.io/api/rbac/v1 */

MESSAGE(policy_rule, "PolicyRule",
	STRS(1, "verbs"),
	STRS(2, "apiGroups"),
	STRS(3, "resources"),
	STRS(4, "resourceNames"),
	STRS(5, "nonResourceURLs"));

KIND_MESSAGE(pb_role, "Role",
	MSG(1, "metadata", object_meta),
	MSGS(2, "rules", policy_rule));

MESSAGE(aggregation_rule, "AggregationRule",
	MSGS(1, "clusterRoleSelectors", label_selector));

KIND_MESSAGE(pb_cluster_role, "ClusterRole",
	MSG(1, "metadata", object_meta),
	MSGS(2, "rules", policy_rule),
	MSG(3, "aggregationRule", aggregation_rule));

MESSAGE(subject, "Subject",
	STR_KEEP(1, "kind"),
	STR(2, "apiGroup"),
	STR_KEEP(3, "name"),
	STR(4, "namespace"));

MESSAGE(role_ref, "RoleRef",
	STR_KEEP(1, "apiGroup"),
	STR_KEEP(2, "kind"),
	STR_KEEP(3, "name"));

/* RoleBinding and ClusterRoleBinding share their layout. */
KIND_MESSAGE(pb_role_binding, "RoleBinding",
	MSG(1, "metadata", object_meta),
	MSGS(2, "subjects", subject),
	MSG(3, "roleRef", role_ref));

/* k8s.io/api/policy/v1 */

MESSAGE(pdb_spec, "PodDisruptionBudgetSpec",
	INTSTR(1, "minAvailable"),
	MSG(2, "selector", label_selector),
	INTSTR(3, "maxUnavailable"),
	STR_KEEP(4, "unhealthyPodEvictionPolicy"));

MESSAGE(pdb_status, "PodDisruptionBudgetStatus",
	I64(1, "observedGeneration"),
	I32_KEEP(3, "disruptionsAllowed"),
	I32_KEEP(4, "currentHealthy"),
	I32_KEEP(5, "desiredHealthy"),
	I32_KEEP(6, "expectedPods"));

KIND_MESSAGE(pb_pdb, "PodDisruptionBudget",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", pdb_spec),
	MSG(3, "status", pdb_status));

/* k8s.io/api/networking/v1 */

MESSAGE(service_backend_port, "ServiceBackendPort",
	STR(1, "name"),
	I32(2, "number"));

MESSAGE(ingress_service_backend, "IngressServiceBackend",
	STR_KEEP(1, "name"),
	MSG(2, "port", service_backend_port));

MESSAGE(ingress_backend, "IngressBackend",
	MSG(4, "service", ingress_service_backend),
	MSG(3, "resource", typed_local_object_reference));

MESSAGE(http_ingress_path, "HTTPIngressPath",
	STR(1, "path"),
	STR_KEEP(3, "pathType"),
	MSG(2, "backend", ingress_backend));

MESSAGE(http_ingress_rule_value, "HTTPIngressRuleValue",
	MSGS(1, "paths", http_ingress_path));

MESSAGE(ingress_rule_value, "IngressRuleValue",
	MSG(1, "http", http_ingress_rule_value));

MESSAGE(ingress_rule, "IngressRule",
	STR(1, "host"),
	INLINE(2, ingress_rule_value));

MESSAGE(ingress_tls, "IngressTLS",
	STRS(1, "hosts"),
	STR(2, "secretName"));

MESSAGE(ingress_spec, "IngressSpec",
	STR_KEEP(4, "ingressClassName"),
	MSG(1, "defaultBackend", ingress_backend),
	MSGS(2, "tls", ingress_tls),
	MSGS(3, "rules", ingress_rule));

KIND_MESSAGE(pb_ingress, "Ingress",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", ingress_spec),
	MSG(3, "status", load_balancer_status));

/* k8s.io/api/authentication/v1 */

MESSAGE(bound_object_reference, "BoundObjectReference",
	STR(1, "kind"),
	STR(2, "apiVersion"),
	STR(3, "name"),
	STR(4, "uid"));

MESSAGE(token_request_spec, "TokenRequestSpec",
	STRS(1, "audiences"),
	I64_KEEP(4, "expirationSeconds"),
	MSG(3, "boundObjectRef", bound_object_reference));

KIND_MESSAGE(pb_token_request, "TokenRequest",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", token_request_spec),
	MSG(3, "status", opaque));

/* k8s.io/api/authorization/v1: kubectl auth can-i. */

MESSAGE(field_selector_requirement, "FieldSelectorRequirement",
	STR_KEEP(1, "key"),
	STR_KEEP(2, "operator"),
	STRS(3, "values"));

MESSAGE(field_selector_attributes, "FieldSelectorAttributes",
	STR(1, "rawSelector"),
	MSGS(2, "requirements", field_selector_requirement));

MESSAGE(label_selector_attributes, "LabelSelectorAttributes",
	STR(1, "rawSelector"),
	MSGS(2, "requirements", label_selector_requirement));

MESSAGE(resource_attributes, "ResourceAttributes",
	STR(1, "namespace"),
	STR(2, "verb"),
	STR(3, "group"),
	STR(4, "version"),
	STR(5, "resource"),
	STR(6, "subresource"),
	STR(7, "name"),
	MSG(8, "fieldSelector", field_selector_attributes),
	MSG(9, "labelSelector", label_selector_attributes));

MESSAGE(non_resource_attributes, "NonResourceAttributes",
	STR(1, "path"),
	STR(2, "verb"));

MESSAGE(self_subject_access_review_spec, "SelfSubjectAccessReviewSpec",
	MSG(1, "resourceAttributes", resource_attributes),
	MSG(2, "nonResourceAttributes", non_resource_attributes));

MESSAGE(subject_access_review_status, "SubjectAccessReviewStatus",
	BOOL_KEEP(1, "allowed"),
	BOOL(4, "denied"),
	STR(2, "reason"),
	STR(3, "evaluationError"));

KIND_MESSAGE(pb_self_subject_access_review, "SelfSubjectAccessReview",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", self_subject_access_review_spec),
	MSG(3, "status", subject_access_review_status));

MESSAGE(self_subject_rules_review_spec, "SelfSubjectRulesReviewSpec",
	STR(1, "namespace"));

KIND_MESSAGE(pb_self_subject_rules_review, "SelfSubjectRulesReview",
	MSG(1, "metadata", object_meta),
	MSG(2, "spec", self_subject_rules_review_spec),
	MSG(3, "status", opaque));

/* kubectl auth whoami's: no spec, the answer's status. */
KIND_MESSAGE(pb_self_subject_review, "SelfSubjectReview",
	MSG(1, "metadata", object_meta),
	MSG(2, "status", opaque));
