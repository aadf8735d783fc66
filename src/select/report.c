/*
 * report.c - what XCHG_VERBOSE says of an automatic choice, one format for
 * every family (alltoallv, sparse, neighbour):
 *
 *     xchg: [FAMILY ]auto chose NAME on P=N WHY
 *
 * and one rule for when rank 0 says it: XCHG_VERBOSE=1 the first time each
 * algorithm is chosen on a communicator, 2 also every change of choice,
 * 3 every choice. WHY is the family's own account (its statistics, rule or
 * model figures).
 */
#include "select.h"

#include <stdarg.h>
#include <stdio.h>

int xchg_report_due(unsigned long long *printed, const xchg_comm_state *cs, int algo,
                    int changed)
{
    long verbose = cs->settings.verbose;
    int known = algo >= 0 && algo < 64;
    int first = known && !(*printed & (1ull << algo));
    if (cs->rank != 0 || !((verbose >= 1 && first) || (verbose >= 2 && changed) || verbose >= 3))
        return 0;
    if (known)
        *printed |= 1ull << algo;
    return 1;
}

void xchg_report_choice(const char *family, const char *name, int P, const char *why, ...)
{
    char text[2048];
    va_list ap;
    va_start(ap, why);
    vsnprintf(text, sizeof text, why, ap);
    va_end(ap);
    fprintf(stderr, "xchg: %s%sauto chose %s on P=%d%s\n", family ? family : "",
            family ? " " : "", name, P, text);
}
