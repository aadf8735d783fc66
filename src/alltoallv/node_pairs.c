/*
 * node_pairs.c - "node_pairs": locality-aware alltoallv, one message per
 * node pair and no single leader (the idea of Open MPI coll/han's
 * alltoallv and MPI Advance's locality-aware alltoall).
 *
 * Nodes: the shared node layout (node_layout.h). Every member of a node
 * relays for some of the other nodes: on node a (L_a members, N nodes),
 * node b at distance d = (b - a) mod N (1 .. N-1) is served by the member
 * at place (d - 1) mod L_a. So the N-1 remote nodes are dealt round the
 * members, each serving floor or ceil((N-1)/L_a) of them whatever the node
 * sizes (uneven nodes, 1-rank nodes: it serves all); taking b mod L_a
 * instead gives a member up to twice its share when N-1 is not a multiple
 * of L_a. The relay of b on a and the relay of a on b are partners: each
 * node pair is one message each way between them.
 *
 * Three steps, all messages with node_pairs' tag on the private
 * communicator; every message is a header (two flags, then the byte size
 * of each block it carries, in an order both sides know from the layout)
 * followed by the blocks, and is received after a probe, at its real size
 * (no receive can be truncated):
 *  1. gather, inside the node: each member sends each node-mate j one
 *     message with its block for j itself and its blocks for every member
 *     of the nodes j serves (the rank's own share for the nodes it serves
 *     stays in place);
 *  2. between nodes: each relay sends each partner the blocks of all its
 *     node's members for all members of the partner's node (sizes L_a x
 *     L_b, source-major), and receives the same from it;
 *  3. scatter, inside the node: each relay sends each node-mate the blocks
 *     it received for it, from every member of the nodes it serves.
 * The block to self is copied locally. Blocks are unpacked, with the
 * sender's sizes, only once every message is in: a block larger than its
 * receive count is MPI_ERR_TRUNCATE (that rank's, after the exchange).
 * Messages per rank: L-1 each way inside the node twice, and
 * about (N-1)/L each way between nodes, against P-1 for linear.
 *
 * Empty messages: the sizes are the sender's and no receiver can know them
 * beforehand, so every message of steps 1 and 2 is sent even when it
 * carries no block; a step-3 message is skipped exactly when its sender
 * serves no node (its place is N-1 or more), which both sides know from
 * the layout. A
 * header-only message also carries the flags, which is what makes the
 * verdict below global.
 *
 * Errors, agreed with no extra message: the first flag word carries what a
 * rank knows before any data moves (its argument error c->arg_err, its
 * self copy, and temporary memory for its packed blocks and its declared
 * incoming step-3 messages) as xchg_agree_flag's value, merged by maximum.
 * Step 1 reaches every node-mate, every relay sends step 2 only after all
 * of step 1 arrived, and step 3 only after all of step 2; so every rank
 * has every rank's flag once its step-3 messages are in (the relays of its
 * node together serve every other node). A flagged call unpacks nothing
 * and returns the agreed class on every rank. A rank that knows a flag
 * sends headers only, and a header-only message is received into tables
 * kept for it, never temporary memory: so a flag arrives whatever memory
 * a relay has left. The one thing no rank can know before data
 * moves is how much it relays: a relay refused that memory (XCHG_MAX_TEMP_
 * BYTES, or malloc) drains the message, and the second flag word ("lost")
 * travels on with everything it sends after, so it and the ranks whose
 * data passed through it return MPI_ERR_NO_MEM while the others finish (as
 * in bruck_twophase); never a hang. A relayed message over INT_MAX bytes
 * is lost the same way (MPI_ERR_COUNT).
 *
 * Memory: temporaries are this rank's packed outgoing blocks, its declared
 * incoming step-3 bytes, and what it relays (steps 1 and 2 as received);
 * header and offset tables (O(P) entries) depend only on the layout and are
 * its node state (node_state.h: built, agreed and cached once). The
 * messages' format, probes, flags and verdict are relay_common.h's (shared
 * with multileader). Intra-node steps use messages, not MPI-3
 * shared-memory windows (simpler, and the same code runs nonblocking;
 * sim/intranode.c measures what a window would save).
 */
