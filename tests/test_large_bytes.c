/*
 * test_large_bytes.c - more than 2^31 bytes per rank in one call: the
 * byte arithmetic of every algorithm is 64-bit.
 *
 * Two ranks. Rank 0 sends rank 1 one block of N = 2^28 + 1000 doubles
 * (2 GiB + 8000 bytes: its byte count overflows an int, its element count
 * does not) and itself 3 doubles placed after it (byte offset above 2^31);
 * rank 1 sends rank 0 five doubles and itself three. So rank 0 sends and
 * rank 1 receives more than 2^31 bytes, and block offsets beyond 2^31
 * bytes are addressed on both sides. Every algorithm and auto, through
 * xchg_alltoallv_algo (and xchg_alltoallv_c where MPI has large counts).
 *
 * Memory: the big send block is a sparse mapping whose untouched pages read
 * as zeros; values are written every 128 KiB and around the 2^31-byte mark
 * (about 16 MiB touched). The receiving rank's 2 GiB are real, and the
 * algorithms that pack take temporary memory up to XCHG_MAX_TEMP_BYTES:
 * an algorithm that needs more refuses with MPI_ERR_NO_MEM on both ranks,
 * which is reported and accepted (padded algorithms pad every block to the
 * largest, 2 x 2 x 2 GiB). So is a refusal with MPI_ERR_COUNT on both
 * ranks: hierarchical, grid and rma_* move a block as one MPI message of
 * bytes, whose count is an int, and say so before anything moves. The receiving buffer is checked whole: sampled
 * positions hold their values, every other byte is zero, nothing beyond
 * the blocks changed. Peak resident memory of each rank is printed.
 *
 * Run with 2 ranks; skipped (exit 77) otherwise, and unless the machine
 * has the memory free: MemAvailable at least XCHG_TEST_LARGE_MIN_GIB
 * (default 12). Usage: test_large_bytes [algo ...] (default: all, auto,
 * and xchg_alltoallv_c).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE, MADV_DONTNEED */
#include "xchg.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define N_BIG ((size_t)(1u << 28) + 1000) /* doubles: 2 GiB + 8000 bytes */
#define N_SELF 3
#define N_BACK 5
#define SAMPLE_EVERY 16384 /* doubles: one value per 128 KiB */

static int rank;

static double value(int from, size_t k)
{
    return (double)from * 1e12 + (double)k + 0.5;
}

/* Positions of the big block that carry values (the others are zero). */
static int sampled(size_t k)
{
    const size_t mark = ((size_t)1 << 28); /* element at byte 2^31 */
    return k % SAMPLE_EVERY == 0 || k + 1 == N_BIG || (k + 2 >= mark && k <= mark + 2);
}

static void *big_map(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

static long mem_available_gib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib < 0 ? -1 : kib / (1024 * 1024);
}

/* The layout: rank 0 sends [0, N_BIG) to rank 1 and [N_BIG, N_BIG+3) to
 * itself; rank 1 sends [0,5) to rank 0 and [5,8) to itself. Receives
 * mirror it: rank 1 gets N_BIG at 0 and its own 3 at N_BIG; rank 0 gets
 * rank 1's 5 at 0 and its own 3 at 5. */
typedef struct layout {
    int sc[2], sd[2], rc[2], rd[2];
    size_t sendn, recvn; /* doubles */
} layout;

static void make_layout(layout *l)
{
    if (rank == 0) {
        l->sc[0] = N_SELF; l->sd[0] = (int)N_BIG;
        l->sc[1] = (int)N_BIG; l->sd[1] = 0;
        l->rc[0] = N_SELF; l->rd[0] = N_BACK;
        l->rc[1] = N_BACK; l->rd[1] = 0;
        l->sendn = N_BIG + N_SELF;
        l->recvn = N_BACK + N_SELF;
    } else {
        l->sc[0] = N_BACK; l->sd[0] = 0;
        l->sc[1] = N_SELF; l->sd[1] = N_BACK;
        l->rc[0] = (int)N_BIG; l->rd[0] = 0;
        l->rc[1] = N_SELF; l->rd[1] = (int)N_BIG;
        l->sendn = N_BACK + N_SELF;
        l->recvn = N_BIG + N_SELF + 16; /* 16 guard doubles past the blocks */
    }
}

static void fill_send(double *sb, const layout *l)
{
    if (rank == 0) {
        for (size_t k = 0; k < N_BIG; k++)
            if (sampled(k))
                sb[k] = value(0, k);
        for (size_t k = 0; k < N_SELF; k++)
            sb[N_BIG + k] = value(0, N_BIG + k);
    } else {
        for (size_t k = 0; k < l->sendn; k++)
            sb[k] = value(1, k);
    }
}

