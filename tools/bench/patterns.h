/*
 * patterns.h - the count patterns of xchg-bench.
 *
 * A pattern gives the size of the block rank i sends to rank j at iteration
 * `iter` as a pure function of (seed, i, j, iter, parameters), so every rank
 * computes its own sends (row i) and receives (column i) without any
 * communication and without the P x P matrix, and the same seed gives the
 * same counts on every run, with any MPI, at any rank count of the same P.
 *
 * Sizes are in elements of `elem_bytes` bytes; `avg` is the mean block size
 * in elements (the benchmark's message size divided by the element size).
 */
#ifndef XCHG_BENCH_PATTERNS_H
#define XCHG_BENCH_PATTERNS_H

#include "record_file.h"

#include <stdint.h>

typedef enum bench_pattern_kind {
    PAT_UNIFORM,   /* every block avg */
    PAT_RANDOM,    /* uniform in [0, 2 avg] */
    PAT_SPARSE,    /* ceil(density P) partners per rank, new ones every iteration */
    PAT_ZIPF,      /* a rank's volume P avg over its destinations by Zipf's law */
    PAT_HOT,       /* hot_fraction of every rank's volume to `hot` receivers */
    PAT_TRANSPOSE, /* slab transpose of an unevenly split 2-D grid of doubles */
    PAT_FILE,      /* a recorded shape (XCHG_RECORD), replayed: record_file.h */
    PAT_COUNT
} bench_pattern_kind;

typedef struct bench_pattern {
    bench_pattern_kind kind;
    uint64_t seed;
    double density;      /* sparse: fraction of ranks each rank sends to */
    double zipf_s;       /* zipf: exponent (0 = uniform) */
    int hot;             /* hot: number of hot receivers */
    double hot_fraction; /* hot: share of each rank's volume they get */
    const bench_record *rec; /* file: the recorded shape */
} bench_pattern;

/* "uniform" ... "transpose", "file"; NULL for an invalid kind. */
const char *bench_pattern_name(bench_pattern_kind kind);
/* PAT_COUNT for an unknown name. */
bench_pattern_kind bench_pattern_from_name(const char *name);
/* Whether counts change from one iteration to the next. */
int bench_pattern_varies(const bench_pattern *p);

/* Per (pattern, P, avg) constants; cheap to build, O(P). */
typedef struct bench_layout {
    const bench_pattern *p;
    int P;
    int64_t avg;         /* mean block, elements */
    int elem_bytes;
    double zipf_h;       /* zipf: sum of 1/r^s, r = 1..P */
    int64_t n1, n2;      /* transpose: global grid */
    int64_t sparse_k;    /* sparse: partners per rank */
} bench_layout;

int bench_layout_init(bench_layout *l, const bench_pattern *p, int P, int64_t avg,
                      int elem_bytes);

/* Block size in elements that rank i sends to rank j at iteration iter. */
int64_t bench_count(const bench_layout *l, int i, int j, long iter);

/* send[j] = count(me, j), recv[i] = count(i, me). */
void bench_row_col(const bench_layout *l, int me, long iter, int64_t *send, int64_t *recv);

#endif /* XCHG_BENCH_PATTERNS_H */
