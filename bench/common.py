"""Shared helpers for the benchmarks: start the release binary on 127.0.0.1 with a fresh data dir,
time requests, run wrk. Everything is bounded in time and requests and targets loopback only."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("ZMARKET_BENCH_BIN", os.path.join(ROOT, "target", "release", "zmarket"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The binary serving on a free loopback port with an empty data dir."""

    def __init__(self, env=None, binary=None):
        binary = binary or BIN
        if not os.path.exists(binary):
            raise SystemExit(f"{binary} is missing: run `cargo build --release` first")
        self.dir = tempfile.mkdtemp(prefix="zmarket-bench-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        e = dict(os.environ)
        e.update({"ZMARKET_LOG__LEVEL": "warn"})
        e.update(env or {})
        t0 = time.perf_counter()
        # Its log goes to a file, as a deployment's goes to one (or to the journal).
        with open(os.path.join(self.dir, "server.log"), "wb") as log:
            self.proc = subprocess.Popen(
                [binary, "serve", "--bind", f"127.0.0.1:{self.port}", "--data-dir", os.path.join(self.dir, "data")],
                env=e, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir,
            )
        deadline = t0 + 20
        while True:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.perf_counter() > deadline:
                self.stop()
                raise SystemExit("server did not start within 20 s")
            time.sleep(0.002)
        self.startup_secs = time.perf_counter() - t0

    def get(self, path, headers=None):
        req = urllib.request.Request(self.base + path, headers=headers or {})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
            return r.status, dict(r.headers), body, time.perf_counter() - t0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def wrk(url, seconds=5, connections=16, threads=2, script=None, headers=()):
    """Requests per second, p99 and the non-2xx/3xx line measured by wrk (apt-get install wrk)."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: apt-get install -y wrk")
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "--latency"]
    for h in headers:
        cmd += ["-H", h]
    if script:
        cmd += ["-s", script]
    out = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=seconds + 30).stdout
    rps = next((float(l.split()[1]) for l in out.splitlines() if l.startswith("Requests/sec:")), 0.0)
    p99 = next((l.split()[1] for l in out.splitlines() if l.strip().startswith("99%")), "?")
    non2xx = next((l.strip() for l in out.splitlines() if "Non-2xx" in l), "")
    return rps, p99, non2xx


def cpu_ms(pid):
    """A process's CPU time so far (user + system, all threads), in ms."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    """A process's resident memory (VmRSS) in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def median(xs):
    s = sorted(xs)
    return s[len(s) // 2]


def pct(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p))]


def call(base, method, path, body=None, token=None, headers=None):
    """One JSON API call; answers the decoded envelope (or the raw bytes of a non-JSON answer)."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    if data is not None:
        req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", "Bearer " + token)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
        return json.loads(raw) if raw[:1] == b"{" else raw


PASSWORD = "Secret123"
# A server people sign up to without a mailed link and without the sign-in limiter's bursts.
OPEN_SIGNUP = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "100000",
    "ZMARKET_AUTH__REGISTER_IP_BURST": "100000",
}


def person(base, email):
    """Signs `email` up (no verification: OPEN_SIGNUP) and in; answers the session token."""
    call(base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    return call(base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]


def app_origin(base, token, inst):
    """The installation's own origin through the market: (Host header, session cookie), by
    redeeming the one-time Open link as a browser would."""
    link = call(base, "GET", f"/api/rmp/v1/apps/{inst}/open", token=token, headers={"accept": "application/json"})["data"]["url"]
    host = link.split("//", 1)[1].split("/", 1)[0]
    req = urllib.request.Request(f"{base}/{link.split('/', 3)[3]}", headers={"Host": host})

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a, **k):
            return None
    try:
        urllib.request.build_opener(NoRedirect).open(req, timeout=10)
    except urllib.error.HTTPError as e:
        return host, e.headers["set-cookie"].split(";", 1)[0]
    raise SystemExit("the one-time link did not redirect")


@contextmanager
def linked_agent(base, token, heartbeat_secs):
    """A real `zmarket agent` on this machine, linked to the person of `token`: yields
    (process, device id); stopped on the way out."""
    state = tempfile.mkdtemp(prefix="zmarket-bench-agent-")
    agent = subprocess.Popen([BIN, "agent", "--server", base, "--state-dir", state, "--heartbeat-secs", str(heartbeat_secs), "--public-host", "127.0.0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "ZMARKET_LOG__LEVEL": "warn"})
    try:
        dev = code = None
        for line in agent.stdout:
            if line.startswith("device id:"):
                dev = line.split(":", 1)[1].strip()
            if line.startswith("pairing code:"):
                code = line.split(":", 1)[1].strip()
                break
        if not (dev and code):
            raise SystemExit("the agent printed no device id and pairing code")
        call(base, "POST", "/api/ebs/v2/devices/link", {"device_id": dev, "pairing_code": code}, token)
        yield agent, dev
    finally:
        agent.terminate()
        agent.wait(timeout=10)
        shutil.rmtree(state, ignore_errors=True)


def run_threads(workers, seconds, fn):
    """Calls fn(worker_index) in `workers` threads for `seconds`; returns (calls per second, calls)."""
    count = [0] * workers
    stop = time.perf_counter() + seconds

    def loop(i):
        while time.perf_counter() < stop:
            fn(i)
            count[i] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(workers)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(count) / (time.perf_counter() - t0), sum(count)
