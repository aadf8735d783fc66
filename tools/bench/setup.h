/*
 * setup.h - xchg-bench's setup mode (setup.c): what a communicator's
 * set-up costs on this machine, and what a program that makes a new
 * communicator every K calls pays with xchg_alltoallv against the MPI
 * library's MPI_Alltoallv (docs/setup.md).
 */
#ifndef XCHG_BENCH_SETUP_H
#define XCHG_BENCH_SETUP_H

#include <mpi.h>

/* `xchg-bench setup [options]` (argv[0] is "setup"). Collective over comm
 * (a duplicate of MPI_COMM_WORLD, MPI_ERRORS_RETURN). Returns the exit
 * code: 0, 1 (xchg's result differs from MPI's, or an error) or 2 (bad
 * option). */
int setup_main(int argc, char **argv, MPI_Comm comm);

#endif /* XCHG_BENCH_SETUP_H */
