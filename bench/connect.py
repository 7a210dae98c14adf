#!/usr/bin/env python3
"""Connect (issue 22), measured in one run on loopback, with the release binary, a real agent and
real Docker (the busybox test image of scripts/test-images):

1. click → the agent has the command: a person's action, timed until its command arrives on a
   channel (a minimal WebSocket client here plays the agent, so the moment of arrival is exact);
   p50/p95 over BENCH_ACTIONS actions, heartbeats every 30 s (so nothing comes by heartbeat);
2. stop/start of a real container → the state shown by the API (real agent, real Docker);
3. HTTP through the market (the app's own origin, its cookie) vs straight to the container's
   published port: wrk requests/s ratio and the added p50 latency;
4. a 100 MB download through `zmarket tunnel` vs straight: the throughput ratio;
5. the server's RSS with 200 idle channels, and with 50 open terminals.

    python3 bench/connect.py            (needs dockerd, busybox-static, wrk)
    BENCH_ONLY=tunnel python3 bench/connect.py     (the tunnel's download alone)
    BENCH_PERF=DIR ...                  (perf record -g of the market, agent and tunnel client
                                         during the tunnel's download, and perf stat of each
                                         (syscalls, switches, faults, CPU), into DIR)

The tunnel's row also gives the CPU each process spent on the 100 MB (user + system, from
/proc): a figure a loaded machine changes far less than a throughput.

Bounded: a few hundred actions, wrk for BENCH_SECONDS (default 4) per target, one 100 MB file
each way; every process and container it starts is stopped.
"""
import base64
import json
import os
import socket
import subprocess
import time
import urllib.request

from common import BIN, ROOT, Server, app_origin, call, cpu_ms, free_port, linked_agent, pct, rss_mb, wrk

PASSWORD = "Secret123"
SECONDS = int(os.environ.get("BENCH_SECONDS", "4"))
ACTIONS = int(os.environ.get("BENCH_ACTIONS", "40"))
ONLY = os.environ.get("BENCH_ONLY", "")
PERF = os.environ.get("BENCH_PERF", "")
ENV = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "100000",
    "ZMARKET_AUTH__REGISTER_IP_BURST": "100000",
    "ZMARKET_DEVICES__REGISTER_IP_BURST": "100000",
    "ZMARKET_DEVICES__HEARTBEAT_SECS": "30",
    "ZMARKET_SERVER__MAX_CONNECTIONS_PER_IP": "100000",
    # The 50 terminals below are one account's (the default allows 32 WebSockets an owner).
    "ZMARKET_SERVER__MAX_SOCKETS_PER_OWNER": "100",
    "ZMARKET_APPS__MANIFESTS": os.path.join(ROOT, "e2e", "apps-manifests.json"),
}


