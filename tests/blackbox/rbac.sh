#!/bin/sh
# RBAC with stock kubectl, as kube-apiserver has it: users from a static
# token file (--token-auth-file) get 403 in kube-apiserver's words until a
# binding grants them something; a RoleBinding to the ClusterRole edit
# grants in its namespace only; kubectl auth can-i (SelfSubjectAccessReview)
# and can-i --list (SelfSubjectRulesReview); escalation is refused (a
# binding to cluster-admin by a namespace admin); kubectl create
# role|clusterrole|rolebinding|clusterrolebinding work; roleRef cannot
# change; deleting a binding takes its rights away; impersonation
# (kubectl --as, --as-group) needs the impersonate verb; and the in-process
# controllers, each with its own least-privilege role, still roll out a
# Deployment and run a Job.
. "$(dirname "$0")/lib.sh"

cat >"$WORK/tokens.csv" <<'EOF'
alice-token,alice,1001,"devs"
bob-token,bob,1002,
EOF
start_daemon --token-auth-file "$WORK/tokens.csv"

ka() { k --token=alice-token "$@"; }
kb() { k --token=bob-token "$@"; }

# A token-file user with no binding: 403, kube-apiserver's text.
out=$(ka get pods -n default 2>&1) && fail "alice listed pods without a binding"
expect_contains "$out" 'pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"' "403 for a namespaced list"
out=$(ka get nodes 2>&1) && fail "alice listed nodes without a binding"
expect_contains "$out" 'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope' "403 at the cluster scope"
out=$(ka get configmap c1 -n default 2>&1) && fail "alice read a configmap"
expect_contains "$out" 'configmaps "c1" is forbidden: User "alice" cannot get resource "configmaps" in API group "" in the namespace "default"' "403 with a name"
out=$(ka get --raw /metrics 2>&1) && fail "alice read /metrics"
expect_contains "$out" 'forbidden: User "alice" cannot get path "/metrics"' "403 for a path"
# Discovery and self-review are everyone's (system:discovery, basic-user).
ka api-resources >/dev/null || fail "discovery for an authenticated user"
expect_eq "no" "$(ka auth can-i create pods -n ns1 || true)" "can-i before any binding"
pass "no binding, no access"

# kubectl create role|clusterrole|rolebinding|clusterrolebinding as admin.
k create namespace ns1 >/dev/null
k create namespace ns2 >/dev/null
k create role pod-reader --verb=get,list,watch --resource=pods -n ns1 >/dev/null
k create clusterrole node-reader --verb=get,list --resource=nodes >/dev/null
k create rolebinding alice-edit --clusterrole=edit --user=alice -n ns1 >/dev/null
k create clusterrolebinding devs-nodes --clusterrole=node-reader --group=devs >/dev/null
expect_eq "get list watch" "$(k get role pod-reader -n ns1 -o jsonpath='{.rules[0].verbs[*]}')" "kubectl create role"
expect_eq "nodes" "$(k get clusterrole node-reader -o jsonpath='{.rules[0].resources[*]}')" "kubectl create clusterrole"
expect_eq "ClusterRole/edit alice" "$(k get rolebinding alice-edit -n ns1 -o jsonpath='{.roleRef.kind}/{.roleRef.name} {.subjects[0].name}')" "kubectl create rolebinding"
expect_eq "Group devs" "$(k get clusterrolebinding devs-nodes -o jsonpath='{.subjects[0].kind} {.subjects[0].name}')" "kubectl create clusterrolebinding"
out=$(k get rolebindings -n ns1)
expect_contains "$out" "ClusterRole/edit" "ROLE column of kubectl get rolebindings"
pass "kubectl create role, clusterrole, rolebinding, clusterrolebinding"

# edit in ns1: pods there, nowhere else; the group binding lists nodes.
ka run p1 --image=busybox -n ns1 >/dev/null || fail "alice could not create a pod in ns1"
out=$(ka run p2 --image=busybox -n default 2>&1) && fail "alice created a pod in default"
expect_contains "$out" 'pods is forbidden: User "alice" cannot create resource "pods" in API group "" in the namespace "default"' "create outside the binding's namespace"
ka get nodes >/dev/null 2>&1 || fail "the group binding does not let alice list nodes"
out=$(kb get nodes 2>&1) && fail "bob listed nodes"
expect_eq "yes" "$(ka auth can-i create pods -n ns1)" "can-i create pods in ns1"
expect_eq "no" "$(ka auth can-i create pods -n default || true)" "can-i create pods in default"
expect_eq "no" "$(ka auth can-i create rolebindings -n ns1 || true)" "edit cannot bind"
expect_eq "yes" "$(ka auth can-i list deployments.apps -n ns1)" "can-i list deployments"
expect_eq "yes" "$(ka auth can-i get rayclusters.ray.io -n ns1)" "edit covers Ray"
expect_eq "yes" "$(ka auth can-i create podgroups.scheduling.volcano.sh -n ns1)" "edit covers Volcano"
pass "a RoleBinding to edit grants in its namespace only"

out=$(ka auth can-i --list -n ns1)
expect_contains "$out" "selfsubjectaccessreviews.authorization.k8s.io" "can-i --list shows basic-user"
line=$(echo "$out" | awk '$1 == "pods" { print }')
expect_contains "$line" "create" "can-i --list: pods verbs"
expect_contains "$out" "/version" "can-i --list: non-resource URLs"
out=$(ka auth can-i --list -n ns2)
line=$(echo "$out" | awk '$1 == "pods" { print }')
[ -z "$line" ] || fail "can-i --list in ns2 lists pods: $line"
expect_eq "yes" "$(k auth can-i '*' '*')" "the admin (system:masters) can do anything"
pass "kubectl auth can-i --list"

