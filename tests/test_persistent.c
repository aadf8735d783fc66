/*
 * test_persistent.c - persistent requests (xchg_alltoallv_init, xchg_start,
 * xchg_wait, xchg_test, xchg_request_free) for every registered algorithm.
 *
 * For each algorithm: one request per case, then many start/wait cycles
 * with the buffer contents changed between starts, each cycle checked byte
 * for byte against MPI_Alltoallv run on the same inputs (the receive buffer
 * is not reset between cycles, so bytes outside the blocks must survive
 * every cycle). The count/displacement arrays and derived datatypes given
 * to init are copies that are scribbled over and freed right after init:
 * the request must not depend on them. Cases cover non-contiguous and
 * differing types, gaps, MPI_IN_PLACE (whose data to send is whatever
 * recvbuf holds at each start), polling with xchg_test followed by
 * xchg_wait (which returns at once, as MPI_Wait on an inactive request),
 * wait/test on an inactive request (MPI_SUCCESS, flag 1), and the errors:
 * start on an active request, free of an active one, start or free of a
 * NULL request.
 *
 * Usage: test_persistent [algo ...] (default: every algorithm, then "auto"
 * through the plain xchg_alltoallv_init). Exits non-zero on any failure.
 */
#include "a2av_cases.h"
#include "ran_as.h"
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_RANK world_rank
#include "check.h"

static int npass, nfail, world_rank, world_size;
static int handler_calls;

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm; (void)code;
    handler_calls++;
}

static void verdict(const char *algo, const char *what, int ok, const char *why)
{
    CHECK_ALL(ok, "%s %s%s%s", algo, what, ok ? "" : ": ", ok ? "" : why);
}

/* Start/wait cycles on the main case: 200 where that is cheap; MPICH busy-
 * polls when oversubscribed, so fewer there at high rank counts. */
static int main_cycles(void)
{
#ifdef MPICH_VERSION
    return world_size <= 3 ? 200 : 20;
#else
    return world_size <= 4 ? 200 : 50;
#endif
}

static MPI_Datatype dup_type(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_NAMED)
        return t;
    MPI_Datatype d;
    MPI_Type_dup(t, &d);
    return d;
}

static void free_type(MPI_Datatype *t)
{
    int ni, na, nd, comb;
    MPI_Type_get_envelope(*t, &ni, &na, &nd, &comb);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(t);
}

static int *copy_ints(const int *a, int n)
{
    int *b = malloc(sizeof(int) * (size_t)n);
    memcpy(b, a, sizeof(int) * (size_t)n);
    return b;
}

static void scribble_free(int *a, int n)
{
    memset(a, 0xff, sizeof(int) * (size_t)n);
    free(a);
}

static int init_request(xchg_algo algo, const void *sb, const int *sc, const int *sd,
                        MPI_Datatype st, void *rb, const int *rc, const int *rd,
                        MPI_Datatype rt, MPI_Comm comm, xchg_request *req)
{
    if (algo == XCHG_ALGO_AUTO)
        return xchg_alltoallv_init(sb, sc, sd, st, rb, rc, rd, rt, comm, MPI_INFO_NULL, req);
    return xchg_alltoallv_init_algo(algo, sb, sc, sd, st, rb, rc, rd, rt, comm, MPI_INFO_NULL,
                                    req);
}

static int errclass(int rc)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

/* One case: init, `cycles` start/complete cycles, free. poll: complete with
 * xchg_test on every other cycle. */
