#!/bin/sh
# Installs the zmarket agent on this box and starts it (docs/devices.md "A box in one line"):
#
#   curl -fsSL <market>/install.sh | sudo sh
#
# Downloads the agent from the market itself, checks its sha256, checks Docker, writes and
# enables a systemd unit (or prints the command to run where there is no systemd), starts the
# agent and prints its device ID and pairing code. Run again to upgrade; nothing else changes.
#
# Environment: ZMARKET_AGENT_REGISTRATION_TOKEN (a closed market's token), ZMARKET_AGENT_NAME
# (the box's name; default its host name), ZMARKET_ROOT (install under this directory instead
# of /, for tests).
set -eu

MARKET=@MARKET@
FILE='@FILE@'
SHA256='@SHA256@'
SERVED='@SERVED@'
TOKEN_REQUIRED='@TOKEN_REQUIRED@'
PAIRING='@PAIRING@'
WARNING=@WARNING@

ROOT="${ZMARKET_ROOT:-}"
BIN="$ROOT/usr/local/bin/zmarket"
STATE="$ROOT/var/lib/zmarket-agent"
UNIT="$ROOT/etc/systemd/system/zmarket-agent.service"
ENVFILE="$ROOT/etc/zmarket-agent.env"

say() { printf '%s\n' "zmarket: $*"; }
fail() { printf '%s\n' "zmarket: $*" >&2; exit 1; }

if [ -n "$WARNING" ]; then
  printf '%s\n' "zmarket: warning: $WARNING" >&2
fi

[ "$SERVED" = 1 ] || fail "this market does not serve the agent for any platform (it does not run on Linux x86-64); get the zmarket binary from its operator"
os=$(uname -s)
arch=$(uname -m)
if [ "$os" != Linux ] || { [ "$arch" != x86_64 ] && [ "$arch" != amd64 ]; }; then
  fail "this market serves the agent for Linux x86-64 only, not $os $arch"
fi
if [ -z "$ROOT" ] && [ "$(id -u)" != 0 ]; then
  fail "run as root: curl -fsSL $MARKET/install.sh | sudo sh"
fi
if [ "$TOKEN_REQUIRED" = 1 ] && [ -z "${ZMARKET_AGENT_REGISTRATION_TOKEN:-}" ]; then
  fail "this market admits boxes with its registration token only: ask its operator, then run: curl -fsSL $MARKET/install.sh | sudo ZMARKET_AGENT_REGISTRATION_TOKEN=<token> sh"
fi

# 1. Docker runs the apps.
if ! command -v docker >/dev/null 2>&1; then
  fail "Docker is not installed. Install it (https://docs.docker.com/engine/install/, or your distribution's docker.io package), start it (systemctl enable --now docker), then run this again"
fi
if ! docker info >/dev/null 2>&1; then
  fail "Docker is installed but not running: start it (systemctl enable --now docker), then run this again"
fi

# 2. The agent, from the market itself; a broken download resumes where it stopped.
mkdir -p "$(dirname "$BIN")" "$STATE" "$(dirname "$ENVFILE")"
part="$BIN.part"
url="$MARKET/downloads/$FILE"
say "downloading the agent from $url"
tries=0
while :; do
  if command -v curl >/dev/null 2>&1; then
    curl -fL --retry 3 -C - -o "$part" "$url" && break
  elif command -v wget >/dev/null 2>&1; then
    wget -c -O "$part" "$url" && break
  else
    fail "neither curl nor wget is installed"
  fi
  tries=$((tries + 1))
  [ "$tries" -lt 5 ] || fail "the download from $url failed 5 times; run this again to resume it"
  sleep 2
done

if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$part" | cut -d' ' -f1)
elif command -v shasum >/dev/null 2>&1; then
  got=$(shasum -a 256 "$part" | cut -d' ' -f1)
else
  fail "sha256sum is missing: cannot check the download"
fi
if [ "$got" != "$SHA256" ]; then
  rm -f "$part"
  fail "the download's sha256 is $got, not $SHA256 as the market says: nothing was installed; run this again"
fi
chmod 0755 "$part"
mv -f "$part" "$BIN"
say "agent installed at $BIN (sha256 $got)"

# 3. The service.
cmd="$BIN agent --server $MARKET --state-dir $STATE"
if [ -n "${ZMARKET_AGENT_NAME:-}" ]; then
  cmd="$cmd --name '$(printf '%s' "$ZMARKET_AGENT_NAME" | sed "s/'/'\\\\''/g")'"
fi
umask 077
: >"$ENVFILE"
if [ -n "${ZMARKET_AGENT_REGISTRATION_TOKEN:-}" ]; then
  printf 'ZMARKET_AGENT_REGISTRATION_TOKEN=%s\n' "$ZMARKET_AGENT_REGISTRATION_TOKEN" >>"$ENVFILE"
fi
# The bind page's code (install.sh?code=): the page finds this box by it.
if [ -n "$PAIRING" ]; then
  printf 'ZMARKET_AGENT_PAIRING_CODE=%s\n' "$PAIRING" >>"$ENVFILE"
fi
umask 022
if command -v systemctl >/dev/null 2>&1 && { [ -n "$ROOT" ] || [ -d /run/systemd/system ]; }; then
  mkdir -p "$(dirname "$UNIT")"
  cat >"$UNIT" <<EOF
[Unit]
Description=zmarket agent (reports this box to $MARKET)
After=network-online.target docker.service
Wants=network-online.target

[Service]
EnvironmentFile=-$ENVFILE
ExecStart=$cmd
Restart=always
RestartSec=5
LimitNOFILE=65536

[Install]
WantedBy=multi-user.target
EOF
  systemctl daemon-reload
  systemctl enable zmarket-agent.service >/dev/null
  systemctl restart zmarket-agent.service
  say "the agent runs as the systemd service zmarket-agent (journalctl -u zmarket-agent to read its log)"
else
  say "no systemd here: start the agent with"
  printf '\n  %s\n\n' "set -a; . $ENVFILE; set +a; nohup $cmd >>$STATE/agent.log 2>&1 &"
  say "and have your init system start it at boot"
  exit 0
fi

# 4. Its device ID and pairing code, once it has registered.
n=0
while [ ! -s "$STATE/agent.json" ]; do
  n=$((n + 1))
  [ "$n" -le 60 ] || fail "the agent has not registered with $MARKET within a minute: run '$BIN agent doctor --server $MARKET --state-dir $STATE'"
  sleep 1
done
field() { sed -n "s/.*\"$1\": *\"\\([^\"]*\\)\".*/\\1/p" "$STATE/agent.json" | head -n 1; }
id=$(field device_id)
code=$(field pairing_code)
echo
echo "device id: $id"
if [ -n "$code" ]; then
  echo "pairing code: $code"
  echo
  say "bind it on $MARKET/devices/link with these two"
else
  say "this box is bound already"
fi
