#!/bin/sh
# expect_lines.sh [REGEX...] -- COMMAND [ARGS...]: runs COMMAND and passes
# only if it exits 0 (77: skipped, passed on) and, for every extended REGEX,
# exactly one line of its output (stdout and stderr) matches: the preload's
# report (XCHG_VERBOSE=1, rank 0 only) must say what served each call.
n=0
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  n=$((n + 1)); eval "re_$n=\$1"; shift
done
[ "$1" = "--" ] || { echo "expect_lines: no -- before the command" >&2; exit 2; }
shift
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
[ "$got" -eq 77 ] && exit 77
if [ "$got" -ne 0 ]; then
  echo "expect_lines: exit code $got, expected 0" >&2
  exit 1
fi
status=0
i=1
while [ $i -le $n ]; do
  eval "re=\$re_$i"
  lines=$(printf '%s\n' "$out" | grep -E -c -- "$re")
  if [ "$lines" -ne 1 ]; then
    echo "expect_lines: $lines lines match '$re', expected exactly 1" >&2
    status=1
  fi
  i=$((i + 1))
done
[ $status -eq 0 ] && echo "expect_lines: exit code 0 and one line for each of the $n patterns"
exit $status
