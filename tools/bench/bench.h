/*
 * bench.h - what xchg-bench's parts share: the run's parameters and one
 * measured result per (pattern, size, algorithm).
 */
#ifndef XCHG_BENCH_H
#define XCHG_BENCH_H

#include "bench_util.h"
#include "patterns.h"
#include "record_load.h"
#include "xchg.h"

#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_ALGOS 64

/* What the table shows per algorithm (--show). */
typedef enum { SHOW_MEDIAN, SHOW_MIN, SHOW_MAX, SHOW_MEM } bench_show;

typedef struct bench_run {
    /* options */
    bench_pattern base;               /* seed and pattern parameters */
    bench_pattern_kind patterns[PAT_COUNT];
    int npatterns;
    int64_t size_min, size_max;       /* average message bytes, powers of two */
    xchg_algo algos[BENCH_MAX_ALGOS]; /* algos[0] is vendor */
    int nalgos;
    int iters, warmup;
    int type_double;                  /* MPI_DOUBLE instead of MPI_BYTE */
    int check, quiet;
    int persistent;                   /* also each algorithm as a persistent request */
    bench_show show;
    const char *csv, *json;
    const char *file_spec;            /* --pattern file:SPEC (PAT_FILE) */
    bench_record rec;                 /* its shape, loaded on every rank */
    /* the run */
    int P;
    bench_env env;
} bench_run;

typedef enum { ST_OK, ST_ERROR, ST_SKIPPED } bench_status;

typedef struct bench_result {
    bench_pattern_kind pattern;
    int64_t size;           /* nominal average message bytes */
    double avg_bytes;       /* actual mean block bytes over all P^2 blocks */
    int algo;               /* index in run->algos */
    int persistent;         /* 1: xchg_alltoallv_init once, then start + wait timed */
    double init;            /* persistent: init's time, slowest rank, seconds */
    bench_status status;
    char error[256];        /* why, when not ST_OK */
    char ran[32];           /* what xchg_get_stats says ran ("auto" resolved) */
    double *times;          /* iters figures: max over ranks, seconds */
    double median, min, max, mean;
    uint64_t temp_bytes;    /* max over ranks and iterations */
} bench_result;

/* Column labels (report.c). */
const char *bench_algo_label(xchg_algo a);
/* Columns per size: the algorithms, then with --persistent each again as a
 * persistent request ("NAME+p"). Column c is algos[c % nalgos]. */
int bench_ncols(const bench_run *r);
/* The column's name: the algorithm's, "+p" appended when persistent. */
const char *bench_col_label(const bench_run *r, int algo, int persistent);
const char *bench_type_name(const bench_run *r);

/* report.c: stdout table (rank 0 only) and files. */
void report_table_header(FILE *f, const bench_run *r, bench_pattern_kind pat);
void report_table_row(FILE *f, const bench_run *r, const bench_result *row);
/* After a pattern's rows (res: its n results): temporary memory per algorithm. */
void report_table_footer(FILE *f, const bench_run *r, const bench_result *res, int n);
int report_csv(const char *path, const bench_run *r, const bench_result *res, int n);
int report_json(const char *path, const bench_run *r, const bench_result *res, int n);

#endif /* XCHG_BENCH_H */
