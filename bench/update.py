#!/usr/bin/env python3
"""An app's downtime while it is updated (issue 23), in one run on loopback with the release
binary, a real agent and real Docker (the busybox test image of scripts/test-images).

A web app is installed and opened through the market (its own origin, as a browser does). Then,
while two threads keep requesting its page, the app is updated twice:

1. to a new image that starts (the switch: the new container takes over once healthy);
2. to an image that exits at once (rolled back: the old container keeps serving).

Printed: requests made during each update, how many failed, the longest gap without an answer,
through the market and straight at the box's address (which changes with a switch: requests to
the old address after the old container is gone are counted as failed there, by design).

    python3 bench/update.py            (needs dockerd and busybox-static)

Bounded: each update waits at most 120 s; the container, the agent and the server are stopped.
"""
import json
import os
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.request

from common import ROOT, Server, app_origin, call, linked_agent

PASSWORD = "Secret123"


def manifests(path, image):
    with open(path, "w") as f:
        json.dump({"version": 1, "manifests": {"grafana": {
            "image": image, "ports": [{"container": 80, "web": True}], "volumes": [{"name": "data", "path": "/data"}],
            "health": {"path": "/"}}}}, f)


def app(base, token, inst):
    return call(base, "GET", f"/api/rmp/v1/apps/{inst}", token=token)["data"]


def wait(base, token, inst, ok, timeout=120):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        d = app(base, token, inst)
        if ok(d):
            return d
        time.sleep(0.05)
    raise SystemExit(f"{inst} did not settle: {app(base, token, inst)}")


class Prober:
    """Requests `url` (with `headers`) back to back in two threads; counts failures and gaps."""

    def __init__(self, url, headers):
        self.url, self.headers = url, headers
        self.ok = self.failed = 0
        self.last_ok = time.perf_counter()
        self.gap = 0.0
        self.stop = False
        self.why = {}
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self.loop) for _ in range(2)]

    def loop(self):
        while not self.stop:
            why = None
            try:
                req = urllib.request.Request(self.url, headers=self.headers)
                with urllib.request.urlopen(req, timeout=5) as r:
                    good = r.status == 200 and b"Hello from a zmarket test app" in r.read()
            except urllib.error.HTTPError as e:
                body = e.read().decode("utf-8", "replace")
                title = body.split("<title>", 1)[-1].split("</title>", 1)[0] if "<title>" in body else body[:60]
                good, why = False, f"{e.code} {title}"
            except OSError as e:
                good, why = False, type(e).__name__
            now = time.perf_counter()
            with self.lock:
                if good:
                    self.ok += 1
                    self.gap = max(self.gap, now - self.last_ok)
                    self.last_ok = now
                else:
                    self.failed += 1
                    self.why[why] = self.why.get(why, 0) + 1
            if not good:
                time.sleep(0.01)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        for t in self.threads:
            t.join()

    def line(self, what):
        why = "; ".join(f"{k} ×{n}" for k, n in sorted(self.why.items(), key=lambda kv: -kv[1])[:3])
        return f"{what}: {self.ok + self.failed} requests, {self.failed} failed, longest gap {self.gap * 1000:.0f} ms" + (f" ({why})" if why else "")


def main():
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        raise SystemExit("no Docker daemon: start dockerd")
    if subprocess.run(["docker", "image", "inspect", "zmarket-test/httpd:1"], capture_output=True).returncode != 0:
        subprocess.run([os.path.join(ROOT, "scripts", "test-images"), os.path.join(ROOT, "target", "test-images")], check=True)
    new_image = f"zmarket-test/httpd:upd-{os.getpid()}"  # this run's own tag: the new version
    subprocess.run(["docker", "tag", "zmarket-test/httpd:1", new_image], check=True)
    conf = tempfile.mkdtemp(prefix="zmarket-bench-update-")
    mf = os.path.join(conf, "manifests.json")
    manifests(mf, "zmarket-test/httpd:1")
    env = {"ZMARKET_AUTH__EMAIL_VERIFICATION": "false", "ZMARKET_DEVICES__HEARTBEAT_SECS": "5", "ZMARKET_APPS__MANIFESTS": mf}
    with Server(env) as s:
        call(s.base, "POST", "/api/iam/v1/register", {"email": "u@example.com", "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
        token = call(s.base, "POST", "/api/iam/v2/login/password", {"email": "u@example.com", "password": PASSWORD})["data"]["token"]
        inst = None
        try:
            with linked_agent(s.base, token, 5) as (_, dev):
                try:
                    inst = call(s.base, "POST", "/api/rmp/v1/apps/install", {"app_id": "grafana", "device_id": dev}, token)["data"]["id"]
                    direct = wait(s.base, token, inst, lambda d: d["status"] == "running" and d["open_url"])["open_url"]
                    host, cookie = app_origin(s.base, token, inst)
                    db = sqlite3.connect(os.path.join(s.dir, "data", "zmarket.db"))
                    for version, image, expect in [("2.0.0", new_image, "switched"), ("3.0.0", "zmarket-test/exit:1", "rolled back")]:
                        manifests(mf, image)
                        db.execute("UPDATE apps SET version = ? WHERE id = 'grafana'", (version,))
                        db.commit()
                        time.sleep(1.2)
                        with Prober(s.base + "/", {"Host": host, "Cookie": cookie}) as market, Prober(direct, {}) as straight:
                            time.sleep(0.5)
                            t0 = time.perf_counter()
                            call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "update"}, token)
                            d = wait(s.base, token, inst, lambda d: d["status"] not in ("updating",))
                            took = time.perf_counter() - t0
                            time.sleep(7)  # the old container's drain, and a little after
                        print(f"update {expect} to {version} in {took:.1f} s (now {d['status']} {d['version']}, reason {d['status_reason_code']})")
                        print("  " + market.line("through the market (target 0 failed)") + ("  ✓" if market.failed == 0 else "  ✗"))
                        print("  " + straight.line("straight at the box's old address"))
                        direct = d["open_url"] or direct
                finally:
                    if inst:
                        try:
                            call(s.base, "POST", f"/api/rmp/v1/apps/{inst}/actions", {"action": "uninstall"}, token)
                            wait(s.base, token, inst, lambda d: d["status"] == "not_install", 60)
                        except (SystemExit, OSError):
                            subprocess.run(["docker", "rm", "-f", f"zmarket-{inst}"], capture_output=True)
        finally:
            subprocess.run(["docker", "rmi", new_image], capture_output=True)


if __name__ == "__main__":
    main()
