#!/bin/sh
# The storage.k8s.io and resource.k8s.io kinds (issue 39), which
# schedulers' informers list (kube-scheduler's, Volcano's): StorageClass,
# CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment,
# VolumeAttributesClass; DeviceClass,
# ResourceClaim, ResourceClaimTemplate, ResourceSlice; and Volcano's
# Numatopology CRD. With stock kubectl: created, listed with
# kube-apiserver's columns (a default StorageClass's "(default)", the
# defaults unset fields print as), watched, deleted; kube-apiserver's v1
# defaults; its 422s with the field's path for a missing provisioner,
# attacher, source or pool, a bad reclaim policy, and updates of the
# fields that may not change (their messages compared with kube-apiserver
# 1.34's by hand: the same but for an immutable spec, which kube-apiserver
# prints as a Go value); api-resources with the short names sc and vac;
# explain; and the system:kube-scheduler role may list them.
. "$(dirname "$0")/lib.sh"
# The scheduler's user, bound to system:kube-scheduler as volrayd's own.
echo "sched-token,system:kube-scheduler,2001," >"$WORK/tokens.csv"
start_daemon --token-auth-file "$WORK/tokens.csv"

# --- create and list, with kube-apiserver's columns
k apply -f - >/dev/null <<'YAML' || fail "apply the storage kinds"
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: fast
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: example.com/fast
parameters: {type: ssd}
allowVolumeExpansion: true
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: slow}
provisioner: example.com/slow
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: hostpath.csi.k8s.io}
spec: {}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: token.csi.k8s.io}
spec:
  attachRequired: false
  podInfoOnMount: true
  volumeLifecycleModes: [Persistent, Ephemeral]
  tokenRequests: [{audience: vault}, {audience: gcp}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec:
  drivers:
  - {name: hostpath.csi.k8s.io, nodeID: n1, topologyKeys: [topology.hostpath.csi/node]}
  - {name: token.csi.k8s.io, nodeID: n1-t, allocatable: {count: 8}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: cap1}
storageClassName: fast
capacity: 10Gi
nodeTopology: {matchLabels: {topology.hostpath.csi/node: n1}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va1}
spec: {attacher: hostpath.csi.k8s.io, nodeName: n1, source: {persistentVolumeName: pv1}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: gold}
driverName: hostpath.csi.k8s.io
parameters: {iops: "5000"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rc1}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: rct1}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: nodeinfo.volcano.sh/v1alpha1
kind: Numatopology
metadata: {name: n1}
spec: {policies: {CPUManagerPolicy: static}}
YAML

# cols KIND: the header, one space between columns.
cols() { k get "$1" | head -1 | tr -s ' '; }
# row KIND NAME N: the first N cells of NAME's row.
row() { k get "$1" "$2" --no-headers | tr -s ' ' | cut -d' ' -f1-"$3"; }
expect_eq "NAME PROVISIONER RECLAIMPOLICY VOLUMEBINDINGMODE ALLOWVOLUMEEXPANSION AGE" "$(cols sc)" "kubectl get sc columns"
expect_eq "fast (default) example.com/fast Delete Immediate true" "$(k get sc --no-headers | grep '^fast' | tr -s ' ' | cut -d' ' -f1-6)" "the default class's row"
expect_eq "slow example.com/slow Retain WaitForFirstConsumer false" "$(row sc slow 5)" "sc row"
expect_eq "NAME ATTACHREQUIRED PODINFOONMOUNT STORAGECAPACITY TOKENREQUESTS REQUIRESREPUBLISH MODES AGE" "$(cols csidriver)" "csidriver columns"
expect_eq "hostpath.csi.k8s.io true false false <unset> false Persistent" "$(row csidriver hostpath.csi.k8s.io 7)" "a defaulted csidriver's row"
expect_eq "token.csi.k8s.io false true false vault,gcp false Persistent,Ephemeral" "$(row csidriver token.csi.k8s.io 7)" "csidriver row"
expect_eq "NAME DRIVERS AGE" "$(cols csinode)" "csinode columns"
expect_eq "n1 2" "$(row csinode n1 2)" "csinode row"
expect_eq "NAME STORAGECLASSNAME CAPACITY" "$(cols csistoragecapacity)" "csistoragecapacity columns"
expect_eq "cap1 fast 10Gi" "$(row csistoragecapacity cap1 3)" "csistoragecapacity row"
expect_eq "NAME ATTACHER PV NODE ATTACHED AGE" "$(cols volumeattachment)" "volumeattachment columns"
expect_eq "va1 hostpath.csi.k8s.io pv1 n1 false" "$(row volumeattachment va1 5)" "volumeattachment row"
expect_eq "NAME DRIVERNAME AGE" "$(cols vac)" "volumeattributesclass columns"
expect_eq "gold hostpath.csi.k8s.io" "$(row vac gold 2)" "volumeattributesclass row"
expect_eq "NAME AGE" "$(cols deviceclass)" "deviceclass columns"
expect_eq "NAME STATE AGE" "$(cols resourceclaim)" "resourceclaim columns"
expect_eq "rc1 pending" "$(row resourceclaim rc1 2)" "resourceclaim row"
expect_eq "NAME AGE" "$(cols resourceclaimtemplate)" "resourceclaimtemplate columns"
expect_eq "NAME NODE DRIVER POOL AGE" "$(cols resourceslice)" "resourceslice columns"
expect_eq "n1-gpu n1 gpu.example.com n1" "$(row resourceslice n1-gpu 4)" "resourceslice row"
expect_eq "static" "$(k get numatopo n1 -o jsonpath='{.spec.policies.CPUManagerPolicy}')" "Numatopology stored"
pass "the storage and DRA kinds are stored and listed with kube-apiserver's columns"

