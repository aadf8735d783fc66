/*
 * test_robust.c - never hang, never a wrong answer (issue 11), for every
 * algorithm of the registry. Sections (the first argument):
 *
 *  buffers     NULL sendbuf/recvbuf with data to move, and sendbuf ==
 *              recvbuf, give MPI_ERR_BUFFER naming the argument (they used
 *              to crash or corrupt); a NULL buffer with nothing to move is
 *              fine (both NULL MPICH's own MPI_Alltoallv calls aliased).
 *  truncate    a receive block one element short of what arrives (from
 *              another rank, and from itself): that rank gets
 *              MPI_ERR_TRUNCATE after the exchange, nothing is written
 *              past its block, the other ranks finish (correct data, or the
 *              same class where an algorithm agrees on errors); one element
 *              moved from one sender's block to another's (the same total):
 *              the same; a block one
 *              element longer than what arrives: success, only the bytes
 *              sent are written (the padded algorithms used to copy the
 *              sender's padding there). Then a correct call still works.
 *  nomem       one rank limited by XCHG_FAULT_TEMP_LIMIT (a test-only, unagreed
 *              lower XCHG_MAX_TEMP_BYTES) at many points (each
 *              4 bytes near its peak need, where the last allocations are), with
 *              matching and with erroneous (short) receive counts: no rank
 *              hangs, each returns correct data, MPI_ERR_NO_MEM or
 *              MPI_ERR_TRUNCATE; hierarchical's and grid's re-allocation
 *              for erroneous counts used to skip a collective and hang.
 *  inplace     MPI_IN_PLACE where one rank has no temporary memory for its
 *              copy of recvbuf (XCHG_FAULT_TEMP_LIMIT=0), for the
 *              algorithms named (ones that agree on errors, and auto):
 *              every rank returns MPI_ERR_NO_MEM (that rank used to return
 *              at once and leave the others waiting).
 *  persistent  a request outlives its communicator (used to be a use after
 *              free, seen by ASan/valgrind); a start that fails after its
 *              MPI_Startall (a bad self block) completes what it started,
 *              so the next starts work on every rank.
 * Run under a CTest TIMEOUT: a hang fails the test. Exit code non-zero on
 * any failure, each printed with its rank.
 */
#include "xchg.h"
#include "a2av_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int npass, nfail, rank, P;

/* n ints to every rank, in slots of `stride` ints (room for more). */
typedef struct {
    int n, stride;
    int *sc, *sd, *rc, *rd, *sb, *rb;
} bufs;

static int value(int from, int to, int k) { return (from * 1000 + to) * 1000 + k; }

static void make(bufs *b, int n, int stride)
{
    b->n = n;
    b->stride = stride;
    size_t np = (size_t)P;
    b->sc = malloc(sizeof(int) * np);
    b->sd = malloc(sizeof(int) * np);
    b->rc = malloc(sizeof(int) * np);
    b->rd = malloc(sizeof(int) * np);
    b->sb = malloc(sizeof(int) * np * (size_t)stride);
    b->rb = malloc(sizeof(int) * np * (size_t)stride);
    for (int j = 0; j < P; j++) {
        b->sc[j] = b->rc[j] = n;
        b->sd[j] = b->rd[j] = j * stride;
        for (int k = 0; k < stride; k++)
            b->sb[j * stride + k] = k < n ? value(rank, j, k) : -7;
    }
}

static void reset_counts(bufs *b)
{
    for (int j = 0; j < P; j++)
        b->sc[j] = b->rc[j] = b->n;
}

static void unmake(bufs *b)
{
    free(b->sc); free(b->sd); free(b->rc); free(b->rd); free(b->sb); free(b->rb);
}

/* Block from j holds `count` values, the rest of its slot is untouched. */
static int block_ok(const bufs *b, int j, int count)
{
    for (int k = 0; k < b->stride; k++)
        if (b->rb[j * b->stride + k] != (k < count ? value(j, rank, k) : -1))
            return 0;
    return 1;
}

static int all_ok(const bufs *b)
{
    for (int j = 0; j < P; j++)
        if (!block_ok(b, j, b->n))
            return 0;
    return 1;
}

static int run(xchg_algo a, bufs *b, MPI_Comm comm)
{
    memset(b->rb, 0xff, sizeof(int) * (size_t)P * (size_t)b->stride);
    return xchg_alltoallv_algo(a, b->sb, b->sc, b->sd, MPI_INT, b->rb, b->rc, b->rd,
                               MPI_INT, comm);
}