class Ws:
    """A minimal WebSocket client (RFC 6455): enough for the channel and a terminal."""

    def __init__(self, port, path, headers):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"] + [f"{k}: {v}" for k, v in headers.items()]
        self.s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.s.recv(4096)
            if not chunk:
                raise RuntimeError("closed during the handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise RuntimeError(f"no upgrade: {status!r}")
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        """(opcode, payload) of the next frame (unfragmented, as the market sends)."""
        b0, b1 = self._read(2)
        n = b1 & 0x7F
        if n == 126:
            n = int.from_bytes(self._read(2), "big")
        elif n == 127:
            n = int.from_bytes(self._read(8), "big")
        return b0 & 0x0F, self._read(n)

    def send(self, payload, opcode=1):
        data = payload.encode() if isinstance(payload, str) else payload
        mask = os.urandom(4)
        n = len(data)
        head = bytes([0x80 | opcode])
        head += bytes([0x80 | n]) if n < 126 else (bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.s.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def person(base, email):
    call(base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    return call(base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]


def status(base, token, id):
    return call(base, "GET", f"/api/rmp/v1/apps/{id}", token=token)["data"]["status"]


def wait_status(base, token, id, want, timeout=180):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        s = status(base, token, id)
        if s == want:
            return time.perf_counter() - t0
        if s.endswith("failed"):
            raise SystemExit(f"{id} became {s}")
        time.sleep(0.02)
    raise SystemExit(f"{id} never became {want}")


def command_latency(s, token):
    """Actions on a fake agent's box: POST → the command on its channel."""
    reg = call(s.base, "POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": "bench box", "spec": {"cpu_cores": 64, "memory_bytes": 1 << 40, "disk_bytes": 1 << 44, "gpus": []}})["data"]
    call(s.base, "POST", "/api/ebs/v2/devices/link", {"device_id": reg["device_id"], "pairing_code": reg["pairing_code"]}, token)
    ws = Ws(s.port, "/api/agent/v1/channel", {"Authorization": "Bearer " + reg["device_secret"]})

    def commands():
        while True:
            op, data = ws.recv()
            if op == 1:
                f = json.loads(data)
                if f.get("t") == "commands":
                    return f["commands"]
            elif op == 9:
                ws.send(data, 10)

    commands()  # the channel's first answer
    inst = call(s.base, "POST", "/api/rmp/v1/apps/install", {"app_id": "grafana", "device_id": reg["device_id"]}, token)["data"]["id"]
    cmd = next(c for c in commands() if c["payload"].get("installation_id") == inst)
    ws.send(json.dumps({"t": "beat", "installations": [{"id": inst, "status": "running"}], "acks": [{"id": cmd["id"], "ok": True}]}))
    commands()
    took = []
    state = "running"
    for _ in range(ACTIONS):
        action, after = ("stop", "stopped") if state == "running" else ("start", "running")
        t0 = time.perf_counter()
        call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": action}, token)
        while True:
            cmds = [c for c in commands() if c["payload"].get("installation_id") == inst and c["kind"] == f"app_{action}"]
            if cmds:
                break
        took.append(time.perf_counter() - t0)
        ws.send(json.dumps({"t": "beat", "installations": [{"id": inst, "status": after}], "acks": [{"id": cmds[0]["id"], "ok": True}]}))
        commands()
        state = after
        # A real agent beats at most every half second while an operation moves on; the market
        # cuts a box beating far faster than that (src/connect/channel.rs, BEATS_PER_SEC).
        time.sleep(0.45)
    ws.close()
    return took


def main():
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        raise SystemExit("no Docker daemon: start dockerd")
    images = os.path.join(ROOT, "target", "test-images")
    if not os.path.exists(os.path.join(images, "httpd.tar")):
        subprocess.run([os.path.join(ROOT, "scripts", "test-images"), images], check=True)
    with Server(ENV) as s:
        data_dir = os.path.join(s.dir, "data")
        subprocess.run([BIN, "images", "add", os.path.join(images, "httpd.tar"), "--data-dir", data_dir], check=True, capture_output=True)
        token = person(s.base, "bench@example.com")
        rss0 = rss_mb(s.proc.pid)

        took = [] if ONLY else command_latency(s, token)
        if took:
                print(f"click → command on the agent's channel, {len(took)} actions: p50 {pct(took, 0.5) * 1000:.0f} ms, "
                  f"p95 {pct(took, 0.95) * 1000:.0f} ms (target ≤ 100 / ≤ 500 ms; heartbeats every 30 s)")

        inst = None
        tunnel = None
        with linked_agent(s.base, token, 30) as (agent, dev):
            try:
                inst = call(s.base, "POST", "/api/rmp/v1/apps/install", {"app_id": "grafana", "device_id": dev}, token)["data"]["id"]
                wait_status(s.base, token, inst, "running")
                stops, starts = [], []
                for _ in range(0 if ONLY else 3):
                    call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "stop"}, token)
                    stops.append(wait_status(s.base, token, inst, "stopped"))
                    call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "start"}, token)
                    starts.append(wait_status(s.base, token, inst, "running"))
                if not ONLY:
                    print(f"real container, click → state shown: stop median {sorted(stops)[1]:.2f} s, start median {sorted(starts)[1]:.2f} s "
                          f"(target ≤ 2 s; start waits for the health check)")

                direct = call(s.base, "GET", f"/api/rmp/v1/apps/{inst}", token=token)["data"]["open_url"].rstrip("/")
                host, cookie = app_origin(s.base, token, inst)
                if not ONLY:
                    d_rps, d_p99, _ = wrk(direct + "/", seconds=SECONDS, connections=16)
                    m_rps, m_p99, m_bad = wrk(s.base + "/", seconds=SECONDS, connections=16, headers=[f"Host: {host}", f"Cookie: {cookie}"])
                    d50 = latency_p50(direct + "/", [])
                    m50 = latency_p50(s.base + "/", [f"Host: {host}", f"Cookie: {cookie}"])
                    print(f"HTTP through the market vs straight to the container: {m_rps:,.0f} vs {d_rps:,.0f} req/s, ratio {m_rps / max(d_rps, 1):.2f} "
                          f"(target ≥ 0.85, issue 42); p50 {m50:.2f} vs {d50:.2f} ms, added {m50 - d50:.2f} ms (target ≤ 2 ms); p99 {m_p99} vs {d_p99} {m_bad}")

                subprocess.run(["docker", "exec", f"zmarket-{inst}", "/bin/busybox", "dd", "if=/dev/zero", "of=/www/big", "bs=1048576", "count=100"],
                               check=True, capture_output=True)
                local = free_port()
                tunnel = subprocess.Popen([BIN, "tunnel", "--server", s.base, "--key", token, "--app", inst, "--port", "80", "--local", f"127.0.0.1:{local}"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                time.sleep(0.5)
                t_direct = download(direct + "/big")
                procs = {"market": s.proc.pid, "agent": agent.pid, "tunnel client": tunnel.pid}
                perf = None
                if PERF:
                    os.makedirs(PERF, exist_ok=True)
                    perf = [subprocess.Popen(["perf", "record", "-g", "-F", "999", "-o", os.path.join(PERF, "perf.data"), "-p", ",".join(str(p) for p in procs.values())],
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
                    perf += [subprocess.Popen(["perf", "stat", "-e", "raw_syscalls:sys_enter,context-switches,page-faults,task-clock", "-o", os.path.join(PERF, f"stat-{k.replace(' ', '-')}.txt"), "-p", str(p)],
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for k, p in procs.items()]
                    time.sleep(1)
                cpu0 = {k: cpu_ms(p) for k, p in procs.items()}
                t_tunnel = download(f"http://127.0.0.1:{local}/big")
                cpu = {k: cpu_ms(p) - cpu0[k] for k, p in procs.items()}
                for p in perf or []:
                    p.send_signal(2)
                    p.wait(timeout=60)
                print(f"100 MB download: straight {100 / t_direct:.0f} MB/s, through the tunnel {100 / t_tunnel:.0f} MB/s, ratio {t_direct / t_tunnel:.2f} (target ≥ 0.6, issue 42); "
                      "CPU on it: " + ", ".join(f"{k} {v:.0f} ms" for k, v in cpu.items()))
                if ONLY:
                    return

                rss1 = rss_mb(s.proc.pid)
                channels = []
                for i in range(200):
                    reg = call(s.base, "POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": f"idle {i}", "spec": {"cpu_cores": 1, "memory_bytes": 1 << 30, "disk_bytes": 1 << 34, "gpus": []}})["data"]
                    channels.append(Ws(s.port, "/api/agent/v1/channel", {"Authorization": "Bearer " + reg["device_secret"]}))
                time.sleep(2)
                rss2 = rss_mb(s.proc.pid)
                terms = [Ws(s.port, f"/api/rmp/v1/apps/{inst}/terminal", {"Sec-WebSocket-Protocol": f"zmarket, zmarket.bearer.{token}"}) for _ in range(50)]
                time.sleep(2)
                rss3 = rss_mb(s.proc.pid)
                print(f"server RSS: {rss0:.0f} MB at start, {rss1:.0f} MB after the above, {rss2:.0f} MB with 200 idle channels "
                      f"(+{(rss2 - rss1) * 1024 / 200:.0f} KB each), {rss3:.0f} MB with 50 open terminals too (+{(rss3 - rss2) * 1024 / 50:.0f} KB each); "
                      f"agent RSS {rss_mb(agent.pid):.0f} MB")
                for w in channels + terms:
                    w.close()
            finally:
                if tunnel:
                    tunnel.terminate()
                if inst:
                    try:
                        call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "uninstall"}, token)
                        wait_status(s.base, token, inst, "not_install", 60)
                    except (SystemExit, OSError):
                        subprocess.run(["docker", "rm", "-f", f"zmarket-{inst}"], capture_output=True)


def latency_p50(url, headers):
    """wrk's p50 at low load (2 connections), in ms."""
    cmd = ["wrk", "-t1", "-c2", "-d2s", "--latency"] + sum((["-H", h] for h in headers), []) + [url]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    line = next(l for l in out.splitlines() if l.strip().startswith("50%"))
    v = line.split()[1]
    return float(v[:-2]) if v.endswith("ms") else float(v[:-2]) / 1000 if v.endswith("us") else float(v[:-1]) * 1000


def download(url):
    t0 = time.perf_counter()
    n = 0
    with urllib.request.urlopen(url, timeout=120) as r:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            n += len(b)
    if n != 100 * 1048576:
        raise SystemExit(f"downloaded {n} bytes from {url}")
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
