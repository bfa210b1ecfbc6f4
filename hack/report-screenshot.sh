#!/usr/bin/env bash
# Regenerates docs/report.png, the README's picture of a report: the report of
# the bundled demo trace as headless Chromium (Debian's chromium package)
# draws it, from disk, with the network off.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go run ./cmd/kubectl-watchcache report testdata/traces/demo.jsonl -o "$tmp/demo.html"
chromium --headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update \
  --disable-sync --no-first-run --host-resolver-rules="MAP * ~NOTFOUND" --user-data-dir="$tmp/profile" \
  --hide-scrollbars --window-size="${WIDTH:-1280},${HEIGHT:-1400}" --screenshot="$PWD/docs/report.png" \
  "file://$tmp/demo.html" 2>/dev/null
echo "wrote docs/report.png"
