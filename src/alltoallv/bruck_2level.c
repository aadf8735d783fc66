/*
 * bruck_2level.c - "bruck_2level": a two-level radix Bruck, across nodes
 * then inside them, each level with its own radix (after TuNA, Fan et
 * al., HPDC'25, "locality-aware radix Bruck with a burst limit").
 *
 * Nodes: the shared node layout (node_layout.h: shared-memory nodes, or
 * blocks of XCHG_RANKS_PER_NODE ranks). Node b has L_b members; Lmax is
 * the largest node. Place i (0 <= i < Lmax) of node b is played by its
 * member i mod L_b, so a member of a smaller node also plays the places
 * its node lacks (P = 7 on nodes of 3: 3, 3, 1; the lone rank of the last
 * node plays places 0, 1 and 2). A rank's own place is its place in its
 * node; its data travels only there.
 *
 * One call, two phases, each the two-phase Bruck engine of bruck_common.c
 * over a group given as a list (sizes ahead of the data, no padding):
 *  1. inter-node, once per place i this rank plays (ascending): a radix
 *     Bruck over the N players of place i, one per node (radix
 *     XCHG_BRUCK_RADIX_INTER, default ceil(sqrt N)). The block for node b
 *     is, at the own place, this rank's blocks for all members of b behind
 *     a header of their byte sizes (LEB128 varints: one byte per block
 *     under 128 bytes); elsewhere empty. After it the player of place i in
 *     node b holds, from every node a with a member at place i, that
 *     member's blocks for all of node b.
 *  2. intra-node: a radix Bruck over the node's members (radix
 *     XCHG_BRUCK_RADIX_INTRA, default ceil(sqrt L)). The block for member
 *     m is everything this rank received in phase 1 for m, behind a header
 *     of the sizes, in an order both ends know (places ascending, source
 *     nodes ascending, only places a node has). The member unpacks it
 *     source by source into recvbuf (checked against recvcounts).
 * Why inter first: the inter-node rounds, the expensive ones, then move
 * each rank's own, already packed blocks (one slot per node), and the
 * intra-node rounds, cheap, come last; the reverse order would forward
 * every block inside the node before its inter-node rounds as well.
 * Phase 1's final stores are kept (not copied) until phase 2 packs from
 * them. A round posts at most XCHG_THROTTLE partners at once (the burst
 * limit: a bounded number of sends in flight, which keeps NIC match lists
 * short at thousands of ranks; TuNA's README warns of overflows at 4096+).
 *
 * Errors: every size message carries a failure mark (xchg_agree_flag's
 * encoding: lowest failing rank and its error class, merged by MAX) and
 * the marks heard in phase 1 go into phase 2. A rank's argument error
 * (c->arg_err; its arrays are then zeros) or a failure before its first
 * message (no memory for its packed blocks or tables) is marked from the
 * start: phase 1 carries it to the same place of every node and phase 2
 * to every member, so every rank returns an error of that class and no
 * rank writes recvbuf (registry: agrees_errors), with no collective of its
 * own. Running out of memory later (forwarded data) is the Bruck family's
 * contract: that rank and every rank whose data passed through it return
 * MPI_ERR_NO_MEM, the others finish with correct data; no rank waits for
 * a message that never comes.
 *
 * Cost (L ranks per node, N nodes, radices re and ri): phase 1 has
 * ceil(log_re N) rounds of 2 (re-1) messages per rank (sizes, data), all
 * off the node; phase 2 ceil(log_ri L) rounds of 2 (ri-1) messages inside
 * it. At P = 4096 on 64 nodes of 64: 28 messages off the node and 28 on it
 * per rank, against 252 for bruck_radix (r = 64) and 4095 for linear.
 * Each byte crosses the node link up to ceil(log_re N) times and shared
 * memory up to ceil(log_ri L) times. Memory: the Bruck engine's stores of
 * each phase (about 3x what a rank holds at a round), phase 1's final
 * stores kept through phase 2, and O(P) tables. A rank that plays k places
 * runs k inter-node Brucks (nodes of unequal size only).
 */
#include "bruck_2level.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- the per-communicator state (its node state: node_state.h) ---- */

static void b2_free(void *p)
{
    b2_state *s = p;
    if (s) {
        free(s->players);
        free(s->members);
        free(s);
    }
}

