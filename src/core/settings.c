/*
 * settings.c - the XCHG_* environment settings: one table, read once per
 * communicator, agreed by all its ranks.
 *
 * Ranks that run with different settings run different protocols and hang
 * (batch systems propagate environments unevenly; nodes differ in memory).
 * So the settings are read when the private duplicate of a communicator is
 * made (comm.c; that step is collective anyway) and agreed right there with
 * one small MPI_Allreduce: it carries rank 0's values, which variables
 * differed or were rejected on some rank, and the smallest default memory
 * limit. Every rank then uses rank 0's values; rank
 * 0 says on stderr (once per variable and process) what differed or was
 * rejected. Adopting rather than failing: a job whose environment reached
 * one node badly still runs, the same protocol everywhere, and says why it
 * may be slower than expected.
 *
 * A value that does not parse or is out of range is rejected: the default
 * is used and rank 0 says so. An unknown algorithm name is no number: it
 * stays an error of every call that would use it (the same on every rank,
 * since the setting is agreed).
 */
#include "core.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Unset, and the canonical value of a name that is no algorithm. */
#define VALUE_UNSET INT64_MIN
#define VALUE_UNKNOWN_NAME (INT64_MIN + 1)

/* The table: every setting of the library but the algorithms' own (their
 * files define those; xchg_algo_names.algo_setting lists them). */
static const xchg_setting_def defs[XCHG_SETTING_COUNT] = {
    [XCHG_SET_ALLTOALLV_ALGO] = {"XCHG_ALLTOALLV_ALGO", XCHG_KIND_ALGO, 0, 0, 0, NULL, NULL, "auto"},
    [XCHG_SET_SPARSE_ALGO] = {"XCHG_SPARSE_ALGO", XCHG_KIND_SPARSE_ALGO, 0, 0, 0, NULL, NULL, "auto"},
    [XCHG_SET_THROTTLE] = {"XCHG_THROTTLE", XCHG_KIND_INT, 2, 1 << 20, 32, NULL, NULL, NULL},
    [XCHG_SET_AUTO_MIN_P] = {"XCHG_AUTO_MIN_P", XCHG_KIND_INT, 1, 1 << 30, 64, NULL, NULL, NULL},
    [XCHG_SET_AUTO_REFRESH] = {"XCHG_AUTO_REFRESH", XCHG_KIND_INT, 1, 1 << 20, 64, NULL, NULL, NULL},
    [XCHG_SET_MAX_TEMP_BYTES] = {"XCHG_MAX_TEMP_BYTES", XCHG_KIND_BYTES, 0, INT64_MAX, 0, NULL, NULL,
                                 "a quarter of the smallest physical memory of all ranks"},
    [XCHG_SET_RANKS_PER_NODE] = {"XCHG_RANKS_PER_NODE", XCHG_KIND_INT, 1, INT_MAX, 0, NULL, NULL,
                                 "the shared-memory nodes"},
    [XCHG_SET_CHECK] = {"XCHG_CHECK", XCHG_KIND_INT, 0, 1, 0, NULL, NULL, NULL},
    [XCHG_SET_VERBOSE] = {"XCHG_VERBOSE", XCHG_KIND_INT, 0, 3, 0, NULL, NULL, NULL},
    /* a path: rank 0's is used (only rank 0 writes); set or not is agreed */
    [XCHG_SET_RECORD] = {"XCHG_RECORD", XCHG_KIND_PATH, 0, 0, 0, NULL, NULL, "unset"},
    [XCHG_SET_RECORD_MAX] = {"XCHG_RECORD_MAX", XCHG_KIND_INT, 1, 1 << 20, 16, NULL, NULL, NULL},
    [XCHG_SET_NEIGHBOR_ALGO] = {"XCHG_NEIGHBOR_ALGO", XCHG_KIND_NEIGHBOR_ALGO, 0, 0, 0, NULL, NULL,
                                "auto"},
    /* Requests that linear and the sparse exchanges keep posted at once
     * (TuNA's warning: at 4096+ ranks a NIC's match list overflows and the
     * job aborts). 2048 leaves everything as it was up to 1025 ranks. */
    [XCHG_SET_MAX_INFLIGHT] = {"XCHG_MAX_INFLIGHT", XCHG_KIND_INT, 2, 1 << 24, 2048, "no bound", NULL,
                               NULL},
    /* shm's packed blocks per rank and call (two such halves per rank);
     * a call that needs more runs linear once and the window grows; 0: no
     * window (shm runs linear, auto never chooses it) */
    [XCHG_SET_SHM_BYTES] = {"XCHG_SHM_BYTES", XCHG_KIND_BYTES, 0, (int64_t)1 << 40, 1 << 20, NULL,
                            NULL, NULL},
    /* The auto call at which a communicator is set up (its duplicate, node
     * map, agreement): until then MPI's own call runs (select/phase.c). */
    [XCHG_SET_SETUP_AT] = {"XCHG_SETUP_AT", XCHG_KIND_INT, 1, 1 << 30, 0,
                           "when the modelled saving repays the set-up", NULL, NULL},
};

