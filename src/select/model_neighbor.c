/*
 * model_neighbor.c - the neighbour exchange's auto: a tuning table's
 * neighbor rule where every rank reads the same table, else its cost
 * model, and XCHG_VERBOSE's report of the choice (report.c). The model: direct
 * against locality, per rank, from the graph statistics that locality's
 * analysis agreed (src/neighbor/locality.c, census), with the machine
 * constants of the alltoallv model (xchg_model_defaults: alpha, overhead o
 * per posted send or receive, beta per byte of a node's link, copy and
 * copy_call per local copy; a tuning table's alpha, beta, copy and
 * overhead where every rank read the same XCHG_TUNING_FILE, as for
 * alltoallv). Nothing here is fitted to the neighbour study; every term is
 * what the algorithm does:
 *
 *   direct   = max(o max(2 Bt, Bm) + 2 copy Vn, L V beta) + alpha
 *     one send and one receive per neighbour block (Bt, the node's blocks
 *     included; Bm those the busiest rank sends and receives, which sets
 *     the time: spmv8x4 at 256 ranks, 46 out and 32 in against 30 on
 *     average, simulates at 15.6 us = 78 o) and two copies of the Vn
 *     bytes to the rank's own node (an MPI's transport inside a node
 *     copies through shared cells, as locality_shm does through its
 *     window), overlapping the node's off-node bytes on its link (its L
 *     ranks send V bytes each); alpha_intra for alpha where no block
 *     leaves the node (B = 0);
 *   locality = 3 (copy_call B + copy V) + 2 o (K + F) + 2 (o (Bt - B) + copy Vn)
 *              + L (V + 16 B + 8 K) beta + alpha + alpha_intra
 *     each remote block copied three times (packed, forwarded, unpacked),
 *     K aggregates and F forward messages sent and as many received, the
 *     node's own blocks direct (as direct's, two copies of their bytes),
 *     and the link's bytes (with the aggregate headers: 16 B per block, 8
 *     per aggregate) on the critical path: the forwards wait for every
 *     aggregate, so nothing overlaps them;
 *   locality_shm = 3 (copy_call B + copy V) + 2 o K
 *                  + 2 (copy_call (Bt - B) + copy Vn) + sync(L)
 *                  + L (V + 16 B + 8 K) beta + alpha (where K > 0)
 *     locality's aggregates and copies, with the node's own blocks (Vn
 *     bytes) and the forwards written into and read out of the node
 *     window instead of sent: two copies each and one node
 *     synchronisation, priced as a dissemination barrier of the node
 *     (sync(L) = ceil(log2 L) (alpha_intra + 2 o), as node_pairs_shm's).
 *     Only where its window is made (the caller knows), and for blocking
 *     calls only (below, LOC_POLL_PER_MESSAGE).
 *
 * Checked on the simulated neighbour study (docs/sim/results.md,
 * "Neighbour exchange": stencil7, stencil27, spmv8x4 at 256 and 1,024
 * ranks, 16 per node on hpc and 64 on hpc200): auto within 1.04 of the
 * fastest of the three on 18 of 19 cells; on stencil27 64 B at 1,024
 * ranks, 64 per node, it runs direct at 1.15x locality_shm (the default
 * link and barrier constants, not hpc200's). Under the previous model's
 * cells, blocks4 at 64 per node went to direct rightly: locality's 64
 * forwards per rank and 0.98 MB per node on the link outweigh its 3x
 * fewer messages. On this machine's real node (docs/neighbor.md) it
 * takes locality_shm on every stencil and from 4 ranks on spmv.
 */
#include "select_internal.h"

#include <math.h>
#include <stdio.h>

#include "neighbor/neighbor_internal.h"

#define LOC_HEADER_PER_BLOCK 16.0 /* (destination, bytes), int64 each */
#define LOC_HEADER_PER_AGGREGATE 8.0

/* Locality as an ineighbor or persistent request runs as a coroutine that
 * polls each probe: about one more probe and test per message it receives
 * by probe (K aggregates and F forwards), 0.75 o. Measured: locality's
 * persistent form against its blocking one at 256 ranks, 0.10-0.36 us per
 * (K + F), median 0.15 over 13 cells; at 1024 ranks stencil27 64 B (K 5,
 * F 6) 1.58 us, where it turns the persistent choice to direct (10.41 us
 * against locality's 11.80) while the blocking one stays locality (10.22
 * against 10.41). direct's persistent form is MPI_Startall of prepared
 * requests: no such cost. */
#define LOC_POLL_PER_MESSAGE 0.75

