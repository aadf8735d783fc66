/*
 * test_nonblocking.c - what xchg_ialltoallv adds to the blocking call.
 *
 * test_alltoallv --nonblocking checks every algorithm's results through
 * xchg_ialltoallv against MPI_Alltoallv; this program checks the
 * nonblocking behaviour itself, for every algorithm (or those named):
 *  - start returns before the partners arrive: rank 0 starts, then sends
 *    rank 1 a message that rank 1 receives before it starts (a start that
 *    waited for its partners would hang here, caught by the CTest timeout);
 *    the same for a persistent start;
 *  - two exchanges on two communicators, waited for in opposite orders on
 *    even and odd ranks (waiting for one must progress the other);
 *  - three exchanges outstanding on one communicator, then a blocking call
 *    on it, completed in reverse order;
 *  - progress by xchg_test alone, with computation between tests;
 *  - a wait on a completed request returns MPI_SUCCESS at once (after
 *    completion by test or by wait, after an error too);
 *  - errors: xchg_start of a nonblocking request, an argument error
 *    reported by the completing wait on every rank.
 * Results are checked against a formula (block (s,d) holds s, d, i).
 * rma_fence and rma_lock create a window in every call (blocking), so
 * they skip the "start returns" checks (docs/user-guide.md, "Nonblocking use").
 *
 * Usage: test_nonblocking [algo ...]
 */
#include "ran_as.h"
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int rank, P, npass, nfail;

static void verdict(const char *algo, const char *what, int ok)
{
    int nfail_before = nfail;
    CHECK_ALL(ok, "%s: %s", algo, what);
    if (rank == 0 && getenv("XCHG_TEST_VERBOSE"))
        fprintf(stderr, "%s: %s: %s\n", algo, what, nfail_before == nfail ? "ok" : "FAILED");
}

/* An exchange whose every block is known from a seed. */
typedef struct {
    int *sc, *sd, *rc, *rd, *sb, *rb;
    int seed;
} xcase;

static int count_of(int s, int d, int seed)
{
    return (s * 7 + d * 3 + seed) % 6; /* zeros included */
}

static void make(xcase *x, int seed)
{
    x->seed = seed;
    x->sc = malloc(sizeof(int) * 4 * (size_t)P);
    x->sd = x->sc + P;
    x->rc = x->sc + 2 * P;
    x->rd = x->sc + 3 * P;
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        x->sc[j] = count_of(rank, j, seed);
        x->sd[j] = ns;
        ns += x->sc[j];
        x->rc[j] = count_of(j, rank, seed);
        x->rd[j] = nr;
        nr += x->rc[j];
    }
    x->sb = malloc(sizeof(int) * (size_t)(ns + 1));
    x->rb = malloc(sizeof(int) * (size_t)(nr + 1));
    for (int j = 0; j < P; j++)
        for (int i = 0; i < x->sc[j]; i++)
            x->sb[x->sd[j] + i] = (rank * 1000 + j) * 100 + i;
    for (int i = 0; i < nr; i++)
        x->rb[i] = -1;
}

static int right(const xcase *x)
{
    for (int j = 0; j < P; j++)
        for (int i = 0; i < x->rc[j]; i++)
            if (x->rb[x->rd[j] + i] != (j * 1000 + rank) * 100 + i)
                return 0;
    return 1;
}

static void drop(xcase *x)
{
    free(x->sc);
    free(x->sb);
    free(x->rb);
}

static int start(xchg_algo a, xcase *x, MPI_Comm comm, xchg_request *req)
{
    return xchg_ialltoallv_algo(a, x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT,
                                comm, req);
}

/* Completes *req by xchg_test or xchg_wait, then waits once more: the
 * request is inactive, so that wait returns MPI_SUCCESS at once (as
 * MPI_Wait on the MPI_REQUEST_NULL MPI leaves), whatever the exchange
 * returned; then frees it. */
