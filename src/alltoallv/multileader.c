/*
 * multileader.c - "multileader": node-aware alltoallv through k leaders per
 * node, each serving its share of the node's members (the multi-leader
 * design of MPI Advance's locality-aware collectives).
 *
 * Groups: each node of the shared layout (node_layout.h), L members, is
 * cut into k' = min(k, L) groups of consecutive places, sizes floor or
 * ceil(L/k'); a group's first member leads it. k is XCHG_LEADERS where set
 * (agreed), else the k that balances a leader's messages inside its group
 * (2(L/k - 1)) against those to the other leaders (2(kN - 1)): the integer
 * nearest sqrt(L/N) for the largest node, at least 1
 * (xchg_multileader_leaders_for). k = 1 is one leader per node, as
 * hierarchical; k = L makes every rank a leader (a direct exchange with
 * headers).
 *
 * Three steps, on multileader's tag, every message a header of block
 * sizes then the blocks, received after a probe at its real size
 * (relay_common.h: format, flags, verdict):
 *  1. every member sends its leader all its blocks (sizes by position);
 *  2. every leader sends every other leader, on every node, its group's
 *     blocks for that leader's group (|G| x |H| sizes, source-major), one
 *     message per leader pair, and receives the same;
 *  3. every leader sends each member of its group the blocks for it from
 *     every other rank (sizes by source position).
 * The block to self is copied locally; the others are unpacked with the
 * sender's sizes once everything is in (too large for the receive count:
 * MPI_ERR_TRUNCATE on that rank, after the exchange). Every message is
 * sent, empty or not: its sizes are the sender's, which no receiver
 * knows beforehand. Messages: a member 1 each way; a leader |G|-1 inside
 * its group each way and (leaders in all) - 1 to the other leaders.
 *
 * Errors, agreed without an extra message: what a rank knows before data
 * moves (argument error, self copy, memory for its packed blocks and its
 * declared incoming ones) rides in step 1's header to its leader, every
 * leader hears from every leader in step 2 and tells its members in step
 * 3: every rank returns the same class and nothing is unpacked. A leader
 * refused memory for what it relays drains it and marks it lost: it and
 * the ranks that data was for return MPI_ERR_NO_MEM (relay_common.h).
 *
 * Memory: a member holds its outgoing and incoming blocks; a leader its
 * group's outgoing and incoming blocks (the relay). Header and offset
 * tables (a leader: about 3 |G| P + P entries) depend on the layout only,
 * its node state (node_state.h: built, agreed and cached once).
 */
#include "node_state.h"
#include "relay_common.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { ML_HDR = XCHG_RELAY_HDR };

int xchg_multileader_leaders_for(long setting, int L, int N)
{
    if (setting > 0)
        return setting < L ? (int)setting : L;
    int k = (int)lround(sqrt((double)L / (double)(N > 0 ? N : 1)));
    return k < 1 ? 1 : k > L ? L : k;
}

typedef struct ml_state {
    const xchg_node_layout *nl;
    int P, k, ngroups;
    int *gstart;       /* group -> first position; gstart[ngroups] = P */
    int *pos_of;       /* rank -> position */
    int g, gsz, mi;    /* this rank's group, its size, this rank's place in it */
    int64_t *zero;     /* header of a rank that packs nothing */
    int64_t *hin3;     /* a member's header-only slot */
    /* a leader's tables */
    MPI_Aint *off1;    /* gsz x (P+1): position offsets in members' messages */
    MPI_Aint *off2;    /* P x gsz: (source position, member) offsets in step-2 messages */
    int64_t *hdr2, *hin2; /* per group H: ML_HDR + gsz |H| words at gstart[H] gsz + H ML_HDR */
    int64_t *hdr3, *hin1; /* per member: ML_HDR + P words */
    xchg_relay_msg *in1, *in2, in3;
    MPI_Request *sreq, *rreq;
    MPI_Aint *segd;
    int *segl;
    void *mem;
} ml_state;

