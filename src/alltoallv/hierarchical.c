/*
 * hierarchical.c - "hierarchical": node-aware alltoallv through one leader
 * per node.
 *
 * Nodes: the shared node layout (node_layout.h: shared-memory nodes, or
 * blocks of XCHG_RANKS_PER_NODE ranks), positions ordering the ranks node
 * by node. Each node's lowest rank is its leader (one per node). Leaders
 * talk to each other on the private communicator itself (its tag), so no
 * leader communicator is split. This algorithm's size tables are its
 * node state (node_state.h: built, agreed and cached once).
 *
 * One call, sizes travelling ahead of the data (the block to self is copied
 * locally and takes no part):
 *  1. members -> leader, MPI_Gather on the node: the byte size of each
 *     outgoing block (by destination position), the bytes the member
 *     expects in all (from recvcounts) and an error flag;
 *  2. leader <-> leader, Isend/Irecv (its tag) to every leader:
 *     the L_N x L_M matrix of block sizes from this node N to node M, plus
 *     the merged error flag;
 *  3. leader -> members, MPI_Scatter: each member's incoming block sizes by
 *     source position, its incoming total, and the merged flag;
 *  4. data: members pack their blocks in position order and MPI_Gatherv
 *     them to the leader; leaders exchange one message per node pair with
 *     hindexed byte types that pick each member's segment on the sending
 *     side and put each block straight into its receiving member's slot on
 *     the receiving side (empty node pairs send nothing); MPI_Scatterv
 *     hands each member its blocks, which it unpacks source by source.
 * The sizes a member unpacks are the sender's: a block larger than the
 * receive count gives MPI_ERR_TRUNCATE after the exchange has completed.
 * Receive counts that disagree with the senders' can need more room than
 * declared, known only after step 2: a leader without it drains what
 * arrives for its node and marks its members' incoming total -1 (their
 * outgoing data still leaves), a member without it takes it over the limit
 * (counted); either way every rank takes part in every step and the ranks
 * concerned return MPI_ERR_NO_MEM.
 *
 * Refusal: every rank allocates its data buffers (and checks the int range
 * of the collective counts) in step 1 from values it knows, leaders after
 * step 1 from the members' declared sizes; the first failing rank is merged
 * into the flag, which steps 2 and 3 carry to every leader and then to every
 * member before any data moves. So all ranks refuse together. (A program
 * whose receive counts disagree with the senders' is erroneous; the larger
 * buffer it needs is then taken locally.) The size tables (P+3 entries on a
 * member, O(L P) on a leader) depend only on the grouping, so they are
 * allocated once with the cached state, not per call: every temporary of a
 * call is a data buffer, covered by the flag.
 *
 * Cost: inter-node traffic is (nodes-1) messages per leader instead of
 * L*(P-L) per node: the win when latency dominates (small blocks, many
 * ranks per node). Every byte crosses the node twice more (gather,
 * scatter) and the leader carries its node's whole volume: poor for large
 * blocks. Six latency steps (three node collectives and two leader rounds
 * on the sizes path, then the data path) make it lose to linear on one
 * node. Memory: a member holds its own outgoing and incoming bytes, a
 * leader also its node's (G + R); the leader's cached tables hold about
 * 2 L (P+3) + 2 (L P + N) size entries.
 */
#include "node_state.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct hier_state {
    const xchg_node_layout *nl; /* the communicator's (not owned) */
    int nnodes, lrank, lsize;
    const int *perm;   /* position -> rank: node by node, members by rank */
    const int *first;  /* node -> its first position; first[nnodes] = P */
    /* Size tables every call reuses (kept here, not temporary, so that the
     * only temporaries are data buffers, which the refusal flag covers):
     * the member's header; on a leader the node's tables. */
    void *tab;
    int64_t *mh, *lh, *sh, *smsg, *rmsg;
    MPI_Aint *abk, *rdtmp;
    MPI_Request *req;
    int *ibk, *len;
} hier_state;

static void hier_free(void *p)
{
    hier_state *h = p;
    if (!h)
        return;
    free(h->tab);
    free(h);
}

