/*
 * test_tuning.c - a tuning table (XCHG_TUNING_FILE) is used or refused,
 * never ignored in silence, below XCHG_AUTO_MIN_P (64, the default, above
 * every rank count tested) as above it.
 *
 * Every case runs on a fresh communicator (auto decides below
 * XCHG_AUTO_MIN_P at a communicator's first call) and checks, on every
 * rank, the algorithm auto ran (xchg_get_stats, xchg_request_algo) and the
 * result against MPI_Alltoallv's:
 *   - no table: linear; a rule for this P: its algorithm, blocking, from a
 *     nonblocking first call and at a persistent init; a rule naming
 *     vendor: MPI's own call; a rule for another P: linear; a rule for
 *     this P but larger blocks: linear, then the rule once the blocks grow;
 *   - a table that cannot be read or parsed (missing file, unknown
 *     algorithm, a bad number, a rule with 4 fields, PMIN > PMAX, a model
 *     baseline, auto, an unknown keyword): linear on every rank and exactly
 *     one warning (rank 0's stderr, captured here) naming the file, the
 *     line and the reason, however many communicators use it;
 *   - a rule naming what cannot run inside a nonblocking exchange
 *     (rma_fence; hierarchical before its node communicators exist):
 *     linear there, the rule's algorithm in blocking calls;
 *   - tables that differ across ranks (each rank writes its own file):
 *     the same algorithm everywhere (linear), no hang, one warning.
 *
 * With --report it only runs three communicators (no table, a rule for
 * this P, a misspelt algorithm) for tests/CMakeLists.txt to check what
 * XCHG_VERBOSE=1 and the warning print.
 */
#include "xchg.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;

/* This rank's table file with the given text (a new name per content:
 * xchg reads a file again only when XCHG_TUNING_FILE changes), set as
 * XCHG_TUNING_FILE. */
static const char *use_table(const char *tag, const char *text)
{
    static char path[160];
    snprintf(path, sizeof path, "/tmp/xchg-test-tuning-%d-%s", (int)getpid(), tag);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    setenv("XCHG_TUNING_FILE", path, 1);
    return path;
}

static MPI_Comm fresh(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
}

enum { BLOCKING = A2AV_BLOCKING, NONBLOCKING = A2AV_NONBLOCKING, PERSISTENT = A2AV_PERSISTENT };

/* One exchange on comm, blocks of scale x 1..5 x (rank + 1) bytes; returns
 * the algorithm xchg ran (XCHG_ALGO_INVALID on an error), *ok when the
 * result equals MPI_Alltoallv's. */
static xchg_algo exchange(MPI_Comm comm, int scale, int how, int *ok)
{
    int *sc = calloc(P, sizeof(int));
    for (int j = 0; j < P; j++)
        sc[j] = scale * (1 + (rank * 7 + j * 3) % 5) * (rank + 1);
    a2av_bytes x;
    a2av_bytes_make(&x, sc, comm);
    int ran, e = a2av_bytes_run(&x, how, 1, comm, &ran);
    *ok = e == MPI_SUCCESS && a2av_bytes_same(&x);
    a2av_bytes_free(&x);
    return e == MPI_SUCCESS ? (xchg_algo)ran : XCHG_ALGO_INVALID;
}

static const char *name(xchg_algo a)
{
    return xchg_algo_name(a) ? xchg_algo_name(a) : "?";
}

/* ran on every rank, the same everywhere, correct everywhere */
#define EXPECT_RAN(a, ok, want, what)                                                    \
    CHECK_ALL((ok) && (a) == (want) && check_same_everywhere((int)(a), MPI_COMM_WORLD), \
              "%s: auto ran %s, expected %s (correct: %d)", what, name(a), name(want), ok)

/* ---- rank 0's stderr, captured (the warnings) ------------------------ */

static int saved_fd = -1;
static char capture_path[160];

