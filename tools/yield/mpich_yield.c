/*
 * mpich_yield.c - LD_PRELOAD shim: MPICH (ch4:ucx) ranks yield when idle.
 *
 * MPICH 4 busy-polls UCX while it waits and has no setting to yield
 * (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3 only). With more ranks than cores,
 * a spinning rank burns the time slice the rank it waits for needs: 8 ranks
 * on 2 cores ran our test suite 3x slower. Wrapping ucp_worker_progress and
 * calling sched_yield() after a poll that found nothing hands the core over.
 * Used for tests and oversubscribed runs only; never linked into libxchg.
 * Installed in the library directory with the tools; usage:
 * LD_PRELOAD=<prefix>/lib/libxchg-mpich-yield.so mpiexec ... (docs/benchmarking.md,
 * "Oversubscribed machines").
 *
 * Finding the real ucp_worker_progress: dlsym(RTLD_NEXT) searches the
 * global scope only. When MPI is loaded by dlopen with RTLD_LOCAL (Python
 * importing mpi4py), libucp is outside it, yet MPICH's calls still bind
 * to this shim, which is global. So the lookup is retried until it
 * succeeds, then through the already-loaded library itself
 * (dlopen("libucp.so.0", RTLD_NOLOAD)). If nothing is found the shim cannot
 * make progress for MPI: it says so and aborts rather than hang.
 */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

static progress_fn find_real(void)
{
    progress_fn f = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    static const char *const names[] = {"libucp.so.0", "libucp.so"};
    for (int i = 0; !f && i < 2; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            f = (progress_fn)dlsym(h, "ucp_worker_progress");
            dlclose(h); /* NOLOAD took a reference; the library stays loaded */
        }
    }
    return f;
}

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    progress_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
    if (!f) {
        f = find_real();
        if (!f) {
            fprintf(stderr, "libxchg-mpich-yield.so: cannot find the real ucp_worker_progress "
                    "(neither after this shim nor in a loaded libucp.so.0); without it MPI "
                    "cannot progress. Run without this shim.\n");
            abort();
        }
        __atomic_store_n(&real, f, __ATOMIC_RELEASE);
    }
    unsigned n = f(worker);
    if (n == 0)
        sched_yield();
    return n;
}
