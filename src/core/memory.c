/*
 * memory.c - bounded, reported temporary memory, and environment settings.
 *
 * Padded and store-and-forward algorithms can need P x (largest block)
 * bytes. Every temporary allocation goes through xchg_temp_alloc so the
 * peak is reported to the caller (xchg_get_stats) and a request beyond
 * XCHG_MAX_TEMP_BYTES fails cleanly with MPI_ERR_NO_MEM instead of taking
 * the node down. The limit is agreed per communicator (settings.c): set,
 * or a quarter of the smallest physical memory of all ranks.
 */
#include "core.h"

#include <stdlib.h>

size_t xchg_temp_limit_of(const xchg_comm_state *cs)
{
    size_t limit = cs->settings.max_temp_bytes;
    /* Fault injection for tests only: XCHG_FAULT_TEMP_LIMIT lowers this
     * rank's limit for the calls made while it is set, without agreement,
     * as a node short of memory would (tests/test_robust.c, test_bruck.c).
     * Read per call on purpose; never set it in production. */
    const char *f = getenv("XCHG_FAULT_TEMP_LIMIT");
    if (f && *f) {
        char *end;
        unsigned long long v = strtoull(f, &end, 10);
        if (*end == '\0' && v < limit)
            limit = (size_t)v;
    }
    return limit;
}

void *xchg_temp_alloc(xchg_call *c, size_t bytes, const char *what, int *err)
{
    if (bytes > c->temp_limit || c->temp_cur > c->temp_limit - bytes) {
        *err = xchg_error_code(MPI_ERR_NO_MEM, "%s needs %zu temporary bytes on rank %d, "
                               "over the limit of %zu (XCHG_MAX_TEMP_BYTES)",
                               what, c->temp_cur + bytes, c->rank, c->temp_limit);
        return NULL;
    }
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        *err = xchg_error_code(MPI_ERR_NO_MEM, "%s: malloc of %zu bytes failed on rank %d",
                               what, bytes, c->rank);
        return NULL;
    }
    c->temp_cur += bytes;
    if (c->temp_cur > c->temp_peak)
        c->temp_peak = c->temp_cur;
    return p;
}

void xchg_temp_free(xchg_call *c, void *p, size_t bytes)
{
    if (!p)
        return;
    free(p);
    c->temp_cur -= bytes;
}
