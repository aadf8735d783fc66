/*
 * local_cost.c - native costs of libxchg's local work, for the simulated
 * build's charges (src/core/calibrated.h). Run by sim/calibrate/run on
 * one rank of a real MPI, linked with libxchg's static library (the real
 * argument checks and model; node_pairs_shm's block-size check sum is
 * static there and repeated here).
 *
 * Each figure is the smallest of 15 repetitions' means (a CPU cost: the
 * smallest is the one a busy machine disturbed least), printed as
 *   NAME VALUE   # what
 * lines that sim/calibrate/run reads.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"
#include "select_internal.h"

enum { REPS = 15, P = 1024 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile uint64_t sink; /* keeps the measured work */

/* node_pairs_shm's block-size check sum keys: odd, pseudo-random */
static uint64_t key[16];
/* ns per unit of f's work (n units a run), smallest over REPS runs */
static double best_ns(double (*f)(int), int n, int inner)
{
    double best = 1e30;
    for (int r = 0; r < REPS; r++) {
        double t0 = now(), s = 0;
        for (int k = 0; k < inner; k++)
            s += f(k);
        double t = (now() - t0) / ((double)n * inner) * 1e9;
        sink += (uint64_t)s;
        if (t < best)
            best = t;
    }
    return best;
}

static int counts[P], displs[P];
static char sendbuf[P * 16], recvbuf[P * 16];

static double run_check(int k)
{
    (void)k;
    return xchg_check_alltoallv_arrays(sendbuf, counts, displs, MPI_BYTE, recvbuf, counts,
                                       displs, MPI_BYTE, P);
}

/* a loop over peers as the algorithms make it: read, skip empty, sum */
static double run_peer(int k)
{
    int64_t sum = 0, n = 0;
    for (int j = 0; j < P; j++) {
        int c = counts[(j + k) & (P - 1)];
        if (c) {
            sum += (int64_t)c * 8;
            n++;
        }
    }
    return (double)(sum + n);
}

/* node_pairs_shm's receiver side of its block-size check: a node's
 * expected bytes and their keyed sum (its relay's side is the same step
 * over 32-bit sizes) */
static double run_size_sum(int k)
{
    uint64_t sum = 0;
    int64_t want = 0;
    for (int j = 0; j < P; j++) {
        int64_t v = (int64_t)counts[(j + k) & (P - 1)] * 8;
        want += v;
        sum += key[j & 15] * (uint64_t)v;
    }
    return (double)((sum & 1) + (uint64_t)want);
}

static xchg_model_params params;
static xchg_pattern_stats stats;

/* one ranking: every registered candidate's model */
static double run_model(int k)
{
    const xchg_algo_info *cand[64];
    int n = xchg_registry_candidates(cand, 64);
    double s = 0;
    for (int i = 0; i < n; i++)
        s += xchg_model_time(cand[i]->id, &params, &stats);
    return s + k;
}

static char *big_src, *big_dst;
enum { BIG = 64 << 20, BLOCK = 64 << 10, SMALL = 16 };

/* blocks out of cache: ns per byte */
static double run_copy_big(int k)
{
    size_t off = ((size_t)k * BLOCK) % (BIG - BLOCK);
    memcpy(big_dst + off, big_src + off, BLOCK);
    return big_dst[off];
}

/* one 16 B copy from cache: the per-call cost */
static double run_copy_small(int k)
{
    size_t off = ((size_t)k * 64) % (1 << 16);
    memcpy(big_dst + off, big_src + off, SMALL);
    return big_dst[off];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    for (int j = 0; j < P; j++) {
        counts[j] = (j * 7) % 5 ? 16 : 0; /* some empty blocks */
        displs[j] = 16 * j;
    }
    long long f[XCHG_AF_COUNT] = {0};
    f[XCHG_AF_MAX_BLOCK] = 16, f[XCHG_AF_MAX_SEND] = f[XCHG_AF_MAX_RECV] = 16 * P;
    f[XCHG_AF_MAX_SEND_NNZ] = f[XCHG_AF_MAX_RECV_NNZ] = P - 1;
    f[XCHG_AF_MAX_OFF_SEND] = f[XCHG_AF_MAX_OFF_RECV] = 16 * (P - 16);
    f[XCHG_AF_MAX_POSTS] = 2 * (P - 1), f[XCHG_AF_MAX_NODE] = 16;
    f[XCHG_AF_SUM_BYTES] = 16LL * P * (P - 1), f[XCHG_AF_SUM_OFF] = 16LL * P * (P - 16);
    xchg_pattern_stats_from(&stats, f, P);
    xchg_model_defaults(&params);
    for (int j = 0; j < 16; j++)
        key[j] = (0x9e3779b97f4a7c15ull * (uint64_t)(j + 1)) | 1;
    big_src = malloc(BIG);
    big_dst = malloc(BIG);
    memset(big_src, 1, BIG);
    memset(big_dst, 2, BIG);

    printf("CHECK_PEER_NS %.2f   # xchg_check_alltoallv_arrays per peer and side, P=%d\n",
           best_ns(run_check, 2 * P, 20), P);
    printf("PEER_NS %.2f   # a loop step over peers (read, skip empty, sum), P=%d\n",
           best_ns(run_peer, P, 200), P);
    printf("SIZE_SUM_NS %.2f   # node_pairs_shm's check-sum step of a block size\n",
           best_ns(run_size_sum, P, 200));
    printf("MODEL_NS %.0f   # one ranking of auto's candidates by the model, P=%d\n",
           best_ns(run_model, 1, 20), P);
    double per_byte = best_ns(run_copy_big, BLOCK, (BIG / BLOCK) * 4);
    printf("COPY_CORE_GBPS %.2f   # memcpy of %d KiB blocks from a %d MiB buffer, one core\n",
           1.0 / per_byte, BLOCK >> 10, BIG >> 20);
    printf("COPY_CALL_NS %.2f   # memcpy of %d B in cache\n", best_ns(run_copy_small, 1, 100000),
           SMALL);
    free(big_src);
    free(big_dst);
    MPI_Finalize();
    return (int)(sink & 0);
}
