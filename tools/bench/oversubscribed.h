/*
 * oversubscribed.h - xchg-bench's warning when a node runs more ranks than
 * it has cores and MPI lets waiting ranks spin.
 */
#ifndef XCHG_BENCH_OVERSUBSCRIBED_H
#define XCHG_BENCH_OVERSUBSCRIBED_H

#include <mpi.h>

/* Collective over comm: rank 0 warns on stderr, once per process, when the
 * ranks of some node outnumber its cores and MPI is not set to yield, and
 * says how to make it yield (docs/benchmarking.md, "Oversubscribed
 * machines"). Nothing under SMPI, whose ranks are simulated. Call it
 * before a mode's first line on stdout: it flushes stdout first, so the
 * warning never lands inside a table. */
void bench_warn_oversubscribed(MPI_Comm comm);

#endif /* XCHG_BENCH_OVERSUBSCRIBED_H */
