/*
 * test_sparse_tuning.c - sparse auto follows a tuning table's `sparse`
 * rules (XCHG_TUNING_FILE; docs/tuning.md) only where every rank read the
 * same table when the communicator was first used, as alltoallv's and the
 * neighbour exchange's auto do.
 *
 * The pattern: rank r sends to r+1 and r+2 (mod P, never itself), so each
 * rank sends m = min(2, P-1) remote messages and the census (pex's, the
 * choice without a table at 1 to 8 ranks) sees m per rank. Two calls on a
 * new communicator per case (the first call has no census yet):
 *   no table                         -> the built-in choice, everywhere;
 *   sparse 1 P 0 63 rsx (any census) -> rsx from the first call;
 *   sparse 1 P 0 1000 nbx            -> nbx;
 *   sparse 1 P m m rsx               -> the built-in choice, then rsx (the
 *                                       rule needs the first call's census);
 *   sparse 1 P m+1 m+5 rsx           -> the built-in choice twice;
 *   a rule for another P             -> the built-in choice;
 *   a table that rank 0 lacks        -> ignored on every rank;
 *   rules that differ by rank        -> ignored alike.
 * Every call's messages are checked against the pattern (sources, counts
 * and values computed here, an independent reference).
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static int rank, P, npass, nfail;

static int value_of(int from, int to, int call, int i) { return from * 10000 + to * 100 + call * 10 + i; }

/* Rank r's destinations (ascending, distinct, not r); returns how many. */
static int dests_of(int r, int dests[2])
{
    int n = 0;
    for (int d = 1; d <= 2 && d < P; d++)
        dests[n++] = (r + d) % P;
    if (n == 2 && dests[0] > dests[1]) {
        int t = dests[0];
        dests[0] = dests[1];
        dests[1] = t;
    }
    return n;
}

static int count_of(int from, int to) { return 1 + (from + to) % 3; }

/* One exchange on comm; checks what arrived; returns the algorithm that ran. */
static xchg_sparse_algo exchange(MPI_Comm comm, const char *what, int call)
{
    int dests[2], counts[2], displs[2], sbuf[8];
    int n = dests_of(rank, dests), tot = 0;
    for (int k = 0; k < n; k++) {
        counts[k] = count_of(rank, dests[k]);
        displs[k] = tot;
        for (int i = 0; i < counts[k]; i++)
            sbuf[tot + i] = value_of(rank, dests[k], call, i);
        tot += counts[k];
    }
    xchg_sparse_result res;
    int err = xchg_sparse_exchange_result(n, dests, sbuf, counts, displs, MPI_INT, &res, comm);
    /* expected sources: every s with rank among its destinations, ascending */
    int bad = err != MPI_SUCCESS, got = 0;
    for (int s = 0; s < P && !bad; s++) {
        int sd[2], sn = dests_of(s, sd), to_me = 0;
        for (int k = 0; k < sn; k++)
            to_me |= sd[k] == rank;
        if (!to_me)
            continue;
        bad |= got >= res.nsources || res.sources[got] != s ||
               res.counts[got] != count_of(s, rank);
        for (int i = 0; !bad && i < res.counts[got]; i++)
            bad |= ((const int *)res.recvbuf)[res.displs[got] + i] != value_of(s, rank, call, i);
        got++;
    }
    bad |= err == MPI_SUCCESS && got != res.nsources;
    CHECK_ALL(!bad, "%s, call %d: rc %d, result %s", what, call, err, bad ? "wrong" : "right");
    if (err == MPI_SUCCESS)
        xchg_sparse_result_free(&res);
    xchg_stats st;
    int ran = XCHG_SPARSE_INVALID;
    if (xchg_get_stats(comm, &st) == MPI_SUCCESS)
        ran = st.sparse_algo;
    return (xchg_sparse_algo)ran;
}

/* Two calls on a new communicator under table `path` (NULL: none); each
 * must run want[call] (INVALID: the same everywhere, whatever it is). */
