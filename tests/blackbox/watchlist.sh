#!/bin/sh
# Streaming lists (WatchList; client-go's WatchListClient, on by default in
# client-go 0.35): a watch with sendInitialEvents=true,
# resourceVersionMatch=NotOlderThan and allowWatchBookmarks sends an ADDED
# event per object its selectors match, then a BOOKMARK at the list's
# resourceVersion annotated k8s.io/initial-events-end, then the live events;
# from a resourceVersion long out of the watch history it still lists (no
# 410); past the store's revision it is one ERROR event (504, Too large
# resource version). A legacy watch from "" with bookmarks is defaulted to
# the same (kube-apiserver 1.34); sendInitialEvents=false starts from now.
# The forbidden combinations are 422 Invalid ListOptions.meta.k8s.io with
# kube-apiserver's field errors.
. "$(dirname "$0")/lib.sh"
start_daemon --watch-history 20
CM="$API/api/v1/namespaces/default/configmaps"
WL="watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"

mkcm() { # name set
	curl -fs -XPOST "$CM" -H 'Content-Type: application/json' -d "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"$1\",\"labels\":{\"set\":\"$2\"}}}" >/dev/null ||
		fail "create $1"
}
for i in 1 2 3; do mkcm "a$i" a; done
mkcm b1 b
k create ns other >/dev/null || fail "create ns other"
k -n other create cm elsewhere >/dev/null || fail "create other/elsewhere"
listrv=$(curl -fs "$CM" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')

# summary: "TYPE name" per line, BOOKMARK lines as "BOOKMARK rv annotation"
# (the namespace's kube-root-ca.crt, which every namespace has, left out).
summary() {
	python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    o = e["object"]; m = o.get("metadata", {})
    if e["type"] == "BOOKMARK":
        print("BOOKMARK", m.get("resourceVersion"), o.get("kind"),
              m.get("annotations", {}).get("k8s.io/initial-events-end", "-"))
    elif e["type"] == "ERROR":
        print("ERROR", o.get("code"), o.get("reason"), o.get("message"))
    elif m.get("name") != "kube-root-ca.crt":
        print(e["type"], m.get("name"))'
}

lists() { curl -fs "$API/metrics" | sed -n 's/^volray_watch_lists_total //p'; }
lists0=$(lists)
got=$(curl -fs -m 5 "$CM?$WL&timeoutSeconds=1" | summary) || fail "the watch-list: $got"
expect_eq $((lists0 + 1)) "$(lists)" "volray_watch_lists_total after one watch-list"
expect_eq "ADDED a1
ADDED a2
ADDED a3
ADDED b1
BOOKMARK $listrv ConfigMap true" "$(echo "$got" | sort)" "a namespace's watch-list"
expect_eq "BOOKMARK $listrv ConfigMap true" "$(echo "$got" | tail -n 1)" \
	"the watch-list's last event"
got=$(curl -fs -m 5 "$CM?$WL&timeoutSeconds=1&labelSelector=set%3Da&fieldSelector=metadata.name!%3Da2" | summary)
expect_eq "ADDED a1
ADDED a3
BOOKMARK $listrv ConfigMap true" "$(echo "$got" | sort)" "label and field selectors"
got=$(curl -fs -m 5 "$API/api/v1/configmaps?$WL&timeoutSeconds=1&fieldSelector=metadata.namespace%3Dother" | summary)
expect_eq "ADDED elsewhere
BOOKMARK $listrv ConfigMap true" "$got" "all namespaces, one by field"
got=$(curl -fs -m 5 "$API/apis/ray.io/v1/rayclusters?$WL&timeoutSeconds=1" | summary)
expect_eq "BOOKMARK $listrv RayCluster true" "$got" "an empty custom resource"
pass "sendInitialEvents: ADDED per matching object, then the initial-events-end bookmark at the list's resourceVersion"

# Live events follow the bookmark; the initial state is never 410, even
# from a resourceVersion the 20-event history has long dropped.
old=$listrv
for i in $(seq 1 25); do
	curl -fs -XPATCH "$CM/b1" -H 'Content-Type: application/merge-patch+json' \
		-d "{\"data\":{\"n\":\"$i\"}}" >/dev/null || fail "patch b1"
done
code=$(curl -s -o /dev/null -w '%{http_code}' -m 5 "$CM?watch=true&resourceVersion=$old&timeoutSeconds=1")
expect_eq 410 "$code" "a plain watch from $old"
python3 - "$old" <<'PY' || fail "the watch-list from an old resourceVersion"
import json, sys, vrtest
c = vrtest.https(timeout=10)
c.request("GET", "/api/v1/namespaces/default/configmaps?watch=true&"
          "sendInitialEvents=true&resourceVersionMatch=NotOlderThan&"
          "allowWatchBookmarks=true&labelSelector=set%3Db&resourceVersion="
          + sys.argv[1], headers=vrtest.HEADERS)
r = c.getresponse()
if r.status != 200:
    sys.exit("status %d: %s" % (r.status, r.read()))
e = json.loads(r.readline())
if e["type"] != "ADDED" or e["object"]["data"]["n"] != "25":
    sys.exit("first event: %s" % e)
b = json.loads(r.readline())
md = b["object"]["metadata"]
if b["type"] != "BOOKMARK" or md["annotations"] != {"k8s.io/initial-events-end": "true"} \
        or int(md["resourceVersion"]) < int(e["object"]["metadata"]["resourceVersion"]):
    sys.exit("bookmark: %s" % b)
w = vrtest.https()
w.request("POST", "/api/v1/namespaces/default/configmaps", json.dumps(
    {"apiVersion": "v1", "kind": "ConfigMap",
     "metadata": {"name": "b2", "labels": {"set": "b"}}}),
    dict(vrtest.HEADERS, **{"Content-Type": "application/json"}))
if w.getresponse().status != 201:
    sys.exit("create b2")
e = json.loads(r.readline())
if e["type"] != "ADDED" or e["object"]["metadata"]["name"] != "b2" or \
        int(e["object"]["metadata"]["resourceVersion"]) <= int(md["resourceVersion"]):
    sys.exit("the live event: %s" % e)
PY
pass "after the bookmark the live events; an old resourceVersion still lists (a plain watch from it: 410)"

now=$(curl -fs "$CM" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])')
big=$((now + 1000))
got=$(curl -fs -m 5 "$CM?$WL&resourceVersion=$big&timeoutSeconds=1" | summary)
expect_eq "ERROR 504 Timeout Timeout: Too large resource version: $big, current: $now" \
	"$got" "a watch-list past the store's revision"
