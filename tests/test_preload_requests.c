/*
 * test_preload_requests.c - an "unmodified application" that uses
 * MPI_Ialltoallv and MPI_Alltoallv_init with every MPI request call the
 * preload must teach xchg's requests, mixed with MPI's own point-to-point
 * requests in the same arrays. Run under libxchg-preload.so with
 * XCHG_VERBOSE=1; CTest checks the report (every exchange served by xchg)
 * with tests/expect_lines.sh, and this program checks every result by
 * formula, the ring messages, the request handles afterwards (NULL after a
 * completed nonblocking request, kept after a persistent one) and that
 * xchg saw the calls (xchg_get_stats, looked up at run time).
 *
 * Per rank: 12 MPI_Ialltoallv (MPI_Wait, MPI_Test loop, MPI_Waitall with a
 * ring send and receive, MPI_Testall loop likewise, MPI_Waitany,
 * MPI_Testany loop, MPI_Waitsome, MPI_Testsome loop,
 * MPI_Request_get_status loop then MPI_Wait, MPI_Request_free while
 * active, two outstanding on two communicators completed in reverse order
 * (2)), 1 MPI_Ialltoallv_c on MPI-4 libraries and,
 * on MPI-4 libraries, 1 persistent request started 5 times (MPI_Start +
 * MPI_Wait twice, MPI_Startall with a persistent send/receive pair +
 * MPI_Waitall, MPI_Start + MPI_Test loop, MPI_Start + MPI_Waitsome);
 * then, with XCHG_CHECK=1, 2 MPI_Ialltoallv with a bad count on the last
 * rank (MPI_Wait, MPI_Waitall): the same error class on every rank.
 */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, P, bad;

#define FAIL(...)                                                                           \
    do {                                                                                    \
        fprintf(stderr, "FAIL [rank %d] ", rank);                                           \
        fprintf(stderr, __VA_ARGS__);                                                       \
        fputc('\n', stderr);                                                                \
        bad++;                                                                              \
    } while (0)

static int value(int from, int to, int k, int round)
{
    return round * 1000000 + from * 1000 + to * 10 + k;
}

typedef struct exchange {
    int *sc, *sd, *rc, *rd, *sb, *rb;
} exchange;

/* counts (rank + 2 j + round) % 4 to j: zeros, a self-message, changing */
static void make(exchange *x, int round)
{
    x->sc = malloc(sizeof(int) * P), x->sd = malloc(sizeof(int) * P);
    x->rc = malloc(sizeof(int) * P), x->rd = malloc(sizeof(int) * P);
    int st = 0, rt = 0;
    for (int j = 0; j < P; j++) {
        x->sc[j] = (rank + 2 * j + round) % 4;
        x->rc[j] = (j + 2 * rank + round) % 4;
        x->sd[j] = st, st += x->sc[j];
        x->rd[j] = rt, rt += x->rc[j];
    }
    x->sb = malloc(sizeof(int) * (st + 1));
    x->rb = malloc(sizeof(int) * (rt + 1));
}

static void fill(exchange *x, int round)
{
    for (int j = 0; j < P; j++)
        for (int k = 0; k < x->sc[j]; k++)
            x->sb[x->sd[j] + k] = value(rank, j, k, round);
    int rt = x->rd[P - 1] + x->rc[P - 1];
    for (int k = 0; k < rt; k++)
        x->rb[k] = -1;
}

static void check(const exchange *x, int round, const char *what)
{
    for (int j = 0; j < P; j++)
        for (int k = 0; k < x->rc[j]; k++)
            if (x->rb[x->rd[j] + k] != value(j, rank, k, round)) {
                FAIL("%s: element %d from rank %d is %d, expected %d", what, k, j,
                     x->rb[x->rd[j] + k], value(j, rank, k, round));
                return;
            }
}

static void drop(exchange *x)
{
    free(x->sc), free(x->sd), free(x->rc), free(x->rd), free(x->sb), free(x->rb);
}

static void start(exchange *x, int round, MPI_Comm comm, MPI_Request *req)
{
    fill(x, round);
    if (MPI_Ialltoallv(x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT, comm, req) !=
        MPI_SUCCESS)
        FAIL("MPI_Ialltoallv round %d failed", round);
}

static void expect_null(MPI_Request r, const char *what)
{
    if (r != MPI_REQUEST_NULL)
        FAIL("%s: the completed request is not MPI_REQUEST_NULL", what);
}

