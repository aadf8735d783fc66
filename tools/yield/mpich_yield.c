/*
 * mpich_yield.c - LD_PRELOAD shim: MPICH (ch4:ucx) ranks yield when idle.
 *
 * MPICH 4 busy-polls UCX while it waits and has no setting to yield
 * (MPIR_CVAR_POLLS_BEFORE_YIELD is ch3 only). With more ranks than cores,
 * a spinning rank burns the time slice the rank it waits for needs: 8 ranks
 * on 2 cores ran our test suite 3x slower. Wrapping ucp_worker_progress and
 * calling sched_yield() after a poll that found nothing hands the core over.
 * Used for tests and oversubscribed runs only; never linked into libxchg.
 */
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *worker);

unsigned ucp_worker_progress(void *worker);

unsigned ucp_worker_progress(void *worker)
{
    static progress_fn real;
    if (!real)
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
    if (!real)
        return 0;
    unsigned n = real(worker);
    if (n == 0)
        sched_yield();
    return n;
}
