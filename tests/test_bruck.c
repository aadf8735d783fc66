/*
 * test_bruck.c - the failure contract of the padded and Bruck algorithms.
 *
 * 1. Padded algorithms over XCHG_MAX_TEMP_BYTES refuse with MPI_ERR_NO_MEM
 *    on every rank, also when only rank 0 sets the small limit (settings
 *    are agreed: every rank takes rank 0's), and the communicator stays
 *    usable.
 * 2. Two-phase Bruck out of temporary memory mid-exchange does not hang:
 *    rank 0 returns MPI_ERR_NO_MEM, any other rank either the same or
 *    success with correct data.
 * 3. A receive block smaller than what arrives gives MPI_ERR_TRUNCATE on
 *    that rank only (byte-level algorithms that know the incoming sizes),
 *    and the user's buffer past the block is untouched.
 * 4. XCHG_BRUCK_RADIX out of range or garbage (rejected with a warning:
 *    the default radix) still gives correct results.
 * 5. bruck_2level on nodes of XCHG_RANKS_PER_NODE = 1, 2, 3 (7 ranks: 3,
 *    3, 1) and shared-memory nodes: 2 and 3 above; one rank's argument
 *    error and one rank out of memory before its first message (the
 *    unagreed XCHG_FAULT_TEMP_LIMIT) give every rank the same class with
 *    recvbuf untouched; radix and burst settings (XCHG_BRUCK_RADIX_INTER,
 *    _INTRA, XCHG_THROTTLE), also out of range, give correct results.
 * Failures are printed (tests/check.h); the exit code is non-zero on any.
 */
#include "xchg.h"
#include "a2av_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int npass, nfail, rank, P;

/* n ints from every rank to every rank; value encodes (source, dest, k). */
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
            b->sb[j * n + k] = (rank * 1000 + j) * 1000 + k;
    }
}

static void clear(bufs *b)
{
    memset(b->rb, 0xff, sizeof(int) * (size_t)(P * b->n + 1));
}

static int correct(const bufs *b)
{
    for (int j = 0; j < P; j++)
        for (int k = 0; k < b->n; k++)
            if (b->rb[j * b->n + k] != (j * 1000 + rank) * 1000 + k)
                return 0;
    return 1;
}

static void unmake(bufs *b)
{
    free(b->sc); free(b->sd); free(b->rc); free(b->rd); free(b->sb); free(b->rb);
}

static int run(xchg_algo a, bufs *b, MPI_Comm comm)
{
    clear(b);
    return xchg_alltoallv_algo(a, b->sb, b->sc, b->sd, MPI_INT, b->rb, b->rc, b->rd,
                               MPI_INT, comm);
}

/* Settings are read once per communicator, at its first xchg call (and
 * agreed: rank 0's value wins): run on a new one made with var=val on this rank (val NULL: unset),
 * keeping its stats. */