/* A ring message to the next rank, from the previous: MPI's own requests
 * beside xchg's in one array. */
static int ring_out, ring_in;
static void ring(MPI_Request *send, MPI_Request *recv, int tag)
{
    ring_out = rank * 100 + tag;
    ring_in = -1;
    MPI_Irecv(&ring_in, 1, MPI_INT, (rank + P - 1) % P, tag, MPI_COMM_WORLD, recv);
    MPI_Isend(&ring_out, 1, MPI_INT, (rank + 1) % P, tag, MPI_COMM_WORLD, send);
}

static void ring_check(int tag, const char *what)
{
    if (ring_in != ((rank + P - 1) % P) * 100 + tag)
        FAIL("%s: ring message is %d", what, ring_in);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    exchange x, y;
    make(&x, 0);
    make(&y, 1);
    int round = 0, flag, index, outcount, idx[3];
    MPI_Request req, reqs[3];
    MPI_Status st, sts[3];

    /* MPI_Wait */
    start(&x, ++round, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    check(&x, round, "MPI_Wait");
    expect_null(req, "MPI_Wait");

    /* MPI_Test until done */
    start(&x, ++round, MPI_COMM_WORLD, &req);
    do
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    while (!flag);
    check(&x, round, "MPI_Test");
    expect_null(req, "MPI_Test");

    /* MPI_Waitall: MPI's receive, xchg's exchange, MPI's send */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[1]);
    ring(&reqs[2], &reqs[0], round);
    if (MPI_Waitall(3, reqs, sts) != MPI_SUCCESS)
        FAIL("MPI_Waitall failed");
    check(&x, round, "MPI_Waitall");
    ring_check(round, "MPI_Waitall");
    for (int i = 0; i < 3; i++)
        expect_null(reqs[i], "MPI_Waitall");
    if (sts[0].MPI_SOURCE != (rank + P - 1) % P || sts[0].MPI_TAG != round)
        FAIL("MPI_Waitall: the receive's status is source %d tag %d", sts[0].MPI_SOURCE,
             sts[0].MPI_TAG);

    /* MPI_Testall until all are done: nothing completes before */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[0]);
    ring(&reqs[1], &reqs[2], round);
    do {
        MPI_Testall(3, reqs, &flag, MPI_STATUSES_IGNORE);
        if (!flag && reqs[0] == MPI_REQUEST_NULL)
            FAIL("MPI_Testall completed the exchange without flag");
    } while (!flag);
    check(&x, round, "MPI_Testall");
    ring_check(round, "MPI_Testall");
    for (int i = 0; i < 3; i++)
        expect_null(reqs[i], "MPI_Testall");

    /* MPI_Waitany until all three are done */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[2]);
    ring(&reqs[0], &reqs[1], round);
    int seen = 0;
    for (;;) {
        MPI_Waitany(3, reqs, &index, &st);
        if (index == MPI_UNDEFINED)
            break;
        seen |= 1 << index;
        expect_null(reqs[index], "MPI_Waitany");
    }
    if (seen != 7)
        FAIL("MPI_Waitany reported requests %#x, expected all three", seen);
    check(&x, round, "MPI_Waitany");
    ring_check(round, "MPI_Waitany");

    /* MPI_Testany likewise */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[1]);
    ring(&reqs[0], &reqs[2], round);
    seen = 0;
    for (;;) {
        MPI_Testany(3, reqs, &index, &flag, MPI_STATUS_IGNORE);
        if (flag && index == MPI_UNDEFINED)
            break;
        if (flag)
            seen |= 1 << index;
    }
    if (seen != 7)
        FAIL("MPI_Testany reported requests %#x, expected all three", seen);
    check(&x, round, "MPI_Testany");
    ring_check(round, "MPI_Testany");

    /* MPI_Waitsome until MPI_UNDEFINED */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[0]);
    ring(&reqs[1], &reqs[2], round);
    seen = 0;
    for (;;) {
        MPI_Waitsome(3, reqs, &outcount, idx, sts);
        if (outcount == MPI_UNDEFINED)
            break;
        if (outcount == 0)
            FAIL("MPI_Waitsome returned with nothing complete");
        for (int i = 0; i < outcount; i++)
            seen |= 1 << idx[i];
    }
    if (seen != 7)
        FAIL("MPI_Waitsome reported requests %#x, expected all three", seen);
    check(&x, round, "MPI_Waitsome");
    ring_check(round, "MPI_Waitsome");

    /* MPI_Testsome likewise */
    start(&x, ++round, MPI_COMM_WORLD, &reqs[2]);
    ring(&reqs[0], &reqs[1], round);
    seen = 0;
    for (;;) {
        MPI_Testsome(3, reqs, &outcount, idx, MPI_STATUSES_IGNORE);
        if (outcount == MPI_UNDEFINED)
            break;
        for (int i = 0; i < outcount; i++)
            seen |= 1 << idx[i];
    }
    if (seen != 7)
        FAIL("MPI_Testsome reported requests %#x, expected all three", seen);
    check(&x, round, "MPI_Testsome");
    ring_check(round, "MPI_Testsome");

    /* MPI_Request_get_status leaves the request; MPI_Wait then frees it */
    start(&x, ++round, MPI_COMM_WORLD, &req);
    do
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    while (!flag);
    if (req == MPI_REQUEST_NULL)
        FAIL("MPI_Request_get_status freed the request");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(&x, round, "MPI_Request_get_status");
    expect_null(req, "MPI_Request_get_status + MPI_Wait");

    /* MPI_Request_free of an active request: the exchange still completes
     * (a barrier then makes every rank's data final) */
    start(&x, ++round, MPI_COMM_WORLD, &req);
    MPI_Request_free(&req);
    expect_null(req, "MPI_Request_free");
    MPI_Barrier(MPI_COMM_WORLD);
    check(&x, round, "MPI_Request_free");

    /* two outstanding, on two communicators, completed in reverse order */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    start(&x, ++round, MPI_COMM_WORLD, &reqs[0]);
    int round_y = ++round;
    start(&y, round_y, dup, &reqs[1]);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    check(&x, round - 1, "two outstanding (first)");
    check(&y, round_y, "two outstanding (second, on a duplicate)");

