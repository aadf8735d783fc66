/*
 * test_alltoallv.c - every registered algorithm against MPI_Alltoallv.
 *
 * Written against xchg.h only: algorithms are forced by name through
 * xchg_alltoallv_algo(xchg_algo_from_name(name), ...), exactly as a user
 * would. For each algorithm it runs every pattern, layouts with gaps and
 * reversed order, non-contiguous and differing datatypes, MPI_IN_PLACE, a
 * split sub-communicator and 100 calls in a row, and compares the whole
 * receive buffer with MPI_Alltoallv's (see a2av_cases.h).
 *
 * Usage: test_alltoallv [--nonblocking] [algo ...]   (default: every
 * algorithm of the build, then xchg_alltoallv itself with its automatic
 * choice; --nonblocking: the same through xchg_ialltoallv(_algo), completed
 * by xchg_test or xchg_wait)
 * XCHG_TEST_RAN=a[,b...]: every forced call must report (xchg_get_stats)
 * one of these algorithms, and some call the first (ran_as_expected).
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#include "a2av_cases.h"
#include "ran_as.h"
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_RANK world_rank
#include "check.h"

static int npass, nfail;
static int world_rank;
static int nonblocking; /* --nonblocking: xchg_ialltoallv(_algo), then test/wait */
static unsigned long nb_calls;

/* The nonblocking call, completed by xchg_test polling (every other call)
 * or by xchg_wait; the receive type is freed right after the start where
 * it is a duplicate of the case's (allowed, as in MPI). */
static int run_nonblocking(xchg_algo a, const void *sb, const int sc[], const int sd[],
                           MPI_Datatype st, void *rb, const int rc[], const int rd[],
                           MPI_Datatype rt, MPI_Comm comm)
{
    xchg_request req = XCHG_REQUEST_NULL;
    MPI_Datatype rt2 = rt;
    int named = 0, ni, na, nd;
    MPI_Type_get_envelope(rt, &ni, &na, &nd, &named);
    if (named != MPI_COMBINER_NAMED)
        MPI_Type_dup(rt, &rt2); /* dups of committed types are committed */
    int rc0 = a == XCHG_ALGO_AUTO
                  ? xchg_ialltoallv(sb, sc, sd, st, rb, rc, rd, rt2, comm, &req)
                  : xchg_ialltoallv_algo(a, sb, sc, sd, st, rb, rc, rd, rt2, comm, &req);
    if (rt2 != rt)
        MPI_Type_free(&rt2);
    if (rc0 != MPI_SUCCESS)
        return rc0;
    int rc1;
    if (nb_calls++ % 2) {
        rc1 = xchg_wait(req);
    } else {
        int flag = 0;
        do
            rc1 = xchg_test(req, &flag);
        while (!flag);
    }
    int rc2 = xchg_request_free(&req);
    if (rc1 == MPI_SUCCESS && rc2 == MPI_SUCCESS && req != XCHG_REQUEST_NULL)
        rc2 = MPI_ERR_REQUEST; /* must be reset */
    return rc1 != MPI_SUCCESS ? rc1 : rc2;
}

static int run_algo(void *ctx, const void *sb, const int sc[], const int sd[],
                    MPI_Datatype st, void *rb, const int rc[], const int rd[],
                    MPI_Datatype rt, MPI_Comm comm)
{
    xchg_algo a = *(xchg_algo *)ctx;
    if (nonblocking)
        return run_nonblocking(a, sb, sc, sd, st, rb, rc, rd, rt, comm);
    if (a == XCHG_ALGO_AUTO) /* the plain entry point, as users call it */
        return xchg_alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
    return xchg_alltoallv_algo(a, sb, sc, sd, st, rb, rc, rd, rt, comm);
}

/* Checks one case on comm; every rank of MPI_COMM_WORLD takes part in the
 * verdict (ranks outside comm pass ok=1). */
static void verdict(const char *algo, const char *what, int ok, const char *why)
{
    CHECK_ALL(ok, "%s %s%s%s", algo, what, ok ? "" : ": ", ok ? "" : why);
}

/* What xchg_get_stats must name after a forced call (ran_as.h).
 * XCHG_TEST_RAN=a[,b...]: every call names one of
 * these and at least one call names a (checked by ran_first_seen). */
static const char *ran_env;
static int ran_first_seen;

static int ran_as_expected(xchg_algo forced, xchg_algo ran)
{
    if (!ran_env)
        return ran_as_forced(forced, ran);
    char list[256];
    snprintf(list, sizeof list, "%s", ran_env);
    int first = 1;
    for (char *save = NULL, *n = strtok_r(list, ",", &save); n;
         n = strtok_r(NULL, ",", &save), first = 0)
        if (xchg_algo_from_name(n) == ran) {
            ran_first_seen |= first;
            return 1;
        }
    return 0;
}

static int check_one(xchg_algo *algo, MPI_Comm comm, const char *pat, const char *lay,
                     const char *types, int in_place, unsigned seed, char *name, size_t nlen,
                     char *why, size_t wlen)
{
    a2av_case c;
    if (a2av_case_build(&c, comm, pat, lay, types, in_place, seed) != 0) {
        snprintf(why, wlen, "cannot build case");
        return 0;
    }
    snprintf(name, nlen, "%s", c.name);
    int ok = a2av_case_check(&c, comm, run_algo, algo, why, wlen);
    if (ok && *algo != XCHG_ALGO_AUTO) {
        xchg_stats s;
        if (xchg_get_stats(comm, &s) != MPI_SUCCESS || !ran_as_expected(*algo, s.algo)) {
            snprintf(why, wlen, "xchg_get_stats reports algorithm %s, expected %s",
                     xchg_algo_name(s.algo) ? xchg_algo_name(s.algo) : "none",
                     ran_env ? ran_env : xchg_algo_name(*algo));
            ok = 0;
        }
    }
    a2av_case_free(&c);
    return ok;
}

