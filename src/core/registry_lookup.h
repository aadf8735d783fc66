/*
 * registry_lookup.h - the lookup the three registries (alltoallv/,
 * sparse/ and neighbor/registry.c) define over their table: count, at,
 * find by id, find by name, and their entries' own settings. One
 * definition, so they cannot drift apart.
 */
#ifndef XCHG_REGISTRY_LOOKUP_H
#define XCHG_REGISTRY_LOOKUP_H

#include <string.h>

/* Defines PREFIX_count, PREFIX_at, PREFIX_find, PREFIX_find_name and
 * PREFIX_setting (the entries' own settings, entry by entry; NULL past the
 * last) over the array TABLE of INFO entries, each with members id (of
 * type ID), name and settings. */
#define XCHG_REGISTRY_LOOKUP(PREFIX, INFO, ID, TABLE)                                  \
    int PREFIX##_count(void) { return (int)(sizeof TABLE / sizeof TABLE[0]); }          \
    const INFO *PREFIX##_at(int i)                                                     \
    {                                                                                  \
        return (i >= 0 && i < PREFIX##_count()) ? &TABLE[i] : NULL;                    \
    }                                                                                  \
    const INFO *PREFIX##_find(ID id)                                                   \
    {                                                                                  \
        for (int i = 0; i < PREFIX##_count(); i++)                                     \
            if (TABLE[i].id == id)                                                     \
                return &TABLE[i];                                                      \
        return NULL;                                                                   \
    }                                                                                  \
    const INFO *PREFIX##_find_name(const char *name)                                   \
    {                                                                                  \
        if (!name)                                                                     \
            return NULL;                                                               \
        for (int i = 0; i < PREFIX##_count(); i++)                                     \
            if (strcmp(TABLE[i].name, name) == 0)                                      \
                return &TABLE[i];                                                      \
        return NULL;                                                                   \
    }                                                                                  \
    const xchg_setting_def *PREFIX##_setting(int i)                                    \
    {                                                                                  \
        for (int k = 0; k < PREFIX##_count(); k++)                                     \
            for (const xchg_setting_def *const *d = TABLE[k].settings; d && *d; d++)   \
                if (i-- == 0)                                                          \
                    return *d;                                                         \
        return NULL;                                                                   \
    }

#endif /* XCHG_REGISTRY_LOOKUP_H */