#if MPI_VERSION >= 4
    /* the large-count form */
    {
        MPI_Count *csc = malloc(sizeof(MPI_Count) * P), *crc = malloc(sizeof(MPI_Count) * P);
        MPI_Aint *csd = malloc(sizeof(MPI_Aint) * P), *crd = malloc(sizeof(MPI_Aint) * P);
        for (int j = 0; j < P; j++)
            csc[j] = x.sc[j], crc[j] = x.rc[j], csd[j] = x.sd[j], crd[j] = x.rd[j];
        fill(&x, ++round);
        MPI_Ialltoallv_c(x.sb, csc, csd, MPI_INT, x.rb, crc, crd, MPI_INT, MPI_COMM_WORLD, &req);
        free(csc), free(crc), free(csd), free(crd); /* the call keeps its own copies */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check(&x, round, "MPI_Ialltoallv_c");
    }

    /* persistent: started five times, the handle kept between starts */
    MPI_Request preq, pair[2];
    if (MPI_Alltoallv_init(y.sb, y.sc, y.sd, MPI_INT, y.rb, y.rc, y.rd, MPI_INT, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &preq) != MPI_SUCCESS)
        FAIL("MPI_Alltoallv_init failed");
    MPI_Request kept = preq;
    for (int s = 0; s < 2; s++) {
        fill(&y, ++round);
        MPI_Start(&preq);
        MPI_Wait(&preq, MPI_STATUS_IGNORE);
        check(&y, round, "MPI_Alltoallv_init + MPI_Start + MPI_Wait");
    }
    /* MPI_Startall with MPI's persistent send and receive */
    fill(&y, ++round);
    ring_out = rank * 100 + round;
    ring_in = -1;
    MPI_Request all[3];
    MPI_Recv_init(&ring_in, 1, MPI_INT, (rank + P - 1) % P, round, MPI_COMM_WORLD, &pair[0]);
    MPI_Send_init(&ring_out, 1, MPI_INT, (rank + 1) % P, round, MPI_COMM_WORLD, &pair[1]);
    all[0] = pair[0], all[1] = preq, all[2] = pair[1];
    MPI_Startall(3, all);
    MPI_Waitall(3, all, MPI_STATUSES_IGNORE);
    check(&y, round, "MPI_Startall + MPI_Waitall");
    ring_check(round, "MPI_Startall + MPI_Waitall");
    if (all[1] != kept)
        FAIL("MPI_Waitall changed the persistent request's handle");
    MPI_Request_free(&all[0]);
    MPI_Request_free(&all[2]);
    fill(&y, ++round);
    MPI_Start(&preq);
    do
        MPI_Test(&preq, &flag, MPI_STATUS_IGNORE);
    while (!flag);
    check(&y, round, "MPI_Start + MPI_Test");
    fill(&y, ++round);
    MPI_Start(&preq);
    MPI_Waitsome(1, &preq, &outcount, idx, MPI_STATUSES_IGNORE);
    if (outcount != 1)
        FAIL("MPI_Waitsome on the persistent request: outcount %d", outcount);
    check(&y, round, "MPI_Start + MPI_Waitsome");
    /* an inactive persistent request: waits return at once, empty */
    MPI_Wait(&preq, &st);
    if (preq != kept)
        FAIL("the persistent request's handle changed");
    MPI_Request_free(&preq);
    expect_null(preq, "MPI_Request_free (persistent)");