static xchg_sparse_algo run_case(const char *what, const char *path, xchg_sparse_algo w0,
                                 xchg_sparse_algo w1)
{
    if (path)
        setenv("XCHG_TUNING_FILE", path, 1);
    else
        unsetenv("XCHG_TUNING_FILE");
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    xchg_sparse_algo want[2] = {w0, w1}, first = XCHG_SPARSE_INVALID;
    for (int call = 0; call < 2; call++) {
        xchg_sparse_algo ran = exchange(comm, what, call);
        if (call == 0)
            first = ran;
        int ok = check_same_everywhere((int)ran, MPI_COMM_WORLD) &&
                 (want[call] == XCHG_SPARSE_INVALID || ran == want[call]);
        CHECK_ALL(ok, "%s, call %d: auto ran %s, expected %s", what, call,
                  xchg_sparse_algo_name(ran),
                  want[call] == XCHG_SPARSE_INVALID ? "the same on every rank"
                                                     : xchg_sparse_algo_name(want[call]));
    }
    MPI_Comm_free(&comm);
    return first;
}

/* This rank's table file `tag` with the given text; its path into path. */
static void write_table(char *path, size_t len, const char *tag, const char *text)
{
    snprintf(path, len, "/tmp/xchg-test-sparse-table-%d-%d-%s", (int)getpid(), rank, tag);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    unsetenv("XCHG_SPARSE_ALGO");
    const int m = P - 1 < 2 ? P - 1 : 2;
    const xchg_sparse_algo I = XCHG_SPARSE_INVALID, RSX = XCHG_SPARSE_RSX;

    xchg_sparse_algo none = run_case("no table", NULL, I, I);

    char any[96], nbx[96], exact[96], above[96], other[96], text[160];
    snprintf(text, sizeof text, "# test\nsparse 1 %d 0 63 rsx\n", P);
    write_table(any, sizeof any, "any", text);
    snprintf(text, sizeof text, "sparse 1 %d 0 1000 nbx\n", P);
    write_table(nbx, sizeof nbx, "nbx", text);
    snprintf(text, sizeof text, "sparse %d %d %d %d rsx\n", P + 1, P + 5, 0, 63);
    write_table(other, sizeof other, "other", text);
    snprintf(text, sizeof text, "sparse 1 %d %d %d rsx\n", P, m, m);
    write_table(exact, sizeof exact, "exact", text);
    snprintf(text, sizeof text, "sparse 1 %d %d %d rsx\n", P, m + 1, m + 5);
    write_table(above, sizeof above, "above", text);

    run_case("sparse 1 P 0 63 rsx", any, RSX, RSX);
    run_case("sparse 1 P 0 1000 nbx", nbx, XCHG_SPARSE_NBX, XCHG_SPARSE_NBX);
    /* the built-in choice here carries a census (pex; on one node
     * pex_loc_shm, or pex_loc where MPI refused its window) */
    int census = none == XCHG_SPARSE_PEX || none == XCHG_SPARSE_PEX_LOC_SHM ||
                 none == XCHG_SPARSE_PEX_LOC;
    run_case("sparse 1 P m m rsx", exact, none, census ? RSX : I);
    run_case("sparse 1 P m+1 m+5 rsx", above, none, none);
    run_case("a sparse rule for another P", other, none, none);
    run_case("a table rank 0 lacks", rank == 0 ? "/nonexistent/xchg-table" : any, none, none);
    if (P > 1)
        run_case("sparse rules that differ by rank", rank == 0 ? nbx : any, none, none);
    unsetenv("XCHG_TUNING_FILE");
    remove(any), remove(nbx), remove(exact), remove(above), remove(other);

    int tot[2] = {npass, nfail};
    MPI_Allreduce(MPI_IN_PLACE, tot + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_sparse_tuning on %d ranks: %d passed, %d failed\n", P, tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
