/*
 * pex_loc_shm.c - pex_loc with the steps inside a node through the node
 * window (node/shm_window.h) instead of messages: pex_loc's routing and
 * its one aggregate per node pair (pex_loc.h), and node_pairs_shm's way
 * inside the node. No census collective at all: the window's tables say
 * what each member wrote for whom.
 *
 * A call is one epoch e of the window (both synchronisations write half
 * e % 2, as node_pairs_shm's do), on each rank:
 *  1. its step-1 bundles (loc_common.h: to each node-mate, its messages to
 *     that node-mate and to the nodes that node-mate serves) written
 *     straight into its half's data, their offsets and sizes in its table,
 *     its number of remote messages (for sparse auto's census) or an
 *     argument error in its header; the node synchronises;
 *  2. as relay, it reads its node-mates' bundles for it in their regions,
 *     and sends each partner one aggregate (pex_loc's step 2; the header
 *     carries the node's flag, message sum and window need);
 *  3. its bundles for its node-mates written after its step-1 data, with
 *     a second header and table (the flags and sums of the nodes it
 *     serves); the node synchronises; every rank reads its messages out of
 *     its node-mates' regions and delivers them.
 * Two synchronisations and no message inside a node, against pex_loc's two
 * MPI_Alltoall censuses and up to 2(L-1) messages. The halves alternate,
 * so data read in step 3 stays until every member has finished the call.
 *
 * A member whose bundles do not fit its half says so in its header
 * (OVERFLOW) and sends them as pex_loc would: its node-mates see the
 * header and receive them at the sizes its table gives, so no other node
 * needs to know. Each node's largest need (bytes of step 1, and of the
 * whole previous call) rides in its step-2 aggregates, so after step 3
 * every rank knows every node's and the next call grows the windows to the
 * same size on every rank (xchg_node_window_of: collective, agreed; a
 * growth past XCHG_MAX_TEMP_BYTES keeps the window and the overflow path).
 *
 * Errors as pex_loc's: a rank's argument error or a refusal before data
 * moves is its header's status, seen by its node; the node's relays flag
 * their aggregates; the step-3 headers give every rank of every node the
 * flag, and every rank returns the error agreed by xchg_sparse_agree with
 * nothing delivered. The same chain synchronises every rank once per call,
 * which the tag sets' parity needs. No node layout: pex on every rank; no
 * node window (refused by MPI, XCHG_SHM_BYTES=0): pex_loc on every rank.
 */
#include "node/shm_window.h"
#include "pex_loc.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Words of the step-1 header's pad, and of the step-3 header's. */
enum { PAD_DEGREE = 0 };
enum { PAD_FLAG = 0, PAD_SERVED = 1, PAD_RX_NEED = 2 };

typedef struct pls_run {
    xchg_pl_run r;
    xchg_shm_window *w;
    uint64_t e;
    int lmax;         /* the largest node's members: the tables' length */
    size_t used1;     /* data bytes step 1 wrote into this rank's half */
    size_t need1;     /* bytes of this rank's step-1 bundles, in the window or not */
    const char **at1, **at3; /* L each: where each node-mate's bundle for this rank lies */
} pls_run;

static size_t round8(size_t b) { return (b + 7) & ~(size_t)7; }

/* The table area: step 1's table (lmax (offset, bytes) pairs), step 3's
 * header, step 3's table. */
static size_t table_bytes(int lmax)
{
    return sizeof(xchg_shm_header) + 2 * sizeof(xchg_shm_entry) * (size_t)lmax;
}
static char *half_of(const pls_run *p, int place)
{
    return xchg_shm_half(p->w, place, p->e);
}
static xchg_shm_header *hdr1(const pls_run *p, int place)
{
    return (xchg_shm_header *)half_of(p, place);
}
static xchg_shm_entry *tab1(const pls_run *p, int place)
{
    return xchg_shm_table(half_of(p, place));
}
static xchg_shm_header *hdr3(const pls_run *p, int place)
{
    return (xchg_shm_header *)(tab1(p, place) + p->lmax);
}
static xchg_shm_entry *tab3(const pls_run *p, int place)
{
    return (xchg_shm_entry *)(hdr3(p, place) + 1);
}
static char *data_of(const pls_run *p, int place)
{
    return xchg_shm_data(p->w, half_of(p, place));
}

static int need_word(uint64_t b)
{
    return b > INT_MAX ? INT_MAX : (int)b;
}

/* Writes the bundles of `it` for the node-mates into this rank's data at
 * `at` (the table `t`), or where they do not fit into memory of its own
 * (OVERFLOW in h, to be sent; refused at XCHG_MAX_TEMP_BYTES if limited).
 * Returns an error before data moves. */
