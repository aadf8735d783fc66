/*
 * test_large_count.c - the large-count entry points (xchg_alltoallv_c,
 * xchg_alltoallv_algo_c, xchg_alltoallv_init_c, xchg_alltoallv_init_algo_c),
 * built where the MPI library has MPI_Alltoallv_c (XCHG_HAVE_LARGE_COUNT).
 *
 * 1. Values that fit in int: every algorithm and auto, through the _c
 *    calls (arrays widened to MPI_Count/MPI_Aint), on the shared cases
 *    (patterns, gaps, non-contiguous and differing types, MPI_IN_PLACE)
 *    against MPI_Alltoallv byte for byte; the algorithm that ran is the one
 *    forced and nothing was passed to MPI. Persistent: init_c, three
 *    start/wait cycles against the same reference.
 * 2. Values beyond int on one rank only (the others cannot know): a send
 *    displacement above 3e9 bytes (a sparse mapping: only the pages
 *    touched cost memory) and a count above INT_MAX of a zero-size type.
 *    auto and vendor pass the call to MPI_Alltoallv_c on every rank (data
 *    checked by formula, xchg_stats.passed_to_mpi on every rank), also
 *    persistently (MPI_Alltoallv_init_c); every other algorithm fails on
 *    every rank with MPI_ERR_COUNT, the failing rank naming the argument,
 *    the others naming the rank.
 * 3. A negative count below INT_MIN: MPI_ERR_COUNT naming it, exactly.
 * Nonblocking (xchg_ialltoallv_c, _algo_c): 1 and 2 again, the agreement
 *    running inside the exchange (a refusal comes from the wait).
 *
 * Exits non-zero on any failure; "N passed, M failed" on rank 0.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "a2av_cases.h"
#include "xchg.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#define CHECK_RANK world_rank
#include "check.h"

#if !XCHG_HAVE_LARGE_COUNT
int main(void)
{
    printf("test_large_count: this MPI library has no MPI_Alltoallv_c: nothing to test\n");
    return 77;
}
#else

static int npass, nfail, world_rank, world_size;

static void verdict(const char *what, int ok, const char *why)
{
    CHECK_ALL(ok, "%s%s%s", what, ok ? "" : ": ", ok ? "" : why);
}

/* The int arrays of a case, widened. */
typedef struct wide {
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
} wide;

static void widen(wide *w, int P, const int sc[], const int sd[], const int rc[],
                  const int rd[])
{
    w->sc = malloc(sizeof(MPI_Count) * P);
    w->rc = malloc(sizeof(MPI_Count) * P);
    w->sd = malloc(sizeof(MPI_Aint) * P);
    w->rd = malloc(sizeof(MPI_Aint) * P);
    for (int i = 0; i < P; i++) {
        w->sc[i] = sc ? sc[i] : -7; /* ignored under MPI_IN_PLACE: garbage on purpose */
        w->sd[i] = sd ? sd[i] : -7;
        w->rc[i] = rc[i];
        w->rd[i] = rd[i];
    }
}

static void wide_free(wide *w)
{
    free(w->sc);
    free(w->rc);
    free(w->sd);
    free(w->rd);
}

/* How a case is run: the blocking call, persistent (init_c + cycles) or
 * nonblocking (ialltoallv_c + wait or a test loop). */
enum { BLOCKING, PERSISTENT, NONBLOCKING };
static const char *const mode_name[] = {"", " init_c", " ialltoallv_c"};

typedef struct runctx {
    xchg_algo algo;
    int persistent; /* the mode */
    int ran_algo_ok; /* the stats name the forced algorithm, nothing passed to MPI */
} runctx;

