/*
 * node_pairs_shm.c - "node_pairs_shm": node_pairs' one message per node
 * pair, with the steps inside a node through the node window
 * (node/shm_window.h) instead of messages: seed 004's shared-memory
 * exchange combined with aggregation across nodes, and Open MPI coll/han's
 * alltoallv scheme (on-node peers' memory read directly, one message per
 * host pair).
 *
 * Nodes and relays as node_pairs': on node a (L members, N nodes), node b
 * at distance d = (b - a) mod N is served by the member at place
 * (d - 1) mod L, and its partner is the member of b serving a. Where both
 * nodes of a pair have at least 2(N-1) members, the pair has k = min of
 * L_a / (N-1), L_b / (N-1) "lanes": lane i is relayed by the member at
 * place (d - 1) + i (N - 1) and carries the blocks for the i-th k-th of
 * the receiving node's members, so every member gathers about as many
 * blocks. A call is one epoch e of the window; every member writes only
 * its own region's half e % 2:
 *  1. each member writes its header, the bytes it expects from each node
 *     (N words), a table (where each node's blocks start, and each
 *     block's size in 32 bits) and its blocks for every rank but itself,
 *     node by node; then the node synchronises;
 *  2. each relay posts the receive of each lane's message straight into
 *     its region (one slot per lane, sized from the receivers' expected
 *     bytes), then for each of its lanes gathers every node-mate's blocks
 *     for the lane's receivers out of the window into one message
 *     (receiver-major: each can read its blocks as one run) and sends
 *     it; as each message is in, the relay stamps its lane (the epoch, in
 *     its table area) and copies out its own blocks of every lane already
 *     stamped; once all are in, the node synchronises again;
 *  3. each member copies out the rest of its blocks: its node-mates' from
 *     their regions (a relay copies them once its sends are posted), the
 *     other nodes' from the slots of the relays serving them.
 * Direct way (the node's mean block, at the last call, at least
 * XCHG_NPS_DIRECT_BYTES a member; every member decides alike from the
 * headers): in step 1 a member writes only its node's blocks (and, with a
 * non-contiguous send type, packs the others there too, as packing can
 * fail only before the synchronisation); in step 2 every member writes its
 * blocks for the other nodes straight into the relays' outgoing messages
 * (in the window, after the relays' slots; each block at its receiver's
 * run plus the node-mates' before it: P L steps over the tables), a round
 * of L lanes at a time, stating the lanes done in its header; a relay sends
 * each of its lanes from the window once every member has done that
 * lane's round, between writing its own rounds. Two copies a block.
 * Two synchronisations and no message inside a node; messages per rank:
 * about (N-1)/L each way, against P-1 for linear and node_pairs' 2(L-1)
 * more. Copies per block: into the window, into the message, out of the
 * window (runs of contiguous blocks are one copy). The two halves
 * alternate, so no third synchronisation: a member writes half e % 2 only
 * after every node-mate published e - 1, hence finished reading e - 2.
 *
 * A message is a header, then its data: word 0 the sending node's agreed
 * flag (argument errors, xchg_agree_flag, merged by maximum), word 1 the
 * sending node's need (window bytes a member lacked, 0 when all fit), then
 * for each member of the receiving node its total bytes and a check sum of its
 * blocks' sizes; the data only when both flags are 0. So a relay that
 * cannot hold a message knows its flags are 0 and drains it. Each relay
 * publishes the largest flags it received; after step 2 every rank knows
 * every node's (its node's relays together serve every other node), so:
 *  - an argument error anywhere: every rank returns the agreed class;
 *  - a window too small on any node: every rank runs node_pairs for this
 *    call, and the next call first grows every node's window to the
 *    largest need (collective; where that passes XCHG_MAX_TEMP_BYTES the
 *    window stays and such calls run node_pairs);
 *  - otherwise each rank copies its blocks out, checking each node's
 *    total and check sum against its recvcounts: a mismatch, or a message
 *    larger than expected, is MPI_ERR_TRUNCATE on that rank (as MPI's own
 *    receive would be; block sizes that differ but add up are caught by
 *    the check sum, which node_pairs would instead accept where smaller).
 * Where the window cannot be used (refused by MPI on some node, XCHG_SHM_
 * BYTES=0), or inside a coroutine before the window is ready, or under
 * SMPI inside a coroutine (its synchronisation's waits block the rank there),
 * node_pairs runs instead, the same on every rank.
 */
#include "node/shm_window.h"
#include "node_state.h"
#include "p2p_common.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int xchg_alltoallv_node_pairs(xchg_call *c);
int xchg_node_pairs_shm_prepare(xchg_comm_state *cs);
int xchg_node_pairs_shm_ready(const xchg_comm_state *cs);
int xchg_node_pairs_shm_usable(const xchg_comm_state *cs);

enum { NPS_HDR = 2 }; /* message words before the per-member (total, check) pairs */

/* Bytes of a message's header for cl receivers (its words, then a total
 * and a check sum each); its data follows. */
static size_t head_bytes(int cl)
{
    return sizeof(int64_t) * (size_t)(NPS_HDR + 2 * cl);
}

/* The half's header words this algorithm adds (xchg_shm_header.pad):
 * the bytes of its out area, the flags its relay received, the bytes it
 * sends other ranks (the node's mean block, for the next call's way) and,
 * direct, how many lanes' blocks it has written (written_mark()). */
enum { PAD_OUT = 0, PAD_RX_ERR = 1, PAD_RX_NEED = 2, PAD_SENDS = 3, PAD_WRITTEN = 4 };

/* A lane: one message each way between two relays, for node pair (a, b)
 * and a share of each node's members as receivers. */
typedef struct nps_lane {
    int b, k, nk;   /* the other node, this lane's number, lanes of the pair */
    int place;      /* the member of this node that relays it */
} nps_lane;