static int hier_tables(hier_state *h, int P)
{
    const size_t L = (size_t)h->lsize, N = (size_t)h->nnodes, H = (size_t)P + 3;
    size_t maxL = 0; /* largest node: a receive type has maxL * L blocks */
    for (size_t M = 0; M < N; M++)
        if ((size_t)(h->first[M + 1] - h->first[M]) > maxL)
            maxL = (size_t)(h->first[M + 1] - h->first[M]);
    const int leader = h->lrank == 0;
    size_t n64 = H + (leader ? 2 * L * H + 2 * (2 * N + L * P) : 0);
    size_t naint = leader ? N * L + L * P + maxL * L : 0;
    size_t nreq = leader ? 2 * N : 0;
    size_t nint = leader ? 4 * L + N * L + maxL * L : 0;
    char *t = malloc(sizeof(int64_t) * n64 + sizeof(MPI_Aint) * naint +
                     sizeof(MPI_Request) * nreq + sizeof(int) * nint);
    if (!t)
        return xchg_error_code(MPI_ERR_NO_MEM, "hierarchical: no memory for the size "
                               "tables of a node of %zu ranks", L);
    h->tab = t;
    h->mh = (int64_t *)t;
    if (!leader)
        return MPI_SUCCESS;
    h->lh = h->mh + H;
    h->sh = h->lh + L * H;
    h->smsg = h->sh + L * H;
    h->rmsg = h->smsg + 2 * N + L * P;
    h->abk = (MPI_Aint *)(h->rmsg + 2 * N + L * P);
    h->rdtmp = h->abk + N * L + L * P;
    h->req = (MPI_Request *)(h->rdtmp + maxL * L);
    h->ibk = (int *)(h->req + nreq);
    h->len = h->ibk + 4 * L;
    return MPI_SUCCESS;
}

/* The tables over the node layout, on this rank (xchg_node_state_of
 * agrees on the outcome, so a failure is the same on every rank and auto
 * stops choosing hierarchical at once). */
static int hier_build(xchg_comm_state *cs, const xchg_node_layout *nl, void **out)
{
    hier_state *h = calloc(1, sizeof *h);
    *out = h;
    if (!h)
        return xchg_error_code(MPI_ERR_NO_MEM, "hierarchical: no memory for node tables "
                               "on rank %d", cs->rank);
    h->nl = nl;
    h->nnodes = nl->nnodes, h->lrank = nl->lrank, h->lsize = nl->lsize;
    h->perm = nl->perm, h->first = nl->first;
    return hier_tables(h, cs->size);
}

static const xchg_node_state_ops hier_ops = {XCHG_ALGO_HIERARCHICAL,
                                             "hierarchical: making the size tables",
                                             hier_build, hier_free};

/* Error flags travel as two int64: first failing rank + 1 (0: none) and its
 * error class. Merging keeps the lowest rank, so every rank ends up with the
 * same verdict. */
static void flag_merge(int64_t *dst, const int64_t *src)
{
    if (src[0] && (!dst[0] || src[0] < dst[0])) {
        dst[0] = src[0];
        dst[1] = src[1];
    }
}

int xchg_hierarchical_prepare(xchg_comm_state *cs)
{
    return xchg_node_state_prepare(cs, &hier_ops);
}

int xchg_hierarchical_ready(const xchg_comm_state *cs)
{
    return xchg_node_state_ready(cs, &hier_ops);
}

/* One call's state across hierarchical's four steps (the functions
 * below, in order; each returns an error to stop, which every rank of the
 * call reaches alike where a step's collective carries it). */
typedef struct hier_run {
    xchg_call *c;
    hier_state *h;
    int P, me, L, N, leader, H;
    int tag;           /* hierarchical's (registry) */
    const int *perm, *first;
    int64_t ssz, rsz;
    int myerr, lerr;   /* this rank's error; a local one kept for the end */
    int node_lost;     /* leader: no room for the node's incoming data */
    /* tables (cached in h) */
    int64_t *mh, *lh, *sh, *smsg, *rmsg;
    MPI_Aint *rdtmp, *sdisp, *rdisp;
    MPI_Request *req;
    int *gcount, *goff, *rcount, *roff, *slen, *rlen;
    /* temporaries, sizes kept for xchg_temp_free */
    char *obuf, *ibuf, *G, *R;
    size_t obuf_b, ibuf_b, G_b, R_b;
    int64_t out_total, in_decl, R_decl, in_recv;
    int in_lost;       /* our leader has no room for our node */
    int64_t flag[2];   /* the merged failure flag: first failing rank + 1, class */
} hier_run;