#include "node_state.h"
#include "relay_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { NP_HDR = XCHG_RELAY_HDR };

typedef struct np_state {
    const xchg_node_layout *nl; /* the communicator's (not owned) */
    int N, a, la, L;            /* nodes, this node, place in it, its size */
    int ns;                     /* remote nodes this rank serves */
    int *serve, *partner;       /* their ids (nearest first), the rank serving us there */
    int *tpos;                  /* ns+1: first place of each served node among my targets */
    int *nt;                    /* L: targets of each node-mate (itself, then its nodes) */
    int *o2;                    /* ns+1: first (source, dest) pair of each served node */
    int64_t *zero;              /* headers of a rank that packs nothing (max size) */
    int64_t *hdr2, *hdr3;       /* step-2 headers by served node, step-3 by node-mate */
    int64_t *hin1, *hin2, *hin3; /* where messages of a header only are received */
    MPI_Aint *off1;             /* L x (ns+1): served nodes' segments in step-1 messages */
    MPI_Aint *offs2;            /* o2[ns]: blocks' offsets in step-2 messages */
    xchg_relay_msg *in1, *in2, *in3;    /* L, ns, L */
    MPI_Request *sreq, *rreq;
    MPI_Aint *segd;
    int *segl;
    size_t *poff;               /* L+1: node-mates' segments in the pack buffer */
    void *mem;
} np_state;

/* Place on node a of the member serving node b (b != a). */
static int relay_place(const xchg_node_layout *n, int a, int b)
{
    int d = (b - a + n->nnodes) % n->nnodes;
    return (d - 1) % xchg_node_size(n, a);
}

static void np_free(void *p)
{
    np_state *s = p;
    if (s)
        free(s->mem);
    free(s);
}

/* One block of memory for every table (sizes from the layout only). */
static int np_tables(np_state *s, const xchg_node_layout *n)
{
    const int N = s->N, L = s->L, a = s->a;
    int ns = 0, nt_max = 1, sum_lb = 0;
    for (int d = s->la + 1; d < N; d += L)
        ns++;
    s->ns = ns;
    /* sizes first, on the stack of counts */
    size_t n_int = 2 * (size_t)ns + 2 * ((size_t)ns + 1) + (size_t)L;
    size_t wanted_segs;
    /* nt of every node-mate: 1 + members of the nodes it serves */
    int *nt_tmp = malloc(sizeof(int) * (size_t)L);
    if (!nt_tmp)
        return MPI_ERR_NO_MEM;
    for (int l = 0; l < L; l++) {
        nt_tmp[l] = 1;
        for (int d = l + 1; d < N; d += L)
            nt_tmp[l] += xchg_node_size(n, (a + d) % N);
        if (nt_tmp[l] > nt_max)
            nt_max = nt_tmp[l];
    }
    int o2n = 0;
    for (int d = s->la + 1; d < N; d += L) {
        int lb = xchg_node_size(n, (a + d) % N);
        sum_lb += lb;
        o2n += lb * L;
    }
    wanted_segs = (size_t)(L + 1 > nt_max ? L + 1 : nt_max) + 1;
    size_t n64 = (size_t)(NP_HDR + nt_max) + 2 * ((size_t)ns * NP_HDR + (size_t)o2n) +
                 2 * (size_t)L * (size_t)(NP_HDR + sum_lb + 1) +
                 (size_t)L * (size_t)(NP_HDR + nt_max);
    size_t naint = (size_t)L * ((size_t)ns + 1) + (size_t)o2n + 1 + wanted_segs;
    size_t nmsg = 2 * (size_t)L + (size_t)ns;
    size_t nsreq = 2 * (size_t)L + (size_t)ns, nrreq = (size_t)(L > ns ? L : ns) + 1;
    size_t bytes = sizeof(int64_t) * n64 + sizeof(MPI_Aint) * naint +
                   sizeof(xchg_relay_msg) * nmsg + sizeof(MPI_Request) * (nsreq + nrreq) +
                   sizeof(size_t) * ((size_t)L + 1) + sizeof(int) * (n_int + wanted_segs);
    char *m = calloc(1, bytes);
    if (!m) {
        free(nt_tmp);
        return MPI_ERR_NO_MEM;
    }
    s->mem = m;
    s->zero = (int64_t *)m;
    s->hdr2 = s->zero + NP_HDR + nt_max;
    s->hdr3 = s->hdr2 + (size_t)ns * NP_HDR + (size_t)o2n;
    s->hin1 = s->hdr3 + (size_t)L * (size_t)(NP_HDR + sum_lb + 1);
    s->hin2 = s->hin1 + (size_t)L * (size_t)(NP_HDR + sum_lb + 1);
    s->hin3 = s->hin2 + (size_t)ns * NP_HDR + (size_t)o2n;
    s->off1 = (MPI_Aint *)(s->hin3 + (size_t)L * (size_t)(NP_HDR + nt_max));
    s->offs2 = s->off1 + (size_t)L * ((size_t)ns + 1);
    s->segd = s->offs2 + o2n + 1;
    s->in1 = (xchg_relay_msg *)(s->segd + wanted_segs);
    s->in2 = s->in1 + L;
    s->in3 = s->in2 + ns;
    s->poff = (size_t *)(s->in3 + L);
    s->sreq = (MPI_Request *)(s->poff + (size_t)L + 1);
    s->rreq = s->sreq + nsreq;
    s->serve = (int *)(s->rreq + nrreq);
    s->partner = s->serve + ns;
    s->tpos = s->partner + ns;
    s->o2 = s->tpos + ns + 1;
    s->nt = s->o2 + ns + 1;
    s->segl = s->nt + L;
    memcpy(s->nt, nt_tmp, sizeof(int) * (size_t)L);
    free(nt_tmp);
    int i = 0;
    s->tpos[0] = 1;
    s->o2[0] = 0;
    for (int d = s->la + 1; d < N; d += L, i++) {
        int b = (a + d) % N, lb = xchg_node_size(n, b);
        s->serve[i] = b;
        s->partner[i] = xchg_node_member(n, b, relay_place(n, b, a));
        s->tpos[i + 1] = s->tpos[i] + lb;
        s->o2[i + 1] = s->o2[i] + lb * L;
    }
    return MPI_SUCCESS;
}

