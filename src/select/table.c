/*
 * table.c - the tuning table: measured choices that override the model.
 *
 * XCHG_TUNING_FILE names a text file (xchg-tune writes one); its format and
 * how auto uses it: docs/tuning.md, "The table format". Every rank must
 * read the same file: auto's agreement carries the table's checksum and
 * every rank ignores its table where the ranks' differ, so a file missing
 * on one node costs speed, never a hang. A file that cannot be read or
 * parsed counts as no table (checksum 0) and is reported, once per process
 * and file, by a rank 0 (xchg_table_warn): never ignored in silence.
 */
#include "select_internal.h"
#include "neighbor/neighbor_internal.h"
#include "sparse/sparse_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A rule line of one family: `rule` (alltoallv, on a range of ranks and
 * of the busiest rank's mean block B), `neighbor` (a range of ranks) or
 * `sparse` (a range of ranks and of the remote messages per rank M that
 * the last call's census saw). */
enum { RULE_ALLTOALLV, RULE_NEIGHBOR, RULE_SPARSE };
typedef struct rule {
    int kind;
    long long lo[2], hi[2]; /* P, then B (alltoallv) or M (sparse) */
    int algo;               /* the family's algorithm id */
    int line;
} rule;

/* Each kind's line: keyword, its name in messages, its fields, and what
 * the pairs of integers before ALGO are (the first pair: ranks). */
static const struct rule_kind {
    const char *keyword, *name, *form;
    int npairs;
    const char *field[2][2];
    const char *unit[2];
} kinds[] = {
    [RULE_ALLTOALLV] = {"rule", "rule", "PMIN PMAX BMIN BMAX ALGO", 2,
                        {{"PMIN", "PMAX"}, {"BMIN", "BMAX"}}, {"a rank count", "a byte count"}},
    [RULE_NEIGHBOR] = {"neighbor", "neighbor rule", "PMIN PMAX ALGO", 1,
                       {{"PMIN", "PMAX"}}, {"a rank count"}},
    [RULE_SPARSE] = {"sparse", "sparse rule", "PMIN PMAX MMIN MMAX ALGO", 2,
                     {{"PMIN", "PMAX"}, {"MMIN", "MMAX"}},
                     {"a rank count", "a message count"}},
};

#define MAX_RULES 256
#define MAX_WORDS 8

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char loaded_path[1024];
static int loaded;             /* path above has been read */
static rule rules[MAX_RULES]; /* both kinds, in the file's order */
static int nrules;
static double t_alpha, t_beta, t_copy, t_overhead; /* 0: not set */
static double t_setup_round, t_setup_window;        /* 0: not set */

/* The constant lines: keyword, where its value goes, its unit. */
static const struct constant_key {
    const char *keyword;
    double *value;
    const char *unit;
} constant_keys[] = {
    {"alpha", &t_alpha, "seconds"},
    {"beta", &t_beta, "seconds per byte"},
    {"copy", &t_copy, "seconds per byte"},
    {"overhead", &t_overhead, "seconds"},
    {"setup_round", &t_setup_round, "seconds"},
    {"setup_window", &t_setup_window, "seconds"},
};
enum { NCONSTANTS = sizeof constant_keys / sizeof constant_keys[0] };
static unsigned long long checksum;
static char problem[512];      /* why the table is not used ("line 3: ..."); "" if it is */
static int reported;           /* problem printed (for loaded_path) */
static int reported_differ;    /* "the ranks' tables differ" printed (once per process) */

/* The words of line, up to a '#' (a comment); MAX_WORDS + 1: more. */
static int split(char *line, char *w[MAX_WORDS])
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (n == MAX_WORDS)
            return MAX_WORDS + 1;
        w[n++] = tok;
    }
    return n;
}

static int parse_positive(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return !errno && end != s && !*end && isfinite(*v) && *v > 0;
}

static int parse_integer(const char *s, long long lo, long long *v)
{
    char *end;
    errno = 0;
    *v = strtoll(s, &end, 10);
    return !errno && end != s && !*end && *v >= lo;
}

