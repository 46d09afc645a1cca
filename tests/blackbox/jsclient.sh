#!/bin/sh
# The official JavaScript client (@kubernetes/client-node, pinned in
# tests/js/package-lock.json) against the TLS and token default, with the
# generated kubeconfig loaded unchanged: ConfigMap and Pod CRUD with the
# client's 1.x object-parameter API, paging with remainingItemCount, an
# informer that sees add/update/delete made after it connected, and the
# KubeRay RayCluster sample through CustomObjectsApi. The client refuses
# plain HTTP, so this is also a check of the HTTPS default.
#
# The client is installed with `npm ci` into the build tree (tests/js/ there)
# and reinstalled only when the lock file changes; without node and npm, or
# without the registry, the test is skipped with the reason.
. "$(dirname "$0")/lib.sh"
need_samples

. "$(dirname "$0")/jslib.sh"
js_client_setup
start_daemon

cat >"$WORK/kc.mjs" <<'JS'
// The official client, configured from the daemon's kubeconfig as is.
import * as k8s from '@kubernetes/client-node';
export { k8s };
export const kc = new k8s.KubeConfig();
kc.loadFromFile(process.env.KUBECONFIG);
export const core = kc.makeApiClient(k8s.CoreV1Api);
export const custom = kc.makeApiClient(k8s.CustomObjectsApi);
export const mergePatch = k8s.setHeaderOptions('Content-Type',
    k8s.PatchStrategy.MergePatch);

export function fail(msg) {
    console.error('FAIL: ' + msg);
    process.exit(1);
}

export function expect(want, got, what) {
    const w = JSON.stringify(want), g = JSON.stringify(got);
    if (w !== g)
        fail(`${what}: want ${w}, got ${g}`);
}

// The HTTP status and Status reason of a call that must fail.
export async function statusOf(promise) {
    try {
        await promise;
    } catch (e) {
        if (!(e instanceof k8s.ApiException))
            throw e;
        const body = typeof e.body === 'string' ? JSON.parse(e.body) : e.body;
        return [e.code, body.reason];
    }
    fail('call succeeded');
}

// Run main, failing on any exception.
export function run(main) {
    main().then(() => console.log('ok'), (e) => fail(e.stack || e));
}
JS

# --- ConfigMaps and Pods: create, read, replace, patch, list, delete
cat >"$WORK/crud.mjs" <<'JS'
import { core, expect, fail, mergePatch, run, statusOf } from './kc.mjs';

