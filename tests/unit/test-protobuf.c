/*
 * Tests for the protobuf decoder (api/protobuf.c, its tables in
 * registry/kinds/protobuf_msgs.c, named by the kinds' descriptors). Bodies
 * captured from kubectl 1.32 (each "kubectl create ..." below, sent to a server
 * that logged the request) must decode to the object the same command prints
 * with --dry-run=client -o json, less its null fields (creationTimestamp: null,
 * rules: null), which the decoder leaves out. Hand-encoded messages cover what
 * kubectl create never sends: real timestamps, IntOrString strings, unknown
 * fields, repeated occurrences, a map with thousands of keys, invalid UTF-8 and
 * broken envelopes. Last, every truncation and thousands of random mutations of
 * the captured bodies must decode or fail with a cause, never crash or read
 * outside the buffer: run this under valgrind or ASan.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "api/protobuf.h"
#include "registry/resource.h"
#include "check.h"

#define PB(s)	s, sizeof (s) - 1

static const struct fixture {
	const char	*what;
	const char	*pb;
	size_t		 len;
	const char	*json;
} fixtures[] = {
	{
	    "kubectl create namespace t1",
	    PB("k8s\000\012\017\012\002v1\022\011Namespace\022\032\012\022\012"
	    "\002t1\022\000\032\000\"\000*\0002\0008\000B\000\022\000\032\002"
	    "\012\000\032\000\"\000"),
	    "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"na"
	    "me\":\"t1\"},\"spec\":{},\"status\":{}}"
	},
	{
	    "kubectl create configmap c1 --from-literal=a=b --from-literal=empty=",
	    PB("k8s\000\012\017\012\002v1\022\011ConfigMap\022'\012\022\012\002c"
	    "1\022\000\032\000\"\000*\0002\0008\000B\000\022\006\012\001a\022"
	    "\001b\022\011\012\005empty\022\000\032\000\"\000"),
	    "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"na"
	    "me\":\"c1\"},\"data\":{\"a\":\"b\",\"empty\":\"\"}}"
	},
	{
	    "kubectl create secret generic s1 --from-literal=k=v",
	    PB("k8s\000\012\014\012\002v1\022\006Secret\022\036\012\022\012\002s"
	    "1\022\000\032\000\"\000*\0002\0008\000B\000\022\006\012\001k\022"
	    "\001v\032\000\032\000\"\000"),
	    "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"s1\"},\"data\":{\"k\":\"dg==\"}}"
	},
	{
	    "kubectl create deployment web --image=nginx --replicas=2 --port=80",
	    PB("k8s\000\012\025\012\007apps/v1\022\012Deployment\022\270\001\012"
	    "\037\012\003web\022\000\032\000\"\000*\0002\0008\000B\000Z\012"
	    "\012\003app\022\003web\022\206\001\010\002\022\014\012\012\012"
	    "\003app\022\003web\032l\012\034\012\000\022\000\032\000\"\000*"
	    "\0002\0008\000B\000Z\012\012\003app\022\003web\022L\022.\012\005"
	    "nginx\022\005nginx*\0002\012\012\000\020\000\030P\"\000*\000B"
	    "\000j\000r\000\200\001\000\210\001\000\220\001\000\242\001\000"
	    "\032\0002\000B\000J\000R\000X\000`\000h\000\202\001\000\212\001"
	    "\000\232\001\000\302\001\000\"\002\012\000(\0008\000\032\014\010"
	    "\000\020\000\030\000 \000(\0008\000\032\000\"\000"),
	    "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\""
	    ":{\"name\":\"web\",\"labels\":{\"app\":\"web\"}},\"spec\":{\"rep"
	    "licas\":2,\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"tem"
	    "plate\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{"
	    "\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\",\"ports"
	    "\":[{\"containerPort\":80}],\"resources\":{}}]}},\"strategy\":{}"
	    "},\"status\":{}}"
	},
	{
	    "kubectl create job j1 --image=busybox -- echo hi",
	    PB("k8s\000\012\017\012\010batch/v1\022\003Job\022\204\001\012\022"
	    "\012\002j1\022\000\032\000\"\000*\0002\0008\000B\000\022d2b\012"
	    "\020\012\000\022\000\032\000\"\000*\0002\0008\000B\000\022N\022+"
	    "\012\002j1\022\007busybox\032\004echo\032\002hi*\000B\000j\000r"
	    "\000\200\001\000\210\001\000\220\001\000\242\001\000\032\005Neve"
	    "r2\000B\000J\000R\000X\000`\000h\000\202\001\000\212\001\000\232"
	    "\001\000\302\001\000\032\010 \000(\0000\000:\000\032\000\"\000"),
	    "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"na"
	    "me\":\"j1\"},\"spec\":{\"template\":{\"metadata\":{},\"spec\":{"
	    "\"containers\":[{\"name\":\"j1\",\"image\":\"busybox\",\"command"
	    "\":[\"echo\",\"hi\"],\"resources\":{}}],\"restartPolicy\":\"Neve"
	    "r\"}}},\"status\":{}}"
	},
	{
	    "kubectl create service clusterip svc1 --tcp=80:8080",
	    PB("k8s\000\012\015\012\002v1\022\007Service\022l\012!\012\004svc1"
	    "\022\000\032\000\"\000*\0002\0008\000B\000Z\013\012\003app\022"
	    "\004svc1\022C\012\033\012\00780-8080\022\003TCP\030P\"\007\010"
	    "\000\020\220\?\032\000(\000\022\013\012\003app\022\004svc1\032"
	    "\000\"\011ClusterIP:\000B\000R\000Z\000`\000h\000\032\002\012"
	    "\000\032\000\"\000"),
	    "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"svc1\",\"labels\":{\"app\":\"svc1\"}},\"spec\":{\"ports\":["
	    "{\"name\":\"80-8080\",\"protocol\":\"TCP\",\"port\":80,\"targetP"
	    "ort\":8080}],\"selector\":{\"app\":\"svc1\"},\"type\":\"ClusterI"
	    "P\"},\"status\":{\"loadBalancer\":{}}}"
	},
	{
	    "kubectl create priorityclass hp --value=1000 --description=\"high prio\"",
	    PB("k8s\000\012%\012\024scheduling.k8s.io/v1\022\015PriorityClass"
	    "\022:\012\022\012\002hp\022\000\032\000\"\000*\0002\0008\000B"
	    "\000\020\350\007\030\000\"\011high prio*\024PreemptLowerPriority"
	    "\032\000\"\000"),
	    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v"
	    "1\",\"metadata\":{\"name\":\"hp\"},\"value\":1000,\"description"
	    "\":\"high prio\",\"preemptionPolicy\":\"PreemptLowerPriority\"}"
	},
	{
	    "kubectl create serviceaccount sa1",
	    PB("k8s\000\012\024\012\002v1\022\016ServiceAccount\022\025\012\023"
	    "\012\003sa1\022\000\032\000\"\000*\0002\0008\000B\000\032\000\""
	    "\000"),
	    "{\"kind\":\"ServiceAccount\",\"apiVersion\":\"v1\",\"metadata\":"
	    "{\"name\":\"sa1\"}}"
	},
	{
	    "kubectl create cronjob cj1 --image=busybox --schedule=\"*/1 * * * *\" -- date",
	    PB("k8s\000\012\023\012\010batch/v1\022\007CronJob\022\247\001\012"
	    "\023\012\003cj1\022\000\032\000\"\000*\0002\0008\000B\000\022"
	    "\215\001\012\013*/1 * * * *\032\000*|\012\023\012\003cj1\022\000"
	    "\032\000\"\000*\0002\0008\000B\000\022e2c\012\020\012\000\022"
	    "\000\032\000\"\000*\0002\0008\000B\000\022O\022(\012\003cj1\022"
	    "\007busybox\032\004date*\000B\000j\000r\000\200\001\000\210\001"
	    "\000\220\001\000\242\001\000\032\011OnFailure2\000B\000J\000R"
	    "\000X\000`\000h\000\202\001\000\212\001\000\232\001\000\302\001"
	    "\000\032\000\032\000\"\000"),
	    "{\"kind\":\"CronJob\",\"apiVersion\":\"batch/v1\",\"metadata\":{"
	    "\"name\":\"cj1\"},\"spec\":{\"schedule\":\"*/1 * * * *\",\"jobTe"
	    "mplate\":{\"metadata\":{\"name\":\"cj1\"},\"spec\":{\"template\""
	    ":{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"cj1\",\""
	    "image\":\"busybox\",\"command\":[\"date\"],\"resources\":{}}],\""
	    "restartPolicy\":\"OnFailure\"}}}}},\"status\":{}}"
	},
	{
	    "kubectl create service nodeport np1 --tcp=5678:8080 --node-port=30080",
	    PB("k8s\000\012\015\012\002v1\022\007Service\022m\012\037\012\003np1"
	    "\022\000\032\000\"\000*\0002\0008\000B\000Z\012\012\003app\022"
	    "\003np1\022F\012 \012\0115678-8080\022\003TCP\030\256,\"\007\010"
	    "\000\020\220\?\032\000(\200\353\001\022\012\012\003app\022\003np"
	    "1\032\000\"\010NodePort:\000B\000R\000Z\000`\000h\000\032\002"
	    "\012\000\032\000\"\000"),
	    "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"np1\",\"labels\":{\"app\":\"np1\"}},\"spec\":{\"ports\":[{"
	    "\"name\":\"5678-8080\",\"protocol\":\"TCP\",\"port\":5678,\"targ"
	    "etPort\":8080,\"nodePort\":30080}],\"selector\":{\"app\":\"np1\""
	    "},\"type\":\"NodePort\"},\"status\":{\"loadBalancer\":{}}}"
	},
	{
	    "kubectl create deployment multi --image=nginx --image=redis",
	    PB("k8s\000\012\025\012\007apps/v1\022\012Deployment\022\331\001\012"
	    "#\012\005multi\022\000\032\000\"\000*\0002\0008\000B\000Z\014"
	    "\012\003app\022\005multi\022\243\001\010\001\022\016\012\014\012"
	    "\003app\022\005multi\032\206\001\012\036\012\000\022\000\032\000"
	    "\"\000*\0002\0008\000B\000Z\014\012\003app\022\005multi\022d\022"
	    "\"\012\005nginx\022\005nginx*\000B\000j\000r\000\200\001\000\210"
	    "\001\000\220\001\000\242\001\000\022\"\012\005redis\022\005redis"
	    "*\000B\000j\000r\000\200\001\000\210\001\000\220\001\000\242\001"
	    "\000\032\0002\000B\000J\000R\000X\000`\000h\000\202\001\000\212"
	    "\001\000\232\001\000\302\001\000\"\002\012\000(\0008\000\032\014"
	    "\010\000\020\000\030\000 \000(\0008\000\032\000\"\000"),
	    "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\""
	    ":{\"name\":\"multi\",\"labels\":{\"app\":\"multi\"}},\"spec\":{"
	    "\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"multi\"}"
	    "},\"template\":{\"metadata\":{\"labels\":{\"app\":\"multi\"}},\""
	    "spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\","
	    "\"resources\":{}},{\"name\":\"redis\",\"image\":\"redis\",\"reso"
	    "urces\":{}}]}},\"strategy\":{}},\"status\":{}}"
	},
	{
	    "kubectl create secret docker-registry reg1 --docker-server=r.io --docker-username=u --docker-password=p",
	    PB("k8s\000\012\014\012\002v1\022\006Secret\022\215\001\012\024\012"
	    "\004reg1\022\000\032\000\"\000*\0002\0008\000B\000\022U\012\021."
	    "dockerconfigjson\022@{\"auths\":{\"r.io\":{\"username\":\"u\",\""
	    "password\":\"p\",\"auth\":\"dTpw\"}}}\032\036kubernetes.io/docke"
	    "rconfigjson\032\000\"\000"),
	    "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"reg1\"},\"data\":{\".dockerconfigjson\":\"eyJhdXRocyI6eyJyL"
	    "mlvIjp7InVzZXJuYW1lIjoidSIsInBhc3N3b3JkIjoicCIsImF1dGgiOiJkVHB3I"
	    "n19fQ==\"},\"type\":\"kubernetes.io/dockerconfigjson\"}"
	},
	{
	    "kubectl create quota q1 --hard=cpu=1,memory=1G,pods=2",
	    PB("k8s\000\012\023\012\002v1\022\015ResourceQuota\022A\012\022\012"
	    "\002q1\022\000\032\000\"\000*\0002\0008\000B\000\022)\012\012"
	    "\012\003cpu\022\003\012\0011\012\016\012\006memory\022\004\012"
	    "\0021G\012\013\012\004pods\022\003\012\0012\032\000\032\000\""
	    "\000"),
	    "{\"kind\":\"ResourceQuota\",\"apiVersion\":\"v1\",\"metadata\":{"
	    "\"name\":\"q1\"},\"spec\":{\"hard\":{\"cpu\":\"1\",\"memory\":\""
	    "1G\",\"pods\":\"2\"}},\"status\":{}}"
	},
	{
	    "kubectl create role r1 --verb=get --resource=pods",
	    PB("k8s\000\012$\012\034rbac.authorization.k8s.io/v1\022\004Role\022"
	    "#\012\022\012\002r1\022\000\032\000\"\000*\0002\0008\000B\000"
	    "\022\015\012\003get\022\000\032\004pods\032\000\"\000"),
	    "{\"kind\":\"Role\",\"apiVersion\":\"rbac.authorization.k8s.io/v1"
	    "\",\"metadata\":{\"name\":\"r1\"},\"rules\":[{\"verbs\":[\"get\""
	    "],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}"
	},
	{
	    "kubectl auth can-i create pods -n ns1",
	    PB("k8s\000\0122\012\027authorization.k8s.io/v1\022\027SelfSubjec"
	    "tAccessReview\022;\012\020\012\000\022\000\032\000\042\000*\000"
	    "2\0008\000B\000\022\035\012\033\012\003ns1\022\006create\032"
	    "\000\042\000*\004pods2\000:\000\032\010\010\000\022\000\032"
	    "\000 \000\032\000\042\000"),
	    "{\"kind\":\"SelfSubjectAccessReview\",\"apiVersion\":\"authoriz"
	    "ation.k8s.io/v1\",\"metadata\":{},\"spec\":{\"resourceAttribut"
	    "es\":{\"namespace\":\"ns1\",\"verb\":\"create\",\"resource\":"
	    "\"pods\"}},\"status\":{\"allowed\":false}}"
	},
	{
	    "kubectl auth can-i get /healthz",
	    PB("k8s\000\0122\012\027authorization.k8s.io/v1\022\027SelfSubjec"
	    "tAccessReview\022/\012\020\012\000\022\000\032\000\042\000*\000"
	    "2\0008\000B\000\022\021\022\017\012\010/healthz\022\003get\032"
	    "\010\010\000\022\000\032\000 \000\032\000\042\000"),
	    "{\"kind\":\"SelfSubjectAccessReview\",\"apiVersion\":\"authoriz"
	    "ation.k8s.io/v1\",\"metadata\":{},\"spec\":{\"nonResourceAttri"
	    "butes\":{\"path\":\"/healthz\",\"verb\":\"get\"}},\"status\":{"
	    "\"allowed\":false}}"
	},
	{
	    "kubectl auth can-i --list -n ns1",
	    PB("k8s\000\0121\012\027authorization.k8s.io/v1\022\026SelfSubjec"
	    "tRulesReview\022\037\012\020\012\000\022\000\032\000\042\000*"
	    "\0002\0008\000B\000\022\005\012\003ns1\032\004\030\000\042\000"
	    "\032\000\042\000"),
	    "{\"kind\":\"SelfSubjectRulesReview\",\"apiVersion\":\"authoriza"
	    "tion.k8s.io/v1\",\"metadata\":{},\"spec\":{\"namespace\":\"ns1"
	    "\"},\"status\":{}}"
	},
	{
	    "kubectl create pdb pdb1 --selector=app=x --min-available=1",
	    PB("k8s\000\012 \012\011policy/v1\022\023PodDisruptionBudget\0228"
	    "\012\024\012\004pdb1\022\000\032\000\"\000*\0002\0008\000B\000"
	    "\022\024\012\006\010\000\020\001\032\000\022\012\012\010\012\003"
	    "app\022\001x\032\012\010\000\030\000 \000(\0000\000\032\000\""
	    "\000"),
	    "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\","
	    "\"metadata\":{\"name\":\"pdb1\"},\"spec\":{\"minAvailable\":1,\""
	    "selector\":{\"matchLabels\":{\"app\":\"x\"}}},\"status\":{\"disr"
	    "uptionsAllowed\":0,\"currentHealthy\":0,\"desiredHealthy\":0,\"e"
	    "xpectedPods\":0}}"
	},
	{
	    "kubectl create ingress ing1 --rule=\"foo.com/bar=svc1:8080\"",
	    PB("k8s\000\012\037\012\024networking.k8s.io/v1\022\007Ingress\022K"
	    "\012\024\012\004ing1\022\000\032\000\"\000*\0002\0008\000B\000"
	    "\022/\032-\012\007foo.com\022\"\012 \012\036\012\004/bar\022\017"
	    "\"\015\012\004svc1\022\005\012\000\020\220\?\032\005Exact\032"
	    "\002\012\000\032\000\"\000"),
	    "{\"kind\":\"Ingress\",\"apiVersion\":\"networking.k8s.io/v1\",\""
	    "metadata\":{\"name\":\"ing1\"},\"spec\":{\"rules\":[{\"host\":\""
	    "foo.com\",\"http\":{\"paths\":[{\"path\":\"/bar\",\"pathType\":"
	    "\"Exact\",\"backend\":{\"service\":{\"name\":\"svc1\",\"port\":{"
	    "\"number\":8080}}}}]}}]},\"status\":{\"loadBalancer\":{}}}"
	},
	{
	    "kubectl create job jrich --from=cronjob/rich (a CronJob with a rich pod template)",
	    PB("k8s\000\012\017\012\010batch/v1\022\003Job\022\271\011\012\237"
	    "\001\012\005jrich\022\000\032\000\"\000*\0002\0008\000B\000Z\015"
	    "\012\004tier\022\005batchb+\012!cronjob.kubernetes.io/instantiat"
	    "e\022\006manualb\011\012\004note\022\001xjA\012\007CronJob\032"
	    "\004rich\"$0d5c1c50-8a2e-4a5e-9e1c-1234567890ab*\010batch/v10"
	    "\001\022\212\010\010\003\020\006\030\330\0042\361\007\0129\012"
	    "\000\022\000\032\000\"\000*\0002\0008\000B\000Z\013\012\003app"
	    "\022\004richZ\032\012\020example.com/role\022\006worker\022\263"
	    "\007\012\035\012\007scratch\022\022\022\020\012\006Memory\022"
	    "\006\012\00464Mi\012\"\012\003cfg\022\033\232\001\030\012\004"
	    "\012\002c1\022\015\012\001a\022\005a.txt\030\200\002\030\244\002"
	    "\012\017\012\003sec\022\0102\006\012\002s1 \001\012\037\012\004h"
	    "ost\022\027\012\025\012\010/var/log\022\011Directory\012\022\012"
	    "\004data\022\012R\010\012\004pvc1\020\001\012\015\012\005empty"
	    "\022\004\022\002\012\000\022\254\004\012\004main\022\027registry"
	    ".example/app:v1\032\010/bin/app\"\006--flag\"\000\"\005\303\274b"
	    "er*\005/work2\022\012\004http\020\000\030\220\?\"\003TCP*\0002"
	    "\027\012\000\020\351)\0305\"\003UDP*\011127.0.0.1:\016\012\005PL"
	    "AIN\022\005hello:\011\012\005EMPTY\022\000:\032\012\007FROM_CM"
	    "\022\000\032\015\032\013\012\004\012\002c1\022\001a\030\000:\034"
	    "\012\013FROM_SECRET\022\000\032\013\"\011\012\004\012\002s1\022"
	    "\001k:!\012\010POD_NAME\022\000\032\023\012\021\012\000\022\015m"
	    "etadata.name:%\012\011CPU_LIMIT\022\000\032\026\022\024\012\000"
	    "\022\012limits.cpu\032\004\012\0021mBV\012\012\012\003cpu\022"
	    "\003\012\0012\012\017\012\006memory\022\005\012\0031Gi\012\025"
	    "\012\016nvidia.com/gpu\022\003\012\0011\022\015\012\003cpu\022"
	    "\006\012\004500m\022\021\012\006memory\022\007\012\005256MiJ\031"
	    "\012\007scratch\020\000\032\010/scratch\"\0002\000J\032\012\003c"
	    "fg\020\001\032\010/etc/cfg\"\005a.txt2\000R%\012\031\022\027\012"
	    "\010/healthz\022\007\010\000\020\220\?\032\000\032\000\"\000\020"
	    "\000\030\000 \000(\0000\000j\024/dev/termination-logr\014IfNotPr"
	    "esentz\003 \350\007\200\001\001\210\001\001\220\001\001\232\001"
	    "\015\012\003CM_\022\006\012\004\012\002c1\232\001\014\012\000"
	    "\032\010\012\004\012\002s1\020\001\242\001\025FallbackToLogsOnEr"
	    "ror\032\005Never \000(\254\0022\014ClusterFirst:\013\012\004disk"
	    "\022\003ssd:\011\012\004zone\022\001aB\006runnerJ\000R\000X\001`"
	    "\000h\000\202\001\000\212\001\000\232\001\007volcano\242\001;"
	    "\012\004init\022\014busybox:1.36\032\002sh\032\002-c\032\011echo"
	    " init*\000B\000j\000r\000\200\001\000\210\001\000\220\001\000"
	    "\242\001\000\250\001\000\262\001#\012\011dedicated\022\005Equal"
	    "\032\003gpu\"\012NoSchedule\262\001\031\012\000\022\006Exists"
	    "\032\000\"\011NoExecute(\036\302\001\003low\310\001\373\377\377"
	    "\377\377\377\377\377\377\001\360\001\0008\000@\000J\007IndexedP"
	    "\000\032\010 \000(\0000\000:\000\032\000\"\000"),
	    "{\"kind\":\"Job\",\"apiVersion\":\"batch/v1\",\"metadata\":{\"na"
	    "me\":\"jrich\",\"labels\":{\"tier\":\"batch\"},\"annotations\":{"
	    "\"cronjob.kubernetes.io/instantiate\":\"manual\",\"note\":\"x\"}"
	    ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\",\"kind\":\"Cr"
	    "onJob\",\"name\":\"rich\",\"uid\":\"0d5c1c50-8a2e-4a5e-9e1c-1234"
	    "567890ab\",\"controller\":true}]},\"spec\":{\"parallelism\":3,\""
	    "completions\":6,\"activeDeadlineSeconds\":600,\"backoffLimit\":0"
	    ",\"template\":{\"metadata\":{\"labels\":{\"app\":\"rich\",\"exam"
	    "ple.com/role\":\"worker\"}},\"spec\":{\"volumes\":[{\"name\":\"s"
	    "cratch\",\"emptyDir\":{\"medium\":\"Memory\",\"sizeLimit\":\"64M"
	    "i\"}},{\"name\":\"cfg\",\"configMap\":{\"name\":\"c1\",\"items\""
	    ":[{\"key\":\"a\",\"path\":\"a.txt\",\"mode\":256}],\"defaultMode"
	    "\":292}},{\"name\":\"sec\",\"secret\":{\"secretName\":\"s1\",\"o"
	    "ptional\":true}},{\"name\":\"host\",\"hostPath\":{\"path\":\"/va"
	    "r/log\",\"type\":\"Directory\"}},{\"name\":\"data\",\"persistent"
	    "VolumeClaim\":{\"claimName\":\"pvc1\",\"readOnly\":true}},{\"nam"
	    "e\":\"empty\",\"emptyDir\":{}}],\"initContainers\":[{\"name\":\""
	    "init\",\"image\":\"busybox:1.36\",\"command\":[\"sh\",\"-c\",\"e"
	    "cho init\"],\"resources\":{}}],\"containers\":[{\"name\":\"main"
	    "\",\"image\":\"registry.example/app:v1\",\"command\":[\"/bin/app"
	    "\"],\"args\":[\"--flag\",\"\",\"\\u00fcber\"],\"workingDir\":\"/"
	    "work\",\"ports\":[{\"name\":\"http\",\"containerPort\":8080,\"pr"
	    "otocol\":\"TCP\"},{\"hostPort\":5353,\"containerPort\":53,\"prot"
	    "ocol\":\"UDP\",\"hostIP\":\"127.0.0.1\"}],\"envFrom\":[{\"prefix"
	    "\":\"CM_\",\"configMapRef\":{\"name\":\"c1\"}},{\"secretRef\":{"
	    "\"name\":\"s1\",\"optional\":true}}],\"env\":[{\"name\":\"PLAIN"
	    "\",\"value\":\"hello\"},{\"name\":\"EMPTY\"},{\"name\":\"FROM_CM"
	    "\",\"valueFrom\":{\"configMapKeyRef\":{\"name\":\"c1\",\"key\":"
	    "\"a\",\"optional\":false}}},{\"name\":\"FROM_SECRET\",\"valueFro"
	    "m\":{\"secretKeyRef\":{\"name\":\"s1\",\"key\":\"k\"}}},{\"name"
	    "\":\"POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"met"
	    "adata.name\"}}},{\"name\":\"CPU_LIMIT\",\"valueFrom\":{\"resourc"
	    "eFieldRef\":{\"resource\":\"limits.cpu\",\"divisor\":\"1m\"}}}],"
	    "\"resources\":{\"limits\":{\"cpu\":\"2\",\"memory\":\"1Gi\",\"nv"
	    "idia.com/gpu\":\"1\"},\"requests\":{\"cpu\":\"500m\",\"memory\":"
	    "\"256Mi\"}},\"volumeMounts\":[{\"name\":\"scratch\",\"mountPath"
	    "\":\"/scratch\"},{\"name\":\"cfg\",\"readOnly\":true,\"mountPath"
	    "\":\"/etc/cfg\",\"subPath\":\"a.txt\"}],"
	    "\"livenessProbe\":{\"httpGet\":{\"path\":\"/healthz\",\"port\":8080}},"
	    "\"securityContext\":{\"runAsUser\":1000},\"terminationMessagePath"
	    "\":\"/dev/termination-log\",\"terminationMessagePolicy\":\"Fallb"
	    "ackToLogsOnError\",\"imagePullPolicy\":\"IfNotPresent\",\"stdin"
	    "\":true,\"stdinOnce\":true,\"tty\":true}],\"restartPolicy\":\"Ne"
	    "ver\",\"terminationGracePeriodSeconds\":0,\"activeDeadlineSecond"
	    "s\":300,\"dnsPolicy\":\"ClusterFirst\",\"nodeSelector\":{\"disk"
	    "\":\"ssd\",\"zone\":\"a\"},\"serviceAccountName\":\"runner\",\"a"
	    "utomountServiceAccountToken\":false,\"hostNetwork\":true,\"sched"
	    "ulerName\":\"volcano\",\"tolerations\":[{\"key\":\"dedicated\","
	    "\"operator\":\"Equal\",\"value\":\"gpu\",\"effect\":\"NoSchedule"
	    "\"},{\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerati"
	    "onSeconds\":30}],\"priorityClassName\":\"low\",\"priority\":-5,"
	    "\"enableServiceLinks\":false}},\"ttlSecondsAfterFinished\":0,\"c"
	    "ompletionMode\":\"Indexed\",\"suspend\":false},\"status\":{}}"
	},
	{
	    "kubectl create priorityclass neg --value=-10",
	    PB("k8s\000\012%\012\024scheduling.k8s.io/v1\022\015PriorityClass"
	    "\022:\012\023\012\003neg\022\000\032\000\"\000*\0002\0008\000B"
	    "\000\020\366\377\377\377\377\377\377\377\377\001\030\000\"\000*"
	    "\024PreemptLowerPriority\032\000\"\000"),
	    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v"
	    "1\",\"metadata\":{\"name\":\"neg\"},\"value\":-10,\"preemptionPo"
	    "licy\":\"PreemptLowerPriority\"}"
	},
	{
	    "kubectl create deployment zero --image=nginx --replicas=0",
	    PB("k8s\000\012\025\012\007apps/v1\022\012Deployment\022\257\001\012"
	    "!\012\004zero\022\000\032\000\"\000*\0002\0008\000B\000Z\013\012"
	    "\003app\022\004zero\022|\010\000\022\015\012\013\012\003app\022"
	    "\004zero\032a\012\035\012\000\022\000\032\000\"\000*\0002\0008"
	    "\000B\000Z\013\012\003app\022\004zero\022@\022\"\012\005nginx"
	    "\022\005nginx*\000B\000j\000r\000\200\001\000\210\001\000\220"
	    "\001\000\242\001\000\032\0002\000B\000J\000R\000X\000`\000h\000"
	    "\202\001\000\212\001\000\232\001\000\302\001\000\"\002\012\000("
	    "\0008\000\032\014\010\000\020\000\030\000 \000(\0008\000\032\000"
	    "\"\000"),
	    "{\"kind\":\"Deployment\",\"apiVersion\":\"apps/v1\",\"metadata\""
	    ":{\"name\":\"zero\",\"labels\":{\"app\":\"zero\"}},\"spec\":{\"r"
	    "eplicas\":0,\"selector\":{\"matchLabels\":{\"app\":\"zero\"}},\""
	    "template\":{\"metadata\":{\"labels\":{\"app\":\"zero\"}},\"spec"
	    "\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx\",\"re"
	    "sources\":{}}]}},\"strategy\":{}},\"status\":{}}"
	},
	{
	    "kubectl create configmap cbin --from-file=bin.dat --from-file=text.txt",
	    PB("k8s\000\012\017\012\002v1\022\011ConfigMap\022D\012\024\012\004c"
	    "bin\022\000\032\000\"\000*\0002\0008\000B\000\022\030\012\010tex"
	    "t.txt\022\014line1\012line2\012\032\022\012\007bin.dat\022\007"
	    "\000\001\377\376bin\032\000\"\000"),
	    "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"na"
	    "me\":\"cbin\"},\"data\":{\"text.txt\":\"line1\\nline2\\n\"},\"bi"
	    "naryData\":{\"bin.dat\":\"AAH//mJpbg==\"}}"
	},
	{
	    "kubectl create rolebinding rb1 --role=r1 --user=alice --serviceaccount=default:sa1 --group=devs",
	    PB("k8s\000\012+\012\034rbac.authorization.k8s.io/v1\022\013RoleBind"
	    "ing\022\266\001\012\023\012\003rb1\022\000\032\000\"\000*\0002"
	    "\0008\000B\000\022*\012\004User\022\031rbac.authorization.k8s.io"
	    "\032\005alice\"\000\022*\012\005Group\022\031rbac.authorization."
	    "k8s.io\032\004devs\"\000\022 \012\016ServiceAccount\022\000\032"
	    "\003sa1\"\007default\032%\012\031rbac.authorization.k8s.io\022"
	    "\004Role\032\002r1\032\000\"\000"),
	    "{\"kind\":\"RoleBinding\",\"apiVersion\":\"rbac.authorization.k8"
	    "s.io/v1\",\"metadata\":{\"name\":\"rb1\"},\"subjects\":[{\"kind"
	    "\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\",\"name\":"
	    "\"alice\"},{\"kind\":\"Group\",\"apiGroup\":\"rbac.authorization"
	    ".k8s.io\",\"name\":\"devs\"},{\"kind\":\"ServiceAccount\",\"name"
	    "\":\"sa1\",\"namespace\":\"default\"}],\"roleRef\":{\"apiGroup\""
	    ":\"rbac.authorization.k8s.io\",\"kind\":\"Role\",\"name\":\"r1\""
	    "}}"
	},
	{
	    "kubectl create clusterrole cr1 --aggregation-rule=\"rbac.example.com/aggregate=true\"",
	    PB("k8s\000\012+\012\034rbac.authorization.k8s.io/v1\022\013ClusterR"
	    "ole\022=\012\023\012\003cr1\022\000\032\000\"\000*\0002\0008\000"
	    "B\000\032&\012$\012\"\012\032rbac.example.com/aggregate\022\004t"
	    "rue\032\000\"\000"),
	    "{\"kind\":\"ClusterRole\",\"apiVersion\":\"rbac.authorization.k8"
	    "s.io/v1\",\"metadata\":{\"name\":\"cr1\"},\"aggregationRule\":{"
	    "\"clusterRoleSelectors\":[{\"matchLabels\":{\"rbac.example.com/a"
	    "ggregate\":\"true\"}}]}}"
	},
	{
	    "kubectl create clusterrolebinding crb1 --clusterrole=cr1 --user=bob",
	    PB("k8s\000\0122\012\034rbac.authorization.k8s.io/v1\022\022ClusterR"
	    "oleBinding\022o\012\024\012\004crb1\022\000\032\000\"\000*\0002"
	    "\0008\000B\000\022(\012\004User\022\031rbac.authorization.k8s.io"
	    "\032\003bob\"\000\032-\012\031rbac.authorization.k8s.io\022\013C"
	    "lusterRole\032\003cr1\032\000\"\000"),
	    "{\"kind\":\"ClusterRoleBinding\",\"apiVersion\":\"rbac.authoriza"
	    "tion.k8s.io/v1\",\"metadata\":{\"name\":\"crb1\"},\"subjects\":["
	    "{\"kind\":\"User\",\"apiGroup\":\"rbac.authorization.k8s.io\",\""
	    "name\":\"bob\"}],\"roleRef\":{\"apiGroup\":\"rbac.authorization."
	    "k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"cr1\"}}"
	},
	{
	    "kubectl create ingress ing2 --class=nginx --rule=\"foo.com/*=svc1:http,tls=my-cert\" --default-backend=defsvc:80",
	    PB("k8s\000\012\037\012\024networking.k8s.io/v1\022\007Ingress\022y"
	    "\012\024\012\004ing2\022\000\032\000\"\000*\0002\0008\000B\000"
	    "\022]\012\020\"\016\012\006defsvc\022\004\012\000\020P\022\022"
	    "\012\007foo.com\022\007my-cert\032.\012\007foo.com\022#\012!\012"
	    "\037\012\001/\022\022\"\020\012\004svc1\022\010\012\004http\020"
	    "\000\032\006Prefix\"\005nginx\032\002\012\000\032\000\"\000"),
	    "{\"kind\":\"Ingress\",\"apiVersion\":\"networking.k8s.io/v1\",\""
	    "metadata\":{\"name\":\"ing2\"},\"spec\":{\"ingressClassName\":\""
	    "nginx\",\"defaultBackend\":{\"service\":{\"name\":\"defsvc\",\"p"
	    "ort\":{\"number\":80}}},\"tls\":[{\"hosts\":[\"foo.com\"],\"secr"
	    "etName\":\"my-cert\"}],\"rules\":[{\"host\":\"foo.com\",\"http\""
	    ":{\"paths\":[{\"path\":\"/\",\"pathType\":\"Prefix\",\"backend\""
	    ":{\"service\":{\"name\":\"svc1\",\"port\":{\"name\":\"http\"}}}}"
	    "]}}]},\"status\":{\"loadBalancer\":{}}}"
	},
	{
	    "kubectl create priorityclass pc2 --value=5 --global-default=true --preemption-policy=Never",
	    PB("k8s\000\012%\012\024scheduling.k8s.io/v1\022\015PriorityClass"
	    "\022\"\012\023\012\003pc2\022\000\032\000\"\000*\0002\0008\000B"
	    "\000\020\005\030\001\"\000*\005Never\032\000\"\000"),
	    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v"
	    "1\",\"metadata\":{\"name\":\"pc2\"},\"value\":5,\"globalDefault"
	    "\":true,\"preemptionPolicy\":\"Never\"}"
	},
	{
	    "kubectl create secret generic s2 --type=Opaque --from-literal=k=v --from-literal=e=",
	    PB("k8s\000\012\014\012\002v1\022\006Secret\022+\012\022\012\002s2"
	    "\022\000\032\000\"\000*\0002\0008\000B\000\022\005\012\001e\022"
	    "\000\022\006\012\001k\022\001v\032\006Opaque\032\000\"\000"),
	    "{\"kind\":\"Secret\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"s2\"},\"data\":{\"e\":\"\",\"k\":\"dg==\"},\"type\":\"Opaqu"
	    "e\"}"
	},
	{
	    "kubectl create pdb pdb2 --selector=app=x --max-unavailable=25%",
	    PB("k8s\000\012 \012\011policy/v1\022\023PodDisruptionBudget\022;"
	    "\012\024\012\004pdb2\022\000\032\000\"\000*\0002\0008\000B\000"
	    "\022\027\022\012\012\010\012\003app\022\001x\032\011\010\001\020"
	    "\000\032\00325%\032\012\010\000\030\000 \000(\0000\000\032\000\""
	    "\000"),
	    "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\","
	    "\"metadata\":{\"name\":\"pdb2\"},\"spec\":{\"selector\":{\"match"
	    "Labels\":{\"app\":\"x\"}},\"maxUnavailable\":\"25%\"},\"status\""
	    ":{\"disruptionsAllowed\":0,\"currentHealthy\":0,\"desiredHealthy"
	    "\":0,\"expectedPods\":0}}"
	},
	{
	    "kubectl create service externalname ext1 --external-name=db.example.com",
	    PB("k8s\000\012\015\012\002v1\022\007Service\022`\012!\012\004ext1"
	    "\022\000\032\000\"\000*\0002\0008\000B\000Z\013\012\003app\022"
	    "\004ext1\0227\022\013\012\003app\022\004ext1\032\000\"\014Extern"
	    "alName:\000B\000R\016db.example.comZ\000`\000h\000\032\002\012"
	    "\000\032\000\"\000"),
	    "{\"kind\":\"Service\",\"apiVersion\":\"v1\",\"metadata\":{\"name"
	    "\":\"ext1\",\"labels\":{\"app\":\"ext1\"}},\"spec\":{\"selector"
	    "\":{\"app\":\"ext1\"},\"type\":\"ExternalName\",\"externalName\""
	    ":\"db.example.com\"},\"status\":{\"loadBalancer\":{}}}"
	},
	{
	    "kubectl create token sa1 (no --dry-run; expected written by hand)",
	    PB("k8s\000\012(\012\030authentication.k8s.io/v1\022\014TokenRequest"
	    "\022\032\012\020\012\000\022\000\032\000\"\000*\0002\0008\000B"
	    "\000\022\000\032\004\012\000\022\000\032\000\"\000"),
	    "{\"kind\":\"TokenRequest\",\"apiVersion\":\"authentication.k8s.i"
	    "o/v1\",\"metadata\":{},\"spec\":{},\"status\":{}}"
	},
};

