"""The live event stream under load: N open Server-Sent Events streams (default 1,000) on one
instance, messages sent between friends while every stream listens. Prints messages written per
second with no stream open and with the streams open (their ratio is the cost of the fan-out),
events delivered per second, end-to-end latency (POST sent -> event read by a stream) p50/p99, and
the server's resident memory before and with the streams (per stream).

Bounded: USERS accounts, STREAMS streams, SECONDS of sending per phase (or MAX_MESSAGES), on
127.0.0.1 only. Environment: BENCH_USERS (100), BENCH_STREAMS (1000), BENCH_SECONDS (8),
BENCH_SENDERS (16 concurrent senders), BENCH_MAX_MESSAGES (20000)."""
import asyncio
import json
import os
import statistics
import time

from common import Server, call

USERS = int(os.environ.get("BENCH_USERS", "100"))
STREAMS = int(os.environ.get("BENCH_STREAMS", "1000"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "8"))
SENDERS = int(os.environ.get("BENCH_SENDERS", "16"))
MAX_MESSAGES = int(os.environ.get("BENCH_MAX_MESSAGES", "20000"))
PASSWORD = "Secret123"
PER_USER = -(-STREAMS // USERS)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Http:
    """One keep-alive HTTP/1.1 connection for JSON calls."""

    def __init__(self, port):
        self.port = port

    async def open(self):
        self.r, self.w = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def post(self, path, body, token):
        raw = json.dumps(body).encode()
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n").encode()
        self.w.write(head + raw)
        await self.w.drain()
        status = int((await self.r.readline()).split()[1])
        length = 0
        while True:
            line = await self.r.readline()
            if line in (b"\r\n", b""):
                break
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        await self.r.readexactly(length)
        return status


async def stream(port, token, received, ready, stop):
    """One SSE connection; records (body, time read) of every message event."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write((f"GET /api/cim/v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
             "Accept: text/event-stream\r\n\r\n").encode())
    await w.drain()
    status = int((await r.readline()).split()[1])
    assert status == 200, status
    while (await r.readline()) not in (b"\r\n", b""):
        pass
    ready.release()
    buf = b""
    try:
        while not stop.is_set():
            chunk = await r.read(65536)
            if not chunk:
                break
            buf += chunk
            # chunked transfer framing lines are harmless here: events are found by their fields
            while b"\n\n" in buf:
                block, buf = buf.split(b"\n\n", 1)
                if b"event: message" in block:
                    for line in block.split(b"\n"):
                        if line.startswith(b"data: "):
                            received.append((json.loads(line[6:])["body"], time.perf_counter()))
    finally:
        w.close()


async def send_for(port, pairs, seconds, sent):
    """SENDERS concurrent senders, each on its own connection, for `seconds`."""
    deadline = time.perf_counter() + seconds
    count = [0]

    async def sender(k):
        http = await Http(port).open()
        i = 0
        while time.perf_counter() < deadline and count[0] < MAX_MESSAGES:
            a, b = pairs[(k + i * SENDERS) % len(pairs)]
            body = f"{k}-{i}"
            sent[body] = time.perf_counter()
            status = await http.post("/api/cim/v1/messages", {"to_user_id": b["id"], "body": body}, a["token"])
            assert status == 200, status
            count[0] += 1
            i += 1
        http.w.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(sender(k) for k in range(SENDERS)))
    return count[0] / (time.perf_counter() - t0)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


async def main(s, users, pairs):
    port = s.port
    # Phase 1: no stream open.
    base_rate = await send_for(port, pairs, SECONDS, {})
    idle_kib = rss_kib(s.proc.pid)

    # Phase 2: STREAMS streams (PER_USER per person), then the same sending.
    received, ready, stop = [], asyncio.Semaphore(0), asyncio.Event()
    tasks = [asyncio.create_task(stream(port, users[i % len(users)]["token"], received, ready, stop)) for i in range(STREAMS)]
    for _ in range(STREAMS):
        await ready.acquire()
    await asyncio.sleep(1)
    streams_kib = rss_kib(s.proc.pid)
    received.clear()
    sent = {}
    t0 = time.perf_counter()
    rate = await send_for(port, pairs, SECONDS, sent)
    # Let the last events arrive (bounded).
    expected = len(sent) * 2 * PER_USER
    drain_until = time.perf_counter() + 10
    while len(received) < expected and time.perf_counter() < drain_until:
        await asyncio.sleep(0.05)
    elapsed = time.perf_counter() - t0
    loaded_kib = rss_kib(s.proc.pid)
    stop.set()
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)

    lat = [(t - sent[b]) * 1000 for b, t in received if b in sent]
    print(f"streams open: {STREAMS} ({len(users)} people x {PER_USER}); senders: {SENDERS}; {SECONDS:.0f} s per phase")
    print(f"messages/s, no stream open:      {base_rate:8.0f}")
    print(f"messages/s, {STREAMS} streams open: {rate:8.0f}   ratio {rate / base_rate:.2f}")
    print(f"events delivered: {len(received)} of {expected} expected ({len(received) / elapsed:.0f}/s)")
    print(f"latency POST -> event read: p50 {statistics.median(lat):.1f} ms, p99 {pct(lat, 0.99):.1f} ms, max {max(lat):.1f} ms")
    print(f"server RSS: {idle_kib / 1024:.1f} MiB idle, {streams_kib / 1024:.1f} MiB with the streams "
          f"({(streams_kib - idle_kib) / STREAMS:.1f} KiB per stream), {loaded_kib / 1024:.1f} MiB after the load")


env = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
    "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
    "ZMARKET_SOCIAL__MESSAGES_PER_MINUTE": "1000000",
    "ZMARKET_SOCIAL__STREAMS_PER_USER": str(PER_USER),
}
with Server(env) as s:
    users = []
    for i in range(USERS):
        email = f"bench{i}@example.com"
        call(s.base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]
        uid = call(s.base, "GET", "/api/iam/v1/account/profile", token=token)["data"]["id"]
        users.append({"email": email, "token": token, "id": uid})
    pairs = []
    for i in range(0, USERS - 1, 2):
        a, b = users[i], users[i + 1]
        rid = call(s.base, "POST", "/api/cim/v1/friends/requests", {"email": b["email"]}, a["token"])["data"]["id"]
        call(s.base, "POST", f"/api/cim/v1/friends/requests/{rid}/accept", token=b["token"])
        pairs += [(a, b), (b, a)]
    asyncio.run(main(s, users, pairs))