# --- kube-apiserver's v1 defaults
expect_eq "Delete Immediate" "$(k get sc fast -o jsonpath='{.reclaimPolicy} {.volumeBindingMode}')" "StorageClass defaults"
expect_eq "true false false ReadWriteOnceWithFSType false [\"Persistent\"]" \
	"$(k get csidriver hostpath.csi.k8s.io -o jsonpath='{.spec.attachRequired} {.spec.podInfoOnMount} {.spec.storageCapacity} {.spec.fsGroupPolicy} {.spec.requiresRepublish} {.spec.volumeLifecycleModes}')" "CSIDriver defaults"
expect_eq "ExactCount 1" "$(k get resourceclaim rc1 -o jsonpath='{.spec.devices.requests[0].exactly.allocationMode} {.spec.devices.requests[0].exactly.count}')" "an exact request's defaults"
pass "kube-apiserver's v1 defaults"

# --- 422s with the field's path
# refused WANT WHAT: stdin's manifest is refused (kubectl create) with WANT.
refused() {
	out=$(k create -f - 2>&1) && fail "$2 was accepted"
	expect_contains "$out" "$1" "$2"
}
refused 'StorageClass "bad" is invalid' "a class without provisioner" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bad}
reclaimPolicy: Recycle
YAML
expect_contains "$out" "provisioner: Required value" "a class without provisioner"
expect_contains "$out" 'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"' "Recycle"
refused 'provisioner: Invalid value: "no good!": name part must consist of alphanumeric characters' "a bad provisioner" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: bad}
provisioner: no good!
YAML
refused "spec.attacher: Required value" "an attachment without attacher" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: va2}
spec: {nodeName: n1}
YAML
expect_contains "$out" "spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName" "an attachment without source"
expect_contains "$out" "spec.attacher: Invalid value: \"\": a lowercase RFC 1123 subdomain" "an empty attacher"
refused "spec.drivers[0].nodeID: Required value" "a CSINode driver without nodeID" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n2}
spec: {drivers: [{name: hostpath.csi.k8s.io}]}
YAML
refused 'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Persistent", "Ephemeral"' "a bad lifecycle mode" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: bad.csi.k8s.io}
spec: {volumeLifecycleModes: [Forever]}
YAML
refused "parameters: Required value: must contain at least one key/value pair" "a VolumeAttributesClass without parameters" <<'YAML'
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: empty}
driverName: hostpath.csi.k8s.io
YAML
refused "spec.pool.name: Required value" "a slice without pool" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s2}
spec: {driver: gpu.example.com, allNodes: true, pool: {resourceSliceCount: 1}}
YAML
refused 'spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required' "a slice for no node" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s2}
spec: {driver: gpu.example.com, pool: {name: p, resourceSliceCount: 1}}
YAML
refused "spec.devices.requests[0].exactly.deviceClassName: Required value" "a request without class" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rc2}
spec: {devices: {requests: [{name: gpu, exactly: {}}]}}
YAML
# Updates of what may not change.
out=$(k patch sc fast --type=merge -p '{"parameters":{"type":"hdd"}}' 2>&1) && fail "parameters changed"
expect_contains "$out" "parameters: Forbidden: updates to parameters are forbidden." "a class's parameters"
out=$(k patch sc slow --type=merge -p '{"provisioner":"other.io/x","volumeBindingMode":"Immediate"}' 2>&1) && fail "provisioner changed"
expect_contains "$out" "provisioner: Forbidden: updates to provisioner are forbidden." "a class's provisioner"
expect_contains "$out" 'volumeBindingMode: Invalid value: "Immediate": field is immutable' "a class's binding mode"
out=$(k patch vac gold --type=merge -p '{"driverName":"other.csi.k8s.io"}' 2>&1) && fail "driverName changed"
expect_contains "$out" "driverName: Forbidden: updates to driverName are forbidden." "a VolumeAttributesClass's driver"
out=$(k patch csidriver token.csi.k8s.io --type=merge -p '{"spec":{"attachRequired":true}}' 2>&1) && fail "attachRequired changed"
expect_contains "$out" "spec.attachedRequired: Invalid value: true: field is immutable" "a driver's attachRequired"
# kube-apiserver prints the new spec as a Go value between the two;
# volrayd leaves it out.
out=$(k patch volumeattachment va1 --type=merge -p '{"spec":{"nodeName":"n2"}}' 2>&1) && fail "an attachment's spec changed"
expect_contains "$out" 'The VolumeAttachment "va1" is invalid: spec: Invalid value: ' "an attachment's spec"
expect_contains "$out" "field is immutable" "an attachment's spec"
out=$(k patch resourceclaim rc1 --type=merge -p '{"spec":{"devices":{"requests":[{"name":"x","exactly":{"deviceClassName":"gpu.example.com"}}]}}}' 2>&1) && fail "a claim's spec changed"
expect_contains "$out" 'The ResourceClaim "rc1" is invalid: spec: Invalid value: ' "a claim's spec"
expect_contains "$out" "field is immutable" "a claim's spec"
k patch sc fast --type=merge -p '{"allowVolumeExpansion":false}' >/dev/null || fail "allowVolumeExpansion may change"
k label csinode n1 zone=a >/dev/null || fail "a CSINode's labels may change"
k patch csistoragecapacity cap1 --type=merge -p '{"capacity":"5Gi"}' >/dev/null || fail "a capacity may change"
expect_eq "cap1 fast 5Gi" "$(row csistoragecapacity cap1 3)" "the capacity changed"
pass "kube-apiserver's 422s with the field's path, on create and update"

