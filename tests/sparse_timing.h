/*
 * sparse_timing.h - timing one sparse exchange fairly (header only, for the
 * benchmark's dsde mode and throwaway measurements).
 *
 * What "fair" means here:
 *   - Partners and send data are made before the clock starts (the pattern
 *     is not part of the exchange).
 *   - An MPI_Barrier before each timed call, so all ranks start together;
 *     each rank times from the barrier's exit to the return of its call.
 *   - The time of one exchange is the maximum over ranks (an exchange is
 *     done when the last rank is done). Each rank keeps its per-iteration
 *     times and one MPI_Reduce(MAX) at the end combines them, so no extra
 *     synchronization sits inside the loop.
 *   - The received data is consumed inside the timed region the same way
 *     for everyone: the callback copies it to a caller buffer (what an
 *     application does), the packed result is freed. The baseline
 *     (MPI_Alltoall of counts + MPI_Alltoallv) allocates and receives into
 *     its own buffer, also inside the region.
 *   - Warm-up calls first: the first call on a communicator duplicates it,
 *     and rma creates its window then.
 * Report the median (and mean) over iterations of the per-iteration max.
 */
#ifndef XCHG_SPARSE_TIMING_H
#define XCHG_SPARSE_TIMING_H

#include "xchg.h"

#include <stdlib.h>
#include <string.h>

/* Destinations for iteration `it`: each other rank with probability
 * `density`, decided by a hash every rank can evaluate (new partners
 * every iteration, the same for a given seed). Returns how many. */
static inline int xchg_dsde_pattern(int P, int rank, int it, double density,
                                    unsigned seed, int *dests)
{
    int n = 0;
    for (int q = 0; q < P; q++) {
        if (q == rank)
            continue;
        unsigned long long x = ((unsigned long long)seed << 40) ^
                               ((unsigned long long)it << 20) ^
                               ((unsigned long long)rank << 10) ^ (unsigned long long)q;
        x += 0x9e3779b97f4a7c15ULL;
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        x ^= x >> 31;
        if ((double)(x >> 11) * 0x1.0p-53 < density)
            dests[n++] = q;
    }
    return n;
}

typedef struct xchg_sparse_sink {
    char *buf;       /* where the callback copies received data */
    size_t used, cap;
    size_t elem;     /* bytes per element (contiguous types only) */
} xchg_sparse_sink;

static inline int xchg_sparse_sink_cb(int source, int count, const void *data, void *ctx)
{
    (void)source;
    xchg_sparse_sink *k = ctx;
    size_t b = (size_t)count * k->elem;
    if (k->used + b > k->cap) {
        k->cap = 2 * (k->used + b);
        k->buf = realloc(k->buf, k->cap);
    }
    memcpy(k->buf + k->used, data, b);
    k->used += b;
    return 0;
}

/* One timed exchange on this rank (seconds). algo XCHG_SPARSE_INVALID
 * times the baseline, MPI_Alltoall of counts + MPI_Alltoallv. The type
 * must be contiguous (the sink copies count*elem bytes). */
static inline double xchg_sparse_time_one(xchg_sparse_algo algo, int use_result, int n,
                                          const int *dests, const void *sendbuf,
                                          const int *counts, const int *displs,
                                          MPI_Datatype type, xchg_sparse_sink *sink,
                                          MPI_Comm comm)
{
    int P, tsize;
    MPI_Comm_size(comm, &P);
    MPI_Type_size(type, &tsize);
    sink->elem = (size_t)tsize;
    sink->used = 0;
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    if (algo == XCHG_SPARSE_INVALID) {
        int *v = calloc(4 * (size_t)P, sizeof(int));
        int *sc = v, *sd = v + P, *rc = v + 2 * P, *rd = v + 3 * P;
        for (int i = 0; i < n; i++) {
            sc[dests[i]] = counts[i];
            sd[dests[i]] = displs[i];
        }
        MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, comm);
        int tot = 0;
        for (int q = 0; q < P; q++) {
            rd[q] = tot;
            tot += rc[q];
        }
        void *rb = malloc((size_t)tot * (size_t)tsize + 1);
        MPI_Alltoallv(sendbuf, sc, sd, type, rb, rc, rd, type, comm);
        free(rb);
        free(v);
    } else if (use_result) {
        xchg_sparse_result r;
        xchg_sparse_exchange_algo(algo, n, dests, sendbuf, counts, displs, type, NULL, NULL,
                                  &r, comm);
        xchg_sparse_result_free(&r);
    } else {
        xchg_sparse_exchange_algo(algo, n, dests, sendbuf, counts, displs, type,
                                  xchg_sparse_sink_cb, sink, NULL, comm);
    }
    return MPI_Wtime() - t0;
}

#endif /* XCHG_SPARSE_TIMING_H */
