/*
 * grid.c - "grid": alltoallv in two hops through a sqrt(P) x sqrt(P) grid.
 *
 * Ranks fill a grid row by row: C = ceil(sqrt(P)) columns, R = ceil(P/C)
 * rows, rank r at (r / C, r % C); the last row may be partial, holding
 * columns 0 .. W-1 only (W = P - (R-1) C). A block from s = (rs, cs) to
 * d = (rd, cd) goes first along s's row to the intermediate (rs, cd), then
 * along column cd to d. When (rs, cd) does not exist (s in a partial last
 * row, cd >= W), the intermediate is (R-2, cd), in the last full row: so
 * every rank sends one phase-1 message per column and, as intermediate,
 * one phase-2 message to each rank of its own column; a rank of row R-2 in
 * a column >= W also forwards for the last row. Messages per rank: about
 * C + R ~ 2 sqrt(P) instead of P-1, each byte sent twice.
 *
 * Sizes travel ahead of the data, so no rank needs a global maximum:
 *  1. s -> each phase-1 target: the byte sizes of its blocks for that
 *     column (grid's first tag);
 *  2. every rank allocates its packed outgoing blocks, the blocks it holds
 *     as intermediate (known from step 1) and its incoming blocks (from its
 *     recvcounts), checks the int range of its messages, and one
 *     MPI_Allreduce of "lowest failing rank" makes every rank refuse
 *     together (MPI_ERR_NO_MEM / MPI_ERR_COUNT) before any data moves;
 *  3. phase-1 data, one packed segment per column (its third tag), and,
 *     at the same time, the phase-2 sizes from each intermediate to each
 *     rank of its column (its second);
 *  4. phase-2 data (its fourth): an hindexed byte type picks, from
 *     the intermediate's buffer, the block of every source for that
 *     destination; the destination unpacks by source with the sender's
 *     sizes (a block larger than recvcounts allows: MPI_ERR_TRUNCATE after
 *     the exchange). Empty data messages are skipped (both sides know the
 *     size); the block to self is copied locally.
 * Its four tags (registry) keep the four kinds apart between one pair.
 * Receive counts that disagree with the senders' can need a larger
 * incoming buffer, known only in step 4: a rank that cannot get it drains
 * its phase-2 messages and returns MPI_ERR_NO_MEM; others are unaffected.
 *
 * Cost: 2 latency rounds of data (plus the size round and the allreduce)
 * with ~2 sqrt(P) messages per rank, against P-1 for linear, at twice the
 * volume: the win for small blocks at large P. Memory: outgoing + held +
 * incoming bytes (about 3x this rank's share) as temporaries; the shape and
 * the size tables (P + O(sqrt(P)^2) entries) depend only on the
 * communicator and are kept in grid's slot of the state (xchg_algo_slot).
 */
#include "algo.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The four kinds of message, by their offset from grid's first tag. */
enum { TAG_SIZE1, TAG_SIZE2, TAG_DATA1, TAG_DATA2 };

static int grid_tag(int kind)
{
    return xchg_algo_tag(XCHG_ALGO_GRID) + kind;
}

typedef struct grid_shape {
    int P, C, R, W; /* columns, rows, width of the last row */
} grid_shape;

/* Ranks in column c. */
static int col_len(const grid_shape *g, int c) { return c < g->W ? g->R : g->R - 1; }

/* The intermediate of blocks from s to any rank of column c. */
static int grid_inter(const grid_shape *g, int s, int c)
{
    int rs = s / g->C;
    return rs * g->C + c < g->P ? rs * g->C + c : (g->R - 2) * g->C + c;
}

/* The sources whose blocks intermediate i forwards, ascending: its row, and
 * the partial last row if i is in row R-2 at a column the last row lacks. */
