/*
 * bruck_radix.c - "bruck_radix": the two-phase Bruck with radix r.
 *
 * Slot indices are written in base r. Round d (weight r^d) has up to r-1
 * concurrent exchanges: the slots whose digit d is v (1 <= v < r) go to
 * rank+v*r^d and come from rank-v*r^d, sizes first, then exactly their
 * bytes (engine in bruck_common.c, shared with bruck_twophase). r = 2 is
 * bruck_twophase; r = P is one round of P-1 messages, the spread-out
 * algorithm with a size pre-exchange.
 *
 * r comes from XCHG_BRUCK_RADIX (2 to 2^30, clamped to P); unset or 0, the
 * default is ceil(sqrt(P)): two rounds (4 latencies) at any P, each
 * byte forwarded at most twice, and about 2 sqrt(P) messages per rank
 * instead of P. The setting is agreed across ranks (settings.c), so the
 * choice is the same everywhere and depends on nothing else but P.
 *
 * Cost: D = ceil(log_r P) rounds of 2 latencies each, (r-1) D messages of
 * each kind, each byte forwarded up to D times (on average D(r-1)/r).
 * Wins for small messages at large P when log2 P rounds are too many and
 * P messages too many. Memory: as bruck_twophase, plus O(r) requests.
 */
#include "bruck_common.h"

#include <limits.h>

int xchg_bruck_radix_of(int setting, int P)
{
    int r = 2;
    while ((long)r * r < P)
        r++;
    if (setting != 0) /* 0: unset (or rejected) */
        r = setting > P ? P : setting < 2 ? 2 : setting;
    if (r > P)
        r = P < 2 ? 2 : P; /* P = 1: no round runs */
    return r;
}

/* XCHG_BRUCK_RADIX: bruck_radix's radix (hybrid's too). */
static const xchg_setting_def radix = {"XCHG_BRUCK_RADIX", XCHG_KIND_INT, 2, 1 << 30, 0,
                                       "ceil(sqrt P)", "clamped to P", "ceil(sqrt P)"};
const xchg_setting_def *const xchg_bruck_radix_settings[] = {&radix, NULL};

int xchg_bruck_radix_for(const xchg_settings *s, int P)
{
    return xchg_bruck_radix_of((int)xchg_setting_of(s, &radix), P);
}

int xchg_alltoallv_bruck_radix(xchg_call *c)
{
    return xchg_bruck_twophase_run(c, xchg_bruck_radix_for(&c->cs->settings, c->size), "bruck_radix");
}