/* 0 if recvbuf holds what it must; else prints the first difference. */
static int check_recv(const double *rb, const layout *l, const char *algo)
{
    (void)l;
    if (rank == 0) {
        for (size_t k = 0; k < N_BACK; k++)
            if (rb[k] != value(1, k))
                goto bad_small;
        for (size_t k = 0; k < N_SELF; k++)
            if (rb[N_BACK + k] != value(0, N_BIG + k))
                goto bad_small;
        return 0;
    bad_small:
        fprintf(stderr, "FAIL [rank 0] %s: small blocks differ\n", algo);
        return 1;
    }
    for (size_t k = 0; k < N_BIG; k++) {
        double want = sampled(k) ? value(0, k) : 0.0;
        if (rb[k] != want) {
            fprintf(stderr, "FAIL [rank 1] %s: element %zu (byte %zu) of the big block is %g, "
                    "expected %g\n", algo, k, k * sizeof(double), rb[k], want);
            return 1;
        }
    }
    for (size_t k = 0; k < N_SELF; k++)
        if (rb[N_BIG + k] != value(1, N_BACK + k)) {
            fprintf(stderr, "FAIL [rank 1] %s: own block differs at %zu\n", algo, k);
            return 1;
        }
    for (size_t k = 0; k < 16; k++)
        if (rb[N_BIG + N_SELF + k] != 0.0) {
            fprintf(stderr, "FAIL [rank 1] %s: guard double %zu past the blocks changed\n",
                    algo, k);
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int P;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    long need = 12;
    const char *e = getenv("XCHG_TEST_LARGE_MIN_GIB");
    if (e && *e)
        need = atol(e);
    long avail = mem_available_gib();
    int skip = P != 2 || avail < need;
    MPI_Allreduce(MPI_IN_PLACE, &skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (skip) {
        if (rank == 0)
            printf("test_large_bytes: SKIPPED: needs 2 ranks (has %d) and %ld GiB of "
                   "MemAvailable (has %ld; XCHG_TEST_LARGE_MIN_GIB sets the bound)\n", P, need,
                   avail);
        MPI_Finalize();
        return 77;
    }

    layout l;
    make_layout(&l);
    size_t sbytes = l.sendn * sizeof(double), rbytes = l.recvn * sizeof(double);
    double *sb = big_map(sbytes), *rb = big_map(rbytes);
    int fails = 0, served = 0, refused = 0, refused_count = 0;
    if (!sb || !rb) {
        fprintf(stderr, "FAIL [rank %d] mmap of %zu + %zu bytes\n", rank, sbytes, rbytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fill_send(sb, &l);

    int n = xchg_algo_count();
    for (int i = 0; i <= n + 1; i++) {
        /* every algorithm, auto, then (large counts) xchg_alltoallv_c */
        xchg_algo a = i < n ? xchg_algo_at(i) : XCHG_ALGO_AUTO;
        const char *name = i < n ? xchg_algo_name(a) : i == n ? "auto" : "auto_c";
#if !XCHG_HAVE_LARGE_COUNT
        if (i == n + 1)
            break;
#endif
        int wanted = argc < 2;
        for (int k = 1; k < argc; k++)
            wanted |= !strcmp(argv[k], name);
        if (!wanted)
            continue;
        madvise(rb, rbytes, MADV_DONTNEED); /* back to zero pages */
        double t = MPI_Wtime();
        int err = MPI_SUCCESS;
        if (i <= n) {
            err = xchg_alltoallv_algo(a, sb, l.sc, l.sd, MPI_DOUBLE, rb, l.rc, l.rd, MPI_DOUBLE,
                                      MPI_COMM_WORLD);
        } else {
#if XCHG_HAVE_LARGE_COUNT
            MPI_Count sc[2] = {l.sc[0], l.sc[1]}, rc[2] = {l.rc[0], l.rc[1]};
            MPI_Aint sd[2] = {l.sd[0], l.sd[1]}, rd[2] = {l.rd[0], l.rd[1]};
            err = xchg_alltoallv_c(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE,
                                   MPI_COMM_WORLD);
            xchg_stats s;
            if (err == MPI_SUCCESS && (xchg_get_stats(MPI_COMM_WORLD, &s) != MPI_SUCCESS ||
                                       s.passed_to_mpi)) {
                fprintf(stderr, "FAIL [rank %d] xchg_alltoallv_c passed a call whose values "
                        "fit in int to MPI\n", rank);
                fails++;
            }
#endif
        }
        t = MPI_Wtime() - t;
        int cls = MPI_SUCCESS;
        if (err != MPI_SUCCESS)
            MPI_Error_class(err, &cls);
        /* both ranks must end alike: refused for memory, or served */
        int all_cls[2];
        MPI_Allgather(&cls, 1, MPI_INT, all_cls, 1, MPI_INT, MPI_COMM_WORLD);
        xchg_stats s;
        xchg_get_stats(MPI_COMM_WORLD, &s);
        if (all_cls[0] == MPI_ERR_NO_MEM && all_cls[1] == MPI_ERR_NO_MEM) {
            refused++;
            if (rank == 0)
                printf("  %-16s refused: MPI_ERR_NO_MEM on both ranks (XCHG_MAX_TEMP_BYTES)\n",
                       name);
            continue;
        }
        if (all_cls[0] == MPI_ERR_COUNT && all_cls[1] == MPI_ERR_COUNT) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            xchg_error_string(err, msg, &len);
            refused_count++;
            if (rank == 0)
                printf("  %-16s refused: MPI_ERR_COUNT on both ranks: %s\n", name, msg);
            continue;
        }
        if (err != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            xchg_error_string(err, msg, &len);
            fprintf(stderr, "FAIL [rank %d] %s returned %s\n", rank, name, msg);
            fails++;
            continue;
        }
        int bad = check_recv(rb, &l, name);
        fails += bad;
        served++;
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        long maxrss[2], rss = ru.ru_maxrss / 1024;
        MPI_Gather(&rss, 1, MPI_LONG, maxrss, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("  %-16s %s: %.2f s, temp %zu MiB, peak RSS so far %ld/%ld MiB\n", name,
                   bad ? "WRONG" : "ok", t, s.temp_bytes >> 20, maxrss[0], maxrss[1]);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_large_bytes (%zu bytes from rank 0 to rank 1 in one block): %d served, "
               "%d refused for memory, %d refused for int counts, %d failed\n",
               N_BIG * sizeof(double), served, refused, refused_count, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
