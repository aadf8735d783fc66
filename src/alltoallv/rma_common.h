/*
 * rma_common.h - what rma_fence and rma_lock share: the window and how
 * blocks travel through it.
 *
 * Every put moves plain bytes (MPI_BYTE to MPI_BYTE), so no rank ever needs
 * another rank's datatype and any pair of send/receive types with matching
 * signatures works:
 * - the target exposes recvbuf itself when its receive type is contiguous
 *   (the window spans the receive blocks; a block's bytes land exactly where
 *   MPI_Alltoallv would put them), else a packed staging buffer that it
 *   unpacks into recvbuf after the data has arrived;
 * - the origin puts straight from sendbuf when its send type is contiguous,
 *   else from a staging buffer it packs at each start.
 * Each target tells each origin, once at init (one MPI_Alltoall), where in
 * its window the origin's block goes and how many bytes it expects; the
 * block to self never goes through the window.
 */
#ifndef XCHG_RMA_COMMON_H
#define XCHG_RMA_COMMON_H

#include "algo.h"

typedef struct xchg_rma {
    MPI_Win win;
    int direct;             /* the window is recvbuf (else rstage) */
    char *rstage;           /* packed receive staging (!direct) */
    size_t rstage_bytes;
    char *sstage;           /* packed send staging (non-contiguous send type) */
    size_t sstage_bytes;
    MPI_Aint *roff;         /* per source: offset of its block in rstage */
    MPI_Aint *soff;         /* per target: offset of my block in sstage */
    int64_t *tdisp;         /* per target: byte displacement of my block in its window */
    int64_t *sbytes;        /* per peer: bytes I put to it */
    int64_t *rbytes;        /* per peer: bytes it puts to me */
    void *meta;             /* one allocation for the arrays above */
    size_t meta_bytes;
} xchg_rma;

/* Collective: every rank returns an error if any rank's rc is one (the
 * highest error class; `what` names the step for the others). */
int xchg_rma_agree(xchg_call *c, int rc, const char *what);
/* Collective: builds the window on c->comm. no_locks: fence-only use. */
int xchg_rma_setup(xchg_call *c, xchg_rma *w, int no_locks);
/* Packs the send blocks into sstage (no-op for a contiguous send type). */
int xchg_rma_pack(xchg_call *c, xchg_rma *w);
/* Puts my block to peer dst (nothing if it is empty). */
int xchg_rma_put(xchg_call *c, xchg_rma *w, int dst);
/* After all data has arrived: unpacks rstage, copies the self block. */
int xchg_rma_finish(xchg_call *c, xchg_rma *w);
/* Collective: frees the window and the buffers. */
int xchg_rma_teardown(xchg_call *c, xchg_rma *w);

/* Runs a one-shot call through persistent hooks: init, start, wait, free
 * (rma_common.c). */
int xchg_persist_oneshot(const xchg_persist_ops *ops, xchg_call *c);

#endif
