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

static int col_width(const bench_run *r, int a)
{
    int w = (int)strlen(bench_algo_label(r->algos[a])) + 2;
    return w < 12 ? 12 : w;
}

void report_table_header(FILE *f, const bench_run *r, bench_pattern_kind pat)
{
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
    bench_table_mpi_line(f, &r->env);
    fprintf(f, "# %s; speedup = vendor / best\n", show_what[r->show]);
    fprintf(f, "%-11s", "# Size");
    for (int a = 0; a < r->nalgos; a++)
        fprintf(f, "%*s", col_width(r, a), bench_algo_label(r->algos[a]));
    fprintf(f, "  %-16s %8s\n", "best", "speedup");
    fflush(f);
}

/* row points at nalgos consecutive results of one size, algos in order. */
void report_table_row(FILE *f, const bench_run *r, const bench_result *row)
{
    fprintf(f, "%-11" PRId64, row[0].size);
    int best = -1;
    for (int a = 0; a < r->nalgos; a++) {
        const bench_result *x = &row[a];
        int w = col_width(r, a);
        if (x->status != ST_OK) {
            fprintf(f, " %*s", w - 1, "-");
            continue;
        }
        /* best: the fastest algorithm proper (auto runs one of them) */
        if (a > 0 && r->algos[a] != XCHG_ALGO_AUTO && (best < 0 || x->median < row[best].median))
            best = a;
        switch (r->show) {
        case SHOW_MEDIAN: fprintf(f, " %*.2f", w - 1, x->median * 1e6); break;
        case SHOW_MIN: fprintf(f, " %*.2f", w - 1, x->min * 1e6); break;
        case SHOW_MAX: fprintf(f, " %*.2f", w - 1, x->max * 1e6); break;
        case SHOW_MEM: fprintf(f, " %*" PRIu64, w - 1, x->temp_bytes); break;
        }
    }
    if (best >= 0 && row[0].status == ST_OK && row[best].median > 0)
        fprintf(f, "  %-16s %7.2fx\n", bench_algo_label(r->algos[best]),
                row[0].median / row[best].median);
    else
        fprintf(f, "  %-16s %8s\n", best >= 0 ? bench_algo_label(r->algos[best]) : "-", "-");
    fflush(f);
}

void report_table_footer(FILE *f, const bench_run *r, const bench_result *res, int n)
{
    fprintf(f, "# temporary memory, bytes, most over ranks and sizes:");
    for (int a = 0; a < r->nalgos; a++) {
        uint64_t most = 0;
        int any = 0;
        for (int k = 0; k < n; k++)
            if (res[k].algo == a && res[k].status == ST_OK) {
                any = 1;
                most = res[k].temp_bytes > most ? res[k].temp_bytes : most;
            }
        if (any)
            fprintf(f, " %s %" PRIu64 "%s", bench_algo_label(r->algos[a]), most,
                    a + 1 < r->nalgos ? "," : "");
        else
            fprintf(f, " %s -%s", bench_algo_label(r->algos[a]), a + 1 < r->nalgos ? "," : "");
    }
    fprintf(f, "\n");
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

int report_csv(const char *path, const bench_run *r, const bench_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bench_csv_head(f, NULL, r->P, &r->env);
    fprintf(f, "# type=%s\n# seed=%" PRIu64 "\n# iters=%d\n# warmup=%d\n", bench_type_name(r),
            r->base.seed, r->iters, r->warmup);
    fprintf(f, "# density=%g\n# zipf_s=%g\n# hot=%d\n# hot_fraction=%g\n# check=%d\n",
            r->base.density, r->base.zipf_s, r->base.hot, r->base.hot_fraction, r->check);
    fprintf(f, "pattern,size_bytes,avg_bytes,algo,ran,status,median_us,min_us,max_us,"
               "mean_us,temp_bytes,speedup_vs_vendor,error,times_us\n");
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        char err[256];
        bench_csv_clean(x->error, err, sizeof err);
        fprintf(f, "%s,%" PRId64 ",%.6g,%s,%s,%s,", bench_pattern_name(x->pattern), x->size,
                x->avg_bytes, bench_algo_label(r->algos[x->algo]), x->ran,
                status_name(x->status));
        if (x->status == ST_OK)
            fprintf(f, "%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%.4f,%s,", x->median * 1e6,
                    x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes,
                    speedup(res, n, x), err);
        else
            fprintf(f, ",,,,,,%s,", err);
        if (x->status == ST_OK)
            bench_print_times(f, x->times, r->iters, " ");
        fprintf(f, "\n");
    }
    return fclose(f) == 0 ? 0 : -1;
}

int report_json(const char *path, const bench_run *r, const bench_result *res, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    bench_json_head(f, NULL, r->P, &r->env);
    fprintf(f, "    \"patterns\": [");
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
        bench_json_str(f, x->ran);
        fprintf(f, ", \"status\": \"%s\"", status_name(x->status));
        if (x->status == ST_OK) {
            fprintf(f, ", \"median_us\": %.3f, \"min_us\": %.3f, \"max_us\": %.3f, "
                       "\"mean_us\": %.3f, \"temp_bytes\": %" PRIu64 ", \"speedup_vs_vendor\": %.4f,"
                       " \"times_us\": [",
                    x->median * 1e6, x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes,
                    speedup(res, n, x));
            bench_print_times(f, x->times, r->iters, ", ");
            fprintf(f, "]");
        } else {
            fprintf(f, ", \"error\": ");
            bench_json_str(f, x->error);
        }
        fprintf(f, "}%s\n", k + 1 < n ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f) == 0 ? 0 : -1;
}