/* 1. Members tell the leader their sizes (gathered to it) and allocate. */
static int members_sizes(hier_run *x)
{
    xchg_call *c = x->c;
    hier_state *h = x->h;
    const int P = x->P, me = x->me, H = x->H, *perm = x->perm;
    const int64_t ssz = x->ssz, rsz = x->rsz;
    int64_t *mh = x->mh, *lh = x->lh;
    int err = MPI_SUCCESS;
    int rc;
    /* an argument error (zero counts then) or a failed self copy (no
     * memory for a non-contiguous block) is flagged like any other, so that
     * all ranks refuse together */
    x->myerr = c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);

    /* ---- 1. members tell the leader their sizes and allocate ---- */
    for (int p = 0; p < P; p++) {
        int r = perm[p];
        mh[p] = r == me ? 0 : (int64_t)c->sendcounts[r] * ssz;
        x->out_total += mh[p];
    }
    for (int r = 0; r < P; r++)
        if (r != me)
            x->in_decl += (int64_t)c->recvcounts[r] * rsz;
    mh[P] = x->in_decl;
    if (x->myerr != MPI_SUCCESS) {
        /* flagged below */
    } else if (x->out_total > INT_MAX || x->in_decl > INT_MAX) {
        x->myerr = xchg_error_code(MPI_ERR_COUNT, "hierarchical: rank %d sends %lld and "
                                "receives %lld bytes, beyond the int range of its node "
                                "collectives", me, (long long)x->out_total, (long long)x->in_decl);
    } else {
        x->obuf_b = (size_t)x->out_total;
        x->ibuf_b = (size_t)x->in_decl;
        if ((x->obuf = xchg_temp_alloc(c, x->obuf_b, "hierarchical: outgoing blocks", &x->myerr)))
            x->ibuf = xchg_temp_alloc(c, x->ibuf_b, "hierarchical: incoming blocks", &x->myerr);
    }
    mh[P + 1] = x->myerr != MPI_SUCCESS ? me + 1 : 0;
    mh[P + 2] = 0;
    if (x->myerr != MPI_SUCCESS && MPI_Error_class(x->myerr, &rc) == MPI_SUCCESS)
        mh[P + 2] = rc;
    x->flag[0] = mh[P + 1];
    x->flag[1] = mh[P + 2];

    err = xchg_mpi_gather(mh, H, MPI_INT64_T, lh, H, MPI_INT64_T, 0, h->nl->node);
    return err;
}

/* 2. Leaders (steps 2a-2c): allocate the node buffers, ... */
static int leaders_alloc(hier_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, me = x->me, L = x->L, H = x->H;
    int64_t *lh = x->lh;
    int *gcount = x->gcount, *goff = x->goff;
    int64_t gtot = 0;
    for (int l = 0; l < L; l++) {
        const int64_t *row = lh + (size_t)l * H;
        flag_merge(x->flag, row + P + 1);
        int64_t t = 0;
        for (int p = 0; p < P; p++)
            t += row[p];
        /* members checked their own totals against INT_MAX */
        gcount[l] = (int)(t > INT_MAX ? 0 : t);
        goff[l] = (int)(gtot > INT_MAX ? 0 : gtot);
        gtot += t;
        x->R_decl += row[P];
    }
    if (gtot > INT_MAX || x->R_decl > INT_MAX) {
        x->lerr = xchg_error_code(MPI_ERR_COUNT, "hierarchical: node of rank %d moves %lld "
                               "bytes out and %lld in, beyond the int range of its "
                               "node collectives", me, (long long)gtot,
                               (long long)x->R_decl);
    } else {
        x->G_b = (size_t)gtot;
        x->R_b = (size_t)x->R_decl;
        if ((x->G = xchg_temp_alloc(c, x->G_b, "hierarchical: node outgoing data", &x->lerr)))
            x->R = xchg_temp_alloc(c, x->R_b, "hierarchical: node incoming data", &x->lerr);
    }
    if (x->lerr != MPI_SUCCESS) {
        int cls;
        MPI_Error_class(x->lerr, &cls);
        int64_t f[2] = {me + 1, cls};
        flag_merge(x->flag, f);
        if (x->myerr == MPI_SUCCESS)
            x->myerr = x->lerr;
        x->lerr = MPI_SUCCESS; /* carried by the flag from here on */
    }
    return MPI_SUCCESS;
}

