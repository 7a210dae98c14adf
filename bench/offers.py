#!/usr/bin/env python3
"""The Rent dialog's offers with many boxes: GET /api/rmp/v1/apps/rent-options for an app that fits
BENCH_DEVICES (default 200) online rentable boxes of another owner (written straight into the
server's SQLite file: GPUs of three kinds with their CUDA, a place, 40 days of presence), as one
renter's browser asks it (compressed): cheapest first from the renter's point, and sorted by
reliability with a VRAM filter; then the same answer computed each time (a new point per request,
so the one-second cache of src/apps/rental.rs never answers). Issue 39's target (bench/all.py row): ≥ 0.3·H with p99 ≤ 10 ms.

    python3 bench/offers.py
    ZMARKET_BENCH_BIN=/path/to/zmarket python3 bench/offers.py

Bounded: wrk -t2 -c16 for BENCH_SECONDS (default 3) per row; loopback only; the server is stopped.
"""
import json
import os
import random
import sqlite3
import time

from common import OPEN_SIGNUP, Server, call, person, wrk

SECONDS = int(os.environ.get("BENCH_SECONDS", "3"))
DEVICES = int(os.environ.get("BENCH_DEVICES", "200"))
ENV = OPEN_SIGNUP
GIB = 1 << 30
KINDS = [("NVIDIA RTX 4090", 24, "12.2"), ("NVIDIA A100", 80, "12.4"), ("NVIDIA H200", 141, "12.8")]


def gpus(i, rnd):
    name, vram, cuda = KINDS[i % len(KINDS)]
    return [{"index": k, "uuid": f"GPU-{i:08x}-0000-4000-8000-{k:012x}", "name": name, "vram": vram * GIB, "passthrough": True,
             "driver": "580.159.04", "cuda": cuda, "compute_capability": "9.0", "mig": False} for k in range(1 + rnd.randrange(8))]


def boxes(db_path, owner, n, rnd):
    con = sqlite3.connect(db_path, timeout=30)
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now))
    bound = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(now - 40 * 86400))
    hour = int(now // 3600)
    rows = []
    for i in range(n):
        g = gpus(i, rnd)
        # Heard in most hours: each box its own share.
        share = 0.8 + 0.2 * rnd.random()
        ring = bytes(sum(1 << b for b in range(8) if rnd.random() < share) for _ in range(90))
        rows.append((f"OB{i:06d}", f"offer box {i}", "Z-BOX", "online", owner, owner, bound, "manual", 1, 100 + rnd.randrange(900), 64, 512 * GIB,
                     8192 * GIB, json.dumps(g), 22.5 + rnd.random(), 114.0 + rnd.random(), 0, "", 0, stamp, stamp, stamp, ring, hour, 1))
    con.executemany(
        "INSERT INTO devices (id, name, device_type, status, owner_user_id, bound_by, bound_at, sharing_mode, rentable, "
        "price_per_hour, cpu_cores, memory_bytes, disk_bytes, gpus, lat, lng, gpu_count, gpu_model, passthrough, "
        "last_seen_at, created_at, updated_at, presence, presence_hour, gpu_runtime) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    con.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'public'")
    con.commit()
    con.close()


def main():
    rnd = random.Random(39)
    with Server(ENV) as s:
        person(s.base, "provider@example.com")
        renter = person(s.base, "renter@example.com")
        db_path = os.path.join(s.dir, "data", "zmarket.db")
        con = sqlite3.connect(db_path, timeout=30)
        owner = con.execute("SELECT id FROM users WHERE email = 'provider@example.com'").fetchone()[0]
        con.close()
        boxes(db_path, owner, DEVICES, rnd)
        time.sleep(1.5)
        # As the Rent dialog asks: a browser always sends Accept-Encoding.
        auth = [f"Authorization: Bearer {renter}", "Accept-Encoding: gzip, deflate, br, zstd"]
        rows = [
            ("cheapest first, from the renter's point", "/api/rmp/v1/apps/rent-options?app_id=grafana&lat=22.54&lng=114.06"),
            ("by reliability, a GPU of 80 GiB or more", f"/api/rmp/v1/apps/rent-options?app_id=grafana&sort=reliability&min_vram={80 * GIB}"),
        ]
        for label, path in rows:
            listed = call(s.base, "GET", path, token=renter)["data"]
            fitting = sum(1 for o in listed if o["fits"])
            rps, p99, non2xx = wrk(s.base + path, SECONDS, 16, 2, headers=auth)
            print(f"  offers, {DEVICES} boxes, {label}: {fitting} fitting listed, {rps:.0f} req/s, p99 {p99} {non2xx}".rstrip())
        # Uncached: every request from another point.
        script = os.path.join(s.dir, "points.lua")
        with open(script, "w") as f:
            f.write('local n = 0\nfunction request()\n  n = n + 1\n'
                    '  return wrk.format("GET", string.format("/api/rmp/v1/apps/rent-options?app_id=grafana&lat=22.%06d&lng=114.06", n))\nend\n')
        rps, p99, non2xx = wrk(s.base + "/", SECONDS, 16, 2, script=script, headers=auth)
        print(f"  offers, {DEVICES} boxes, computed for each request (a new point each): {fitting} fitting listed, {rps:.0f} req/s, p99 {p99} {non2xx}".rstrip())


if __name__ == "__main__":
    main()
