/*
 * select.c - the automatic choice of an alltoallv algorithm.
 *
 * Rule 2 of the design: every rank chooses the same algorithm. The choice
 * uses only what all ranks know: P, the environment, and statistics of the
 * pattern reduced over all ranks by one small agreement (stats_agree.c: largest
 * block, busiest rank's volumes and partner counts, off-node traffic, the
 * tuning table's checksum). A measured tuning table (table.c) decides where
 * it has a rule; elsewhere the cost model (model.c) ranks the registered
 * algorithms and the cheapest wins.
 *
 * The agreement is kept off the critical path: the choice is cached on the
 * communicator. A refreshing call k runs the cached choice and, once its
 * data is being posted (the algorithm's first xchg_call_waitall, or
 * xchg_poll in the posting loops of linear and scattered), starts a
 * nonblocking agreement of call k's statistics that progresses while the
 * algorithm posts and waits for its data, and is completed before call k
 * returns (select_finish, inside xchg_select_run); call k+1 chooses from
 * it. Nothing is left in flight between calls, so freeing the
 * communicator or MPI_Finalize has nothing to complete. Every rank
 * reduces the same values, so the choice stays identical everywhere; a
 * stale choice costs speed, never correctness.
 *
 * Not every call refreshes (measured at P=64, 16 B: a refresh adds 4-5 us
 * to a 10-15 us call, its 2 log2 P messages and the wait for its last
 * round). The schedule (schedule()) depends only on agreed values and on
 * the count of auto calls, so all ranks refresh on the same calls: after a
 * refresh that keeps the choice on statistics that moved by less than a
 * factor of two, the interval to the next refresh doubles, up to
 * refresh_cap() (an agreement's modelled cost over 1% of the call's, and
 * at most XCHG_AUTO_REFRESH, default 64); a changed choice or moved
 * statistics set it back to 1. So after a change of pattern at call n,
 * call n + interval runs the new choice at the latest (the refresh on or
 * after n sees it); bandwidth-bound calls refresh every call. The first
 * refresh after a communicator's first (blocking) choice comes
 * FIRST_REFRESH calls later (within the cap): a refresh only partly
 * overlaps the exchange (at 256 simulated ranks, 16 B, it added 10 us to
 * a 24 us call), and refreshes at calls 2 and 4 made a new communicator's
 * early calls alternate between the two.
 *
 * Agreed and blocking, before the exchange: the first call on a
 * communicator (nothing cached), and a call whose cached choice is a
 * padded algorithm (stale statistics could pick one whose padding no
 * longer fits XCHG_MAX_TEMP_BYTES; the agreement also carries the largest
 * block and the smallest memory budget, so the padded algorithm skips its
 * own allreduce: c->agreed).
 *
 * Below XCHG_AUTO_MIN_P ranks (default 64) auto runs "linear" and agrees
 * nothing after a communicator's first call: there an agreement costs
 * about as much as the exchange, and linear is within 1.7x of the best
 * algorithm on every pattern and size simulated at P=64. That first call
 * agrees once, blocking, because the tuning table's rules apply at the P
 * they were measured at: where every rank reads the same table and a rule
 * covers P, the communicator follows the table as larger ones follow the
 * model (cached, refreshed; the rule where one applies, else linear);
 * elsewhere linear from then on. See
 * docs/tuning.md, "How auto uses the table". The persistent API chooses
 * once, at init, by the table or the model at every P.
 *
 * Settings are read through the small accessors below (one place to point
 * them at per-communicator settings).
 */
#include "select_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The algorithms the model may choose are the registry's candidates
 * (registry.c, in their tie order). Not offered: vendor (the baseline we
 * aim to beat), rma_* (window creation per call; for persistent use).
 * An algorithm with a prepare step (hierarchical's node communicators):
 * by the model only on shared-memory nodes (XCHG_RANKS_PER_NODE unset),
 * the nodes it knows; by the model or a table rule not after its setup
 * failed on some rank (agreed: XCHG_AF_NODES_FAILED). Its first run makes
 * it, collectively: fine in a blocking call, where every rank runs it
 * together, but not inside a nonblocking exchange's coroutine. So a
 * nonblocking auto exchange makes it at its start (xchg_select_prepare),
 * and a call that would run it inside a coroutine without it runs the
 * model's best other candidate instead (the same on every rank: the
 * choice and the kind of call are). */
enum { MAX_CANDIDATES = 32 };

/* Settings: agreed per communicator (src/core/settings.c). */
static long setting_auto_min_p(const xchg_call *c) { return c->cs->settings.auto_min_p; }
static long setting_throttle(const xchg_call *c) { return c->cs->settings.throttle; }
static long setting_verbose(const xchg_call *c) { return c->cs->settings.verbose; }
static long setting_auto_refresh(const xchg_call *c) { return c->cs->settings.auto_refresh; }

/* The share of a call's (modelled) time that refreshes may cost on
 * average: a refresh costs about one agreement (xchg_model_agree_time),
 * so a stable choice is refreshed every agree/(budget x call) calls at
 * most (and at most XCHG_AUTO_REFRESH). 1%: at P=64 and 16 B blocks the
 * measured refresh (4-5 us at the end of a 10-15 us call) then adds under
 * 1% on average; at 64 KiB (ms per call) every call refreshes. */
#define REFRESH_BUDGET 0.01

/* Calls from a communicator's first choice to its first refresh (at most
 * refresh_cap()): the first calls run the choice unchecked. */
#define FIRST_REFRESH 8

