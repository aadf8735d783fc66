/*
 * bruck_padded.c - "bruck_padded": Bruck's algorithm on blocks padded to
 * the largest.
 *
 * One MPI_Allreduce(MAX) finds the largest packed block B; every block is
 * packed into a B-byte slot in rotated order (slot i holds the block for
 * rank+i). At step k = 0 .. ceil(log2 P)-1 the slots whose index has bit k
 * set go, in one message, to rank+2^k, and the same slots arrive from
 * rank-2^k. Afterwards slot i holds the block from rank-i (inverse
 * rotation on unpacking). Correct for every P: slot indices run over
 * 0..P-1, whatever their bits.
 *
 * Cost: allreduce + ceil(log2 P) latencies, about (P/2) x B bytes per step,
 * so (P/2) B log2 P per rank in all: wins for tiny blocks at large P, where
 * latency dominates; loses as soon as blocks are large or very uneven.
 * Memory: (P + 2 m) x B temporary bytes, m <= P/2 the most slots one step
 * moves (slots, outgoing and incoming step buffers), about 2 x P x B. If that
 * exceeds XCHG_MAX_TEMP_BYTES on any rank, all ranks see it from the
 * allreduced values and return MPI_ERR_NO_MEM before any data moves.
 */
#include "bruck_common.h"

#include <string.h>

int xchg_alltoallv_bruck_padded(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    const char *who = "bruck_padded";
    const size_t m = (size_t)xchg_bruck_max_moving(P, 2);
    size_t B = 0;
    int err = xchg_padded_agree(c, (size_t)P + 2 * m, 0, who, &B);
    if (err != MPI_SUCCESS)
        return err;
    char *slots = NULL, *out = NULL, *in = NULL;
    if (B > 0) {
        slots = xchg_temp_alloc(c, (size_t)P * B, "bruck_padded: padded blocks", &err);
        if (slots)
            out = xchg_temp_alloc(c, m * B, "bruck_padded: outgoing step buffer", &err);
        if (out)
            in = xchg_temp_alloc(c, m * B, "bruck_padded: incoming step buffer", &err);
        if (!in) { /* only a failed malloc: the budget was agreed above */
            xchg_temp_free(c, out, m * B);
            xchg_temp_free(c, slots, (size_t)P * B);
            return err;
        }
        /* A packing error is reported after the exchange, which must happen. */
        int perr = MPI_SUCCESS;
        for (int i = 0; i < P; i++) {
            int e = xchg_bruck_pack_for(c, (me + i) % P, slots + (size_t)i * B);
            if (perr == MPI_SUCCESS)
                perr = e;
        }
        for (int w = 1; w < P && err == MPI_SUCCESS; w *= 2) {
            size_t n = 0;
            for (int i = 1; i < P; i++)
                if (i & w) {
                    memcpy(out + n++ * B, slots + (size_t)i * B, B);
                    xchg_charge_copy(B);
                }
            MPI_Request req[4];
            int nr = 0;
            err = xchg_bruck_post(in, n * B, (me - w + P) % P, 0, c->comm, req, &nr);
            if (err == MPI_SUCCESS)
                err = xchg_bruck_post(out, n * B, (me + w) % P, 1, c->comm, req, &nr);
            int werr = xchg_waitall(c, nr, req);
            if (err == MPI_SUCCESS)
                err = werr;
            n = 0;
            for (int i = 1; i < P; i++)
                if (i & w) {
                    memcpy(slots + (size_t)i * B, in + n++ * B, B);
                    xchg_charge_copy(B);
                }
        }
        if (err == MPI_SUCCESS)
            err = perr;
    }
    /* Inverse rotation: slot i came from me-i. */
    for (int i = 0; i < P && err == MPI_SUCCESS; i++) {
        int src = (me - i + P) % P;
        size_t bytes = xchg_bruck_recv_bytes(c, src);
        if (bytes > B)
            err = xchg_error_code(MPI_ERR_COUNT, "%s: recvcounts[%d] asks rank %d for %zu "
                                  "bytes, but no rank sends more than %zu: the send and "
                                  "receive type signatures do not match", who, src, me,
                                  bytes, B);
        else
            err = xchg_bruck_unpack_from(c, src, slots ? slots + (size_t)i * B : NULL, bytes, who);
    }
    xchg_temp_free(c, in, m * B);
    xchg_temp_free(c, out, m * B);
    xchg_temp_free(c, slots, (size_t)P * B);
    return err;
}
