"""Sign-up flood (issue 16, finding 2): N clients (default 128) POST /register for D seconds
(default 15) against the release binary on 127.0.0.1, while a real user signs in every second.
Prints the answers by status, the server's peak RSS during the flood and its RSS after, the real
user's sign-in times, and how many verification mails one address received (a fifth of the
clients hammer one address).

    python3 bench/flood.py [clients] [seconds]
    ZMARKET_BENCH_BIN=/path/to/other/zmarket python3 bench/flood.py    # e.g. an older build
    FLOOD_EVERY_REQUEST_HASHES=1 python3 bench/flood.py   # per-IP sign-up limit lifted: every
                                                          # request reaches Argon2 (the memory bound)

The flood comes from 127.0.0.1; the real user from 127.0.0.2 (another client address).

Bounded: clients x seconds, loopback only, a fresh data dir removed at the end."""
import collections
import http.client
import json
import os
import sys
import threading
import time

from common import Server, median, rss_mb

CLIENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 128
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 15
PASSWORD = "Secret123"


def post(conn, path, body):
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    r = conn.getresponse()
    r.read()
    return r.status


def mails_to(server, addr):
    d = os.path.join(server.dir, "data", "mail")
    n = 0
    for name in os.listdir(d) if os.path.isdir(d) else []:
        try:
            with open(os.path.join(d, name), errors="replace") as f:
                if f"To: {addr}" in f.read():
                    n += 1
        except OSError:
            pass
    return n


def verified_user(server, email):
    """Signs `email` up and opens its mailed link."""
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30, source_address=("127.0.0.2", 0))
    assert post(c, "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True}) == 200
    d = os.path.join(server.dir, "data", "mail")
    for _ in range(200):
        for name in os.listdir(d) if os.path.isdir(d) else []:
            text = open(os.path.join(d, name), errors="replace").read()
            if f"To: {email}" in text and "token=" in text:
                token = text.split("token=")[1].split()[0]
                c.request("GET", f"/api/iam/v1/verify-email?token={token}")
                r = c.getresponse()
                r.read()
                return
        time.sleep(0.05)
    raise SystemExit("no verification mail")


def main():
    env = {}
    if os.environ.get("FLOOD_EVERY_REQUEST_HASHES"):
        env = {"ZMARKET_AUTH__REGISTER_IP_BURST": "100000000", "ZMARKET_AUTH__REGISTER_IP_REFILL_SECS": "1"}
    with Server(env) as server:
        verified_user(server, "real@example.com")
        statuses = collections.Counter()
        lock = threading.Lock()
        stop = time.monotonic() + SECONDS
        victim = "victim@example.com"

        def client(i):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            n = 0
            while time.monotonic() < stop:
                email = victim if i % 5 == 0 else f"flood{i}-{n}@example.com"
                n += 1
                try:
                    s = post(conn, "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
                except (OSError, http.client.HTTPException):
                    s = "error"
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
                with lock:
                    statuses[s] += 1

        signins = []

        def real_user():
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60, source_address=("127.0.0.2", 0))
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                try:
                    s = post(conn, "/api/iam/v2/login/password", {"email": "real@example.com", "password": PASSWORD})
                except (OSError, http.client.HTTPException):
                    s = "error"
                    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60, source_address=("127.0.0.2", 0))
                signins.append((s, time.perf_counter() - t0))
                time.sleep(1)

        base_rss = rss_mb(server.proc.pid)
        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)] + [threading.Thread(target=real_user)]
        for t in threads:
            t.start()
        peak = base_rss
        while any(t.is_alive() for t in threads):
            peak = max(peak, rss_mb(server.proc.pid))
            time.sleep(0.1)
        time.sleep(2)
        after = rss_mb(server.proc.pid)
        times = [t for s, t in signins if s == 200]
        print(f"flood: {CLIENTS} clients x {SECONDS:.0f} s of POST /register against {server.proc.args[0]}{' (every request hashes)' if env else ''}")
        print(f"answers: {dict(sorted(statuses.items(), key=str))}")
        print(f"RSS: {base_rss:.0f} MB before, peak {peak:.0f} MB during, {after:.0f} MB 2 s after")
        print(f"real user's sign-in: {len(times)}/{len(signins)} answered 200, median {median(times) if times else float('nan'):.2f} s, max {max(times) if times else float('nan'):.2f} s; others {collections.Counter(s for s, _ in signins if s != 200)}")
        print(f"verification mails to one hammered address: {mails_to(server, victim)}")


if __name__ == "__main__":
    main()