/* Setting i: core's table, then the algorithms' own (names); NULL past
 * the last. */
static const xchg_setting_def *def_at(const xchg_algo_names *names, int i)
{
    if (i < 0)
        return NULL;
    if (i < XCHG_SETTING_COUNT)
        return &defs[i];
    if (!names || !names->algo_setting || i - XCHG_SETTING_COUNT >= XCHG_ALGO_SETTINGS_MAX)
        return NULL;
    return names->algo_setting(i - XCHG_SETTING_COUNT);
}

/* How many settings there are, the algorithms' own included. */
static int setting_count(const xchg_algo_names *names)
{
    int n = XCHG_SETTING_COUNT;
    while (def_at(names, n))
        n++;
    return n;
}

int64_t xchg_setting_of(const xchg_settings *s, const xchg_setting_def *d)
{
    for (int k = 0; k < XCHG_ALGO_SETTINGS_MAX && s->algo_def[k]; k++)
        if (s->algo_def[k] == d)
            return s->algo_value[k] == VALUE_UNSET ? d->dflt : s->algo_value[k];
    return d->dflt;
}

/* v as the docs write it: 2^k for the large powers of two, 2^31-1 and
 * 2^63-1 for the largest int and int64 */
static void format_bound(int64_t v, char *out, size_t len)
{
    int k = 0;
    while (k < 62 && ((int64_t)1 << k) < v)
        k++;
    if (v == INT64_MAX)
        snprintf(out, len, "2^63-1");
    else if (v == INT_MAX)
        snprintf(out, len, "2^31-1");
    else if (v >= 65536 && ((int64_t)1 << k) == v)
        snprintf(out, len, "2^%d", k);
    else
        snprintf(out, len, "%" PRId64, v);
}

/* The name of the algorithm id of an algorithm kind, NULL where id is none
 * (the registries are above core: no count to ask, so ids are tried). */
static const char *algo_name_of(const xchg_algo_names *names, xchg_setting_kind k, int id)
{
    const char *s = NULL;
    int back = -1;
    if (k == XCHG_KIND_ALGO && (s = names->alltoallv_name((xchg_algo)id)))
        back = (int)names->alltoallv(s);
    else if (k == XCHG_KIND_SPARSE_ALGO && (s = names->sparse_name((xchg_sparse_algo)id)))
        back = (int)names->sparse(s);
    else if (k == XCHG_KIND_NEIGHBOR_ALGO && (s = names->neighbor_name((xchg_neighbor_algo)id)))
        back = (int)names->neighbor(s);
    return back == id ? s : NULL;
}

/* "a, b, c or auto": every algorithm of a kind, from its registry. */
static void list_names(const xchg_algo_names *names, xchg_setting_kind k, char *out, size_t len)
{
    size_t n = 0;
    out[0] = 0;
    for (int id = 1; id < 256 && n < len; id++) {
        const char *s = algo_name_of(names, k, id);
        if (s)
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", s);
    }
    if (n < len)
        snprintf(out + n, len - n, "%sauto", n ? " or " : "");
}