/* The tables over the node layout, on this rank (xchg_node_state_of
 * agrees on the outcome, like hierarchical's). */
static int np_build(xchg_comm_state *cs, const xchg_node_layout *nl, void **out)
{
    np_state *s = calloc(1, sizeof *s);
    *out = s;
    int lerr = MPI_ERR_NO_MEM;
    if (s) {
        s->nl = nl;
        s->N = nl->nnodes, s->a = nl->mynode, s->la = nl->lrank, s->L = nl->lsize;
        lerr = np_tables(s, nl);
    }
    if (lerr != MPI_SUCCESS)
        lerr = xchg_error_code(MPI_ERR_NO_MEM, "node_pairs: no memory for the node tables "
                               "on rank %d", cs->rank);
    return lerr;
}

static const xchg_node_state_ops np_ops = {XCHG_ALGO_NODE_PAIRS,
                                           "node_pairs: making the node tables", np_build,
                                           np_free};

int xchg_node_pairs_prepare(xchg_comm_state *cs)
{
    return xchg_node_state_prepare(cs, &np_ops);
}

int xchg_node_pairs_ready(const xchg_comm_state *cs)
{
    return xchg_node_state_ready(cs, &np_ops);
}

/* One call across the three steps. */
typedef struct np_run {
    xchg_relay r;          /* the flags, errors, room and sends (relay_common.h) */
    xchg_call *c;
    np_state *s;
    char *pack;            /* packed outgoing blocks */
    size_t pack_b;
} np_run;

/* Before any data moves: the self copy, this rank's packed blocks and
 * its declared incoming step-3 bytes. A failure goes into the agreed flag. */
