#!/usr/bin/env python3
"""`zmarket backup` of a ~1 GB SQLite database while the server serves (issue 25, item 8): the
time of the copy, and the market's reads during it against before it.

    python3 bench/backup.py                  # ~1024 MB
    BENCH_DB_MB=256 python3 bench/backup.py  # a smaller database
    ZMARKET_BENCH_BIN=/path/to/zmarket python3 bench/backup.py

The server starts on a fresh data dir; two people sign up through the API; messages between them
(~1 KB each, the table's three indexes kept) are written straight into the server's SQLite file
in 64 MB transactions until it holds BENCH_DB_MB. Then client threads read the market list
(`GET /api/ebs/v1/market/applications`, 3 threads) and a signed-in wallet (`GET
/api/billing/v1/wallet`, a database read, 1 thread) on kept-alive connections, for BENCH_BEFORE
seconds (default 8), during `zmarket backup --to FILE`, and 2 s after; each read's latency is
kept with its start time, and p50/p99 are given for the reads that started before the backup and
during it. The copy's rows are counted against the database's.

Bounded: the fill stops at the size (or after 10 minutes), the backup is given 10 minutes, the
readers stop by themselves; loopback only; the server and its data dir are removed at the end.
"""
import http.client
import os
import sqlite3
import subprocess
import threading
import time

from common import BIN, Server, call, pct

PASSWORD = "Secret123"
MARKET = "/api/ebs/v1/market/applications"
WALLET = "/api/billing/v1/wallet"


def fill(db_path, a, b, target_mb):
    """Messages between a and b until the file holds target_mb; answers (rows, seconds)."""
    con = sqlite3.connect(db_path, timeout=30)
    stamp = con.execute("SELECT created_at FROM users WHERE id = ?", (a,)).fetchone()[0]
    pair = "|".join(sorted([a, b]))
    body = ("Is the GPU box free tonight? " * 40)[:1000]
    t0 = time.time()
    rows, batch = 0, 10_000
    deadline = t0 + 600
    while os.path.getsize(db_path) < target_mb << 20 and time.time() < deadline:
        # ~100 MB per transaction: the WAL is folded back after each one.
        for _ in range(6):
            con.executemany(
                "INSERT INTO messages (id, sender_id, recipient_id, pair_key, body, read, created_at) VALUES (?,?,?,?,?,?,?)",
                [(f"bench-{rows + i:012d}", a if i % 2 else b, b if i % 2 else a, pair, body, 1, stamp) for i in range(batch)])
            rows += batch
        con.commit()
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    return rows, time.time() - t0


class Readers:
    """Threads reading `path`s on kept-alive connections; every read kept as (start, seconds, path)."""

    def __init__(self, port, plan, token):
        self.port, self.token = port, token
        self.stop = threading.Event()
        self.reads, self.errors = [], 0
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.loop, args=(p,)) for p in plan]

    def loop(self, path):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"authorization": "Bearer " + self.token} if path == WALLET else {}
        mine = []
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                conn.request("GET", path, headers=headers)
                r = conn.getresponse()
                r.read()
                ok = r.status == 200
            except OSError:
                ok = False
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            if ok:
                mine.append((t0, time.perf_counter() - t0, path))
            else:
                with self.lock:
                    self.errors += 1
        conn.close()
        with self.lock:
            self.reads += mine

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)


def summary(reads, path, start, end):
    xs = [d for t, d, p in reads if p == path and start <= t < end]
    if not xs:
        return "no reads"
    return f"{len(xs) / (end - start):6.0f} reads/s, p50 {pct(xs, 0.5) * 1000:6.2f} ms, p99 {pct(xs, 0.99) * 1000:7.2f} ms"


def main():
    target_mb = int(os.environ.get("BENCH_DB_MB", "1024"))
    before_secs = float(os.environ.get("BENCH_BEFORE", "8"))
    env = {"ZMARKET_AUTH__EMAIL_VERIFICATION": "false", "ZMARKET_BACKUP__EVERY_HOURS": "0"}
    with Server(env) as s:
        for email in ["a@example.com", "b@example.com"]:
            call(s.base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": "a@example.com", "password": PASSWORD})["data"]["token"]
        data = os.path.join(s.dir, "data")
        db_path = os.path.join(data, "zmarket.db")
        con = sqlite3.connect(db_path, timeout=30)
        ids = [con.execute("SELECT id FROM users WHERE email = ?", (e,)).fetchone()[0] for e in ["a@example.com", "b@example.com"]]
        con.close()
        rows, secs = fill(db_path, ids[0], ids[1], target_mb)
        size = os.path.getsize(db_path)
        print(f"database: {size / 2**20:.0f} MB ({rows:,} messages written in {secs:.0f} s); load average {os.getloadavg()[0]:.2f}", flush=True)
        # Warm-up: connections, the market index, the page cache.
        for _ in range(50):
            call(s.base, "GET", MARKET)
            call(s.base, "GET", WALLET, token=token)

        copy = os.path.join(s.dir, "copy.sqlite3")
        with Readers(s.port, [MARKET, MARKET, MARKET, WALLET], token) as readers:
            time.sleep(before_secs)
            b0 = time.perf_counter()
            done = subprocess.run([BIN, "--data-dir", data, "backup", "--to", copy], capture_output=True, text=True, timeout=600,
                                  env=dict(os.environ, ZMARKET_LOG__LEVEL="warn"))
            b1 = time.perf_counter()
            time.sleep(2)
        if done.returncode != 0:
            raise SystemExit(f"zmarket backup failed: {done.stderr.strip()}")
        t_start = min(t for t, _, _ in readers.reads)
        con = sqlite3.connect(copy)
        copied = con.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
        con.close()
        copy_mb = os.path.getsize(copy) / 2**20
        print(f"zmarket backup: {b1 - b0:.1f} s for {size / 2**20:.0f} MB ({size / 2**20 / (b1 - b0):.0f} MB/s), copy {copy_mb:.0f} MB, "
              f"{copied:,} of {rows:,} messages; {done.stdout.strip()}")
        print(f"reads (3 threads on the market list, 1 on a wallet), {readers.errors} failed:")
        for path in [MARKET, WALLET]:
            print(f"  {path:36} before: {summary(readers.reads, path, t_start, b0)}")
            print(f"  {'':36} during: {summary(readers.reads, path, b0, b1)}")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
