/*
 * test_auto.c - the cached automatic choice and its nonblocking refresh.
 *
 * xchg_alltoallv caches the agreed choice on the communicator. The first
 * call agrees, blocking, on its own statistics. A later call refreshes the
 * choice (a nonblocking agreement of that call's statistics, completed
 * before it returns; the next call uses it) on a schedule every rank keeps
 * alike: after a refresh that confirms the choice on statistics that did
 * not move, the interval to the next refresh doubles, up to
 * XCHG_AUTO_REFRESH (and a cap from the model); a new choice resets it to
 * one call. A tuning table with one rule for small blocks (bruck_radix)
 * and one for large (pairwise) makes the choice follow the pattern
 * deterministically, so the test can say which algorithm each call must
 * run. Checks, every call: the result equals MPI_Alltoallv's, the
 * algorithm (xchg_get_stats) is the same on all ranks and is the one the
 * schedule gives, when
 *   - the pattern flips between tiny and large blocks every call;
 *   - only rank 0's counts change, in its block to itself (no other rank's
 *     own counts or statistics show it);
 *   - the statistics are stale (calls after a change of pattern, before
 *     the next refresh);
 * with a refresh on every call (XCHG_AUTO_REFRESH=1) and with the
 * back-off (XCHG_AUTO_REFRESH=4, the schedule computed here); with the
 * default setting, a change after a long stable run is picked up within
 * XCHG_AUTO_REFRESH calls (16 here);
 *   - a padded algorithm is cached and the next pattern no longer fits
 *     XCHG_MAX_TEMP_BYTES (it must re-agree, not fail);
 *   - hierarchical is chosen (by a table rule) for nonblocking calls
 *     before its node communicators exist: another algorithm runs (never a
 *     split inside the exchange), the same on every rank, until a blocking
 *     call has made them;
 *   - MPI refuses hierarchical's split (MPI_Comm_split wrapped here): the
 *     call fails with one error class on every rank, and from the next
 *     call on auto runs another algorithm (the failure is agreed), so
 *     later calls succeed;
 * and communicators created, used (refresh included) and freed many times
 * neither hang nor fail. The persistent API chooses once, at init, from
 * its own counts.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;

/* MPI_Comm_split refused on every rank while set (hierarchical's node
 * split; the test itself makes none): what MPI does when it has no
 * communicator left. */
static int refuse_splits;
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (refuse_splits) {
        *newcomm = MPI_COMM_NULL;
        return MPI_ERR_COMM;
    }
    return PMPI_Comm_split(comm, color, key, newcomm);
}
static int last_err; /* exchange_as's return code */

enum { TINY = 0, LARGE = 1, SELF_LARGE = 2 };

/* One exchange on comm: blocks of 1..4 bytes (TINY), 4096.. bytes
 * (LARGE), or tiny blocks except a large one to itself (SELF_LARGE: no
 * other rank can see it) from this rank; returns the algorithm xchg ran, *correct when
 * the result equals MPI_Alltoallv's. */
static xchg_algo exchange_as(int kind, MPI_Comm comm, int *correct, int nonblocking)
{
    int *sc = calloc(P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = kind == LARGE || (kind == SELF_LARGE && j == rank)
                    ? 4096 + (rank * 13 + j * 7) % 100
                    : 1 + (rank + j) % 4;
    a2av_bytes x;
    a2av_bytes_make(&x, sc, comm);
    int e;
    if (nonblocking) {
        xchg_request req = NULL;
        e = xchg_ialltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE, comm,
                            &req);
        if (e == MPI_SUCCESS)
            e = xchg_wait(req);
        if (req)
            xchg_request_free(&req);
    } else {
        e = xchg_alltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE, comm);
    }
    *correct = e == MPI_SUCCESS && a2av_bytes_same(&x);
    last_err = e;
    xchg_stats s;
    xchg_get_stats(comm, &s);
    a2av_bytes_free(&x);
    return e == MPI_SUCCESS ? s.algo : XCHG_ALGO_INVALID;
}

static xchg_algo exchange(int kind, MPI_Comm comm, int *correct)
{
    return exchange_as(kind, comm, correct, 0);
}

/* The algorithm the table gives a pattern where rank 0 sends kind0 and the
 * others send kind (the busiest rank decides). */
static xchg_algo rule_for(int any_large, xchg_algo small_rule)
{
    return any_large ? XCHG_ALGO_PAIRWISE : small_rule;
}