/* A correct call right after: the communicator is usable, no stray message. */
static void usable_after(const char *label, xchg_algo a, bufs *b, MPI_Comm comm)
{
    char w[300];
    reset_counts(b);
    int rc = run(a, b, comm);
    snprintf(w, sizeof w, "%s: the next correct call succeeds (%s)", label, a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && all_ok(b), "%s", w);
}

/* ---- buffers ---- */
static void section_buffers(MPI_Comm comm)
{
    bufs b;
    make(&b, 3, 3);
    char w[300];
    int *zero = calloc((size_t)P, sizeof(int));
    for (int i = -1; i < xchg_algo_count(); i++) {
        xchg_algo a = i < 0 ? XCHG_ALGO_AUTO : xchg_algo_at(i);
        const char *name = xchg_algo_name(a);
        int rc = xchg_alltoallv_algo(a, NULL, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd, MPI_INT,
                                     comm);
        snprintf(w, sizeof w, "%s: NULL sendbuf with sendcounts > 0: MPI_ERR_BUFFER naming "
                 "sendbuf (class %d: %s)", name, a2av_err_class(rc), a2av_err_msg(rc));
        CHECK(a2av_err_class(rc) == MPI_ERR_BUFFER && strstr(a2av_err_msg(rc), "sendbuf"), "%s", w);
        rc = xchg_alltoallv_algo(a, b.sb, b.sc, b.sd, MPI_INT, NULL, b.rc, b.rd, MPI_INT, comm);
        snprintf(w, sizeof w, "%s: NULL recvbuf with recvcounts > 0: MPI_ERR_BUFFER naming "
                 "recvbuf (class %d: %s)", name, a2av_err_class(rc), a2av_err_msg(rc));
        CHECK(a2av_err_class(rc) == MPI_ERR_BUFFER && strstr(a2av_err_msg(rc), "recvbuf"), "%s", w);
        rc = xchg_alltoallv_algo(a, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, NULL, b.rc,
                                 b.rd, MPI_INT, comm);
        snprintf(w, sizeof w, "%s: MPI_IN_PLACE with a NULL recvbuf: MPI_ERR_BUFFER naming "
                 "recvbuf (class %d: %s)", name, a2av_err_class(rc), a2av_err_msg(rc));
        CHECK(a2av_err_class(rc) == MPI_ERR_BUFFER && strstr(a2av_err_msg(rc), "recvbuf"), "%s", w);
        memcpy(b.rb, b.sb, sizeof(int) * (size_t)P * 3);
        rc = xchg_alltoallv_algo(a, b.rb, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd, MPI_INT, comm);
        snprintf(w, sizeof w, "%s: sendbuf == recvbuf: MPI_ERR_BUFFER pointing to "
                 "MPI_IN_PLACE (class %d: %s)", name, a2av_err_class(rc), a2av_err_msg(rc));
        CHECK(a2av_err_class(rc) == MPI_ERR_BUFFER && strstr(a2av_err_msg(rc), "MPI_IN_PLACE"),
              "%s", w);
        /* nothing to move: NULL buffers and an aliased pair are fine */
        rc = xchg_alltoallv_algo(a, NULL, zero, zero, MPI_INT, b.rb, zero, zero, MPI_INT, comm);
        if (rc == MPI_SUCCESS)
            rc = xchg_alltoallv_algo(a, b.sb, zero, zero, MPI_INT, NULL, zero, zero, MPI_INT,
                                     comm);
        snprintf(w, sizeof w, "%s: a NULL buffer with zero counts is fine (%s)", name,
                 a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS, "%s", w);
        usable_after(name, a, &b, comm);
    }
    /* persistent init shares the checks */
    xchg_request req = XCHG_REQUEST_NULL;
    int rc = xchg_alltoallv_init_algo(XCHG_ALGO_LINEAR, NULL, b.sc, b.sd, MPI_INT, b.rb, b.rc,
                                      b.rd, MPI_INT, comm, MPI_INFO_NULL, &req);
    snprintf(w, sizeof w, "xchg_alltoallv_init: NULL sendbuf: MPI_ERR_BUFFER (%s)", a2av_err_msg(rc));
    CHECK(a2av_err_class(rc) == MPI_ERR_BUFFER && req == XCHG_REQUEST_NULL, "%s", w);
    free(zero);
    unmake(&b);
}

