#!/usr/bin/env python3
"""Snapshots (issue 40, docs/data.md) in one run on loopback with the release binary, two real
agents (separate state folders) and real Docker (the busybox test image of scripts/test-images).

An app's volume gets SNAP_MB megabytes of random bytes (default 1024: zstd cannot shrink them, the
worst case for time and space). Then, timed:

1. the snapshot on its box (stop, archive, start again): MB/s of volume data;
2. "Keep on the market": the box copies the archive to the market in 8 MiB pieces: MB/s;
3. a restore on the second agent: the archive downloaded from the market, unpacked, the app
   running again: seconds, MB/s.

The market's resident memory is sampled every 100 ms throughout: printed before, at its peak and
the difference (target: bounded, at most +50 MB, whatever SNAP_MB).

    python3 bench/snapshots.py            (needs dockerd and busybox-static; SNAP_MB=256 for less)

Bounded: each step waits at most 15 minutes; the apps are uninstalled, the agents, the server and
their folders removed.
"""
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

from common import BIN, ROOT, Server, call, rss_mb

PASSWORD = "Secret123"
MB = 1024 * 1024


def start_agent(base, token, state):
    agent = subprocess.Popen([BIN, "agent", "--server", base, "--state-dir", state, "--heartbeat-secs", "1", "--public-host", "127.0.0.1"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env={**os.environ, "ZMARKET_LOG__LEVEL": "warn"})
    dev = code = None
    for line in agent.stdout:
        if line.startswith("device id:"):
            dev = line.split(":", 1)[1].strip()
        if line.startswith("pairing code:"):
            code = line.split(":", 1)[1].strip()
            break
    if not (dev and code):
        agent.terminate()
        raise SystemExit("the agent printed no device id and pairing code")
    call(base, "POST", "/api/ebs/v2/devices/link", {"device_id": dev, "pairing_code": code}, token)
    return agent, dev


def wait(what, fn, timeout=900):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise SystemExit(f"{what}: not within {timeout} s")


class Peak:
    """The largest resident memory of `pid`, sampled every 100 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.stop = pid, rss_mb(pid), False
        self.thread = threading.Thread(target=self.loop)

    def loop(self):
        while not self.stop:
            self.peak = max(self.peak, rss_mb(self.pid))
            time.sleep(0.1)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def main():
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        raise SystemExit("no Docker daemon: start dockerd")
    images = os.path.join(ROOT, "target", "test-images")
    if not os.path.exists(os.path.join(images, "httpd.tar")):
        subprocess.run([os.path.join(ROOT, "scripts", "test-images"), images], check=True)
    subprocess.run(["docker", "load", "-q", "-i", os.path.join(images, "httpd.tar")], check=True, capture_output=True)
    size_mb = int(os.environ.get("SNAP_MB", "1024"))
    conf = tempfile.mkdtemp(prefix="zmarket-bench-snap-")
    mf = os.path.join(conf, "manifests.json")
    with open(mf, "w") as f:
        json.dump({"version": 1, "manifests": {"grafana": {
            "image": "zmarket-test/httpd:1", "ports": [{"container": 80, "web": True}], "volumes": [{"name": "data", "path": "/data"}],
            "health": {"path": "/"}}}}, f)
    env = {"ZMARKET_AUTH__EMAIL_VERIFICATION": "false", "ZMARKET_DEVICES__HEARTBEAT_SECS": "1", "ZMARKET_APPS__MANIFESTS": mf}
    agents, installs = [], []
    try:
        with Server(env) as s:
            call(s.base, "POST", "/api/iam/v1/register", {"email": "u@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
            token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": "u@example.com", "password": PASSWORD})["data"]["token"]
            state_a, state_b = os.path.join(conf, "a"), os.path.join(conf, "b")
            a, dev_a = start_agent(s.base, token, state_a)
            b, dev_b = start_agent(s.base, token, state_b)
            agents += [a, b]
            app = lambda i: call(s.base, "GET", f"/api/rmp/v1/apps/{i}", token=token)["data"]
            inst = call(s.base, "POST", "/api/rmp/v1/apps/install", {"app_id": "grafana", "device_id": dev_a}, token)["data"]["id"]
            installs.append(inst)
            wait("the install", lambda: app(inst)["status"] == "running")
            blob = os.path.join(state_a, "apps", inst, "data", "blob.bin")
            with open(blob, "wb") as f:
                for _ in range(size_mb):
                    f.write(os.urandom(MB))
            os.sync()
            before = rss_mb(s.proc.pid)
            with Peak(s.proc.pid) as peak:
                t0 = time.perf_counter()
                call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "snapshot"}, token)
                snaps = lambda: call(s.base, "GET", f"/api/rmp/v1/apps/{inst}/snapshots", token=token)["data"]["items"]
                snap = wait("the snapshot", lambda: next((x for x in snaps() if x["status"] in ("ready", "failed")), None))
                if snap["status"] != "ready":
                    raise SystemExit(f"the snapshot failed: {snap}")
                wait("the app back", lambda: app(inst)["status"] == "running")
                took_snap = time.perf_counter() - t0
                sid = snap["id"]
                t0 = time.perf_counter()
                call(s.base, "POST", f"/api/rmp/v1/snapshots/{sid}/upload", {}, token)
                one = lambda: call(s.base, "GET", f"/api/rmp/v1/snapshots/{sid}", token=token)["data"]
                wait("the copy to the market", lambda: one()["where"] == "market")
                took_up = time.perf_counter() - t0
                t0 = time.perf_counter()
                restored = call(s.base, "POST", f"/api/rmp/v1/snapshots/{sid}/restore", {"device_id": dev_b}, token)["data"]["id"]
                installs.append(restored)
                wait("the restore", lambda: app(restored)["status"] in ("running", "install_failed"))
                took_restore = time.perf_counter() - t0
            back = os.path.join(state_b, "apps", restored, "data", "blob.bin")
            same = os.path.exists(back) and os.path.getsize(back) == size_mb * MB
            archive_mb = snap["size"] / MB
            print(f"volume {size_mb} MB of random bytes, archive {archive_mb:.0f} MB (zstd level 3)")
            print(f"snapshot on the box (stop, archive, start): {took_snap:.1f} s, {size_mb / took_snap:.0f} MB/s")
            print(f"kept on the market (8 MiB pieces over HTTP): {took_up:.1f} s, {archive_mb / took_up:.0f} MB/s")
            print(f"restored on a second agent (download, unpack, start): {took_restore:.1f} s, {archive_mb / took_restore:.0f} MB/s, "
                  f"{app(restored)['status']}, data {'back whole' if same else 'MISSING'}")
            delta = peak.peak - before
            print(f"market RSS: {before:.0f} MB before, {peak.peak:.0f} MB at its peak, +{delta:.0f} MB (target ≤ +50 MB)  {'✓' if delta <= 50 else '✗'}")
            for i in installs:
                try:
                    call(s.base, "POST", f"/api/rmp/v1/apps/{i}/actions", {"action": "uninstall"}, token)
                    wait("the removal", lambda: app(i)["status"] == "not_install", 120)
                except (SystemExit, OSError):
                    subprocess.run(["docker", "rm", "-f", f"zmarket-{i}"], capture_output=True)
    finally:
        for a in agents:
            a.terminate()
            a.wait(timeout=10)
        shutil.rmtree(conf, ignore_errors=True)


if __name__ == "__main__":
    main()