/* Runs a sequence of patterns on a fresh communicator made with
 * XCHG_AUTO_REFRESH=most; kinds[i] is what rank 0 sends at call i, others
 * send kinds[i] too unless only_rank0. Checks each call against the
 * schedule of select.c, computed here: call 0 agrees on its own pattern
 * and call min(most, 8) refreshes (select.c's FIRST_REFRESH); a refresh
 * on call i chooses from call i's
 * pattern for call i+1 and sets the interval to the next refresh to 1 if
 * the choice changed (every change of kind here changes the choice and
 * moves the statistics), else to twice the last one, at most `most`. (The
 * model's own cap, an agreement's cost over 1% of the call's, is above 4
 * for these patterns at 2-8 ranks; one rank agrees for free: cap 1.) */
static void sequence(const char *name, const int *kinds, int n, int only_rank0,
                     xchg_algo small_rule, int most)
{
    char val[16];
    snprintf(val, sizeof val, "%d", most);
    setenv("XCHG_AUTO_REFRESH", val, 1); /* read when comm's state is made */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ok_all = 1, same_all = 1, follow_all = 1;
    char label[200];
    int cap = P == 1 ? 1 : most;
    xchg_algo choice = XCHG_ALGO_INVALID;
    int interval = 1, next = 1, have = 0;
    for (int i = 0; i < n; i++) {
        /* only_rank0: rank 0's large block goes to itself, so no other
         * rank's own counts show the change: only the agreement does */
        int kind = !only_rank0 ? kinds[i] : rank != 0 ? TINY : kinds[i] ? SELF_LARGE : TINY;
        int ok;
        xchg_algo a = exchange(kind, comm, &ok);
        xchg_algo now = rule_for(kinds[i] == LARGE, small_rule), want;
        if (!have) { /* blocking, on its own pattern */
            want = choice = now;
            have = 1;
            interval = cap < 8 ? cap : 8;
            next = i + interval;
        } else {
            want = choice;
            if (i >= next) { /* this call refreshes: the next one follows it */
                interval = now == choice ? (2 * interval > cap ? cap : 2 * interval) : 1;
                next = i + interval;
                choice = now;
            }
        }
        ok_all &= ok;
        same_all &= check_same_everywhere((int)a, comm);
        if (a != want) {
            follow_all = 0;
            if (rank == 0)
                fprintf(stderr, "%s: call %d ran %s, expected %s\n", name, i,
                        xchg_algo_name(a) ? xchg_algo_name(a) : "?", xchg_algo_name(want));
        }
    }
    snprintf(label, sizeof label, "%s (XCHG_AUTO_REFRESH=%d): results equal MPI_Alltoallv", name,
             most);
    CHECK_ALL(ok_all, "%s", label);
    snprintf(label, sizeof label, "%s (XCHG_AUTO_REFRESH=%d): same algorithm on all ranks every call",
             name, most);
    CHECK_ALL(same_all, "%s", label);
    snprintf(label, sizeof label, "%s (XCHG_AUTO_REFRESH=%d): each call runs the choice the refresh "
             "schedule gives", name, most);
    CHECK_ALL(follow_all, "%s", label);
    MPI_Comm_free(&comm);
    unsetenv("XCHG_AUTO_REFRESH");
}

/* A long stable run, then another pattern for good: from XCHG_AUTO_REFRESH
 * calls after the change on, every call runs the new pattern's choice (the
 * interval never exceeds it), the same on all ranks, correctly. */
static void pickup(int most)
{
    char val[16];
    snprintf(val, sizeof val, "%d", most);
    setenv("XCHG_AUTO_REFRESH", val, 1);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int ok_all = 1, same_all = 1, late = -1, n = 5 * most + 3;
    for (int i = 0; i < 2 * n; i++) {
        int ok;
        xchg_algo a = exchange(i < n ? TINY : LARGE, comm, &ok);
        ok_all &= ok;
        same_all &= check_same_everywhere((int)a, comm);
        if (i >= n + most && a != XCHG_ALGO_PAIRWISE && late < 0)
            late = i;
    }
    if (late >= 0 && rank == 0)
        fprintf(stderr, "pickup: call %d (change at %d) still ran the old choice\n", late, n);
    char label[160];
    snprintf(label, sizeof label, "pickup (XCHG_AUTO_REFRESH=%d): correct, same everywhere", most);
    CHECK_ALL(ok_all && same_all, "%s", label);
    snprintf(label, sizeof label,
             "pickup (XCHG_AUTO_REFRESH=%d): a change is followed within that many calls", most);
    CHECK_ALL(late < 0, "%s", label);
    MPI_Comm_free(&comm);
    unsetenv("XCHG_AUTO_REFRESH");
}

