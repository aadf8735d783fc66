"""alltoallv_mpi4py.py - an mpi4py program that gets xchg's MPI_Alltoallv
without any change: run it under the preload library.

    LD_PRELOAD=$PREFIX/lib/libxchg-preload.so XCHG_VERBOSE=1 \\
        mpiexec -n 4 python3 alltoallv_mpi4py.py

(PREFIX: where xchg is installed; on several nodes pass LD_PRELOAD through
the launcher, as README.md's "Adopt it" shows.)

mpi4py must be built against the same MPI as libxchg-preload.so
(MPICC=mpicc.mpich or mpicc.openmpi pip install --no-binary mpi4py mpi4py;
from the source tree, scripts/mpi4py FLAVOUR puts one in build/py-FLAVOUR).
With XCHG_VERBOSE=1, rank 0 reports at MPI_Finalize which entry point the
call came through (on MPICH 4, mpi4py 4 calls the large-count
MPI_Alltoallv_c; on Open MPI 4.1, MPI_Alltoallv) and what served it. This
program's one call is MPI's own ("fell through (MPI's own until set-up
pays back 1)"): xchg sets a communicator up only once its calls repay the
set-up (docs/setup.md). XCHG_SETUP_AT=1 sets up at the first call, so
that xchg's algorithm serves it; XCHG_ALLTOALLV_ALGO=pairwise forces an
algorithm; XCHG_PRELOAD=off hands every call back to MPI for comparison.
"""
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()

# Rank r sends r + 1 integers to every rank j, each holding 100 * r + j.
scounts = [rank + 1] * size
sdispls = [j * (rank + 1) for j in range(size)]
send = array("i", [100 * rank + j for j in range(size) for _ in range(rank + 1)])
# ... so it receives j + 1 integers from rank j.
rcounts = [j + 1 for j in range(size)]
rdispls = [sum(rcounts[:j]) for j in range(size)]
recv = array("i", [0] * sum(rcounts))

comm.Alltoallv([send, (scounts, sdispls), MPI.INT], [recv, (rcounts, rdispls), MPI.INT])

assert all(recv[rdispls[j] + k] == 100 * j + rank
           for j in range(size) for k in range(rcounts[j]))
if rank == 0:
    print(f"rank 0 received {list(recv)}")
