/*
 * model.c - a cost model of each alltoallv algorithm.
 *
 * A LogGP-style model: a dependent exchange costs a latency (alpha between
 * nodes, alpha_intra inside one, blended by the share of ranks whose
 * partner is off the node: alpha_at), every posted send or receive an
 * overhead o, every byte beta on the node's link (shared by the node's
 * ranks: what counts is the node's real off-node traffic) or beta_intra
 * inside the node, and every local copy `copy` per byte plus `copy_call`.
 * Each algorithm's time is estimated from statistics every rank shares
 * after the agreement (select.c, stats_agree.c: largest block, busiest rank's
 * volumes, partner counts and posts, off-node volumes, total traffic), so
 * every rank computes the same estimates and picks the same algorithm
 * (design rule 2). xchg-tune measures alpha, beta, copy and overhead for a
 * machine and XCHG_TUNING_FILE loads them (table.c).
 *
 * Direct algorithms (linear, scattered) post everything at once: the
 * posting overhead and the transfer overlap, a + max(posts o, link time +
 * receives o), not the sum (the receives' overheads come after the
 * flows, which share the link fairly and end together). Bruck-type
 * algorithms pay per round a latency and their posts, the moving share of
 * what a rank holds, and their copies (bruck_time). The padded ones pay
 * auto's blocking agreement and the MPI library's MPI_Alltoall as MPICH
 * runs it. Checked against the simulation at P=64 (docs/algorithms.md,
 * "How auto chooses: the cost model"): within 0.85-1.15x for the
 * algorithms that win somewhere (linear, scattered, bruck_radix,
 * bruck_twophase, padded_alltoall at small blocks), up to 1.9x off for
 * ones that never do there (pairwise: steps summed with the transfer; grid
 * and bruck_radix on the hot pattern: pessimistic); the node-aware ones
 * are checked in their own functions below.
 * Its job is to rank, never to pick something much slower than the best.
 * A refit changes only xchg_model_defaults().
 */
#include "select_internal.h"

#include "core/calibrated.h"

#include <math.h>

/* The busiest node's off-node traffic (bytes, one direction), from what
 * the agreement carries: the total off-node bytes (SUM) and the busiest
 * rank's (MAX). The node holding the busiest rank carries at least that
 * rank's bytes plus its node-mates' share of the rest; no node carries
 * less than the mean. (An exact per-node sum would need a node index on
 * every rank, i.e. one more collective at setup.) */
static double node_off_bytes(const xchg_pattern_stats *s, double max_rank_off)
{
    const double P = (double)s->P;
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const double nodes = ceil(P / node);
    const double sum = (double)s->sum_off_bytes;
    if (nodes <= 1.0 || sum <= 0.0)
        return 0.0;
    double rest = sum - max_rank_off;
    double hot = max_rank_off + (node - 1.0) * (rest > 0 ? rest / (P - 1.0) : 0.0);
    double mean = sum / nodes;
    double v = hot > mean ? hot : mean;
    return v < sum ? v : sum;
}

/* Latency of an exchange with partners up to `span` ranks away, ranks
 * placed by node: a share min(1, span/node) of the ranks has a partner on
 * another node (rank node-1's partner +1 already is), and a round waits
 * for its slowest; so the inter-node latency weighs in by that share
 * (fitted below, bruck_radix at radix 2..16). */
static double alpha_at(const xchg_model_params *m, const xchg_pattern_stats *s, double span)
{
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    if ((double)s->P <= node)
        return m->alpha_intra;
    double f = fmin(1.0, span / node);
    return m->alpha_intra + f * (m->alpha - m->alpha_intra);
}

/* Nonempty blocks: the busiest rank's share of its 2(P-1) sends and
 * receives (1 where unknown). */
static double nonempty_share(const xchg_pattern_stats *s)
{
    const double P = (double)s->P;
    return P > 1 && s->max_posts > 0 ? fmin(1.0, (double)s->max_posts / (2.0 * (P - 1.0)))
                                     : 1.0;
}

/* Local copies: bytes at m->copy plus m->copy_call per block copied. */
static double copies(const xchg_model_params *m, double bytes, double calls)
{
    return bytes * m->copy + calls * m->copy_call;
}

/* MPI_Alltoall of P slots of S bytes (the padded algorithms): MPICH's
 * choice (and SMPI's mpich selector): Bruck's log P rounds below
 * alltoall_bruck_bytes per slot, else every message at once. */
static double alltoall_time(const xchg_model_params *m, const xchg_pattern_stats *s, double S)
{
    const double P = (double)s->P;
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const int multinode = P > node;
    double t = 0.0;
    if (S < m->alltoall_bruck_bytes) {
        for (int d = 1; d < s->P; d *= 2) {
            int intra = !multinode || (double)d < node;
            t += alpha_at(m, s, (double)d) + 2.0 * m->overhead +
                 (P / 2.0) * S * (intra ? m->beta_intra : node * m->beta);
        }
        return t;
    }
    double off = multinode ? node * S * (P - node) : 0.0; /* a node's link */
    return alpha_at(m, s, P) + fmax(2.0 * (P - 1.0) * m->overhead,
                                    fmax(off * m->beta, P * S * m->beta_intra) +
                                        (P - 1.0) * m->overhead);
}

