/*
 * model.c - a cost model of each alltoallv algorithm.
 *
 * A LogGP-style model: a dependent exchange costs alpha (alpha_intra when
 * every partner of that exchange shares the node), every posted send or
 * receive an overhead o, every byte beta on the node's link (shared by the
 * node's ranks: what counts is the node's real off-node traffic) or
 * beta_intra inside the node, and every locally copied byte `copy`.
 * Each algorithm's time is estimated from statistics every rank shares
 * after the agreement (select.c, agree.c): largest block, busiest rank's
 * volumes and partner counts, off-node volumes, total traffic), so every
 * rank computes the same estimates and picks the same algorithm (design
 * rule 2). xchg-tune measures alpha, beta, copy and overhead for a machine
 * and XCHG_TUNING_FILE loads them (table.c).
 *
 * Direct algorithms (linear, scattered) post everything at once: the
 * posting overhead and the transfer overlap, so their time is
 * a + max(2 nnz o, bytes b), not the sum.
 *
 * The model only ranks algorithms; it does not predict absolute times
 * well. Its job is to never pick something much slower than the best. A
 * refit changes only xchg_model_defaults().
 */
#include "select_internal.h"

#include <math.h>

static double log2ceil(int P)
{
    int k = 0;
    while ((1 << k) < P)
        k++;
    return (double)k;
}

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

double xchg_model_time(xchg_algo algo, const xchg_model_params *m, const xchg_pattern_stats *s)
{
    const double P = (double)s->P;
    const double o = m->overhead, cp = m->copy;
    const double lg = log2ceil(s->P);
    const double vol = (double)s->max_rank_bytes;       /* critical rank's volume */
    const double nnz = (double)s->max_nnz;              /* its nonzero partners */
    const double blk = (double)s->max_block_bytes;      /* global largest block */
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    const int multinode = P > node;
    const double a = multinode ? m->alpha : m->alpha_intra; /* a round reaching every rank */
    const double mean = P > 0 ? (double)s->sum_bytes / P : 0.0; /* a rank's mean volume */
    /* Direct algorithms: the busiest node's link, or the busiest rank's own
     * traffic through shared memory, whichever takes longer. */
    double off = node_off_bytes(s, (double)s->max_off_send);
    double off_in = node_off_bytes(s, (double)s->max_off_recv);
    if (off_in > off)
        off = off_in;
    const double direct_bw = fmax(off * m->beta, vol * m->beta_intra);
    /* Spread-out rounds of the Bruck family: every rank of a node moves
     * about the mean volume; off-node, the node's link carries all of it. */
    const double round = a + 2.0 * o;                   /* one dependent exchange */
    const double allreduce = lg * round;
    /* many senders to one hot receiver at once (it receives over twice
     * the mean): linear floods it, scattered (XCHG_THROTTLE in flight)
     * does not */
    const double incast = (double)s->max_recv_nnz > m->throttle &&
                                  (double)s->max_recv_bytes > 2.0 * mean
                              ? ((double)s->max_recv_nnz - m->throttle) * m->incast
                              : 0.0;

    switch (algo) {
    case XCHG_ALGO_VENDOR:
        /* a loop over all P peers, empty ones included */
        return a + fmax(2.0 * P * o * m->vendor_overhead_factor, direct_bw) + incast;
    case XCHG_ALGO_LINEAR:
        /* all nonzero messages in flight at once: one latency, then the
         * posting overhead overlapped with the transfer */
        return a + fmax(2.0 * nnz * o, direct_bw) + incast;
    case XCHG_ALGO_SCATTERED:
        /* linear with a wait per window of XCHG_THROTTLE requests */
        return a + fmax(2.0 * nnz * o, direct_bw) +
               (2.0 * nnz > m->throttle ? (2.0 * nnz / m->throttle) * a * 0.5 : 0.0);
    case XCHG_ALGO_PAIRWISE:
        /* P-1 dependent steps; empty ones skipped */
        return nnz * (round + m->sync) + direct_bw;
    case XCHG_ALGO_PADDED_ALLTOALL:
        /* allreduce, then an alltoall of P padded blocks: log P steps of half
         * the data for small blocks, one spread-out round for large */
        if (blk * P <= m->alltoall_bruck_bytes)
            return allreduce + lg * round + lg * (P / 2.0) * blk * node * m->beta +
                   2.0 * P * blk * cp;
        return allreduce + a + fmax(2.0 * P * o, P * blk * node * m->beta) + 2.0 * P * blk * cp;
    case XCHG_ALGO_BRUCK_PADDED:
        return allreduce + lg * round + lg * (P / 2.0) * blk * node * m->beta +
               (lg + 2.0) * P * blk * cp;
    case XCHG_ALGO_BRUCK_TWOPHASE: {
        /* log P steps of (sizes, data) to rank + 2^k, each moving about half
         * the blocks; steps with 2^k < node stay on the node */
        double t = 0.0;
        for (int k = 0; (1 << k) < s->P; k++) {
            int intra = (double)(1 << k) < node;
            double ak = intra ? m->alpha_intra : m->alpha;
            double bk = intra ? m->beta_intra : node * m->beta;
            t += 2.0 * (ak + 2.0 * o) + (mean / 2.0) * bk;
        }
        return t + lg * fmax(vol, mean) * cp;
    }
    case XCHG_ALGO_BRUCK_RADIX: {
        /* radix r: log_r P rounds of (sizes, data) with r-1 partners each at
         * distances d r^j; a round whose partners all share the node (r^(j+1)
         * <= node, ranks placed by node) costs intra-node latency */
        double r = m->radix > 1 ? m->radix : 2.0;
        double rounds = ceil(log((double)s->P) / log(r) - 1e-9);
        if (rounds < 1)
            rounds = 1;
        double t = 0.0, span = r;
        for (int j = 0; j < (int)rounds; j++, span *= r) {
            int intra = span <= node;
            double ak = intra ? m->alpha_intra : m->alpha;
            double bk = intra ? m->beta_intra : node * m->beta;
            t += 2.0 * (ak + 2.0 * (r - 1.0) * o) + ((r - 1.0) / r) * mean * bk;
        }
        return t + rounds * fmax(vol, mean) * cp;
    }
    case XCHG_ALGO_GRID: {
        /* an allreduce (agreed refusal), then two phases of about sqrt(P)
         * partners each, twice the volume */
        double q = ceil(sqrt(P));
        return allreduce + 2.0 * (a + fmax(2.0 * q * o, direct_bw)) + 2.0 * vol * cp;
    }
    default:
        return INFINITY; /* not modelled: never chosen automatically */
    }
}

