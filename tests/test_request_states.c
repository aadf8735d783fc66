/*
 * test_request_states.c - MPI's request semantics for every kind of xchg
 * request: xchg_wait, xchg_test and xchg_waitall on a request that is not
 * active (a persistent one never started or already completed, a
 * nonblocking one already completed, XCHG_REQUEST_NULL) return
 * MPI_SUCCESS at once, xchg_test with flag = 1, as MPI_Wait and MPI_Test
 * do on inactive persistent requests and MPI_REQUEST_NULL.
 *
 * Kinds: persistent alltoallv requests of every algorithm and auto
 * (generic path, algorithms' own plans, RMA), nonblocking ones of every
 * algorithm and auto, neighbour persistent and nonblocking ones of every
 * neighbour algorithm and auto, and (where the MPI has large counts) the
 * requests that pass the exchange to MPI's own MPI_Alltoallv_init_c,
 * MPI_Ialltoallv_c and MPI_Neighbor_alltoallv_c. For each: start, test
 * until complete, then wait (returns at once), wait and test again; wait
 * then wait; and the never-started request tested and waited for, on
 * even ranks only (a wait that communicated would hang the others, caught
 * by the CTest timeout). Each round has new data and is compared with
 * MPI_Alltoallv (MPI_Neighbor_alltoallv) on the same inputs. Then
 * xchg_waitall over a mix of kinds, listed in opposite orders on even and
 * odd ranks, inactive and NULL entries among them, and with requests
 * listed twice; and what stays an error: starting an active request,
 * starting or freeing XCHG_REQUEST_NULL, a NULL flag, bad xchg_waitall
 * arguments. The same misuse is refused by every mode of request (the
 * plan and generic persistent ones, nonblocking, neighbour persistent and
 * nonblocking, MPI's large-count ones, xchg_ialltoallv_c on values that
 * fit): starting or freeing it while active, starting a nonblocking one;
 * and each tells its algorithm (xchg_request_algo,
 * xchg_request_neighbor_algo).
 *
 * Usage: test_request_states (no arguments).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if XCHG_HAVE_LARGE_COUNT
#include <sys/mman.h>
#endif
#include "a2av_cases.h"
#include "check.h"

static int rank, P, npass, nfail;

/* A failure's reason, kept for the agreed verdict. */
static int fail(char *why, size_t n, const char *what, int rc)
{
    snprintf(why, n, "%s: %s", what, rc == MPI_SUCCESS ? "wrong result" : a2av_err_msg(rc));
    return 0;
}

/* What every inactive request must do: test gives MPI_SUCCESS and flag 1,
 * wait and waitall give MPI_SUCCESS, all at once and twice over. */
static int inactive_ok(xchg_request r, const char *state, char *why, size_t n)
{
    char what[160];
    for (int k = 0; k < 2; k++) {
        int flag = 0, rc = xchg_test(r, &flag);
        snprintf(what, sizeof what, "xchg_test on a request %s", state);
        if (rc != MPI_SUCCESS || flag != 1) {
            snprintf(why, n, "%s: rc %d (%s), flag %d", what, rc, a2av_err_msg(rc), flag);
            return 0;
        }
        rc = xchg_wait(r);
        snprintf(what, sizeof what, "xchg_wait on a request %s", state);
        if (rc != MPI_SUCCESS)
            return fail(why, n, what, rc);
        xchg_request one[1] = {r};
        rc = xchg_waitall(1, one);
        snprintf(what, sizeof what, "xchg_waitall on a request %s", state);
        if (rc != MPI_SUCCESS)
            return fail(why, n, what, rc);
    }
    return 1;
}

/* Completes an active request: by test until flag (then the inactive
 * checks, whose first wait is the test-then-wait pattern), or by wait. */
static int complete(xchg_request r, int by_test, char *why, size_t n)
{
    int rc = MPI_SUCCESS, flag = 0;
    if (by_test) {
        while (rc == MPI_SUCCESS && !flag)
            rc = xchg_test(r, &flag);
        if (rc != MPI_SUCCESS)
            return fail(why, n, "xchg_test until complete", rc);
        return inactive_ok(r, "completed by xchg_test", why, n);
    }
    rc = xchg_wait(r);
    if (rc != MPI_SUCCESS)
        return fail(why, n, "xchg_wait", rc);
    return inactive_ok(r, "completed by xchg_wait", why, n);
}

/* ---- alltoallv: counts by formula (zeros included), data by round ---- */

typedef struct {
    int *sc, *sd, *rc, *rd;
    int *sb, *rb, *ref;
    int nr;
} xcase;

static void make(xcase *x, int shape)
{
    x->sc = malloc(sizeof(int) * 4 * (size_t)P);
    x->sd = x->sc + P;
    x->rc = x->sc + 2 * P;
    x->rd = x->sc + 3 * P;
    int ns = 0, nr = 0;
    for (int j = 0; j < P; j++) {
        x->sc[j] = (rank * 7 + j * 3 + shape) % 5;
        x->sd[j] = ns;
        ns += x->sc[j];
        x->rc[j] = (j * 7 + rank * 3 + shape) % 5;
        x->rd[j] = nr;
        nr += x->rc[j];
    }
    x->nr = nr;
    x->sb = malloc(sizeof(int) * (size_t)(ns + 1));
    x->rb = malloc(sizeof(int) * (size_t)(nr + 1));
    x->ref = malloc(sizeof(int) * (size_t)(nr + 1));
    for (int i = 0; i < ns; i++)
        x->sb[i] = 0;
}

