#!/bin/sh
# bench_output.sh DIR PLOT LAUNCH...: LAUNCH runs xchg-bench on 3 ranks.
# Checks that the table has one row per pattern and size; that --csv and
# --json hold one record per pattern x size x algorithm with the run's
# parameters; that the same seed gives the same counts on a second run and
# another seed different ones; that --algos all runs the MPI models and auto
# and that best is never a baseline; and, where matplotlib is, that tools/plot
# makes a PNG of each file.
dir=$1; plot=$2; shift 2
fail() { echo "bench_output: FAIL: $*" >&2; exit 1; }
mkdir -p "$dir" && rm -f "$dir"/*
args="--pattern random,hot --sizes 16:64 --algos linear --iters 3 --warmup 1 --quiet"
"$@" $args --seed 5 --csv "$dir/b.csv" --json "$dir/b.json" >"$dir/table.txt" ||
  fail "xchg-bench exited $?"
rows=$(grep -v '^#' "$dir/table.txt" | grep -c .)
[ "$rows" -eq 6 ] || fail "table has $rows rows, expected 6 (2 patterns x 3 sizes)"
grep -q '^# Size *vendor *linear *best *speedup_best *speedup_auto$' "$dir/table.txt" ||
  fail "table header"
# auto did not run: its speedup column is '-'; best's is a number
[ "$(grep -v '^#' "$dir/table.txt" | grep -c ' linear  *[0-9.]*x  *-$')" -eq 6 ] ||
  fail "table rows: best linear, speedup_best a number, speedup_auto '-'"
head -n 1 "$dir/table.txt" | grep -q 'pattern random, 3 ranks' || fail "table title"

recs=$(grep -v '^#' "$dir/b.csv" | grep -c .)
[ "$recs" -eq 13 ] || fail "CSV has $recs lines, expected header + 12"
for kv in 'P=3' 'seed=5' 'iters=3' 'type=MPI_BYTE' 'mpi_library=..*' 'mpi_version=[0-9]'; do
  grep -q "^# $kv" "$dir/b.csv" || fail "CSV lacks '# $kv'"
done
grep -q '^# vendor=mpi_library$' "$dir/b.csv" || fail "CSV lacks '# vendor=mpi_library'"
grep -q '^pattern,size_bytes,avg_bytes,algo,ran,status,median_us,min_us,max_us,mean_us,temp_bytes,speedup_vs_vendor,speedup_vs_mpich_model,speedup_vs_ompi_model,error,times_us$' \
  "$dir/b.csv" || fail "CSV header"
[ "$(grep -c ',ok,' "$dir/b.csv")" -eq 12 ] || fail "CSV: not every record ok"

# same seed, same counts (the avg_bytes column); another seed, others
"$@" $args --seed 5 --csv "$dir/c.csv" >/dev/null || fail "second run exited $?"
"$@" $args --seed 6 --csv "$dir/d.csv" >/dev/null || fail "third run exited $?"
cols() { grep -v '^#' "$1" | cut -d, -f1-5; }
[ "$(cols "$dir/b.csv")" = "$(cols "$dir/c.csv")" ] || fail "same seed gave other counts"
[ "$(cols "$dir/b.csv" | grep '^random')" != "$(cols "$dir/d.csv" | grep '^random')" ] ||
  fail "another seed gave the same random counts"

# --persistent: NAME+p records after the others, mode and init_us last
"$@" $args --seed 5 --persistent --csv "$dir/p.csv" --json "$dir/p.json" >"$dir/ptable.txt" ||
  fail "--persistent run exited $?"
grep -q '^# Size *vendor *linear *vendor+p *linear+p *best *speedup_best *speedup_auto$' "$dir/ptable.txt" ||
  fail "--persistent table header"
[ "$(grep -c '^# init ' "$dir/ptable.txt")" -eq 6 ] || fail "--persistent: no '# init' line per row"
grep -q 'error,times_us,mode,init_us$' "$dir/p.csv" || fail "--persistent CSV header"
[ "$(grep -c ',linear+p,linear,ok,.*,persistent,[0-9.]*$' "$dir/p.csv")" -eq 6 ] ||
  fail "--persistent CSV: linear+p records"
[ "$(grep -c ',ok,.*,oneshot,$' "$dir/p.csv")" -eq 12 ] || fail "--persistent CSV: oneshot records"

# --algos all: every algorithm of the build, the MPI models and auto; best is
# never a baseline nor auto; auto's speedup is a number
"$@" --pattern sparse --sizes 16:16 --algos all --iters 2 --warmup 0 --quiet \
  --csv "$dir/all.csv" >"$dir/alltable.txt" || fail "--algos all run exited $?"
for a in vendor mpich_model ompi_model auto linear; do
  grep -q "^sparse,16,[^,]*,$a," "$dir/all.csv" || fail "--algos all lacks $a"
done
row=$(grep -v '^#' "$dir/alltable.txt")
best=$(echo "$row" | awk '{print $(NF-2)}')
case "$best" in
  vendor|mpich_model|ompi_model|auto|-) fail "best is '$best': a baseline, auto or none" ;;
esac
echo "$row" | grep -q ' [0-9.]*x  *[0-9.]*x$' || fail "--algos all: speedup columns: $row"
grep '^sparse,16,[^,]*,linear,' "$dir/all.csv" |
  awk -F, '$12 == "" || $13 == "" || $14 == "" { exit 1 }' ||
  fail "--algos all CSV: speedups over vendor and both models"

py=
for p in python3 /usr/bin/python3; do
  command -v "$p" >/dev/null 2>&1 && { py=$p; break; }
done
if [ -n "$py" ]; then
  "$py" - "$dir/b.json" <<'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
p, r = d["params"], d["results"]
assert p["P"] == 3 and p["seed"] == 5 and p["iters"] == 3, p
assert p["patterns"] == ["random", "hot"] and p["algos"] == ["vendor", "linear"], p
assert p["mpi_library"] and p["mpi_version"], p
assert len(r) == 12, len(r)
for x in r:
    assert x["status"] == "ok" and len(x["times_us"]) == 3, x
    assert x["min_us"] <= x["median_us"] <= x["max_us"], x
print("bench_output: JSON ok")
PY
  "$py" - "$dir/p.json" <<'PY' || fail "--persistent JSON"
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert d["params"]["persistent"] is True and len(r) == 24, len(r)
for x in r:
    assert x["status"] == "ok" and x["mode"] == ("persistent" if x["algo"].endswith("+p")
                                                  else "oneshot"), x
    assert ("init_us" in x) == (x["mode"] == "persistent"), x
print("bench_output: --persistent JSON ok")
PY
else
  echo "bench_output: no python3, JSON not parsed"
fi
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' 2>/dev/null; then
    for f in b.csv b.json p.csv p.json; do
      "$p" "$plot" "$dir/$f" -o "$dir/$f.png" >/dev/null || fail "tools/plot $f"
      [ "$(head -c 4 "$dir/$f.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
        fail "tools/plot $f: not a PNG"
    done
    echo "bench_output: plots ok"
    break
  fi
done
echo "bench_output: passed"
