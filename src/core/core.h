/*
 * core.h - what every layer of libxchg uses from src/core/: datatype
 * packing, one call's arguments (xchg_call), temporary memory, errors and
 * their agreement, the argument checks.
 */
#ifndef XCHG_CORE_H
#define XCHG_CORE_H

#include "state.h"

/* What the library knows of a datatype. */
typedef struct xchg_typeinfo {
    MPI_Datatype type;
    int size;              /* bytes of data in one element */
    MPI_Aint lb, extent;
    MPI_Aint true_lb, true_extent;
    int contig;            /* count elements are count*size contiguous bytes */
} xchg_typeinfo;

int xchg_typeinfo_get(MPI_Datatype type, xchg_typeinfo *ti);

/* Address of element `disp` of a buffer of type ti (displacements count
 * extents, as in MPI_Alltoallv). */
static inline char *xchg_block_addr(const void *buf, int disp, const xchg_typeinfo *ti)
{
    return (char *)buf + (MPI_Aint)disp * ti->extent;
}

/* Packs `count` elements at buf[disp] into out (count*size bytes) and the
 * reverse. Contiguous types are copied with memcpy, others with MPI_Pack. */
int xchg_pack_block(const void *buf, int disp, int count, const xchg_typeinfo *ti,
                    void *out);
int xchg_unpack_block(const void *in, void *buf, int disp, int count,
                      const xchg_typeinfo *ti);
/* The simulated build's charges for local work (simcost.h). */
#include "simcost.h"

/* Facts of one call agreed by every rank (xchg_call.agreed). */
typedef struct xchg_call_agreed {
    uint64_t max_block;  /* the largest block any rank sends (bytes) */
    uint64_t min_budget; /* the smallest temporary-memory budget left on any rank */
    uint64_t max_send;   /* the most bytes any rank sends (its own block included) */
    uint64_t max_recv;   /* the most bytes any rank receives */
} xchg_call_agreed;

/* One call of an alltoallv algorithm: arguments already checked, MPI_IN_PLACE
 * already resolved (sendbuf is a real buffer), comm is the private duplicate. */

typedef struct xchg_call {
    const void *sendbuf;
    const int *sendcounts, *sdispls;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    xchg_typeinfo st, rt;  /* send and receive types */
    MPI_Comm comm;         /* private duplicate */
    xchg_comm_state *cs;
    int rank, size;
    size_t temp_cur;       /* temporary memory held now */
    size_t temp_peak;      /* most held at once in this call (reported) */
    size_t temp_limit;     /* XCHG_MAX_TEMP_BYTES (cs->settings) */
    /* This rank's argument error, or MPI_SUCCESS. When set, the arrays are
     * all zeros (not the caller's) and the algorithm, one whose registry
     * entry says agrees_errors, must fold it into its agreement collective
     * (xchg_agree_flag/xchg_agree_result) so that every rank fails alike. */
    int arg_err;
    /* What every rank agreed of this call before its algorithm runs (auto's
     * blocking agreement, with no argument error anywhere; NULL otherwise):
     * an algorithm that would agree the same facts skips its collective
     * (the padded ones: xchg_padded_agree). */
    const struct xchg_call_agreed *agreed;
    /* What ran in the chosen algorithm's place, so the stats name it (shm
     * without its window runs linear); XCHG_ALGO_AUTO (0, as a zeroed call
     * leaves it) when the chosen one ran itself. */
    xchg_algo ran_instead;
} xchg_call;

/* Temporary memory: counted against the call's limit (XCHG_MAX_TEMP_BYTES)
 * and its peak reported in xchg_stats. On failure returns NULL and sets *err
 * to an MPI_ERR_NO_MEM code whose message names `what`. Release with
 * xchg_temp_free and the same byte count. */
void *xchg_temp_alloc(xchg_call *c, size_t bytes, const char *what, int *err);
void xchg_temp_free(xchg_call *c, void *p, size_t bytes);
/* The limit of a call on cs: the agreed XCHG_MAX_TEMP_BYTES, or lower on a
 * rank where the test-only XCHG_FAULT_TEMP_LIMIT is set (memory.c). */
size_t xchg_temp_limit_of(const xchg_comm_state *cs);

/* MPI_SUCCESS if type is committed (or predefined), an error otherwise. */
int xchg_type_check_committed(MPI_Datatype type);

/* Every entry point's first step (mpi_check.c): MPI_SUCCESS if the running
 * MPI library is the flavour and major version libxchg was built with.
 * Otherwise an error: of another major version, raised on comm; of
 * another flavour (whose handles cannot be read), printed once on stderr
 * and returned as the running library's MPI_ERR_OTHER, touching no handle. */
int xchg_mpi_check(MPI_Comm comm);

/* The communicator checks every entry point makes first: not
 * MPI_COMM_NULL, valid, an intracommunicator; *P gets its size. */
int xchg_check_comm(MPI_Comm comm, int *P);

/* Argument checks of xchg_alltoallv and its relatives (no communication). */
int xchg_check_alltoallv_args(const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype,
                              const void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
/* The same after the communicator's check, on P ranks. */
int xchg_check_alltoallv_arrays(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype,
                                const void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, int P);
/* The argument checks of a neighbour exchange: send arrays of outdegree
 * entries, receive arrays of indegree entries (no communication). */
int xchg_check_neighbor_arrays(const void *sendbuf, const int sendcounts[],
                               const int sdispls[], MPI_Datatype sendtype, int outdegree,
                               const void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, int indegree);
/* The byte span [*lo, *lo + *bytes) of buf covered by the blocks of
 * counts/displs of type ti, relative to buf (0, 0 when all are empty). */
void xchg_block_span(const int counts[], const int displs[], int P,
                     const xchg_typeinfo *ti, MPI_Aint *lo, size_t *bytes);

/* A received block of b bytes from rank src at in, unpacked into recvbuf
 * if it fits recvcounts[src], else MPI_ERR_TRUNCATE naming both ranks (who:
 * the algorithm). Returns err, the call's first error so far (nothing is
 * unpacked after one). */
int xchg_unpack_checked(xchg_call *c, const char *who, int src, const void *in, int64_t b,
                        int err);
/* Copies this rank's own block from send to receive buffer. */
int xchg_self_copy(xchg_call *c);

/* Errors. xchg_error_code makes an error code of class errclass whose
 * MPI_Error_string is "xchg: <formatted message>". xchg_raise passes a code
 * to comm's error handler and returns it. */
int xchg_error_code(int errclass, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int xchg_raise(MPI_Comm comm, int code);

/* Agreement of argument errors (error_agree.c). xchg_agree_flag is this rank's
 * contribution to an MPI_MAX reduction of one int64 (0: no error);
 * xchg_agree_result turns the reduced value into the call's result: this
 * rank's own error, or one of the same class naming the failing rank.
 * xchg_agree_errors (progress.h) does both around one allreduce. The flag
 * is (P - rank) << XCHG_AGREE_CLASS_BITS | class. */
enum { XCHG_AGREE_CLASS_BITS = 12 };
int64_t xchg_agree_flag(int rank, int size, int local_err);
int xchg_agree_result(int rank, int size, int local_err, int64_t all, const char *who);

#endif /* XCHG_CORE_H */
