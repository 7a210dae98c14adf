#!/usr/bin/env python3
"""The nearby list with many shared devices: 10,000 then 100,000 boxes (or the counts given)
scattered over ~2,000 km around the map centre, written straight into the server's SQLite file;
then the time of the first answer after the change (computed) and wrk on the same list (kept under
the public data version): the list a visitor opens (no radius: the nearest 24), and within 50 km
and 500 km.

    python3 bench/nearby.py                 # 10000 100000
    python3 bench/nearby.py 1000 10000      # other counts
    ZMARKET_BENCH_BIN=/path/to/zmarket python3 bench/nearby.py   # another build (before/after)

Bounded: wrk -t2 -c50 for BENCH_SECONDS (default 3) per row; loopback only; the server is stopped.
"""
import math
import os
import random
import sqlite3
import sys
import time

from common import Server, call, rss_mb, wrk

PASSWORD = "Secret123"
CENTRE = (22.5431, 114.0579)  # config.toml [map] default


def scatter(n, rnd):
    """n points around CENTRE: half within ~100 km (a city), half within ~2,000 km."""
    lat0, lng0 = map(math.radians, CENTRE)
    for i in range(n):
        d = (rnd.random() ** 2) * (100.0 if i % 2 == 0 else 2000.0) / 6371.0
        b = rnd.random() * 2 * math.pi
        lat = math.asin(math.sin(lat0) * math.cos(d) + math.cos(lat0) * math.sin(d) * math.cos(b))
        lng = lng0 + math.atan2(math.sin(b) * math.sin(d) * math.cos(lat0), math.cos(d) - math.sin(lat0) * math.sin(lat))
        yield math.degrees(lat), (math.degrees(lng) + 540) % 360 - 180


def fill(db_path, owner, stamp, start, n, rnd):
    con = sqlite3.connect(db_path, timeout=30)
    rows = []
    for i, (lat, lng) in enumerate(scatter(n, rnd), start=start):
        rows.append((f"NB{i:07d}", f"box {i}", "Z-BOX", "online", owner, owner, stamp, "manual", 1, 100 + i % 400, 8,
                     16 << 30, 512 << 30, "[]", lat, lng, 0, "", 0, stamp, stamp, stamp))
    con.executemany(
        "INSERT INTO devices (id, name, device_type, status, owner_user_id, bound_by, bound_at, sharing_mode, rentable, "
        "price_per_hour, cpu_cores, memory_bytes, disk_bytes, gpus, lat, lng, gpu_count, gpu_model, passthrough, "
        "last_seen_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    # Public data changed (as a write through the API would say): caches keyed by it follow.
    con.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'public'")
    con.commit()
    con.close()


def main():
    counts = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    seconds = int(os.environ.get("BENCH_SECONDS", "3"))
    rnd = random.Random(18)
    with Server({"ZMARKET_AUTH__EMAIL_VERIFICATION": "false"}) as s:
        call(s.base, "POST", "/api/iam/v1/register",
             {"email": "owner@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        db_path = os.path.join(s.dir, "data", "zmarket.db")
        con = sqlite3.connect(db_path, timeout=30)
        owner, stamp = con.execute("SELECT id, created_at FROM users WHERE email = 'owner@example.com'").fetchone()
        con.close()
        have = 0
        print(f"nearby list, wrk -t2 -c50 -d{seconds}s, 127.0.0.1 (req/s, p99)")
        for n in counts:
            t0 = time.time()
            fill(db_path, owner, stamp, have, n - have, rnd)
            have = n
            time.sleep(1.5)  # the server follows the shared version every second
            print(f"{n:>7} devices (written in {time.time() - t0:.1f} s):", flush=True)
            for label, q in [("nearest 24 (no radius)", ""), ("within 50 km", "&radius_km=50"), ("within 500 km", "&radius_km=500")]:
                url = f"{s.base}/api/ebs/v2/nearby?lat={CENTRE[0]}&lng={CENTRE[1]}{q}"
                # The first answer after a change is computed; the next ones are kept under the
                # public data version until the next change.
                t0 = time.perf_counter()
                total = call(s.base, "GET", url[len(s.base):])["data"]["total"]
                first_ms = (time.perf_counter() - t0) * 1000
                rps, p99, bad = wrk(url, seconds, 50, 2)
                print(f"  {label:24} total {total:>6}: {rps:8.0f} req/s, p99 {p99} {bad} (first answer {first_ms:.0f} ms)", flush=True)
        print(f"RSS after: {rss_mb(s.proc.pid):.0f} MB")


if __name__ == "__main__":
    main()