# Escalation: only what you hold, in that namespace.
out=$(ka create rolebinding grab --clusterrole=cluster-admin --user=alice -n ns1 2>&1) && fail "alice (edit) created a RoleBinding"
expect_contains "$out" 'rolebindings.rbac.authorization.k8s.io is forbidden: User "alice" cannot create resource "rolebindings" in API group "rbac.authorization.k8s.io" in the namespace "ns1"' "edit cannot create RoleBindings"
k create rolebinding bob-admin --clusterrole=admin --user=bob -n ns2 >/dev/null
out=$(kb create rolebinding grab --clusterrole=cluster-admin --user=bob -n ns2 2>&1) && fail "bob bound cluster-admin"
expect_contains "$out" 'rolebindings.rbac.authorization.k8s.io "grab" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held' "escalation refused"
out=$(kb create role nodes --verb=get --resource=nodes -n ns2 2>&1) && fail "bob wrote a Role with more than he holds"
expect_contains "$out" 'is attempting to grant RBAC permissions not currently held' "a Role above the writer's rights"
kb create rolebinding alice-view --clusterrole=view --user=alice -n ns2 >/dev/null || fail "bob (admin in ns2) could not bind view there"
expect_eq "yes" "$(ka auth can-i list pods -n ns2)" "the binding bob made"
expect_eq "no" "$(ka auth can-i create pods -n ns2 || true)" "view does not create"
pass "escalation refused, delegation within one's rights allowed"

# roleRef cannot change; deleting a binding takes its rights away.
out=$(k patch rolebinding alice-edit -n ns1 --type=merge -p '{"roleRef":{"name":"view"}}' 2>&1) && fail "roleRef changed"
expect_contains "$out" "cannot change roleRef" "roleRef immutable"
k delete rolebinding alice-edit -n ns1 >/dev/null
expect_eq "no" "$(ka auth can-i create pods -n ns1 || true)" "can-i after the binding is deleted"
out=$(ka delete pod p1 -n ns1 2>&1) && fail "alice deleted a pod after losing edit"
pass "roleRef immutable, deleted bindings revoke"

# Impersonation (kubectl --as): the admin may; the request runs as the
# user, with system:authenticated; a user without the impersonate verb
# gets kube-apiserver's 403 and nothing runs as anyone.
expect_eq "no" "$(k auth can-i get pods -n ns2 --as=carol || true)" "can-i as carol"
out=$(k get pods -n ns2 --as=carol 2>&1) && fail "carol (impersonated) listed pods"
expect_contains "$out" 'pods is forbidden: User "carol" cannot list resource "pods"' "403 as the impersonated user"
expect_eq "carol" "$(k auth whoami --as=carol -o jsonpath='{.status.userInfo.username}')" "whoami as carol"
expect_eq "grp1 system:authenticated" "$(k auth whoami --as=carol --as-group=grp1 -o jsonpath='{.status.userInfo.groups}' | tr -d '[]"' | tr ',' '\n' | sort | tr '\n' ' ' | sed 's/ $//')" "whoami's groups as carol in grp1"
expect_eq "system:serviceaccount:ns2:default" "$(k auth whoami --as=system:serviceaccount:ns2:default -o jsonpath='{.status.userInfo.username}')" "whoami as a service account"
out=$(kb get pods -n ns2 --as=alice 2>&1) && fail "bob impersonated alice"
expect_contains "$out" 'users "alice" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope' "403 for impersonating without the verb"
k create clusterrole impersonate-carol --verb=impersonate --resource=users --resource-name=carol >/dev/null
k create clusterrolebinding bob-impersonates --clusterrole=impersonate-carol --user=bob >/dev/null
expect_eq "carol" "$(kb auth whoami --as=carol -o jsonpath='{.status.userInfo.username}')" "bob as carol once allowed"
out=$(kb get pods -n ns2 --as=dave 2>&1) && fail "bob impersonated dave"
expect_contains "$out" 'users "dave" is forbidden' "only the user named"
out=$(kb get pods -n ns2 --as=carol --as-group=system:masters 2>&1) && fail "bob impersonated a group"
expect_contains "$out" 'groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups"' "groups need their own grant"
pass "impersonation as kube-apiserver has it"

# The controllers act as themselves, with their own roles, and still work.
k create deployment web --image=nginx --replicas=2 -n ns1 >/dev/null
pods() { k get pods -n ns1 -l app=web -o name | wc -l | tr -d ' '; }
wait_eq 2 "pods of the Deployment" pods
k create job j1 --image=busybox -n ns1 -- echo hi >/dev/null
jpods() { k get pods -n ns1 -l job-name=j1 -o name | wc -l | tr -d ' '; }
wait_eq 1 "pods of the Job" jpods
expect_eq "system:controller:job-controller" "$(k get clusterrolebinding system:controller:job-controller -o jsonpath='{.subjects[0].name}')" "the job controller's binding"
# Where kube-controller-manager spells a controller's user otherwise, the
# user, its role and its binding are kube's.
for u in daemon-set-controller endpoint-controller replication-controller service-account-controller; do
	expect_eq "system:controller:$u" "$(k get clusterrolebinding "system:controller:$u" -o jsonpath='{.subjects[0].name}')" "the $u binding"
done
expect_eq yes "$(k auth can-i create pods -n ns1 --as=system:controller:replication-controller)" "replication-controller creates pods"
expect_eq yes "$(k auth can-i create endpoints -n ns1 --as=system:controller:endpoint-controller)" "endpoint-controller writes Endpoints"
if grep -q "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log"; then
	grep "controller [a-z]*: reconcile .*forbidden" "$WORK/volrayd.log" | head -n 3
	fail "a controller was refused something"
fi
pass "controllers work under their own roles"
