#!/usr/bin/env python3
"""Every row of issue 18's table in one run, each as a ratio to H: a bare axum 0.8 server
(bench/bare, same axum and tokio as Cargo.lock) answering "ok", measured by the same wrk, on the
same machine, in the same run, right before the row (a shared machine's speed drifts by a
quarter within minutes: a row is compared with the H of its own minute).

    python3 bench/all.py                    # cargo build --release first
    python3 bench/all.py --seconds 3 --skip-domains
    python3 bench/all.py --before /tmp/zmarket-old   # an older build measured in the same run,
                                                     # each row next to the new build's
    python3 bench/all.py --rounds 3 ...              # each row 3 times; the median ratio

Builds bench/bare (release, its own target dir bench/bare/target), starts it and
target/release/zmarket (fresh data dir: the seeded catalogue of 24 apps, one signed-in person) on
127.0.0.1 (and the --before build beside it), runs wrk (2 threads, 100 connections, --seconds
each) against H and then every build for each row, then the
domain figures through the existing scripts (wallet.py, social.py, flood.py, nearby.py, rent.py, backup.py, scale.py at 1,000 boxes) with
small bounds, and connect's (connect.py: command latency, an app's origin and a tunnel through the
market against straight; needs a Docker daemon, else its row says it was skipped).
Bounded: about 5 minutes in all; loopback only; every process started is stopped.
"""
import argparse
import gzip
import os
import re
import subprocess
import sys
import time
import urllib.request

from common import BIN, ROOT, Server, call, free_port, median, rss_mb, wrk

HERE = os.path.dirname(os.path.abspath(__file__))
BARE = os.path.join(HERE, "bare")
PASSWORD = "Secret123"
ENV = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
    "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
}


class Target:
    """A row's target: a floor on the ratio to H and/or a ceiling on p99 (ms)."""

    def __init__(self, ratio=None, p99=None, note=""):
        self.ratio, self.p99, self.note = ratio, p99, note

    def __str__(self):
        parts = ([f"≥ {self.ratio}"] if self.ratio is not None else []) + ([f"p99 ≤ {self.p99:g} ms"] if self.p99 is not None else [])
        return ", ".join(parts) + (f" ({self.note})" if self.note else "")

    def met(self, ratio, p99_ms):
        return (self.ratio is None or ratio >= self.ratio) and (self.p99 is None or p99_ms <= self.p99)


def mark(ok):
    return "✓" if ok else "✗"


def ms(p99):
    """wrk's latency ("812.00us", "5.2ms", "1.01s") in milliseconds."""
    m = re.match(r"([\d.]+)(us|ms|s)", p99 or "")
    if not m:
        return float("nan")
    return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]