static char table_path[128];

/* A table file per content: xchg reads a file again only when its name
 * changes. */
static void write_table(const char *small_algo)
{
    if (table_path[0])
        remove(table_path);
    snprintf(table_path, sizeof table_path, "/tmp/xchg-test-auto-%d-%d-%s", (int)getpid(),
             rank, small_algo);
    FILE *f = fopen(table_path, "w");
    fprintf(f, "# test_auto: small blocks -> %s, large -> pairwise\n"
               "rule 1 1000000 0 256 %s\n"
               "rule 1 1000000 257 1000000000000 pairwise\n", small_algo, small_algo);
    fclose(f);
    setenv("XCHG_TUNING_FILE", table_path, 1);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsetenv("XCHG_ALLTOALLV_ALGO");
    setenv("XCHG_AUTO_MIN_P", "1", 1); /* agree at every P */
    write_table("bruck_radix");

    /* flips every call */
    int flip[12];
    for (int i = 0; i < 12; i++)
        flip[i] = i % 2 ? LARGE : TINY;
    /* runs of one pattern: calls after a change run a stale choice */
    int runs[40] = {TINY,  TINY,  TINY,  LARGE, LARGE, LARGE, TINY,  TINY,  LARGE, TINY,
                    TINY,  TINY,  TINY,  TINY,  TINY,  TINY,  TINY,  TINY,  TINY,  TINY,
                    TINY,  LARGE, LARGE, LARGE, LARGE, LARGE, LARGE, LARGE, LARGE, LARGE,
                    LARGE, LARGE, LARGE, LARGE, TINY,  TINY,  TINY,  TINY,  TINY,  TINY};
    for (int most = 1; most <= 4; most += 3) {
        sequence("flip every call", flip, 12, 0, XCHG_ALGO_BRUCK_RADIX, most);
        sequence("only rank 0 changes", flip, 12, 1, XCHG_ALGO_BRUCK_RADIX, most);
        sequence("stale calls after a change", runs, 40, 0, XCHG_ALGO_BRUCK_RADIX, most);
        sequence("stale, only rank 0 changes", runs, 40, 1, XCHG_ALGO_BRUCK_RADIX, most);
    }
    pickup(16);

    /* A padded algorithm cached, then blocks whose padding exceeds the
     * memory limit: the call re-agrees on its own statistics (pairwise),
     * never runs the padded one into a refusal. */
    write_table("bruck_padded");
    setenv("XCHG_MAX_TEMP_BYTES", "4096", 1); /* tiny fits, large (2 x P x 4 KiB) not */
    {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int ok1, ok2, ok3;
        xchg_algo a1 = exchange(TINY, comm, &ok1);
        xchg_algo a2 = exchange(TINY, comm, &ok2);
        xchg_algo a3 = exchange(LARGE, comm, &ok3);
        CHECK_ALL(ok1 && ok2 && a1 == XCHG_ALGO_BRUCK_PADDED && a2 == XCHG_ALGO_BRUCK_PADDED,
                  "padded: a table rule for small blocks is followed");
        CHECK_ALL(ok3 && a3 != XCHG_ALGO_BRUCK_PADDED && a3 != XCHG_ALGO_PADDED_ALLTOALL &&
                  check_same_everywhere((int)a3, comm),
                  "padded: a cached padded choice re-agrees when the blocks no longer fit");
        MPI_Comm_free(&comm);
    }
    unsetenv("XCHG_MAX_TEMP_BYTES");
    write_table("bruck_radix");

    /* Create, use (the second call refreshes the choice), free: many
     * times, nothing left in flight, no hang, always correct. */
    {
        int cycles = P == 1 ? 2000 : 100, ok_all = 1;
        for (int i = 0; i < cycles; i++) {
            MPI_Comm comm;
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
            int ok;
            exchange(i % 2 ? LARGE : TINY, comm, &ok);
            ok_all &= ok;
            exchange(TINY, comm, &ok);
            ok_all &= ok;
            MPI_Comm_free(&comm);
        }
        CHECK_ALL(ok_all, "create/use/free cycles: correct, no hang");
    }

    /* persistent: chosen once at init from its own counts */
    {
        int *c = malloc(sizeof(int) * P), *d = malloc(sizeof(int) * P);
        for (int j = 0; j < P; j++) {
            c[j] = 4096;
            d[j] = j * 4096;
        }
        char *sb = calloc((size_t)P * 4096, 1), *rb = calloc((size_t)P * 4096, 1);
        xchg_request req;
        int e = xchg_alltoallv_init(sb, c, d, MPI_BYTE, rb, c, d, MPI_BYTE, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &req);
        CHECK_ALL(e == MPI_SUCCESS && xchg_request_algo(req) == XCHG_ALGO_PAIRWISE,
                  "persistent init chooses from its own counts");
        if (e == MPI_SUCCESS) {
            xchg_start(req);
            xchg_wait(req);
            xchg_request_free(&req);
        }
        free(c); free(d); free(sb); free(rb);
    }

    /* hierarchical splits its node communicators on first use, which a
     * nonblocking exchange cannot do inside its coroutine: auto runs the
     * model's best other algorithm there until a blocking call (or a
     * nonblocking start on a multi-node communicator) has made them, then
     * hierarchical; the same on every rank, always correct. Nodes of 2
     * ranks (XCHG_RANKS_PER_NODE) so that it has several. */
    write_table("hierarchical");
    setenv("XCHG_RANKS_PER_NODE", "2", 1);
    {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int ok[5];
        xchg_algo a[5];
        a[0] = exchange_as(TINY, comm, &ok[0], 1); /* nothing made yet */
        a[1] = exchange_as(TINY, comm, &ok[1], 1);
        a[2] = exchange_as(TINY, comm, &ok[2], 0); /* makes them */
        a[3] = exchange_as(TINY, comm, &ok[3], 1);
        a[4] = exchange_as(TINY, comm, &ok[4], 0);
        int same = 1;
        for (int i = 0; i < 5; i++)
            same &= check_same_everywhere((int)a[i], comm);
        CHECK_ALL(ok[0] && ok[1] && ok[2] && ok[3] && ok[4] && same,
                  "hierarchical by table, blocking and nonblocking: correct, same everywhere");
        CHECK_ALL(P == 1 ? a[0] == XCHG_ALGO_HIERARCHICAL && a[1] == a[0]
                  : a[0] != XCHG_ALGO_HIERARCHICAL && a[0] != XCHG_ALGO_INVALID && a[1] == a[0],
                  "hierarchical by table: a nonblocking call before its communicators exist runs another algorithm");
        CHECK_ALL(a[2] == XCHG_ALGO_HIERARCHICAL && a[3] == XCHG_ALGO_HIERARCHICAL &&
                  a[4] == XCHG_ALGO_HIERARCHICAL,
                  "hierarchical by table: run once a blocking call has made its communicators");
        MPI_Comm_free(&comm);
    }

    /* The split refused on every rank: the exchange fails alike on every
     * rank, then (the failure agreed) auto runs something else. */
    {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        refuse_splits = 1;
        int ok[4], cls[4], alike = 1, settled = 1;
        xchg_algo a[4];
        for (int i = 0; i < 4; i++) {
            if (i == 3)
                refuse_splits = 0;
            a[i] = exchange_as(TINY, comm, &ok[i], i == 3);
            cls[i] = MPI_SUCCESS;
            if (last_err != MPI_SUCCESS)
                MPI_Error_class(last_err, &cls[i]);
            /* each call: all ranks right, or all failed with one class */
            int lo_ok, hi_ok;
            MPI_Allreduce(&ok[i], &lo_ok, 1, MPI_INT, MPI_MIN, comm);
            MPI_Allreduce(&ok[i], &hi_ok, 1, MPI_INT, MPI_MAX, comm);
            alike &= lo_ok == hi_ok && check_same_everywhere(cls[i], comm) &&
                     check_same_everywhere((int)a[i], comm) && (ok[i] || cls[i] != MPI_SUCCESS);
        }
        refuse_splits = 0;
        settled = ok[1] && ok[2] && ok[3] && a[1] != XCHG_ALGO_HIERARCHICAL &&
                  a[2] != XCHG_ALGO_HIERARCHICAL && a[3] != XCHG_ALGO_HIERARCHICAL;
        CHECK_ALL(alike, "hierarchical's split refused: every call ends alike on every rank");
        CHECK_ALL(P == 1 ? ok[0] : !ok[0] && cls[0] == MPI_ERR_COMM,
                  "hierarchical's split refused: the call fails with MPI's class");
        CHECK_ALL(P == 1 || settled,
                  "hierarchical's split refused: auto then runs another algorithm, correctly");
        MPI_Comm_free(&comm);
    }
    unsetenv("XCHG_RANKS_PER_NODE");

    unsetenv("XCHG_TUNING_FILE");
    remove(table_path);
    if (rank == 0)
        printf("test_auto on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
