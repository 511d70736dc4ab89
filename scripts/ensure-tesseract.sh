#!/usr/bin/env bash
# Makes sure Debian's Tesseract 5 is on this machine for the documents app's `tesseract` OCR
# engine and its tests (pytesseract, a Python dependency, runs the `tesseract` program).
set -euo pipefail
if command -v tesseract >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "Tesseract is missing: run 'sudo apt-get install -y tesseract-ocr' once." >&2
  exit 1
fi
echo "Installing Tesseract from Debian packages..."
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr >/dev/null
