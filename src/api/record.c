/*
 * record.c - XCHG_RECORD=path: the count matrices of an application's
 * exchanges, for xchg-bench and xchg-tune to replay (--pattern file:PATH).
 *
 * A shape is P and the bytes every rank sends to every other (count x type
 * size). Ranks must agree whether a call's shape is new, since only a new
 * one is gathered: each rank hashes its own row (two independent 64-bit
 * hashes) and one allreduce (MPI_SUM of three uint64: the two hashes, each
 * mixed with the rank, and the number of ranks with an argument error)
 * gives every rank the same identity of the whole matrix. Each rank keeps
 * the identities seen on the communicator (the same list everywhere); a
 * new one, while the communicator has fewer than XCHG_RECORD_MAX, is
 * gathered to rank 0 (MPI_Gather of P int64). Rank 0 counts the calls of
 * each shape. So recording costs, per call, the O(P) hash and one 24-byte
 * allreduce on the private communicator, plus one gather per new shape;
 * rank 0 holds P x P int64 per shape. Recording is opt-in: the cost is
 * paid only with XCHG_RECORD set (agreed: rank 0's setting decides).
 *
 * Rank 0 of each recorded communicator keeps its shapes in one store per
 * process, which it writes (whole, replacing the file: write to a temporary
 * name, then rename) when a recorded communicator is freed and at
 * MPI_Finalize (a delete callback on MPI_COMM_SELF, which MPI_Finalize
 * frees first). The process that is rank 0 of MPI_COMM_WORLD writes PATH,
 * any other writes PATH.<its world rank> (the rank 0 of a communicator that
 * excludes world rank 0). Format (docs/record-replay.md):
 *
 *     xchg-record 1
 *     # comment lines
 *     shape <P> <calls>
 *     <P lines of P byte counts: line i = what rank i sends to ranks 0..P-1>
 *
 * Shapes are written most called first.
 */
#include "api.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the process-wide store of rank 0 --------------------------------- */

typedef struct stored_shape {
    int P;
    int comm;              /* which recorded communicator (1, 2, ...) */
    unsigned long calls;
    int64_t *bytes;        /* P x P, row i = rank i's sends */
} stored_shape;

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static stored_shape *store;
static long nstore, store_cap;
static int ncomms;          /* recorded communicators that rank 0 is in here */
static unsigned long *unrecorded; /* per communicator: calls of shapes past the max */
static int *comm_max;       /* per communicator: its XCHG_RECORD_MAX */
static char store_path[1024];
static int store_world_rank; /* read while MPI runs (SMPI calls at_finalize after) */
static int finalize_hook;   /* the MPI_COMM_SELF callback is set */

static int by_calls(const void *a, const void *b)
{
    const stored_shape *x = *(stored_shape *const *)a, *y = *(stored_shape *const *)b;
    if (x->calls != y->calls)
        return x->calls < y->calls ? 1 : -1;
    return x < y ? -1 : x > y;
}

/* Writes the store (caller holds store_lock). */
static void store_write(void)
{
    if (!store_path[0] || nstore == 0)
        return;
    char path[1100], tmp[1200];
    int wr = store_world_rank;
    if (wr == 0)
        snprintf(path, sizeof path, "%s", store_path);
    else
        snprintf(path, sizeof path, "%s.%d", store_path, wr);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    stored_shape **order = malloc(sizeof *order * (size_t)nstore);
    FILE *f = order ? fopen(tmp, "w") : NULL;
    if (!f) {
        fprintf(stderr, "xchg: XCHG_RECORD: cannot write %s\n", tmp);
        free(order);
        return;
    }
    for (long k = 0; k < nstore; k++)
        order[k] = &store[k];
    qsort(order, (size_t)nstore, sizeof *order, by_calls);
    fprintf(f, "xchg-record 1\n"
               "# written by libxchg (XCHG_RECORD) on world rank %d: the count matrix of each\n"
               "# distinct alltoallv shape, most called first. \"shape P calls\", then P\n"
               "# lines: line i holds the bytes rank i sends to ranks 0..P-1.\n"
               "# Replay: xchg-bench --pattern file:%s[:N] (N: the N-th shape, default 1)\n",
            wr, path);
    for (int c = 0; c < ncomms; c++)
        if (unrecorded[c])
            fprintf(f, "# communicator %d: %lu calls of shapes past its first %d not "
                       "recorded (XCHG_RECORD_MAX)\n", c + 1, unrecorded[c], comm_max[c]);
    for (long k = 0; k < nstore; k++) {
        const stored_shape *s = order[k];
        fprintf(f, "# shape %ld: communicator %d\nshape %d %lu\n", k + 1, s->comm, s->P,
                s->calls);
        for (int i = 0; i < s->P; i++)
            for (int j = 0; j < s->P; j++)
                fprintf(f, "%" PRId64 "%c", s->bytes[(size_t)i * (size_t)s->P + (size_t)j],
                        j == s->P - 1 ? '\n' : ' ');
    }
    free(order);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        fprintf(stderr, "xchg: XCHG_RECORD: cannot write %s\n", path);
        remove(tmp);
    }
}

