/*
 * test_agree.c - every rank ends a call the same way: agreed argument
 * errors, agreed settings, the check mode (issue 11, items 1, 2, 9).
 *
 * 1. An argument error on one rank only, where a collective runs anyway
 *    (auto's statistics with XCHG_AUTO_MIN_P=1 from the test's
 *    environment, padded_alltoall, bruck_padded, grid, hierarchical,
 *    node_pairs, multileader, bruck_2level, persistent init, the sparse exchange's pex, rsx and
 *    pex_loc censuses): every
 *    rank returns the same error class, the failing rank its own message,
 *    the others one naming the failing rank; the communicator stays usable.
 * 2. XCHG_CHECK=1: a count mismatch between two ranks gives the same class
 *    everywhere (MPI_ERR_ARG for fewer bytes than expected, MPI_ERR_TRUNCATE
 *    for more) with a message naming both ranks and both byte counts; one
 *    rank's argument error with linear (no collective of its own) and with
 *    the sparse exchange is agreed too; good calls give correct data.
 * 3. Settings that differ per rank (set with setenv on some ranks before
 *    the communicator's first xchg call): rank 0's are used everywhere, no
 *    hang, and rank 0 warns naming the variable (its stderr is captured).
 *    XCHG_RECORD on rank 0 only: every rank records, rank 0 writes; on all
 *    but rank 0: nothing recorded; a call failing on one rank not recorded.
 * 4. Bad values of every setting are rejected with a warning naming the
 *    variable, and the default is used (XCHG_MAX_TEMP_BYTES=1e30 must not
 *    become 0).
 * A hang fails through the CTest timeout. Prints "N passed, M failed".
 */
#include "xchg.h"
#include "a2av_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int rank, P, npass, nfail;

/* n ints from every rank to every rank. */
typedef struct {
    int *sc, *sd, *rc, *rd, *sb, *rb;
    int n;
} bufs;

static void make(bufs *b, int n)
{
    b->n = n;
    b->sc = malloc(sizeof(int) * (size_t)P);
    b->sd = malloc(sizeof(int) * (size_t)P);
    b->rc = malloc(sizeof(int) * (size_t)P);
    b->rd = malloc(sizeof(int) * (size_t)P);
    b->sb = malloc(sizeof(int) * (size_t)(P * n + 1));
    b->rb = malloc(sizeof(int) * (size_t)(P * n + 1));
    for (int j = 0; j < P; j++) {
        b->sc[j] = b->rc[j] = n;
        b->sd[j] = b->rd[j] = j * n;
        for (int k = 0; k < n; k++)
            b->sb[j * n + k] = (rank * 100 + j) * 100 + k;
    }
}

static int correct(const bufs *b)
{
    for (int j = 0; j < P; j++)
        for (int k = 0; k < b->n; k++)
            if (b->rb[j * b->n + k] != (j * 100 + rank) * 100 + k)
                return 0;
    return 1;
}

static void unmake(bufs *b)
{
    free(b->sc); free(b->sd); free(b->rc); free(b->rd); free(b->sb); free(b->rb);
}

/* algo XCHG_ALGO_AUTO: the plain xchg_alltoallv */
static int run(xchg_algo a, bufs *b, MPI_Comm comm)
{
    memset(b->rb, 0xff, sizeof(int) * (size_t)(P * b->n + 1));
    if (a == XCHG_ALGO_AUTO)
        return xchg_alltoallv(b->sb, b->sc, b->sd, MPI_INT, b->rb, b->rc, b->rd, MPI_INT,
                              comm);
    return xchg_alltoallv_algo(a, b->sb, b->sc, b->sd, MPI_INT, b->rb, b->rc, b->rd, MPI_INT,
                               comm);
}

/* Rank 0's stderr into a file while settings are read. */
static char cap_path[64];
static int cap_saved = -1;

static void capture_begin(void)
{
    if (rank != 0)
        return;
    fflush(stderr);
    snprintf(cap_path, sizeof cap_path, "/tmp/xchg-test-agree-%d.err", (int)getpid());
    FILE *f = fopen(cap_path, "w");
    cap_saved = dup(2);
    dup2(fileno(f), 2);
    fclose(f);
}

/* Ends the capture; on rank 0, whether the captured text contains needle
 * (echoed to the real stderr). Other ranks: 1. */
