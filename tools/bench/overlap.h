/*
 * overlap.h - xchg-bench overlap (overlap.c): a nonblocking exchange
 * beside computation.
 */
#ifndef XCHG_BENCH_OVERLAP_H
#define XCHG_BENCH_OVERLAP_H

#include <mpi.h>

/* argv[0] is "overlap". Returns the exit status. */
int overlap_main(int argc, char **argv, MPI_Comm comm);

#endif
