/*
 * test_neighbor_tuning.c - the neighbour exchange's auto takes a tuning
 * table's model constants (XCHG_TUNING_FILE: alpha, beta, copy, overhead)
 * only where every rank read the same table, as alltoallv's auto does.
 *
 * The graph: every rank sends to every rank three times (1-3 ints a block), run
 * with XCHG_RANKS_PER_NODE=2, so that from 3 ranks on there are remote
 * nodes and locality aggregates. On a new graph communicator per case:
 *   overhead 1e-3 s per message  -> locality_shm (it posts fewest
 *                                   messages; locality where no node
 *                                   window is made);
 *   beta 1e-3 s per byte, overhead 1e-12 -> direct (locality adds block
 *                                   headers to the link's bytes);
 *   a table that rank 0 lacks     -> ignored on every rank: the choice
 *                                   without a table, the same everywhere
 *                                   (the others read the table that turns
 *                                   that choice to the other algorithm);
 *   neighbor 1 P ALGO             -> ALGO, whatever the model says (the
 *                                   rule over overhead 1e-3's choice);
 *   a neighbor rule for another P -> the model's choice;
 *   rules that differ by rank     -> ignored alike: the choice without.
 * Blocking calls and persistent requests (auto's second choice), each
 * result checked against the blocks computed from the graph (sender,
 * receiver and position: an independent reference).
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread" /* Open MPI's MPI_UNWEIGHTED */
#endif

static int rank, P, npass, nfail;

static int count_of(int from, int to) { return 1 + (from + 2 * to) % 3; }
static int value_of(int from, int to, int copy, int i)
{
    return from * 100000 + to * 100 + copy * 10 + i;
}

/* Runs auto on a new complete graph (every rank three times), blocking or
 * persistent; checks the result; returns the algorithm that ran. */
static xchg_neighbor_algo run_case(const char *what, int persistent)
{
    const int n = 3 * P;
    int *nb = malloc(sizeof(int) * (size_t)n);
    int *sc = malloc(sizeof(int) * (size_t)n), *sd = malloc(sizeof(int) * (size_t)n);
    int *rc = malloc(sizeof(int) * (size_t)n), *rd = malloc(sizeof(int) * (size_t)n);
    int stot = 0, rtot = 0;
    for (int k = 0; k < n; k++) {
        nb[k] = k % P;
        sc[k] = count_of(rank, nb[k]);
        sd[k] = stot;
        stot += sc[k];
        rc[k] = count_of(nb[k], rank);
        rd[k] = rtot;
        rtot += rc[k];
    }
    int *sbuf = malloc(sizeof(int) * (size_t)stot), *rbuf = malloc(sizeof(int) * (size_t)rtot);
    for (int k = 0; k < n; k++)
        for (int i = 0; i < sc[k]; i++)
            sbuf[sd[k] + i] = value_of(rank, nb[k], k / P, i);
    memset(rbuf, 0xEE, sizeof(int) * (size_t)rtot);
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, nb, MPI_UNWEIGHTED, n, nb, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    xchg_neighbor_algo ran = XCHG_NEIGHBOR_INVALID;
    int err;
    if (persistent) {
        xchg_request q = XCHG_REQUEST_NULL;
        err = xchg_neighbor_alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, g,
                                           MPI_INFO_NULL, &q);
        if (err == MPI_SUCCESS)
            err = xchg_start(q);
        if (err == MPI_SUCCESS)
            err = xchg_wait(q);
        ran = xchg_request_neighbor_algo(q);
        xchg_request_free(&q);
    } else {
        err = xchg_neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, g);
        xchg_stats st;
        if (xchg_get_stats(g, &st) == MPI_SUCCESS)
            ran = (xchg_neighbor_algo)st.neighbor_algo;
    }
    /* the k-th block from a neighbour is its copy k / P of this rank's */
    int bad = err != MPI_SUCCESS;
    for (int k = 0; k < n && !bad; k++)
        for (int i = 0; i < rc[k]; i++)
            bad |= rbuf[rd[k] + i] != value_of(nb[k], rank, k / P, i);
    CHECK_ALL(!bad, "%s%s: rc %d, result %s", what, persistent ? " (persistent)" : "", err,
              bad ? "wrong" : "right");
    MPI_Comm_free(&g);
    free(nb), free(sc), free(sd), free(rc), free(rd), free(sbuf), free(rbuf);
    return ran;
}

