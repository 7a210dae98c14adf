"""Sign-in, refresh and the notification stats poll, as ratios to /healthz measured by the same
client in one run. Sign-in is bounded by Argon2id (19 MiB, 2 passes) by design; refresh is one
write transaction; the stats poll (every signed-in console, every 10 s) reads a counter row."""
import os

from common import Server, call, run_threads

SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "8"))
PASSWORD = "Secret123"


def run(workers, fn):
    return run_threads(workers, SECONDS, fn)[0]


env = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
    "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
}
with Server(env) as s:
    emails = [f"bench{i}@example.com" for i in range(WORKERS)]
    for e in emails:
        call(s.base, "POST", "/api/iam/v1/register", {"email": e, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    sessions = [call(s.base, "POST", "/api/iam/v2/login/password", {"email": e, "password": PASSWORD})["data"] for e in emails]
    chains = [x["refresh_token"] for x in sessions]

    def refresh(i):
        chains[i] = call(s.base, "GET", "/api/iam/v1/refresh", token=chains[i])["data"]["refresh_token"]

    health = run(WORKERS, lambda i: call(s.base, "GET", "/healthz"))
    login = run(WORKERS, lambda i: call(s.base, "POST", "/api/iam/v2/login/password", {"email": emails[i], "password": PASSWORD}))
    tokens = [x["token"] for x in sessions]
    stats = run(WORKERS, lambda i: call(s.base, "GET", "/api/ebs/v1/notifications/stats", token=tokens[i]))
    refreshes = run(WORKERS, refresh)
    print(f"same client, {WORKERS} threads, {SECONDS:.0f} s each:")
    print(f"/healthz: {health:.0f} req/s")
    print(f"sign-in: {login:.1f} req/s, ratio to /healthz {login / health:.4f}")
    print(f"notification stats poll: {stats:.0f} req/s, ratio to /healthz {stats / health:.3f}")
    print(f"refresh (rotation, one write transaction): {refreshes:.0f} req/s, ratio to /healthz {refreshes / health:.3f}")