static void ml_free(void *p)
{
    ml_state *s = p;
    if (s)
        free(s->mem), free(s->gstart), free(s->pos_of);
    free(s);
}

/* The groups of every node (every rank computes the same). */
static int ml_groups(ml_state *s, const xchg_node_layout *n, long setting)
{
    int maxL = 1;
    for (int a = 0; a < n->nnodes; a++)
        if (xchg_node_size(n, a) > maxL)
            maxL = xchg_node_size(n, a);
    s->k = xchg_multileader_leaders_for(setting, maxL, n->nnodes);
    s->gstart = malloc(sizeof(int) * ((size_t)s->P + 1));
    s->pos_of = malloc(sizeof(int) * (size_t)s->P);
    if (!s->gstart || !s->pos_of)
        return MPI_ERR_NO_MEM;
    int ng = 0;
    for (int a = 0; a < n->nnodes; a++) {
        int L = xchg_node_size(n, a), kk = s->k < L ? s->k : L;
        for (int q = 0; q < kk; q++)
            s->gstart[ng++] = n->first[a] + (int)((long long)q * L / kk);
    }
    s->ngroups = ng;
    s->gstart[ng] = s->P;
    for (int p = 0; p < s->P; p++)
        s->pos_of[n->perm[p]] = p;
    return MPI_SUCCESS;
}

static int ml_tables(ml_state *s, const xchg_node_layout *n, int me, long setting)
{
    int rc = ml_groups(s, n, setting);
    if (rc != MPI_SUCCESS)
        return rc;
    const size_t P = (size_t)s->P, NG = (size_t)s->ngroups;
    int mypos = s->pos_of[me];
    while (s->gstart[s->g + 1] <= mypos)
        s->g++;
    s->gsz = s->gstart[s->g + 1] - s->gstart[s->g];
    s->mi = mypos - s->gstart[s->g];
    const size_t G = (size_t)s->gsz, H = ML_HDR + P;
    const int leader = s->mi == 0;
    size_t n64 = 2 * H + (leader ? 2 * (NG * ML_HDR + G * P) + 2 * G * H : 0);
    size_t naint = leader ? G * (P + 1) + P * G + P + G + 2 : 1;
    size_t nmsg = leader ? G + NG : 0;
    size_t nreq = leader ? 2 * (G + NG) + 2 : 2;
    size_t nint = leader ? P + G + 2 : 1;
    char *m = calloc(1, sizeof(int64_t) * n64 + sizeof(MPI_Aint) * naint +
                           sizeof(xchg_relay_msg) * nmsg + sizeof(MPI_Request) * nreq +
                           sizeof(int) * nint);
    if (!m)
        return MPI_ERR_NO_MEM;
    s->mem = m;
    s->zero = (int64_t *)m;
    s->hin3 = s->zero + H;
    int64_t *t = s->hin3 + H;
    if (leader) {
        s->hdr2 = t, t += NG * ML_HDR + G * P;
        s->hin2 = t, t += NG * ML_HDR + G * P;
        s->hdr3 = t, t += G * H;
        s->hin1 = t, t += G * H;
    }
    s->off1 = (MPI_Aint *)t;
    s->off2 = s->off1 + (leader ? G * (P + 1) : 0);
    s->segd = s->off2 + (leader ? P * G : 0);
    s->in1 = (xchg_relay_msg *)(s->segd + (leader ? P + G + 2 : 1));
    s->in2 = s->in1 + (leader ? G : 0);
    s->sreq = (MPI_Request *)(s->in2 + (leader ? NG : 0));
    s->rreq = s->sreq + (leader ? G + NG + 1 : 1);
    s->segl = (int *)(s->rreq + (leader ? G + NG + 1 : 1));
    return MPI_SUCCESS;
}

static const xchg_setting_def leaders = {"XCHG_LEADERS", XCHG_KIND_INT, 1, INT_MAX, 0,
                                         "from the node sizes", NULL,
                                         "round(sqrt(ranks per node / nodes)), at least 1"};
