/*
 * test_comm_budget.c - an application with many live communicators.
 *
 * MPICH allows 2048 communicators per process. xchg holds one private
 * duplicate per communicator it exchanges on, so an application with 1500
 * live communicators that exchanges on each runs out: then MPI must refuse
 * xchg, never the application, and never by aborting in a call the
 * application did not make.
 *
 *   test_comm_budget [api|preload] [N]     (default api, N = 1500)
 *
 * Makes N duplicates of MPI_COMM_WORLD (fewer if MPI refuses the
 * application's own) and exchanges on each, values checked by formula:
 *   api:     xchg_alltoallv, the communicators set to MPI_ERRORS_RETURN,
 *            XCHG_SETUP_AT=1 (set up at the first call). Every call
 *            succeeds with the right data: where MPI refuses the duplicate
 *            (on every rank alike) auto runs MPI's own MPI_Alltoallv
 *            (xchg_stats.passed_to_mpi), and xchg_comm_prepare says 0 for
 *            exactly those communicators. Freeing communicators frees
 *            their duplicates, and a refused communicator is then served by
 *            xchg (it asks MPI again after 1, 2, 4, ... at most 64 calls).
 *   preload: MPI_Alltoallv under LD_PRELOAD=libxchg-preload.so, the
 *            communicators keeping MPI_ERRORS_ARE_FATAL: every call gives
 *            the right data; xchg served it (xchg_get_stats) where MPI
 *            gave it a duplicate, MPI_Alltoallv where not.
 * On MPICH the limit must be hit (N = 1500 comes to about 3000 with the
 * duplicates), on Open MPI it must not. The node map of the automatic
 * choice (run with XCHG_AUTO_MIN_P=1 to use it) costs at most one node
 * split in the whole run: the other communicators are duplicates, or parts,
 * of one already split. Counted by wrapping MPI_Comm_split_type here.
 */
#include "a2av_cases.h"
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

/* Counts the node splits libxchg makes (the test itself makes none). */
static int splits;
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    splits++;
    return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
}

static int rank, P;

static int count_of(int from, int to, int k)
{
    return (from + to + k) % 3; /* zeros included */
}

static int value(int from, int to, int k, int e)
{
    return k * 1000000 + from * 1000 + to * 10 + e;
}

/* One exchange on comm (the k-th): 0 if the data is right. preload: through
 * MPI_Alltoallv, else xchg_alltoallv (*rc gets its code). */
static int exchange(MPI_Comm comm, int k, int preload, int *rc)
{
    int sc[64], sd[64], rcnt[64], rd[64], sb[256], rb[256];
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = count_of(rank, j, k);
        rcnt[j] = count_of(j, rank, k);
        sd[j] = st;
        rd[j] = rt;
        for (int e = 0; e < sc[j]; e++)
            sb[st + e] = value(rank, j, k, e);
        st += sc[j];
        rt += rcnt[j];
    }
    for (int i = 0; i < rt; i++)
        rb[i] = -1;
    *rc = preload ? MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rcnt, rd, MPI_INT, comm)
                  : xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rcnt, rd, MPI_INT, comm);
    if (*rc != MPI_SUCCESS)
        return 0; /* judged by the caller */
    int bad = 0;
    for (int j = 0; j < P; j++)
        for (int e = 0; e < rcnt[j]; e++)
            bad += rb[rd[j] + e] != value(j, rank, k, e);
    return bad;
}

static int npass, nfail;
static int exchange_half(MPI_Comm half, int preload);

/* On a sub-communicator after a communicator of all ranks: auto's node map
 * comes from the record, no split. */