static int grid_sources(const grid_shape *g, int i, int *src)
{
    int ri = i / g->C, ci = i % g->C, n = 0;
    for (int s = ri * g->C; s < (ri + 1) * g->C && s < g->P; s++)
        src[n++] = s;
    if (g->R >= 2 && ri == g->R - 2 && ci >= g->W)
        for (int s = (g->R - 1) * g->C; s < g->P; s++)
            src[n++] = s;
    return n;
}

/* Tables of one communicator: the shape and every size table a call
 * reuses, allocated once (so the only temporaries of a call are the data
 * buffers, which the agreed refusal covers). */
typedef struct grid_state {
    grid_shape g;
    int K, nsrc;            /* ranks in my column; sources I forward for */
    size_t maxsrc, nreq;
    int64_t *s1;            /* P: my block sizes, column by column */
    int64_t *r1;            /* nsrc x K: sizes I hold, by source */
    int64_t *s2;            /* K x nsrc: phase-2 sizes, by destination */
    int64_t *r2;            /* K x maxsrc: phase-2 sizes received */
    int64_t *dtot;          /* K: bytes from each column member */
    MPI_Aint *boff;         /* nsrc+1: my sources' segments in B */
    MPI_Aint *disp2;        /* K x nsrc: phase-2 block addresses in B */
    MPI_Request *req;       /* nreq */
    int *tgt;               /* C: phase-1 targets */
    int *src;               /* nsrc: my sources */
    int *len2;              /* K x nsrc: phase-2 block lengths */
    int *nsrcj;             /* K: sources of each column member */
    int *tmpsrc;            /* maxsrc: scratch */
} grid_state;

static int grid_build(xchg_call *c, grid_state **out)
{
    const int P = c->size, me = c->rank;
    grid_shape g = {P, 1, 0, 0};
    while (g.C * g.C < P)
        g.C++;
    g.R = (P + g.C - 1) / g.C;
    g.W = P - (g.R - 1) * g.C;
    const int C = g.C, K = col_len(&g, me % C);
    const size_t maxsrc = 2 * (size_t)C;
    const size_t ni64 = (size_t)P + maxsrc * K * 3 + (size_t)K;
    const size_t naint = maxsrc + 1 + (size_t)K * maxsrc;
    const size_t nreq = 4 * (size_t)C + 4 * (size_t)K + 4;
    const size_t nint = (size_t)C + 2 * maxsrc + (size_t)K * maxsrc + (size_t)K;
    grid_state *s = malloc(sizeof *s + sizeof(int64_t) * ni64 + sizeof(MPI_Aint) * naint +
                           sizeof(MPI_Request) * nreq + sizeof(int) * nint);
    if (!s)
        return xchg_error_code(MPI_ERR_NO_MEM, "grid: no memory for the size tables "
                               "on rank %d", me);
    s->g = g;
    s->K = K;
    s->maxsrc = maxsrc;
    s->nreq = nreq;
    s->s1 = (int64_t *)(s + 1);
    s->r1 = s->s1 + P;
    s->s2 = s->r1 + maxsrc * K;
    s->r2 = s->s2 + maxsrc * K;
    s->dtot = s->r2 + maxsrc * K;
    s->boff = (MPI_Aint *)(s->dtot + K);
    s->disp2 = s->boff + maxsrc + 1;
    s->req = (MPI_Request *)(s->disp2 + (size_t)K * maxsrc);
    s->tgt = (int *)(s->req + nreq);
    s->src = s->tgt + C;
    s->len2 = s->src + maxsrc;
    s->nsrcj = s->len2 + (size_t)K * maxsrc;
    s->tmpsrc = s->nsrcj + K;
    s->nsrc = grid_sources(&g, me, s->src);
    for (int col = 0; col < C; col++)
        s->tgt[col] = grid_inter(&g, me, col);
    for (int j = 0; j < K; j++)
        s->nsrcj[j] = grid_sources(&g, j * C + me % C, s->tmpsrc);
    *out = s;
    return MPI_SUCCESS;
}

