/*
 * test_bench_patterns.c - xchg-bench's count patterns do what they say
 * (tools/bench/patterns.h), at many P, without MPI: determinism, ranges,
 * exactly k sparse partners that change between iterations, Zipf shares
 * that are a permutation of 1/r^s, hot receivers' share, and transpose
 * blocks that tile an unevenly split grid; record files (XCHG_RECORD) read
 * back, bad ones refused with the line, and replayed at their P exactly and
 * at other P by the documented rule.
 * Prints "N passed, M failed"; exits non-zero on any failure.
 */
#include "patterns.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_NO_MPI
#include "check.h"

static int npass, nfail;

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Record files: the format XCHG_RECORD writes (src/core/record.c). */
static void test_record_files(void)
{
    char path[64], err[512], p2[64];
    snprintf(path, sizeof path, "/tmp/xchg-test-record-%ld.txt", (long)rand());
    write_file(path, "xchg-record 1\n# comment\n\n"
                     "# shape 1\nshape 3 7\n0 1 2\n10 11 12\n20 21 22\n"
                     "shape 2 5\n5 0\n0 9\n");
    bench_record rec;
    int ok = bench_record_read(path, 1, &rec, err, sizeof err) == 0;
    CHECK(ok && rec.P0 == 3 && rec.calls == 7 && rec.nshapes == 2 && rec.index == 1,
          "record: shape 1 read (P=%d, avg=%ld)", 3, 0L);
    if (ok) {
        int same = 1;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                same &= bench_record_bytes(&rec, 3, i, j) == 10 * i + j;
        CHECK(same, "record: replayed at its P, the recorded bytes (P=%d, avg=%ld)", 3, 0L);
        /* at 6 = 2 x 3 ranks: rank i plays recorded rank i/2 */
        same = 1;
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++)
                same &= bench_record_bytes(&rec, 6, i, j) == 10 * (i / 2) + j / 2;
        CHECK(same, "record: at 2 P, each recorded rank played twice (P=%d, avg=%ld)", 6, 0L);
        /* at 2 ranks: recorded ranks 0 and 1 (floor(i * 3 / 2)) */
        same = bench_record_bytes(&rec, 2, 0, 1) == 1 && bench_record_bytes(&rec, 2, 1, 1) == 11;
        CHECK(same, "record: at fewer ranks, a subset (P=%d, avg=%ld)", 2, 0L);
        /* elements of the file pattern round bytes up */
        bench_pattern fp = {PAT_FILE, 1, 0, 0, 0, 0, &rec};
        bench_layout l;
        bench_layout_init(&l, &fp, 3, 1, 8);
        CHECK(bench_count(&l, 2, 1, 0) == 3 && bench_count(&l, 0, 0, 0) == 0,
              "record: doubles round up (P=%d, avg=%ld)", 3, 8L);
        bench_layout_init(&l, &fp, 3, 1, 1);
        CHECK(bench_count(&l, 2, 1, 0) == 21, "record: bytes as they were (P=%d, avg=%ld)", 3, 1L);
        bench_record_free(&rec);
    }
    ok = bench_record_read(path, 2, &rec, err, sizeof err) == 0;
    CHECK(ok && rec.P0 == 2 && rec.calls == 5 && bench_record_bytes(&rec, 2, 1, 1) == 9,
          "record: shape 2 read (P=%d, avg=%ld)", 2, 0L);
    if (ok)
        bench_record_free(&rec);
    CHECK(bench_record_read(path, 3, &rec, err, sizeof err) != 0 &&
          strstr(err, "has 2 shapes, not a shape 3"), "record: a missing shape is refused");
    int idx = 0;
    CHECK(bench_record_spec("a:b/c.txt:4", p2, sizeof p2, &idx) == 0 && idx == 4 &&
          strcmp(p2, "a:b/c.txt") == 0 && bench_record_spec("x.txt", p2, sizeof p2, &idx) == 0 &&
          idx == 1 && bench_record_spec("x.txt:0", p2, sizeof p2, &idx) != 0,
          "record: file:PATH[:N]");
    write_file(path, "xchg-record 1\nshape 2 1\n1 2\n3\n");
    CHECK(bench_record_read(path, 1, &rec, err, sizeof err) != 0 && strstr(err, "shape 1") &&
          strstr(err, "found the end"), "record: a short matrix is refused with its line");
    write_file(path, "xchg-record 1\nshape 2 1\n1 -2\n3 4\n");
    CHECK(bench_record_read(path, 1, &rec, err, sizeof err) != 0 && strstr(err, ":3:"),
          "record: a negative count is refused");
    write_file(path, "shape 2 1\n1 2\n3 4\n");
    CHECK(bench_record_read(path, 1, &rec, err, sizeof err) != 0 &&
          strstr(err, "not an XCHG_RECORD file"), "record: the header is required");
    remove(path);
}

