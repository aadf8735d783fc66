/*
 * test_errors.c - bad arguments give the right MPI error class, a message
 * naming the rank and the argument ("xchg: rank 2: sendbuf is NULL but
 * sendcounts[0] is 1", for every family of calls), go through the
 * communicator's error handler, and leave the process usable. Algorithm
 * names: any id has a name ("invalid" for ids that are none), an unknown
 * name in the environment is quoted back, XCHG_ALGO_INVALID says where it
 * comes from.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static int npass, nfail, rank;
static int handler_calls;
static int mpi_error_string_works;

/* Does this MPI return the string a library attaches to an added code?
 * (MPICH 4.0.x does not for codes in predefined classes.) */
static int probe_error_string(void)
{
    int code, len = 0;
    char s[MPI_MAX_ERROR_STRING];
    MPI_Add_error_code(MPI_ERR_OTHER, &code);
    MPI_Add_error_string(code, "xchg-test-probe");
    MPI_Error_string(code, s, &len);
    return strcmp(s, "xchg-test-probe") == 0;
}

/* Settings are read once per communicator, at its first xchg call: a new
 * one sees setenv's. */
static MPI_Comm comm_with_env(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm; (void)code;
    handler_calls++;
}

static void expect(const char *what, int rc, int eclass, const char *needle)
{
    int cls = MPI_SUCCESS, len = 0;
    char msg[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        xchg_error_string(rc, msg, &len);
    }
    if (cls != eclass || !needle) {
        CHECK(cls == eclass, "%s: error class %d, expected %d (%s)", what, cls, eclass, msg);
        return;
    }
    CHECK(strstr(msg, needle) != NULL, "%s: message \"%s\" does not name \"%s\"", what, msg,
          needle);
    if (strstr(msg, needle) && mpi_error_string_works) {
        /* where the MPI library shows added strings, MPI_Error_string says it too */
        MPI_Error_string(rc, msg, &len);
        CHECK(strstr(msg, needle) != NULL, "%s: MPI_Error_string \"%s\" does not name \"%s\"",
              what, msg, needle);
    }
}

/* Any id has a name: "invalid" for those that are no algorithm, which
 * reads back as the invalid id. */
static void names_of_invalid_ids(void)
{
    const xchg_algo ids[] = {(xchg_algo)-5, XCHG_ALGO_INVALID, (xchg_algo)1000};
    for (int i = 0; i < 3; i++) {
        const char *n = xchg_algo_name(ids[i]);
        CHECK(n && strcmp(n, "invalid") == 0 && xchg_algo_from_name(n) == XCHG_ALGO_INVALID,
              "xchg_algo_name(%d) is \"%s\", expected \"invalid\"", (int)ids[i],
              n ? n : "(null)");
        const char *sn = xchg_sparse_algo_name((xchg_sparse_algo)ids[i]);
        CHECK(sn && strcmp(sn, "invalid") == 0, "xchg_sparse_algo_name(%d) is \"%s\"",
              (int)ids[i], sn ? sn : "(null)");
        const char *nn = xchg_neighbor_algo_name((xchg_neighbor_algo)ids[i]);
        CHECK(nn && strcmp(nn, "invalid") == 0, "xchg_neighbor_algo_name(%d) is \"%s\"",
              (int)ids[i], nn ? nn : "(null)");
    }
}

/* Every family's argument error names this rank (in MPI_COMM_WORLD) and
 * the argument: sendbuf NULL with data to send (every rank alike, so every
 * rank has its own message), a negative sparse count. */
