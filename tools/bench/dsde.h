/*
 * dsde.h - xchg-bench's dsde mode: every sparse exchange algorithm
 * (xchg_sparse_exchange_algo) against what an application does without
 * xchg, an MPI_Alltoall of counts followed by MPI_Alltoallv, on the seed
 * experiment of Hoefler, Siebert and Lumsdaine (PPoPP 2010): each rank
 * sends a few doubles to a random 10% of the other ranks, new partners
 * every iteration.
 */
#ifndef XCHG_BENCH_DSDE_H
#define XCHG_BENCH_DSDE_H

#include <mpi.h>

/* `xchg-bench dsde [options]` (argv[0] is "dsde"). Collective over comm
 * (MPI_ERRORS_RETURN). Returns the exit code: 0, 1 (a --check mismatch,
 * an error, an unwritable file) or 2 (bad option). */
int dsde_main(int argc, char **argv, MPI_Comm comm);

#endif /* XCHG_BENCH_DSDE_H */
