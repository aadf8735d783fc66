/*
 * setup_costs.h - the MPI calls a communicator's set-up is made of, each
 * timed over a communicator's ranks: xchg-bench setup prints them (its
 * first table), xchg-tune writes the model's set-up constants from them
 * (setup_round, setup_window: docs/tuning.md).
 */
#ifndef XCHG_BENCH_SETUP_COSTS_H
#define XCHG_BENCH_SETUP_COSTS_H

#include <mpi.h>
#include <stddef.h>

/* The operations, each with its clean-up (a communicator made is freed). */
enum {
    SETUP_OP_SPLIT,      /* MPI_Comm_split + MPI_Comm_free */
    SETUP_OP_DUP,        /* MPI_Comm_dup + MPI_Comm_free */
    SETUP_OP_IDUP,       /* MPI_Comm_idup + MPI_Wait + MPI_Comm_free (not under SMPI) */
    SETUP_OP_SPLIT_TYPE, /* MPI_Comm_split_type(SHARED) + MPI_Comm_free */
    SETUP_OP_ALLREDUCE,  /* a 64-byte MPI_Allreduce, as the settings agreement */
    SETUP_OP_WINDOW,     /* MPI_Win_allocate_shared of window_bytes (all on node rank
                          * 0, as xchg's windows) + MPI_Win_free */
    SETUP_NOPS
};

typedef struct setup_costs_ctx {
    MPI_Comm comm; /* the ranks timed; the communicators are made from MPI_COMM_WORLD */
    MPI_Comm node; /* this rank's shared-memory communicator (the window's) */
    int rank, node_rank;
    long long window_bytes;
} setup_costs_ctx;

/* Opens c over comm (collective: the node split). 0, or an MPI error. */
int setup_costs_open(setup_costs_ctx *c, MPI_Comm comm, long long window_bytes);
void setup_costs_close(setup_costs_ctx *c);

/* Whether this build has op (SimGrid's SMPI has no MPI_Comm_idup). */
int setup_op_available(int op);
/* op's label for a table row ("MPI_Comm_dup + MPI_Comm_free"). */
const char *setup_op_label(const setup_costs_ctx *c, int op, char *buf, size_t n);

/* Runs fn(arg) once untimed, then reps times, each after a barrier on
 * comm; returns the slowest rank's median seconds, or -1 where some rank's
 * first run failed (agreed on every rank; *why: this rank's error, or
 * "refused on another rank"). t: room for reps times. */
double setup_time_fn(int (*fn)(void *), void *arg, MPI_Comm comm, int reps, double *t,
                     char *why, size_t n);
/* The same for one of the operations above. */
double setup_op_time(setup_costs_ctx *c, int op, int reps, double *t, char *why, size_t n);

#endif /* XCHG_BENCH_SETUP_COSTS_H */
