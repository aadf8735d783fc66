/*
 * bench_util.c - the pieces both xchg-bench modes share (bench_util.h).
 */
#include "bench_util.h"

#include "xchg.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void bench_env_fill(bench_env *e)
{
    int len;
    MPI_Get_library_version(e->mpi_library, &len);
    MPI_Get_version(&e->mpi_version, &e->mpi_subversion);
    MPI_Get_processor_name(e->host, &len);
    time_t now = time(NULL);
    strftime(e->date, sizeof e->date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
}

int bench_files_writable(const char *csv, const char *json, MPI_Comm comm)
{
    int rank, files_ok = 1;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        const char *paths[2] = {csv, json};
        for (int k = 0; k < 2; k++) {
            if (!paths[k])
                continue;
            FILE *f = fopen(paths[k], "a");
            if (!f) {
                fprintf(stderr, "xchg-bench: cannot write '%s': %s\n", paths[k], strerror(errno));
                files_ok = 0;
            } else {
                fclose(f);
            }
        }
    }
    MPI_Bcast(&files_ok, 1, MPI_INT, 0, comm);
    return files_ok;
}

void bench_first_line(const char *s, char *out, size_t n)
{
    size_t k = 0;
    while (s[k] && s[k] != '\n' && k + 1 < n) {
        out[k] = s[k];
        k++;
    }
    out[k] = '\0';
    while (k > 0 && (out[k - 1] == ' ' || out[k - 1] == ',' || out[k - 1] == '\r'))
        out[--k] = '\0';
}

void bench_csv_clean(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++)
        out[k] = (s[k] == '\n' || s[k] == '\r' || s[k] == ',') ? ' ' : s[k];
    out[k] = '\0';
}

void bench_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void bench_table_mpi_line(FILE *f, const bench_env *e)
{
    char lib[160]; /* the table's line stays short; the files have it all */
    bench_first_line(e->mpi_library, lib, sizeof lib);
    fprintf(f, "# %s (MPI %d.%d)\n", lib, e->mpi_version, e->mpi_subversion);
}

void bench_csv_head(FILE *f, const char *mode, int P, const bench_env *e)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    bench_first_line(e->mpi_library, lib, sizeof lib);
    fprintf(f, "# tool=xchg-bench %d.%d.%d\n", XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR,
            XCHG_VERSION_PATCH);
    if (mode)
        fprintf(f, "# mode=%s\n", mode);
    fprintf(f, "# P=%d\n# mpi_library=%s\n# mpi_version=%d.%d\n# host=%s\n# date=%s\n", P, lib,
            e->mpi_version, e->mpi_subversion, e->host, e->date);
}

void bench_json_head(FILE *f, const char *mode, int P, const bench_env *e)
{
    fprintf(f, "{\n  \"tool\": \"xchg-bench\",\n  \"version\": \"%d.%d.%d\",\n",
            XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR, XCHG_VERSION_PATCH);
    if (mode)
        fprintf(f, "  \"mode\": \"%s\",\n", mode);
    fprintf(f, "  \"params\": {\n    \"P\": %d,\n    \"mpi_library\": ", P);
    bench_json_str(f, e->mpi_library);
    fprintf(f, ",\n    \"mpi_version\": \"%d.%d\",\n    \"host\": ", e->mpi_version,
            e->mpi_subversion);
    bench_json_str(f, e->host);
    fprintf(f, ",\n    \"date\": \"%s\",\n", e->date);
}

/* ---- options ---------------------------------------------------------- */

char bench_opt_error[512];

int bench_bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(bench_opt_error, sizeof bench_opt_error, fmt, ap);
    va_end(ap);
    return -1;
}

int bench_opt_name(const char *arg, char *name, size_t n, const char **eq)
{
    if (strncmp(arg, "--", 2) != 0)
        return bench_bad("unexpected argument '%s'", arg);
    *eq = strchr(arg, '=');
    size_t len = *eq ? (size_t)(*eq - arg) : strlen(arg);
    if (len >= n)
        return bench_bad("unknown option '%s'", arg);
    memcpy(name, arg, len);
    name[len] = '\0';
    return 0;
}

int bench_next_opt(int argc, char **argv, int *i, const char *const valued[], size_t n,
                   char name[64], const char **val)
{
    const char *arg = argv[*i], *eq;
    *val = NULL;
    if (bench_opt_name(arg, name, 64, &eq))
        return -1;
    if (!strcmp(name, "--check") || !strcmp(name, "--quiet") || !strcmp(name, "--help") ||
        !strcmp(name, "--list"))
        return eq ? bench_bad("%s takes no value", name) : 0;
    int known = 0;
    for (size_t k = 0; k < n; k++)
        known |= strcmp(name, valued[k]) == 0;
    if (!known)
        return bench_bad("unknown option '%s'", arg);
    if (eq)
        *val = eq + 1;
    else if (*i + 1 < argc)
        *val = argv[++*i];
    else
        return bench_bad("%s needs a value", name);
    return 0;
}

int bench_parse_long(const char *opt, const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return bench_bad("%s needs an integer in [%ld, %ld], not '%s'", opt, min, max, s);
    *out = v;
    return 0;
}

int bench_parse_double(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= min && v <= max))
        return bench_bad("%s needs a number in [%g, %g], not '%s'", opt, min, max, s);
    *out = v;
    return 0;
}

int bench_parse_seed(const char *opt, const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-') /* strtoull takes "-1" */
        return bench_bad("%s needs a non-negative integer, not '%s'", opt, s);
    *out = v;
    return 0;
}

/* ---- figures ---------------------------------------------------------- */

void bench_print_times(FILE *f, const double *t, int n, const char *sep)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%.3f", i ? sep : "", t[i] * 1e6);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int bench_turn(int it, int k, int n)
{
    if (n <= 2)
        return (k + it) % (n > 0 ? n : 1);
    int strides[64], ns = 0;
    for (int s = 1; s < n && ns < 64; s++)
        if (gcd(s, n) == 1)
            strides[ns++] = s;
    long s = strides[it % ns];
    return (int)((s * k + it) % n);
}

void bench_summary(const double *t, int n, double *median, double *min, double *max,
                   double *mean)
{
    double *s = malloc(sizeof(double) * (size_t)n), sum = 0;
    if (!s) {
        *median = *min = *max = *mean = 0;
        return;
    }
    memcpy(s, t, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    for (int i = 0; i < n; i++)
        sum += s[i];
    *min = s[0];
    *max = s[n - 1];
    *median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    *mean = sum / n;
    free(s);
}

int bench_parse_suffixed(const char *s, long long *v, int *shift)
{
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    *shift = 0;
    if (*end == 'k' || *end == 'K')
        *shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        *shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        *shift = 30, end++;
    return errno || end == s || *end || *v < 0 ? -1 : 0;
}

/* "64", "4K", "1M", "1G": a power of two of bytes. */
static int parse_size(const char *s, int64_t *out)
{
    long long v;
    int shift;
    if (bench_parse_suffixed(s, &v, &shift) || v <= 0 || v > (LLONG_MAX >> 31))
        return -1;
    v <<= shift;
    if (v & (v - 1))
        return -1;
    *out = v;
    return 0;
}

int bench_parse_sizes(const char *val, int64_t *min, int64_t *max)
{
    char buf[64];
    if (strlen(val) >= sizeof buf)
        return -1;
    strcpy(buf, val);
    char *colon = strchr(buf, ':');
    if (colon)
        *colon = '\0';
    if (parse_size(buf, min) || parse_size(colon ? colon + 1 : buf, max) || *min > *max)
        return -1;
    return 0;
}