/* The two-phase Bruck engine at radix r (bruck_twophase: r = 2): per
 * round, sizes then data to the r-1 partners v w (v = 1..r-1, w = r^j),
 * each phase one latency plus m->phase_post overheads per partner; the
 * moving share (r-1)/r of what a rank holds crosses the node's link
 * (every rank of the node at once) or shared memory; every nonempty held
 * block is copied once per round (packed if it moves, before the data
 * goes; moved to the new store if it stays, while the data flies), once
 * at the start (rotation) and once at the end. What a rank holds: the mean volume, or
 * more where its own sends are many (they spread out, 1/r of them left
 * after each round) or its receives are (they gather, r^(j+1)/P of them
 * there after round j). */
/* Bytes of one block's size where an algorithm sends sizes ahead of the
 * data as int64 (the two-phase Bruck engine, grid); bruck_2level's varint
 * headers are counted in its own model. */
static const double size_bytes = 8.0;

static double bruck_time(const xchg_model_params *m, const xchg_pattern_stats *s, double r)
{
    const double P = (double)s->P;
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const double mean = P > 0 ? (double)s->sum_bytes / P : 0.0;
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    const double blocks = fmax(1.0, P * nonempty_share(s));
    double t = copies(m, fmax(mean, snd), blocks) + copies(m, fmax(mean, rcv), blocks);
    double spread = 1.0;
    for (double w = 1.0; w < P; w *= r, spread /= r) {
        double nv = fmin(r - 1.0, ceil(P / w) - 1.0);
        double span = nv * w;
        /* bytes off the node: partners at distance v w, v = 1..nv, cross
         * a node boundary for a share (v w)/node of the ranks */
        double f = P <= node ? 0.0 : fmin(1.0, w * (nv + 1.0) / 2.0 / node);
        double held = fmax(mean, fmax(snd * spread, rcv * fmin(1.0, w * (nv + 1.0) / P)));
        double share = nv / (nv + 1.0);
        /* every moving slot's size goes ahead of the data, 8 bytes each,
         * empty slots too: at 8 B blocks as many bytes as the data. Without
         * them the model was up to 17% optimistic at 64 ranks per node
         * (uniform 8 B, 256-1024 ranks); with them bruck_radix and
         * bruck_twophase are within 1.01-1.10x of the simulated time
         * there, and at 16 per node, 16 B, 256 ranks. */
        double sized = held + size_bytes * P, sized_mean = mean + size_bytes * P;
        double bw = (1.0 - f) * sized * m->beta_intra +
                    f * fmax(node * sized_mean, sized) * m->beta;
        /* the moving blocks are packed first; the kept ones are copied
         * while the data flies */
        t += 2.0 * (alpha_at(m, s, span) + m->phase_post * nv * m->overhead) +
             copies(m, share * held, share * blocks) +
             fmax(share * bw, copies(m, (1.0 - share) * held, (1.0 - share) * blocks));
    }
    return t;
}

/* What several algorithms' models share, from the agreed statistics. */
typedef struct model_terms {
    double P, o;
    double vol;    /* critical rank's volume */
    double nnz;    /* its nonzero partners */
    double blk;    /* global largest block */
    double posts;  /* sends + receives of the busiest rank (two per partner if not carried) */
    double node;
    double a;      /* latency reaching every rank */
    double mean;   /* a rank's mean volume */
    double agree;  /* one agreement of the statistics */
    double off;    /* the busiest node's off-node bytes, the larger direction */
    double direct_bw, direct, incast;
} model_terms;