static void np_reserve(np_run *x)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int N = s->N, L = s->L, a = s->a, me = c->rank;
    const int64_t ssz = c->st.size, rsz = c->rt.size;
    x->r.myerr = c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    /* pack: per node-mate j, header words then its targets' blocks */
    size_t pb = 0;
    for (int j = 0; j < L; j++) {
        int64_t t = 0;
        s->poff[j] = pb;
        for (int d = j + 1; d < N; d += L) {
            int b = (a + d) % N;
            for (int k = 0; k < xchg_node_size(n, b); k++)
                t += (int64_t)c->sendcounts[xchg_node_member(n, b, k)] * ssz;
        }
        int r = xchg_node_member(n, a, j);
        if (r != me)
            t += (int64_t)c->sendcounts[r] * ssz;
        size_t hb = sizeof(int64_t) * (size_t)(NP_HDR + s->nt[j]);
        if (t + (int64_t)hb > INT_MAX && x->r.myerr == MPI_SUCCESS)
            x->r.myerr = xchg_error_code(MPI_ERR_COUNT, "node_pairs: rank %d sends %lld bytes "
                                       "to node-mate %d's share, beyond the int range of one "
                                       "message", me, (long long)t, r);
        pb += xchg_relay_round8(hb + (size_t)t);
    }
    s->poff[L] = pb;
    /* room: the step-3 messages of every node-mate that serves a node */
    size_t rb = 0;
    for (int j = 0; j < L; j++) {
        if (j == s->la || s->nt[j] == 1)
            continue;
        int64_t t = 0;
        for (int d = j + 1; d < N; d += L) {
            int b = (a + d) % N;
            for (int k = 0; k < xchg_node_size(n, b); k++)
                t += (int64_t)c->recvcounts[xchg_node_member(n, b, k)] * rsz;
        }
        rb += xchg_relay_round8(sizeof(int64_t) * (size_t)(NP_HDR + s->nt[j] - 1) + (size_t)t);
    }
    if (x->r.myerr == MPI_SUCCESS) {
        x->pack_b = pb;
        x->r.room_b = rb;
        if ((x->pack = xchg_temp_alloc(c, pb, "node_pairs: outgoing blocks", &x->r.myerr)))
            x->r.room = xchg_temp_alloc(c, rb, "node_pairs: incoming blocks", &x->r.myerr);
    }
    if (x->r.myerr != MPI_SUCCESS && x->pack) { /* a flagged rank sends headers only */
        xchg_temp_free(c, x->pack, x->pack_b);
        x->pack = NULL;
    }
    if (x->r.myerr != MPI_SUCCESS)
        xchg_relay_flag_own(&x->r);
}

/* Packs node-mate j's step-1 message (header, then blocks) at the pack
 * buffer, or points it at the zero header when this rank packs nothing. */
static int pack_for(np_run *x, int j, const int64_t **hdr, size_t *bytes)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int N = s->N, L = s->L, a = s->a, me = c->rank;
    const size_t hb = sizeof(int64_t) * (size_t)(NP_HDR + s->nt[j]);
    if (!x->pack) {
        s->zero[0] = x->r.agreed;
        s->zero[1] = x->r.lost;
        *hdr = s->zero;
        *bytes = hb;
        return MPI_SUCCESS;
    }
    int64_t *h = (int64_t *)(x->pack + s->poff[j]);
    char *out = (char *)h + hb;
    int err = MPI_SUCCESS, k = NP_HDR;
    int r = xchg_node_member(n, a, j);
    h[0] = x->r.agreed;
    h[1] = x->r.lost;
    h[k] = r == me ? 0 : (int64_t)c->sendcounts[r] * c->st.size;
    if (h[k] > 0)
        err = xchg_pack_block(c->sendbuf, c->sdispls[r], c->sendcounts[r], &c->st, out);
    out += h[k++];
    for (int d = j + 1; d < N; d += L) {
        int b = (a + d) % N;
        for (int q = 0; q < xchg_node_size(n, b); q++, k++) {
            int t = xchg_node_member(n, b, q);
            h[k] = (int64_t)c->sendcounts[t] * c->st.size;
            int e = h[k] > 0 ? xchg_pack_block(c->sendbuf, c->sdispls[t], c->sendcounts[t],
                                               &c->st, out) : MPI_SUCCESS;
            if (err == MPI_SUCCESS)
                err = e;
            out += h[k];
        }
    }
    *hdr = h;
    *bytes = (size_t)(out - (char *)h);
    return err;
}