/* The cached choice of a communicator (its XCHG_EXT_SELECT slot). */
typedef struct select_state {
    int have;                  /* choice below is agreed */
    xchg_algo choice;
    xchg_algo fallback;        /* the model's best without a prepare step (runnable()) */
    int armed;                 /* this call refreshes the choice */
    int started;               /* ... and the agreement is in flight */
    int start_rc;              /* what starting it returned */
    /* The refresh schedule, the same on every rank: it changes only with
     * agreed values (schedule()). */
    unsigned long ncalls;      /* auto calls on this communicator, this one included */
    unsigned long next_refresh; /* the call (ncalls) that refreshes next */
    unsigned long interval;    /* calls between the last two refreshes */
    long long mine[XCHG_AF_COUNT];
    long long last[XCHG_AF_COUNT]; /* the agreed fields the choice was made from */
    xchg_agree_op op;
    unsigned long long printed; /* XCHG_VERBOSE: algorithms already reported */
    int small;                 /* below XCHG_AUTO_MIN_P: SMALL_*, agreed at the first call */
    xchg_call_agreed agreed;   /* what a blocking agreement hands the call (c->agreed) */
    /* The measured verdict (verdict()): the choice's blocking calls
     * timed (MPI's own before set-up: cs->phase), and the choice it
     * vetoed. */
    int judging;               /* the choice's calls are being timed (counted in
                                  xchg_select_judged) */
    unsigned long vcalls;      /* blocking auto calls since the first choice */
    int timing_now;            /* this call is timed */
    int timed_run;             /* ... and timed[timed_n - 1] holds its algorithm's run */
    double timed[16];          /* this rank's timed calls of the choice (s) */
    unsigned long timed_n;
    xchg_algo veto;            /* slower than MPI's own here (XCHG_ALGO_INVALID: none) */
    long long veto_f[XCHG_AF_COUNT]; /* the statistics it was slower on */
} select_state;

/* A communicator below XCHG_AUTO_MIN_P ranks: undecided until its first
 * auto call, then for good: by the tuning table where it has a rule for
 * P; else, every rank on one node with a node-shared window, the model's
 * choice between linear and the one-node algorithms (SMALL_NODE: their
 * costs differ per peer, not per byte, so the model ranks them on any
 * node); else linear with no agreement again. */
enum { SMALL_UNDECIDED = 0, SMALL_LINEAR, SMALL_TABLE, SMALL_NODE };

/* How a choice is made, for XCHG_VERBOSE's report. */
enum { HOW_BLOCKING, HOW_REFRESH, HOW_INIT };

static void arm(xchg_call *c, select_state *st, int on);

_Atomic int xchg_select_judged;

static void judging_set(select_state *st, int on)
{
    if (st->judging != on)
        xchg_select_judged += on ? 1 : -1;
    st->judging = on;
}

static void state_free(void *p)
{
    select_state *st = p;
    judging_set(st, 0);
    free(st);
}

static select_state *state_in(xchg_comm_state *cs, int create)
{
    select_state *st = cs->ext[XCHG_EXT_SELECT];
    if (!st && create) {
        st = calloc(1, sizeof *st);
        if (st) {
            st->veto = XCHG_ALGO_INVALID;
            cs->ext[XCHG_EXT_SELECT] = st;
            cs->ext_free[XCHG_EXT_SELECT] = state_free;
        }
    }
    return st;
}

static select_state *state_of(xchg_call *c, int create)
{
    return state_in(c->cs, create);
}

/* This rank's contribution to the agreement. */
void xchg_select_fields(const xchg_call *c, long long *f)
{
    long long sbytes = 0, rbytes = 0, snnz = 0, rnnz = 0, soff = 0, roff = 0, blk = 0;
    long long large = 0, ssmall = 0, rsmall = 0, sum_small = 0;
    const long long T = (long long)xchg_hybrid_threshold_for(&c->cs->settings);
    const unsigned char *on = c->cs->on_node;
    xchg_charge_ops(XCHG_OP_PEER, (size_t)c->size);
    for (int j = 0; j < c->size; j++) {
        long long sb = (long long)c->sendcounts[j] * c->st.size;
        long long rb = (long long)c->recvcounts[j] * c->rt.size;
        sbytes += sb;
        rbytes += rb;
        if (sb > blk)
            blk = sb;
        ssmall += sb <= T ? sb : 0;
        rsmall += rb <= T ? rb : 0;
        if (j == c->rank)
            continue;
        large += (sb > T) + (rb > T);
        sum_small += sb <= T ? sb : 0;
        snnz += sb > 0;
        rnnz += rb > 0;
        if (!(on ? on[j] : 0)) {
            soff += sb;
            roff += rb;
        }
    }
    unsigned long long ck = xchg_table_checksum();
    xchg_table_warn(c->rank == 0); /* a table that cannot be used, once */
    memset(f, 0, sizeof(long long) * XCHG_AF_COUNT);
    f[XCHG_AF_MAX_BLOCK] = blk;
    f[XCHG_AF_MAX_SEND] = sbytes;
    f[XCHG_AF_MAX_RECV] = rbytes;
    f[XCHG_AF_MAX_SEND_NNZ] = snnz;
    f[XCHG_AF_MAX_RECV_NNZ] = rnnz;
    f[XCHG_AF_MAX_OFF_SEND] = soff;
    f[XCHG_AF_MAX_OFF_RECV] = roff;
    f[XCHG_AF_TABLE_HI] = (long long)(ck >> 1);
    f[XCHG_AF_TABLE_NEG] = -(long long)(ck >> 1);
    /* one rank's argument error (c->arg_err, its counts zeroed) fails all
     * ranks alike where the agreement is blocking (xchg_select_alltoallv_now) */
    f[XCHG_AF_ERROR_CLASS] = (long long)xchg_agree_flag(c->rank, c->size, c->arg_err);
    size_t avail = c->temp_cur < c->temp_limit ? c->temp_limit - c->temp_cur : 0;
    f[XCHG_AF_NEG_BUDGET] = -(long long)(avail > (size_t)LLONG_MAX ? (size_t)LLONG_MAX : avail);
    f[XCHG_AF_MAX_POSTS] = snnz + rnnz;
    f[XCHG_AF_MAX_LARGE_POSTS] = large;
    f[XCHG_AF_MAX_SMALL_SEND] = ssmall;
    f[XCHG_AF_MAX_SMALL_RECV] = rsmall;
    f[XCHG_AF_SUM_SMALL] = sum_small;
    f[XCHG_AF_NODES_FAILED] = c->cs->nodes_failed;
    f[XCHG_AF_MAX_NODE] = c->cs->node_size;
    f[XCHG_AF_SUM_OFF] = soff;
    f[XCHG_AF_SUM_BYTES] = sbytes - (long long)c->sendcounts[c->rank] * c->st.size;
}

