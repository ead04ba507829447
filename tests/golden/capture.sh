#!/usr/bin/env bash
# Runs the clustersim binary over every shipped input and writes each output to
# one file in OUT_DIR: the JSON result of every shipped scenario and sizing
# question, the default scenario's trace and report, the serving scenario, the
# compare/search/sweep studies the questions ask, the collective table, the
# catalogs, and every `validate` table.
#
# Usage: tests/golden/capture.sh CLUSTERSIM OUT_DIR
#
# tests/golden/check.sh compares a capture with tests/golden/outputs.sha256;
# outputs that must not move (a restructure) keep that file unchanged, and a
# change that moves numbers on purpose regenerates it with `check.sh --update`.
set -euo pipefail
bin=$(realpath "$1")
out=$(realpath -m "$2")
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cd "$src"

# Shipped inputs live in scenarios/examples/ (CLUSTERSIM_EXAMPLES names another
# folder, for a capture of an older tree).
ex=${CLUSTERSIM_EXAMPLES:-scenarios/examples}
q=$ex/questions
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# capture NAME CMD...: stdout of CMD to OUT_DIR/NAME; a failing command fails
# the capture, naming it.
capture() {
  local name=$1
  shift
  if ! "$@" >"$out/$name" 2>"$work/stderr"; then
    echo "capture: '$*' failed:" >&2
    cat "$work/stderr" >&2
    exit 1
  fi
}

for f in gpt-22b-a100.textproto llama2-7b-h100.json mixtral-8x7b-h100.textproto \
         custom-cluster.textproto; do
  capture "run-$f.json" "$bin" run "$ex/$f" --format json
done
capture run-gpt-22b-a100.txt "$bin" run "$ex/gpt-22b-a100.textproto"
capture run-mixtral-flow.json "$bin" run "$ex/mixtral-8x7b-h100.textproto" --network-tier flow \
  --format json
"$bin" run "$ex/gpt-22b-a100.textproto" --trace "$work/trace.json" --report "$work/report.html" \
  >/dev/null
cp "$work/trace.json" "$out/trace-gpt-22b-a100.json"
cp "$work/report.html" "$out/report-gpt-22b-a100.html"

capture serve-llama3-8b-h100.json "$bin" serve "$ex/serve-llama3-8b-h100.textproto" --format json
capture serve-llama3-8b-h100.txt "$bin" serve "$ex/serve-llama3-8b-h100.textproto"

for f in "$q"/*.textproto; do
  case "$f" in *.sweep.textproto) continue ;; esac
  capture "question-$(basename "$f").json" "$bin" run "$f" --format json
done
capture question-rtx4090-compare.txt "$bin" compare "$q/7b-on-one-rtx4090.textproto" \
  --variant "training.finetune=lora" --variant "training.finetune=qlora" \
  --variant "training.finetune=lora,model.seq_length=4096" \
  --variant "training.finetune=qlora,model.seq_length=4096"
capture question-a100-vs-4090-compare.txt "$bin" compare "$q/a100-vs-4090-7b-8gpu.textproto" \
  --variant "gpu=a100-sxm4-80gb" --variant "tp=8,pp=1" --variant "gpu=a100-sxm4-80gb,tp=8,pp=1"
capture question-7b-a100-search.txt "$bin" search --model llama2-7b --gpu a100-sxm4-40gb \
  --num-gpus 8 --global-batch-size 1024 --train-tokens 1e12 --price-source aws-p4d \
  --rank-by time-to-train
capture question-gpus-13b-a100-search.txt "$bin" search "$q/gpus-for-full-training.textproto" \
  --model llama2-13b --gpu a100-sxm4-40gb --num-gpus 8 --top-k 1
capture mixtral-compare.txt "$bin" compare "$ex/mixtral-8x7b-h100.textproto" \
  --variant zero=3 --variant zero=3,ep=2
"$bin" sweep "$q/7b-1t-tokens-8xh100.sweep.textproto" --output "$work/q7b" >/dev/null
cp "$work/q7b.csv" "$out/question-7b-h100-sweep.csv"
"$bin" sweep "$ex/sweeps/gpt-22b-grid.textproto" --output "$work/gpt22b" >/dev/null
cp "$work/gpt22b.csv" "$out/sweep-gpt-22b-grid.csv"
cp "$work/gpt22b.jsonl" "$out/sweep-gpt-22b-grid.jsonl"

capture collective-dgx-h100.txt "$bin" collective --node dgx-h100 --num-gpus 8 --op all_reduce \
  --algorithm auto --protocol auto -b 32K -e 1G -f 4
for c in gpus models clusters prices; do capture "list-$c.txt" "$bin" list "$c"; done

v=tests/validation
capture validate-published-runs.txt "$bin" validate $v/published-runs.csv
capture validate-vtrain-single.txt "$bin" validate $v/vtrain/ground_truth_single.csv
capture validate-vtrain-multi.txt "$bin" validate $v/vtrain/ground_truth_multi.csv
capture validate-inference-runs.txt "$bin" validate $v/inference-runs.csv
capture validate-kernels-h100.txt "$bin" validate-kernels \
  models/data/calibration/h100-sxm5-80gb.measurements.textproto
