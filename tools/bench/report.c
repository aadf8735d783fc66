/*
 * report.c - xchg-bench's output: an OSU-style table on stdout (comment
 * lines start with '#', one row per size, one column per algorithm), and
 * CSV and JSON files with every figure and the run's parameters.
 */
#include "bench.h"

#include <inttypes.h>
#include <string.h>

static const char *const show_what[] = {
    "median over iterations of the slowest rank's time, microseconds",
    "fastest iteration (slowest rank's time), microseconds",
    "slowest iteration (slowest rank's time), microseconds",
    "temporary memory of the algorithm, bytes, most over ranks and iterations"};

/* The first line of MPI_Get_library_version (some are several lines). */
static void first_line(const char *s, char *out, size_t n)
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

static int col_width(const bench_run *r, int a)
{
    int w = (int)strlen(bench_algo_label(r->algos[a])) + 2;
    return w < 11 ? 11 : w;
}

void report_table_header(FILE *f, const bench_run *r, bench_pattern_kind pat)
{
    char lib[160];
    first_line(r->mpi_library, lib, sizeof lib);
    fprintf(f, "# xchg-bench %d.%d.%d, pattern %s", XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR,
            XCHG_VERSION_PATCH, bench_pattern_name(pat));
    if (pat == PAT_SPARSE)
        fprintf(f, " (density %g)", r->base.density);
    else if (pat == PAT_ZIPF)
        fprintf(f, " (s %g)", r->base.zipf_s);
    else if (pat == PAT_HOT)
        fprintf(f, " (%d hot, fraction %g)", r->base.hot, r->base.hot_fraction);
    fprintf(f, ", %d ranks, %s, seed %" PRIu64 ", %d iterations after %d warm-up\n", r->P,
            bench_type_name(r), r->base.seed, r->iters, r->warmup);
    fprintf(f, "# %s (MPI %d.%d)\n", lib, r->mpi_version, r->mpi_subversion);
    fprintf(f, "# %s; speedup = vendor / best\n", show_what[r->show]);
    fprintf(f, "%-10s", "# Size");
    for (int a = 0; a < r->nalgos; a++)
        fprintf(f, "%*s", col_width(r, a), bench_algo_label(r->algos[a]));
    fprintf(f, "  %-16s %8s\n", "best", "speedup");
    fflush(f);
}

/* row points at nalgos consecutive results of one size, algos in order. */
void report_table_row(FILE *f, const bench_run *r, const bench_result *row)
{
    fprintf(f, "%-10" PRId64, row[0].size);
    int best = -1;
    for (int a = 0; a < r->nalgos; a++) {
        const bench_result *x = &row[a];
        int w = col_width(r, a);
        if (x->status != ST_OK) {
            fprintf(f, "%*s", w, "-");
            continue;
        }
        if (a > 0 && (best < 0 || x->median < row[best].median))
            best = a;
        switch (r->show) {
        case SHOW_MEDIAN: fprintf(f, "%*.2f", w, x->median * 1e6); break;
        case SHOW_MIN: fprintf(f, "%*.2f", w, x->min * 1e6); break;
        case SHOW_MAX: fprintf(f, "%*.2f", w, x->max * 1e6); break;
        case SHOW_MEM: fprintf(f, "%*" PRIu64, w, x->temp_bytes); break;
        }
    }
    if (best >= 0 && row[0].status == ST_OK && row[best].median > 0)
        fprintf(f, "  %-16s %7.2fx\n", bench_algo_label(r->algos[best]),
                row[0].median / row[best].median);
    else
        fprintf(f, "  %-16s %8s\n", best >= 0 ? bench_algo_label(r->algos[best]) : "-", "-");
    fflush(f);
}

static const char *status_name(bench_status s)
{
    return s == ST_OK ? "ok" : s == ST_ERROR ? "error" : "skipped";
}

/* vendor's result of the same pattern and size, or NULL */
static const bench_result *vendor_of(const bench_result *res, int n, const bench_result *x)
{
    for (int k = 0; k < n; k++)
        if (res[k].algo == 0 && res[k].pattern == x->pattern && res[k].size == x->size)
            return &res[k];
    return NULL;
}

static double speedup(const bench_result *res, int n, const bench_result *x)
{
    const bench_result *v = vendor_of(res, n, x);
    if (!v || v->status != ST_OK || x->status != ST_OK || x->median <= 0)
        return 0;
    return v->median / x->median;
}

static void csv_clean(const char *s, char *out, size_t n)
{
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++)
        out[k] = (s[k] == '\n' || s[k] == '\r' || s[k] == ',') ? ' ' : s[k];
    out[k] = '\0';
}

