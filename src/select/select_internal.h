/*
 * select_internal.h - the automatic choice: pattern statistics, the cost
 * model (model.c), the tuning table (table.c) and the selector (select.c).
 */
#ifndef XCHG_SELECT_INTERNAL_H
#define XCHG_SELECT_INTERNAL_H

#include "xchg_internal.h"

/* What every rank knows of the exchange after one allreduce. */
typedef struct xchg_pattern_stats {
    int P;
    int node_size;                /* ranks per node (shared memory) */
    long long max_block_bytes;    /* largest single block anywhere */
    long long max_rank_bytes;     /* largest send or receive volume of a rank */
    long long max_nnz;            /* most nonzero partners of a rank */
} xchg_pattern_stats;

typedef struct xchg_model_params {
    double alpha;        /* s per dependent exchange (latency) */
    double overhead;     /* s per posted send or receive */
    double beta;         /* s per byte on a node's link */
    double copy;         /* s per byte copied locally */
    double sync;         /* extra s per pairwise step */
    double vendor_overhead_factor;
    double throttle, radix;
    double alltoall_bruck_bytes;
} xchg_model_params;

void xchg_model_defaults(xchg_model_params *m);
double xchg_model_time(xchg_algo algo, const xchg_model_params *m,
                       const xchg_pattern_stats *s);

/* Tuning table: a measured rule list that overrides the model where it
 * covers the case. Returns XCHG_ALGO_INVALID when no rule applies. */
xchg_algo xchg_table_lookup(const xchg_pattern_stats *s, xchg_model_params *m);
/* Checksum of the table XCHG_TUNING_FILE names (0: none or unreadable). */
unsigned long long xchg_table_checksum(void);

#endif
