/*
 * report.c - what the preload did, for proof that calls reached xchg.
 *
 * Every call is counted on the rank that makes it: served by xchg (per
 * entry point and algorithm) or fallen through to the MPI library (per
 * entry point and reason). With XCHG_VERBOSE=1 (or 2), rank 0 of
 * MPI_COMM_WORLD prints its counts on stderr at MPI_Finalize, one line per
 * entry point that saw calls:
 *
 *   xchg-preload: rank 0 of 4: MPI_Alltoallv calls by entry point
 *   xchg-preload:   C MPI_Alltoallv: 5 calls, 5 served by xchg (pairwise 5), 0 fell through
 *   xchg-preload:   nonblocking MPI_Ialltoallv: 1 call, 0 served by xchg, 1 fell through (nonblocking: forwarded 1)
 *
 * A collective call counts once on each member, so rank 0 sees every call
 * on every communicator it belongs to. No collective here: Finalize must
 * not wait on ranks that may not run the preload.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>

enum { ALGO_SLOTS = 64 }; /* xchg_algo ids are small; slot 0 is "failed before running" */

static unsigned long served[ENTRY_COUNT][ALGO_SLOTS];
static unsigned long fell[ENTRY_COUNT][REASON_COUNT];
static int reported;

static const char *const entry_label[ENTRY_COUNT] = {
    [ENTRY_C] = "C MPI_Alltoallv",
    [ENTRY_LARGE] = "large-count MPI_Alltoallv_c",
    [ENTRY_FORTRAN] = "Fortran mpi_alltoallv",
    [ENTRY_F08] = "f08 mpi_alltoallv_f08",
    [ENTRY_NONBLOCKING] = "nonblocking MPI_Ialltoallv",
    [ENTRY_PERSISTENT] = "persistent MPI_Alltoallv_init",
    [ENTRY_F08_REQUEST] = "f08 mpi_ialltoallv_f08ts/mpi_alltoallv_init_f08ts (MPICH)",
    [ENTRY_NEIGHBOR] = "C MPI_Neighbor_alltoallv",
    [ENTRY_NEIGHBOR_LARGE] = "large-count MPI_Neighbor_alltoallv_c",
    [ENTRY_NEIGHBOR_NONBLOCKING] = "nonblocking MPI_Ineighbor_alltoallv",
    [ENTRY_NEIGHBOR_PERSISTENT] = "persistent MPI_Neighbor_alltoallv_init",
    [ENTRY_NEIGHBOR_FORTRAN] = "Fortran mpi_neighbor_alltoallv",
    [ENTRY_NEIGHBOR_F08] = "f08 mpi_neighbor_alltoallv_f08",
    [ENTRY_NEIGHBOR_F08_REQUEST] =
        "f08 mpi_ineighbor_alltoallv_f08ts/mpi_neighbor_alltoallv_init_f08ts (MPICH)",
};

static const char *const reason_label[REASON_COUNT] = {
    [REASON_OFF] = "XCHG_PRELOAD=off",
    [REASON_OTHER_MPI] = "another version of the MPI library than libxchg was built with",
    [REASON_NO_COMM] = "MPI refused a communicator (its limit on communicators)",
    [REASON_NULL_COMM] = "MPI_COMM_NULL, reported by MPI",
    [REASON_INTER] = "intercommunicator",
    [REASON_LARGE] = "not supported: counts beyond int, passed to MPI_Alltoallv_c",
    [REASON_BYPASS] = "not supported: the MPI library's binding calls PMPI directly",
    [REASON_NULL_ARG] = "request is NULL, reported by MPI",
    [REASON_F08_WAIT] = "not supported: MPICH's mpi_f08 MPI_Wait calls PMPI_Wait directly",
    [REASON_NO_TOPOLOGY] = "no topology on the communicator, reported by MPI",
    [REASON_LARGE_NEIGHBOR] =
        "not supported: counts beyond int, passed to MPI_Neighbor_alltoallv_c",
};

