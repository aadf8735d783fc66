#!/bin/sh
# install_check.sh BUILD_DIR SOURCE_DIR FLAVOUR WORK_DIR
#
# An install of this build, used as users use it, with LD_LIBRARY_PATH unset:
#  - the preload and the tools carry a RUNPATH ($ORIGIN) to libxchg.so.0;
#  - a CMake project (tests/consumer) configures against the install with the
#    same MPI, builds, and its xchg_alltoallv program runs;
#  - an unmodified MPI program runs under the installed preload;
#  - installed xchg-bench runs;
#  - where the other MPI flavour is installed too: configuring the project
#    with it is a FATAL_ERROR naming both; forced (XCHG_SKIP_MPI_CHECK=ON),
#    the program links both MPIs and libxchg refuses at run time with a
#    message and MPI_ERR_OTHER, and the preload ends the process with a
#    message (instead of the segfault of before).
set -u
build=$1 src=$2 flavour=$3 work=$4
other=openmpi
[ "$flavour" = openmpi ] && other=mpich
fail() { echo "install_check: FAILED: $*"; exit 1; }
step() { echo "install_check: $*"; }
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
unset LD_LIBRARY_PATH
run() { fl=$1; shift; "$src/scripts/mpirun" "$fl" 3 "$@"; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
for f in lib/libxchg-preload.so bin/xchg-bench bin/xchg-tune; do
  readelf -d "$prefix/$f" | grep -q 'RUNPATH.*\$ORIGIN' || fail "$f has no \$ORIGIN RUNPATH"
done
step "RUNPATH \$ORIGIN on the preload and the tools"
[ "$(sed -n 's/^mpi_flavour=//p' "$prefix/lib/pkgconfig/xchg.pc")" = "$flavour" ] ||
  fail "xchg.pc does not say mpi_flavour=$flavour"

mpicc=$(command -v "mpicc.$flavour") || fail "mpicc.$flavour not found"
cmake -S "$src/tests/consumer" -B "$work/same" -DCMAKE_PREFIX_PATH="$prefix" \
      -DMPI_C_COMPILER="$mpicc" >"$work/same.log" 2>&1 ||
  { cat "$work/same.log"; fail "configuring a consumer with $flavour"; }
cmake --build "$work/same" >>"$work/same.log" 2>&1 ||
  { cat "$work/same.log"; fail "building the consumer"; }
out=$(run "$flavour" "$work/same/consumer" 2>&1)
echo "$out" | grep -q "consumer: ok" || { echo "$out"; fail "consumer on $flavour"; }
step "consumer with $flavour: configured, built, ran"
out=$(LD_PRELOAD="$prefix/lib/libxchg-preload.so" run "$flavour" "$work/same/plain" 2>&1)
echo "$out" | grep -q "1 passed" || { echo "$out"; fail "the installed preload"; }
step "unmodified program under the installed preload, LD_LIBRARY_PATH unset"
out=$(run "$flavour" "$prefix/bin/xchg-bench" --check --algos linear --sizes 16:16 \
      --iters 1 --warmup 0 --quiet 2>&1) || { echo "$out"; fail "installed xchg-bench"; }
step "installed xchg-bench"

othercc=$(command -v "mpicc.$other") || { step "no mpicc.$other: mismatch not tested"; exit 0; }
if cmake -S "$src/tests/consumer" -B "$work/other" -DCMAKE_PREFIX_PATH="$prefix" \
         -DMPI_C_COMPILER="$othercc" >"$work/other.log" 2>&1; then
  cat "$work/other.log"
  fail "configuring a consumer with $other against xchg built with $flavour succeeded"
fi
# CMake wraps the message at a width that depends on the path: join lines
tr -s ' \n' '  ' <"$work/other.log" | grep -q "was built with $flavour" ||
  { cat "$work/other.log"; fail "the configure error does not name the flavours"; }
step "consumer with $other: configure refused:"
sed -n '/CMake Error/,/^$/p' "$work/other.log" | head -12
rm -rf "$work/other"
cmake -S "$src/tests/consumer" -B "$work/other" -DCMAKE_PREFIX_PATH="$prefix" \
      -DMPI_C_COMPILER="$othercc" -DXCHG_SKIP_MPI_CHECK=ON >"$work/other.log" 2>&1 &&
  cmake --build "$work/other" >>"$work/other.log" 2>&1 ||
  { cat "$work/other.log"; fail "building the forced $other consumer"; }
out=$(run "$other" "$work/other/consumer" 2>&1)
echo "$out" | grep -q "consumer: refused" && echo "$out" | grep -q "xchg cannot run here" ||
  { echo "$out"; fail "libxchg built with $flavour under $other did not refuse cleanly"; }
step "forced $other consumer: refused at run time:"
echo "$out" | grep -m2 "xchg\|consumer"
out=$(LD_PRELOAD="$prefix/lib/libxchg-preload.so" run "$other" "$work/other/plain" 2>&1) &&
  { echo "$out"; fail "the $flavour preload under a $other program did not stop it"; }
echo "$out" | grep -q "Ending this process" ||
  { echo "$out"; fail "the $flavour preload under $other: no message"; }
step "$flavour preload under a $other program: ended with a message"
echo "install_check: passed"
