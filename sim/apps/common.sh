# sim/apps/common.sh: what every sim/apps/<application> script shares,
# sourced by them (not run): fetching a Debian source package, libxchg and
# the preload's entry points built for SMPI, the preload's report, CSV rows.
# The caller sets root (the repository) before sourcing.

src_parent=$root/build/apps/src
xchg_bld=$root/build/apps/xchg-smpi
jobs=${JOBS:-2}

# fetch_source PACKAGE: Debian's source package into build/apps/src/
# (apt-get source, which also keeps the upstream archive there), adding a
# deb-src entry for the machine's Debian suites first if there is none.
fetch_source() {
  local pkg=$1
  command -v dpkg-source >/dev/null || { echo "$pkg: dpkg-source missing (apt-get install dpkg-dev)" >&2; return 3; }
  if ! apt-get source --print-uris "$pkg" >/dev/null 2>&1; then
    local have=
    grep -qsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
      /etc/apt/sources.list.d/*.sources && have=1
    if [ -z "$have" ]; then
      [ "$(id -u)" = 0 ] || { echo "$pkg: no deb-src entry; run as root to add one" >&2; return 3; }
      local f
      for f in /etc/apt/sources.list.d/*.sources; do
        [ -e "$f" ] || continue
        case $f in */xchg-src-*) continue ;; esac
        sed 's/^Types:.*/Types: deb-src/' "$f" >"/etc/apt/sources.list.d/xchg-src-$(basename "$f")"
      done
      if [ -s /etc/apt/sources.list ]; then
        grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
          >/etc/apt/sources.list.d/xchg-src.list || true
      fi
    fi
    apt-get update -qq
  fi
  mkdir -p "$src_parent"
  (cd "$src_parent" && apt-get source -qq "$pkg")
}

# libxchg for SMPI (static) and the preload's C entry points compiled with
# smpicc, in build/apps/xchg-smpi (its own tree: sim/build's build/smpi
# may be rebuilt under a running measurement).
build_xchg() {
  cmake -S "$root" -B "$xchg_bld" -DXCHG_SMPI=ON -DXCHG_WERROR=ON \
    -DXCHG_SMPICC="$(command -v smpicc)" -DXCHG_BUILD_TESTS=OFF >/dev/null
  cmake --build "$xchg_bld" -j"$jobs" --target xchg >/dev/null
  mkdir -p "$xchg_bld/preload"
  local f
  for f in preload requests report; do
    smpicc -O2 -D_GNU_SOURCE -I"$root/include" -I"$xchg_bld/include" \
      -c "$root/tools/preload/$f.c" -o "$xchg_bld/preload/$f.o"
  done
}

xchg_built() { [ -f "$xchg_bld/src/libxchg.a" ] && [ -f "$xchg_bld/preload/report.o" ]; }

# What a program links to have xchg serve its calls: the preload's entry
# points ahead of the application's libraries (xchg_before), libxchg after
# them (xchg_after). SMPI loads the program once per simulated rank and
# privatizes only the program's own globals, so both go into the program
# itself (an LD_PRELOADed library would be one for all the ranks).
xchg_before=("$xchg_bld"/preload/{preload,requests,report}.o)
xchg_after=("$xchg_bld/src/libxchg.a" -lpthread -ldl)

# timed OUT COMMAND...: runs COMMAND with its stdout in OUT.log, its stderr
# (SimGrid's and the preload's) in OUT.err, "user sys" CPU seconds in
# OUT.time; returns its status.
timed() {
  local out=$1; shift
  /usr/bin/time -f '%U %S' -o "$out.time" "$@" >"$out.log" 2>"$out.err"
}

# (the last line: GNU time writes "Command exited with non-zero status N"
# ahead of the figures)
cpu_seconds() { tail -1 "$1.time" 2>/dev/null | awk '{ printf "%.1f", $1 + $2 }' || echo "?"; }

# preload_summary APP OUT: the preload's report in OUT.err (XCHG_VERBOSE=1,
# XCHG_PRELOAD_TIME=1) as "APP: ..." lines.
preload_summary() {
  local app=$1 out=$2
  sed -n "s/^xchg-preload:   C MPI_Alltoallv: /$app: MPI_Alltoallv on rank 0: /p" "$out.err"
  # "time in MPI_Alltoallv: N calls, slowest rank X us, mean Y us; MPI_Wtime
  # at MPI_Finalize T s"
  awk -v app="$app" '/^xchg-preload: time in MPI_Alltoallv: / {
         n = $5; x = $9; y = $12; t = $17
         printf "%s: time in MPI_Alltoallv: %s µs (slowest rank, its sum over %s calls; " \
                "mean over ranks %s)\n", app, x, n, y
         printf "%s: simulated time: %s s (MPI_Finalize, latest rank)\n", app, t }' "$out.err"
}

# preload_figures OUT ALGO: "calls alltoallv_us total_us" from the preload's
# report in OUT.err; fails (with the report on stderr) unless every call on
# rank 0 was served as asked (ALGO none: every call passed to SMPI).
preload_figures() {
  local out=$1 algo=$2
  local line; line=$(grep '^xchg-preload: time in MPI_Alltoallv' "$out.err" || true)
  local served; served=$(grep '^xchg-preload:   C MPI_Alltoallv:' "$out.err" || true)
  local n s f b
  n=$(sed -n 's/.*: \([0-9]*\) calls\{0,1\},.*/\1/p' <<<"$served")
  s=$(sed -n 's/.*, \([0-9]*\) served by xchg.*/\1/p' <<<"$served")
  f=$(sed -n 's/.*, \([0-9]*\) fell through.*/\1/p' <<<"$served")
  # auto passes a communicator's first calls to MPI's own MPI_Alltoallv
  # until its set-up pays back (docs/setup.md): served as asked
  b=$(sed -n "s/.*MPI's own until set-up pays back \([0-9]*\).*/\1/p" <<<"$served")
  [ "$algo" != auto ] || [ -z "$b" ] || [ -z "$s" ] || s=$((s + b))
  if [ -z "$line" ] || [ -z "$n" ] || { [ "$algo" != none ] && [ "$s" != "$n" ]; } ||
     { [ "$algo" = none ] && [ "$f" != "$n" ]; }; then
    echo "not every call served as asked ($algo): ${served:-no report}" >&2
    cat "$out.err" >&2
    return 1
  fi
  local calls a2a total
  calls=$(sed -n 's/.*: \([0-9]*\) calls,.*/\1/p' <<<"$line")
  a2a=$(sed -n 's/.*slowest rank \([0-9.]*\) us.*/\1/p' <<<"$line")
  total=$(sed -n 's/.*MPI_Finalize \([0-9.]*\) s$/\1/p' <<<"$line" | awk '{ printf "%.3f", $1 * 1e6 }')
  echo "$calls $a2a $total"
}

# preload_env ALGO: the environment of a run with xchg linked in: the
# preload's report and timer, and the algorithm (none: every call passed
# to SMPI's own MPI_Alltoallv).
preload_env() {
  local e=(XCHG_VERBOSE=1 XCHG_PRELOAD_TIME=1)
  if [ "$1" = none ]; then e+=(XCHG_PRELOAD=off); else e+=(XCHG_ALLTOALLV_ALGO="$1"); fi
  echo "${e[@]}"
}

csv_field() { case $1 in *[,\"]*) printf '"%s"' "${1//\"/\"\"}" ;; *) printf '%s' "$1" ;; esac; }

# csv_row FIELD...: one CSV line
csv_row() {
  local i out=
  for i in "$@"; do out+="$(csv_field "$i"),"; done
  echo "${out%,}"
}