static void capture_begin(void)
{
    fflush(stderr);
    snprintf(capture_path, sizeof capture_path, "/tmp/xchg-test-tuning-%d-stderr",
             (int)getpid());
    int fd = open(capture_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    saved_fd = dup(2);
    dup2(fd, 2);
    close(fd);
}

/* What was captured since capture_begin (malloc'd, never NULL). */
static char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    char *text = calloc(1, 1);
    size_t len = 0;
    char line[2048];
    FILE *f = fopen(capture_path, "r");
    while (f && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        char *grown = realloc(text, len + n + 1);
        if (!grown)
            break;
        text = grown;
        memcpy(text + len, line, n + 1);
        len += n;
    }
    if (f)
        fclose(f);
    remove(capture_path);
    return text;
}

/* Lines of text that hold both needles; the others are shown on stderr. */
static int count_lines(const char *text, const char *needle, const char *needle2)
{
    int n = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) + 1 : strlen(p);
        char line[2048];
        snprintf(line, sizeof line, "%.*s", (int)len, p);
        if (strstr(line, needle) && strstr(line, needle2))
            n++;
        else
            fputs(line, stderr);
        p += len;
    }
    return n;
}

static int sum(int v)
{
    int all = 0;
    MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

/* ---- the cases ---------------------------------------------------------- */

/* A table rule for this P changes what auto runs, in every kind of call. */
static void rule_for_p(void)
{
    char text[256];
    int ok;
    xchg_algo a;
    MPI_Comm comm = fresh();
    unsetenv("XCHG_TUNING_FILE");
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "no table");
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "no table, nonblocking");
    MPI_Comm_free(&comm);

    snprintf(text, sizeof text, "# a rule for this P\nrule %d %d 0 1000000 pairwise\n", P, P);
    use_table("pairwise", text);
    comm = fresh();
    for (int i = 0; i < 3; i++) {
        a = exchange(comm, 4, BLOCKING, &ok);
        EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "rule for P, blocking");
    }
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "rule for P, nonblocking");
    MPI_Comm_free(&comm);
    comm = fresh();
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "rule for P, a nonblocking first call");
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "rule for P, nonblocking again");
    MPI_Comm_free(&comm);
    comm = fresh();
    a = exchange(comm, 4, PERSISTENT, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "rule for P, persistent init");
    MPI_Comm_free(&comm);

    snprintf(text, sizeof text, "rule %d %d 0 1000000 vendor\n", P, P);
    use_table("vendor", text);
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_VENDOR, "a vendor rule, blocking");
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_VENDOR, "a vendor rule, nonblocking");
    a = exchange(comm, 4, PERSISTENT, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_VENDOR, "a vendor rule, persistent init");
    MPI_Comm_free(&comm);

    snprintf(text, sizeof text, "rule %d %d 0 1000000 pairwise\n", P + 1, P + 1);
    use_table("other-p", text);
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "a rule for another P");
    MPI_Comm_free(&comm);

    /* the rule covers P from 1000 B blocks: linear on small ones; once they
     * grow, the first refresh (call 9: select.c's FIRST_REFRESH, 8 calls
     * after the first choice) sees them and the next call runs the rule */
    snprintf(text, sizeof text, "rule 1 %d 1000 1000000000 scattered\n", P);
    use_table("sized", text);
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "a rule for larger blocks, small ones");
    for (int call = 2; call <= 9; call++)
        exchange(comm, 1000, BLOCKING, &ok);
    a = exchange(comm, 1000, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_SCATTERED, "a rule for larger blocks, after they grew");
    MPI_Comm_free(&comm);
    unsetenv("XCHG_TUNING_FILE");
}

/* Rules naming what cannot run inside a nonblocking exchange: there auto
 * runs linear (the fallback below XCHG_AUTO_MIN_P), the rule's algorithm
 * in blocking calls; hierarchical (nodes of 2 ranks) inside nonblocking
 * ones too once a blocking call has made its node communicators. */
