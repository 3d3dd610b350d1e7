#!/usr/bin/env bash
# Installs the Debian packages the tests need when they are missing (make test runs it):
# gcc for cgo (SQLite), chromium for the browser test, python3 with requests for the
# interop and model-API tests, pgn-extract to validate the PGN export, nodejs for the
# JavaScript example player (examples/node), npm for npx, which runs the MCP clients of the
# gateway's tests (Debian's nodejs package leaves it out), stockfish for the uci strategy's tests,
# nftables for the test of agents behind NAT (inbound connections dropped in a namespace).
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc)
command -v python3 >/dev/null || need+=(python3)
command -v node >/dev/null || need+=(nodejs)
command -v npx >/dev/null || need+=(npm)
[ -x /usr/bin/chromium ] || need+=(chromium)
# Debian installs it in /usr/games, which root's PATH lacks.
command -v pgn-extract >/dev/null || [ -x /usr/games/pgn-extract ] || need+=(pgn-extract)
command -v stockfish >/dev/null || [ -x /usr/games/stockfish ] || need+=(stockfish)
command -v nft >/dev/null || [ -x /usr/sbin/nft ] || need+=(nftables)
for py in python3 /usr/bin/python3; do
  if ! command -v "$py" >/dev/null || ! "$py" -c "import requests" 2>/dev/null; then
    need+=(python3-requests)
    break
  fi
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing: ${need[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "run as root, or install these Debian packages: ${need[*]}" >&2
  exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${need[@]}"
