/*
 * p2p_common.h - the safe receive of the point-to-point algorithms (linear,
 * pairwise, scattered), internal to src/alltoallv/.
 *
 * A receive posted for fewer bytes than arrive fails with MPI_ERR_TRUNCATE
 * when it completes, and MPICH raises completion errors of MPI_Wait* on
 * MPI_COMM_WORLD's error handler (fatal by default), not on our private
 * communicator (measured with MPICH 4.0.2: MPI_Wait, Waitall, Waitany,
 * Waitsome, Testall and Request_get_status all abort). A blocking MPI_Recv
 * does report truncation on its own communicator (MPI_ERRORS_RETURN on the
 * private one), having consumed the message. So a small block (up to
 * XCHG_P2P_PROBE_ABOVE bytes, where messages travel eagerly) is received
 * with a blocking MPI_Recv: the senders posted first, so it waits only for
 * that message's flight, and costs what a posted receive costs. A larger
 * block is probed first, then received nonblocking (overlapping the
 * transfers) if it fits; a message that does not fit is drained by a
 * zero-count MPI_Recv. Either way the caller records MPI_ERR_TRUNCATE and
 * goes on, so its partners are never left waiting. (Probing every message
 * cost one MPI_Probe each: linear at P=64, 16 B, took 30.3 us instead of
 * 25.2 in simulation.)
 */
#ifndef XCHG_P2P_COMMON_H
#define XCHG_P2P_COMMON_H

#include "algo.h"

/* Receives the message from src with tag into recvbuf's block from src:
 * small blocks at once (blocking), larger ones probed (blocking) and then
 * received nonblocking into *req when req is not NULL (else blocking) if
 * they fit, else drained. *req is MPI_REQUEST_NULL when nothing is left to
 * wait for. A message too large gives MPI_ERR_TRUNCATE naming
 * recvcounts[src]. `who` names the algorithm in the message. */
#define XCHG_P2P_PROBE_ABOVE 16384
int xchg_p2p_recv_probed(xchg_call *c, int src, int tag, MPI_Request *req, const char *who);

/* Waits for n requests (auto's refresh progressing meanwhile), where
 * receives were posted before their messages were seen: an error of a
 * request comes back as a code, also under MPICH (which raises it on
 * MPI_COMM_WORLD's handler: that handler is MPI_ERRORS_RETURN during the
 * wait). *bad: the index of the first failed request if known, else -1.
 * Every request is complete on return. */
int xchg_p2p_wait_posted(xchg_call *c, int n, MPI_Request req[], int *bad);
/* After a wait that failed (xchg_waitall_statuses: MPI_ERR_PENDING leaves
 * requests active): waits for those still active among req[0..n), their
 * errors ignored (the caller has its error), so that the call leaves
 * nothing in flight. */
void xchg_p2p_drain(int n, MPI_Request req[]);

/* A drained message's error: record it and go on (others: stop). */
static inline int xchg_p2p_is_truncate(int e)
{
    int cls = MPI_SUCCESS;
    if (e != MPI_SUCCESS)
        MPI_Error_class(e, &cls);
    return e != MPI_SUCCESS && cls == MPI_ERR_TRUNCATE;
}

/* Bookkeeping memory (request arrays: bytes per peer) taken even over
 * XCHG_MAX_TEMP_BYTES, still counted, since refusing it on one rank would
 * leave the others waiting: *err then holds the limit's MPI_ERR_NO_MEM, to
 * be returned once the exchange is complete. NULL only if malloc fails. */
void *xchg_p2p_alloc_small(xchg_call *c, size_t bytes, const char *what, int *err);

/* The spread-out exchange with at most K >= 2 requests in flight, tagged
 * tag (p2p_window.c): scattered, and linear beyond XCHG_MAX_INFLIGHT. */
int xchg_p2p_windowed(xchg_call *c, int K, int tag, const char *who);

/* Linear posts 2 (P - 1) requests at once: beyond XCHG_MAX_INFLIGHT (set,
 * and agreed, so every rank decides alike) it runs the windowed engine
 * instead, one-shot and persistent. */
static inline int xchg_linear_bounded(const xchg_call *c)
{
    const int bound = c->cs->settings.max_inflight;
    return bound > 0 && 2 * (long long)(c->size - 1) > bound;
}

#endif
