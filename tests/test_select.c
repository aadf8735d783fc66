/*
 * test_select.c - the automatic choice is the same on every rank.
 *
 * Counts differ from rank to rank, so a choice made from local data alone
 * would differ and hang; the selector shares statistics first. Checks:
 * the chosen algorithm is identical on all ranks for several patterns;
 * a tuning-table rule is obeyed; a table that only some ranks can read is
 * ignored everywhere (no hang, same choice); a table's model constants
 * (no rule) change the choice; results stay correct.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;

/* Runs xchg_alltoallv on a pattern with per-rank scale; returns the chosen
 * algorithm and checks the result against MPI_Alltoallv. */
static xchg_algo run_pattern(int scale, int sparse, int *correct)
{
    int *sc = calloc(P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = sparse && (rank + j) % 3 ? 0 : scale * (1 + (rank * 7 + j * 3) % 5) * (rank + 1);
    a2av_bytes x;
    a2av_bytes_make(&x, sc, MPI_COMM_WORLD);
    int e = xchg_alltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE,
                           MPI_COMM_WORLD);
    *correct = e == MPI_SUCCESS && a2av_bytes_same(&x);
    xchg_stats s;
    xchg_get_stats(MPI_COMM_WORLD, &s);
    a2av_bytes_free(&x);
    return s.algo;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsetenv("XCHG_ALLTOALLV_ALGO");
    setenv("XCHG_AUTO_MIN_P", "1", 1); /* exercise the shared statistics at every P */
    char label[128];
    int ok;
    xchg_algo a;

    const int scales[] = {0, 1, 16, 1024, 65536};
    for (int i = 0; i < 5; i++)
        for (int sparse = 0; sparse < 2; sparse++) {
            a = run_pattern(scales[i], sparse, &ok);
            snprintf(label, sizeof label, "scale %d sparse %d: correct", scales[i], sparse);
            CHECK_ALL(ok, "%s", label);
            snprintf(label, sizeof label, "scale %d sparse %d: same choice on all ranks (%s)",
                     scales[i], sparse, xchg_algo_name(a) ? xchg_algo_name(a) : "?");
            CHECK_ALL(check_same_everywhere((int)a, MPI_COMM_WORLD) &&
                          strcmp(xchg_algo_name(a), "invalid") != 0,
                      "%s", label);
            snprintf(label, sizeof label, "scale %d sparse %d: auto never runs a baseline (%s)",
                     scales[i], sparse, xchg_algo_name(a) ? xchg_algo_name(a) : "?");
            CHECK_ALL(!xchg_algo_is_baseline(a), "%s", label);
        }

    /* the baselines are exactly vendor and the two MPI models */
    int nbase = 0;
    for (int i = 0; i < xchg_algo_count(); i++)
        nbase += xchg_algo_is_baseline(xchg_algo_at(i));
    CHECK_ALL(nbase == 3 && xchg_algo_is_baseline(XCHG_ALGO_VENDOR) &&
              xchg_algo_is_baseline(XCHG_ALGO_MPICH_MODEL) &&
              xchg_algo_is_baseline(XCHG_ALGO_OMPI_MODEL) &&
              !xchg_algo_is_baseline(XCHG_ALGO_AUTO) && !xchg_algo_is_baseline(XCHG_ALGO_LINEAR) &&
              !xchg_algo_is_baseline(XCHG_ALGO_INVALID),
              "xchg_algo_is_baseline: vendor, mpich_model, ompi_model only");

    /* a tuning table with a rule for every case */
    char path[64];
    snprintf(path, sizeof path, "/tmp/xchg-test-table-%d-%d", (int)getpid(), rank);
    FILE *f = fopen(path, "w");
    fprintf(f, "# test table\nalpha 1e-6\nrule 1 1000000 0 1000000000000 pairwise\n");
    fclose(f);
    setenv("XCHG_TUNING_FILE", path, 1);
    /* the table is part of the agreed statistics: the choice made at the
     * end of this call (cached) follows it from the next call on */
    run_pattern(16, 0, &ok);
    CHECK_ALL(run_pattern(16, 0, &ok) == XCHG_ALGO_PAIRWISE && ok, "a tuning-table rule is obeyed");

    /* a rule naming a baseline is ignored: the model decides instead (a
     * file of its own: tables are cached by path) */
    char bpath[80];
    snprintf(bpath, sizeof bpath, "%s-baseline", path);
    f = fopen(bpath, "w");
    fprintf(f, "# test table\nrule 1 1000000 0 1000000000000 mpich_model\n");
    fclose(f);
    setenv("XCHG_TUNING_FILE", bpath, 1);
    a = run_pattern(16, 0, &ok);
    CHECK_ALL(ok && !xchg_algo_is_baseline(a), "a tuning-table rule naming a baseline is ignored");
    remove(bpath);
    setenv("XCHG_TUNING_FILE", path, 1);

    /* only rank 0 has a table: ignored everywhere, same choice, no hang */
    if (rank != 0)
        setenv("XCHG_TUNING_FILE", "/nonexistent/xchg-table", 1);
    a = run_pattern(16, 0, &ok);
    CHECK_ALL(ok && check_same_everywhere((int)a, MPI_COMM_WORLD),
              "a table one rank lacks: same choice everywhere");
    a = run_pattern(16, 0, &ok);
    CHECK_ALL(ok && check_same_everywhere((int)a, MPI_COMM_WORLD),
              "a table one rank lacks: same choice everywhere");
    if (P > 1)
        CHECK_ALL(a != XCHG_ALGO_PAIRWISE, "a table one rank lacks is ignored");
    unsetenv("XCHG_TUNING_FILE");
    remove(path);

    /* A table's model constants change the model's ranking, not only the
     * sizes its rules cover (no rule here). A post costing 1 ms makes the
     * direct algorithms (2 (P-1) posts) lose to a log P one at 4 and from
     * 6 ranks on (at 5, Bruck's 3 rounds cost 3 x 2 x 1.4 = 8.4 posts in
     * the model against linear's 8); a copied byte costing 1 ms makes
     * every algorithm that copies lose to them. Without the constants,
     * auto runs linear here. */
    static const struct { const char *line; int direct; } consts[] = {
        {"overhead 1e-3", 0}, {"copy 1e-3", 1}};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/tmp/xchg-test-const%d-%d-%d", i, (int)getpid(), rank);
        f = fopen(path, "w");
        fprintf(f, "# test table, constants only\n%s\n", consts[i].line);
        fclose(f);
        setenv("XCHG_TUNING_FILE", path, 1);
        /* a refresh on a scheduled call sees the new table; the call
         * after it runs the choice: four calls cover the schedule here */
        for (int k = 0; k < 3; k++)
            run_pattern(16, 0, &ok);
        a = run_pattern(16, 0, &ok);
        int direct = a == XCHG_ALGO_LINEAR || a == XCHG_ALGO_SCATTERED || a == XCHG_ALGO_PAIRWISE;
        snprintf(label, sizeof label, "a table's \"%s\" is in the model (auto ran %s)",
                 consts[i].line, xchg_algo_name(a) ? xchg_algo_name(a) : "?");
        CHECK_ALL(ok && check_same_everywhere((int)a, MPI_COMM_WORLD) &&
                      (P < 4 || (P == 5 && !consts[i].direct) || direct == consts[i].direct),
                  "%s", label);
        unsetenv("XCHG_TUNING_FILE");
        remove(path);
    }

    int tot[2] = {npass, nfail};
    if (rank == 0)
        printf("test_select on %d ranks: %d passed, %d failed\n", P, tot[0], tot[1]);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
