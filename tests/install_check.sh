#!/bin/sh
# install_check.sh BUILD_DIR SOURCE_DIR FLAVOUR WORK_DIR
#
# An install of this build, used as users use it, with LD_LIBRARY_PATH unset,
# to a prefix other than the one the build was configured with:
#  - the preload and the tools carry a RUNPATH ($ORIGIN) to libxchg.so.0;
#  - xchg.pc holds no absolute path of the configuration (it finds its prefix
#    from its own directory); a program compiled with mpicc and
#    `pkg-config --cflags --libs xchg` builds against this install (not
#    another one in a system directory) and runs;
#  - a CMake project (tests/consumer) configures against the install with the
#    same MPI (find_package), builds, and its xchg_alltoallv program runs;
#  - an unmodified MPI program runs under the installed preload;
#  - installed xchg-bench runs, with the installed yield shim too, and names
#    that shim when it finds ranks spinning on too few cores (MPICH);
#  - the install moved elsewhere still works through pkg-config and
#    find_package;
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
pc=$(find "$prefix" -path '*/pkgconfig/xchg.pc' | head -n 1)
[ -n "$pc" ] || fail "no pkgconfig/xchg.pc installed"
pcdir=$(dirname "$pc")
lib=${pcdir%/pkgconfig} # the library directory: lib, lib64, lib/x86_64-linux-gnu
for f in "$lib/libxchg-preload.so" "$prefix/bin/xchg-bench" "$prefix/bin/xchg-tune"; do
  readelf -d "$f" | grep -q 'RUNPATH.*\$ORIGIN' || fail "$f has no \$ORIGIN RUNPATH"
done
step "RUNPATH \$ORIGIN on the preload and the tools"
[ "$(sed -n 's/^mpi_flavour=//p' "$pc")" = "$flavour" ] ||
  fail "xchg.pc does not say mpi_flavour=$flavour"
configured=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
[ -n "$configured" ] && [ "$configured" != "$prefix" ] ||
  fail "the build is configured with CMAKE_INSTALL_PREFIX '$configured': not another prefix"
grep -q '^prefix=${pcfiledir}/' "$pc" || { cat "$pc"; fail "xchg.pc: prefix is not \${pcfiledir}/..."; }
for p in "$configured" "$build" "$src"; do
  grep -v '^#' "$pc" | grep -qF "$p" && { cat "$pc"; fail "xchg.pc names '$p'"; }
done
step "xchg.pc: prefix from \${pcfiledir}; configured at $configured, installed in $prefix"

