/*
 * fortran.c - the Fortran entry points of MPI_ALLTOALLV.
 *
 * Why the preload needs them: Open MPI's Fortran bindings (mpif.h, use mpi,
 * use mpi_f08) call PMPI_Alltoallv directly, so an interposed C
 * MPI_Alltoallv never sees a Fortran call. MPICH's bindings call
 * MPI_Alltoallv (mpif.h, use mpi) and, for use mpi_f08, MPI_Alltoallv or
 * MPI_Alltoallv_c from a C layer that turns Fortran array descriptors into
 * datatypes. What each library exports (nm -D, MPICH 4.0.2 and Open MPI
 * 4.1.4 from Debian):
 *   mpif.h / use mpi: mpi_alltoallv_, mpi_alltoallv__, mpi_alltoallv,
 *       MPI_ALLTOALLV (both; gfortran calls mpi_alltoallv_)
 *   use mpi_f08: Open MPI mpi_alltoallv_f08_ (buffers by address, the
 *       ignore-TKR convention; handles are TYPE(MPI_Comm) etc., one INTEGER
 *       each, by reference; ierror OPTIONAL, NULL when absent);
 *       MPICH mpi_alltoallv_f08ts_ and mpi_alltoallv_f08ts_large_ (buffers
 *       are array descriptors)
 * All of them are called from the application through the dynamic
 * linker, so the preload's definitions win.
 *
 * mpif.h/use mpi and Open MPI's f08: converted here (MPI_Comm_f2c,
 * MPI_Type_f2c; Fortran's MPI_IN_PLACE and MPI_BOTTOM are variables,
 * recognised by address, below) and served like a C call. MPICH's f08ts:
 * handed to MPICH's own binding with the thread tagged, so that the
 * MPI_Alltoallv(_c) it calls here counts as f08; descriptors of
 * non-contiguous arrays stay MPICH's business. If a library's binding
 * went to PMPI instead (the call never arrived), the call counts as
 * fallen through.
 *
 * MPI_NEIGHBOR_ALLTOALLV (same arguments) goes the same ways, to
 * xchg_neighbor_alltoallv; MPICH's f08ts nonblocking and persistent
 * neighbour forms fall through like its alltoallv ones (their MPI_Wait
 * calls PMPI_Wait).
 *
 * The sentinels, as each library defines them:
 *   Open MPI: the common block /mpi_fortran_in_place/ (mpif-sentinels.h;
 *     the f08 module binds a variable to the same symbol), compared by
 *     address in its own bindings; its C symbol follows the compiler's
 *     mangling, so all four are looked up (gfortran: mpi_fortran_in_place_).
 *     Likewise /mpi_fortran_bottom/.
 *   MPICH: mpirinitf_ records the addresses of the mpif.h common-block
 *     members in MPIR_F_MPI_IN_PLACE and MPIR_F_MPI_BOTTOM; its bindings
 *     call it once (flag MPIR_F_NeedInit) before comparing. We do the same.
 * Where neither is found (another MPI), nothing is guessed: the call goes
 * to the library's own binding, tagged, as for MPICH's f08ts.
 */
#include "preload.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

typedef struct sentinels {
    int known;
    void *in_place[4], *bottom[4];
} sentinels;

static sentinels fs;
static pthread_once_t fs_once = PTHREAD_ONCE_INIT;

static int lookup_all(const char *const names[4], void *out[4])
{
    int n = 0;
    for (int i = 0; i < 4; i++) {
        void *p = dlsym(RTLD_DEFAULT, names[i]);
        if (p)
            out[n++] = p;
    }
    return n;
}