/* ---- truncate ---- */
/* Rank t, whose receive counts were wrong, ended with MPI_ERR_TRUNCATE and
 * left slots i and j of its receive buffer unwritten; every other rank has
 * its data or the same class. */
static void check_truncated(const bufs *b, int t, int cls, int i, int j, const char *w)
{
    if (rank == t)
        CHECK(cls == MPI_ERR_TRUNCATE && b->rb[i] == -1 && b->rb[j] == -1, "%s", w);
    else
        CHECK((cls == MPI_SUCCESS && all_ok(b)) || cls == MPI_ERR_TRUNCATE, "%s", w);
}

static void section_truncate(MPI_Comm comm, int argc, char **argv)
{
    bufs b;
    const int n = 5;
    make(&b, n, n + 2);
    char w[400];
    const int t = P > 1 ? 1 : 0; /* the rank with the odd receive count */
    for (int i = 0; i < xchg_algo_count(); i++) {
        xchg_algo a = xchg_algo_at(i);
        const char *name = xchg_algo_name(a);
        int listed = argc <= 2; /* further arguments: only these algorithms */
        for (int k = 2; k < argc; k++)
            listed |= strcmp(argv[k], name) == 0;
        if (!listed)
            continue;
        /* The baselines' truncation is the MPI library's business (MPICH raises
         * it on MPI_COMM_WORLD); only "fewer bytes than expected" is tried. */
        const int trunc_cases = xchg_algo_is_baseline(a) ? 0 : 2;
        for (int tc = 0; tc < trunc_cases; tc++) {
            int from = tc == 0 ? 0 : t; /* from rank 0, or the self block */
            if (tc == 1 && P == 1)
                continue; /* same as case 0 */
            reset_counts(&b);
            if (rank == t)
                b.rc[from] = n - 1;
            int rc = run(a, &b, comm);
            int cls = a2av_err_class(rc);
            snprintf(w, sizeof w, "%s: rank %d receives one int less than rank %d sends: "
                     "class %d (%s)", name, t, from, cls, a2av_err_msg(rc));
            check_truncated(&b, t, cls, from * b.stride + n - 1, from * b.stride + n, w);
            usable_after(name, a, &b, comm);
        }
        /* one element moved between two other ranks' blocks: the total from
         * them is right, the blocks are not (node_pairs_shm checks a node's
         * block sizes by a keyed sum, not only their total) */
        if (trunc_cases && P >= 4) {
            const int s1 = P - 1, s2 = P - 2; /* one int less from s1, one more from s2 */
            reset_counts(&b);
            if (rank == t)
                b.rc[s1] = n - 1, b.rc[s2] = n + 1;
            int rc = run(a, &b, comm);
            int cls = a2av_err_class(rc);
            snprintf(w, sizeof w, "%s: rank %d receives one int less from rank %d and one more "
                     "from rank %d: class %d (%s)", name, t, s1, s2, cls, a2av_err_msg(rc));
            check_truncated(&b, t, cls, s1 * b.stride + n - 1, s2 * b.stride + n, w);
            usable_after(name, a, &b, comm);
        }
        /* one element more expected than sent, from rank 0 (Open MPI's own
         * MPI_Alltoallv refuses it for the block to self: skipped there) */
        if (a == XCHG_ALGO_VENDOR && t == 0)
            continue;
        reset_counts(&b);
        if (rank == t)
            b.rc[0] = n + 1;
        int rc = run(a, &b, comm);
        snprintf(w, sizeof w, "%s: rank %d expects one int more than rank 0 sends: success, "
                 "only the %d sent written (%s)", name, t, n, a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && all_ok(&b), "%s", w);
        usable_after(name, a, &b, comm);
    }
    unmake(&b);
}