static int run_c(void *ctx, const void *sb, const int sc[], const int sd[], MPI_Datatype st,
                 void *rb, const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    runctx *x = ctx;
    int P;
    MPI_Comm_size(comm, &P);
    wide w;
    widen(&w, P, sc, sd, rc, rd);
    int err;
    if (x->persistent == BLOCKING) {
        err = x->algo == XCHG_ALGO_AUTO
                  ? xchg_alltoallv_c(sb, w.sc, w.sd, st, rb, w.rc, w.rd, rt, comm)
                  : xchg_alltoallv_algo_c(x->algo, sb, w.sc, w.sd, st, rb, w.rc, w.rd, rt, comm);
    } else {
        xchg_request req = XCHG_REQUEST_NULL;
        if (x->persistent == NONBLOCKING)
            err = x->algo == XCHG_ALGO_AUTO
                      ? xchg_ialltoallv_c(sb, w.sc, w.sd, st, rb, w.rc, w.rd, rt, comm, &req)
                      : xchg_ialltoallv_algo_c(x->algo, sb, w.sc, w.sd, st, rb, w.rc, w.rd, rt,
                                               comm, &req);
        else
            err = x->algo == XCHG_ALGO_AUTO
                      ? xchg_alltoallv_init_c(sb, w.sc, w.sd, st, rb, w.rc, w.rd, rt, comm,
                                              MPI_INFO_NULL, &req)
                      : xchg_alltoallv_init_algo_c(x->algo, sb, w.sc, w.sd, st, rb, w.rc, w.rd,
                                                   rt, comm, MPI_INFO_NULL, &req);
        /* the request keeps its own copies: scribble over ours */
        for (int i = 0; i < P; i++)
            w.rc[i] = w.sc[i] = -1;
        if (err == MPI_SUCCESS) {
            if (x->persistent == NONBLOCKING) {
                err = xchg_wait(req);
            } else {
                /* three cycles give the same result: the receive blocks are
                 * overwritten with the same data each time (not in place:
                 * there each start would send the previous result) */
                int cycles = sb == MPI_IN_PLACE ? 1 : 3;
                for (int k = 0; k < cycles && err == MPI_SUCCESS; k++) {
                    err = xchg_start(req);
                    if (err == MPI_SUCCESS)
                        err = xchg_wait(req);
                }
            }
            if (x->algo != XCHG_ALGO_AUTO && xchg_request_algo(req) != x->algo)
                x->ran_algo_ok = 0;
            int ferr = xchg_request_free(&req);
            if (err == MPI_SUCCESS)
                err = ferr;
        }
    }
    xchg_stats s;
    if (err == MPI_SUCCESS &&
        (xchg_get_stats(comm, &s) != MPI_SUCCESS || s.passed_to_mpi ||
         (x->algo != XCHG_ALGO_AUTO && s.algo != x->algo)))
        x->ran_algo_ok = 0;
    wide_free(&w);
    return err;
}

static void test_fitting(const char *name, xchg_algo algo, int persistent)
{
    static const char *const pats[] = {"random", "sparse", "zero", "self", "onesided"};
    static const char *const cases[][2] = {{"contig", "int"},
                                          {"gaps_reversed", "vector_vs_contig"},
                                          {"contig", "pair_vs_int"},
                                          {"gaps_reversed", "int_vs_resized"}};
    unsigned seed = 300;
    for (int p = 0; p < 5; p++)
        for (int k = 0; k < 4; k++)
            for (int ip = 0; ip < 2; ip++) {
                if (ip && (k == 1 || k == 2))
                    continue; /* in place: one type on both sides */
                a2av_case c;
                char why[512] = "", what[300];
                runctx x = {algo, persistent, 1};
                int ok = a2av_case_build(&c, MPI_COMM_WORLD, pats[p], cases[k][0], cases[k][1],
                                         ip, seed++) == 0;
                if (ok) {
                    ok = a2av_case_check(&c, MPI_COMM_WORLD, run_c, &x, why, sizeof why);
                    if (ok && !x.ran_algo_ok) {
                        ok = 0;
                        snprintf(why, sizeof why, "the stats (or the request) name another "
                                 "algorithm, or say the call was passed to MPI");
                    }
                    snprintf(what, sizeof what, "%s%s %s", name, mode_name[persistent],
                             c.name);
                    a2av_case_free(&c);
                } else {
                    snprintf(what, sizeof what, "%s build", name);
                }
                verdict(what, ok, why);
            }
}

/* Rank 0 sends its block to rank j from byte 3e9 + 64 j of a sparse
 * mapping (a displacement beyond int, on rank 0 only); every block is 8
 * bytes of MPI_BYTE, values by formula. */
#define FAR_DISP 3000000000LL
typedef struct far_case {
    char *map;
    size_t maplen;
    MPI_Count *sc, *rc;
    MPI_Aint *sd, *rd;
    char *sendbuf, *recvbuf;
} far_case;

static unsigned char far_byte(int from, int to, int k, int round)
{
    return (unsigned char)(from * 31 + to * 7 + k + round * 13);
}