#define NFIXTURES	(sizeof fixtures / sizeof fixtures[0])

/* A protobuf message under construction, for hand-encoded bodies. */
struct buf {
	uint8_t	d[2048];
	size_t	n;
};

static void
put_raw(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > sizeof b->d) {
		fprintf(stderr, "test buffer too small\n");
		exit(2);
	}
	memcpy(b->d + b->n, p, n);
	b->n += n;
}

static void
put_varint(struct buf *b, uint64_t v)
{
	uint8_t	c;

	do {
		c = v & 0x7f;
		v >>= 7;
		if (v != 0)
			c |= 0x80;
		put_raw(b, &c, 1);
	} while (v != 0);
}

static void
put_key(struct buf *b, uint32_t num, int wt)
{
	put_varint(b, (uint64_t)num << 3 | (uint64_t)wt);
}

/* An int32 or int64 field: negative values are ten-byte varints. */
static void
put_int(struct buf *b, uint32_t num, int64_t v)
{
	put_key(b, num, 0);
	put_varint(b, (uint64_t)v);
}

static void
put_bytes(struct buf *b, uint32_t num, const void *p, size_t n)
{
	put_key(b, num, 2);
	put_varint(b, n);
	put_raw(b, p, n);
}

static void
put_str(struct buf *b, uint32_t num, const char *s)
{
	put_bytes(b, num, s, strlen(s));
}