/* What setting i accepts, in words. */
static void setting_range(const xchg_algo_names *names, int i, char *out, size_t len)
{
    const xchg_setting_def *d = def_at(names, i);
    char lo[32], hi[32];
    switch (d->kind) {
    case XCHG_KIND_ALGO:
    case XCHG_KIND_SPARSE_ALGO:
    case XCHG_KIND_NEIGHBOR_ALGO:
        list_names(names, d->kind, out, len);
        return;
    case XCHG_KIND_BARRIER:
        snprintf(out, len, "ibarrier or dissemination");
        return;
    case XCHG_KIND_PATH:
        snprintf(out, len, "a path");
        return;
    case XCHG_KIND_BYTES:
        format_bound(d->min, lo, sizeof lo);
        format_bound(d->max, hi, sizeof hi);
        snprintf(out, len, "bytes in [%s, %s], suffix K, M or G (KiB, MiB, GiB) allowed", lo, hi);
        return;
    case XCHG_KIND_INT:
        break;
    }
    size_t n = 0;
    if (d->zero_means)
        n = (size_t)snprintf(out, len, "0 (%s) or ", d->zero_means);
    if (n >= len)
        return;
    if (d->max - d->min <= 3) { /* "0 or 1", "0, 1, 2 or 3" */
        for (int64_t v = d->min; v <= d->max && n < len; v++)
            n += (size_t)snprintf(out + n, len - n, "%" PRId64 "%s", v,
                                  v == d->max ? "" : v + 1 == d->max ? " or " : ", ");
    } else {
        format_bound(d->min, lo, sizeof lo);
        format_bound(d->max, hi, sizeof hi);
        n += (size_t)snprintf(out + n, len - n, "an integer in [%s, %s]", lo, hi);
    }
    if (d->note && n < len)
        snprintf(out + n, len - n, ", %s", d->note);
}

static void setting_default(const xchg_algo_names *names, int i, char *out, size_t len)
{
    const xchg_setting_def *d = def_at(names, i);
    if (d->dflt_text)
        snprintf(out, len, "%s", d->dflt_text);
    else
        snprintf(out, len, "%" PRId64, d->dflt);
}

int xchg_setting_describe(int i, const xchg_algo_names *names, const char **name, char *range,
                          size_t rlen, char *dflt, size_t dlen)
{
    if (i < 0 || i >= setting_count(names))
        return 0;
    *name = def_at(names, i)->name;
    setting_range(names, i, range, rlen);
    setting_default(names, i, dflt, dlen);
    return 1;
}

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int parse_int(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return 0;
    *v = x;
    return 1;
}

/* "123", "1.5e9", "64K", "2MiB", "1GB": bytes, exactly representable range
 * only (1e30 is rejected, not wrapped). */
static int parse_bytes(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || !(x >= 0))
        return 0;
    switch (*end) {
    case 'k': case 'K': x *= 1024.0; end++; break;
    case 'm': case 'M': x *= 1024.0 * 1024.0; end++; break;
    case 'g': case 'G': x *= 1024.0 * 1024.0 * 1024.0; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end || !(x < 9223372036854775808.0)) /* 2^63 */
        return 0;
    *v = (int64_t)x;
    return 1;
}

/* The environment's XCHG_ variables, collected in one pass: a read of
 * every setting (a set-up, a first call's check) looks each name up
 * there instead of walking the whole environment once per setting with
 * getenv (launchers and module systems set hundreds of variables). */
enum { ENV_LISTED_MAX = 128 };
typedef struct env_list {
    int n; /* -1: more than ENV_LISTED_MAX, so getenv each */
    const char *at[ENV_LISTED_MAX];
} env_list;

extern char **environ;

static void env_collect(env_list *e)
{
    e->n = 0;
    for (char **v = environ; v && *v; v++) {
        if ((*v)[0] != 'X' || strncmp(*v, "XCHG_", 5) != 0)
            continue;
        if (e->n == ENV_LISTED_MAX) {
            e->n = -1;
            return;
        }
        e->at[e->n++] = *v;
    }
}

