/*
 * test_sparse.c - dynamic sparse data exchange: every sparse algorithm,
 * both output styles, against a reference built from MPI_Alltoall of the
 * counts + MPI_Alltoallv (random patterns of density 0, one neighbour,
 * 10% and 100%, one rank sending to all, all sending to one, self only;
 * large messages; self-sends; zero-count entries; a contiguous, a
 * non-contiguous and a zero-size datatype); then many back-to-back calls
 * with changing partners, self-checked; then errors, and one rank's error
 * agreed by the algorithms whose census carries it.
 *
 * Usage: test_sparse [ITERATIONS [ALGO... | --fallback]]
 *   ITERATIONS  back-to-back calls per loop (default 1000)
 *   ALGO...     only these algorithms' cases and back-to-back calls (the
 *               node-aggregated pex_loc, nbx_loc, pex_loc_shm run so under
 *               XCHG_RANKS_PER_NODE=1, 2, 3, where their relays work)
 *   --fallback  pex_loc, nbx_loc, pex_loc_shm on a communicator whose node layout
 *               MPI refuses (every communicator of the process taken):
 *               they run pex and nbx, right, on every rank (MPICH only;
 *               exits 77, skipped, where MPI never refuses)
 * XCHG_NBX_BARRIER=dissemination runs nbx and nbx_loc on their Isend/Irecv
 * barrier.
 */
#include "xchg.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, P, nfail, npass;

/* Whether MPI makes shared windows here: not Open MPI without its osc sm
 * component (OMPI_MCA_osc naming others only). */
static int windows_made(void)
{
    const char *osc = getenv("OMPI_MCA_osc");
    return !osc || strstr(osc, "sm") != NULL;
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
static uint64_t h4(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mix(a ^ mix(b ^ mix(c ^ mix(d))));
}

/* ---- one message as bytes, for comparing whatever the datatype ---- */
typedef struct msg {
    int source, count;
    size_t bytes;
    char *data;
} msg;

typedef struct msglist {
    msg *m;
    int n, cap;
    MPI_Datatype type;
} msglist;

static void list_add(msglist *l, int source, int count, const void *typed)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->m = realloc(l->m, (size_t)l->cap * sizeof *l->m);
    }
    int psize = 0, pos = 0;
    MPI_Pack_size(count, l->type, MPI_COMM_WORLD, &psize);
    msg *m = &l->m[l->n++];
    m->source = source;
    m->count = count;
    m->data = malloc((size_t)psize + 1);
    if (psize > 0) /* MPICH rejects a NULL buffer even for 0 bytes */
        MPI_Pack(typed, count, l->type, m->data, psize, &pos, MPI_COMM_WORLD);
    m->bytes = (size_t)pos;
}

static void list_free(msglist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->m[i].data);
    free(l->m);
    l->m = NULL;
    l->n = l->cap = 0;
}

static int cmp_src(const void *a, const void *b)
{
    const msg *x = a, *y = b;
    return (x->source > y->source) - (x->source < y->source);
}

static int collect_cb(int source, int count, const void *data, void *ctx)
{
    list_add(ctx, source, count, data);
    return 0;
}

/* ---- a random pattern of this rank ---- */
typedef struct pattern {
    int n;
    int *dests, *counts, *displs;
    int *buf;        /* send buffer, as ints */
} pattern;

enum { TY_INT, TY_VEC, TY_ZERO, TY_N };
static MPI_Datatype types[TY_N];
static const char *type_names[TY_N] = {"MPI_INT", "vector(2,1,3) of int", "size-0 type"};
static int type_ints[TY_N] = {1, 4, 0}; /* extent in ints */

enum { D_ZERO, D_ONE, D_TEN, D_ALL, D_FROM0, D_TOLAST, D_SELF, D_N };
static const char *dens_names[D_N] = {"density 0", "one neighbour", "10%", "100%",
                                      "rank 0 to all", "all to the last rank", "self only"};