/* 2b. ... exchange the size tables and failure flags, ... */
static int leaders_sizes(hier_run *x)
{
    xchg_call *c = x->c;
    const int L = x->L, N = x->N, H = x->H, *first = x->first;
    int64_t *lh = x->lh, *smsg = x->smsg, *rmsg = x->rmsg;
    MPI_Request *req = x->req;
    int *goff = x->goff;
    MPI_Aint *sdisp = x->sdisp;
    int *slen = x->slen;
    int err = MPI_SUCCESS;
    /* Send-side segments: member l's blocks for node M, in G. */
    for (int l = 0; l < L; l++) {
        const int64_t *row = lh + (size_t)l * H;
        MPI_Aint run = goff[l];
        for (int M = 0; M < N; M++) {
            int64_t t = 0;
            for (int p = first[M]; p < first[M + 1]; p++)
                t += row[p];
            sdisp[(size_t)M * L + l] = run;
            slen[(size_t)M * L + l] = (int)t;
            run += (MPI_Aint)t;
        }
    }
    /* Size messages: to node M, [flag, S[l][m] for l < L, m < L_M]. */
    int64_t *sp = smsg, *rp = rmsg;
    int nr = 0;
    for (int M = 0; M < N; M++) {
        int LM = first[M + 1] - first[M];
        err = MPI_Irecv(rp, 2 + LM * L, MPI_INT64_T, x->perm[first[M]], x->tag, c->comm,
                        &req[nr++]);
        if (err != MPI_SUCCESS)
            break;
        rp += 2 + (size_t)LM * L;
    }
    for (int M = 0; M < N && err == MPI_SUCCESS; M++) {
        int LM = first[M + 1] - first[M];
        sp[0] = x->flag[0];
        sp[1] = x->flag[1];
        for (int l = 0; l < L; l++)
            for (int m = 0; m < LM; m++)
                sp[2 + l * LM + m] = lh[(size_t)l * H + first[M] + m];
        err = MPI_Isend(sp, 2 + L * LM, MPI_INT64_T, x->perm[first[M]], x->tag, c->comm,
                        &req[nr++]);
        sp += 2 + (size_t)L * LM;
    }
    int werr = xchg_call_waitall(c, nr, req);
    if (err == MPI_SUCCESS)
        err = werr;
    return err;
}

/* 2c. ... and merge them into every member's scatter header. */
static int leaders_header(hier_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, L = x->L, N = x->N, H = x->H, *first = x->first;
    int64_t *sh = x->sh, *rmsg = x->rmsg;
    int *rcount = x->rcount, *roff = x->roff;
    MPI_Aint *rdisp = x->rdisp;
    /* Every leader merges every leader's flag: the same verdict. Then
     * the scatter header: member m's sizes by source position. */
    int64_t *rp = rmsg;
    int64_t R_act = 0;
    for (int M = 0; M < N; M++) {
        int LM = first[M + 1] - first[M];
        flag_merge(x->flag, rp);
        for (int l2 = 0; l2 < LM; l2++)
            for (int m = 0; m < L; m++)
                sh[(size_t)m * H + first[M] + l2] = rp[2 + l2 * L + m];
        rp += 2 + (size_t)LM * L;
    }
    for (int m = 0; m < L; m++) {
        int64_t *row = sh + (size_t)m * H, t = 0;
        MPI_Aint *rd = rdisp + (size_t)m * P;
        roff[m] = (int)R_act;
        for (int p = 0; p < P; p++) {
            rd[p] = (MPI_Aint)(R_act + t);
            t += row[p];
        }
        row[P] = t;
        row[P + 1] = x->flag[0];
        row[P + 2] = x->flag[1];
        rcount[m] = (int)(t > INT_MAX ? 0 : t);
        R_act += t;
    }
    if (!x->flag[0] && R_act > x->R_decl) {
        /* Receive counts disagree with the senders': erroneous, but
         * take the room rather than overrun. Without it the leader
         * still takes part in everything that carries other nodes'
         * data: it drains what arrives for its node and tells its
         * members (incoming total -1) that their incoming data is lost;
         * their outgoing data still leaves correctly. */
        xchg_temp_free(c, x->R, x->R_b);
        x->R_b = (size_t)R_act;
        if (!(x->R = xchg_temp_alloc(c, x->R_b, "hierarchical: node incoming data", &x->lerr))) {
            x->R_b = 0;
            x->node_lost = x->lerr;
            for (int m = 0; m < L; m++)
                sh[(size_t)m * H + P] = -1;
        }
    }
    return MPI_SUCCESS;
}