void xchg_pattern_stats_from(xchg_pattern_stats *s, const long long *f, int P)
{
    memset(s, 0, sizeof *s);
    s->P = P;
    /* the largest node, agreed: a rank's own node size may differ */
    s->node_size = f[XCHG_AF_MAX_NODE] > 1 ? (int)f[XCHG_AF_MAX_NODE] : 1;
    s->max_block_bytes = f[XCHG_AF_MAX_BLOCK];
    s->max_send_bytes = f[XCHG_AF_MAX_SEND];
    s->max_recv_bytes = f[XCHG_AF_MAX_RECV];
    s->max_rank_bytes = s->max_send_bytes > s->max_recv_bytes ? s->max_send_bytes
                                                               : s->max_recv_bytes;
    s->max_send_nnz = f[XCHG_AF_MAX_SEND_NNZ];
    s->max_recv_nnz = f[XCHG_AF_MAX_RECV_NNZ];
    s->max_nnz = s->max_send_nnz > s->max_recv_nnz ? s->max_send_nnz : s->max_recv_nnz;
    s->max_off_send = f[XCHG_AF_MAX_OFF_SEND];
    s->max_off_recv = f[XCHG_AF_MAX_OFF_RECV];
    s->max_posts = f[XCHG_AF_MAX_POSTS];
    s->sum_off_bytes = f[XCHG_AF_SUM_OFF];
    s->sum_bytes = f[XCHG_AF_SUM_BYTES];
    s->max_large_posts = f[XCHG_AF_MAX_LARGE_POSTS];
    s->max_small_send = f[XCHG_AF_MAX_SMALL_SEND];
    s->max_small_recv = f[XCHG_AF_MAX_SMALL_RECV];
    s->sum_small_bytes = f[XCHG_AF_SUM_SMALL];
}

static int is_padded(xchg_algo a)
{
    const xchg_algo_info *info = xchg_registry_find(a);
    return info && info->padded;
}

static const char *name_of(xchg_algo a)
{
    const xchg_algo_info *info = xchg_registry_find(a);
    return info ? info->name : NULL;
}

/* Needs its one-time collective setup (registry: prepare). */
static int has_prepare(xchg_algo a)
{
    const xchg_algo_info *info = xchg_registry_find(a);
    return info && info->prepare;
}

/* An algorithm's modelled time: its registry entry's model (select_internal.h). */
double xchg_model_time(xchg_algo algo, const xchg_model_params *m, const xchg_pattern_stats *s)
{
    const xchg_algo_info *info = xchg_registry_find(algo);
    /* not modelled: never chosen automatically */
    return info && info->model ? info->model(m, s) : INFINITY;
}

/* The ranks' tuning tables differ (agreed fields f): some rank has one
 * whose checksum is not every rank's. */
static int tables_differ(const long long *f)
{
    return f[XCHG_AF_TABLE_HI] != -f[XCHG_AF_TABLE_NEG];
}

/* Every rank reads the same tuning table (agreed fields f): its checksum
 * is the same everywhere and not zero. */
static int table_agreed(const long long *f)
{
    return xchg_table_checksum() != 0 && !tables_differ(f);
}

/* The model's parameters for this communicator, and the tuning table's
 * constants (alpha, beta, copy, overhead) over the defaults where the
 * table is agreed (f): a measured link changes every candidate's time,
 * not only the sizes a rule covers. The same file everywhere gives the
 * same constants everywhere, so the choice stays agreed. Returns whether
 * the table is agreed (its rules apply too). */
static int model_params(const xchg_call *c, const long long *f, xchg_model_params *m)
{
    const int agreed = table_agreed(f);
    xchg_model_defaults(m);
    m->throttle = (double)setting_throttle(c);
    m->max_inflight = (double)c->cs->settings.max_inflight;
    m->radix = (double)xchg_bruck_radix_for(&c->cs->settings, c->size);
    m->radix_intra_set = xchg_bruck_2level_radix_set(&c->cs->settings, 0);
    m->radix_inter_set = xchg_bruck_2level_radix_set(&c->cs->settings, 1);
    m->leaders = (double)xchg_multileader_leaders_set(&c->cs->settings);
    m->temp_limit = (double)c->temp_limit;
    m->shm_bytes = (double)c->cs->settings.shm_bytes;
    if (agreed) /* the key of the agreed checksum (table.c's) */
        xchg_table_constants((double)((unsigned long long)f[XCHG_AF_TABLE_HI] >> 10), m);
    return agreed;
}

/* Calls between two refreshes of a choice that stays the same, at most:
 * an agreement's modelled cost over REFRESH_BUDGET of the call's (the
 * chosen algorithm's modelled time; the model's best where it does not
 * model the choice), within [1, XCHG_AUTO_REFRESH]. Agreed inputs only. */
static unsigned long refresh_cap(const xchg_call *c, xchg_algo choice, const long long *f,
                                 double best_t)
{
    unsigned long most = (unsigned long)setting_auto_refresh(c);
    xchg_pattern_stats s;
    xchg_model_params m;
    model_params(c, f, &m);
    xchg_pattern_stats_from(&s, f, c->size);
    double call = xchg_model_time(choice, &m, &s);
    if (!isfinite(call))
        call = best_t;
    double agree = xchg_model_agree_time(&m, &s);
    if (!(call > 0.0) || !isfinite(call))
        return most;
    double k = ceil(agree / (REFRESH_BUDGET * call));
    if (!(k >= 1.0))
        return 1;
    return k >= (double)most ? most : (unsigned long)k;
}

/* Agreed statistics moved since the last choice: a volume, partner count,
 * block size or the tuning table changed by more than a factor of two. */
static int moved(const long long *was, const long long *now)
{
    static const int fields[] = {XCHG_AF_MAX_BLOCK,    XCHG_AF_MAX_SEND,     XCHG_AF_MAX_RECV,
                                 XCHG_AF_MAX_SEND_NNZ, XCHG_AF_MAX_RECV_NNZ, XCHG_AF_MAX_OFF_SEND,
                                 XCHG_AF_MAX_OFF_RECV, XCHG_AF_MAX_POSTS,    XCHG_AF_SUM_OFF,
                                 XCHG_AF_SUM_BYTES,    XCHG_AF_MAX_LARGE_POSTS, XCHG_AF_SUM_SMALL};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        long long x = was[fields[i]], y = now[fields[i]];
        if (x > 2 * y + 1 || y > 2 * x + 1)
            return 1;
    }
    return was[XCHG_AF_TABLE_HI] != now[XCHG_AF_TABLE_HI];
}

