/*
 * baseline_ompi.c - "ompi_model": a model of Open MPI 4.1's default
 * MPI_Alltoallv (coll/tuned, fixed decision), a baseline for simulated
 * comparisons.
 *
 * Models ompi_coll_tuned_alltoallv_intra_dec_fixed of Open MPI 4.1.x
 * (coll_tuned_decision_fixed.c, the same in 4.1.0 to 4.1.8) and the two
 * coll/base algorithms it picks. Written from their description, not their
 * code.
 *
 * The decision looks at the communicator size P only:
 *   P < 4: pairwise;  4 <= P < 64: basic linear;  64 <= P < 128: pairwise;
 *   128 <= P < 256: basic linear;  256 <= P < 1024: pairwise;
 *   P >= 1024: basic linear.
 *
 * pairwise (ompi_coll_base_alltoallv_intra_pairwise): P steps, step 0 to
 * P-1; at step s send to (rank+s) % P and receive from (rank-s+P) % P with
 * one send-receive. Step 0 is the block to self, copied locally. Empty
 * blocks are NOT skipped: a zero-byte message is still exchanged at its
 * step, so every step costs a latency whatever the pattern.
 *
 * basic linear (ompi_coll_base_alltoallv_intra_basic_linear): the block to
 * self copied first (when its send count is nonzero); then a receive from
 * every other rank in increasing rank order 0..P-1, then a send to every
 * other rank in the same increasing order, empty blocks included, and one
 * wait for all. (Open MPI builds these as persistent requests and starts
 * them together; here they are plain nonblocking requests posted in the
 * same order, which moves the same messages at the same moments.) No
 * rotation: every rank's first receive and first send target low ranks.
 *
 * Errors: a failed step, post or request is recorded and the rest of the
 * pattern still runs, so every rank completes it; the first error is
 * returned. MPI_IN_PLACE (Open MPI: a separate in-place algorithm) is not
 * modelled: xchg resolves it into a copy of recvbuf before any algorithm
 * runs.
 */
#include "algo.h"
#include "p2p_common.h"

/* Open MPI 4.1's choice: 1 = basic linear, 0 = pairwise. */
static int ompi_uses_linear(int P)
{
    if (P < 4)
        return 0;
    if (P < 64)
        return 1;
    if (P < 128)
        return 0;
    if (P < 256)
        return 1;
    if (P < 1024)
        return 0;
    return 1;
}

static int ompi_pairwise(xchg_call *c)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_OMPI_MODEL);
    const int P = c->size, me = c->rank;
    int first = xchg_self_copy(c); /* step 0; the other steps run regardless */
    for (int s = 1; s < P; s++) {
        int dst = (me + s) % P, src = (me - s + P) % P;
        int rc = xchg_mpi_sendrecv(xchg_block_addr(c->sendbuf, c->sdispls[dst], &c->st),
                              c->sendcounts[dst], c->st.type, dst, tag,
                              xchg_block_addr(c->recvbuf, c->rdispls[src], &c->rt),
                              c->recvcounts[src], c->rt.type, src, tag,
                              c->comm, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    return first;
}

static int ompi_basic_linear(xchg_call *c)
{
    const int tag = xchg_algo_tag(XCHG_ALGO_OMPI_MODEL);
    const int P = c->size, me = c->rank;
    int first = xchg_self_copy(c); /* nothing to do when the self count is 0 */
    if (P == 1)
        return first;
    int err = MPI_SUCCESS;
    size_t n_max = 2 * (size_t)(P - 1);
    size_t rbytes = sizeof(MPI_Request) * n_max, sbytes = sizeof(MPI_Status) * n_max;
    MPI_Request *req = xchg_temp_alloc(c, rbytes, "ompi_model: request array", &err);
    MPI_Status *st = req ? xchg_temp_alloc(c, sbytes, "ompi_model: status array", &err) : NULL;
    if (!st) {
        if (req)
            xchg_temp_free(c, req, rbytes);
        return err;
    }
    int n = 0;
    for (int i = 0; i < P; i++) {
        if (i == me)
            continue;
        req[n] = MPI_REQUEST_NULL;
        int rc = MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[i], &c->rt), c->recvcounts[i],
                           c->rt.type, i, tag, c->comm, &req[n++]);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    for (int i = 0; i < P; i++) {
        if (i == me)
            continue;
        req[n] = MPI_REQUEST_NULL;
        int rc = MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[i], &c->st), c->sendcounts[i],
                           c->st.type, i, tag, c->comm, &req[n++]);
        if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
            first = rc;
    }
    int failed; /* hooked work (a first call's check) progresses in its waits */
    int rc = xchg_waitall_statuses(c, n, req, st, &failed);
    if (rc != MPI_SUCCESS)
        xchg_p2p_drain(n, req); /* nothing left in flight */
    if (rc == MPI_ERR_IN_STATUS)
        for (int k = 0; k < n; k++)
            if (st[k].MPI_ERROR != MPI_SUCCESS && st[k].MPI_ERROR != MPI_ERR_PENDING) {
                rc = st[k].MPI_ERROR;
                break;
            }
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS)
        first = rc;
    xchg_temp_free(c, st, sbytes);
    xchg_temp_free(c, req, rbytes);
    return first;
}

int xchg_alltoallv_ompi_model(xchg_call *c)
{
    return ompi_uses_linear(c->size) ? ompi_basic_linear(c) : ompi_pairwise(c);
}