/* The tables over the layout, on this rank (xchg_node_state_of agrees on
 * the outcome, so a failure is the same on every rank). */
static int b2_build(xchg_comm_state *cs, const xchg_node_layout *nl, void **out)
{
    const int N = nl->nnodes, L = nl->lsize;
    b2_state *s = calloc(1, sizeof *s);
    int lerr = MPI_SUCCESS;
    *out = s;
    if (s) {
        s->nl = nl;
        s->lmax = xchg_node_largest(nl);
        s->nplaces = (s->lmax - nl->lrank + L - 1) / L;
        s->players = malloc(sizeof(int) * (size_t)s->nplaces * (size_t)N);
        s->members = malloc(sizeof(int) * (size_t)L);
    }
    if (!s || !s->players || !s->members) {
        lerr = xchg_error_code(MPI_ERR_NO_MEM, "bruck_2level: no memory for node tables on "
                               "rank %d", cs->rank);
    } else {
        for (int k = 0; k < s->nplaces; k++)
            for (int b = 0; b < N; b++) {
                const int i = nl->lrank + k * L;
                s->players[(size_t)k * N + b] = xchg_node_member(nl, b, i % xchg_node_size(nl, b));
            }
        for (int m = 0; m < L; m++)
            s->members[m] = xchg_node_member(nl, nl->mynode, m);
    }
    return lerr;
}

static const xchg_node_state_ops b2_ops = {XCHG_ALGO_BRUCK_2LEVEL,
                                           "bruck_2level: making the node tables", b2_build,
                                           b2_free};

int xchg_bruck_2level_prepare(xchg_comm_state *cs)
{
    return xchg_node_state_prepare(cs, &b2_ops);
}

int xchg_bruck_2level_ready(const xchg_comm_state *cs)
{
    return xchg_node_state_ready(cs, &b2_ops);
}

/* ---- block headers: byte sizes as LEB128 varints ---- */

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    for (; v >= 128; v >>= 7)
        n++;
    return n;
}

static char *varint_put(char *p, uint64_t v)
{
    for (; v >= 128; v >>= 7)
        *p++ = (char)((v & 127) | 128);
    *p++ = (char)v;
    return p;
}

/* NULL where the header runs past end (never from our own sender). */
static const char *varint_get(const char *p, const char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int sh = 0; p < end && sh < 64; sh += 7) {
        unsigned char b = (unsigned char)*p++;
        x |= (uint64_t)(b & 127) << sh;
        if (!(b & 128)) {
            *v = x;
            return p;
        }
    }
    return NULL;
}

static int bad_header(const b2_call *x, int from)
{
    return xchg_error_code(MPI_ERR_INTERN, "%s: rank %d got a malformed block "
                           "header from rank %d", x->who, x->c->rank, from);
}

/* ---- one call ---- */

/* Phase 1 blocks: at the own place, this rank's blocks for every member
 * of node b behind their sizes; empty where all are (or elsewhere). */
static size_t inter_bytes(void *ctx, int b)
{
    b2_call *x = ctx;
    if (x->k != 0 || x->mark)
        return 0;
    const int Lb = xchg_node_size(x->nl, b);
    size_t hdr = 0, data = 0;
    for (int m = 0; m < Lb; m++) {
        size_t s = xchg_bruck_send_bytes(x->c, xchg_node_member(x->nl, b, m));
        hdr += varint_len(s);
        data += s;
    }
    return data ? hdr + data : 0;
}

static int inter_pack(void *ctx, int b, void *out)
{
    b2_call *x = ctx;
    const int Lb = xchg_node_size(x->nl, b);
    char *p = out;
    for (int m = 0; m < Lb; m++)
        p = varint_put(p, xchg_bruck_send_bytes(x->c, xchg_node_member(x->nl, b, m)));
    int err = MPI_SUCCESS;
    for (int m = 0; m < Lb && err == MPI_SUCCESS; m++) {
        const int d = xchg_node_member(x->nl, b, m);
        err = xchg_bruck_pack_for(x->c, d, p);
        p += xchg_bruck_send_bytes(x->c, d);
    }
    return err;
}

/* The node block from node a at this place: where each member's part is
 * (in the kept store, read in phase 2). */