#endif

    /* xchg saw them: the calls on MPI_COMM_WORLD, looked up at run time */
    typedef struct {
        int algo;
        size_t temp_bytes;
        unsigned long calls;
        char rest[64];
    } stats_t;
    int (*get_stats)(MPI_Comm, stats_t *) =
        (int (*)(MPI_Comm, stats_t *))dlsym(RTLD_DEFAULT, "xchg_get_stats");
    stats_t s = {0, 0, 0, {0}};
    unsigned long expect = 11 + (MPI_VERSION >= 4 ? 1 + 5 : 0);
    if (!get_stats)
        FAIL("xchg is not loaded (LD_PRELOAD missing?)");
    else if (get_stats(MPI_COMM_WORLD, &s) != MPI_SUCCESS || s.calls != expect)
        FAIL("xchg saw %lu exchanges on MPI_COMM_WORLD, expected %lu", s.calls, expect);

    /* an argument error on one rank (a negative receive count on the last):
     * with XCHG_CHECK=1 (without it, linear's argument errors are local:
     * docs/errors.md) every rank's wait reports an error of the same
     * class, through the communicator's handler, and the request is gone;
     * in MPI_Waitall as MPI_ERR_IN_STATUS with the exchange's status
     * carrying it. xchg reads its settings when it first meets a
     * communicator, so a new one after the setting. */
    MPI_Comm_free(&dup);
    setenv("XCHG_CHECK", "1", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    for (int form = 0; form < 2; form++) {
        fill(&x, ++round);
        int saved = x.rc[0];
        if (rank == P - 1)
            x.rc[0] = -1;
        int rc = MPI_Ialltoallv(x.sb, x.sc, x.sd, MPI_INT, x.rb, x.rc, x.rd, MPI_INT, dup, &req);
        if (rc == MPI_SUCCESS && form == 0) {
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rc == MPI_SUCCESS) {
            reqs[0] = req;
            ring(&reqs[1], &reqs[2], round);
            rc = MPI_Waitall(3, reqs, sts);
            if (rc != MPI_ERR_IN_STATUS)
                FAIL("MPI_Waitall with a failed exchange returned %d, not MPI_ERR_IN_STATUS", rc);
            else
                rc = sts[0].MPI_ERROR;
            if (sts[1].MPI_ERROR != MPI_SUCCESS || sts[2].MPI_ERROR != MPI_SUCCESS)
                FAIL("MPI_Waitall: MPI's own requests carry errors");
            ring_check(round, "MPI_Waitall with a failed exchange");
            req = reqs[0];
        }
        x.rc[0] = saved;
        int cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        int lo = 0, hi = 0;
        MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (rc == MPI_SUCCESS || lo != hi)
            FAIL("%s: a bad count on rank %d gave error class %d here (classes %d..%d "
                 "over the ranks)", form ? "MPI_Waitall" : "MPI_Wait", P - 1, cls, lo, hi);
        expect_null(req, "a failed exchange");
    }

    MPI_Comm_free(&dup);
    drop(&x);
    drop(&y);
    int all_bad = 0;
    MPI_Allreduce(&bad, &all_bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_preload_requests on %d ranks: %s\n", P,
               all_bad ? "FAILED" : "results correct");
    MPI_Finalize();
    return all_bad ? 1 : 0;
}