/* A rule line's ranges (k's pairs of integers, ranks at least 1, the
 * others at least 0, each pair ordered) into r. 0, or -1 with why. */
static int parse_ranges(char **w, int n, const struct rule_kind *k, rule *r, char *why,
                        size_t len)
{
    if (n != 2 * k->npairs + 2) {
        snprintf(why, len, "a %s has %d fields (%s %s), this one %s%d", k->name,
                 2 * k->npairs + 1, k->keyword, k->form, n > MAX_WORDS ? "more than " : "",
                 n > MAX_WORDS ? MAX_WORDS - 1 : n - 1);
        return -1;
    }
    r->lo[1] = 0;
    r->hi[1] = LLONG_MAX;
    for (int p = 0; p < k->npairs; p++) {
        long long *v[2] = {&r->lo[p], &r->hi[p]};
        for (int i = 0; i < 2; i++)
            if (!parse_integer(w[1 + 2 * p + i], p == 0 ? 1 : 0, v[i])) {
                snprintf(why, len, "%s '%s' is not %s (an integer >= %d)", k->field[p][i],
                         w[1 + 2 * p + i], k->unit[p], p == 0 ? 1 : 0);
                return -1;
            }
        if (r->lo[p] > r->hi[p]) {
            snprintf(why, len, "%s %lld > %s %lld: the rule covers nothing", k->field[p][0],
                     r->lo[p], k->field[p][1], r->hi[p]);
            return -1;
        }
    }
    return 0;
}

/* The algorithm a rule names (w[n - 1]) into r->algo. 0, or -1 with why. */
static int parse_algo(const char *name, rule *r, char *why, size_t len)
{
    if (r->kind == RULE_SPARSE) {
        const xchg_sparse_info *info = xchg_sparse_registry_find_name(name);
        if (!info) {
            snprintf(why, len, "a sparse rule names pex, rsx, nbx, rma, pex_loc, nbx_loc or "
                     "pex_loc_shm (those of this build), not '%s'", name);
            return -1;
        }
        r->algo = info->id;
        return 0;
    }
    if (r->kind == RULE_NEIGHBOR) {
        const xchg_neighbor_info *info = xchg_neighbor_registry_find_name(name);
        if (!info || info->id == XCHG_NEIGHBOR_MPICH_MODEL) { /* a baseline, never a choice */
            snprintf(why, len, "a neighbor rule names direct, locality or locality_shm, not '%s'", name);
            return -1;
        }
        r->algo = info->id;
        return 0;
    }
    const xchg_algo_info *info = xchg_registry_find_name(name);
    if (!info) {
        snprintf(why, len, strcmp(name, "auto") == 0
                 ? "a rule names an algorithm, not '%s'"
                 : "unknown algorithm '%s' (xchg-bench --list names them)", name);
        return -1;
    }
    if (info->baseline && info->id != XCHG_ALGO_VENDOR) {
        snprintf(why, len, "'%s' models an MPI library's algorithm for comparison only; a rule "
                 "names an xchg algorithm or vendor", name);
        return -1;
    }
    r->algo = info->id;
    return 0;
}

/* One line's words; 0, or -1 with why. */
static int parse_line(char **w, int n, int lineno, char *why, size_t len)
{
    if (n == 0)
        return 0;
    for (int i = 0; i < NCONSTANTS; i++)
        if (strcmp(w[0], constant_keys[i].keyword) == 0) {
            if (n != 2 || !parse_positive(w[1], constant_keys[i].value)) {
                snprintf(why, len, "%s wants one number > 0 (%s)%s%s%s",
                         constant_keys[i].keyword, constant_keys[i].unit,
                         n == 2 ? ", not '" : "", n == 2 ? w[1] : "", n == 2 ? "'" : "");
                return -1;
            }
            return 0;
        }
    int kind = 0;
    while (kind < (int)(sizeof kinds / sizeof kinds[0]) && strcmp(w[0], kinds[kind].keyword))
        kind++;
    if (kind == (int)(sizeof kinds / sizeof kinds[0])) {
        snprintf(why, len, "unknown keyword '%s' (a line is alpha, beta, copy, overhead, "
                 "setup_round, setup_window, rule, neighbor or sparse)", w[0]);
        return -1;
    }
    rule r = {.kind = kind, .line = lineno};
    if (parse_ranges(w, n, &kinds[kind], &r, why, len) || parse_algo(w[n - 1], &r, why, len))
        return -1;
    if (nrules == MAX_RULES) {
        snprintf(why, len, "more than %d rules", MAX_RULES);
        return -1;
    }
    rules[nrules++] = r;
    return 0;
}