static int inter_deliver(void *ctx, int a, const void *in, size_t bytes)
{
    b2_call *x = ctx;
    const char *p = in, *end = p + bytes;
    for (int m = 0; m < x->L; m++) {
        uint64_t len = 0;
        if (bytes && !(p = varint_get(p, end, &len)))
            return bad_header(x, x->st->players[(size_t)x->k * x->N + a]);
        x->sub_len[xchg_b2_sub_at(x, x->k, a, m)] = len;
    }
    for (int m = 0; m < x->L; m++) {
        size_t i = xchg_b2_sub_at(x, x->k, a, m);
        if (x->sub_len[i] > (uint64_t)(end - p))
            return bad_header(x, x->st->players[(size_t)x->k * x->N + a]);
        x->sub[i] = p;
        p += x->sub_len[i];
    }
    return MPI_SUCCESS;
}

/* Whether node a has a member at place i (a real source there). */
static int has_place(const b2_call *x, int a, int i)
{
    return i < xchg_node_size(x->nl, a);
}

/* Phase 2 blocks: what phase 1 brought for member m, behind its sizes. */
size_t xchg_b2_intra_bytes(void *ctx, int m)
{
    b2_call *x = ctx;
    if (x->mark)
        return 0;
    size_t hdr = 0, data = 0;
    for (int k = 0; k < x->st->nplaces; k++)
        for (int a = 0; a < x->N; a++)
            if (has_place(x, a, x->nl->lrank + k * x->L)) {
                uint64_t s = x->sub_len[xchg_b2_sub_at(x, k, a, m)];
                hdr += varint_len(s);
                data += (size_t)s;
            }
    return data ? hdr + data : 0;
}

int xchg_b2_intra_pack(void *ctx, int m, void *out)
{
    b2_call *x = ctx;
    char *p = out;
    for (int pass = 0; pass < 2; pass++) /* the sizes, then the bytes */
        for (int k = 0; k < x->st->nplaces; k++)
            for (int a = 0; a < x->N; a++) {
                if (!has_place(x, a, x->nl->lrank + k * x->L))
                    continue;
                size_t i = xchg_b2_sub_at(x, k, a, m);
                if (pass == 0) {
                    p = varint_put(p, x->sub_len[i]);
                } else if (x->sub_len[i]) {
                    memcpy(p, x->sub[i], (size_t)x->sub_len[i]);
                    xchg_charge_copy((size_t)x->sub_len[i]);
                    p += x->sub_len[i];
                }
            }
    return MPI_SUCCESS;
}

/* The block from member j: its places ascending, source nodes ascending;
 * the block from the member at place i of node a came from rank
 * xchg_node_member(a, i). Unpacked into recvbuf. */
int xchg_b2_intra_deliver(void *ctx, int j, const void *in, size_t bytes)
{
    b2_call *x = ctx;
    if (!bytes)
        return MPI_SUCCESS; /* every block it carries for us is empty */
    const int from = x->st->members[j];
    const char *h = in, *end = h + bytes, *d;
    /* the header first: d ends up at the data */
    d = h;
    for (int i = j; i < x->st->lmax; i += x->L)
        for (int a = 0; a < x->N; a++) {
            uint64_t len;
            if (has_place(x, a, i) && !(d = varint_get(d, end, &len)))
                return bad_header(x, from);
        }
    int err = MPI_SUCCESS;
    for (int i = j; i < x->st->lmax; i += x->L)
        for (int a = 0; a < x->N; a++) {
            uint64_t len = 0;
            if (!has_place(x, a, i))
                continue;
            h = varint_get(h, end, &len); /* parsed above: never NULL */
            if (len > (uint64_t)(end - d))
                return bad_header(x, from);
            int e = xchg_bruck_unpack_from(x->c, xchg_node_member(x->nl, a, i), d, (size_t)len,
                                           x->who);
            if (err == MPI_SUCCESS)
                err = e; /* the first; the other blocks are still delivered */
            d += len;
        }
    return err;
}

/* The radix of each level: across nodes, inside them. */
static const xchg_setting_def radix_inter = {"XCHG_BRUCK_RADIX_INTER", XCHG_KIND_INT, 2, 1 << 30,
                                             0, "ceil(sqrt N)",
                                             "clamped to the number of nodes N", "ceil(sqrt N)"};
