/*
 * locality_shm.c - "locality_shm": locality's routing (one aggregate per
 * other node, to a partner there, locality.h) with every step inside a
 * node through the node window (node/shm_window.h) instead of messages:
 * a rank writes the blocks for its node-mates and the forwards it hands
 * on into its own region, the node synchronises once, and every rank
 * copies its blocks out of its node-mates' regions. On one node (no
 * aggregates at all) it is seed 004's shared-memory exchange for a graph.
 *
 * A call is one epoch e of the window, which every node algorithm shares
 * (its flags say 2 e after the call, as node_pairs_shm's and
 * pex_loc_shm's do); each rank writes half e % 2 of its region only:
 *  1. the aggregates to the other nodes sent (locality's);
 *  2. the aggregates for this rank received (probed) and the sizes of its
 *     forwards known; its header, a table of two (offset, bytes) entries
 *     per node-mate (its blocks for that member, in send-block order; the
 *     forward for it, senders ascending), then the data written; the node
 *     synchronises;
 *  3. every rank reads, per node-mate, its blocks from that member's
 *     entry and its forward from its partner's, and unpacks them in the
 *     order locality's messages would carry them (by sender, then in the
 *     sender's block order; Cartesian: block i takes the sender's i ^ 1).
 *     A run of another length than its receive blocks is MPI_ERR_TRUNCATE.
 * One synchronisation a call: a member writes half e % 2 again at e + 2
 * only after every node-mate published e + 1, hence finished reading e.
 *
 * The window is sized at the analysis (once per communicator, collective)
 * for the most any rank wrote in that first call, plus half again, and
 * grown so at each persistent init for its counts. A rank
 * whose later call does not fit its half says so in its header (OVERFLOW)
 * and sends its node's blocks and its forwards as locality's messages;
 * its node-mates see the header and receive them so. No other rank needs
 * to know: nothing is agreed per call. No window (XCHG_SHM_BYTES=0, MPI
 * refused it, one rank), or a polled request under SMPI (whose
 * synchronisation's waits block the simulated rank): locality runs, the same on every
 * rank.
 */
#include "locality.h"
#include "node/shm_window.h"

#include <stdlib.h>
#include <string.h>

typedef struct shm_run {
    xchg_nloc_run x;
    xchg_shm_window *w;
    uint64_t e;
    int L, la;             /* this node's members, this rank's place */
    int64_t *loc, *fwd;    /* L each: bytes to each member, forward to each (-1: none) */
    char **agg;            /* the aggregates received */
} shm_run;

static size_t table_bytes(int lmax)
{
    return 2 * sizeof(xchg_shm_entry) * (size_t)lmax;
}

static char *half_of(const shm_run *s, int place)
{
    return xchg_shm_half(s->w, place, s->e);
}

/* The node window made, or grown for `need` (the largest of any rank,
 * agreed) and half again (collective), or kept as it is where that growth
 * is refused; a->window: whether there is one (agreed). */
static int window_for(xchg_nbr_call *c, xchg_nloc_analysis *a, double need)
{
    size_t grow = need > 0 ? (size_t)(need * 1.5) + 64 : 0;
    xchg_shm_window *w = NULL;
    int rc = xchg_node_window_of(c->cs, a->L->node, a->table_bytes, grow, &w);
    if (rc == MPI_SUCCESS && !w && grow)
        rc = xchg_node_window_of(c->cs, a->L->node, a->table_bytes, 0, &w);
    a->window = w != NULL;
    return rc;
}

int xchg_neighbor_locality_shm_analyse(xchg_nbr_call *c, void **out)
{
    xchg_nloc_analysis *a;
    double need = 0;
    int rc = xchg_nloc_analyse(c, &a, &need);
    *out = a;
    if (rc != MPI_SUCCESS)
        return rc;
    a->table_bytes = table_bytes(xchg_node_largest(a->L));
    return window_for(c, a, need);
}

int xchg_neighbor_locality_shm_window(const void *analysis)
{
    return analysis && ((const xchg_nloc_analysis *)analysis)->window;
}

/* This rank's bytes to each member of its node (its blocks there, in
 * send-block order). */
static void local_sizes(shm_run *s)
{
    const xchg_nbr_call *c = s->x.c;
    const xchg_nloc_analysis *a = s->x.a;
    for (int j = 0; j < c->g->outdegree; j++) {
        int d = c->g->dests[j];
        if (d != MPI_PROC_NULL && !xchg_nloc_is_remote(a, s->x.me, d))
            s->loc[a->L->local_of[d]] += xchg_nloc_bytes(c->sendcounts, j, &c->st);
    }
}

/* Step 2 into the window: the table, this rank's blocks for its
 * node-mates and its forwards, member by member. */