/* No rules, no constants (table_lock held). */
static void clear(void)
{
    nrules = 0;
    for (int i = 0; i < NCONSTANTS; i++)
        *constant_keys[i].value = 0;
}

/* Reads path (table_lock held). Any problem: no rules, no constants,
 * checksum 0, and `problem` says where and why. */
static void load(const char *path)
{
    clear();
    checksum = 0;
    problem[0] = '\0';
    reported = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(problem, sizeof problem, ": cannot be read (%s)", strerror(errno));
        return;
    }
    char line[1024], why[400];
    unsigned long long h = 1469598103934665603ull;
    int lineno = 0, bad = 0;
    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        for (char *p = line; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        char *w[MAX_WORDS];
        if (!strchr(line, '\n') && !feof(f)) {
            snprintf(why, sizeof why, "longer than %d characters", (int)sizeof line - 2);
            bad = 1;
        } else {
            bad = parse_line(w, split(line, w), lineno, why, sizeof why) != 0;
        }
    }
    if (!bad && ferror(f))
        snprintf(problem, sizeof problem, ": cannot be read (%s)", strerror(errno));
    else if (bad)
        snprintf(problem, sizeof problem, " line %d: %s", lineno, why);
    if (problem[0])
        clear();
    else
        checksum = h;
    fclose(f);
}

/* XCHG_TUNING_FILE, read if it is not the one loaded (table_lock held);
 * NULL where it is unset. */
static const char *current(void)
{
    const char *path = getenv("XCHG_TUNING_FILE");
    if (!path || !*path)
        return NULL;
    if (!loaded || strcmp(path, loaded_path) != 0) {
        snprintf(loaded_path, sizeof loaded_path, "%s", path);
        load(path);
        loaded = 1;
    }
    return loaded_path;
}

unsigned long long xchg_table_checksum(void)
{
    pthread_mutex_lock(&table_lock);
    unsigned long long c = current() ? checksum : 0;
    pthread_mutex_unlock(&table_lock);
    return c;
}

int xchg_table_path(char *out, size_t len)
{
    pthread_mutex_lock(&table_lock);
    const char *p = current();
    snprintf(out, len, "%s", p ? p : "");
    pthread_mutex_unlock(&table_lock);
    return p != NULL;
}

void xchg_table_warn(int rank0)
{
    if (!rank0)
        return;
    pthread_mutex_lock(&table_lock);
    if (current() && problem[0] && !reported) {
        reported = 1;
        fprintf(stderr, "xchg: warning: tuning table %s%s; the table is ignored on every "
                "rank\n", loaded_path, problem);
        fflush(stderr);
    }
    pthread_mutex_unlock(&table_lock);
}

void xchg_table_warn_differ(int rank0)
{
    if (!rank0)
        return;
    pthread_mutex_lock(&table_lock);
    int own_problem = current() && problem[0]; /* reported by xchg_table_warn */
    if (!own_problem && !reported_differ) {
        reported_differ = 1;
        fprintf(stderr, "xchg: warning: the ranks do not all read the same tuning table "
                "(XCHG_TUNING_FILE unset, different or unusable on some rank); every rank "
                "ignores its table\n");
        fflush(stderr);
    }
    pthread_mutex_unlock(&table_lock);
}

/* The table's model constants over m's (table_lock held). */
static void constants(xchg_model_params *m)
{
    if (t_alpha > 0) m->alpha = t_alpha;
    if (t_beta > 0) m->beta = t_beta;
    if (t_copy > 0) m->copy = t_copy;
    if (t_overhead > 0) m->overhead = t_overhead;
    if (t_setup_round > 0) m->setup_round = t_setup_round;
    if (t_setup_window > 0) m->setup_window = t_setup_window;
}