static const xchg_setting_def radix_intra = {"XCHG_BRUCK_RADIX_INTRA", XCHG_KIND_INT, 2, 1 << 30,
                                             0, "ceil(sqrt L)", "clamped to the node size L",
                                             "ceil(sqrt L)"};
const xchg_setting_def *const xchg_bruck_2level_settings[] = {&radix_inter, &radix_intra, NULL};

int xchg_bruck_2level_radix_set(const xchg_settings *s, int inter)
{
    return (int)xchg_setting_of(s, inter ? &radix_inter : &radix_intra);
}

/* The radix of a level of n ranks: the setting (0: ceil(sqrt n)), 2..n. */
static int level_radix(int setting, int n)
{
    return xchg_bruck_radix_of(setting, n);
}

/* Phase 1: one inter-node Bruck per place played, the own place first. */
static int phase_inter(b2_call *x)
{
    xchg_call *c = x->c;
    const int P = c->size;
    for (int k = 0; k < x->st->nplaces; k++) {
        xchg_bruck_group g = {
            .size = x->N, .pos = x->nl->mynode, .ranks = x->st->players + (size_t)k * x->N,
            .radix = level_radix(xchg_bruck_2level_radix_set(&c->cs->settings, 1), x->N),
            .tag = xchg_algo_tag(XCHG_ALGO_BRUCK_2LEVEL), .burst = c->cs->settings.throttle,
            .who = x->who,
            .ctx = x, .bytes = inter_bytes, .pack = inter_pack, .deliver = inter_deliver,
            .mark = x->mark, .my_mark = xchg_agree_flag(c->rank, P, MPI_ERR_NO_MEM),
            .keep = 1};
        x->k = k;
        int e = xchg_bruck_group_run(c, &g);
        x->kept[k] = g.store;
        x->kept_bytes[k] = g.store_bytes;
        if (x->err == MPI_SUCCESS)
            x->err = e;
        x->mark = g.mark;
        if (g.mpierr != MPI_SUCCESS)
            return g.mpierr; /* MPI itself failed: stop */
    }
    return MPI_SUCCESS;
}

/* Phase 2: one intra-node Bruck; it delivers into recvbuf. */
int xchg_b2_phase_intra(b2_call *x)
{
    xchg_call *c = x->c;
    xchg_bruck_group g = {
        .size = x->L, .pos = x->nl->lrank, .ranks = x->st->members,
        .radix = level_radix(xchg_bruck_2level_radix_set(&c->cs->settings, 0), x->L),
        .tag = xchg_algo_tag(XCHG_ALGO_BRUCK_2LEVEL), .burst = c->cs->settings.throttle,
        .who = x->who,
        .ctx = x, .bytes = xchg_b2_intra_bytes, .pack = xchg_b2_intra_pack,
        .deliver = xchg_b2_intra_deliver,
        .mark = x->mark, .my_mark = xchg_agree_flag(c->rank, c->size, MPI_ERR_NO_MEM)};
    int e = xchg_bruck_group_run(c, &g);
    if (x->err == MPI_SUCCESS)
        x->err = e;
    x->mark = g.mark;
    return g.mpierr;
}

/* The call's result: this rank's own error, else the mark's (the same
 * class on every rank it reached). */
static int b2_result(const b2_call *x)
{
    const xchg_call *c = x->c;
    if (x->err != MPI_SUCCESS || !x->mark)
        return x->err;
    int cls = (int)(x->mark & ((1 << XCHG_AGREE_CLASS_BITS) - 1));
    int from = c->size - (int)(x->mark >> XCHG_AGREE_CLASS_BITS);
    if (cls == MPI_ERR_NO_MEM)
        return xchg_error_code(cls, "%s: rank %d ran out of temporary memory "
                               "(XCHG_MAX_TEMP_BYTES), so blocks for rank %d may be missing "
                               "and none were delivered", x->who, from, c->rank);
    return xchg_agree_result(c->rank, c->size, MPI_SUCCESS, x->mark, x->who);
}

