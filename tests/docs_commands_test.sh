#!/usr/bin/env bash
# The docs test: every `clustersim …` command line inside a fenced code block of
# README.md and docs/*.md is run against a fresh build and must exit 0, and the
# output the docs show after a prompted command must be what it prints, so the
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
# What counts as a command, inside ``` or ~~~ fences (a command's lines ending
# in `\` are joined first):
#   clustersim ARGS, build/cli/clustersim ARGS, ./build/cli/clustersim ARGS,
#   each optionally behind a `$ ` prompt      -> run; must exit 0
#   `$ clustersim ARGS` whose next line in the block starts with
#   `clustersim: error:`                      -> a documented error: must exit 2
#   mpirun … clustersim ARGS                  -> run under mpirun if there is
#                                                one, else reported as SKIP
# A prompt is `$ ` at the block's left margin (the fence's indentation); an
# indented `$ ` is output. In a block that has prompts only the prompted lines
# are commands; the lines after one, up to the next prompt or the end of the
# block, are its shown output. Other lines in code blocks (comments, other
# programs) are not run.
#
# Shown output is checked against what the command printed in the same run,
# as a terminal shows it: every shown line must occur on its stdout or its
# stderr (a documented error, notes), in order within each stream (docs may
# show a subset), trailing whitespace aside. Two markers leave text out:
#   a line that is only `...` or `…` (indented or not)  -> skipped (lines elided)
#   a word `...` or `…` inside a line                   -> any text there
#                                                (columns of a wide table elided)
# There is no marker for text that varies between runs: outputs are
# deterministic, and a doc must not show what is not (a wall-clock time).
# A mismatch FAILs naming the doc's file:line, the shown line and the nearest
# line printed (or the start of the output when no line is close).
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
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
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

