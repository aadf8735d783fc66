/* settings_table.c - prints the library's table of settings (src/core/settings.c)
 * as "NAME<tab>RANGE<tab>DEFAULT" lines, the algorithm lists taken from the
 * registries, for tests/docs_settings.py to compare with docs/settings.md.
 * No MPI call: run it without a launcher. */
#include "core/state.h"

#include <stdio.h>

int main(void)
{
    static const xchg_algo_names names = {
        xchg_algo_from_name,          xchg_sparse_algo_from_name, xchg_algo_name,
        xchg_sparse_algo_name,        xchg_neighbor_algo_from_name, xchg_neighbor_algo_name,
        NULL}; /* no tuning table: nothing is agreed here */
    const char *name;
    char range[1024], dflt[256];
    int n = 0;
    for (int i = 0; xchg_setting_describe(i, &names, &name, range, sizeof range, dflt, sizeof dflt);
         i++, n++)
        printf("%s\t%s\t%s\n", name, range, dflt);
    return n > 0 ? 0 : 1;
}
