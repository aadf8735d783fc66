/*
 * error_agree.c - one rank's argument error fails every rank.
 *
 * MPI calls a collective erroneous when one rank passes bad arguments; a
 * library that returns on that rank only leaves the others waiting forever.
 * Where a collective runs anyway (auto's statistics, the padded algorithms'
 * maximum, grid's and hierarchical's refusal, persistent init, the check
 * mode), the failing rank takes part with empty blocks and a flag that the
 * collective carries: every rank then returns an error of the same class.
 * The flag is one int64 under MPI_MAX: 0 for "no error", else
 * (P - rank) << 12 | class, so the lowest failing rank wins.
 *
 * This file holds the flag and its reading; the collective that carries
 * it is the caller's (xchg_agree_errors, progress/block.c, when there is
 * no other); the check mode is api/check_mode.c.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

int64_t xchg_agree_flag(int rank, int size, int local_err)
{
    if (local_err == MPI_SUCCESS)
        return 0;
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(local_err, &cls);
    if (cls <= MPI_SUCCESS || cls >= (1 << XCHG_AGREE_CLASS_BITS))
        cls = MPI_ERR_OTHER;
    return ((int64_t)(size - rank) << XCHG_AGREE_CLASS_BITS) | cls;
}

/* A message without its "xchg: rank N: " (quoted inside another message). */
static const char *without_prefix(const char *msg)
{
    const char *rest = strncmp(msg, "xchg: ", 6) == 0 ? msg + 6 : msg;
    const char *colon = strncmp(rest, "rank ", 5) == 0 ? strstr(rest, ": ") : NULL;
    return colon ? colon + 2 : rest;
}

int xchg_agree_result(int rank, int size, int local_err, int64_t all, const char *who)
{
    if (all == 0)
        return MPI_SUCCESS;
    int cls = (int)(all & ((1 << XCHG_AGREE_CLASS_BITS) - 1));
    int from = size - (int)(all >> XCHG_AGREE_CLASS_BITS);
    int mine = MPI_SUCCESS;
    if (local_err != MPI_SUCCESS)
        MPI_Error_class(local_err, &mine);
    if (from == rank || (local_err != MPI_SUCCESS && mine == cls))
        return local_err; /* this rank's own detailed error */
    char cname[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(cls, cname, &len);
    if (local_err != MPI_SUCCESS) {
        char own[MPI_MAX_ERROR_STRING];
        xchg_error_string(local_err, own, &len);
        return xchg_error_code(cls, "%s: rank %d of comm reported an argument error (%s), so "
                               "no rank exchanged; this rank's own error: %s", who, from, cname,
                               without_prefix(own));
    }
    return xchg_error_code(cls, "%s: rank %d of comm reported an argument error (%s), so no "
                           "rank exchanged (its own error names the argument)", who, from, cname);
}
