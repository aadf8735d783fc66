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

/* Column c of a row: algorithm c % nalgos, persistent from nalgos on. */
static const char *col_label(const bench_run *r, int c)
{
    return bench_col_label(r, c % r->nalgos, c >= r->nalgos);
}

static int col_width(const bench_run *r, int a)
{
    int w = (int)strlen(col_label(r, a)) + 2;
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
    if (r->persistent)
        fprintf(f, "# NAME+p: persistent request, xchg_alltoallv_init once per size (its time,"
                   " slowest rank, on the '# init' line), then xchg_start + xchg_wait timed%s\n",
                bench_pattern_varies(&(bench_pattern){.kind = pat})
                    ? "; every column keeps iteration 0's counts" : "");
    fprintf(f, "%-11s", "# Size");
    for (int a = 0; a < bench_ncols(r); a++)
        fprintf(f, "%*s", col_width(r, a), col_label(r, a));
    fprintf(f, "  %-16s %8s\n", "best", "speedup");
    fflush(f);
}

/* row points at nalgos consecutive results of one size, algos in order. */
void report_table_row(FILE *f, const bench_run *r, const bench_result *row)
{
    fprintf(f, "%-11" PRId64, row[0].size);
    int best = -1;
    for (int a = 0; a < bench_ncols(r); a++) {
        const bench_result *x = &row[a];
        int w = col_width(r, a);
        if (x->status != ST_OK) {
            fprintf(f, " %*s", w - 1, "-");
            continue;
        }
        /* best: the fastest algorithm proper (auto runs one of them; vendor+p
         * is the baseline's own persistent form) */
        xchg_algo id = r->algos[x->algo];
        if (id != XCHG_ALGO_VENDOR && id != XCHG_ALGO_AUTO &&
            (best < 0 || x->median < row[best].median))
            best = a;
        switch (r->show) {
        case SHOW_MEDIAN: fprintf(f, " %*.2f", w - 1, x->median * 1e6); break;
        case SHOW_MIN: fprintf(f, " %*.2f", w - 1, x->min * 1e6); break;
        case SHOW_MAX: fprintf(f, " %*.2f", w - 1, x->max * 1e6); break;
        case SHOW_MEM: fprintf(f, " %*" PRIu64, w - 1, x->temp_bytes); break;
        }
    }
    if (best >= 0 && row[0].status == ST_OK && row[best].median > 0)
        fprintf(f, "  %-16s %7.2fx\n", col_label(r, best), row[0].median / row[best].median);
    else
        fprintf(f, "  %-16s %8s\n", best >= 0 ? col_label(r, best) : "-", "-");
    if (r->persistent) { /* init times under their columns */
        fprintf(f, "%-11s", "# init");
        for (int a = 0; a < bench_ncols(r); a++) {
            int w = col_width(r, a);
            if (a < r->nalgos || row[a].status != ST_OK)
                fprintf(f, " %*s", w - 1, a < r->nalgos ? "" : "-");
            else
                fprintf(f, " %*.2f", w - 1, row[a].init * 1e6);
        }
        fprintf(f, "\n");
    }
    fflush(f);
}

void report_table_footer(FILE *f, const bench_run *r, const bench_result *res, int n)
{
    fprintf(f, "# temporary memory, bytes, most over ranks and sizes:");
    int nc = bench_ncols(r);
    for (int a = 0; a < nc; a++) {
        uint64_t most = 0;
        int any = 0, pers = a >= r->nalgos;
        for (int k = 0; k < n; k++)
            if (res[k].algo == a % r->nalgos && res[k].persistent == pers &&
                res[k].status == ST_OK) {
                any = 1;
                most = res[k].temp_bytes > most ? res[k].temp_bytes : most;
            }
        if (any)
            fprintf(f, " %s %" PRIu64 "%s", col_label(r, a), most, a + 1 < nc ? "," : "");
        else
            fprintf(f, " %s -%s", col_label(r, a), a + 1 < nc ? "," : "");
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
        if (res[k].algo == 0 && !res[k].persistent && res[k].pattern == x->pattern && res[k].size == x->size)
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
    /* --persistent only: its fields last, so that the others keep their
     * places; persistent rows are named NAME+p */
    if (r->persistent)
        fprintf(f, "# persistent=1\n");
    fprintf(f, "pattern,size_bytes,avg_bytes,algo,ran,status,median_us,min_us,max_us,"
               "mean_us,temp_bytes,speedup_vs_vendor,error,times_us%s\n",
            r->persistent ? ",mode,init_us" : "");
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        char err[256];
        bench_csv_clean(x->error, err, sizeof err);
        fprintf(f, "%s,%" PRId64 ",%.6g,%s,%s,%s,", bench_pattern_name(x->pattern), x->size,
                x->avg_bytes, bench_col_label(r, x->algo, x->persistent), x->ran,
                status_name(x->status));
        if (x->status == ST_OK)
            fprintf(f, "%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",%.4f,%s,", x->median * 1e6,
                    x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes,
                    speedup(res, n, x), err);
        else
            fprintf(f, ",,,,,,%s,", err);
        if (x->status == ST_OK)
            bench_print_times(f, x->times, r->iters, " ");
        if (r->persistent) {
            fprintf(f, ",%s,", x->persistent ? "persistent" : "oneshot");
            if (x->persistent && x->status == ST_OK)
                fprintf(f, "%.3f", x->init * 1e6);
        }
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
    if (r->persistent) /* results then hold NAME+p rows too */
        fprintf(f, "    \"persistent\": true,\n");
    fprintf(f, "    \"density\": %g,\n    \"zipf_s\": %g,\n    \"hot\": %d,\n"
               "    \"hot_fraction\": %g\n  },\n  \"results\": [\n",
            r->base.density, r->base.zipf_s, r->base.hot, r->base.hot_fraction);
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        fprintf(f, "    {\"pattern\": \"%s\", \"size_bytes\": %" PRId64
                   ", \"avg_bytes\": %.6g, \"algo\": \"%s\", \"ran\": ",
                bench_pattern_name(x->pattern), x->size, x->avg_bytes,
                bench_col_label(r, x->algo, x->persistent));
        bench_json_str(f, x->ran);
        fprintf(f, ", \"status\": \"%s\"", status_name(x->status));
        if (r->persistent) {
            fprintf(f, ", \"mode\": \"%s\"", x->persistent ? "persistent" : "oneshot");
            if (x->persistent && x->status == ST_OK)
                fprintf(f, ", \"init_us\": %.3f", x->init * 1e6);
        }
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