static int far_build(far_case *f, int round)
{
    const int P = world_size;
    f->sc = malloc(sizeof(MPI_Count) * P);
    f->rc = malloc(sizeof(MPI_Count) * P);
    f->sd = malloc(sizeof(MPI_Aint) * P);
    f->rd = malloc(sizeof(MPI_Aint) * P);
    f->recvbuf = malloc(8 * (size_t)P);
    f->map = NULL;
    f->sendbuf = NULL;
    f->maplen = 0;
    if (world_rank == 0) {
        f->maplen = (size_t)FAR_DISP + 64 * (size_t)P + 4096;
        void *m = mmap(NULL, f->maplen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return 0;
        f->map = m;
        f->sendbuf = f->map;
    } else {
        f->sendbuf = malloc(8 * (size_t)P);
    }
    for (int j = 0; j < P; j++) {
        f->sc[j] = f->rc[j] = 8;
        f->sd[j] = world_rank == 0 ? FAR_DISP + 64 * (MPI_Aint)j : 8 * (MPI_Aint)j;
        f->rd[j] = 8 * (MPI_Aint)j;
        for (int k = 0; k < 8; k++)
            f->sendbuf[f->sd[j] + k] = (char)far_byte(world_rank, j, k, round);
    }
    memset(f->recvbuf, 0x5a, 8 * (size_t)P);
    return 1;
}

static int far_check(const far_case *f, int round, char *why, size_t wlen)
{
    for (int j = 0; j < world_size; j++)
        for (int k = 0; k < 8; k++)
            if ((unsigned char)f->recvbuf[8 * j + k] != far_byte(j, world_rank, k, round)) {
                snprintf(why, wlen, "byte %d from rank %d is 0x%02x, expected 0x%02x", k, j,
                         (unsigned char)f->recvbuf[8 * j + k], far_byte(j, world_rank, k, round));
                return 0;
            }
    return 1;
}

static void far_free(far_case *f)
{
    if (f->map)
        munmap(f->map, f->maplen);
    else if (world_rank != 0)
        free(f->sendbuf);
    free(f->recvbuf);
    free(f->sc);
    free(f->rc);
    free(f->sd);
    free(f->rd);
}

static int passed_everywhere(MPI_Comm comm, char *why, size_t wlen)
{
    xchg_stats s;
    if (xchg_get_stats(comm, &s) != MPI_SUCCESS || !s.passed_to_mpi ||
        s.algo != XCHG_ALGO_VENDOR) {
        snprintf(why, wlen, "xchg_get_stats: passed_to_mpi %d, algo %d; expected 1 and vendor",
                 s.passed_to_mpi, (int)s.algo);
        return 0;
    }
    return 1;
}

static void test_far_to_mpi(const char *name, xchg_algo algo, int persistent)
{
    far_case f;
    char why[512] = "", what[200];
    snprintf(what, sizeof what, "%s%s: a displacement beyond int on rank 0 goes to MPI",
             name, mode_name[persistent]);
    int ok = far_build(&f, 0);
    if (!ok) {
        snprintf(why, sizeof why, "mmap of %zu bytes failed", f.maplen);
    } else if (persistent != PERSISTENT) {
        int err;
        if (persistent == NONBLOCKING) {
            /* the agreement is part of the exchange: a test loop drives it */
            xchg_request req = XCHG_REQUEST_NULL;
            err = algo == XCHG_ALGO_AUTO
                      ? xchg_ialltoallv_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc,
                                          f.rd, MPI_BYTE, MPI_COMM_WORLD, &req)
                      : xchg_ialltoallv_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE,
                                               f.recvbuf, f.rc, f.rd, MPI_BYTE,
                                               MPI_COMM_WORLD, &req);
            int flag = 0;
            while (err == MPI_SUCCESS && !flag)
                err = xchg_test(req, &flag);
            if (req != XCHG_REQUEST_NULL && flag) {
                if (xchg_request_algo(req) != XCHG_ALGO_VENDOR) {
                    snprintf(why, sizeof why, "xchg_request_algo is %d, expected vendor",
                             (int)xchg_request_algo(req));
                    ok = 0;
                }
                xchg_request_free(&req);
            }
        } else {
            err = algo == XCHG_ALGO_AUTO
                      ? xchg_alltoallv_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc,
                                         f.rd, MPI_BYTE, MPI_COMM_WORLD)
                      : xchg_alltoallv_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf,
                                              f.rc, f.rd, MPI_BYTE, MPI_COMM_WORLD);
        }
        if (err != MPI_SUCCESS) {
            snprintf(why, sizeof why, "returned %s", a2av_err_msg(err));
            ok = 0;
        }
        ok = ok && far_check(&f, 0, why, sizeof why) &&
             passed_everywhere(MPI_COMM_WORLD, why, sizeof why);
    } else {
        xchg_request req;
        int err = algo == XCHG_ALGO_AUTO
                      ? xchg_alltoallv_init_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc,
                                              f.rd, MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &req)
                      : xchg_alltoallv_init_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE,
                                                   f.recvbuf, f.rc, f.rd, MPI_BYTE,
                                                   MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        if (err != MPI_SUCCESS) {
            snprintf(why, sizeof why, "init returned %s", a2av_err_msg(err));
            ok = 0;
        }
        if (ok && xchg_request_algo(req) != XCHG_ALGO_VENDOR) {
            snprintf(why, sizeof why, "xchg_request_algo is %d, expected vendor",
                     (int)xchg_request_algo(req));
            ok = 0;
        }
        /* the arrays were copied: scribble over ours */
        for (int j = 0; j < world_size; j++)
            f.sc[j] = f.rc[j] = -1;
        for (int round = 0; round < 3 && ok; round++) {
            /* new contents at each start (the layout is the request's) */
            for (int j = 0; j < world_size; j++)
                for (int k = 0; k < 8; k++)
                    f.sendbuf[(world_rank == 0 ? FAR_DISP + 64 * (MPI_Aint)j : 8 * j) + k] =
                        (char)far_byte(world_rank, j, k, round);
            int flag = 0;
            err = xchg_start(req);
            if (err == MPI_SUCCESS && round == 1) /* poll once with test */
                while (err == MPI_SUCCESS && !flag)
                    err = xchg_test(req, &flag);
            else if (err == MPI_SUCCESS)
                err = xchg_wait(req);
            if (err != MPI_SUCCESS) {
                snprintf(why, sizeof why, "cycle %d returned %s", round, a2av_err_msg(err));
                ok = 0;
            }
            ok = ok && far_check(&f, round, why, sizeof why) &&
                 passed_everywhere(MPI_COMM_WORLD, why, sizeof why);
        }
        if (err == MPI_SUCCESS && req != XCHG_REQUEST_NULL &&
            (err = xchg_request_free(&req)) != MPI_SUCCESS) {
            snprintf(why, sizeof why, "free returned %s", a2av_err_msg(err));
            ok = 0;
        }
    }
    far_free(&f);
    verdict(what, ok, why);
}