double xchg_table_key_of(unsigned long long checksum)
{
    return (double)(checksum >> 11); /* 53 bits: exact in a double */
}

double xchg_table_key(void)
{
    return xchg_table_key_of(xchg_table_checksum());
}

void xchg_table_constants(double key, xchg_model_params *m)
{
    if (key == 0 || xchg_table_key() != key)
        return;
    pthread_mutex_lock(&table_lock);
    constants(m);
    pthread_mutex_unlock(&table_lock);
}

/* The first rule of kind for P ranks and B (any B where any_b); -1 where
 * none applies or there is no usable table (table_lock held). */
static int first_rule(int kind, long long P, long long B, int any_b)
{
    if (!current() || checksum == 0)
        return -1;
    for (int i = 0; i < nrules; i++)
        if (rules[i].kind == kind && P >= rules[i].lo[0] && P <= rules[i].hi[0] &&
            (any_b || (B >= rules[i].lo[1] && B <= rules[i].hi[1])))
            return i;
    return -1;
}

int xchg_table_covers(int P)
{
    pthread_mutex_lock(&table_lock);
    int found = first_rule(RULE_ALLTOALLV, P, 0, 1) >= 0;
    pthread_mutex_unlock(&table_lock);
    return found;
}

/* Rule i's algorithm and line (*line 0 where i < 0). */
static int rule_at(int i, int none, int *line)
{
    *line = i >= 0 ? rules[i].line : 0;
    return i >= 0 ? rules[i].algo : none;
}

xchg_algo xchg_table_lookup(const xchg_pattern_stats *s, int *line)
{
    long long mean = s->P > 0 ? s->max_rank_bytes / s->P : 0;
    pthread_mutex_lock(&table_lock);
    xchg_algo found = (xchg_algo)rule_at(first_rule(RULE_ALLTOALLV, s->P, mean, 0),
                                         XCHG_ALGO_INVALID, line);
    pthread_mutex_unlock(&table_lock);
    return found;
}

xchg_neighbor_algo xchg_table_neighbor(int P, int *line)
{
    pthread_mutex_lock(&table_lock);
    xchg_neighbor_algo found = (xchg_neighbor_algo)rule_at(first_rule(RULE_NEIGHBOR, P, 0, 1),
                                                           XCHG_NEIGHBOR_INVALID, line);
    pthread_mutex_unlock(&table_lock);
    return found;
}

/* The census as a sparse rule's M: unknown (the communicator's first
 * call, or an algorithm without a census ran last) matches only a rule
 * for any M (MMIN 0, MMAX at least the census's clip). */
xchg_sparse_algo xchg_table_sparse(int P, long long census, int *line)
{
    pthread_mutex_lock(&table_lock);
    int i = -1;
    if (current() && checksum != 0)
        for (int k = 0; k < nrules && i < 0; k++) {
            const rule *r = &rules[k];
            int any = r->lo[1] == 0 && r->hi[1] >= XCHG_SPARSE_DEGREE_CLIP;
            long long lo = r->lo[1] < (1 << 20) ? r->lo[1] : 1 << 20; /* no overflow below */
            long long hi = r->hi[1] < (1 << 20) ? r->hi[1] : 1 << 20;
            if (r->kind == RULE_SPARSE && P >= r->lo[0] && P <= r->hi[0] &&
                (any || (census >= 0 && census >= lo * P && census <= hi * P)))
                i = k;
        }
    xchg_sparse_algo found = (xchg_sparse_algo)rule_at(i, XCHG_SPARSE_INVALID, line);
    pthread_mutex_unlock(&table_lock);
    return found;
}

int xchg_table_use(int rank, double agreed_key, int differ)
{
    xchg_table_warn(rank == 0);
    if (differ)
        xchg_table_warn_differ(rank == 0);
    return agreed_key != 0 && agreed_key == xchg_table_key();
}