static void find_sentinels(void)
{
    static const char *const ompi_in_place[4] = {"mpi_fortran_in_place_", "mpi_fortran_in_place",
                                                 "mpi_fortran_in_place__",
                                                 "MPI_FORTRAN_IN_PLACE"};
    static const char *const ompi_bottom[4] = {"mpi_fortran_bottom_", "mpi_fortran_bottom",
                                               "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM"};
    if (lookup_all(ompi_in_place, fs.in_place)) {
        lookup_all(ompi_bottom, fs.bottom);
        fs.known = 1;
        return;
    }
    int *need_init = dlsym(RTLD_DEFAULT, "MPIR_F_NeedInit");
    void **in_place = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_IN_PLACE");
    void **bottom = dlsym(RTLD_DEFAULT, "MPIR_F_MPI_BOTTOM");
    void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "mpirinitf_");
    if (need_init && in_place && bottom && init) {
        if (*need_init) {
            init();
            *need_init = 0;
        }
        fs.in_place[0] = *in_place;
        fs.bottom[0] = *bottom;
        fs.known = fs.in_place[0] != NULL;
    }
}

static int is_one_of(void *const set[4], const void *p)
{
    for (int i = 0; i < 4; i++)
        if (set[i] && set[i] == p)
            return 1;
    return 0;
}

/* Ten pointers: every Fortran MPI_ALLTOALLV binding here (no hidden
 * arguments: no CHARACTER, no VALUE). */
typedef void (*fortran_alltoallv_fn)(void *, void *, void *, void *, void *, void *, void *,
                                     void *, void *, void *);

