/*
 * select_internal.h - the automatic choice: pattern statistics, the cost
 * model (model.c), the tuning table (table.c) and the selector (select.c).
 */
#ifndef XCHG_SELECT_INTERNAL_H
#define XCHG_SELECT_INTERNAL_H

#include "select.h"

/* The fields every rank contributes to the agreement (stats_agree.c): the
 * first XCHG_AF_NMAX are reduced with MAX, the rest with SUM. A fixed
 * struct so that one reduction carries everything the choice (and an
 * agreed error, XCHG_AF_ERROR_CLASS) needs. */
enum {
    XCHG_AF_MAX_BLOCK = 0,   /* largest block (bytes) */
    XCHG_AF_MAX_SEND,        /* largest send volume of a rank (bytes) */
    XCHG_AF_MAX_RECV,        /* largest receive volume of a rank */
    XCHG_AF_MAX_SEND_NNZ,    /* most nonzero destinations of a rank */
    XCHG_AF_MAX_RECV_NNZ,    /* most nonzero sources of a rank */
    XCHG_AF_MAX_OFF_SEND,    /* largest off-node send volume of a rank */
    XCHG_AF_MAX_OFF_RECV,    /* largest off-node receive volume of a rank */
    XCHG_AF_TABLE_HI,        /* tuning table checksum >> 1 ... */
    XCHG_AF_TABLE_NEG,       /* ... and its negation: equal everywhere iff max == -max(-) */
    XCHG_AF_ERROR_CLASS,     /* reserved: the largest error class of any rank (0: none) */
    XCHG_AF_NEG_BUDGET,      /* minus the temporary bytes a rank has left: -(smallest) */
    XCHG_AF_MAX_POSTS,       /* most nonzero blocks (sends + receives) of a rank */
    /* hybrid's split at its threshold T (XCHG_HYBRID_THRESHOLD) */
    XCHG_AF_MAX_LARGE_POSTS, /* most blocks over T (sends + receives) of a rank */
    XCHG_AF_MAX_SMALL_SEND,  /* largest volume a rank sends in blocks up to T */
    XCHG_AF_MAX_SMALL_RECV,  /* ... and receives */
    XCHG_AF_NODES_FAILED,    /* 1 where no node-aware algorithm may be chosen (the node split failed) */
    XCHG_AF_MAX_NODE,        /* most ranks on one node (a rank's node size is local) */
    XCHG_AF_NMAX,
    XCHG_AF_SUM_OFF = XCHG_AF_NMAX, /* SUM: bytes sent off-node, all ranks */
    XCHG_AF_SUM_BYTES,       /* SUM: bytes sent, all ranks (self excluded) */
    XCHG_AF_SUM_SMALL,       /* SUM: bytes sent in blocks up to T, all ranks (self excluded) */
    XCHG_AF_COUNT
};

/* MAX the first XCHG_AF_NMAX fields of in into acc, SUM the rest. */
void xchg_agree_combine(long long *acc, const long long *in);

/* Fields an agreement may carry beyond auto's (phase.c's check: the node
 * guess and MPI's measured time), each reduced with MAX. */
enum { XCHG_AGREE_MAX_EXTRA = 4 };
/* xchg_agree_combine over auto's fields, MAX over the extra ones up to
 * nfields (phase.c's MPI_Op and the recursive doubling alike). */
void xchg_agree_combine_extra(long long *acc, const long long *in, int nfields);

/* One agreement in flight (nonblocking recursive doubling). */
typedef struct xchg_agree_op {
    long long acc[XCHG_AF_COUNT + XCHG_AGREE_MAX_EXTRA], in[XCHG_AF_COUNT + XCHG_AGREE_MAX_EXTRA];
    MPI_Comm comm;
    int rank, size, p2, rem, newrank, mask, stage, active;
    int nfields; /* XCHG_AF_COUNT and the extra ones */
    MPI_Request req[2];
} xchg_agree_op;

/* Starts an agreement of mine[XCHG_AF_COUNT] on comm (collective: every
 * rank starts it, in the same order as its other agreements). */
int xchg_agree_start(xchg_agree_op *op, MPI_Comm comm, int rank, int size,
                     const long long *mine);