# Logical lines of every fenced block: FILE, LINE, BLOCK, PROMPTED, PROMPT,
# TEXT, SHOWN separated by \037 (unit separator), one per line. PROMPTED is 1
# when the block has `$ ` prompts: then only those lines (PROMPT 1) are
# commands and the rest is output. TEXT is the line without its indentation,
# continuation lines joined; SHOWN is the line as the block shows it (less the
# fence's indentation), for comparing with what a command printed. Output lines
# are never joined.
extract() {
  awk -v OFS='\037' '
    function add(lineno, text, is_prompt, shown) {
      nb++; bstart[nb] = lineno; btext[nb] = text; bprompt[nb] = is_prompt; bshown[nb] = shown
    }
    function flush(   k) {
      if (pending != "") { add(start, pending, pprompt, pending); pending = "" }
      for (k = 1; k <= nb; k++) print fname, bstart[k], block, prompted, bprompt[k], btext[k], bshown[k]
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
        if (stripped ~ /^(```|~~~)/) {
          fence = substr(stripped, 1, 3); block++; indent = length(line) - length(stripped)
        }
        next
      }
      if (pending == "" && index(stripped, fence) == 1) { flush(); fence = ""; next }
      shown = line
      for (k = 0; k < indent && shown ~ /^[ \t]/; k++) shown = substr(shown, 2)
      if (pending == "") {
        is_prompt = (shown ~ /^\$ /)
        if (prompted && !is_prompt) { add(FNR, stripped, 0, shown); next }
        start = FNR; text = stripped; pprompt = is_prompt
      } else {
        text = pending " " stripped
      }
      if (text ~ /\\$/) { pending = substr(text, 1, length(text) - 1); sub(/[ \t]+$/, "", pending); next }
      pending = ""
      if (pprompt) prompted = 1
      add(start, text, pprompt, text)
    }' "$@"
}

# Checks the output a doc shows against what the command printed. SHOWN holds
# the shown lines as LINE<tab>TEXT; OUT and ERR are the command's stdout and
# stderr. Each shown line is looked for on stdout, then on stderr, after the
# last line found on that stream. Prints one report per shown line not found,
# naming DOC:LINE, and nothing when every line is. See the header for the
# markers.
check_shown() {
  awk -v doc="$1" -v shown_file="$2" -v out_file="$3" -v err_file="$4" '
    function rtrim(x) { sub(/[ \t\r]+$/, "", x); return x }
    function esc(x,   r, c, k) {
      r = ""
      for (k = 1; k <= length(x); k++) {
        c = substr(x, k, 1)
        r = r (index("\\^$.[]|()*+?{}", c) ? "\\" c : c)
      }
      return r
    }
    # A regular expression for a line with `...` words (any text there), or
    # "" for a line compared as it is.
    function pattern(x,   t, pc, n, k, re) {
      if (x !~ /(^|[ \t])(\.\.\.|…)([ \t]|$)/) return ""
      t = x
      sub(/^[ \t]*(\.\.\.|…)[ \t]+/, "\034", t)
      gsub(/[ \t]+(\.\.\.|…)([ \t]+|$)/, "\034", t)
      n = split(t, pc, "\034")
      re = "^" (pc[1] == "" ? "(.*[ \t])?" : esc(pc[1]))
      for (k = 2; k <= n; k++) {
        if (k == n && pc[k] == "") re = re "([ \t].*)?"
        else if (k == 2 && pc[1] == "") re = re esc(pc[k])
        else re = re "[ \t](.*[ \t])?" esc(pc[k])
      }
      return re "$"
    }
    function matches(a, x, re) { return re == "" ? a == x : a ~ re }
    # The first line of stream st in [from, to] that shows as x, or 0.
    function find(st, from, to, x, re,   a) {
      for (a = from; a <= to; a++) if (matches(got[st, a], x, re)) return a
      return 0
    }
    # Characters the two lines share from their start.
    function common(x, y,   k, m) {
      m = length(x) < length(y) ? length(x) : length(y)
      for (k = 1; k <= m && substr(x, k, 1) == substr(y, k, 1); k++) ;
      return k - 1
    }
    # The printed line closest to x: the longest shared start with 3 or more
    # characters that are not blank, preferring lines after the last found.
    # Sets near_st and near_a (0 when none).
    function nearest(x, anywhere,   st, a, l, len, shared) {
      near_a = 0; len = 0
      for (st = 1; st <= 2; st++) {
        for (a = anywhere ? 1 : p[st]; a <= cnt[st]; a++) {
          l = common(x, got[st, a]); shared = substr(x, 1, l); gsub(/[ \t]/, "", shared)
          if (length(shared) >= 3 && l > len) { near_st = st; near_a = a; len = l }
        }
      }
      if (near_a == 0 && !anywhere) nearest(x, 1)
    }
    function label(st, a) { return name[st] " " a }
    BEGIN {
      name[1] = "stdout"; name[2] = "stderr"
      while ((getline l < shown_file) > 0) {
        ns++; tab = index(l, "\t"); sline[ns] = substr(l, 1, tab - 1); stext[ns] = rtrim(substr(l, tab + 1))
      }
      cnt[1] = cnt[2] = 0  # lines per stream
      while ((getline l < out_file) > 0) got[1, ++cnt[1]] = rtrim(l)
      while ((getline l < err_file) > 0) got[2, ++cnt[2]] = rtrim(l)
      p[1] = p[2] = 1  # per stream, the first line after the last one found
      missing = 0
      for (k = 1; k <= ns; k++) {
        x = stext[k]
        if (x ~ /^[ \t]*(\.\.\.|…)$/) continue
        re = pattern(x)
        found = 0
        for (st = 1; st <= 2 && !found; st++) if ((found = find(st, p[st], cnt[st], x, re))) p[st] = found + 1
        if (found) continue
        if (++missing > 10) continue
        where = doc ":" sline[k] ": "
        if (cnt[1] + cnt[2] == 0) {
          printf "%sshown, but the command printed nothing\n  shown      |%s\n", where, x
          continue
        }
        earlier = 0
        for (st = 1; st <= 2 && !earlier; st++) if ((earlier = find(st, 1, p[st] - 1, x, re))) est = st
        if (earlier) {
          printf "%sprinted as %s, before a line shown above it (order differs)\n", where, label(est, earlier)
          printf "  shown      |%s\n", x
          continue
        }
        printf "%sshown, but not printed (looked on stdout from its line %d, on stderr from %d)\n",
               where, p[1], p[2]
        printf "  shown      |%s\n", x
        nearest(x, 0)
        if (near_a) {
          printf "  %-10s |%s\n", label(near_st, near_a), got[near_st, near_a]
        } else {
          st = cnt[1] ? 1 : 2; a0 = p[st] <= cnt[st] ? p[st] : 1
          printf "  (no printed line starts like it; %s from line %d:)\n", name[st], a0
          for (a = a0; a <= cnt[st] && a < a0 + 5; a++) printf "  %-10s |%s\n", label(st, a), got[st, a]
        }
      }
      if (missing > 10) printf "... and %d more shown lines not printed\n", missing - 10
      exit (missing > 0)
    }'
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

pass=0; fail=0; skip=0; checked=0
failed=()
results=$scratch/.results
mkdir -p "$results"
t0=$(date +%s)

run_re='^(\./)?(build/cli/)?clustersim([[:space:]]|$)'
mpi_re='^mpirun[[:space:]](.*[[:space:]])?(\./)?(build/cli/)?clustersim([[:space:]]|$)'
loop_re='(^|[[:space:];&|(])(for|while|until|do)[[:space:]]'
anywhere_re='(^|[[:space:];&|(])(\./)?(build/cli/)?clustersim[[:space:]]'
placeholder_re='<[A-Za-z_][A-Za-z_-]*>'
elision_re='^[[:space:]]*(\.\.\.|…)[[:space:]]*$'

mapfile -t lines < <(extract "${docs[@]}")
n=${#lines[@]}
for ((i = 0; i < n; i++)); do
  IFS=$'\037' read -r file lineno block prompted prompt text _ <<<"${lines[i]}"
  doc=${file#"$src"/}
  where=$doc:$lineno
  cmd=$text
  [ "$prompt" = 1 ] && cmd=${cmd#'$ '}
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

  # The output shown after a prompted command, up to the next prompt or the
  # end of its block; a documented error when it starts with
  # `clustersim: error:`.
  shown=$results/$i.shown
  : >"$shown"
  nshown=0
  expect_error=""
  for ((j = i + 1; prompt == 1 && j < n; j++)); do
    IFS=$'\037' read -r _ slineno sblock _ sprompt stext sline <<<"${lines[j]}"
    [ "$sblock" = "$block" ] && [ "$sprompt" = 0 ] || break
    [ "$j" = $((i + 1)) ] && [[ $stext == 'clustersim: error:'* ]] && expect_error=$stext
    printf '%s\t%s\n' "$slineno" "$sline" >>"$shown"
    [[ $sline =~ $elision_re ]] || nshown=$((nshown + 1))
  done

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

  rc_ok=0
  if [ -n "$expect_error" ]; then
    [ "$rc" = 2 ] && rc_ok=1
  elif [ "$rc" = 0 ]; then
    rc_ok=1
  fi
  mismatch=""
  if [ "$rc_ok" = 1 ] && [ "$nshown" -gt 0 ]; then
    mismatch=$(check_shown "$doc" "$shown" "$out" "$err")
    checked=$((checked + nshown))
  fi
  if [ "$rc_ok" = 1 ] && [ -z "$mismatch" ]; then
    label="PASS"; [ -n "$expect_error" ] && label="PASS (exit 2 as documented)"
    echo "$label  $where  ${secs}s  $cmd"
    pass=$((pass + 1))
  elif [ "$rc_ok" = 1 ]; then
    echo "FAIL  $where  ${secs}s  $cmd"
    echo "      the output shown is not what it printed:"
    printf '%s\n' "$mismatch" | sed 's/^/        /'
    fail=$((fail + 1)); failed+=("$where  $cmd")
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
echo "docs commands: $total found in ${#docs[@]} files; $pass passed, $fail failed, $skip skipped;" \
     "$checked shown output lines checked ($(( $(date +%s) - t0 )) s)"
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