const xchg_setting_def *const xchg_multileader_settings[] = {&leaders, NULL};

long xchg_multileader_leaders_set(const xchg_settings *s)
{
    return (long)xchg_setting_of(s, &leaders);
}

/* The group tables on this rank (xchg_node_state_of agrees on the
 * outcome, like hierarchical's). */
static int ml_build(xchg_comm_state *cs, const xchg_node_layout *nl, void **out)
{
    ml_state *s = calloc(1, sizeof *s);
    *out = s;
    int lerr = MPI_ERR_NO_MEM;
    if (s) {
        s->nl = nl, s->P = cs->size;
        lerr = ml_tables(s, nl, cs->rank, xchg_multileader_leaders_set(&cs->settings));
    }
    if (lerr != MPI_SUCCESS)
        lerr = xchg_error_code(MPI_ERR_NO_MEM, "multileader: no memory for the group "
                               "tables on rank %d", cs->rank);
    return lerr;
}

static const xchg_node_state_ops ml_ops = {XCHG_ALGO_MULTILEADER,
                                           "multileader: making the group tables", ml_build,
                                           ml_free};

int xchg_multileader_prepare(xchg_comm_state *cs)
{
    return xchg_node_state_prepare(cs, &ml_ops);
}

int xchg_multileader_ready(const xchg_comm_state *cs)
{
    return xchg_node_state_ready(cs, &ml_ops);
}

typedef struct ml_run {
    xchg_relay r;
    xchg_call *c;
    ml_state *s;
    char *pack;            /* header and packed outgoing blocks, by position */
    size_t pack_b;
    int leader;
} ml_run;

/* Before data moves: self copy, packed blocks, declared incoming room. */
static void ml_reserve(ml_run *x)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int P = s->P, me = c->rank;
    const size_t hb = sizeof(int64_t) * (size_t)(ML_HDR + P);
    int64_t out = 0, in = 0;
    x->r.myerr = c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    for (int r = 0; r < P; r++)
        if (r != me) {
            out += (int64_t)c->sendcounts[r] * c->st.size;
            in += (int64_t)c->recvcounts[r] * c->rt.size;
        }
    if (x->r.myerr == MPI_SUCCESS && out + (int64_t)hb > INT_MAX)
        x->r.myerr = xchg_error_code(MPI_ERR_COUNT, "multileader: rank %d sends %lld bytes, "
                                     "beyond the int range of one message", me,
                                     (long long)out);
    if (x->r.myerr == MPI_SUCCESS) {
        x->pack_b = hb + (size_t)out;
        x->r.room_b = x->leader ? 0 : hb + (size_t)in;
        x->pack = xchg_temp_alloc(c, x->pack_b, "multileader: outgoing blocks", &x->r.myerr);
        if (x->pack && !x->leader)
            x->r.room = xchg_temp_alloc(c, x->r.room_b, "multileader: incoming blocks",
                                        &x->r.myerr);
    }
    if (x->r.myerr != MPI_SUCCESS && x->pack) { /* a flagged rank sends headers only */
        xchg_temp_free(c, x->pack, x->pack_b);
        x->pack = NULL;
    }
    xchg_relay_flag_own(&x->r);
}

/* This rank's step-1 message: header and blocks by position. */
static int ml_pack(ml_run *x, const int64_t **hdr, size_t *bytes)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int P = s->P;
    const size_t hb = sizeof(int64_t) * (size_t)(ML_HDR + P);
    int64_t *h = x->pack ? (int64_t *)x->pack : s->zero;
    h[0] = x->r.agreed;
    h[1] = x->r.lost;
    *hdr = h;
    *bytes = hb;
    if (!x->pack)
        return MPI_SUCCESS;
    int err = MPI_SUCCESS;
    char *o = x->pack + hb;
    for (int p = 0; p < P; p++) {
        int r = s->nl->perm[p];
        h[ML_HDR + p] = r == c->rank ? 0 : (int64_t)c->sendcounts[r] * c->st.size;
        int e = h[ML_HDR + p] > 0 ? xchg_pack_block(c->sendbuf, c->sdispls[r],
                                                    c->sendcounts[r], &c->st, o)
                                  : MPI_SUCCESS;
        if (err == MPI_SUCCESS)
            err = e;
        o += h[ML_HDR + p];
    }
    *bytes = (size_t)(o - x->pack);
    return err;
}

