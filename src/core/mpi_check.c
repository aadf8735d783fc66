/*
 * mpi_check.c - is the running MPI library the one libxchg was built with?
 *
 * MPICH and Open MPI have different ABIs: an MPICH handle is an int, an
 * Open MPI handle a pointer, and their constants differ. A program built
 * with Open MPI that loads an MPICH-built libxchg (or preloads the wrong
 * libxchg-preload.so) runs libxchg's MPI calls in the program's library
 * with the other library's constants, and crashed in the first of them
 * (PMPI_Comm_test_inter, from xchg_alltoallv). So every entry point first
 * compares, once per process, what MPI_Get_library_version says with what
 * mpi.h said at build time (xchg_mpi_check):
 *   - another flavour (MPICH's ABI family against Open MPI's): the
 *     caller's handles cannot be read at all, not even to call its error
 *     handler, so xchg prints the reason on stderr once per process and
 *     returns the running library's MPI_ERR_OTHER (15 for MPICH, 16 for
 *     Open MPI) without touching any handle;
 *   - the same product with another major version (MPICH 3 against 4, Open
 *     MPI 4 against 5): the handles are alike, so the error, MPI_ERR_OTHER,
 *     goes through the communicator's error handler as usual.
 * Libraries of MPICH's ABI that are not MPICH itself (Intel MPI, MVAPICH,
 * Cray MPICH) pass as the MPICH family without a version comparison, and
 * an unknown version string passes: only a known mismatch fails.
 * Not under SMPI, where the simulator is the only MPI.
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

#if defined(XCHG_SMPI)
#define BUILT_FAMILY "smpi"
#define BUILT_PRODUCT "SimGrid SMPI"
#define BUILT_VERSION ""
#elif defined(OPEN_MPI)
#define BUILT_FAMILY "openmpi"
#define BUILT_PRODUCT "Open MPI"
#define BUILT_VERSION                                                                         \
    STR(OMPI_MAJOR_VERSION) "." STR(OMPI_MINOR_VERSION) "." STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION)
#define BUILT_FAMILY "mpich"
#if defined(I_MPI_VERSION) || defined(MVAPICH2_VERSION) || defined(MVAPICH_VERSION)
#define BUILT_PRODUCT "an MPICH-based MPI"
#else
#define BUILT_PRODUCT "MPICH"
#endif
#define BUILT_VERSION MPICH_VERSION
#else
#define BUILT_FAMILY "unknown"
#define BUILT_PRODUCT "an unknown MPI"
#define BUILT_VERSION ""
#endif

const char *xchg_mpi_built_with(void)
{
    return BUILT_PRODUCT " " BUILT_VERSION;
}

#ifdef XCHG_SMPI
int xchg_mpi_compatible(char *why, int whylen)
{
    if (why && whylen > 0)
        why[0] = 0;
    return 1;
}

int xchg_mpi_check(MPI_Comm comm)
{
    (void)comm;
    return MPI_SUCCESS;
}
#else

/* What a version string says: the ABI family ("mpich", "openmpi" or NULL
 * for unknown), whether it is that family's reference product (MPICH
 * itself, Open MPI itself), and its major version (0: not read). */
typedef struct mpi_id {
    const char *family;
    int reference;
    int major;
    char text[128]; /* the first line, for messages */
} mpi_id;

static void identify(const char *s, mpi_id *id)
{
    memset(id, 0, sizeof *id);
    size_t n = strcspn(s, "\n,");
    snprintf(id->text, sizeof id->text, "%.*s", (int)(n < 127 ? n : 127), s);
    for (char *p = id->text; *p; p++)
        if (*p == '\t')
            *p = ' ';
    const char *v;
    if ((v = strstr(s, "Open MPI v")) != NULL) {
        id->family = "openmpi";
        id->reference = 1;
        id->major = atoi(v + strlen("Open MPI v"));
    } else if (strncmp(s, "MPICH Version:", 14) == 0) {
        id->family = "mpich";
        id->reference = 1;
        id->major = atoi(s + 14 + strspn(s + 14, " \t"));
        snprintf(id->text, sizeof id->text, "MPICH %.*s", (int)strcspn(s + 14 + strspn(s + 14, " \t"), " \t\n"),
                 s + 14 + strspn(s + 14, " \t"));
    } else if (strstr(s, "MPICH") || strstr(s, "Intel(R) MPI") || strstr(s, "MVAPICH")) {
        id->family = "mpich";
    }
}

static pthread_once_t check_once = PTHREAD_ONCE_INIT;
static int check_result = 1;  /* xchg_mpi_compatible's answer */
static int check_foreign_rc;  /* the running library's MPI_ERR_OTHER (answer -1) */
static char check_msg[512];

static void check_run(void)
{
    /* MPICH's MPI_MAX_LIBRARY_VERSION_STRING is 8192, Open MPI's 256: the
     * running library may be the other one, so room for the larger. */
    static char s[16384];
    int len = 0;
    if (MPI_Get_library_version(s, &len) != MPI_SUCCESS)
        return;
    s[sizeof s - 1] = 0;
    mpi_id run;
    identify(s, &run);
    const char *built = BUILT_FAMILY;
    if (!run.family || strcmp(built, "unknown") == 0)
        return;
    if (strcmp(run.family, built) != 0) {
        check_result = -1;
        check_foreign_rc = strcmp(run.family, "openmpi") == 0 ? 16 : 15;
        snprintf(check_msg, sizeof check_msg,
                 "xchg: libxchg was built with %s %s, but this program runs %s: their "
                 "handles and constants differ, so xchg cannot run here. Use an xchg "
                 "built with this program's MPI (or build the program with the MPI xchg "
                 "was built with)", BUILT_PRODUCT, BUILT_VERSION, run.text);
        return;
    }
    int built_major = atoi(BUILT_VERSION);
    if (run.reference && strcmp(BUILT_PRODUCT, "an MPICH-based MPI") != 0 && run.major > 0 &&
        built_major > 0 && run.major != built_major) {
        check_result = 0;
        snprintf(check_msg, sizeof check_msg,
                 "libxchg was built with %s %s, but this program runs %s (major version "
                 "%d, not %d); rebuild xchg against it", BUILT_PRODUCT, BUILT_VERSION,
                 run.text, run.major, built_major);
    }
}

int xchg_mpi_compatible(char *why, int whylen)
{
    pthread_once(&check_once, check_run);
    if (why && whylen > 0)
        snprintf(why, (size_t)whylen, "%s", check_result == 1 ? "" : check_msg);
    return check_result;
}

int xchg_mpi_check(MPI_Comm comm)
{
    pthread_once(&check_once, check_run);
    if (check_result == 1)
        return MPI_SUCCESS;
    if (check_result == -1) {
        /* the caller's handles are not ours: say it, touch nothing */
        static int printed;
        if (!__atomic_exchange_n(&printed, 1, __ATOMIC_ACQ_REL)) {
            fprintf(stderr, "%s; xchg returns MPI_ERR_OTHER (%d) from every call.\n",
                    check_msg, check_foreign_rc);
            fflush(stderr);
        }
        return check_foreign_rc;
    }
    return xchg_raise(comm, xchg_error_code(MPI_ERR_OTHER, "%s", check_msg));
}
#endif
