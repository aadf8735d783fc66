/*
 * setup_costs.c - the MPI calls a communicator's set-up is made of, timed
 * one at a time (setup_costs.h).
 */
#include "setup_costs.h"
#include "bench_util.h"

#include <stdio.h>
#include <string.h>

int setup_costs_open(setup_costs_ctx *c, MPI_Comm comm, long long window_bytes)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    c->window_bytes = window_bytes;
    MPI_Comm_rank(comm, &c->rank);
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &c->node);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Comm_set_errhandler(c->node, MPI_ERRORS_RETURN); /* a refused window returns */
    return MPI_Comm_rank(c->node, &c->node_rank);
}

void setup_costs_close(setup_costs_ctx *c)
{
    if (c->node != MPI_COMM_NULL)
        MPI_Comm_free(&c->node);
}

static int op_split(const setup_costs_ctx *c)
{
    MPI_Comm n;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, 0, c->rank, &n);
    return rc == MPI_SUCCESS ? MPI_Comm_free(&n) : rc;
}

static int op_dup(const setup_costs_ctx *c)
{
    MPI_Comm n;
    (void)c;
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, &n);
    return rc == MPI_SUCCESS ? MPI_Comm_free(&n) : rc;
}

static int op_idup(const setup_costs_ctx *c)
{
    (void)c;
#ifdef XCHG_SMPI /* SimGrid SMPI 3.32 aborts in MPI_Comm_idup (not implemented) */
    return MPI_ERR_UNSUPPORTED_OPERATION;
#else
    MPI_Comm n;
    MPI_Request req;
    int rc = MPI_Comm_idup(MPI_COMM_WORLD, &n, &req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    return rc == MPI_SUCCESS ? MPI_Comm_free(&n) : rc;
#endif
}

static int op_split_type(const setup_costs_ctx *c)
{
    MPI_Comm n;
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL,
                                 &n);
    return rc == MPI_SUCCESS ? MPI_Comm_free(&n) : rc;
}

static int op_allreduce(const setup_costs_ctx *c)
{
    int in[16] = {0}, out[16]; /* 64 bytes, as a settings agreement */
    in[0] = c->rank;
    return MPI_Allreduce(in, out, 16, MPI_INT, MPI_MAX, c->comm);
}

static int op_window(const setup_costs_ctx *c)
{
    MPI_Aint mine = c->node_rank == 0 ? (MPI_Aint)c->window_bytes : 0;
    void *base;
    MPI_Win win;
    int rc = MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, c->node, &base, &win);
    return rc == MPI_SUCCESS ? MPI_Win_free(&win) : rc;
}

static int (*const ops[SETUP_NOPS])(const setup_costs_ctx *) = {
    [SETUP_OP_SPLIT] = op_split,         [SETUP_OP_DUP] = op_dup,
    [SETUP_OP_IDUP] = op_idup,           [SETUP_OP_SPLIT_TYPE] = op_split_type,
    [SETUP_OP_ALLREDUCE] = op_allreduce, [SETUP_OP_WINDOW] = op_window,
};

int setup_op_available(int op)
{
#ifdef XCHG_SMPI
    if (op == SETUP_OP_IDUP)
        return 0;
#endif
    return op >= 0 && op < SETUP_NOPS;
}

const char *setup_op_label(const setup_costs_ctx *c, int op, char *buf, size_t n)
{
    static const char *const labels[SETUP_NOPS] = {
        [SETUP_OP_SPLIT] = "MPI_Comm_split + MPI_Comm_free",
        [SETUP_OP_DUP] = "MPI_Comm_dup + MPI_Comm_free",
        [SETUP_OP_IDUP] = "MPI_Comm_idup + MPI_Wait + MPI_Comm_free",
        [SETUP_OP_SPLIT_TYPE] = "MPI_Comm_split_type(SHARED) + MPI_Comm_free",
        [SETUP_OP_ALLREDUCE] = "MPI_Allreduce of 64 B",
    };
    if (op == SETUP_OP_WINDOW)
        snprintf(buf, n, "MPI_Win_allocate_shared %lld B + MPI_Win_free", c->window_bytes);
    else
        snprintf(buf, n, "%s", labels[op]);
    return buf;
}

double setup_time_fn(int (*fn)(void *), void *arg, MPI_Comm comm, int reps, double *t,
                     char *why, size_t n)
{
    int rc = fn(arg), bad = rc != MPI_SUCCESS, any;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm);
    if (any) {
        snprintf(why, n, "refused on another rank");
        if (bad) {
            char e[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(rc, e, &len);
            snprintf(why, n, "%s", e);
        }
        return -1.0;
    }
    for (int k = 0; k < reps; k++) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        fn(arg);
        t[k] = MPI_Wtime() - t0;
    }
    double med, lo, hi, mean, out;
    bench_summary(t, reps, &med, &lo, &hi, &mean);
    MPI_Allreduce(&med, &out, 1, MPI_DOUBLE, MPI_MAX, comm);
    return out;
}

typedef struct op_arg {
    setup_costs_ctx *c;
    int op;
} op_arg;

static int run_op(void *arg)
{
    const op_arg *a = arg;
    return ops[a->op](a->c);
}

double setup_op_time(setup_costs_ctx *c, int op, int reps, double *t, char *why, size_t n)
{
    op_arg a = {c, op};
    return setup_time_fn(run_op, &a, c->comm, reps, t, why, n);
}
