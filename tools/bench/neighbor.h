/*
 * neighbor.h - xchg-bench's neighbor mode: every neighbour exchange
 * algorithm (xchg_neighbor_alltoallv_algo, blocking and persistent) against
 * MPI_Neighbor_alltoallv on the graphs of halo exchanges (3-D 7- and
 * 27-point stencils) and of a random sparse matrix-vector product.
 */
#ifndef XCHG_BENCH_NEIGHBOR_H
#define XCHG_BENCH_NEIGHBOR_H

#include <mpi.h>

/* `xchg-bench neighbor [options]` (argv[0] is "neighbor"). Collective over
 * comm (MPI_ERRORS_RETURN). Returns the exit code: 0, 1 (a --check
 * mismatch, an error) or 2 (bad option). */
int neighbor_main(int argc, char **argv, MPI_Comm comm);

#endif /* XCHG_BENCH_NEIGHBOR_H */
