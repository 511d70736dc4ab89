#!/usr/bin/env bash
# Makes sure Debian's Chromium is on this machine for the browser tests (Playwright drives it
# with executable_path=/usr/bin/chromium; Playwright's own browser download is not used).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "Chromium is missing: run 'sudo apt-get install -y chromium' once." >&2
  exit 1
fi
echo "Installing Chromium from Debian packages..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
