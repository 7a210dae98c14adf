"""Server rendering: the time one render of /market takes inside the binary (the Server-Timing
header: queue wait + QuickJS render, no network), and pages per second served from the render
cache and uncached, as ratios to /healthz of the same binary, in one run."""
import os
import sys
import tempfile

from common import Server, median, pct, wrk

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
seconds = int(os.environ.get("BENCH_SECONDS", "5"))

with Server() as s:
    s.get("/market")  # runtime warm-up
    durs = []
    for i in range(n):
        status, headers, _, _ = s.get(f"/market?bench={i}")
        assert status == 200, status
        timing = headers.get("server-timing") or headers.get("Server-Timing") or ""
        if timing.startswith("render;dur="):
            durs.append(float(timing.split("=")[1]))
    print(f"in-process render of /market (cold, {len(durs)} distinct URLs): median {median(durs):.1f} ms, "
          f"p95 {pct(durs, 0.95):.1f} ms")

    base_rps, base_p99, _ = wrk(s.base + "/healthz", seconds)
    cached_rps, cached_p99, _ = wrk(s.base + "/market", seconds)
    script = os.path.join(tempfile.mkdtemp(), "unique.lua")
    with open(script, "w") as f:
        f.write('local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "/market?u=" .. n .. "-" .. math.random(1, 1e9))\nend\n')
    cold_rps, cold_p99, cold_non2xx = wrk(s.base + "/market", seconds, script=script)
    print(f"/healthz: {base_rps:.0f} req/s (p99 {base_p99})")
    print(f"/market cached: {cached_rps:.0f} pages/s (p99 {cached_p99}), ratio to /healthz {cached_rps / base_rps:.3f}")
    print(f"/market uncached (every URL new): {cold_rps:.0f} pages/s (p99 {cold_p99}), "
          f"ratio to /healthz {cold_rps / base_rps:.4f} {cold_non2xx}")
