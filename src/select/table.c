/*
 * table.c - the tuning table: measured choices that override the model.
 *
 * XCHG_TUNING_FILE names a text file (xchg-tune writes one):
 *     # comment
 *     alpha 1.8e-6            model constants (seconds, seconds per byte)
 *     beta 1.1e-10
 *     copy 4e-11
 *     overhead 2e-7            per posted send or receive
 *     rule PMIN PMAX BMIN BMAX ALGO
 * A rule applies when PMIN <= P <= PMAX and BMIN <= mean block bytes of the
 * busiest rank <= BMAX; the first that applies wins. The constants replace
 * the model's defaults wherever the table is agreed, at every P (select.c,
 * model_params; the neighbour model likewise), rules or not. Every rank must read
 * the same file: select.c checks a checksum across ranks and ignores the
 * table everywhere if any rank disagrees, so a missing file on one node
 * costs speed, never a hang.
 */
#include "select_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rule {
    long long pmin, pmax, bmin, bmax;
    xchg_algo algo;
} rule;

#define MAX_RULES 256

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static char loaded_path[1024];
static int loaded;             /* path above has been read */
static rule rules[MAX_RULES];
static int nrules;
static double t_alpha, t_beta, t_copy, t_overhead; /* 0: not set */
static unsigned long long checksum;

static void load(const char *path)
{
    nrules = 0;
    t_alpha = t_beta = t_copy = t_overhead = 0;
    checksum = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[512];
    unsigned long long h = 1469598103934665603ull;
    while (fgets(line, sizeof line, f)) {
        for (char *p = line; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        char name[64];
        double v;
        rule r;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "rule %lld %lld %lld %lld %63s", &r.pmin, &r.pmax, &r.bmin, &r.bmax,
                   name) == 5) {
            const xchg_algo_info *info = xchg_registry_find_name(name);
            r.algo = info ? info->id : XCHG_ALGO_INVALID;
            /* a rule naming a baseline (vendor, the MPI models) or "auto"
             * is ignored: auto never runs one, the model decides there */
            if (info && !info->baseline && nrules < MAX_RULES)
                rules[nrules++] = r;
        } else if (sscanf(line, "alpha %lf", &v) == 1) {
            t_alpha = v;
        } else if (sscanf(line, "beta %lf", &v) == 1) {
            t_beta = v;
        } else if (sscanf(line, "copy %lf", &v) == 1) {
            t_copy = v;
        } else if (sscanf(line, "overhead %lf", &v) == 1) {
            t_overhead = v;
        }
    }
    fclose(f);
    checksum = h;
}

unsigned long long xchg_table_checksum(void)
{
    const char *path = getenv("XCHG_TUNING_FILE");
    if (!path || !*path)
        return 0;
    pthread_mutex_lock(&table_lock);
    if (!loaded || strcmp(path, loaded_path) != 0) {
        snprintf(loaded_path, sizeof loaded_path, "%s", path);
        load(path);
        loaded = 1;
    }
    unsigned long long c = checksum;
    pthread_mutex_unlock(&table_lock);
    return c;
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

xchg_algo xchg_table_lookup(const xchg_pattern_stats *s)
{
    if (xchg_table_checksum() == 0)
        return XCHG_ALGO_INVALID;
    long long mean = s->P > 0 ? s->max_rank_bytes / s->P : 0;
    xchg_algo found = XCHG_ALGO_INVALID;
    pthread_mutex_lock(&table_lock);
    for (int i = 0; i < nrules; i++)
        if (s->P >= rules[i].pmin && s->P <= rules[i].pmax && mean >= rules[i].bmin &&
            mean <= rules[i].bmax && xchg_registry_find(rules[i].algo)) {
            found = rules[i].algo;
            break;
        }
    pthread_mutex_unlock(&table_lock);
    return found;
}
