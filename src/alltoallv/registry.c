/*
 * registry.c - the alltoallv algorithms, and every fact about each.
 *
 * The entries are in algos.def, one per algorithm file: its stable id
 * (xchg.h), its name, one line on when it wins, its function, persistent
 * hooks, cost model (select/model.c), named flags (algo.h says what each
 * means) and its own tags. Nothing else in the library lists algorithms:
 * auto's candidates and their tie order, the padded ones, the ones that
 * start blocking, each one's tags and per-communicator slot all come from
 * here.
 *
 * Adding an algorithm: write src/alltoallv/NAME.c with the xchg_alltoallv_fn
 * signature, add its id to xchg.h, a model function to select/model.c, and
 * one entry to algos.def (docs/contributing.md walks through it).
 */
#include "algo.h"
#include "bruck_common.h"

#include "core/registry_lookup.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Every function an entry may name, by the names algos.def gives them.
 * Declaring one an algorithm does not have is harmless: only those its
 * entry names are referenced. */
#define XCHG_ALGO(NAME, ID, DESC, ...)                                                  \
    int xchg_alltoallv_##NAME(xchg_call *c);                                           \
    extern const xchg_persist_ops xchg_##NAME##_persist;                               \
    double xchg_model_##NAME(const xchg_model_params *m, const xchg_pattern_stats *s);  \
    int xchg_##NAME##_prepare(xchg_comm_state *cs);                                    \
    int xchg_##NAME##_ready(const xchg_comm_state *cs);                                \
    int xchg_##NAME##_usable(const xchg_comm_state *cs);                               \
    extern const xchg_setting_def *const xchg_##NAME##_settings[];
#include "algos.def"
#undef XCHG_ALGO

static const xchg_algo_info registry[] = {
#define XCHG_ALGO(NAME, ID, DESC, ...)                                                  \
    {.id = ID, .name = #NAME, .desc = DESC, .run = xchg_alltoallv_##NAME, __VA_ARGS__},
#include "algos.def"
#undef XCHG_ALGO
};

/* Each algorithm's slot follows the layers' own in the state's table. */
_Static_assert(sizeof registry / sizeof registry[0] <= XCHG_EXT_COUNT - XCHG_EXT_ALGO,
               "more algorithms than per-communicator slots: raise XCHG_EXT_COUNT");

XCHG_REGISTRY_LOOKUP(xchg_registry, xchg_algo_info, xchg_algo, registry)

/* auto's candidates in tie order, listed once: auto ranks them at every
 * choice, and a first call's check ranks them on every new communicator. */
static pthread_once_t candidates_once = PTHREAD_ONCE_INIT;
static const xchg_algo_info *candidates[sizeof registry / sizeof registry[0]];
static int ncandidates;

static void list_candidates(void)
{
    for (int k = 1;; k++) {
        int found = 0;
        for (int i = 0; i < xchg_registry_count(); i++)
            if (registry[i].candidate == k) {
                candidates[ncandidates++] = &registry[i];
                found = 1;
            }
        if (!found)
            break;
    }
}

int xchg_registry_candidates(const xchg_algo_info *out[], int max)
{
    pthread_once(&candidates_once, list_candidates);
    int n = ncandidates < max ? ncandidates : max;
    memcpy(out, candidates, sizeof out[0] * (size_t)n);
    return n;
}

/* Asked by each algorithm for its own id, which is registered; an unknown
 * id gets the first algorithm's slot rather than one past the table. */
int xchg_algo_slot(xchg_algo id)
{
    const xchg_algo_info *a = xchg_registry_find(id);
    return XCHG_EXT_ALGO + (a ? (int)(a - registry) : 0);
}

int xchg_algo_tag(xchg_algo id)
{
    const xchg_algo_info *a = xchg_registry_find(id);
    return a ? a->tag : 0;
}

/* ---- the tags' check (tests/registry_check.c) ----------------------- */

/* Tags of code several entries share, which no entry owns. */
static const struct {
    int tag, ntags;
    const char *who;
} shared_tags[] = {
    {XCHG_TAG_BRUCK, 1, "the Bruck engine (bruck_common.c)"},
};
enum { NSHARED = (int)(sizeof shared_tags / sizeof shared_tags[0]) };

/* Range i: the shared ones first, then each entry's (ntags 0 where none). */
static void tag_range(int i, int *first, int *n, const char **who)
{
    if (i < NSHARED) {
        *first = shared_tags[i].tag, *n = shared_tags[i].ntags, *who = shared_tags[i].who;
        return;
    }
    const xchg_algo_info *a = &registry[i - NSHARED];
    *first = a->tag, *who = a->name;
    *n = a->tag == 0 ? 0 : a->ntags > 0 ? a->ntags : 1;
}

int xchg_registry_check_tags(char *why, size_t len)
{
    const int n = NSHARED + xchg_registry_count();
    for (int i = 0; i < n; i++) {
        int fi, ni, fj, nj;
        const char *wi, *wj;
        tag_range(i, &fi, &ni, &wi);
        if (ni > 0 && (fi < XCHG_TAG_ALLTOALLV_FIRST || fi + ni > XCHG_TAG_ALLTOALLV_END)) {
            snprintf(why, len, "%s: tags %d..%d outside the alltoallv range %d..%d", wi, fi,
                     fi + ni - 1, XCHG_TAG_ALLTOALLV_FIRST, XCHG_TAG_ALLTOALLV_END - 1);
            return 1;
        }
        for (int j = 0; j < i && ni > 0; j++) {
            tag_range(j, &fj, &nj, &wj);
            if (nj > 0 && fi < fj + nj && fj < fi + ni) {
                snprintf(why, len, "%s (tags %d..%d) and %s (tags %d..%d) overlap", wj, fj,
                         fj + nj - 1, wi, fi, fi + ni - 1);
                return 1;
            }
        }
    }
    return 0;
}
