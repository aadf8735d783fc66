/*
 * algo.h - what the alltoallv algorithms (src/alltoallv/) share and offer
 * the layers above: the one signature, the persistent hooks, and the
 * registry entry that holds every fact about an algorithm (registry.c).
 */
#ifndef XCHG_ALGO_H
#define XCHG_ALGO_H

#include "progress/progress.h"

/* The one signature of every alltoallv algorithm. Returns an MPI error code;
 * an error made with xchg_error_code() carries its own message. */
typedef int (*xchg_alltoallv_fn)(xchg_call *c);

/* Optional persistent hooks of an algorithm (xchg_alltoallv_init). init is
 * collective and does all one-time work; start only moves data (it may
 * complete the exchange or leave it in flight); test sets *flag when the
 * exchange is complete; wait completes it; free is collective (it may free
 * windows) and is called only while idle. The xchg_call lives as long as the
 * plan: its arrays are the request's own copies, its buffers the caller's
 * (sendbuf is the request's in-place copy for MPI_IN_PLACE). Temporary
 * memory a plan keeps is taken with xchg_temp_alloc on that call. An algorithm
 * without hooks gets the generic path: start runs the blocking call; so
 * does a call its fits hook (optional, collective-free, the same on every
 * rank) turns down. */
typedef struct xchg_persist_ops {
    int (*init)(xchg_call *c, void **plan);
    int (*start)(xchg_call *c, void *plan);
    int (*test)(xchg_call *c, void *plan, int *flag);
    int (*wait)(xchg_call *c, void *plan);
    int (*free)(xchg_call *c, void *plan);
    int (*fits)(const xchg_call *c); /* NULL: every call */
} xchg_persist_ops;


/* The cost model's inputs (src/select/select_internal.h). */
typedef struct xchg_model_params xchg_model_params;
typedef struct xchg_pattern_stats xchg_pattern_stats;
/* An algorithm's modelled time, seconds (src/select/model.c). */
typedef double (*xchg_model_fn)(const xchg_model_params *m, const xchg_pattern_stats *s);

/* Everything the library knows of an algorithm (one registry line). */
typedef struct xchg_algo_info {
    xchg_algo id;
    const char *name;
    const char *desc;      /* one line: when this algorithm wins */
    xchg_alltoallv_fn run;
    const xchg_persist_ops *persist; /* NULL: generic persistent path */
    xchg_model_fn model;   /* NULL: not modelled (never chosen automatically) */
    int candidate;         /* auto may choose it: its place in the order in
                              which the model's ties go (1 first); 0: never */
    int baseline;          /* 1: a reference to compare against (vendor, the
                              models of MPICH's and Open MPI's defaults):
                              never chosen by auto, tuning or "best" */
    int padded;            /* pads every block to the largest: needs about
                              2 x P x largest block of memory, agreed */
    int agrees_errors;     /* runs an agreement collective before any data
                              moves and honours xchg_call.arg_err */
    int blocking_start;    /* no coroutine form (windows, fences, locks):
                              a nonblocking start runs it at once */
    /* One-time collective setup on the node map (hierarchical's node
     * communicators), made at a point every rank reaches: prepare makes
     * it (a failure sets cs->nodes_failed), ready tells whether it is
     * made. Until then a nonblocking start runs it at once and auto
     * takes another candidate inside a coroutine; auto's model leaves it
     * out when XCHG_RANKS_PER_NODE is set or the setup failed. */
    int (*prepare)(xchg_comm_state *cs);
    int (*ready)(const xchg_comm_state *cs);
    /* Where set: whether it can run as itself on cs (the same answer on
     * every rank: agreed or from agreed facts). Auto leaves it out where
     * not, and runs its fallback instead of a cached choice of it. */
    int (*usable)(const xchg_comm_state *cs);
    /* Its own tags on the private communicator: tag .. tag + ntags - 1
     * (ntags 0: one), inside core's alltoallv range; 0: none (it sends no
     * message of its own, or only through a shared engine's tag). No two
     * entries' tags overlap (tests/registry_check.c). */
    int tag, ntags;
    /* Its own XCHG_* settings (xchg_NAME_settings: NULL-terminated, in its
     * file; read with xchg_setting_of); NULL: none. */
    const xchg_setting_def *const *settings;
} xchg_algo_info;

/* The registry (src/alltoallv/registry.c). */
const xchg_algo_info *xchg_registry_find(xchg_algo id);
const xchg_algo_info *xchg_registry_find_name(const char *name);
int xchg_registry_count(void);
const xchg_algo_info *xchg_registry_at(int i);
/* auto's candidates in their tie order (at most max); returns how many. */
int xchg_registry_candidates(const xchg_algo_info *out[], int max);
/* Algorithm id's per-communicator slot (cs->ext[...]; XCHG_EXT_ALGO plus
 * its place in the registry) and its first tag (its entry's). */
int xchg_algo_slot(xchg_algo id);
int xchg_algo_tag(xchg_algo id);
/* The i-th setting of the entries' own, entry by entry (NULL past the
 * last). */
const xchg_setting_def *xchg_registry_setting(int i);
/* 0 if every entry's tags lie in the alltoallv range and none overlaps
 * another's or a shared engine's; else 1 and *why says which. */
int xchg_registry_check_tags(char *why, size_t len);

/* The radix bruck_radix uses on P ranks (XCHG_BRUCK_RADIX or ceil(sqrt P)). */
int xchg_bruck_radix_for(const xchg_settings *s, int P);
/* The same for a radix setting (0: ceil(sqrt P)), clamped to 2..P
 * (bruck_2level's levels: XCHG_BRUCK_RADIX_INTER over nodes, _INTRA inside). */
int xchg_bruck_radix_of(int setting, int P);
/* bruck_2level's radix setting across nodes (inter) or inside them; 0:
 * unset. */
int xchg_bruck_2level_radix_set(const xchg_settings *s, int inter);
/* XCHG_LEADERS (0: unset, multileader's rule). */
long xchg_multileader_leaders_set(const xchg_settings *s);
/* multileader's leaders per node on nodes of up to L ranks, N nodes:
 * XCHG_LEADERS (setting > 0, at most L), else round(sqrt(L/N)), at least 1. */
int xchg_multileader_leaders_for(long setting, int L, int N);
/* hybrid's threshold: blocks of more bytes go directly (XCHG_HYBRID_THRESHOLD). */
size_t xchg_hybrid_threshold_for(const xchg_settings *s);

#endif /* XCHG_ALGO_H */