static void terms_of(const xchg_model_params *m, const xchg_pattern_stats *s, model_terms *t)
{
    const double P = (double)s->P;
    const double o = m->overhead;
    const double vol = (double)s->max_rank_bytes;       /* critical rank's volume */
    const double nnz = (double)s->max_nnz;              /* its nonzero partners */
    const double blk = (double)s->max_block_bytes;      /* global largest block */
    /* sends + receives of the busiest rank (two per partner if not carried) */
    const double posts = s->max_posts > 0 ? (double)s->max_posts : 2.0 * nnz;
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const double a = alpha_at(m, s, P);                 /* reaching every rank */
    const double mean = P > 0 ? (double)s->sum_bytes / P : 0.0; /* a rank's mean volume */
    const double agree = xchg_model_agree_time(m, s);
    /* Direct algorithms: the busiest node's link, or the busiest rank's own
     * traffic through shared memory, whichever takes longer. */
    double off = node_off_bytes(s, (double)s->max_off_send);
    double off_in = node_off_bytes(s, (double)s->max_off_recv);
    if (off_in > off)
        off = off_in;
    const double direct_bw = fmax(off * m->beta, vol * m->beta_intra);
    /* Direct algorithms: posting every send and receive, overlapped with
     * the transfer; but the flows share the links fairly and so finish
     * together, after which the receives still cost their overhead each
     * (measured: uniform 1 KiB, 62.9 us of link time, linear 74.3 us,
     * scattered 72.3 = link + 63 receive overheads). */
    const double direct = a + fmax(posts * o, direct_bw + (double)s->max_recv_nnz * o);
    /* many senders to one hot receiver at once (it receives over twice
     * the mean): linear floods it, scattered (XCHG_THROTTLE in flight)
     * does not */
    const double incast = (double)s->max_recv_nnz > m->throttle &&
                                  (double)s->max_recv_bytes > 2.0 * mean
                              ? ((double)s->max_recv_nnz - m->throttle) * m->incast
                              : 0.0;

    t->P = P, t->o = o, t->vol = vol, t->nnz = nnz, t->blk = blk, t->posts = posts;
    t->node = node, t->a = a, t->mean = mean, t->agree = agree, t->off = off;
    t->direct_bw = direct_bw, t->direct = direct, t->incast = incast;
}

double xchg_model_vendor(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, a = k.a, direct_bw = k.direct_bw, incast = k.incast;
    /* a loop over all P peers, empty ones included */
    return a + fmax(2.0 * P * o * m->vendor_overhead_factor, direct_bw) + incast;
}

double xchg_model_linear(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double o = k.o, blk = k.blk, posts = k.posts, a = k.a, direct_bw = k.direct_bw,
                 direct = k.direct, incast = k.incast;
    /* all nonzero messages in flight at once; but its receives of
     * blocks up to XCHG_P2P_PROBE_ABOVE are posted before the sends,
     * so half their overheads hide under the flows (fitted: hot 256 B,
     * random and zipf 1 KiB at P=64: 59.5, 70.5, 70.9 us simulated,
     * 60.5, 68.9, 69.7 modelled) */
    if (m->max_inflight > 0 && 2.0 * (k.P - 1.0) > m->max_inflight)
        return direct; /* past XCHG_MAX_INFLIGHT it runs scattered's window */
    if (blk > 16384.0)
        return direct + incast;
    return a + fmax(posts * o, direct_bw + 0.5 * (double)s->max_recv_nnz * o) + incast;
}

double xchg_model_scattered(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double direct = k.direct;
    /* linear with at most XCHG_THROTTLE requests in flight: measured
     * no slower (its waits overlap the posting), no faster either
     * where the incast credit is 0; a tie goes to linear (listed
     * first) */
    return direct;
}

double xchg_model_pairwise(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, posts = k.posts, node = k.node, a = k.a,
                 direct_bw = k.direct_bw;
    /* one dependent step per nonempty block (at most its sends +
     * receives, P-1 at most), each a latency (inside the node for a
     * share (node-1)/(P-1) of the partners) and two overheads, plus
     * the transfer */
    double steps = fmin(P - 1.0, posts);
    double f_in = P > 1 ? fmin(1.0, (node - 1.0) / (P - 1.0)) : 1.0;
    double step = f_in * m->alpha_intra + (1.0 - f_in) * a + 2.0 * o + m->sync;
    return steps * step + direct_bw;
}

double xchg_model_padded_alltoall(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, blk = k.blk, agree = k.agree;
    /* agreement of the largest block (auto's), one MPI_Alltoall of P
     * slots of blk + 8 bytes, pack and unpack of every slot */
    double S = blk + 8.0;
    return agree + alltoall_time(m, s, S) + copies(m, 2.0 * P * S, 2.0 * P);
}

double xchg_model_bruck_padded(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, blk = k.blk, node = k.node, agree = k.agree;
    /* agreement, then log2 P steps of P/2 slots of blk + 8 bytes, each
     * packed and unpacked; the rotation in and out */
    double S = blk + 8.0, t = agree + copies(m, 2.0 * P * S, 2.0 * P);
    for (int d = 1; d < s->P; d *= 2) {
        int intra = (double)d < node || P <= node;
        t += alpha_at(m, s, (double)d) + 2.0 * o +
             (P / 2.0) * S * (intra ? m->beta_intra : node * m->beta) +
             copies(m, P * S, P);
    }
    return t;
}

double xchg_model_bruck_twophase(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    return bruck_time(m, s, 2.0);
}

double xchg_model_bruck_radix(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    return bruck_time(m, s, m->radix > 1 ? m->radix : 2.0);
}