static void run_case(const char *name, xchg_algo algo, const char *pat, const char *lay,
                     const char *types, int in_place, unsigned seed, int cycles)
{
    a2av_case c;
    char what[256], why[512] = "";
    int ok = 1;
    if (a2av_case_build(&c, MPI_COMM_WORLD, pat, lay, types, in_place, seed) != 0) {
        verdict(name, pat, 0, "cannot build case");
        return;
    }
    snprintf(what, sizeof what, "%s x%d", c.name, cycles);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const int P = c.P;
    size_t nint_s = c.sendbytes / sizeof(int), nint_r = c.recvbytes / sizeof(int);
    int *sendbuf = malloc(c.sendbytes);     /* bound at init, refilled per cycle */
    int *got = malloc(c.recvbytes);         /* bound at init, never reset */
    char *ref = malloc(c.recvbytes), *refsend = malloc(c.recvbytes);
    memcpy(sendbuf, c.sendbuf, c.sendbytes);
    memcpy(got, c.recv_init, c.recvbytes);

    /* init from copies that die right after it */
    int *sc = copy_ints(c.sendcounts, P), *sd = copy_ints(c.sdispls, P);
    int *rc = copy_ints(c.recvcounts, P), *rd = copy_ints(c.rdispls, P);
    MPI_Datatype st = dup_type(c.sendtype), rt = dup_type(c.recvtype);
    xchg_request req = XCHG_REQUEST_NULL;
    int err = init_request(algo, in_place ? MPI_IN_PLACE : sendbuf, sc, sd, st, got, rc, rd, rt,
                           comm, &req);
    scribble_free(sc, P); scribble_free(sd, P); scribble_free(rc, P); scribble_free(rd, P);
    free_type(&st);
    free_type(&rt);
    if (err != MPI_SUCCESS) {
        snprintf(why, sizeof why, "init returned error class %d", errclass(err));
        ok = 0;
    } else {
        /* forced, or for the plain init what XCHG_ALLTOALLV_ALGO names */
        const char *env = getenv("XCHG_ALLTOALLV_ALGO");
        xchg_algo want = algo != XCHG_ALGO_AUTO ? algo
                         : (env && *env ? xchg_algo_from_name(env) : XCHG_ALGO_AUTO);
        if (want != XCHG_ALGO_AUTO && xchg_request_algo(req) != want) {
            snprintf(why, sizeof why, "request runs algorithm %d, expected %d",
                     (int)xchg_request_algo(req), (int)want);
            ok = 0;
        }
    }

    for (int it = 0; it < cycles && ok; it++) {
        unsigned mask = 0x9E3779B1u * (unsigned)(it + 1) + (unsigned)world_rank;
        if (in_place) {
            /* every other cycle new data; else send back the last result */
            if (it % 2 == 0)
                for (size_t k = 0; k < nint_r; k++)
                    got[k] = ((const int *)c.recv_init)[k] ^ (int)mask;
        } else {
            for (size_t k = 0; k < nint_s; k++)
                sendbuf[k] = ((const int *)c.sendbuf)[k] ^ (int)mask;
        }
        /* reference on identical inputs */
        memcpy(ref, got, c.recvbytes);
        if (in_place) {
            memcpy(refsend, got, c.recvbytes);
            err = MPI_Alltoallv(refsend, c.recvcounts, c.rdispls, c.recvtype, ref, c.recvcounts,
                                c.rdispls, c.recvtype, MPI_COMM_WORLD);
        } else {
            err = MPI_Alltoallv(sendbuf, c.sendcounts, c.sdispls, c.sendtype, ref, c.recvcounts,
                                c.rdispls, c.recvtype, MPI_COMM_WORLD);
        }
        if (err == MPI_SUCCESS)
            err = xchg_start(req);
        if (err == MPI_SUCCESS) {
            if (it % 2 == 1) {
                int flag = 0;
                while (err == MPI_SUCCESS && !flag)
                    err = xchg_test(req, &flag);
                if (err == MPI_SUCCESS) /* the test-then-wait pattern: at once */
                    err = xchg_wait(req);
            } else {
                err = xchg_wait(req);
            }
        }
        if (err != MPI_SUCCESS) {
            snprintf(why, sizeof why, "cycle %d: error class %d", it, errclass(err));
            ok = 0;
        } else if (memcmp(ref, got, c.recvbytes) != 0) {
            size_t k = 0;
            while (ref[k] == ((char *)got)[k])
                k++;
            snprintf(why, sizeof why, "cycle %d (%s): byte %zu of %zu differs from "
                     "MPI_Alltoallv's (expected 0x%02x, got 0x%02x)", it,
                     it % 2 ? "xchg_test" : "xchg_wait", k, c.recvbytes,
                     (unsigned char)ref[k], ((unsigned char *)got)[k]);
            ok = 0;
        }
        /* a rank that failed stops; keep every rank in step */
        int all = 0;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all && ok) {
            ok = 0;
            snprintf(why, sizeof why, "another rank failed at cycle %d", it);
        }
    }
    if (ok && algo != XCHG_ALGO_AUTO) {
        xchg_stats s;
        if (xchg_get_stats(comm, &s) != MPI_SUCCESS || !ran_as_forced(algo, s.algo) ||
            s.calls != (unsigned long)cycles) {
            snprintf(why, sizeof why, "xchg_get_stats: algo %d calls %lu, expected %d and %d",
                     (int)s.algo, s.calls, (int)algo, cycles);
            ok = 0;
        }
    }
    if (req != XCHG_REQUEST_NULL) {
        err = xchg_request_free(&req);
        if (ok && (err != MPI_SUCCESS || req != XCHG_REQUEST_NULL)) {
            snprintf(why, sizeof why, "xchg_request_free: error class %d", errclass(err));
            ok = 0;
        }
    }
    verdict(name, what, ok, why);
    MPI_Comm_free(&comm);
    free(sendbuf); free(got); free(ref); free(refsend);
    a2av_case_free(&c);
}

