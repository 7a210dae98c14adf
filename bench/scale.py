#!/usr/bin/env python3
"""A city's boxes on one instance (issue 42, item 6): N bound boxes, each with an open agent
channel beating every `--beat-secs`, against one server; what the server pays for them.

    python3 bench/scale.py                          # 1,000 / 5,000 / 10,000 boxes, beats every 30 s
    python3 bench/scale.py --boxes 1000 --beat-secs 10 --binary /tmp/zmarket-before
    python3 bench/scale.py --boxes 5000,10000 --postgres postgres://zmtest:zmtest@127.0.0.1:5432/postgres
    python3 bench/scale.py --boxes 10000 --storm    # then the market restarts: every box comes back

One server (release binary, fresh data dir, log level `warn` as the other benches): first, with
no box, the people-facing figures are measured (the quiet row) and its idle CPU. Then level by
level (1,000, then 4,000 more, ...) the level's boxes are registered and bound by one person over
HTTP and their channels open at once (a box not on a channel within `offline_after_secs` would
be swept offline with a notification, thousands of them while the level is measured), each from a loopback source
address 127.0.x.y with at most 30 channels an address (the per-address cap, a quarter of
`server.max_connections_per_ip`, stays on). Each box beats as the agent does (spec and metrics
every beat) at a random phase of the interval, answers the market's pings, and counts the
answers. For each level, after one whole beat interval to settle:

- RSS per channel: (server VmRSS now - VmRSS with no box) / channels (a box's row is counted
  with its channel);
- CPU per beat: the server's CPU time (user + system) over `--measure` beat intervals, less its
  idle CPU with no channel open (measured for 10 s before), divided by the beats sent in them
  (everything else the server did meanwhile is charged to the beats: pings, the command
  watcher, the presence flushes); no people-facing request runs in that window;
- the people-facing p50/p99 (the market list and a sign-in, one client after the other) while
  the boxes beat.

`--postgres URL`: the boxes are split over two instances sharing that database (each with its
own channels); RSS and CPU are the two servers' sums. `--storm`: after the last level the server
is stopped and started again on the same data dir; every box reconnects as the agent does
(jittered back-off: 1 s ±50 %, doubling up to 60 s) and the script reports how long until all
are back, what the server refused meanwhile, and the people-facing p99 during it.

Bounded: every phase has a deadline; every process started is stopped; loopback only. The open
files limit is raised to its hard limit (each channel is a descriptor on both sides).
"""
import argparse
import asyncio
import base64
import http.client
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from common import BIN, free_port, pct, rss_mb

PASSWORD = "Secret123"
SPEC = {"cpu_cores": 8, "memory_bytes": 1 << 34, "disk_bytes": 1 << 40, "gpus": []}
PER_ADDRESS = 30
HERE = os.path.dirname(os.path.abspath(__file__))


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def source_address(i):
    """The loopback address of box i: 30 boxes an address, 127.0.1.1 onwards."""
    a = i // PER_ADDRESS
    return f"127.0.{1 + a // 250}.{1 + a % 250}"


# ---- the boxes' side: one asyncio process holding every channel ----

class Box:
    __slots__ = ("secret", "addr", "reader", "writer", "open")

    def __init__(self, secret, addr):
        self.secret, self.addr, self.reader, self.writer, self.open = secret, addr, None, None, False