int preload_is_neighbor(preload_entry e)
{
    return e >= ENTRY_NEIGHBOR && e <= ENTRY_NEIGHBOR_F08_REQUEST;
}

void preload_count_served(preload_entry e, xchg_algo algo)
{
    int slot = algo >= 0 && (int)algo + 1 < ALGO_SLOTS ? (int)algo + 1 : 0;
    __atomic_add_fetch(&served[e][slot], 1, __ATOMIC_RELAXED);
}

void preload_count_fell(preload_entry e, preload_reason r)
{
    __atomic_add_fetch(&fell[e][r], 1, __ATOMIC_RELAXED);
}

/* Appends "name n, name n" for the nonzero counts to buf. */
static void list(char *buf, size_t len, const unsigned long *counts, int n,
                 const char *(*name)(int))
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < n && used < len; i++) {
        if (!counts[i])
            continue;
        int w = snprintf(buf + used, len - used, "%s%s %lu", used ? ", " : "", name(i),
                         counts[i]);
        if (w > 0)
            used += (size_t)w;
    }
}

static const char *algo_label(int slot)
{
    if (slot == 0)
        return "error before any algorithm ran";
    const char *n = xchg_algo_name((xchg_algo)(slot - 1));
    return n ? n : "unknown algorithm";
}

static const char *neighbor_label(int slot)
{
    if (slot == 0)
        return "error before any algorithm ran";
    const char *n = xchg_neighbor_algo_name((xchg_neighbor_algo)(slot - 1));
    return n ? n : "unknown algorithm";
}

static const char *reason_name(int r)
{
    return reason_label[r];
}

void preload_report(void)
{
    if (__atomic_exchange_n(&reported, 1, __ATOMIC_ACQ_REL))
        return;
    const char *v = getenv("XCHG_VERBOSE");
    if (!v || atoi(v) < 1)
        return;
    int rank = 0, size = 1, init = 0, fin = 0;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (init && !fin) {
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
        PMPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    if (rank != 0)
        return;
    unsigned long total = 0;
    for (int e = 0; e < ENTRY_COUNT; e++) {
        for (int a = 0; a < ALGO_SLOTS; a++)
            total += __atomic_load_n(&served[e][a], __ATOMIC_RELAXED);
        for (int r = 0; r < REASON_COUNT; r++)
            total += __atomic_load_n(&fell[e][r], __ATOMIC_RELAXED);
    }
    fprintf(stderr, "xchg-preload: rank 0 of %d: MPI_Alltoallv and MPI_Neighbor_alltoallv "
            "calls by entry point%s\n", size,
            total ? "" : ": none");
    for (int e = 0; e < ENTRY_COUNT; e++) {
        unsigned long s = 0, f = 0, sc[ALGO_SLOTS], fc[REASON_COUNT];
        for (int a = 0; a < ALGO_SLOTS; a++)
            s += sc[a] = __atomic_load_n(&served[e][a], __ATOMIC_RELAXED);
        for (int r = 0; r < REASON_COUNT; r++)
            f += fc[r] = __atomic_load_n(&fell[e][r], __ATOMIC_RELAXED);
        if (!s && !f)
            continue;
        char sl[512], fl[512];
        list(sl, sizeof sl, sc, ALGO_SLOTS,
             preload_is_neighbor((preload_entry)e) ? neighbor_label : algo_label);
        list(fl, sizeof fl, fc, REASON_COUNT, reason_name);
        fprintf(stderr, "xchg-preload:   %s: %lu call%s, %lu served by xchg%s%s%s, %lu fell "
                "through%s%s%s\n", entry_label[e], s + f, s + f == 1 ? "" : "s", s,
                s ? " (" : "", sl, s ? ")" : "", f, f ? " (" : "", fl, f ? ")" : "");
    }
    fflush(stderr);
}