/* 1. Members to their leader. */
static int ml_gather(ml_run *x)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int P = s->P, G = s->gsz, g0 = s->gstart[s->g];
    const int *perm = s->nl->perm;
    const int64_t *h;
    size_t b;
    int err = ml_pack(x, &h, &b);
    if (err != MPI_SUCCESS && x->r.lerr == MPI_SUCCESS)
        x->r.lerr = err; /* MPI_Pack failed: reported at the end, the rest still moves */
    if (!x->leader)
        return MPI_Isend(h, (int)b, MPI_BYTE, perm[g0], x->r.tag, c->comm,
                         &x->r.sreq[x->r.nsreq++]);
    xchg_relay_msg *own = &s->in1[0];
    memset(own, 0, sizeof *own);
    own->h = h;
    own->data = (const char *)(h + ML_HDR + P);
    own->ok = 1;
    err = MPI_SUCCESS;
    int nr = 0;
    for (int i = 1; i < G && err == MPI_SUCCESS; i++)
        err = xchg_relay_post(&x->r, perm[g0 + i], s->hin1 + (size_t)i * (ML_HDR + P),
                              ML_HDR + P, &s->in1[i], 0, &s->rreq[nr++]);
    int werr = xchg_call_waitall(c, nr, s->rreq);
    if (err == MPI_SUCCESS)
        err = werr;
    for (int i = 1; i < G && err == MPI_SUCCESS; i++)
        xchg_relay_check(&x->r, &s->in1[i], P);
    for (int i = 0; i < G && err == MPI_SUCCESS; i++) {
        MPI_Aint *o = s->off1 + (size_t)i * ((size_t)P + 1), run = 0;
        for (int p = 0; p < P; p++) {
            o[p] = run;
            run += (MPI_Aint)xchg_relay_size(&s->in1[i], p);
        }
        o[P] = run;
    }
    return err;
}

/* Header words before group H's step-2 header (hdr2, hin2). */
static size_t h2_at(const ml_state *s, int H)
{
    return (size_t)H * ML_HDR + (size_t)s->gstart[H] * (size_t)s->gsz;
}

