#!/bin/sh
# have_mpi4py.sh PYTHON SCRIPT [ARGS...]: runs SCRIPT with PYTHON if mpi4py
# imports (from PYTHONPATH), else exits 77 (CTest: skipped) saying why.
# Each rank runs this under mpiexec, so a missing mpi4py never reaches MPI.
py=$1
if ! "$py" -c 'import mpi4py' 2>/dev/null; then
  echo "SKIPPED: mpi4py does not import from PYTHONPATH=${PYTHONPATH:-} with $py" \
       "(scripts/mpi4py FLAVOUR builds it)"
  exit 77
fi
exec "$@"
