#!/usr/bin/env bash
# The docs test: every `clustersim …` command line inside a fenced code block of
# README.md and docs/*.md is run against a fresh build and must exit 0, so the
# manual cannot drift from the binary.
#
# Usage: tests/docs_commands_test.sh [--source-dir DIR] [--bin CLUSTERSIM]
#                                    [--mpiexec MPIRUN | --no-mpi]
#   (or the environment variables CLUSTERSIM_SOURCE_DIR, CLUSTERSIM_BIN,
#   CLUSTERSIM_MPIEXEC; the source dir defaults to this script's repository,
#   the binary to SOURCE_DIR/build/cli/clustersim, mpirun to the one on PATH;
#   --no-mpi, for a binary built without MPI, reports mpirun lines as SKIP).
#   CLUSTERSIM_DOCS_TIMEOUT: seconds per command (default 300).
#   CLUSTERSIM_DOCS_KEEP=1: keep the scratch folder and print its path.
#
# What counts as a command, inside ``` or ~~~ fences (lines ending in `\` are
# joined first):
#   clustersim ARGS, build/cli/clustersim ARGS, ./build/cli/clustersim ARGS,
#   each optionally behind a `$ ` prompt      -> run; must exit 0
#   `$ clustersim ARGS` whose next line in the block starts with
#   `clustersim: error:`                      -> a documented error: must exit 2
#                                                and print that line on stderr
#   mpirun … clustersim ARGS                  -> run under mpirun if there is
#                                                one, else reported as SKIP
# In a block that has `$ ` prompts only the prompted lines are commands; the
# rest is their output. Other lines in code blocks (output, comments, other
# programs) are not run.
#
# Rules the docs must keep (a command that breaks one FAILs without running):
#   no placeholders (`...`, `…`, `<NAME>`), no shell loops around clustersim,
#   no absolute paths except /dev/* (outputs go to the working directory).
#
# Each command runs with bash in one scratch folder shared by all commands, in
# document order, where every top-level input folder of the repository
# (scenarios, models, tests, …) is a symlink, so the paths the docs use resolve
# and the files a command writes land in the scratch folder. The binary's path
# replaces the `clustersim` word.
set -uo pipefail

src=${CLUSTERSIM_SOURCE_DIR:-}
bin=${CLUSTERSIM_BIN:-}
mpiexec=${CLUSTERSIM_MPIEXEC:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --source-dir) src=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --mpiexec) mpiexec=$2; shift 2 ;;
    --no-mpi) mpiexec=none; shift ;;
    -h|--help) sed -n '2,35p' "$0"; exit 0 ;;
    *) echo "docs_commands_test: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[ -n "$src" ] || src=$(cd "$(dirname "$0")/.." && pwd)
src=$(cd "$src" && pwd) || exit 2
[ -n "$bin" ] || bin=$src/build/cli/clustersim
if [ ! -x "$bin" ]; then
  echo "docs_commands_test: no clustersim binary at '$bin' (build it, or pass --bin)" >&2
  exit 2
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
[ -n "$mpiexec" ] || mpiexec=$(command -v mpirun || true)
[ "$mpiexec" != none ] || mpiexec=""
timeout_s=${CLUSTERSIM_DOCS_TIMEOUT:-300}