/* MPI's own call as auto runs it: vendor; in the simulated build the
 * model of MPICH's call that stands in for it (phase.c's pass-through
 * runs the same), or the baseline XCHG_ALLTOALLV_ALGO names. */
xchg_algo xchg_select_mpi_own(const xchg_comm_state *cs)
{
#ifdef XCHG_SMPI
    const xchg_algo a = cs->settings.alltoallv_algo;
    const xchg_algo_info *info = xchg_registry_find(a);
    return info && info->baseline && a != XCHG_ALGO_VENDOR ? a : XCHG_ALGO_MPICH_MODEL;
#else
    (void)cs;
    return XCHG_ALGO_VENDOR;
#endif
}

/* The choice now, from agreed fields f, after the verdict: an algorithm
 * measured slower than MPI's own call gives way to it while the
 * statistics stay where they were measured; once they move, the model
 * decides again. */
static xchg_algo apply_veto(xchg_call *c, select_state *st, xchg_algo now, const long long *f)
{
    if (st->veto == XCHG_ALGO_INVALID)
        return now;
    if (moved(st->veto_f, f)) {
        st->veto = XCHG_ALGO_INVALID;
        return now;
    }
    return now == st->veto ? xchg_select_mpi_own(c->cs) : now;
}

/* The model's ranking of the candidates on agreed fields f. */
typedef struct ranking {
    xchg_algo best, second, fallback; /* fallback: the best without a prepare step, which
                                          runs anywhere, inside a coroutine too */
    double best_t, second_t;
    int n;
    const xchg_algo_info *cand[MAX_CANDIDATES];
    double times[MAX_CANDIDATES];
} ranking;

/* Padded algorithms hold about 2 x P x largest block: never choose one
 * that would be refused for memory (the limit is the same everywhere), not
 * even by a table rule. */
static int padding_refused(const xchg_call *c, const xchg_pattern_stats *s)
{
    return 2.0 * (double)s->P * (double)s->max_block_bytes > (double)c->temp_limit;
}

/* one_node: only linear and the one-node algorithms (SMALL_NODE). */
static void rank_candidates(const xchg_call *c, const long long *f, const xchg_model_params *m,
                            const xchg_pattern_stats *s, int one_node, ranking *r)
{
    r->best = r->fallback = XCHG_ALGO_LINEAR;
    r->second = XCHG_ALGO_INVALID;
    r->best_t = r->second_t = INFINITY;
    double fallback_t = INFINITY;
    r->n = xchg_registry_candidates(r->cand, MAX_CANDIDATES);
    xchg_charge_ops(XCHG_OP_MODEL, 1);
    for (int i = 0; i < r->n; i++) {
        xchg_algo a = r->cand[i]->id;
        r->times[i] = INFINITY;
        if (r->cand[i]->padded && padding_refused(c, s))
            continue;
        if (r->cand[i]->prepare &&
            (f[XCHG_AF_NODES_FAILED] || c->cs->settings.ranks_per_node != 0))
            continue;
        if (r->cand[i]->usable && !r->cand[i]->usable(c->cs))
            continue;
        if (one_node && a != XCHG_ALGO_LINEAR && !r->cand[i]->usable)
            continue;
        double tm = r->times[i] = xchg_model_time(a, m, s);
        if (!r->cand[i]->prepare && tm < fallback_t) {
            fallback_t = tm;
            r->fallback = a;
        }
        if (tm < r->best_t) {
            r->second = r->best_t < INFINITY ? r->best : r->second;
            r->second_t = r->best_t;
            r->best_t = tm;
            r->best = a;
        } else if (tm < r->second_t) {
            r->second_t = tm;
            r->second = a;
        }
    }
}

/* A table rule's algorithm may run here: not a padded one whose padding
 * would be refused, nor one whose node setup failed on some rank. */
static int rule_runs(const xchg_call *c, const long long *f, const xchg_pattern_stats *s,
                     xchg_algo t)
{
    return !(is_padded(t) && padding_refused(c, s)) && !(has_prepare(t) && f[XCHG_AF_NODES_FAILED]);
}

/* Why no rule applied below XCHG_AUTO_MIN_P (rank 0's view of agreed f). */
static void no_rule_reason(const xchg_call *c, const long long *f, const xchg_pattern_stats *s,
                           char *out, size_t len)
{
    char path[512];
    int set = xchg_table_path(path, sizeof path);
    if (tables_differ(f))
        snprintf(out, len, "the ranks' tuning tables differ, so every rank ignores its own");
    else if (!set)
        snprintf(out, len, "XCHG_TUNING_FILE is unset");
    else if (xchg_table_checksum() == 0)
        snprintf(out, len, "%s cannot be used: see the warning above", path);
    else if (!xchg_table_covers(c->size))
        snprintf(out, len, "%s has none for P=%d", path, c->size);
    else
        snprintf(out, len, "%s has none for %lld B, the busiest rank's mean block", path,
                 s->P > 0 ? s->max_rank_bytes / s->P : 0);
}

/* XCHG_VERBOSE's report (report.c: when, and the line's format); 3 adds
 * the model's time of every candidate. rule: the table's line (0: none);
 * below: fewer than XCHG_AUTO_MIN_P ranks. Rank 0 only. */