/* 2. Leaders to leaders: one message per pair. */
static int ml_leaders(ml_run *x)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int P = s->P, G = s->gsz;
    const int *perm = s->nl->perm;
    int err = MPI_SUCCESS;
    for (int H = 0; H < s->ngroups && err == MPI_SUCCESS; H++) {
        if (H == s->g)
            continue;
        const int hs = s->gstart[H], hn = s->gstart[H + 1] - hs;
        int64_t *h = s->hdr2 + h2_at(s, H), total = 0;
        for (int i = 0; i < G; i++)
            for (int j = 0; j < hn; j++) {
                h[ML_HDR + i * hn + j] = x->r.agreed ? 0 : xchg_relay_size(&s->in1[i], hs + j);
                total += h[ML_HDR + i * hn + j];
            }
        if (total + (int64_t)sizeof(int64_t) * (ML_HDR + G * hn) > INT_MAX) {
            xchg_relay_lose(&x->r, xchg_error_code(MPI_ERR_COUNT, "multileader: rank %d "
                                                   "relays %lld bytes to rank %d, beyond the "
                                                   "int range of one message", c->rank,
                                                   (long long)total, perm[hs]));
            memset(h + ML_HDR, 0, sizeof(int64_t) * (size_t)(G * hn));
            total = 0;
        }
        h[0] = x->r.agreed;
        h[1] = x->r.lost;
        int nseg = 0;
        xchg_relay_segment(&x->r, nseg++, h, (int64_t)sizeof(int64_t) * (ML_HDR + G * hn));
        for (int i = 0; i < G && total > 0; i++) {
            const MPI_Aint *o = s->off1 + (size_t)i * ((size_t)P + 1);
            if (s->in1[i].ok)
                xchg_relay_segment(&x->r, nseg++, s->in1[i].data + o[hs],
                                   (int64_t)(o[hs + hn] - o[hs]));
        }
        err = xchg_relay_send(&x->r, nseg, perm[hs]);
    }
    int nr = 0;
    for (int H = 0; H < s->ngroups && err == MPI_SUCCESS; H++) {
        memset(&s->in2[H], 0, sizeof s->in2[H]);
        if (H != s->g)
            err = xchg_relay_post(&x->r, perm[s->gstart[H]], s->hin2 + h2_at(s, H),
                                  ML_HDR + G * (s->gstart[H + 1] - s->gstart[H]), &s->in2[H], 0,
                                  &s->rreq[nr++]);
    }
    int werr = xchg_call_waitall(c, nr, s->rreq);
    if (err == MPI_SUCCESS)
        err = werr;
    for (int H = 0; H < s->ngroups && err == MPI_SUCCESS; H++) {
        if (H == s->g)
            continue;
        const int hs = s->gstart[H], hn = s->gstart[H + 1] - hs;
        xchg_relay_check(&x->r, &s->in2[H], hn * G);
        MPI_Aint run = 0;
        for (int i = 0; i < hn; i++)
            for (int j = 0; j < G; j++) {
                s->off2[(size_t)(hs + i) * G + j] = run;
                run += (MPI_Aint)xchg_relay_size(&s->in2[H], i * G + j);
            }
    }
    return err;
}

/* The block from position p to member j of this leader's group: its size
 * and where it is (from a group-mate's step-1 message or a step 2's). */
static int64_t ml_block(const ml_run *x, int p, int j, const char **at)
{
    const ml_state *s = x->s;
    const int G = s->gsz, g0 = s->gstart[s->g];
    if (p >= g0 && p < g0 + G) {
        const xchg_relay_msg *m = &s->in1[p - g0];
        *at = m->data + s->off1[(size_t)(p - g0) * ((size_t)s->P + 1) + g0 + j];
        return xchg_relay_size(m, g0 + j);
    }
    int H = s->g; /* the source's group: groups are in position order */
    while (p < s->gstart[H])
        H--;
    while (p >= s->gstart[H + 1])
        H++;
    const xchg_relay_msg *m = &s->in2[H];
    *at = m->data + s->off2[(size_t)p * G + j];
    return xchg_relay_size(m, (p - s->gstart[H]) * G + j);
}

/* 3. Leaders to their members. */
static int ml_scatter(ml_run *x)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int P = s->P, G = s->gsz, g0 = s->gstart[s->g];
    const int *perm = s->nl->perm;
    int err = MPI_SUCCESS;
    if (!x->leader) {
        MPI_Request req;
        memset(&s->in3, 0, sizeof s->in3);
        err = xchg_relay_post(&x->r, perm[g0], s->hin3, ML_HDR + P, &s->in3, 1, &req);
        int werr = xchg_call_waitall(c, 1, &req);
        if (err == MPI_SUCCESS)
            err = werr;
        if (err == MPI_SUCCESS)
            xchg_relay_check(&x->r, &s->in3, P);
        return err;
    }
    for (int j = 1; j < G && err == MPI_SUCCESS; j++) {
        int64_t *h = s->hdr3 + (size_t)j * (ML_HDR + (size_t)P), total = 0;
        const char *at;
        for (int p = 0; p < P; p++) {
            h[ML_HDR + p] = x->r.agreed ? 0 : ml_block(x, p, j, &at);
            total += h[ML_HDR + p];
        }
        if (total + (int64_t)sizeof(int64_t) * (ML_HDR + P) > INT_MAX) {
            xchg_relay_lose(&x->r, xchg_error_code(MPI_ERR_COUNT, "multileader: rank %d "
                                                   "relays %lld bytes to rank %d, beyond the "
                                                   "int range of one message", c->rank,
                                                   (long long)total, perm[g0 + j]));
            memset(h + ML_HDR, 0, sizeof(int64_t) * (size_t)P);
            total = 0;
        }
        h[0] = x->r.agreed;
        h[1] = x->r.lost;
        int nseg = 0;
        xchg_relay_segment(&x->r, nseg++, h, (int64_t)sizeof(int64_t) * (ML_HDR + P));
        for (int p = 0; p < P && total > 0; p++)
            if (h[ML_HDR + p] > 0) {
                ml_block(x, p, j, &at);
                xchg_relay_segment(&x->r, nseg++, at, h[ML_HDR + p]);
            }
        err = xchg_relay_send(&x->r, nseg, perm[g0 + j]);
    }
    return err;
}

