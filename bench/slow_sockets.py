"""Slow sockets (issue 16, finding 4): the release binary runs with an open-file limit of 1,024
(as a default Linux account has); N sockets (default 1,100) from 127.0.0.1 each send a request's
headers one byte a second and never finish; meanwhile another client (127.0.0.2) asks /healthz
twice a second. Prints how many /healthz answered, their worst latency, and how many slow
sockets the server closed (header-read timeout, per-address cap).

    python3 bench/slow_sockets.py [sockets] [seconds]
    ZMARKET_BENCH_BIN=/path/to/other/zmarket python3 bench/slow_sockets.py

Bounded: N sockets for D seconds (default 20), loopback only."""
import resource
import socket
import sys
import threading
import time

import common
from common import Server

SOCKETS = int(sys.argv[1]) if len(sys.argv) > 1 else 1100
SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 20


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < SOCKETS + 100:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, SOCKETS + 200), hard))
    # The server gets 1,024 descriptors, as in the finding.
    orig = common.subprocess.Popen

    def limited(*a, **kw):
        kw["preexec_fn"] = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))
        return orig(*a, **kw)

    common.subprocess.Popen = limited
    with Server() as server:
        common.subprocess.Popen = orig
        probes = []
        stop = time.monotonic() + SECONDS

        def probe():
            while time.monotonic() < stop:
                t0 = time.perf_counter()
                ok = False
                try:
                    s = socket.create_connection(("127.0.0.1", server.port), timeout=3, source_address=("127.0.0.2", 0))
                    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    ok = s.recv(64).startswith(b"HTTP/1.1 200")
                    s.close()
                except OSError:
                    pass
                probes.append((ok, time.perf_counter() - t0))
                time.sleep(0.5)

        t = threading.Thread(target=probe)
        t.start()
        slow, refused = [], 0
        for _ in range(SOCKETS):
            try:
                s = socket.create_connection(("127.0.0.1", server.port), timeout=2)
                s.setblocking(False)
                slow.append(s)
            except OSError:
                refused += 1
        closed = 0
        header = b"GET /healthz HTTP/1.1\r\nX-Slow: " + b"a" * 10_000
        sent = 0
        while time.monotonic() < stop:
            for s in list(slow):
                try:
                    s.send(header[sent % len(header):sent % len(header) + 1])
                except BlockingIOError:
                    pass
                except OSError:
                    slow.remove(s)
                    closed += 1
                    continue
                try:
                    if s.recv(1) == b"":
                        slow.remove(s)
                        closed += 1
                except BlockingIOError:
                    pass
                except OSError:
                    slow.remove(s)
                    closed += 1
            sent += 1
            time.sleep(1)
        t.join()
        for s in slow:
            s.close()
        answered = [d for ok, d in probes if ok]
        print(f"slow sockets: {SOCKETS} opened from 127.0.0.1 ({refused} refused at connect), server open-file limit 1024, {SECONDS:.0f} s")
        print(f"/healthz from 127.0.0.2: {len(answered)}/{len(probes)} answered, worst {max(answered) if answered else float('nan'):.3f} s")
        print(f"slow sockets closed by the server: {closed}; still open at the end: {len(slow)}")


if __name__ == "__main__":
    main()