static void report(xchg_call *c, const long long *f, int how, xchg_algo best, int rule,
                   int below, const xchg_pattern_stats *s, const ranking *r,
                   const xchg_model_params *m)
{
    select_state *st = state_of(c, 0);
    if (!st || !xchg_report_due(&st->printed, c->cs, (int)best, !st->have || st->choice != best))
        return;
    long verbose = setting_verbose(c);
    const int one_node = below && st->small == SMALL_NODE; /* the model decides */
    if (below && !rule && !one_node) {
        char why[700];
        no_rule_reason(c, f, s, why, sizeof why);
        xchg_report_choice(NULL, name_of(best), s->P, ": fewer than XCHG_AUTO_MIN_P (%ld) "
                           "ranks and no tuning-table rule for P=%d (%s)",
                           setting_auto_min_p(c), s->P, why);
        return;
    }
    char when[64], by[600] = "model";
    if (one_node)
        snprintf(by, sizeof by, "model: every rank on one node and fewer than "
                 "XCHG_AUTO_MIN_P (%ld) ranks, so linear or a one-node algorithm",
                 setting_auto_min_p(c));
    if (how == HOW_INIT)
        snprintf(when, sizeof when, "decided at a persistent init from its own");
    else
        snprintf(when, sizeof when, "decided in call %lu from %s", st->ncalls,
                 how == HOW_BLOCKING ? "its own (blocking)" : "its (nonblocking refresh)");
    if (rule) {
        char path[512];
        xchg_table_path(path, sizeof path);
        snprintf(by, sizeof by, "tuning table rule at line %d of %s", rule, path);
    }
    if (below && !one_node) { /* a rule decides: its key, not the model's figures */
        xchg_report_choice(NULL, name_of(best), s->P, " (%s statistics, by %s): the busiest "
                           "rank's mean block %lld B; largest block %lld B", when, by,
                           s->P > 0 ? s->max_rank_bytes / s->P : 0, s->max_block_bytes);
        return;
    }
    xchg_report_choice(NULL, name_of(best), s->P,
            " (%s statistics, by %s): "
            "model %.2f us, next %s %.2f us; largest block %lld B, busiest rank "
            "sends %lld B to %lld ranks, receives %lld B from %lld; off-node: "
            "busiest rank %lld/%lld B out/in, all ranks %lld of %lld B; %d ranks "
            "per node; %lld posts",
            when, by, r->best_t * 1e6,
            r->second == XCHG_ALGO_INVALID ? "-" : name_of(r->second), r->second_t * 1e6,
            s->max_block_bytes, s->max_send_bytes, s->max_send_nnz, s->max_recv_bytes,
            s->max_recv_nnz, s->max_off_send, s->max_off_recv, s->sum_off_bytes, s->sum_bytes,
            s->node_size, s->max_posts);
    if (verbose >= 3) {
        fprintf(stderr, "xchg: model, us:");
        for (int i = 0; i < r->n; i++)
            if (isfinite(r->times[i]))
                fprintf(stderr, " %s %.2f", r->cand[i]->name, r->times[i] * 1e6);
        fprintf(stderr, "; agreement %.2f\n", xchg_model_agree_time(m, s) * 1e6);
    }
}

/* The choice from agreed fields: the table's rule, else the model's
 * cheapest (below XCHG_AUTO_MIN_P, outside a persistent init: linear).
 * *best_t: the model's cheapest time; *fallback: what runs where the
 * choice cannot (runnable()). */
static xchg_algo choose(xchg_call *c, const long long *f, int how, double *best_t,
                        xchg_algo *fallback)
{
    xchg_pattern_stats s;
    xchg_pattern_stats_from(&s, f, c->size);
    xchg_model_params m;
    const int table_ok = model_params(c, f, &m);
    const int below = how != HOW_INIT && c->size < setting_auto_min_p(c);
    const select_state *st = state_of(c, 0);
    const int one_node = below && st && st->small == SMALL_NODE;
    ranking r;
    rank_candidates(c, f, &m, &s, one_node, &r);
    *best_t = r.best_t;
    *fallback = r.fallback;
    xchg_algo best = r.best;
    if (below) {
        *fallback = XCHG_ALGO_LINEAR;
        if (!one_node)
            best = XCHG_ALGO_LINEAR;
    }
    int line = 0;
    xchg_algo t = table_ok ? xchg_table_lookup(&s, &line) : XCHG_ALGO_INVALID;
    if (t != XCHG_ALGO_INVALID && rule_runs(c, f, &s, t))
        best = t;
    else
        line = 0;
    if (tables_differ(f))
        xchg_table_warn_differ(c->rank == 0);
    report(c, f, how, best, line, below, &s, &r, &m);
    return best;
}

double xchg_select_agree_share(int P)
{
    xchg_model_params m;
    xchg_model_defaults(&m);
    xchg_pattern_stats s;
    memset(&s, 0, sizeof s);
    s.P = P;
    s.node_size = 1;
    double vendor = xchg_model_time(XCHG_ALGO_VENDOR, &m, &s);
    return vendor > 0 ? xchg_model_agree_time(&m, &s) / vendor : INFINITY;
}

void xchg_select_estimate(const xchg_call *c, const long long *f, int one_node,
                          xchg_select_guess *g)
{
    xchg_pattern_stats s;
    xchg_pattern_stats_from(&s, f, c->size);
    xchg_model_params m;
    model_params(c, f, &m);
    const int below = c->size < setting_auto_min_p(c);
    ranking r;
    rank_candidates(c, f, &m, &s, below && one_node, &r);
    g->best = r.best;
    g->best_t = r.best_t;
    if (below && !one_node) { /* linear, as the set-up communicator would run */
        g->best = XCHG_ALGO_LINEAR;
        g->best_t = xchg_model_time(XCHG_ALGO_LINEAR, &m, &s);
    }
    g->vendor_t = xchg_model_time(XCHG_ALGO_VENDOR, &m, &s);
    const xchg_algo_info *info = xchg_registry_find(g->best);
    g->setup_t = xchg_model_setup_time(&m, &s, info && info->usable);
    g->agree_t = xchg_model_agree_time(&m, &s);
}

/* After an agreement (call st->ncalls) chose `now` from fields f: when to
 * refresh next. A refresh that confirms the choice on statistics that
 * did not move doubles the interval, up to refresh_cap(); a new choice,
 * moved statistics or a blocking agreement set it to 1 (refresh on the
 * next call). On one node below XCHG_AUTO_MIN_P (SMALL_NODE) moved
 * statistics alone do not: there a refresh costs about a call, and a
 * pattern whose partners change every call (sparse) would refresh on
 * every call for a choice that holds. Everything here is agreed, so every
 * rank keeps the same schedule and refreshes on the same calls. */
static void schedule(xchg_call *c, select_state *st, int confirm, xchg_algo now,
                     const long long *f, double best_t)
{
    int settled = st->small == SMALL_NODE || !moved(st->last, f);
    int same = confirm && st->have && st->choice == now && settled;
    memcpy(st->last, f, sizeof st->last);
    unsigned long cap = refresh_cap(c, now, f, best_t);
    unsigned long next = same ? 2 * st->interval : confirm ? 1 : FIRST_REFRESH;
    st->interval = next > cap ? cap : next < 1 ? 1 : next;
    st->next_refresh = st->ncalls + st->interval;
    if (setting_verbose(c) >= 2 && c->rank == 0 && !same && st->interval > 1)
        fprintf(stderr, "xchg: auto refreshes again in %lu calls\n", st->interval);
}