static void test_algo(const char *name)
{
    xchg_algo algo = xchg_algo_from_name(name);
    char cname[200], why[512];
    if (algo == XCHG_ALGO_INVALID) {
        verdict(name, "name lookup", 0, "xchg_algo_from_name does not know it");
        return;
    }
    if (algo != XCHG_ALGO_AUTO && strcmp(xchg_algo_name(algo), name) != 0) {
        verdict(name, "name round trip", 0, "xchg_algo_name(xchg_algo_from_name(n)) != n");
        return;
    }
    unsigned seed = 11;
    ran_first_seen = 0;
    /* every pattern, plain ints */
    for (int p = 0; a2av_patterns[p]; p++) {
        int ok = check_one(&algo, MPI_COMM_WORLD, a2av_patterns[p], "contig", "int", 0,
                           seed++, cname, sizeof cname, why, sizeof why);
        verdict(name, cname, ok, why);
    }
    /* every datatype pair and layout on random, sparse and zero counts */
    const char *pats[] = {"random", "sparse", "zero", "onesided"};
    for (int p = 0; p < 4; p++)
        for (int l = 0; a2av_layouts[l]; l++)
            for (int t = 0; a2av_types[t]; t++) {
                if (!strcmp(a2av_layouts[l], "contig") && !strcmp(a2av_types[t], "int"))
                    continue; /* done above */
                int ok = check_one(&algo, MPI_COMM_WORLD, pats[p], a2av_layouts[l],
                                   a2av_types[t], 0, seed++, cname, sizeof cname, why,
                                   sizeof why);
                verdict(name, cname, ok, why);
            }
    /* a large exchange with a non-contiguous type */
    {
        int ok = check_one(&algo, MPI_COMM_WORLD, "large", "gaps_reversed", "vector_vs_contig",
                           0, seed++, cname, sizeof cname, why, sizeof why);
        verdict(name, cname, ok, why);
    }
    /* MPI_IN_PLACE (symmetric counts), plain and with a resized receive type */
    const char *ip_pats[] = {"random", "sparse", "zero", "self", "onesided", "imbalance"};
    const char *ip_types[] = {"int", "int_vs_resized"};
    for (int p = 0; p < 6; p++)
        for (int t = 0; t < 2; t++) {
            int ok = check_one(&algo, MPI_COMM_WORLD, ip_pats[p],
                               t ? "gaps_reversed" : "contig", ip_types[t], 1, seed++, cname,
                               sizeof cname, why, sizeof why);
            verdict(name, cname, ok, why);
        }
    /* a split sub-communicator: odd and even ranks, in reverse order */
    {
        MPI_Comm sub;
        int wsize;
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, wsize - world_rank, &sub);
        MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
        int ok = check_one(&algo, sub, "random", "gaps_reversed", "pair_vs_int", 0, seed++,
                           cname, sizeof cname, why, sizeof why);
        char label[256];
        snprintf(label, sizeof label, "split-comm %s", cname);
        verdict(name, label, ok, why);
        MPI_Comm_free(&sub);
    }
    /* 100 calls in a row on one communicator, a new pattern each time */
    {
        MPI_Comm c2;
        MPI_Comm_dup(MPI_COMM_WORLD, &c2);
        MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
        int ok = 1;
        for (int it = 0; it < 100 && ok; it++) {
            ok = check_one(&algo, c2, it % 3 == 2 ? "sparse" : "random",
                           it % 2 ? "gaps_reversed" : "contig", it % 4 == 3 ? "vector_vs_contig" : "int",
                           0, 1000u + (unsigned)it, cname, sizeof cname, why, sizeof why);
            int all;
            MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c2);
            if (!all && ok) {
                ok = 0;
                snprintf(why, sizeof why, "another rank failed at call %d", it);
            }
        }
        xchg_stats s;
        if (ok && algo != XCHG_ALGO_AUTO &&
            (xchg_get_stats(c2, &s) != MPI_SUCCESS || s.calls != 100)) {
            ok = 0;
            snprintf(why, sizeof why, "xchg_get_stats counts %lu calls, expected 100", s.calls);
        }
        verdict(name, "100 calls in a row", ok, why);
        MPI_Comm_free(&c2);
    }
    if (ran_env && algo != XCHG_ALGO_AUTO)
        verdict(name, "XCHG_TEST_RAN", ran_first_seen,
                "no call ran the first algorithm XCHG_TEST_RAN names");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    ran_env = getenv("XCHG_TEST_RAN");
    if (ran_env && !*ran_env)
        ran_env = NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    int P;
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "--nonblocking")) {
        nonblocking = 1;
        first = 2;
    }
    if (argc > first) {
        for (int i = first; i < argc; i++)
            test_algo(argv[i]);
    } else {
        for (int i = 0; i < xchg_algo_count(); i++)
            test_algo(xchg_algo_name(xchg_algo_at(i)));
        test_algo("auto");
    }
    if (world_rank == 0)
        printf("test_alltoallv%s on %d ranks: %d passed, %d failed\n",
               nonblocking ? " --nonblocking" : "", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