/* ---- nomem ---- */
static void section_nomem(MPI_Comm comm, int argc, char **argv)
{
    bufs b;
    const int n = 4;
    make(&b, n, n + 1);
    char w[400];
    const int t = P > 1 ? 1 : 0; /* declares a short receive from rank 0 */
    for (int i = 0; i < xchg_algo_count(); i++) {
        xchg_algo a = xchg_algo_at(i);
        const char *name = xchg_algo_name(a);
        int listed = argc <= 2;
        for (int k = 2; k < argc; k++)
            listed |= strcmp(argv[k], name) == 0;
        if (xchg_algo_is_baseline(a) || !listed)
            continue;
        for (int lim_rank = 0; lim_rank < (P > 1 ? 2 : 1); lim_rank++)
            for (int bad = 0; bad < 2; bad++) {
                /* The limited rank's peak without a limit: every 64 bytes
                 * up to it, and every 4 (the step of its needs: ints) over
                 * the last 512, where the last allocations (and the
                 * re-allocations for erroneous counts) fail. */
                for (int k = 0; k < 2; k++) { /* a second call: node_pairs_shm's way
                                               * for the next calls is set by the last */
                    reset_counts(&b);
                    if (bad && rank == t)
                        b.rc[0] = 1;
                    run(a, &b, comm);
                }
                xchg_stats st;
                xchg_get_stats(comm, &st);
                long peak = (long)st.temp_bytes;
                MPI_Bcast(&peak, 1, MPI_LONG, lim_rank, MPI_COMM_WORLD);
                for (long lim = 0; lim <= peak + 8; lim += lim + 512 < peak ? 64 : 4) {
                    char ls[32];
                    snprintf(ls, sizeof ls, "%ld", lim);
                    reset_counts(&b);
                    if (bad && rank == t)
                        b.rc[0] = 1;
                    if (rank == lim_rank)
                        setenv("XCHG_FAULT_TEMP_LIMIT", ls, 1);
                    int rc = run(a, &b, comm);
                    unsetenv("XCHG_FAULT_TEMP_LIMIT");
                    int cls = a2av_err_class(rc);
                    int ok = cls == MPI_ERR_NO_MEM || cls == MPI_ERR_TRUNCATE ||
                             (cls == MPI_SUCCESS && all_ok(&b));
                    if (bad && rank == t)
                        ok = ok && cls != MPI_SUCCESS; /* its block from 0 is short */
                    if (lim == 0 && peak > 0 && rank == lim_rank)
                        ok = ok && cls != MPI_SUCCESS; /* the limit did bite */
                    snprintf(w, sizeof w, "%s, XCHG_FAULT_TEMP_LIMIT=%ld on rank %d (peak %ld), "
                             "%s counts: class %d (%s)", name, lim, lim_rank, peak,
                             bad ? "short" : "matching", cls, a2av_err_msg(rc));
                    CHECK(ok, "%s", w);
                    if (!ok)
                        break; /* one report per series is enough */
                }
                usable_after(name, a, &b, comm);
            }
    }
    unmake(&b);
}

/* ---- inplace ---- */
static void section_inplace(MPI_Comm comm, int argc, char **argv)
{
    bufs b;
    const int n = 3;
    make(&b, n, n + 1);
    char w[400];
    const int t = P - 1; /* the rank without memory */
    for (int k = 2; k < argc; k++) {
        xchg_algo a = xchg_algo_from_name(argv[k]);
        reset_counts(&b);
        memcpy(b.rb, b.sb, sizeof(int) * (size_t)P * (size_t)b.stride);
        if (rank == t)
            setenv("XCHG_FAULT_TEMP_LIMIT", "0", 1);
        int rc = xchg_alltoallv_algo(a, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, b.rb, b.rc,
                                     b.rd, MPI_INT, comm);
        unsetenv("XCHG_FAULT_TEMP_LIMIT");
        snprintf(w, sizeof w, "%s: MPI_IN_PLACE, rank %d without memory for its copy: class "
                 "%d (%s)", argv[k], t, a2av_err_class(rc), a2av_err_msg(rc));
        CHECK(a != XCHG_ALGO_INVALID && a2av_err_class(rc) == MPI_ERR_NO_MEM, "%s", w);
        usable_after(argv[k], a, &b, comm);
    }
    unmake(&b);
}

