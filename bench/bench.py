#!/usr/bin/env python3
"""Throughput of the market, as ratios to /healthz of the same binary, measured in one run.

Starts the release binary on a fresh temporary data directory bound to 127.0.0.1, drives it with
wrk for a bounded time per target, prints requests per second and each ratio to /healthz, then
stops the server. See bench/README.md.

    python3 bench/bench.py [--bin target/release/zmarket] [--seconds 5] [--connections 16]
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# A cache miss on every request: a query parameter the page ignores, unique per request and thread.
COLD_LUA = """
counter = 0
next_tid = 0
function setup(thread)
  next_tid = next_tid + 1
  thread:set("tid", next_tid)
end
function request()
  counter = counter + 1
  return wrk.format("GET", "/market?bench=" .. tostring(tid) .. "-" .. tostring(counter))
end
"""

TARGETS = [
    # (label, path or None for the Lua script, extra headers)
    ("healthz (baseline)", "/healthz", []),
    ("GET /api/ebs/v1/market/applications", "/api/ebs/v1/market/applications", []),
    ("same, If-None-Match (304)", "/api/ebs/v1/market/applications", ["If-None-Match: {etag}"]),
    ("GET /api/ebs/v1/market/search?keyword=server", "/api/ebs/v1/market/search?keyword=server", []),
    ("GET /market (SSR, cached)", "/market", []),
    ("GET /market (SSR, cold render)", None, []),
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(base, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("server did not become ready")


def wrk(base, path, seconds, connections, threads, headers, script=None):
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "--latency"]
    for h in headers:
        cmd += ["-H", h]
    if script:
        cmd += ["-s", script]
    cmd.append(base + (path or "/market"))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 30).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+\w+)", out)
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return rps, (p99.group(1) if p99 else "?"), int(non2xx.group(1)) if non2xx else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/zmarket"))
    ap.add_argument("--seconds", type=int, default=5, help="duration of each target (default 5)")
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2, help="wrk threads")
    args = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("wrk is needed: apt-get install -y wrk")
    if not os.path.exists(args.bin):
        raise SystemExit(f"{args.bin} is missing: cargo build --release")

    data = tempfile.mkdtemp(prefix="zmarket-bench-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = dict(os.environ, ZMARKET_LOG__LEVEL="warn")
    started = time.time()
    server = subprocess.Popen(
        [args.bin, "serve", "--bind", f"127.0.0.1:{port}", "--data-dir", data],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    try:
        wait_ready(base)
        startup = time.time() - started
        with urllib.request.urlopen(base + "/api/ebs/v1/market/applications") as r:
            etag = r.headers["ETag"]
        script = os.path.join(data, "cold.lua")
        with open(script, "w") as f:
            f.write(COLD_LUA)
        # Warm-up: the render threads load the server bundle, the page cache fills.
        for path in ["/market", "/api/ebs/v1/market/applications"]:
            wrk(base, path, 1, 4, 1, [])

        cpus = os.cpu_count()
        print(f"zmarket bench: {args.bin}, {cpus} CPUs, wrk -t{args.threads} -c{args.connections} "
              f"-d{args.seconds}s per target, 127.0.0.1, fresh data dir (start-up to ready {startup * 1000:.0f} ms)")
        print(f"{'target':48} {'req/s':>10} {'p99':>9} {'ratio to /healthz':>18}")
        base_rps = None
        for label, path, headers in TARGETS:
            hs = [h.format(etag=etag) for h in headers]
            rps, p99, bad = wrk(base, path, args.seconds, args.connections, args.threads, hs,
                                script=script if path is None else None)
            base_rps = base_rps or rps
            note = f"  ({bad} non-2xx/3xx)" if bad else ""
            print(f"{label:48} {rps:10.0f} {p99:>9} {rps / base_rps:17.3f}x{note}")
            sys.stdout.flush()
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