/* 3. Members learn their incoming sizes and the verdict. */
static int members_verdict(hier_run *x)
{
    xchg_call *c = x->c;
    hier_state *h = x->h;
    const int P = x->P, me = x->me, H = x->H;
    int64_t *mh = x->mh, *sh = x->sh;
    int err = MPI_SUCCESS;
    /* ---- 3. members learn their incoming sizes and the verdict ---- */
    if ((err = xchg_mpi_scatter(sh, H, MPI_INT64_T, mh, H, MPI_INT64_T, 0, h->nl->node)) != MPI_SUCCESS)
        return err;
    if (mh[P + 1]) {
        err = x->myerr != MPI_SUCCESS
                  ? x->myerr
                  : xchg_error_code((int)mh[P + 2], "hierarchical: rank %d could not take "
                                    "part (see its error), so no rank exchanged",
                                    (int)(mh[P + 1] - 1));
        return err;
    }
    /* From here on every rank takes part in every step, whatever fails
     * locally: the other nodes' data passes through. Local errors are kept
     * in lerr and returned at the end. */
    x->in_lost = mh[P] < 0; /* our leader has no room for our node */
    x->in_recv = x->in_lost ? 0 : mh[P]; /* bytes the Scatterv gives us */
    if (x->in_lost) {
        x->lerr = x->node_lost != MPI_SUCCESS
                   ? x->node_lost
                   : xchg_error_code(MPI_ERR_NO_MEM, "hierarchical: the leader of rank %d's "
                                     "node had no temporary memory for the node's incoming "
                                     "data (XCHG_MAX_TEMP_BYTES), so rank %d received "
                                     "nothing", me, me);
    } else if (mh[P] > (int64_t)x->ibuf_b) { /* erroneous receive counts, as above */
        xchg_temp_free(c, x->ibuf, x->ibuf_b);
        int aerr = MPI_SUCCESS;
        char *bigger = xchg_temp_alloc(c, (size_t)mh[P], "hierarchical: incoming blocks",
                                       &aerr);
        if (!bigger && c->temp_limit != SIZE_MAX) {
            /* Over the limit: the leader is about to send us these bytes in
             * a collective, and a truncated collective receive is not
             * something to rely on. Take them anyway (still counted),
             * deliver nothing, report the limit's error. */
            size_t limit = c->temp_limit;
            c->temp_limit = SIZE_MAX;
            int merr = MPI_SUCCESS;
            bigger = xchg_temp_alloc(c, (size_t)mh[P], "hierarchical: incoming blocks", &merr);
            c->temp_limit = limit;
            x->lerr = aerr;
        }
        if (bigger) {
            x->ibuf = bigger;
            x->ibuf_b = (size_t)mh[P];
        } else {
            /* malloc itself failed: receive what fits (the Scatterv reports
             * the truncation on this rank only) and deliver nothing */
            x->lerr = aerr;
            x->ibuf_b = 0;
            x->ibuf = xchg_temp_alloc(c, 0, "hierarchical: incoming blocks", &aerr);
            x->in_recv = 0;
        }
    }
    return err;
}