static void
put_msg(struct buf *b, uint32_t num, const struct buf *m)
{
	put_bytes(b, num, m->d, m->n);
}

/* A map entry {1 key, 2 value}. */
static void
put_entry(struct buf *b, uint32_t num, const char *k, const char *v)
{
	struct buf	e = { .n = 0 };

	put_str(&e, 1, k);
	put_str(&e, 2, v);
	put_msg(b, num, &e);
}

/* Wrap an object message in the "k8s\0" + runtime.Unknown envelope. */
static void
envelope(struct buf *out, const char *api_version, const char *kind,
    const struct buf *raw)
{
	struct buf	tm = { .n = 0 };

	out->n = 0;
	put_raw(out, "k8s", 4);
	put_str(&tm, 1, api_version);
	put_str(&tm, 2, kind);
	put_msg(out, 1, &tm);
	put_msg(out, 2, raw);
	put_str(out, 3, "");
	put_str(out, 4, "");
}

/*
 * Decode from an exact-size heap copy, so that valgrind and ASan see any read
 * past the end. Every failure must come with a cause.
 */
static cJSON *
decode(const void *p, size_t n, char **cause)
{
	cJSON	*obj;
	void	*copy;

	*cause = NULL;
	if ((copy = malloc(n ? n : 1)) == NULL)
		exit(2);
	memcpy(copy, p, n);
	obj = protobuf_decode(copy, n, cause);
	free(copy);
	if (obj == NULL && *cause == NULL) {
		check_failures++;
		fprintf(stderr, "decode failed without a cause\n");
	}
	if (obj != NULL && (*cause != NULL || !cJSON_IsObject(obj))) {
		check_failures++;
		fprintf(stderr, "decode returned a non-object or a cause\n");
	}
	return obj;
}