void xchg_model_neighbor(const xchg_nbr_stats *s, int polled, double *direct, double *locality,
                         double *shm)
{
    xchg_model_params m;
    xchg_model_defaults(&m);
    xchg_table_constants(s->table_key, &m); /* XCHG_TUNING_FILE's, if agreed */
    const double B = s->remote_blocks, Bt = s->blocks > B ? s->blocks : B;
    const double K = s->remote_nodes, F = s->forwards, V = s->remote_bytes;
    const double L = s->node_ranks > 1 ? s->node_ranks : 1;
    /* MPI moves a message inside a node with two copies too (into its
     * shared cells, out of them), on the ranks' own cores */
    const double posts = m.overhead * fmax(2 * Bt, s->blocks_max) + 2 * m.copy * s->local_bytes;
    const double link = L * V * m.beta;
    /* a latency off the node where any block leaves it, else the node's */
    *direct = (posts > link ? posts : link) + (B > 0 ? m.alpha : m.alpha_intra);
    *locality = 3 * (m.copy_call * B + m.copy * V) + 2 * m.overhead * (K + F) +
                2 * m.overhead * (Bt - B) + 2 * m.copy * s->local_bytes +
                L * (V + LOC_HEADER_PER_BLOCK * B + LOC_HEADER_PER_AGGREGATE * K) * m.beta +
                m.alpha + m.alpha_intra;
    const double sync = xchg_model_node_sync(&m, L);
    *shm = 3 * (m.copy_call * B + m.copy * V) + 2 * m.overhead * K +
           2 * (m.copy_call * (Bt - B) + m.copy * s->local_bytes) + sync +
           (K > 0 ? L * (V + LOC_HEADER_PER_BLOCK * B + LOC_HEADER_PER_AGGREGATE * K) * m.beta +
                        m.alpha
                  : 0);
    if (polled) {
        *locality += LOC_POLL_PER_MESSAGE * m.overhead * (K + F);
        /* not a polled choice: under SMPI it runs locality there, and on a
         * real node its coroutine's wait for the node's flags measured
         * 3-4x its blocking form (stencil27 64 B, 4 ranks on this
         * machine's 2 cores: 92 us against 22, direct's persistent 30) */
        *shm = INFINITY;
    }
}

/* The cheapest on s (locality_shm only where shm: its window is made);
 * t the three modelled times. */
static xchg_neighbor_algo cheapest(const xchg_nbr_stats *s, int polled, int shm, double *t)
{
    xchg_model_neighbor(s, polled, &t[0], &t[1], &t[2]);
    if (shm && t[2] < t[0] && t[2] < t[1])
        return XCHG_NEIGHBOR_LOCALITY_SHM;
    return t[1] < t[0] ? XCHG_NEIGHBOR_LOCALITY : XCHG_NEIGHBOR_DIRECT;
}

int xchg_model_neighbor_shm_wins(const xchg_nbr_stats *s)
{
    double t[3];
    return cheapest(s, 0, 1, t) == XCHG_NEIGHBOR_LOCALITY_SHM;
}

xchg_neighbor_algo xchg_select_neighbor_rule(const xchg_comm_state *cs, const xchg_nbr_stats *s,
                                             int *line)
{
    /* the table's rules name registered algorithms only (table.c) */
    return xchg_table_use(cs->rank, s->table_key, s->table_differ)
               ? xchg_table_neighbor(cs->size, line)
               : XCHG_NEIGHBOR_INVALID;
}

void xchg_select_neighbor_ruled(const xchg_comm_state *cs, unsigned long long *printed,
                                xchg_neighbor_algo algo, int line)
{
    if (!xchg_report_due(printed, cs, (int)algo, 1))
        return;
    char path[512];
    xchg_table_path(path, sizeof path);
    xchg_report_choice("neighbor", xchg_neighbor_registry_find(algo)->name, cs->size,
                       " (line %d of the tuning table %s; for every kind of call)", line, path);
}

void xchg_select_neighbor(const xchg_comm_state *cs, const xchg_nbr_stats *s, int shm,
                          unsigned long long *printed, xchg_neighbor_algo *algo,
                          xchg_neighbor_algo *polled)
{
    double t[3], tp[3];
    *algo = cheapest(s, 0, shm, t);
    *polled = cheapest(s, 1, shm, tp);
    if (!xchg_report_due(printed, cs, (int)*algo, 1))
        return;
    /* locality_shm's own figure; "no node window" where it would have been
     * the cheapest but its window is not made */
    char shm_t[96];
    snprintf(shm_t, sizeof shm_t, ", locality_shm %.2f us", t[2] * 1e6);
    xchg_report_choice("neighbor", xchg_neighbor_registry_find(*algo)->name, cs->size,
                       " (per rank: %.1f blocks to %.1f other nodes of %.1f blocks, %.0f "
                       "bytes, %.1f ranks per node, locality would forward %.1f; busiest "
                       "partner: %.0f forwards, %.0f bytes; modelled direct %.2f us, locality "
                       "%.2f us%s%s; for ineighbor and persistent requests %s: %.2f and %.2f us%s)",
                       s->remote_blocks, s->remote_nodes, s->blocks, s->remote_bytes,
                       s->node_ranks, s->forwards, s->forwards_max, s->handed_bytes_max,
                       t[0] * 1e6, t[1] * 1e6, shm_t,
                       !shm && t[2] < t[0] && t[2] < t[1] ? " (no node window)" : "",
                       xchg_neighbor_registry_find(*polled)->name, tp[0] * 1e6, tp[1] * 1e6,
                       s->table_key != 0 ? "; the tuning table's constants" : "");
}