/* The node-aware algorithms' setup may pay: auto models them here. */
static int multi_node_wanted(const xchg_comm_state *cs)
{
    const select_state *st = cs->ext[XCHG_EXT_SELECT];
    return cs->size >= cs->settings.auto_min_p || (st && st->small == SMALL_TABLE);
}

void xchg_select_prepare(xchg_comm_state *cs, int nonblocking)
{
    /* each step once, even if it fails: never again inside a coroutine */
    if (!(cs->auto_prepared & 1)) {
        cs->auto_prepared |= 1;
        (void)xchg_comm_node_map(cs); /* a failure leaves the map unknown */
    }
    if (!nonblocking || (cs->auto_prepared & 2) || !multi_node_wanted(cs))
        return;
    cs->auto_prepared |= 2;
    /* hierarchical can pay where nodes hold several ranks and there are
     * several nodes; node sizes are local, so whether to split is agreed */
    int want = cs->settings.ranks_per_node == 0 && cs->node_size > 1 && cs->node_size < cs->size;
    if (MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_INT, MPI_MAX, cs->pcomm) != MPI_SUCCESS || !want)
        return;
    for (int i = 0; i < xchg_registry_count(); i++) {
        const xchg_algo_info *info = xchg_registry_at(i);
        if (info->candidate && info->prepare)
            (void)info->prepare(cs); /* a failure sets cs->nodes_failed */
    }
}

/* A blocking agreement on this call's statistics (fields f). The node map
 * first, on first need (collective; a nonblocking start made it before
 * its coroutine: xchg_select_prepares). */
static int agree_now(xchg_call *c, long long *f)
{
    xchg_select_prepare(c->cs, 0);
    xchg_select_fields(c, f);
    int rc = xchg_agree_blocking(c->comm, c->rank, c->size, f);
    if (rc == MPI_SUCCESS)
        rc = xchg_agree_result(c->rank, c->size, c->arg_err, (int64_t)f[XCHG_AF_ERROR_CLASS],
                               "auto");
    return rc;
}

int xchg_select_alltoallv_now(xchg_call *c, xchg_algo *chosen)
{
    long long f[XCHG_AF_COUNT];
    double best_t;
    xchg_algo fallback;
    (void)state_of(c, 1); /* where XCHG_VERBOSE's report keeps what it said */
    int rc = agree_now(c, f);
    if (rc == MPI_SUCCESS)
        *chosen = choose(c, f, HOW_INIT, &best_t, &fallback);
    return rc;
}

/* Inside a coroutine, what cannot run there runs the fallback instead:
 * an algorithm that splits communicators on first use (hierarchical) until
 * they are made, and one that starts blocking (rma_*, named by a table
 * rule). Once making them has failed (agreed on every rank by
 * hier_build), the fallback at once, not only from the next agreement. */
static xchg_algo runnable(const xchg_call *c, const select_state *st)
{
    const xchg_algo_info *info = xchg_registry_find(st->choice);
    if (info && info->usable && !info->usable(c->cs))
        return st->fallback; /* e.g. a window MPI refused since the choice */
    if (info && info->prepare && c->cs->nodes_failed)
        return st->fallback;
    if (info && info->prepare && xchg_coro_inside() && !info->ready(c->cs)) {
        c->cs->coro_wanted_prepare = 1; /* the next blocking call makes it (shm) */
        return st->fallback;
    }
    if (info && info->blocking_start && xchg_coro_inside())
        return st->fallback;
    return st->choice;
}

/* A one-node algorithm may run: every rank on one node (agreed fields f)
 * and one whose settings allow it. Its setup (shm's window) is made where
 * it first runs blocking; if MPI refuses it there, every rank finds it
 * unusable (agreed) and runs linear instead (runnable()). */
static int one_node_usable(const xchg_call *c, const long long *f)
{
    if (c->size < 2 || f[XCHG_AF_MAX_NODE] != c->size || c->cs->settings.ranks_per_node != 0)
        return 0; /* one rank has no peers: linear, whatever is usable */
    for (int i = 0; i < xchg_registry_count(); i++) {
        const xchg_algo_info *info = xchg_registry_at(i);
        if (info->candidate && info->usable && info->usable(c->cs))
            return 1;
    }
    return 0;
}

/* Below XCHG_AUTO_MIN_P, the first call's agreed fields f decide the
 * communicator for good (enum SMALL_*); returns whether auto goes on to
 * choose (a table rule, or the model on one node), else it runs linear
 * with no agreement again. */
static int small_decide(xchg_call *c, select_state *st, const long long *f)
{
    if (table_agreed(f) && xchg_table_covers(c->size))
        st->small = SMALL_TABLE;
    else if (one_node_usable(c, f))
        st->small = SMALL_NODE;
    else
        st->small = SMALL_LINEAR;
    if (st->small != SMALL_LINEAR)
        return 1;
    if (tables_differ(f))
        xchg_table_warn_differ(c->rank == 0);
    xchg_pattern_stats s;
    xchg_pattern_stats_from(&s, f, c->size);
    ranking r = {.best = XCHG_ALGO_LINEAR, .second = XCHG_ALGO_INVALID};
    report(c, f, HOW_BLOCKING, XCHG_ALGO_LINEAR, 0, 1, &s, &r, NULL);
    return 0;
}

/* The first choice (st->choice) of a communicator that a check set up
 * after MPI's own calls: its calls are timed for the verdict. */
static void judge_first(xchg_call *c, select_state *st)
{
    if (c->cs->phase.have_ref != 1 || st->choice == xchg_select_mpi_own(c->cs) ||
        xchg_coro_inside())
        return;
    judging_set(st, 1);
    st->vcalls = 0;
    st->timed_n = 0;
}

/* The first call, or one whose cached choice is padded: agreed, blocking,
 * on this call's statistics. */