run(async () => {
    await core.createNamespace({ body: { metadata: { name: 'js' } } });
    const namespace = 'js', name = 'c1';
    const cm = await core.createNamespacedConfigMap({ namespace, body: {
        metadata: { name, labels: { app: 'js' } }, data: { k: 'v1' } } });
    expect(name, cm.metadata.name, 'created name');
    if (!cm.metadata.uid || !cm.metadata.resourceVersion)
        fail('no uid or resourceVersion on create');
    expect([409, 'AlreadyExists'], await statusOf(core.createNamespacedConfigMap(
        { namespace, body: { metadata: { name } } })), 'create twice');

    const got = await core.readNamespacedConfigMap({ name, namespace });
    expect({ k: 'v1' }, got.data, 'read data');
    got.data.k = 'v2';
    const rep = await core.replaceNamespacedConfigMap({ name, namespace, body: got });
    expect('v2', rep.data.k, 'replaced data');
    got.data.k = 'stale';
    expect([409, 'Conflict'], await statusOf(core.replaceNamespacedConfigMap(
        { name, namespace, body: got })), 'replace with a stale resourceVersion');
    let pat = await core.patchNamespacedConfigMap({ name, namespace,
        body: { data: { extra: 'x' } } }, mergePatch);
    expect({ k: 'v2', extra: 'x' }, pat.data, 'merge-patched data');
    // Without options the client sends a JSON patch.
    pat = await core.patchNamespacedConfigMap({ name, namespace,
        body: [{ op: 'remove', path: '/data/extra' }] });
    expect({ k: 'v2' }, pat.data, 'json-patched data');
    const lst = await core.listNamespacedConfigMap({ namespace, labelSelector: 'app=js' });
    expect(['c1'], lst.items.map((i) => i.metadata.name), 'list by label');
    await core.deleteNamespacedConfigMap({ name, namespace });
    expect([404, 'NotFound'], await statusOf(core.readNamespacedConfigMap(
        { name, namespace })), 'read after delete');

    const pod = await core.createNamespacedPod({ namespace, body: {
        apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p1' },
        spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
    expect('Pending', pod.status.phase, 'new pod phase');
    const pods = await core.listPodForAllNamespaces({
        fieldSelector: 'metadata.namespace=js' });
    expect(['p1'], pods.items.map((p) => p.metadata.name), 'pods by field');
    await core.deleteNamespacedPod({ name: 'p1', namespace,
        body: { propagationPolicy: 'Background' } });
    expect([404, 'NotFound'], await statusOf(core.readNamespacedPod(
        { name: 'p1', namespace })), 'pod after delete');

    // Paging: five objects two at a time, after the namespace's
    // kube-root-ca.crt (every namespace has one, as in Kubernetes).
    for (let i = 0; i < 100; i++) {
        const l = await core.listNamespacedConfigMap({ namespace });
        if (l.items.some((c) => c.metadata.name === 'kube-root-ca.crt'))
            break;
        await new Promise((r) => setTimeout(r, 100));
    }
    for (let i = 0; i < 5; i++)
        await core.createNamespacedConfigMap({ namespace, body: {
            metadata: { name: `m${i}` } } });
    const seen = [], pages = [];
    let token;
    do {
        const page = await core.listNamespacedConfigMap({ namespace, limit: 2,
            _continue: token });
        seen.push(...page.items.map((i) => i.metadata.name));
        pages.push([page.items.length, page.metadata.remainingItemCount ?? null]);
        token = page.metadata._continue;
    } while (token);
    expect(['kube-root-ca.crt', 'm0', 'm1', 'm2', 'm3', 'm4'], seen,
        'every item once, in order');
    expect([[2, 4], [2, 2], [2, null]], pages, 'page sizes and remainingItemCount');
});
JS
node "$WORK/crud.mjs" || fail "CRUD through the JavaScript client"
pass "ConfigMap and Pod create/read/replace/patch/list/delete, paging with remainingItemCount"

# --- an informer: list, then watch; events for changes made after it connected
cat >"$WORK/informer.mjs" <<'JS'
import { core, expect, fail, k8s, kc } from './kc.mjs';

const namespace = 'js';
const events = [];
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`,
    () => core.listNamespacedConfigMap({ namespace }));
for (const verb of ['add', 'update', 'delete'])
    informer.on(verb, (o) => {
        if (o.metadata.name !== 'i1')
            return;
        events.push(`${verb} ${o.data?.k}`);
        if (verb === 'delete')
            finish();
    });
// stop() aborts the watch's request, which the informer reports as an error.
let stopping = false;
informer.on('error', (e) => stopping || fail(`informer error: ${e}`));
const timer = setTimeout(() => fail(`events so far: ${events}`), 30000);
async function finish() {
    clearTimeout(timer);
    stopping = true;
    await informer.stop();
    expect(['add a', 'update b', 'delete b'], events, 'informer events');
    const cached = informer.list(namespace).map((o) => o.metadata.name).sort();
    expect(['kube-root-ca.crt', 'm0', 'm1', 'm2', 'm3', 'm4'], cached,
        'informer cache');
    console.log('ok');
    process.exit(0);
}
await informer.start();
JS
cat >"$WORK/changes.mjs" <<'JS'
import { core, mergePatch, run } from './kc.mjs';

run(async () => {
    const namespace = 'js', name = 'i1';
    await core.createNamespacedConfigMap({ namespace, body: {
        metadata: { name }, data: { k: 'a' } } });
    await core.patchNamespacedConfigMap({ name, namespace,
        body: { data: { k: 'b' } } }, mergePatch);
    await core.deleteNamespacedConfigMap({ name, namespace });
});
JS
before=$(watchers)
node "$WORK/informer.mjs" >"$WORK/informer.out" 2>&1 &
INFORMER=$!
wait_watchers $((before + 1))
node "$WORK/changes.mjs" || fail "changes for the informer"
wait "$INFORMER" || fail "informer: $(cat "$WORK/informer.out")"
pass "makeInformer: add, update, delete after it connected; its cache is the list"

# --- a custom object: the KubeRay sample RayCluster
cat >"$WORK/custom.mjs" <<'JS'
import { readFileSync } from 'node:fs';
import { custom, expect, k8s, mergePatch, run, statusOf } from './kc.mjs';

run(async () => {
    const body = k8s.loadYaml(readFileSync(process.argv[2], 'utf8'));
    const where = { group: 'ray.io', version: 'v1', namespace: 'js',
        plural: 'rayclusters' };
    const name = body.metadata.name;
    let rc = await custom.createNamespacedCustomObject({ ...where, body });
    expect(name, rc.metadata.name, 'created RayCluster');
    rc = await custom.getNamespacedCustomObject({ ...where, name });
    expect(1, rc.spec.workerGroupSpecs[0].replicas, 'replicas as sent');
    const groups = [{ ...body.spec.workerGroupSpecs[0], replicas: 3 }];
    rc = await custom.patchNamespacedCustomObject({ ...where, name,
        body: { spec: { workerGroupSpecs: groups } } }, mergePatch);
    expect(3, rc.spec.workerGroupSpecs[0].replicas, 'merge-patched replicas');
    const lst = await custom.listNamespacedCustomObject(where);
    expect('RayClusterList', lst.kind, 'list kind');
    expect([name], lst.items.map((i) => i.metadata.name), 'listed RayClusters');
    await custom.deleteNamespacedCustomObject({ ...where, name });
    expect([404, 'NotFound'], await statusOf(custom.getNamespacedCustomObject(
        { ...where, name })), 'RayCluster after delete');
});
JS
node "$WORK/custom.mjs" "$SAMPLES/kuberay/ray-cluster.sample.yaml" ||
	fail "RayCluster through CustomObjectsApi"
pass "CustomObjectsApi: RayCluster sample created, read, merge-patched, listed, deleted"