/* The same with nextra (at most XCHG_AGREE_MAX_EXTRA) more fields after
 * auto's in mine, reduced with MAX. */
int xchg_agree_start_extra(xchg_agree_op *op, MPI_Comm comm, int rank, int size,
                           const long long *mine, int nextra);
/* Advances it; *done once op->acc holds the reduced fields. blocking: waits. */
int xchg_agree_progress(xchg_agree_op *op, int blocking, int *done);
/* Moves to the next stage(s) once both of op->req are MPI_REQUEST_NULL
 * (completed by the caller's own MPI_Wait*); *done as above. */
int xchg_agree_advance(xchg_agree_op *op, int *done);
/* A whole agreement, blocking: fields in, reduced fields out. */
int xchg_agree_blocking(MPI_Comm comm, int rank, int size, long long *fields);

/* What every rank knows of the exchange after the agreement. */
typedef struct xchg_pattern_stats {
    int P;
    int node_size;                /* ranks per node (shared memory) */
    long long max_block_bytes;    /* largest single block anywhere */
    long long max_rank_bytes;     /* largest send or receive volume of a rank */
    long long max_nnz;            /* most nonzero partners of a rank */
    long long max_send_bytes, max_recv_bytes;
    long long max_send_nnz, max_recv_nnz;
    long long max_off_send, max_off_recv; /* a rank's off-node volume */
    long long max_posts;          /* most sends + receives a rank posts (direct) */
    long long sum_off_bytes;      /* all off-node traffic */
    long long sum_bytes;          /* all traffic (self blocks excluded) */
    /* hybrid: blocks over its threshold go directly, the rest by Bruck */
    long long max_large_posts;    /* most direct sends + receives of a rank */
    long long max_small_send, max_small_recv; /* a rank's volume through the Bruck */
    long long sum_small_bytes;    /* all traffic through the Bruck */
} xchg_pattern_stats;

/* Statistics from reduced agreement fields. */
void xchg_pattern_stats_from(xchg_pattern_stats *s, const long long *f, int P);

typedef struct xchg_model_params {
    double alpha;        /* s of wire latency between nodes */
    double alpha_intra;  /* s of latency inside a node */
    double overhead;     /* s per posted send or receive */
    double beta;         /* s per byte on a node's link */
    double beta_intra;   /* s per byte between ranks of one node */
    double incast;       /* s per message beyond the throttle arriving at one rank at once */
    double copy;         /* s per byte copied locally */
    double copy_call;    /* s per local copy (block) on top of its bytes */
    double size_sum_step; /* s per step of a block-size check sum (node_pairs_shm) */
    double peer_step;    /* s per step of a loop over peers */
    double phase_post;   /* overheads per partner of one Bruck phase */
    double sync;         /* extra s per pairwise step */
    double vendor_overhead_factor;
    double throttle, radix;
    double max_inflight; /* XCHG_MAX_INFLIGHT (0: no bound) */
    /* bruck_2level's radix settings (0: ceil(sqrt) of the level's size) */
    int radix_intra_set, radix_inter_set;
    double leaders;      /* XCHG_LEADERS (0: multileader's rule) */
    double alltoall_bruck_bytes; /* padded slot bytes below which MPI_Alltoall is log P */
    double temp_limit;   /* bytes of temporary memory a call may use (XCHG_MAX_TEMP_BYTES) */
    double shm_bytes;    /* data bytes per rank per half of a node window (XCHG_SHM_BYTES) */
    /* What setting a communicator up costs (xchg_model_setup_time) */
    double setup_round;  /* s per log2 P round of its duplicate, node split and settings allreduce */
    double setup_window; /* s to make a node-shared window */
} xchg_model_params;

void xchg_model_defaults(xchg_model_params *m);
/* One synchronisation of a node window among L members (the _shm
 * algorithms'): the flag latencies of its dissemination barrier
 * (xchg_node_sync_flags, calibrated.h), as the simulated build charges
 * them. 0 for a node of one. */
double xchg_model_node_sync(const xchg_model_params *m, double L);
/* What setting a communicator up costs before its first exchange by xchg
 * (select/phase.c): the private duplicate, the node split and the settings
 * allreduce (setup_round per log2 P round), the first agreement of the
 * statistics, and a node window where window is set. */