static void rank_named(MPI_Comm comm, const int *sc, const int *sd, int *rb, const int *rc,
                       const int *rd, int P)
{
    char want[160];
    xchg_request req = XCHG_REQUEST_NULL;
    snprintf(want, sizeof want, "xchg: rank %d: sendbuf is NULL but sendcounts[0] is 1", rank);
    expect("alltoallv: rank and argument named",
           xchg_alltoallv_algo(XCHG_ALGO_LINEAR, NULL, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm),
           MPI_ERR_BUFFER, want);
    expect("auto: rank and argument named",
           xchg_alltoallv(NULL, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_BUFFER, want);
    expect("persistent init: rank and argument named",
           xchg_alltoallv_init(NULL, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm, MPI_INFO_NULL,
                               &req), MPI_ERR_BUFFER, want);
    expect("nonblocking: rank and argument named",
           xchg_ialltoallv_algo(XCHG_ALGO_PADDED_ALLTOALL, NULL, sc, sd, MPI_INT, rb, rc, rd,
                                MPI_INT, comm, &req) == MPI_SUCCESS ? xchg_wait(req) : -1,
           MPI_ERR_BUFFER, want);
    xchg_request_free(&req);
#if XCHG_HAVE_LARGE_COUNT
    MPI_Count *csc = malloc(sizeof(MPI_Count) * 2 * (size_t)P), *crc = csc + P;
    MPI_Aint *csd = malloc(sizeof(MPI_Aint) * 2 * (size_t)P), *crd = csd + P;
    for (int i = 0; i < P; i++) {
        csc[i] = sc[i], crc[i] = rc[i];
        csd[i] = sd[i], crd[i] = rd[i];
    }
    expect("large count: rank and argument named",
           xchg_alltoallv_c(NULL, csc, csd, MPI_INT, rb, crc, crd, MPI_INT, comm),
           MPI_ERR_BUFFER, want);
    free(csc);
    free(csd);
#endif
    /* sparse: a negative count, every rank alike */
    int dest = (rank + 1) % P, bad = -2, zero = 0, v = 0;
    snprintf(want, sizeof want, "xchg: rank %d: sendcounts[0] is negative (-2)", rank);
    xchg_sparse_result res;
    expect("sparse: rank and argument named",
           xchg_sparse_exchange_result(1, &dest, &v, &bad, &zero, MPI_INT, &res, comm),
           MPI_ERR_COUNT, want);
    xchg_sparse_result_free(&res);
    /* neighbour: a ring (weights 1, not MPI_UNWEIGHTED, which GCC misreads
     * in Open MPI's mpi.h), sendbuf NULL with a block to send */
    int src = (rank - 1 + P) % P, one = 1;
    MPI_Comm ring;
    MPI_Dist_graph_create_adjacent(comm, 1, &src, &one, 1, &dest, &one, MPI_INFO_NULL, 0,
                                   &ring);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    snprintf(want, sizeof want, "xchg: rank %d: sendbuf is NULL but sendcounts[0] is 1", rank);
    expect("neighbour: rank and argument named",
           xchg_neighbor_alltoallv(NULL, &one, &zero, MPI_INT, rb, &one, &zero, MPI_INT, ring),
           MPI_ERR_BUFFER, want);
    expect("neighbour persistent init: rank and argument named",
           xchg_neighbor_alltoallv_init(NULL, &one, &zero, MPI_INT, rb, &one, &zero, MPI_INT,
                                        ring, MPI_INFO_NULL, &req), MPI_ERR_BUFFER, want);
    MPI_Comm_free(&ring);
    /* an unknown neighbour algorithm in the environment is quoted back */
    setenv("XCHG_NEIGHBOR_ALGO", "pairwyse", 1);
    MPI_Dist_graph_create_adjacent(comm, 1, &src, &one, 1, &dest, &one, MPI_INFO_NULL, 0,
                                   &ring);
    MPI_Comm_set_errhandler(ring, MPI_ERRORS_RETURN);
    int sv = rank, rv = -1;
    expect("XCHG_NEIGHBOR_ALGO unknown",
           xchg_neighbor_alltoallv(&sv, &one, &zero, MPI_INT, &rv, &one, &zero, MPI_INT, ring),
           MPI_ERR_ARG, "unknown neighbour algorithm 'pairwyse'");
    unsetenv("XCHG_NEIGHBOR_ALGO");
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    mpi_error_string_works = probe_error_string();
    if (rank == 0)
        printf("MPI_Error_string shows library-added strings: %s\n",
               mpi_error_string_works ? "yes" : "no (checked through xchg_error_string only)");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);

    int *sc = calloc((size_t)P, sizeof(int)), *sd = calloc((size_t)P, sizeof(int));
    int *rc = calloc((size_t)P, sizeof(int)), *rd = calloc((size_t)P, sizeof(int));
    int *neg = calloc((size_t)P, sizeof(int));
    int *sb = calloc((size_t)P, sizeof(int)), *rb = calloc((size_t)P, sizeof(int));
    for (int i = 0; i < P; i++) {
        sc[i] = rc[i] = 1;
        sd[i] = rd[i] = i;
        sb[i] = rank * 100 + i;
    }
    neg[P - 1] = -3;
    MPI_Datatype uncommitted;
    MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted);

    for (int a = 0; a < xchg_algo_count(); a++) {
        xchg_algo al = xchg_algo_at(a);
        char w[128];
#define E(label, call, cls, needle)                                                 \
        do {                                                                        \
            snprintf(w, sizeof w, "%s: %s", xchg_algo_name(al), label);             \
            expect(w, call, cls, needle);                                           \
        } while (0)
        E("sendcounts NULL", xchg_alltoallv_algo(al, sb, NULL, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_ARG, "sendcounts");
        E("sdispls NULL", xchg_alltoallv_algo(al, sb, sc, NULL, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_ARG, "sdispls");
        E("recvcounts NULL", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, NULL, rd, MPI_INT, comm), MPI_ERR_ARG, "recvcounts");
        E("rdispls NULL", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, rc, NULL, MPI_INT, comm), MPI_ERR_ARG, "rdispls");
        E("negative sendcount", xchg_alltoallv_algo(al, sb, neg, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_COUNT, "sendcounts[");
        E("negative recvcount", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, neg, rd, MPI_INT, comm), MPI_ERR_COUNT, "recvcounts[");
        E("sendtype NULL", xchg_alltoallv_algo(al, sb, sc, sd, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, comm), MPI_ERR_TYPE, "sendtype");
        E("recvtype NULL", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_DATATYPE_NULL, comm), MPI_ERR_TYPE, "recvtype");
        E("sendtype uncommitted", xchg_alltoallv_algo(al, sb, sc, sd, uncommitted, rb, rc, rd, MPI_INT, comm), MPI_ERR_TYPE, "committed");
        E("recvtype uncommitted", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, rc, rd, uncommitted, comm), MPI_ERR_TYPE, "recvtype");
        E("recvbuf MPI_IN_PLACE", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, MPI_IN_PLACE, rc, rd, MPI_INT, comm), MPI_ERR_BUFFER, "recvbuf");
        /* in place: send arguments are ignored, even NULL ones */
        for (int i = 0; i < P; i++)
            rb[i] = rank * 100 + i;
        E("MPI_IN_PLACE with NULL send arrays", xchg_alltoallv_algo(al, MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rb, rc, rd, MPI_INT, comm), MPI_SUCCESS, NULL);
        int good = 1;
        for (int i = 0; i < P; i++)
            good &= rb[i] == i * 100 + rank;
        E("MPI_IN_PLACE result", good ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);
        /* still usable: a correct call works */
        memset(rb, 0, sizeof(int) * (size_t)P);
        E("good call after errors", xchg_alltoallv_algo(al, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_SUCCESS, NULL);
        good = 1;
        for (int i = 0; i < P; i++)
            good &= rb[i] == i * 100 + rank;
        E("good call result", good ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);
    }
    int before = handler_calls;
    /* 11 errors per algorithm went through the handler */
    expect("error handler called for each error",
           before == 11 * xchg_algo_count() ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);

    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    expect("invalid algo id", xchg_alltoallv_algo((xchg_algo)999, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_ARG, "algo 999 is not an algorithm");
    expect("xchg_algo_from_name(unknown)", xchg_algo_from_name("no_such_algo") == XCHG_ALGO_INVALID ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);
    expect("xchg_algo_from_name(NULL)", xchg_algo_from_name(NULL) == XCHG_ALGO_INVALID ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);
    names_of_invalid_ids();
    expect("XCHG_ALGO_INVALID forced", xchg_alltoallv_algo(XCHG_ALGO_INVALID, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_ARG, "algo");
    expect("XCHG_ALGO_INVALID says where it comes from", xchg_alltoallv_algo(xchg_algo_from_name("pairwyse"), sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_ERR_ARG, "xchg_algo_from_name returns it for an unknown name");
    xchg_request req = XCHG_REQUEST_NULL;
    setenv("XCHG_ALLTOALLV_ALGO", "pairwyse", 1);
    MPI_Comm ecomm = comm_with_env();
    expect("XCHG_ALLTOALLV_ALGO unknown", xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ecomm), MPI_ERR_ARG, "XCHG_ALLTOALLV_ALGO: unknown algorithm 'pairwyse' (xchg-bench --list names them)");
    MPI_Comm_free(&ecomm);
    ecomm = comm_with_env();
    expect("XCHG_ALLTOALLV_ALGO unknown, persistent init", xchg_alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ecomm, MPI_INFO_NULL, &req), MPI_ERR_ARG, "'pairwyse'");
    MPI_Comm_free(&ecomm);
    setenv("XCHG_ALLTOALLV_ALGO", "pairwise", 1);
    ecomm = comm_with_env();
    expect("XCHG_ALLTOALLV_ALGO=pairwise", xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ecomm), MPI_SUCCESS, NULL);
    xchg_stats st;
    xchg_get_stats(ecomm, &st);
    expect("XCHG_ALLTOALLV_ALGO forces the algorithm", st.algo == XCHG_ALGO_PAIRWISE ? MPI_SUCCESS : MPI_ERR_OTHER, MPI_SUCCESS, NULL);
    MPI_Comm_free(&ecomm);
    unsetenv("XCHG_ALLTOALLV_ALGO");
    /* an error with no communicator goes to MPI_COMM_SELF's handler */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    expect("comm NULL", xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM, "comm");
    expect("stats NULL", xchg_get_stats(comm, NULL), MPI_ERR_ARG, "stats");
    rank_named(comm, sc, sd, rb, rc, rd, P);

    /* an intercommunicator: MPI_ERR_COMM (needs two groups) */
    if (P >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        expect("intercommunicator", xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, inter), MPI_ERR_COMM, "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    /* the temporary-memory limit refuses cleanly (all ranks agree) */
    setenv("XCHG_MAX_TEMP_BYTES", "1", 1);
    ecomm = comm_with_env();
    for (int i = 0; i < P; i++)
        rb[i] = rank * 100 + i;
    expect("XCHG_MAX_TEMP_BYTES=1 with MPI_IN_PLACE", xchg_alltoallv_algo(XCHG_ALGO_LINEAR, MPI_IN_PLACE, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ecomm), MPI_ERR_NO_MEM, "XCHG_MAX_TEMP_BYTES");
    unsetenv("XCHG_MAX_TEMP_BYTES");
    expect("usable after MPI_ERR_NO_MEM", xchg_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_SUCCESS, NULL);
    MPI_Comm_free(&ecomm);

    MPI_Type_free(&uncommitted);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&comm);
    int tot[2] = {npass, nfail}, all[2];
    MPI_Reduce(tot, all, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_errors on %d ranks: %d passed, %d failed\n", P, all[0], all[1]);
    free(sc); free(sd); free(rc); free(rd); free(neg); free(sb); free(rb);
    MPI_Finalize();
    return all[1] && rank == 0 ? 1 : (nfail ? 1 : 0);
}
