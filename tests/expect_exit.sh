#!/bin/sh
# expect_exit.sh CODE REGEX COMMAND [ARGS...]: runs COMMAND and passes only
# if it exits with exactly CODE and exactly one line of its output (stdout
# and stderr) matches the extended REGEX: xchg-bench's usage errors must
# exit 2 and be printed once (by rank 0), not once per rank.
code=$1; regex=$2; shift 2
out=$("$@" 2>&1)
got=$?
printf '%s\n' "$out"
lines=$(printf '%s\n' "$out" | grep -E -c -- "$regex")
if [ "$got" -ne "$code" ]; then
  echo "expect_exit: exit code $got, expected $code" >&2
  exit 1
fi
if [ "$lines" -ne 1 ]; then
  echo "expect_exit: $lines lines match '$regex', expected exactly 1" >&2
  exit 1
fi
echo "expect_exit: exit code $code and one '$regex' line, as expected"