# --- watch and delete
k get sc -w -o name >"$WORK/scwatch" 2>/dev/null &
wpid=$!
KILL_PIDS="$KILL_PIDS $wpid"
wait_watchers 1
k apply -f - >/dev/null <<'YAML'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: late}
provisioner: example.com/late
YAML
wait_eq "yes" "the watch saw the new class" sh -c "grep -qx storageclass.storage.k8s.io/late '$WORK/scwatch' && echo yes"
kill "$wpid" 2>/dev/null || true
k delete sc late slow >/dev/null || fail "delete storage classes"
k delete resourceslice n1-gpu >/dev/null || fail "delete a slice"
expect_eq "fast" "$(k get sc -o name | sed 's|.*/||' | tr '\n' ' ' | sed 's/ $//')" "what is left"
pass "watched and deleted"

# --- discovery, explain, and the scheduler's role
res=$(k api-resources --no-headers | tr -s ' ')
for want in "storageclasses sc storage.k8s.io/v1 false StorageClass" \
    "csidrivers storage.k8s.io/v1 false CSIDriver" "csinodes storage.k8s.io/v1 false CSINode" \
    "csistoragecapacities storage.k8s.io/v1 true CSIStorageCapacity" \
    "volumeattachments storage.k8s.io/v1 false VolumeAttachment" \
    "volumeattributesclasses vac storage.k8s.io/v1 false VolumeAttributesClass" \
    "deviceclasses resource.k8s.io/v1 false DeviceClass" "resourceclaims resource.k8s.io/v1 true ResourceClaim" \
    "resourceclaimtemplates resource.k8s.io/v1 true ResourceClaimTemplate" \
    "resourceslices resource.k8s.io/v1 false ResourceSlice" \
    "numatopologies numatopo nodeinfo.volcano.sh/v1alpha1 false Numatopology"; do
	echo "$res" | grep -qx "$want" || fail "api-resources lacks '$want'"
done
for f in storageclass.provisioner csidriver.spec.attachRequired csinode.spec.drivers csistoragecapacity.capacity \
    volumeattachment.spec volumeattributesclass.parameters deviceclass.spec resourceclaim.spec resourceclaimtemplate.spec resourceslice.spec; do
	k explain "$f" >"$WORK/explain" 2>&1 || fail "kubectl explain $f: $(cat "$WORK/explain")"
	grep -q '^DESCRIPTION:' "$WORK/explain" || fail "kubectl explain $f: $(cat "$WORK/explain")"
done
for res in storageclasses.storage.k8s.io csinodes.storage.k8s.io csidrivers.storage.k8s.io \
    csistoragecapacities.storage.k8s.io volumeattachments.storage.k8s.io \
    volumeattributesclasses.storage.k8s.io \
    deviceclasses.resource.k8s.io resourceclaims.resource.k8s.io resourceslices.resource.k8s.io; do
	expect_eq yes "$(k --token=sched-token auth can-i watch "$res")" "system:kube-scheduler may watch $res"
done
expect_eq yes "$(k --token=sched-token auth can-i update resourceclaims/status)" "system:kube-scheduler may update a claim's status"
expect_eq no "$(k --token=sched-token auth can-i create storageclasses || true)" "system:kube-scheduler may not create classes"
pass "api-resources (sc), explain, and the scheduler's role"
