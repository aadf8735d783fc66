/*
 * padded_alltoall.c - "padded_alltoall": pad every block to the largest,
 * then one MPI_Alltoall.
 *
 * One xchg_mpi_allreduce(MAX) finds the largest packed block B (bytes) of any
 * rank to any rank; every block is packed at the start of its B-byte slot,
 * one MPI_Alltoall of B+8 bytes per pair moves them all, each slot headed
 * by the real length of its block, and each receiver unpacks exactly that
 * many bytes from slot j (more than recvcounts[j] holds: MPI_ERR_TRUNCATE
 * on that receiver, after the exchange; fewer: only those are written). This is
 * the FFT-transpose trick: with small, similar blocks the padding costs less
 * than the latency the vendor's tuned MPI_Alltoall (Bruck or pairwise
 * inside) saves over a loop of irregular messages.
 *
 * Cost: an allreduce (log P latencies) plus MPI_Alltoall of P*B bytes per
 * rank, whatever the real volume: bad when one block is much larger than the
 * others. Memory: 2 x P x (B+8) temporary bytes (padded send and receive
 * buffers). If that exceeds XCHG_MAX_TEMP_BYTES on any rank, all ranks see
 * it from the allreduced values and return MPI_ERR_NO_MEM before any data
 * moves.
 */
#include "bruck_common.h"

#include <limits.h>

int xchg_alltoallv_padded_alltoall(xchg_call *c)
{
    const int P = c->size;
    const char *who = "padded_alltoall";
    size_t B = 0;
    int err = xchg_padded_agree(c, 2 * (size_t)P, 2 * (size_t)P * XCHG_PAD_HEADER, who, &B);
    if (err != MPI_SUCCESS)
        return err;
    if (B == 0) /* every block of every rank is empty: nothing to move */
        return MPI_SUCCESS;
    const size_t S = B + XCHG_PAD_HEADER; /* slot: length header, block, padding */
    if (S > INT_MAX) /* B is global: every rank refuses */
        return xchg_error_code(MPI_ERR_COUNT, "%s: the largest block (%zu bytes) exceeds "
                               "MPI_Alltoall's int count; use another algorithm", who, B);
    char *sbuf = xchg_temp_alloc(c, (size_t)P * S, "padded_alltoall: padded send blocks", &err);
    char *rbuf = NULL;
    if (sbuf)
        rbuf = xchg_temp_alloc(c, (size_t)P * S, "padded_alltoall: padded receive blocks", &err);
    if (!rbuf) { /* only a failed malloc: the budget was agreed above */
        xchg_temp_free(c, sbuf, (size_t)P * S);
        return err;
    }
    /* A packing error is reported after the exchange, which must happen. */
    int perr = MPI_SUCCESS;
    for (int j = 0; j < P; j++) {
        int e = xchg_padded_pack_slot(c, j, sbuf + (size_t)j * S);
        if (perr == MPI_SUCCESS)
            perr = e;
    }
    err = xchg_mpi_alltoall(sbuf, (int)S, MPI_BYTE, rbuf, (int)S, MPI_BYTE, c->comm);
    /* Every block is delivered that can be; the first error is returned. */
    for (int j = 0; j < P && err == MPI_SUCCESS; j++) {
        int e = xchg_padded_unpack_slot(c, j, rbuf + (size_t)j * S, S, who);
        if (perr == MPI_SUCCESS)
            perr = e;
    }
    if (err == MPI_SUCCESS)
        err = perr;
    xchg_temp_free(c, rbuf, (size_t)P * S);
    xchg_temp_free(c, sbuf, (size_t)P * S);
    return err;
}