/* 4a. Data: members pack their blocks, gathered to the leader. */
static int pack_gather(hier_run *x)
{
    xchg_call *c = x->c;
    hier_state *h = x->h;
    const int P = x->P, me = x->me, *perm = x->perm;
    const int64_t ssz = x->ssz;
    int *gcount = x->gcount, *goff = x->goff;
    int err = MPI_SUCCESS;
    /* ---- 4. data: pack, gather, leaders exchange, scatter, unpack ---- */
    {
        /* a packing error (MPI_Pack itself failing) is reported at the end;
         * the blocks still travel, since their receivers are waiting */
        size_t off = 0;
        for (int p = 0; p < P; p++) {
            int r = perm[p];
            if (r == me)
                continue;
            int e = xchg_pack_block(c->sendbuf, c->sdispls[r], c->sendcounts[r], &c->st,
                                    x->obuf + off);
            if (x->lerr == MPI_SUCCESS)
                x->lerr = e;
            off += (size_t)c->sendcounts[r] * (size_t)ssz;
        }
    }
    err = xchg_mpi_gatherv(x->obuf, (int)x->out_total, MPI_BYTE, x->G, gcount, goff, MPI_BYTE, 0,
                           h->nl->node);
    return err;
}

/* 4b. Leaders exchange the node data, one message per node pair. */
static int leaders_exchange(hier_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, L = x->L, N = x->N, leader = x->leader, *first = x->first;
    int64_t *rmsg = x->rmsg;
    MPI_Aint *rdtmp = x->rdtmp;
    MPI_Request *req = x->req;
    MPI_Aint *sdisp = x->sdisp, *rdisp = x->rdisp;
    int *slen = x->slen, *rlen = x->rlen;
    int err = MPI_SUCCESS;
    if (leader) {
        int nr = 0;
        size_t unpack_pieces = 0, unpack_bytes = 0;
        const int64_t *rp = rmsg;
        for (int M = 0; M < N && err == MPI_SUCCESS; M++) {
            int LM = first[M + 1] - first[M], k = 0;
            int64_t t = 0;
            /* blocks arrive source member major, destination member minor */
            for (int l2 = 0; l2 < LM; l2++)
                for (int m = 0; m < L; m++, k++) {
                    rlen[k] = (int)rp[2 + l2 * L + m];
                    rdtmp[k] = rdisp[(size_t)m * P + first[M] + l2];
                    t += rlen[k];
                }
            rp += 2 + (size_t)LM * L;
            if (t == 0 || x->node_lost != MPI_SUCCESS) /* node_lost: drained below */
                continue;
            for (int q = 0; q < k; q++)
                unpack_pieces += rlen[q] > 0;
            unpack_bytes += (size_t)t;
            MPI_Datatype ty;
            err = MPI_Type_create_hindexed(k, rlen, rdtmp, MPI_BYTE, &ty);
            if (err == MPI_SUCCESS && (err = MPI_Type_commit(&ty)) == MPI_SUCCESS) {
                err = MPI_Irecv(x->R, 1, ty, x->perm[first[M]], x->tag, c->comm, &req[nr++]);
                MPI_Type_free(&ty); /* freed when the receive completes */
            }
        }
        for (int M = 0; M < N && err == MPI_SUCCESS; M++) {
            int64_t t = 0;
            for (int l = 0; l < L; l++)
                t += slen[(size_t)M * L + l];
            if (t == 0)
                continue;
            /* MPI packs the members' segments into one message (and
             * unpacks the received ones below): charged in simulation as
             * explicit copies would be (SMPI does not) */
            xchg_charge_pieces(slen + (size_t)M * L, L);
            MPI_Datatype ty;
            err = MPI_Type_create_hindexed(L, slen + (size_t)M * L, sdisp + (size_t)M * L,
                                           MPI_BYTE, &ty);
            if (err == MPI_SUCCESS && (err = MPI_Type_commit(&ty)) == MPI_SUCCESS) {
                err = MPI_Isend(x->G, 1, ty, x->perm[first[M]], x->tag, c->comm, &req[nr++]);
                MPI_Type_free(&ty);
            }
        }
        if (x->node_lost != MPI_SUCCESS && err == MPI_SUCCESS) {
            /* No room: drain every nonempty message for this node, with a
             * zero-count receive whose truncation MPI_Recv reports on the
             * private communicator (MPI_ERRORS_RETURN); our sends are
             * posted, so this cannot block them. */
            static char sink[1];
            rp = rmsg;
            for (int M = 0; M < N; M++) {
                int LM = first[M + 1] - first[M];
                int64_t t = 0;
                for (int q = 0; q < LM * L; q++)
                    t += rp[2 + q];
                rp += 2 + (size_t)LM * L;
                if (t > 0)
                    xchg_mpi_recv(sink, 0, MPI_BYTE, x->perm[first[M]], x->tag, c->comm,
                             MPI_STATUS_IGNORE);
            }
        }
        int werr = xchg_call_waitall(c, nr, req);
        xchg_charge_copies(unpack_pieces, unpack_bytes);
        if (err == MPI_SUCCESS)
            err = werr;
        if (err != MPI_SUCCESS)
            return err;
    }
    return err;
}