int report_csv(const char *path, const bench_run *r, const bench_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    first_line(r->mpi_library, lib, sizeof lib);
    fprintf(f, "# tool=xchg-bench %d.%d.%d\n# P=%d\n# mpi_library=%s\n# mpi_version=%d.%d\n",
            XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR, XCHG_VERSION_PATCH, r->P, lib,
            r->mpi_version, r->mpi_subversion);
    fprintf(f, "# host=%s\n# date=%s\n# type=%s\n# seed=%" PRIu64 "\n# iters=%d\n# warmup=%d\n",
            r->host, r->date, bench_type_name(r), r->base.seed, r->iters, r->warmup);
    fprintf(f, "# density=%g\n# zipf_s=%g\n# hot=%d\n# hot_fraction=%g\n# check=%d\n",
            r->base.density, r->base.zipf_s, r->base.hot, r->base.hot_fraction, r->check);
    fprintf(f, "pattern,size_bytes,avg_bytes,algo,ran,status,median_us,min_us,max_us,"
               "mean_us,temp_bytes,speedup_vs_vendor,error,times_us\n");
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        char err[256];
        csv_clean(x->error, err, sizeof err);
        fprintf(f, "%s,%" PRId64 ",%.6g,%s,%s,%s,", bench_pattern_name(x->pattern), x->size,
                x->avg_bytes, bench_algo_label(r->algos[x->algo]), x->ran,
                status_name(x->status));
        if (x->status == ST_OK)
            fprintf(f, "%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%.4f,%s,", x->median * 1e6,
                    x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes,
                    speedup(res, n, x), err);
        else
            fprintf(f, ",,,,,,%s,", err);
        for (int i = 0; x->status == ST_OK && i < r->iters; i++)
            fprintf(f, "%s%.3f", i ? " " : "", x->times[i] * 1e6);
        fprintf(f, "\n");
    }
    return fclose(f) == 0 ? 0 : -1;
}

static void json_str(FILE *f, const char *s)
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

int report_json(const char *path, const bench_run *r, const bench_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\n  \"tool\": \"xchg-bench\",\n  \"version\": \"%d.%d.%d\",\n",
            XCHG_VERSION_MAJOR, XCHG_VERSION_MINOR, XCHG_VERSION_PATCH);
    fprintf(f, "  \"params\": {\n    \"P\": %d,\n    \"mpi_library\": ", r->P);
    json_str(f, r->mpi_library);
    fprintf(f, ",\n    \"mpi_version\": \"%d.%d\",\n    \"host\": ", r->mpi_version,
            r->mpi_subversion);
    json_str(f, r->host);
    fprintf(f, ",\n    \"date\": \"%s\",\n    \"patterns\": [", r->date);
    for (int p = 0; p < r->npatterns; p++)
        fprintf(f, "%s\"%s\"", p ? ", " : "", bench_pattern_name(r->patterns[p]));
    fprintf(f, "],\n    \"algos\": [");
    for (int a = 0; a < r->nalgos; a++)
        fprintf(f, "%s\"%s\"", a ? ", " : "", bench_algo_label(r->algos[a]));
    fprintf(f, "],\n    \"size_min\": %" PRId64 ",\n    \"size_max\": %" PRId64 ",\n",
            r->size_min, r->size_max);
    fprintf(f, "    \"type\": \"%s\",\n    \"seed\": %" PRIu64 ",\n    \"iters\": %d,\n"
               "    \"warmup\": %d,\n    \"check\": %s,\n",
            bench_type_name(r), r->base.seed, r->iters, r->warmup, r->check ? "true" : "false");
    fprintf(f, "    \"density\": %g,\n    \"zipf_s\": %g,\n    \"hot\": %d,\n"
               "    \"hot_fraction\": %g\n  },\n  \"results\": [\n",
            r->base.density, r->base.zipf_s, r->base.hot, r->base.hot_fraction);
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        fprintf(f, "    {\"pattern\": \"%s\", \"size_bytes\": %" PRId64
                   ", \"avg_bytes\": %.6g, \"algo\": \"%s\", \"ran\": ",
                bench_pattern_name(x->pattern), x->size, x->avg_bytes,
                bench_algo_label(r->algos[x->algo]));
        json_str(f, x->ran);
        fprintf(f, ", \"status\": \"%s\"", status_name(x->status));
        if (x->status == ST_OK) {
            fprintf(f, ", \"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                       "\"mean_us\": %.3f, \"temp_bytes\": %" PRIu64 ", \"speedup_vs_vendor\": %.4f,"
                       " \"times_us\": [",
                    x->median * 1e6, x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes,
                    speedup(res, n, x));
            for (int i = 0; i < r->iters; i++)
                fprintf(f, "%s%.3f", i ? ", " : "", x->times[i] * 1e6);
            fprintf(f, "]");
        } else {
            fprintf(f, ", \"error\": ");
            json_str(f, x->error);
        }
        fprintf(f, "}%s\n", k + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}