static int capture_end(const char *needle)
{
    if (rank != 0)
        return 1;
    fflush(stderr);
    dup2(cap_saved, 2);
    close(cap_saved);
    char text[4096] = "";
    FILE *f = fopen(cap_path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = 0;
    if (f)
        fclose(f);
    remove(cap_path);
    fputs(text, stderr);
    return strstr(text, needle) != NULL;
}

/* A new communicator whose settings are read with var=val on the ranks
 * where set_here is true (the old value elsewhere; val NULL: unset): its
 * first xchg call, made here, reads them. Rank 0's stderr is captured. */
static MPI_Comm comm_with(const char *var, const char *val, int set_here)
{
    const char *old = getenv(var);
    char saved[256] = "";
    int had = old != NULL;
    if (had)
        snprintf(saved, sizeof saved, "%s", old);
    if (set_here) {
        if (val)
            setenv(var, val, 1);
        else
            unsetenv(var);
    }
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    capture_begin();
    int *z = calloc((size_t)P, sizeof(int)), buf[1];
    xchg_alltoallv_algo(XCHG_ALGO_LINEAR, buf, z, z, MPI_INT, buf, z, z, MPI_INT, c);
    free(z);
    if (had)
        setenv(var, saved, 1);
    else
        unsetenv(var);
    return c;
}

/* 1 + 2: one rank's bad argument; all ranks must end with class `want`,
 * the others' message naming the failing rank. */
static void expect_agreed(const char *what, int rc, int want, int bad_rank, const char *own)
{
    char w[600], name[32];
    int cls = a2av_err_class(rc);
    snprintf(name, sizeof name, "rank %d", bad_rank);
    snprintf(w, sizeof w, "%s: class %d, expected %d on every rank (%s)", what, cls, want,
             a2av_err_msg(rc));
    CHECK(cls == want, "%s", w);
    CHECK(check_same_everywhere(cls, MPI_COMM_WORLD), "%s", w);
    if (P > 1) {
        snprintf(w, sizeof w, "%s: message \"%s\" names %s", what, a2av_err_msg(rc),
                 rank == bad_rank ? own : name);
        CHECK(strstr(a2av_err_msg(rc), rank == bad_rank ? own : name) != NULL, "%s", w);
    }
}

static void one_rank_errors(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    bufs b;
    make(&b, 3);
    const int bad = P - 1;
    xchg_algo algos[] = {XCHG_ALGO_AUTO, XCHG_ALGO_PADDED_ALLTOALL, XCHG_ALGO_BRUCK_PADDED,
                         XCHG_ALGO_GRID, XCHG_ALGO_HIERARCHICAL, XCHG_ALGO_NODE_PAIRS,
                         XCHG_ALGO_MULTILEADER, XCHG_ALGO_BRUCK_2LEVEL};
    char w[200];
    for (int i = 0; i < (int)(sizeof algos / sizeof algos[0]); i++) {
        const char *name = algos[i] == XCHG_ALGO_AUTO ? "auto" : xchg_algo_name(algos[i]);
        if (rank == bad)
            b.sc[0] = -1;
        snprintf(w, sizeof w, "%s, sendcounts[0] = -1 on rank %d", name, bad);
        expect_agreed(w, run(algos[i], &b, comm), MPI_ERR_COUNT, bad, "sendcounts[0]");
        b.sc[0] = b.n;
        /* another class: a NULL datatype on rank 0 */
        memset(b.rb, 0xff, sizeof(int) * (size_t)(P * b.n + 1));
        int rc = algos[i] == XCHG_ALGO_AUTO
                     ? xchg_alltoallv(b.sb, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd,
                                      rank == 0 ? MPI_DATATYPE_NULL : MPI_INT, comm)
                     : xchg_alltoallv_algo(algos[i], b.sb, b.sc, b.sd, MPI_INT, b.rb, b.rc,
                                           b.rd, rank == 0 ? MPI_DATATYPE_NULL : MPI_INT,
                                           comm);
        snprintf(w, sizeof w, "%s, recvtype MPI_DATATYPE_NULL on rank 0", name);
        expect_agreed(w, rc, MPI_ERR_TYPE, 0, "recvtype");
        rc = run(algos[i], &b, comm);
        snprintf(w, sizeof w, "%s: a good call after the agreed errors (%s)", name,
                 a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
    }
    /* persistent init: its allreduce carries the error */
    {
        xchg_request req = XCHG_REQUEST_NULL;
        if (rank == bad)
            b.rc[0] = -1;
        int rc = xchg_alltoallv_init_algo(XCHG_ALGO_LINEAR, b.sb, b.sc, b.sd, MPI_INT, b.rb,
                                          b.rc, b.rd, MPI_INT, comm, MPI_INFO_NULL, &req);
        b.rc[0] = b.n;
        expect_agreed("xchg_alltoallv_init, recvcounts[0] = -1 on one rank", rc,
                      MPI_ERR_COUNT, bad, "recvcounts[0]");
        CHECK(req == XCHG_REQUEST_NULL, "xchg_alltoallv_init failed: no request");
    }
    /* sparse, no check mode: pex's, rsx's and pex_loc's census carries the
     * error (auto runs pex at these sizes) */
    xchg_sparse_algo salgos[] = {XCHG_SPARSE_AUTO, XCHG_SPARSE_PEX, XCHG_SPARSE_RSX,
                                 XCHG_SPARSE_PEX_LOC};
    for (int i = 0; i < (int)(sizeof salgos / sizeof salgos[0]); i++) {
        const char *name = xchg_sparse_algo_name(salgos[i]);
        int to = rank == bad ? P : (rank + 1) % P, cnt = 1, zero = 0, v = rank;
        xchg_sparse_result r;
        int rc = xchg_sparse_exchange_algo(salgos[i], 1, &to, &v, &cnt, &zero, MPI_INT, NULL,
                                           NULL, &r, comm);
        snprintf(w, sizeof w, "sparse %s, dests[0] = P on rank %d", name, bad);
        expect_agreed(w, rc, MPI_ERR_RANK, bad, "dests[0]");
        CHECK(r.nsources == 0 && !r.recvbuf, "sparse: a failed call leaves an empty result");
        to = (rank + 1) % P;
        rc = xchg_sparse_exchange_algo(salgos[i], 1, &to, &v, &cnt, &zero,
                                       rank == 0 ? MPI_DATATYPE_NULL : MPI_INT, NULL, NULL, &r,
                                       comm);
        snprintf(w, sizeof w, "sparse %s, type MPI_DATATYPE_NULL on rank 0", name);
        expect_agreed(w, rc, MPI_ERR_TYPE, 0, "type");
        rc = xchg_sparse_exchange_algo(salgos[i], 1, &to, &v, &cnt, &zero, MPI_INT, NULL, NULL,
                                       &r, comm);
        snprintf(w, sizeof w, "sparse %s: a good call after the agreed errors", name);
        CHECK(rc == MPI_SUCCESS && r.nsources == 1 && r.sources[0] == (rank + P - 1) % P &&
              ((int *)r.recvbuf)[0] == (rank + P - 1) % P, "%s", w);
        if (rc == MPI_SUCCESS)
            xchg_sparse_result_free(&r);
    }
    unmake(&b);
    MPI_Comm_free(&comm);
}

static void check_mode(void)
{
    MPI_Comm comm = comm_with("XCHG_CHECK", "1", 1);
    capture_end("");
    bufs b;
    make(&b, 2);
    char w[300];
    xchg_algo algos[] = {XCHG_ALGO_LINEAR, XCHG_ALGO_AUTO, XCHG_ALGO_PAIRWISE};
    for (int i = 0; i < 3; i++) {
        const char *name = algos[i] == XCHG_ALGO_AUTO ? "auto" : xchg_algo_name(algos[i]);
        int rc = run(algos[i], &b, comm);
        snprintf(w, sizeof w, "XCHG_CHECK=1, %s, good counts: correct (%s)", name, a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
        const int bad = P - 1;
        if (rank == bad)
            b.sc[0] = -1;
        snprintf(w, sizeof w, "XCHG_CHECK=1, %s, sendcounts[0] = -1 on rank %d", name, bad);
        expect_agreed(w, run(algos[i], &b, comm), MPI_ERR_COUNT, bad, "sendcounts[0]");
        b.sc[0] = b.n;
        if (P < 2)
            continue;
        /* rank 1 expects 3 ints (12 bytes) from rank 0, which sends 2 (8) */
        if (rank == 1)
            b.rc[0] = 3;
        int rcode = run(algos[i], &b, comm);
        b.rc[0] = b.n;
        snprintf(w, sizeof w, "XCHG_CHECK=1, %s, rank 1 expects more than rank 0 sends: "
                 "MPI_ERR_ARG everywhere, naming both ranks and counts (%s)", name,
                 a2av_err_msg(rcode));
        CHECK(a2av_err_class(rcode) == MPI_ERR_ARG &&
              check_same_everywhere(a2av_err_class(rcode), MPI_COMM_WORLD) &&
              strstr(a2av_err_msg(rcode), "rank 0 sends 8 bytes to rank 1") &&
              strstr(a2av_err_msg(rcode), "expects 12 bytes"), "%s", w);
        CHECK(b.rb[0] == -1, "the receive buffer is untouched after a check-mode refusal");
        /* rank 1 expects 1 int (4 bytes) from rank 0, which sends 2 (8) */
        if (rank == 1)
            b.rc[0] = 1;
        rcode = run(algos[i], &b, comm);
        b.rc[0] = b.n;
        snprintf(w, sizeof w, "XCHG_CHECK=1, %s, rank 0 sends more than rank 1 expects: "
                 "MPI_ERR_TRUNCATE everywhere (%s)", name, a2av_err_msg(rcode));
        CHECK(a2av_err_class(rcode) == MPI_ERR_TRUNCATE &&
              check_same_everywhere(a2av_err_class(rcode), MPI_COMM_WORLD) &&
              strstr(a2av_err_msg(rcode), "rank 0 sends 8 bytes to rank 1") &&
              strstr(a2av_err_msg(rcode), "expects 4 bytes"), "%s", w);
    }
    /* sparse: one rank's bad destination is agreed in the check mode */
    {
        int to = rank == P - 1 ? P : (rank + 1) % P, cnt = 1, zero = 0, v = rank;
        xchg_sparse_result r;
        int rc = xchg_sparse_exchange_result(1, &to, &v, &cnt, &zero, MPI_INT, &r, comm);
        expect_agreed("XCHG_CHECK=1, sparse, dests[0] = P on one rank", rc, MPI_ERR_RANK,
                      P - 1, "dests[0]");
        to = (rank + 1) % P;
        rc = xchg_sparse_exchange_result(1, &to, &v, &cnt, &zero, MPI_INT, &r, comm);
        CHECK(rc == MPI_SUCCESS && r.nsources == 1 && r.sources[0] == (rank + P - 1) % P,
              "XCHG_CHECK=1, sparse, a good call after");
        if (rc == MPI_SUCCESS)
            xchg_sparse_result_free(&r);
    }
    unmake(&b);
    MPI_Comm_free(&comm);
}

static void differing_settings(void)
{
    bufs b;
    make(&b, 2);
    char w[300];
    xchg_stats st;
    int rc, ok;
    const int only0 = rank == 0, not0 = rank != 0;

    /* XCHG_ALLTOALLV_ALGO: pairwise on rank 0, linear elsewhere */
    MPI_Comm c = comm_with("XCHG_ALLTOALLV_ALGO", only0 ? "pairwise" : "linear", 1);
    ok = capture_end("XCHG_ALLTOALLV_ALGO differs");
    CHECK(P == 1 || ok, "XCHG_ALLTOALLV_ALGO differing: rank 0 warns naming it");
    rc = run(XCHG_ALGO_AUTO, &b, c);
    xchg_get_stats(c, &st);
    snprintf(w, sizeof w, "XCHG_ALLTOALLV_ALGO differing: rank 0's (pairwise) runs "
             "everywhere (%s)", a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && correct(&b) && st.algo == XCHG_ALGO_PAIRWISE, "%s", w);
    MPI_Comm_free(&c);

    /* an unknown name on rank 0 only: the error everywhere */
    c = comm_with("XCHG_ALLTOALLV_ALGO", "no_such_algo", only0);
    capture_end("");
    rc = run(XCHG_ALGO_AUTO, &b, c);
    snprintf(w, sizeof w, "XCHG_ALLTOALLV_ALGO unknown on rank 0: MPI_ERR_ARG everywhere (%s)",
             a2av_err_msg(rc));
    CHECK(a2av_err_class(rc) == MPI_ERR_ARG && strstr(a2av_err_msg(rc), "XCHG_ALLTOALLV_ALGO"),
          "%s", w);
    MPI_Comm_free(&c);

    /* XCHG_BRUCK_RADIX: 2 on rank 0, 3 elsewhere: one protocol */
    c = comm_with("XCHG_BRUCK_RADIX", only0 ? "2" : "3", 1);
    ok = capture_end("XCHG_BRUCK_RADIX differs");
    CHECK(P == 1 || ok, "XCHG_BRUCK_RADIX differing: rank 0 warns naming it");
    rc = run(XCHG_ALGO_BRUCK_RADIX, &b, c);
    snprintf(w, sizeof w, "XCHG_BRUCK_RADIX differing: correct (%s)", a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
    MPI_Comm_free(&c);

    /* XCHG_MAX_TEMP_BYTES=1 on rank 0 only: every rank refuses alike */
    c = comm_with("XCHG_MAX_TEMP_BYTES", "1", only0);
    ok = capture_end("XCHG_MAX_TEMP_BYTES differs");
    CHECK(P == 1 || ok, "XCHG_MAX_TEMP_BYTES differing: rank 0 warns naming it");
    rc = run(XCHG_ALGO_LINEAR, &b, c);
    snprintf(w, sizeof w, "XCHG_MAX_TEMP_BYTES=1 on rank 0 only: MPI_ERR_NO_MEM everywhere "
             "(%s)", a2av_err_msg(rc));
    CHECK(P == 1 || (a2av_err_class(rc) == MPI_ERR_NO_MEM &&
                     check_same_everywhere(a2av_err_class(rc), MPI_COMM_WORLD)),
          "%s", w);
    MPI_Comm_free(&c);

    /* XCHG_RANKS_PER_NODE: 1 on rank 0, 2 elsewhere */
    c = comm_with("XCHG_RANKS_PER_NODE", only0 ? "1" : "2", 1);
    capture_end("");
    rc = run(XCHG_ALGO_HIERARCHICAL, &b, c);
    snprintf(w, sizeof w, "XCHG_RANKS_PER_NODE differing: correct (%s)", a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
    MPI_Comm_free(&c);

    /* XCHG_SPARSE_ALGO: pex on rank 0, nbx elsewhere */
    c = comm_with("XCHG_SPARSE_ALGO", only0 ? "pex" : "nbx", 1);
    capture_end("");
    {
        int to = (rank + 1) % P, cnt = 1, zero = 0, v = rank;
        xchg_sparse_result r;
        rc = xchg_sparse_exchange_result(1, &to, &v, &cnt, &zero, MPI_INT, &r, c);
        snprintf(w, sizeof w, "XCHG_SPARSE_ALGO differing: correct (%s)", a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && r.nsources == 1 && r.sources[0] == (rank + P - 1) % P &&
              ((int *)r.recvbuf)[0] == (rank + P - 1) % P, "%s", w);
        if (rc == MPI_SUCCESS)
            xchg_sparse_result_free(&r);
    }
    MPI_Comm_free(&c);

    /* XCHG_CHECK on all but rank 0: off everywhere, calls still agree */
    c = comm_with("XCHG_CHECK", "1", not0);
    ok = capture_end("XCHG_CHECK differs");
    CHECK(P == 1 || ok, "XCHG_CHECK differing: rank 0 warns naming it");
    rc = run(XCHG_ALGO_LINEAR, &b, c);
    CHECK(rc == MPI_SUCCESS && correct(&b), "XCHG_CHECK differing: a good call");
    MPI_Comm_free(&c);
    unmake(&b);
}

/* XCHG_RECORD: set on rank 0 only, every rank records (one protocol) and
 * rank 0 writes at the communicator's free; a call with one rank's
 * argument error is recorded by nobody (and still fails alike); set on all
 * ranks but rank 0, nothing is recorded. */
static char record_path[128];

static int file_has_line(const char *path, const char *line)
{
    FILE *f = fopen(path, "r");
    char buf[4096];
    int found = 0;
    while (f && !found && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        found = strcmp(buf, line) == 0;
    }
    if (f)
        fclose(f);
    return found;
}

static void record_setting(void)
{
    bufs b;
    make(&b, 2);
    char w[400], line[64];
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(record_path, sizeof record_path, "/tmp/xchg-test-agree-record-%d.txt", pid);
    MPI_Comm c = comm_with("XCHG_RECORD", record_path, rank == 0);
    int ok = capture_end("XCHG_RECORD differs");
    CHECK(P == 1 || ok, "XCHG_RECORD on rank 0 only: rank 0 warns naming it");
    int rc = run(XCHG_ALGO_LINEAR, &b, c);
    CHECK(rc == MPI_SUCCESS && correct(&b), "XCHG_RECORD on rank 0 only: a good call");
    rc = run(XCHG_ALGO_AUTO, &b, c);
    CHECK(rc == MPI_SUCCESS && correct(&b), "XCHG_RECORD on rank 0 only: a second call");
    /* one rank's argument error, agreed by padded_alltoall: recorded by nobody */
    if (rank == P - 1)
        b.sc[0] = -1;
    rc = run(XCHG_ALGO_PADDED_ALLTOALL, &b, c);
    b.sc[0] = b.n;
    snprintf(w, sizeof w, "XCHG_RECORD: one rank's argument error still fails alike (%s)",
             a2av_err_msg(rc));
    CHECK(a2av_err_class(rc) == MPI_ERR_COUNT &&
              check_same_everywhere(a2av_err_class(rc), MPI_COMM_WORLD),
          "%s", w);
    MPI_Comm_free(&c); /* rank 0 writes */
    if (rank == 0) {
        /* comm_with's zero call, then 2 calls of 2 ints to everyone */
        snprintf(line, sizeof line, "shape %d 2", P);
        snprintf(w, sizeof w, "XCHG_RECORD on rank 0 only: %s has \"%s\"", record_path, line);
        CHECK(file_has_line(record_path, line), "%s", w);
        snprintf(line, sizeof line, "shape %d 1", P);
        CHECK(file_has_line(record_path, line), "XCHG_RECORD: the first call's shape once");
        snprintf(line, sizeof line, "shape %d 3", P);
        CHECK(!file_has_line(record_path, line), "XCHG_RECORD: the failed call not counted");
        remove(record_path);
    }
    /* on all ranks but rank 0: nothing recorded, nothing written */
    char other[160];
    snprintf(other, sizeof other, "%s.off", record_path);
    c = comm_with("XCHG_RECORD", other, rank != 0);
    capture_end(""); /* warned above already: once per variable */
    rc = run(XCHG_ALGO_LINEAR, &b, c);
    CHECK(rc == MPI_SUCCESS && correct(&b), "XCHG_RECORD on all but rank 0: a good call");
    MPI_Comm_free(&c);
    FILE *f = fopen(other, "r");
    CHECK(f == NULL, "XCHG_RECORD on all but rank 0: no file");
    if (f)
        fclose(f);
    unmake(&b);
}

static void bad_values(void)
{
    static const struct {
        const char *var, *val;
        xchg_algo algo;
    } cases[] = {
        {"XCHG_MAX_TEMP_BYTES", "1e30", XCHG_ALGO_LINEAR},
        {"XCHG_THROTTLE", "1", XCHG_ALGO_SCATTERED},
        {"XCHG_AUTO_MIN_P", "0", XCHG_ALGO_AUTO},
        {"XCHG_RANKS_PER_NODE", "-3", XCHG_ALGO_HIERARCHICAL},
        {"XCHG_NBX_BARRIER", "sometimes", XCHG_ALGO_LINEAR},
        {"XCHG_CHECK", "yes", XCHG_ALGO_LINEAR},
        {"XCHG_RECORD_MAX", "0", XCHG_ALGO_LINEAR},
    };
    bufs b;
    make(&b, 2);
    char w[300], needle[128];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Comm c = comm_with(cases[i].var, cases[i].val, 1);
        snprintf(needle, sizeof needle, "%s=\"%s\" rejected", cases[i].var, cases[i].val);
        int warned = capture_end(needle);
        snprintf(w, sizeof w, "%s=%s: rank 0 warns \"%s\"", cases[i].var, cases[i].val, needle);
        CHECK(warned, "%s", w);
        int rc = run(cases[i].algo, &b, c);
        snprintf(w, sizeof w, "%s=%s rejected: the default is used, a good call (%s)",
                 cases[i].var, cases[i].val, a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
        MPI_Comm_free(&c);
    }
    /* garbage on a rank other than 0 only: rank 0 still says so */
    if (P > 1) {
        MPI_Comm c = comm_with("XCHG_BRUCK_RADIX", "x3", rank == P - 1);
        snprintf(needle, sizeof needle, "XCHG_BRUCK_RADIX rejected on rank %d", P - 1);
        int warned = capture_end(needle);
        snprintf(w, sizeof w, "XCHG_BRUCK_RADIX=x3 on rank %d only: rank 0 warns \"%s\"",
                 P - 1, needle);
        CHECK(warned, "%s", w);
        int rc = run(XCHG_ALGO_BRUCK_RADIX, &b, c);
        CHECK(rc == MPI_SUCCESS && correct(&b), "XCHG_BRUCK_RADIX=x3 on one rank: a good call");
        MPI_Comm_free(&c);
    }
    unmake(&b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    one_rank_errors();
    check_mode();
    differing_settings();
    record_setting();
    bad_values();
    int tot[2] = {npass, nfail}, all[2];
    MPI_Reduce(tot, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_agree on %d ranks: %d passed, %d failed\n", P, all[0], all[1]);
    MPI_Finalize();
    if (rank == 0 && record_path[0])
        remove(record_path); /* written again at MPI_Finalize */
    return nfail ? 1 : 0;
}
