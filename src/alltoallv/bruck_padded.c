/*
 * bruck_padded.c - "bruck_padded": Bruck's algorithm on blocks padded to
 * the largest.
 *
 * One xchg_mpi_allreduce(MAX) finds the largest packed block B; every block is
 * packed into a slot of B+8 bytes, headed by its real length (so the
 * receiver writes exactly what was sent and detects a block larger than
 * its receive count: MPI_ERR_TRUNCATE after the exchange), in rotated order (slot i holds the block for
 * rank+i). At step k = 0 .. ceil(log2 P)-1 the slots whose index has bit k
 * set go, in one message, to rank+2^k, and the same slots arrive from
 * rank-2^k. Afterwards slot i holds the block from rank-i (inverse
 * rotation on unpacking). Correct for every P: slot indices run over
 * 0..P-1, whatever their bits.
 *
 * Cost: allreduce + ceil(log2 P) latencies, about (P/2) x B bytes per step,
 * so (P/2) B log2 P per rank in all: wins for tiny blocks at large P, where
 * latency dominates; loses as soon as blocks are large or very uneven.
 * Memory: (P + 2 m) x (B+8) temporary bytes, m <= P/2 the most slots one step
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
    int err = xchg_padded_agree(c, (size_t)P + 2 * m, ((size_t)P + 2 * m) * XCHG_PAD_HEADER,
                                who, &B);
    if (err != MPI_SUCCESS)
        return err;
    if (B == 0) /* every block of every rank is empty: nothing to move */
        return MPI_SUCCESS;
    const size_t S = B + XCHG_PAD_HEADER; /* slot: length header, block, padding */
    char *slots = NULL, *out = NULL, *in = NULL;
    slots = xchg_temp_alloc(c, (size_t)P * S, "bruck_padded: padded blocks", &err);
    if (slots)
        out = xchg_temp_alloc(c, m * S, "bruck_padded: outgoing step buffer", &err);
    if (out)
        in = xchg_temp_alloc(c, m * S, "bruck_padded: incoming step buffer", &err);
    if (!in) { /* only a failed malloc: the budget was agreed above */
        xchg_temp_free(c, out, m * S);
        xchg_temp_free(c, slots, (size_t)P * S);
        return err;
    }
    /* A packing error is reported after the exchange, which must happen. */
    int perr = MPI_SUCCESS;
    for (int i = 0; i < P; i++) {
        int e = xchg_padded_pack_slot(c, (me + i) % P, slots + (size_t)i * S);
        if (perr == MPI_SUCCESS)
            perr = e;
    }
    for (int w = 1; w < P && err == MPI_SUCCESS; w *= 2) {
        size_t n = 0;
        for (int i = 1; i < P; i++)
            if (i & w) {
                memcpy(out + n++ * S, slots + (size_t)i * S, S);
                xchg_charge_copy(S);
            }
        MPI_Request req[4];
        int nr = 0;
        err = xchg_bruck_post(in, n * S, (me - w + P) % P, 0, c->comm, req, &nr);
        if (err == MPI_SUCCESS)
            err = xchg_bruck_post(out, n * S, (me + w) % P, 1, c->comm, req, &nr);
        int werr = xchg_call_waitall(c, nr, req);
        if (err == MPI_SUCCESS)
            err = werr;
        n = 0;
        for (int i = 1; i < P; i++)
            if (i & w) {
                memcpy(slots + (size_t)i * S, in + n++ * S, S);
                xchg_charge_copy(S);
            }
    }
    /* Inverse rotation: slot i came from me-i. Every block is delivered
     * that can be; the first error is returned. */
    for (int i = 0; i < P && err == MPI_SUCCESS; i++) {
        int e = xchg_padded_unpack_slot(c, (me - i + P) % P, slots + (size_t)i * S, S, who);
        if (perr == MPI_SUCCESS)
            perr = e;
    }
    if (err == MPI_SUCCESS)
        err = perr;
    xchg_temp_free(c, in, m * S);
    xchg_temp_free(c, out, m * S);
    xchg_temp_free(c, slots, (size_t)P * S);
    return err;
}
