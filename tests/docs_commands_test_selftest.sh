#!/usr/bin/env bash
# A self-test of the docs test's output check (docs_commands_test.sh): small
# fake READMEs run against a stub `clustersim` script, so it takes a second.
# Each case states the exit code the docs test must give and lines its report
# must contain: a doc whose shown output matches passes (subset, elision,
# column elision, trailing spaces, a documented error, a note on stderr, an
# indented `$ ` output line); a wrong number fails naming README.md:LINE, the
# shown line and the nearest printed one; lines shown out of order fail, and so
# does output shown for a command that prints nothing.
#
# Usage: tests/docs_commands_test_selftest.sh
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clustersim-docs-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The stub binary: `table` prints a small table, `note` a line on each stream,
# `quiet` nothing, `fail` a documented error.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/clustersim" <<'EOF'
#!/usr/bin/env bash
case "$1" in
  table)
    printf '%s\n' 'widgets: 3 rows' 'name    size   tag' 'alpha   1.00   x' 'beta    2.00   y' \
      'gamma   3.00   z' '  $ / unit      0.50' 'wide    1  2  3  4  5' ;;
  note)
    echo 'result 1'; echo 'wrote result.txt' >&2 ;;
  quiet) ;;
  fail)
    echo 'clustersim: error: widget.count=0 must be at least 1; try 1' >&2; exit 2 ;;
  *)
    echo "stub: unknown command '$1'" >&2; exit 1 ;;
esac
EOF
chmod +x "$tmp/bin/clustersim"

failures=0
# check NAME WANT_RC EXPECTED_LINE... (the README comes on stdin)
check() {
  local name=$1 want=$2; shift 2
  mkdir -p "$tmp/$name"
  cat >"$tmp/$name/README.md"
  local out rc
  out=$(bash "$here/docs_commands_test.sh" --source-dir "$tmp/$name" --bin "$tmp/bin/clustersim" \
        --no-mpi 2>&1)
  rc=$?
  local ok=1 line
  [ "$rc" = "$want" ] || { echo "FAIL  $name: exit $rc, expected $want"; ok=0; }
  for line in "$@"; do
    grep -qF -- "$line" <<<"$out" || { echo "FAIL  $name: report lacks: $line"; ok=0; }
  done
  if [ "$ok" = 1 ]; then
    echo "PASS  $name"
  else
    failures=$((failures + 1))
    sed 's/^/      /' <<<"$out"
  fi
}

# Shown lines: a subset in order, an elided run (`...`, indented `…`), a column
# elision inside a line, trailing spaces, an indented `$ ` line that is output.
check matches 0 "1 passed, 0 failed" "5 shown output lines checked" <<'EOF'
# Fake

```sh
$ clustersim table
widgets: 3 rows
alpha   1.00   x   
...
gamma   3.00   z
  $ / unit      0.50
  …
wide    1 ... 5
```
EOF

check error-matches 0 "PASS (exit 2 as documented)" <<'EOF'
```sh
$ clustersim fail
clustersim: error: widget.count=0 must be at least 1; try 1
```
EOF

# A line a command prints on stderr (a note) is found there.
check stderr-note 0 "1 passed, 0 failed" <<'EOF'
```sh
$ clustersim note
result 1
wrote result.txt
```
EOF

check printed-nothing 1 "README.md:3: shown, but the command printed nothing" <<'EOF'
```sh
$ clustersim quiet
result 1
```
EOF

check wrong-number 1 "README.md:4: shown, but not printed (looked on stdout from its line 3, on stderr from 1)" \
  "shown      |beta    2.01   y" "stdout 4   |beta    2.00   y" <<'EOF'
```sh
$ clustersim table
name    size   tag
beta    2.01   y
gamma   3.00   z
```
EOF

check out-of-order 1 "README.md:4: printed as stdout 4, before a line shown above it (order differs)" <<'EOF'
```sh
$ clustersim table
gamma   3.00   z
beta    2.00   y
```
EOF

check elided-columns-differ 1 "README.md:3: shown, but not printed" "stdout 7   |wide    1  2  3  4  5" <<'EOF'
```sh
$ clustersim table
wide    1 ... 6
```
EOF

# Text around a `...` word is literal: `.` in it matches only a dot.
check elided-text-is-literal 1 "README.md:3: shown, but not printed" <<'EOF'
```sh
$ clustersim table
alpha   1x00 ... x
```
EOF

check nothing-close 1 "(no printed line starts like it; stdout from line 1:)" \
  "stdout 1   |widgets: 3 rows" <<'EOF'
```sh
$ clustersim table
zzz
```
EOF

check error-differs 1 "README.md:3: shown, but not printed" \
  "stderr 1   |clustersim: error: widget.count=0 must be at least 1; try 1" <<'EOF'
```sh
$ clustersim fail
clustersim: error: widget.count=0 must be at least 2; try 2
```
EOF

if [ "$failures" -gt 0 ]; then
  echo "docs_commands_test_selftest: $failures case(s) failed"
  exit 1
fi
echo "docs_commands_test_selftest: all cases passed"
