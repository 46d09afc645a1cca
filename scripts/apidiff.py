#!/usr/bin/python3
"""Where volrayd answers differently from kube-apiserver (issue 39).

    scripts/apidiff.py [--known FILE] [--report FILE] [--keep] BUILDDIR

Starts volrayd from BUILDDIR (--no-local-node --roles api, on a fresh data
directory) and the real kube-apiserver anchor (scripts/anchors.sh
kube-apiserver start), sends both the same requests (raw HTTP, stock
kubectl and the official Python client: CRUD of ConfigMaps, Pods,
Deployments, Services, Namespaces and RBAC objects, 404/409/422 cases,
fieldValidation, patches, dry-run, paging and selectors, Tables, watches,
discovery, /version, /healthz, /readyz), reduces each answer to what is
compared (status code, Status reason, message and details, Warning
headers, Table columns, a few named fields), with the volatile parts
(uids, timestamps, resourceVersions, generated names, addresses) replaced
by placeholders, and writes a Markdown report (default
tests/apidiff.md) listing every request, and where the two differ, both
answers side by side. The report is the same on a rerun.

With --known FILE (tests/apidiff-known.txt), each difference is looked
up there ("ID FIELD reason", one a line, FIELD * for any field of that
request; # starts a comment); the exit status is 1 when a
difference is not listed (printed on stderr), 0 otherwise. Exit 77 when
the kube-apiserver anchor is not built or etcd is missing.

Debian's python3-kubernetes runs in Debian's /usr/bin/python3.
"""
import argparse
import http.client
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANCHORS = os.path.join(TOP, "scripts", "anchors.sh")
NS = "apidiff"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


class Server:
    """One API server: an HTTPS endpoint, the admin's token, a kubeconfig."""

    def __init__(self, name, port, cafile, token, kubeconfig):
        self.name = name
        self.port = port
        self.ctx = ssl.create_default_context(cafile=cafile)
        self.token = token
        self.kubeconfig = kubeconfig

    def conn(self, timeout=20):
        return http.client.HTTPSConnection("127.0.0.1", self.port,
                                           timeout=timeout, context=self.ctx)

    def req(self, method, path, body=None, ctype=None, accept=None,
            timeout=20):
        """(status, headers as a list of pairs, body bytes)."""
        h = {"Authorization": "Bearer " + self.token}
        if body is not None:
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            h["Content-Type"] = ctype or "application/json"
        h["Accept"] = accept or "application/json"
        c = self.conn(timeout)
        try:
            c.request(method, path, body=body, headers=h)
            r = c.getresponse()
            data = r.read()
            return r.status, r.getheaders(), data
        finally:
            c.close()

    def watch(self, path, timeout=20):
        """The events of a watch that ends by itself (timeoutSeconds)."""
        c = self.conn(timeout)
        try:
            c.request("GET", path, headers={
                "Authorization": "Bearer " + self.token,
                "Accept": "application/json"})
            r = c.getresponse()
            data = r.read()
        finally:
            c.close()
        if r.status != 200:
            return r.status, r.getheaders(), data, []
        evs = []
        for line in data.decode(errors="replace").splitlines():
            line = line.strip()
            if line:
                try:
                    evs.append(json.loads(line))
                except ValueError:
                    evs.append({"type": "UNPARSABLE", "object": line})
        return r.status, r.getheaders(), data, evs

    def kubectl(self, args, stdin=None):
        env = dict(os.environ, KUBECONFIG=self.kubeconfig)
        env.pop("KUBECTL_EXTERNAL_DIFF", None)
        p = subprocess.run(["kubectl", "--request-timeout=20s"] + args,
                           input=stdin, capture_output=True, text=True,
                           env=env, timeout=60)
        return p.returncode, p.stdout, p.stderr


# ---- normalising ---------------------------------------------------------

UID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TS_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
IP_RE = re.compile(r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(:\d+)?\b")
GEN_RE = re.compile(r"\b(gen-[a-z]*-)[a-z0-9]{5}\b")
RV_RES = [
    (re.compile(r"(too old resource version: )\d+ \(\d+\)"), r"\1RV (RV)"),
    (re.compile(r"(resource ?[vV]ersion[\\\" :=]+)\d+"), r"\1RV"),
    (re.compile(r"(current: )\d+"), r"\1RV"),
    (re.compile(r"\b\d+(s|m|h|d)\b"), "AGE"),
]


def norm(s):
    """A text with its volatile parts as placeholders."""
    if not isinstance(s, str):
        return s
    s = UID_RE.sub("UID", s)
    s = TS_RE.sub("TIME", s)
    s = IP_RE.sub("IP", s)
    s = GEN_RE.sub(r"\1XXXXX", s)
    # Each server's admin: volrayd's token and the anchor's certificate.
    s = re.sub(r"\bvolray-admin\b", "admin", s)
    for r, w in RV_RES:
        s = r.sub(w, s)
    return s


def warnings(headers):
    out = []
    for k, v in headers:
        if k.lower() == "warning":
            v = re.sub(r'^\d{3} \S+ "(.*)"$', r"\1", v.strip())
            out.append(norm(v.replace('\\"', '"')))
    return sorted(out)


def dig(obj, path):
    """obj's member at a dotted path (list indices as numbers), or None."""
    for p in path.split("."):
        if isinstance(obj, list):
            try:
                obj = obj[int(p)]
            except (ValueError, IndexError):
                return None
        elif isinstance(obj, dict):
            obj = obj.get(p)
        else:
            return None
    return obj


def status_fields(o):
    d = {"reason": o.get("reason", ""), "message": norm(o.get("message", ""))}
    det = o.get("details") or {}
    if det:
        d["details"] = norm(json.dumps(
            {k: det[k] for k in ("name", "group", "kind") if k in det},
            sort_keys=True))
        causes = det.get("causes") or []
        if causes:
            d["causes"] = norm("; ".join(
                "%s %s: %s" % (c.get("reason", ""), c.get("field", ""),
                               c.get("message", "")) for c in causes))
    return d


def answer(status, headers, data, pick=(), table=False):
    """What is compared of an HTTP answer."""
    a = {"code": status}
    w = warnings(headers)
    if w:
        a["warnings"] = " | ".join(w)
    try:
        o = json.loads(data) if data else None
    except ValueError:
        o = None
        a["body"] = norm(data.decode(errors="replace").strip()[:200])
    if isinstance(o, dict):
        a["kind"] = o.get("kind", "")
        if o.get("kind") == "Status" and o.get("status") != "Success":
            a.update(status_fields(o))
        if table and o.get("kind") == "Table":
            a["columns"] = ", ".join(
                "%s:%s%s" % (c["name"], c["type"],
                             "/" + c["format"] if c.get("format") else "")
                for c in o.get("columnDefinitions", []))
            a["rows"] = len(o.get("rows") or [])
            a["row0"] = norm(json.dumps((o.get("rows") or [{}])[0].get(
                "cells", []))) if o.get("rows") else ""
        for p in pick:
            v = dig(o, p)
            a[p] = norm(json.dumps(v, sort_keys=True)) if v is not None \
                else "(absent)"
    return a


def kanswer(rc, out, err, lines=None):
    """What is compared of a kubectl run: exit status, output, errors."""
    a = {"exit": rc}
    outl = out.splitlines()
    if lines is not None:
        outl = outl[:lines]
    # Columns are spaced to the widest cell: compare words.
    a["stdout"] = norm(" / ".join(" ".join(l.split()) for l in outl))
    e = [l for l in err.splitlines() if l.strip()]
    if e:
        a["stderr"] = norm(" / ".join(e))
    return a


# ---- the requests --------------------------------------------------------

def ns_path(kind, name=None, ns=NS, group=None, q=None):
    base = "/apis/" + group if group else "/api/v1"
    p = "%s/namespaces/%s/%s" % (base, ns, kind) if ns else "%s/%s" % (base, kind)
    if name:
        p += "/" + name
    if q:
        p += "?" + urllib.parse.urlencode(q)
    return p


def cm(name, data=None, labels=None, rv=None):
    md = {"name": name}
    if labels:
        md["labels"] = labels
    if rv:
        md["resourceVersion"] = rv
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": md,
            "data": data or {"a": "1"}}