static void write_region(shm_run *s)
{
    xchg_nloc_run *x = &s->x;
    const xchg_nbr_call *c = x->c;
    xchg_shm_entry *t = xchg_shm_table(half_of(s, s->la));
    char *data = xchg_shm_data(s->w, half_of(s, s->la));
    char **out = (char **)xchg_nloc_take(x, sizeof(char *) * (size_t)s->L + 1,
                                        "locality_shm: forwards");
    int64_t *at = (int64_t *)xchg_nloc_take(x, sizeof(int64_t) * (size_t)s->L + 1,
                                            "locality_shm: offsets");
    if (!out || !at)
        return xchg_nloc_fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality_shm: no memory"));
    uint64_t off = 0;
    for (int l = 0; l < s->L; l++) {
        int64_t f = s->fwd[l] > 0 ? s->fwd[l] : 0;
        t[2 * l] = (xchg_shm_entry){off, (uint64_t)s->loc[l]};
        t[2 * l + 1] = (xchg_shm_entry){off + (uint64_t)s->loc[l], (uint64_t)f};
        at[l] = (int64_t)off;
        out[l] = data + off + s->loc[l];
        off += (uint64_t)(s->loc[l] + f);
    }
    xchg_charge_copy(sizeof(xchg_shm_entry) * 2 * (size_t)s->L);
    for (int j = 0; j < c->g->outdegree; j++) { /* the node's blocks, in send order */
        int d = c->g->dests[j];
        if (d == MPI_PROC_NULL || xchg_nloc_is_remote(x->a, x->me, d))
            continue;
        int l = x->a->L->local_of[d];
        int64_t b = xchg_nloc_bytes(c->sendcounts, j, &c->st);
        if (b > 0)
            xchg_nloc_fail(x, xchg_pack_block(c->sendbuf, c->sdispls[j], c->sendcounts[j],
                                              &c->st, data + at[l]));
        at[l] += b;
    }
    xchg_nloc_fill(x, s->agg, out, s->fwd);
}

/* Step 2 where the region is too small: locality's messages. */
static void send_overflow(shm_run *s)
{
    xchg_nloc_send_local(&s->x);
    xchg_nloc_send_forwards(&s->x, s->agg, s->fwd);
}

/* Step 3: runs of blocks (by the member r[].partner), each from its
 * member's region, entry 2 la + which, or as messages where it overflowed. */
static void read_runs(shm_run *s, const xchg_nloc_routed *r, int n, int which)
{
    xchg_nloc_run *x = &s->x;
    for (int k = 0; k < n;) {
        int m = k;
        while (m < n && r[m].partner == r[k].partner)
            m++;
        int place = x->a->L->local_of[r[k].partner];
        const xchg_shm_header *h = (const xchg_shm_header *)half_of(s, place);
        if (h->status == XCHG_SHM_ARG_ERROR) { /* it could not write: nothing from it */
            xchg_nloc_fail(x, xchg_error_code(MPI_ERR_OTHER, "locality_shm: rank %d had no "
                                              "memory for its blocks to rank %d", r[k].partner,
                                              x->me));
        } else if (h->status == XCHG_SHM_OVERFLOW && which == 0) {
            for (int q = k; q < m && x->err == MPI_SUCCESS; q++) /* its blocks as messages */
                xchg_nloc_recv_local(x, r[q].block);
        } else if (h->status == XCHG_SHM_OVERFLOW) {
            int bytes;
            const char *in = xchg_nloc_receive_probed(x, r[k].partner,
                                                      XCHG_NEIGHBOR_TAG_FORWARD, &bytes);
            xchg_nloc_unpack(x, r + k, m - k, in, bytes, r[k].partner);
        } else {
            const xchg_shm_entry *t = xchg_shm_table(half_of(s, place)) + 2 * s->la + which;
            const char *in = xchg_shm_data(s->w, half_of(s, place)) + t->off;
            xchg_nloc_unpack(x, r + k, m - k, in, (int64_t)t->bytes, r[k].partner);
        }
        k = m;
    }
}