/* 4c. Scattered back to the members, who unpack it. */
static int scatter_unpack(hier_run *x)
{
    xchg_call *c = x->c;
    hier_state *h = x->h;
    const int P = x->P, me = x->me, *perm = x->perm;
    int64_t *mh = x->mh;
    int *rcount = x->rcount, *roff = x->roff;
    int err = MPI_SUCCESS;
    if (x->in_lost) { /* the node skips the Scatterv together: nothing to hand out */
        err = x->lerr;
        return err;
    }
    err = xchg_mpi_scatterv(x->R, rcount, roff, MPI_BYTE, x->ibuf, (int)x->in_recv, MPI_BYTE, 0, h->nl->node);
    if (x->lerr != MPI_SUCCESS || err != MPI_SUCCESS) {
        err = x->lerr != MPI_SUCCESS ? x->lerr : err;
        return err;
    }
    size_t off = 0;
    for (int p = 0; p < P; p++) {
        int r = perm[p];
        int64_t b = mh[p];
        if (r == me || b == 0)
            continue;
        err = xchg_unpack_checked(c, "hierarchical", r, x->ibuf + off, b, err);
        off += (size_t)b;
    }
    return err;
}

int xchg_alltoallv_hierarchical(xchg_call *c)
{
    const int P = c->size;
    if (P == 1)
        return xchg_self_copy(c);
    void *state = NULL;
    int rc = xchg_node_state_of(c->cs, &hier_ops, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    hier_state *h = state;

    hier_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.h = h, x.P = P, x.me = c->rank, x.tag = xchg_algo_tag(XCHG_ALGO_HIERARCHICAL);
    x.L = h->lsize, x.N = h->nnodes, x.leader = h->lrank == 0;
    x.perm = h->perm, x.first = h->first;
    x.H = P + 3; /* header: P sizes, a total, the flag */
    x.ssz = c->st.size, x.rsz = c->rt.size;
    x.mh = h->mh, x.lh = h->lh, x.sh = h->sh, x.smsg = h->smsg, x.rmsg = h->rmsg;
    x.rdtmp = h->rdtmp, x.req = h->req;
    x.gcount = h->ibk, x.goff = h->ibk ? h->ibk + x.L : NULL;
    x.rcount = h->ibk ? h->ibk + 2 * x.L : NULL, x.roff = h->ibk ? h->ibk + 3 * x.L : NULL;
    x.sdisp = h->abk, x.rdisp = h->abk ? h->abk + (size_t)x.N * x.L : NULL;
    x.slen = h->len, x.rlen = h->len ? h->len + (size_t)x.N * x.L : NULL;
    x.myerr = x.lerr = x.node_lost = MPI_SUCCESS;

    int err = members_sizes(&x);
    if (err == MPI_SUCCESS && x.leader && (err = leaders_alloc(&x)) == MPI_SUCCESS &&
        (err = leaders_sizes(&x)) == MPI_SUCCESS)
        err = leaders_header(&x);
    if (err == MPI_SUCCESS)
        err = members_verdict(&x);
    if (err == MPI_SUCCESS)
        err = pack_gather(&x);
    if (err == MPI_SUCCESS && x.leader)
        err = leaders_exchange(&x);
    if (err == MPI_SUCCESS)
        err = scatter_unpack(&x);

    xchg_temp_free(c, x.R, x.R_b);
    xchg_temp_free(c, x.G, x.G_b);
    xchg_temp_free(c, x.ibuf, x.ibuf_b);
    xchg_temp_free(c, x.obuf, x.obuf_b);
    return err;
}
