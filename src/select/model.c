/*
 * model.c - a cost model of each alltoallv algorithm.
 *
 * Hockney's alpha-beta model: a message of n bytes costs alpha + n*beta.
 * Each algorithm's time is estimated from statistics every rank shares
 * after one small allreduce (largest block, largest per-rank volume, most
 * nonzero partners), so every rank computes the same estimates and picks
 * the same algorithm (design rule 2). The constants are defaults for a
 * typical cluster; xchg-tune measures them for a machine and
 * XCHG_TUNING_FILE loads them (table.c).
 *
 * The model only ranks algorithms; it does not predict absolute times
 * well. Its job is to never pick something much slower than the best.
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

double xchg_model_time(xchg_algo algo, const xchg_model_params *m, const xchg_pattern_stats *s)
{
    const double P = (double)s->P;
    const double a = m->alpha, b = m->beta;
    const double lg = log2ceil(s->P);
    const double vol = (double)s->max_rank_bytes;       /* critical rank's volume */
    const double nnz = (double)s->max_nnz;              /* its nonzero partners */
    const double blk = (double)s->max_block_bytes;      /* global largest block */
    const double avg = P > 1 ? vol / P : vol;           /* mean block of that rank */
    const double allreduce = lg * a;

    switch (algo) {
    case XCHG_ALGO_VENDOR:
        /* a linear or pairwise loop over all P peers, empty ones included */
        return P * a * m->vendor_alpha_factor + vol * b;
    case XCHG_ALGO_LINEAR:
        /* nonzero messages posted at once; injection bound by alpha per
         * message and by the volume */
        return nnz * a + vol * b;
    case XCHG_ALGO_SCATTERED:
        return nnz * a + vol * b + (nnz > m->throttle ? (nnz / m->throttle) * a : 0.0);
    case XCHG_ALGO_PAIRWISE:
        /* P-1 synchronised steps; nonzero ones only */
        return nnz * (a + m->sync) + vol * b;
    case XCHG_ALGO_PADDED_ALLTOALL:
        /* allreduce, then an alltoall of P padded blocks: log P steps of
         * half the data for small blocks, P steps of all of it for large */
        if (blk * P <= m->alltoall_bruck_bytes)
            return allreduce + lg * a + lg * (P / 2.0) * blk * b;
        return allreduce + P * a + P * blk * b;
    case XCHG_ALGO_BRUCK_PADDED:
        return allreduce + lg * a + lg * (P / 2.0) * blk * b + P * blk * m->copy;
    case XCHG_ALGO_BRUCK_TWOPHASE:
        /* log P steps of (sizes, data); each moves about half the blocks,
         * at the mean block size of the rank, not the global maximum */
        return lg * 2.0 * a + lg * (P / 2.0) * avg * b + lg * vol * m->copy;
    case XCHG_ALGO_BRUCK_RADIX: {
        /* radix r: log_r P rounds of up to r-1 messages */
        double r = m->radix > 1 ? m->radix : 2.0;
        double rounds = ceil(log((double)s->P) / log(r));
        if (rounds < 1)
            rounds = 1;
        return rounds * (r - 1.0) * 2.0 * a * m->radix_overlap +
               rounds * ((r - 1.0) / r) * vol * b + rounds * vol * m->copy;
    }
    case XCHG_ALGO_GRID: {
        /* two phases of about sqrt(P) messages each, twice the volume */
        double q = ceil(sqrt(P));
        return 2.0 * q * a + 2.0 * vol * b + 2.0 * vol * m->copy;
    }
    case XCHG_ALGO_HIERARCHICAL: {
        /* gather at the leader, leaders exchange, scatter: few inter-node
         * messages, the node's whole volume through one rank */
        double nodes = s->node_size > 0 ? ceil(P / s->node_size) : P;
        double nv = vol * (s->node_size > 0 ? s->node_size : 1);
        return 2.0 * lg * a + nodes * a + nv * b + 2.0 * nv * m->copy;
    }
    default:
        return INFINITY; /* not modelled: never chosen automatically */
    }
}

void xchg_model_defaults(xchg_model_params *m)
{
    m->alpha = 2.0e-6;                 /* s per message: MPI over a fabric */
    m->beta = 1.0 / 10.0e9;            /* s per byte: ~10 GB/s per rank */
    m->copy = 1.0 / 20.0e9;            /* s per byte of local pack/copy */
    m->sync = 1.0e-6;                  /* extra per pairwise step */
    m->vendor_alpha_factor = 0.5;      /* vendor loops skip little cheaply */
    m->throttle = 32.0;
    m->radix = 4.0;
    m->radix_overlap = 0.5;            /* r-1 messages of a round overlap */
    m->alltoall_bruck_bytes = 256.0 * 1024.0;
}