static void make_pattern(pattern *p, int dens, int ty, int maxc, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    int *cand = malloc((size_t)P * sizeof *cand);
    int n = 0;
    for (int q = 0; q < P; q++) {
        uint64_t r = h4(seed, (uint64_t)rank, (uint64_t)q, 1);
        if (dens == D_ALL || (dens == D_TEN && r % 10 == 0) || (dens == D_FROM0 && rank == 0) ||
            (dens == D_TOLAST && q == P - 1) || (dens == D_SELF && q == rank))
            cand[n++] = q;
    }
    if (dens == D_ONE)
        cand[n++] = (int)(h4(seed, (uint64_t)rank, 2, 2) % (uint64_t)P);
    /* shuffle: destinations in any order */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(h4(seed, (uint64_t)rank, (uint64_t)i, 3) % (uint64_t)(i + 1));
        int t = cand[i]; cand[i] = cand[j]; cand[j] = t;
    }
    p->n = n;
    p->dests = cand;
    p->counts = malloc((size_t)(n ? n : 1) * sizeof(int));
    p->displs = malloc((size_t)(n ? n : 1) * sizeof(int));
    /* blocks laid out in reverse order with gaps; a quarter have count 0 */
    int ext = type_ints[ty] ? type_ints[ty] : 1;
    int d = 0;
    for (int i = n - 1; i >= 0; i--) {
        uint64_t r = h4(seed, (uint64_t)rank, (uint64_t)i, 4);
        p->counts[i] = (r % 4 == 0) ? 0 : 1 + (int)((r >> 8) % (uint64_t)maxc);
        d += (int)((r >> 20) % 3);
        p->displs[i] = d;
        d += p->counts[i];
    }
    size_t nints = (size_t)(d + 1) * (size_t)ext;
    p->buf = malloc(nints * sizeof(int));
    for (size_t k = 0; k < nints; k++)
        p->buf[k] = (int)(h4(seed, (uint64_t)rank, k, 5) & 0x7fffffff);
}

static void free_pattern(pattern *p)
{
    free(p->dests); free(p->counts); free(p->displs); free(p->buf);
}