static void expect_err(const char *name, const char *what, int rc, int *ok, char *why,
                       size_t wlen)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len;
    if (errclass(rc) != MPI_ERR_REQUEST) {
        snprintf(why, wlen, "%s: error class %d, expected MPI_ERR_REQUEST", what, errclass(rc));
        *ok = 0;
        return;
    }
    xchg_error_string(rc, msg, &len);
    if (!strstr(msg, "xchg_")) {
        snprintf(why, wlen, "%s: message \"%s\" names no function", what, msg);
        *ok = 0;
    }
    (void)name;
}

/* Inactive requests and misuse: wait and test on an inactive request
 * succeed at once (test with flag 1); each misuse comes back as
 * MPI_ERR_REQUEST through the error handler and leaves the request usable. */
static void run_errors(const char *name, xchg_algo algo)
{
    char why[512] = "";
    int ok = 1;
    const int P = world_size;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    int *cnt = malloc(sizeof(int) * (size_t)P), *dsp = malloc(sizeof(int) * (size_t)P);
    int *sb = malloc(sizeof(int) * (size_t)P), *rb = malloc(sizeof(int) * (size_t)P);
    for (int j = 0; j < P; j++) {
        cnt[j] = 1;
        dsp[j] = j;
        sb[j] = world_rank * 1000 + j;
        rb[j] = -1;
    }
    xchg_request req = XCHG_REQUEST_NULL;
    int rc = init_request(algo, sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, comm, &req);
    if (rc != MPI_SUCCESS) {
        snprintf(why, sizeof why, "init: error class %d", errclass(rc));
        ok = 0;
    }
    int calls0 = handler_calls;
    if (ok) {
        rc = xchg_wait(req);
        if (rc != MPI_SUCCESS) {
            snprintf(why, sizeof why, "xchg_wait on a request never started: class %d",
                     errclass(rc));
            ok = 0;
        }
        int flag = 7;
        rc = xchg_test(req, &flag);
        if (ok && (rc != MPI_SUCCESS || flag != 1)) {
            snprintf(why, sizeof why, "xchg_test on a request never started: class %d, "
                     "flag %d", errclass(rc), flag);
            ok = 0;
        }
        rc = xchg_start(req);
        if (rc != MPI_SUCCESS && ok) {
            snprintf(why, sizeof why, "xchg_start: error class %d", errclass(rc));
            ok = 0;
        }
        rc = xchg_start(req);
        if (ok)
            expect_err(name, "xchg_start on an active request", rc, &ok, why, sizeof why);
        rc = xchg_request_free(&req);
        if (ok)
            expect_err(name, "xchg_request_free of an active request", rc, &ok, why, sizeof why);
        if (ok && req == XCHG_REQUEST_NULL) {
            snprintf(why, sizeof why, "failed xchg_request_free cleared the request");
            ok = 0;
        }
        rc = xchg_wait(req);
        if (rc != MPI_SUCCESS && ok) {
            snprintf(why, sizeof why, "xchg_wait after the errors: class %d", errclass(rc));
            ok = 0;
        }
        rc = xchg_wait(req); /* inactive again */
        if (rc != MPI_SUCCESS && ok) {
            snprintf(why, sizeof why, "second xchg_wait: class %d", errclass(rc));
            ok = 0;
        }
        for (int j = 0; j < P && ok; j++)
            if (rb[j] != j * 1000 + world_rank) {
                snprintf(why, sizeof why, "after the errors: element from %d is %d", j, rb[j]);
                ok = 0;
            }
        if (ok && handler_calls - calls0 != 2) {
            snprintf(why, sizeof why, "comm's error handler called %d times for 2 errors",
                     handler_calls - calls0);
            ok = 0;
        }
    }
    if (req != XCHG_REQUEST_NULL) {
        rc = xchg_request_free(&req);
        if (ok && (rc != MPI_SUCCESS || req != XCHG_REQUEST_NULL)) {
            snprintf(why, sizeof why, "xchg_request_free: class %d", errclass(rc));
            ok = 0;
        }
    }
    /* a NULL request: wait and test succeed, as on MPI_REQUEST_NULL; start
     * and free are errors, raised on MPI_COMM_SELF */
    if (ok) {
        xchg_request none = XCHG_REQUEST_NULL;
        int flag = 0;
        expect_err(name, "xchg_start(NULL)", xchg_start(none), &ok, why, sizeof why);
        rc = xchg_wait(none);
        if (ok && rc != MPI_SUCCESS) {
            snprintf(why, sizeof why, "xchg_wait(NULL): class %d", errclass(rc));
            ok = 0;
        }
        rc = xchg_test(none, &flag);
        if (ok && (rc != MPI_SUCCESS || flag != 1)) {
            snprintf(why, sizeof why, "xchg_test(NULL): class %d, flag %d", errclass(rc),
                     flag);
            ok = 0;
        }
        if (ok)
            expect_err(name, "xchg_request_free(&NULL)", xchg_request_free(&none), &ok, why,
                       sizeof why);
    }
    /* free while idle, never started */
    rc = init_request(algo, sb, cnt, dsp, MPI_INT, rb, cnt, dsp, MPI_INT, comm, &req);
    if (rc == MPI_SUCCESS)
        rc = xchg_request_free(&req);
    if (ok && rc != MPI_SUCCESS) {
        snprintf(why, sizeof why, "init + free without start: class %d", errclass(rc));
        ok = 0;
    }
    verdict(name, "errors and free while idle", ok, why);
    free(cnt); free(dsp); free(sb); free(rb);
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
}