/* 1. Gather: a message to every node-mate, one from each. */
static int step_gather(np_run *x)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int L = s->L, la = s->la;
    int err = MPI_SUCCESS;
    for (int j = 0; j < L && err == MPI_SUCCESS; j++) {
        const int64_t *h;
        size_t b;
        int e = pack_for(x, j, &h, &b);
        if (e != MPI_SUCCESS && x->r.lerr == MPI_SUCCESS)
            x->r.lerr = e; /* MPI_Pack failed: reported at the end, the rest still moves */
        if (j == la) { /* this rank's own share stays here */
            xchg_relay_msg *m = &s->in1[la];
            memset(m, 0, sizeof *m);
            m->h = h;
            m->data = (const char *)h + sizeof(int64_t) * (size_t)(NP_HDR + s->nt[la]);
            m->ok = 1;
            continue;
        }
        err = MPI_Isend(h, (int)b, MPI_BYTE, xchg_node_member(n, s->a, j), x->r.tag,
                        c->comm, &x->r.sreq[x->r.nsreq++]);
    }
    int nr = 0;
    for (int j = 0; j < L && err == MPI_SUCCESS; j++)
        if (j != la)
            err = xchg_relay_post(&x->r, xchg_node_member(n, s->a, j),
                              s->hin1 + (size_t)j * (size_t)(NP_HDR + s->nt[la]),
                              NP_HDR + s->nt[la], &s->in1[j], 0,
                              &s->rreq[nr++]);
    int werr = xchg_call_waitall(c, nr, s->rreq);
    if (err == MPI_SUCCESS)
        err = werr;
    if (err != MPI_SUCCESS)
        return err;
    for (int j = 0; j < L; j++)
        if (j != la)
            xchg_relay_check(&x->r, &s->in1[j], s->nt[la]);
    /* where each served node's blocks start in each node-mate's message */
    for (int l = 0; l < L; l++) {
        MPI_Aint *o = s->off1 + (size_t)l * ((size_t)s->ns + 1);
        MPI_Aint run = (MPI_Aint)xchg_relay_size(&s->in1[l], 0);
        for (int i = 0; i <= s->ns; i++) {
            o[i] = run;
            if (i < s->ns)
                for (int k = s->tpos[i]; k < s->tpos[i + 1]; k++)
                    run += (MPI_Aint)xchg_relay_size(&s->in1[l], k);
        }
    }
    return MPI_SUCCESS;
}

/* 2. Between nodes: the node's blocks for each served node, one message
 * to its partner, and one from it. */
static int step_pairs(np_run *x)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int L = s->L;
    int err = MPI_SUCCESS;
    for (int i = 0; i < s->ns && err == MPI_SUCCESS; i++) {
        const int lb = xchg_node_size(n, s->serve[i]);
        int64_t *h = s->hdr2 + (size_t)i * NP_HDR + (size_t)s->o2[i], total = 0;
        for (int l = 0; l < L; l++)
            for (int k = 0; k < lb; k++) {
                int64_t v = x->r.agreed ? 0 : xchg_relay_size(&s->in1[l], s->tpos[i] + k);
                h[NP_HDR + l * lb + k] = v;
                total += v;
            }
        if (total + (int64_t)sizeof(int64_t) * (NP_HDR + L * lb) > INT_MAX) {
            xchg_relay_lose(&x->r, xchg_error_code(MPI_ERR_COUNT, "node_pairs: rank %d relays "
                                                   "%lld bytes to node %d, beyond the int "
                                                   "range of one message", c->rank,
                                                   (long long)total, s->serve[i]));
            memset(h + NP_HDR, 0, sizeof(int64_t) * (size_t)(L * lb));
            total = 0;
        }
        h[0] = x->r.agreed;
        h[1] = x->r.lost;
        int nseg = 0;
        xchg_relay_segment(&x->r, nseg++, h, (int64_t)sizeof(int64_t) * (NP_HDR + L * lb));
        for (int l = 0; l < L && total > 0; l++) {
            const MPI_Aint *o = s->off1 + (size_t)l * ((size_t)s->ns + 1);
            if (s->in1[l].ok)
                xchg_relay_segment(&x->r, nseg++, s->in1[l].data + o[i],
                                   (int64_t)(o[i + 1] - o[i]));
        }
        err = xchg_relay_send(&x->r, nseg, s->partner[i]);
    }
    int nr = 0;
    for (int i = 0; i < s->ns && err == MPI_SUCCESS; i++)
        err = xchg_relay_post(&x->r, s->partner[i], s->hin2 + (size_t)i * NP_HDR + (size_t)s->o2[i],
                          NP_HDR + L * xchg_node_size(n, s->serve[i]), &s->in2[i], 0,
                          &s->rreq[nr++]);
    int werr = xchg_call_waitall(c, nr, s->rreq);
    if (err == MPI_SUCCESS)
        err = werr;
    if (err != MPI_SUCCESS)
        return err;
    for (int i = 0; i < s->ns; i++) {
        const int lb = xchg_node_size(n, s->serve[i]);
        xchg_relay_msg *m = &s->in2[i];
        xchg_relay_check(&x->r, m, lb * L);
        MPI_Aint run = 0, *o = s->offs2 + s->o2[i];
        for (int q = 0; q < lb * L; q++) {
            o[q] = run;
            run += (MPI_Aint)xchg_relay_size(m, q);
        }
    }
    return MPI_SUCCESS;
}

