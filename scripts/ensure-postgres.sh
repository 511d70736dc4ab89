#!/usr/bin/env bash
# Makes sure the PostgreSQL server binaries (Debian packages) are on this machine.
# The tests start their own throw-away server on loopback; this only installs it.
set -euo pipefail
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "PostgreSQL server binaries are missing: run 'sudo apt-get install -y postgresql' once." >&2
  exit 1
fi
echo "Installing the PostgreSQL server from Debian packages..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