/* This rank's table file `tag` with the given text; its path into path. */
static void write_table(char *path, size_t len, const char *tag, const char *text)
{
    snprintf(path, len, "/tmp/xchg-test-nbr-table-%d-%d-%s", (int)getpid(), rank, tag);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void expect(const char *what, xchg_neighbor_algo want, int persistent)
{
    xchg_neighbor_algo ran = run_case(what, persistent);
    CHECK_ALL(check_same_everywhere((int)ran, MPI_COMM_WORLD) && ran == want,
              "%s%s: auto ran %s, expected %s", what, persistent ? " (persistent)" : "",
              xchg_neighbor_algo_name(ran), xchg_neighbor_algo_name(want));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    const char *rpn = getenv("XCHG_RANKS_PER_NODE");
    const int per_node = rpn ? atoi(rpn) : 0;
    const int nodes = per_node > 0 ? (P + per_node - 1) / per_node : 1;
    const int has_locality = xchg_neighbor_algo_from_name("locality") == XCHG_NEIGHBOR_LOCALITY;

    char messages[96], bytes[96];
    write_table(messages, sizeof messages, "o",
                "# test: messages cost the most\noverhead 1e-3\n");
    write_table(bytes, sizeof bytes, "b",
                "# test: bytes cost the most\noverhead 1e-12\nbeta 1e-3\n");

    unsetenv("XCHG_TUNING_FILE");
    xchg_neighbor_algo none = run_case("no table", 0);
    CHECK_ALL(check_same_everywhere((int)none, MPI_COMM_WORLD),
              "no table: the same choice everywhere");
    xchg_neighbor_algo none_p = run_case("no table", 1);
    CHECK_ALL(check_same_everywhere((int)none_p, MPI_COMM_WORLD),
              "no table (persistent): the same choice everywhere");

    /* messages cost the most: locality_shm where its node window is made
     * (no message inside a node, one aggregate per other node; not on one
     * rank, nor under Open MPI told to leave out osc sm); else locality
     * across nodes; else (one node, or no locality in this build) direct */
    const char *osc = getenv("OMPI_MCA_osc");
    const int windows = P > 1 && (!osc || strstr(osc, "sm")) &&
                        xchg_neighbor_algo_from_name("locality_shm") == XCHG_NEIGHBOR_LOCALITY_SHM;
    /* persistent requests never get locality_shm from auto (its polled
     * wait measured slow): locality across nodes, else direct */
    const xchg_neighbor_algo locp = nodes > 1 && has_locality ? XCHG_NEIGHBOR_LOCALITY
                                                              : XCHG_NEIGHBOR_DIRECT;
    const xchg_neighbor_algo loc = windows ? XCHG_NEIGHBOR_LOCALITY_SHM : locp;
    setenv("XCHG_TUNING_FILE", messages, 1);
    expect("overhead 1e-3", loc, 0);
    expect("overhead 1e-3", locp, 1);
    setenv("XCHG_TUNING_FILE", bytes, 1);
    expect("beta 1e-3", XCHG_NEIGHBOR_DIRECT, 0);
    expect("beta 1e-3", XCHG_NEIGHBOR_DIRECT, 1);

    /* rank 0 lacks the table the others read, one that (read by all)
     * turns the choice without a table to the other algorithm: ignored
     * everywhere */
    const char *lacks = "/nonexistent/xchg-table";
    setenv("XCHG_TUNING_FILE",
           rank == 0 ? lacks : none == XCHG_NEIGHBOR_DIRECT ? messages : bytes, 1);
    expect("a table rank 0 lacks", none, 0);
    setenv("XCHG_TUNING_FILE",
           rank == 0 ? lacks : none_p == XCHG_NEIGHBOR_DIRECT ? messages : bytes, 1);
    expect("a table rank 0 lacks", none_p, 1);

    /* neighbor rules: the rule where it covers P, over the model */
    char rule_loc[96], rule_dir[96], rule_other[96], text[160];
    snprintf(text, sizeof text, "overhead 1e-3\nneighbor 1 %d locality\n", P);
    write_table(rule_loc, sizeof rule_loc, "rl", text);
    snprintf(text, sizeof text, "overhead 1e-3\nneighbor 1 %d direct\n", P);
    write_table(rule_dir, sizeof rule_dir, "rd", text);
    snprintf(text, sizeof text, "overhead 1e-3\nneighbor %d %d direct\n", P + 1, P + 2);
    write_table(rule_other, sizeof rule_other, "ro", text);
    if (has_locality) {
        setenv("XCHG_TUNING_FILE", rule_loc, 1);
        expect("neighbor rule: locality", XCHG_NEIGHBOR_LOCALITY, 0);
        expect("neighbor rule: locality", XCHG_NEIGHBOR_LOCALITY, 1);
    }
    setenv("XCHG_TUNING_FILE", rule_dir, 1);
    expect("neighbor rule: direct, over overhead 1e-3", XCHG_NEIGHBOR_DIRECT, 0);
    expect("neighbor rule: direct, over overhead 1e-3", XCHG_NEIGHBOR_DIRECT, 1);
    setenv("XCHG_TUNING_FILE", rule_other, 1);
    expect("a neighbor rule for another P", loc, 0);
    if (P > 1 && has_locality) {
        setenv("XCHG_TUNING_FILE", rank == 0 ? rule_dir : rule_loc, 1);
        expect("neighbor rules that differ by rank", none, 0);
    }
    unsetenv("XCHG_TUNING_FILE");
    remove(messages);
    remove(bytes);
    remove(rule_loc);
    remove(rule_dir);
    remove(rule_other);

    int tot[2] = {npass, nfail};
    MPI_Allreduce(MPI_IN_PLACE, tot + 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_neighbor_tuning on %d ranks: %d passed, %d failed\n", P, tot[0], tot[1]);
    MPI_Finalize();
    return tot[1] ? 1 : 0;
}
