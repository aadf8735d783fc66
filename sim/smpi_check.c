/*
 * smpi_check.c - the smoke test of the simulated build (CTest label smpi).
 *
 * Under SMPI checks what libxchg relies on and SMPI might model differently:
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups the ranks of one host
 * (so node-aware algorithms see the platform's nodes), error codes with
 * messages come back through MPI_ERRORS_RETURN, and every algorithm of the
 * build matches MPI_Alltoallv byte for byte. Then prints each algorithm's
 * simulated time, which the determinism test compares between two runs.
 * Exits non-zero (on every rank) if a check fails.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fails;

static void check(int ok, const char *what)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("%-52s %s\n", what, all ? "ok" : "FAILED");
    if (!all)
        fails++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);

    /* 1. Nodes: the shared-memory split has exactly the ranks of my host. */
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len;
    MPI_Get_processor_name(name, &len);
    char *all = calloc((size_t)P, MPI_MAX_PROCESSOR_NAME);
    MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, MPI_COMM_WORLD);
    int same = 0;
    for (int i = 0; i < P; i++)
        same += strcmp(all + (size_t)i * MPI_MAX_PROCESSOR_NAME, name) == 0;
    MPI_Comm node;
    int nsize = -1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                            &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &nsize);
        MPI_Comm_free(&node);
    }
    if (rank == 0)
        printf("# %d ranks; rank 0 on %s with %d ranks\n", P, name, same);
    check(nsize == same, "MPI_Comm_split_type(SHARED) groups ranks by host");
    free(all);

    /* 1b. Cores: the ranks of a node probe in parallel (one core per rank,
     * sim/mkplatform.py), so a probe loop on all ranks at once takes about
     * as long as on one rank alone (one shared core: `same` times longer). */
    double t_alone = 0, t_all = 0;
    int flag;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double t0 = MPI_Wtime();
        for (int k = 0; k < 100; k++)
            MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        t_alone = MPI_Wtime() - t0;
    }
    MPI_Bcast(&t_alone, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int k = 0; k < 100; k++)
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    t_all = MPI_Wtime() - t0;
    if (rank == 0)
        printf("# 100 MPI_Iprobe: %.3f us alone, %.3f us on all ranks at once\n",
               t_alone * 1e6, t_all * 1e6);
    check(t_alone > 0 && t_all < 1.5 * t_alone, "ranks of a node probe in parallel (cores)");

    /* 2. Errors: a NULL argument comes back as MPI_ERR_ARG naming it. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int one = 1, zero = 0, buf = 0;
    int *cnt = calloc((size_t)P, sizeof(int));
    int rc = xchg_alltoallv(&buf, NULL, cnt, MPI_INT, &buf, cnt, cnt, MPI_INT,
                            MPI_COMM_WORLD);
    int cls = -1;
    char msg[MPI_MAX_ERROR_STRING] = {0};
    MPI_Error_class(rc, &cls);
    xchg_error_string(rc, msg, &len);
    check(rc != MPI_SUCCESS && cls == MPI_ERR_ARG && strstr(msg, "sendcounts"),
          "NULL sendcounts: MPI_ERR_ARG naming the argument");
    (void)one; (void)zero;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    /* 3. Every algorithm against MPI_Alltoallv on random counts. */
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc_ = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    /* rank's own generator: libc's rand() state is one for all simulated
     * ranks (SMPI privatizes the program's globals, not libc's), so its
     * draws would depend on the order ranks run in, which the charges
     * change */
    unsigned long long g = 777u + (unsigned)rank;
    for (int j = 0; j < P; j++) {
        g = g * 6364136223846793005ull + 1442695040888963407ull;
        unsigned v = (unsigned)(g >> 33);
        sc[j] = v % 4 == 0 ? 0 : (int)((v / 4) % 300);
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc_, 1, MPI_INT, MPI_COMM_WORLD);
    int stot = 0, rtot = 0;
    for (int j = 0; j < P; j++) {
        sd[j] = stot; stot += sc[j];
        rd[j] = rtot; rtot += rc_[j];
    }
    int *sb = malloc(sizeof(int) * (stot + 1)), *ref = malloc(sizeof(int) * (rtot + 1)),
        *got = malloc(sizeof(int) * (rtot + 1));
    for (int k = 0; k < stot; k++)
        sb[k] = rank * 1000003 + k;
    MPI_Alltoallv(sb, sc, sd, MPI_INT, ref, rc_, rd, MPI_INT, MPI_COMM_WORLD);
    for (int a = 0; a < xchg_algo_count(); a++) {
        xchg_algo al = xchg_algo_at(a);
        memset(got, 0xff, sizeof(int) * (rtot + 1));
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        int r = xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, got, rc_, rd, MPI_INT,
                                    MPI_COMM_WORLD);
        double dt = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        char what[96];
        snprintf(what, sizeof what, "%-16s matches MPI_Alltoallv, %10.3f us", xchg_algo_name(al),
                 tmax * 1e6);
        check(r == MPI_SUCCESS && memcmp(got, ref, sizeof(int) * rtot) == 0, what);
    }

    /* 4. auto inside a nonblocking exchange on several nodes: the start
     * makes hierarchical's node communicators (its split is blocking and
     * cannot run inside the exchange's coroutine), so auto may run it
     * there. A tuning-table rule makes auto choose it. */
    if (rank == 0) {
        FILE *f = fopen("/tmp/xchg-smpi-check-table", "w");
        if (f) {
            fputs("rule 1 1000000 0 1000000000 hierarchical\n", f);
            fclose(f);
        }
        setenv("XCHG_TUNING_FILE", "/tmp/xchg-smpi-check-table", 1);
        setenv("XCHG_AUTO_MIN_P", "1", 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        memset(got, 0xff, sizeof(int) * (rtot + 1));
        xchg_request req = NULL;
        int r = xchg_ialltoallv(sb, sc, sd, MPI_INT, got, rc_, rd, MPI_INT, comm, &req);
        if (r == MPI_SUCCESS)
            r = xchg_wait(req);
        xchg_algo ran = req ? xchg_request_algo(req) : XCHG_ALGO_INVALID;
        if (req)
            xchg_request_free(&req);
        int multi = same > 1 && same < P;
        check(r == MPI_SUCCESS && memcmp(got, ref, sizeof(int) * rtot) == 0 &&
                  (!multi || ran == XCHG_ALGO_HIERARCHICAL),
              "auto runs hierarchical in a nonblocking exchange");
        MPI_Comm_free(&comm);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        unsetenv("XCHG_TUNING_FILE");
        unsetenv("XCHG_AUTO_MIN_P");
        remove("/tmp/xchg-smpi-check-table");
    }
    free(sc); free(sd); free(rc_); free(rd); free(sb); free(ref); free(got); free(cnt);
    MPI_Finalize();
    return fails ? 1 : 0;
}
