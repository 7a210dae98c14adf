#!/usr/bin/env python3
"""Two instances behind one proxy behave as one (issue 16, docs/security.md "Several instances"). Run by
scripts/two-instances against nginx (round robin) in front of two zmarket instances on one
PostgreSQL; reads nginx's access log (`$upstream_addr $status $request_uri` per line) to prove
both instances answered each part.

    scripts/coherence.py BASE_URL DATA_DIR ACCESS_LOG

Checks, each through the proxy:
  - sessions: a token from a sign-in is accepted by both instances; refreshing one refresh token
    twice (one call per instance) answers one successor; after sign-out both refuse the token;
  - limits: 30 wrong sign-ins from one forwarded client against the default allowance of 20
    answer exactly 20 (each instance alone would answer 20: 40 in all);
  - public caches: both instances render /nearby (cached), a device is shared, and every
    following render on either instance shows it.
Loopback only; bounded (a few hundred requests, waits of at most 10 s)."""
import glob
import json
import os
import re
import sys
import time
import urllib.error
import urllib.request

BASE, DATA, LOG = sys.argv[1], sys.argv[2], sys.argv[3]
PASSWORD = "Secret123"


# Every path requested through the proxy, so a look at its access log can wait for their lines.
SENT = []


def call(method, path, body=None, token=None, headers=None):
    SENT.append(path)
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if body is not None:
        req.add_header("content-type", "application/json")
    if token:
        req.add_header("authorization", f"Bearer {token}")
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def upstreams(uri_part):
    """The instances (upstream addresses) that answered requests whose URI contains uri_part.
    nginx writes a request's line after the answer has gone out, so a client can read its answer
    before the line is there: wait (at most 5 s) for a line per request this script sent."""
    wanted = sum(uri_part in p for p in SENT)
    deadline = time.time() + 5
    while True:
        seen, lines = set(), 0
        with open(LOG) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and uri_part in parts[2]:
                    seen.add(parts[0])
                    lines += 1
        if lines >= wanted or time.time() > deadline:
            return seen
        time.sleep(0.05)


def expect(cond, what, detail=""):
    if not cond:
        print(f"FAILED: {what} {detail}")
        # What nginx saw, to tell a routing surprise from an instance's answer.
        with open(LOG) as f:
            print("nginx access log (last 20 lines):\n" + "".join(f.readlines()[-20:]))
        sys.exit(1)
    print(f"ok: {what}")


def mailed_link(email):
    deadline = time.time() + 10
    while time.time() < deadline:
        for path in glob.glob(os.path.join(DATA, "mail", "*.eml")):
            text = open(path, encoding="utf-8", errors="replace").read()
            if f"To: {email}" in text:
                m = re.search(r"token=([A-Za-z0-9_\-]+)", text)
                if m:
                    return m.group(1)
        time.sleep(0.1)
    sys.exit(f"FAILED: no verification mail for {email}")


def signed_in(email):
    s, b = call("POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    expect(s == 200, f"sign-up of {email} ({s})")
    s, b = call("GET", f"/api/iam/v1/verify-email?token={mailed_link(email)}")
    expect(s == 200, f"verification ({s})")
    s, b = call("POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})
    expect(s == 200, f"sign-in ({s})")
    return b["data"]


def sessions():
    session = signed_in("coherent@example.com")
    token = session["token"]
    answers = [call("GET", "/api/iam/v1/account/profile", token=token)[0] for _ in range(8)]
    expect(answers == [200] * 8, f"the token works on every call ({answers})")
    expect(len(upstreams("/api/iam/v1/account/profile")) == 2, "both instances answered with it")
    r0 = session["refresh_token"]
    one = call("GET", "/api/iam/v1/refresh", token=r0)
    two = call("GET", "/api/iam/v1/refresh", token=r0)
    expect(one[0] == 200 and two[0] == 200, f"one refresh token, refreshed on each instance ({one[0]}, {two[0]})")
    expect(one[1]["data"]["refresh_token"] == two[1]["data"]["refresh_token"], "one successor")
    expect(len(upstreams("/api/iam/v1/refresh")) == 2, "both instances refreshed")
    token = one[1]["data"]["access_token"]
    s, _ = call("POST", "/api/iam/v1/logout", {}, token=token)
    expect(s == 200, "signed out")
    after = [call("GET", "/api/iam/v1/account/profile", token=token)[0] for _ in range(4)]
    expect(after == [401] * 4, f"both instances refuse the token after sign-out ({after})")
    return session


def limits():
    # A different account each time: the failures per (client, account) close after 10.
    fwd = {"X-Forwarded-For": "203.0.113.77"}
    wrong = [{"email": f"nobody{i}@example.com", "password": "Wrong12345"} for i in range(30)]
    statuses = [call("POST", "/api/iam/v2/login/password", w, headers=fwd)[0] for w in wrong]
    answered, refused = statuses.count(401), statuses.count(429)
    expect((answered, refused) == (20, 10), f"one allowance of 20 sign-ins for both instances ({answered} answered, {refused} refused)")
    expect(len(upstreams("/api/iam/v2/login/password")) == 2, "both instances took sign-ins")


def public_caches():
    email = "sharer@example.com"
    token = signed_in(email)["token"]
    for _ in range(4):
        s, html = call("GET", "/nearby")
        expect(s == 200, "the nearby page renders")
    expect(len(upstreams("/nearby")) == 2, "both instances rendered (and cached) /nearby")
    spec = {"cpu_cores": 4, "memory_bytes": 8 << 30, "disk_bytes": 100 << 30, "gpus": []}
    s, b = call("POST", "/api/agent/v1/register", {"type": "Z-BOX", "name": "coherent box", "spec": spec})
    expect(s == 200, f"an agent registers ({s})", b)
    device, code = b["data"]["device_id"], b["data"]["pairing_code"]
    s, b = call("POST", "/api/ebs/v2/devices/link", {"device_id": device, "pairing_code": code}, token=token)
    expect(s == 200, f"bound ({s})", b)
    s, _ = call("PUT", f"/api/ebs/v2/devices/{device}/location", {"lat": 22.5431, "lng": 114.0579}, token=token)
    expect(s == 200, "placed")
    s, b = call("PUT", f"/api/ebs/v2/devices/{device}/sharing", {"mode": "manual", "rentable": True, "price_per_hour": 300}, token=token)
    expect(s == 200, f"shared ({s})", b)
    # The instance that took the write knows at once; the other within its follow interval.
    deadline = time.time() + 10
    while True:
        pages = [call("GET", "/nearby")[1] for _ in range(2)]
        if all(device in p for p in pages):
            break
        expect(time.time() < deadline, "every instance renders the shared device within 10 s")
        time.sleep(0.2)
    shown = [device in call("GET", "/nearby")[1] for _ in range(6)]
    expect(all(shown), f"six more renders, on both instances, all show it ({shown})")


def main():
    sessions()
    limits()
    public_caches()
    print("coherence through the proxy: sessions, limits and public caches hold")


if __name__ == "__main__":
    main()
