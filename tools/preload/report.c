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
 *
 * With XCHG_PRELOAD_TIME=1 every rank times its blocking MPI_Alltoallv
 * calls (MPI_Wtime around each, served or not) and MPI_Finalize reduces
 * the sums over MPI_COMM_WORLD (the one collective, and only when asked
 * for); rank 0 prints, whatever XCHG_VERBOSE says:
 *
 *   xchg-preload: time in MPI_Alltoallv: 14 calls, slowest rank 123.456 us,
 *   mean 120.100 us; MPI_Wtime at MPI_Finalize 0.001234 s   (one line)
 *
 * "calls" is the most any rank made; the times are each rank's sum over
 * its calls. MPI_Wtime at MPI_Finalize is the latest rank's clock: under
 * SMPI the clock starts at 0 with the simulation, so it is the
 * application's whole simulated time.
 */
#include "preload.h"

#include <stdio.h>
#include <stdlib.h>

enum { ALGO_SLOTS = 64 }; /* xchg_algo ids are small; slot 0 is "failed before running" */

static unsigned long served[ENTRY_COUNT][ALGO_SLOTS];
static unsigned long fell[ENTRY_COUNT][REASON_COUNT];
static int reported;
static unsigned long long timed_ns; /* this rank's time in blocking MPI_Alltoallv */
static unsigned long timed_calls;

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
    [REASON_BEFORE_SETUP] = "MPI's own until set-up pays back",
    [REASON_SLOWER] = "MPI's own: measured faster than auto's choice",
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

int preload_timing(void)
{
    static int on = -1; /* a benign race: every thread reads the same value */
    if (on < 0) {
        const char *e = getenv("XCHG_PRELOAD_TIME");
        on = e && atoi(e) > 0;
    }
    return on;
}

void preload_count_time(double seconds)
{
    unsigned long long ns = seconds > 0 ? (unsigned long long)(seconds * 1e9 + 0.5) : 0;
    __atomic_add_fetch(&timed_ns, ns, __ATOMIC_RELAXED);
    __atomic_add_fetch(&timed_calls, 1, __ATOMIC_RELAXED);
}

/* XCHG_PRELOAD_TIME: the sums reduced over MPI_COMM_WORLD, printed by
 * rank 0. Collective: between MPI_Init and MPI_Finalize only. */
static void report_time(void)
{
    int init = 0, fin = 0, rank = 0, size = 1;
    PMPI_Initialized(&init);
    PMPI_Finalized(&fin);
    if (!preload_timing() || !init || fin)
        return;
    double now = PMPI_Wtime();
    double mine = (double)__atomic_load_n(&timed_ns, __ATOMIC_RELAXED) * 1e-9;
    double in[2] = {mine, now}, most[2] = {0, 0}, sum = 0;
    unsigned long calls = __atomic_load_n(&timed_calls, __ATOMIC_RELAXED), most_calls = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(in, most, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    PMPI_Reduce(&calls, &most_calls, 1, MPI_UNSIGNED_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank != 0)
        return;
    fprintf(stderr, "xchg-preload: time in MPI_Alltoallv: %lu calls, slowest rank %.3f us, "
            "mean %.3f us; MPI_Wtime at MPI_Finalize %.6f s\n", most_calls, most[0] * 1e6,
            sum / size * 1e6, most[1]);
    fflush(stderr);
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
    report_time();
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
