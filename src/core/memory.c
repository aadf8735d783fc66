/*
 * memory.c - bounded, reported temporary memory, and environment settings.
 *
 * Padded and store-and-forward algorithms can need P x (largest block)
 * bytes. Every temporary allocation goes through xchg_temp_alloc so the
 * peak is reported to the caller (xchg_get_stats) and a request beyond
 * XCHG_MAX_TEMP_BYTES fails cleanly with MPI_ERR_NO_MEM instead of taking
 * the node down.
 */
#include "xchg_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

long xchg_env_long(const char *name, long dflt, long min, long max)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return dflt;
    return v;
}

size_t xchg_env_bytes(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || v < 0 || end == s)
        return dflt;
    switch (*end) {
    case 'k': case 'K': v *= 1024.0; end++; break;
    case 'm': case 'M': v *= 1024.0 * 1024.0; end++; break;
    case 'g': case 'G': v *= 1024.0 * 1024.0 * 1024.0; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'B' || *end == 'b')
        end++;
    if (*end == 'B')
        end++;
    if (*end)
        return dflt;
    return (size_t)v;
}

size_t xchg_temp_limit(void)
{
    /* Default: a quarter of physical memory per process. A node running
     * many ranks should set XCHG_MAX_TEMP_BYTES lower. */
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    size_t dflt = (pages > 0 && psize > 0) ? (size_t)pages * (size_t)psize / 4
                                           : (size_t)1 << 30;
    return xchg_env_bytes("XCHG_MAX_TEMP_BYTES", dflt);
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