/* The reference: MPI_Alltoall of counts + MPI_Alltoallv; messages sorted. */
static void reference(const pattern *p, int ty, msglist *out)
{
    MPI_Datatype t = types[ty];
    int *sc = calloc((size_t)P, sizeof(int)), *sd = calloc((size_t)P, sizeof(int));
    int *rc = calloc((size_t)P, sizeof(int)), *rd = calloc((size_t)P, sizeof(int));
    for (int i = 0; i < p->n; i++) {
        sc[p->dests[i]] = p->counts[i];
        sd[p->dests[i]] = p->displs[i];
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    int tot = 0;
    for (int q = 0; q < P; q++) {
        rd[q] = tot;
        tot += rc[q];
    }
    int ext = type_ints[ty];
    int *rb = malloc(((size_t)tot * (size_t)ext + 1) * sizeof(int));
    MPI_Alltoallv(p->buf, sc, sd, t, rb, rc, rd, t, MPI_COMM_WORLD);
    out->type = t;
    for (int q = 0; q < P; q++)
        if (rc[q] > 0)
            list_add(out, q, rc[q], rb + (size_t)rd[q] * (size_t)ext);
    free(rb); free(sc); free(sd); free(rc); free(rd);
}

static void compare(const msglist *got, const msglist *ref, const char *what)
{
    int ok = got->n == ref->n;
    CHECK(ok, "%s: %d messages, reference %d", what, got->n, ref->n);
    for (int i = 0; ok && i < got->n; i++) {
        const msg *a = &got->m[i], *b = &ref->m[i];
        if (a->source != b->source || a->count != b->count) {
            CHECK(0, "%s: message %d from %d count %d, reference from %d count %d", what, i,
                  a->source, a->count, b->source, b->count);
            return;
        }
        if (a->bytes != b->bytes || memcmp(a->data, b->data, a->bytes) != 0) {
            CHECK(0, "%s: data from rank %d differs from the reference", what, a->source);
            return;
        }
    }
    if (ok)
        npass++;
}

static void run_case(xchg_sparse_algo algo, int use_result, int dens, int ty, int maxc,
                     uint64_t seed)
{
    char what[200];
    snprintf(what, sizeof what, "%s %s %s %s maxcount %d seed %llu",
             xchg_sparse_algo_name(algo), use_result ? "result" : "callback",
             dens_names[dens], type_names[ty], maxc, (unsigned long long)seed);
    pattern p;
    make_pattern(&p, dens, ty, maxc, seed);
    msglist ref = {0}, got = {0};
    reference(&p, ty, &ref);
    got.type = types[ty];
    int rc;
    if (use_result) {
        xchg_sparse_result r;
        rc = xchg_sparse_exchange_algo(algo, p.n, p.dests, p.buf, p.counts, p.displs,
                                       types[ty], NULL, NULL, &r, MPI_COMM_WORLD);
        int tot = 0;
        for (int i = 0; rc == MPI_SUCCESS && i < r.nsources; i++) {
            CHECK(i == 0 || r.sources[i] > r.sources[i - 1], "%s: sources not ascending",
                  what);
            CHECK(r.displs[i] == tot, "%s: displs[%d] = %d, expected %d", what, i,
                  r.displs[i], tot);
            tot += r.counts[i];
            list_add(&got, r.sources[i], r.counts[i],
                     (char *)r.recvbuf + (size_t)r.displs[i] * (size_t)type_ints[ty] * 4);
        }
        xchg_sparse_result_free(&r);
        CHECK(r.nsources == 0 && r.sources == NULL && r.recvbuf == NULL,
              "%s: result not emptied by xchg_sparse_result_free", what);
    } else {
        rc = xchg_sparse_exchange_algo(algo, p.n, p.dests, p.buf, p.counts, p.displs,
                                       types[ty], collect_cb, &got, NULL, MPI_COMM_WORLD);
        if (got.n > 1) /* m is NULL when nothing arrived */
            qsort(got.m, (size_t)got.n, sizeof *got.m, cmp_src);
        for (int i = 1; i < got.n; i++)
            CHECK(got.m[i].source != got.m[i - 1].source,
                  "%s: two callbacks for source %d", what, got.m[i].source);
    }
    CHECK(rc == MPI_SUCCESS, "%s: returned %d", what, rc);
    compare(&got, &ref, what);
    list_free(&got);
    list_free(&ref);
    free_pattern(&p);
}

/* ---- back-to-back calls: a global pattern every rank can compute ---- */
static int loop_pattern(int s, int it, int *dests, int *counts)
{
    int deg = 1 + (int)(h4(7, (uint64_t)s, (uint64_t)it, 0) % (uint64_t)(P < 3 ? P : 3));
    int n = 0;
    for (int k = 0; n < deg && k < 4 * P; k++) {
        int d = (int)(h4(7, (uint64_t)s, (uint64_t)it, (uint64_t)k + 1) % (uint64_t)P);
        int dup = 0;
        for (int j = 0; j < n; j++)
            dup |= dests[j] == d;
        if (dup)
            continue;
        dests[n] = d;
        counts[n] = (int)(h4(8, (uint64_t)s, (uint64_t)it, (uint64_t)d) % 4); /* 0..3 */
        n++;
    }
    return n;
}

static int loop_value(int s, int d, int it, int j)
{
    return (int)(h4(9, (uint64_t)s, (uint64_t)d, ((uint64_t)it << 8) | (uint64_t)j) &
                 0x7fffffff);
}

typedef struct loopctx {
    int it, bad, got;
    int *expect; /* per source: expected count, -1 none */
} loopctx;

static int loop_cb(int source, int count, const void *data, void *ctx)
{
    loopctx *c = ctx;
    const int *v = data;
    c->got++;
    if (source < 0 || source >= P || c->expect[source] != count) {
        c->bad++;
        return 0;
    }
    c->expect[source] = -2; /* seen */
    for (int j = 0; j < count; j++)
        if (v[j] != loop_value(source, rank, c->it, j))
            c->bad++;
    return 0;
}

/* iters calls, algorithm it % nalgos of algos, callback and packed result
 * alternating every nalgos calls */
static void back_to_back(int iters, const xchg_sparse_algo *algos, int nalgos, const char *what)
{
    int dests[4], counts[4], sd[4], sbuf[16];
    int *expect = malloc((size_t)P * sizeof(int));
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        xchg_sparse_algo algo = algos[it % nalgos];
        int use_result = (it / nalgos) % 2;
        int n = loop_pattern(rank, it, dests, counts), k = 0;
        for (int i = 0; i < n; i++) {
            sd[i] = k;
            for (int j = 0; j < counts[i]; j++)
                sbuf[k++] = loop_value(rank, dests[i], it, j);
        }
        int nexp = 0;
        for (int s = 0; s < P; s++) {
            int d2[4], c2[4], n2 = loop_pattern(s, it, d2, c2);
            expect[s] = -1;
            for (int i = 0; i < n2; i++)
                if (d2[i] == rank && c2[i] > 0) {
                    expect[s] = c2[i];
                    nexp++;
                }
        }
        loopctx c = {it, 0, 0, expect};
        int rc;
        if (use_result) {
            xchg_sparse_result r;
            rc = xchg_sparse_exchange_algo(algo, n, dests, sbuf, counts, sd, MPI_INT, NULL,
                                           NULL, &r, MPI_COMM_WORLD);
            for (int i = 0; rc == MPI_SUCCESS && i < r.nsources; i++)
                loop_cb(r.sources[i], r.counts[i], (int *)r.recvbuf + r.displs[i], &c);
            xchg_sparse_result_free(&r);
        } else {
            rc = xchg_sparse_exchange_algo(algo, n, dests, sbuf, counts, sd, MPI_INT, loop_cb,
                                           &c, NULL, MPI_COMM_WORLD);
        }
        if (rc != MPI_SUCCESS || c.bad || c.got != nexp) {
            if (bad++ < 5)
                fprintf(stderr, "FAIL [rank %d] %s: call %d (%s): rc %d, %d bad, %d of %d "
                        "messages\n", rank, what, it, xchg_sparse_algo_name(algo), rc, c.bad,
                        c.got, nexp);
        }
    }
    CHECK(bad == 0, "%s: %d of %d calls wrong", what, bad, iters);
    free(expect);
}

