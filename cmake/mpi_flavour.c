/* What mpi.h says about the MPI library: compiled, never run (so it works
 * when cross-compiling and without a launcher), its string read back by
 * xchgMpiFlavour.cmake. */
#include <mpi.h>

#define XCHG_STR_(x) #x
#define XCHG_STR(x) XCHG_STR_(x)

#if defined(OPEN_MPI)
#define XCHG_FLAVOUR "openmpi"
#define XCHG_FVERSION                                                                         \
    XCHG_STR(OMPI_MAJOR_VERSION) "." XCHG_STR(OMPI_MINOR_VERSION) "." XCHG_STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION)
#define XCHG_FLAVOUR "mpich"
#define XCHG_FVERSION MPICH_VERSION
#else
#define XCHG_FLAVOUR "unknown"
#define XCHG_FVERSION "0"
#endif

const char xchg_mpi_flavour_info[] = "INFO:XCHG-MPI[" XCHG_FLAVOUR "][" XCHG_FVERSION "]";

int main(int argc, char **argv)
{
    (void)argv;
    return xchg_mpi_flavour_info[argc];
}
