/*
 * report.c - xchg-bench's output: an OSU-style table on stdout (comment
 * lines start with '#', one row per size, one column per algorithm), and
 * CSV and JSON files with every figure and the run's parameters.
 */
#include "bench.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Decimals of the tables' times (XCHG_BENCH_DIGITS, 0-9, default 2): more
 * where two runs are compared to the nanosecond (sim/same-charges). */
static int table_digits(void)
{
    static int d = -1;
    if (d < 0) {
        const char *e = getenv("XCHG_BENCH_DIGITS");
        d = e && e[0] >= '0' && e[0] <= '9' && !e[1] ? e[0] - '0' : 2;
    }
    return d;
}

/* Labels of the run's columns (bench.h), shared by the table and the files. */
const char *bench_algo_label(xchg_algo a)
{
    const char *n = xchg_algo_name(a);
    return n ? n : "?";
}

int bench_ncols(const bench_run *r)
{
    return r->nalgos * (r->persistent ? 2 : 1);
}

const char *bench_col_label(const bench_run *r, int algo, int persistent)
{
    static char plabel[BENCH_MAX_ALGOS][48];
    const char *n = bench_algo_label(r->algos[algo]);
    if (!persistent)
        return n;
    snprintf(plabel[algo], sizeof plabel[algo], "%s+p", n);
    return plabel[algo];
}

const char *bench_type_name(const bench_run *r)
{
    return r->type_double ? "MPI_DOUBLE" : "MPI_BYTE";
}

static const char *const show_what[] = {
    "median over iterations of the slowest rank's time, microseconds",
    "fastest iteration (slowest rank's time), microseconds",
    "slowest iteration (slowest rank's time), microseconds",
    "temporary memory of the algorithm, bytes, most over ranks and iterations"};

/* What speedups are quoted against. On a real MPI: the library's own
 * MPI_Alltoallv (vendor). Under SMPI, whose MPI_Alltoallv is SimGrid's and
 * neither MPICH's nor Open MPI's: the models of the two libraries' defaults
 * (xchg-bench always runs them there). */
#ifdef XCHG_SMPI
static const xchg_algo refs[] = {XCHG_ALGO_MPICH_MODEL, XCHG_ALGO_OMPI_MODEL};
static const char *const ref_short[] = {"mpich", "ompi"};
#define VENDOR_LABEL "smpi_vendor"
#else
static const xchg_algo refs[] = {XCHG_ALGO_VENDOR};
static const char *const ref_short[] = {"vendor"};
#define VENDOR_LABEL "vendor"
#endif
enum { NREFS = (int)(sizeof refs / sizeof refs[0]) };

/* The one-shot column of algorithm a, or -1 if it did not run. */
static int algo_col(const bench_run *r, xchg_algo a)
{
    for (int k = 0; k < r->nalgos; k++)
        if (r->algos[k] == a)
            return k;
    return -1;
}

/* Column c of a row: algorithm c % nalgos, persistent from nalgos on. The
 * table names SMPI's own MPI_Alltoallv smpi_vendor (files keep "vendor",
 * the algorithm's name, and say what it is in their parameters). */
static const char *col_label(const bench_run *r, int c)
{
    if (r->algos[c % r->nalgos] == XCHG_ALGO_VENDOR)
        return c >= r->nalgos ? VENDOR_LABEL "+p" : VENDOR_LABEL;
    return bench_col_label(r, c % r->nalgos, c >= r->nalgos);
}

