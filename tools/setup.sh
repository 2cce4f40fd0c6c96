#!/usr/bin/env bash
# Set-up in one command: the npm packages from the lockfile, and Debian's Chromium for the report's
# browser tests (skipped where it is already installed; needs root or passwordless sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
npm ci --no-audit --no-fund
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "setup: chromium is missing and this user cannot install it; run: sudo apt-get install chromium" >&2
    exit 1
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
chromium --version