/* Every block for this rank, with its sender's size. */
static int ml_unpack(ml_run *x)
{
    xchg_call *c = x->c;
    ml_state *s = x->s;
    const int *perm = s->nl->perm;
    int err = MPI_SUCCESS;
    const char *p3 = x->leader ? NULL : s->in3.data;
    for (int p = 0; p < s->P; p++) {
        const char *at;
        int64_t b = x->leader ? ml_block(x, p, 0, &at) : xchg_relay_size(&s->in3, p);
        if (!x->leader)
            at = p3, p3 += b;
        if (b > 0 && perm[p] != c->rank)
            err = xchg_unpack_checked(c, "multileader", perm[p], at, b, err);
    }
    return err;
}

static void ml_release(ml_run *x)
{
    ml_state *s = x->s;
    if (x->leader) {
        for (int i = 0; i < s->gsz; i++)
            xchg_relay_msg_free(&x->r, &s->in1[i]);
        for (int H = 0; H < s->ngroups; H++)
            xchg_relay_msg_free(&x->r, &s->in2[H]);
    } else {
        xchg_relay_msg_free(&x->r, &s->in3);
    }
    xchg_temp_free(x->c, x->r.room, x->r.room_b);
    xchg_temp_free(x->c, x->pack, x->pack_b);
}

int xchg_alltoallv_multileader(xchg_call *c)
{
    if (c->size == 1)
        return c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    void *state = NULL;
    int rc = xchg_node_state_of(c->cs, &ml_ops, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    ml_state *s = state;
    ml_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.s = s, x.leader = s->mi == 0;
    x.r.c = c, x.r.who = "multileader", x.r.tag = xchg_algo_tag(XCHG_ALGO_MULTILEADER);
    x.r.myerr = x.r.lerr = MPI_SUCCESS;
    x.r.segd = s->segd, x.r.segl = s->segl, x.r.sreq = s->sreq;
    if (x.leader) {
        memset(s->in1, 0, sizeof *s->in1 * (size_t)s->gsz);
        memset(s->in2, 0, sizeof *s->in2 * (size_t)s->ngroups);
    }
    memset(&s->in3, 0, sizeof s->in3);

    ml_reserve(&x);
    int err = ml_gather(&x);
    if (err == MPI_SUCCESS && x.leader)
        err = ml_leaders(&x);
    if (err == MPI_SUCCESS)
        err = ml_scatter(&x);
    int werr = xchg_call_waitall(c, x.r.nsreq, s->sreq); /* before the buffers go */
    if (err == MPI_SUCCESS)
        err = werr;
    if (err == MPI_SUCCESS && (err = xchg_relay_verdict(&x.r)) == MPI_SUCCESS) {
        err = ml_unpack(&x);
        if (err == MPI_SUCCESS)
            err = x.r.lerr;
    }
    ml_release(&x);
    return err;
}
