/*
 * xchg_internal.h - what every part of libxchg shares and users never see:
 * the per-communicator state, the one signature every alltoallv algorithm
 * has, the registry entry, datatype packing and error helpers.
 */
#ifndef XCHG_INTERNAL_H
#define XCHG_INTERNAL_H

#include "xchg.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Tags on the private communicator. Each algorithm family has its own so
 * that a stray message of one can never be taken for another's. */
enum {
    XCHG_TAG_LINEAR = 100,
    XCHG_TAG_PAIRWISE = 101,
    XCHG_TAG_SCATTERED = 102,
    XCHG_TAG_BRUCK = 110,
    XCHG_TAG_HIER = 120,
    XCHG_TAG_GRID = 130,
    XCHG_TAG_RMA = 140,      /* rma_lock: "target ready" */
    XCHG_TAG_RMA_DONE = 141, /* rma_lock: "data delivered" */
    XCHG_TAG_SPARSE = 200 /* 200..299 reserved for sparse exchange */
};

/* Slots for state an algorithm builds once per communicator and keeps
 * (node communicators, grid communicators, ...). Freed with the state. */
enum {
    XCHG_EXT_HIERARCHICAL = 0,
    XCHG_EXT_GRID = 1,
    XCHG_EXT_SPARSE = 2,
    XCHG_EXT_COUNT = 8
};

/* Library state cached on a caller's communicator (attribute value). */
typedef struct xchg_comm_state {
    MPI_Comm pcomm;        /* private duplicate: all library traffic */
    int rank, size;
    int node_size;         /* ranks sharing this rank's node (shared memory) */
    unsigned long calls;   /* collective xchg calls so far, same on all ranks */
    xchg_stats last;       /* what the last call did */
    void *ext[XCHG_EXT_COUNT];
    void (*ext_free[XCHG_EXT_COUNT])(void *);
    /* References: the caller's communicator (its attribute) holds one, each
     * persistent request another, so a request outlives a freed comm. */
    int refs;
    int comm_freed;        /* the caller's communicator is gone */
} xchg_comm_state;

/* Returns the state for comm, creating it (collectively: it duplicates comm)
 * on first use. */
int xchg_comm_state_get(MPI_Comm comm, xchg_comm_state **state);
/* One more / one less reference; the last release frees the state (and its
 * private duplicate, which is collective like MPI_Comm_free). */
void xchg_comm_state_retain(xchg_comm_state *state);
void xchg_comm_state_release(xchg_comm_state *state);

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
    size_t temp_limit;     /* XCHG_MAX_TEMP_BYTES */
} xchg_call;

/* The one signature of every alltoallv algorithm. Returns an MPI error code;
 * an error made with xchg_error_code() carries its own message. */
typedef int (*xchg_alltoallv_fn)(xchg_call *c);

/* Optional persistent hooks of an algorithm (xchg_alltoallv_init). init is
 * collective and does all one-time work; start only moves data (it may
 * complete the exchange or leave it in flight); test sets *flag when the
 * exchange is complete; wait completes it; free is collective (it may free
 * windows) and is called only while idle. The xchg_call lives as long as the
 * plan: its arrays are the request's own copies, its buffers the caller's
 * (sendbuf is the request's in-place copy for MPI_IN_PLACE). Temporary
 * memory a plan keeps is taken with xchg_temp_alloc on that call. An algorithm
 * without hooks gets the generic path: start runs the blocking call. */
typedef struct xchg_persist_ops {
    int (*init)(xchg_call *c, void **plan);
    int (*start)(xchg_call *c, void *plan);
    int (*test)(xchg_call *c, void *plan, int *flag);
    int (*wait)(xchg_call *c, void *plan);
    int (*free)(xchg_call *c, void *plan);
} xchg_persist_ops;

/* Runs a one-shot call through persistent hooks: init, start, wait, free. */
int xchg_persist_oneshot(const xchg_persist_ops *ops, xchg_call *c);

typedef struct xchg_algo_info {
    xchg_algo id;
    const char *name;
    xchg_alltoallv_fn run;
    const char *when;      /* one line: when this algorithm wins */
    const xchg_persist_ops *persist; /* NULL: generic persistent path */
} xchg_algo_info;

/* The registry (src/alltoallv/registry.c). */
const xchg_algo_info *xchg_registry_find(xchg_algo id);
const xchg_algo_info *xchg_registry_find_name(const char *name);
int xchg_registry_count(void);
const xchg_algo_info *xchg_registry_at(int i);

/* The radix bruck_radix uses on P ranks (XCHG_BRUCK_RADIX or ceil(sqrt P)). */
int xchg_bruck_radix_for(int P);

/* The automatic choice (src/select/select.c): the same on every rank. */
int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen);

/* Temporary memory: counted against the call's limit (XCHG_MAX_TEMP_BYTES)
 * and its peak reported in xchg_stats. On failure returns NULL and sets *err
 * to an MPI_ERR_NO_MEM code whose message names `what`. Release with
 * xchg_temp_free and the same byte count. */
void *xchg_temp_alloc(xchg_call *c, size_t bytes, const char *what, int *err);
void xchg_temp_free(xchg_call *c, void *p, size_t bytes);
size_t xchg_temp_limit(void);

/* MPI_SUCCESS if type is committed (or predefined), an error otherwise. */
int xchg_type_check_committed(MPI_Datatype type);

/* The communicator checks every entry point makes first: not
 * MPI_COMM_NULL, valid, an intracommunicator; *P gets its size. */
int xchg_check_comm(MPI_Comm comm, int *P);

/* Argument checks of xchg_alltoallv and its relatives (no communication). */
int xchg_check_alltoallv_args(const void *sendbuf, const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype,
                              const void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);

/* The algorithm to run: algo itself, or with from_env the one
 * XCHG_ALLTOALLV_ALGO names; an error if it is not in this build. */
int xchg_resolve_algo(xchg_algo algo, int from_env, xchg_algo *out);

/* The byte span [*lo, *lo + *bytes) of buf covered by the blocks of
 * counts/displs of type ti, relative to buf (0, 0 when all are empty). */
void xchg_block_span(const int counts[], const int displs[], int P,
                     const xchg_typeinfo *ti, MPI_Aint *lo, size_t *bytes);

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

/* Small helpers. */
long xchg_env_long(const char *name, long dflt, long min, long max);
size_t xchg_env_bytes(const char *name, size_t dflt);

#endif /* XCHG_INTERNAL_H */
