#!/bin/sh
# tune_check.sh TUNE BENCH TABLE NP LAUNCHER...: xchg-tune as a user meets
# it, run by LAUNCHER (mpiexec -n NP and its flags): --help exits 0, prints
# the usage once and names every option; --sizes takes K suffixes and
# refuses what xchg-bench refuses (exit 2); the table it writes holds only
# comments, constants and rules for NP ranks, each naming an algorithm of
# this build (xchg-bench --list) or vendor, never a model of an MPI library,
# and the set-up constant setup_round (setup_window where MPI made a window),
# and with --sparse 1:16 sparse rules for NP ranks over census ranges that
# cover 0..63 in order, each naming a sparse algorithm;
# --verify passes for both at the default XCHG_AUTO_MIN_P (64, above NP:
# auto follows a table's rules below it); and no warning is printed.
tune=$1 bench=$2 table=$3 np=$4
shift 4
fail() { echo "tune_check: FAILED: $*" >&2; exit 1; }
unset XCHG_AUTO_MIN_P XCHG_TUNING_FILE XCHG_ALLTOALLV_ALGO

out=$("$@" "$tune" --help 2>&1) || fail "xchg-tune --help exited $?, expected 0"
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c '^usage: xchg-tune')" -eq 1 ] ||
  fail "--help: the usage line is not printed exactly once"
for o in --out --sizes --iters --verify --pattern --sparse --help; do
  printf '%s\n' "$out" | grep -q -e " $o" || fail "--help does not name $o"
done

"$@" "$tune" --sizes 16:1X >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--sizes 16:1X exited $rc, expected 2"

rm -f "$table"
out=$("$@" "$tune" --out "$table" --sizes 16:1K --iters 2 --sparse 1:16 --verify 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || fail "xchg-tune --sizes 16:1K --sparse 1:16 --verify exited $rc, expected 0"
printf '%s\n' "$out" | grep -q '^verify: [1-9][0-9]* passed, 0 failed$' ||
  fail "no 'verify: N passed, 0 failed' line"
printf '%s\n' "$out" | grep -q '^verify sparse: [1-9][0-9]* passed, 0 failed$' ||
  fail "no 'verify sparse: N passed, 0 failed' line"
if printf '%s\n' "$out" | grep -q 'warning'; then fail "a warning was printed"; fi
[ -f "$table" ] || fail "no table written to $table"
cat "$table"

names=$("$@" "$bench" --list 2>/dev/null)
printf '%s\n' "$names" | grep -qx vendor || fail "xchg-bench --list names no vendor"
[ "$(grep -c '^rule ' "$table")" -ge 3 ] || fail "fewer than 3 rules for 16:1K (16, 64, 256, 1K)"
grep -q -E '^setup_round [0-9.e+-]+$' "$table" || fail "no setup_round line (the set-up's cost)"
if grep -v -E '^(#.*|(alpha|beta|copy|overhead|setup_round|setup_window) [0-9.e+-]+|rule .*|sparse .*)$' "$table"; then
  fail "the lines above are none of comment, constant or rule"
fi
next=0
grep '^sparse ' "$table" | {
  while read -r kw pmin pmax mmin mmax algo rest; do
    [ "$pmin" = "$np" ] && [ "$pmax" = "$np" ] || fail "a sparse rule for P=$pmin..$pmax, not $np"
    [ -z "$rest" ] && [ -n "$algo" ] || fail "a sparse rule of other than 5 fields"
    [ "$mmin" = "$next" ] && [ "$mmax" -ge "$mmin" ] ||
      fail "sparse rule $mmin..$mmax does not continue from $next"
    next=$((mmax + 1))
    case "$algo" in # (the library parses it too: no warning above)
      pex | rsx | nbx | rma | pex_loc | nbx_loc | pex_loc_shm) ;;
      *) fail "a sparse rule names '$algo'" ;;
    esac
  done
  [ "$next" = 64 ] || fail "the sparse rules end at $((next - 1)), not 63"
} || exit 1
grep '^rule ' "$table" | while read -r kw pmin pmax bmin bmax algo rest; do
  [ "$pmin" = "$np" ] && [ "$pmax" = "$np" ] || fail "a rule for P=$pmin..$pmax, not $np"
  [ -z "$rest" ] && [ -n "$algo" ] || fail "a rule of other than 5 fields: $pmin $pmax $bmin $bmax $algo $rest"
  case "$algo" in
    mpich_model | ompi_model | auto) fail "a rule names $algo" ;;
  esac
  printf '%s\n' "$names" | grep -qx -- "$algo" || fail "a rule names '$algo', not an algorithm"
done || exit 1
echo "tune_check: passed"