static int at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm; (void)keyval; (void)value; (void)extra;
    pthread_mutex_lock(&store_lock);
    store_write();
    pthread_mutex_unlock(&store_lock);
    return MPI_SUCCESS;
}

/* A new communicator recorded on this rank 0: its number (1, 2, ...). */
static int store_new_comm(const char *path, int max)
{
    pthread_mutex_lock(&store_lock);
    int id = -1;
    unsigned long *u = realloc(unrecorded, sizeof *u * (size_t)(ncomms + 1));
    if (u)
        unrecorded = u;
    int *m = u ? realloc(comm_max, sizeof *m * (size_t)(ncomms + 1)) : NULL;
    if (m) {
        comm_max = m;
        unrecorded[ncomms] = 0;
        comm_max[ncomms] = max;
        id = ++ncomms;
    }
    if (!store_path[0]) {
        snprintf(store_path, sizeof store_path, "%s", path);
        MPI_Comm_rank(MPI_COMM_WORLD, &store_world_rank);
    }
    int hook = !finalize_hook;
    finalize_hook = 1;
    pthread_mutex_unlock(&store_lock);
    if (hook) {
        int kv = MPI_KEYVAL_INVALID;
        if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &kv, NULL) ==
                MPI_SUCCESS)
            MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
    }
    return id;
}

/* ---- per communicator ------------------------------------------------- */

typedef struct seen_shape {
    uint64_t h1, h2;
    long stored;           /* rank 0: index in the store, else -1 */
} seen_shape;

typedef struct rec_comm {
    int comm;              /* rank 0: the store's communicator number, else 0 */
    int n, max;
    seen_shape *seen;      /* max entries */
} rec_comm;

static void rec_free(void *p)
{
    rec_comm *rc = p;
    if (rc->comm > 0) {    /* rank 0: the communicator is gone, write what it did */
        pthread_mutex_lock(&store_lock);
        store_write();
        pthread_mutex_unlock(&store_lock);
    }
    free(rc->seen);
    free(rc);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The communicator's record state, made on its first recorded call (NULL:
 * no memory; this rank then takes no part in recording). */
static rec_comm *rec_state(xchg_comm_state *cs)
{
    rec_comm *rc = cs->ext[XCHG_EXT_RECORD];
    if (rc)
        return rc;
    rc = calloc(1, sizeof *rc);
    if (rc) {
        rc->max = cs->settings.record_max;
        rc->seen = calloc((size_t)rc->max, sizeof *rc->seen);
        if (!rc->seen) {
            free(rc);
            return NULL;
        }
        cs->ext[XCHG_EXT_RECORD] = rc;
        cs->ext_free[XCHG_EXT_RECORD] = rec_free;
        if (cs->rank == 0)
            rc->comm = store_new_comm(cs->settings.record_path, rc->max);
    }
    return rc;
}

/* This rank's row of byte counts (row[j]) and its two hash lanes in v[0..1]. */
static void hash_row(const int counts[], int type_size, int P, int me, int64_t *row,
                     uint64_t v[2])
{
    uint64_t h1 = 0x243f6a8885a308d3ull, h2 = 0x13198a2e03707344ull;
    for (int j = 0; j < P; j++) {
        row[j] = (int64_t)counts[j] * type_size;
        if (row[j]) {
            h1 = mix(h1 ^ mix((uint64_t)j << 1 ^ (uint64_t)row[j]));
            h2 = mix(h2 + mix((uint64_t)row[j] * 0x2545f4914f6cdd1dull + (uint64_t)j));
        }
    }
    v[0] = mix(h1 ^ mix((uint64_t)me));
    v[1] = mix(h2 + 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1));
}