class Bare:
    """H: bench/bare built (release) and serving "ok" on a free loopback port."""

    def __init__(self):
        subprocess.run(["cargo", "build", "--release", "--offline", "--locked", "--quiet", "--manifest-path", os.path.join(BARE, "Cargo.toml")],
                       check=True, timeout=600)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([os.path.join(BARE, "target", "release", "bare"), f"127.0.0.1:{self.port}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise SystemExit("bench/bare did not start")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=10)


def first_load(s):
    """JS a first visit to /market downloads (gzip), and how many of its chunks the document does
    not name (found only once main.js runs: a waterfall)."""
    _, _, html, _ = s.get("/market")
    html = html.decode()
    # The boot script names the entry (data-main) and its chunks (data-preload), fetched together.
    boot = re.search(r'<script type="module" src="/static/([^"]+\.js)"(?: data-main="([^"]+)" data-preload="([^"]*)")?', html)
    entry = boot.group(2) or boot.group(1)
    named = set((boot.group(3) or "").split()) | {entry, boot.group(1)}
    seen, todo, total = set(), [entry], 0
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        _, _, body, _ = s.get("/static/" + f, {"accept-encoding": "identity"})
        total += len(gzip.compress(body, 9))
        # Static imports only (what must arrive before the entry runs).
        todo += re.findall(r'(?:import|from)\s*"\./([^"]+\.js)"', body.decode(errors="replace"))
    # The lazy route chunks preloaded by the document count too (they are part of the first load).
    for f in named - seen:
        _, _, body, _ = s.get("/static/" + f, {"accept-encoding": "identity"})
        total += len(gzip.compress(body, 9))
    return total / 1024, len(seen - named), len(named)


def cold_renders(s, n):
    durs = []
    for i in range(n):
        _, headers, _, _ = s.get(f"/market?cold={time.time_ns()}-{i}")
        timing = {k.lower(): v for k, v in headers.items()}.get("server-timing", "")
        if timing.startswith("render;dur="):
            durs.append(float(timing.split("=")[1]))
    return median(durs) if durs else float("nan")


def script_line(script, env, pattern, timeout=120):
    """Runs another bench script with small bounds; the first match of `pattern` in its output."""
    out = subprocess.run([sys.executable, os.path.join(HERE, script)] + env.pop("_args", []), env=dict(os.environ, **env),
                         capture_output=True, text=True, timeout=timeout).stdout
    m = re.search(pattern, out)
    return m.groups() if m else None


class Subject:
    """One build serving on loopback (fresh data: the seeded catalogue, one signed-in person),
    warmed up: the HTTP rows it is measured on, and its other figures. It runs the default
    configuration, `log.level = "info"` (a line per request, written to a file) as a user runs
    it (issue 42, item 5); a second server of the build at `warn` gives the extra row."""

    def __init__(self, binary):
        self.server = Server(dict(ENV, ZMARKET_LOG__LEVEL="info"), binary)
        self.quiet = Server(ENV, binary)
        s = self.server
        try:
            email = "bench@example.com"
            call(s.base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
            token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]
            self.auth = [f"Authorization: Bearer {token}"]
            _, h, _, _ = s.get("/api/ebs/v1/notifications/stats", {"authorization": "Bearer " + token})
            self.stats_etag = {k.lower(): v for k, v in h.items()}.get("etag")
            # Warm-up: render threads, page cache, connections.
            for path in ["/market", "/api/ebs/v1/market/applications", "/healthz"]:
                wrk(s.base + path, 1, 8, 2)
            wrk(self.quiet.base + "/healthz", 1, 8, 2)
        except BaseException:
            s.stop()
            self.quiet.stop()
            raise

    def rows(self):
        """[(label, url, headers, target)]"""
        base, auth = self.server.base, self.auth
        # What a browser sends (every browser asks for compression): not in the table; the
        # plain rows' targets (the compressed forms are made once, src/encoded.rs).
        browser = ["Accept-Encoding: gzip, deflate, br, zstd"]
        rows = [
            ("/healthz through the full middleware stack", base + "/healthz", [], Target(0.8)),
            ("  the same at log level warn (no request line)", self.quiet.base + "/healthz", [], Target(0.8)),
            ("cached market list", base + "/api/ebs/v1/market/applications", [], Target(0.5, 5)),
            ("/market from the render cache", base + "/market", [], Target(0.5)),
            ("  cached market list, as a browser asks (br)", base + "/api/ebs/v1/market/applications", browser, Target(0.5, 5)),
            ("  /market from the render cache, as a browser asks (br)", base + "/market", browser, Target(0.5)),
            ("notification stats poll (signed in)", base + "/api/ebs/v1/notifications/stats", auth, Target(0.3, 5)),
        ]
        if self.stats_etag:
            rows.append(("  the same, If-None-Match (the poller: 304)", base + "/api/ebs/v1/notifications/stats",
                         auth + [f"If-None-Match: {self.stats_etag}"], Target(0.3, 5)))
        rows.append(("authenticated profile read", base + "/api/iam/v1/account/profile", auth, Target(p99=5, note="issue 28; was 10")))
        return rows

    def others(self):
        s = self.server
        return {"rss": rss_mb(s.proc.pid), "cold": cold_renders(s, 40), "first_load": first_load(s)}

    def stop(self):
        self.server.stop()
        self.quiet.stop()


def http_rows(builds, bare_base, sec, conn, rounds):
    """Every HTTP row of every build, interleaved: for each row and round, H (the bare server)
    and then each build (in turns: the order flips each round), one right after the other. A
    row's ratio is the median over rounds of its req/s over the H measured next to it, so a
    machine that slows down or speeds up during the run (a shared one does) moves H and the
    row together. Returns {build: ({label: (req/s, ratio, p99 ms text, non-2xx, target)}, others)}
    and every H measured, with its p99 (the floor of any row's tail on this machine: H's own p99
    under this load is 4.4-5.3 ms on 2 shared cores, where wrk's and the server's threads take
    turns)."""
    subjects = []
    try:
        for name, binary in builds:
            subjects.append((name, Subject(binary)))
        # Rows by label (a build without an ETag on the stats poll has no 304 row).
        per_build = {name: {label: (url, headers) for label, url, headers, _ in subj.rows()} for name, subj in subjects}
        targets = {label: target for label, _, _, target in subjects[-1][1].rows()}
        got = {name: {} for name, _ in subjects}
        hs = []
        for label in targets:
            for r in range(rounds):
                h, h_p99, _ = wrk(bare_base + "/", sec, conn, 2)
                hs.append((h, h_p99))
                order = subjects if r % 2 == 0 else subjects[::-1]
                line = [f"H {h:.0f} (p99 {h_p99})"]
                for name, _ in order:
                    if label not in per_build[name]:
                        continue
                    url, headers = per_build[name][label]
                    rps, p99, bad = wrk(url, sec, conn, 2, headers=list(headers))
                    got[name].setdefault(label, []).append((rps, p99, bad, h))
                    line.append(f"{name} {rps:.0f} (p99 {p99}{' ' + bad if bad else ''})")
                print(f"  {label.strip()}, round {r + 1}: " + ", ".join(line), flush=True)
        results = {}
        for name, subj in subjects:
            rows = {}
            for label, runs in got[name].items():
                p99s = sorted(runs, key=lambda x: ms(x[1]))
                rows[label] = (median([x[0] for x in runs]), median([x[0] / x[3] for x in runs]), p99s[len(p99s) // 2][1],
                               next((x[2] for x in runs if x[2]), ""), targets[label])
            results[name] = (rows, subj.others())
        return results, hs
    finally:
        for _, subj in subjects:
            subj.stop()


def domain_rows(binary, H):
    """The domain figures of one binary, through the other scripts: [(label, req/s or "", ratio text, p99, note, ✓/✗)]
    (only the flood has a target in the issues; the others are figures to compare before and after)."""
    env = {"ZMARKET_BENCH_BIN": binary}
    out = []
    flood = script_line("flood.py", dict(env, _args=["128", "8"]), r"RSS: (\d+) MB before, peak (\d+) MB during, (\d+) MB 2 s after")
    if flood:
        out.append(("RSS under a 128-client sign-up flood (8 s)", "", "", "", f"peak {flood[1]} MB, {flood[2]} MB 2 s after (target ≤ 150 MB)", mark(int(flood[1]) <= 150)))
    wallet = script_line("wallet.py", dict(env, BENCH_SECONDS="3", BENCH_WORKERS="4"),
                         r"transfers, each worker its own accounts: (\d+)/s.*\n.*transfers, all workers on one account pair: (\d+)/s")
    if wallet:
        out.append(("wallet transfers/s (SQLite; own accounts / one hot pair)", wallet[0], f"{int(wallet[0]) / H:9.4f}H", "", f"hot pair {wallet[1]}/s", "- (no target)"))
    events = script_line("social.py", dict(env, BENCH_USERS="20", BENCH_STREAMS="100", BENCH_SECONDS="3", BENCH_SENDERS="8"),
                         r"events delivered: \d+ of \d+ expected \((\d+)/s\)\n.*p50 ([\d.]+) ms, p99 ([\d.]+) ms")
    if events:
        out.append(("events/s (100 streams, 20 people, 8 senders)", events[0], f"{int(events[0]) / H:9.4f}H", events[2] + "ms", f"p50 {events[1]} ms", "- (no target)"))
    near = subprocess.run([sys.executable, os.path.join(HERE, "nearby.py"), "10000", "100000"], env=dict(os.environ, BENCH_SECONDS="2", **env),
                          capture_output=True, text=True, timeout=900).stdout
    devices = ""
    for line in near.splitlines():
        m = re.match(r"\s*(\d+) devices", line)
        if m:
            devices = m.group(1)
        m = re.match(r"\s+(.+?)\s+total\s+(\d+): +(\d+) req/s, p99 (\S+)", line)
        if m:
            out.append((f"nearby, {int(devices):,} devices, {m.group(1)}", m.group(3), f"{int(m.group(3)) / H:9.4f}H", m.group(4), f"{m.group(2)} listed", "- (no target)"))
    offers = subprocess.run([sys.executable, os.path.join(HERE, "offers.py")], env=dict(os.environ, BENCH_SECONDS="3", **env),
                            capture_output=True, text=True, timeout=600).stdout
    for line in offers.splitlines():
        m = re.match(r"\s+offers, (\d+) boxes, (.+?): (\d+) fitting listed, (\d+) req/s, p99 (\S+)", line)
        if m:
            target = Target(0.3, 10, "issue 39")
            rps = int(m.group(4))
            out.append((f"rent offers, {m.group(1)} boxes, {m.group(2)}", m.group(4), f"{rps / H:9.4f}H", m.group(5), f"{m.group(3)} fitting; {target}",
                        mark(target.met(rps / H, ms(m.group(5))))))
    rent = script_line("rent.py", dict(env, BENCH_SECONDS="3"), r"rent calls: (\d+)/s, p99 (\S+); statuses ([^(]*)")
    if rent:
        out.append(("rent calls/s (SQLite, 16 renters, 199 boxes)", rent[0], f"{int(rent[0]) / H:9.4f}H", rent[1], rent[2].strip(), "- (no target)"))
    backup = script_line("backup.py", dict(env, BENCH_DB_MB="256", BENCH_BEFORE="3"),
                         r"zmarket backup: ([\d.]+) s for (\d+) MB.*\n.*\n.*before: +(\d+) reads/s, p50 +[\d.]+ ms, p99 +([\d.]+) ms\n"
                         r".*during: +(\d+) reads/s, p50 +[\d.]+ ms, p99 +([\d.]+) ms")
    if backup:
        out.append((f"market list (3 Python readers) during `zmarket backup` of {backup[1]} MB", backup[4], "", backup[5] + "ms",
                    f"backup {backup[0]} s; before it {backup[2]} reads/s, p99 {backup[3]} ms", "- (no target)"))
    scale = subprocess.run([sys.executable, os.path.join(HERE, "scale.py"), "--boxes", "1000", "--measure", "1", "--people-secs", "4",
                            "--binary", binary], capture_output=True, text=True, timeout=900).stdout
    quiet = re.search(r"quiet: list p50 ([\d.]+) ms, p99 ([\d.]+) ms; sign-in p50 (\d+) ms, p99 (\d+) ms", scale)
    for m in re.finditer(r"scale (\d+) boxes: ([\d.]+) KB a channel, ([\d.]+) ms CPU a beat, list p50 ([\d.]+) ms p99 ([\d.]+) ms, "
                         r"sign-in p50 (\d+) ms p99 (\d+) ms", scale):
        kb, beat = float(m.group(2)), float(m.group(3))
        against = f"; with no box: list p99 {quiet.group(2)} ms, sign-in p99 {quiet.group(4)} ms" if quiet else ""
        out.append((f"{int(m.group(1)):,} boxes on channels, beats every 30 s (bench/scale.py)", "", "", m.group(5) + "ms",
                    f"{kb:.0f} KB a channel (target ≤ 40), {beat:.2f} ms CPU a beat (target ≤ 0.3); sign-in p50 {m.group(6)} ms, "
                    f"p99 {m.group(7)} ms{against}", mark(kb <= 40 and beat <= 0.3)))
    out.extend(connect_rows(env, H))
    return out


def connect_rows(env, H):
    """Connect's figures (issue 22's targets), through bench/connect.py: needs a Docker daemon
    (a real agent runs a real container); without one, one row says so."""
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return [("connect (bench/connect.py)", "", "", "", "skipped: no Docker daemon (start dockerd)", "-")]
    out = subprocess.run([sys.executable, os.path.join(HERE, "connect.py")], env=dict(os.environ, BENCH_SECONDS="3", **env),
                         capture_output=True, text=True, timeout=600).stdout
    rows = []
    m = re.search(r"click → command on the agent's channel, (\d+) actions: p50 (\d+) ms, p95 (\d+) ms", out)
    if m:
        p50, p95 = int(m.group(2)), int(m.group(3))
        rows.append((f"click → command on the agent's channel ({m.group(1)} actions)", "", "", f"p95 {p95}ms",
                     f"p50 {p50} ms (target p50 ≤ 100 ms, p95 ≤ 500 ms)", mark(p50 <= 100 and p95 <= 500)))
    m = re.search(r"click → state shown: stop median ([\d.]+) s, start median ([\d.]+) s", out)
    if m:
        stop, start = float(m.group(1)), float(m.group(2))
        rows.append(("real container, click → state shown", "", "", "", f"stop {stop:.2f} s, start {start:.2f} s (target ≤ 2 s)",
                     mark(stop <= 2 and start <= 2)))
    m = re.search(r"HTTP through the market vs straight to the container: ([\d,]+) vs ([\d,]+) req/s, ratio ([\d.]+) .*?added (-?[\d.]+) ms", out)
    if m:
        rps, ratio, added = int(m.group(1).replace(",", "")), float(m.group(3)), float(m.group(4))
        rows.append(("an app's origin through the market (vs straight to it)", rps, f"{rps / H:9.4f}H", "",
                     f"ratio to straight {ratio:.2f} (target ≥ 0.85), p50 added {added:.2f} ms (target ≤ 2 ms)", mark(ratio >= 0.85 and added <= 2)))
    m = re.search(r"100 MB download: straight (\d+) MB/s, through the tunnel (\d+) MB/s, ratio ([\d.]+)", out)
    if m:
        ratio = float(m.group(3))
        rows.append(("100 MB through `zmarket tunnel` (vs straight)", "", "", "", f"{m.group(2)} vs {m.group(1)} MB/s, ratio {ratio:.2f} (target ≥ 0.6)",
                     mark(ratio >= 0.6)))
    if not rows:
        rows.append(("connect (bench/connect.py)", "", "", "", "no figures: see `python3 bench/connect.py`", "✗"))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=4, help="wrk duration per target (default 4)")
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--skip-domains", action="store_true", help="only the HTTP rows (no flood, wallet, events, nearby, rent)")
    ap.add_argument("--before", metavar="BIN", help="another build (e.g. of an older commit): every row measured for it too, in the same run")
    ap.add_argument("--rounds", type=int, default=1, help="measurements of each row per build, each next to its own H (default 1)")
    args = ap.parse_args()
    sec, conn = args.seconds, args.connections
    t_start = time.time()
    load = os.getloadavg()
    builds = ([("before", args.before)] if args.before else []) + [("now", BIN)]

    bare = Bare()
    try:
        print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; wrk -t2 -c{conn} -d{sec}s; "
              f"{args.rounds} round(s) a row; " + ", ".join(f"{n}: {b}" for n, b in builds), flush=True)
        results, hs = http_rows(builds, bare.base, sec, conn, args.rounds)
        load_end = os.getloadavg()
    finally:
        bare.stop()

    h_p99s = sorted(ms(p) for _, p in hs)
    hs = [h for h, _ in hs]
    H = median(hs)
    print()
    print(f"zmarket bench/all.py: H = {H:.0f} req/s (median of {len(hs)}, from {min(hs):.0f} to {max(hs):.0f}; each row's ratio "
          f"is to the H measured next to it); load average {load[0]:.2f} before, {load_end[0]:.2f} after the HTTP rows; "
          f"{os.cpu_count()} CPUs; wrk -t2 -c{conn} -d{sec}s, 127.0.0.1")
    print(f"H's own p99 (the bare server's tail under the same load, the floor of every row's): median {median(h_p99s):.2f} ms, "
          f"from {h_p99s[0]:.2f} to {h_p99s[-1]:.2f} ms")
    names = [n for n, _ in builds]
    head = " | ".join(f"{n + ' req/s':>12} | {n + ' ratio':>12} | {n + ' p99':>10}" for n in names)
    marks = " | ".join(f"{n:>6}" for n in names)
    print(f"| {'measure':56} | {head} | {'target':34} | {marks} |")
    print("|" + "-" * 58 + "|" + "|".join(["-" * 14, "-" * 14, "-" * 12] * len(names)) + "|" + "-" * 36 + "|" + "|".join(["-" * 8] * len(names)) + "|")
    labels = list(results["now"][0].keys())
    for label in labels:
        cells, verdicts = [], []
        target = results["now"][0][label][4]
        for n in names:
            r = results[n][0].get(label)
            cells.append(f"{r[0]:12.0f} | {r[1]:11.3f}H | {r[2]:>10}" if r else f"{'-':>12} | {'-':>12} | {'-':>10}")
            verdicts.append(f"{mark(target.met(r[1], ms(r[2])) and not r[3]) if r else '-':>6}")  # errors fail the row
        print(f"| {label:56} | {' | '.join(cells)} | {str(target):34} | {' | '.join(verdicts)} |")
    for n in names:
        o = results[n][1]
        js_kib, late, preloaded = o["first_load"]
        print(f"| {n}: cold server render of /market (24 cards), in process: median {o['cold']:.1f} ms (target ≤ 5 ms) {mark(o['cold'] <= 5)} |")
        print(f"| {n}: first load {js_kib:.0f} kB JS gzip, {late} chunks found after main.js runs, {preloaded} named in the document "
              f"(target ≤ 150 kB, 0) {mark(js_kib <= 150 and late == 0)} |")
        print(f"| {n}: RSS after the load above {o['rss']:.0f} MB (target ≤ 100 MB) {mark(o['rss'] <= 100)} |")
    sys.stdout.flush()

    if not args.skip_domains:
        for n, binary in builds:
            for label, rps, ratio, p99, note, verdict in domain_rows(binary, H):
                print(f"| {n}: {label:56} | {rps:>9} | {ratio:>10} | {p99:>8} | {note} | {verdict} |", flush=True)
    print(f"total {time.time() - t_start:.0f} s; load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