def frame(payload, opcode=1):
    data = payload.encode() if isinstance(payload, str) else payload
    mask = os.urandom(4)
    n = len(data)
    head = bytes([0x80 | opcode])
    head += bytes([0x80 | n]) if n < 126 else (bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else bytes([0x80 | 127]) + n.to_bytes(8, "big"))
    m = int.from_bytes(mask * ((n + 3) // 4), "big") >> (8 * ((4 - n % 4) % 4)) if n else 0
    masked = (int.from_bytes(data, "big") ^ m).to_bytes(n, "big") if n else b""
    return head + mask + masked


class Fleet:
    def __init__(self, ports, beat_secs):
        self.ports, self.beat_secs = ports, beat_secs
        self.boxes = []
        self.beats = self.answers = self.pings = self.refused = self.lost = 0
        self.refusals = {}
        self.reconnect = False

    def beat_text(self):
        return json.dumps({"t": "beat", "spec": SPEC, "metrics": {"cpu_percent": round(random.uniform(1, 30), 1),
                           "memory_used_bytes": 1 << 32, "disk_used_bytes": 1 << 38}, "installations": [], "acks": []})

    async def connect(self, box, port):
        r, w = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port, local_addr=(box.addr, 0)), 20)
        key = base64.b64encode(os.urandom(16)).decode()
        w.write((f"GET /api/agent/v1/channel HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer {box.secret}\r\n\r\n").encode())
        head = await asyncio.wait_for(r.readuntil(b"\r\n\r\n"), 30)
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            w.close()
            code = status.split(b" ")[1].decode() if len(status.split(b" ")) > 1 else "?"
            self.refusals[code] = self.refusals.get(code, 0) + 1
            raise ConnectionRefusedError(code)
        box.reader, box.writer, box.open = r, w, True

    async def read_loop(self, box):
        r = box.reader
        try:
            while True:
                b0, b1 = await r.readexactly(2)
                n = b1 & 0x7F
                if n == 126:
                    n = int.from_bytes(await r.readexactly(2), "big")
                elif n == 127:
                    n = int.from_bytes(await r.readexactly(8), "big")
                data = await r.readexactly(n)
                op = b0 & 0x0F
                if op == 9:
                    self.pings += 1
                    box.writer.write(frame(data, 10))
                elif op == 1:
                    self.answers += 1
                elif op == 8:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        box.open = False
        self.lost += 1

    async def life(self, box, port, first_delay):
        """Connects (again and again, with the agent's jittered back-off once `reconnect` is on)
        and beats every beat_secs from a random phase."""
        backoff = 1.0
        while True:
            try:
                await self.connect(box, port)
                backoff = 1.0
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, ConnectionRefusedError) as e:
                self.refused += 1
                # 429: the market's open rate; the agent comes back after Retry-After (2 s), jittered.
                if not self.reconnect and str(e) != "429":
                    return
                backoff = max(backoff, 2.0)
                await asyncio.sleep(backoff * random.uniform(0.5, 1.5))
                backoff = min(backoff * 2, 60)
                continue
            reading = asyncio.ensure_future(self.read_loop(box))
            await asyncio.sleep(first_delay)
            first_delay = random.uniform(0, self.beat_secs)
            while box.open:
                try:
                    box.writer.write(frame(self.beat_text()))
                    self.beats += 1
                except (ConnectionError, OSError):
                    break
                await asyncio.sleep(self.beat_secs)
            reading.cancel()
            box.writer.close()
            if not self.reconnect:
                return
            await asyncio.sleep(backoff * random.uniform(0.5, 1.5))
            backoff = min(backoff * 2, 60)

    def opened(self):
        return sum(1 for b in self.boxes if b.open)

    async def add(self, secrets, start_rate):
        """Opens channels for `secrets` at about `start_rate` a second; answers when each tried once."""
        tasks = []
        for s in secrets:
            i = len(self.boxes)
            box = Box(s, source_address(i))
            self.boxes.append(box)
            port = self.ports[i % len(self.ports)]
            tasks.append(asyncio.ensure_future(self.life(box, port, random.uniform(0, self.beat_secs))))
            await asyncio.sleep(1 / start_rate)
        deadline = time.time() + 60
        while time.time() < deadline and self.opened() < len(self.boxes):
            await asyncio.sleep(0.2)
        return tasks

    def stats(self):
        return {"open": self.opened(), "beats": self.beats, "answers": self.answers, "pings": self.pings, "refused": self.refused,
                "lost": self.lost, "refusals": self.refusals}


async def fleet_main(ports, beat_secs, start_rate, max_secs):
    """Reads commands from stdin (`add <secrets file> <from> <to>`, `stats`, `reconnect`, `ports <p,...>`), answers JSON lines."""
    raise_nofile()
    fleet = Fleet(ports, beat_secs)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    end = time.time() + max_secs
    keep = []
    while time.time() < end:
        try:
            line = await asyncio.wait_for(reader.readline(), max(1, end - time.time()))
        except asyncio.TimeoutError:
            break
        if not line:
            break
        cmd = line.decode().split()
        if cmd[0] == "add":
            with open(cmd[1]) as f:
                secrets = json.load(f)[int(cmd[2]):int(cmd[3])]
            keep += await fleet.add(secrets, start_rate)
        elif cmd[0] == "reconnect":
            fleet.reconnect = True
        elif cmd[0] == "ports":
            fleet.ports = [int(p) for p in cmd[1].split(",")]
        print(json.dumps(fleet.stats()), flush=True)
    os._exit(0)


