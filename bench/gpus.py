"""GPUs (issue 38, docs/gpus.md): what a beat carrying 8 GPUs' telemetry costs the server against a
beat without GPUs, and how long the metrics call takes for a day of 8 GPUs.

1. Two bound boxes beat back to back over HTTP, BENCH_BEATS beats each (default 600), in turns
   (plain, GPU, plain, GPU, ...): one with no GPUs, one with 8 H200s whose every beat carries
   their utilization, memory, temperature and power. The server's own CPU time (utime + stime of
   its process, /proc) over each box's beats is the figure: CPU ms per beat, and their ratio
   (target: the GPU beat at most 1.2x the plain one).
2. A day of samples of the 8-GPU box (1,440 one-a-minute rows and an hour of 5-second rows) is
   written into the SQLite file, then `GET /api/ebs/v2/devices/{id}/metrics?minutes=1440` and
   `?minutes=60` are called 50 times each: p50 and p99 (target: the day's answer in 20 ms or less).

    python3 bench/gpus.py [binary]      # default target/release/zmarket

Bounded: BENCH_BEATS beats per box, 100 metrics calls, each request with a 30 s timeout.
"""
import json
import os
import sqlite3
import sys
import time
import urllib.request
from datetime import datetime, timedelta, timezone

from common import Server, call, pct

BEATS = int(os.environ.get("BENCH_BEATS", "600"))
PASSWORD = "Secret123"
ENV = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_DEVICES__SAMPLE_EVERY_SECS": "0",
}
GIB = 1 << 30
UUIDS = [f"GPU-{i:08x}-1111-4222-8333-444455556666" for i in range(8)]


def spec(gpus):
    return {"cpu_cores": 96, "memory_bytes": 1024 * GIB, "disk_bytes": 8192 * GIB, "gpu_runtime": True,
            "gpus": [{"index": i, "uuid": u, "name": "NVIDIA H200", "vram": 141 * GIB, "passthrough": True,
                      "driver": "580.159.04", "cuda": "13.0", "compute_capability": "9.0", "mig": False}
                     for i, u in enumerate(UUIDS)] if gpus else []}


def metrics(gpus, n):
    m = {"cpu_percent": 30.0 + n % 7, "memory_used_bytes": 200 * GIB, "disk_used_bytes": 900 * GIB}
    if gpus:
        m["gpus"] = [{"uuid": u, "utilization": float((n + i) % 101), "memory_used": (30 + i) * GIB, "temperature": 60.0 + i,
                      "power_watts": 500.0 + i} for i, u in enumerate(UUIDS)]
    return m


def cpu_secs(pid):
    """The process's user + system CPU time in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def beat(base, secret, body):
    req = urllib.request.Request(base + "/api/agent/v1/heartbeat", data=body, method="POST")
    req.add_header("content-type", "application/json")
    req.add_header("authorization", "Bearer " + secret)
    with urllib.request.urlopen(req, timeout=30) as r:
        r.read()
        return r.status


def bound_box(base, token, gpus):
    r = call(base, "POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": "gpu box" if gpus else "plain box", "spec": spec(gpus)})["data"]
    call(base, "POST", "/api/ebs/v2/devices/link", {"device_id": r["device_id"], "pairing_code": r["pairing_code"]}, token)
    return r["device_id"], r["device_secret"]


def day_of_samples(db_path, device):
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    rows = []
    for k in range(1440):
        at = now - timedelta(minutes=k)
        rows.append((device, 1, at.isoformat(), 35.0, 200 * GIB, json.dumps(metrics(True, k)["gpus"])))
    for k in range(720):
        at = now - timedelta(seconds=5 * k + 1)
        rows.append((device, 0, at.isoformat(), 35.0, 200 * GIB, json.dumps(metrics(True, k)["gpus"])))
    con = sqlite3.connect(db_path, timeout=30)
    con.executemany("INSERT OR IGNORE INTO device_samples (device_id, tier, at, cpu_percent, memory_used, gpus) VALUES (?,?,?,?,?,?)", rows)
    con.commit()
    con.close()
    return len(rows)


def timed(base, path, token, n):
    """n calls, each timed from the request to the answer's last byte (the client's JSON decoding
    is not the server's time); answers the latencies, the last answer decoded and its size."""
    lat = []
    for _ in range(n):
        req = urllib.request.Request(base + path, headers={"authorization": "Bearer " + token})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=30) as r:
            raw = r.read()
        lat.append((time.perf_counter() - t0) * 1000)
    return lat, json.loads(raw)["data"], len(raw)


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else None
    with Server(env=ENV, binary=binary) as s:
        email = "owner@example.com"
        call(s.base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]
        plain = bound_box(s.base, token, False)
        gpu = bound_box(s.base, token, True)
        bodies = {False: [json.dumps({"metrics": metrics(False, n)}).encode() for n in range(BEATS)],
                  True: [json.dumps({"metrics": metrics(True, n)}).encode() for n in range(BEATS)]}
        spent = {False: 0.0, True: 0.0}
        for n in range(BEATS):
            for has_gpus, (_, secret) in ((False, plain), (True, gpu)):
                c0 = cpu_secs(s.proc.pid)
                assert beat(s.base, secret, bodies[has_gpus][n]) == 200
                spent[has_gpus] += cpu_secs(s.proc.pid) - c0
        per = {k: v / BEATS * 1000 for k, v in spent.items()}
        print(f"beats: {BEATS} per box, the server's CPU per beat: plain {per[False]:.3f} ms, 8 GPUs {per[True]:.3f} ms")
        ratio = per[True] / per[False] if per[False] else float("inf")
        print(f"  8 GPUs / plain = {ratio:.2f}  (target <= 1.20)  {'✓' if ratio <= 1.2 else '✗'}")

        rows = day_of_samples(os.path.join(s.dir, "data", "zmarket.db"), gpu[0])
        for minutes, target in ((1440, 20.0), (60, None)):
            lat, data, size = timed(s.base, f"/api/ebs/v2/devices/{gpu[0]}/metrics?minutes={minutes}", token, 50)
            points = sum(len(g["series"]) for g in data["gpus"])
            mark = "" if target is None else f"  (target p50 <= {target:.0f} ms)  {'✓' if pct(lat, 0.5) <= target else '✗'}"
            print(f"metrics ?minutes={minutes}: {len(data['gpus'])} GPUs, {points} GPU points, {len(data['cpu'])} CPU points "
                  f"({rows} rows stored, {size / 1024:.0f} KiB): p50 {pct(lat, 0.5):.1f} ms, p99 {pct(lat, 0.99):.1f} ms{mark}")


if __name__ == "__main__":
    main()