/* The MPI library's own binding called `name`, with the thread tagged. */
static void to_library(preload_entry e, const char *name, void *sb, void *sc, void *sd,
                       void *st, void *rb, void *rc, void *rd, void *rt, void *comm, void *ierr)
{
    fortran_alltoallv_fn real = (fortran_alltoallv_fn)dlsym(RTLD_NEXT, name);
    if (!real) {
        fprintf(stderr, "libxchg-preload.so: %s was called but the MPI library has no %s; "
                "cannot continue\n", name, name);
        PMPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    int previous = preload_tag_begin(e);
    real(sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);
    if (!preload_tag_end(previous))
        preload_count_fell(e, REASON_BYPASS);
}

/* The C path a Fortran call takes: preload_alltoallv or
 * preload_neighbor_alltoallv (the same arguments). */
typedef int (*c_exchange_fn)(preload_entry, const void *, const int *, const int *,
                             MPI_Datatype, void *, const int *, const int *, MPI_Datatype,
                             MPI_Comm);

static void fortran_alltoallv(c_exchange_fn serve, preload_entry e, const char *name, void *sb,
                              const MPI_Fint *sc, const MPI_Fint *sd, const MPI_Fint *st, void *rb,
                              const MPI_Fint *rc, const MPI_Fint *rd, const MPI_Fint *rt,
                              const MPI_Fint *comm, MPI_Fint *ierr)
{
    pthread_once(&fs_once, find_sentinels);
    /* MPI_Fint is int in both libraries here (gfortran's default INTEGER);
     * with 8-byte Fortran integers the library's binding converts. */
    if (!fs.known || sizeof(MPI_Fint) != sizeof(int)) {
        to_library(e, name, sb, (void *)sc, (void *)sd, (void *)st, rb, (void *)rc, (void *)rd,
                   (void *)rt, (void *)comm, ierr);
        return;
    }
    const void *send = sb;
    MPI_Datatype stype = MPI_DATATYPE_NULL;
    if (is_one_of(fs.in_place, sb)) {
        send = MPI_IN_PLACE; /* the send arguments are ignored: not even converted */
    } else {
        if (is_one_of(fs.bottom, sb))
            send = MPI_BOTTOM;
        stype = PMPI_Type_f2c(*st);
    }
    void *recv = is_one_of(fs.bottom, rb) ? MPI_BOTTOM : rb;
    int rcode = serve(e, send, (const int *)sc, (const int *)sd, stype, recv, (const int *)rc,
                      (const int *)rd, PMPI_Type_f2c(*rt), PMPI_Comm_f2c(*comm));
    if (ierr)
        *ierr = (MPI_Fint)rcode;
}

#define FORTRAN_EXCHANGE(fname, entry, serve)                                               \
    void fname(void *sb, const MPI_Fint *sc, const MPI_Fint *sd, const MPI_Fint *st,       \
               void *rb, const MPI_Fint *rc, const MPI_Fint *rd, const MPI_Fint *rt,       \
               const MPI_Fint *comm, MPI_Fint *ierr);                                       \
    void fname(void *sb, const MPI_Fint *sc, const MPI_Fint *sd, const MPI_Fint *st,       \
               void *rb, const MPI_Fint *rc, const MPI_Fint *rd, const MPI_Fint *rt,       \
               const MPI_Fint *comm, MPI_Fint *ierr)                                        \
    {                                                                                       \
        fortran_alltoallv(serve, entry, #fname, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr); \
    }
#define FORTRAN_ALLTOALLV(fname, entry) FORTRAN_EXCHANGE(fname, entry, preload_alltoallv)
#define FORTRAN_NEIGHBOR(fname, entry) FORTRAN_EXCHANGE(fname, entry, preload_neighbor_alltoallv)

#define FORTRAN_TO_LIBRARY(fname, entry)                                                    \
    void fname(void *sb, void *sc, void *sd, void *st, void *rb, void *rc, void *rd,       \
               void *rt, void *comm, void *ierr);                                           \
    void fname(void *sb, void *sc, void *sd, void *st, void *rb, void *rc, void *rd,       \
               void *rt, void *comm, void *ierr)                                            \
    {                                                                                       \
        to_library(entry, #fname, sb, sc, sd, st, rb, rc, rd, rt, comm, ierr);              \
    }

/* mpif.h and use mpi, every mangling */
FORTRAN_ALLTOALLV(mpi_alltoallv_, ENTRY_FORTRAN)
FORTRAN_ALLTOALLV(mpi_alltoallv__, ENTRY_FORTRAN)
FORTRAN_ALLTOALLV(mpi_alltoallv, ENTRY_FORTRAN)
FORTRAN_ALLTOALLV(MPI_ALLTOALLV, ENTRY_FORTRAN)
/* use mpi_f08, Open MPI: the same arguments in 4.1 and 5.0 (their
 * use-mpi-f08/alltoallv_f08.F90: ignore-TKR buffers of assumed size, by
 * address); a library built otherwise converts its own */
#if defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION == 4 || OMPI_MAJOR_VERSION == 5)
FORTRAN_ALLTOALLV(mpi_alltoallv_f08_, ENTRY_F08)
#else
FORTRAN_TO_LIBRARY(mpi_alltoallv_f08_, ENTRY_F08)
#endif

/* use mpi_f08, MPICH: array descriptors; MPICH's binding converts them */
FORTRAN_TO_LIBRARY(mpi_alltoallv_f08ts_, ENTRY_F08)
FORTRAN_TO_LIBRARY(mpi_alltoallv_f08ts_large_, ENTRY_F08)

/* MPI_NEIGHBOR_ALLTOALLV: mpif.h and use mpi; use mpi_f08 as above */
FORTRAN_NEIGHBOR(mpi_neighbor_alltoallv_, ENTRY_NEIGHBOR_FORTRAN)
FORTRAN_NEIGHBOR(mpi_neighbor_alltoallv__, ENTRY_NEIGHBOR_FORTRAN)
FORTRAN_NEIGHBOR(mpi_neighbor_alltoallv, ENTRY_NEIGHBOR_FORTRAN)
FORTRAN_NEIGHBOR(MPI_NEIGHBOR_ALLTOALLV, ENTRY_NEIGHBOR_FORTRAN)
#if defined(OMPI_MAJOR_VERSION) && (OMPI_MAJOR_VERSION == 4 || OMPI_MAJOR_VERSION == 5)
FORTRAN_NEIGHBOR(mpi_neighbor_alltoallv_f08_, ENTRY_NEIGHBOR_F08)
#else
FORTRAN_TO_LIBRARY(mpi_neighbor_alltoallv_f08_, ENTRY_NEIGHBOR_F08)
#endif
FORTRAN_TO_LIBRARY(mpi_neighbor_alltoallv_f08ts_, ENTRY_NEIGHBOR_F08)
FORTRAN_TO_LIBRARY(mpi_neighbor_alltoallv_f08ts_large_, ENTRY_NEIGHBOR_F08)

/* use mpi_f08, MPICH: nonblocking and persistent. Its f08 MPI_Wait,
 * MPI_Test and MPI_Start call PMPI_ directly, so a request of xchg's would
 * never complete there: tagged, these calls fall through to MPICH
 * (requests.c). Its mpif.h/use mpi bindings call MPI_Wait & co. and are
 * served like C calls; Open MPI's Fortran bindings never reach the
 * preload. Fourteen pointers cover every argument list here (twelve at
 * most, no hidden ones); the callee reads those it has. */
typedef void (*fortran_request_fn)(void *, void *, void *, void *, void *, void *, void *,
                                   void *, void *, void *, void *, void *, void *, void *);

#define FORTRAN_REQUEST_TO_LIBRARY(fname) FORTRAN_REQUEST_TAGGED(fname, ENTRY_F08_REQUEST)
#define FORTRAN_REQUEST_TAGGED(fname, entry)                                                \
    void fname(void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7,       \
               void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14); \
    void fname(void *a1, void *a2, void *a3, void *a4, void *a5, void *a6, void *a7,       \
               void *a8, void *a9, void *a10, void *a11, void *a12, void *a13, void *a14)  \
    {                                                                                       \
        fortran_request_fn real = (fortran_request_fn)dlsym(RTLD_NEXT, #fname);            \
        if (!real) {                                                                        \
            fprintf(stderr, "libxchg-preload.so: %s was called but the MPI library has "   \
                    "no %s; cannot continue\n", #fname, #fname);                           \
            PMPI_Abort(MPI_COMM_WORLD, 1);                                                  \
            return;                                                                         \
        }                                                                                   \
        int previous = preload_tag_begin(entry);                                            \
        real(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14);                  \
        if (!preload_tag_end(previous))                                                     \
            preload_count_fell(entry, REASON_BYPASS);                                       \
    }

FORTRAN_REQUEST_TO_LIBRARY(mpi_ialltoallv_f08ts_)
FORTRAN_REQUEST_TO_LIBRARY(mpi_ialltoallv_f08ts_large_)
FORTRAN_REQUEST_TO_LIBRARY(mpi_alltoallv_init_f08ts_)
FORTRAN_REQUEST_TO_LIBRARY(mpi_alltoallv_init_f08ts_large_)
FORTRAN_REQUEST_TAGGED(mpi_ineighbor_alltoallv_f08ts_, ENTRY_NEIGHBOR_F08_REQUEST)
FORTRAN_REQUEST_TAGGED(mpi_ineighbor_alltoallv_f08ts_large_, ENTRY_NEIGHBOR_F08_REQUEST)
FORTRAN_REQUEST_TAGGED(mpi_neighbor_alltoallv_init_f08ts_, ENTRY_NEIGHBOR_F08_REQUEST)
FORTRAN_REQUEST_TAGGED(mpi_neighbor_alltoallv_init_f08ts_large_, ENTRY_NEIGHBOR_F08_REQUEST)

/* MPI_FINALIZE: Open MPI's Fortran bindings call PMPI_Finalize directly,
 * so the report is printed here too (once: MPICH's call MPI_Finalize). */
typedef void (*fortran_finalize_fn)(MPI_Fint *ierr);

static void fortran_finalize(const char *name, MPI_Fint *ierr)
{
    preload_report();
    fortran_finalize_fn real = (fortran_finalize_fn)dlsym(RTLD_NEXT, name);
    if (real) {
        real(ierr);
    } else {
        int rc = PMPI_Finalize();
        if (ierr)
            *ierr = (MPI_Fint)rc;
    }
}

#define FORTRAN_FINALIZE(fname)                                                             \
    void fname(MPI_Fint *ierr);                                                             \
    void fname(MPI_Fint *ierr)                                                              \
    {                                                                                       \
        fortran_finalize(#fname, ierr);                                                     \
    }

FORTRAN_FINALIZE(mpi_finalize_)
FORTRAN_FINALIZE(mpi_finalize__)
FORTRAN_FINALIZE(mpi_finalize)
FORTRAN_FINALIZE(MPI_FINALIZE)
FORTRAN_FINALIZE(mpi_finalize_f08_)
