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

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rule {
    long long pmin, pmax, bmin, bmax;
    xchg_algo algo;
    int line;
} rule;

/* A neighbour rule: on PMIN..PMAX ranks. */
typedef struct nbr_rule {
    long long pmin, pmax;
    xchg_neighbor_algo algo;
    int line;
} nbr_rule;

#define MAX_RULES 256
#define MAX_WORDS 8

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char loaded_path[1024];
static int loaded;             /* path above has been read */
static rule rules[MAX_RULES];
static int nrules;
static nbr_rule nrules_nbr[MAX_RULES];
static int nnbr;
static double t_alpha, t_beta, t_copy, t_overhead; /* 0: not set */
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

/* The ranges of a rule line: n words, w[0] the keyword, then the fields
 * in form (e.g. "PMIN PMAX BMIN BMAX ALGO"), whose pairs of integers come
 * before the algorithm's name: v[2k] and v[2k + 1] are field pair k,
 * at least 1 for the rank counts (k = 0), else 0, described by unit[k].
 * 0, or -1 with why. */
static int parse_ranges(char **w, int n, const char *form, int npairs, long long *const v[],
                        const char *const unit[], char *why, size_t len)
{
    if (n != 2 * npairs + 2) {
        int plain = strcmp(w[0], "rule") == 0; /* "a rule", "a neighbor rule" */
        snprintf(why, len, "a %s%srule has %d fields (%s %s), this one %s%d",
                 plain ? "" : w[0], plain ? "" : " ", 2 * npairs + 1, w[0], form,
                 n > MAX_WORDS ? "more than " : "", n > MAX_WORDS ? MAX_WORDS - 1 : n - 1);
        return -1;
    }
    char field[2][16];
    for (int k = 0; k < npairs; k++) {
        /* the pair's names: the form's words 2k and 2k + 1 */
        const char *f = form;
        for (int skip = 0; skip < 2 * k; skip++)
            f = strchr(f, ' ') + 1;
        sscanf(f, "%15s %15s", field[0], field[1]);
        for (int i = 0; i < 2; i++)
            if (!parse_integer(w[1 + 2 * k + i], k == 0 ? 1 : 0, v[2 * k + i])) {
                snprintf(why, len, "%s '%s' is not %s (an integer >= %d)", field[i],
                         w[1 + 2 * k + i], unit[k], k == 0 ? 1 : 0);
                return -1;
            }
        if (*v[2 * k] > *v[2 * k + 1]) {
            snprintf(why, len, "%s %lld > %s %lld: the rule covers nothing", field[0], *v[2 * k],
                     field[1], *v[2 * k + 1]);
            return -1;
        }
    }
    return 0;
}

static const char *const RANKS = "a rank count";

/* A rule's fields w[1..5]; 0, or -1 with why. */
static int parse_rule(char **w, int n, rule *r, char *why, size_t len)
{
    long long *const v[] = {&r->pmin, &r->pmax, &r->bmin, &r->bmax};
    static const char *const unit[] = {RANKS, "a byte count"};
    if (parse_ranges(w, n, "PMIN PMAX BMIN BMAX ALGO", 2, v, unit, why, len))
        return -1;
    const xchg_algo_info *info = xchg_registry_find_name(w[5]);
    if (!info) {
        snprintf(why, len, strcmp(w[5], "auto") == 0
                 ? "a rule names an algorithm, not '%s'"
                 : "unknown algorithm '%s' (xchg-bench --list names them)", w[5]);
        return -1;
    }
    if (info->baseline && info->id != XCHG_ALGO_VENDOR) {
        snprintf(why, len, "'%s' models an MPI library's algorithm for comparison only; a rule "
                 "names an xchg algorithm or vendor", w[5]);
        return -1;
    }
    r->algo = info->id;
    return 0;
}

/* A neighbour rule's fields w[1..3]; 0, or -1 with why. */
static int parse_neighbor(char **w, int n, nbr_rule *r, char *why, size_t len)
{
    long long *const v[] = {&r->pmin, &r->pmax};
    static const char *const unit[] = {RANKS};
    if (parse_ranges(w, n, "PMIN PMAX ALGO", 1, v, unit, why, len))
        return -1;
    const xchg_neighbor_info *info = xchg_neighbor_registry_find_name(w[3]);
    r->algo = info ? info->id : XCHG_NEIGHBOR_INVALID;
    if (!info || r->algo == XCHG_NEIGHBOR_MPICH_MODEL) { /* a baseline, never a choice */
        snprintf(why, len, "a neighbor rule names direct or locality, not '%s'", w[3]);
        return -1;
    }
    return 0;
}

