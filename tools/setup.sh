#!/usr/bin/env bash
# Set-up in one command: the npm packages from the lockfile, the kit built into dist/ (what the
# duplex-bench command runs), and the Debian packages the tests use:
# Chromium for the report's browser tests, Prometheus (with promtool) for the live-metrics tests,
# ffmpeg for camera frames from a video file (--video FILE) and the tests that make them.
# Packages already installed are skipped; installing needs root or passwordless sudo.
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
{ command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1; } || missing+=(prometheus)
command -v ffmpeg >/dev/null 2>&1 || missing+=(ffmpeg)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "setup: ${missing[*]} missing and this user cannot install them; run: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
chromium --version
prometheus --version 2>&1 | head -1
ffmpeg -version | head -1
npm run build --silent