double xchg_model_hybrid(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double o = k.o, a = k.a, direct_bw = k.direct_bw;
    /* bruck_radix over the blocks up to T (their volumes), with the
     * direct blocks' posts on the same CPU; the direct receives and
     * sends go first and travel during the Bruck (measured: zipf 64 B
     * at P=64, 18.6 us against bruck_radix's 20.4; docs/algorithms.md
     * "hybrid"), so the later of the two; their posts are not hidden
     * under the flows as linear's are (hot 256 B: 63.9 us simulated,
     * 67.0 modelled, linear 59.5-63.5). With no block over T it is bruck_radix, and a
     * tie goes to bruck_radix (listed first among the candidates). */
    xchg_pattern_stats small = *s;
    small.max_send_bytes = s->max_small_send;
    small.max_recv_bytes = s->max_small_recv;
    small.sum_bytes = s->sum_small_bytes;
    small.max_rank_bytes = s->max_small_send > s->max_small_recv ? s->max_small_send
                                                                 : s->max_small_recv;
    const double lp = (double)s->max_large_posts;
    const double bruck = bruck_time(m, &small, m->radix > 1 ? m->radix : 2.0);
    if (lp <= 0.0)
        return bruck;
    return fmax(bruck + lp * o, a + direct_bw + lp * o);
}

double xchg_model_hierarchical(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, node = k.node, a = k.a, off = k.off;
    /* L ranks per node, N nodes, one leader each (hierarchical.c):
     * the sizes (P+3 int64 per member) gathered to the leader and
     * scattered back (binomial trees on the node), the leaders' size
     * matrices (N-1 messages of L x L int64 each way), then the data:
     * gathered to the leader (through shared memory), N-1 messages
     * each way between leaders (the node's off-node volume on its
     * link), scattered back; every member packs and unpacks its
     * blocks. A single node, or one rank per node, gains nothing: not
     * modelled. */
    const double L = node, N = ceil(P / node);
    if (L <= 1.0 || N <= 1.0)
        return INFINITY;
    const double rounds = ceil(log2(L));
    const double hdr = (P + 3.0) * 8.0;
    const double tree = rounds * (m->alpha_intra + 2.0 * o) + (L - 1.0) * hdr * m->beta_intra;
    const double leaders = a + fmax(2.0 * (N - 1.0) * o,
                                    (N - 1.0) * (L * L + 2.0) * 8.0 * m->beta +
                                        (N - 1.0) * o);
    /* the members' flows to the leader run side by side, each at
     * beta_intra (as direct_bw counts shared memory per rank) */
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    const double gatherv = m->alpha_intra + fmax((L - 1.0) * o, snd * m->beta_intra) + o;
    const double scatterv = m->alpha_intra + fmax((L - 1.0) * o, rcv * m->beta_intra) + o;
    const double data = a + fmax(2.0 * (N - 1.0) * o, off * m->beta + (N - 1.0) * o);
    /* the leader's hindexed messages, packed and unpacked by MPI (charged
     * in simulation too): a piece per member and node out, a
     * piece per block in, the node's volume each way, on one core.
     * Checked at P=64, random: 35.0 / 529.4 us simulated at 16 B / 1 KiB,
     * 35.2 / 534 modelled. */
    const double share = nonempty_share(s);
    const double leader_pack = copies(m, 2.0 * L * k.mean, N * L * (1.0 + L * share));
    return 2.0 * tree + leaders + gatherv + data + scatterv + leader_pack +
           copies(m, snd + rcv, 2.0 * (P - 1.0) * nonempty_share(s));
}

double xchg_model_node_pairs(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, node = k.node, off = k.off, mean = k.mean;
    /* L ranks per node, N nodes, every member a relay for about (N-1)/L
     * nodes (node_pairs.c): (1) L-1 messages to and from the node-mates
     * (the rank's outgoing blocks, and as relay about a mean volume in),
     * each received after a probe; (2) ns messages each way to the
     * partners, the node's off-node volume and its size headers (L x L
     * int64 per node pair) on the node's link; (3) L-1 messages back
     * inside the node (from the node-mates that serve a node). Every
     * member packs and unpacks its blocks, and MPI packs the relays'
     * hindexed messages (relay_pack below). A probe costs about 0.4 o
     * (linear probing every message at P=64, 16 B: 63 probes, 5.1 us
     * more, p2p_common.h). A single node or one rank per node gains
     * nothing: not modelled. Checked at 1024 ranks, 16 per node, 256 B
     * and 1 KiB: within 4% of the simulated time, as the other node-aware
     * models there. */
    const double L = node, N = ceil(P / node);
    if (L <= 1.0 || N <= 1.0)
        return INFINITY;
    const double probe = 0.4 * o, ns = ceil((N - 1.0) / L), relays = fmin(L - 1.0, N - 1.0);
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    const double hdr = (N - 1.0) * L * L * 8.0; /* size headers leaving a node */
    const double gather = m->alpha_intra + fmax((L - 1.0) * o, fmax(snd, mean) * m->beta_intra) +
                          (L - 1.0) * (o + probe);
    const double pairs = alpha_at(m, s, P) + fmax(ns * (2.0 * o + probe),
                                                  (off + hdr) * m->beta + ns * o);
    const double scatter = m->alpha_intra + fmax(relays * o, fmax(rcv, mean) * m->beta_intra) +
                           relays * (o + probe);
    /* MPI packs the relays' hindexed messages (charged in simulation
     * too): to each partner a piece per source member, to
     * each node-mate a piece per relayed block, the relayed volume
     * (ns L^2 blocks) each way */
    const double share = nonempty_share(s);
    const double relay_pack = copies(m, 2.0 * ns * L * L * mean / P,
                                     ns * (L + 1.0) + ns * L * L * share);
    return gather + pairs + scatter + relay_pack +
           copies(m, snd + rcv, 2.0 * (P - 1.0) * nonempty_share(s));
}