/* One line's words; 0, or -1 with why. */
static int parse_line(char **w, int n, int lineno, char *why, size_t len)
{
    static const char *const keys[] = {"alpha", "beta", "copy", "overhead"};
    double *vals[] = {&t_alpha, &t_beta, &t_copy, &t_overhead};
    if (n == 0)
        return 0;
    for (int i = 0; i < 4; i++)
        if (strcmp(w[0], keys[i]) == 0) {
            if (n != 2 || !parse_positive(w[1], vals[i])) {
                snprintf(why, len, "%s wants one number > 0 (%s)%s%s%s", keys[i],
                         i == 1 || i == 2 ? "seconds per byte" : "seconds",
                         n == 2 ? ", not '" : "", n == 2 ? w[1] : "", n == 2 ? "'" : "");
                return -1;
            }
            return 0;
        }
    if (strcmp(w[0], "neighbor") == 0) {
        nbr_rule r;
        if (parse_neighbor(w, n, &r, why, len))
            return -1;
        if (nnbr == MAX_RULES) {
            snprintf(why, len, "more than %d neighbor rules", MAX_RULES);
            return -1;
        }
        r.line = lineno;
        nrules_nbr[nnbr++] = r;
        return 0;
    }
    if (strcmp(w[0], "rule") != 0) {
        snprintf(why, len, "unknown keyword '%s' (a line is alpha, beta, copy, overhead, "
                 "rule or neighbor)", w[0]);
        return -1;
    }
    rule r;
    if (parse_rule(w, n, &r, why, len))
        return -1;
    if (nrules == MAX_RULES) {
        snprintf(why, len, "more than %d rules", MAX_RULES);
        return -1;
    }
    r.line = lineno;
    rules[nrules++] = r;
    return 0;
}

/* No rules, no constants (table_lock held). */
static void clear(void)
{
    nrules = nnbr = 0;
    t_alpha = t_beta = t_copy = t_overhead = 0;
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
}

double xchg_table_key(void)
{
    return (double)(xchg_table_checksum() >> 11); /* 53 bits: exact in a double */
}

void xchg_table_constants(double key, xchg_model_params *m)
{
    if (key == 0 || xchg_table_key() != key)
        return;
    pthread_mutex_lock(&table_lock);
    constants(m);
    pthread_mutex_unlock(&table_lock);
}

int xchg_table_covers(int P)
{
    int found = 0;
    pthread_mutex_lock(&table_lock);
    if (current() && checksum != 0)
        for (int i = 0; i < nrules && !found; i++)
            found = P >= rules[i].pmin && P <= rules[i].pmax;
    pthread_mutex_unlock(&table_lock);
    return found;
}

xchg_algo xchg_table_lookup(const xchg_pattern_stats *s, int *line)
{
    long long mean = s->P > 0 ? s->max_rank_bytes / s->P : 0;
    xchg_algo found = XCHG_ALGO_INVALID;
    *line = 0;
    pthread_mutex_lock(&table_lock);
    if (current() && checksum != 0)
        for (int i = 0; i < nrules; i++)
            if (s->P >= rules[i].pmin && s->P <= rules[i].pmax && mean >= rules[i].bmin &&
                mean <= rules[i].bmax && xchg_registry_find(rules[i].algo)) {
                found = rules[i].algo;
                *line = rules[i].line;
                break;
            }
    pthread_mutex_unlock(&table_lock);
    return found;
}

xchg_neighbor_algo xchg_table_neighbor(int P, int *line)
{
    xchg_neighbor_algo found = XCHG_NEIGHBOR_INVALID;
    *line = 0;
    pthread_mutex_lock(&table_lock);
    if (current() && checksum != 0)
        for (int i = 0; i < nnbr; i++)
            if (P >= nrules_nbr[i].pmin && P <= nrules_nbr[i].pmax) {
                found = nrules_nbr[i].algo;
                *line = nrules_nbr[i].line;
                break;
            }
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
