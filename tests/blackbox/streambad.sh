#!/bin/sh
# Bad input on the streaming subresources, from a raw WebSocket client:
# a frame that claims 2 GB (closed with 1009, nothing allocated), a frame
# that lies about its length and then the client leaves, masked-bit and
# opcode violations (1002), unknown channels (ignored), and a client that
# never reads while the command writes without end (the daemon's memory
# stays bounded: output waits). After all of it, the daemon answers, no
# exec'd process is left, and an ordinary exec still works.
. "$(dirname "$0")/lib.sh"
LOCAL_NODE=1
start_daemon
export WORK
NODE=$(hostname | tr 'A-Z' 'a-z')
k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: sh}
spec:
  nodeName: $NODE
  containers: [{name: c, image: busybox, command: [sleep, "3600"]}]
YAML
k wait --for=condition=Ready pod/sh --timeout=30s >/dev/null || fail "pod sh not Ready"

cat >"$WORK/ws.py" <<'PY'
"""A raw WebSocket client for pods/exec, to send what no client sends."""
import base64, os, socket, struct, sys, time, urllib.parse
sys.path.insert(0, os.environ["WORK"])
import vrtest

def open_exec(command, stdin=False):
    s = vrtest.connect()
    key = base64.b64encode(os.urandom(16)).decode()
    q = "&".join("command=" + urllib.parse.quote(c, safe="") for c in command)
    q += "&stdout=1&stderr=1" + ("&stdin=1" if stdin else "")
    req = ("GET /api/v1/namespaces/default/pods/sh/exec?%s HTTP/1.1\r\n"
           "Host: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
           "Sec-WebSocket-Protocol: v4.channel.k8s.io\r\n" % (q, key))
    s.sendall(req.encode() + vrtest.AUTH + b"\r\n")
    head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            sys.exit("closed during the handshake: %r" % head)
        head += d
    if not head.startswith(b"HTTP/1.1 101"):
        sys.exit("no upgrade: %r" % head)
    return s

def frame(opcode, payload, mask=True, length=None):
    n = len(payload) if length is None else length
    b = bytes([0x80 | opcode])
    m = 0x80 if mask else 0
    if n < 126:
        b += bytes([m | n])
    elif n < 65536:
        b += bytes([m | 126]) + struct.pack(">H", n)
    else:
        b += bytes([m | 127]) + struct.pack(">Q", n)
    if mask:
        k = os.urandom(4)
        b += k + bytes(c ^ k[i % 4] for i, c in enumerate(payload))
    else:
        b += payload
    return b

def close_code(s, timeout=10):
    """Read frames until a close frame (its code) or the end (None)."""
    s.settimeout(timeout)
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return None
            buf += d
            while len(buf) >= 2:
                op, n = buf[0] & 0x0f, buf[1] & 0x7f
                off = 2
                if n == 126:
                    n, off = struct.unpack(">H", buf[2:4])[0], 4
                elif n == 127:
                    n, off = struct.unpack(">Q", buf[2:10])[0], 10
                if len(buf) < off + n:
                    break
                if op == 8:
                    return struct.unpack(">H", buf[off:off + 2])[0]
                buf = buf[off + n:]
    except socket.timeout:
        return "timeout"
PY

python3 - <<'PY' || fail "bad frames"
import os, sys, time
sys.path.insert(0, os.environ["WORK"])
from ws import open_exec, frame, close_code

# 2 GB claimed: refused by length alone.
s = open_exec(["sleep", "60"], stdin=True)
s.sendall(frame(2, b"\x00abc", length=2 * 1024 ** 3))
c = close_code(s)
if c != 1009:
    sys.exit("2 GB frame: close %r, want 1009" % c)
s.close()

# An unmasked frame from a client: a protocol error.
s = open_exec(["sleep", "60"], stdin=True)
s.sendall(frame(2, b"\x00abc", mask=False))
c = close_code(s)
if c != 1002:
    sys.exit("unmasked frame: close %r, want 1002" % c)
s.close()

# A reserved opcode.
s = open_exec(["sleep", "60"], stdin=True)
s.sendall(frame(3, b"x"))
c = close_code(s)
if c != 1002:
    sys.exit("reserved opcode: close %r, want 1002" % c)
s.close()

# Unknown channels are ignored; stdin still works after them.
s = open_exec(["cat"], stdin=True)
s.sendall(frame(2, b"\x09junk") + frame(2, b"\x03junk") + frame(2, b"") +
          frame(2, b"\x00hello\n"))
s.settimeout(10)
got = b""
while b"hello" not in got:
    d = s.recv(4096)
    if not d:
        sys.exit("closed before the echo: %r" % got)
    got += d
s.close()

# A frame that lies (claims 1000 bytes, sends 10), then the client leaves.
s = open_exec(["sleep", "60"], stdin=True)
s.sendall(frame(2, b"\x00" * 1000)[:20])
s.close()
PY
pass "bad frames: 2 GB (1009), unmasked and reserved opcode (1002), unknown channels ignored, a lying frame"

# A client that never reads while the command writes without end.
rss() { awk '/VmRSS/ {print $2}' "/proc/$DAEMON_PID/status"; }
before=$(rss)
python3 - <<'PY' &
import os, sys, time
sys.path.insert(0, os.environ["WORK"])
from ws import open_exec
s = open_exec(["sh", "-c", "while :; do cat /proc/self/maps; done"])
time.sleep(6)
s.close()
PY
reader=$!
sleep 4
during=$(rss)
wait "$reader"
grow=$(( (during - before) / 1024 ))
[ "$grow" -lt 64 ] || fail "a client that never reads grew volrayd by $grow MB"
pass "a client that never reads: volrayd grew ${grow} MB (output waits)"

# Nothing left behind; the daemon still serves an ordinary exec.
wait_eq 0 "exec'd processes left" sh -c 'pgrep -fc "^sh -c while :; do cat|^sleep 60$" || true'
expect_eq ok "$(k exec sh -- echo ok)" "an exec after all that"
pass "nothing left behind; exec still works"
