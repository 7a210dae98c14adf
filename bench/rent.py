#!/usr/bin/env python3
"""Rent calls per second: POST /api/rmp/v1/apps/rent through the HTTP API, each with its own
Idempotency-Key (the requirement check under the device's lock, the installation row, the hold
on the renter's wallet, the notification, in one transaction), spread over BENCH_RENTERS renters,
BENCH_DEVICES online rentable boxes of one provider (written straight into the SQLite file, with
room for every rental) and every catalogue app that fits them. Then `zmarket ledger verify`, and
the holds counted against the answers.

    python3 bench/rent.py
    ZMARKET_BENCH_BIN=/path/to/zmarket python3 bench/rent.py

Bounded: wrk -t2 -c32 for BENCH_SECONDS (default 4); loopback only; the server is stopped.
"""
import os
import sqlite3
import subprocess
import tempfile
import time

from common import BIN, OPEN_SIGNUP, Server, call, person

SECONDS = int(os.environ.get("BENCH_SECONDS", "4"))
RENTERS = int(os.environ.get("BENCH_RENTERS", "16"))
DEVICES = int(os.environ.get("BENCH_DEVICES", "200"))
ENV = {**OPEN_SIGNUP, "ZMARKET_BILLING__SIGNUP_BONUS": "1000000000"}


def boxes(db_path, owner, n):
    con = sqlite3.connect(db_path, timeout=30)
    stamp = con.execute("SELECT created_at FROM users WHERE id = ?", (owner,)).fetchone()[0]
    con.executemany(
        "INSERT INTO devices (id, name, device_type, status, owner_user_id, bound_by, bound_at, sharing_mode, rentable, "
        "price_per_hour, cpu_cores, memory_bytes, disk_bytes, gpus, lat, lng, gpu_count, gpu_model, passthrough, "
        "last_seen_at, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(f"RB{i:06d}", f"rent box {i}", "Z-BOX", "online", owner, owner, stamp, "manual", 1, 100, 100_000, 1 << 50, 1 << 50,
          "[]", 22.54, 114.06, 0, "", 0, stamp, stamp, stamp) for i in range(n)])
    con.execute("UPDATE data_versions SET version = version + 1 WHERE name = 'public'")
    con.commit()
    con.close()
    return [f"RB{i:06d}" for i in range(n)]


def lua(tokens, devices, apps):
    def table(xs):
        return "{" + ",".join(f'"{x}"' for x in xs) + "}"
    return f"""
local tokens, devices, apps = {table(tokens)}, {table(devices)}, {table(apps)}
local n = 0
tid = 0
local counter, threads = 0, {{}}
function setup(thread)
  counter = counter + 1
  thread:set("tid", counter)
  table.insert(threads, thread)
end
statuses = {{}}
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status ~= 200 and not refused then refused = body end
end
function done(summary, latency, requests)
  local all = {{}}
  for _, t in ipairs(threads) do
    for code, k in pairs(t:get("statuses")) do all[code] = (all[code] or 0) + k end
  end
  local parts = {{}}
  for code, k in pairs(all) do table.insert(parts, code .. ": " .. k) end
  table.sort(parts)
  print("statuses " .. table.concat(parts, ", "))
  for _, t in ipairs(threads) do
    local r = t:get("refused")
    if r then print("refused " .. r) break end
  end
end
function request()
  n = n + 1
  -- Distinct across the two threads: every call a new (app, box) pair while there are some.
  local i = n * 2 + tid
  local body = string.format('{{"app_id":"%s","device_id":"%s","hours":1}}', apps[(i % #apps) + 1], devices[(math.floor(i / #apps) % #devices) + 1])
  local headers = {{["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1],
                    ["Idempotency-Key"] = "rent-" .. i}}
  return wrk.format("POST", "/api/rmp/v1/apps/rent", headers, body)
end
"""


def main():
    with Server(ENV) as s:
        provider = person(s.base, "provider@example.com")
        tokens = [person(s.base, f"renter{i}@example.com") for i in range(RENTERS)]
        db_path = os.path.join(s.dir, "data", "zmarket.db")
        con = sqlite3.connect(db_path, timeout=30)
        owner = con.execute("SELECT id FROM users WHERE email = 'provider@example.com'").fetchone()[0]
        con.close()
        devices = boxes(db_path, owner, DEVICES)
        time.sleep(1.5)
        # The apps a box without a GPU can run: one rental of each on a box kept for it tells.
        probe_box, devices = devices[-1], devices[:-1]
        listed = call(s.base, "GET", "/api/ebs/v1/market/applications?limit=100")["data"]["items"]
        apps = []
        for a in listed:
            try:
                call(s.base, "POST", "/api/rmp/v1/apps/rent", {"app_id": a["id"], "device_id": probe_box, "hours": 1}, token=tokens[0],
                     headers={"idempotency-key": f"probe-{a['id']}"})
                apps.append(a["id"])
            except Exception:
                pass
        if not apps:
            raise SystemExit("no app could be rented on the bench boxes")
        script = os.path.join(tempfile.mkdtemp(), "rent.lua")
        with open(script, "w") as f:
            f.write(lua(tokens, devices, apps))
        out = subprocess.run(["wrk", "-t2", "-c32", f"-d{SECONDS}s", "--timeout", "10s", "--latency", "-s", script, s.base + "/api/rmp/v1/apps/rent"],
                             capture_output=True, text=True, timeout=SECONDS + 60).stdout
        rps = next((float(l.split()[1]) for l in out.splitlines() if l.startswith("Requests/sec:")), 0.0)
        p99 = next((l.split()[1] for l in out.splitlines() if l.strip().startswith("99%")), "?")
        statuses = next((l for l in out.splitlines() if l.startswith("statuses")), "statuses ?")
        refused = next((l[len("refused "):] for l in out.splitlines() if l.startswith("refused ")), "")
        con = sqlite3.connect(db_path, timeout=30)
        rentals = con.execute("SELECT COUNT(*) FROM installations WHERE kind = 'rent'").fetchone()[0]
        con.close()
        verify = subprocess.run([BIN, "ledger", "verify", "--data-dir", os.path.join(s.dir, "data")], capture_output=True, text=True, timeout=300)
    print(f"rent calls: {rps:.0f}/s, p99 {p99}; {statuses} (wrk -t2 -c32 -d{SECONDS}s; {RENTERS} renters, {DEVICES} boxes, {len(apps)} apps)")
    if refused:
        print(f"  a refusal: {refused[:300]}")
    print(f"  rentals in the database: {rentals}; {(verify.stdout or verify.stderr).strip()}")
    if verify.returncode != 0:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