def pod(name, **spec):
    s = {"containers": [{"name": "c", "image": "busybox",
                         "command": ["sleep", "3600"]}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": s}


def deploy(name, replicas=1):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas,
                     "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": pod("x")["spec"]}}}


def svc(name, **spec):
    s = {"selector": {"app": name},
         "ports": [{"port": 80, "targetPort": 8080}]}
    s.update(spec)
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": s}


MERGE = "application/merge-patch+json"
JSONP = "application/json-patch+json"
SMP = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# (id, method, path, body, options): options may hold ctype, accept,
# pick (fields compared), table (compare Table columns).
HTTP = [
    # discovery and health
    ("version", "GET", "/version", None, {"pick": ["major", "minor"]}),
    ("healthz", "GET", "/healthz", None, {}),
    ("readyz", "GET", "/readyz", None, {}),
    ("livez", "GET", "/livez", None, {}),
    ("api", "GET", "/api", None, {"pick": ["versions"]}),
    ("apis-groups", "GET", "/apis", None, {}),
    ("api-v1-has-pods", "GET", "/api/v1", None, {"pick": ["groupVersion"]}),
    ("apps-v1", "GET", "/apis/apps/v1", None, {"pick": ["groupVersion"]}),
    ("openapi-v2", "GET", "/openapi/v2", None, {"pick": ["swagger"]}),
    ("openapi-v3", "GET", "/openapi/v3", None, {}),
    ("no-such-path", "GET", "/nope", None, {}),
    ("no-such-group", "GET", "/apis/nope.example.com/v1", None, {}),
    ("no-such-resource", "GET", "/api/v1/namespaces/default/nopes", None, {}),
    # ConfigMap CRUD
    ("cm-create", "POST", ns_path("configmaps"), cm("c1", labels={"t": "a"}),
     {"pick": ["metadata.name", "data"]}),
    ("cm-create-dup", "POST", ns_path("configmaps"), cm("c1"), {}),
    ("cm-get", "GET", ns_path("configmaps", "c1"), None,
     {"pick": ["metadata.name", "metadata.labels"]}),
    ("cm-get-missing", "GET", ns_path("configmaps", "nope"), None, {}),
    ("cm-get-bad-ns", "GET", ns_path("configmaps", "c1", ns="nonexistent"),
     None, {}),
    ("cm-create-bad-name", "POST", ns_path("configmaps"), cm("Bad_Name"), {}),
    ("cm-create-long-name", "POST", ns_path("configmaps"), cm("x" * 254), {}),
    ("cm-create-no-name", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}, {}),
    ("cm-create-generate-name", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"generateName": "gen-cm-"}},
     {"pick": ["metadata.name", "metadata.generateName"]}),
    ("cm-create-bad-key", "POST", ns_path("configmaps"),
     cm("c2", data={"bad key!": "x"}), {}),
    ("cm-create-wrong-type", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c3"},
      "data": {"a": 1}}, {}),
    ("cm-create-not-json", "POST", ns_path("configmaps"), "{not json", {}),
    ("cm-create-wrong-kind", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c4"}}, {}),
    ("cm-create-ns-mismatch", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "c5", "namespace": "other"}}, {}),
    ("cm-create-unknown-strict", "POST",
     ns_path("configmaps", q={"fieldValidation": "Strict"}),
     dict(cm("c6"), bogus=1), {}),
    ("cm-create-unknown-warn", "POST",
     ns_path("configmaps", q={"fieldValidation": "Warn"}),
     dict(cm("c7"), bogus=1), {"pick": ["bogus"]}),
    ("cm-create-unknown-ignore", "POST",
     ns_path("configmaps", q={"fieldValidation": "Ignore"}),
     dict(cm("c8"), bogus=1), {"pick": ["bogus"]}),
    ("cm-create-unknown-default", "POST", ns_path("configmaps"),
     dict(cm("c9"), bogus=1), {"pick": ["bogus"]}),
    ("cm-create-bad-fieldvalidation", "POST",
     ns_path("configmaps", q={"fieldValidation": "Loud"}), cm("c10"), {}),
    ("cm-create-dryrun", "POST", ns_path("configmaps", q={"dryRun": "All"}),
     cm("dry"), {"pick": ["metadata.name"]}),
    ("cm-get-dryrun-not-stored", "GET", ns_path("configmaps", "dry"), None, {}),
    ("cm-create-bad-dryrun", "POST", ns_path("configmaps", q={"dryRun": "Some"}),
     cm("dry2"), {}),
    ("cm-update-stale-rv", "PUT", ns_path("configmaps", "c1"),
     cm("c1", rv="1"), {}),
    ("cm-update-no-rv", "PUT", ns_path("configmaps", "c1"),
     cm("c1", data={"a": "2"}, labels={"t": "a"}), {"pick": ["data"]}),
    ("cm-update-name-mismatch", "PUT", ns_path("configmaps", "c1"),
     cm("other"), {}),
    ("cm-update-missing", "PUT", ns_path("configmaps", "nope"), cm("nope"),
     {"pick": ["metadata.name"]}),
    ("cm-update-unknown-strict", "PUT",
     ns_path("configmaps", "c1", q={"fieldValidation": "Strict"}),
     dict(cm("c1", labels={"t": "a"}), bogus=1), {}),
    ("cm-update-bad-rv", "PUT", ns_path("configmaps", "c1"),
     cm("c1", rv="abc"), {}),
    # patches
    ("cm-patch-merge", "PATCH", ns_path("configmaps", "c1"),
     {"data": {"b": "2"}}, {"ctype": MERGE, "pick": ["data"]}),
    ("cm-patch-merge-unknown", "PATCH", ns_path("configmaps", "c1"),
     {"bogus": 1}, {"ctype": MERGE, "pick": ["bogus"]}),
    ("cm-patch-merge-unknown-strict", "PATCH",
     ns_path("configmaps", "c1", q={"fieldValidation": "Strict"}),
     {"bogus": 1}, {"ctype": MERGE}),
    ("cm-patch-merge-unknown-warn", "PATCH",
     ns_path("configmaps", "c1", q={"fieldValidation": "Warn"}),
     {"bogus": 1}, {"ctype": MERGE, "pick": ["bogus"]}),
    ("cm-patch-merge-wrong-type", "PATCH", ns_path("configmaps", "c1"),
     {"data": {"b": 2}}, {"ctype": MERGE}),
    ("cm-patch-merge-not-json", "PATCH", ns_path("configmaps", "c1"),
     "{bad", {"ctype": MERGE}),
    ("cm-patch-json", "PATCH", ns_path("configmaps", "c1"),
     [{"op": "add", "path": "/data/c", "value": "3"}],
     {"ctype": JSONP, "pick": ["data"]}),
    ("cm-patch-json-test-fails", "PATCH", ns_path("configmaps", "c1"),
     [{"op": "test", "path": "/data/a", "value": "nope"}], {"ctype": JSONP}),
    ("cm-patch-json-remove-missing", "PATCH", ns_path("configmaps", "c1"),
     [{"op": "remove", "path": "/data/zzz"}], {"ctype": JSONP}),
    ("cm-patch-json-bad-op", "PATCH", ns_path("configmaps", "c1"),
     [{"op": "frobnicate", "path": "/data/a"}], {"ctype": JSONP}),
    ("cm-patch-json-not-array", "PATCH", ns_path("configmaps", "c1"),
     {"op": "add"}, {"ctype": JSONP}),
    ("cm-patch-smp", "PATCH", ns_path("configmaps", "c1"),
     {"data": {"d": "4"}}, {"ctype": SMP, "pick": ["data"]}),
    ("cm-patch-smp-unknown-strict", "PATCH",
     ns_path("configmaps", "c1", q={"fieldValidation": "Strict"}),
     {"bogus": 1}, {"ctype": SMP}),
    ("cm-patch-rv-conflict", "PATCH", ns_path("configmaps", "c1"),
     {"metadata": {"resourceVersion": "1"}, "data": {"e": "5"}},
     {"ctype": MERGE}),
    ("cm-patch-missing", "PATCH", ns_path("configmaps", "nope"),
     {"data": {"b": "2"}}, {"ctype": MERGE}),
    ("cm-patch-bad-ctype", "PATCH", ns_path("configmaps", "c1"),
     {"data": {"b": "2"}}, {"ctype": "text/plain"}),
    ("cm-patch-dryrun", "PATCH", ns_path("configmaps", "c1", q={"dryRun": "All"}),
     {"data": {"dry": "1"}}, {"ctype": MERGE, "pick": ["data.dry"]}),
    ("cm-apply-no-manager", "PATCH", ns_path("configmaps", "c11"),
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c11\ndata:\n  a: '1'\n",
     {"ctype": APPLY}),
    ("cm-apply", "PATCH", ns_path("configmaps", "c11", q={"fieldManager": "t"}),
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c11\ndata:\n  a: '1'\n",
     {"ctype": APPLY, "pick": ["data", "metadata.managedFields.0.manager"]}),
    ("cm-method-not-allowed", "POST", ns_path("configmaps", "c1"), cm("c1"), {}),
    # lists, paging, selectors
    ("cm-list-label", "GET", ns_path("configmaps", q={"labelSelector": "t=a"}),
     None, {"pick": ["kind", "items.0.metadata.name"]}),
    ("cm-list-bad-label", "GET", ns_path("configmaps", q={"labelSelector": "t=="}),
     None, {}),
    ("cm-list-field", "GET",
     ns_path("configmaps", q={"fieldSelector": "metadata.name=c1"}), None,
     {"pick": ["items.0.metadata.name"]}),
    ("cm-list-bad-field", "GET",
     ns_path("configmaps", q={"fieldSelector": "data.a=1"}), None, {}),
    ("cm-list-limit", "GET",
     ns_path("configmaps", q={"limit": "1", "labelSelector": "page"}), None,
     {"pick": ["metadata.remainingItemCount", "items.0.metadata.name"]}),
    ("cm-list-bad-continue", "GET",
     ns_path("configmaps", q={"limit": "1", "continue": "garbage"}), None, {}),
    ("cm-list-bad-limit", "GET", ns_path("configmaps", q={"limit": "x"}),
     None, {}),
    ("cm-list-rvmatch-no-rv", "GET",
     ns_path("configmaps", q={"resourceVersionMatch": "NotOlderThan"}),
     None, {}),
    ("cm-list-all-ns", "GET", "/api/v1/configmaps?labelSelector=t%3Da", None,
     {"pick": ["items.0.metadata.name"]}),
    # tables
    ("table-cm", "GET", ns_path("configmaps", q={"labelSelector": "t=a"}),
     None, {"accept": TABLE, "table": True}),
    ("table-cm-one", "GET", ns_path("configmaps", "c1"), None,
     {"accept": TABLE, "table": True}),
    ("table-pods", "GET", ns_path("pods"), None,
     {"accept": TABLE, "table": True}),
    ("table-deployments", "GET", ns_path("deployments", group="apps/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-services", "GET", ns_path("services"), None,
     {"accept": TABLE, "table": True}),
    ("table-namespaces", "GET", "/api/v1/namespaces?labelSelector=apidiff",
     None, {"accept": TABLE, "table": True}),
    ("table-nodes", "GET", "/api/v1/nodes", None,
     {"accept": TABLE, "table": True}),
    ("table-serviceaccounts", "GET", ns_path("serviceaccounts"), None,
     {"accept": TABLE, "table": True}),
    ("table-secrets", "GET", ns_path("secrets"), None,
     {"accept": TABLE, "table": True}),
    ("table-events", "GET", ns_path("events"), None,
     {"accept": TABLE, "table": True}),
    ("table-roles", "GET", ns_path("roles", group="rbac.authorization.k8s.io/v1"),
     None, {"accept": TABLE, "table": True}),
    ("table-rolebindings", "GET",
     ns_path("rolebindings", group="rbac.authorization.k8s.io/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-clusterroles", "GET",
     "/apis/rbac.authorization.k8s.io/v1/clusterroles?labelSelector=apidiff",
     None, {"accept": TABLE, "table": True}),
    ("table-jobs", "GET", ns_path("jobs", group="batch/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-cronjobs", "GET", ns_path("cronjobs", group="batch/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-statefulsets", "GET", ns_path("statefulsets", group="apps/v1"),
     None, {"accept": TABLE, "table": True}),
    ("table-daemonsets", "GET", ns_path("daemonsets", group="apps/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-replicasets", "GET", ns_path("replicasets", group="apps/v1"), None,
     {"accept": TABLE, "table": True}),
    ("table-pvcs", "GET", ns_path("persistentvolumeclaims"), None,
     {"accept": TABLE, "table": True}),
    ("table-leases", "GET", ns_path("leases", group="coordination.k8s.io/v1"),
     None, {"accept": TABLE, "table": True}),
    ("table-crds", "GET",
     "/apis/apiextensions.k8s.io/v1/customresourcedefinitions?labelSelector=apidiff",
     None, {"accept": TABLE, "table": True}),
    ("table-bad-accept", "GET", ns_path("configmaps"), None,
     {"accept": "application/json;as=Table;v=v9;g=meta.k8s.io"}),
    ("accept-unsupported", "GET", ns_path("configmaps"), None,
     {"accept": "text/html"}),
    # Pods
    ("pod-create", "POST", ns_path("pods"), pod("p1"),
     {"pick": ["metadata.name", "status.phase", "spec.restartPolicy",
               "spec.dnsPolicy", "spec.terminationGracePeriodSeconds",
               "spec.containers.0.imagePullPolicy",
               "spec.containers.0.terminationMessagePath"]}),
    ("pod-create-no-containers", "POST", ns_path("pods"),
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p2"},
      "spec": {}}, {}),
    ("pod-create-no-image", "POST", ns_path("pods"),
     pod("p3", containers=[{"name": "c"}]), {}),
    ("pod-create-bad-restart", "POST", ns_path("pods"),
     pod("p4", restartPolicy="Sometimes"), {}),
    ("pod-create-dup-container", "POST", ns_path("pods"),
     pod("p5", containers=[{"name": "c", "image": "a"},
                           {"name": "c", "image": "b"}]), {}),
    ("pod-create-bad-cpu", "POST", ns_path("pods"),
     pod("p6", containers=[{"name": "c", "image": "a",
                            "resources": {"limits": {"cpu": "lots"}}}]), {}),
    ("pod-create-replicas-string", "POST", ns_path("pods"),
     pod("p7", terminationGracePeriodSeconds="ten"), {}),
    ("pod-update-image", "PATCH", ns_path("pods", "p1"),
     {"spec": {"containers": [{"name": "c", "image": "busybox:2"}]}},
     {"ctype": SMP, "pick": ["spec.containers.0.image"]}),
    ("pod-update-forbidden", "PATCH", ns_path("pods", "p1"),
     {"spec": {"restartPolicy": "Never"}}, {"ctype": MERGE}),
    ("pod-smp-bad-directive", "PATCH", ns_path("pods", "p1"),
     {"spec": {"containers": [{"$patch": "explode", "name": "c"}]}},
     {"ctype": SMP}),
    ("pod-status-get", "GET", ns_path("pods", "p1") + "/status", None,
     {"pick": ["kind", "metadata.name"]}),
    ("pod-log-pending", "GET", ns_path("pods", "p1") + "/log", None, {}),
    ("pod-delete-grace", "DELETE",
     ns_path("pods", "p1", q={"gracePeriodSeconds": "0"}), None,
     {"pick": ["kind", "metadata.name"]}),
    ("pod-delete-missing", "DELETE", ns_path("pods", "p1"), None, {}),
    # Deployments
    ("deploy-create", "POST", ns_path("deployments", group="apps/v1"),
     deploy("d1"), {"pick": ["spec.strategy", "spec.revisionHistoryLimit",
                             "spec.progressDeadlineSeconds",
                             "metadata.generation"]}),
    ("deploy-create-selector-mismatch", "POST",
     ns_path("deployments", group="apps/v1"),
     dict(deploy("d2"), spec=dict(deploy("d2")["spec"],
                                  selector={"matchLabels": {"app": "zzz"}})),
     {}),
    ("deploy-create-negative-replicas", "POST",
     ns_path("deployments", group="apps/v1"), deploy("d3", replicas=-1), {}),
    ("deploy-create-replicas-string", "POST",
     ns_path("deployments", group="apps/v1"), deploy("d4", replicas="two"), {}),
    ("deploy-scale-get", "GET",
     ns_path("deployments", "d1", group="apps/v1") + "/scale", None,
     {"pick": ["kind", "apiVersion", "spec.replicas"]}),
    ("deploy-scale-patch", "PATCH",
     ns_path("deployments", "d1", group="apps/v1") + "/scale",
     {"spec": {"replicas": 3}}, {"ctype": MERGE, "pick": ["spec.replicas"]}),
    ("deploy-scale-negative", "PATCH",
     ns_path("deployments", "d1", group="apps/v1") + "/scale",
     {"spec": {"replicas": -3}}, {"ctype": MERGE}),
    ("deploy-selector-immutable", "PATCH",
     ns_path("deployments", "d1", group="apps/v1"),
     {"spec": {"selector": {"matchLabels": {"app": "d1", "x": "y"}}}},
     {"ctype": MERGE}),
    ("deploy-generation", "PATCH", ns_path("deployments", "d1", group="apps/v1"),
     {"spec": {"paused": True}},
     {"ctype": MERGE, "pick": ["metadata.generation"]}),
    # Services
    ("svc-create", "POST", ns_path("services"), svc("s1"),
     {"pick": ["spec.type", "spec.sessionAffinity", "spec.ports.0.protocol",
               "spec.ports.0.targetPort", "spec.ipFamilyPolicy",
               "spec.internalTrafficPolicy"]}),
    ("svc-create-no-ports", "POST", ns_path("services"), svc("s2", ports=[]),
     {}),
    ("svc-create-bad-port", "POST", ns_path("services"),
     svc("s3", ports=[{"port": 70000}]), {}),
    ("svc-create-bad-type", "POST", ns_path("services"), svc("s4", type="Big"),
     {}),
    ("svc-create-nodeport", "POST", ns_path("services"),
     svc("s5", type="NodePort"), {"pick": ["spec.externalTrafficPolicy"]}),
    ("svc-create-bad-clusterip", "POST", ns_path("services"),
     svc("s6", clusterIP="1.2.3"), {}),
    ("svc-clusterip-immutable", "PATCH", ns_path("services", "s1"),
     {"spec": {"clusterIP": "10.0.0.99"}}, {"ctype": MERGE}),
    ("svc-create-headless", "POST", ns_path("services"),
     svc("s7", clusterIP="None"), {"pick": ["spec.clusterIP"]}),
    # Namespaces
    ("ns-create", "POST", "/api/v1/namespaces",
     {"apiVersion": "v1", "kind": "Namespace",
      "metadata": {"name": "apidiff-x", "labels": {"apidiff": "y"}}},
     {"pick": ["status.phase", "spec.finalizers",
               "metadata.labels"]}),
    ("ns-create-bad-name", "POST", "/api/v1/namespaces",
     {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}, {}),
    ("ns-get-missing", "GET", "/api/v1/namespaces/nope", None, {}),
    ("ns-delete", "DELETE", "/api/v1/namespaces/apidiff-x", None,
     {"pick": ["kind", "status.phase"]}),
    ("ns-create-in-terminating", "POST",
     ns_path("configmaps", ns="apidiff-x"), cm("late"), {}),
    ("ns-delete-default", "DELETE", "/api/v1/namespaces/default", None, {}),
    # RBAC
    ("role-create", "POST", ns_path("roles", group="rbac.authorization.k8s.io/v1"),
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
      "metadata": {"name": "r1"},
      "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]},
     {"pick": ["rules"]}),
    ("role-create-no-verbs", "POST",
     ns_path("roles", group="rbac.authorization.k8s.io/v1"),
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
      "metadata": {"name": "r2"},
      "rules": [{"apiGroups": [""], "resources": ["pods"]}]}, {}),
    ("rolebinding-create", "POST",
     ns_path("rolebindings", group="rbac.authorization.k8s.io/v1"),
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
      "metadata": {"name": "rb1"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                  "name": "r1"},
      "subjects": [{"kind": "User", "name": "alice",
                    "apiGroup": "rbac.authorization.k8s.io"}]},
     {"pick": ["subjects"]}),
    ("rolebinding-roleref-immutable", "PATCH",
     ns_path("rolebindings", "rb1", group="rbac.authorization.k8s.io/v1"),
     {"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                  "name": "r9"}}, {"ctype": MERGE}),
    ("rolebinding-bad-subject", "POST",
     ns_path("rolebindings", group="rbac.authorization.k8s.io/v1"),
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
      "metadata": {"name": "rb2"},
      "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                  "name": "r1"},
      "subjects": [{"kind": "Robot", "name": "x"}]}, {}),
    ("clusterrole-create", "POST",
     "/apis/rbac.authorization.k8s.io/v1/clusterroles",
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
      "metadata": {"name": "apidiff-cr", "labels": {"apidiff": "y"}},
      "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]},
     {"pick": ["rules"]}),
    ("clusterrole-escalate-nonresource-ns", "POST",
     ns_path("roles", group="rbac.authorization.k8s.io/v1"),
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
      "metadata": {"name": "r3"},
      "rules": [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]}, {}),
    ("ssar", "POST",
     "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
     {"apiVersion": "authorization.k8s.io/v1",
      "kind": "SelfSubjectAccessReview",
      "spec": {"resourceAttributes": {"namespace": NS, "verb": "get",
                                      "resource": "pods"}}},
     {"pick": ["status.allowed"]}),
    ("ssr", "POST",
     "/apis/authentication.k8s.io/v1/selfsubjectreviews",
     {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"},
     {"pick": ["status.userInfo.username"]}),
    # Secrets, Jobs, status, more create and delete cases
    ("secret-create", "POST", ns_path("secrets"),
     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec1"},
      "stringData": {"a": "b"}}, {"pick": ["type", "data", "stringData"]}),
    ("secret-create-bad-base64", "POST", ns_path("secrets"),
     {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec2"},
      "data": {"a": "%%%"}}, {}),
    ("secret-create-bad-type-change", "PATCH", ns_path("secrets", "sec1"),
     {"type": "kubernetes.io/tls"}, {"ctype": MERGE}),
    ("table-secrets-one", "GET", ns_path("secrets", "sec1"), None,
     {"accept": TABLE, "table": True}),
    ("job-create", "POST", ns_path("jobs", group="batch/v1"),
     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j1"},
      "spec": {"template": {"spec": dict(pod("x")["spec"],
                                         restartPolicy="Never")}}},
     {"pick": ["spec.backoffLimit", "spec.completions", "spec.parallelism",
               "spec.completionMode", "spec.suspend",
               "spec.template.metadata.labels.job-name"]}),
    ("job-create-restart-always", "POST", ns_path("jobs", group="batch/v1"),
     {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j2"},
      "spec": {"template": {"spec": pod("x")["spec"]}}}, {}),
    ("job-template-immutable", "PATCH", ns_path("jobs", "j1", group="batch/v1"),
     {"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}},
     {"ctype": SMP}),
    ("create-with-rv", "POST", ns_path("configmaps"), cm("rv1", rv="5"), {}),
    ("create-with-uid", "POST", ns_path("configmaps"),
     {"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "uid1", "uid": "11111111-2222-3333-4444-555555555555"}},
     {"pick": ["metadata.name"]}),
    ("cm-status-subresource", "GET", ns_path("configmaps", "c1") + "/status",
     None, {}),
    ("pod-status-patch", "PATCH", ns_path("pods", "p1") + "/status",
     {"status": {"phase": "Running"}}, {"ctype": MERGE,
                                        "pick": ["status.phase"]}),
    ("pod-ephemeral-get", "GET", ns_path("pods", "p1") + "/ephemeralcontainers",
     None, {"pick": ["kind"]}),
    ("delete-bad-propagation", "DELETE",
     ns_path("configmaps", "page-0", q={"propagationPolicy": "Sometimes"}),
     None, {}),
    ("list-set-selector", "GET",
     ns_path("configmaps", q={"labelSelector": "page in (0,1),page notin (2)"}),
     None, {"pick": ["items.0.metadata.name", "items.1.metadata.name"]}),
    ("list-rv-0", "GET", ns_path("configmaps", q={"resourceVersion": "0",
                                                   "labelSelector": "page"}),
     None, {"pick": ["items.0.metadata.name"]}),
    ("list-limit-negative", "GET", ns_path("configmaps", q={"limit": "-1"}),
     None, {"pick": ["kind"]}),
    ("get-bad-name", "GET", ns_path("configmaps", "Bad_Name"), None, {}),
    ("cluster-get-namespaced", "GET", "/api/v1/configmaps/c1", None, {}),
    ("namespaced-kind-no-ns", "POST", "/api/v1/configmaps", cm("nons"), {}),
    # deletes
    ("cm-delete-precondition", "DELETE", ns_path("configmaps", "c1"),
     {"kind": "DeleteOptions", "apiVersion": "v1",
      "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}, {}),
    ("cm-delete", "DELETE", ns_path("configmaps", "c1"), None,
     {"pick": ["kind", "status", "details.name"]}),
    ("cm-delete-missing", "DELETE", ns_path("configmaps", "c1"), None, {}),
    ("cm-deletecollection", "DELETE",
     ns_path("configmaps", q={"labelSelector": "page"}), None,
     {"pick": ["kind"]}),
]


def setup(s):
    """What every server needs before the requests: the namespace, its
    default ServiceAccount (kube-apiserver alone has no controller to
    make it) and three labelled ConfigMaps for paging."""
    s.req("POST", "/api/v1/namespaces",
          {"apiVersion": "v1", "kind": "Namespace",
           "metadata": {"name": NS, "labels": {"apidiff": "y"}}})
    s.req("POST", ns_path("serviceaccounts"),
          {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "default"}})
    for i in range(3):
        s.req("POST", ns_path("configmaps"),
              cm("page-%d" % i, labels={"page": str(i)}))


def run_http(s, case):
    cid, method, path, body, o = case
    st, hd, data = s.req(method, path, body, o.get("ctype"), o.get("accept"))
    return answer(st, hd, data, o.get("pick", ()), o.get("table", False))


def run_watches(s):
    """Watch cases: (id, answer)."""
    out = []
    st, _, data = s.req("POST", ns_path("configmaps"), cm("w1", labels={"w": "1"}))
    rv0 = json.loads(data)["metadata"]["resourceVersion"]
    for v in ("2", "3"):
        s.req("PATCH", ns_path("configmaps", "w1"), {"data": {"a": v}}, MERGE)

    def evsum(r, extra=()):
        st, hd, data, evs = r
        # Periodic bookmarks come on a timer (volrayd's every 5 s,
        # kube-apiserver's about a minute), so whether a 1 s watch sees
        # one is luck: only the initial-events-end one is compared.
        evs = [e for e in evs if e.get("type") != "BOOKMARK" or
               (dig(e, "object.metadata.annotations") or {}).get(
                   "k8s.io/initial-events-end")]
        a = answer(st, hd, data if st != 200 else b"")
        a["events"] = " ".join(
            e.get("type", "?") + ("(%s)" % (e.get("object") or {}).get("kind", "")
                                  if e.get("type") in ("ERROR", "BOOKMARK") else "")
            for e in evs)
        for e in evs:
            if e.get("type") == "ERROR":
                a.update({"error." + k: v for k, v in
                          status_fields(e.get("object") or {}).items()})
                a["error.code"] = (e.get("object") or {}).get("code")
            if e.get("type") == "BOOKMARK":
                ann = dig(e, "object.metadata.annotations") or {}
                a["bookmark.annotations"] = json.dumps(ann, sort_keys=True)
        return a

    wq = lambda **q: ns_path("configmaps", q=dict(q, labelSelector="w=1",
                                                  timeoutSeconds="1"))
    out.append(("watch-from-rv", evsum(s.watch(wq(watch="1", resourceVersion=rv0)))))
    out.append(("watch-from-rv-bookmarks", evsum(s.watch(
        wq(watch="1", resourceVersion=rv0, allowWatchBookmarks="true")))))
    out.append(("watch-from-0", evsum(s.watch(wq(watch="1", resourceVersion="0")))))
    # No watch without a resourceVersion: kube-apiserver 1.34 serves it
    # from its watch cache once that has caught up with etcd, and Debian's
    # etcd has no progress notifications (RequestWatchProgress, see
    # watch-initial-events), so its answer depends on whether its own
    # Lease was written in between: ADDED, or a 504 ERROR event.
    out.append(("watch-initial-events", evsum(s.watch(wq(
        watch="1", sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
        allowWatchBookmarks="true")))))
    out.append(("watch-initial-events-no-bookmarks", evsum(s.watch(wq(
        watch="1", sendInitialEvents="true",
        resourceVersionMatch="NotOlderThan")))))
    out.append(("watch-expired-rv", evsum(s.watch(wq(watch="1", resourceVersion="2")))))
    out.append(("watch-future-rv", evsum(s.watch(wq(watch="1",
                                                    resourceVersion="999999999")))))
    out.append(("watch-bad-rv", evsum(s.watch(wq(watch="1", resourceVersion="abc")))))
    out.append(("watch-one-object", evsum(s.watch(ns_path(
        "configmaps", q={"watch": "1", "fieldSelector": "metadata.name=w1",
                         "resourceVersion": rv0, "timeoutSeconds": "1"})))))
    out.append(("watch-path-form", evsum(s.watch(
        "/api/v1/watch/namespaces/%s/configmaps?labelSelector=w%%3D1&timeoutSeconds=1"
        "&resourceVersion=%s" % (NS, rv0)))))
    st, hd, data = s.req("GET", ns_path("configmaps", q={
        "resourceVersion": "2", "resourceVersionMatch": "Exact",
        "labelSelector": "w=1"}))
    out.append(("list-exact-old-rv", answer(st, hd, data)))
    # A continue token is for the list it came from, and not past compaction.
    st, hd, data = s.req("GET", ns_path("configmaps", q={
        "limit": "1", "labelSelector": "page"}))
    tok = (json.loads(data).get("metadata") or {}).get("continue", "")
    st, hd, data = s.req("GET", ns_path("configmaps", q={
        "limit": "5", "labelSelector": "page", "continue": tok}))
    out.append(("list-continue", answer(st, hd, data, ["items.0.metadata.name",
                                                       "metadata.continue"])))
    st, hd, data = s.req("GET", ns_path("configmaps", q={
        "limit": "5", "labelSelector": "other", "continue": tok}))
    out.append(("list-continue-other-selector",
                answer(st, hd, data, ["items.0.metadata.name"])))
    return out


KUBECTL = [
    # (id, args, stdin, lines of stdout compared or None)
    ("kubectl-create-cm", ["-n", NS, "create", "configmap", "k1",
                           "--from-literal=a=1"], None, None),
    ("kubectl-create-cm-dup", ["-n", NS, "create", "configmap", "k1"], None, None),
    ("kubectl-get-cm", ["-n", NS, "get", "cm", "k1"], None, 1),
    ("kubectl-get-cm-wide", ["-n", NS, "get", "cm", "k1", "-o", "wide"], None, 1),
    ("kubectl-get-missing", ["-n", NS, "get", "cm", "nope"], None, None),
    ("kubectl-get-unknown-kind", ["-n", NS, "get", "frobs"], None, None),
    ("kubectl-run", ["-n", NS, "run", "kp", "--image=busybox", "--",
                     "sleep", "60"], None, None),
    ("kubectl-get-pod", ["-n", NS, "get", "pod", "kp"], None, None),
    ("kubectl-get-pod-wide", ["-n", NS, "get", "pod", "kp", "-o", "wide"], None, None),
    ("kubectl-get-pods-wide", ["-n", NS, "get", "pods", "-l", "run=kp", "-o",
                               "wide"], None, 1),
    ("kubectl-create-deploy", ["-n", NS, "create", "deployment", "kd",
                               "--image=busybox"], None, None),
    ("kubectl-get-deploy-wide", ["-n", NS, "get", "deploy", "kd", "-o", "wide"],
     None, 1),
    ("kubectl-expose", ["-n", NS, "expose", "deployment", "kd", "--port=80"],
     None, None),
    ("kubectl-get-svc-wide", ["-n", NS, "get", "svc", "kd", "-o", "wide"], None, 1),
    ("kubectl-get-ns", ["get", "ns", NS], None, None),
    ("kubectl-get-sa", ["-n", NS, "get", "sa", "default"], None, None),
    ("kubectl-get-role-wide", ["-n", NS, "get", "role", "-o", "wide"], None, 1),
    ("kubectl-get-rolebinding-wide", ["-n", NS, "get", "rolebinding", "-o", "wide"],
     None, 1),
    ("kubectl-get-clusterrole-admin", ["get", "clusterrole", "admin"], None, 1),
    ("kubectl-get-clusterrolebinding-wide",
     ["get", "clusterrolebinding", "cluster-admin", "-o", "wide"], None, None),
    ("kubectl-apply-unknown-strict",
     ["-n", NS, "apply", "--validate=strict", "-f", "-"],
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k2\nbogus: 1\n", None),
    ("kubectl-apply-unknown-warn",
     ["-n", NS, "apply", "--validate=warn", "-f", "-"],
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k3\nbogus: 1\n", None),
    ("kubectl-apply-server-side",
     ["-n", NS, "apply", "--server-side", "-f", "-"],
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k4\ndata:\n  a: '1'\n",
     None),
    ("kubectl-apply-server-side-conflict",
     ["-n", NS, "apply", "--server-side", "--field-manager=other", "-f", "-"],
     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: k4\ndata:\n  a: '2'\n",
     None),
    ("kubectl-patch-json-fail",
     ["-n", NS, "patch", "cm", "k1", "--type=json",
      "-p", '[{"op":"test","path":"/data/a","value":"x"}]'], None, None),
    ("kubectl-patch-merge",
     ["-n", NS, "patch", "cm", "k1", "--type=merge", "-p", '{"data":{"b":"2"}}'],
     None, None),
    ("kubectl-label-overwrite",
     ["-n", NS, "label", "cm", "k1", "x=1"], None, None),
    ("kubectl-label-no-overwrite",
     ["-n", NS, "label", "cm", "k1", "x=2"], None, None),
    ("kubectl-dry-run-server",
     ["-n", NS, "create", "configmap", "k5", "--dry-run=server", "-o", "name"],
     None, None),
    ("kubectl-scale", ["-n", NS, "scale", "deploy", "kd", "--replicas=2"],
     None, None),
    ("kubectl-auth-can-i", ["auth", "can-i", "create", "pods", "-n", NS],
     None, None),
    ("kubectl-auth-can-i-as", ["auth", "can-i", "get", "pods", "-n", NS,
                               "--as=bob"], None, None),
    # The anchor's admin is a client certificate: its Extra line is not.
    ("kubectl-auth-whoami", ["auth", "whoami"], None, 3),
    ("kubectl-api-versions-has-v1", ["api-versions"], None, None),
    ("kubectl-delete-missing", ["-n", NS, "delete", "cm", "nope"], None, None),
    ("kubectl-delete", ["-n", NS, "delete", "cm", "k1"], None, None),
    ("kubectl-get-empty", ["-n", NS, "get", "cm", "-l", "none=here"], None, None),
    ("kubectl-get-job-wide", ["-n", NS, "get", "job", "-o", "wide"], None, 1),
    ("kubectl-get-secret", ["-n", NS, "get", "secret", "sec1"], None, 1),
    ("kubectl-get-events-wide", ["-n", NS, "get", "events", "-o", "wide"],
     None, 1),
    ("kubectl-explain-cm", ["explain", "configmap.data"], None, 4),
    ("kubectl-api-resources-cm", ["api-resources", "--api-group="], None, None),
]


def run_kubectl(s, case):
    cid, args, stdin, lines = case
    rc, out, err = s.kubectl(args, stdin)
    if cid == "kubectl-api-versions-has-v1":
        # Which groups each serves is listed by discovery; here only
        # whether the core ones are there.
        want = ["v1", "apps/v1", "batch/v1", "rbac.authorization.k8s.io/v1"]
        out = " ".join(w for w in want if w in out.split())
    return kanswer(rc, out, err, lines)


def run_pyclient(s):
    """The official client: what its ApiException carries."""
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException
    api = config.new_client_from_config(config_file=s.kubeconfig)
    core = client.CoreV1Api(api)
    apps = client.AppsV1Api(api)
    out = []

    def call(cid, f, pick=None):
        try:
            r = f()
            a = {"ok": True}
            if pick:
                a["value"] = norm(json.dumps(pick(r), sort_keys=True, default=str))
        except ApiException as e:
            a = {"ok": False, "status": e.status, "reason": e.reason}
            try:
                a.update(status_fields(json.loads(e.body)))
            except (ValueError, TypeError):
                a["body"] = norm(str(e.body)[:200])
        out.append((cid, a))

    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py1"),
                              data={"a": "1"})
    call("py-cm-create", lambda: core.create_namespaced_config_map(NS, body),
         lambda r: r.data)
    call("py-cm-create-dup", lambda: core.create_namespaced_config_map(NS, body))
    call("py-cm-read-missing",
         lambda: core.read_namespaced_config_map("nope", NS))
    call("py-cm-list-limit", lambda: core.list_namespaced_config_map(
        NS, limit=2, label_selector="page"),
        lambda r: [len(r.items), r.metadata.remaining_item_count])
    call("py-cm-replace-stale", lambda: core.replace_namespaced_config_map(
        "py1", NS, client.V1ConfigMap(metadata=client.V1ObjectMeta(
            name="py1", resource_version="1"), data={"a": "2"})))
    call("py-cm-patch", lambda: core.patch_namespaced_config_map(
        "py1", NS, {"data": {"b": "2"}}), lambda r: r.data)
    call("py-pod-create-invalid", lambda: core.create_namespaced_pod(
        NS, client.V1Pod(metadata=client.V1ObjectMeta(name="py-p"),
                         spec=client.V1PodSpec(containers=[
                             client.V1Container(name="BAD", image="x")]))))
    call("py-deploy-read-missing",
         lambda: apps.read_namespaced_deployment("nope", NS))
    call("py-ns-list", lambda: core.list_namespace(label_selector="apidiff"),
         lambda r: sorted(n.metadata.name for n in r.items))
    call("py-cm-delete", lambda: core.delete_namespaced_config_map("py1", NS),
         lambda r: r.kind)
    return out


def run_all(s):
    setup(s)
    res = []
    for c in HTTP:
        res.append((c[0], run_http(s, c)))
    res += run_watches(s)
    for c in KUBECTL:
        res.append((c[0], run_kubectl(s, c)))
    res += run_pyclient(s)
    return res


# ---- starting and stopping the servers ----------------------------------

def start_volrayd(builddir, work):
    data = os.path.join(work, "volrayd")
    log = open(os.path.join(work, "volrayd.log"), "w")
    p = subprocess.Popen([os.path.join(builddir, "volrayd"), "--data-dir", data,
                          "--listen", "127.0.0.1:0", "--no-local-node",
                          "--roles", "api", "--share-dir", TOP],
                         stdout=log, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
    kc = os.path.join(data, "kubeconfig")
    port = None
    for _ in range(600):
        if p.poll() is not None:
            raise SystemExit("volrayd exited (see %s/volrayd.log)" % work)
        if os.path.exists(kc):
            m = re.search(r"server: https://127.0.0.1:(\d+)", open(kc).read())
            if m:
                port = int(m.group(1))
                break
        time.sleep(0.05)
    if not port:
        p.kill()
        raise SystemExit("volrayd wrote no kubeconfig")
    s = Server("volrayd", port, os.path.join(data, "pki", "ca.crt"),
               open(os.path.join(data, "pki", "admin.token")).read().strip(), kc)
    for _ in range(600):
        try:
            if s.req("GET", "/readyz")[0] == 200:
                return p, s
        except OSError:
            pass
        time.sleep(0.05)
    p.kill()
    raise SystemExit("volrayd did not become ready")


def start_anchor(work):
    d = os.path.join(work, "anchor")
    r = subprocess.run([ANCHORS, "kube-apiserver", "start", d],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("kube-apiserver start: " + r.stdout + r.stderr)
    kc = os.path.join(d, "kubeconfig")
    port = int(re.search(r"server: https://127.0.0.1:(\d+)", open(kc).read()).group(1))
    return d, Server("kube-apiserver", port, os.path.join(d, "ca.crt"),
                     open(os.path.join(d, "token")).read().strip(), kc)


# ---- the report ----------------------------------------------------------

def cell(v):
    s = "" if v is None else str(v)
    s = s.replace("|", "\\|").replace("\n", " ")
    if len(s) > 400:
        s = s[:400] + "..."
    return "`%s`" % s if s else ""


def describe(cid):
    for c in HTTP:
        if c[0] == cid:
            extra = ""
            o = c[4]
            if o.get("ctype"):
                extra += " (%s)" % o["ctype"]
            if o.get("accept"):
                extra += " (Accept: %s)" % o["accept"]
            return "%s %s%s" % (c[1], c[2], extra)
    for c in KUBECTL:
        if c[0] == cid:
            return "kubectl " + " ".join(c[1])
    if cid.startswith("py-"):
        return "Python client: " + cid[3:]
    return "watch/list: " + cid


def is_known(known, cid, field):
    return (cid, field) in known or (cid, "*") in known


def load_known(path):
    known = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                raise SystemExit("%s: '%s' has no reason" % (path, line))
            known[(parts[0], parts[1])] = parts[2]
    return known


def report(va, ka, known, path):
    ids = [c for c, _ in va]
    vd, kd = dict(va), dict(ka)
    diffs = []
    lines = ["# volrayd and kube-apiserver, request by request", "",
             "Written by `scripts/apidiff.py` (do not edit): the same requests",
             "sent to volrayd (`--roles api --no-local-node`) and to the real",
             "kube-apiserver anchor (%s), with uids, timestamps," % anchor_version(),
             "resourceVersions, generated names, addresses and ages replaced by",
             "placeholders. Each request's answer is reduced to what is compared:",
             "status code, Status reason, message, details and causes, Warning",
             "headers, Table columns, and the fields named. Differences listed",
             "in `tests/apidiff-known.txt` are deliberate or not yet fixed, with",
             "the reason there; README's \"Differences from kube-apiserver\" sums",
             "them up.", ""]
    body = []
    for cid in ids:
        v, k = vd.get(cid, {}), kd.get(cid, {})
        fields = [f for f in list(k) + [f for f in v if f not in k]]
        differ = [f for f in fields if v.get(f) != k.get(f)]
        for f in differ:
            diffs.append((cid, f))
        body.append("### %s%s" % (cid, "" if differ else " (same)"))
        body.append("")
        body.append(describe(cid).replace("`", "'"))
        body.append("")
        if not differ:
            for f in fields:
                if k.get(f) not in (None, ""):
                    body.append("- %s: %s" % (f, cell(k[f])))
            body.append("")
            continue
        body.append("| field | kube-apiserver | volrayd | known |")
        body.append("|---|---|---|---|")
        for f in fields:
            mark = ""
            if f in differ:
                mark = "known" if is_known(known, cid, f) else "**NEW**"
            body.append("| %s%s | %s | %s | %s |" % (
                f, " (differs)" if f in differ else "", cell(k.get(f)),
                cell(v.get(f)), mark))
        body.append("")
    new = [d for d in diffs if not is_known(known, *d)]
    stale = sorted(k for k in known if k not in diffs and
                   not (k[1] == "*" and k[0] in {c for c, _ in diffs}))
    lines.append("%d requests compared, %d answer the same, %d differ "
                 "(%d fields: %d known, %d new)." % (
                     len(ids), len(ids) - len({c for c, _ in diffs}),
                     len({c for c, _ in diffs}), len(diffs),
                     len(diffs) - len(new), len(new)))
    lines.append("")
    if stale:
        lines.append("Known differences no longer seen (remove them from "
                     "tests/apidiff-known.txt):")
        lines.append("")
        for cid, f in stale:
            lines.append("- %s %s" % (cid, f))
        lines.append("")
    if diffs:
        lines.append("## Differences")
        lines.append("")
        lines.append("| request | fields | reason |")
        lines.append("|---|---|---|")
        rows = {}
        for cid, f in diffs:
            why = known.get((cid, f), known.get((cid, "*"), "**new**"))
            rows.setdefault((cid, why), []).append(f)
        for (cid, why), fs in rows.items():
            lines.append("| [%s](#%s) | %s | %s |" % (
                cid, cid, ", ".join(fs), why.replace("|", "\\|")))
        lines.append("")
    lines.append("## Requests")
    lines.append("")
    with open(path, "w") as fh:
        fh.write("\n".join(lines + body).rstrip() + "\n")
    return diffs, new, stale


def anchor_version():
    r = subprocess.run([ANCHORS, "path", "kube-apiserver"], capture_output=True,
                       text=True)
    m = re.search(r"/(v[^/]+)/bin/", r.stdout)
    return "kube-apiserver " + (m.group(1) if m else "?")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("builddir")
    ap.add_argument("--report", default=os.path.join(TOP, "tests", "apidiff.md"))
    ap.add_argument("--known", default=os.path.join(TOP, "tests", "apidiff-known.txt"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--only", default=None, help="regex of request ids (debugging)")
    args = ap.parse_args()
    if subprocess.run([ANCHORS, "path", "kube-apiserver"],
                      capture_output=True).returncode != 0:
        print("apidiff: kube-apiserver is not built "
              "(scripts/anchors.sh build kube-apiserver)", file=sys.stderr)
        return 77
    if not shutil.which("etcd"):
        print("apidiff: no etcd on PATH (Debian's etcd-server)", file=sys.stderr)
        return 77
    if args.only:
        rx = re.compile(args.only)
        HTTP[:] = [c for c in HTTP if rx.search(c[0])]
        KUBECTL[:] = [c for c in KUBECTL if rx.search(c[0])]
    work = tempfile.mkdtemp(prefix="volray-apidiff.")
    vp = anchor_dir = None
    t0 = time.time()
    try:
        vp, vs = start_volrayd(os.path.abspath(args.builddir), work)
        anchor_dir, ks = start_anchor(work)
        va = run_all(vs)
        ka = run_all(ks)
    finally:
        if vp:
            vp.terminate()
            try:
                vp.wait(10)
            except subprocess.TimeoutExpired:
                vp.kill()
        if anchor_dir:
            subprocess.run([ANCHORS, "kube-apiserver", "stop", anchor_dir],
                           capture_output=True)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("apidiff: work directory %s" % work, file=sys.stderr)
    known = load_known(args.known)
    diffs, new, stale = report(va, ka, known, args.report)
    print("apidiff: %d requests, %d differing fields (%d new), %d stale known "
          "entries, %.0f s; report in %s" % (len(va), len(diffs), len(new),
                                            len(stale), time.time() - t0,
                                            args.report))
    for cid, f in new:
        print("apidiff: new difference: %s %s: kube-apiserver %s, volrayd %s" % (
            cid, f, dict(ka).get(cid, {}).get(f), dict(va).get(cid, {}).get(f)),
            file=sys.stderr)
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