/* ---- errors ---- */
static int handler_calls;
static void count_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm; (void)code;
    handler_calls++;
}

static void expect_err(const char *what, int rc, int eclass, const char *needle)
{
    int cls = MPI_SUCCESS, len = 0;
    char m[MPI_MAX_ERROR_STRING] = "";
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        xchg_error_string(rc, m, &len);
    }
    CHECK(cls == eclass, "%s: class %d, expected %d (%s)", what, cls, eclass, m);
    if (cls == eclass && needle)
        CHECK(strstr(m, needle) != NULL, "%s: message \"%s\" does not name \"%s\"", what, m,
              needle);
}

static int fail_cb(int source, int count, const void *data, void *ctx)
{
    (void)source; (void)count; (void)data;
    ++*(int *)ctx;
    return 7;
}

static void errors(void)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    msglist l = {0};
    l.type = MPI_INT;
    int buf[4] = {1, 2, 3, 4}, d2[2] = {0, 0}, c2[2] = {1, 1}, s2[2] = {0, 1};
    int bad_rank[1] = {P}, neg_rank[1] = {-1}, neg[1] = {-1}, one[1] = {1}, zero[1] = {0};
    handler_calls = 0;
    expect_err("duplicate dests", xchg_sparse_exchange(2, d2, buf, c2, s2, MPI_INT,
               collect_cb, &l, comm), MPI_ERR_ARG, "dests[0] and dests[1]");
    expect_err("dest == size", xchg_sparse_exchange(1, bad_rank, buf, one, zero, MPI_INT,
               collect_cb, &l, comm), MPI_ERR_RANK, "dests[0]");
    expect_err("dest -1", xchg_sparse_exchange_algo(XCHG_SPARSE_NBX, 1, neg_rank, buf, one,
               zero, MPI_INT, collect_cb, &l, NULL, comm), MPI_ERR_RANK, "dests[0]");
    expect_err("negative count", xchg_sparse_exchange(1, zero, buf, neg, zero, MPI_INT,
               collect_cb, &l, comm), MPI_ERR_COUNT, "sendcounts[0]");
    expect_err("negative ndest", xchg_sparse_exchange(-1, zero, buf, one, zero, MPI_INT,
               collect_cb, &l, comm), MPI_ERR_ARG, "ndest");
    expect_err("NULL dests", xchg_sparse_exchange(1, NULL, buf, one, zero, MPI_INT,
               collect_cb, &l, comm), MPI_ERR_ARG, "dests");
    expect_err("NULL fn", xchg_sparse_exchange(0, NULL, buf, NULL, NULL, MPI_INT, NULL, NULL,
               comm), MPI_ERR_ARG, "fn");
    expect_err("NULL result", xchg_sparse_exchange_result(0, NULL, buf, NULL, NULL, MPI_INT,
               NULL, comm), MPI_ERR_ARG, "result");
    xchg_sparse_result r;
    expect_err("fn and result", xchg_sparse_exchange_algo(XCHG_SPARSE_PEX, 0, NULL, buf, NULL,
               NULL, MPI_INT, collect_cb, &l, &r, comm), MPI_ERR_ARG, "exactly one");
    expect_err("bad algo", xchg_sparse_exchange_algo((xchg_sparse_algo)99, 0, NULL, buf, NULL,
               NULL, MPI_INT, NULL, NULL, &r, comm), MPI_ERR_ARG, "algo 99");
    expect_err("null type", xchg_sparse_exchange(0, NULL, buf, NULL, NULL, MPI_DATATYPE_NULL,
               collect_cb, &l, comm), MPI_ERR_TYPE, "type");
    /* settings are read once per communicator: new ones see setenv's */
    MPI_Comm ecomm;
    setenv("XCHG_SPARSE_ALGO", "bogus", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &ecomm);
    MPI_Comm_set_errhandler(ecomm, eh);
    expect_err("XCHG_SPARSE_ALGO=bogus", xchg_sparse_exchange(0, NULL, buf, NULL, NULL,
               MPI_INT, collect_cb, &l, ecomm), MPI_ERR_ARG, "'bogus'");
    MPI_Comm_free(&ecomm);
    CHECK(handler_calls == 12, "error handler called %d times, expected 12", handler_calls);
    /* forcing through the environment works and stays collective */
    for (int a = 0; a < xchg_sparse_algo_count(); a++) {
        setenv("XCHG_SPARSE_ALGO", xchg_sparse_algo_name(xchg_sparse_algo_at(a)), 1);
        MPI_Comm_dup(MPI_COMM_WORLD, &ecomm);
        MPI_Comm_set_errhandler(ecomm, eh);
        int to = (rank + 1) % P, cnt = 2;
        l.n = 0;
        int rc = xchg_sparse_exchange(1, &to, buf, &cnt, zero, MPI_INT, collect_cb, &l, ecomm);
        xchg_stats st;
        xchg_get_stats(ecomm, &st); /* the communicator the exchange ran on */
        MPI_Comm_free(&ecomm);
        CHECK(rc == MPI_SUCCESS && l.n == 1 && l.m[0].source == (rank + P - 1) % P,
              "XCHG_SPARSE_ALGO=%s: rc %d, %d messages",
              xchg_sparse_algo_name(xchg_sparse_algo_at(a)), rc, l.n);
        /* pex_loc_shm runs pex_loc, and says so, only where MPI refuses
         * shared windows (Open MPI without osc sm) */
        int ran = st.sparse_algo == XCHG_SPARSE_PEX_LOC &&
                          xchg_sparse_algo_at(a) == XCHG_SPARSE_PEX_LOC_SHM && !windows_made()
                      ? XCHG_SPARSE_PEX_LOC_SHM : st.sparse_algo;
        CHECK(ran == (int)xchg_sparse_algo_at(a) && st.algo == XCHG_ALGO_INVALID,
              "XCHG_SPARSE_ALGO=%s: xchg_get_stats says sparse_algo %d",
              xchg_sparse_algo_name(xchg_sparse_algo_at(a)), st.sparse_algo);
        list_free(&l);
        l.type = MPI_INT;
    }
    unsetenv("XCHG_SPARSE_ALGO");
    /* a failing callback: the exchange completes everywhere, MPI_ERR_OTHER */
    for (int a = 0; a < xchg_sparse_algo_count(); a++) {
        int to[2] = {(rank + 1) % P, rank}, cnt[2] = {1, 1}, calls = 0;
        int n = P > 1 ? 2 : 1;
        if (P == 1) to[0] = rank;
        int rc = xchg_sparse_exchange_algo(xchg_sparse_algo_at(a), n, to, buf, cnt, s2,
                                           MPI_INT, fail_cb, &calls, NULL, comm);
        expect_err("callback returning 7", rc, MPI_ERR_OTHER, "returned 7");
        CHECK(calls == 1, "failing callback called %d times, expected once", calls);
    }
    /* and the communicator still works */
    int to = (rank + 1) % P, cnt = 1;
    xchg_sparse_result res;
    int rc = xchg_sparse_exchange_result(1, &to, buf, &cnt, zero, MPI_INT, &res, comm);
    CHECK(rc == MPI_SUCCESS && res.nsources == 1 && ((int *)res.recvbuf)[0] == 1,
          "exchange after errors: rc %d", rc);
    xchg_sparse_result_free(&res);
    {
        /* auto resolves to a named algorithm, the same on every rank; an
         * alltoallv afterwards reports no sparse algorithm */
        xchg_stats st;
        xchg_get_stats(comm, &st);
        int lo, hi;
        MPI_Allreduce(&st.sparse_algo, &lo, 1, MPI_INT, MPI_MIN, comm);
        MPI_Allreduce(&st.sparse_algo, &hi, 1, MPI_INT, MPI_MAX, comm);
        CHECK(lo == hi &&
                  strcmp(xchg_sparse_algo_name((xchg_sparse_algo)st.sparse_algo), "invalid") &&
                  st.sparse_algo != XCHG_SPARSE_AUTO,
              "auto: xchg_get_stats sparse_algo %d (min %d max %d)", st.sparse_algo, lo, hi);
        int one = 1;
        int *ones = malloc(sizeof(int) * P), *zs = calloc(P, sizeof(int));
        for (int j = 0; j < P; j++) ones[j] = 0;
        ones[rank] = one;
        int v = 5, w = 0;
        xchg_alltoallv(&v, ones, zs, MPI_INT, &w, ones, zs, MPI_INT, comm);
        xchg_get_stats(comm, &st);
        CHECK(st.sparse_algo == XCHG_SPARSE_INVALID && st.algo != XCHG_ALGO_INVALID && w == 5,
              "after an alltoallv: sparse_algo %d, algo %d", st.sparse_algo, (int)st.algo);
        free(ones); free(zs);
    }
    CHECK(xchg_sparse_algo_from_name("nbx") == XCHG_SPARSE_NBX &&
          xchg_sparse_algo_from_name("auto") == XCHG_SPARSE_AUTO &&
          xchg_sparse_algo_from_name("bruck") == XCHG_SPARSE_INVALID &&
          !strcmp(xchg_sparse_algo_name(XCHG_SPARSE_INVALID), "invalid"), "name <-> id");
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
}