static int finish(xchg_request *req, int by_test)
{
    int rc = MPI_SUCCESS, flag = 0;
    if (by_test) {
        while (!flag && rc == MPI_SUCCESS)
            rc = xchg_test(*req, &flag);
    } else {
        rc = xchg_wait(*req);
    }
    int again = xchg_wait(*req);
    if (again != MPI_SUCCESS) /* shows as a wrong class, also after an error */
        rc = again;
    int frc = xchg_request_free(req);
    return rc != MPI_SUCCESS ? rc : frc;
}

static int blocks_at_start(xchg_algo a)
{
    return a == xchg_algo_from_name("rma_fence") || a == xchg_algo_from_name("rma_lock");
}

static void test_algo(const char *name)
{
    xchg_algo a = xchg_algo_from_name(name);
    if (a == XCHG_ALGO_INVALID) {
        verdict(name, "unknown algorithm", 0);
        return;
    }
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    MPI_Comm_set_errhandler(c1, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    {
        /* one blocking call and one nonblocking call first: the
         * communicators' one-time setup (shm's nonblocking calls have a
         * window of their own, made at the first one's start) */
        xcase x;
        make(&x, 0);
        int rc = xchg_alltoallv_algo(a, x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd, MPI_INT, c1);
        rc |= xchg_alltoallv_algo(a, x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd, MPI_INT, c2);
        verdict(name, "blocking call for setup", rc == MPI_SUCCESS && right(&x));
        drop(&x);
        for (int k = 0; k < 2; k++) {
            xchg_request req = XCHG_REQUEST_NULL;
            make(&x, 0);
            rc = start(a, &x, k ? c2 : c1, &req);
            if (rc == MPI_SUCCESS)
                rc = finish(&req, 0);
            verdict(name, "nonblocking call for setup", rc == MPI_SUCCESS && right(&x));
            drop(&x);
        }
    }

    if (!blocks_at_start(a) && P > 1) {
        /* rank 0 starts, then sends to rank 1, which receives before it starts */
        xcase x;
        make(&x, 1);
        xchg_request req = XCHG_REQUEST_NULL;
        int rc = MPI_SUCCESS, token = 42, got = 0;
        if (rank == 0) {
            rc = start(a, &x, c1, &req);
            MPI_Send(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(&got, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc = start(a, &x, c1, &req);
        } else {
            rc = start(a, &x, c1, &req);
        }
        if (rc == MPI_SUCCESS)
            rc = finish(&req, 0);
        verdict(name, "xchg_ialltoallv returns before its partners start",
                rc == MPI_SUCCESS && right(&x) && (rank != 1 || got == 42));
        drop(&x);

        /* the same for a persistent start */
        make(&x, 2);
        rc = xchg_alltoallv_init_algo(a, x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd, MPI_INT,
                                      c1, MPI_INFO_NULL, &req);
        int ok = rc == MPI_SUCCESS;
        for (int it = 0; it < 2 && ok; it++) {
            got = 0;
            if (rank == 0) {
                rc = xchg_start(req);
                MPI_Send(&token, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
            } else if (rank == 1) {
                MPI_Recv(&got, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                rc = xchg_start(req);
            } else {
                rc = xchg_start(req);
            }
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(req);
            ok = rc == MPI_SUCCESS && right(&x) && (rank != 1 || got == 42);
        }
        if (rc == MPI_SUCCESS || req != XCHG_REQUEST_NULL)
            xchg_request_free(&req);
        verdict(name, "xchg_start (persistent) returns before its partners start", ok);
        drop(&x);
    }

    {
        /* two communicators, waited for in opposite orders */
        xcase x, y;
        make(&x, 3);
        make(&y, 4);
        xchg_request rx = XCHG_REQUEST_NULL, ry = XCHG_REQUEST_NULL;
        int rc = start(a, &x, c1, &rx);
        int rc2 = start(a, &y, c2, &ry);
        if (rank % 2) {
            rc = rc == MPI_SUCCESS ? finish(&rx, 0) : rc;
            rc2 = rc2 == MPI_SUCCESS ? finish(&ry, 0) : rc2;
        } else {
            rc2 = rc2 == MPI_SUCCESS ? finish(&ry, 0) : rc2;
            rc = rc == MPI_SUCCESS ? finish(&rx, 0) : rc;
        }
        verdict(name, "two communicators, waited for in opposite orders",
                rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && right(&x) && right(&y));
        drop(&x);
        drop(&y);
    }

    {
        /* three outstanding on one communicator, then a blocking call on
         * it, completed in reverse order */
        xcase x[4];
        xchg_request r[3];
        int rc = MPI_SUCCESS;
        for (int k = 0; k < 4; k++)
            make(&x[k], 5 + k);
        for (int k = 0; k < 3; k++)
            rc |= start(a, &x[k], c1, &r[k]);
        rc |= xchg_alltoallv_algo(a, x[3].sb, x[3].sc, x[3].sd, MPI_INT, x[3].rb, x[3].rc,
                                  x[3].rd, MPI_INT, c1);
        for (int k = 2; k >= 0; k--)
            rc |= finish(&r[k], k == 1);
        int ok = rc == MPI_SUCCESS;
        for (int k = 0; k < 4; k++) {
            ok = ok && right(&x[k]);
            drop(&x[k]);
        }
        verdict(name, "three outstanding on one communicator and a blocking call", ok);
    }

    {
        /* progress by xchg_test alone, computing between tests */
        xcase x;
        make(&x, 9);
        xchg_request req = XCHG_REQUEST_NULL;
        int rc = start(a, &x, c2, &req), flag = 0;
        volatile double sink = 0;
        long tests = 0;
        while (rc == MPI_SUCCESS && !flag) {
            for (int i = 0; i < 20000; i++)
                sink += i * 0.5;
            rc = xchg_test(req, &flag);
            tests++;
        }
        xchg_algo ran = xchg_request_algo(req);
        if (req != XCHG_REQUEST_NULL)
            xchg_request_free(&req);
        verdict(name, "completed by xchg_test with computation between",
                rc == MPI_SUCCESS && flag && right(&x) && tests > 0 &&
                    (a == XCHG_ALGO_AUTO ? ran != XCHG_ALGO_INVALID : ran_as_forced(a, ran)));
        drop(&x);
    }

    {
        /* errors */
        xcase x;
        make(&x, 10);
        xchg_request req = XCHG_REQUEST_NULL;
        int rc = start(a, &x, c1, &req), src = MPI_ERR_OTHER;
        if (rc == MPI_SUCCESS) {
            src = xchg_start(req); /* not persistent */
            rc = finish(&req, 0);
        }
        int cls = MPI_SUCCESS;
        MPI_Error_class(src, &cls);
        verdict(name, "xchg_start refuses a nonblocking request",
                rc == MPI_SUCCESS && cls == MPI_ERR_REQUEST && right(&x));
        drop(&x);
    }
    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
}

/* An argument error on one rank, found by the completing wait on every
 * rank: padded_alltoall folds it into its agreement (registry:
 * agrees_errors), so every rank fails with its class. */
static void test_error(void)
{
    xcase x;
    make(&x, 11);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (rank == 0)
        x.sc[0] = -1;
    xchg_request req = XCHG_REQUEST_NULL;
    int rc = start(xchg_algo_from_name("padded_alltoall"), &x, c, &req);
    if (rc == MPI_SUCCESS)
        rc = finish(&req, 0);
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    verdict("padded_alltoall", "one rank's negative count fails every rank's wait",
            cls == MPI_ERR_COUNT);
    /* the communicator is usable afterwards */
    x.sc[0] = count_of(rank, 0, 11);
    rc = start(xchg_algo_from_name("padded_alltoall"), &x, c, &req);
    if (rc == MPI_SUCCESS)
        rc = finish(&req, 1);
    verdict("padded_alltoall", "usable after the error", rc == MPI_SUCCESS && right(&x));
    MPI_Comm_free(&c);
    drop(&x);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            test_algo(argv[i]);
    } else {
        for (int i = 0; i < xchg_algo_count(); i++)
            test_algo(xchg_algo_name(xchg_algo_at(i)));
        test_algo("auto");
        test_error();
    }
    if (rank == 0)
        printf("test_nonblocking on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