/* getenv(name), from e where name is an XCHG_ one. */
static const char *env_get(const env_list *e, const char *name)
{
    if (!e || e->n < 0 || strncmp(name, "XCHG_", 5) != 0)
        return getenv(name);
    const size_t len = strlen(name);
    for (int k = 0; k < e->n; k++)
        if (strncmp(e->at[k], name, len) == 0 && e->at[k][len] == '=')
            return e->at[k] + len + 1;
    return NULL;
}

/* This rank's canonical value of setting i: VALUE_UNSET, a number, or
 * VALUE_UNKNOWN_NAME - hash (names). *rejected: set but not valid. */
static int64_t read_one(const xchg_algo_names *names, const env_list *env, int i, int *rejected,
                        char *text, size_t textlen)
{
    const xchg_setting_def *d = def_at(names, i);
    const char *s = env_get(env, d->name);
    *rejected = 0;
    text[0] = 0;
    if (!s || !*s)
        return VALUE_UNSET;
    snprintf(text, textlen, "%s", s);
    int64_t v = 0;
    switch (d->kind) {
    case XCHG_KIND_ALGO: {
        xchg_algo a = names->alltoallv(s);
        return a == XCHG_ALGO_INVALID ? VALUE_UNKNOWN_NAME + (int64_t)(name_hash(s) >> 2)
                                      : (int64_t)a;
    }
    case XCHG_KIND_SPARSE_ALGO: {
        xchg_sparse_algo a = names->sparse(s);
        return a == XCHG_SPARSE_INVALID ? VALUE_UNKNOWN_NAME + (int64_t)(name_hash(s) >> 2)
                                        : (int64_t)a;
    }
    case XCHG_KIND_NEIGHBOR_ALGO: {
        xchg_neighbor_algo a = names->neighbor(s);
        return a == XCHG_NEIGHBOR_INVALID ? VALUE_UNKNOWN_NAME + (int64_t)(name_hash(s) >> 2)
                                          : (int64_t)a;
    }
    case XCHG_KIND_PATH:
        return (int64_t)(name_hash(s) >> 2); /* differs where the text does */
    case XCHG_KIND_BARRIER:
        if (strcmp(s, "ibarrier") == 0)
            return 0;
        if (strcmp(s, "dissemination") == 0)
            return 1;
        break;
    case XCHG_KIND_INT:
        if (parse_int(s, &v) &&
            ((v >= d->min && v <= d->max) || (v == 0 && d->zero_means)))
            return v;
        break;
    case XCHG_KIND_BYTES:
        if (parse_bytes(s, &v) && v >= d->min && v <= d->max)
            return v;
        break;
    }
    *rejected = 1;
    return VALUE_UNSET;
}

/* Default temporary-memory limit: a quarter of this node's physical memory
 * per process (agreed: the smallest of all ranks). */
static int64_t temp_limit_read;

static void temp_limit_once(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0 && (uint64_t)pages <= (uint64_t)INT64_MAX / (uint64_t)psize)
        temp_limit_read = (int64_t)pages * psize / 4;
    else
        temp_limit_read = (int64_t)1 << 30;
}

/* read once per process: the memory does not change, and a new
 * communicator's first call should not pay a system call for it */
static int64_t default_temp_limit(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, temp_limit_once);
    return temp_limit_read;
}

/* Rank 0 warns once per variable and kind of problem per process. */
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t warned_rejected, warned_differs;

static int first_warning(uint64_t *mask, int i)
{
    pthread_mutex_lock(&warn_lock);
    int first = !(*mask & (1ull << i));
    *mask |= 1ull << i;
    pthread_mutex_unlock(&warn_lock);
    return first;
}

static int is_algo_kind(xchg_setting_kind k)
{
    return k == XCHG_KIND_ALGO || k == XCHG_KIND_SPARSE_ALGO || k == XCHG_KIND_NEIGHBOR_ALGO;
}