/* Decode a hand-built object of the given kind. */
static cJSON *
decode_object(const char *api_version, const char *kind,
    const struct buf *raw, char **cause)
{
	struct buf	body;

	envelope(&body, api_version, kind, raw);
	return decode(body.d, body.n, cause);
}

/* Follow a dotted path ("spec.ports.0.port") through objects and arrays. */
static cJSON *
at(cJSON *j, const char *path)
{
	char	 buf[256], *tok, *last;

	snprintf(buf, sizeof buf, "%s", path);
	for (tok = strtok_r(buf, ".", &last); tok != NULL && j != NULL;
	    tok = strtok_r(NULL, ".", &last)) {
		if (cJSON_IsArray(j))
			j = cJSON_GetArrayItem(j, atoi(tok));
		else
			j = cJSON_GetObjectItemCaseSensitive(j, tok);
	}
	return j;
}

static const char *
str_at(cJSON *j, const char *path)
{
	cJSON	*v = at(j, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double
num_at(cJSON *j, const char *path)
{
	cJSON	*v = at(j, path);

	return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

/* Every captured body decodes to exactly what kubectl would send as JSON. */
static void
test_captured(void)
{
	const struct fixture	*fx;
	cJSON			*got, *want;
	char			*cause, *s;
	size_t			 i;

	for (i = 0; i < NFIXTURES; i++) {
		fx = &fixtures[i];
		got = decode(fx->pb, fx->len, &cause);
		want = cJSON_Parse(fx->json);
		CHECK(want != NULL);
		if (got == NULL)
			fprintf(stderr, "%s: %s\n", fx->what, cause);
		CHECK(got != NULL && cJSON_Compare(got, want, 1));
		if (got != NULL && !cJSON_Compare(got, want, 1)) {
			s = cJSON_PrintUnformatted(got);
			fprintf(stderr, "%s:\n   got: %s\n  want: %s\n", fx->what,
			    s, fx->json);
			free(s);
		}
		cJSON_Delete(got);
		cJSON_Delete(want);
		free(cause);
	}
}

static cJSON *
decode_fixture(const char *prefix)
{
	char	*cause;
	size_t	 i;

	for (i = 0; i < NFIXTURES; i++) {
		if (strncmp(fixtures[i].what, prefix, strlen(prefix)) == 0)
			return decode(fixtures[i].pb, fixtures[i].len, &cause);
	}
	fprintf(stderr, "no fixture %s\n", prefix);
	exit(2);
}

/* The fields the rest of the server relies on, spelled out. */
static void
test_captured_fields(void)
{
	cJSON	*j;

	j = decode_fixture("kubectl create namespace t1");
	CHECK_STR(str_at(j, "apiVersion"), "v1");
	CHECK_STR(str_at(j, "kind"), "Namespace");
	CHECK_STR(str_at(j, "metadata.name"), "t1");
	CHECK(at(j, "metadata.creationTimestamp") == NULL);
	CHECK(at(j, "metadata.generation") == NULL);
	CHECK(at(j, "metadata.namespace") == NULL);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create configmap c1");
	CHECK_STR(str_at(j, "data.a"), "b");
	CHECK_STR(str_at(j, "data.empty"), "");
	CHECK(at(j, "immutable") == NULL);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create secret generic s1");
	CHECK_STR(str_at(j, "data.k"), "dg==");
	CHECK(at(j, "type") == NULL);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create deployment web");
	CHECK_STR(str_at(j, "apiVersion"), "apps/v1");
	CHECK_STR(str_at(j, "metadata.labels.app"), "web");
	CHECK(num_at(j, "spec.replicas") == 2);
	CHECK_STR(str_at(j, "spec.selector.matchLabels.app"), "web");
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.name"), "nginx");
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.image"), "nginx");
	CHECK(num_at(j, "spec.template.spec.containers.0.ports.0."
	    "containerPort") == 80);
	CHECK(cJSON_IsObject(at(j, "spec.strategy")));
	CHECK(at(j, "spec.paused") == NULL);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create deployment zero");
	CHECK(num_at(j, "spec.replicas") == 0);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create job j1");
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.command.1"), "hi");
	CHECK_STR(str_at(j, "spec.template.spec.restartPolicy"), "Never");
	cJSON_Delete(j);

	j = decode_fixture("kubectl create service clusterip svc1");
	CHECK(num_at(j, "spec.ports.0.port") == 80);
	CHECK(num_at(j, "spec.ports.0.targetPort") == 8080);
	CHECK_STR(str_at(j, "spec.ports.0.name"), "80-8080");
	CHECK_STR(str_at(j, "spec.ports.0.protocol"), "TCP");
	CHECK_STR(str_at(j, "spec.selector.app"), "svc1");
	CHECK_STR(str_at(j, "spec.type"), "ClusterIP");
	cJSON_Delete(j);

	j = decode_fixture("kubectl create priorityclass neg");
	CHECK(num_at(j, "value") == -10);
	cJSON_Delete(j);

	j = decode_fixture("kubectl create quota q1");
	CHECK_STR(str_at(j, "spec.hard.memory"), "1G");
	cJSON_Delete(j);

	j = decode_fixture("kubectl create pdb pdb2");
	CHECK_STR(str_at(j, "spec.maxUnavailable"), "25%");
	cJSON_Delete(j);

	j = decode_fixture("kubectl create job jrich");
	CHECK(num_at(j, "spec.backoffLimit") == 0);
	CHECK(num_at(j, "spec.template.spec.terminationGracePeriodSeconds") ==
	    0);
	CHECK(num_at(j, "spec.template.spec.priority") == -5);
	CHECK(cJSON_IsFalse(at(j, "spec.template.spec."
	    "automountServiceAccountToken")));
	CHECK_STR(str_at(j, "metadata.ownerReferences.0.kind"), "CronJob");
	CHECK(cJSON_IsTrue(at(j, "metadata.ownerReferences.0.controller")));
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.args.1"), "");
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.args.2"),
	    "\xc3\xbc" "ber");
	CHECK_STR(str_at(j, "spec.template.spec.volumes.1.configMap.name"),
	    "c1");
	CHECK_STR(str_at(j, "spec.template.spec.containers.0.env.2.valueFrom."
	    "configMapKeyRef.name"), "c1");
	CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(at(j, "spec.template."
	    "spec.containers.0.resources.limits"), "nvidia.com/gpu")), "1");
	CHECK(num_at(j, "spec.template.spec.containers.0.livenessProbe."
	    "httpGet.port") == 8080);
	CHECK(num_at(j, "spec.template.spec.containers.0.securityContext."
	    "runAsUser") == 1000);
	cJSON_Delete(j);
}