static void rules_nonblocking_cannot_run(void)
{
    char text[256];
    int ok;
    xchg_algo a;
    snprintf(text, sizeof text, "rule %d %d 0 1000000 rma_fence\n", P, P);
    use_table("rma", text);
    MPI_Comm comm = fresh();
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "an rma_fence rule, nonblocking");
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_RMA_FENCE, "an rma_fence rule, blocking");
    MPI_Comm_free(&comm);

    setenv("XCHG_RANKS_PER_NODE", "2", 1); /* read when comm's state is made */
    snprintf(text, sizeof text, "rule %d %d 0 1000000 hierarchical\n", P, P);
    use_table("hier", text);
    comm = fresh();
    a = exchange(comm, 4, NONBLOCKING, &ok);
    /* one rank: nothing to split, it runs at once */
    EXPECT_RAN(a, ok, P == 1 ? XCHG_ALGO_HIERARCHICAL : XCHG_ALGO_LINEAR,
               "a hierarchical rule, nonblocking before its communicators exist");
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_HIERARCHICAL, "a hierarchical rule, blocking");
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_HIERARCHICAL, "a hierarchical rule, nonblocking after");
    MPI_Comm_free(&comm);
    unsetenv("XCHG_RANKS_PER_NODE");
    unsetenv("XCHG_TUNING_FILE");
}

/* A table that cannot be used: linear everywhere, one warning (rank 0's)
 * naming the file, the line and the reason; a second communicator adds
 * none. text NULL: a file that does not exist. */
static void bad_table(const char *tag, const char *text, const char *reason)
{
    const char *path = "/nonexistent/xchg-tuning-table";
    if (text)
        path = use_table(tag, text);
    else
        setenv("XCHG_TUNING_FILE", path, 1);
    char own[240];
    snprintf(own, sizeof own, "xchg: warning: tuning table %s%s", path, reason);
    capture_begin();
    int ok1, ok2;
    MPI_Comm comm = fresh();
    xchg_algo a1 = exchange(comm, 4, BLOCKING, &ok1);
    MPI_Comm_free(&comm);
    comm = fresh();
    xchg_algo a2 = exchange(comm, 4, NONBLOCKING, &ok2);
    MPI_Comm_free(&comm);
    char *out = capture_end();
    int any = sum(count_lines(out, "xchg: warning: tuning table ", reason));
    int rank0 = sum(rank == 0 && strstr(out, own) != NULL);
    free(out);
    char what[120];
    snprintf(what, sizeof what, "bad table (%s)", tag);
    EXPECT_RAN(a1, ok1, XCHG_ALGO_LINEAR, what);
    EXPECT_RAN(a2, ok2, XCHG_ALGO_LINEAR, what);
    CHECK_ALL(any == 1 && rank0 == 1, "bad table (%s): %d warnings with \"%s\" (expected 1), "
              "rank 0's \"%s\": %d", tag, any, reason, own, rank0);
    unsetenv("XCHG_TUNING_FILE");
}

static void bad_tables(void)
{
    char text[256];
    snprintf(text, sizeof text, "# a typo\nalpha 1e-6\nrule %d %d 0 1000000 scatterd\n", P, P);
    bad_table("scatterd", text, " line 3: unknown algorithm 'scatterd'");
    bad_table("banana", "alpha banana\n", " line 1: alpha wants one number > 0");
    snprintf(text, sizeof text, "\nrule %d %d 0 1000000\n", P, P);
    bad_table("fields", text, " line 2: a rule has 5 fields");
    snprintf(text, sizeof text, "rule %d %d 0 10 linear\nrule %d %d 0 10 linear\n", P, P,
             P + 1, P);
    bad_table("pmin", text, " line 2: PMIN ");
    snprintf(text, sizeof text, "rule %d %d 0 1000000 mpich_model\n", P, P);
    bad_table("baseline", text, " line 1: 'mpich_model' models an MPI library");
    snprintf(text, sizeof text, "rule %d %d 0 1000000 auto\n", P, P);
    bad_table("auto", text, " line 1: a rule names an algorithm, not 'auto'");
    bad_table("keyword", "# ok\nbeta 1e-10\nrules 1 2 3 4 linear\n",
              " line 3: unknown keyword 'rules'");
    bad_table("missing", NULL, ": cannot be read");
}

/* Each rank writes its own file: tables that differ across ranks are
 * ignored on every rank, alike, with no hang. */
