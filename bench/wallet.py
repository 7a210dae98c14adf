"""Ledger transfers per second through the HTTP API (POST /api/billing/v1/wallet/fund with an
Idempotency-Key: the key layer, one ledger transfer of two entries, the kept answer), on SQLite and,
when BENCH_DATABASE_URL names a PostgreSQL server, on a fresh database there too. Two shapes: every
worker moving between its own two accounts (no shared row), and every worker moving between the
same two accounts (one hot row pair). Each is shown as a ratio to GET /api/billing/v1/wallet (an
authenticated read) of the same run. `zmarket ledger verify` runs on the data afterwards.

    python3 bench/wallet.py
    BENCH_DATABASE_URL=postgres://zmtest:zmtest@127.0.0.1:5432/postgres python3 bench/wallet.py

Then captures per second with exact market fees (issue 24: `ledger::capture_market`, the fee meter
of each rental) against the plain capture with `market_splits` (the path before), alternating on one
database: the ignored Rust test `billing::fees::capture_rate_with_exact_fees` (captures are not an
HTTP call), on SQLite and, with BENCH_DATABASE_URL, on PostgreSQL. Target: ratio at least 0.9.
BENCH_CAPTURES sets how many of each (default 2000).

Bounded: BENCH_SECONDS per measurement (default 5), BENCH_WORKERS threads (default 8), loopback only.
"""
import os
import subprocess
import urllib.parse
import uuid

from common import BIN, Server, call, run_threads

SECONDS = float(os.environ.get("BENCH_SECONDS", "5"))
WORKERS = int(os.environ.get("BENCH_WORKERS", "8"))
PG = os.environ.get("BENCH_DATABASE_URL", "")
PASSWORD = "Secret123"


def run(workers, fn):
    return run_threads(workers, SECONDS, fn)


def sign_in(base, email):
    return call(base, "POST", "/api/iam/v2/login/password", {"email": email, "password": PASSWORD})["data"]["token"]


def admin_session(base, email):
    """A person (with the signup bonus) in a company of their own, as its administrator: the token
    and the company id."""
    call(base, "POST", "/api/iam/v1/register", {"email": email, "password": PASSWORD, "confirm_password": PASSWORD, "agree": True})
    personal = sign_in(base, email)
    sme = call(base, "POST", "/api/iam/v1/sme", {"name": f"Bench {email.split('@')[0]}"}, token=personal)["data"]["id"]
    return call(base, "POST", "/api/iam/v1/switch", {"smeId": sme}, token=personal)["data"]["token"], sme


def top_up(base, token):
    headers = {"idempotency-key": uuid.uuid4().hex}
    call(base, "POST", "/api/billing/v1/wallet/fund", {"amount": 1, "memo": "bench"}, token=token, headers=headers)


def measure(label, env, verify_env):
    with Server(env) as s:
        own = [admin_session(s.base, f"w{i}@example.com")[0] for i in range(WORKERS)]
        # One person signed in WORKERS times in one company: every transfer hits the same two rows.
        first, sme = admin_session(s.base, "hot@example.com")
        hot = [first] + [
            call(s.base, "POST", "/api/iam/v1/switch", {"smeId": sme}, token=sign_in(s.base, "hot@example.com"))["data"]["token"]
            for _ in range(WORKERS - 1)
        ]
        for t in own[:2]:
            top_up(s.base, t)  # warm-up
        read, _ = run(WORKERS, lambda i: call(s.base, "GET", "/api/billing/v1/wallet", token=own[i]))
        spread, n1 = run(WORKERS, lambda i: top_up(s.base, own[i]))
        contended, n2 = run(WORKERS, lambda i: top_up(s.base, hot[i]))
        data_dir = os.path.join(s.dir, "data")
        verify = subprocess.run([BIN, "ledger", "verify", "--data-dir", data_dir], env=verify_env, capture_output=True, text=True, timeout=300)
        hot_balance = call(s.base, "GET", "/api/billing/v1/wallet", token=hot[0])["data"]["balance"]
    print(f"{label}: {WORKERS} threads, {SECONDS:.0f} s each")
    print(f"  GET /wallet (authenticated read): {read:.0f} req/s")
    print(f"  transfers, each worker its own accounts: {spread:.0f}/s ({n1} transfers), ratio to the read {spread / read:.3f}")
    print(f"  transfers, all workers on one account pair: {contended:.0f}/s ({n2} transfers), ratio to the read {contended / read:.3f}")
    ok = hot_balance == n2
    print(f"  hot company balance {hot_balance} cents after {n2} one-cent transfers: {'exact' if ok else 'MISMATCH'}")
    print(f"  {(verify.stdout or verify.stderr).strip()}")
    if verify.returncode != 0 or not ok:
        raise SystemExit(1)


def fresh_pg(url):
    name = f"zmbench_{uuid.uuid4().hex[:12]}"
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, timeout=60)
    u = urllib.parse.urlparse(url)
    return name, urllib.parse.urlunparse(u._replace(path="/" + name))


base_env = {
    "ZMARKET_AUTH__EMAIL_VERIFICATION": "false",
    "ZMARKET_AUTH__LOGIN_IP_BURST": "1000000",
    "ZMARKET_AUTH__LOGIN_ACCOUNT_BURST": "1000000",
    # Every bench person starts with a million coins (their signup bonus).
    "ZMARKET_BILLING__SIGNUP_BONUS": "1000000",
}
verify_base = dict(os.environ, ZMARKET_LOG__LEVEL="warn")
measure("SQLite", base_env, verify_base)
if PG:
    name, url = fresh_pg(PG)
    try:
        measure("PostgreSQL", dict(base_env, ZMARKET_DATABASE__URL=url), dict(verify_base, ZMARKET_DATABASE__URL=url))
    finally:
        subprocess.run(["psql", PG, "-q", "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], timeout=60)


def capture_rate(label, extra):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = ["cargo", "test", "--release", "--test", "api", "billing::fees::capture_rate_with_exact_fees", "--", "--ignored", "--nocapture"]
    out = subprocess.run(cmd, cwd=root, env=dict(os.environ, SKIP_UI_BUILD="1", **extra), capture_output=True, text=True, timeout=1800)
    lines = [l for l in out.stdout.splitlines() if l.startswith("captures/s")]
    print(f"{label}: {lines[0] if lines else (out.stdout + out.stderr)[-2000:]}")
    if out.returncode != 0:
        raise SystemExit(1)


capture_rate("SQLite", {})
if PG:
    capture_rate("PostgreSQL", {"TEST_DATABASE_URL": PG})
