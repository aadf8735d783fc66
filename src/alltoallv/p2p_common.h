/*
 * p2p_common.h - the safe receive of the point-to-point algorithms (linear,
 * pairwise, scattered), internal to src/alltoallv/.
 *
 * A receive posted for fewer bytes than arrive fails with MPI_ERR_TRUNCATE
 * when it completes, and MPICH raises completion errors of MPI_Wait* on
 * MPI_COMM_WORLD's error handler (fatal by default), not on our private
 * communicator. So these algorithms probe each message first: one that fits
 * is received into the user's block (no truncation possible), one that does
 * not is drained by a zero-count MPI_Recv, whose truncation MPI reports on
 * the private communicator (MPI_ERRORS_RETURN), and the caller records
 * MPI_ERR_TRUNCATE and goes on, so its partners are never left waiting.
 */
#ifndef XCHG_P2P_COMMON_H
#define XCHG_P2P_COMMON_H

#include "xchg_internal.h"

/* Probes the message from src with tag (blocking) and then receives it:
 * into recvbuf's block from src, nonblocking into *req when req is not
 * NULL (else blocking), if it fits; else drains it (*req stays
 * MPI_REQUEST_NULL) and returns MPI_ERR_TRUNCATE naming recvcounts[src].
 * `who` names the algorithm in the message. */
int xchg_p2p_recv_probed(xchg_call *c, int src, int tag, MPI_Request *req, const char *who);

/* Bookkeeping memory (request arrays: bytes per peer) taken even over
 * XCHG_MAX_TEMP_BYTES, still counted, since refusing it on one rank would
 * leave the others waiting: *err then holds the limit's MPI_ERR_NO_MEM, to
 * be returned once the exchange is complete. NULL only if malloc fails. */
void *xchg_p2p_alloc_small(xchg_call *c, size_t bytes, const char *what, int *err);

#endif
