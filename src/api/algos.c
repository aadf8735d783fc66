/*
 * algos.c - the public names and lists of the algorithms (xchg_algo_name,
 * xchg_algo_from_name, ... and their sparse counterparts), read from the
 * two registries. A name is never NULL: an id that is no algorithm of this
 * build is named "invalid", which no registry holds, so printing a name
 * needs no check and that name reads back as the invalid id.
 */
#include "api.h"
#include "sparse/sparse_internal.h"

#include <string.h>

xchg_algo xchg_algo_from_name(const char *name)
{
    if (name && strcmp(name, "auto") == 0)
        return XCHG_ALGO_AUTO;
    const xchg_algo_info *a = xchg_registry_find_name(name);
    return a ? a->id : XCHG_ALGO_INVALID;
}

const char *xchg_algo_name(xchg_algo algo)
{
    if (algo == XCHG_ALGO_AUTO)
        return "auto";
    const xchg_algo_info *a = xchg_registry_find(algo);
    return a ? a->name : "invalid";
}

int xchg_algo_count(void) { return xchg_registry_count(); }

int xchg_algo_is_baseline(xchg_algo algo)
{
    const xchg_algo_info *a = xchg_registry_find(algo);
    return a ? a->baseline : 0;
}

xchg_algo xchg_algo_at(int i)
{
    const xchg_algo_info *a = xchg_registry_at(i);
    return a ? a->id : XCHG_ALGO_INVALID;
}

xchg_sparse_algo xchg_sparse_algo_from_name(const char *name)
{
    if (name && strcmp(name, "auto") == 0)
        return XCHG_SPARSE_AUTO;
    const xchg_sparse_info *a = xchg_sparse_registry_find_name(name);
    return a ? a->id : XCHG_SPARSE_INVALID;
}

const char *xchg_sparse_algo_name(xchg_sparse_algo algo)
{
    if (algo == XCHG_SPARSE_AUTO)
        return "auto";
    const xchg_sparse_info *a = xchg_sparse_registry_find(algo);
    return a ? a->name : "invalid";
}

int xchg_sparse_algo_count(void) { return xchg_sparse_registry_count(); }

xchg_sparse_algo xchg_sparse_algo_at(int i)
{
    const xchg_sparse_info *a = xchg_sparse_registry_at(i);
    return a ? a->id : XCHG_SPARSE_INVALID;
}