/* The table's speedup columns: per reference, best's then auto's. */
static void speedup_col_name(int k, int of_auto, char *out, size_t n)
{
    if (NREFS == 1)
        snprintf(out, n, "speedup_%s", of_auto ? "auto" : "best");
    else
        snprintf(out, n, "%s_vs_%s", of_auto ? "auto" : "best", ref_short[k]);
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
    else if (pat == PAT_FILE)
        fprintf(f, " (%s, shape %d of %d, %lu calls recorded at P=%d%s)", r->rec.path,
                r->rec.index, r->rec.nshapes, r->rec.calls, r->rec.P0,
                r->rec.P0 == r->P ? "" : ", scaled");
    fprintf(f, ", %d ranks, %s, seed %" PRIu64 ", %d iterations after %d warm-up\n", r->P,
            bench_type_name(r), r->base.seed, r->iters, r->warmup);
    bench_table_mpi_line(f, &r->env);
    fprintf(f, "# %s\n", show_what[r->show]);
#ifdef XCHG_SMPI
    fprintf(f, "# smpi_vendor = SMPI's own MPI_Alltoallv (SimGrid's), not MPICH's or Open MPI's;"
               " mpich_model, ompi_model = models of MPICH 4.0's and Open MPI 4.1's default"
               " MPI_Alltoallv\n");
    fprintf(f, "# best = fastest algorithm other than the baselines (vendor, mpich_model,"
               " ompi_model) and auto; X_vs_mpich = mpich_model / X, X_vs_ompi = ompi_model / X,"
               " for X = best and auto (what xchg_alltoallv gives)\n");
#else
    fprintf(f, "# best = fastest algorithm other than the baselines (vendor, mpich_model,"
               " ompi_model) and auto; speedup_best = vendor / best, speedup_auto = vendor /"
               " auto (what xchg_alltoallv gives)\n");
#endif
    if (r->persistent)
        fprintf(f, "# NAME+p: persistent request, xchg_alltoallv_init once per size (its time,"
                   " slowest rank, on the '# init' line), then xchg_start + xchg_wait timed%s\n",
                bench_pattern_varies(&(bench_pattern){.kind = pat})
                    ? "; every column keeps iteration 0's counts" : "");
    fprintf(f, "%-11s", "# Size");
    for (int a = 0; a < bench_ncols(r); a++)
        fprintf(f, "%*s", col_width(r, a), col_label(r, a));
    fprintf(f, "  %-16s", "best");
    for (int k = 0; k < NREFS; k++)
        for (int of_auto = 0; of_auto < 2; of_auto++) {
            char name[32];
            speedup_col_name(k, of_auto, name, sizeof name);
            fprintf(f, " %13s", name);
        }
    fprintf(f, "\n");
    fflush(f);
}

