/*
 * sparse_rules.c - sparse auto: the rules it chooses by, the selection
 * layer's data for the sparse family (select.h: xchg_select_sparse).
 */
#include "select_internal.h"
#include "sparse/sparse_internal.h"

#include <stdio.h>

enum { ONE_NODE = -1 };

/* The automatic choice, by measurement: rules over the communicator size
 * and, from the second call on, the mean number of remote messages per
 * rank that the previous call's census carried (pex and rsx add it to
 * their collective; see census_msgs in sparse_internal.h). The census
 * result is the same on every rank, so the choice is too, with no
 * collective before the exchange; a pattern that changes is followed one
 * call later, and a stale figure costs speed, never correctness. The first
 * matching rule wins. Each rule is the winner measured in simulation
 * there (16 doubles per message, 16 ranks per node; the tables are in
 * docs/sparse.md, "Measured in simulation"):
 *   - pex_loc_shm where its node window is made (MPI makes one on every
 *     node; asked only when the rest matches, made then, agreed): its
 *     steps inside a node go through shared memory, with no census
 *     collective. Measured (1% and 10% density): every rank on one node
 *     (real runs at 2, 4 and 8 ranks, also 30% and 100%: 0.59-0.75x pex's
 *     time on MPICH, 0.78-0.98x on Open MPI; simulated, 64 ranks 0.36-0.49x
 *     pex); nodes of 16 from 32 to 1024 ranks (0.32-0.86x pex, 0.44-0.72x
 *     pex_loc at 1024); nodes of 64 at 1024 ranks (0.37-0.69x pex_loc)
 *     and at 256 ranks with 3 messages per rank (0.75x pex). With 26 per
 *     rank on 4 nodes of 64 it takes 1.68x pex's time: 3 relays per node
 *     carry all its traffic, so from 64 per node the rule asks for 1024
 *     ranks (any census, the first call's unknown one too: it won at 1%
 *     and 10%, where pex's first call is the slowest) or at most 3
 *     messages per rank;
 *   - rsx from 32 to 127 ranks at 1-2 messages per rank: 0.90-0.97x pex's
 *     time (from 3 messages, and at 16 and 256 ranks, pex wins);
 *   - where no node window is made, pex_loc from 256 ranks at up to 3
 *     messages per rank (0.78x pex at 256 ranks and 3; a tie at 26), and
 *     from 1024 ranks at any census (0.36-0.71x pex at 11 and 103
 *     messages, 16 and 64 ranks per node). The census clips each rank at
 *     XCHG_SPARSE_DEGREE_CLIP = 63, so 103 and more read as 63; the rule
 *     does not see message sizes (measured with 128-byte messages).
 *     pex_loc needs nodes of many ranks (on nodes of one rank its step 2
 *     is P-1 messages per rank), so its rule asks the node layout:
 *     measured at 16 and 64 ranks per node, so from 16;
 *   - pex everywhere else (measured from 1 to 448 ranks).
 * nbx, nbx_loc and rma never won a measured case (nbx 1.2 to 2.3x pex from
 * 32 to 448 ranks, 0.72-0.87x at 1024 ranks and 1%, where pex_loc is
 * 0.36-0.71x; nbx_loc 1.02 to 1.6x pex). Nodes of 2 to 15 ranks were not
 * measured for the window (pex or rsx stay), nor above 1024 ranks: the
 * last rule keeps the largest measured winner. A new measurement changes
 * only this table. */
static const struct sparse_rule {
    int pmin, pmax;     /* communicator sizes it applies to */
    int max_mean;       /* -1: always; else only when the last census saw at
                           most this many remote messages per rank on average */
    xchg_sparse_algo algo;
    int min_rpn;        /* 0: any nodes; ONE_NODE: every rank on one node; else
                           only where the node layout has at least this many
                           ranks per node on average (asked only when the rest
                           matches: the layout is made on first use,
                           collectively, the same on every rank) */
    int max_rpn;        /* 0: no bound; else at most this many ranks per node */
    int window;         /* only where pex_loc_shm's node window is made */
} sparse_rules[] = {
    {2, 1 << 30, -1, XCHG_SPARSE_PEX_LOC_SHM, ONE_NODE, 0, 1}, /* 0.36-0.98 of pex */
    {32, 1 << 30, -1, XCHG_SPARSE_PEX_LOC_SHM, 16, 63, 1},    /* 0.32-0.86 of pex */
    {1024, 1 << 30, -1, XCHG_SPARSE_PEX_LOC_SHM, 16, 0, 1}, /* 0.37-0.69 of pex_loc */
    {32, 1 << 30, 3, XCHG_SPARSE_PEX_LOC_SHM, 16, 0, 1},      /* 0.75 of pex */
    {32, 127, 2, XCHG_SPARSE_RSX, 0, 0, 0},    /* measured 0.90 to 0.97 of pex */
    {1024, 1 << 30, XCHG_SPARSE_DEGREE_CLIP, XCHG_SPARSE_PEX_LOC, 16, 0, 0}, /* 0.36-0.71 */
    {256, 1 << 30, 3, XCHG_SPARSE_PEX_LOC, 16, 0, 0},   /* measured 0.78 of pex */
    {1, 1 << 30, -1, XCHG_SPARSE_PEX, 0, 0, 0}, /* measured 1 to 448 ranks */
};