static xchg_stats env_stats;
static int run_env(xchg_algo a, bufs *b, const char *var, const char *val)
{
    MPI_Comm c;
    if (val)
        setenv(var, val, 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    int rc = run(a, b, c); /* its first xchg call reads the settings */
    unsetenv(var);
    xchg_get_stats(c, &env_stats);
    MPI_Comm_free(&c);
    return rc;
}

/* A good call right after: the communicator is still usable. */
static void usable_after(const char *label, xchg_algo a, bufs *b, MPI_Comm comm)
{
    char w[200];
    int rc = run(a, b, comm);
    snprintf(w, sizeof w, "%s: next call succeeds (%s)", label, a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && correct(b), "%s", w);
}

/* Every rank ended with class `cls`. */
static int same_class_everywhere(int cls)
{
    int mn, mx;
    MPI_Allreduce(&cls, &mn, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&cls, &mx, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return mn == mx;
}

/* 5. bruck_2level's contract on nodes of k ranks (NULL: shared memory). */
static void two_level(bufs *b, const char *k)
{
    const xchg_algo a = XCHG_ALGO_BRUCK_2LEVEL;
    const char *rpn = k ? k : "unset";
    char w[400];
    if (k)
        setenv("XCHG_RANKS_PER_NODE", k, 1);
    else
        unsetenv("XCHG_RANKS_PER_NODE");
    /* out of memory mid-exchange (the limit agreed from rank 0) */
    const char *limits[] = {"1", "3000", "6000", "10000", "24000"};
    for (int l = 0; l < 5; l++) {
        int rc = run_env(a, b, "XCHG_MAX_TEMP_BYTES", rank == 0 ? limits[l] : NULL);
        int cls = a2av_err_class(rc);
        /* alone, a rank copies its block directly */
        int must_fail = rank == 0 && P > 1 && (size_t)atol(limits[l]) < (size_t)P * 1024;
        snprintf(w, sizeof w, "bruck_2level, rpn %s, limit %s: got class %d (%s)", rpn,
                 limits[l], cls, a2av_err_msg(rc));
        CHECK(must_fail ? cls == MPI_ERR_NO_MEM
              : (cls == MPI_ERR_NO_MEM || (cls == MPI_SUCCESS && correct(b))), "%s", w);
    }
    /* the last rank out of memory before its first message: all refuse */
    {
        int rc = run_env(a, b, "XCHG_FAULT_TEMP_LIMIT", rank == P - 1 ? "1" : NULL);
        int cls = a2av_err_class(rc);
        snprintf(w, sizeof w, "bruck_2level, rpn %s, rank %d without memory: class %d on "
                 "every rank, recvbuf untouched (%s)", rpn, P - 1, cls, a2av_err_msg(rc));
        CHECK(same_class_everywhere(cls) && (P == 1 || cls == MPI_ERR_NO_MEM) &&
              (P == 1 || b->rb[0] == -1), "%s", w);
    }
    MPI_Comm c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c2); /* settings (rpn) read at its first call */
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    /* one rank's argument error: agreed, recvbuf untouched everywhere */
    {
        if (rank == P - 1)
            b->sc[0] = -1;
        int rc = run(a, b, c2);
        int cls = a2av_err_class(rc);
        b->sc[0] = b->n;
        snprintf(w, sizeof w, "bruck_2level, rpn %s, sendcounts[0] = -1 on rank %d: class "
                 "%d on every rank, recvbuf untouched (%s)", rpn, P - 1, cls, a2av_err_msg(rc));
        CHECK(cls == MPI_ERR_COUNT && same_class_everywhere(cls) && b->rb[0] == -1 &&
              strstr(a2av_err_msg(rc), rank == P - 1 ? "sendcounts[0]" : "rank"), "%s", w);
        usable_after("bruck_2level after an argument error", a, b, c2);
    }
    /* truncation: rank t receives one int less from rank 0 */
    {
        int t = P > 1 ? 1 : 0;
        if (rank == t)
            b->rc[0] = b->n - 1;
        int rc = run(a, b, c2);
        int cls = a2av_err_class(rc);
        snprintf(w, sizeof w, "bruck_2level, rpn %s, recvcounts[0] short on rank %d: class "
                 "%d (%s)", rpn, t, cls, a2av_err_msg(rc));
        if (rank == t)
            CHECK(cls == MPI_ERR_TRUNCATE && (P == 1 || strstr(a2av_err_msg(rc), "recvcounts[0]")) &&
                  b->rb[b->n - 1] == -1, "%s", w);
        else
            CHECK(cls == MPI_SUCCESS && correct(b), "%s", w);
        b->rc[0] = b->n;
        usable_after("bruck_2level after a truncation", a, b, c2);
    }
    MPI_Comm_free(&c2);
    /* radices and the burst limit */
    const char *vars[] = {"XCHG_BRUCK_RADIX_INTER", "XCHG_BRUCK_RADIX_INTRA", "XCHG_THROTTLE"};
    const char *vals[] = {"2", "3", "1", "-7", "1000000", "0", "x3"};
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < 7; i++) {
            int rc = run_env(a, b, vars[v], vals[i]);
            snprintf(w, sizeof w, "bruck_2level, rpn %s, %s='%s' (%s)", rpn, vars[v], vals[i],
                     a2av_err_msg(rc));
            CHECK(rc == MPI_SUCCESS && correct(b), "%s", w);
        }
    /* every partner of a round in its own batch */
    setenv("XCHG_BRUCK_RADIX_INTER", "1000", 1);
    setenv("XCHG_BRUCK_RADIX_INTRA", "1000", 1);
    int rc = run_env(a, b, "XCHG_THROTTLE", "2");
    unsetenv("XCHG_BRUCK_RADIX_INTER");
    unsetenv("XCHG_BRUCK_RADIX_INTRA");
    snprintf(w, sizeof w, "bruck_2level, rpn %s, one round per level in batches of 2 (%s)",
             rpn, a2av_err_msg(rc));
    CHECK(rc == MPI_SUCCESS && correct(b), "%s", w);
    unsetenv("XCHG_RANKS_PER_NODE");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    char w[300];
    bufs b;
    make(&b, 256); /* 1 KiB blocks: padded needs about 2 KiB x P */

    /* 1. padded refusal, all ranks limited, then one rank limited */
    xchg_algo padded[] = {XCHG_ALGO_PADDED_ALLTOALL, XCHG_ALGO_BRUCK_PADDED};
    for (int a = 0; a < 2; a++) {
        /* mode 0: all ranks set the limit; 1: rank 0 only (agreed: all use
         * it); 2: the last rank alone short of memory (the test-only,
         * unagreed XCHG_FAULT_TEMP_LIMIT): the padded budget agreement must
         * make every rank refuse together */
        for (int mode = 0; mode < 3; mode++) {
            const char *name = xchg_algo_name(padded[a]);
            char lim[32]; /* half the padded blocks alone: both must refuse */
            snprintf(lim, sizeof lim, "%d", 512 * P);
            int rc = run_env(padded[a], &b,
                             mode == 2 ? "XCHG_FAULT_TEMP_LIMIT" : "XCHG_MAX_TEMP_BYTES",
                             mode == 0 || (mode == 1 && rank == 0) ||
                                     (mode == 2 && rank == P - 1) ? lim : NULL);
            snprintf(w, sizeof w, "%s, limit %s on %s: MPI_ERR_NO_MEM naming the limit, "
                     "got class %d (%s)", name, lim,
                     mode == 0 ? "all ranks" : mode == 1 ? "rank 0" : "the last rank (fault)",
                     a2av_err_class(rc), a2av_err_msg(rc));
            CHECK(a2av_err_class(rc) == MPI_ERR_NO_MEM &&
                  strstr(a2av_err_msg(rc), "XCHG_MAX_TEMP_BYTES") != NULL, "%s", w);
            /* refused before any data moved */
            CHECK(b.rb[0] == -1, "refusal leaves recvbuf untouched");
            usable_after(name, padded[a], &b, comm);
        }
        /* a limit that fits: 2 x P x 1 KiB plus room */
        snprintf(w, sizeof w, "%d", 3 * P * 1024 + 4096);
        int rc = run_env(padded[a], &b, "XCHG_MAX_TEMP_BYTES", w);
        snprintf(w, sizeof w, "%s under a sufficient limit (%s)", xchg_algo_name(padded[a]),
                 a2av_err_msg(rc));
        CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
        xchg_stats st = env_stats;
        snprintf(w, sizeof w, "%s reports its padded buffers (%zu bytes)",
                 xchg_algo_name(padded[a]), st.temp_bytes);
        CHECK(st.temp_bytes >= (size_t)P * 1024, "%s", w);
    }

    /* 2. two-phase Bruck: rank 0 out of memory, at several points */
    xchg_algo twop[] = {XCHG_ALGO_BRUCK_TWOPHASE, XCHG_ALGO_BRUCK_RADIX};
    const char *limits[] = {"1", "3000", "6000", "8000", "10000", "12000", "24000"};
    for (int a = 0; a < 2; a++)
        for (int l = 0; l < 7; l++) {
            const char *name = xchg_algo_name(twop[a]);
            /* set on rank 0 only: agreed, so every rank takes rank 0's */
            int rc = run_env(twop[a], &b, "XCHG_MAX_TEMP_BYTES",
                             rank == 0 ? limits[l] : NULL);
            int cls = a2av_err_class(rc);
            /* rank 0 holds P KiB and more, except alone with its one block */
            int must_fail = rank == 0 && (size_t)atol(limits[l]) < (size_t)P * 1024;
            snprintf(w, sizeof w, "%s, limit %s on rank 0: got class %d (%s)", name,
                     limits[l], cls, a2av_err_msg(rc));
            CHECK(must_fail ? cls == MPI_ERR_NO_MEM
                  : (cls == MPI_ERR_NO_MEM || (cls == MPI_SUCCESS && correct(&b))), "%s", w);
            usable_after(name, twop[a], &b, comm);
        }

    /* 3. truncation: rank t receives one int less from rank 0 than it sends */
    {
        int t = P > 1 ? 1 : 0;
        xchg_algo trunc[] = {XCHG_ALGO_BRUCK_TWOPHASE, XCHG_ALGO_BRUCK_RADIX};
        for (int a = 0; a < 2; a++) {
            if (rank == t)
                b.rc[0] = b.n - 1;
            int rc = run(trunc[a], &b, comm);
            int cls = a2av_err_class(rc);
            snprintf(w, sizeof w, "%s, recvcounts[0] short on rank %d: got class %d (%s)",
                     xchg_algo_name(trunc[a]), t, cls, a2av_err_msg(rc));
            if (rank == t)
                CHECK(cls == MPI_ERR_TRUNCATE && strstr(a2av_err_msg(rc), "recvcounts[0]") &&
                      b.rb[b.n - 1] == -1, "%s", w);
            else
                CHECK(cls == MPI_SUCCESS && correct(&b), "%s", w);
            b.rc[0] = b.n;
            usable_after(xchg_algo_name(trunc[a]), trunc[a], &b, comm);
        }
    }

    /* 4. radix settings: all give correct results */
    {
        const char *radix[] = {"2", "3", "1", "-7", "1000000", "0", "x3", ""};
        for (int i = 0; i < 8; i++) {
            int rc = run_env(XCHG_ALGO_BRUCK_RADIX, &b, "XCHG_BRUCK_RADIX", radix[i]);
            snprintf(w, sizeof w, "XCHG_BRUCK_RADIX='%s' (%s)", radix[i], a2av_err_msg(rc));
            CHECK(rc == MPI_SUCCESS && correct(&b), "%s", w);
        }
    }

    /* 5. bruck_2level */
    {
        const char *rpn[] = {"1", "2", "3", NULL};
        for (int i = 0; i < 4; i++)
            two_level(&b, rpn[i]);
    }

    unmake(&b);
    MPI_Comm_free(&comm);
    int tot[2] = {npass, nfail}, all[2];
    MPI_Reduce(tot, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_bruck on %d ranks: %d passed, %d failed\n", P, all[0], all[1]);
    MPI_Finalize();
    return nfail || (rank == 0 && all[1]) ? 1 : 0;
}
