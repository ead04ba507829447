#!/usr/bin/env bash
# Captures every shipped output (tests/golden/capture.sh) and compares each
# file's SHA-256 with tests/golden/outputs.sha256; prints the files that differ
# and exits 1 if any does.
#
# Usage: tests/golden/check.sh CLUSTERSIM [--update]
#   --update  rewrites outputs.sha256 from this capture (for a change that
#             moves numbers on purpose; say which and why in the commit).
set -euo pipefail
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
expected=$here/outputs.sha256
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$here/capture.sh" "$bin" "$work/out"
(cd "$work/out" && sha256sum -- * | LC_ALL=C sort -k2) >"$work/actual.sha256"
if [ "${2:-}" = "--update" ]; then
  cp "$work/actual.sha256" "$expected"
  echo "golden: wrote $(wc -l <"$expected") checksums to $expected"
  exit 0
fi
if diff -u "$expected" "$work/actual.sha256" >"$work/diff"; then
  echo "golden: $(wc -l <"$expected") outputs byte-identical"
  exit 0
fi
echo "golden: outputs differ from $expected (- expected, + this build):"
grep '^[-+][0-9a-f]' "$work/diff" || true
exit 1
