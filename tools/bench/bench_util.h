/*
 * bench_util.h - what both modes of xchg-bench (alltoallv in xchg_bench.c
 * and report.c, dsde in dsde.c) share: the run's environment, the head of
 * their CSV and JSON files, text escaping, option parsing and the summary
 * of a series of times. One place, so the two outputs cannot drift apart.
 */
#ifndef XCHG_BENCH_UTIL_H
#define XCHG_BENCH_UTIL_H

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where and with what a run was made. */
typedef struct bench_env {
    int mpi_version, mpi_subversion;
    char mpi_library[MPI_MAX_LIBRARY_VERSION_STRING];
    char host[256];
    char date[32]; /* UTC, ISO 8601 */
} bench_env;

void bench_env_fill(bench_env *e);

/* Collective: rank 0 checks that the files it will write (NULL: none) can
 * be opened, saying why not on stderr; 1 on every rank when they can. */
int bench_files_writable(const char *csv, const char *json, MPI_Comm comm);

/* The first line of MPI_Get_library_version (some are several lines). */
void bench_first_line(const char *s, char *out, size_t n);
/* s with the characters that would break a CSV field made spaces. */
void bench_csv_clean(const char *s, char *out, size_t n);
/* s as a JSON string, quotes included. */
void bench_json_str(FILE *f, const char *s);

/* "# LIBRARY (MPI x.y)", the table header's line about MPI. */
void bench_table_mpi_line(FILE *f, const bench_env *e);
/* The CSV comment lines from the tool to the date; mode NULL for none. */
void bench_csv_head(FILE *f, const char *mode, int P, const bench_env *e);
/* The JSON object's start to "date" inside "params", which stays open. */
void bench_json_head(FILE *f, const char *mode, int P, const bench_env *e);

/* Options: --opt VALUE or --opt=VALUE. On a bad option the parsers return
 * -1 with the message in bench_opt_error. */
extern char bench_opt_error[512];
int bench_bad(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* arg's name ("--opt") into name[n]; *eq: its '=' or NULL. */
int bench_opt_name(const char *arg, char *name, size_t n, const char **eq);
/* The option at argv[*i] of a mode whose flags are --check, --quiet and
 * --help and whose valued options are valued[0..n): its name into
 * name[64] and, for a valued one, its value into *val (from --opt=VALUE or
 * the next argument, *i moved on to it); *val is NULL for a flag. 0, or
 * -1 with bench_opt_error set (unknown, a flag with a value, no value). */
int bench_next_opt(int argc, char **argv, int *i, const char *const valued[], size_t n,
                   char name[64], const char **val);
int bench_parse_long(const char *opt, const char *s, long min, long max, long *out);
/* --sizes' value, "MIN:MAX" or "SIZE", each a power of two of bytes with an
 * optional K, M or G ("16:64K"); 0, or -1 when it is not such a range. */
int bench_parse_sizes(const char *val, int64_t *min, int64_t *max);
/* "N" with an optional K, M or G (binary): *v = N >= 0 and *shift = 0, 10,
 * 20 or 30 (the caller bounds N before shifting); -1 where s is not that. */
int bench_parse_suffixed(const char *s, long long *v, int *shift);
int bench_parse_double(const char *opt, const char *s, double min, double max, double *out);
int bench_parse_seed(const char *opt, const char *s, unsigned long long *out);

/* t[0..n) in microseconds, %.3f, separated by sep (CSV " ", JSON ", "). */
void bench_print_times(FILE *f, const double *t, int n, const char *sep);
/* Which of n columns runs k-th in iteration it (it >= 0) when columns
 * take turns side by side: column (s k + it) mod n, with s the it-th
 * stride coprime to n (1, then the next ones up, cycling). A plain
 * rotation (s = 1 always) keeps every column behind the same one, and a
 * column's time depends on its predecessor (the barrier before it lets
 * ranks go at different instants, set by who finished the previous call
 * last): at 1024 simulated ranks the column after locality took 3 us
 * more, 4%, in every iteration. Varying the stride gives each column a
 * different predecessor in each iteration up to the number of strides, so
 * the median is free of one predecessor's effect. */
int bench_turn(int it, int k, int n);
/* median, min, max and mean of t[0..n), n > 0 (t is left as it was). */
void bench_summary(const double *t, int n, double *median, double *min, double *max,
                   double *mean);

#endif /* XCHG_BENCH_UTIL_H */
