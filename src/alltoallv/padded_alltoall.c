/*
 * padded_alltoall.c - "padded_alltoall": pad every block to the largest,
 * then one MPI_Alltoall.
 *
 * One MPI_Allreduce(MAX) finds the largest packed block B (bytes) of any
 * rank to any rank; every block is packed at the start of its B-byte slot,
 * one MPI_Alltoall of B bytes per pair moves them all, and each receiver
 * unpacks recvcounts[j] elements from slot j (the type signatures match, so
 * that is exactly what j sent; asking for more than B is an error). This is
 * the FFT-transpose trick: with small, similar blocks the padding costs less
 * than the latency the vendor's tuned MPI_Alltoall (Bruck or pairwise
 * inside) saves over a loop of irregular messages.
 *
 * Cost: an allreduce (log P latencies) plus MPI_Alltoall of P*B bytes per
 * rank, whatever the real volume: bad when one block is much larger than the
 * others. Memory: 2 x P x B temporary bytes (padded send and receive
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
    int err = xchg_padded_agree(c, 2 * (size_t)P, 0, who, &B);
    if (err != MPI_SUCCESS)
        return err;
    if (B > INT_MAX) /* B is global: every rank refuses */
        return xchg_error_code(MPI_ERR_COUNT, "%s: the largest block (%zu bytes) exceeds "
                               "MPI_Alltoall's int count; use another algorithm", who, B);
    char *sbuf = NULL, *rbuf = NULL;
    if (B > 0) {
        sbuf = xchg_temp_alloc(c, (size_t)P * B, "padded_alltoall: padded send blocks", &err);
        if (sbuf)
            rbuf = xchg_temp_alloc(c, (size_t)P * B, "padded_alltoall: padded receive blocks",
                                   &err);
        if (!rbuf) { /* only a failed malloc: the budget was agreed above */
            xchg_temp_free(c, sbuf, (size_t)P * B);
            return err;
        }
        /* A packing error is reported after the exchange, which must happen. */
        int perr = MPI_SUCCESS;
        for (int j = 0; j < P; j++) {
            int e = xchg_bruck_pack_for(c, j, sbuf + (size_t)j * B);
            if (perr == MPI_SUCCESS)
                perr = e;
        }
        err = MPI_Alltoall(sbuf, (int)B, MPI_BYTE, rbuf, (int)B, MPI_BYTE, c->comm);
        if (err == MPI_SUCCESS)
            err = perr;
    }
    for (int j = 0; j < P && err == MPI_SUCCESS; j++) {
        size_t bytes = xchg_bruck_recv_bytes(c, j);
        if (bytes > B)
            err = xchg_error_code(MPI_ERR_COUNT, "%s: recvcounts[%d] asks rank %d for %zu "
                                  "bytes, but no rank sends more than %zu: the send and "
                                  "receive type signatures do not match", who, j, c->rank,
                                  bytes, B);
        else
            err = xchg_bruck_unpack_from(c, j, rbuf + (size_t)j * B, bytes, who);
    }
    xchg_temp_free(c, rbuf, (size_t)P * B);
    xchg_temp_free(c, sbuf, (size_t)P * B);
    return err;
}