static int write_step(pls_run *p, const xchg_loc_items *it, size_t at, xchg_shm_header *h,
                      xchg_shm_entry *t, xchg_loc_out *o, int limited, const char *who)
{
    xchg_sparse_call *s = p->r.s;
    const int L = p->r.x.L;
    size_t room = p->w->half > at ? p->w->half - at : 0;
    int rc = xchg_loc_write_into(s, it, L, who, data_of(p, p->r.x.la) + at, room, o);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!o->buf && o->bytes > 0) {
        h->status = XCHG_SHM_OVERFLOW;
        xchg_loc_out_free(s, o);
        rc = xchg_loc_write(s, it, L, 0, limited, who, o);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    for (int j = 0; j < L; j++) {
        t[j].off = at + o->off[j];
        t[j].bytes = j == p->r.x.la ? 0 : o->size[j];
    }
    xchg_charge_copy(sizeof(xchg_shm_entry) * (size_t)L);
    return MPI_SUCCESS;
}

/* Steps 1 and 3 after a synchronisation: the bundle of every node-mate
 * for this rank, from its region or (its header says OVERFLOW) received,
 * and this rank's own overflowed bundles sent. in[j]/inb[j] get the
 * received ones (owned), at[j] where each bundle lies. */
static int read_step(pls_run *p, int step, const xchg_loc_out *o, char **in, size_t *inb,
                     const char **at)
{
    xchg_sparse_call *s = p->r.s;
    const int L = p->r.x.L, la = p->r.x.la;
    const int tag = xchg_sparse_tag(s, step == 1 ? XCHG_SPARSE_TAG_LOC_GATHER
                                                 : XCHG_SPARSE_TAG_LOC_SCATTER);
    const char *who = step == 1 ? "pex_loc_shm: bundles to relay"
                                : "pex_loc_shm: messages received";
    MPI_Request *req = p->r.req;
    int rc = MPI_SUCCESS, n = 0, drain = 0;
    static char sink[1];
    for (int j = 0; j < L && rc == MPI_SUCCESS; j++) {
        const xchg_shm_header *h = step == 1 ? hdr1(p, j) : hdr3(p, j);
        const xchg_shm_entry *t = (step == 1 ? tab1(p, j) : tab3(p, j)) + la;
        at[j] = NULL;
        if (j == la || t->bytes == 0)
            continue;
        if (h->status != XCHG_SHM_OVERFLOW) {
            at[j] = data_of(p, j) + t->off;
            inb[j] = t->bytes;
            continue;
        }
        int aerr = MPI_SUCCESS;
        in[j] = xchg_loc_alloc(s, t->bytes, step == 1, who, &aerr);
        if (!in[j]) { /* drained below: its sender completes; the loss is the flag */
            xchg_pl_lose(&p->r, aerr);
            drain = 1;
            continue;
        }
        inb[j] = t->bytes;
        at[j] = in[j];
        rc = MPI_Irecv(in[j], (int)t->bytes, MPI_BYTE, xchg_node_member(p->r.x.nl, p->r.x.a, j),
                       tag, s->comm, &req[n++]);
    }
    if (rc == MPI_SUCCESS && o->buf && o->limited != XCHG_LOC_NOT_OWNED)
        rc = xchg_pl_send_bundles(&p->r, o, tag, req, &n); /* this rank's own overflow */
    for (int j = 0; j < L && rc == MPI_SUCCESS && drain; j++) /* truncated on purpose */
        if (j != la && !at[j] && (step == 1 ? tab1(p, j) : tab3(p, j))[la].bytes > 0)
            MPI_Recv(sink, 0, MPI_BYTE, xchg_node_member(p->r.x.nl, p->r.x.a, j), tag,
                     s->comm, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    return rc;
}

/* Step 1 on this rank: its bundles and its header. */
static void step1_write(pls_run *p)
{
    xchg_pl_run *r = &p->r;
    xchg_sparse_call *s = r->s;
    xchg_shm_header *h = hdr1(p, r->x.la);
    memset(h, 0, sizeof *h);
    r->myerr = s->local_err;
    if (r->myerr == MPI_SUCCESS)
        r->myerr = xchg_loc_route_own(s, &r->x, &r->own, &r->mine);
    if (r->myerr == MPI_SUCCESS)
        r->myerr = write_step(p, &r->own, 0, h, tab1(p, r->x.la), &r->out1, 1,
                              "pex_loc_shm: messages to the node");
    if (r->myerr != MPI_SUCCESS) {
        h->status = XCHG_SHM_ARG_ERROR;
        return;
    }
    p->used1 = r->out1.limited == XCHG_LOC_NOT_OWNED ? r->out1.bytes : 0;
    p->need1 = r->out1.bytes;
    h->need = p->need1;
    h->pad[PAD_DEGREE] = (uint64_t)xchg_sparse_census_degree(s);
}

/* Step 3 on this rank: its bundles for its node-mates and its header. */
static void step3_write(pls_run *p, int gflag, int served_sum)
{
    xchg_pl_run *r = &p->r;
    xchg_shm_header *h = hdr3(p, r->x.la);
    memset(h, 0, sizeof *h);
    memset(tab3(p, r->x.la), 0, sizeof(xchg_shm_entry) * (size_t)r->x.L);
    if (!gflag && r->agg.n > 0) {
        /* not refused at the limit: only this node would see the flag */
        int e = write_step(p, &r->agg, round8(p->used1), h, tab3(p, r->x.la), &r->out3, 0,
                           "pex_loc_shm: messages to hand on");
        if (e != MPI_SUCCESS) {
            xchg_pl_lose(r, e);
            gflag = 1;
            h->status = XCHG_SHM_OK;
            memset(tab3(p, r->x.la), 0, sizeof(xchg_shm_entry) * (size_t)r->x.L);
        }
    }
    /* what the whole call needed of this rank's half */
    h->need = round8(p->need1) + r->out3.bytes;
    h->pad[PAD_FLAG] = (uint64_t)gflag;
    h->pad[PAD_SERVED] = (uint64_t)served_sum;
    h->pad[PAD_RX_NEED] = (uint64_t)r->need_in;
}

/* Files what step 1 brought this rank (its node-mates' bundles for it). */
static void step1_file(pls_run *p, const char **at, const size_t *bytes)
{
    for (int j = 0; j < p->r.x.L; j++) {
        int flag, info;
        if (!at[j])
            continue;
        int e = xchg_pl_file(&p->r, at[j], bytes[j], &flag, &info, &p->r.relay, 1);
        if (e != MPI_SUCCESS)
            xchg_pl_lose(&p->r, e);
    }
}

/* After step 3: every message for this rank delivered. */
static int deliver_all(pls_run *p, const char **at)
{
    xchg_pl_run *r = &p->r;
    xchg_sparse_call *s = r->s;
    int rc = xchg_sparse_deliver_self(s), lerr = MPI_SUCCESS;
    for (int i = 0; i < r->forme.n && rc == MPI_SUCCESS; i++)
        rc = xchg_loc_deliver(s, &r->forme.v[i]);
    for (int j = 0; j < r->x.L && rc == MPI_SUCCESS; j++) {
        int flag, info;
        if (!at[j])
            continue;
        xchg_loc_items got = {0};
        int e = xchg_loc_parse(s, at[j], r->in3b[j], &flag, &info, &got);
        for (int i = 0; i < got.n && e == MPI_SUCCESS; i++)
            e = got.v[i].dst == s->rank ? xchg_loc_deliver(s, &got.v[i])
                : xchg_error_code(MPI_ERR_INTERN, "pex_loc_shm: rank %d got rank %d's "
                                  "message", s->rank, got.v[i].dst);
        xchg_loc_items_free(&got);
        if (e != MPI_SUCCESS && lerr == MPI_SUCCESS)
            lerr = e;
    }
    return rc != MPI_SUCCESS ? rc : lerr;
}

static void pls_free(pls_run *p)
{
    xchg_pl_free(&p->r);
    free(p->at1);
}

/* The node window for this call (same answer on every rank): grown to the
 * agreed size, or as it is where that growth was refused; NULL: none. */
static int window_for(xchg_sparse_call *s, const xchg_loc *x, int lmax, xchg_shm_window **w)
{
    xchg_sparse_state *ss = s->ss;
    int rc = xchg_node_window_of(s->cs, x->nl->node, table_bytes(lmax), ss->shm_grow, w);
    if (rc == MPI_SUCCESS && !*w && ss->shm_grow) {
        ss->shm_grow = 0; /* refused (agreed): overflow by message from now on */
        rc = xchg_node_window_of(s->cs, x->nl->node, table_bytes(lmax), 0, w);
    }
    return rc;
}

int xchg_sparse_node_window(xchg_comm_state *cs)
{
    const xchg_node_layout *n;
    xchg_shm_window *w = NULL;
    if (cs->size < 2 || cs->nodes_failed || xchg_node_layout_of(cs, &n) != MPI_SUCCESS)
        return 0;
    /* made now where it was never tried (collective, agreed): a window MPI
     * refuses is known before auto chooses, not after one call */
    if (xchg_node_window_of(cs, n->node, table_bytes(xchg_node_largest(n)), 0, &w) != MPI_SUCCESS)
        return 0;
    return w != NULL;
}

int xchg_sparse_pex_loc_shm(xchg_sparse_call *s)
{
    pls_run p;
    memset(&p, 0, sizeof p);
    xchg_pl_run *r = &p.r;
    r->s = s;
    if (s->size == 1) { /* no node-mate and no other node: its own message only */
        if (s->local_err != MPI_SUCCESS)
            return xchg_sparse_agree(s);
        s->ss->census_msgs = 0;
        return xchg_sparse_deliver_self(s);
    }
    if (xchg_loc_begin(s, &r->x) != MPI_SUCCESS) {
        s->ran = XCHG_SPARSE_PEX; /* no node layout, on every rank alike */
        return xchg_sparse_run(XCHG_SPARSE_PEX, s);
    }
    p.lmax = xchg_node_largest(r->x.nl);
    int rc = window_for(s, &r->x, p.lmax, &p.w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!p.w) {
        s->ran = XCHG_SPARSE_PEX_LOC; /* no node window, on every rank alike */
        return xchg_sparse_run(XCHG_SPARSE_PEX_LOC, s);
    }
    rc = xchg_pl_alloc(r);
    if (rc != MPI_SUCCESS) {
        xchg_pl_free(r);
        return rc;
    }
    const int L = r->x.L;
    p.at1 = malloc(sizeof(char *) * 2 * (size_t)L);
    if (!p.at1) {
        /* before any synchronisation: every rank must still take part */
        s->local_err = xchg_error_code(MPI_ERR_NO_MEM, "pex_loc_shm: no memory for %d "
                                       "node-mates", L);
    }
    p.at3 = p.at1 ? p.at1 + L : NULL;
    p.e = p.w->epoch + 1;

    step1_write(&p);
    xchg_shm_sync(p.w, 2 * p.e - 1);
    int flag = 0, nodesum = 0;
    uint64_t want1 = 0;
    for (int j = 0; j < L; j++) {
        const xchg_shm_header *h = hdr1(&p, j);
        flag |= h->status == XCHG_SHM_ARG_ERROR;
        nodesum += (int)h->pad[PAD_DEGREE];
        if (round8(h->need) > want1)
            want1 = round8(h->need);
    }
    if (!flag) {
        rc = read_step(&p, 1, &r->out1, r->in1, r->in1b, p.at1);
        if (rc == MPI_SUCCESS)
            step1_file(&p, p.at1, r->in1b);
    }

    /* step 2, with the node's need: this call's step 1, the last call's whole */
    int gflag = flag, served_sum = 0;
    uint64_t want = want1 > s->ss->shm_want ? want1 : s->ss->shm_want;
    r->need_out = need_word(want);
    if (rc == MPI_SUCCESS && r->x.N > 1)
        rc = xchg_pl_pairs(r, flag, nodesum, &gflag, &served_sum);
    gflag |= r->lost != MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        pls_free(&p);
        return rc; /* MPI failed: the communicator's own error, as in pex_loc */
    }
    step3_write(&p, gflag, served_sum);
    xchg_shm_sync(p.w, 2 * p.e);

    /* every node's flag and sum (its relays' headers), every node's need */
    long long total = nodesum;
    uint64_t grow = (uint64_t)r->need_out, node_want = 0;
    for (int j = 0; j < L; j++) {
        const xchg_shm_header *h = hdr3(&p, j);
        gflag |= h->pad[PAD_FLAG] != 0;
        total += (long long)h->pad[PAD_SERVED];
        if (h->pad[PAD_RX_NEED] > grow)
            grow = h->pad[PAD_RX_NEED];
        if (h->need > node_want)
            node_want = h->need;
    }
    p.w->epoch = p.e;
    s->ss->shm_want = node_want;
    if (!gflag && grow > p.w->half && grow > s->ss->shm_grow)
        s->ss->shm_grow = grow; /* every aggregate read: the same on every rank */
    if (gflag) {
        if (s->local_err == MPI_SUCCESS)
            s->local_err = r->myerr != MPI_SUCCESS ? r->myerr : r->lost;
        pls_free(&p);
        return xchg_sparse_agree(s);
    }
    s->ss->census_msgs = total;
    rc = read_step(&p, 3, &r->out3, r->in3, r->in3b, p.at3);
    if (rc == MPI_SUCCESS)
        rc = r->lost != MPI_SUCCESS ? r->lost : deliver_all(&p, p.at3);
    pls_free(&p);
    return rc;
}