/* 3. Scatter: each node-mate its blocks from the nodes this rank serves. */
static int step_scatter(np_run *x)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int L = s->L, la = s->la, nsz = s->nt[la] - 1;
    int err = MPI_SUCCESS;
    for (int k = 0; k < L && s->ns > 0 && err == MPI_SUCCESS; k++) {
        if (k == la)
            continue;
        int64_t *h = s->hdr3 + (size_t)k * (size_t)(NP_HDR + nsz), total = 0;
        int q = NP_HDR;
        for (int i = 0; i < s->ns; i++)
            for (int l = 0; l < xchg_node_size(n, s->serve[i]); l++, q++) {
                h[q] = x->r.agreed ? 0 : xchg_relay_size(&s->in2[i], l * L + k);
                total += h[q];
            }
        if (total + (int64_t)sizeof(int64_t) * (NP_HDR + nsz) > INT_MAX) {
            xchg_relay_lose(&x->r, xchg_error_code(MPI_ERR_COUNT, "node_pairs: rank %d relays "
                                                   "%lld bytes to rank %d, beyond the int "
                                                   "range of one message", c->rank,
                                                   (long long)total,
                                                   xchg_node_member(n, s->a, k)));
            memset(h + NP_HDR, 0, sizeof(int64_t) * (size_t)nsz);
            total = 0;
        }
        h[0] = x->r.agreed;
        h[1] = x->r.lost;
        int nseg = 0;
        xchg_relay_segment(&x->r, nseg++, h, (int64_t)sizeof(int64_t) * (NP_HDR + nsz));
        for (int i = 0; i < s->ns && total > 0; i++)
            for (int l = 0; l < xchg_node_size(n, s->serve[i]); l++) {
                const xchg_relay_msg *m = &s->in2[i];
                const MPI_Aint *o = s->offs2 + s->o2[i];
                if (m->ok)
                    xchg_relay_segment(&x->r, nseg++, m->data + o[l * L + k],
                                       m->h[NP_HDR + l * L + k]);
            }
        err = xchg_relay_send(&x->r, nseg, xchg_node_member(n, s->a, k));
    }
    int nr = 0;
    int64_t *hslot = s->hin3;
    for (int j = 0; j < L && err == MPI_SUCCESS; j++) {
        memset(&s->in3[j], 0, sizeof s->in3[j]);
        if (j != la && s->nt[j] > 1) {
            err = xchg_relay_post(&x->r, xchg_node_member(n, s->a, j), hslot, NP_HDR + s->nt[j] - 1,
                              &s->in3[j], 1, &s->rreq[nr++]);
            hslot += NP_HDR + s->nt[j] - 1;
        }
    }
    int werr = xchg_call_waitall(c, nr, s->rreq);
    if (err == MPI_SUCCESS)
        err = werr;
    if (err != MPI_SUCCESS)
        return err;
    for (int j = 0; j < L; j++)
        if (j != la && s->nt[j] > 1)
            xchg_relay_check(&x->r, &s->in3[j], s->nt[j] - 1);
    return MPI_SUCCESS;
}