static void describe(const xchg_algo_names *names, int i, int64_t v, char *out, size_t len)
{
    const xchg_setting_def *d = def_at(names, i);
    if (v == VALUE_UNSET)
        snprintf(out, len, "unset");
    else if (d->kind == XCHG_KIND_ALGO && v >= 0)
        snprintf(out, len, "%s", names->alltoallv_name((xchg_algo)v));
    else if (d->kind == XCHG_KIND_SPARSE_ALGO && v >= 0)
        snprintf(out, len, "%s", names->sparse_name((xchg_sparse_algo)v));
    else if (d->kind == XCHG_KIND_NEIGHBOR_ALGO && v >= 0)
        snprintf(out, len, "%s", names->neighbor_name((xchg_neighbor_algo)v));
    else if (d->kind == XCHG_KIND_PATH)
        snprintf(out, len, "a path");
    else if (d->kind == XCHG_KIND_BARRIER)
        snprintf(out, len, "%s", v ? "dissemination" : "ibarrier");
    else if (v < 0 && is_algo_kind(d->kind))
        snprintf(out, len, "an unknown name");
    else
        snprintf(out, len, "%" PRId64, v);
}

/* text into out (len bytes), cut to fit: snprintf's work without its
 * format parsing (every setting is applied on every read). */
static void copy_text(char *out, size_t len, const char *text)
{
    size_t n = strlen(text);
    if (n >= len)
        n = len - 1;
    memcpy(out, text, n);
    out[n] = 0;
}

static void apply(xchg_settings *s, int i, int64_t v, const char *text)
{
    if (i >= XCHG_SETTING_COUNT) { /* an algorithm's own: read with xchg_setting_of */
        s->algo_value[i - XCHG_SETTING_COUNT] = v;
        return;
    }
    int unknown = v != VALUE_UNSET && v < 0 && is_algo_kind(defs[i].kind);
    switch ((xchg_setting_id)i) {
    case XCHG_SET_ALLTOALLV_ALGO:
        s->alltoallv_algo = v == VALUE_UNSET ? XCHG_ALGO_AUTO
                            : unknown ? XCHG_ALGO_INVALID : (xchg_algo)v;
        copy_text(s->alltoallv_algo_text, sizeof s->alltoallv_algo_text, text);
        break;
    case XCHG_SET_SPARSE_ALGO:
        s->sparse_algo = v == VALUE_UNSET ? XCHG_SPARSE_AUTO
                         : unknown ? XCHG_SPARSE_INVALID : (xchg_sparse_algo)v;
        copy_text(s->sparse_algo_text, sizeof s->sparse_algo_text, text);
        break;
    case XCHG_SET_THROTTLE:
        s->throttle = (int)(v == VALUE_UNSET ? defs[i].dflt : v);
        break;
    case XCHG_SET_AUTO_MIN_P:
        s->auto_min_p = v == VALUE_UNSET ? defs[i].dflt : v;
        break;
    case XCHG_SET_AUTO_REFRESH:
        s->auto_refresh = v == VALUE_UNSET ? defs[i].dflt : v;
        break;
    case XCHG_SET_MAX_TEMP_BYTES:
        if (v != VALUE_UNSET)
            s->max_temp_bytes = (uint64_t)v > SIZE_MAX ? SIZE_MAX : (size_t)v;
        break;
    case XCHG_SET_RANKS_PER_NODE:
        s->ranks_per_node = v == VALUE_UNSET ? 0 : (long)v;
        break;
    case XCHG_SET_CHECK:
        s->check = v == VALUE_UNSET ? 0 : (int)v;
        break;
    case XCHG_SET_VERBOSE:
        s->verbose = v == VALUE_UNSET ? 0 : (int)v;
        break;
    case XCHG_SET_RECORD:
        s->record = v != VALUE_UNSET;
        copy_text(s->record_path, sizeof s->record_path, text);
        break;
    case XCHG_SET_RECORD_MAX:
        s->record_max = (int)(v == VALUE_UNSET ? defs[i].dflt : v);
        break;
    case XCHG_SET_NEIGHBOR_ALGO:
        s->neighbor_algo = v == VALUE_UNSET ? XCHG_NEIGHBOR_AUTO
                           : unknown ? XCHG_NEIGHBOR_INVALID : (xchg_neighbor_algo)v;
        copy_text(s->neighbor_algo_text, sizeof s->neighbor_algo_text, text);
        break;
    case XCHG_SET_MAX_INFLIGHT:
        s->max_inflight = (int)(v == VALUE_UNSET ? defs[i].dflt : v);
        break;
    case XCHG_SET_SHM_BYTES:
        s->shm_bytes = v == VALUE_UNSET ? defs[i].dflt : v;
        s->shm_bytes_set = v != VALUE_UNSET;
        break;
    case XCHG_SET_SETUP_AT:
        s->setup_at = v == VALUE_UNSET ? 0 : (long)v;
        break;
    case XCHG_SETTING_COUNT:
        break;
    }
}

