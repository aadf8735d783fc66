#!/bin/sh
# record_check.sh FLAVOUR SOURCE_DIR BUILD_DIR WORK_DIR
#
# XCHG_RECORD end to end on a real MPI:
#  - record a real program (examples/xchg-demo, 3 ranks), replay the file in
#    xchg-bench (--check, every algorithm) while recording again: the second
#    recording holds the first one's counts (test_bench_patterns --same);
#  - replayed at 4 ranks (persistent requests too): the scaling rule;
#  - an unmodified program under the preload (tests/test_preload): its
#    recorded matrix is the one its code sends (written out here by formula);
#  - XCHG_RECORD_MAX=3 on a pattern with a new shape every call: 3 shapes,
#    and the rest counted as not recorded;
#  - xchg-tune --pattern file: tunes on the recording and verifies.
set -u
flavour=$1 src=$2 build=$3 work=$4
fail() { echo "record_check: FAILED: $*"; exit 1; }
step() { echo "record_check: $*"; }
rm -rf "$work"
mkdir -p "$work"
run() { np=$1; shift; "$src/scripts/mpirun" "$flavour" "$np" "$@"; }
same() { "$build/tests/test_bench_patterns" --same "$1" "$2" || fail "$2 is not $1 replayed"; }
bench=$build/tools/xchg-bench

XCHG_RECORD=$work/demo.txt run 3 "$build/examples/xchg-demo" >"$work/demo.log" 2>&1 ||
  { cat "$work/demo.log"; fail "xchg-demo"; }
[ -f "$work/demo.txt" ] || fail "xchg-demo under XCHG_RECORD wrote no file"
grep -q '^shape 3 [1-9]' "$work/demo.txt" || { cat "$work/demo.txt"; fail "no 3-rank shape"; }
step "recorded xchg-demo: $(grep -c '^shape' "$work/demo.txt") shape(s), $(grep '^shape' "$work/demo.txt" | head -1)"

XCHG_RECORD=$work/replay3.txt run 3 "$bench" --pattern "file:$work/demo.txt" --check \
  --algos all,auto --iters 2 --warmup 0 --quiet >"$work/replay3.log" 2>&1 ||
  { cat "$work/replay3.log"; fail "xchg-bench replaying it"; }
same "$work/demo.txt" "$work/replay3.txt"
XCHG_RECORD=$work/replay4.txt run 4 "$bench" --pattern "file:$work/demo.txt:1" --check \
  --persistent --algos linear,pairwise --iters 2 --warmup 0 --quiet >"$work/replay4.log" 2>&1 ||
  { cat "$work/replay4.log"; fail "xchg-bench replaying it at 4 ranks"; }
same "$work/demo.txt" "$work/replay4.txt"
grep -q "scaled" "$work/replay4.log" || fail "the 4-rank table does not say scaled"

preload=$build/tools/libxchg-preload.so
XCHG_RECORD=$work/preload.txt LD_PRELOAD=$preload run 3 "$build/tests/test_preload" \
  >"$work/preload.log" 2>&1 || { cat "$work/preload.log"; fail "test_preload"; }
# test_preload sends (rank + 2 j) % 4 ints to rank j, five times
{
  echo "xchg-record 1"
  echo "shape 3 5"
  for i in 0 1 2; do
    echo "$(( (i % 4) * 4 )) $(( ((i + 2) % 4) * 4 )) $(( ((i + 4) % 4) * 4 ))"
  done
} >"$work/preload.expected"
same "$work/preload.expected" "$work/preload.txt"
grep -q '^shape 3 5$' "$work/preload.txt" || fail "the preload's 5 calls were not counted"

XCHG_RECORD=$work/many.txt XCHG_RECORD_MAX=3 run 3 "$bench" --pattern sparse --sizes 16:16 \
  --algos linear --iters 6 --warmup 0 --quiet >"$work/many.log" 2>&1 ||
  { cat "$work/many.log"; fail "xchg-bench sparse"; }
[ "$(grep -c '^shape' "$work/many.txt")" = 3 ] || fail "XCHG_RECORD_MAX=3 kept $(grep -c '^shape' "$work/many.txt") shapes"
grep -q "not recorded (XCHG_RECORD_MAX)" "$work/many.txt" || fail "shapes past the maximum not counted"
step "XCHG_RECORD_MAX=3: 3 shapes, $(sed -n 's/^# communicator 1: \([0-9]*\) calls.*/\1/p' "$work/many.txt") calls past them counted"

run 3 "$build/tools/xchg-tune" --pattern "file:$work/demo.txt" --out "$work/tune.txt" \
  --iters 2 --verify >"$work/tune.log" 2>&1 || { cat "$work/tune.log"; fail "xchg-tune"; }
grep -q '^rule 3 3 ' "$work/tune.txt" || fail "xchg-tune wrote no rule"
step "xchg-tune on the recording: $(grep '^rule' "$work/tune.txt")"
echo "record_check: passed"