# ---- the market's side ----

class Market:
    """One instance of the binary on a free loopback port (the same data dir across a restart)."""

    def __init__(self, binary, env, data_dir=None, port=None):
        self.binary, self.env = binary, env
        self.dir = data_dir or tempfile.mkdtemp(prefix="zmarket-scale-")
        self.port = port or free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.start()

    def start(self):
        e = dict(os.environ, ZMARKET_LOG__LEVEL="warn", **self.env)
        with open(os.path.join(self.dir, "server.log"), "ab") as log:
            self.proc = subprocess.Popen([self.binary, "serve", "--bind", f"127.0.0.1:{self.port}", "--data-dir", os.path.join(self.dir, "data")],
                                         env=e, stdout=log, stderr=subprocess.STDOUT, cwd=self.dir)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise SystemExit("the server did not start within 60 s")

    def cpu_secs(self):
        with open(f"/proc/{self.proc.pid}/stat") as f:
            parts = f.read().rsplit(")", 1)[1].split()
        return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self):
        return rss_mb(self.proc.pid)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Http:
    """A kept-alive HTTP/1.1 connection per thread."""

    def __init__(self, port):
        self.port = port
        self.local = threading.local()

    def call(self, method, path, body=None, token=None):
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"content-type": "application/json"} if body is not None else {}
        if token:
            headers["authorization"] = "Bearer " + token
        try:
            c.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
            r = c.getresponse()
            raw = r.read()
        except (http.client.HTTPException, OSError):
            self.local.c = None
            c.close()
            raise
        return r.status, (json.loads(raw) if raw[:1] == b"{" else raw)


def register_and_bind(port, token, n, workers=6):
    """n boxes registered and bound to the person of `token`; answers their secrets."""
    h = Http(port)
    secrets = [None] * n
    failures = []

    def work(k):
        for i in range(k, n, workers):
            for attempt in range(5):
                try:
                    st, reg = h.call("POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": f"box{i}", "spec": SPEC})
                    if st != 200:
                        raise RuntimeError(f"register {st} {reg}")
                    d = reg["data"]
                    st, linked = h.call("POST", "/api/ebs/v2/devices/link", {"device_id": d["device_id"], "pairing_code": d["pairing_code"]}, token)
                    if st != 200:
                        raise RuntimeError(f"link {st} {linked}")
                    secrets[i] = d["device_secret"]
                    break
                except (RuntimeError, OSError, http.client.HTTPException) as e:
                    if attempt == 4:
                        failures.append(str(e))
                    time.sleep(0.2)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise SystemExit(f"{len(failures)} boxes not registered: {failures[:3]}")
    return secrets