/* A forced algorithm other than vendor: MPI_ERR_COUNT on every rank. */
static void test_far_refused(const char *name, xchg_algo algo, int persistent)
{
    far_case f;
    char why[512] = "", what[200];
    snprintf(what, sizeof what, "%s%s: refuses a displacement beyond int on every rank", name,
             mode_name[persistent]);
    int ok = far_build(&f, 0);
    if (ok) {
        xchg_request req = XCHG_REQUEST_NULL;
        int err;
        if (persistent == NONBLOCKING) {
            /* the start succeeds; the completing wait reports it */
            err = xchg_ialltoallv_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc,
                                         f.rd, MPI_BYTE, MPI_COMM_WORLD, &req);
            if (err == MPI_SUCCESS) {
                err = xchg_wait(req);
                xchg_request_free(&req);
            }
        } else {
            err = persistent ? xchg_alltoallv_init_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE,
                                                          f.recvbuf, f.rc, f.rd, MPI_BYTE,
                                                          MPI_COMM_WORLD, MPI_INFO_NULL, &req)
                             : xchg_alltoallv_algo_c(algo, f.sendbuf, f.sc, f.sd, MPI_BYTE,
                                                     f.recvbuf, f.rc, f.rd, MPI_BYTE,
                                                     MPI_COMM_WORLD);
        }
        const char *msg = a2av_err_msg(err);
        const char *want = world_rank == 0 ? "sdispls[0] is 3000000000" : "rank 0 cannot give";
        if (a2av_err_class(err) != MPI_ERR_COUNT || !strstr(msg, want) ||
            req != XCHG_REQUEST_NULL) {
            snprintf(why, sizeof why, "expected MPI_ERR_COUNT with \"%s\", got class %d: %s",
                     want, a2av_err_class(err), msg);
            ok = 0;
        }
    } else {
        snprintf(why, sizeof why, "mmap failed");
    }
    far_free(&f);
    verdict(what, ok, why);
}