double xchg_model_setup_time(const xchg_model_params *m, const xchg_pattern_stats *s,
                             int window);
/* One agreement of the statistics (stats_agree.c's recursive doubling). */
double xchg_model_agree_time(const xchg_model_params *m, const xchg_pattern_stats *s);
/* An algorithm's modelled time: its registry entry's model function (one
 * per algorithm, model.c); INFINITY where it has none (select.c). */
double xchg_model_time(xchg_algo algo, const xchg_model_params *m,
                       const xchg_pattern_stats *s);

/* The tuning table (table.c; docs/tuning.md): measured rules that override
 * the model where one covers the case. xchg_table_lookup returns
 * XCHG_ALGO_INVALID when none applies, else the first that does and its
 * line in the file (*line). */
xchg_algo xchg_table_lookup(const xchg_pattern_stats *s, int *line);
/* Whether a rule of the table covers P ranks (any block size). */
int xchg_table_covers(int P);
/* XCHG_TUNING_FILE into out (""): whether it is set. */
int xchg_table_path(char *out, size_t len);
/* The table's first neighbor rule for P ranks, and its line;
 * XCHG_NEIGHBOR_INVALID where none applies. */
xchg_neighbor_algo xchg_table_neighbor(int P, int *line);
/* The table's first sparse rule for P ranks and a census of `census`
 * remote messages in all (-1: none seen yet), and its line;
 * XCHG_SPARSE_INVALID where none applies. */
xchg_sparse_algo xchg_table_sparse(int P, long long census, int *line);
/* Whether this rank may use its table's rules where a family's own
 * collective agreed the table: agreed_key is xchg_table_key() where every
 * rank read the same table, else 0; differ, where the ranks' tables
 * differ. Says (rank 0, once per process) why a table cannot be used. */
int xchg_table_use(int rank, double agreed_key, int differ);
/* rank0: says on stderr, once per process, that the ranks' tables differ
 * (unless this rank's own cannot be used: xchg_table_warn said so). */
void xchg_table_warn_differ(int rank0);
/* The table's model constants (alpha, beta, copy, overhead lines) over
 * m's, if the table this rank reads has the key given (xchg_table_key:
 * agreed by the caller); else m unchanged. */
void xchg_table_constants(double key, xchg_model_params *m);

/* What a communicator's first calls (phase.c) ask of the choice:
 * this rank's agreement fields for call c (xchg_select_fields), and from
 * agreed fields f the model's estimate of MPI's own call, of the
 * algorithm auto would run once set up (one_node: every rank shares one
 * node) and of the set-up it needs (xchg_select_estimate). */
typedef struct xchg_select_guess {
    xchg_algo best;
    double best_t, vendor_t, setup_t, agree_t; /* seconds */
} xchg_select_guess;
void xchg_select_fields(const xchg_call *c, long long *f);
/* An agreement's modelled cost over MPI's call on an empty pattern (its
 * loop over P peers), at P ranks: what the first check waits for. */
double xchg_select_agree_share(int P);
void xchg_select_estimate(const xchg_call *c, const long long *f, int one_node,
                          xchg_select_guess *g);
/* MPI's own call as auto runs it (vendor; under SMPI its stand-in). */
xchg_algo xchg_select_mpi_own(const xchg_comm_state *cs);
/* A check decided to set cs up on agreed statistics f: the verdict's
 * reference (select.c; phase.c's have_ref says when it judges). */
void xchg_select_set_reference(xchg_comm_state *cs, const long long *f);
/* The verdict's veto on cs (slower than MPI's by the factor ratio, on
 * agreed f): blocking calls pass to MPI's again (phase.c), remembered. */
void xchg_phase_veto(xchg_comm_state *cs, const long long *f, double ratio);
/* A vetoed cs's check agreed f: moved from the veto's, it is lifted and
 * auto chooses afresh at the next call (1); else 0. */
int xchg_select_veto_moved(xchg_comm_state *cs, const long long *f);
double xchg_select_median(const double *x, unsigned long n); /* n <= 16; 0 where n is 0 */

#endif