int xchg_b2_state_of(xchg_comm_state *cs, b2_state **out)
{
    void *state = NULL;
    int rc = xchg_node_state_of(cs, &b2_ops, &state);
    *out = state;
    return rc;
}

static int b2_begin(xchg_call *c, const b2_state *st, const char *who, b2_call *x)
{
    memset(x, 0, sizeof *x);
    x->c = c, x->st = st, x->nl = st->nl, x->N = st->nl->nnodes, x->L = st->nl->lsize;
    x->who = who;
    x->mark = xchg_agree_flag(c->rank, c->size, c->arg_err);
    x->err = c->arg_err;
    /* tables: kept stores per run, sub-blocks per (run, node, member) */
    const size_t nk = (size_t)st->nplaces, nsub = nk * (size_t)x->N * (size_t)x->L;
    const size_t tbytes = nk * (sizeof(char *) + sizeof(size_t)) +
                          nsub * (sizeof(char *) + sizeof(uint64_t));
    int terr = MPI_SUCCESS;
    char *t = xchg_temp_alloc(c, tbytes, "bruck_2level: block tables", &terr);
    if (!t && c->temp_limit != SIZE_MAX) {
        /* Over the limit here only, perhaps, while the others are about to
         * wait for us: take these O(P) bytes anyway (still counted) and
         * take part without data, marked, so every rank fails alike. */
        size_t limit = c->temp_limit;
        int merr = MPI_SUCCESS;
        c->temp_limit = SIZE_MAX;
        t = xchg_temp_alloc(c, tbytes, "bruck_2level: block tables", &merr);
        c->temp_limit = limit;
        if (x->err == MPI_SUCCESS)
            x->err = terr;
        int64_t f = xchg_agree_flag(c->rank, c->size, terr);
        if (f > x->mark)
            x->mark = f;
    }
    if (!t)
        return terr; /* malloc itself failed: nothing left to take part with */
    memset(t, 0, tbytes);
    x->tables = t, x->tables_bytes = tbytes;
    x->kept = (char **)t;
    x->kept_bytes = (size_t *)(x->kept + nk);
    x->sub = (const char **)(x->kept_bytes + nk);
    x->sub_len = (uint64_t *)(x->sub + nsub);
    return MPI_SUCCESS;
}

static void b2_end(b2_call *x)
{
    for (int k = 0; k < x->st->nplaces; k++)
        xchg_temp_free(x->c, x->kept[k], x->kept_bytes[k]);
    xchg_temp_free(x->c, x->tables, x->tables_bytes);
}

int xchg_b2_deliver_own(b2_call *x)
{
    const int j = x->nl->lrank;
    int err = MPI_SUCCESS;
    for (int k = 0; k < x->st->nplaces; k++)
        for (int a = 0; a < x->N; a++) {
            const int i = j + k * x->L;
            if (!has_place(x, a, i))
                continue;
            const size_t s = xchg_b2_sub_at(x, k, a, j);
            int e = xchg_bruck_unpack_from(x->c, xchg_node_member(x->nl, a, i), x->sub[s],
                                           (size_t)x->sub_len[s], x->who);
            if (err == MPI_SUCCESS)
                err = e; /* the first; the other blocks are still delivered */
        }
    return err;
}

int xchg_b2_run(xchg_call *c, const b2_state *st, const char *who, xchg_b2_phase2_fn phase2,
                void *arg)
{
    b2_call x;
    int rc = b2_begin(c, st, who, &x);
    if (rc != MPI_SUCCESS)
        return rc;
    int mpierr = phase2(&x, phase_inter(&x), arg);
    b2_end(&x);
    if (mpierr != MPI_SUCCESS && x.err == MPI_SUCCESS)
        x.err = mpierr;
    return b2_result(&x);
}

/* Phase 2 by messages, unless MPI itself failed in phase 1. */
static int phase_intra_after(b2_call *x, int mpierr, void *arg)
{
    (void)arg;
    return mpierr != MPI_SUCCESS ? mpierr : xchg_b2_phase_intra(x);
}

int xchg_alltoallv_bruck_2level(xchg_call *c)
{
    if (c->size == 1)
        return c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    b2_state *st = NULL;
    int rc = xchg_b2_state_of(c->cs, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    return xchg_b2_run(c, st, "bruck_2level", phase_intra_after, NULL);
}
