/* registry_check.c - the alltoallv registry's tags (src/alltoallv/algos.def):
 * every entry's own tags inside core's alltoallv range, and no two
 * entries' (or a shared engine's) overlapping, so that a stray message of
 * one algorithm can never be taken for another's. No MPI call: run it
 * without a launcher. */
#include "alltoallv/algo.h"

#include <stdio.h>

int main(void)
{
    char why[256];
    if (xchg_registry_check_tags(why, sizeof why)) {
        fprintf(stderr, "registry_check: %s\n", why);
        return 1;
    }
    int n = xchg_registry_count(), slots_ok = n > 0;
    for (int i = 0; i < n; i++) {
        const xchg_algo_info *a = xchg_registry_at(i);
        /* each algorithm its own slot, past the layers' own */
        slots_ok &= xchg_algo_slot(a->id) == XCHG_EXT_ALGO + i &&
                    xchg_algo_slot(a->id) < XCHG_EXT_COUNT && xchg_algo_tag(a->id) == a->tag;
    }
    if (!slots_ok) {
        fprintf(stderr, "registry_check: an algorithm's slot or tag is not its entry's\n");
        return 1;
    }
    printf("registry_check: %d algorithms, tags and slots distinct\n", n);
    return 0;
}