/* Ends a phase: completes its nr requests even after a posting error (so
 * none is left pending), resets the count, and keeps the first error. */
static int phase_wait(xchg_call *c, MPI_Request *req, int *nr, int err)
{
    int werr = xchg_call_waitall(c, *nr, req);
    *nr = 0;
    return err == MPI_SUCCESS ? werr : err;
}

/* One call's state across grid's steps (the functions below, in order;
 * each returns an error to stop). */
typedef struct grid_run {
    xchg_call *c;
    grid_shape g;
    int P, me, C, myc, K, nsrc;
    size_t maxsrc;
    int64_t ssz, rsz;
    /* tables (cached in the grid_state) */
    int64_t *s1, *r1, *s2, *r2, *dtot;
    MPI_Aint *boff, *disp2;
    MPI_Request *req;
    const int *tgt, *src, *nsrcj;
    int *len2, *tmpsrc;
    int nr;            /* requests in flight in req */
    int myerr;         /* this rank's error before the agreement */
    int lerr;          /* a local error after it, returned at the end */
    char *A, *B, *D;   /* outgoing, forwarded, incoming blocks */
    size_t A_b, B_b, D_b;
    int64_t D_tot;     /* incoming bytes as recvcounts declare them */
} grid_run;

/* 1. Phase-1 sizes: to each column's target in our row. */
static int phase1_sizes(grid_run *x)
{
    xchg_call *c = x->c;
    const grid_shape g = x->g;
    const int me = x->me, C = x->C, K = x->K, nsrc = x->nsrc;
    const int64_t ssz = x->ssz;
    int64_t *s1 = x->s1, *r1 = x->r1;
    MPI_Request *req = x->req;
    const int *tgt = x->tgt, *src = x->src;
    int err = MPI_SUCCESS;
    /* ---- 1. phase-1 sizes ---- */
    {
        int q = 0;
        for (int col = 0; col < C; col++)
            for (int row = 0; row < col_len(&g, col); row++, q++) {
                int d = row * C + col;
                s1[q] = d == me ? 0 : (int64_t)c->sendcounts[d] * ssz;
            }
    }
    for (int k = 0; k < nsrc && err == MPI_SUCCESS; k++)
        err = MPI_Irecv(r1 + (size_t)k * K, K, MPI_INT64_T, src[k], grid_tag(TAG_SIZE1),
                        c->comm, &req[x->nr++]);
    for (int col = 0, q = 0; col < C && err == MPI_SUCCESS; q += col_len(&g, col), col++)
        err = MPI_Isend(s1 + q, col_len(&g, col), MPI_INT64_T, tgt[col], grid_tag(TAG_SIZE1),
                        c->comm, &req[x->nr++]);
    err = phase_wait(c, req, &x->nr, err);
    return err;
}