/* A count above INT_MAX of a zero-size type, on the last rank only. */
static void test_huge_count(void)
{
    const int P = world_size, me = world_rank;
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Count *sc = malloc(sizeof(MPI_Count) * P), *rc = malloc(sizeof(MPI_Count) * P);
    MPI_Aint *d = calloc((size_t)P, sizeof(MPI_Aint));
    for (int j = 0; j < P; j++)
        sc[j] = rc[j] = 1;
    if (me == P - 1)
        sc[0] = 3000000000LL;
    char sb[1], rb[1];
    char why[512] = "";
    int err = xchg_alltoallv_c(sb, sc, d, empty, rb, rc, d, empty, MPI_COMM_WORLD);
    int ok = err == MPI_SUCCESS;
    if (!ok)
        snprintf(why, sizeof why, "auto returned %s", a2av_err_msg(err));
    ok = ok && passed_everywhere(MPI_COMM_WORLD, why, sizeof why);
    verdict("auto: a count above INT_MAX (zero-size type) on the last rank goes to MPI", ok,
            why);

    err = xchg_alltoallv_algo_c(xchg_algo_from_name("linear"), sb, sc, d, empty, rb, rc, d,
                                empty, MPI_COMM_WORLD);
    char want[64];
    snprintf(want, sizeof want, "%s", me == P - 1 ? "sendcounts[0] is 3000000000" : "cannot give");
    ok = a2av_err_class(err) == MPI_ERR_COUNT && strstr(a2av_err_msg(err), want);
    if (!ok)
        snprintf(why, sizeof why, "expected MPI_ERR_COUNT with \"%s\", got class %d: %s", want,
                 a2av_err_class(err), a2av_err_msg(err));
    verdict("linear: refuses a count above INT_MAX on every rank", ok, why);

    /* a negative count below INT_MIN, everywhere: named exactly */
    for (int j = 0; j < P; j++)
        sc[j] = 1;
    rc[P - 1] = -3000000000LL;
    err = xchg_alltoallv_c(sb, sc, d, empty, rb, rc, d, empty, MPI_COMM_WORLD);
    snprintf(want, sizeof want, "recvcounts[%d] is negative (-3000000000)", P - 1);
    ok = a2av_err_class(err) == MPI_ERR_COUNT && strstr(a2av_err_msg(err), want);
    if (!ok)
        snprintf(why, sizeof why, "expected MPI_ERR_COUNT with \"%s\", got class %d: %s", want,
                 a2av_err_class(err), a2av_err_msg(err));
    verdict("a negative count below INT_MIN is named", ok, why);
    free(sc);
    free(rc);
    free(d);
    MPI_Type_free(&empty);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    for (int i = 0; i <= xchg_algo_count(); i++) {
        xchg_algo a = i < xchg_algo_count() ? xchg_algo_at(i) : XCHG_ALGO_AUTO;
        const char *name = a == XCHG_ALGO_AUTO ? "auto" : xchg_algo_name(a);
        test_fitting(name, a, BLOCKING);
        test_fitting(name, a, NONBLOCKING);
        if (a == XCHG_ALGO_AUTO || a == XCHG_ALGO_LINEAR || a == XCHG_ALGO_RMA_FENCE ||
            a == XCHG_ALGO_VENDOR || a == XCHG_ALGO_BRUCK_RADIX)
            test_fitting(name, a, PERSISTENT);
        if (a == XCHG_ALGO_AUTO || a == XCHG_ALGO_VENDOR) {
            test_far_to_mpi(name, a, BLOCKING);
            test_far_to_mpi(name, a, PERSISTENT);
            test_far_to_mpi(name, a, NONBLOCKING);
        } else {
            test_far_refused(name, a, BLOCKING);
            if (a == XCHG_ALGO_LINEAR) {
                test_far_refused(name, a, PERSISTENT);
                test_far_refused(name, a, NONBLOCKING);
            }
        }
    }
    test_huge_count();

    if (world_rank == 0)
        printf("test_large_count on %d ranks: %d passed, %d failed\n", world_size, npass,
               nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
#endif
