/*
 * test_setup_phase.c - a communicator's first calls (src/select/phase.c).
 *
 * xchg_alltoallv passes a new communicator's calls to MPI's own
 * MPI_Alltoallv until set-up pays back, then sets up at a call every rank
 * agrees on. Checks, against MPI_Alltoallv on the same inputs (every
 * pattern, layout and pair of datatypes of a2av_cases, in place too):
 *   - short-lived communicators (made, used K = 1..8 times, freed; some
 *     split in two): every result right, every call's algorithm and
 *     whether MPI ran it the same on every rank, the first three calls
 *     MPI's own (XCHG_SETUP_AT unset: a communicator used 3 times pays no
 *     set-up);
 *   - a long-lived communicator (300 calls): right results, every rank
 *     switches at the same call and never back; with XCHG_SETUP_AT=N set,
 *     exactly at call N;
 *   - a tuning table's set-up constants (setup_round, setup_window) move
 *     that call: never at 1,000 s a round (where the defaults set up);
 *   - blocking, nonblocking and persistent calls mixed during the first
 *     calls: right results (a nonblocking call is MPI's own as a blocking
 *     one is; a persistent call sets the communicator up, and blocking
 *     calls after it are xchg's);
 *   - nonblocking first calls, two in flight at once, on communicators
 *     used 1-12 times: right results, every call's algorithm the same on
 *     every rank, the first three MPI's own; an argument error in a first nonblocking call on
 *     every rank: each gets it with no request, none hangs;
 *   - an argument error on every rank at call e (1..8) of a communicator:
 *     each rank gets it, none hangs, the other calls are right;
 *   - the measured verdict (select.c): where xchg's own traffic is made
 *     slow (this program's MPI_Isend, MPI_Irecv and MPI_Win_sync sleep
 *     SLOW_US first; MPI's own call, which the first calls run, does not
 *     call them), a communicator set up by a check runs MPI's own from
 *     call set-up + 20 on, on every rank, passed to it from the next,
 *     results right (2 ranks or more: one rank's exchange is a local
 *     copy), chooses afresh once the statistics move, and a later
 *     communicator of its size does not set up; with
 *     XCHG_SETUP_AT (no check, no reference) it keeps its choice;
 *   - where the MPI has large counts, the short-lived, long-lived and
 *     argument-error cases again through xchg_alltoallv_c (its first
 *     calls are MPI_Alltoallv_c).
 * Run under the sanitizer (scripts/test), freed communicators leak nothing.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;
static const char *entry = "xchg_alltoallv"; /* or xchg_alltoallv_c */

/* xchg's own point-to-point and window traffic made slow (test_verdict):
 * libxchg calls MPI_Isend, MPI_Irecv and MPI_Win_sync, which these
 * definitions take over (the profiling interface); MPI's own
 * MPI_Alltoallv does not. A sleep, so that an oversubscribed core runs
 * the other ranks meanwhile. 20 ms: with another job on the cores MPI's
 * own calls here took 5-8 ms, and the veto must be clear (more than
 * 1.25 times MPI's) to be remembered for a later communicator. */
enum { SLOW_US = 20000 };
static int slow;

static void slow_down(void)
{
    struct timespec t = {0, SLOW_US * 1000L};
    if (slow)
        nanosleep(&t, NULL);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    slow_down();
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    slow_down();
    return PMPI_Irecv(buf, count, type, src, tag, comm, req);
}

int MPI_Win_sync(MPI_Win win)
{
    slow_down();
    return PMPI_Win_sync(win);
}

#if XCHG_HAVE_LARGE_COUNT
/* The same call through the large-count entry. */
static int alltoallv_c(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                       const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    MPI_Count *cnt = calloc(2 * (size_t)n, sizeof(MPI_Count));
    MPI_Aint *dsp = calloc(2 * (size_t)n, sizeof(MPI_Aint));
    const int send = sb != MPI_IN_PLACE && sc && sd;
    for (int j = 0; j < n; j++) {
        cnt[n + j] = rc[j];
        dsp[n + j] = rd[j];
        if (send) {
            cnt[j] = sc[j];
            dsp[j] = sd[j];
        }
    }
    int r = xchg_alltoallv_c(sb, send ? cnt : NULL, send ? dsp : NULL, st, rb, cnt + n, dsp + n,
                             rt, comm);
    free(cnt);
    free(dsp);
    return r;
}
#endif