/* Rank 0 keeps a new shape's matrix (taken from *all) for the file. */
static void store_shape(rec_comm *rc, seen_shape *s, int P, int count_it, int64_t **all)
{
    pthread_mutex_lock(&store_lock);
    if (nstore == store_cap) {
        long cap = store_cap ? 2 * store_cap : 16;
        stored_shape *ns = realloc(store, sizeof *ns * (size_t)cap);
        if (ns) {
            store = ns;
            store_cap = cap;
        }
    }
    if (nstore < store_cap) {
        store[nstore] = (stored_shape){P, rc->comm, count_it ? 1 : 0, *all};
        s->stored = nstore++;
        *all = NULL;
    }
    pthread_mutex_unlock(&store_lock);
}

int xchg_record_call(xchg_comm_state *cs, const int counts[], int type_size, int local_err,
                     int count_it, long *shape)
{
    *shape = -1;
    const int P = cs->size, me = cs->rank;
    rec_comm *rc = rec_state(cs);
    /* This rank's row, hashed; a rank that cannot take part (an argument
     * error, no memory) counts in the third lane and nobody records. */
    int64_t *row = local_err == MPI_SUCCESS && rc ? malloc(sizeof(int64_t) * (size_t)P) : NULL;
    uint64_t v[3] = {0, 0, row ? 0 : 1};
    if (row)
        hash_row(counts, type_size, P, me, row, v);
    int err = xchg_mpi_allreduce(MPI_IN_PLACE, v, 3, MPI_UINT64_T, MPI_SUM, cs->pcomm);
    if (err != MPI_SUCCESS || v[2] != 0) {
        free(row);
        return err;
    }
    long k = 0;
    while (k < rc->n && !(rc->seen[k].h1 == v[0] && rc->seen[k].h2 == v[1]))
        k++;
    if (k < rc->n) { /* known: rank 0 counts it */
        free(row);
        if (count_it)
            xchg_record_count(cs, k);
        *shape = k;
        return MPI_SUCCESS;
    }
    if (rc->n == rc->max) { /* past the maximum: counted only */
        free(row);
        if (me == 0 && rc->comm > 0 && count_it) {
            pthread_mutex_lock(&store_lock);
            unrecorded[rc->comm - 1]++;
            pthread_mutex_unlock(&store_lock);
        }
        return MPI_SUCCESS;
    }
    /* new: the whole matrix to rank 0, if it has the memory (agreed) */
    int64_t *all = NULL;
    int ok = 1;
    if (me == 0) {
        all = malloc(sizeof(int64_t) * (size_t)P * (size_t)P);
        ok = all != NULL;
    }
    err = P > 1 ? xchg_mpi_bcast(&ok, 1, MPI_INT, 0, cs->pcomm) : MPI_SUCCESS;
    if (err == MPI_SUCCESS && ok)
        err = xchg_mpi_gather(row, P, MPI_INT64_T, all, P, MPI_INT64_T, 0, cs->pcomm);
    free(row);
    if (err != MPI_SUCCESS || !ok) {
        free(all);
        return err;
    }
    seen_shape *s = &rc->seen[rc->n++];
    s->h1 = v[0];
    s->h2 = v[1];
    s->stored = -1;
    if (me == 0 && all && rc->comm > 0)
        store_shape(rc, s, P, count_it, &all);
    free(all);
    *shape = rc->n - 1;
    return MPI_SUCCESS;
}

void xchg_record_count(xchg_comm_state *cs, long shape)
{
    rec_comm *rc = cs->ext[XCHG_EXT_RECORD];
    if (!rc || shape < 0 || shape >= rc->n || rc->seen[shape].stored < 0)
        return;
    pthread_mutex_lock(&store_lock);
    store[rc->seen[shape].stored].calls++;
    pthread_mutex_unlock(&store_lock);
}
