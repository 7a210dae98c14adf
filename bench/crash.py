"""Crash test (issue 16): kill -9 during a write load, restart, check that every acknowledged write
is there. Each cycle starts the release binary on 127.0.0.1 (same data dir / database across
cycles), lets 8 clients sign people up (email verification off, so each 200 is a committed
account), kills the server with SIGKILL after a random 0.5-2 s, and at the end of all cycles
looks every acknowledged address up in the database.

    python3 bench/crash.py [cycles]                    # SQLite (default 3 cycles)
    CRASH_PG=postgres://zmtest:zmtest@127.0.0.1:5432/postgres python3 bench/crash.py 3
    python3 bench/crash.py 100                         # the long run

Bounded: cycles x (start-up + at most 2 s of load); loopback only; the data dir (and the
PostgreSQL database it creates) are removed at the end. Exits 1 when a write was lost."""
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from common import BIN, free_port

CYCLES = int(sys.argv[1]) if len(sys.argv) > 1 else 3
PG = os.environ.get("CRASH_PG", "")


def psql(url, sql):
    return subprocess.run(["psql", url, "-qAtc", sql], capture_output=True, text=True, check=True).stdout


def main():
    work = tempfile.mkdtemp(prefix="zmarket-crash-")
    env = dict(os.environ)
    env.update({
        "ZMARKET_LOG__LEVEL": "error",
        "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
        "ZMARKET_AUTH__REGISTER_IP_BURST": "100000",
        "ZMARKET_AUTH__JWT_SECRET": "crash-test-secret-0123456789abcdef0123456789",
    })
    db_url = None
    if PG:
        name = f"zmcrash_{os.getpid()}_{int(time.time())}"
        psql(PG, f"CREATE DATABASE {name}")
        db_url = PG.rsplit("/", 1)[0] + "/" + name
        env["ZMARKET_DATABASE__URL"] = db_url
    acknowledged = []
    lock = threading.Lock()
    counter = [0]
    try:
        for cycle in range(CYCLES):
            t_cycle = time.monotonic()
            port = free_port()
            proc = subprocess.Popen([BIN, "serve", "--bind", f"127.0.0.1:{port}", "--data-dir", os.path.join(work, "data")],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        raise SystemExit(f"cycle {cycle}: the server did not come back")
                    time.sleep(0.05)
            stop = threading.Event()

            def client():
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                while not stop.is_set():
                    with lock:
                        counter[0] += 1
                        email = f"c{cycle}-{counter[0]}@example.com"
                    body = json.dumps({"email": email, "password": "Secret123", "confirm_password": "Secret123", "agree": True})
                    try:
                        conn.request("POST", "/api/iam/v1/register", body, {"content-type": "application/json"})
                        r = conn.getresponse()
                        r.read()
                        if r.status == 200:
                            with lock:
                                acknowledged.append(email)
                    except (OSError, http.client.HTTPException):
                        return

            threads = [threading.Thread(target=client) for _ in range(8)]
            for t in threads:
                t.start()
            time.sleep(random.uniform(0.5, 2.0))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stop.set()
            for t in threads:
                t.join()
            if os.environ.get("CRASH_VERBOSE"):
                print(f"cycle {cycle}: {time.monotonic() - t_cycle:.1f} s, {len(acknowledged)} acknowledged so far")
        # Every acknowledged sign-up must be in the database.
        if db_url:
            present = set(psql(db_url, "SELECT email FROM users").split())
        else:
            con = sqlite3.connect(os.path.join(work, "data", "zmarket.db"))
            present = {r[0] for r in con.execute("SELECT email FROM users")}
            con.close()
        lost = [e for e in acknowledged if e not in present]
        print(f"crash test ({'PostgreSQL' if db_url else 'SQLite'}): {CYCLES} kill -9 cycles, {len(acknowledged)} acknowledged sign-ups, {len(lost)} lost")
        if lost:
            print("lost:", lost[:10])
            sys.exit(1)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if db_url:
            subprocess.run(["psql", PG, "-qc", f"DROP DATABASE IF EXISTS {db_url.rsplit('/', 1)[1]} WITH (FORCE)"], capture_output=True)


if __name__ == "__main__":
    main()