double xchg_model_node_pairs_shm(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, L = k.node, off = k.off, mean = k.mean;
    /* node_pairs' messages between nodes with the node's steps through
     * its window (node_pairs_shm.c): each member writes its blocks
     * (runs: about one copy per node) and its table (4 bytes a rank), a node
     * synchronisation, each relay gathers its lanes' blocks out of the
     * window into its ns messages and receives ns, a second
     * synchronisation, and each member copies its blocks out (one run per
     * node); a synchronisation is xchg_model_node_sync's. Memory: every
     * member's two halves hold its table, its blocks and its slots; past
     * XCHG_MAX_TEMP_BYTES for the node the window is not made (node_pairs
     * runs instead). One node, or one rank per node: not this algorithm's
     * case. */
    const double N = ceil(P / L);
    if (L <= 1.0 || N <= 1.0)
        return INFINITY;
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    if (m->temp_limit > 0 && 2.0 * L * (4.0 * P + snd + rcv) > m->temp_limit)
        return INFINITY;
    /* a relay's lanes: ns other nodes, or (more members than twice the
     * other nodes) one lane of lanes, for L / lanes of a node's receivers */
    const double lanes = N - 1.0 < L ? fmax(1.0, floor(L / (N - 1.0))) : 1.0;
    const double ns = ceil((N - 1.0) / L), share = nonempty_share(s);
    const double gathered = ns * L * ceil(L / lanes); /* blocks a relay gathers */
    const double sync = xchg_model_node_sync(m, L);
    const double hdr = (N - 1.0) * (2.0 + 2.0 * L) * 8.0; /* per-member totals and check sums */
    const double write = copies(m, snd + 4.0 * P + 8.0 * N, N + 1.0);
    const double gather = copies(m, gathered * mean / P, gathered * share);
    const double pairs = alpha_at(m, s, P) + fmax(ns * 2.0 * o, (off + hdr) * m->beta + ns * o);
    /* the copies out: a relay that takes ns messages copies out, while it
     * waits for its later ones, what has arrived for it; about half of
     * (ns - 1) / ns of them hide under the wait (1,024 ranks, 16 a node,
     * ns = 4: 3.1 of 6.7 us, sim/study classic) */
    const double read = copies(m, rcv, N + L);
    const double hidden = fmin(read * (ns - 1.0) / (2.0 * ns), pairs);
    /* a check-sum step per block gathered and per block received, a second
     * pass over the counts */
    const double cpu = (gathered + P) * m->size_sum_step + P * m->peer_step;
    return 2.0 * sync + write + gather + pairs + read - hidden + cpu;
}

double xchg_model_multileader(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, node = k.node, off = k.off, mean = k.mean;
    /* k leaders per node (the algorithm's own rule, or XCHG_LEADERS),
     * groups of g = L/k members, T = k N leaders (multileader.c): (1) each
     * member one message to its leader, which probes and receives g-1;
     * (2) each leader T-1 messages each way, the node's off-node volume
     * and the size headers (a node's members x the other nodes' ranks,
     * int64) on the node's link; (3) the leader g-1 messages out, each
     * member one in. Members pack and unpack their blocks, and MPI packs
     * the leaders' hindexed messages (leader_pack below). A single node or
     * one rank per node: not modelled. */
    const double L = node, N = ceil(P / node);
    if (L <= 1.0 || N <= 1.0)
        return INFINITY;
    const double kl = (double)xchg_multileader_leaders_for((long)m->leaders, (int)L, (int)N);
    const double g = ceil(L / kl), T = kl * N, probe = 0.4 * o;
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    const double hdr = L * (P - L) * 8.0;
    const double gather = m->alpha_intra + o + (g - 1.0) * (o + probe) +
                          fmax(snd, mean) * m->beta_intra;
    const double leaders = alpha_at(m, s, P) + fmax((T - 1.0) * (2.0 * o + probe),
                                                    (off + hdr) * m->beta + (T - 1.0) * o);
    const double scatter = m->alpha_intra + (g - 1.0) * o + o + probe +
                           fmax(rcv, mean) * m->beta_intra;
    /* MPI packs the leaders' hindexed messages (charged in simulation
     * too): to each leader a piece per group member, to each
     * member a piece per source rank, the group's volume each way */
    const double share = nonempty_share(s);
    const double leader_pack = copies(m, 2.0 * g * mean, (T - 1.0) * (g + 1.0) + g * P * share);
    return gather + leaders + scatter + leader_pack +
           copies(m, snd + rcv, 2.0 * (P - 1.0) * nonempty_share(s));
}