/* ---- one rank's error, agreed where a census carries it ---- */
static int carries_errors(xchg_sparse_algo a)
{
    return a == XCHG_SPARSE_PEX || a == XCHG_SPARSE_RSX || a == XCHG_SPARSE_PEX_LOC ||
           a == XCHG_SPARSE_AUTO;
}

/* Every rank's class, checked the same on all (and `expect` everywhere). */
static void expect_agreed(const char *what, int rc, int expect)
{
    int cls = MPI_SUCCESS, lo, hi;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    MPI_Allreduce(&cls, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&cls, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(lo == hi && cls == expect, "%s: class %d here (min %d, max %d over ranks), "
          "expected %d everywhere", what, cls, lo, hi, expect);
}

static void agreed_errors(const xchg_sparse_algo *algos, int nalgos)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int a = 0; a < nalgos; a++) {
        if (!carries_errors(algos[a]))
            continue;
        const char *name = xchg_sparse_algo_name(algos[a]);
        char w[160];
        int buf[2] = {7, 8}, cnt[2] = {1, 1}, dsp[2] = {0, 1};
        /* to the next rank and to self; rank `bad` names rank P instead */
        for (int bad = 0; bad < P; bad += P > 1 ? P - 1 : 1) {
            int to[2] = {(rank + 1) % P, rank};
            int n = P > 1 ? 2 : 1;
            if (rank == bad)
                to[0] = P;
            xchg_sparse_result r;
            int rc = xchg_sparse_exchange_algo(algos[a], n, to, buf, cnt, dsp, MPI_INT, NULL,
                                               NULL, &r, comm);
            snprintf(w, sizeof w, "%s, dests[0] = P on rank %d only", name, bad);
            expect_agreed(w, rc, MPI_ERR_RANK);
            CHECK(r.nsources == 0 && !r.recvbuf, "%s: a failed call leaves an empty result", w);
            xchg_sparse_result_free(&r);
        }
        /* rank 0 refused temporary memory (XCHG_FAULT_TEMP_LIMIT is read per
         * call, on that rank only): pex_loc refuses its bundles before any
         * data moves and the refusal is agreed through its census */
        if (algos[a] == XCHG_SPARSE_PEX_LOC) {
            int to[2] = {(rank + 1) % P, rank};
            int n = P > 1 ? 2 : 1;
            if (rank == 0)
                setenv("XCHG_FAULT_TEMP_LIMIT", "1", 1);
            xchg_sparse_result r;
            int rc = xchg_sparse_exchange_algo(algos[a], n, to, buf, cnt, dsp, MPI_INT, NULL,
                                               NULL, &r, comm);
            unsetenv("XCHG_FAULT_TEMP_LIMIT");
            snprintf(w, sizeof w, "%s, no temporary memory on rank 0", name);
            expect_agreed(w, rc, P > 1 ? MPI_ERR_NO_MEM : MPI_SUCCESS);
            xchg_sparse_result_free(&r);
        }
        /* and the communicator still works */
        int to[2] = {(rank + 1) % P, rank};
        xchg_sparse_result r;
        int rc = xchg_sparse_exchange_algo(algos[a], P > 1 ? 2 : 1, to, buf, cnt, dsp, MPI_INT,
                                           NULL, NULL, &r, comm);
        int ok = rc == MPI_SUCCESS && r.nsources == (P > 1 ? 2 : 1);
        for (int i = 0; ok && i < r.nsources; i++)
            ok = ((int *)r.recvbuf)[r.displs[i]] == (r.sources[i] == rank && P > 1 ? 8 : 7);
        snprintf(w, sizeof w, "%s: a good call after the agreed errors", name);
        CHECK(ok, "%s: rc %d, %d sources", w, rc, r.nsources);
        xchg_sparse_result_free(&r);
    }
    MPI_Comm_free(&comm);
}