double xchg_model_agree_time(const xchg_model_params *m, const xchg_pattern_stats *s)
{
    /* recursive doubling: a round at distance d stays on the node while d
     * is below the node size (ranks placed by node); P not a power of two
     * adds a fold-in and a fold-out between neighbours */
    const double node = s->node_size > 1 ? (double)s->node_size : 1.0;
    int p2 = 1;
    while (p2 * 2 <= s->P)
        p2 *= 2;
    double t = p2 < s->P ? 2.0 * (m->alpha_intra + 2.0 * m->overhead) : 0.0;
    for (int d = 1; d < p2; d *= 2)
        t += ((double)d < node ? m->alpha_intra : m->alpha) + 2.0 * m->overhead;
    return t;
}

/* Every constant of the model, in one place. A refit to another platform
 * (or to the faithful simulation of issue 10) changes only these. */
void xchg_model_defaults(xchg_model_params *m)
{
    /* Inter-node latency of one dependent exchange: the hpc preset's
     * measured ping-pong half round trip (link 1 us + backbone 0.1 us +
     * link 1 us, plus SMPI's overheads; 2.5 us measured, issue 10) minus
     * the two overheads counted separately; the old fit to the P=64
     * simulation gave 2.2 us. */
    m->alpha = 2.2e-6;
    /* Intra-node latency: the preset's loopback latency (0.3 us,
     * sim/mkplatform.py), not fitted. */
    m->alpha_intra = 0.3e-6;
    /* Per posted send or receive: sim/smpi.cfg's smpi/os, ois and or
     * (2e-7 s), calibrated by sim/calibrate/run on this machine. */
    m->overhead = 0.2e-6;
    /* Per byte on a node's link: the hpc preset's 100 Gb/s. */
    m->beta = 1.0 / 12.5e9;
    /* Per byte between ranks of a node: the preset's 160 Gb/s loopback. */
    m->beta_intra = 1.0 / 20.0e9;
    /* Per byte of local pack/copy: a guess (20 GB/s memcpy); issue 10
     * charges copies in the simulation, refit then. */
    m->copy = 1.0 / 20.0e9;
    /* Extra per pairwise step (its Sendrecv waits for the partner): a
     * guess, kept from the first model. */
    m->sync = 0.5e-6;
    /* Per message beyond the throttle arriving at one rank at once (the
     * credit scattered gets on incast patterns): a guess of one
     * overhead's worth, not fitted (no hot-pattern measurement yet). */
    m->incast = 0.2e-6;
    m->vendor_overhead_factor = 1.0;
    m->throttle = 32.0;
    m->radix = 4.0;
    /* Total padded bytes below which the vendor's MPI_Alltoall is assumed
     * to use a log P algorithm: not fitted, kept from the first model. */
    m->alltoall_bruck_bytes = 256.0 * 1024.0;
}
