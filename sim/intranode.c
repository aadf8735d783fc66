/*
 * intranode.c - the intra-node step of a locality-aware exchange two ways:
 * point-to-point messages (what node_pairs, multileader and the _loc
 * sparse exchanges do) against an MPI-3 shared-memory window (issue 26:
 * "consider MPI_Win_allocate_shared for the intra-node steps where it
 * beats point-to-point, and say what you measured").
 *
 * Every rank of one node has one piece of M bytes for each node-mate (in
 * node_pairs' step 1, the blocks of a node-mate and of the nodes it
 * serves; in step 3, the blocks it received for a node-mate) and needs
 * theirs:
 *   p2p  MPI_Irecv from and MPI_Isend to each node-mate, MPI_Waitall;
 *   shm  each rank writes its pieces into its own part of a shared window
 *        (allocated once, MPI_Win_lock_all once: what a persistent
 *        variant would keep), MPI_Win_sync + MPI_Barrier, each reads its
 *        piece from every node-mate's part, MPI_Barrier (no part is
 *        overwritten before every reader is done).
 * Both copy each piece once on each side (packing and unpacking; in the
 * simulated build charged by libxchg's own xchg_charge_copies: 10 ns +
 * 5 GB/s unless XCHG_SIM_COPY_NS / _GBPS say otherwise,
 * src/core/simcost.c), so the figures differ by what moves the data and
 * what synchronises. Times: the slowest rank's, median of ITERS calls
 * after WARMUP, microseconds.
 *
 *   sim/run -np 64 --rpn 64 --preset hpc200 build/smpi-4.1/sim/intranode [M ...]
 *   mpicc -O2 sim/intranode.c -o /tmp/intranode && mpiexec -n 8 /tmp/intranode [M ...]
 *
 * All ranks must share memory (one node; under SMPI, one simulated node:
 * --rpn at least -np). Default sizes: 16 256 4096 65536 bytes per piece.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overflow" /* MPICH's MPI_STATUSES_IGNORE */
#endif

#ifdef XCHG_SIM_INTRANODE /* the simulated build: libxchg's own charge for copies */
#include "core.h"
static void charge(size_t calls, size_t bytes) { xchg_charge_copies(calls, bytes); }
#else
static void charge(size_t calls, size_t bytes) { (void)calls, (void)bytes; }
#endif

enum { WARMUP = 2, ITERS = 9 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pieces: out[j] for node-mate j, in[j] from node-mate j (M bytes each);
 * the own piece is not moved. */
static void pack(char *dst, const char *src, size_t M, int L, int me)
{
    for (int j = 0; j < L; j++)
        if (j != me)
            memcpy(dst + (size_t)j * M, src + (size_t)j * M, M);
    charge((size_t)L - 1, ((size_t)L - 1) * M);
}

static void p2p(MPI_Comm node, const char *src, char *out, char *in, size_t M, int L, int me,
                MPI_Request *req)
{
    int n = 0;
    for (int j = 0; j < L; j++)
        if (j != me)
            MPI_Irecv(in + (size_t)j * M, (int)M, MPI_BYTE, j, 7, node, &req[n++]);
    pack(out, src, M, L, me);
    for (int j = 0; j < L; j++)
        if (j != me)
            MPI_Isend(out + (size_t)j * M, (int)M, MPI_BYTE, j, 7, node, &req[n++]);
    MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
    charge((size_t)L - 1, ((size_t)L - 1) * M); /* the receiver uses each piece once */
}

static void shm(MPI_Comm node, MPI_Win win, char *const *part, const char *src, char *in,
                size_t M, int L, int me)
{
    pack(part[me], src, M, L, me); /* into this rank's own part of the window */
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    for (int j = 0; j < L; j++)
        if (j != me)
            memcpy(in + (size_t)j * M, part[j] + (size_t)me * M, M);
    charge((size_t)L - 1, ((size_t)L - 1) * M);
    MPI_Barrier(node); /* every reader done before the parts are written again */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, L, bad = 0;
    MPI_Comm node;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &L);
    MPI_Comm_dup(MPI_COMM_WORLD, &node); /* all ranks: one node (see above) */
    size_t sizes[16] = {16, 256, 4096, 65536};
    int ns = 4;
    if (argc > 1)
        for (ns = 0; ns < argc - 1 && ns < 16; ns++)
            sizes[ns] = (size_t)strtoul(argv[ns + 1], NULL, 10);
    if (me == 0)
        printf("# intranode: %d ranks of one node, each a piece of M bytes for every other;"
               " slowest rank, median of %d, us\n# %10s %10s %10s %10s\n", L, ITERS, "M",
               "p2p", "shm", "p2p/shm");
    for (int k = 0; k < ns; k++) {
        size_t M = sizes[k] ? sizes[k] : 1;
        char *src = malloc(M * (size_t)L), *out = malloc(M * (size_t)L);
        char *in = malloc(M * (size_t)L);
        MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)L);
        for (size_t i = 0; i < M * (size_t)L; i++)
            src[i] = (char)(me * 31 + i / M);
        /* equal parts on every rank: SMPI's shared windows need that */
        char *base;
        MPI_Win win;
        MPI_Win_allocate_shared((MPI_Aint)(M * (size_t)L), 1, MPI_INFO_NULL, node, &base, &win);
        /* the parts are contiguous (MPI_Win_allocate_shared's default),
         * so rank j's starts j parts after rank 0's; SimGrid 4.1's
         * MPI_Win_shared_query returns rank 0's base for every rank */
        char **part = malloc(sizeof(char *) * (size_t)L), *first;
        MPI_Aint sz;
        int du;
        MPI_Win_shared_query(win, 0, &sz, &du, &first);
        for (int j = 0; j < L; j++)
            part[j] = first + (size_t)j * M * (size_t)L;
        bad |= part[me] != base ? 4 : 0;
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        double t[2][ITERS];
        for (int way = 0; way < 2; way++)
            for (int it = -WARMUP; it < ITERS; it++) {
                memset(in, 0, M * (size_t)L);
                MPI_Barrier(node);
                double t0 = MPI_Wtime();
                if (way == 0)
                    p2p(node, src, out, in, M, L, me, req);
                else
                    shm(node, win, part, src, in, M, L, me);
                double dt = MPI_Wtime() - t0, mx;
                MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, node);
                if (it >= 0)
                    t[way][it] = mx;
                for (int j = 0; j < L; j++) /* piece from j: j's bytes for me */
                    if (j != me)
                        for (size_t i = 0; i < M; i += (M + 7) / 8)
                            bad |= (in[(size_t)j * M + i] != (char)(j * 31 + me)) << way;
            }
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
        qsort(t[0], ITERS, sizeof(double), cmp_double);
        qsort(t[1], ITERS, sizeof(double), cmp_double);
        if (me == 0)
            printf("  %10zu %10.2f %10.2f %10.2f\n", M, t[0][ITERS / 2] * 1e6,
                   t[1][ITERS / 2] * 1e6, t[0][ITERS / 2] / t[1][ITERS / 2]);
        free(part), free(src), free(out), free(in), free(req);
    }
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_BOR, node);
    if (me == 0 && any)
        printf("intranode: WRONG pieces received by%s%s%s\n", any & 1 ? " p2p" : "",
               any & 2 ? " shm" : "", any & 4 ? " (the window's parts are not contiguous)" : "");
    MPI_Comm_free(&node);
    MPI_Finalize();
    return any;
}
