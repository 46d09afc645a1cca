"""The Ray heads of volray's simulated nodes at their pod IPs, for
bench/anchors.sh operator (KubeRay's operator against kube-apiserver).

kube-apiserver's service proxy, which KubeRay's operator uses
(--use-kubernetes-proxy) to reach a head's dashboard, dials the head
pod's IP and port; nothing of a simulated pod listens there: volray's
agent serves the emulated heads at its endpoint (the kubelet's port),
under /volray/proxy/NS/POD/PORT/, which is where volray's own
controllers go through kube-apiserver's node proxy. With the simulated
pods' range routed to this machine (ip route add local 10.64.0.0/10 dev
lo, which anchors_operator.sh does), this relay listens on the
wildcard address at PORT, takes the address a connection came to as
the pod's IP, finds the pod (by status.podIP, once per IP) and its node
(InternalIP and kubelet port, once per node), and sends the request to
the agent's endpoint with the kubelet client certificate kube-apiserver
uses, its path under /volray/proxy/NS/POD/PORT, one request a
connection (Connection: close both ways).

    python3 headrelay.py PORT KUBE_API_URL CA TOKEN CLIENT_CERT CLIENT_KEY
"""
import asyncio, json, ssl, sys, urllib.parse, urllib.request

port, api, ca, token, cert, key = sys.argv[1], sys.argv[2], *sys.argv[3:7]
port = int(port)
api_ctx = ssl.create_default_context(cafile=ca)
# The agent's serving certificate is its own; kube-apiserver does not
# check it either (no --kubelet-certificate-authority).
agent_ctx = ssl.create_default_context()
agent_ctx.check_hostname = False
agent_ctx.verify_mode = ssl.CERT_NONE
agent_ctx.load_cert_chain(cert, key)
pods, nodes = {}, {}


def get(path):
    # One line a request, so that the benchmark can take them out of
    # kube-apiserver's count: they stand for no request of KubeRay's.
    print("lookup " + path, flush=True)
    req = urllib.request.Request(api + path, headers={"Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, context=api_ctx, timeout=30) as r:
        return json.load(r)


def find(ip):
    """(namespace, pod, agent host, agent port) of the pod at ip."""
    if ip not in pods:
        items = get("/api/v1/pods?fieldSelector=" +
                    urllib.parse.quote("status.podIP=" + ip))["items"]
        if not items:
            return None
        p = items[0]
        pods[ip] = (p["metadata"]["namespace"], p["metadata"]["name"], p["spec"]["nodeName"])
    ns, name, node = pods[ip]
    if node not in nodes:
        n = get("/api/v1/nodes/" + node)
        addr = [a["address"] for a in n["status"]["addresses"] if a["type"] == "InternalIP"][0]
        nodes[node] = (addr, n["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"])
    return (ns, name) + nodes[node]


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
    server = await asyncio.start_server(serve, "0.0.0.0", port, backlog=1024)
    print("headrelay: listening on *:%d" % port, flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