/* ---- persistent ---- */
static void section_persistent(void)
{
    bufs b;
    const int n = 3;
    make(&b, n, n + 1);
    char w[400];
    /* errors of a request whose communicator is gone go to MPI_COMM_SELF */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < xchg_algo_count(); i++) {
        xchg_algo a = xchg_algo_at(i);
        const char *name = xchg_algo_name(a);
        /* 1. the communicator is freed before the request */
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        reset_counts(&b);
        xchg_request req = XCHG_REQUEST_NULL;
        int rc = xchg_alltoallv_init_algo(a, b.sb, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd,
                                          MPI_INT, comm, MPI_INFO_NULL, &req);
        snprintf(w, sizeof w, "%s: init (%s)", name, a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS, "%s", w);
        if (rc != MPI_SUCCESS)
            continue;
        MPI_Comm_free(&comm);
        for (int cycle = 0; cycle < 2; cycle++) {
            memset(b.rb, 0xff, sizeof(int) * (size_t)P * (size_t)b.stride);
            rc = xchg_start(req);
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(req);
            snprintf(w, sizeof w, "%s: start/wait %d after MPI_Comm_free of its communicator "
                     "(%s)", name, cycle, a2av_err_msg(rc));
            CHECK(rc == MPI_SUCCESS && all_ok(&b), "%s", w);
        }
        rc = xchg_wait(req); /* inactive: MPI_SUCCESS at once, as MPI_Wait */
        snprintf(w, sizeof w, "%s: wait on an inactive request after the comm is freed: "
                 "MPI_SUCCESS (%s)", name, a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS, "%s", w);
        /* a misuse: raised on MPI_COMM_SELF, which returns */
        rc = xchg_start(req);
        int twice = rc == MPI_SUCCESS ? xchg_start(req) : MPI_SUCCESS;
        if (rc == MPI_SUCCESS)
            rc = xchg_wait(req);
        snprintf(w, sizeof w, "%s: start of an active request after the comm is freed: "
                 "MPI_ERR_REQUEST (%s; then wait: class %d)", name, a2av_err_msg(twice),
                 a2av_err_class(rc));
        CHECK(a2av_err_class(twice) == MPI_ERR_REQUEST && rc == MPI_SUCCESS, "%s", w);
        rc = xchg_request_free(&req);
        snprintf(w, sizeof w, "%s: request freed after its communicator (%s)", name,
                 a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && req == XCHG_REQUEST_NULL, "%s", w);

        /* 2. a bad self block on rank t: its start or wait fails, every
         * time, and the request stays usable; the others get their data */
        if (xchg_algo_is_baseline(a)) /* MPI's own truncation: not ours to test */
            continue;
        const int t = P > 1 ? 1 : 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        reset_counts(&b);
        if (rank == t)
            b.rc[t] = n - 1;
        rc = xchg_alltoallv_init_algo(a, b.sb, b.sc, b.sd, MPI_INT, b.rb, b.rc, b.rd, MPI_INT,
                                      comm, MPI_INFO_NULL, &req);
        if (rc == MPI_SUCCESS) {
            for (int cycle = 0; cycle < 3; cycle++) {
                memset(b.rb, 0xff, sizeof(int) * (size_t)P * (size_t)b.stride);
                rc = xchg_start(req);
                if (rc == MPI_SUCCESS)
                    rc = xchg_wait(req);
                int cls = a2av_err_class(rc);
                snprintf(w, sizeof w, "%s: cycle %d with a self block too large on rank %d: "
                         "class %d (%s)", name, cycle, t, cls, a2av_err_msg(rc));
                if (rank == t)
                    CHECK(cls == MPI_ERR_TRUNCATE, "%s", w);
                else
                    CHECK((cls == MPI_SUCCESS && all_ok(&b)) || cls == MPI_ERR_TRUNCATE, "%s", w);
            }
            rc = xchg_request_free(&req);
            snprintf(w, sizeof w, "%s: free after failed starts (%s)", name, a2av_err_msg(rc));
            CHECK(rc == MPI_SUCCESS, "%s", w);
        } else {
            /* an algorithm that checks at init must refuse with the class */
            snprintf(w, sizeof w, "%s: init with a bad self block on rank %d: class %d (%s)",
                     name, t, a2av_err_class(rc), a2av_err_msg(rc));
            CHECK(a2av_err_class(rc) == MPI_ERR_TRUNCATE || rank != t, "%s", w);
        }
        usable_after(name, a, &b, comm);
        MPI_Comm_free(&comm);
    }
    unmake(&b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *section = argc > 1 ? argv[1] : "";
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (strcmp(section, "buffers") == 0) {
        section_buffers(comm);
    } else if (strcmp(section, "truncate") == 0) {
        section_truncate(comm, argc, argv);
    } else if (strcmp(section, "inplace") == 0) {
        section_inplace(comm, argc, argv);
    } else if (strcmp(section, "nomem") == 0) {
        section_nomem(comm, argc, argv);
    } else if (strcmp(section, "persistent") == 0) {
        section_persistent();
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: test_robust buffers|truncate|nomem [algo...]|inplace algo...|persistent\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_free(&comm);
    int tot[2] = {npass, nfail}, all[2];
    MPI_Reduce(tot, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_robust %s on %d ranks: %d passed, %d failed\n", section, P, all[0],
               all[1]);
    MPI_Finalize();
    return nfail || (rank == 0 && all[1]) ? 1 : 0;
}
