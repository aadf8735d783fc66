"""test_preload_mpi4py.py - an unmodified mpi4py program calling
Comm.Alltoallv, run under libxchg-preload.so with XCHG_VERBOSE=1.

CTest (tests/CMakeLists.txt) runs it on each MPI flavour with the mpi4py
that scripts/mpi4py built against that flavour (PYTHONPATH=build/py-FLAVOUR)
and checks the preload's report with tests/expect_lines.sh: 5 calls,
through MPI_Alltoallv_c on MPICH 4 (mpi4py >= 4 uses the large-count call
on an MPI-4 library) and MPI_Alltoallv on Open MPI 4.1, served by xchg
with XCHG_SETUP_AT=1 and MPI's own without (a new communicator's first
calls, docs/setup.md);
2 Ialltoallv (Wait, Test) served by xchg; on MPI-4 libraries 2 persistent
requests (Alltoallv_init, Start, Wait, Free) served by xchg.
Results are checked against values computed here. Exits 77 (CTest: skipped)
when mpi4py cannot be imported, so a missing mpi4py is reported, not
passed.
"""
import sys
from array import array

try:
    from mpi4py import MPI
except ImportError as e:
    print(f"test_preload_mpi4py: SKIPPED: mpi4py cannot be imported ({e}); "
          "scripts/mpi4py FLAVOUR builds it", flush=True)
    sys.exit(77)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()


def value(src, dst, k, rnd):
    return rnd * 1000000 + src * 1000 + dst * 10 + k


# counts (rank + 2 j) % 4 to rank j, some zeros; packed displacements
scounts = [(rank + 2 * j) % 4 for j in range(size)]
rcounts = [(j + 2 * rank) % 4 for j in range(size)]
sdispls = [sum(scounts[:j]) for j in range(size)]
rdispls = [sum(rcounts[:j]) for j in range(size)]
bad = 0


def exchange_checked(rnd, run):
    """One exchange through run(sendspec, recvspec), checked."""
    global bad
    send = array("i", [0] * max(1, sum(scounts)))
    for j in range(size):
        for k in range(scounts[j]):
            send[sdispls[j] + k] = value(rank, j, k, rnd)
    recv = array("i", [-1] * max(1, sum(rcounts)))
    run([send, (scounts, sdispls), MPI.INT], [recv, (rcounts, rdispls), MPI.INT])
    for j in range(size):
        for k in range(rcounts[j]):
            if recv[rdispls[j] + k] != value(j, rank, k, rnd):
                print(f"FAIL [rank {rank}] call {rnd}: element {k} from rank {j} is "
                      f"{recv[rdispls[j] + k]}, expected {value(j, rank, k, rnd)}",
                      flush=True)
                bad += 1
                return


# blocking: 5 calls of Comm.Alltoallv
for rnd in range(5):
    exchange_checked(rnd, comm.Alltoallv)

# nonblocking: Ialltoallv + Wait, and + Test until done (the preload serves
# MPI_Ialltoallv(_c) with xchg_ialltoallv and completes it in MPI_Wait/Test)
exchange_checked(5, lambda s, r: comm.Ialltoallv(s, r).Wait())


def test_loop(s, r):
    req = comm.Ialltoallv(s, r)
    while not req.Test():
        pass


exchange_checked(6, test_loop)
# persistent (MPI-4): one request started twice
if hasattr(comm, "Alltoallv_init") and MPI.VERSION >= 4:
    for rnd in (7, 8):
        def persistent(s, r):
            req = comm.Alltoallv_init(s, r)
            req.Start()
            req.Wait()
            req.Free()
        exchange_checked(rnd, persistent)

bad = comm.allreduce(bad)
if rank == 0:
    print(f"test_preload_mpi4py on {size} ranks (mpi4py {__import__('mpi4py').__version__}, "
          f"{MPI.Get_library_version().splitlines()[0].strip()}): "
          f"{'results correct' if bad == 0 else 'FAILED'}", flush=True)
sys.exit(1 if bad else 0)
