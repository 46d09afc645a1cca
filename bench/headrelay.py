"""The Ray heads of volray's simulated nodes at their pod IPs, for
bench/anchors.sh operator (KubeRay's operator against kube-apiserver).

kube-apiserver's service proxy, which KubeRay's operator uses
(--use-kubernetes-proxy) to reach a head's dashboard, dials the head
pod's IP and port; nothing of a simulated pod listens there: volray's
agent serves the emulated heads at its endpoint (the kubelet's port),
under /volray/proxy/NS/POD/PORT/, which is where volray's own
controllers go through kube-apiserver's node proxy. With the simulated
pods' range routed to this machine (ip route add local 10.64.0.0/10 dev
lo, which anchors_operator.sh does, so that any address of it can be
bound), this relay watches the Ray head pods and listens on each one's
IP at PORT once it has one; it sends each request to the agent's
endpoint of the pod's node (InternalIP and kubelet port, looked up once
per node) with the kubelet client certificate kube-apiserver uses, its
path under /volray/proxy/NS/POD/PORT, one request a connection
(Connection: close both ways).

    python3 headrelay.py PORT KUBE_API_URL CA TOKEN CLIENT_CERT CLIENT_KEY
"""
import asyncio, http.client, json, ssl, sys, threading, time, urllib.parse, urllib.request

port, api, ca, token, cert, key = sys.argv[1], sys.argv[2], *sys.argv[3:7]
port = int(port)
api_ctx = ssl.create_default_context(cafile=ca)
# The agent's serving certificate is its own; kube-apiserver does not
# check it either (no --kubelet-certificate-authority).
agent_ctx = ssl.create_default_context()
agent_ctx.check_hostname = False
agent_ctx.verify_mode = ssl.CERT_NONE
agent_ctx.load_cert_chain(cert, key)
pods, nodes, servers = {}, {}, []
say_lock = threading.Lock()


def say(line):
    """One line of the log, whole: threads print here too."""
    with say_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def get(path):
    # One line a request, so that the benchmark can take them out of
    # kube-apiserver's count: they stand for no request of KubeRay's.
    say("lookup " + path)
    req = urllib.request.Request(api + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=api_ctx, timeout=30) as r:
        return json.load(r)


def find(ip):
    """(namespace, pod, agent host, agent port) of the head pod at ip."""
    if ip not in pods:
        return None
    ns, name, node = pods[ip]
    if node not in nodes:
        n = get("/api/v1/nodes/" + node)
        addr = [a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP"][0]
        nodes[node] = (addr, n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])
    return (ns, name) + nodes[node]


def add(loop, o):
    ip = o.get("status", {}).get("podIP")
    if ip and ip not in pods and o["spec"].get("nodeName"):
        pods[ip] = (o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["nodeName"])
        asyncio.run_coroutine_threadsafe(listen(ip), loop)


def watch(loop):
    """Ray head pods with an IP: listen there (on the loop). A list, then
    a watch from its resourceVersion (kube-apiserver on etcd 3.4 refuses
    a watch without one: no RequestWatchProgress)."""
    u = urllib.parse.urlsplit(api)
    sel = "labelSelector=" + urllib.parse.quote("ray.io/node-type=head")
    while True:
        lst = get("/api/v1/pods?" + sel)
        for o in lst["items"]:
            add(loop, o)
        rv = lst["metadata"]["resourceVersion"]
        while rv:
            c = http.client.HTTPSConnection(u.hostname, u.port, context=api_ctx, timeout=3600)
            say("lookup watch")
            c.request("GET", "/api/v1/pods?watch=1&allowWatchBookmarks=true&%s&resourceVersion=%s"
                      % (sel, rv), headers={"Authorization": "Bearer " + token})
            r = c.getresponse()
            if r.status != 200:
                say("headrelay: watch: %d %s" % (r.status, r.read()[:200]))
                rv = ""
                break
            while True:
                line = r.readline()
                if not line:
                    break
                e = json.loads(line)
                if e["type"] == "ERROR":    # 410 Gone: list again
                    say("headrelay: watch: %s" % line[:200])
                    rv = ""
                    break
                rv = e["object"]["metadata"].get("resourceVersion", rv)
                if e["type"] in ("ADDED", "MODIFIED"):
                    add(loop, e["object"])
            c.close()
        time.sleep(0.5)


async def listen(ip):
    try:
        servers.append(await asyncio.start_server(serve, ip, port, backlog=128))
    except OSError as e:
        say("headrelay: cannot listen on %s:%d: %s" % (ip, port, e))


async def pipe(r, w):
    try:
        while True:
            b = await r.read(65536)
            if not b:
                break
            w.write(b)
            await w.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            w.close()
        except Exception:
            pass


async def serve(reader, writer):
    ip = writer.get_extra_info("sockname")[0]
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    method, path, version = lines[0].split(" ", 2)
    where = await asyncio.to_thread(find, ip)
    if where is None:
        writer.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()
        return
    ns, name, host, aport = where
    out = ["%s /volray/proxy/%s/%s/%d%s %s" % (method, ns, name, port, path, version)]
    for h in lines[1:]:
        if h and not h.lower().startswith(("connection:", "host:", "keep-alive:")):
            out.append(h)
    out += ["Host: %s:%d" % (host, aport), "Connection: close", "", ""]
    try:
        ar, aw = await asyncio.open_connection(host, aport, ssl=agent_ctx)
    except OSError:
        writer.close()
        return
    aw.write("\r\n".join(out).encode("latin-1"))
    await aw.drain()
    await asyncio.gather(pipe(reader, aw), pipe(ar, writer))


async def main():
    # Before the thread prints anything: its lines and this one would mix.
    say("headrelay: watching the Ray head pods, listening on their IPs at %d" % port)
    threading.Thread(target=watch, args=(asyncio.get_running_loop(),), daemon=True).start()
    await asyncio.Event().wait()

asyncio.run(main())
