/*
 * test_refusal.c - a refusal over XCHG_MAX_TEMP_BYTES is collective.
 *
 * Rank P-1 sends rank 0 one large block (64 KiB); every other block is one
 * int. With XCHG_MAX_TEMP_BYTES=16K (set alike on all ranks) the ranks that
 * handle the large block cannot get its memory and the others can: the
 * algorithm must either succeed everywhere with the right data or return
 * MPI_ERR_NO_MEM on every rank, never hang and never succeed on some
 * ranks only. Then, with the limit lifted, the same exchange must succeed
 * on the same communicator (nothing left over from the refused call).
 *
 * Usage: test_refusal algo...  (each tested with XCHG_RANKS_PER_NODE unset,
 * 1 and 2). Prints "N passed, M failed"; exits non-zero on a failure.
 */
#include "xchg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK_RANK me
#include "check.h"

enum { BIG = 16384 }; /* ints in the large block */

static int me, P, npass, nfail;

static int count(int s, int d) { return (s == P - 1 && d == 0 && P > 1) ? BIG : 1; }

/* Runs the exchange; returns the error class, and in *good whether the
 * received data is right (only meaningful on success). */
static int exchange(xchg_algo a, MPI_Comm comm, int *good)
{
    int *sc = malloc(sizeof(int) * P), *sd = malloc(sizeof(int) * P);
    int *rc = malloc(sizeof(int) * P), *rd = malloc(sizeof(int) * P);
    int ns = 0, nr = 0;
    for (int r = 0; r < P; r++) {
        sc[r] = count(me, r);
        sd[r] = ns;
        ns += sc[r];
        rc[r] = count(r, me);
        rd[r] = nr;
        nr += rc[r];
    }
    int *sb = malloc(sizeof(int) * (size_t)ns), *rb = malloc(sizeof(int) * (size_t)nr);
    for (int r = 0; r < P; r++)
        for (int i = 0; i < sc[r]; i++)
            sb[sd[r] + i] = me * 100000 + r * 10 + i;
    memset(rb, 0xff, sizeof(int) * (size_t)nr);
    int code = xchg_alltoallv_algo(a, sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), cls;
    MPI_Error_class(code, &cls);
    *good = 1;
    for (int r = 0; r < P; r++)
        for (int i = 0; i < rc[r]; i++)
            if (rb[rd[r] + i] != r * 100000 + me * 10 + i)
                *good = 0;
    free(sb);
    free(rb);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    return cls;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const char *rpn[] = {NULL, "1", "2"};
    for (int i = 1; i < argc; i++) {
        xchg_algo a = xchg_algo_from_name(argv[i]);
        if (a == XCHG_ALGO_INVALID || a == XCHG_ALGO_AUTO) {
            CHECK_ALL(0, "%s is an algorithm", argv[i]);
            continue;
        }
        for (int k = 0; k < 3; k++) {
            char what[96];
            if (rpn[k])
                setenv("XCHG_RANKS_PER_NODE", rpn[k], 1);
            else
                unsetenv("XCHG_RANKS_PER_NODE");
            int good = 0, cls, ok;

            /* settings are read once per communicator, at its first xchg
             * call: one limited, one not */
            MPI_Comm limited, unlimited;
            MPI_Comm_dup(MPI_COMM_WORLD, &limited);
            MPI_Comm_dup(MPI_COMM_WORLD, &unlimited);
            MPI_Comm_set_errhandler(limited, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(unlimited, MPI_ERRORS_RETURN);
            setenv("XCHG_MAX_TEMP_BYTES", "16K", 1);
            cls = exchange(a, limited, &good);
            unsetenv("XCHG_MAX_TEMP_BYTES");
            /* all MPI_ERR_NO_MEM, or all succeeded with the right data */
            int v[2] = {cls == MPI_ERR_NO_MEM, cls == MPI_SUCCESS && good}, mn[2];
            MPI_Allreduce(v, mn, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            ok = (mn[0] == 1) || (mn[1] == 1);
            if (!ok && (cls != MPI_SUCCESS && cls != MPI_ERR_NO_MEM))
                fprintf(stderr, "rank %d: %s returned error class %d\n", me, argv[i], cls);
            snprintf(what, sizeof what, "refuses on all ranks or none (rpn %s)",
                     rpn[k] ? rpn[k] : "unset");
            CHECK_ALL(ok, "%s %s", argv[i], what);
            /* at 2+ ranks the large block cannot fit: it must refuse */
            snprintf(what, sizeof what, "refuses over the limit (rpn %s)",
                     rpn[k] ? rpn[k] : "unset");
            CHECK_ALL(P == 1 || mn[0] == 1, "%s %s", argv[i], what);

            cls = exchange(a, unlimited, &good);
            snprintf(what, sizeof what, "works after a refusal (rpn %s)",
                     rpn[k] ? rpn[k] : "unset");
            CHECK_ALL(cls == MPI_SUCCESS && good, "%s %s", argv[i], what);
            MPI_Comm_free(&limited);
            MPI_Comm_free(&unlimited);
        }
    }
    unsetenv("XCHG_RANKS_PER_NODE");
    MPI_Comm_free(&comm);
    if (me == 0)
        printf("test_refusal on %d ranks: %d passed, %d failed\n", P, npass, nfail);
    MPI_Finalize();
    return nfail ? 1 : 0;
}