static void test_algo(const char *name)
{
    xchg_algo algo = xchg_algo_from_name(name);
    if (algo == XCHG_ALGO_INVALID) {
        verdict(name, "name lookup", 0, "unknown algorithm");
        return;
    }
    unsigned seed = 501;
    int n = main_cycles();
    run_case(name, algo, "random", "contig", "int", 0, seed++, n);
    run_case(name, algo, "random", "contig", "int", 1, seed++, n / 4 + 2);
    run_case(name, algo, "sparse", "gaps_reversed", "pair_vs_int", 0, seed++, 6);
    run_case(name, algo, "random", "gaps_reversed", "vector_vs_contig", 0, seed++, 6);
    run_case(name, algo, "onesided", "gaps_reversed", "lb_shift", 0, seed++, 4);
    run_case(name, algo, "random", "gaps_reversed", "int_vs_resized", 1, seed++, 6);
    run_case(name, algo, "onesided", "contig", "int", 1, seed++, 4);
    run_case(name, algo, "zero", "contig", "int", 0, seed++, 3);
    run_case(name, algo, "large", "gaps_reversed", "vector_vs_contig", 0, seed++, 2);
    run_errors(name, algo);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            test_algo(argv[i]);
    } else {
        for (int i = 0; i < xchg_algo_count(); i++)
            test_algo(xchg_algo_name(xchg_algo_at(i)));
        test_algo("auto");
    }
    if (world_rank == 0)
        printf("test_persistent on %d ranks: %d passed, %d failed\n", world_size, npass,
               nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