static int exchange_half(MPI_Comm half, int preload)
{
    if (!preload)
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    int hrank, hsize, rc = MPI_SUCCESS;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int save_rank = rank, save_P = P;
    rank = hrank;
    P = hsize;
    int wrong = exchange(half, 7, preload, &rc);
    rank = save_rank;
    P = save_P;
    CHECK(rc == MPI_SUCCESS && wrong == 0, "sub-communicator: rc %d, %d wrong", rc, wrong);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int preload = argc > 1 && strcmp(argv[1], "preload") == 0;
    int n = argc > 2 ? atoi(argv[2]) : 1500;
    if (P > 64) {
        if (rank == 0)
            fprintf(stderr, "test_comm_budget: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    /* The application's own communicators, while MPI gives them. */
    MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)n);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int made = 0;
    while (made < n && MPI_Comm_dup(MPI_COMM_WORLD, &comms[made]) == MPI_SUCCESS)
        made++;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    for (int k = 0; k < made; k++) /* inherited from the world: the default again */
        MPI_Comm_set_errhandler(comms[k], MPI_ERRORS_ARE_FATAL);
    CHECK(check_same_everywhere(made, MPI_COMM_WORLD),
          "ranks made different numbers of communicators");
    /* and a sub-communicator of each parity: its node map is derived too */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);

    int served = 0, refused = 0, wrong = 0, first_refused = -1;
    for (int k = 0; k < made; k++) {
        if (k == 1)
            wrong += exchange_half(half, preload);
        if (!preload)
            MPI_Comm_set_errhandler(comms[k], MPI_ERRORS_RETURN);
        int rc = MPI_SUCCESS;
        wrong += exchange(comms[k], k, preload, &rc);
        if (preload) {
            CHECK(rc == MPI_SUCCESS, "MPI_Alltoallv on communicator %d returned %d", k, rc);
            xchg_stats s;
            xchg_get_stats(comms[k], &s);
            if (s.calls == 1 && !s.passed_to_mpi)
                served++;
            else
                refused++;
            if (!(s.calls == 1 && !s.passed_to_mpi) && first_refused < 0)
                first_refused = k;
            continue;
        }
        CHECK(rc == MPI_SUCCESS, "communicator %d: xchg_alltoallv returned %d (%s)", k, rc,
              a2av_err_msg(rc));
        xchg_stats s;
        xchg_get_stats(comms[k], &s);
        CHECK(check_same_everywhere(s.passed_to_mpi, MPI_COMM_WORLD),
              "communicator %d: ranks ran the call differently (passed to MPI: %d here)", k,
              s.passed_to_mpi);
        if (!s.passed_to_mpi) {
            served++;
            continue;
        }
        refused++;
        if (first_refused < 0)
            first_refused = k;
        if (refused == 1 && rank == 0)
            printf("first refusal, communicator %d: served by MPI's own MPI_Alltoallv\n", k);
        int ready = -1;
        CHECK(xchg_comm_prepare(comms[k], &ready) == MPI_SUCCESS && ready == 0,
              "communicator %d: xchg_comm_prepare says ready=%d after a refusal", k, ready);
    }
    CHECK(wrong == 0, "%d wrong values", wrong);
    CHECK(served > 0, "xchg served no communicator");
    CHECK(check_same_everywhere(served, MPI_COMM_WORLD),
          "ranks disagree on how many calls xchg served");
#if defined(MPICH_VERSION)
    CHECK(made < 1000 || refused > 0, "MPICH: %d communicators, each with xchg's duplicate, "
          "and no refusal", made);
#elif defined(OPEN_MPI)
    CHECK(refused == 0, "Open MPI refused %d duplicates", refused);
#endif
    CHECK(splits <= 1, "xchg made %d node splits; the record should leave one at most",
          splits);

    if (refused > 0) {
        int rc = MPI_SUCCESS;
        /* Freeing communicators frees their duplicates: the refused one
         * works again once xchg asks MPI again (after at most 64 calls). */
        int nfree = made < 300 ? made / 2 : 300;
        for (int k = 0; k < nfree && k < first_refused; k++)
            MPI_Comm_free(&comms[k]);
        int tries = 0, ready = 0;
        while (!ready && tries < 70) {
            tries++;
            wrong = exchange(comms[first_refused], first_refused, preload, &rc);
            CHECK(rc == MPI_SUCCESS, "communicator %d after the frees: rc %d", first_refused,
                  rc);
            CHECK(wrong == 0, "communicator %d after the frees: %d wrong", first_refused, wrong);
            xchg_stats s;
            xchg_get_stats(comms[first_refused], &s);
            ready = !s.passed_to_mpi;
        }
        CHECK(ready && tries <= 65, "communicator %d still refused after %d calls, %d "
              "communicators freed", first_refused, tries, nfree);
        CHECK(check_same_everywhere(tries, MPI_COMM_WORLD),
              "ranks were served after different numbers of calls");
        int r2 = -1;
        CHECK(xchg_comm_prepare(comms[first_refused], &r2) == MPI_SUCCESS && r2 == 1,
              "xchg_comm_prepare: ready=%d after the frees", r2);
        if (rank == 0)
            printf("after freeing %d communicators: communicator %d served by xchg at its "
                   "%d%s call since\n", nfree, first_refused, tries,
                   tries == 1 ? "st" : tries == 2 ? "nd" : tries == 3 ? "rd" : "th");
        for (int k = nfree; k < made; k++)
            MPI_Comm_free(&comms[k]);
    } else {
        for (int k = 0; k < made; k++)
            MPI_Comm_free(&comms[k]);
    }
    MPI_Comm_free(&half);

    int all;
    MPI_Allreduce(&nfail, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_comm_budget %s on %d ranks: %d communicators, xchg served %d, MPI "
               "refused %d (first: %d), %d node split(s): %s\n",
               preload ? "preload" : "api", P, made, served, refused, first_refused, splits,
               all ? "FAILED" : "passed");
    free(comms);
    MPI_Finalize();
    return all ? 1 : 0;
}