/* The exchange on window w (steps 1-3 above). */
static int run_shm(xchg_nbr_call *c, xchg_shm_window *w)
{
    shm_run s;
    char sink[1];
    memset(&s, 0, sizeof s);
    int rc = xchg_nloc_begin(&s.x, c, sink);
    if (rc != MPI_SUCCESS)
        return xchg_nloc_end(&s.x, rc);
    xchg_nloc_run *x = &s.x;
    s.w = w, s.e = w->epoch + 1;
    s.L = xchg_node_size(x->a->L, x->node), s.la = x->a->L->local_of[x->me];
    s.loc = (int64_t *)xchg_nloc_take(x, sizeof(int64_t) * 2 * (size_t)s.L, "locality_shm");
    s.agg = (char **)xchg_nloc_take(x, sizeof(char *) * (size_t)(x->a->nsrc + 1), "locality_shm");
    xchg_shm_header *h = (xchg_shm_header *)half_of(&s, s.la);
    memset(h, 0, sizeof *h);
    if (s.loc && s.agg) {
        memset(s.loc, 0, sizeof(int64_t) * 2 * (size_t)s.L);
        s.fwd = s.loc + s.L;
        xchg_nloc_send_aggregates(x);
        xchg_nloc_gather(x, s.agg, s.fwd);
        local_sizes(&s);
        uint64_t need = 0;
        for (int l = 0; l < s.L; l++)
            need += (uint64_t)s.loc[l] + (uint64_t)(s.fwd[l] > 0 ? s.fwd[l] : 0);
        h->need = need;
        if (need <= w->half) {
            write_region(&s);
        } else {
            h->status = XCHG_SHM_OVERFLOW;
            send_overflow(&s);
        }
    } else {
        /* this rank cannot write: it still synchronises (its node waits),
         * and its header tells its node-mates to expect nothing */
        xchg_nloc_fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality_shm: no memory"));
        h->status = XCHG_SHM_ARG_ERROR;
    }
    xchg_shm_sync(w, 2 * s.e);
    for (int which = 0; which < 2; which++) { /* the node's blocks, then the forwards */
        int n;
        xchg_nloc_routed *r = xchg_nloc_routes(x, which == 0, &n);
        if (r)
            read_runs(&s, r, n, which);
    }
    rc = xchg_nbr_complete(c, x->n, x->req, x->from, NULL, "locality_shm");
    w->epoch = s.e;
    return xchg_nloc_end(x, rc);
}

int xchg_neighbor_locality_shm(xchg_nbr_call *c)
{
    const xchg_nloc_analysis *a = c->analysis;
    xchg_shm_window *w = NULL;
#ifdef XCHG_SMPI
    int sync_ok = !xchg_coro_inside(); /* SimGrid waits there: blocking only */
#else
    int sync_ok = 1;
#endif
    /* made at the analysis: no communication here, the same on every rank */
    if (a && a->window && sync_ok && xchg_node_window_ready(c->cs, a->table_bytes, 0))
        xchg_node_window_of(c->cs, a->L->node, a->table_bytes, 0, &w);
    if (!w) {
        c->ran = XCHG_NEIGHBOR_LOCALITY;
        return xchg_neighbor_locality(c);
    }
    return run_shm(c, w);
}

/* The window grown, at a persistent init (collective), for this request's
 * counts: each rank's bytes to its node-mates and (one MPI_Alltoall) the
 * bytes it will hand on, their maximum agreed, and half again; a growth
 * refused keeps the window (its starts then overflow as messages). */
static int size_for(xchg_nbr_call *c, xchg_nloc_analysis *a)
{
    const int P = c->size, me = c->rank;
    int64_t *out = calloc(2 * (size_t)P, sizeof(int64_t)), *in = out ? out + P : NULL;
    int rc = xchg_agree_errors(c->comm, me, P, out ? MPI_SUCCESS
                               : xchg_error_code(MPI_ERR_NO_MEM, "locality_shm: no memory "
                                                 "to size its window"), "locality_shm: init");
    double need = 0;
    for (int j = 0; rc == MPI_SUCCESS && j < c->g->outdegree; j++) {
        int d = c->g->dests[j];
        int64_t b = xchg_nloc_bytes(c->sendcounts, j, &c->st);
        if (xchg_nloc_is_remote(a, me, d))
            out[xchg_nloc_partner(a, me, a->L->node_of[d])] += b;
        else if (d != MPI_PROC_NULL)
            need += (double)b;
    }
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_alltoall(out, 1, MPI_INT64_T, in, 1, MPI_INT64_T, c->comm);
    for (int r = 0; rc == MPI_SUCCESS && r < P; r++)
        need += (double)in[r];
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_allreduce(MPI_IN_PLACE, &need, 1, MPI_DOUBLE, MPI_MAX, c->comm);
    free(out);
    return rc == MPI_SUCCESS ? window_for(c, a, need) : rc;
}

static int shm_pinit(xchg_nbr_call *c, void **plan)
{
    xchg_nloc_analysis *a = c->analysis;
    int rc = a && a->window ? size_for(c, a) : MPI_SUCCESS; /* a->window: agreed */
    return rc == MPI_SUCCESS ? xchg_nloc_pinit(c, plan, xchg_neighbor_locality_shm) : rc;
}

const xchg_nbr_persist_ops xchg_neighbor_locality_shm_persist = {
    shm_pinit, xchg_nloc_pstart, xchg_nloc_ptest, xchg_nloc_pwait, xchg_nloc_pfree,
};