/* ref's time over x's, "-" when either is missing or failed */
static void print_speedup(FILE *f, const bench_result *row, int ref, int x)
{
    if (ref < 0 || x < 0 || row[ref].status != ST_OK || row[x].status != ST_OK ||
        row[x].median <= 0)
        fprintf(f, " %13s", "-");
    else
        fprintf(f, " %12.2fx", row[ref].median / row[x].median);
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
        /* best: the fastest algorithm proper, never a baseline (nor its
         * persistent form) nor auto (which runs one of them) */
        xchg_algo id = r->algos[x->algo];
        if (!xchg_algo_is_baseline(id) && id != XCHG_ALGO_AUTO &&
            (best < 0 || x->median < row[best].median))
            best = a;
        switch (r->show) {
        case SHOW_MEDIAN: fprintf(f, " %*.*f", w - 1, table_digits(), x->median * 1e6); break;
        case SHOW_MIN: fprintf(f, " %*.*f", w - 1, table_digits(), x->min * 1e6); break;
        case SHOW_MAX: fprintf(f, " %*.*f", w - 1, table_digits(), x->max * 1e6); break;
        case SHOW_MEM: fprintf(f, " %*" PRIu64, w - 1, x->temp_bytes); break;
        }
    }
    fprintf(f, "  %-16s", best >= 0 ? col_label(r, best) : "-");
    int autoc = algo_col(r, XCHG_ALGO_AUTO);
    for (int k = 0; k < NREFS; k++) {
        int ref = algo_col(r, refs[k]);
        print_speedup(f, row, ref, best);
        print_speedup(f, row, ref, autoc);
    }
    fprintf(f, "\n");
    if (r->persistent) { /* init times under their columns */
        fprintf(f, "%-11s", "# init");
        for (int a = 0; a < bench_ncols(r); a++) {
            int w = col_width(r, a);
            if (a < r->nalgos || row[a].status != ST_OK)
                fprintf(f, " %*s", w - 1, a < r->nalgos ? "" : "-");
            else
                fprintf(f, " %*.*f", w - 1, table_digits(), row[a].init * 1e6);
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

/* The one-shot result of algorithm index ai at x's pattern and size, or NULL */
static const bench_result *result_of(const bench_result *res, int n, int ai,
                                     const bench_result *x)
{
    for (int k = 0; k < n; k++)
        if (res[k].algo == ai && !res[k].persistent && res[k].pattern == x->pattern &&
            res[k].size == x->size)
            return &res[k];
    return NULL;
}

/* The time of algorithm index ai over x's (0 when either failed) */
static double speedup(const bench_result *res, int n, int ai, const bench_result *x)
{
    const bench_result *v = result_of(res, n, ai, x);
    if (!v || v->status != ST_OK || x->status != ST_OK || x->median <= 0)
        return 0;
    return v->median / x->median;
}

/* The files' speedup fields: over vendor (algos[0]), then over each model
 * of an MPI library's default, empty where that model did not run. */
static const xchg_algo file_refs[] = {XCHG_ALGO_VENDOR, XCHG_ALGO_MPICH_MODEL,
                                      XCHG_ALGO_OMPI_MODEL};
static const char *const file_ref_field[] = {"speedup_vs_vendor", "speedup_vs_mpich_model",
                                             "speedup_vs_ompi_model"};
enum { NFILE_REFS = 3 };

/* What "vendor" is in this build, for the files' parameters. */
#ifdef XCHG_SMPI
#define VENDOR_IS "smpi"
#else
#define VENDOR_IS "mpi_library"
#endif

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
    /* vendor=smpi: the vendor rows are SMPI's own MPI_Alltoallv, neither
     * MPICH's nor Open MPI's; mpi_library: the MPI library's */
    fprintf(f, "# vendor=%s\n", VENDOR_IS);
    if (r->persistent)
        fprintf(f, "# persistent=1\n");
    fprintf(f, "pattern,size_bytes,avg_bytes,algo,ran,status,median_us,min_us,max_us,"
               "mean_us,temp_bytes,speedup_vs_vendor,speedup_vs_mpich_model,"
               "speedup_vs_ompi_model,error,times_us%s\n",
            r->persistent ? ",mode,init_us" : "");
    for (int k = 0; k < n; k++) {
        const bench_result *x = &res[k];
        char err[256];
        bench_csv_clean(x->error, err, sizeof err);
        fprintf(f, "%s,%" PRId64 ",%.6g,%s,%s,%s,", bench_pattern_name(x->pattern), x->size,
                x->avg_bytes, bench_col_label(r, x->algo, x->persistent), x->ran,
                status_name(x->status));
        if (x->status == ST_OK) {
            fprintf(f, "%.3f,%.3f,%.3f,%.3f,%" PRIu64 ",", x->median * 1e6, x->min * 1e6,
                    x->max * 1e6, x->mean * 1e6, x->temp_bytes);
            for (int k = 0; k < NFILE_REFS; k++) {
                int ai = algo_col(r, file_refs[k]);
                if (ai >= 0)
                    fprintf(f, "%.4f", speedup(res, n, ai, x));
                fprintf(f, ",");
            }
            fprintf(f, "%s,", err);
        } else {
            fprintf(f, ",,,,,,,,%s,", err);
        }
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
    fprintf(f, "    \"vendor\": \"%s\",\n", VENDOR_IS);
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
                       "\"mean_us\": %.3f, \"temp_bytes\": %" PRIu64,
                    x->median * 1e6, x->min * 1e6, x->max * 1e6, x->mean * 1e6, x->temp_bytes);
            for (int k = 0; k < NFILE_REFS; k++) {
                int ai = algo_col(r, file_refs[k]);
                if (ai >= 0)
                    fprintf(f, ", \"%s\": %.4f", file_ref_field[k], speedup(res, n, ai, x));
            }
            fprintf(f, ", \"times_us\": [");
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
