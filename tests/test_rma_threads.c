/*
 * test_rma_threads.c - a forced rma_fence or rma_lock under
 * MPI_THREAD_MULTIPLE. Where the MPI library cannot make a window at that
 * thread level (Open MPI 4.1 on shared memory, whose only one-sided
 * component there, osc pt2pt, refuses it), the call must end with one
 * error class on every rank, never abort or hang, and its message must
 * give advice that fits the thread level (not "set OMPI_MCA_osc=pt2pt"
 * when that is the setting already). Where the window works (MPICH), the
 * exchange must be right. Blocking calls and persistent requests.
 * Prints "N passed, M failed"; exits non-zero on a failure.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, P, npass, nfail;

static void verdict(int ok, const char *what, const char *detail)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all) {
        npass++;
    } else {
        nfail++;
        if (!ok)
            fprintf(stderr, "FAIL [rank %d] %s: %s\n", rank, what, detail);
    }
}

/* One exchange: rank r sends rank j r+1 ints of value 1000 r + j. */
static void check_result(int rc, const int *rb, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) {
        xchg_error_string(rc, msg, &len);
        MPI_Error_class(rc, &cls);
    }
    /* every rank ends alike: all succeed, or all fail with one class */
    int lo = cls, hi = cls;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    char detail[MPI_MAX_ERROR_STRING + 64];
    snprintf(detail, sizeof detail, "class %d here, %d..%d over ranks: %s", cls, lo, hi, msg);
    verdict(lo == hi, what, detail);
    if (rc == MPI_SUCCESS) {
        int ok = 1;
        for (int j = 0, k = 0; j < P; j++)
            for (int i = 0; i < j + 1; i++, k++)
                ok &= rb[k] == 1000 * j + rank;
        verdict(ok, what, "wrong data");
        return;
    }
    /* the advice fits the thread level and the settings */
    int provided = 0;
    MPI_Query_thread(&provided);
    const char *osc = getenv("OMPI_MCA_osc");
    int ok = 1;
    if (provided == MPI_THREAD_MULTIPLE && !strstr(msg, "MPI_THREAD_MULTIPLE"))
        ok = 0;
    if (osc && strstr(osc, "pt2pt") && strstr(msg, "set OMPI_MCA_osc=pt2pt"))
        ok = 0;
    verdict(ok, what, msg);
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int *sc = malloc(sizeof(int) * (size_t)P), *sd = malloc(sizeof(int) * (size_t)P);
    int *rc_ = malloc(sizeof(int) * (size_t)P), *rd = malloc(sizeof(int) * (size_t)P);
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        sc[j] = rank + 1, sd[j] = ns, ns += sc[j];
        rc_[j] = j + 1, rd[j] = nr, nr += rc_[j];
    }
    int *sb = malloc(sizeof(int) * (size_t)ns), *rb = malloc(sizeof(int) * (size_t)nr);
    for (int j = 0; j < P; j++)
        for (int i = 0; i < sc[j]; i++)
            sb[sd[j] + i] = 1000 * rank + j;
    const char *names[] = {"rma_fence", "rma_lock"};
    for (int a = 0; a < 2; a++) {
        xchg_algo algo = xchg_algo_from_name(names[a]);
        char what[64];
        memset(rb, 0xff, sizeof(int) * (size_t)nr);
        int rc = xchg_alltoallv_algo(algo, sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, comm);
        snprintf(what, sizeof what, "%s blocking", names[a]);
        check_result(rc, rb, what);
        memset(rb, 0xff, sizeof(int) * (size_t)nr);
        xchg_request req = XCHG_REQUEST_NULL;
        rc = xchg_alltoallv_init_algo(algo, sb, sc, sd, MPI_INT, rb, rc_, rd, MPI_INT, comm,
                                      MPI_INFO_NULL, &req);
        if (rc == MPI_SUCCESS) {
            rc = xchg_start(req);
            if (rc == MPI_SUCCESS)
                rc = xchg_wait(req);
            xchg_request_free(&req);
        }
        snprintf(what, sizeof what, "%s persistent", names[a]);
        check_result(rc, rb, what);
    }
    free(sb); free(rb); free(sc); free(sd); free(rc_); free(rd);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("test_rma_threads (thread level %d): %d passed, %d failed\n", provided, npass,
               nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