/* metav1.Time: RFC 3339 in UTC; the zero time is left out; range limits. */
static void
test_time(void)
{
	static const struct {
		int64_t		 secs;
		int32_t		 nanos;
		const char	*want;
	} cases[] = {
		{ 1715000000, 0, "2024-05-06T12:53:20Z" },
		{ 1715000000, 999999999, "2024-05-06T12:53:20Z" },
		{ 0, 0, "1970-01-01T00:00:00Z" },
		{ -86400, 0, "1969-12-31T00:00:00Z" },
		{ -1, 0, "1969-12-31T23:59:59Z" },
		{ 951782400, 0, "2000-02-29T00:00:00Z" },
		{ 253402300799, 0, "9999-12-31T23:59:59Z" },
		{ -62135596799, 0, "0001-01-01T00:00:01Z" },
		{ 10, -1, "1970-01-01T00:00:09Z" },
		{ 10, 2000000000, "1970-01-01T00:00:12Z" },
		{ -62135596800, 0, NULL },		/* Go's zero time */
		{ -62135596801, 1000000000, NULL },	/* zero, normalised */
	};
	struct buf	 meta, t, raw;
	cJSON		*j;
	char		*cause;
	size_t		 i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		meta.n = t.n = raw.n = 0;
		put_int(&t, 1, cases[i].secs);
		if (cases[i].nanos != 0)
			put_int(&t, 2, cases[i].nanos);
		put_str(&meta, 1, "t");
		put_msg(&meta, 9, &t);
		put_msg(&raw, 1, &meta);
		j = decode_object("v1", "Namespace", &raw, &cause);
		CHECK(j != NULL);
		if (cases[i].want != NULL)
			CHECK_STR(str_at(j, "metadata.deletionTimestamp"),
			    cases[i].want);
		else
			CHECK(at(j, "metadata.deletionTimestamp") == NULL);
		CHECK_STR(str_at(j, "metadata.name"), "t");
		cJSON_Delete(j);
	}

	/* An empty Time message (what Go sends for the zero time). */
	meta.n = t.n = raw.n = 0;
	put_msg(&meta, 8, &t);
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j != NULL && at(j, "metadata.creationTimestamp") == NULL);
	cJSON_Delete(j);

	/* Year 10000 cannot be written in RFC 3339. */
	meta.n = t.n = raw.n = 0;
	put_int(&t, 1, 253402300800LL);
	put_msg(&meta, 8, &t);
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "range") != NULL);
	free(cause);
}

/*
 * DeleteOptions, the body of client-go's DELETE (controller-runtime sends
 * protobuf for built-in kinds): in any group version, empty as an
 * unconfigured Delete sends it, or with every field set.
 */