static int select_blocking(xchg_call *c, select_state *st, int below, xchg_algo *chosen)
{
    long long f[XCHG_AF_COUNT];
    double best_t;
    int rc = agree_now(c, f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (below && st->small == SMALL_UNDECIDED && !small_decide(c, st, f)) {
        memcpy(st->last, f, sizeof st->last); /* linear for good: what the verdict compares */
        st->choice = *chosen = XCHG_ALGO_LINEAR;
        judge_first(c, st);
        return MPI_SUCCESS;
    }
    *chosen = apply_veto(c, st, choose(c, f, HOW_BLOCKING, &best_t, &st->fallback), f);
    schedule(c, st, 0, *chosen, f, best_t);
    st->choice = *chosen;
    if (!st->have)
        judge_first(c, st);
    st->have = 1;
    *chosen = runnable(c, st);
    /* what the call's algorithm may take as agreed: a padded one needs no
     * agreement of its own, shm sizes its first window by it */
    st->agreed.max_block = (uint64_t)f[XCHG_AF_MAX_BLOCK];
    st->agreed.min_budget = (uint64_t)-f[XCHG_AF_NEG_BUDGET];
    st->agreed.max_send = (uint64_t)f[XCHG_AF_MAX_SEND];
    st->agreed.max_recv = (uint64_t)f[XCHG_AF_MAX_RECV];
    c->agreed = &st->agreed;
    return MPI_SUCCESS;
}

/* ---- the measured verdict ------------------------------------------
 * The model ranks the algorithms on a simulated cluster's constants (or
 * a tuning table's), and a machine can differ: on 2 ranks of one node
 * with Open MPI, MPI's own call (0.6-0.8 us) beat shm, which the model
 * ranks first. A communicator whose first calls were MPI's own
 * (phase.c) timed them: each rank keeps its last 16 (cs->phase.recent,
 * from before the check to the set-up it decided). Its chosen
 * algorithm's blocking calls VERDICT_SKIP + 1 .. VERDICT_SKIP +
 * VERDICT_CALLS after the first choice are timed too, whole (the first
 * makes windows and node maps, the next few touch them first), and at
 * the next blocking call one MPI_Allreduce on the private communicator
 * agrees the slowest rank's median of each (medians: a call that an
 * oversubscribed core's scheduler stretched a hundredfold must not
 * decide). Where the choice is slower than MPI's call (by more than
 * VERDICT_MARGIN) on statistics that have not moved since the check,
 * the calls pass to MPI's own again (phase.c; apply_veto for the other
 * forms) until they move. The calls counted are the blocking ones
 * (outside a coroutine), the same calls on every rank; every decision
 * uses agreed values only. Under SMPI both are simulated times: the
 * same every run. */
enum { VERDICT_SKIP = 4, VERDICT_CALLS = 16 };

/* Slower by more than this factor: the choice's calls are timed whole
 * (entry to return, xchg_select_call_done) against MPI's calls alone;
 * medians of 16 calls on an oversubscribed core still differ by about a
 * tenth from one communicator to the next, and a veto's cost (MPI's
 * call where the choice may have been faster) is the larger mistake
 * where the model saw a saving. */
#define VERDICT_MARGIN 1.1

double xchg_select_median(const double *x, unsigned long n)
{
    double y[16];
    if (n == 0)
        return 0.0;
    if (n > 16)
        n = 16;
    for (unsigned long i = 0; i < n; i++) { /* insertion sort: 16 at most */
        unsigned long j = i;
        for (; j > 0 && y[j - 1] > x[i]; j--)
            y[j] = y[j - 1];
        y[j] = x[i];
    }
    return n % 2 ? y[n / 2] : 0.5 * (y[n / 2 - 1] + y[n / 2]);
}

_Static_assert((int)XCHG_AF_COUNT <= (int)XCHG_PHASE_REF_FIELDS, "raise XCHG_PHASE_REF_FIELDS");

void xchg_select_set_reference(xchg_comm_state *cs, const long long *f)
{
    memcpy(cs->phase.ref_fields, f, sizeof(long long) * XCHG_AF_COUNT);
}

/* At blocking call VERDICT_SKIP + VERDICT_CALLS + 1 of the first choice: the agreement
 * of the timed calls, and the veto where MPI's call was faster. Every
 * rank reaches it at the same call: judging starts from agreed values
 * only (the check's decision, the first choice, the calls' kinds). */
static int verdict(xchg_call *c, select_state *st, xchg_algo *chosen)
{
    judging_set(st, 0);
    xchg_phase_counts *ph = &c->cs->phase;
    ph->have_ref = 0; /* judged once */
    const unsigned long nref = ph->nrecent < 16 ? ph->nrecent : 16;
    /* MAX: the slowest rank's medians (ns); some rank untimed */
    long long v[3] = {(long long)(1e9 * xchg_select_median(st->timed, st->timed_n)),
                      (long long)(1e9 * xchg_select_median(ph->recent, nref)),
                      st->timed_n == 0 || nref == 0};
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, c->comm);
    if (rc != MPI_SUCCESS)
        return rc;
    const int slower = !v[2] && (double)v[0] > VERDICT_MARGIN * (double)v[1] &&
                       !moved(ph->ref_fields, st->last);
    if (setting_verbose(c) && c->rank == 0)
        fprintf(stderr, "xchg: auto measured %s at %.2f us a call on P=%d against MPI's "
                "%.2f us (slowest rank's medians)%s\n", xchg_algo_name(st->choice),
                1e-3 * (double)v[0], c->size, 1e-3 * (double)v[1],
                slower ? ": runs MPI's own from now" : "");
    if (!slower)
        return MPI_SUCCESS;
    st->veto = st->choice;
    memcpy(st->veto_f, st->last, sizeof st->veto_f);
    st->choice = xchg_select_mpi_own(c->cs);
    *chosen = runnable(c, st);
    /* the next blocking calls pass to MPI's own */
    xchg_phase_veto(c->cs, st->veto_f, (double)v[0] / (double)v[1]);
    return MPI_SUCCESS;
}

int xchg_select_veto_moved(xchg_comm_state *cs, const long long *f)
{
    select_state *st = state_in(cs, 0);
    if (st && st->small == SMALL_LINEAR)
        return 0; /* linear was judged for good: its choice has no statistics */
    if (st && st->veto != XCHG_ALGO_INVALID && !moved(st->veto_f, f))
        return 0;
    if (st) {
        st->veto = XCHG_ALGO_INVALID;
        st->have = 0; /* the next call agrees and chooses afresh */
    }
    return 1;
}