/* The census: ss's last census_msgs (-1 unknown). *why gets the rule,
 * for XCHG_VERBOSE. A tuning table's sparse rule comes first, where every
 * rank read the same table when the communicator's state was made (its
 * settings agreed the checksum: no collective here). */
xchg_sparse_algo xchg_select_sparse(xchg_comm_state *cs, xchg_sparse_state *ss, char *why,
                                    size_t whylen)
{
    const int P = cs->size;
    const long long census = ss->census_msgs;
    const xchg_settings *set = &cs->settings;
    int line = 0, use = 0;
    /* Without an agreed table the answer is no at every call: asked once
     * per communicator, for its warnings (a table that cannot be used, or
     * that differs by rank), not at every call. */
    if (set->table_checksum != 0 || !ss->table_asked) {
        use = xchg_table_use(cs->rank, xchg_table_key_of(set->table_checksum), set->table_differ);
        ss->table_asked = 1;
    }
    if (use) {
        xchg_sparse_algo ruled = xchg_table_sparse(P, census, &line);
        if (ruled != XCHG_SPARSE_INVALID) {
            char path[256];
            xchg_table_path(path, sizeof path);
            snprintf(why, whylen, "tuning table rule at line %d of %s", line, path);
            return ruled;
        }
    }
    double rpn = -1; /* ranks per node: asked once, where a rule first needs it */
    for (size_t i = 0; i < sizeof sparse_rules / sizeof sparse_rules[0]; i++) {
        const struct sparse_rule *r = &sparse_rules[i];
        if (P < r->pmin || P > r->pmax || !xchg_sparse_registry_find(r->algo))
            continue;
        if (r->max_mean >= 0 && (census < 0 || census > (long long)r->max_mean * P))
            continue;
        if (rpn < 0 && (r->min_rpn != 0 || r->max_rpn > 0))
            rpn = xchg_sparse_ranks_per_node(cs);
        if (r->min_rpn > 0 && rpn < r->min_rpn)
            continue;
        if (r->max_rpn > 0 && rpn > r->max_rpn)
            continue;
        if (r->min_rpn == ONE_NODE && rpn < P)
            continue;
        if (r->window && !xchg_sparse_node_window(cs))
            continue;
        if (r->min_rpn == ONE_NODE)
            snprintf(why, whylen, "every rank on one node, with a node window");
        else if (r->window && r->max_mean >= 0)
            snprintf(why, whylen, "P >= %d, at most %d messages per rank, >= %d ranks per "
                     "node, with a node window", r->pmin, r->max_mean, r->min_rpn);
        else if (r->window && r->max_rpn > 0)
            snprintf(why, whylen, "P >= %d, %d to %d ranks per node, with a node window",
                     r->pmin, r->min_rpn, r->max_rpn);
        else if (r->window)
            snprintf(why, whylen, "P >= %d, >= %d ranks per node, with a node window",
                     r->pmin, r->min_rpn);
        else if (r->min_rpn > 0 && r->max_mean >= 0)
            snprintf(why, whylen, "P >= %d, at most %d messages per rank, >= %d ranks per node",
                     r->pmin, r->max_mean, r->min_rpn);
        else if (r->min_rpn > 0)
            snprintf(why, whylen, "P >= %d, >= %d ranks per node", r->pmin, r->min_rpn);
        else if (r->max_mean >= 0)
            snprintf(why, whylen, "P in %d..%d, at most %d messages per rank", r->pmin,
                     r->pmax, r->max_mean);
        else if (r->pmin <= 1 && r->pmax >= (1 << 30))
            snprintf(why, whylen, "the default");
        else
            snprintf(why, whylen, "P in %d..%d", r->pmin, r->pmax);
        return r->algo;
    }
    snprintf(why, whylen, "no rule");
    return XCHG_SPARSE_PEX;
}