static int alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                     const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
#if XCHG_HAVE_LARGE_COUNT
    if (strcmp(entry, "xchg_alltoallv_c") == 0)
        return alltoallv_c(sb, sc, sd, st, rb, rc, rd, rt, comm);
#endif
    return xchg_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
}

static int run_xchg(void *ctx, const void *sb, const int sc[], const int sd[], MPI_Datatype st,
                    void *rb, const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    (void)ctx;
    return alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
}

/* One call of case number i on comm, checked; *passed: MPI ran it. */
static int one_call(MPI_Comm comm, int i, int *passed, int *algo, char *why, size_t len)
{
    int crank, cP;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &cP);
    int np = 0, nl = 0, nt = 0;
    while (a2av_patterns[np])
        np++;
    while (a2av_layouts[nl])
        nl++;
    while (a2av_types[nt])
        nt++;
    a2av_case c;
    int in_place = i % 5 == 2;
    if (a2av_case_build(&c, comm, a2av_patterns[i % np], a2av_layouts[(i / np) % nl],
                        in_place ? "int" : a2av_types[i % nt], in_place, 1000u + (unsigned)i) != 0) {
        snprintf(why, len, "case %d could not be built", i);
        return 0;
    }
    int ok = a2av_case_check(&c, comm, run_xchg, NULL, why, len);
    xchg_stats s;
    xchg_get_stats(comm, &s);
    *passed = s.passed_to_mpi;
    *algo = (int)s.algo;
    a2av_case_free(&c);
    return ok;
}

static long setup_at_env(void)
{
    const char *e = getenv("XCHG_SETUP_AT");
    return e && *e ? atol(e) : 0;
}

static void test_short_lived(void)
{
    static const int Ks[] = {1, 2, 3, 4, 5, 8};
    const long at = setup_at_env();
    for (size_t k = 0; k < sizeof Ks / sizeof Ks[0]; k++) {
        for (int rep = 0; rep < 3; rep++) {
            MPI_Comm comm;
            int color = rep == 2 && P > 2 ? rank % 2 : 0;
            MPI_Comm_split(MPI_COMM_WORLD, color, P - rank, &comm);
            int ok = 1, consistent = 1, mpi_first = 1;
            char why[512] = "", what[700];
            for (int call = 1; call <= Ks[k]; call++) {
                int passed, algo;
                if (!one_call(comm, (int)k * 7 + rep * 3 + call, &passed, &algo, why, sizeof why))
                    ok = 0;
                consistent &= check_same_everywhere(passed, comm) & check_same_everywhere(algo, comm);
                if (call <= 3 && (at == 0 || call < at))
                    mpi_first &= passed == XCHG_PASSED_BEFORE_SETUP && algo == XCHG_ALGO_VENDOR;
            }
            MPI_Comm_free(&comm);
            snprintf(what, sizeof what, "%s K=%d rep %d: results (%s)", entry, Ks[k], rep, why);
            CHECK_ALL(ok, "%s", what);
            snprintf(what, sizeof what, "%s K=%d rep %d: every rank ran the same", entry, Ks[k],
                     rep);
            CHECK_ALL(consistent, "%s", what);
            snprintf(what, sizeof what, "%s K=%d rep %d: the first calls are MPI's own", entry,
                     Ks[k], rep);
            CHECK_ALL(mpi_first, "%s", what);
        }
    }
}

/* 300 calls on a duplicate of MPI_COMM_WORLD, each checked; the call at
 * which it set up (0: never) into *switched. Once set up, a call passes
 * to MPI's only where the verdict measured the choice slower (on this
 * oversubscribed machine it may). */