/* pex_loc, nbx_loc and pex_loc_shm where MPI refuses the node layout's
 * communicator: every communicator id taken but two (the library's private
 * duplicate, then its node split fails on every rank alike); they must run
 * pex, nbx and pex and give the right messages. Returns 0 when MPI never refused. */
static int fallback(void)
{
    enum { MAX_COMMS = 5000 };
    MPI_Comm *held = malloc(sizeof(MPI_Comm) * MAX_COMMS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int n = 0, refused = 0;
    while (n < MAX_COMMS) {
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &held[n]);
        int ok = rc == MPI_SUCCESS, all;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        if (!all) {
            if (ok)
                MPI_Comm_free(&held[n]);
            refused = 1;
            break;
        }
        n++;
    }
    if (refused) {
        /* room for the application's communicator and xchg's duplicate */
        for (int k = 0; k < 2 && n > 0; k++)
            MPI_Comm_free(&held[--n]);
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        xchg_sparse_algo la[3] = {XCHG_SPARSE_PEX_LOC, XCHG_SPARSE_NBX_LOC,
                                  XCHG_SPARSE_PEX_LOC_SHM};
        for (int a = 0; a < 3; a++)
            for (int call = 0; call < 3; call++) {
                int to[2] = {(rank + 1) % P, rank}, buf[2] = {7, 8}, cnt[2] = {1, 1};
                int dsp[2] = {0, 1};
                xchg_sparse_result r;
                int rc = xchg_sparse_exchange_algo(la[a], P > 1 ? 2 : 1, to, buf, cnt, dsp,
                                                   MPI_INT, NULL, NULL, &r, comm);
                int ok = rc == MPI_SUCCESS && r.nsources == (P > 1 ? 2 : 1);
                for (int i = 0; ok && i < r.nsources; i++)
                    ok = ((int *)r.recvbuf)[r.displs[i]] ==
                         (r.sources[i] == rank && P > 1 ? 8 : 7);
                char w[120];
                snprintf(w, sizeof w, "%s without a node layout, call %d",
                         xchg_sparse_algo_name(la[a]), call);
                CHECK_ALL(ok, "%s: rc %d, %d sources", w, rc, r.nsources);
                xchg_stats st;
                xchg_get_stats(comm, &st);
                xchg_sparse_algo plain = a == 1 ? XCHG_SPARSE_NBX : XCHG_SPARSE_PEX;
                CHECK_ALL(st.sparse_algo == (int)plain, "%s: the stats say %d ran, not %s", w,
                          st.sparse_algo, xchg_sparse_algo_name(plain));
                xchg_sparse_result_free(&r);
            }
        MPI_Comm_free(&comm);
    }
    while (n > 0)
        MPI_Comm_free(&held[--n]);
    free(held);
    return refused;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    xchg_sparse_algo algos[16];
    int nalgos = 0, only = argc > 2;
    if (argc > 2 && strcmp(argv[2], "--fallback") == 0) {
        int refused = fallback();
        int all[2] = {nfail, npass}, sum[2];
        MPI_Allreduce(all, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("test_sparse --fallback on %d ranks: %s%d checks passed, %d failed\n", P,
                   refused ? "" : "SKIPPED (MPI never refused a communicator), ", sum[1],
                   sum[0]);
        MPI_Finalize();
        return sum[0] ? 1 : refused ? 0 : 77;
    }
    for (int i = 2; i < argc && nalgos < 16; i++) {
        algos[nalgos] = xchg_sparse_algo_from_name(argv[i]);
        if (algos[nalgos] == XCHG_SPARSE_INVALID || algos[nalgos] == XCHG_SPARSE_AUTO) {
            if (rank == 0)
                fprintf(stderr, "test_sparse: %s is no sparse algorithm\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        nalgos++;
    }
    for (int a = 0; !only && a < xchg_sparse_algo_count() && nalgos < 16; a++)
        algos[nalgos++] = xchg_sparse_algo_at(a);
    const char *bar = getenv("XCHG_NBX_BARRIER");
    const char *rpn = getenv("XCHG_RANKS_PER_NODE");
    if (rank == 0)
        printf("test_sparse on %d ranks, %d back-to-back calls, nbx barrier %s, "
               "ranks per node %s\n", P, iters, bar && *bar ? bar : "MPI_Ibarrier",
               rpn && *rpn ? rpn : "(shared memory)");
    types[TY_INT] = MPI_INT;
    MPI_Type_vector(2, 1, 3, MPI_INT, &types[TY_VEC]);
    MPI_Type_commit(&types[TY_VEC]);
    MPI_Type_contiguous(0, MPI_INT, &types[TY_ZERO]);
    MPI_Type_commit(&types[TY_ZERO]);

    for (int a = 0; a < nalgos; a++) {
        xchg_sparse_algo algo = algos[a];
        for (int out = 0; out < 2; out++) {
            for (int dens = 0; dens < D_N; dens++)
                for (int ty = 0; ty < TY_N; ty++)
                    for (uint64_t seed = 1; seed <= (dens <= D_ALL ? 3u : 1u); seed++)
                        run_case(algo, out, dens, ty, 5, seed * 100 + (uint64_t)dens);
            /* large messages: rendezvous protocols, several in flight */
            run_case(algo, out, D_ONE, TY_INT, 300000, 11);
            run_case(algo, out, D_ALL, TY_INT, 60000, 12);
            run_case(algo, out, D_ALL, TY_VEC, 30000, 13);
            run_case(algo, out, D_TOLAST, TY_VEC, 20000, 14);
        }
        run_case(XCHG_SPARSE_AUTO, a % 2, D_TEN, TY_INT, 50, 20 + (uint64_t)a);
    }
    /* A caller's message on its own communicator, with a tag of the sparse
     * range, waits through all back-to-back calls: the library's
     * Probe/Iprobe(MPI_ANY_SOURCE) must never take it. */
    int mine = 1000 + rank, theirs = -1;
    MPI_Request ureq;
    MPI_Isend(&mine, 1, MPI_INT, (rank + 1) % P, 200, MPI_COMM_WORLD, &ureq);
    if (only) {
        for (int a = 0; a < nalgos; a++) {
            char what[80];
            snprintf(what, sizeof what, "%s back-to-back", xchg_sparse_algo_name(algos[a]));
            back_to_back(iters, &algos[a], 1, what);
        }
    } else {
        xchg_sparse_algo nbx = XCHG_SPARSE_NBX;
        back_to_back(iters, &nbx, 1, "nbx back-to-back");
    }
    back_to_back(iters, algos, nalgos, only ? "the named algorithms back-to-back"
                                            : "all algorithms back-to-back");
    MPI_Recv(&theirs, 1, MPI_INT, (rank + P - 1) % P, 200, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&ureq, MPI_STATUS_IGNORE);
    CHECK(theirs == 1000 + (rank + P - 1) % P, "caller's message changed: %d", theirs);
    errors();
    agreed_errors(algos, nalgos);

    MPI_Type_free(&types[TY_VEC]);
    MPI_Type_free(&types[TY_ZERO]);
    int all[2] = {nfail, npass}, sum[2];
    MPI_Allreduce(all, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_sparse on %d ranks: %d checks passed, %d failed\n", P, sum[1], sum[0]);
    MPI_Finalize();
    return sum[0] ? 1 : 0;
}