def people(port, email, seconds):
    """The market list and sign-ins, one after the other, for `seconds` each half: (list p50, p99,
    sign-in p50, p99, errors) in ms."""
    h = Http(port)
    lists, signs, errors = [], [], 0
    stop = time.perf_counter() + seconds / 2
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        try:
            st, _ = h.call("GET", "/api/ebs/v1/market/applications")
        except (OSError, http.client.HTTPException):
            st = 0
        (lists.append(time.perf_counter() - t0) if st == 200 else None)
        errors += st != 200
        time.sleep(0.01)
    stop = time.perf_counter() + seconds / 2
    while time.perf_counter() < stop:
        t0 = time.perf_counter()
        try:
            st, _ = h.call("POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})
        except (OSError, http.client.HTTPException):
            st = 0
        (signs.append(time.perf_counter() - t0) if st == 200 else None)
        errors += st != 200
    f = lambda xs, p: pct(xs, p) * 1000 if xs else float("nan")
    return f(lists, 0.5), f(lists, 0.99), f(signs, 0.5), f(signs, 0.99), errors, len(lists), len(signs)


class FleetProcess:
    def __init__(self, ports, beat_secs, start_rate, max_secs):
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--fleet", ",".join(map(str, ports)), str(beat_secs), str(start_rate), str(max_secs)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.size = 0

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def people_line(name, r):
    return (f"{name}: market list p50 {r[0]:.1f} ms, p99 {r[1]:.1f} ms ({r[5]} reads); sign-in p50 {r[2]:.0f} ms, p99 {r[3]:.0f} ms "
            f"({r[6]} sign-ins); {r[4]} failed")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--boxes", default="1000,5000,10000", help="levels, comma-separated (default 1000,5000,10000)")
    ap.add_argument("--beat-secs", type=float, default=30, help="the boxes' beat interval (default 30, the agent's)")
    ap.add_argument("--measure", type=float, default=2, help="beat intervals measured per level (default 2)")
    ap.add_argument("--people-secs", type=float, default=8, help="seconds of people-facing requests per level (default 8)")
    ap.add_argument("--binary", default=BIN)
    ap.add_argument("--postgres", metavar="URL", help="two instances on this PostgreSQL database (emptied first)")
    ap.add_argument("--storm", action="store_true", help="after the last level, restart the market and time the boxes' return")
    ap.add_argument("--start-rate", type=float, default=150, help="channels opened a second while a level opens (default 150, under the market's 200)")
    args = ap.parse_args()
    levels = [int(x) for x in args.boxes.split(",")]
    n_max = max(levels)
    hard = raise_nofile()
    if hard < n_max + 2000:
        raise SystemExit(f"the open files limit ({hard}) is too low for {n_max} channels")
    env = {
        "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
        "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
        "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
        "ZMARKET_DEVICES__REGISTER_IP_BURST": "1000000",
        "ZMARKET_DEVICES__HEARTBEAT_SECS": str(int(max(1, args.beat_secs))),
        "ZMARKET_DEVICES__OFFLINE_AFTER_SECS": str(int(max(90, 3 * args.beat_secs))),
        "ZMARKET_SERVER__MAX_SOCKETS": str(n_max + 1000),
        "ZMARKET_SERVER__MAX_CONNECTIONS": str(n_max + 4000),
    }
    markets = []
    if args.postgres:
        reset_postgres(args.postgres)
        env["ZMARKET_DATABASE__URL"] = args.postgres
        markets = [Market(args.binary, env), Market(args.binary, env)]
    else:
        markets = [Market(args.binary, env)]
    m0 = markets[0]
    fleet = None
    secrets_file = os.path.join(m0.dir, "secrets.json")
    try:
        print(f"bench/scale.py: {args.binary}; {'PostgreSQL, 2 instances' if args.postgres else 'SQLite, 1 instance'}; "
              f"beats every {args.beat_secs:g} s{' (compressed from the agent’s 30 s)' if args.beat_secs != 30 else ''}; "
              f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs", flush=True)
        h = Http(m0.port)
        email = "owner@example.com"
        h.call("POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        token = h.call("POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})[1]["data"]["token"]
        # Each level's boxes are registered (online: a box registers so) and bound right before
        # their channels open, so none waits long enough to be swept offline (a transaction and a
        # notification each: thousands of them would be measured with the level).
        secrets = []
        with open(secrets_file, "w") as f:
            json.dump(secrets, f)
        quiet = people(m0.port, email, args.people_secs)
        print(people_line("no box online", quiet), flush=True)
        rss0 = sum(m.rss() for m in markets)
        c0, w0 = sum(m.cpu_secs() for m in markets), time.time()
        time.sleep(10)
        idle = (sum(m.cpu_secs() for m in markets) - c0) / (time.time() - w0)
        print(f"idle server CPU with no channel: {100 * idle:.1f} % of a core (taken off the beats' share below)", flush=True)
        print(f"RSS with no channel: {rss0:.1f} MB", flush=True)
        max_secs = (len(levels) + 2) * (args.beat_secs * (args.measure + 1) + args.people_secs + 120) + 600
        fleet = FleetProcess([m.port for m in markets], args.beat_secs, args.start_rate, max_secs)
        have = 0
        rows = []
        for n in levels:
            t0 = time.time()
            secrets += register_and_bind(m0.port, token, n - have)
            with open(secrets_file, "w") as f:
                json.dump(secrets, f)
            print(f"{n - have} boxes registered and bound in {time.time() - t0:.0f} s", flush=True)
            t0 = time.time()
            st = fleet.ask(f"add {secrets_file} {have} {n}")
            have = fleet.size = n
            print(f"{n} boxes: {st['open']} channels open in {time.time() - t0:.0f} s (refused {st['refused']} {st['refusals']})", flush=True)
            time.sleep(args.beat_secs + 2)
            st0, cpu0, w0 = fleet.ask("stats"), sum(m.cpu_secs() for m in markets), time.time()
            time.sleep(args.beat_secs * args.measure)
            st1, cpu1, w1 = fleet.ask("stats"), sum(m.cpu_secs() for m in markets), time.time()
            rss = sum(m.rss() for m in markets)
            load_people = people(m0.port, email, args.people_secs)
            beats = st1["beats"] - st0["beats"]
            # The server's own idle work (its jobs) is not the beats'.
            cpu = max(0.0, cpu1 - cpu0 - idle * (w1 - w0))
            row = {"boxes": n, "open": st1["open"], "rss": rss, "per_channel_kb": (rss - rss0) * 1024 / max(1, st1["open"]),
                   "beats_per_s": beats / (w1 - w0), "cpu_share": cpu / (w1 - w0), "cpu_per_beat_ms": cpu * 1000 / max(1, beats),
                   "answers": st1["answers"] - st0["answers"], "beats": beats, "people": load_people}
            rows.append(row)
            print(f"{n} boxes: {st1['open']} channels; RSS {rss:.0f} MB (+{rss - rss0:.0f} MB, {row['per_channel_kb']:.1f} KB a channel); "
                  f"{row['beats_per_s']:.0f} beats/s, {row['answers']} answers; server CPU {100 * row['cpu_share']:.1f} % of a core, "
                  f"{row['cpu_per_beat_ms']:.3f} ms a beat", flush=True)
            print("  " + people_line(f"{n} boxes beating", load_people), flush=True)
        if args.storm:
            storm(markets, fleet, m0, email, args)
        print("summary:")
        print(f"  quiet: list p50 {quiet[0]:.1f} ms, p99 {quiet[1]:.1f} ms; sign-in p50 {quiet[2]:.0f} ms, p99 {quiet[3]:.0f} ms")
        for r in rows:
            p = r["people"]
            print(f"  scale {r['boxes']} boxes: {r['per_channel_kb']:.1f} KB a channel, {r['cpu_per_beat_ms']:.3f} ms CPU a beat, "
                  f"list p50 {p[0]:.1f} ms p99 {p[1]:.1f} ms, sign-in p50 {p[2]:.0f} ms p99 {p[3]:.0f} ms, RSS {r['rss']:.0f} MB", flush=True)
    finally:
        if fleet:
            fleet.stop()
        for m in markets:
            m.stop()
            shutil.rmtree(m.dir, ignore_errors=True)
        if args.postgres:
            reset_postgres(args.postgres)


def storm(markets, fleet, m0, email, args):
    """Every instance stops and starts again; the boxes come back with the agent's back-off."""
    fleet.ask("reconnect")
    for m in markets:
        m.stop()
    time.sleep(2)
    t0 = time.time()
    for m in markets:
        m.start()
    lat = []
    done = threading.Event()

    def measure():
        lat.append(people(m0.port, email, 20))
        done.set()

    threading.Thread(target=measure, daemon=True).start()
    back_at = None
    while time.time() - t0 < 300:
        st = fleet.ask("stats")
        if st["open"] >= fleet.size:
            back_at = time.time() - t0
            break
        time.sleep(1)
    done.wait(60)
    st = fleet.ask("stats")
    print(f"storm: market restarted; {st['open']} of {fleet.size} channels back "
          f"{'in ' + format(back_at, '.0f') + ' s' if back_at else 'not all within 300 s'}; refused meanwhile {st['refusals']}", flush=True)
    if lat:
        print("  " + people_line("during the storm", lat[0]), flush=True)


def reset_postgres(url):
    """Drops and recreates the public schema of the bench's database."""
    subprocess.run(["psql", url, "-q", "-c", "DROP SCHEMA public CASCADE; CREATE SCHEMA public;"], check=True, capture_output=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--fleet":
        ports = [int(p) for p in sys.argv[2].split(",")]
        asyncio.run(fleet_main(ports, float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])))
    else:
        main()