/* 2. Allocate, and agree whether every rank can take part. */
static int alloc_agree(grid_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, me = x->me, K = x->K, nsrc = x->nsrc;
    const int64_t rsz = x->rsz;
    int64_t *s1 = x->s1, *r1 = x->r1;
    MPI_Aint *boff = x->boff;
    int err = MPI_SUCCESS;
    /* ---- 2. allocate, agree ---- */
    int64_t A_tot = 0, B_tot = 0;
    for (int q = 0; q < P; q++)
        A_tot += s1[q];
    boff[0] = 0;
    for (int k = 0; k < nsrc; k++) {
        for (int j = 0; j < K; j++)
            B_tot += r1[(size_t)k * K + j];
        boff[k + 1] = (MPI_Aint)B_tot;
    }
    for (int r = 0; r < P; r++)
        if (r != me)
            x->D_tot += (int64_t)c->recvcounts[r] * rsz;
    if (x->myerr != MPI_SUCCESS) {
        /* the self copy failed: flagged below */
    } else if (A_tot > INT_MAX || B_tot > INT_MAX || x->D_tot > INT_MAX) {
        x->myerr = xchg_error_code(MPI_ERR_COUNT, "grid: rank %d sends %lld, forwards %lld "
                                "and receives %lld bytes, beyond MPI's int counts", me,
                                (long long)A_tot, (long long)B_tot, (long long)x->D_tot);
    } else {
        x->A_b = (size_t)A_tot;
        x->B_b = (size_t)B_tot;
        x->D_b = (size_t)x->D_tot;
        if ((x->A = xchg_temp_alloc(c, x->A_b, "grid: outgoing blocks", &x->myerr)) &&
            (x->B = xchg_temp_alloc(c, x->B_b, "grid: forwarded blocks", &x->myerr)))
            x->D = xchg_temp_alloc(c, x->D_b, "grid: incoming blocks", &x->myerr);
    }
    {
        /* lowest failing rank, with its error class, wins */
        int cls = 0;
        if (x->myerr != MPI_SUCCESS)
            MPI_Error_class(x->myerr, &cls);
        long long v = x->myerr != MPI_SUCCESS ? (long long)me * 4096 + (cls & 4095)
                                           : (long long)P * 4096, all = 0;
        if ((err = xchg_mpi_allreduce(&v, &all, 1, MPI_LONG_LONG, MPI_MIN, c->comm)) !=
            MPI_SUCCESS)
            return err;
        if (all < (long long)P * 4096) {
            err = x->myerr != MPI_SUCCESS
                      ? x->myerr
                      : xchg_error_code((int)(all % 4096), "grid: rank %d could not take "
                                        "part (see its error), so no rank exchanged",
                                        (int)(all / 4096));
            return err;
        }
    }
    return err;
}

/* 3. Phase-1 data along the row, phase-2 sizes down the column. */
static int phase1_data(grid_run *x)
{
    xchg_call *c = x->c;
    const grid_shape g = x->g;
    const int me = x->me, C = x->C, myc = x->myc, K = x->K, nsrc = x->nsrc;
    const size_t maxsrc = x->maxsrc;
    const int64_t ssz = x->ssz;
    int64_t *s1 = x->s1, *r1 = x->r1, *s2 = x->s2, *r2 = x->r2;
    MPI_Aint *boff = x->boff, *disp2 = x->disp2;
    MPI_Request *req = x->req;
    const int *tgt = x->tgt, *src = x->src, *nsrcj = x->nsrcj;
    int *len2 = x->len2;
    int err = MPI_SUCCESS;
    /* ---- 3. phase-1 data, phase-2 sizes ---- */
    /* From here on every rank takes part in every step whatever fails
     * locally (others' blocks pass through it); such errors are kept in
     * lerr and returned at the end. */
    {
        size_t off = 0;
        for (int col = 0; col < C; col++)
            for (int row = 0; row < col_len(&g, col); row++) {
                int d = row * C + col;
                if (d == me)
                    continue;
                int e = xchg_pack_block(c->sendbuf, c->sdispls[d], c->sendcounts[d], &c->st,
                                        x->A + off);
                if (x->lerr == MPI_SUCCESS)
                    x->lerr = e;
                off += (size_t)c->sendcounts[d] * (size_t)ssz;
            }
    }
    /* phase-2 sizes for column member j (row j): each source's block */
    for (int j = 0; j < K; j++) {
        for (int k = 0; k < nsrc; k++) {
            int64_t b = r1[(size_t)k * K + j];
            MPI_Aint at = boff[k];
            for (int jj = 0; jj < j; jj++)
                at += (MPI_Aint)r1[(size_t)k * K + jj];
            s2[(size_t)j * nsrc + k] = b;
            len2[(size_t)j * nsrc + k] = (int)b;
            disp2[(size_t)j * nsrc + k] = at;
        }
    }
    for (int k = 0; k < nsrc && err == MPI_SUCCESS; k++) {
        int64_t b = boff[k + 1] - boff[k];
        if (b > 0)
            err = MPI_Irecv(x->B + boff[k], (int)b, MPI_BYTE, src[k], grid_tag(TAG_DATA1),
                            c->comm, &req[x->nr++]);
    }
    for (int j = 0; j < K && err == MPI_SUCCESS; j++)
        err = MPI_Irecv(r2 + (size_t)j * maxsrc, nsrcj[j], MPI_INT64_T, j * C + myc,
                        grid_tag(TAG_SIZE2), c->comm, &req[x->nr++]);
    {
        size_t off = 0;
        for (int col = 0, q = 0; col < C && err == MPI_SUCCESS; col++) {
            int64_t b = 0;
            for (int row = 0; row < col_len(&g, col); row++, q++)
                b += s1[q];
            if (b > 0)
                err = MPI_Isend(x->A + off, (int)b, MPI_BYTE, tgt[col], grid_tag(TAG_DATA1),
                                c->comm, &req[x->nr++]);
            off += (size_t)b;
        }
    }
    for (int j = 0; j < K && err == MPI_SUCCESS; j++)
        err = MPI_Isend(s2 + (size_t)j * nsrc, nsrc, MPI_INT64_T, j * C + myc,
                        grid_tag(TAG_SIZE2), c->comm, &req[x->nr++]);
    err = phase_wait(c, req, &x->nr, err);
    return err;
}