docs=("$src/README.md")
for f in "$src"/docs/*.md; do [ -f "$f" ] && docs+=("$f"); done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/clustersim-docs.XXXXXX")
if [ "${CLUSTERSIM_DOCS_KEEP:-0}" = 1 ]; then
  echo "scratch folder: $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
# The repository's inputs at the same relative paths; outputs stay here.
for entry in "$src"/*; do
  name=$(basename "$entry")
  case "$name" in build*|out) continue ;; esac
  ln -s "$entry" "$scratch/$name"
done
# Open MPI refuses to run as root (containers) unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Logical lines of every fenced block: FILE, LINE, BLOCK, PROMPTED, TEXT
# separated by \037 (unit separator), one per line; continuation lines joined.
# PROMPTED is 1 when the block has `$ ` prompts: then only those lines are
# commands and the rest is output.
extract() {
  awk -v OFS='\037' '
    function flush(   k) {
      if (pending != "") { nb++; bstart[nb] = start; btext[nb] = pending; pending = "" }
      for (k = 1; k <= nb; k++) print fname, bstart[k], block, prompted, btext[k]
      nb = 0; prompted = 0
    }
    # A fence left open runs to the end of its file, as in Markdown.
    FNR == 1 { if (fence != "") flush(); fence = ""; pending = ""; fname = FILENAME }
    END { if (fence != "") flush() }
    {
      line = $0
      sub(/\r$/, "", line)
      stripped = line
      sub(/^[ \t]*/, "", stripped)
      if (fence == "") {
        if (stripped ~ /^(```|~~~)/) { fence = substr(stripped, 1, 3); block++ }
        next
      }
      if (pending == "" && index(stripped, fence) == 1) { flush(); fence = ""; next }
      if (pending == "") { start = FNR; text = stripped } else { text = pending " " stripped }
      if (text ~ /\\$/) { pending = substr(text, 1, length(text) - 1); sub(/[ \t]+$/, "", pending); next }
      pending = ""
      if (text ~ /^\$ /) prompted = 1
      nb++; bstart[nb] = start; btext[nb] = text
    }' "$@"
}

# Prints the command with the binary substituted for its first `clustersim`
# word (and the mpirun path for a leading `mpirun`).
substitute() {
  BIN=$bin MPI=$mpiexec awk '
    {
      s = $0
      if (match(s, /^mpirun[ \t]/)) s = ENVIRON["MPI"] substr(s, RLENGTH)
      if (match(s, /(^|[ \t])(\.\/)?(build\/cli\/)?clustersim([ \t]|$)/)) {
        pre = substr(s, 1, RSTART - 1); word = substr(s, RSTART, RLENGTH); post = substr(s, RSTART + RLENGTH)
        lead = (word ~ /^[ \t]/) ? substr(word, 1, 1) : ""
        trail = (word ~ /[ \t]$/) ? substr(word, length(word), 1) : ""
        s = pre lead ENVIRON["BIN"] trail post
      }
      print s
    }'
}

# Why a command may not be run as written, or nothing.
lint() {
  local c=${1%%[[:space:]]#*}  # the command without a trailing shell comment
  case "$c" in
    *...*|*…*) echo "placeholder ('...')"; return ;;
  esac
  if [[ $c =~ $placeholder_re ]]; then echo "placeholder (<NAME>)"; return; fi
  local w words
  read -ra words <<<"$c"
  for w in "${words[@]}"; do
    case "$w" in
      /dev/*) ;;
      /*|\"/*|\'/*|--*=/*) echo "absolute path '$w' (write relative paths; outputs go to the working directory)"; return ;;
    esac
  done
}

pass=0; fail=0; skip=0
failed=()
results=$scratch/.results
mkdir -p "$results"
t0=$(date +%s)

run_re='^(\./)?(build/cli/)?clustersim([[:space:]]|$)'
mpi_re='^mpirun[[:space:]](.*[[:space:]])?(\./)?(build/cli/)?clustersim([[:space:]]|$)'
loop_re='(^|[[:space:];&|(])(for|while|until|do)[[:space:]]'
anywhere_re='(^|[[:space:];&|(])(\./)?(build/cli/)?clustersim[[:space:]]'
placeholder_re='<[A-Za-z_][A-Za-z_-]*>'

mapfile -t lines < <(extract "${docs[@]}")
n=${#lines[@]}
for ((i = 0; i < n; i++)); do
  IFS=$'\037' read -r file lineno block prompted text <<<"${lines[i]}"
  where=${file#"$src"/}:$lineno
  prompt=0
  cmd=$text
  if [[ $cmd == '$ '* ]]; then prompt=1; cmd=${cmd#'$ '}; fi
  # In a block with prompts, the lines without one are output.
  [ "$prompted" = 1 ] && [ "$prompt" = 0 ] && continue
  kind=""
  if [[ $cmd =~ $run_re ]]; then
    kind=run
  elif [[ $cmd =~ $mpi_re ]]; then
    kind=mpi
  elif [[ $cmd =~ $loop_re && $cmd =~ $anywhere_re ]]; then
    echo "FAIL  $where  $cmd"
    echo "      a shell loop around clustersim; write each command out"
    fail=$((fail + 1)); failed+=("$where  $cmd")
    continue
  fi
  [ -n "$kind" ] || continue

  # A documented error: `$ clustersim …` then `clustersim: error: …`.
  expect_error=""
  if [ "$prompt" = 1 ] && [ $((i + 1)) -lt "$n" ]; then
    IFS=$'\037' read -r _ _ nblock _ ntext <<<"${lines[i + 1]}"
    if [ "$nblock" = "$block" ] && [[ $ntext == 'clustersim: error:'* ]]; then
      expect_error=$ntext
    fi
  fi

  why=$(lint "$cmd")
  if [ -n "$why" ]; then
    echo "FAIL  $where  $cmd"
    echo "      $why"
    fail=$((fail + 1)); failed+=("$where  $cmd")
    continue
  fi
  if [ "$kind" = mpi ] && [ -z "$mpiexec" ]; then
    echo "SKIP  $where  $cmd  (no mpirun)"
    skip=$((skip + 1))
    continue
  fi

  run=$(printf '%s\n' "$cmd" | substitute)
  out=$results/$i.out; err=$results/$i.err
  c0=$(date +%s.%N)
  (cd "$scratch" && timeout "$timeout_s" bash -c "$run" >"$out" 2>"$err" </dev/null)
  rc=$?
  secs=$(awk -v a="$c0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

  ok=0
  if [ -n "$expect_error" ]; then
    if [ "$rc" = 2 ] && grep -qxF -- "$expect_error" "$err"; then ok=1; fi
  elif [ "$rc" = 0 ]; then
    ok=1
  fi
  if [ "$ok" = 1 ]; then
    label="PASS"; [ -n "$expect_error" ] && label="PASS (exit 2 as documented)"
    echo "$label  $where  ${secs}s  $cmd"
    pass=$((pass + 1))
  else
    echo "FAIL  $where  ${secs}s  $cmd"
    if [ -n "$expect_error" ]; then
      echo "      expected exit 2 and the line: $expect_error"
    fi
    [ "$rc" = 124 ] && echo "      timed out after ${timeout_s}s"
    echo "      exit $rc; last lines of stderr:"
    tail -n 5 "$err" | sed 's/^/        /'
    fail=$((fail + 1)); failed+=("$where  $cmd")
  fi
done

total=$((pass + fail + skip))
echo
echo "docs commands: $total found in ${#docs[@]} files; $pass passed, $fail failed, $skip skipped" \
     "($(( $(date +%s) - t0 )) s)"
if [ "$total" -eq 0 ]; then
  echo "docs_commands_test: no clustersim commands found; is the source dir right?" >&2
  exit 1
fi
if [ "$fail" -gt 0 ]; then
  echo "failed commands:"
  printf '  %s\n' "${failed[@]}"
  exit 1
fi
exit 0