void xchg_select_call_done(xchg_comm_state *cs, double t0)
{
    select_state *st = cs && t0 > 0.0 ? state_in(cs, 0) : NULL;
    if (st && st->timed_run && st->timed_n > 0)
        st->timed[st->timed_n - 1] = MPI_Wtime() - t0;
    if (st)
        st->timed_run = 0;
}

/* Counts a blocking call of the verdict's; times it or judges. */
static int verdict_step(xchg_call *c, select_state *st, xchg_algo *chosen)
{
    st->timing_now = 0;
    if (!st->judging || xchg_coro_inside())
        return MPI_SUCCESS;
    st->vcalls++;
    if (st->vcalls > VERDICT_SKIP + VERDICT_CALLS)
        return verdict(c, st, chosen);
    st->timing_now = st->vcalls > VERDICT_SKIP;
    return MPI_SUCCESS;
}

static int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen)
{
    select_state *st = state_of(c, 1);
    if (!st)
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for the automatic choice");
    const int below = c->size < setting_auto_min_p(c);
    if (below && st->small == SMALL_LINEAR) {
        /* agreed at the first call: no table rule for P; MPI's own where
         * the verdict found linear slower (no statistics move here) */
        *chosen = st->choice;
        return verdict_step(c, st, chosen);
    }
    arm(c, st, 0);
    st->started = 0;
    st->start_rc = MPI_SUCCESS;
    st->ncalls++;
    if (!st->have || is_padded(st->choice)) {
        int rc = select_blocking(c, st, below, chosen);
        return rc == MPI_SUCCESS ? verdict_step(c, st, chosen) : rc;
    }
    *chosen = runnable(c, st);
    int rc = verdict_step(c, st, chosen);
    if (rc != MPI_SUCCESS)
        return rc;
    if (st->ncalls < st->next_refresh)
        return MPI_SUCCESS; /* the cached choice, no agreement at all */
    xchg_select_fields(c, st->mine); /* the node map was made by the first call (or is not used) */
    arm(c, st, 1); /* started at the algorithm's first wait, or at the end */
    return MPI_SUCCESS;
}

int xchg_select_prepares(const xchg_comm_state *cs)
{
    if (!(cs->auto_prepared & 1))
        return 1; /* the node map, which tells whether every rank is on one node */
    return !(cs->auto_prepared & 2) && multi_node_wanted(cs);
}

/* Starts the armed refresh if it is not yet in flight. */
static int refresh_start(xchg_call *c, select_state *st)
{
    if (!st->started) {
        st->started = 1;
        st->start_rc = xchg_agree_start(&st->op, c->comm, c->rank, c->size, st->mine);
    }
    return st->start_rc;
}

/* The refresh as work the algorithms' waits progress (progress.h). */
static select_state *armed_state(xchg_call *c)
{
    return c->cs->ext[XCHG_EXT_SELECT];
}

static int hook_start(xchg_call *c)
{
    return refresh_start(c, armed_state(c));
}

static int hook_advance(xchg_call *c, int *done)
{
    return xchg_agree_advance(&armed_state(c)->op, done);
}

static void hook_poll(xchg_call *c)
{
    int done = 0;
    if (hook_start(c) == MPI_SUCCESS)
        xchg_agree_progress(&armed_state(c)->op, 0, &done); /* a failure shows at the finish */
}

static MPI_Request *hook_requests(xchg_call *c)
{
    return armed_state(c)->op.req;
}

static const xchg_wait_hook refresh_hook = {hook_start, hook_advance, hook_poll, hook_requests};

/* Arms or disarms this call's refresh, and with it the waits' hook. */
static void arm(xchg_call *c, select_state *st, int on)
{
    st->armed = on;
    c->cs->wait_hook = on ? &refresh_hook : NULL;
}

/* A rank that leaves a call without running the algorithm (a local
 * argument error) drops the refresh it armed, before anything was sent. */
static void select_abandon(xchg_call *c)
{
    select_state *st = c->cs->ext[XCHG_EXT_SELECT];
    if (st && st->armed && !st->started)
        arm(c, st, 0); /* nothing was sent: the refresh simply does not happen */
}

/* Completes the armed refresh once the algorithm has run (whatever it
 * returned): every rank armed the same one. */
static int select_finish(xchg_call *c)
{
    select_state *st = c->cs->ext[XCHG_EXT_SELECT];
    if (!st || !st->armed)
        return MPI_SUCCESS;
    int done = 0;
    int rc = refresh_start(c, st);
    if (rc == MPI_SUCCESS)
        rc = xchg_agree_progress(&st->op, 1, &done);
    arm(c, st, 0);
    if (rc != MPI_SUCCESS) {
        st->have = 0; /* agree afresh, blocking, next time */
        return rc;
    }
    double best_t;
    xchg_algo now = apply_veto(c, st, choose(c, st->op.acc, HOW_REFRESH, &best_t, &st->fallback),
                               st->op.acc);
    schedule(c, st, 1, now, st->op.acc, best_t);
    st->choice = now;
    return MPI_SUCCESS;
}

int xchg_select_run(xchg_call *c, xchg_algo *algo, int failing)
{
    const int automatic = *algo == XCHG_ALGO_AUTO;
    if (automatic) {
        int rc = xchg_select_alltoallv(c, algo);
        if (rc != MPI_SUCCESS)
            return rc; /* nothing armed */
    }
    const xchg_algo_info *info = xchg_registry_find(*algo); /* the choice, looked up once */
    if (failing && !info->agrees_errors) {
        /* a cached choice that agrees nothing: the error stays local, and
         * this rank's refresh never starts */
        if (automatic)
            select_abandon(c);
        return c->arg_err;
    }
    select_state *st = automatic ? c->cs->ext[XCHG_EXT_SELECT] : NULL;
    const int timed = st && st->timing_now && !failing;
    const double t0 = timed ? MPI_Wtime() : 0.0;
    int rc = info->run(c);
    if (automatic) {
        /* every rank ran it and armed the same refresh: complete it
         * whatever happened */
        int frc = select_finish(c);
        if (rc == MPI_SUCCESS)
            rc = frc;
    }
    /* the algorithm's run; the entry (xchg_select_call_done) puts the
     * whole call's time in its place where it read the clock */
    if (timed && st->timed_n < sizeof st->timed / sizeof st->timed[0]) {
        st->timed[st->timed_n++] = MPI_Wtime() - t0;
        st->timed_run = 1;
    }
    return rc;
}