/* --same A[:N] B[:M]: B's shape (written by XCHG_RECORD while a replay of
 * A's ran at B's P) is A's replayed at that P, byte for byte. */
static int same_shapes(const char *a, const char *b)
{
    char pa[1024], pb[1024], err[1200];
    int na, nb;
    bench_record ra, rb;
    if (bench_record_spec(a, pa, sizeof pa, &na) || bench_record_spec(b, pb, sizeof pb, &nb)) {
        fprintf(stderr, "--same: bad FILE[:N]\n");
        return 2;
    }
    if (bench_record_read(pa, na, &ra, err, sizeof err) ||
        bench_record_read(pb, nb, &rb, err, sizeof err)) {
        fprintf(stderr, "--same: %s\n", err);
        return 1;
    }
    long bad = 0;
    for (int i = 0; i < rb.P0; i++)
        for (int j = 0; j < rb.P0; j++)
            if (rb.bytes[(size_t)i * (size_t)rb.P0 + (size_t)j] !=
                bench_record_bytes(&ra, rb.P0, i, j)) {
                if (!bad)
                    fprintf(stderr, "--same: block (%d, %d) differs\n", i, j);
                bad++;
            }
    printf("%s shape %d (P=%d) %s %s shape %d replayed at P=%d: %ld blocks differ\n", pb, nb,
           rb.P0, bad ? "is NOT" : "is", pa, na, rb.P0, bad);
    bench_record_free(&ra);
    bench_record_free(&rb);
    return bad != 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--same") == 0)
        return same_shapes(argv[2], argv[3]);
    static const int Ps[] = {1, 2, 3, 4, 5, 7, 8, 13, 64, 100};
    static const long avgs[] = {1, 2, 16, 1000};
    for (size_t pi = 0; pi < sizeof Ps / sizeof Ps[0]; pi++) {
        int P = Ps[pi];
        int64_t *v = malloc(sizeof(int64_t) * (size_t)P);
        for (size_t ai = 0; ai < sizeof avgs / sizeof avgs[0]; ai++) {
            long a = avgs[ai];
            bench_pattern p = {PAT_UNIFORM, 42, 0.3, 1.0, 1, 0.8, NULL};
            bench_layout l;

            p.kind = PAT_RANDOM;
            bench_layout_init(&l, &p, P, a, 1);
            int ok = 1, same = 1;
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++) {
                    int64_t c = bench_count(&l, i, j, 0);
                    ok &= c >= 0 && c <= 2 * a;
                    same &= c == bench_count(&l, i, j, 5); /* fixed pattern */
                }
            CHECK(ok && same,
                  "random: counts in [0, 2 avg], the same every iteration (P=%d, avg=%ld)", P, a);
            bench_pattern q = p;
            q.seed = 43;
            bench_layout l2;
            bench_layout_init(&l2, &q, P, a, 1);
            int differ = 0;
            for (int i = 0; i < P; i++)
                for (int j = 0; j < P; j++)
                    differ |= bench_count(&l, i, j, 0) != bench_count(&l2, i, j, 0);
            CHECK(differ || P * P < 4, "random: another seed, other counts (P=%d, avg=%ld)", P, a);

            /* row/col agree with the matrix */
            int64_t *row = malloc(sizeof(int64_t) * (size_t)P), *col = malloc(sizeof(int64_t) * (size_t)P);
            bench_row_col(&l, P - 1, 0, row, col);
            ok = 1;
            for (int j = 0; j < P; j++)
                ok &= row[j] == bench_count(&l, P - 1, j, 0) && col[j] == bench_count(&l, j, P - 1, 0);
            CHECK(ok, "row/col: send row and receive column of the matrix (P=%d, avg=%ld)", P, a);
            free(row);
            free(col);

            p.kind = PAT_SPARSE;
            bench_layout_init(&l, &p, P, a, 1);
            int64_t k = (int64_t)ceil(0.3 * P);
            ok = 1;
            int moved = 0;
            for (int i = 0; i < P; i++) {
                int64_t n0 = 0, n1 = 0;
                for (int j = 0; j < P; j++) {
                    int64_t c0 = bench_count(&l, i, j, 0), c1 = bench_count(&l, i, j, 1);
                    n0 += c0 > 0;
                    n1 += c1 > 0;
                    ok &= c0 == 0 || (c0 >= a - a / 2 && c0 <= a + a / 2);
                    moved |= (c0 > 0) != (c1 > 0);
                }
                ok &= n0 == k && n1 == k;
            }
            CHECK(ok,
                  "sparse: exactly ceil(density P) partners, sizes around avg (P=%d, avg=%ld)", P, a);
            CHECK(moved || P <= 2,
                  "sparse: partners change between iterations (P=%d, avg=%ld)", P, a);

            p.kind = PAT_ZIPF;
            bench_layout_init(&l, &p, P, a, 1);
            ok = 1;
            for (int i = 0; i < P && ok; i++) {
                for (int j = 0; j < P; j++)
                    v[j] = bench_count(&l, i, j, 0);
                qsort(v, (size_t)P, sizeof *v, cmp64);
                for (int r = 1; r <= P; r++) /* a permutation of the shares */
                    ok &= v[P - r] == llround((double)a * P * pow(r, -1.0) / l.zipf_h);
            }
            CHECK(ok,
                  "zipf: each rank's blocks are avg P / (r^s H), r = 1..P (P=%d, avg=%ld)", P, a);

            p.kind = PAT_HOT;
            bench_layout_init(&l, &p, P, a, 1);
            int hot = -1, nhot = 0;
            for (int j = 0; j < P; j++)
                if (bench_count(&l, 0, j, 0) > (P > 1 ? bench_count(&l, 0, (j + 1) % P, 0) : -1))
                    hot = j;
            for (int j = 0; j < P; j++)
                nhot += bench_count(&l, 0, j, 0) == bench_count(&l, 0, hot, 0);
            int64_t want = P > 1 ? llround(a * P * 0.8) : a;
            ok = hot >= 0 && (P <= 1 || nhot == 1);
            for (int i = 0; i < P; i++)
                ok &= bench_count(&l, i, hot, 0) == want;
            CHECK(ok, "hot: one receiver gets 0.8 of every rank's volume (P=%d, avg=%ld)", P, a);

            for (int es = 1; es <= 8; es += 7) {
                p.kind = PAT_TRANSPOSE;
                bench_layout_init(&l, &p, P, a, es);
                int64_t total = 0, vmin = -1, vmax = 0;
                for (int i = 0; i < P; i++)
                    for (int j = 0; j < P; j++) {
                        int64_t c = bench_count(&l, i, j, 0);
                        total += c;
                        vmin = vmin < 0 || c < vmin ? c : vmin;
                        vmax = c > vmax ? c : vmax;
                    }
                ok = total == l.n1 * l.n2 * 8 / es;
                ok &= P == 1 || (l.n1 % P != 0 && l.n2 % P != 0);
                ok &= P == 1 || vmin < vmax; /* uneven */
                CHECK(ok,
                      "transpose: blocks tile an unevenly split n1 x n2 grid (P=%d, avg=%ld)", P, a);
            }

            p.kind = PAT_UNIFORM;
            bench_layout_init(&l, &p, P, a, 1);
            CHECK(bench_count(&l, 0, P - 1, 3) == a, "uniform: avg (P=%d, avg=%ld)", P, a);
        }
        free(v);
    }
    test_record_files();
    for (int k = 0; k < PAT_COUNT; k++)
        CHECK((int)bench_pattern_from_name(bench_pattern_name((bench_pattern_kind)k)) == k,
              "names round-trip");
    CHECK(bench_pattern_from_name("nosuch") == PAT_COUNT, "unknown name");
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail != 0;
}
