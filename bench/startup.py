"""How long `zmarket serve` takes from exec to answering /healthz on an empty data dir
(migrations, signing key, catalogue seed included). Target: under one second."""
import statistics
import sys

from common import Server

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
times = []
for _ in range(runs):
    with Server() as s:
        times.append(s.startup_secs * 1000)
print(f"startup on an empty data dir, {runs} runs: median {statistics.median(times):.0f} ms, "
      f"min {min(times):.0f} ms, max {max(times):.0f} ms")
