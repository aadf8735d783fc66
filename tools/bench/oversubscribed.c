/*
 * oversubscribed.c - the warning of xchg-bench when ranks outnumber cores.
 *
 * An MPI rank that waits for a message polls its network or shared-memory
 * queue on its core without a pause (MPICH's ch4 always; Open MPI unless
 * told to yield). With more ranks than cores the waiting ranks take the
 * time slices the ranks they wait for need, and an exchange of 16 bytes
 * that takes microseconds takes milliseconds: timings that say nothing
 * about the algorithms. So xchg-bench counts the ranks and the cores of
 * every node and, where ranks outnumber cores and MPI is not set to yield,
 * says so and how to make it yield.
 *
 * Cores: the union of the node's ranks' CPU affinity masks, so a job bound
 * to some cores (a batch system's cpuset) counts those, and ranks bound one
 * per core count every core they are bound to.
 */
#include "oversubscribed.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef XCHG_SMPI
#include <sched.h>
#include <unistd.h>

#define SHIM "libxchg-mpich-yield.so"

/* The cores the ranks of this node may run on (collective over node). */
static int node_cores(MPI_Comm node)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &set);
    }
    MPI_Allreduce(MPI_IN_PLACE, &set, (int)sizeof set, MPI_BYTE, MPI_BOR, node);
    int cores = CPU_COUNT(&set);
    const char *test = getenv("XCHG_BENCH_TEST_CORES"); /* tests the warning */
    if (test && atoi(test) > 0)
        cores = atoi(test);
    return cores > 0 ? cores : 1;
}

/* MPI's control variable mpi_yield_when_idle, read through MPI_T as the
 * library runs with it: 1 or 0, -1 where MPI has no such variable. Open MPI
 * has it, and sets it itself when it knows that it runs more ranks than a
 * node's slots. */
static int yield_when_idle(void)
{
    int provided, idx, count, on = -1;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return -1;
    char name[128], desc[8];
    int nlen = sizeof name, dlen = sizeof desc, verbosity, bind, scope, size = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle h;
    if (MPI_T_cvar_get_index("mpi_yield_when_idle", &idx) == MPI_SUCCESS &&
        MPI_T_cvar_get_info(idx, name, &nlen, &verbosity, &type, &enumtype, desc, &dlen, &bind,
                            &scope) == MPI_SUCCESS &&
        MPI_Type_size(type, &size) == MPI_SUCCESS && size > 0 && size <= 8 &&
        MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS) {
        unsigned char v[64] = {0};
        if (count == 1 && MPI_T_cvar_read(h, v) == MPI_SUCCESS) {
            on = 0;
            for (int i = 0; i < size; i++)
                on |= v[i] != 0;
        }
        MPI_T_cvar_handle_free(&h);
    }
    MPI_T_finalize();
    return on;
}

/* MPI lets waiting ranks yield: Open MPI's mpi_yield_when_idle (from MPI_T,
 * or where that cannot tell, the environment that mpiexec --mca sets), or
 * the yield shim preloaded for MPICH. */
static int yields(void)
{
    int on = yield_when_idle();
    if (on >= 0)
        return on;
    const char *o = getenv("OMPI_MCA_mpi_yield_when_idle");
    if (o && *o && strcmp(o, "0") && strcmp(o, "false") && strcmp(o, "no"))
        return 1;
    const char *p = getenv("LD_PRELOAD");
    return p && strstr(p, "xchg-mpich-yield") != NULL;
}

/* Where the yield shim is: next to xchg-bench (a build tree) or in the
 * library directory of its install; a placeholder if neither. */
static void shim_path(char *out, size_t len)
{
    const char *libdir = XCHG_BENCH_LIBDIR; /* CMAKE_INSTALL_LIBDIR */
    char dir[PATH_MAX], cand[2][2 * PATH_MAX], real[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
    char *slash = n > 0 ? (dir[n] = 0, strrchr(dir, '/')) : NULL;
    if (slash) {
        *slash = 0;
        snprintf(cand[0], sizeof cand[0], "%s/%s", dir, SHIM);
        if (libdir[0] == '/')
            snprintf(cand[1], sizeof cand[1], "%s/%s", libdir, SHIM);
        else
            snprintf(cand[1], sizeof cand[1], "%s/../%s/%s", dir, libdir, SHIM);
        for (int i = 0; i < 2; i++)
            if (access(cand[i], R_OK) == 0 && realpath(cand[i], real)) {
                snprintf(out, len, "%s", real);
                return;
            }
    }
    snprintf(out, len, "%s%s/%s", libdir[0] == '/' ? "" : "<prefix>/", libdir, SHIM);
}

static void warn(int ranks, int cores)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], shim[PATH_MAX];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    int ompi = strstr(lib, "Open MPI") != NULL, mpich = strstr(lib, "MPICH") != NULL;
    shim_path(shim, sizeof shim);
    fprintf(stderr,
            "xchg-bench: warning: %d ranks run on a node with %d core%s and MPI lets waiting "
            "ranks spin: a rank that waits keeps its core from the rank it waits for, so "
            "these timings are inflated by spinning ranks (often 100 times or more).\n",
            ranks, cores, cores == 1 ? "" : "s");
    if (ompi || !mpich)
        fprintf(stderr, "xchg-bench: to make Open MPI's ranks yield: mpiexec --mca "
                "mpi_yield_when_idle 1 ... (or OMPI_MCA_mpi_yield_when_idle=1)\n");
    if (mpich || !ompi)
        fprintf(stderr, "xchg-bench: to make MPICH's ranks yield: LD_PRELOAD=%s mpiexec ...\n",
                shim);
    fprintf(stderr, "xchg-bench: or run at most %d rank%s per node (docs/benchmarking.md, "
            "\"Oversubscribed machines\")\n", cores, cores == 1 ? "" : "s");
}

void bench_warn_oversubscribed(MPI_Comm comm)
{
    static int warned;
    MPI_Comm node;
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return; /* fails on every rank alike: nothing to say */
    int ranks;
    MPI_Comm_size(node, &ranks);
    int cores = node_cores(node);
    MPI_Comm_free(&node);
    /* the node most oversubscribed; its figures to rank 0 */
    struct { int excess, rank; } most = {ranks - cores, rank};
    MPI_Allreduce(MPI_IN_PLACE, &most, 1, MPI_2INT, MPI_MAXLOC, comm);
    int fig[2] = {ranks, cores};
    MPI_Bcast(fig, 2, MPI_INT, most.rank, comm);
    int now = rank == 0 && most.excess > 0 && !warned && !yields();
    if (now) {
        warned = 1;
        /* stdout first: a line of it still buffered would otherwise reach
         * the terminal after the warning, or be cut by it where both
         * streams end up in one file (2>&1) */
        fflush(stdout);
        warn(fig[0], fig[1]);
        fflush(stderr);
    }
    /* The launcher forwards a rank's stdout and stderr through separate
     * pipes; with ranks spinning it gets no core until the run ends and
     * may then pass the table first (MPICH: 3 runs in 10). All ranks idle
     * a moment, once, so that it passes the warning on before any table. */
    MPI_Bcast(&now, 1, MPI_INT, 0, comm);
    if (now)
        usleep(50000);
}
#else
void bench_warn_oversubscribed(MPI_Comm comm)
{
    (void)comm; /* simulated ranks share no real cores */
}
#endif
