"""Sign-in latency while agents send hostile heartbeats (issue 29, finding 1).

Four agents beat back to back: first four anonymous ones (registered, never bound) with 40,000
acknowledgements in each beat (3.6 MiB, under the general body limit), then four bound ones whose
beats carry as many acknowledgements and installation reports as a beat may (the caps of
src/devices/agent_api.rs, read from the answer's refusal when a larger beat is refused). Meanwhile
one client signs in over and over; the script prints sign-in p50/p99 and the answers that were not
200, against the same client signing in on a quiet server in the same run.

    python3 bench/hostile_heartbeats.py [binary]      # default target/release/zmarket
    BENCH_SECONDS=20 python3 bench/hostile_heartbeats.py /tmp/zmarket-before

Bounded: each phase runs BENCH_SECONDS (default 15) and every request has a 30 s timeout.
"""
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

from common import Server, call, pct

SECONDS = float(os.environ.get("BENCH_SECONDS", "15"))
AGENTS = 4
PASSWORD = "Secret123"
SPEC = {"cpu_cores": 8, "memory_bytes": 1 << 34, "disk_bytes": 1 << 40, "gpus": []}


def post_raw(base, path, body, headers):
    req = urllib.request.Request(base + path, data=body, method="POST")
    req.add_header("content-type", "application/json")
    for k, v in headers.items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
            return r.status
    except urllib.error.HTTPError as e:
        e.read()
        return e.code
    except OSError:
        return 0


def beat_body(acks, installations):
    return json.dumps({
        "metrics": {"cpu_percent": 5.0, "memory_used_bytes": 1, "disk_used_bytes": 1},
        "acks": [{"id": str(uuid.uuid4()), "ok": False, "error": "x" * 20} for _ in range(acks)],
        "installations": [{"id": str(uuid.uuid4()), "status": "running"} for _ in range(installations)],
    }).encode()


def sign_ins(base, email, seconds):
    """Sequential sign-ins for `seconds`: (latencies of the 200s, statuses that were not 200)."""
    lat, bad = [], []
    body = json.dumps({"email": email, "password": PASSWORD}).encode()
    stop = time.perf_counter() + seconds
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        status = post_raw(base, "/api/iam/v2/login/password", body, {})
        if status == 200:
            lat.append(time.perf_counter() - t0)
        else:
            bad.append(status)
    return lat, bad


def hostile(base, secrets, body, seconds):
    """Each agent beats back to back with `body`; answers the statuses seen, counted."""
    seen = {}
    lock = threading.Lock()
    stop = time.perf_counter() + seconds

    def loop(secret):
        while time.perf_counter() < stop:
            s = post_raw(base, "/api/agent/v1/heartbeat", body, {"authorization": "Bearer " + secret})
            with lock:
                seen[s] = seen.get(s, 0) + 1

    threads = [threading.Thread(target=loop, args=(s,)) for s in secrets]
    for t in threads:
        t.start()
    return threads, seen


def measure(base, email, secrets, body):
    threads, seen = hostile(base, secrets, body, SECONDS)
    time.sleep(0.5)
    lat, bad = sign_ins(base, email, SECONDS - 1)
    for t in threads:
        t.join()
    return lat, bad, seen


def line(name, lat, bad, seen=None, quiet=None):
    p50 = pct(lat, 0.5) * 1000 if lat else float("nan")
    p99 = pct(lat, 0.99) * 1000 if lat else float("nan")
    out = f"{name}: sign-ins {len(lat)} ok, {len(bad)} failed {sorted(set(bad))}; p50 {p50:.0f} ms, p99 {p99:.0f} ms"
    if quiet:
        out += f" ({p99 / quiet:.1f}x quiet p99)"
    if seen is not None:
        out += f"; heartbeats answered {dict(sorted(seen.items()))}"
    print(out, flush=True)
    return p99


binary = sys.argv[1] if len(sys.argv) > 1 else None
env = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
    "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
    "ZMARKET_DEVICES__REGISTER_IP_BURST": "100",
}
with Server(env, binary=binary) as s:
    email = "victim@example.com"
    call(s.base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    owner = "owner@example.com"
    call(s.base, "POST", "/api/iam/v1/register", {"email": owner, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": owner, "password": PASSWORD})["data"]["token"]
    agents = [call(s.base, "POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": f"h{i}", "spec": SPEC})["data"] for i in range(2 * AGENTS)]
    anonymous, bound = agents[:AGENTS], agents[AGENTS:]
    for a in bound:
        call(s.base, "POST", "/api/ebs/v2/devices/link", {"device_id": a["device_id"], "pairing_code": a["pairing_code"]}, token=token)

    print(f"{AGENTS} hostile agents, {SECONDS:.0f} s a phase, sequential sign-ins by one client", flush=True)
    lat, bad = sign_ins(s.base, email, SECONDS)
    quiet = line("quiet", lat, bad)

    big = beat_body(40_000, 0)
    print(f"anonymous agents, 40,000 acks a beat ({len(big) / 2**20:.1f} MiB):", flush=True)
    lat, bad, seen = measure(s.base, email, [a["device_secret"] for a in anonymous], big)
    line("  hostile anonymous", lat, bad, seen, quiet)

    # The largest beat a bound agent may send: the caps if the server has them, else 5,000 acks
    # (the "5,000 acks back to back failed 3 of 6").
    secret = bound[0]["device_secret"]
    acks, installs = 5_000, 0
    if post_raw(s.base, "/api/agent/v1/heartbeat", beat_body(5_000, 0), {"authorization": "Bearer " + secret}) != 200:
        acks, installs = 256, 256
    body = beat_body(acks, installs)
    print(f"bound agents, {acks} acks and {installs} installation reports a beat ({len(body) / 1024:.0f} KiB):", flush=True)
    lat, bad, seen = measure(s.base, email, [a["device_secret"] for a in bound], body)
    line("  hostile bound", lat, bad, seen, quiet)
