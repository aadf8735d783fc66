/*
 * tune_sparse.h - xchg-tune's sparse part (tune_sparse.c): measure the
 * sparse algorithms at a few numbers of messages per rank, write `sparse`
 * rules, verify that auto follows them. Collective over MPI_COMM_WORLD.
 */
#ifndef XCHG_TUNE_SPARSE_H
#define XCHG_TUNE_SPARSE_H

#include "xchg.h"

#include <stdio.h>

enum { TUNE_SPARSE_MAX = 8 };

/* The messages per rank to measure: powers of 4 from mmin to mmax, each
 * clipped to P-1 and to the census's 63, without repeats, into m; how many. */
int tune_sparse_counts(int mmin, int mmax, int P, int *m);
/* The fastest sparse algorithm at each m[i] into best[i] (prints a table on
 * rank 0; XCHG_SPARSE_INVALID where none gave a right result). */
void tune_sparse_measure(int n, const int *m, int iters, int rank, int P, xchg_sparse_algo *best);
/* The `sparse` rules, one per measured count (rank 0's file). */
void tune_sparse_write(FILE *f, int n, const int *m, const xchg_sparse_algo *best, int P);
/* With XCHG_TUNING_FILE set to the table: auto runs best[i] at m[i] once it
 * saw a census; returns the failures (the same on every rank). */
int tune_sparse_verify(int n, const int *m, const xchg_sparse_algo *best, int rank, int P);

#endif /* XCHG_TUNE_SPARSE_H */