/* The tuning table's checksum in the agreement's rejection words: each of
 * the first four carries, above the 31 bits of "1 + the rank that rejected
 * the setting", a 32-bit quarter of (checksum, ~checksum), so MAX gives
 * each half's largest and smallest value over the ranks. Where the
 * checksums differ, a word's rank bits are those of the rank with the
 * largest quarter: the warning may then name another rejecting rank, or
 * none but rank 0's own. */
#define REJECTED_MASK ((int64_t)0x7fffffff)
_Static_assert(XCHG_SETTING_COUNT >= 4, "four rejection words carry the table checksum");
_Static_assert(XCHG_SETTING_COUNT + XCHG_ALGO_SETTINGS_MAX <= 64, "one warning bit per setting");

static int64_t table_word(unsigned long long sum, int i)
{
    if (i >= 4)
        return 0;
    unsigned long long x = i < 2 ? sum : ~sum;
    return (int64_t)((i % 2 ? x >> 32 : x & 0xffffffffull) << 31);
}

static void table_agreed(const int64_t w[4], uint64_t *sum, int *differ)
{
    uint64_t q[4];
    for (int i = 0; i < 4; i++)
        q[i] = (uint64_t)w[i] >> 31;                       /* the quarter's largest */
    uint64_t lo = ~q[2] & 0xffffffffull, hi = ~q[3] & 0xffffffffull; /* smallest */
    *differ = q[0] != lo || q[1] != hi;
    *sum = *differ ? 0 : q[1] << 32 | q[0];
}

void xchg_settings_read_local(const xchg_algo_names *names, xchg_settings *s, int all)
{
    enum { NMAX = XCHG_SETTING_COUNT + XCHG_ALGO_SETTINGS_MAX };
    /* what decides whether a first call sets up, and what it reports */
    static const xchg_setting_id first[] = {XCHG_SET_ALLTOALLV_ALGO, XCHG_SET_CHECK,
                                            XCHG_SET_RECORD, XCHG_SET_SETUP_AT, XCHG_SET_VERBOSE};
    const int N = all ? setting_count(names) : XCHG_SETTING_COUNT;
    env_list env;
    env_collect(&env);
    char text[sizeof s->record_path];
    memset(s, 0, sizeof *s);
    for (int k = 0; k < N - XCHG_SETTING_COUNT && k < XCHG_ALGO_SETTINGS_MAX; k++)
        s->algo_def[k] = def_at(names, XCHG_SETTING_COUNT + k);
    s->max_temp_bytes = (size_t)default_temp_limit();
    for (int i = 0; i < N && i < NMAX; i++) {
        int rejected = 0, read = all;
        for (size_t k = 0; k < sizeof first / sizeof first[0] && !read; k++)
            read = (int)first[k] == i;
        text[0] = 0;
        int64_t v = read ? read_one(names, &env, i, &rejected, text, sizeof text) : VALUE_UNSET;
        apply(s, i, v, text);
    }
}