double xchg_model_grid(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, o = k.o, vol = k.vol, a = k.a, agree = k.agree,
                 direct_bw = k.direct_bw, L = k.node;
    /* q columns (a row: q consecutive ranks), K rows (a column: ranks q
     * apart). A row spans q/L nodes once q > L: its share (q-L)/q of
     * row partners is off the node. A column has max(1, L/q) members on
     * my node (me included), the rest off it. Sizes: size_bytes a block. */
    const double q = ceil(sqrt(P)), K = ceil(P / q);
    const double row_off = q > L ? (q - L) / q : 0.0;
    const double col_off = P > L ? fmax(0.0, K - fmax(1.0, L / q)) : 0.0;
    const double sz = size_bytes;
    /* Step by step, as grid.c runs them (each phase posts everything, then
     * waits). 1: block sizes to the q row targets, K per target. */
    double step1 = alpha_at(m, s, q) + 2.0 * q * o + L * q * row_off * K * sz * m->beta;
    /* 3: phase-1 data along the row and, at the same time, the phase-2
     * sizes down the column: q of them to each of the K column members,
     * so 2q + 2K posts, and at 8 B blocks the sizes weigh on the node's
     * link as much as the data (all off-node members at once). 4: phase-2
     * data, 2K posts, the direct exchange's link time. Posts and transfer
     * overlap partly: the longer of the two plus a share of the shorter,
     * fitted to grid's steps in simulation (64 per node, uniform 8 B, a
     * 200 Gb/s node link, beta 4e-11; steps 3 and 4, copies apart: 13,
     * 22 and 38 us, and 8, 14 and 26 us at 256, 512 and 1024 ranks). The
     * whole call: 47.8, 75.5, 123.8 us modelled against 44.7, 74.1, 125.6
     * simulated. At 16 per node it is pessimistic (1024 ranks, uniform
     * 16 B: 137.3 modelled, 121.8 simulated), where grid is not the best. */
    double post3 = (2.0 * q + 2.0 * K) * o;
    double link3 = fmax((L * vol * row_off + L * col_off * q * sz) * m->beta, vol * m->beta_intra);
    double step3 = a + fmax(post3, link3) + 0.55 * fmin(post3, link3);
    double post4 = 2.0 * K * o;
    double step4 = a + fmax(post4, direct_bw) + 0.6 * fmin(post4, direct_bw);
    /* copies: the phase-1 packing, the phase-2 derived-type send (MPI
     * packs it; charged in simulation, as for every other algorithm) and
     * the unpacking: every block three times */
    return step1 + agree + step3 + step4 + copies(m, 3.0 * vol, 3.0 * P);
}

/* One level of bruck_2level: a radix-r Bruck over n ranks at latency a,
 * holding `held` bytes in `blocks` blocks, a byte moved costing `beta`
 * (its link's share): per round two latencies and the partners' posts,
 * the moving share packed, sent while the kept share is copied. */
static double bruck_level(const xchg_model_params *m, double n, double r, double a,
                          double held, double beta, double blocks)
{
    double t = 0.0;
    for (double w = 1.0; w < n; w *= r) {
        double nv = fmin(r - 1.0, ceil(n / w) - 1.0);
        double share = nv / (nv + 1.0);
        t += 2.0 * (a + m->phase_post * nv * m->overhead) +
             copies(m, share * held, share * blocks) +
             fmax(share * held * beta, copies(m, (1.0 - share) * held, (1.0 - share) * blocks));
    }
    return t;
}

/* bruck_2level's time (bruck_2level.c) but for its intra-node Bruck;
 * *intra that Bruck's, *window a node synchronisation in its place
 * (bruck_2level_shm's), *held the bytes a rank holds after phase 1.
 * INFINITY where it is not this algorithm's case. */