typedef struct nps_state {
    const xchg_node_layout *nl; /* the communicator's (not owned) */
    int N, a, la, L;            /* nodes, this node, place in it, its size */
    int nlanes;                 /* lanes of this node, every pair's in turn */
    nps_lane *lane;             /* nlanes, by distance to the other node, then number */
    int ns;                     /* lanes this rank relays */
    int *mine, *partner;        /* their indices in lane[], the relays at the other end */
    int *read;                  /* N: the lane that brings this rank node b's blocks */
    size_t *slot;               /* nlanes: each lane's slot in its relay's region (per call) */
    uint64_t *acc;              /* L: each member's window need (per call) */
    MPI_Request *req;           /* 2 ns: receives, then sends */
    MPI_Status *st;             /* ns: the receives' statuses */
    int *idx;                   /* ns: which receives completed */
    int hw;                     /* header words of the largest message */
    int64_t *hout, *hin;        /* ns headers each: messages without data, out and in */
    uint64_t *key;              /* lmax: each place's key for the size checks */
    unsigned char *done;        /* N: node b's blocks already copied out (per call) */
    int direct;                 /* the next call writes straight into the messages */
    size_t *msg;                /* nlanes: direct, each lane's message in its relay's region */
    uint64_t *tot, *pre;        /* P: direct, the node's bytes for each rank, and its
                                 * members' before this one */
    uint64_t need;              /* agreed: the largest window need seen (grow to it) */
} nps_state;

/* Lanes of node pair (a, b): as many relays per pair as both nodes have
 * members for every other node, at least one. */
static int lanes_of(const xchg_node_layout *n, int a, int b)
{
    int others = n->nnodes - 1;
    int la = xchg_node_size(n, a) / others, lb = xchg_node_size(n, b) / others;
    int k = la < lb ? la : lb;
    return k > 1 ? k : 1;
}

/* Place on node a of the relay of lane k towards b: members dealt round
 * the other nodes, then round again for the further lanes. */
static int relay_place(const xchg_node_layout *n, int a, int b, int k)
{
    int N = n->nnodes, d = (b - a + N) % N;
    return ((d - 1) + k * (N - 1)) % xchg_node_size(n, a);
}

/* Lane k of nk carries the blocks for node X's members [*lo, *hi). */
static void chunk_of(const xchg_node_layout *n, int X, int k, int nk, int *lo, int *hi)
{
    int L = xchg_node_size(n, X);
    *lo = (int)((long)k * L / nk);
    *hi = (int)((long)(k + 1) * L / nk);
}

/* The check of a receiver's block sizes from one node: the sum of each
 * size times its sender's key (its place on the sending node), modulo
 * 2^64. Keys are odd and pseudo-random, so sizes that move bytes between
 * two senders but keep the total (checked apart) change the sum: k1 d =
 * k2 d mod 2^64 needs d divisible by 2^63 or so. One multiply-add a
 * block. */
static uint64_t size_key(int place)
{
    uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(place + 1); /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (z ^ (z >> 31)) | 1;
}

static void nps_free(void *p)
{
    nps_state *s = p;
    if (s) {
        free(s->lane);
        free(s->mine);
        free(s->slot);
        free(s->acc);
        free(s->req);
        free(s->st);
        free(s->idx);
        free(s->hout);
        free(s->key);
        free(s->done);
        free(s->msg);
        free(s->tot);
    }
    free(s);
}

static int nps_build(xchg_comm_state *cs, const xchg_node_layout *n, void **out)
{
    (void)cs;
    nps_state *s = calloc(1, sizeof *s);
    *out = s;
    if (!s)
        return xchg_error_code(MPI_ERR_NO_MEM, "node_pairs_shm: no memory for its tables");
    s->nl = n;
    s->N = n->nnodes, s->a = n->mynode, s->la = n->lrank, s->L = n->lsize;
    int lmax = 1;
    for (int b = 0; b < s->N; b++) {
        if (xchg_node_size(n, b) > lmax)
            lmax = xchg_node_size(n, b);
        if (b != s->a)
            s->nlanes += lanes_of(n, s->a, b);
    }
    s->lane = malloc(sizeof(nps_lane) * ((size_t)s->nlanes + 1));
    s->slot = malloc(sizeof(size_t) * ((size_t)s->nlanes + 1));
    s->msg = malloc(sizeof(size_t) * ((size_t)s->nlanes + 1));
    s->tot = malloc(sizeof(uint64_t) * 2 * (size_t)n->first[n->nnodes]);
    s->pre = s->tot ? s->tot + n->first[n->nnodes] : NULL;
    s->acc = malloc(sizeof(uint64_t) * (size_t)s->L);
    if (!s->lane || !s->slot || !s->msg || !s->tot || !s->acc)
        return xchg_error_code(MPI_ERR_NO_MEM, "node_pairs_shm: no memory for its tables");
    int e = 0;
    for (int d = 1; d < s->N; d++) {
        int b = (s->a + d) % s->N, nk = lanes_of(n, s->a, b);
        for (int k = 0; k < nk; k++, e++) {
            s->lane[e] = (nps_lane){b, k, nk, relay_place(n, s->a, b, k)};
            s->ns += s->lane[e].place == s->la;
        }
    }
    s->hw = NPS_HDR + 2 * lmax;
    s->key = malloc(sizeof(uint64_t) * (size_t)lmax);
    s->done = malloc((size_t)s->N);
    s->mine = malloc(sizeof(int) * (2 * (size_t)s->ns + (size_t)s->N + 1));
    s->req = malloc(sizeof(MPI_Request) * (2 * (size_t)s->ns + 1));
    s->st = malloc(sizeof(MPI_Status) * ((size_t)s->ns + 1));
    s->idx = malloc(sizeof(int) * ((size_t)s->ns + 1));
    s->hout = malloc(sizeof(int64_t) * 2 * (size_t)s->hw * ((size_t)s->ns + 1));
    if (!s->mine || !s->req || !s->st || !s->idx || !s->hout || !s->key || !s->done)
        return xchg_error_code(MPI_ERR_NO_MEM, "node_pairs_shm: no memory for its tables");
    for (int k = 0; k < lmax; k++)
        s->key[k] = size_key(k);
    s->partner = s->mine + s->ns;
    s->read = s->partner + s->ns;
    s->hin = s->hout + (size_t)s->hw * ((size_t)s->ns + 1);
    int i = 0;
    for (e = 0; e < s->nlanes; e++) {
        const nps_lane *l = &s->lane[e];
        int lo, hi;
        if (l->place == s->la) {
            s->mine[i] = e;
            s->partner[i++] = xchg_node_member(n, l->b, relay_place(n, l->b, s->a, l->k));
        }
        chunk_of(n, s->a, l->k, l->nk, &lo, &hi);
        if (lo <= s->la && s->la < hi)
            s->read[l->b] = e;
    }
    s->read[s->a] = -1;
    return MPI_SUCCESS;
}
/* The table area of a half: node offsets, each lane's arrival stamp
 * (used where this member relays it), then 32-bit block sizes. */
static size_t table_bytes(const nps_state *s, int P)
{
    return sizeof(uint64_t) * ((size_t)s->N + (size_t)s->nlanes) + sizeof(uint32_t) * (size_t)P;
}