static void
test_delete_options(void)
{
	struct buf	 raw, pre;
	cJSON		*j, *want;
	char		*cause;

	raw.n = 0;
	j = decode_object("v1", "DeleteOptions", &raw, &cause);
	want = cJSON_Parse("{\"kind\":\"DeleteOptions\",\"apiVersion\":"
	    "\"v1\"}");
	CHECK(j != NULL && cJSON_Compare(j, want, 1));
	cJSON_Delete(j);
	cJSON_Delete(want);

	pre.n = 0;
	put_str(&pre, 1, "u1");
	put_int(&raw, 1, 0);
	put_msg(&raw, 2, &pre);
	put_int(&raw, 3, 0);
	put_str(&raw, 4, "Background");
	put_str(&raw, 5, "All");
	j = decode_object("batch/v1", "DeleteOptions", &raw, &cause);
	want = cJSON_Parse("{\"kind\":\"DeleteOptions\",\"apiVersion\":"
	    "\"batch/v1\",\"gracePeriodSeconds\":0,\"preconditions\":"
	    "{\"uid\":\"u1\"},\"orphanDependents\":false,"
	    "\"propagationPolicy\":\"Background\",\"dryRun\":[\"All\"]}");
	CHECK(j != NULL && cJSON_Compare(j, want, 1));
	if (j != NULL && !cJSON_Compare(j, want, 1)) {
		char *s = cJSON_PrintUnformatted(j);

		fprintf(stderr, "DeleteOptions: %s\n", s);
		free(s);
	}
	cJSON_Delete(j);
	cJSON_Delete(want);
}

/* IntOrString as a number or a string; Quantity; bytes as base64. */
static void
test_special_types(void)
{
	struct buf	 raw, spec, strat, ru, is, ent, q;
	cJSON		*j;
	char		*cause;

	raw.n = spec.n = strat.n = ru.n = 0;
	is.n = 0;
	put_int(&is, 1, 0);
	put_int(&is, 2, 0);
	put_msg(&ru, 1, &is);
	is.n = 0;
	put_int(&is, 1, 1);
	put_int(&is, 2, 0);
	put_str(&is, 3, "25%");
	put_msg(&ru, 2, &is);
	put_str(&strat, 1, "RollingUpdate");
	put_msg(&strat, 2, &ru);
	put_msg(&spec, 4, &strat);
	put_int(&spec, 5, 0);			/* minReadySeconds: omitted */
	put_int(&spec, 6, 0);			/* revisionHistoryLimit: kept */
	put_int(&spec, 9, -1);
	put_msg(&raw, 2, &spec);
	j = decode_object("apps/v1", "Deployment", &raw, &cause);
	CHECK(j != NULL);
	CHECK(cJSON_IsNumber(at(j, "spec.strategy.rollingUpdate."
	    "maxUnavailable")));
	CHECK(num_at(j, "spec.strategy.rollingUpdate.maxUnavailable") == 0);
	CHECK_STR(str_at(j, "spec.strategy.rollingUpdate.maxSurge"), "25%");
	CHECK_STR(str_at(j, "spec.strategy.type"), "RollingUpdate");
	CHECK(at(j, "spec.minReadySeconds") == NULL);
	CHECK(num_at(j, "spec.revisionHistoryLimit") == 0);
	CHECK(num_at(j, "spec.progressDeadlineSeconds") == -1);
	CHECK(at(j, "metadata") == NULL);
	cJSON_Delete(j);

	/* An IntOrString type other than 0 or 1 is refused. */
	raw.n = spec.n = strat.n = ru.n = is.n = 0;
	put_int(&is, 1, 7);
	put_msg(&ru, 1, &is);
	put_msg(&strat, 2, &ru);
	put_msg(&spec, 4, &strat);
	put_msg(&raw, 2, &spec);
	j = decode_object("apps/v1", "Deployment", &raw, &cause);
	CHECK(j == NULL && cause != NULL &&
	    strstr(cause, "IntOrString") != NULL);
	free(cause);

	/* binaryData at every base64 padding length; immutable false kept. */
	raw.n = 0;
	put_int(&raw, 4, 0);
	ent.n = 0;
	put_str(&ent, 1, "zero");
	put_bytes(&ent, 2, "", 0);
	put_msg(&raw, 3, &ent);
	ent.n = 0;
	put_str(&ent, 1, "one");
	put_bytes(&ent, 2, "\xff", 1);
	put_msg(&raw, 3, &ent);
	ent.n = 0;
	put_str(&ent, 1, "two");
	put_bytes(&ent, 2, "\x00\x01", 2);
	put_msg(&raw, 3, &ent);
	ent.n = 0;
	put_str(&ent, 1, "three");
	put_bytes(&ent, 2, "abc", 3);
	put_msg(&raw, 3, &ent);
	ent.n = 0;
	put_str(&ent, 1, "novalue");
	put_msg(&raw, 3, &ent);
	j = decode_object("v1", "ConfigMap", &raw, &cause);
	CHECK(j != NULL);
	CHECK(cJSON_IsFalse(at(j, "immutable")));
	CHECK_STR(str_at(j, "binaryData.zero"), "");
	CHECK_STR(str_at(j, "binaryData.one"), "/w==");
	CHECK_STR(str_at(j, "binaryData.two"), "AAE=");
	CHECK_STR(str_at(j, "binaryData.three"), "YWJj");
	CHECK_STR(str_at(j, "binaryData.novalue"), "");
	cJSON_Delete(j);

	/* Quantity map values: an empty Quantity is "0". */
	raw.n = spec.n = 0;
	ent.n = q.n = 0;
	put_str(&q, 1, "500m");
	put_str(&ent, 1, "cpu");
	put_msg(&ent, 2, &q);
	put_msg(&spec, 1, &ent);
	ent.n = q.n = 0;
	put_str(&ent, 1, "pods");
	put_msg(&ent, 2, &q);
	put_msg(&spec, 1, &ent);
	put_str(&spec, 2, "BestEffort");
	put_msg(&raw, 2, &spec);
	j = decode_object("v1", "ResourceQuota", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "spec.hard.cpu"), "500m");
	CHECK_STR(str_at(j, "spec.hard.pods"), "0");
	CHECK_STR(str_at(j, "spec.scopes.0"), "BestEffort");
	cJSON_Delete(j);
}

/*
 * A Pod's status in full, as a scheduler's pods/status update sends it (the
 * stored status with its PodScheduled condition): phase, conditions with
 * their times, qosClass, and a container's status with the zero values
 * JSON shows (ready false, restartCount 0, image and imageID).
 */
static void
test_pod_status(void)
{
	struct buf	 raw, st, cond, t, cs, state, w;
	cJSON		*j;
	char		*cause;

	raw.n = st.n = cond.n = t.n = cs.n = state.n = w.n = 0;
	put_str(&st, 1, "Pending");
	put_str(&cond, 1, "PodScheduled");
	put_str(&cond, 2, "False");
	put_msg(&cond, 3, &t);			/* lastProbeTime: zero, left out */
	put_int(&t, 1, 1715000000);
	put_msg(&cond, 4, &t);
	put_str(&cond, 5, "Unschedulable");
	put_str(&cond, 6, "0/2 nodes are available");
	put_msg(&st, 2, &cond);
	put_str(&st, 11, "vnode-1");
	put_str(&st, 9, "Burstable");
	put_str(&w, 1, "ContainerCreating");
	put_msg(&state, 1, &w);
	put_str(&cs, 1, "c");
	put_msg(&cs, 2, &state);
	put_int(&cs, 4, 0);
	put_int(&cs, 5, 0);
	put_str(&cs, 6, "busybox");
	put_str(&cs, 7, "");
	put_msg(&st, 8, &cs);
	put_msg(&raw, 3, &st);
	j = decode_object("v1", "Pod", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "status.phase"), "Pending");
	CHECK_STR(str_at(j, "status.conditions.0.type"), "PodScheduled");
	CHECK_STR(str_at(j, "status.conditions.0.status"), "False");
	CHECK_STR(str_at(j, "status.conditions.0.reason"), "Unschedulable");
	CHECK_STR(str_at(j, "status.conditions.0.message"),
	    "0/2 nodes are available");
	CHECK_STR(str_at(j, "status.conditions.0.lastTransitionTime"),
	    "2024-05-06T12:53:20Z");
	CHECK(at(j, "status.conditions.0.lastProbeTime") == NULL);
	CHECK_STR(str_at(j, "status.nominatedNodeName"), "vnode-1");
	CHECK_STR(str_at(j, "status.qosClass"), "Burstable");
	CHECK_STR(str_at(j, "status.containerStatuses.0.name"), "c");
	CHECK_STR(str_at(j, "status.containerStatuses.0.state.waiting.reason"),
	    "ContainerCreating");
	CHECK(cJSON_IsFalse(at(j, "status.containerStatuses.0.ready")));
	CHECK(num_at(j, "status.containerStatuses.0.restartCount") == 0);
	CHECK_STR(str_at(j, "status.containerStatuses.0.image"), "busybox");
	CHECK_STR(str_at(j, "status.containerStatuses.0.imageID"), "");
	CHECK(at(j, "status.containerStatuses.0.started") == NULL);
	cJSON_Delete(j);
}

/*
 * A pod's projected service-account token volume (kube-api-access-XXXXX)
 * and a downwardAPI volume: KubeRay's operator updates its pods in
 * protobuf, and the volumes were decoded as a bare name.
 */
static void
test_projected_volume(void)
{
	struct buf	 raw, spec, vol, src, proj, p1, p2, p3, tok, cm, ref, kp,
			 dapi, file, sel, dvol;
	cJSON		*j;
	char		*cause;

	raw.n = spec.n = vol.n = src.n = proj.n = p1.n = p2.n = p3.n = 0;
	tok.n = cm.n = ref.n = kp.n = dapi.n = file.n = sel.n = dvol.n = 0;
	put_int(&tok, 2, 3607);
	put_str(&tok, 3, "token");
	put_msg(&p1, 4, &tok);
	put_str(&ref, 1, "kube-root-ca.crt");
	put_msg(&cm, 1, &ref);
	put_str(&kp, 1, "ca.crt");
	put_str(&kp, 2, "ca.crt");
	put_msg(&cm, 2, &kp);
	put_msg(&p2, 3, &cm);
	put_str(&sel, 1, "v1");
	put_str(&sel, 2, "metadata.namespace");
	put_str(&file, 1, "namespace");
	put_msg(&file, 2, &sel);
	put_msg(&dapi, 1, &file);
	put_msg(&p3, 2, &dapi);
	put_msg(&proj, 1, &p1);
	put_msg(&proj, 1, &p2);
	put_msg(&proj, 1, &p3);
	put_int(&proj, 2, 420);
	put_msg(&src, 26, &proj);
	put_str(&vol, 1, "kube-api-access-abcde");
	put_msg(&vol, 2, &src);
	put_msg(&spec, 1, &vol);
	vol.n = src.n = 0;
	put_msg(&dvol, 1, &file);
	put_msg(&src, 16, &dvol);
	put_str(&vol, 1, "podinfo");
	put_msg(&vol, 2, &src);
	put_msg(&spec, 1, &vol);
	put_msg(&raw, 2, &spec);
	j = decode_object("v1", "Pod", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "spec.volumes.0.name"), "kube-api-access-abcde");
	CHECK(num_at(j, "spec.volumes.0.projected.defaultMode") == 420);
	CHECK(num_at(j, "spec.volumes.0.projected.sources.0."
	    "serviceAccountToken.expirationSeconds") == 3607);
	CHECK_STR(str_at(j, "spec.volumes.0.projected.sources.0."
	    "serviceAccountToken.path"), "token");
	CHECK_STR(str_at(j, "spec.volumes.0.projected.sources.1.configMap."
	    "name"), "kube-root-ca.crt");
	CHECK_STR(str_at(j, "spec.volumes.0.projected.sources.1.configMap."
	    "items.0.key"), "ca.crt");
	CHECK_STR(str_at(j, "spec.volumes.0.projected.sources.2.downwardAPI."
	    "items.0.fieldRef.fieldPath"), "metadata.namespace");
	CHECK_STR(str_at(j, "spec.volumes.1.downwardAPI.items.0.path"),
	    "namespace");
	cJSON_Delete(j);
}