out=$(curl -fs -m 5 "$CM?$WL&resourceVersion=$big&timeoutSeconds=1")
expect_contains "$out" '"causes":[{"reason":"ResourceVersionTooLarge"' "the ERROR's cause"
got=$(curl -fs -m 5 "$CM?watch=true&allowWatchBookmarks=true&labelSelector=set%3Db&timeoutSeconds=1" | summary)
expect_eq "ADDED b1
ADDED b2
BOOKMARK $now ConfigMap true" "$(echo "$got" | sort)" "a legacy watch from \"\" with bookmarks"
got=$(curl -fs -m 5 "$CM?watch=true&labelSelector=set%3Db&timeoutSeconds=1&resourceVersion=0" | summary)
expect_eq "ADDED b1
ADDED b2" "$(echo "$got" | sort)" "a legacy watch from 0 without bookmarks"
got=$(curl -fs -m 5 "$CM?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=1" | summary)
expect_eq "" "$got" "sendInitialEvents=false from \"\""
got=$(curl -fs -m 5 "$CM?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1&labelSelector=set%3Db" | summary)
expect_eq "ADDED b1
ADDED b2" "$(echo "$got" | sort)" "sendInitialEvents without allowWatchBookmarks: no bookmark"
pass "too large a resourceVersion: one ERROR event (504); legacy watches defaulted as kube-apiserver 1.34 defaults them"

# Table watches (kubectl's): the bookmark is a one-row Table whose row's
# object is the annotated PartialObjectMetadata.
got=$(curl -fs -m 5 -H 'Accept: application/json;as=Table;v=v1;g=meta.k8s.io' \
	"$CM?$WL&timeoutSeconds=1&fieldSelector=metadata.name%3Db1&includeObject=Object" |
	python3 -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line); t = e["object"]; o = t["rows"][0]["object"]
    print(e["type"], t["kind"], o["kind"], o["metadata"].get("name", "-"),
          o["metadata"].get("annotations", {}).get("k8s.io/initial-events-end", "-"))')
expect_eq "ADDED Table ConfigMap b1 -
BOOKMARK Table PartialObjectMetadata - true" "$got" "a Table watch-list"
pass "a Table watch-list ends with a Table bookmark"

# invalid CASE QUERY FIELD MESSAGE: 422 Invalid ListOptions.meta.k8s.io.
invalid() {
	out=$(curl -s -w '\n%{http_code}' "$CM?$2&timeoutSeconds=1")
	expect_eq 422 "$(echo "$out" | tail -n 1)" "$1: the status"
	expect_contains "$out" "\"message\":\"ListOptions.meta.k8s.io \\\"\\\" is invalid: $3: $4" "$1"
	expect_contains "$out" '"reason":"Invalid"' "$1: the reason"
	expect_contains "$out" '"group":"meta.k8s.io","kind":"ListOptions"' "$1: the details"
}
invalid "sendInitialEvents without resourceVersionMatch" \
	"watch=true&sendInitialEvents=true&allowWatchBookmarks=true" \
	resourceVersionMatch "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
invalid "resourceVersionMatch=Exact on a watch-list" \
	"watch=true&sendInitialEvents=true&resourceVersionMatch=Exact" \
	"[resourceVersionMatch" 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Exact\": supported values: \"NotOlderThan\"]'
invalid "resourceVersionMatch on a watch without sendInitialEvents" \
	"watch=true&resourceVersion=5&resourceVersionMatch=NotOlderThan" \
	resourceVersionMatch "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
invalid "sendInitialEvents on a list" "sendInitialEvents=true" \
	sendInitialEvents "Forbidden: sendInitialEvents is forbidden for list"
out=$(curl -s -w '\n%{http_code}' "$API/api/v1/watch/namespaces/default/configmaps?sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=1&timeoutSeconds=1")
expect_eq 422 "$(echo "$out" | tail -n 1)" "sendInitialEvents on /watch/ without watch=true"
expect_contains "$out" "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list" \
	"sendInitialEvents on /watch/ without watch=true (a list to kube-apiserver)"
invalid "resourceVersionMatch on a list without resourceVersion" \
	"resourceVersionMatch=NotOlderThan" \
	resourceVersionMatch "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
out=$(curl -s -w '\n%{http_code}' "$CM?watch=true&sendInitialEvents=true&resourceVersionMatch=Bogus&continue=x")
expect_eq 422 "$(echo "$out" | tail -n 1)" "three errors at once"
expect_contains "$out" 'is invalid: [resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan, resourceVersionMatch: Unsupported value: \"Bogus\": supported values: \"NotOlderThan\", resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided]' \
	"three errors at once"
pass "forbidden combinations: 422 Invalid ListOptions with kube-apiserver's field errors"