static void fill(xcase *x, int round)
{
    for (int j = 0; j < P; j++)
        for (int i = 0; i < x->sc[j]; i++)
            x->sb[x->sd[j] + i] = ((rank * 1000 + j) * 100 + i) * 10 + round;
    for (int i = 0; i < x->nr; i++)
        x->rb[i] = x->ref[i] = -1;
}

/* Collective: MPI_Alltoallv on the same inputs, compared with rb. */
static int same_as_mpi(xcase *x)
{
    MPI_Alltoallv(x->sb, x->sc, x->sd, MPI_INT, x->ref, x->rc, x->rd, MPI_INT,
                  MPI_COMM_WORLD);
    return memcmp(x->rb, x->ref, sizeof(int) * (size_t)x->nr) == 0;
}

static void drop(xcase *x)
{
    free(x->sc);
    free(x->sb);
    free(x->rb);
    free(x->ref);
}

static int a2a_init(xchg_algo a, xcase *x, MPI_Comm comm, xchg_request *r)
{
    if (a == XCHG_ALGO_AUTO)
        return xchg_alltoallv_init(x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT,
                                   comm, MPI_INFO_NULL, r);
    return xchg_alltoallv_init_algo(a, x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd,
                                    MPI_INT, comm, MPI_INFO_NULL, r);
}

static int a2a_start_nb(xchg_algo a, xcase *x, MPI_Comm comm, xchg_request *r)
{
    if (a == XCHG_ALGO_AUTO)
        return xchg_ialltoallv(x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT, comm,
                               r);
    return xchg_ialltoallv_algo(a, x->sb, x->sc, x->sd, MPI_INT, x->rb, x->rc, x->rd, MPI_INT,
                                comm, r);
}

/* Persistent: never started, then rounds completed by test (then wait) or
 * by wait (then wait again), each against MPI_Alltoallv. */
static void persistent_states(xchg_algo a, const char *name, MPI_Comm comm)
{
    char why[600] = "", what[160];
    xcase x;
    make(&x, 1);
    xchg_request r = XCHG_REQUEST_NULL;
    int rc = a2a_init(a, &x, comm, &r), ok = rc == MPI_SUCCESS;
    if (!ok)
        fail(why, sizeof why, "init", rc);
    if (ok && rank % 2 == 0)
        ok = inactive_ok(r, "never started", why, sizeof why);
    snprintf(what, sizeof what, "%s persistent: never started", name);
    CHECK_ALL(ok, "%s: %s", what, why);
    for (int round = 0; round < 4 && ok; round++) {
        fill(&x, round);
        rc = xchg_start(r);
        ok = rc == MPI_SUCCESS ? complete(r, round % 2 == 0, why, sizeof why)
                               : fail(why, sizeof why, "xchg_start", rc);
        int same = same_as_mpi(&x);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Alltoallv", MPI_SUCCESS);
        snprintf(what, sizeof what, "%s persistent round %d (%s)", name, round,
                 round % 2 == 0 ? "test until complete, then wait" : "wait, then wait");
        CHECK_ALL(ok, "%s: %s", what, why);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (r != XCHG_REQUEST_NULL) {
        rc = xchg_request_free(&r);
        CHECK(rc == MPI_SUCCESS && r == XCHG_REQUEST_NULL, "%s persistent: free: %s", name,
              a2av_err_msg(rc));
    }
    drop(&x);
}

/* Nonblocking: one exchange completed by test (then wait), one by wait
 * (then wait again); the request stays, inactive, until freed. */
static void nonblocking_states(xchg_algo a, const char *name, MPI_Comm comm)
{
    char why[600] = "", what[160];
    xcase x;
    make(&x, 2);
    for (int round = 0; round < 2; round++) {
        xchg_request r = XCHG_REQUEST_NULL;
        fill(&x, round);
        int rc = a2a_start_nb(a, &x, comm, &r);
        int ok = rc == MPI_SUCCESS ? complete(r, round == 0, why, sizeof why)
                                   : fail(why, sizeof why, "start", rc);
        int same = same_as_mpi(&x);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Alltoallv", MPI_SUCCESS);
        if (r != XCHG_REQUEST_NULL) {
            rc = xchg_request_free(&r);
            if (ok && (rc != MPI_SUCCESS || r != XCHG_REQUEST_NULL))
                ok = fail(why, sizeof why, "xchg_request_free", rc);
        }
        snprintf(what, sizeof what, "%s nonblocking (%s)", name,
                 round == 0 ? "test until complete, then wait" : "wait, then wait");
        CHECK_ALL(ok, "%s: %s", what, why);
    }
    drop(&x);
}

/* ---- neighbour: rank r sends to r+1 and r+2, receives from r-1, r-2 ---- */

typedef struct {
    MPI_Comm comm;
    int outdeg, indeg;
    int dests[2], sources[2];
    int sc[2], sd[2], rc[2], rd[2];
    int sb[16], rb[16], ref[16];
    int nr;
} ncase;

static int ncount(int from, int to)
{
    return (from * 5 + to * 3) % 4 + 1;
}

static int add_unique(int *list, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (list[i] == v)
            return n;
    list[n] = v;
    return n + 1;
}

static void nmake(ncase *c)
{
    c->outdeg = c->indeg = 0;
    for (int k = 1; k <= 2; k++) {
        c->outdeg = add_unique(c->dests, c->outdeg, (rank + k) % P);
        c->indeg = add_unique(c->sources, c->indeg, (rank - k + 2 * P) % P);
    }
    const int weights[2] = {1, 1}; /* not MPI_UNWEIGHTED: GCC misreads Open MPI's */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, c->indeg, c->sources, weights, c->outdeg,
                                   c->dests, weights, MPI_INFO_NULL, 0, &c->comm);
    MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
    int d = 0;
    for (int i = 0; i < c->outdeg; i++) {
        c->sc[i] = ncount(rank, c->dests[i]);
        c->sd[i] = d;
        d += c->sc[i];
    }
    d = 0;
    for (int i = 0; i < c->indeg; i++) {
        c->rc[i] = ncount(c->sources[i], rank);
        c->rd[i] = d;
        d += c->rc[i];
    }
    c->nr = d;
}

