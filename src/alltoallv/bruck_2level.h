/*
 * bruck_2level.h - what bruck_2level and bruck_2level_shm share (internal
 * to src/alltoallv/): the node tables, one call's state, its inter-node
 * phase and the packing of its intra-node phase (bruck_2level.c says how
 * the algorithm works).
 */
#ifndef XCHG_ALLTOALLV_BRUCK_2LEVEL_H
#define XCHG_ALLTOALLV_BRUCK_2LEVEL_H

#include "bruck_common.h"
#include "node_state.h"

#include <stdint.h>

/* The per-communicator tables (in bruck_2level's registry slot; the shm
 * variant uses the same). */
typedef struct b2_state {
    const xchg_node_layout *nl; /* the communicator's (not owned) */
    int lmax;      /* the largest node */
    int nplaces;   /* places this rank plays: lrank, lrank + L, ... < lmax */
    int *players;  /* nplaces x nnodes: rank playing each node's place */
    int *members;  /* this node's members by place (lsize) */
} b2_state;

/* One call. */
typedef struct b2_call {
    xchg_call *c;
    const b2_state *st;
    const xchg_node_layout *nl;
    const char *who;    /* the algorithm, in error messages */
    int N, L;
    int k;              /* the place run in progress (0: the own place) */
    int64_t mark;       /* failure marks heard so far */
    /* phase 1's results: per run, its kept store; per (run, node, member)
     * the sub-block received for that member */
    char **kept;
    size_t *kept_bytes;
    const char **sub;
    uint64_t *sub_len;
    char *tables;       /* the allocation behind kept .. sub_len */
    size_t tables_bytes;
    int err;            /* this rank's first error */
} b2_call;

static inline size_t xchg_b2_sub_at(const b2_call *x, int k, int a, int m)
{
    return ((size_t)k * (size_t)x->N + (size_t)a) * (size_t)x->L + (size_t)m;
}

/* The node tables of cs (made on first use: collective over cs->pcomm). */
int xchg_b2_state_of(xchg_comm_state *cs, b2_state **out);
/* One call: its tables, phase 1, then phase2 (given phase 1's MPI error:
 * MPI_SUCCESS, or MPI itself failed), the tables freed, and the result:
 * this rank's own error, else the agreed mark's. `who` names the
 * algorithm in error messages. */
typedef int (*xchg_b2_phase2_fn)(b2_call *x, int mpierr, void *arg);
int xchg_b2_run(xchg_call *c, const b2_state *st, const char *who, xchg_b2_phase2_fn phase2,
                void *arg);
/* Phase 2 by messages: one intra-node Bruck, delivering into recvbuf. */
int xchg_b2_phase_intra(b2_call *x);
/* Phase 2's block for member m (the sizes, then what phase 1 brought for
 * it), its length, and its delivery from member j into recvbuf. */
size_t xchg_b2_intra_bytes(void *ctx, int m);
int xchg_b2_intra_pack(void *ctx, int m, void *out);
int xchg_b2_intra_deliver(void *ctx, int j, const void *in, size_t bytes);
/* What phase 1 brought this rank for itself, into recvbuf (no copy out). */
int xchg_b2_deliver_own(b2_call *x);

#endif /* XCHG_ALLTOALLV_BRUCK_2LEVEL_H */
