/*
 * request.h - the one request type behind xchg_request (request.c).
 *
 * Every kind of request is a mode: an operations table (xchg_request_ops)
 * and the mode's own state (ctx). The persistent and nonblocking
 * alltoallv requests (persistent.c), MPI's own persistent request for
 * large counts (persistent.c), the neighbour requests (neighbor.c) and the
 * large-count neighbour requests (neighbor_large_count.c) are instances.
 *
 * xchg_start, xchg_wait, xchg_test, xchg_waitall and xchg_request_free
 * dispatch through the table only. What MPI says of inactive requests
 * holds for every mode because only request.c sets and reads whether a
 * request is active: a wait or test on a request that is not active (never
 * started, completed, or XCHG_REQUEST_NULL) returns at once, without
 * calling the mode.
 */
#ifndef XCHG_REQUEST_H
#define XCHG_REQUEST_H

#include "select/select.h"

#include <stddef.h>

/* A mode. ctx is the mode's state; the request is active for every call
 * below but free.
 * start: begins one exchange (after what was started before on the
 *   communicator, as the mode needs). On failure it completes what it
 *   began (the partners wait for this exchange) and returns the error.
 *   NULL: the request is made started by a nonblocking call and is never
 *   restarted (xchg_start refuses it).
 * test: sets *done once the exchange is complete (an error also ends it).
 * wait: completes the exchange.
 * end: NULL, or what the mode does each time an exchange ends, however it
 *   ends (a completing test or wait, or a failed start): its stats.
 * free: releases what the mode holds (the request is inactive); may be
 *   collective. The ctx of xchg_request_of_ops is the mode's to free; the
 *   ctx of xchg_request_alloc goes with the request.
 * algo, neighbor_algo: NULL, or the algorithm the request runs (what
 *   xchg_request_algo and xchg_request_neighbor_algo tell).
 * to_mpi: NULL, or where the active exchange is one MPI request with
 *   nothing of the mode's left to do, hands it to *out and returns 1
 *   (the mode then holds nothing in flight; free follows). */
typedef struct xchg_request_ops {
    int (*start)(void *ctx);
    int (*test)(void *ctx, int *done);
    int (*wait)(void *ctx);
    void (*end)(void *ctx);
    int (*free)(void *ctx);
    xchg_algo (*algo)(void *ctx);
    xchg_neighbor_algo (*neighbor_algo)(void *ctx);
    int (*to_mpi)(void *ctx, MPI_Request *out);
} xchg_request_ops;

/* A request whose mode state (ctx_size bytes, zeroed, at *ctx) lives in
 * the same allocation; NULL when out of memory. It is the maker's until
 * bound: on a failed init, xchg_request_discard frees it (once the maker
 * has released what ctx holds; NULL is allowed). */
xchg_request xchg_request_alloc(size_t ctx_size, void **ctx);
void xchg_request_discard(xchg_request r);

/* Makes r a request of mode ops on comm (its errors go to comm's error
 * handler while comm lives), retaining cs (as MPI keeps a communicator for
 * its pending requests). active: started by its maker. */
void xchg_request_bind(xchg_request r, const xchg_request_ops *ops, MPI_Comm comm,
                       xchg_comm_state *cs, int active);

/* The same for a ctx allocated apart (ops->free releases it). On failure
 * (MPI_ERR_NO_MEM, not raised) nothing is kept: ctx stays the caller's. */
int xchg_request_of_ops(MPI_Comm comm, xchg_comm_state *cs, const xchg_request_ops *ops,
                        void *ctx, int active, xchg_request *req);

/* A datatype a request keeps: predefined ones as they are, a duplicate of
 * a derived one (so the caller may free theirs); and its release
 * (MPI_DATATYPE_NULL afterwards; MPI_DATATYPE_NULL is allowed). */
int xchg_type_keep(MPI_Datatype t, MPI_Datatype *out);
void xchg_type_release(MPI_Datatype *t);

#endif /* XCHG_REQUEST_H */