static const xchg_node_state_ops nps_ops = {XCHG_ALGO_NODE_PAIRS_SHM,
                                            "node_pairs_shm: making the node tables",
                                            nps_build, nps_free};

/* The layout, the tables and the window, made now (collective). */
int xchg_node_pairs_shm_prepare(xchg_comm_state *cs)
{
    void *state = NULL;
    if (cs->size == 1)
        return MPI_SUCCESS;
    int rc = xchg_node_state_of(cs, &nps_ops, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    nps_state *s = state;
    xchg_shm_window *w;
    return xchg_node_window_of(cs, s->nl->node, table_bytes(s, cs->size), s->need, &w);
}

int xchg_node_pairs_shm_ready(const xchg_comm_state *cs)
{
    if (cs->size == 1)
        return 1;
    const nps_state *s = cs->ext[xchg_algo_slot(XCHG_ALGO_NODE_PAIRS_SHM)];
    return xchg_node_state_ready(cs, &nps_ops) && s &&
           xchg_node_window_ready(cs, table_bytes(s, cs->size), (size_t)s->need);
}

/* One rank copies its block without a window: usable as itself. */
int xchg_node_pairs_shm_usable(const xchg_comm_state *cs)
{
    return cs->size == 1 || xchg_node_window_usable(cs);
}

/* One call. */
typedef struct nps_run {
    xchg_call *c;
    nps_state *s;
    xchg_shm_window *w;
    uint64_t e;
    char *msg;        /* outgoing messages, one after another */
    size_t msg_b;
    int myerr;        /* this rank's error before data moves (arguments, self copy, packing) */
    int direct;       /* blocks written straight into the messages (decided at the last call) */
    int lean;         /* direct, and this rank's out area holds only its node's blocks (a
                       * contiguous send type: the others are packed there in step 1, as
                       * packing can fail, and copied on from there) */
    int early;        /* blocks may be copied out before step 2 ends (this node moves data) */
    int read_err;     /* the first error of a copy out so far */
    int mates_done;   /* the node-mates' blocks are copied out */
    int window_rx;    /* step 2: its receives land in the window */
    int64_t myflag;   /* step 2: the flag this relay sends (its node's, or its own error) */
    int64_t flag;     /* this node's agreed flag (after step 1) */
    uint64_t need;    /* this node's largest need (after step 1), 0: all fit */
} nps_run;

static size_t round8(size_t b) { return (b + 7) & ~(size_t)7; }

static char *half_of(const nps_run *x, int place)
{
    return xchg_shm_half(x->w, place, x->e);
}
static xchg_shm_header *hdr_of(const nps_run *x, int place)
{
    return (xchg_shm_header *)half_of(x, place);
}
static int64_t *expect_of(const nps_run *x, int place) /* N words: bytes from each node */
{
    return (int64_t *)xchg_shm_data(x->w, half_of(x, place));
}
static char *out_of(const nps_run *x, int place)
{
    return (char *)expect_of(x, place) + round8(sizeof(int64_t) * (size_t)x->s->N);
}
/* The table (the half's table area): where each node's blocks start in
 * the member's out area (N words), each lane's arrival stamp (nlanes
 * words: the epoch, stored by the lane's relay once its message is in the
 * slot), then each block's bytes (P of 32 bits: a quarter of a table of
 * (offset, bytes) words; larger blocks do not fit the window). */
static uint64_t *node_off_of(const nps_run *x, int place)
{
    return (uint64_t *)xchg_shm_table(half_of(x, place));
}
static uint64_t *stamp_of(const nps_run *x, int e)
{
    return node_off_of(x, x->s->lane[e].place) + x->s->N + e;
}
/* Direct: the value of a member's PAD_WRITTEN once it has written its
 * blocks of the first `lanes` lanes of this call (larger than any of an
 * earlier call's). */
static uint64_t written_mark(const nps_run *x, int lanes)
{
    return x->e * ((uint64_t)x->s->nlanes + 1) + (uint64_t)lanes;
}
static uint32_t *sizes_of(const nps_run *x, int place)
{
    return (uint32_t *)(node_off_of(x, place) + x->s->N + x->s->nlanes);
}
/* Offset of member j's block for member q of node b in j's out area. */
static uint64_t block_off(const nps_run *x, int j, int b, int q)
{
    const uint32_t *sz = sizes_of(x, j);
    uint64_t o = node_off_of(x, j)[b];
    for (int k = 0; k < q; k++)
        o += sz[xchg_node_member(x->s->nl, b, k)];
    return o;
}
/* Receivers of lane e on this node: members [*lo, *hi); returns how many. */
static int my_chunk(const nps_run *x, int e, int *lo, int *hi)
{
    const nps_lane *l = &x->s->lane[e];
    chunk_of(x->s->nl, x->s->a, l->k, l->nk, lo, hi);
    return *hi - *lo;
}
/* Bytes of lane e's slot here: its status word, the header, the data
 * expected (from the receivers' expected bytes, always written). */
static size_t slot_bytes(const nps_run *x, int e)
{
    int lo, hi, cl = my_chunk(x, e, &lo, &hi);
    int64_t t = 0;
    for (int m = lo; m < hi; m++)
        t += expect_of(x, m)[x->s->lane[e].b];
    return sizeof(int64_t) + head_bytes(cl) + round8((size_t)t);
}
static int64_t *slot_ptr(const nps_run *x, int e)
{
    return (int64_t *)(out_of(x, x->s->lane[e].place) + x->s->slot[e]);
}
/* Direct: the node's bytes for each rank of another node, and its
 * members' before this one (where this rank's block goes in the run of
 * the receiver's blocks). A pass over every member's table: P L steps. */
static void plan_runs(nps_run *x)
{
    nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    for (int b = 0; b < s->N; b++)
        for (int q = 0; b != s->a && q < xchg_node_size(n, b); q++) {
            int r = xchg_node_member(n, b, q);
            uint64_t t = 0, before = 0;
            for (int j = 0; j < s->L; j++) {
                if (j == s->la)
                    before = t;
                t += sizes_of(x, j)[r];
            }
            s->tot[r] = t, s->pre[r] = before;
        }
    xchg_charge_ops(XCHG_OP_PEER, (size_t)(x->c->size - s->L) * (size_t)s->L);
}

/* Direct: the bytes of lane e's outgoing message (its header, then the
 * blocks for its receivers on node b, receiver by receiver). */
static size_t message_bytes(const nps_run *x, int e)
{
    const nps_state *s = x->s;
    const nps_lane *l = &s->lane[e];
    int lo, hi;
    chunk_of(s->nl, l->b, l->k, l->nk, &lo, &hi);
    uint64_t t = head_bytes(hi - lo);
    for (int q = lo; q < hi; q++)
        t += s->tot[xchg_node_member(s->nl, l->b, q)];
    return (size_t)t;
}

/* After step 1 (every header is in): where each lane's slot (and,
 * direct, its outgoing message) lies in its relay's region, and the
 * largest window need of any member (its table area, its blocks or what
 * it declared it lacked, its slots and messages). */
static uint64_t plan_slots(nps_run *x)
{
    nps_state *s = x->s;
    uint64_t most = 0;
    int over = 0; /* a member lacked room (its table is not written): no data moves */
    for (int m = 0; m < s->L; m++) {
        const xchg_shm_header *h = hdr_of(x, m);
        over |= h->status == XCHG_SHM_OVERFLOW;
        s->acc[m] = h->status == XCHG_SHM_OVERFLOW ? h->need
                    : round8(sizeof(int64_t) * (size_t)s->N) + round8((size_t)h->pad[PAD_OUT]);
    }
    if (x->direct && !over)
        plan_runs(x);
    for (int e = 0; e < s->nlanes; e++) {
        int pl = s->lane[e].place;
        /* offsets from the member's out area: its expected bytes come first */
        s->slot[e] = (size_t)s->acc[pl] - round8(sizeof(int64_t) * (size_t)s->N);
        s->acc[pl] += slot_bytes(x, e);
        if (x->direct && !over) {
            s->msg[e] = (size_t)s->acc[pl] - round8(sizeof(int64_t) * (size_t)s->N);
            s->acc[pl] += round8(message_bytes(x, e));
        }
    }
    for (int m = 0; m < s->L; m++)
        if (s->acc[m] > most)
            most = s->acc[m];
    return most;
}

/* Copies the blocks for node b's members (pack: from sendbuf to mem) or
 * from them (unpack: from mem to recvbuf), in place order, mem holding
 * them one after another; this rank's own block is not there. Members of
 * consecutive ranks whose blocks lie one after another in the buffer (a
 * contiguous type) are one copy. */
static int copy_node(xchg_call *c, int pack, const xchg_node_layout *n, int b, char *mem)
{
    const xchg_typeinfo *ti = pack ? &c->st : &c->rt;
    const int *cnt = pack ? c->sendcounts : c->recvcounts;
    const int *dsp = pack ? c->sdispls : c->rdispls;
    const int L = xchg_node_size(n, b);
    int err = MPI_SUCCESS;
    for (int k = 0; k < L && err == MPI_SUCCESS;) {
        int r = xchg_node_member(n, b, k);
        if (r == c->rank || cnt[r] <= 0) {
            k++;
            continue;
        }
        int q = k + 1;
        int64_t run = (int64_t)cnt[r];
        for (; ti->contig && q < L; q++) {
            int rq = xchg_node_member(n, b, q);
            if (rq != r + (q - k) || rq == c->rank || cnt[rq] <= 0 ||
                (int64_t)dsp[rq] != dsp[r] + run)
                break;
            run += cnt[rq];
        }
        size_t bytes = (size_t)run * (size_t)ti->size;
        if (ti->contig) {
            char *buf = xchg_block_addr(pack ? (void *)(uintptr_t)c->sendbuf : c->recvbuf,
                                        dsp[r], ti) + ti->true_lb;
            xchg_charge_copy(bytes);
            if (pack)
                memcpy(mem, buf, bytes);
            else
                memcpy(buf, mem, bytes);
        } else {
            err = pack ? xchg_pack_block(c->sendbuf, dsp[r], cnt[r], ti, mem)
                       : xchg_unpack_block(mem, c->recvbuf, dsp[r], cnt[r], ti);
        }
        mem += bytes;
        k = q;
    }
    return err;
}

/* Step 1 on this rank: header, expected bytes, blocks and table. */
static void step_write(nps_run *x)
{
    xchg_call *c = x->c;
    const nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    xchg_shm_header *h = hdr_of(x, s->la);
    uint64_t *node_off = node_off_of(x, s->la);
    uint32_t *size = sizes_of(x, s->la);
    int64_t *expect = expect_of(x, s->la);
    const int64_t ssz = c->st.size, rsz = c->rt.size;
    h->status = XCHG_SHM_OK, h->need = 0, h->err = 0, h->pad[PAD_OUT] = 0;
    h->pad[PAD_RX_ERR] = h->pad[PAD_RX_NEED] = 0;
    h->pad[PAD_WRITTEN] = written_mark(x, 0); /* read only after the synchronisation */
    for (int i = 0; i < s->ns; i++) /* the half may hold anything from earlier calls */
        *stamp_of(x, s->mine[i]) = 0;
    uint64_t out = 0, big = 0, here = 0;
    for (int b = 0; b < s->N; b++) {
        int64_t t = 0;
        for (int k = 0; k < xchg_node_size(n, b); k++) {
            int r = xchg_node_member(n, b, k);
            t += (int64_t)c->recvcounts[r] * rsz;
            if (r != c->rank) {
                uint64_t v = (uint64_t)c->sendcounts[r] * (uint64_t)ssz;
                out += v;
                here += b == s->a || !x->lean ? v : 0;
                big |= v > UINT32_MAX;
            }
        }
        expect[b] = b == s->a ? 0 : t;
    }
    h->pad[PAD_SENDS] = out;
    xchg_charge_copy(sizeof(int64_t) * (size_t)s->N);
    int err = c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    if (err == MPI_SUCCESS &&
        (big || round8(sizeof(int64_t) * (size_t)s->N) + round8((size_t)here) > x->w->half)) {
        h->status = XCHG_SHM_OVERFLOW; /* a block past 32 bits: past any window */
        h->need = round8(sizeof(int64_t) * (size_t)s->N) + round8((size_t)(big ? out : here));
        return;
    }
    char *data = out_of(x, s->la);
    uint64_t off = 0;
    for (int b = 0; b < s->N; b++) {
        /* a node's members are consecutive positions; by rank within it
         * (lean: only this node's blocks are here) */
        node_off[b] = off;
        for (int k = 0; k < xchg_node_size(n, b); k++) {
            int r = xchg_node_member(n, b, k);
            size[r] = r == c->rank ? 0 : (uint32_t)((uint64_t)c->sendcounts[r] * (uint64_t)ssz);
            off += b == s->a || !x->lean ? size[r] : 0;
        }
    }
    xchg_charge_copy(sizeof(uint64_t) * (size_t)s->N + sizeof(uint32_t) * (size_t)c->size);
    xchg_charge_ops(XCHG_OP_PEER, (size_t)c->size); /* the second pass over the counts */
    for (int b = 0; b < s->N && err == MPI_SUCCESS; b++) /* the blocks, node by node */
        if (b == s->a || !x->lean)
            err = copy_node(c, 1, n, b, data + node_off[b]);
    h->pad[PAD_OUT] = here;
    x->myerr = err;
    if (err != MPI_SUCCESS) {
        h->status = XCHG_SHM_ARG_ERROR;
        h->err = xchg_agree_flag(c->rank, c->size, err);
    }
}

/* After step 1's synchronisation: this node's flag, and its need (the
 * largest member's, when any member's exceeds the half; else 0). */
static void node_flags(nps_run *x)
{
    uint64_t most = 0;
    x->flag = 0, x->need = 0;
    for (int k = 0; k < x->s->L; k++) {
        const xchg_shm_header *h = hdr_of(x, k);
        if (h->status == XCHG_SHM_ARG_ERROR && h->err > x->flag)
            x->flag = h->err;
    }
    if (x->flag)
        return; /* no data moves: the need does not matter */
    most = plan_slots(x);
    if (most > x->w->half)
        x->need = most;
}

/* Receivers of this rank's i-th lane on the other node: [*lo, *hi). */
static int their_chunk(const nps_run *x, int i, int *lo, int *hi)
{
    const nps_lane *l = &x->s->lane[x->s->mine[i]];
    chunk_of(x->s->nl, l->b, l->k, l->nk, lo, hi);
    return *hi - *lo;
}

/* The message of this rank's i-th lane: header, then (with data) every
 * node-mate's blocks for each of the lane's receivers in turn. Returns
 * its bytes. */
static size_t message_for(nps_run *x, int i, int64_t *m, int data, int64_t flag)
{
    const nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int b = s->lane[s->mine[i]].b;
    int lo, hi, cl = their_chunk(x, i, &lo, &hi);
    m[0] = flag, m[1] = (int64_t)x->need;
    if (!data) {
        memset(m + NPS_HDR, 0, sizeof(int64_t) * 2 * (size_t)cl);
        return head_bytes(cl);
    }
    char *p = (char *)m + head_bytes(cl);
    size_t copies = 0, bytes = 0;
    uint64_t *cur = s->acc; /* each node-mate's next block for b (free after plan_slots) */
    for (int j = 0; j < s->L && !x->direct; j++)
        cur[j] = block_off(x, j, b, lo);
    for (int q = lo; q < hi; q++) {
        int d = xchg_node_member(n, b, q);
        uint64_t sum = 0;
        int64_t t = 0;
        for (int j = 0; j < s->L; j++) {
            uint64_t len = sizes_of(x, j)[d];
            sum += s->key[j] * len;
            if (len && !x->direct) { /* direct: the node-mates wrote them there */
                memcpy(p, out_of(x, j) + cur[j], len);
                copies++;
                cur[j] += len;
            }
            p += len, bytes += len;
            t += (int64_t)len;
        }
        m[NPS_HDR + 2 * (q - lo)] = t;
        m[NPS_HDR + 2 * (q - lo) + 1] = (int64_t)sum;
    }
    if (copies)
        xchg_charge_copies(copies, bytes);
    xchg_charge_ops(XCHG_OP_SIZE_SUM, (size_t)(hi - lo) * (size_t)s->L);
    return head_bytes(cl) + bytes;
}

/* Bytes of the message of this rank's i-th lane at most (no flag). */
static size_t message_room(const nps_run *x, int i)
{
    const nps_state *s = x->s;
    const int b = s->lane[s->mine[i]].b;
    int lo, hi, cl = their_chunk(x, i, &lo, &hi);
    size_t t = head_bytes(cl);
    for (int q = lo; q < hi; q++)
        for (int j = 0; j < s->L; j++)
            t += sizes_of(x, j)[xchg_node_member(s->nl, b, q)];
    return round8(t);
}

/* Step 2, first: whether the receives land in the window (this node has
 * no flag and its window suffices, and no message passes the int range:
 * else this relay's error, sent as a flag, as node_pairs loses such a
 * message), and those receives posted. */
static int relay_post(nps_run *x, int tag)
{
    xchg_call *c = x->c;
    nps_state *s = x->s;
    int err = MPI_SUCCESS;
    x->window_rx = !x->flag && !x->need;
    for (int i = 0; x->window_rx && i < s->ns; i++)
        if (slot_bytes(x, s->mine[i]) > INT_MAX || message_room(x, i) > INT_MAX) {
            x->myerr = xchg_error_code(MPI_ERR_COUNT, "node_pairs_shm: a message between "
                                       "nodes %d and %d exceeds the int range", s->a,
                                       s->lane[s->mine[i]].b);
            x->myflag = xchg_agree_flag(c->rank, c->size, x->myerr);
            x->window_rx = 0;
        }
    for (int i = 0; x->window_rx && i < s->ns && err == MPI_SUCCESS; i++) {
        int64_t *slot = slot_ptr(x, s->mine[i]);
        size_t room = slot_bytes(x, s->mine[i]) - sizeof(int64_t);
        slot[0] = MPI_SUCCESS;
        err = MPI_Irecv(slot + 1, (int)room, MPI_BYTE, s->partner[i], tag, c->comm,
                        &s->req[i]);
    }
    return err;
}

/* Step 2, then: the messages out, with data where the receives land in the
 * window and this relay has memory for them (one buffer for all), else
 * headers only with the flag, so that the other end learns it. */
static int relay_send(nps_run *x, int tag)
{
    xchg_call *c = x->c;
    nps_state *s = x->s;
    int err = MPI_SUCCESS, data = x->window_rx;
    if (data) {
        size_t total = 0;
        for (int i = 0; i < s->ns; i++)
            total += message_room(x, i);
        int aerr = MPI_SUCCESS;
        x->msg_b = total;
        x->msg = xchg_temp_alloc(c, total, "node_pairs_shm: messages", &aerr);
        if (!x->msg) {
            data = 0;
            x->myerr = aerr; /* the flag names this rank: its own error */
            x->myflag = xchg_agree_flag(c->rank, c->size, aerr);
        }
    }
    char *p = x->msg;
    for (int i = 0; i < s->ns && err == MPI_SUCCESS; i++) {
        int64_t *m = data ? (int64_t *)p : s->hout + (size_t)s->hw * (size_t)i;
        size_t b = message_for(x, i, m, data, x->myflag);
        err = MPI_Isend(m, (int)b, MPI_BYTE, s->partner[i], tag, c->comm, &s->req[s->ns + i]);
        if (data)
            p += round8(b);
    }
    return err;
}

/* Header bytes of this rank's i-th lane's messages in. */
static int header_in(const nps_run *x, int i)
{
    int lo, hi;
    return (int)head_bytes(my_chunk(x, x->s->mine[i], &lo, &hi));
}

/* Step 2 where the receives cannot land in the window: each message probed,
 * a header kept, a message with data (whose flags are 0) drained. */
static int relay_drain(nps_run *x, int tag)
{
    xchg_call *c = x->c;
    nps_state *s = x->s;
    int err = MPI_SUCCESS;
    for (int i = 0; i < s->ns && err == MPI_SUCCESS; i++) {
        MPI_Status st;
        int cnt = 0, hb = header_in(x, i);
        int64_t *h = s->hin + (size_t)s->hw * (size_t)i;
        h[0] = h[1] = 0;
        err = xchg_mpi_probe(s->partner[i], tag, c->comm, &st);
        if (err == MPI_SUCCESS)
            err = MPI_Get_count(&st, MPI_BYTE, &cnt);
        if (err == MPI_SUCCESS) /* truncated on purpose where it carries data */
            xchg_mpi_recv(h, cnt <= hb ? cnt : 0, MPI_BYTE, s->partner[i], tag, c->comm,
                          MPI_STATUS_IGNORE);
        if (cnt > hb)
            h[0] = h[1] = 0;
    }
    return err;
}

/* Direct: this rank's blocks for the lanes [e0, e1) written once, straight
 * into each lane's outgoing message (in its relay's region: the
 * receiver's run of blocks, at the node-mates' before this one), from
 * sendbuf (lean) or this rank's out area. A plain copy each: nothing can
 * fail after the first synchronisation. */
static void write_lanes(nps_run *x, int e0, int e1)
{
    xchg_call *c = x->c;
    const nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const uint32_t *size = sizes_of(x, s->la);
    size_t copies = 0, bytes = 0;
    for (int e = e0; e < e1; e++) {
        const nps_lane *l = &s->lane[e];
        int lo, hi;
        chunk_of(n, l->b, l->k, l->nk, &lo, &hi);
        char *run = out_of(x, l->place) + s->msg[e] + head_bytes(hi - lo);
        const char *from = x->lean ? NULL : out_of(x, s->la) + block_off(x, s->la, l->b, lo);
        for (int q = lo; q < hi; q++) {
            int r = xchg_node_member(n, l->b, q);
            if (size[r]) {
                const char *src = from ? from
                                       : xchg_block_addr((void *)(uintptr_t)c->sendbuf,
                                                         c->sdispls[r], &c->st) +
                                             c->st.true_lb;
                memcpy(run + s->pre[r], src, size[r]);
                copies++, bytes += size[r];
                if (from)
                    from += size[r];
            }
            run += s->tot[r];
        }
    }
    xchg_charge_copies(copies, bytes);
}

/* Direct: this rank's i-th lane sent from the window once every member
 * has written its blocks (the round of L lanes that holds it). */
static int send_lane(nps_run *x, int i, int tag)
{
    nps_state *s = x->s;
    const int e = s->mine[i];
    int upto = (e / s->L + 1) * s->L;
    uint64_t mark = written_mark(x, upto < s->nlanes ? upto : s->nlanes);
    for (int j = 0; j < s->L; j++)
        xchg_shm_await(x->w, &hdr_of(x, j)->pad[PAD_WRITTEN], mark);
    int64_t *m = (int64_t *)(out_of(x, s->la) + s->msg[e]);
    size_t b = message_for(x, i, m, 1, x->myflag);
    return MPI_Isend(m, (int)b, MPI_BYTE, s->partner[i], tag, x->c->comm, &s->req[s->ns + i]);
}

/* Direct, where this node moves data: every member writes its blocks
 * round by round (L lanes a round, in lane order: one lane of each relay)
 * and says so; a relay sends each of its lanes from the window as soon as
 * its round is written by all, between its own rounds (send: this relay
 * sends data; else its flags go by relay_send). A member waits only for
 * rounds it has written itself, so no wait closes a cycle. */
static int direct_rounds(nps_run *x, int send, int tag)
{
    nps_state *s = x->s;
    const int L = s->L;
    int err = MPI_SUCCESS, next = 0;
    xchg_shm_header *me = hdr_of(x, s->la);
    for (int e0 = 0; e0 < s->nlanes; e0 += L) {
        int e1 = e0 + L < s->nlanes ? e0 + L : s->nlanes;
        write_lanes(x, e0, e1);
        xchg_shm_announce(x->w, &me->pad[PAD_WRITTEN], written_mark(x, e1));
        for (; send && err == MPI_SUCCESS && next < s->ns && s->mine[next] < e0; next++)
            err = send_lane(x, next, tag);
    }
    for (; send && err == MPI_SUCCESS && next < s->ns; next++)
        err = send_lane(x, next, tag);
    return err;
}

static const xchg_setting_def direct_bytes = {"XCHG_NPS_DIRECT_BYTES", XCHG_KIND_INT, 0, INT_MAX,
                                              4, NULL, NULL, NULL};
const xchg_setting_def *const xchg_node_pairs_shm_settings[] = {&direct_bytes, NULL};

/* Whether the next call writes straight into the messages (every member
 * decides alike, from the headers of this one): where the node's mean
 * block is at least XCHG_NPS_DIRECT_BYTES a member (4: one more pass of
 * its bytes through the node's memory costs more than the P L steps that
 * place each block). */
static int direct_next(const nps_run *x)
{
    const nps_state *s = x->s;
    uint64_t sends = 0;
    uint64_t per = (uint64_t)xchg_setting_of(&x->c->cs->settings, &direct_bytes);
    for (int j = 0; j < s->L; j++)
        sends += hdr_of(x, j)->pad[PAD_SENDS];
    return sends >= per * (uint64_t)s->L * (uint64_t)s->L * (uint64_t)(x->c->size - 1);
}

/* Node-mates' blocks, straight from their regions (after step 1). */
static int read_mates(nps_run *x, int err)
{
    xchg_call *c = x->c;
    const nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    for (int j = 0; j < s->L; j++) {
        int r = xchg_node_member(n, s->a, j);
        if (r == c->rank)
            continue;
        uint32_t len = sizes_of(x, j)[c->rank];
        if (len)
            err = xchg_unpack_checked(c, "node_pairs_shm", r,
                                      out_of(x, j) + block_off(x, j, s->a, s->la), (int64_t)len,
                                      err);
    }
    x->mates_done = 1;
    return err;
}

/* Whether node b's message to this rank is in its slot with data whose
 * sizes match recvcounts (its total and check sum); *data: where this
 * rank's blocks start in it, *got and *want: the totals. */
static int slot_matches(const nps_run *x, int b, const char **data, int64_t *got, int64_t *want)
{
    const xchg_call *c = x->c;
    const nps_state *s = x->s;
    const xchg_node_layout *n = s->nl;
    const int64_t rsz = c->rt.size;
    int lo, hi, cl = my_chunk(x, s->read[b], &lo, &hi), me = s->la - lo;
    const int64_t *slot = slot_ptr(x, s->read[b]);
    const int64_t *m = slot + 1;
    const int Lb = xchg_node_size(n, b);
    uint64_t sum = 0;
    *want = 0;
    *got = m[NPS_HDR + 2 * me];
    for (int k = 0; k < Lb; k++) {
        int64_t v = (int64_t)c->recvcounts[xchg_node_member(n, b, k)] * rsz;
        *want += v;
        sum += s->key[k] * (uint64_t)v;
    }
    xchg_charge_ops(XCHG_OP_SIZE_SUM, (size_t)Lb);
    if (slot[0] != MPI_SUCCESS || m[0] || m[1] || *got != *want ||
        (uint64_t)m[NPS_HDR + 2 * me + 1] != sum)
        return 0;
    const char *p = (const char *)m + head_bytes(cl); /* entries: the lane's receivers */
    for (int k = 0; k < me; k++)
        p += m[NPS_HDR + 2 * k];
    *data = p;
    return 1;
}

/* While step 2 runs: the blocks of every node whose message is in (its
 * lane's stamp says this epoch) and matches, copied out now. What is not
 * in yet, or does not match, waits for step 3, after the second
 * synchronisation has told every rank every node's flags: blocks copied
 * here are overwritten where the call then runs node_pairs, and undefined
 * anyway where it returns an error, as MPI's receive buffers are. */
static void read_arrived(nps_run *x)
{
    const nps_state *s = x->s;
    size_t looked = 0;
    if (!x->early || x->read_err != MPI_SUCCESS)
        return;
    xchg_charge_flush(); /* simulated: look at the stamps at this rank's time */
    for (int b = 0; b < s->N && x->read_err == MPI_SUCCESS; b++) {
        const char *p;
        int64_t got, want;
        if (b == s->a || s->done[b])
            continue;
        looked++;
        if (!xchg_shm_stamped(x->w, stamp_of(x, s->read[b]), x->e) ||
            !slot_matches(x, b, &p, &got, &want))
            continue;
        x->read_err = copy_node(x->c, 0, s->nl, b, (char *)(uintptr_t)p);
        s->done[b] = 1;
    }
    xchg_charge_ops(XCHG_OP_PEER, looked);
}

/* A lane's message is in its slot, or its receive failed: the slot's
 * status (a failed receive is a data message larger than its slot, whose
 * flags are 0), the flags it carried merged into *rx_err and *rx_need,
 * and the lane's stamp stored for its readers. */
static void slot_in(nps_run *x, int i, int rc, const MPI_Status *st, int64_t *rx_err,
                    uint64_t *rx_need)
{
    const nps_state *s = x->s;
    int64_t *slot = slot_ptr(x, s->mine[i]);
    int cnt = 0;
    if (rc == MPI_SUCCESS)
        MPI_Get_count(st, MPI_BYTE, &cnt);
    if (rc == MPI_SUCCESS && cnt < header_in(x, i))
        rc = MPI_ERR_TRUNCATE;
    slot[0] = rc;
    if (rc == MPI_SUCCESS) {
        if (slot[1] > *rx_err)
            *rx_err = slot[1];
        if ((uint64_t)slot[2] > *rx_need)
            *rx_need = (uint64_t)slot[2];
    }
    if (x->early)
        xchg_shm_stamp(x->w, stamp_of(x, s->mine[i]), x->e);
}

/* Step 2's receives into the window, taken as they complete, the blocks
 * that arrived for this rank (through any relay of its node) copied out
 * in between. Returns an error of MPI itself (a failed receive is its
 * slot's status instead); the slots it leaves get that error. */
static int relay_wait_in(nps_run *x, int64_t *rx_err, uint64_t *rx_need)
{
    nps_state *s = x->s;
    int left = s->ns, werr = MPI_SUCCESS;
    while (left > 0) {
        int cnt = 0;
        int rc = xchg_mpi_waitsome(s->ns, s->req, &cnt, s->idx, s->st);
        if ((rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) || cnt == MPI_UNDEFINED) {
            werr = rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
            break;
        }
        for (int k = 0; k < cnt; k++)
            slot_in(x, s->idx[k], rc == MPI_ERR_IN_STATUS ? s->st[k].MPI_ERROR : MPI_SUCCESS,
                    &s->st[k], rx_err, rx_need);
        left -= cnt;
        if (left > 0) /* the last one in: to the synchronisation first, the node waits */
            read_arrived(x);
    }
    for (int i = 0; i < s->ns && werr != MPI_SUCCESS; i++)
        if (s->req[i] != MPI_REQUEST_NULL)
            slot_ptr(x, s->mine[i])[0] = werr;
    return werr;
}

/* Step 2 on a relay: receives, messages out, then the largest flags it
 * received (and its own), for its node-mates. Where this node moves data,
 * every rank copies out its node-mates' blocks, and the other nodes'
 * that arrived, while it waits. */
static int step_relay(nps_run *x)
{
    nps_state *s = x->s;
    const int tag = xchg_algo_tag(XCHG_ALGO_NODE_PAIRS_SHM), ns = s->ns;
    int64_t rx_err = x->myflag = x->flag;
    uint64_t rx_need = 0;
    const int rounds = x->direct && x->early; /* the blocks go straight into the messages */
    memset(s->done, 0, (size_t)s->N);
    if (!ns) {
        if (rounds)
            direct_rounds(x, 0, tag);
        if (x->early)
            x->read_err = read_mates(x, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    for (int i = 0; i < 2 * ns; i++)
        s->req[i] = MPI_REQUEST_NULL;
    int err = relay_post(x, tag);
    if (rounds) { /* written whatever happens: the node-mates wait for them */
        int rerr = direct_rounds(x, err == MPI_SUCCESS && x->window_rx, tag);
        if (err == MPI_SUCCESS)
            err = rerr;
    }
    if (err == MPI_SUCCESS && (!rounds || !x->window_rx))
        err = relay_send(x, tag);
    if (err == MPI_SUCCESS && !x->window_rx)
        err = relay_drain(x, tag);
    if (err != MPI_SUCCESS)
        return err; /* MPI itself failed: it reports the same on the ranks concerned */
    if (x->early)
        x->read_err = read_mates(x, MPI_SUCCESS);
    xchg_world_errors_return(1); /* MPICH: a truncated receive as a code (progress.h) */
    int werr = x->window_rx ? relay_wait_in(x, &rx_err, &rx_need) : MPI_SUCCESS;
    int serr = xchg_mpi_waitall(ns, s->req + ns, MPI_STATUSES_IGNORE);
    xchg_world_errors_return(0);
    for (int i = 0; !x->window_rx && i < ns; i++) {
        const int64_t *h = s->hin + (size_t)s->hw * (size_t)i;
        if (h[0] > rx_err)
            rx_err = h[0];
        if ((uint64_t)h[1] > rx_need)
            rx_need = (uint64_t)h[1];
    }
    if (werr != MPI_SUCCESS)
        err = werr;
    else if (serr != MPI_SUCCESS && serr != MPI_ERR_IN_STATUS)
        err = serr;
    xchg_shm_header *me = hdr_of(x, s->la);
    me->pad[PAD_RX_ERR] = (uint64_t)(x->myflag > rx_err ? x->myflag : rx_err);
    me->pad[PAD_RX_NEED] = rx_need;
    return err;
}

/* Step 3: this rank's blocks out of the window, those step 2 did not
 * copy already. */
static int step_read(nps_run *x)
{
    xchg_call *c = x->c;
    const nps_state *s = x->s;
    int err = x->read_err;
    if (!x->mates_done)
        err = read_mates(x, err);
    for (int b = 0; b < s->N; b++) { /* the other nodes, through their relays */
        const char *p;
        int64_t got, want;
        if (b == s->a || s->done[b])
            continue;
        if (!slot_matches(x, b, &p, &got, &want)) {
            if (err == MPI_SUCCESS)
                err = xchg_error_code(MPI_ERR_TRUNCATE, "node_pairs_shm: the blocks node %d "
                                      "sends rank %d (%lld bytes) do not match recvcounts "
                                      "(%lld bytes, or block by block)", b, c->rank,
                                      (long long)got, (long long)want);
            continue;
        }
        if (err == MPI_SUCCESS)
            err = copy_node(c, 0, s->nl, b, (char *)(uintptr_t)p);
    }
    return err;
}

/* A first window's data half where auto agreed this call's volumes
 * (c->agreed, the same on every rank), else 0 (XCHG_SHM_BYTES): a
 * member's out area (node offsets, its blocks) and the slots of the
 * messages it relays (about twice what a member receives, with their
 * headers); and where blocks may be large enough for the direct way
 * (direct_next(), which the second call follows: the busiest rank's mean
 * block at least XCHG_NPS_DIRECT_BYTES a member), room for the outgoing
 * messages a member relays (about what a member sends), so that the
 * second call does not grow the window again. Too small, the call
 * overflows, runs node_pairs once and the window grows to the agreed
 * need; a window's cost grows with its size and is paid before any
 * saving. */
static size_t first_need(const xchg_call *c, const nps_state *s)
{
    if (!c->agreed)
        return 0;
    /* the largest node's size: the same on every rank, as the need must be */
    const uint64_t N = (uint64_t)s->N, P = (uint64_t)c->size;
    const uint64_t L = (uint64_t)xchg_node_largest(s->nl);
    const uint64_t per = (uint64_t)xchg_setting_of(&c->cs->settings, &direct_bytes);
    const int may_direct = c->agreed->max_send >= per * L * (P - 1);
    return (size_t)(8 * N + c->agreed->max_send + 2 * c->agreed->max_recv + 16 * (N + P) +
                    (may_direct ? c->agreed->max_send + 16 * (N + P) : 0));
}

int xchg_alltoallv_node_pairs_shm(xchg_call *c)
{
    if (c->size == 1)
        return c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    void *state = NULL;
    int rc = xchg_node_state_of(c->cs, &nps_ops, &state);
    if (rc != MPI_SUCCESS)
        return rc;
    nps_state *s = state;
    xchg_shm_window *w = NULL;
    rc = xchg_node_window_for_call(c->cs, s->nl->node, table_bytes(s, c->size),
                                   s->need ? (size_t)s->need : first_need(c, s), &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!w) {
        c->ran_instead = XCHG_ALGO_NODE_PAIRS;
        return xchg_alltoallv_node_pairs(c);
    }
    nps_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.s = s, x.w = w, x.e = w->epoch + 1;
    x.direct = s->direct;
    x.lean = x.direct && c->st.contig;
    step_write(&x);
    xchg_shm_sync(w, 2 * x.e - 1);
    s->direct = direct_next(&x);
    node_flags(&x);
    x.early = !x.flag && !x.need;
    int err = step_relay(&x);
    xchg_shm_sync(w, 2 * x.e);
    /* every node's flags: this node's, and what its relays received */
    int64_t flag = x.flag;
    uint64_t need = x.need;
    for (int k = 0; k < s->L; k++) {
        const xchg_shm_header *h = hdr_of(&x, k);
        if ((int64_t)h->pad[PAD_RX_ERR] > flag)
            flag = (int64_t)h->pad[PAD_RX_ERR];
        if (h->pad[PAD_RX_NEED] > need)
            need = h->pad[PAD_RX_NEED];
    }
    w->epoch = x.e; /* calls on this window */
    xchg_temp_free(c, x.msg, x.msg_b);
    if (err != MPI_SUCCESS)
        return err;
    if (flag)
        return xchg_agree_result(c->rank, c->size, x.myerr, flag, "node_pairs_shm");
    if (need) { /* every rank saw it: node_pairs now, larger windows next call */
        if (need > s->need)
            s->need = need;
        c->ran_instead = XCHG_ALGO_NODE_PAIRS;
        return xchg_alltoallv_node_pairs(c);
    }
    return step_read(&x);
}