static double bruck_2level_parts(const xchg_model_params *m, const xchg_pattern_stats *s,
                                 double *intra, double *window, double *held_out)
{
    model_terms k;
    terms_of(m, s, &k);
    const double P = k.P, node = k.node, mean = k.mean;
    /* L ranks per node, N nodes (bruck_2level.c): the inter-node Bruck
     * over the N players of each place, every round off the node (the
     * node's L ranks share its link), then the intra-node Bruck over the
     * L members through shared memory; a varint size per block rides
     * with the data (a byte for blocks under 128 B). Copies: the packing,
     * the intra-node packing from the kept inter-node stores, the
     * unpacking. A single node, or one rank per node, is bruck_radix:
     * not modelled. Checked at P=64 (4 nodes of 16, random 16 B to
     * 256 B): within 0.96-1.06x of the simulated time. */
    const double L = node, N = ceil(P / node);
    *intra = *window = *held_out = 0.0;
    if (L <= 1.0 || N <= 1.0)
        return INFINITY;
    const double re = (double)xchg_bruck_radix_of(m->radix_inter_set, (int)N);
    const double ri = (double)xchg_bruck_radix_of(m->radix_intra_set, (int)L);
    const double snd = (double)s->max_send_bytes, rcv = (double)s->max_recv_bytes;
    const double blocks = fmax(1.0, P * nonempty_share(s));
    const double held = fmax(mean, fmax(snd, rcv)) + blocks;
    const double inter = bruck_level(m, N, re, m->alpha, held, L * m->beta, N);
    *intra = bruck_level(m, L, ri, m->alpha_intra, held, m->beta_intra, L);
    *window = xchg_model_node_sync(m, L);
    *held_out = held;
    return copies(m, fmax(mean, snd), blocks) + inter + copies(m, held, blocks) +
           copies(m, fmax(mean, rcv), blocks);
}

double xchg_model_bruck_2level(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    double intra, window, held;
    return bruck_2level_parts(m, s, &intra, &window, &held) + intra;
}

/* bruck_2level_shm: bruck_2level with its intra-node Bruck replaced by
 * one node synchronisation (priced as node_pairs_shm's, a dissemination
 * barrier); the copies into the window and out of it are bruck_2level's
 * packing and unpacking. Where a rank's parts would not fit its half of
 * the window (XCHG_SHM_BYTES) its node runs the intra-node Bruck after
 * the synchronisation: not chosen there. Checked at 256 and 1,024 ranks,
 * 16 and 64 per node, random 16 B (docs/algorithms.md). */
double xchg_model_bruck_2level_shm(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    double intra, window, held;
    const double rest = bruck_2level_parts(m, s, &intra, &window, &held);
    if (!isfinite(rest) || held > m->shm_bytes)
        return INFINITY;
    return rest + window;
}

/* shm, on a communicator whose ranks all share one node (elsewhere it
 * runs linear: never chosen there). Each rank packs its blocks once into
 * the node-shared window, waits for every peer's flag and unpacks its
 * incoming blocks: its bytes go through memory twice, as MPI's on-node
 * transfer sends them (so they cost what linear's do, beta_intra: the
 * copy constant is the simulated platform's cold memcpy, where shm never
 * runs), a copy call per block, and per peer a flag read from a line
 * another core wrote (an overhead), empty peer or not, against linear's
 * overhead per posted send and receive. So it wins where the busiest rank
 * posts more than it has peers (dense blocks, any size) and not on sparse
 * ones, as measured on one real node (docs/algorithms.md, "shm"). Its
 * window holds 2 x P times the busiest rank's sends: never where that
 * passes XCHG_MAX_TEMP_BYTES. */
double xchg_model_shm(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    const double P = (double)s->P;
    if (s->P < 2 || s->node_size < s->P)
        return INFINITY;
    if (m->temp_limit > 0 && 2.0 * P * (double)s->max_send_bytes > m->temp_limit)
        return INFINITY;
    model_terms k;
    terms_of(m, s, &k);
    /* each peer's block is copied as soon as its flag is seen: the flag
     * reads overlap the copies */
    return m->alpha_intra + fmax((P - 1.0) * k.o, k.direct_bw) + copies(m, 0.0, k.posts);
}

double xchg_model_node_sync(const xchg_model_params *m, double L)
{
    if (!(L > 1.0))
        return 0.0;
    /* the real code's flag latencies (node/shm_window.c), as the simulated
     * build charges them */
    (void)m;
    return xchg_node_sync_flags((int)L) * XCHG_CAL_FLAG_NS * 1e-9;
}

double xchg_model_agree_time(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    /* recursive doubling: a round at distance d, one send and one receive
     * (alpha_at: partly off the node below the node size); P not a power
     * of two adds a fold-in and a fold-out between neighbours */
    int p2 = 1;
    while (p2 * 2 <= s->P)
        p2 *= 2;
    double t = p2 < s->P ? 2.0 * (alpha_at(m, s, 1.0) + 2.0 * m->overhead) : 0.0;
    for (int d = 1; d < p2; d *= 2)
        t += alpha_at(m, s, (double)d) + 2.0 * m->overhead;
    return t;
}

/* Every constant of the model, in one place. A refit to another platform
 * changes only these (or XCHG_TUNING_FILE's alpha, beta, copy, overhead).
 *
 * Fitted to the simulated platform (docs/simulation.md): the hpc preset
 * of sim/mkplatform.py with 16 ranks per node and sim/smpi.cfg, read off
 * the platform's definition, then checked against every candidate's
 * simulated time at P=64 (4 nodes), patterns uniform, random, sparse,
 * zipf, hot, transpose x 16 B, 1 KiB, 64 KiB, with the model's times that
 * XCHG_VERBOSE=3 prints for the same run (docs/algorithms.md, "How auto
 * chooses: the cost model"). */
