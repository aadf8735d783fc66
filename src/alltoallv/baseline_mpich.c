/*
 * baseline_mpich.c - "mpich_model": a model of MPICH 4.0's default
 * intra-communicator MPI_Alltoallv, a baseline for simulated comparisons.
 *
 * Models MPIR_Alltoallv_intra_scattered of MPICH 4.0.x, which MPICH's JSON
 * tuning (maint/tuning/coll/mpir/generic.json, reached through the ch4
 * "composition alpha") selects for every intra-communicator call whose
 * sendbuf is not MPI_IN_PLACE. Written from its description, not its code:
 *
 * - Batches of bblock = MPIR_CVAR_ALLTOALL_THROTTLE (default 32) steps: the
 *   batch starting at ii covers steps i = ii .. ii+bblock-1 (fewer in the
 *   last). In a batch, first a receive from (rank+i) % P for each step i,
 *   then a send to (rank-i+P) % P for each step, then one wait for the
 *   whole batch before the next batch is posted.
 * - A block is skipped when its count or its type's size is zero: empty
 *   blocks cost nothing (the two sides agree, as the type signatures match).
 * - The block to self is not copied locally: it is step 0 of the first
 *   batch, an ordinary receive and send to self through the point-to-point
 *   layer (unless it would truncate: then MPI_ERR_TRUNCATE, found locally).
 * - Errors: a failed post or request is recorded and the remaining batches
 *   still run, so the pattern completes on every rank; the first error is
 *   returned.
 * - MPI_IN_PLACE: MPICH 4.0 runs MPIR_Alltoallv_intra_pairwise_sendrecv_replace
 *   instead (P-1 steps of MPI_Sendrecv_replace). Not modelled: xchg resolves
 *   MPI_IN_PLACE into a copy of recvbuf before any algorithm runs, so this
 *   model always plays the scattered path.
 *
 * The throttle is MPICH's own variable, MPIR_CVAR_ALLTOALL_THROTTLE, read
 * from the environment as MPICH does: default 32, 0 meaning P (one batch);
 * agreed across ranks like every setting (src/core/settings.c). (XCHG_THROTTLE, which tunes xchg's own
 * "scattered", does not apply here.) The tests set it small so that ranks
 * 1..8 exercise several batches.
 */
#include "algo.h"
#include "p2p_common.h"

/* The first error a completed batch carries (MPI_ERR_IN_STATUS unpacked). */
static int batch_error(int rc, int n, const MPI_Status *st)
{
    if (rc != MPI_ERR_IN_STATUS)
        return rc;
    for (int k = 0; k < n; k++)
        if (st[k].MPI_ERROR != MPI_SUCCESS && st[k].MPI_ERROR != MPI_ERR_PENDING)
            return st[k].MPI_ERROR;
    return rc;
}

/* MPICH's own variable, read as MPICH reads it, so that the model
 * throttles as the library would. */
static const xchg_setting_def throttle = {"MPIR_CVAR_ALLTOALL_THROTTLE", XCHG_KIND_INT, 1, 1 << 20,
                                          32, "no throttle", NULL, NULL};
const xchg_setting_def *const xchg_mpich_model_settings[] = {&throttle, NULL};

int xchg_alltoallv_mpich_model(xchg_call *c)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_MPICH_MODEL);
    const int P = c->size, me = c->rank;
    int bblock = (int)xchg_setting_of(&c->cs->settings, &throttle);
    if (bblock == 0)
        bblock = P;
    int err = MPI_SUCCESS;
    size_t rbytes = sizeof(MPI_Request) * 2 * (size_t)bblock;
    size_t sbytes = sizeof(MPI_Status) * 2 * (size_t)bblock;
    MPI_Request *req = xchg_temp_alloc(c, rbytes, "mpich_model: request batch", &err);
    if (!req)
        return err;
    MPI_Status *st = xchg_temp_alloc(c, sbytes, "mpich_model: status batch", &err);
    if (!st) {
        xchg_temp_free(c, req, rbytes);
        return err;
    }
    int first = MPI_SUCCESS; /* the first error; later batches still run */
    /* A self block larger than its receive block: Open MPI 4.1 truncates a
     * message to self silently, so find it here; both sides of that message
     * are this rank's, so skipping it cannot leave a peer waiting. */
    size_t self_sbytes = (size_t)c->sendcounts[me] * (size_t)c->st.size;
    size_t self_rbytes = (size_t)c->recvcounts[me] * (size_t)c->rt.size;
    int self_ok = self_sbytes <= self_rbytes;
    if (!self_ok)
        first = xchg_error_code(MPI_ERR_TRUNCATE, "rank %d sends itself %zu bytes but receives "
                                "only %zu (recvcounts[%d])", me, self_sbytes, self_rbytes, me);
    for (int ii = 0; ii < P; ii += bblock) {
        int steps = P - ii < bblock ? P - ii : bblock, n = 0;
        for (int i = 0; i < steps; i++) {
            int src = (me + ii + i) % P;
            if (c->recvcounts[src] == 0 || c->rt.size == 0 || (src == me && !self_ok))
                continue;
            req[n] = MPI_REQUEST_NULL;
            int rc = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                               c->recvcounts[src], c->rt.type, src, tag,
                               c->comm, &req[n]);
            if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
                first = rc;
            n++;
        }
        for (int i = 0; i < steps; i++) {
            int dst = (me - ii - i + P) % P;
            if (c->sendcounts[dst] == 0 || c->st.size == 0 || (dst == me && !self_ok))
                continue;
            req[n] = MPI_REQUEST_NULL;
            int rc = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                               c->sendcounts[dst], c->st.type, dst, tag,
                               c->comm, &req[n]);
            if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
                first = rc;
            n++;
        }
        int failed; /* hooked work (a first call's check) progresses in its waits */
        int rc = batch_error(xchg_waitall_statuses(c, n, req, st, &failed), n, st);
        if (rc != MPI_SUCCESS)
            xchg_p2p_drain(n, req); /* nothing left in flight for the next batch */
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    xchg_temp_free(c, st, sbytes);
    xchg_temp_free(c, req, rbytes);
    return first;
}