/* 4. Phase-2 data down the column. */
static int phase2_data(grid_run *x)
{
    xchg_call *c = x->c;
    const int C = x->C, myc = x->myc, K = x->K, nsrc = x->nsrc;
    const size_t maxsrc = x->maxsrc;
    int64_t *s2 = x->s2, *r2 = x->r2, *dtot = x->dtot;
    MPI_Aint *disp2 = x->disp2;
    MPI_Request *req = x->req;
    const int *nsrcj = x->nsrcj;
    int *len2 = x->len2;
    int err = MPI_SUCCESS;
    /* ---- 4. phase-2 data ---- */
    {
        int64_t t = 0;
        for (int j = 0; j < K; j++) {
            dtot[j] = 0;
            for (int k = 0; k < nsrcj[j]; k++)
                dtot[j] += r2[(size_t)j * maxsrc + k];
            t += dtot[j];
        }
        if (t > x->D_tot) { /* receive counts disagree with the senders': erroneous */
            xchg_temp_free(c, x->D, x->D_b);
            x->D_b = (size_t)t;
            if (!(x->D = xchg_temp_alloc(c, x->D_b, "grid: incoming blocks", &x->lerr)))
                x->D_b = 0; /* drained below; our sends still go */
        }
    }
    const int drop = x->D == NULL;
    {
        size_t off = 0;
        for (int j = 0; j < K && err == MPI_SUCCESS && !drop; j++) {
            if (dtot[j] > 0)
                err = MPI_Irecv(x->D + off, (int)dtot[j], MPI_BYTE, j * C + myc,
                                grid_tag(TAG_DATA2), c->comm, &req[x->nr++]);
            off += (size_t)dtot[j];
        }
    }
    for (int j = 0; j < K && err == MPI_SUCCESS; j++) {
        int64_t b = 0;
        for (int k = 0; k < nsrc; k++)
            b += s2[(size_t)j * nsrc + k];
        if (b == 0)
            continue;
        /* MPI packs the sources' blocks into one message: charged in
         * simulation as explicit copies would be (SMPI does not), as for
         * every other algorithm's derived-type messages */
        xchg_charge_pieces(len2 + (size_t)j * nsrc, nsrc);
        MPI_Datatype ty;
        err = MPI_Type_create_hindexed(nsrc, len2 + (size_t)j * nsrc,
                                       disp2 + (size_t)j * nsrc, MPI_BYTE, &ty);
        if (err == MPI_SUCCESS && (err = MPI_Type_commit(&ty)) == MPI_SUCCESS) {
            err = MPI_Isend(x->B, 1, ty, j * C + myc, grid_tag(TAG_DATA2), c->comm, &req[x->nr++]);
            MPI_Type_free(&ty); /* freed when the send completes */
        }
    }
    /* No room for what arrives: drain it (zero-count receives, whose
     * truncation MPI_Recv reports on our communicator); sends are posted. */
    for (int j = 0; j < K && err == MPI_SUCCESS && drop; j++)
        if (dtot[j] > 0) {
            static char sink[1];
            xchg_mpi_recv(sink, 0, MPI_BYTE, j * C + myc, grid_tag(TAG_DATA2), c->comm,
                          MPI_STATUS_IGNORE);
        }
    err = phase_wait(c, req, &x->nr, err);
    if (err == MPI_SUCCESS)
        err = x->lerr;
    return err;
}