int xchg_settings_agree(MPI_Comm comm, const xchg_algo_names *names, xchg_settings *s,
                        int64_t extra[], int nextra)
{
    enum { NMAX = XCHG_SETTING_COUNT + XCHG_ALGO_SETTINGS_MAX };
    const int N = setting_count(names); /* the same on every rank: one build */
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int64_t mine[NMAX], root[NMAX];
    env_list env;
    env_collect(&env);
    int rejected[NMAX];
    char text[NMAX][sizeof s->record_path];
    for (int i = 0; i < N; i++)
        root[i] = mine[i] = read_one(names, &env, i, &rejected[i], text[i], sizeof text[i]);

    /* One MPI_Allreduce (MAX) agrees everything (a broadcast of rank 0's
     * values and a second reduction cost one more log P latency chain on
     * every communicator's first call): rank 0's values (the others give
     * the smallest int64), each value's smallest and largest over the
     * ranks (as MAX of ~v, which reverses the order without overflow), 1 +
     * the highest rank that rejected it, and minus the default memory
     * limit; then the caller's extra values (its own agreements, on the
     * same latency chain). The tuning table's checksum rides in the
     * rejection words' spare high bits (table_word), so agreeing it adds
     * no byte to the reduction. */
    enum { NEXTRA_MAX = 4 };
    if (nextra < 0 || nextra > NEXTRA_MAX)
        return xchg_error_code(MPI_ERR_INTERN, "xchg_settings_agree: %d extra values", nextra);
    unsigned long long table = names && names->table_checksum ? names->table_checksum() : 0;
    int64_t v[4 * NMAX + 1 + NEXTRA_MAX];
    for (int i = 0; i < N; i++) {
        v[i] = rank == 0 ? mine[i] : INT64_MIN;
        v[N + i] = mine[i];
        v[2 * N + i] = ~mine[i];
        v[3 * N + i] = (rejected[i] ? rank + 1 : 0) | table_word(table, i);
    }
    v[4 * N] = -default_temp_limit();
    for (int i = 0; i < nextra; i++)
        v[4 * N + 1 + i] = extra[i];
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 4 * N + 1 + nextra, MPI_INT64_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nextra; i++)
        extra[i] = v[4 * N + 1 + i];
    int64_t other[NMAX]; /* a value some rank has that is not rank 0's (differs) */
    for (int i = 0; i < N; i++) {
        root[i] = v[i];
        int64_t lo = ~v[2 * N + i], hi = v[N + i];
        other[i] = lo != root[i] ? lo : hi;
    }

    memset(s, 0, sizeof *s);
    for (int k = 0; k < N - XCHG_SETTING_COUNT; k++)
        s->algo_def[k] = def_at(names, XCHG_SETTING_COUNT + k);
    s->max_temp_bytes = (size_t)-v[4 * N];
    table_agreed(v + 3 * N, &s->table_checksum, &s->table_differ);
    for (int i = 0; i < N; i++)
        apply(s, i, root[i], mine[i] == root[i] ? text[i] : "(rank 0's value)");

    if (rank != 0)
        return MPI_SUCCESS;
    for (int i = 0; i < N; i++) {
        const int64_t rejected_by = v[3 * N + i] & REJECTED_MASK;
        if (rejected_by && first_warning(&warned_rejected, i)) {
            char range[1024], dflt[96];
            setting_range(names, i, range, sizeof range);
            setting_default(names, i, dflt, sizeof dflt);
            if (rejected[i])
                fprintf(stderr, "xchg: warning: %s=\"%s\" rejected: not %s; the default "
                        "(%s) is used\n", def_at(names, i)->name, text[i], range, dflt);
            else
                fprintf(stderr, "xchg: warning: %s rejected on rank %d (and perhaps others): "
                        "not %s; the default (%s) is used\n", def_at(names, i)->name,
                        (int)rejected_by - 1, range, dflt);
        }
        if (other[i] != root[i] && first_warning(&warned_differs, i)) {
            char d[96], o[96];
            describe(names, i, root[i], d, sizeof d);
            describe(names, i, other[i], o, sizeof o);
            if (def_at(names, i)->kind == XCHG_KIND_PATH && root[i] != VALUE_UNSET)
                snprintf(d, sizeof d, "\"%.80s\"", text[i]); /* rank 0's own */
            fprintf(stderr, "xchg: warning: %s differs across ranks (rank 0's value: %s; "
                    "another rank's: %s); every rank uses rank 0's\n", def_at(names, i)->name, d, o);
        }
    }
    fflush(stderr);
    return MPI_SUCCESS;
}
