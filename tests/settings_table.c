/* settings_table.c - prints the library's table of settings (core's, in
 * src/core/settings.c, then the algorithms' own, from the registries) as
 * "NAME<tab>RANGE<tab>DEFAULT" lines, the algorithm lists taken from the
 * registries, for tests/docs_settings.py to compare with docs/settings.md.
 * No MPI call: run it without a launcher. */
#include "api/api.h"

#include <stdio.h>

int main(void)
{
    const xchg_algo_names *names = xchg_api_names();
    const char *name;
    char range[1024], dflt[256];
    int n = 0;
    for (int i = 0; xchg_setting_describe(i, names, &name, range, sizeof range, dflt, sizeof dflt);
         i++, n++)
        printf("%s\t%s\t%s\n", name, range, dflt);
    return n > 0 ? 0 : 1;
}