/*
 * A pod's spec.schedulingGroup (PodSpec field 43, Kubernetes' gang API):
 * kept through a client-go update in protobuf, whose loss would read as a
 * change of an immutable field.
 */
static void
test_scheduling_group(void)
{
	struct buf	 raw, spec, sg;
	cJSON		*j;
	char		*cause;

	raw.n = spec.n = sg.n = 0;
	put_str(&sg, 1, "workers");
	put_msg(&spec, 43, &sg);
	put_msg(&raw, 2, &spec);
	j = decode_object("v1", "Pod", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "spec.schedulingGroup.podGroupName"), "workers");
	cJSON_Delete(j);
}

/*
 * kube-scheduler's Binding and core/v1 Event: an event's reporting fields
 * shown even when empty, its eventTime (a MicroTime) with six digits.
 */
static void
test_scheduler_kinds(void)
{
	struct buf	 raw, ref, src, t, md;
	cJSON		*j;
	char		*cause;

	raw.n = ref.n = md.n = 0;
	put_str(&md, 1, "p1");
	put_str(&md, 3, "default");
	put_msg(&raw, 1, &md);
	put_str(&ref, 1, "Node");
	put_str(&ref, 3, "vnode-0");
	put_msg(&raw, 2, &ref);
	j = decode_object("v1", "Binding", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "kind"), "Binding");
	CHECK_STR(str_at(j, "metadata.name"), "p1");
	CHECK_STR(str_at(j, "target.kind"), "Node");
	CHECK_STR(str_at(j, "target.name"), "vnode-0");
	cJSON_Delete(j);

	raw.n = ref.n = src.n = t.n = 0;
	put_str(&ref, 1, "Pod");
	put_str(&ref, 3, "p2");
	put_msg(&raw, 2, &ref);
	put_str(&raw, 3, "FailedScheduling");
	put_str(&raw, 4, "0/2 nodes are available");
	put_str(&src, 1, "default-scheduler");
	put_msg(&raw, 5, &src);
	put_int(&t, 1, 1715000000);
	put_msg(&raw, 6, &t);
	put_int(&raw, 8, 2);
	put_str(&raw, 9, "Warning");
	put_int(&t, 2, 123456789);
	put_msg(&raw, 10, &t);
	put_str(&raw, 14, "");
	put_str(&raw, 15, "");
	j = decode_object("v1", "Event", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "involvedObject.name"), "p2");
	CHECK_STR(str_at(j, "reason"), "FailedScheduling");
	CHECK_STR(str_at(j, "source.component"), "default-scheduler");
	CHECK_STR(str_at(j, "firstTimestamp"), "2024-05-06T12:53:20Z");
	CHECK(num_at(j, "count") == 2);
	CHECK_STR(str_at(j, "type"), "Warning");
	CHECK_STR(str_at(j, "eventTime"), "2024-05-06T12:53:20.123456Z");
	CHECK_STR(str_at(j, "reportingComponent"), "");
	CHECK_STR(str_at(j, "reportingInstance"), "");
	CHECK(at(j, "lastTimestamp") == NULL);
	cJSON_Delete(j);
}

/*
 * A ResourceClaim as kube-scheduler's DRA plugin updates it: spec with a
 * driver's opaque parameters (RawExtension: the JSON it holds), the
 * allocation with its node selector, reservedFor.
 */
static void
test_resource_claim(void)
{
	struct buf	 raw, spec, dev, rq, ex, cfg, op, rx, dc, st, al, ads,
			 res, ns, term, req, ref;
	cJSON		*j;
	char		*cause;

	raw.n = spec.n = dev.n = rq.n = ex.n = cfg.n = op.n = rx.n = dc.n = 0;
	st.n = al.n = ads.n = res.n = ns.n = term.n = req.n = ref.n = 0;
	put_str(&ex, 1, "gpu.example.com");
	put_str(&ex, 3, "ExactCount");
	put_int(&ex, 4, 1);
	put_str(&rq, 1, "gpu");
	put_msg(&rq, 2, &ex);
	put_msg(&dev, 1, &rq);
	put_str(&rx, 1, "{\"sharing\":{\"strategy\":\"TimeSlicing\"}}");
	put_str(&op, 1, "gpu.example.com");
	put_msg(&op, 2, &rx);
	put_msg(&dc, 1, &op);		/* DeviceConfiguration {1 opaque} */
	put_msg(&cfg, 2, &dc);		/* inline in DeviceClaimConfiguration */
	put_msg(&dev, 3, &cfg);
	put_msg(&spec, 1, &dev);
	put_msg(&raw, 2, &spec);
	put_str(&res, 1, "gpu");
	put_str(&res, 2, "gpu.example.com");
	put_str(&res, 3, "vnode-1");
	put_str(&res, 4, "gpu-0");
	put_msg(&ads, 1, &res);
	put_msg(&al, 1, &ads);
	put_str(&req, 1, "metadata.name");
	put_str(&req, 2, "In");
	put_str(&req, 3, "vnode-1");
	put_msg(&term, 2, &req);
	put_msg(&ns, 1, &term);
	put_msg(&al, 3, &ns);
	put_msg(&st, 1, &al);
	put_str(&ref, 3, "pods");
	put_str(&ref, 4, "drapod");
	put_str(&ref, 5, "uid-1");
	put_msg(&st, 2, &ref);
	put_msg(&raw, 3, &st);
	j = decode_object("resource.k8s.io/v1", "ResourceClaim", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "spec.devices.requests.0.name"), "gpu");
	CHECK_STR(str_at(j, "spec.devices.requests.0.exactly.deviceClassName"),
	    "gpu.example.com");
	CHECK(num_at(j, "spec.devices.requests.0.exactly.count") == 1);
	CHECK_STR(str_at(j, "spec.devices.config.0.opaque.driver"),
	    "gpu.example.com");
	CHECK_STR(str_at(j, "spec.devices.config.0.opaque.parameters.sharing."
	    "strategy"), "TimeSlicing");
	CHECK_STR(str_at(j, "status.allocation.devices.results.0.device"),
	    "gpu-0");
	CHECK_STR(str_at(j, "status.allocation.nodeSelector.nodeSelectorTerms."
	    "0.matchFields.0.values.0"), "vnode-1");
	CHECK_STR(str_at(j, "status.reservedFor.0.resource"), "pods");
	CHECK_STR(str_at(j, "status.reservedFor.0.name"), "drapod");
	CHECK(at(j, "status.reservedFor.0.apiGroup") == NULL);
	cJSON_Delete(j);

	/* RawExtension bytes that are not JSON: refused with a cause. */
	raw.n = spec.n = dev.n = cfg.n = op.n = rx.n = dc.n = 0;
	put_str(&rx, 1, "{not json");
	put_str(&op, 1, "gpu.example.com");
	put_msg(&op, 2, &rx);
	put_msg(&dc, 1, &op);
	put_msg(&cfg, 2, &dc);
	put_msg(&dev, 3, &cfg);
	put_msg(&spec, 1, &dev);
	put_msg(&raw, 2, &spec);
	j = decode_object("resource.k8s.io/v1", "ResourceClaim", &raw, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "RawExtension"));
	free(cause);
}