void xchg_model_defaults(xchg_model_params *m)
{
    /* Wire latency between nodes: two 0.4 us node links and the 0.1 us
     * switch of the hpc preset (the measured 1.30 us ping-pong half round
     * trip, sim/pingpong.c, minus a send and a receive overhead). */
    m->alpha = 0.9e-6;
    /* Inside a node: the 0.15 us loopback (0.55 us measured, minus the
     * two overheads). */
    m->alpha_intra = 0.15e-6;
    /* Per posted send or receive: smpi/os and smpi/or of sim/smpi.cfg
     * (2e-7 s, calibrated by sim/calibrate/run). Checked: linear at random
     * 16 B, 126 posts, simulates 25.2 us = 126 x 0.2 us. */
    m->overhead = 0.2e-6;
    /* Per byte on a node's link: the hpc preset's 100 Gb/s, shared by the
     * node's ranks (split duplex). */
    m->beta = 1.0 / 12.5e9;
    /* Per byte between ranks of a node: the 160 Gb/s loopback, a bound
     * per flow (SimGrid's loopback is not shared). */
    m->beta_intra = 1.0 / 20.0e9;
    /* Local copies: what the SMPI build charges (src/core/simcost.c,
     * core/calibrated.h: 10 ns per copy, one core's 5 GB/s), at the share
     * of the node's memory bandwidth a rank gets when all of a node's
     * ranks copy at once, as they do in an exchange (3.125 GB/s a rank,
     * sim/mkplatform.py), where that is less. */
    m->copy = 1.0 / (1e9 * fmin(XCHG_CAL_COPY_CORE_GBPS, XCHG_CAL_NODE_GBPS_PER_RANK));
    m->copy_call = XCHG_CAL_COPY_CALL_NS * 1e-9;
    /* CPU work the algorithms differ in (calibrated.h): node_pairs_shm's
     * block-size check sums and its loops over peers. */
    m->size_sum_step = XCHG_CAL_SIZE_SUM_NS * 1e-9;
    m->peer_step = XCHG_CAL_PEER_NS * 1e-9;
    /* Overheads per partner of a Bruck phase (a send and a receive: 2 if
     * nothing overlapped): fitted to bruck_radix at radix 2, 4, 8 and 16
     * (XCHG_BRUCK_RADIX), random and sparse 16 B, P=64; 1.4 leaves the
     * model within 0.91-1.12x of all eight. */
    m->phase_post = 1.4;
    /* Extra per pairwise step: none measured (random 16 B: 63 steps in
     * 72.0 us, the model's latencies and overheads alone give 70.8). */
    m->sync = 0.0;
    /* Incast penalty of linear (messages beyond the throttle arriving at
     * one hot rank): none measured in simulation (hot 16 B and 1 KiB:
     * linear 25.4 and 219.1 us, scattered 25.4 and 219.5), whose network
     * has no congestion loss; a real network may, so a tuning table can
     * still prefer scattered there. */
    m->incast = 0.0;
    m->vendor_overhead_factor = 1.0;
    m->throttle = 32.0;
    m->max_inflight = 2048.0;
    m->radix = 4.0;
    m->leaders = 0.0; /* XCHG_LEADERS unset: multileader's own rule */
    /* Padded slot bytes below which MPI_Alltoall runs Bruck's log P
     * rounds: MPICH's MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE (256), which SMPI's
     * mpich selector follows. */
    m->alltoall_bruck_bytes = 256.0;
    m->temp_limit = 0.0; /* no bound unless the caller's (select.c) */
    m->shm_bytes = 1048576.0; /* XCHG_SHM_BYTES' default */
    /* Set-up, measured on real MPI (xchg-bench --setup, 4 ranks, MPICH
     * 4.0.2 and Open MPI 4.1.4; docs/setup.md): MPI_Comm_dup 25-35 us,
     * MPI_Comm_split_type 37-120, a 64-byte MPI_Allreduce 16-20, so about
     * 126 us over 2 rounds of log2 P; MPI_Win_allocate_shared of 1 MiB
     * 92-272 us. Real set-up, not the simulator's (which charges less):
     * auto repays what a real machine pays. */
    m->setup_round = 63e-6;
    m->setup_window = 182e-6;
}

double xchg_model_setup_time(const xchg_model_params *m, const xchg_pattern_stats *s, int window)
{
    const double rounds = s->P > 1 ? ceil(log2((double)s->P)) : 1.0;
    return rounds * m->setup_round + xchg_model_agree_time(m, s) +
           (window ? m->setup_window : 0.0);
}