/* 5. Unpack: column member by column member, its sources in order. */
static int grid_unpack(grid_run *x)
{
    xchg_call *c = x->c;
    const grid_shape g = x->g;
    const int me = x->me, C = x->C, myc = x->myc, K = x->K;
    const size_t maxsrc = x->maxsrc;
    int64_t *r2 = x->r2;
    int *tmpsrc = x->tmpsrc;
    int err = MPI_SUCCESS;
    /* unpack: column member by column member, its sources in order */
    {
        size_t off = 0;
        for (int j = 0; j < K; j++) {
            int n = grid_sources(&g, j * C + myc, tmpsrc);
            for (int k = 0; k < n; k++) {
                int s = tmpsrc[k];
                int64_t b = r2[(size_t)j * maxsrc + k];
                if (s == me || b == 0)
                    continue;
                err = xchg_unpack_checked(c, "grid", s, x->D + off, b, err);
                off += (size_t)b;
            }
        }
    }
    return err;
}

int xchg_alltoallv_grid(xchg_call *c)
{
    const int P = c->size, me = c->rank;
    /* an argument error (zero counts then) or a failed self copy is
     * flagged in the agreement (alloc_agree) */
    int myerr = c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    if (P == 1)
        return myerr;
    int err = MPI_SUCCESS;
    const int slot = xchg_algo_slot(XCHG_ALGO_GRID);
    grid_state *gs = c->cs->ext[slot];
    if (!gs) {
        if ((err = grid_build(c, &gs)) != MPI_SUCCESS)
            return err;
        c->cs->ext[slot] = gs;
        c->cs->ext_free[slot] = free;
    }
    grid_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.g = gs->g, x.P = P, x.me = me;
    x.C = gs->g.C, x.myc = me % gs->g.C, x.K = gs->K, x.nsrc = gs->nsrc, x.maxsrc = gs->maxsrc;
    x.ssz = c->st.size, x.rsz = c->rt.size;
    x.s1 = gs->s1, x.r1 = gs->r1, x.s2 = gs->s2, x.r2 = gs->r2, x.dtot = gs->dtot;
    x.boff = gs->boff, x.disp2 = gs->disp2, x.req = gs->req;
    x.tgt = gs->tgt, x.src = gs->src, x.nsrcj = gs->nsrcj;
    x.len2 = gs->len2, x.tmpsrc = gs->tmpsrc;
    x.myerr = myerr, x.lerr = MPI_SUCCESS;

    err = phase1_sizes(&x);
    if (err == MPI_SUCCESS)
        err = alloc_agree(&x);
    if (err == MPI_SUCCESS)
        err = phase1_data(&x);
    if (err == MPI_SUCCESS)
        err = phase2_data(&x);
    if (err == MPI_SUCCESS)
        err = grid_unpack(&x);

    xchg_temp_free(c, x.D, x.D_b);
    xchg_temp_free(c, x.B, x.B_b);
    xchg_temp_free(c, x.A, x.A_b);
    return err;
}
