/*
 * patterns.c - count patterns of xchg-bench (see patterns.h).
 *
 * Randomness comes from a counter-based hash (splitmix64's finaliser) of
 * (seed, stream, i, j, iter), never from a generator's state, so any block
 * can be computed on its own, in any order, on any rank. Partner sets and
 * orders are keyed pseudo-random permutations of [0, P) (a small Feistel
 * network with cycle walking), so "is j among i's k partners" is O(1) and
 * each rank has exactly k of them.
 */
#include "patterns.h"

#include <math.h>
#include <string.h>

static const char *const names[PAT_COUNT] = {"uniform", "random", "sparse", "zipf",
                                             "hot",     "transpose", "file"};

const char *bench_pattern_name(bench_pattern_kind kind)
{
    return (kind >= 0 && kind < PAT_COUNT) ? names[kind] : NULL;
}

bench_pattern_kind bench_pattern_from_name(const char *name)
{
    for (int k = 0; k < PAT_COUNT; k++)
        if (strcmp(names[k], name) == 0)
            return (bench_pattern_kind)k;
    return PAT_COUNT;
}

int bench_pattern_varies(const bench_pattern *p) { return p->kind == PAT_SPARSE; }

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Streams keep the patterns' random choices independent of each other. */
enum { S_RANDOM = 1, S_SPARSE_SET, S_SPARSE_SIZE, S_ZIPF, S_HOT };

static uint64_t hash(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b, uint64_t c)
{
    return mix(mix(mix(mix(seed ^ (stream << 56)) ^ a) ^ b) ^ c);
}

/* A keyed bijection of [0, n): 4 Feistel rounds over the smallest even
 * number of bits that holds n-1, walking the cycle until back in range
 * (the domain is < 4n, so a few steps on average). */
static int64_t permute(uint64_t key, int64_t n, int64_t x)
{
    if (n <= 1)
        return 0;
    int bits = 0;
    while (((int64_t)1 << bits) < n)
        bits++;
    int half = (bits + 1) / 2;
    uint64_t mask = ((uint64_t)1 << half) - 1;
    uint64_t v = (uint64_t)x;
    do {
        uint64_t L = v >> half, R = v & mask;
        for (uint64_t r = 0; r < 4; r++) {
            uint64_t t = L ^ (mix(key ^ (r << 60) ^ R) & mask);
            L = R;
            R = t;
        }
        v = (L << half) | R;
    } while (v >= (uint64_t)n);
    return (int64_t)v;
}

/* 2decomp's split of n points over P ranks: the first P - n%P ranks get
 * n/P, the others one more. */
static int64_t split(int64_t n, int P, int i)
{
    int64_t q = n / P, extra = n % P;
    return q + (i >= P - extra ? 1 : 0);
}

int bench_layout_init(bench_layout *l, const bench_pattern *p, int P, int64_t avg,
                      int elem_bytes)
{
    memset(l, 0, sizeof *l);
    l->p = p;
    l->P = P;
    l->avg = avg;
    l->elem_bytes = elem_bytes;
    if (p->kind == PAT_ZIPF)
        for (int r = 1; r <= P; r++)
            l->zipf_h += pow((double)r, -p->zipf_s);
    if (p->kind == PAT_SPARSE) {
        l->sparse_k = (int64_t)ceil(p->density * P);
        if (l->sparse_k < 1)
            l->sparse_k = 1;
        if (l->sparse_k > P)
            l->sparse_k = P;
    }
    if (p->kind == PAT_TRANSPOSE) {
        /* Grid points are doubles; n1 * n2 = points per block * P^2, with
         * both sides not multiples of P so that the split is uneven. */
        double pts = (double)avg * elem_bytes / 8.0;
        int64_t n1 = llround(P * sqrt(pts));
        if (n1 < 1)
            n1 = 1;
        if (P > 1 && n1 % P == 0)
            n1 += P / 2;
        int64_t n2 = llround(pts * P * (double)P / (double)n1);
        if (n2 < 1)
            n2 = 1;
        if (P > 1 && n2 % P == 0)
            n2 += (n2 > P ? -1 : 1);
        l->n1 = n1;
        l->n2 = n2;
    }
    return 0;
}

int64_t bench_count(const bench_layout *l, int i, int j, long iter)
{
    const bench_pattern *p = l->p;
    int64_t a = l->avg;
    int P = l->P;
    switch (p->kind) {
    case PAT_UNIFORM:
        return a;
    case PAT_RANDOM:
        return (int64_t)(hash(p->seed, S_RANDOM, (uint64_t)i, (uint64_t)j, 0) %
                         (uint64_t)(2 * a + 1));
    case PAT_SPARSE: {
        uint64_t key = hash(p->seed, S_SPARSE_SET, (uint64_t)i, (uint64_t)iter, 0);
        if (permute(key, P, j) >= l->sparse_k)
            return 0;
        /* [a - a/2, a + a/2]: mean a, never 0 */
        uint64_t h = hash(p->seed, S_SPARSE_SIZE, (uint64_t)i, (uint64_t)j, (uint64_t)iter);
        return a - a / 2 + (int64_t)(h % (uint64_t)(2 * (a / 2) + 1));
    }
    case PAT_ZIPF: {
        /* the destination of rank r in i's own random order gets 1/r^s */
        int64_t r = permute(hash(p->seed, S_ZIPF, (uint64_t)i, 0, 0), P, j) + 1;
        return llround((double)a * P * pow((double)r, -p->zipf_s) / l->zipf_h);
    }
    case PAT_HOT: {
        int h = p->hot < P ? p->hot : P;
        if (h == P)
            return a;
        int is_hot = permute(hash(p->seed, S_HOT, 0, 0, 0), P, j) < h;
        double share = is_hot ? p->hot_fraction / h : (1.0 - p->hot_fraction) / (P - h);
        return llround((double)a * P * share);
    }
    case PAT_TRANSPOSE: {
        /* rank i holds split(n1) rows of all n2 columns and gets split(n2)
         * columns of all n1 rows: it sends rank j its rows x j's columns */
        int64_t pts = split(l->n1, P, i) * split(l->n2, P, j);
        return pts * 8 / l->elem_bytes;
    }
    case PAT_FILE: {
        /* the recorded bytes, in whole elements (rounded up) */
        int64_t b = p->rec ? bench_record_bytes(p->rec, P, i, j) : 0;
        return (b + l->elem_bytes - 1) / l->elem_bytes;
    }
    default:
        return 0;
    }
}

void bench_row_col(const bench_layout *l, int me, long iter, int64_t *send, int64_t *recv)
{
    for (int j = 0; j < l->P; j++) {
        send[j] = bench_count(l, me, j, iter);
        recv[j] = bench_count(l, j, me, iter);
    }
}