static void nfill(ncase *c, int round)
{
    for (int i = 0; i < c->outdeg; i++)
        for (int k = 0; k < c->sc[i]; k++)
            c->sb[c->sd[i] + k] = ((rank * 100 + c->dests[i]) * 10 + k) * 10 + round;
    for (int i = 0; i < 16; i++)
        c->rb[i] = c->ref[i] = -1;
}

static int nsame_as_mpi(ncase *c)
{
    MPI_Neighbor_alltoallv(c->sb, c->sc, c->sd, MPI_INT, c->ref, c->rc, c->rd, MPI_INT,
                           c->comm);
    return memcmp(c->rb, c->ref, sizeof c->rb) == 0;
}

static int n_init(xchg_neighbor_algo a, ncase *c, xchg_request *r)
{
    return xchg_neighbor_alltoallv_init_algo(a, c->sb, c->sc, c->sd, MPI_INT, c->rb, c->rc,
                                             c->rd, MPI_INT, c->comm, MPI_INFO_NULL, r);
}

static int n_start_nb(xchg_neighbor_algo a, ncase *c, xchg_request *r)
{
    return xchg_ineighbor_alltoallv_algo(a, c->sb, c->sc, c->sd, MPI_INT, c->rb, c->rc, c->rd,
                                         MPI_INT, c->comm, r);
}