mpicc=$(command -v "mpicc.$flavour") || fail "mpicc.$flavour not found"
command -v pkg-config >/dev/null || fail "pkg-config not found (scripts/setup installs it)"
# pc_consumer PREFIX PCDIR EXE: compiles tests/consumer/consumer.c with
# mpicc and pkg-config's flags for the xchg.pc in PCDIR, checks that the
# flags and the program's libxchg are those of the install in PREFIX, and
# runs it on 3 ranks.
real() { (cd "$1" 2>/dev/null && pwd -P); }
pc_consumer() {
  flags=$(PKG_CONFIG_PATH=$2 pkg-config --cflags --libs xchg) || fail "pkg-config --cflags --libs xchg"
  libdir=$(PKG_CONFIG_PATH=$2 pkg-config --variable=libdir xchg)
  incdir=$(PKG_CONFIG_PATH=$2 pkg-config --variable=includedir xchg)
  [ -n "$libdir" ] && [ "$(real "$libdir")" = "$(real "$2/..")" ] ||
    fail "pkg-config's libdir '$libdir' is not the install's $(real "$2/..")"
  [ -f "$incdir/xchg.h" ] && case "$(real "$incdir")" in "$(real "$1")"/*) true ;; *) false ;; esac ||
    fail "pkg-config's includedir '$incdir' is not in the install $1"
  # shellcheck disable=SC2086 # flags are words
  "$mpicc" "$src/tests/consumer/consumer.c" -o "$3" $flags -Wl,-rpath,"$libdir" \
    >"$3.log" 2>&1 || { cat "$3.log"; fail "compiling with mpicc.$flavour $flags"; }
  loaded=$(ldd "$3" | awk '/libxchg\.so/ { print $3 }')
  [ -n "$loaded" ] && [ "$(real "$(dirname "$loaded")")" = "$(real "$libdir")" ] ||
    { ldd "$3"; fail "$3 does not load the libxchg of $libdir"; }
  out=$(run "$flavour" "$3" 2>&1)
  echo "$out" | grep -q "consumer: ok" || { echo "$out"; fail "the pkg-config consumer"; }
}
pc_consumer "$prefix" "$pcdir" "$work/pc-consumer"
step "consumer through pkg-config ($(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs xchg)): built, ran"
cmake -S "$src/tests/consumer" -B "$work/same" -DCMAKE_PREFIX_PATH="$prefix" \
      -DMPI_C_COMPILER="$mpicc" >"$work/same.log" 2>&1 ||
  { cat "$work/same.log"; fail "configuring a consumer with $flavour"; }
cmake --build "$work/same" >>"$work/same.log" 2>&1 ||
  { cat "$work/same.log"; fail "building the consumer"; }
grep -q "^xchg_DIR:PATH=$prefix/" "$work/same/CMakeCache.txt" ||
  fail "find_package found another xchg: $(grep '^xchg_DIR' "$work/same/CMakeCache.txt")"
out=$(run "$flavour" "$work/same/consumer" 2>&1)
echo "$out" | grep -q "consumer: ok" || { echo "$out"; fail "consumer on $flavour"; }
step "consumer through find_package with $flavour: configured, built, ran"
out=$(LD_PRELOAD="$lib/libxchg-preload.so" run "$flavour" "$work/same/plain" 2>&1)
echo "$out" | grep -q "1 passed" || { echo "$out"; fail "the installed preload"; }
step "unmodified program under the installed preload, LD_LIBRARY_PATH unset"
out=$(run "$flavour" "$prefix/bin/xchg-bench" --check --algos linear --sizes 16:16 \
      --iters 1 --warmup 0 --quiet 2>&1) || { echo "$out"; fail "installed xchg-bench"; }
step "installed xchg-bench"
shim=$lib/libxchg-mpich-yield.so
[ -f "$shim" ] || fail "libxchg-mpich-yield.so is not installed in the library directory"
out=$(LD_PRELOAD="$shim" run "$flavour" "$prefix/bin/xchg-bench" --algos linear --sizes 16:16 \
      --iters 1 --warmup 0 --quiet 2>&1) || { echo "$out"; fail "xchg-bench under the installed shim"; }
if [ "$flavour" = mpich ]; then
  # 2 ranks said to share 1 core, no shim: the warning names the installed one
  out=$(env -u LD_PRELOAD XCHG_BENCH_TEST_CORES=1 UCX_TLS=self,sm UCX_WARN_UNUSED_ENV_VARS=n \
        mpiexec.mpich -n 2 "$prefix/bin/xchg-bench" --algos linear --sizes 16:16 --iters 1 \
        --warmup 0 --quiet 2>&1) || { echo "$out"; fail "installed xchg-bench, spinning"; }
  echo "$out" | grep -qF "LD_PRELOAD=$(real "$lib")/libxchg-mpich-yield.so" ||
    { echo "$out"; fail "xchg-bench's warning does not name the installed yield shim"; }
fi
step "yield shim installed ($shim); xchg-bench runs under it and names it"

# The install moved: pkg-config and find_package still find it, and the
# tools their library
mv "$prefix" "$work/moved"
mpcdir=$work/moved${pcdir#"$prefix"}
pc_consumer "$work/moved" "$mpcdir" "$work/moved-pc-consumer"
cmake -S "$src/tests/consumer" -B "$work/moved-cmake" -DCMAKE_PREFIX_PATH="$work/moved" \
      -DMPI_C_COMPILER="$mpicc" >"$work/moved-cmake.log" 2>&1 &&
  cmake --build "$work/moved-cmake" >>"$work/moved-cmake.log" 2>&1 ||
  { cat "$work/moved-cmake.log"; fail "find_package of the moved install"; }
grep -q "^xchg_DIR:PATH=$work/moved/" "$work/moved-cmake/CMakeCache.txt" ||
  fail "find_package found another xchg: $(grep '^xchg_DIR' "$work/moved-cmake/CMakeCache.txt")"
out=$(run "$flavour" "$work/moved-cmake/consumer" 2>&1)
echo "$out" | grep -q "consumer: ok" || { echo "$out"; fail "the moved find_package consumer"; }
out=$(run "$flavour" "$work/moved/bin/xchg-bench" --algos linear --sizes 16:16 --iters 1 \
      --warmup 0 --quiet 2>&1) || { echo "$out"; fail "the moved xchg-bench"; }
mv "$work/moved" "$prefix"
step "install moved to $work/moved: pkg-config and find_package consumers built and ran"

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
out=$(LD_PRELOAD="$lib/libxchg-preload.so" run "$other" "$work/other/plain" 2>&1) &&
  { echo "$out"; fail "the $flavour preload under a $other program did not stop it"; }
echo "$out" | grep -q "Ending this process" ||
  { echo "$out"; fail "the $flavour preload under $other: no message"; }
step "$flavour preload under a $other program: ended with a message"
echo "install_check: passed"