/* Wire-level rules: unknown fields, repeats, negative varints, UTF-8. */
static void
test_wire(void)
{
	struct buf	 raw, meta, spec, owner;
	cJSON		*j;
	char		*cause;
	uint64_t	 big = 0x0123456789abcdefULL;

	/* Unknown fields of every wire type are skipped, as is managedFields. */
	raw.n = meta.n = spec.n = 0;
	put_int(&meta, 99, 5);
	put_key(&meta, 98, 1);
	put_raw(&meta, &big, 8);
	put_key(&meta, 97, 5);
	put_raw(&meta, &big, 4);
	put_str(&meta, 96, "ignored");
	put_str(&meta, 1, "first");
	put_entry(&meta, 11, "a", "1");
	put_entry(&meta, 11, "b", "2");
	put_entry(&meta, 11, "a", "3");		/* the last value wins */
	put_msg(&meta, 17, &spec);
	put_str(&meta, 1, "second");		/* the last value wins */
	put_str(&meta, 14, "f1");
	owner.n = 0;
	put_str(&owner, 1, "CronJob");
	put_str(&owner, 3, "c");
	put_str(&owner, 4, "");			/* not omitempty: kept */
	put_str(&owner, 5, "batch/v1");
	put_int(&owner, 6, 0);			/* a pointer: kept */
	put_msg(&meta, 13, &owner);
	put_msg(&raw, 1, &meta);
	put_str(&spec, 1, "kubernetes");
	put_msg(&raw, 2, &spec);
	spec.n = 0;
	put_str(&spec, 1, "other");
	put_msg(&raw, 2, &spec);		/* messages merge */
	put_int(&raw, 42, -1);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j != NULL);
	CHECK_STR(str_at(j, "metadata.name"), "second");
	CHECK_STR(str_at(j, "metadata.labels.a"), "3");
	CHECK_STR(str_at(j, "metadata.labels.b"), "2");
	CHECK(cJSON_GetArraySize(at(j, "metadata.labels")) == 2);
	CHECK_STR(str_at(j, "metadata.finalizers.0"), "f1");
	CHECK(at(j, "metadata.managedFields") == NULL);
	CHECK_STR(str_at(j, "metadata.ownerReferences.0.uid"), "");
	CHECK(cJSON_IsFalse(at(j, "metadata.ownerReferences.0.controller")));
	CHECK(at(j, "metadata.ownerReferences.0.blockOwnerDeletion") == NULL);
	CHECK_STR(str_at(j, "spec.finalizers.0"), "kubernetes");
	CHECK_STR(str_at(j, "spec.finalizers.1"), "other");
	CHECK(cJSON_GetArraySize(at(j, "spec.finalizers")) == 2);
	cJSON_Delete(j);

	/* int32: ten-byte negatives, and Go's truncation of wider varints. */
	raw.n = 0;
	put_int(&raw, 2, -1);
	j = decode_object("scheduling.k8s.io/v1", "PriorityClass", &raw,
	    &cause);
	CHECK(num_at(j, "value") == -1);
	cJSON_Delete(j);
	raw.n = 0;
	put_int(&raw, 2, 0x1ffffffffLL);
	j = decode_object("scheduling.k8s.io/v1", "PriorityClass", &raw,
	    &cause);
	CHECK(num_at(j, "value") == -1);
	cJSON_Delete(j);
	raw.n = 0;
	put_int(&raw, 2, 0);
	put_int(&raw, 3, 0);
	put_int(&raw, 99, 0);
	j = decode_object("scheduling.k8s.io/v1", "PriorityClass", &raw,
	    &cause);
	CHECK(num_at(j, "value") == 0);
	CHECK(at(j, "globalDefault") == NULL);
	cJSON_Delete(j);

	/* Invalid UTF-8 becomes U+FFFD per bad byte, as Go's JSON shows it. */
	raw.n = meta.n = 0;
	put_str(&meta, 1, "a\xff" "b\xc3");
	put_str(&meta, 2, "\xed\xa0\x80\xf0\x9f\x98\x80");
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK_STR(str_at(j, "metadata.name"), "a\xef\xbf\xbd" "b\xef\xbf\xbd");
	CHECK_STR(str_at(j, "metadata.generateName"),
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xf0\x9f\x98\x80");
	cJSON_Delete(j);

	/* A NUL byte cannot be carried and is refused. */
	raw.n = meta.n = 0;
	put_bytes(&meta, 1, "a\0b", 3);
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "NUL") != NULL);
	free(cause);

	/* A known field with the wrong wire type. */
	raw.n = meta.n = 0;
	put_int(&meta, 1, 5);
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL &&
	    strstr(cause, "wrong wire type") != NULL);
	free(cause);

	/* Groups (wire types 3 and 4) are not part of Kubernetes protobuf. */
	raw.n = 0;
	put_key(&raw, 50, 3);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL);
	free(cause);

	/* An eleven-byte varint and a field number of zero. */
	raw.n = 0;
	put_key(&raw, 50, 0);
	put_raw(&raw, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL);
	free(cause);
	raw.n = 0;
	put_int(&raw, 0, 1);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL &&
	    strstr(cause, "field number") != NULL);
	free(cause);

	/* A length that runs past the end of its message. */
	raw.n = meta.n = 0;
	put_key(&meta, 1, 2);
	put_varint(&meta, 100);
	put_raw(&meta, "abc", 3);
	put_msg(&raw, 1, &meta);
	j = decode_object("v1", "Namespace", &raw, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "truncated") != NULL);
	free(cause);
}

/*
 * A map with many keys, unsorted and some repeated, keeps the last value of
 * each key; with a search per key this would take seconds, not milliseconds.
 */
static void
test_many_keys(void)
{
	const size_t	 nkeys = 30000;
	struct buf	 head = { .n = 0 }, tm = { .n = 0 }, ent;
	uint8_t		*body;
	size_t		 n, i, len;
	cJSON		*j, *data;
	char		*cause, key[16], val[16];

	/* data entries as a ConfigMap's field 2, built straight into a buffer. */
	if ((body = malloc(nkeys * 2 * 40)) == NULL)
		exit(2);
	for (n = 0, i = 0; i < nkeys + nkeys / 10; i++) {
		ent.n = 0;
		if (i < nkeys) {
			snprintf(key, sizeof key, "k%06zu", nkeys - i);
			snprintf(val, sizeof val, "v%zu", nkeys - i);
		} else {
			snprintf(key, sizeof key, "k%06zu", (i - nkeys) * 10 + 1);
			snprintf(val, sizeof val, "new");
		}
		put_entry(&ent, 2, key, val);
		memcpy(body + n, ent.d, ent.n);
		n += ent.n;
	}
	put_raw(&head, "k8s", 4);
	put_str(&tm, 1, "v1");
	put_str(&tm, 2, "ConfigMap");
	put_msg(&head, 1, &tm);
	put_key(&head, 2, 2);
	put_varint(&head, n);
	len = head.n + n;
	if ((body = realloc(body, len)) == NULL)
		exit(2);
	memmove(body + head.n, body, n);
	memcpy(body, head.d, head.n);

	j = decode(body, len, &cause);
	data = cJSON_GetObjectItem(j, "data");
	CHECK(cJSON_GetArraySize(data) == (int)nkeys);
	CHECK_STR(str_at(j, "data.k000001"), "new");
	CHECK_STR(str_at(j, "data.k000002"), "v2");
	CHECK_STR(str_at(j, "data.k029991"), "new");
	CHECK_STR(str_at(j, "data.k030000"), "v30000");
	cJSON_Delete(j);
	free(body);
}

/* The envelope: magic, TypeMeta, content encoding, kinds we do not know. */
static void
test_envelope(void)
{
	struct buf	 raw = { .n = 0 }, body, tm;
	cJSON		*j;
	char		*cause;

	j = decode("", 0, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "k8s") != NULL);
	free(cause);
	j = decode("{\"kind\":\"Namespace\"}", 20, &cause);
	CHECK(j == NULL && cause != NULL);
	free(cause);

	/* Magic alone: no kind. */
	j = decode("k8s", 4, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "no kind") != NULL);
	free(cause);

	/* A kind with no schema here. */
	j = decode_object("v1", "Node", &raw, &cause);
	CHECK(j == NULL);
	CHECK_STR(cause, "protobuf decoding of kind Node is not supported; "
	    "send JSON");
	free(cause);

	/* A known kind in a version we have no schema for. */
	j = decode_object("apps/v1beta1", "Deployment", &raw, &cause);
	CHECK(j == NULL);
	CHECK_STR(cause, "protobuf decoding of kind Deployment in apps/v1beta1 "
	    "is not supported; send JSON");
	free(cause);

	/* An empty object is still an object with its TypeMeta. */
	j = decode_object("batch/v1", "CronJob", &raw, &cause);
	CHECK_STR(str_at(j, "apiVersion"), "batch/v1");
	CHECK_STR(str_at(j, "kind"), "CronJob");
	CHECK(cJSON_GetArraySize(j) == 2);
	cJSON_Delete(j);

	/* Compressed raw bytes are refused. */
	envelope(&body, "v1", "Namespace", &raw);
	put_str(&body, 3, "gzip");
	j = decode(body.d, body.n, &cause);
	CHECK(j == NULL);
	CHECK_STR(cause, "protobuf content encoding gzip is not supported; "
	    "send JSON");
	free(cause);

	/* Control characters in the kind. */
	body.n = tm.n = 0;
	put_raw(&body, "k8s", 4);
	put_str(&tm, 1, "v1");
	put_str(&tm, 2, "Name\nspace");
	put_msg(&body, 1, &tm);
	j = decode(body.d, body.n, &cause);
	CHECK(j == NULL && cause != NULL && strstr(cause, "kind") != NULL);
	free(cause);

	/* Envelope fields in any order, unknown ones skipped. */
	body.n = tm.n = 0;
	put_raw(&body, "k8s", 4);
	put_str(&body, 4, "application/vnd.kubernetes.protobuf");
	put_int(&body, 9, 1);
	put_str(&raw, 4, "described");
	put_msg(&body, 2, &raw);
	put_str(&tm, 2, "PriorityClass");
	put_str(&tm, 1, "scheduling.k8s.io/v1");
	put_msg(&body, 1, &tm);
	j = decode(body.d, body.n, &cause);
	CHECK_STR(str_at(j, "description"), "described");
	CHECK_STR(str_at(j, "kind"), "PriorityClass");
	cJSON_Delete(j);
}

/* A small deterministic generator, so failures reproduce. */
static uint32_t
rnd(uint64_t *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*state >> 33);
}

/*
 * Every prefix of every captured body, and random byte changes to them, must
 * give an object or a cause; valgrind and ASan watch the reads.
 */
static void
test_robustness(void)
{
	const struct fixture	*fx;
	uint64_t		 state = 42;
	uint8_t			 buf[2048];
	cJSON			*j;
	char			*cause;
	size_t			 i, n, k, flips, ok = 0, bad = 0;

	for (i = 0; i < NFIXTURES; i++) {
		fx = &fixtures[i];
		for (n = 0; n <= fx->len; n++) {
			j = decode(fx->pb, n, &cause);
			j != NULL ? ok++ : bad++;
			cJSON_Delete(j);
			free(cause);
		}
		for (k = 0; k < 400; k++) {
			memcpy(buf, fx->pb, fx->len);
			for (flips = 1 + rnd(&state) % 4; flips > 0; flips--) {
				n = 4 + rnd(&state) % (fx->len - 4);
				if (rnd(&state) % 2)
					buf[n] = (uint8_t)rnd(&state);
				else
					buf[n] ^= (uint8_t)(1 << rnd(&state) % 8);
			}
			j = decode(buf, fx->len, &cause);
			j != NULL ? ok++ : bad++;
			cJSON_Delete(j);
			free(cause);
		}
	}
	/* Random bytes after the magic. */
	for (k = 0; k < 3000; k++) {
		memcpy(buf, "k8s", 4);
		n = 4 + rnd(&state) % 64;
		for (i = 4; i < n; i++)
			buf[i] = (uint8_t)rnd(&state);
		j = decode(buf, n, &cause);
		j != NULL ? ok++ : bad++;
		cJSON_Delete(j);
		free(cause);
	}
	CHECK(ok > 0 && bad > 0);
}

int
main(void)
{
	resource_init();
	test_captured();
	test_captured_fields();
	test_time();
	test_special_types();
	test_delete_options();
	test_pod_status();
	test_projected_volume();
	test_scheduling_group();
	test_scheduler_kinds();
	test_resource_claim();
	test_wire();
	test_many_keys();
	test_envelope();
	test_robustness();
	resource_shutdown();
	return check_result("test-protobuf");
}