static void neighbor_states(xchg_neighbor_algo a, ncase *c)
{
    const char *name = xchg_neighbor_algo_name(a);
    char why[600] = "", what[160];
    xchg_request r = XCHG_REQUEST_NULL;
    int rc = n_init(a, c, &r), ok = rc == MPI_SUCCESS;
    if (!ok)
        fail(why, sizeof why, "init", rc);
    if (ok && rank % 2 == 0)
        ok = inactive_ok(r, "never started", why, sizeof why);
    CHECK_ALL(ok, "neighbour %s persistent: never started: %s", name, why);
    for (int round = 0; round < 4 && ok; round++) {
        nfill(c, round);
        rc = xchg_start(r);
        ok = rc == MPI_SUCCESS ? complete(r, round % 2 == 0, why, sizeof why)
                               : fail(why, sizeof why, "xchg_start", rc);
        int same = nsame_as_mpi(c);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Neighbor_alltoallv", MPI_SUCCESS);
        CHECK_ALL(ok, "neighbour %s persistent round %d: %s", name, round, why);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    for (int round = 0; round < 2; round++) {
        nfill(c, round + 5);
        rc = n_start_nb(a, c, &r);
        ok = rc == MPI_SUCCESS ? complete(r, round == 0, why, sizeof why)
                               : fail(why, sizeof why, "start", rc);
        int same = nsame_as_mpi(c);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Neighbor_alltoallv", MPI_SUCCESS);
        if (r != XCHG_REQUEST_NULL)
            xchg_request_free(&r);
        snprintf(what, sizeof what, "neighbour %s nonblocking (%s)", name,
                 round == 0 ? "test until complete, then wait" : "wait, then wait");
        CHECK_ALL(ok, "%s: %s", what, why);
    }
}

/* ---- xchg_waitall over a mix, listed in opposite orders ---- */

static void waitall_mix(ncase *nc)
{
    char why[600] = "";
    MPI_Comm c1, c2;
    MPI_Comm_dup(MPI_COMM_WORLD, &c1);
    MPI_Comm_dup(MPI_COMM_WORLD, &c2);
    MPI_Comm_set_errhandler(c1, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(c2, MPI_ERRORS_RETURN);
    xcase p, q, idle;
    make(&p, 3);
    make(&q, 4);
    make(&idle, 5);
    ncase np = *nc; /* its own buffers, the same communicator */
    xchg_request pr, ir, npr, nbr = XCHG_REQUEST_NULL, never;
    int rc = a2a_init(XCHG_ALGO_LINEAR, &p, c1, &pr);
    rc |= a2a_init(XCHG_ALGO_PAIRWISE, &idle, c1, &never);
    rc |= n_init(XCHG_NEIGHBOR_AUTO, &np, &npr);
    int ok = rc == MPI_SUCCESS;
    if (!ok)
        fail(why, sizeof why, "init", rc);
    for (int round = 0; round < 3 && ok; round++) {
        fill(&p, round);
        fill(&q, round);
        nfill(&np, round);
        nfill(nc, round + 10);
        rc = xchg_start(pr);
        rc |= a2a_start_nb(XCHG_ALGO_BRUCK_RADIX, &q, c2, &ir);
        rc |= xchg_start(npr);
        rc |= n_start_nb(XCHG_NEIGHBOR_DIRECT, nc, &nbr);
        xchg_request all[6] = {pr, ir, XCHG_REQUEST_NULL, npr, never, nbr};
        if (rank % 2) /* the opposite order: waitall must progress them all */
            for (int i = 0; i < 3; i++) {
                xchg_request t = all[i];
                all[i] = all[5 - i];
                all[5 - i] = t;
            }
        if (rc == MPI_SUCCESS)
            rc = xchg_waitall(6, all);
        ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_waitall", rc);
        if (ok) { /* every one is inactive now: at once */
            rc = xchg_waitall(6, all);
            ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_waitall again", rc);
        }
        if (ok)
            ok = inactive_ok(ir, "completed by xchg_waitall", why, sizeof why);
        int same = same_as_mpi(&p);
        same &= same_as_mpi(&q);
        same &= nsame_as_mpi(&np);
        same &= nsame_as_mpi(nc);
        if (ok && !same)
            ok = fail(why, sizeof why, "a result against MPI's", MPI_SUCCESS);
        xchg_request_free(&ir);
        xchg_request_free(&nbr);
        CHECK_ALL(ok, "xchg_waitall over persistent, nonblocking, neighbour, never-started "
                  "and NULL requests, round %d: %s", round, why);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    xchg_request_free(&pr);
    xchg_request_free(&never);
    xchg_request_free(&npr);
    drop(&p);
    drop(&q);
    drop(&idle);
    MPI_Comm_free(&c1);
    MPI_Comm_free(&c2);
}

/* ---- what stays an error ---- */

static int is_error(int rc, int cls, const char *needle, char *why, size_t n, const char *what)
{
    if (a2av_err_class(rc) != cls || !strstr(a2av_err_msg(rc), needle)) {
        snprintf(why, n, "%s: class %d, expected %d, message \"%s\" (wanted \"%s\")", what,
                 a2av_err_class(rc), cls, a2av_err_msg(rc), needle);
        return 0;
    }
    return 1;
}

static void errors(void)
{
    char why[600] = "";
    xcase x;
    make(&x, 6);
    fill(&x, 0);
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    xchg_request r = XCHG_REQUEST_NULL, none = XCHG_REQUEST_NULL;
    int rc = a2a_init(XCHG_ALGO_LINEAR, &x, c, &r), ok = rc == MPI_SUCCESS;
    if (ok)
        rc = xchg_start(r);
    ok = ok && rc == MPI_SUCCESS;
    if (ok)
        ok = is_error(xchg_start(r), MPI_ERR_REQUEST, "already active", why, sizeof why,
                      "xchg_start of an active request");
    if (ok)
        ok = is_error(xchg_request_free(&r), MPI_ERR_REQUEST, "is active", why, sizeof why,
                      "xchg_request_free of an active request");
    if (ok)
        ok = is_error(xchg_test(r, NULL), MPI_ERR_ARG, "flag", why, sizeof why,
                      "xchg_test with flag NULL");
    rc = xchg_wait(r);
    ok = ok && (rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_wait after the errors", rc));
    int same = same_as_mpi(&x);
    ok = ok && (same || fail(why, sizeof why, "result after the errors", MPI_SUCCESS));
    if (ok)
        ok = inactive_ok(none, "XCHG_REQUEST_NULL", why, sizeof why);
    if (ok)
        ok = is_error(xchg_start(none), MPI_ERR_REQUEST, "XCHG_REQUEST_NULL", why, sizeof why,
                      "xchg_start(XCHG_REQUEST_NULL)");
    if (ok)
        ok = is_error(xchg_request_free(&none), MPI_ERR_REQUEST, "XCHG_REQUEST_NULL", why,
                      sizeof why, "xchg_request_free(&XCHG_REQUEST_NULL)");
    if (ok)
        ok = is_error(xchg_test(none, NULL), MPI_ERR_ARG, "flag", why, sizeof why,
                      "xchg_test(XCHG_REQUEST_NULL, NULL)");
    if (ok)
        ok = is_error(xchg_waitall(-1, &none), MPI_ERR_COUNT, "count", why, sizeof why,
                      "xchg_waitall(-1, ...)");
    if (ok)
        ok = is_error(xchg_waitall(2, NULL), MPI_ERR_ARG, "reqs", why, sizeof why,
                      "xchg_waitall(2, NULL)");
    if (ok) {
        rc = xchg_waitall(0, NULL);
        ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_waitall(0, NULL)", rc);
    }
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "what stays an error: %s", why);
    drop(&x);
    MPI_Comm_free(&c);
}

/* ---- every mode refuses the same misuse and tells its algorithm ---- */

/* An active request of any mode: xchg_start refuses it ("already
 * active"), so does xchg_request_free ("is active"); then xchg_wait
 * completes it, and one made by a nonblocking call stays unstartable
 * ("nonblocking call"). */
static int misuse_refused(xchg_request r, int nonblocking, char *why, size_t n)
{
    int ok = is_error(xchg_start(r), MPI_ERR_REQUEST, "already active", why, n,
                      "xchg_start of an active request");
    xchg_request copy = r; /* freed by mistake: the wait below sees NULL */
    if (ok)
        ok = is_error(xchg_request_free(&copy), MPI_ERR_REQUEST, "is active", why, n,
                      "xchg_request_free of an active request");
    int rc = xchg_wait(copy); /* always: the partners wait for this exchange */
    if (ok && rc != MPI_SUCCESS)
        ok = fail(why, n, "xchg_wait after the refusals", rc);
    if (ok && nonblocking)
        ok = is_error(xchg_start(r), MPI_ERR_REQUEST, "nonblocking call", why, n,
                      "xchg_start of a completed nonblocking request");
    return ok;
}

/* xchg_request_algo and xchg_request_neighbor_algo on r. */
static int algos_told(xchg_request r, xchg_algo algo, xchg_neighbor_algo nalgo, char *why,
                      size_t n)
{
    xchg_algo a = xchg_request_algo(r);
    xchg_neighbor_algo na = xchg_request_neighbor_algo(r);
    if (a == algo && na == nalgo)
        return 1;
    snprintf(why, n, "xchg_request_algo %s (wanted %s), xchg_request_neighbor_algo %s "
             "(wanted %s)", xchg_algo_name(a), xchg_algo_name(algo),
             xchg_neighbor_algo_name(na), xchg_neighbor_algo_name(nalgo));
    return 0;
}

/* A persistent request r (init's result rc): started, then the misuse. */
static int persistent_misuse(int rc, xchg_request r, xchg_algo algo, xchg_neighbor_algo nalgo,
                             char *why, size_t n)
{
    if (rc != MPI_SUCCESS)
        return fail(why, n, "init", rc);
    rc = xchg_start(r);
    if (rc != MPI_SUCCESS)
        return fail(why, n, "xchg_start", rc);
    return misuse_refused(r, 0, why, n) && algos_told(r, algo, nalgo, why, n);
}

/* A nonblocking request r (its call's result rc): the misuse, then what
 * it tells once complete. */
static int nonblocking_misuse(int rc, xchg_request r, xchg_algo algo,
                              xchg_neighbor_algo nalgo, char *why, size_t n)
{
    if (rc != MPI_SUCCESS)
        return fail(why, n, "start", rc);
    return misuse_refused(r, 1, why, n) && algos_told(r, algo, nalgo, why, n);
}

static void modes_misuse(ncase *nc)
{
    char why[600] = "";
    xcase x;
    make(&x, 7);
    const xchg_algo per[2] = {XCHG_ALGO_LINEAR, XCHG_ALGO_PAIRWISE}; /* plan, generic */
    for (int i = 0; i < 2; i++) {
        xchg_request r = XCHG_REQUEST_NULL;
        fill(&x, i);
        int rc = a2a_init(per[i], &x, MPI_COMM_WORLD, &r);
            int ok = persistent_misuse(rc, r, per[i], XCHG_NEIGHBOR_INVALID, why, sizeof why);
        int same = same_as_mpi(&x);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Alltoallv", MPI_SUCCESS);
        if (r != XCHG_REQUEST_NULL)
            xchg_request_free(&r);
        CHECK_ALL(ok, "%s persistent: misuse refused, algorithm told: %s",
                  xchg_algo_name(per[i]), why);
    }
    xchg_request r = XCHG_REQUEST_NULL;
    fill(&x, 2);
    int rc = a2a_start_nb(XCHG_ALGO_PAIRWISE, &x, MPI_COMM_WORLD, &r);
    int ok = nonblocking_misuse(rc, r, XCHG_ALGO_PAIRWISE, XCHG_NEIGHBOR_INVALID, why,
                                sizeof why);
    int same = same_as_mpi(&x);
    if (ok && !same)
        ok = fail(why, sizeof why, "result against MPI_Alltoallv", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "pairwise nonblocking: misuse refused, algorithm told: %s", why);
    drop(&x);

    nfill(nc, 20);
    rc = n_init(XCHG_NEIGHBOR_DIRECT, nc, &r);
    ok = persistent_misuse(rc, r, XCHG_ALGO_INVALID, XCHG_NEIGHBOR_DIRECT, why, sizeof why);
    same = nsame_as_mpi(nc);
    if (ok && !same)
        ok = fail(why, sizeof why, "result against MPI_Neighbor_alltoallv", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "neighbour direct persistent: misuse refused, algorithm told: %s", why);
    nfill(nc, 21);
    rc = n_start_nb(XCHG_NEIGHBOR_DIRECT, nc, &r);
    ok = nonblocking_misuse(rc, r, XCHG_ALGO_INVALID, XCHG_NEIGHBOR_DIRECT, why, sizeof why);
    same = nsame_as_mpi(nc);
    if (ok && !same)
        ok = fail(why, sizeof why, "result against MPI_Neighbor_alltoallv", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "neighbour direct nonblocking: misuse refused, algorithm told: %s", why);
    ok = algos_told(XCHG_REQUEST_NULL, XCHG_ALGO_INVALID, XCHG_NEIGHBOR_INVALID, why,
                    sizeof why);
    CHECK_ALL(ok, "XCHG_REQUEST_NULL: algorithm told: %s", why);
}

/* xchg_waitall with each request listed twice: each completes once. */
static void waitall_twice(void)
{
    char why[600] = "";
    xcase p, q;
    make(&p, 8);
    make(&q, 9);
    xchg_request pr = XCHG_REQUEST_NULL, ir = XCHG_REQUEST_NULL;
    int rc = a2a_init(XCHG_ALGO_LINEAR, &p, MPI_COMM_WORLD, &pr), ok = rc == MPI_SUCCESS;
    CHECK_ALL(ok, "xchg_waitall listed twice: init: %s", a2av_err_msg(rc));
    for (int round = 0; round < 2 && ok; round++) {
        fill(&p, round);
        fill(&q, round);
        rc = xchg_start(pr);
        rc |= a2a_start_nb(XCHG_ALGO_PAIRWISE, &q, MPI_COMM_WORLD, &ir);
        xchg_request all[4] = {pr, ir, pr, ir};
        if (rc == MPI_SUCCESS)
            rc = xchg_waitall(4, all);
        ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_waitall", rc);
        if (ok)
            ok = inactive_ok(pr, "completed by xchg_waitall (listed twice)", why, sizeof why);
        int same = same_as_mpi(&p);
        same &= same_as_mpi(&q);
        if (ok && !same)
            ok = fail(why, sizeof why, "a result against MPI_Alltoallv", MPI_SUCCESS);
        if (ir != XCHG_REQUEST_NULL)
            xchg_request_free(&ir);
        CHECK_ALL(ok, "xchg_waitall with a persistent and a nonblocking request each listed "
                  "twice, round %d: %s", round, why);
    }
    if (pr != XCHG_REQUEST_NULL)
        xchg_request_free(&pr);
    drop(&p);
    drop(&q);
}

#if XCHG_HAVE_LARGE_COUNT
/* ---- large counts passed to MPI: rank 0 sends from 3e9 bytes into a
 * sparse mapping (a displacement beyond int), so auto's requests are
 * MPI's own (MPI_Alltoallv_init_c, the nonblocking body's MPI_Ialltoallv_c,
 * MPI_Neighbor_alltoallv_c at each start). 8 bytes per block. ---- */

#define FAR_DISP 3000000000LL

typedef struct {
    char *map, *sendbuf, *recvbuf;
    size_t maplen;
    MPI_Count sc[64], rc[64];
    MPI_Aint sd[64], rd[64];
} far_case;

/* Blocks of 8 B: nsend to send (rank 0's beyond 2 GiB in the mapping),
 * nrecv to receive, contiguous. */
static int far_make(far_case *f, int nsend, int nrecv)
{
    f->map = NULL;
    f->maplen = 0;
    f->recvbuf = malloc(8 * (size_t)P);
    if (rank == 0) {
        f->maplen = (size_t)FAR_DISP + 64 * (size_t)P + 4096;
        void *m = mmap(NULL, f->maplen, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            return 0;
        f->map = f->sendbuf = m;
    } else {
        f->sendbuf = malloc(8 * (size_t)P);
    }
    for (int j = 0; j < nsend; j++) {
        f->sc[j] = 8;
        f->sd[j] = rank == 0 ? FAR_DISP + 64 * (MPI_Aint)j : 8 * (MPI_Aint)j;
    }
    for (int j = 0; j < nrecv; j++) {
        f->rc[j] = 8;
        f->rd[j] = 8 * (MPI_Aint)j;
    }
    return 1;
}

static unsigned char far_byte(int from, int to, int k, int round)
{
    return (unsigned char)(from * 31 + to * 7 + k + round * 13);
}

static void far_fill(far_case *f, int nsend, const int *to, int round)
{
    for (int j = 0; j < nsend; j++)
        for (int k = 0; k < 8; k++)
            f->sendbuf[f->sd[j] + k] = (char)far_byte(rank, to ? to[j] : j, k, round);
    memset(f->recvbuf, 0x5a, 8 * (size_t)P);
}

static int far_right(const far_case *f, int nrecv, const int *from, int round)
{
    for (int j = 0; j < nrecv; j++)
        for (int k = 0; k < 8; k++)
            if ((unsigned char)f->recvbuf[f->rd[j] + k] !=
                far_byte(from ? from[j] : j, rank, k, round))
                return 0;
    return 1;
}

static void far_free(far_case *f)
{
    if (f->map)
        munmap(f->map, f->maplen);
    else
        free(f->sendbuf);
    free(f->recvbuf);
}

static void large_count_states(ncase *nc)
{
    if (P > 64)
        return;
    char why[600] = "";
    far_case f;
    int ok = far_make(&f, P, P);
    CHECK_ALL(ok, "large count: mmap of the far send buffer");
    if (!ok)
        return;
    /* persistent: MPI_Alltoallv_init_c does the work */
    xchg_request r = XCHG_REQUEST_NULL;
    int rc = xchg_alltoallv_init_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd,
                                   MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_alltoallv_init_c", rc);
    if (ok && rank % 2 == 0)
        ok = inactive_ok(r, "never started (MPI's request)", why, sizeof why);
    for (int round = 0; round < 3 && ok; round++) {
        far_fill(&f, P, NULL, round);
        rc = xchg_start(r);
        ok = rc == MPI_SUCCESS ? complete(r, round != 1, why, sizeof why)
                               : fail(why, sizeof why, "xchg_start", rc);
        if (ok && !far_right(&f, P, NULL, round))
            ok = fail(why, sizeof why, "result", MPI_SUCCESS);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    xchg_stats st;
    xchg_get_stats(MPI_COMM_WORLD, &st);
    ok = ok && (st.passed_to_mpi || fail(why, sizeof why, "not passed to MPI", MPI_SUCCESS));
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count persistent (MPI_Alltoallv_init_c): %s", why);

    /* nonblocking: the body passes it to MPI_Ialltoallv_c */
    far_fill(&f, P, NULL, 7);
    rc = xchg_ialltoallv_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd, MPI_BYTE,
                           MPI_COMM_WORLD, &r);
    ok = rc == MPI_SUCCESS ? complete(r, 1, why, sizeof why)
                           : fail(why, sizeof why, "xchg_ialltoallv_c", rc);
    if (ok && !far_right(&f, P, NULL, 7))
        ok = fail(why, sizeof why, "result", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count nonblocking (MPI_Ialltoallv_c): %s", why);
    far_free(&f);

    /* neighbour, persistent and nonblocking: MPI_Neighbor_alltoallv_c */
    ok = far_make(&f, nc->outdeg, nc->indeg);
    CHECK_ALL(ok, "large count neighbour: mmap of the far send buffer");
    if (!ok)
        return;
    rc = xchg_neighbor_alltoallv_init_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc,
                                        f.rd, MPI_BYTE, nc->comm, MPI_INFO_NULL, &r);
    ok = rc == MPI_SUCCESS || fail(why, sizeof why, "xchg_neighbor_alltoallv_init_c", rc);
    if (ok && rank % 2 == 0)
        ok = inactive_ok(r, "never started (neighbour, large count)", why, sizeof why);
    for (int round = 0; round < 2 && ok; round++) {
        far_fill(&f, nc->outdeg, nc->dests, round);
        rc = xchg_start(r);
        ok = rc == MPI_SUCCESS ? complete(r, round == 0, why, sizeof why)
                               : fail(why, sizeof why, "xchg_start", rc);
        if (ok && !far_right(&f, nc->indeg, nc->sources, round))
            ok = fail(why, sizeof why, "result", MPI_SUCCESS);
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    far_fill(&f, nc->outdeg, nc->dests, 3);
    rc = xchg_ineighbor_alltoallv_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd,
                                    MPI_BYTE, nc->comm, &r);
    if (ok)
        ok = rc == MPI_SUCCESS ? complete(r, 1, why, sizeof why)
                               : fail(why, sizeof why, "xchg_ineighbor_alltoallv_c", rc);
    if (ok && !far_right(&f, nc->indeg, nc->sources, 3))
        ok = fail(why, sizeof why, "result", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count neighbour persistent and nonblocking: %s", why);
    far_free(&f);
}
/* The large-count modes refuse the same misuse and tell their algorithm:
 * MPI's persistent request (vendor), and the neighbour requests that run
 * MPI_Neighbor_alltoallv_c (none of xchg's neighbour algorithms). */
static void large_count_misuse(ncase *nc)
{
    if (P > 64)
        return;
    char why[600] = "";
    far_case f;
    int ok = far_make(&f, P, P);
    CHECK_ALL(ok, "large count misuse: mmap of the far send buffer");
    if (!ok)
        return;
    far_fill(&f, P, NULL, 4);
    xchg_request r = XCHG_REQUEST_NULL;
    int rc = xchg_alltoallv_init_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd,
                                   MPI_BYTE, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    ok = persistent_misuse(rc, r, XCHG_ALGO_VENDOR, XCHG_NEIGHBOR_INVALID, why, sizeof why);
    if (ok && !far_right(&f, P, NULL, 4))
        ok = fail(why, sizeof why, "result", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count persistent (MPI_Alltoallv_init_c): misuse refused, algorithm "
              "told: %s", why);
    far_free(&f);

    ok = far_make(&f, nc->outdeg, nc->indeg);
    CHECK_ALL(ok, "large count neighbour misuse: mmap of the far send buffer");
    if (!ok)
        return;
    far_fill(&f, nc->outdeg, nc->dests, 5);
    rc = xchg_neighbor_alltoallv_init_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd,
                                        MPI_BYTE, nc->comm, MPI_INFO_NULL, &r);
    ok = persistent_misuse(rc, r, XCHG_ALGO_INVALID, XCHG_NEIGHBOR_INVALID, why, sizeof why);
    if (ok && !far_right(&f, nc->indeg, nc->sources, 5))
        ok = fail(why, sizeof why, "result", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count neighbour persistent: misuse refused, algorithm told: %s", why);
    far_fill(&f, nc->outdeg, nc->dests, 6);
    rc = xchg_ineighbor_alltoallv_c(f.sendbuf, f.sc, f.sd, MPI_BYTE, f.recvbuf, f.rc, f.rd,
                                    MPI_BYTE, nc->comm, &r);
    ok = nonblocking_misuse(rc, r, XCHG_ALGO_INVALID, XCHG_NEIGHBOR_INVALID, why, sizeof why);
    if (ok && !far_right(&f, nc->indeg, nc->sources, 6))
        ok = fail(why, sizeof why, "result", MPI_SUCCESS);
    if (r != XCHG_REQUEST_NULL)
        xchg_request_free(&r);
    CHECK_ALL(ok, "large count neighbour nonblocking: misuse refused, algorithm told: %s", why);
    far_free(&f);
}

/* xchg_ialltoallv_c on values that fit: its request runs the agreement
 * whether they fit, then the int exchange. Auto completed by test (then
 * the inactive checks), pairwise through the misuse. */
static void fit_nonblocking_c(void)
{
    char why[600] = "";
    xcase x;
    make(&x, 10);
    MPI_Count *cnt = malloc(sizeof(MPI_Count) * 2 * (size_t)P);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * 2 * (size_t)P);
    for (int j = 0; j < P; j++) {
        cnt[j] = x.sc[j];
        cnt[P + j] = x.rc[j];
        dsp[j] = x.sd[j];
        dsp[P + j] = x.rd[j];
    }
    for (int round = 0; round < 2; round++) {
        xchg_request r = XCHG_REQUEST_NULL;
        fill(&x, round);
        int rc, ok;
        if (round == 0) {
            rc = xchg_ialltoallv_c(x.sb, cnt, dsp, MPI_INT, x.rb, cnt + P, dsp + P, MPI_INT,
                                   MPI_COMM_WORLD, &r);
            ok = rc == MPI_SUCCESS ? complete(r, 1, why, sizeof why)
                                   : fail(why, sizeof why, "xchg_ialltoallv_c", rc);
        } else {
            rc = xchg_ialltoallv_algo_c(XCHG_ALGO_PAIRWISE, x.sb, cnt, dsp, MPI_INT, x.rb,
                                        cnt + P, dsp + P, MPI_INT, MPI_COMM_WORLD, &r);
            ok = nonblocking_misuse(rc, r, XCHG_ALGO_PAIRWISE, XCHG_NEIGHBOR_INVALID, why,
                                    sizeof why);
        }
        int same = same_as_mpi(&x);
        if (ok && !same)
            ok = fail(why, sizeof why, "result against MPI_Alltoallv", MPI_SUCCESS);
        if (r != XCHG_REQUEST_NULL)
            xchg_request_free(&r);
        CHECK_ALL(ok, "xchg_ialltoallv_c on values that fit (%s): %s",
                  round == 0 ? "auto, test until complete, then wait"
                             : "pairwise, misuse refused, algorithm told", why);
    }
    free(cnt);
    free(dsp);
    drop(&x);
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; i <= xchg_algo_count(); i++) {
        xchg_algo a = i < xchg_algo_count() ? xchg_algo_at(i) : XCHG_ALGO_AUTO;
        persistent_states(a, xchg_algo_name(a), comm);
        nonblocking_states(a, xchg_algo_name(a), comm);
    }
    ncase nc;
    nmake(&nc);
    for (int i = 0; i <= xchg_neighbor_algo_count(); i++)
        neighbor_states(i < xchg_neighbor_algo_count() ? xchg_neighbor_algo_at(i)
                                                       : XCHG_NEIGHBOR_AUTO, &nc);
    waitall_mix(&nc);
    errors();
    modes_misuse(&nc);
    waitall_twice();
#if XCHG_HAVE_LARGE_COUNT
    large_count_states(&nc);
    large_count_misuse(&nc);
    fit_nonblocking_c();
#endif
    MPI_Comm_free(&nc.comm);
    MPI_Comm_free(&comm);
    if (rank == 0)
        printf("test_request_states on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    (void)argc;
    (void)argv;
    return nfail ? 1 : 0;
}
