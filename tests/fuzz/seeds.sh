#!/usr/bin/env bash
# Prints the seed folders of one fuzz target, one per line, relative to the
# source root: the shipped files it reads (scenarios, sweeps, calibrations,
# model configs) read in place, so the seeds never drift from what ships, and
# tests/fuzz/regressions/<target>/ (inputs of past findings and test cases).
# Two targets need seeds cut from shipped files, which it writes under
# SCRATCH: validation_csv (each table's header and first rows, and the first
# row of each source of published-runs.csv and unseen/training-runs.csv:
# whole tables would make every execution resolve hundreds of rows) and cli
# (the arguments of every `clustersim run` example in README.md and docs/, one
# file each).
# Usage: tests/fuzz/seeds.sh TARGET SCRATCH
set -euo pipefail
target=$1
scratch=$2
cd "$(dirname "$0")/../.."
regressions=tests/fuzz/regressions/$target
case "$target" in
  scenario_text | scenario_json) echo scenarios/examples ;;
  hf_config) echo models/testdata ;;
  calibration) echo models/data/calibration ;;
  sweep) echo scenarios/examples ;;
  validation_csv)
    out=$scratch/seeds-validation_csv
    mkdir -p "$out"
    for f in tests/validation/*.csv tests/validation/vtrain/*.csv tests/validation/unseen/*.csv; do
      head -n 4 "$f" >"$out/$(basename "$f" .csv)-head.csv"
    done
    for f in tests/validation/published-runs.csv tests/validation/unseen/training-runs.csv; do
      awk -F, 'NR == 1 { print; next } { key = $1; sub(/-[^-]*$/, "", key) } !seen[key]++' \
        "$f" >"$out/$(basename "$f" .csv)-sources.csv"
    done
    echo "$out"
    ;;
  cli)
    out=$scratch/seeds-cli
    mkdir -p "$out"
    # Joins continuation lines, keeps `clustersim run ...` commands, and
    # writes what follows `run` to one file per command.
    cat README.md docs/*.md |
      awk '/\\$/ { sub(/\\$/, ""); line = line $0; next } { print line $0; line = "" }' |
      sed -nE 's/^[[:space:]]*(\$ )?(build\/cli\/)?clustersim run( |$)(.*)/\4/p' |
      awk -v out="$out" '{ f = sprintf("%s/docs-%02d.args", out, NR - 1); print > f; close(f) }'
    echo "$out"
    ;;
  *)
    echo "seeds.sh: unknown target '$target'" >&2
    exit 2
    ;;
esac
if [ -d "$regressions" ]; then echo "$regressions"; fi