/* Every block for this rank, unpacked with its sender's size. */
static int unpack_all(np_run *x)
{
    xchg_call *c = x->c;
    np_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int N = s->N, L = s->L, la = s->la, a = s->a;
    int err = MPI_SUCCESS;
    for (int j = 0; j < L; j++) { /* node-mates: the first block of step 1 */
        int64_t b = xchg_relay_size(&s->in1[j], 0);
        if (j != la && b > 0)
            err = xchg_unpack_checked(c, "node_pairs", xchg_node_member(n, a, j),
                                      s->in1[j].data, b, err);
    }
    for (int i = 0; i < s->ns; i++) { /* the nodes this rank serves */
        const xchg_relay_msg *m = &s->in2[i];
        for (int l = 0; l < xchg_node_size(n, s->serve[i]); l++) {
            int64_t b = xchg_relay_size(m, l * L + la);
            if (b > 0)
                err = xchg_unpack_checked(c, "node_pairs", xchg_node_member(n, s->serve[i], l),
                                          m->data + s->offs2[s->o2[i] + l * L + la], b, err);
        }
    }
    for (int j = 0; j < L; j++) { /* the others, through their relay j */
        const xchg_relay_msg *m = &s->in3[j];
        if (j == la || !m->ok)
            continue;
        const char *p = m->data;
        int q = 0;
        for (int d = j + 1; d < N; d += L) {
            int bnode = (a + d) % N;
            for (int l = 0; l < xchg_node_size(n, bnode); l++, q++) {
                int64_t b = m->h[NP_HDR + q];
                if (b > 0)
                    err = xchg_unpack_checked(c, "node_pairs", xchg_node_member(n, bnode, l), p,
                                              b, err);
                p += b;
            }
        }
    }
    return err;
}

static void np_release(np_run *x)
{
    np_state *s = x->s;
    for (int l = 0; l < s->L; l++) {
        xchg_relay_msg_free(&x->r, &s->in1[l]);
        xchg_relay_msg_free(&x->r, &s->in3[l]);
    }
    for (int i = 0; i < s->ns; i++)
        xchg_relay_msg_free(&x->r, &s->in2[i]);
    xchg_temp_free(x->c, x->r.room, x->r.room_b);
    xchg_temp_free(x->c, x->pack, x->pack_b);
}

int xchg_alltoallv_node_pairs(xchg_call *c)
{
    if (c->size == 1)
        return c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    void *state = NULL;
    int rc = xchg_node_state_of(c->cs, &np_ops, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    np_state *s = state;
    np_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.s = s;
    x.r.c = c, x.r.who = "node_pairs", x.r.tag = xchg_algo_tag(XCHG_ALGO_NODE_PAIRS);
    x.r.myerr = x.r.lerr = MPI_SUCCESS;
    x.r.segd = s->segd, x.r.segl = s->segl, x.r.sreq = s->sreq;
    for (int l = 0; l < s->L; l++)
        memset(&s->in1[l], 0, sizeof s->in1[l]), memset(&s->in3[l], 0, sizeof s->in3[l]);
    for (int i = 0; i < s->ns; i++)
        memset(&s->in2[i], 0, sizeof s->in2[i]);

    np_reserve(&x);
    int err = step_gather(&x);
    if (err == MPI_SUCCESS)
        err = step_pairs(&x);
    if (err == MPI_SUCCESS)
        err = step_scatter(&x);
    /* our sends: complete before their buffers go */
    int werr = xchg_call_waitall(c, x.r.nsreq, s->sreq);
    if (err == MPI_SUCCESS)
        err = werr;
    if (err == MPI_SUCCESS && (err = xchg_relay_verdict(&x.r)) == MPI_SUCCESS) {
        err = unpack_all(&x); /* no flag: every block is here */
        if (err == MPI_SUCCESS)
            err = x.r.lerr;
    }
    np_release(&x);
    return err;
}