static void differing_tables(void)
{
    if (P == 1)
        return;
    char text[256];
    int ok;
    /* rank 0 pairwise, the others scattered */
    snprintf(text, sizeof text, "rule %d %d 0 1000000 %s\n", P, P,
             rank == 0 ? "pairwise" : "scattered");
    use_table("differ", text);
    capture_begin();
    MPI_Comm comm = fresh();
    xchg_algo a = exchange(comm, 4, BLOCKING, &ok);
    MPI_Comm_free(&comm);
    char *out = capture_end();
    int warnings = sum(count_lines(out, "xchg: warning: ", "do not all read the same tuning table"));
    free(out);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "tables differ across ranks");
    CHECK_ALL(warnings == 1, "tables differ across ranks: %d warnings, expected 1", warnings);

    /* only the last rank has one (as where a node lacks the file) */
    snprintf(text, sizeof text, "rule %d %d 0 1000000 pairwise\n", P, P);
    if (rank == P - 1)
        use_table("last-only", text);
    else
        unsetenv("XCHG_TUNING_FILE");
    comm = fresh();
    a = exchange(comm, 4, NONBLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "a table only the last rank has, nonblocking");
    a = exchange(comm, 4, BLOCKING, &ok);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "a table only the last rank has, blocking");
    MPI_Comm_free(&comm);

    /* rank 0's table is malformed, the others' fine: its warning, linear */
    if (rank == 0)
        use_table("zero-bad", "rule 1 1000 0 1000000 pairwyse\n");
    else
        use_table("zero-bad", text);
    capture_begin();
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    MPI_Comm_free(&comm);
    out = capture_end();
    warnings = sum(count_lines(out, "xchg: warning: ", "line 1: unknown algorithm 'pairwyse'"));
    free(out);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "rank 0's table malformed, the others' fine");
    CHECK_ALL(warnings == 1, "rank 0's table malformed: %d warnings, expected 1", warnings);
    unsetenv("XCHG_TUNING_FILE");
}

/* --report: what XCHG_VERBOSE=1 says, checked by tests/CMakeLists.txt. */
static void report_run(void)
{
    char text[256];
    int ok;
    unsetenv("XCHG_TUNING_FILE");
    MPI_Comm comm = fresh();
    xchg_algo a = exchange(comm, 4, BLOCKING, &ok);
    exchange(comm, 4, BLOCKING, &ok);
    MPI_Comm_free(&comm);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "report: no table");
    snprintf(text, sizeof text, "# xchg tuning table\nrule %d %d 0 1000000 pairwise\n", P, P);
    use_table("report", text);
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    exchange(comm, 4, BLOCKING, &ok);
    MPI_Comm_free(&comm);
    EXPECT_RAN(a, ok, XCHG_ALGO_PAIRWISE, "report: a rule for P");
    snprintf(text, sizeof text, "# xchg tuning table\n\nrule %d %d 0 1000000 scatterd\n", P, P);
    use_table("report-typo", text);
    comm = fresh();
    a = exchange(comm, 4, BLOCKING, &ok);
    MPI_Comm_free(&comm);
    EXPECT_RAN(a, ok, XCHG_ALGO_LINEAR, "report: a misspelt algorithm");
    unsetenv("XCHG_TUNING_FILE");
}

static void remove_tables(void)
{
    static const char *const tags[] = {"pairwise", "vendor", "other-p", "sized", "scatterd",
                                       "banana", "fields", "pmin", "baseline", "auto",
                                       "keyword", "differ", "last-only", "zero-bad",
                                       "report", "report-typo", "rma", "hier"};
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        char path[160];
        snprintf(path, sizeof path, "/tmp/xchg-test-tuning-%d-%s", (int)getpid(), tags[i]);
        remove(path);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    unsetenv("XCHG_ALLTOALLV_ALGO");
    unsetenv("XCHG_AUTO_MIN_P"); /* the default, 64: every P here is below it */
    if (argc > 1 && strcmp(argv[1], "--report") == 0) {
        report_run();
    } else {
        rule_for_p();
        rules_nonblocking_cannot_run();
        bad_tables();
        differing_tables();
    }
    remove_tables();
    if (rank == 0)
        printf("test_tuning on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
