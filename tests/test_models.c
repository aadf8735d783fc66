/*
 * test_models.c - the MPI-library baselines (mpich_model, ompi_model) on
 * bad input: a receive block smaller than what arrives.
 *
 * Checks, for each model, with MPI_ERRORS_RETURN: a block from a peer
 * larger than its receive block gives MPI_ERR_TRUNCATE on the receiver;
 * a self block larger than its receive block gives MPI_ERR_TRUNCATE saying
 * so (Open MPI 4.1 truncates messages to self silently, so
 * mpich_model finds this itself); no rank hangs (CTest timeout), every
 * rank ends with success or the truncation class, and a correct call on
 * the same communicator afterwards works. (Results against MPI_Alltoallv
 * are checked by test_alltoallv, which iterates the registry.)
 */
#include "xchg.h"
#include "a2av_cases.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int rank, P, nfail, npass;

/* One call where rank `from` sends rank 0 two ints and rank 0 expects one.
 * Returns this rank's code. */
static int call_truncating(xchg_algo a, int from, char *msg)
{
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int *sb = calloc((size_t)(2 * P + 2), sizeof(int)), *rb = calloc((size_t)(2 * P + 2), sizeof(int));
    for (int j = 0; j < P; j++) {
        sc[j] = rc[j] = 1;
        sd[j] = rd[j] = 2 * j;
    }
    if (rank == from)
        sc[0] = 2;
    int code = xchg_alltoallv_algo(a, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD);
    msg[0] = '\0';
    if (code != MPI_SUCCESS) {
        int len;
        xchg_error_string(code, msg, &len);
    }
    free(sc); free(sd); free(rc); free(rd); free(sb); free(rb);
    return code;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *names[] = {"mpich_model", "ompi_model"};
    for (int k = 0; k < 2; k++) {
        xchg_algo a = xchg_algo_from_name(names[k]);
        char what[160], msg[MPI_MAX_ERROR_STRING];
        CHECK_ALL(a != XCHG_ALGO_INVALID && xchg_algo_is_baseline(a), "%s", names[k]);
        /* from the last rank (rank 0 itself on one rank) */
        for (int self = 0; self < 2; self++) {
            int from = self ? 0 : P - 1;
            int code = call_truncating(a, from, msg);
            int cls = a2av_err_class(code);
            snprintf(what, sizeof what, "%s: %s block too large: MPI_ERR_TRUNCATE on rank 0",
                     names[k], from == 0 ? "self" : "peer");
            CHECK_ALL(rank != 0 || cls == MPI_ERR_TRUNCATE, "%s", what);
            snprintf(what, sizeof what, "%s: %s block too large: others succeed or truncate",
                     names[k], from == 0 ? "self" : "peer");
            CHECK_ALL(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "%s", what);
            if (from == 0) {
                snprintf(what, sizeof what, "%s: self truncation says so", names[k]);
                CHECK_ALL(rank != 0 || strstr(msg, "sends itself") != NULL, "%s", what);
            }
            /* still usable */
            code = call_truncating(a, -1, msg);
            snprintf(what, sizeof what, "%s: a good call after the truncation", names[k]);
            CHECK_ALL(code == MPI_SUCCESS, "%s", what);
        }
    }
    if (rank == 0)
        printf("test_models on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