static void long_lived_run(const char *label, int *switched)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int ok = 1, consistent = 1, back = 0;
    char why[512] = "", what[700];
    *switched = 0;
    for (int call = 1; call <= 300; call++) {
        int passed, algo;
        if (!one_call(comm, call * 3, &passed, &algo, why, sizeof why))
            ok = 0;
        consistent &= check_same_everywhere(passed, comm) & check_same_everywhere(algo, comm);
        if (!passed && !*switched)
            *switched = call;
        if (passed && *switched && passed != XCHG_PASSED_SLOWER)
            back = 1;
    }
    MPI_Comm_free(&comm);
    snprintf(what, sizeof what, "%s%s 300 calls: results (%s)", entry, label, why);
    CHECK_ALL(ok, "%s", what);
    CHECK_ALL(consistent, "%s%s 300 calls: every rank ran the same", entry, label);
    CHECK_ALL(!back, "%s%s 300 calls: never back to MPI's call once set up", entry, label);
    if (rank == 0)
        printf("%s%s 300 calls: set up at call %d (0: never)\n", entry, label, *switched);
}

static void test_long_lived(void)
{
    const long at = setup_at_env();
    int switched;
    long_lived_run("", &switched);
    if (at > 0) {
        char what[200];
        snprintf(what, sizeof what, "%s XCHG_SETUP_AT=%ld: set up at call %d", entry, at,
                 switched);
        CHECK_ALL(switched == at, "%s", what);
    }
}

/* XCHG_TUNING_FILE is a table of the two set-up constants alone, read on
 * every rank (written by rank 0). */
static void use_table(const char *path, const char *text)
{
    if (rank == 0) {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(text, f);
            fclose(f);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("XCHG_TUNING_FILE", path, 1);
}

/* A tuning table's setup_round and setup_window (xchg-tune measures them)
 * are the costs auto weighs: at 1,000 s a round a long-lived
 * communicator never sets up in 300 calls (at 1 s it did, at 2 ranks
 * under Open MPI beside two simulations: its calls took about 5 ms
 * there), where with the defaults it
 * does (at a nanosecond, printed: it sets up where its check sees a
 * saving). Skipped where XCHG_SETUP_AT decides, or where the defaults
 * see no saving (nothing to move). */
static void test_table_setup_costs(void)
{
    if (setup_at_env() > 0 || getenv("XCHG_TUNING_FILE"))
        return;
    int def, slow, fast;
    long_lived_run(" (model's set-up costs)", &def);
    char slow_path[64], fast_path[64];
    snprintf(slow_path, sizeof slow_path, "setup-phase-slow-%d.txt", P);
    snprintf(fast_path, sizeof fast_path, "setup-phase-fast-%d.txt", P);
    use_table(slow_path, "# a set-up that never pays\nsetup_round 1000\nsetup_window 1000\n");
    long_lived_run(" (setup_round 1000 s)", &slow);
    use_table(fast_path, "setup_round 1e-9\nsetup_window 1e-9\n");
    long_lived_run(" (setup_round 1 ns)", &fast);
    unsetenv("XCHG_TUNING_FILE");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        remove(slow_path);
        remove(fast_path);
    }
    if (def == 0 || def > 150) {
        if (rank == 0)
            printf("table set-up costs: not checked (the defaults set up at call %d)\n", def);
        return;
    }
    CHECK_ALL(slow == 0, "setup_round 1000 s in the table: never set up (at call %d; %d without)",
              slow, def);
    /* not asserted: whether a check sees a saving at all follows MPI's
     * measured time, which a busy machine moves (both ways) */
    if (rank == 0)
        printf("table set-up costs: at 1 ns a round set up at call %d (0: never)\n", fast);
}

static void test_mixed(void)
{
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
    int *sc = calloc((size_t)P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = (rank * 5 + j * 3) % 7;
    a2av_bytes x;
    a2av_bytes_make(&x, sc, comm);
    int ok = 1, ran, first_passed = 0, nb_passed = 0, after_passed = 1;
    static const int how[] = {A2AV_BLOCKING, A2AV_BLOCKING, A2AV_NONBLOCKING, A2AV_BLOCKING,
                              A2AV_PERSISTENT, A2AV_BLOCKING, A2AV_NONBLOCKING, A2AV_BLOCKING};
    for (size_t i = 0; i < sizeof how / sizeof how[0]; i++) {
        ok &= a2av_bytes_run(&x, how[i], 3, comm, &ran) == MPI_SUCCESS && a2av_bytes_same(&x);
        xchg_stats s;
        xchg_get_stats(comm, &s);
        if (i == 0)
            first_passed = s.passed_to_mpi && s.algo == XCHG_ALGO_VENDOR;
        if (i == 2)
            nb_passed = s.passed_to_mpi && s.algo == XCHG_ALGO_VENDOR;
        if (i == 5)
            after_passed = s.passed_to_mpi; /* set up by the persistent call at the latest */
    }
    a2av_bytes_free(&x);
    MPI_Comm_free(&comm);
    CHECK_ALL(ok, "mixed blocking, nonblocking, persistent: results");
    if (setup_at_env() == 0) {
        CHECK_ALL(first_passed, "mixed: the first call is MPI's");
        CHECK_ALL(nb_passed, "mixed: the nonblocking 3rd call (the check) is MPI's");
        CHECK_ALL(!after_passed, "mixed: a blocking call after a persistent one is xchg's");
    }
}

/* A new communicator's nonblocking calls (phase.c): K = 1..12 calls on a
 * communicator, two in flight at once (the second started before the
 * first is waited for, so a check's decision is taken at the next call's
 * start), each checked against MPI_Alltoallv; every rank ran the same at
 * every call; the first three MPI's own. Then every rank passes a
 * negative count to its first nonblocking call: each gets MPI_ERR_COUNT
 * and no request, none hangs, and the next calls are right. */
static void test_nonblocking_first(void)
{
    static const int Ks[] = {1, 2, 3, 4, 6, 12};
    int ok = 1, consistent = 1, mpi_first = 1, handover = 1;
    for (size_t k = 0; k < sizeof Ks / sizeof Ks[0]; k++) {
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
        int *sc1 = calloc((size_t)P, sizeof(int)), *sc2 = calloc((size_t)P, sizeof(int));
        for (int j = 0; j < P; j++) {
            sc1[j] = (rank * 5 + j * 3 + (int)k) % 7;
            sc2[j] = 2 * ((rank + j) % 3);
        }
        a2av_bytes x1, x2;
        a2av_bytes_make(&x1, sc1, comm);
        a2av_bytes_make(&x2, sc2, comm);
        for (int call = 0; call < Ks[k]; call += 2) {
            const int two = call + 1 < Ks[k];
            xchg_request r1 = XCHG_REQUEST_NULL, r2 = XCHG_REQUEST_NULL;
            memset(x1.out, 0, (size_t)x1.rt + 1);
            memset(x2.out, 0, (size_t)x2.rt + 1);
            int e = xchg_ialltoallv(x1.sb, x1.sc, x1.sd, MPI_BYTE, x1.out, x1.rc, x1.rd,
                                    MPI_BYTE, comm, &r1);
            /* a passed-through call's stats are set at its start (a set-up
             * one's when it ends, which progress may order either way) */
            xchg_stats s;
            xchg_get_stats(comm, &s);
            if (call < 3)
                mpi_first &= s.passed_to_mpi == XCHG_PASSED_BEFORE_SETUP;
            if (two && e == MPI_SUCCESS) {
                e = xchg_ialltoallv(x2.sb, x2.sc, x2.sd, MPI_BYTE, x2.out, x2.rc, x2.rd,
                                    MPI_BYTE, comm, &r2);
                xchg_get_stats(comm, &s);
                if (call + 1 < 3)
                    mpi_first &= s.passed_to_mpi == XCHG_PASSED_BEFORE_SETUP;
            }
            if (e == MPI_SUCCESS)
                e = xchg_wait(r1);
            ok &= e == MPI_SUCCESS && a2av_bytes_same(&x1);
            consistent &= check_same_everywhere(r1 ? (int)xchg_request_algo(r1) : -2, comm);
            if (two && r2 && k % 2) {
                /* MPI's request handed over where the call passed through:
                 * always the 2nd call (before any check) */
                MPI_Request m = MPI_REQUEST_NULL;
                const int handed = xchg_request_to_mpi(&r2, &m);
                handover &= handed ? r2 == XCHG_REQUEST_NULL && m != MPI_REQUEST_NULL
                                   : r2 != XCHG_REQUEST_NULL && call + 1 >= 3;
                if (handed) {
                    ok &= MPI_Wait(&m, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
                          a2av_bytes_same(&x2);
                    consistent &= check_same_everywhere(XCHG_ALGO_VENDOR, comm);
                }
            }
            if (two && r2) {
                ok &= xchg_wait(r2) == MPI_SUCCESS && a2av_bytes_same(&x2);
                consistent &= check_same_everywhere(r2 ? (int)xchg_request_algo(r2) : -2, comm);
                if (r2)
                    xchg_request_free(&r2);
            }
            if (r1)
                xchg_request_free(&r1);
        }
        a2av_bytes_free(&x1);
        a2av_bytes_free(&x2);
        MPI_Comm_free(&comm);
    }
    /* A nonblocking check still in flight while a persistent request sets
     * the communicator up and blocking calls run: the check's decision
     * lands on each rank when its request completes, at a different point
     * on each; nothing may depend on it then (no verdict: none hangs). */
    {
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
        int *sc1 = calloc((size_t)P, sizeof(int)), *sc2 = calloc((size_t)P, sizeof(int));
        for (int j = 0; j < P; j++) {
            sc1[j] = 16 + (rank + 2 * j) % 5;
            sc2[j] = 16 + (rank + 2 * j) % 5;
        }
        a2av_bytes x1, x2;
        a2av_bytes_make(&x1, sc1, comm);
        a2av_bytes_make(&x2, sc2, comm);
        int ran;
        for (int call = 0; call < 2; call++)
            ok &= a2av_bytes_run(&x2, A2AV_BLOCKING, 1, comm, &ran) == MPI_SUCCESS &&
                  a2av_bytes_same(&x2);
        xchg_request r = XCHG_REQUEST_NULL;
        memset(x1.out, 0, (size_t)x1.rt + 1);
        int e = xchg_ialltoallv(x1.sb, x1.sc, x1.sd, MPI_BYTE, x1.out, x1.rc, x1.rd, MPI_BYTE,
                                comm, &r);
        ok &= e == MPI_SUCCESS;
        ok &= a2av_bytes_run(&x2, A2AV_PERSISTENT, 2, comm, &ran) == MPI_SUCCESS &&
              a2av_bytes_same(&x2);
        for (int call = 0; call < 24; call++) {
            if (rank == call % P && r) { /* ranks complete the check at different calls */
                ok &= xchg_wait(r) == MPI_SUCCESS && a2av_bytes_same(&x1);
                xchg_request_free(&r);
            }
            memset(x2.out, 0, (size_t)x2.rt + 1);
            ok &= a2av_bytes_run(&x2, A2AV_BLOCKING, 1, comm, &ran) == MPI_SUCCESS &&
                  a2av_bytes_same(&x2);
            consistent &= check_same_everywhere(ran, comm);
        }
        if (r) {
            ok &= xchg_wait(r) == MPI_SUCCESS && a2av_bytes_same(&x1);
            xchg_request_free(&r);
        }
        a2av_bytes_free(&x1);
        a2av_bytes_free(&x2);
        MPI_Comm_free(&comm);
    }
    CHECK_ALL(ok, "nonblocking first calls, two in flight: results");
    CHECK_ALL(consistent, "nonblocking first calls: every rank ran the same");
    if (setup_at_env() == 0) {
        CHECK_ALL(mpi_first, "nonblocking first calls: the first three MPI's own");
        CHECK_ALL(handover, "nonblocking first calls: xchg_request_to_mpi hands MPI's "
                  "request over where the call passed through (the 2nd always)");
    }

    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int *sc = calloc((size_t)P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = 1 + (rank + j) % 4;
    a2av_bytes x;
    a2av_bytes_make(&x, sc, comm);
    int bad_count = x.sc[0];
    x.sc[0] = -1;
    xchg_request r = XCHG_REQUEST_NULL;
    int e = xchg_ialltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE, comm, &r);
    int cls = MPI_SUCCESS;
    MPI_Error_class(e, &cls);
    x.sc[0] = bad_count;
    int err_ok = cls == MPI_ERR_COUNT && r == XCHG_REQUEST_NULL, after = 1;
    for (int call = 0; call < 4; call++) {
        memset(x.out, 0, (size_t)x.rt + 1);
        e = xchg_ialltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE, comm, &r);
        if (e == MPI_SUCCESS)
            e = xchg_wait(r);
        after &= e == MPI_SUCCESS && a2av_bytes_same(&x);
        if (r)
            xchg_request_free(&r);
    }
    a2av_bytes_free(&x);
    MPI_Comm_free(&comm);
    if (setup_at_env() == 0)
        CHECK_ALL(err_ok, "nonblocking first call, a negative count on every rank: "
                  "MPI_ERR_COUNT and no request");
    CHECK_ALL(after, "nonblocking first calls after an argument error: results");
}

/* Every rank passes a negative count at call e of 8 (a passed-through
 * call cannot agree one rank's error: MPI's own call runs; where every
 * rank has it, each takes part with empty blocks and none waits). */
static void test_arg_error(void)
{
    for (int e = 1; e <= 8; e++) {
        MPI_Comm comm;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        int *sc = calloc((size_t)P, sizeof(int));
        for (int j = 0; j < P; j++)
            sc[j] = 1 + (rank + j) % 3;
        a2av_bytes x;
        a2av_bytes_make(&x, sc, comm);
        int ok = 1, got_err = 0;
        for (int call = 1; call <= 8; call++) {
            if (call == e) {
                int saved = x.sc[0];
                x.sc[0] = -1;
                int rc = alltoallv(x.sb, x.sc, x.sd, MPI_BYTE, x.out, x.rc, x.rd, MPI_BYTE,
                                   comm);
                x.sc[0] = saved;
                got_err = a2av_err_class(rc) == MPI_ERR_COUNT &&
                          strstr(a2av_err_msg(rc), "sendcounts[0]") != NULL;
                continue;
            }
            int ran;
            ok &= a2av_bytes_run(&x, A2AV_BLOCKING, 1, comm, &ran) == MPI_SUCCESS &&
                  a2av_bytes_same(&x);
        }
        a2av_bytes_free(&x);
        MPI_Comm_free(&comm);
        CHECK_ALL(ok, "%s argument error at call %d: the other calls right", entry, e);
        CHECK_ALL(got_err, "%s argument error at call %d: MPI_ERR_COUNT naming sendcounts[0]",
                  entry, e);
    }
}

/* One pattern (1 KiB blocks), up to 2000 calls, xchg's own traffic slow: where a check set the
 * communicator up at call s, the verdict (select.c) times calls s+4 ..
 * s+19, runs MPI's own at s+20 and passes the calls to it from s+21 on every rank
 * (XCHG_PASSED_SLOWER), a nonblocking one among them right; with
 * XCHG_SETUP_AT (set up without a check: no measured reference) the
 * choice stays. Then blocks 8 times larger, xchg's traffic no longer
 * slow: the check 16 calls after the veto sees the statistics moved, and
 * auto chooses afresh from the next call. A later communicator of the
 * same size with the first pattern does not set up (the veto is
 * remembered, phase.c). */
/* test_verdict's pattern on comm: blocks of 1-1.25 KiB, times scale. */
static void verdict_pattern(a2av_bytes *x, int scale, MPI_Comm comm)
{
    int *sc = calloc((size_t)P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = scale * (1024 + 64 * ((rank + 3 * j) % 5));
    a2av_bytes_make(x, sc, comm); /* x owns sc */
}

/* One blocking auto call of x on comm: its results right (*ok), what ran
 * the same on every rank (*consistent), its stats in *s. */
static void verdict_call(a2av_bytes *x, MPI_Comm comm, int *ok, int *consistent, xchg_stats *s)
{
    memset(x->out, 0xee, (size_t)x->rt + 1);
    int e = xchg_alltoallv(x->sb, x->sc, x->sd, MPI_BYTE, x->out, x->rc, x->rd, MPI_BYTE, comm);
    *ok &= e == MPI_SUCCESS && a2av_bytes_same(x);
    xchg_get_stats(comm, s);
    *consistent &= check_same_everywhere((int)s->algo, comm) &
                   check_same_everywhere(s->passed_to_mpi, comm);
}

static void test_verdict(void)
{
    const long at = setup_at_env();
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    a2av_bytes x;
    verdict_pattern(&x, 1, comm);
    int ok = 1, consistent = 1, setup = 0, vendor_from = 0, left_vendor = 0, calls = 0;
    slow = 1;
    /* until 31 calls after the set-up (the same call everywhere) */
    for (int call = 1; call <= 2000 && !(setup && call > setup + 31); call++) {
        calls = call;
        xchg_stats s;
        verdict_call(&x, comm, &ok, &consistent, &s);
        if (!s.passed_to_mpi && !setup)
            setup = call;
        /* the verdict's call runs MPI's own through auto's path, the
         * later ones pass to it */
        const int mpi_own = s.algo == XCHG_ALGO_VENDOR;
        if (setup && !vendor_from && mpi_own && !s.passed_to_mpi)
            vendor_from = call;
        else if (vendor_from && !(mpi_own && s.passed_to_mpi == XCHG_PASSED_SLOWER))
            left_vendor = 1;
    }
    slow = 0;
    int ran = 0;
    if (vendor_from) /* nonblocking on a vetoed communicator: auto's path, MPI's own */
        ok &= a2av_bytes_run(&x, A2AV_NONBLOCKING, 1, comm, &ran) == MPI_SUCCESS &&
              a2av_bytes_same(&x);
    a2av_bytes_free(&x);
    /* the statistics move: blocks 8 times larger */
    int moved_at = 0, after = 0;
    if (vendor_from) {
        verdict_pattern(&x, 8, comm);
        for (int call = 1; call <= 40; call++) {
            xchg_stats s;
            verdict_call(&x, comm, &ok, &consistent, &s);
            if (!s.passed_to_mpi && !moved_at)
                moved_at = call;
            after += moved_at && s.passed_to_mpi;
        }
        a2av_bytes_free(&x);
    }
    MPI_Comm_free(&comm);
    /* a later communicator of this size, the first pattern, xchg's
     * traffic no longer slow: the veto remembered, MPI's own throughout */
    int remembered = 1, later_ok = 1;
    if (vendor_from) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        verdict_pattern(&x, 1, comm);
        for (int call = 1; call <= setup + 20; call++) {
            xchg_stats s;
            verdict_call(&x, comm, &later_ok, &consistent, &s);
            remembered &= s.passed_to_mpi == XCHG_PASSED_BEFORE_SETUP;
        }
        a2av_bytes_free(&x);
        MPI_Comm_free(&comm);
    }
    CHECK_ALL(ok, "verdict: %d calls of one pattern, xchg's traffic slow: results right", calls);
    CHECK_ALL(later_ok, "verdict: a later communicator's calls right");
    CHECK_ALL(consistent, "verdict: every rank ran the same at every call");
    if (rank == 0)
        printf("verdict: set up at call %d, MPI's own from call %d (0: never)\n", setup,
               vendor_from);
    if (!setup || P == 1)
        return; /* no saving found in 2000 calls: nothing to judge; or one rank,
                 * whose exchange is a local copy that no MPI call slows */
    if (at > 0) {
        CHECK_ALL(!vendor_from, "verdict: XCHG_SETUP_AT=%ld (no check): the choice stays", at);
    } else {
        CHECK_ALL(vendor_from == setup + 20, "verdict: MPI's own from call %d (set up at %d)",
                  vendor_from, setup);
        CHECK_ALL(!left_vendor, "verdict: MPI's own to the end");
        /* the passed calls counted from set-up + 21 (the 1st), 11 of
         * them, the nonblocking one not counted: the check at the 16th,
         * the 5th of the moved pattern; auto's own from the 6th */
        CHECK_ALL(moved_at == 6 && !after, "verdict: statistics moved: auto's own from the "
                  "6th call of the new pattern (got %d, %d passed after)", moved_at, after);
        CHECK_ALL(remembered, "verdict: a later communicator of this size: MPI's own for "
                  "%d calls (the veto remembered)", setup + 20);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    test_short_lived();
    test_long_lived();
    test_table_setup_costs();
    test_mixed();
    test_nonblocking_first();
    test_arg_error();
    test_verdict();
#if XCHG_HAVE_LARGE_COUNT
    entry = "xchg_alltoallv_c";
    test_short_lived();
    test_long_lived();
    test_arg_error();
#endif
    if (rank == 0)
        printf("%d passed, %d failed\n", npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
