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
    XCHG_TAG_MPICH_MODEL = 103, /* baseline: model of MPICH 4.0's default */
    XCHG_TAG_OMPI_MODEL = 104,  /* baseline: model of Open MPI 4.1's default */
    XCHG_TAG_BRUCK = 110,
    XCHG_TAG_HYBRID = 111,   /* hybrid: the large blocks, sent directly (even calls) */
    XCHG_TAG_HYBRID_ODD = 112, /* ... odd calls (hybrid.c: why two) */
    XCHG_TAG_HIER = 120,
    XCHG_TAG_GRID = 130,
    XCHG_TAG_RMA = 140,      /* rma_lock: "target ready" */
    XCHG_TAG_RMA_DONE = 141, /* rma_lock: "data delivered" */
    XCHG_TAG_AGREE = 150,    /* the automatic choice's agreement (select/stats_agree.c) */
    XCHG_TAG_SPARSE = 200 /* 200..299 reserved for sparse exchange */
};

/* Slots for state an algorithm builds once per communicator and keeps
 * (node communicators, grid communicators, ...). Freed with the state. */
enum {
    XCHG_EXT_HIERARCHICAL = 0,
    XCHG_EXT_GRID = 1,
    XCHG_EXT_SPARSE = 2,
    XCHG_EXT_SELECT = 3,     /* the cached automatic choice (select.c) */
    XCHG_EXT_RECORD = 4,     /* XCHG_RECORD: the shapes seen (record.c) */
    XCHG_EXT_COUNT = 8
};

/* The XCHG_* environment settings (table in settings.c), read once per
 * communicator when its state is made and agreed there: every rank holds
 * rank 0's values. Nothing else in the library reads the environment
 * (except XCHG_TUNING_FILE, whose contents select.c agrees on per call). */
typedef enum xchg_setting_id {
    XCHG_SET_ALLTOALLV_ALGO,
    XCHG_SET_SPARSE_ALGO,
    XCHG_SET_THROTTLE,
    XCHG_SET_BRUCK_RADIX,
    XCHG_SET_HYBRID_THRESHOLD,
    XCHG_SET_AUTO_MIN_P,
    XCHG_SET_AUTO_REFRESH,
    XCHG_SET_MAX_TEMP_BYTES,
    XCHG_SET_RANKS_PER_NODE,
    XCHG_SET_NBX_BARRIER,
    XCHG_SET_CHECK,
    XCHG_SET_MPICH_THROTTLE,
    XCHG_SET_VERBOSE,
    XCHG_SET_RECORD,
    XCHG_SET_RECORD_MAX,
    XCHG_SETTING_COUNT
} xchg_setting_id;

typedef struct xchg_settings {
    xchg_algo alltoallv_algo;     /* AUTO when unset, INVALID for an unknown name */
    xchg_sparse_algo sparse_algo; /* AUTO when unset, INVALID for an unknown name */
    char alltoallv_algo_text[64], sparse_algo_text[64]; /* as set, for messages */
    int throttle;                 /* requests in flight (scattered, the model) */
    int bruck_radix;              /* 0: ceil(sqrt P) */
    int64_t hybrid_threshold;     /* bytes; -1: hybrid's default */
    long auto_min_p;              /* auto's statistics from this many ranks */
    long auto_refresh;            /* most auto calls between two refreshes */
    size_t max_temp_bytes;        /* set, or the smallest default of all ranks */
    long ranks_per_node;          /* hierarchical; 0: shared-memory nodes */
    int nbx_dissemination;        /* XCHG_NBX_BARRIER=dissemination */
    int check;                    /* XCHG_CHECK=1: the check mode */
    int verbose;                  /* XCHG_VERBOSE: 1 auto's choices, 2 every change, 3 every agreement */
    int mpich_throttle;           /* MPIR_CVAR_ALLTOALL_THROTTLE (mpich_model); 0: P */
    int record;                   /* XCHG_RECORD set on rank 0: record shapes */
    int record_max;               /* XCHG_RECORD_MAX: shapes per communicator */
    char record_path[1024];       /* XCHG_RECORD as this rank has it (rank 0 writes) */
} xchg_settings;

/* Reads the settings and agrees on them (collective over comm: one
 * MPI_Bcast, one MPI_Allreduce); rank 0 warns of rejected or differing
 * values on stderr. */
int xchg_settings_agree(MPI_Comm comm, xchg_settings *s);

typedef struct xchg_nb xchg_nb; /* a nonblocking exchange (src/progress/queue.c) */

/* Library state cached on a caller's communicator (attribute value). */
typedef struct xchg_comm_state {
    MPI_Comm pcomm;        /* private duplicate: all library traffic */
    int rank, size;
    xchg_settings settings; /* agreed once, when the state was made */
    int node_ready;        /* node_size and on_node are known (xchg_comm_node_map) */
    int auto_prepared;     /* xchg_select_prepare: 1 node map, 2 hierarchical's too */
    int hier_failed;       /* hierarchical's communicators could not be made */
    int node_size;         /* ranks sharing this rank's node (shared memory) */
    unsigned char *on_node; /* on_node[j]: rank j of pcomm shares this rank's node
                              (NULL: unknown, every other rank counts as off-node) */
    unsigned long calls;   /* collective xchg calls so far, same on all ranks */
    unsigned long hybrid_calls; /* of them, runs of hybrid (its tag parity) */
    xchg_nb *nb_head, *nb_tail; /* nonblocking exchanges queued here, in start order */
    xchg_stats last;       /* what the last call did */
    void *ext[XCHG_EXT_COUNT];
    void (*ext_free[XCHG_EXT_COUNT])(void *);
    /* References: the caller's communicator (its attribute) holds one, each
     * persistent request another, so a request outlives a freed comm. */
    int refs;
    int comm_freed;        /* the caller's communicator is gone */
    /* MPI refused the duplicate (pcomm is MPI_COMM_NULL): asked again when
     * retry_in counts down to 0; the wait doubles up to 64 calls. */
    int retry_in, refused_wait, refused_class;
    char refused_msg[MPI_MAX_ERROR_STRING];
} xchg_comm_state;

/* Returns the state for comm, creating it on first use (collectively: it
 * duplicates comm). MPI_Comm_dup may be refused (MPICH allows 2048
 * communicators per process) and may fail on some ranks only, so the
 * outcome is agreed: every rank gets the duplicate, or every rank an error
 * of the same class naming the limit (comm's error handler is set to
 * return during the dup, so MPI never aborts in a call the caller did not
 * make). After a refusal the communicator keeps a state without pcomm and
 * the dup is tried again after 1, 2, 4, ... 64 calls (comm.c). */
int xchg_comm_state_get(MPI_Comm comm, xchg_comm_state **state);
/* Fills cs->node_size and cs->on_node on first need (collective over
 * cs->pcomm: one allreduce, and a node split only where this process has
 * not yet learnt the node of every member from an earlier split). Never
 * fails for want of a communicator: the node map only informs the
 * automatic choice, so a refused split leaves it unknown. */
int xchg_comm_node_map(xchg_comm_state *cs);
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

/* Nonblocking barrier (src/core/ibarrier.c): MPI_Ibarrier, or under SMPI
 * (whose MPI_Ibarrier is broken) and with XCHG_NBX_BARRIER=dissemination a
 * dissemination barrier of Isend/Irecv on comm with tags tag ..
 * tag+XCHG_IBARRIER_TAGS-1 (reserve them). start, then test until *done;
 * xchg_ibarrier_free releases a barrier abandoned before done. */
enum { XCHG_IBARRIER_TAGS = 31 };
typedef struct xchg_ibarrier {
    int dissemination;
    MPI_Comm comm;
    int rank, size, tag;
    MPI_Request req[2];
    int round, rounds; /* dissemination: current round, ceil(log2 size) */
    char sbuf, rbuf;
} xchg_ibarrier;
int xchg_ibarrier_start(xchg_ibarrier *b, MPI_Comm comm, int tag, int dissemination);
int xchg_ibarrier_test(xchg_ibarrier *b, int *done);
void xchg_ibarrier_free(xchg_ibarrier *b);

/* Simulated time of a local copy or pack of `bytes` bytes (SMPI build only,
 * src/core/simcost.c: 10 ns per call + 5 GB/s unless XCHG_SIM_COPY_NS /
 * XCHG_SIM_COPY_GBPS say otherwise). Every copy site calls it once per
 * copy; the pack/unpack/self-copy helpers above already do. Free on real
 * MPI. */
#ifdef XCHG_SMPI
void xchg_charge_copy(size_t bytes);
#else
static inline void xchg_charge_copy(size_t bytes)
{
    (void)bytes;
}
#endif

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
    /* Set by auto when its blocking agreement of this call already carried
     * what the padded algorithms agree on (xchg_padded_agree): the largest
     * block of any rank and the smallest temporary-memory budget left (and
     * no argument error). They then skip their own allreduce. */
    int padded_agreed;
    uint64_t padded_max_block, padded_budget;
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
    int baseline;          /* 1: a reference to compare against (vendor, the
                              models of MPICH's and Open MPI's defaults):
                              never chosen by auto, tuning or "best" */
    int agrees_errors;     /* runs an agreement collective before any data
                              moves and honours xchg_call.arg_err */
} xchg_algo_info;

/* The registry (src/alltoallv/registry.c). */
const xchg_algo_info *xchg_registry_find(xchg_algo id);
const xchg_algo_info *xchg_registry_find_name(const char *name);
int xchg_registry_count(void);
const xchg_algo_info *xchg_registry_at(int i);

/* The radix bruck_radix uses on P ranks (XCHG_BRUCK_RADIX or ceil(sqrt P)). */
int xchg_bruck_radix_for(const xchg_settings *s, int P);
/* hybrid's threshold: blocks of more bytes go directly (XCHG_HYBRID_THRESHOLD). */
size_t xchg_hybrid_threshold_for(const xchg_settings *s);

/* The automatic choice (src/select/select.c): the same on every rank.
 * xchg_select_alltoallv is for one-shot calls: it returns the choice
 * cached on the communicator and arms a nonblocking refresh from this
 * call's statistics, which xchg_waitall progresses and
 * xchg_select_finish completes (call it once the algorithm has run,
 * whatever it returned). xchg_select_alltoallv_now chooses from this
 * call's own statistics, blocking (persistent init). */
int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen);
int xchg_select_finish(xchg_call *c);
/* A rank that leaves a call without running the algorithm (a local
 * argument error) drops the refresh it armed, before anything was sent. */
void xchg_select_abandon(xchg_call *c);
int xchg_select_alltoallv_now(xchg_call *c, xchg_algo *chosen);
/* The one-time collective setup the automatic choice needs on cs, made
 * at a point every rank reaches together: the node map (auto's first,
 * blocking agreement) and, for nonblocking exchanges (at their start,
 * outside the coroutine), hierarchical's node communicators where the
 * model may choose it. Nothing is done twice; failures only narrow the
 * choice. */
void xchg_select_prepare(xchg_comm_state *cs, int nonblocking);
/* hierarchical.c: its node and leader communicators made now
 * (collective over cs->pcomm), and whether they exist. */
int xchg_hierarchical_prepare(xchg_comm_state *cs);
int xchg_hierarchical_ready(const xchg_comm_state *cs);

/* Nonblocking exchanges (src/progress/queue.c): fn(arg) runs as a
 * coroutine once the exchanges started before it on cs are complete;
 * started at once as far as it goes. xchg_nb_test and xchg_nb_wait
 * progress every queue; the result is fn's return value. xchg_nb_free
 * only once done. xchg_nb_drain completes everything queued on cs: every
 * other entry point that uses cs->pcomm calls it first. */
int xchg_nb_start(xchg_comm_state *cs, int (*fn)(void *), void *arg, xchg_nb **out);
int xchg_nb_test(xchg_nb *nb, int *done);
int xchg_nb_wait(xchg_nb *nb);
void xchg_nb_free(xchg_nb *nb);
void xchg_nb_drain(xchg_comm_state *cs);

/* The blocking MPI calls of the algorithms (src/progress/block.c): outside a
 * coroutine the MPI call of the same name and signature; inside one (a
 * nonblocking exchange) its nonblocking form, tested with yields between.
 * Algorithms call these, never the blocking MPI forms, so that one
 * implementation serves the blocking and the nonblocking exchange. */
int xchg_mpi_wait(MPI_Request *req, MPI_Status *st);
int xchg_mpi_waitall(int n, MPI_Request req[], MPI_Status st[]);
int xchg_mpi_waitany(int n, MPI_Request req[], int *index, MPI_Status *st);
int xchg_mpi_waitsome(int n, MPI_Request req[], int *outcount, int idx[], MPI_Status st[]);
int xchg_mpi_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Status *st);
int xchg_mpi_probe(int src, int tag, MPI_Comm comm, MPI_Status *st);
int xchg_mpi_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                      MPI_Comm comm, MPI_Status *st);
int xchg_mpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm);
int xchg_mpi_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, MPI_Comm comm);
int xchg_mpi_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int xchg_mpi_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm);
int xchg_mpi_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm);
int xchg_mpi_scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm);
int xchg_mpi_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     MPI_Comm comm);
int xchg_mpi_scatterv(const void *sbuf, const int scounts[], const int displs[],
                      MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                      MPI_Comm comm);
/* Under MPICH (which raises completion errors of MPI_Wait and MPI_Test on
 * MPI_COMM_WORLD's handler): MPI_COMM_WORLD's handler returns between
 * xchg_world_errors_return(1) and (0); nestable, thread-safe. Elsewhere a
 * no-op. */
void xchg_world_errors_return(int on);
/* Whether the caller runs in a nonblocking exchange's coroutine
 * (src/progress/coro.h). */
int xchg_coro_inside(void);

/* MPI_Waitall for algorithms: while an automatic choice's refresh is in
 * flight it polls (MPI_Testall) and progresses the refresh, so the
 * agreement overlaps the exchange; otherwise plain MPI_Waitall. */
int xchg_waitall(xchg_call *c, int n, MPI_Request req[]);
/* The same, telling which request failed: on an error either *failed is
 * its index (the refresh's wait saw it; the others may still be active)
 * or, *failed being -1, MPI_Waitall's statuses (when not NULL) hold every
 * request's error (MPI_ERR_IN_STATUS). */
int xchg_waitall_statuses(xchg_call *c, int n, MPI_Request req[], MPI_Status statuses[],
                          int *failed);
/* For long posting loops (every XCHG_POLL_EVERY requests posted): starts
 * the armed refresh and advances it without waiting (usually one
 * MPI_Test), so its rounds go on while the data is posted: each round
 * waits for a poll on both sides, so polls must come about as often as a
 * round's latency; every 8 posts (1.6 us simulated) measured best at
 * P=64 against 4 and 16 (sim, random 256 B to 1 KiB). No-op otherwise. */
void xchg_select_poll(xchg_call *c);
#define XCHG_POLL_EVERY 8
/* MPI_Waitany (status ignored) likewise. */
int xchg_waitany(xchg_call *c, int n, MPI_Request req[], int *index);

/* Temporary memory: counted against the call's limit (XCHG_MAX_TEMP_BYTES)
 * and its peak reported in xchg_stats. On failure returns NULL and sets *err
 * to an MPI_ERR_NO_MEM code whose message names `what`. Release with
 * xchg_temp_free and the same byte count. */
void *xchg_temp_alloc(xchg_call *c, size_t bytes, const char *what, int *err);
void xchg_temp_free(xchg_call *c, void *p, size_t bytes);
/* The limit of a call on cs: the agreed XCHG_MAX_TEMP_BYTES, or lower on a
 * rank where the test-only XCHG_FAULT_TEMP_LIMIT is set (memory.c). */
size_t xchg_temp_limit_of(const xchg_comm_state *cs);

/* XCHG_RECORD (record.c): the count matrix of each distinct exchange shape.
 * xchg_record_call is collective over pcomm when cs->settings.record is
 * set (every rank calls it, also one with an argument error: local_err,
 * which makes every rank skip the call): one allreduce of the hashes of
 * the ranks' send byte counts (counts[j] x type_size), and a gather of the
 * counts to rank 0 the first time a shape is seen; count_it: this is a call
 * of the shape (0 for a persistent init, whose starts count). *shape: the
 * shape's index for xchg_record_count (-1: not recorded).
 * xchg_record_count counts one more call of a shape (a persistent start;
 * no traffic). */
int xchg_record_call(xchg_comm_state *cs, const int counts[], int type_size, int local_err,
                     int count_it, long *shape);
void xchg_record_count(xchg_comm_state *cs, long shape);

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

/* The body of xchg_alltoallv and _algo (from_env: XCHG_ALLTOALLV_ALGO
 * decides, as for auto), also of the large-count entries once their arrays
 * are converted: pre_err is an argument error their conversion found
 * (MPI_SUCCESS if none), treated as one found by the checks here. */
/* Everything of an xchg_alltoallv call after the communicator's state is
 * known: checks, agreement, choice, the exchange, stats. Returns the code
 * without raising it (the caller does, at the end of the call or in the
 * completing xchg_wait/xchg_test of a nonblocking one). */
typedef struct xchg_a2av_args {
    xchg_algo algo;
    int from_env, pre_err;
    const void *sendbuf;
    const int *sendcounts, *sdispls;
    MPI_Datatype sendtype;
    void *recvbuf;
    const int *recvcounts, *rdispls;
    MPI_Datatype recvtype;
    MPI_Comm comm; /* the caller's */
    xchg_comm_state *cs;
} xchg_a2av_args;
int xchg_alltoallv_body(const xchg_a2av_args *a);
int xchg_alltoallv_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                       const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                       void *recvbuf, const int recvcounts[], const int rdispls[],
                       MPI_Datatype recvtype, MPI_Comm comm);
/* The same for xchg_alltoallv_init and _init_algo (src/api/persistent.c). */
/* xchg_ialltoallv and _algo (src/api/persistent.c). */
int xchg_ialltoallv_run(xchg_algo algo, int from_env, const void *sendbuf,
                        const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int rdispls[],
                        MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req);
/* The parts of xchg_ialltoallv that xchg_ialltoallv_c shares
 * (persistent.c): the checks before a request can be made (raised on comm);
 * the start of a request for the exchange a, whose arrays are copies the
 * request takes over (arrays, and large if not NULL; both freed on
 * failure, which is MPI_ERR_NO_MEM, not raised); the report of a call
 * that ran blocking for want of memory (rc: its result). */
typedef struct xchg_large_nb xchg_large_nb;
int xchg_ialltoallv_prepare(MPI_Comm comm, xchg_request *req, int *P, xchg_comm_state **cs);
int xchg_ialltoallv_launch(const xchg_a2av_args *a, int *arrays, xchg_large_nb *large,
                           xchg_request *req);
int xchg_ialltoallv_ran_blocking(MPI_Comm comm, int rc, const char *fn);
#if XCHG_HAVE_LARGE_COUNT
/* xchg_ialltoallv_c's exchange (large_count.c), run as the request's
 * coroutine: agree whether every rank's values fit in int, then the int
 * exchange a, or MPI's MPI_Ialltoallv_c; and the free of its copies. */
int xchg_large_nb_body(xchg_large_nb *l, const xchg_a2av_args *a);
void xchg_large_nb_free(xchg_large_nb *l);
#endif
int xchg_alltoallv_init_run(xchg_algo algo, int from_env, int pre_err, const void *sendbuf,
                            const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Info info, xchg_request *req);
#if XCHG_HAVE_LARGE_COUNT
/* A persistent request that is MPI's own MPI_Alltoallv_init_c on pcomm
 * (persistent.c): for large-count inits whose values some rank cannot give
 * xchg's algorithms. Collective; keeps copies of the arrays and of derived
 * datatypes, as every request does. */
int xchg_request_mpi_large(xchg_comm_state *cs, const void *sendbuf,
                           const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                           const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                           xchg_request *req);
#endif

/* The algorithm to run: algo itself, or with from_env the one
 * XCHG_ALLTOALLV_ALGO names (s: the agreed settings); an error if it is not
 * in this build. */
int xchg_resolve_algo(const xchg_settings *s, xchg_algo algo, int from_env, xchg_algo *out);

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

/* Agreement of argument errors (error_agree.c). xchg_agree_flag is this rank's
 * contribution to an MPI_MAX reduction of one int64 (0: no error);
 * xchg_agree_result turns the reduced value into the call's result: this
 * rank's own error, or one of the same class naming the failing rank.
 * xchg_agree_errors does both around one MPI_Allreduce on pcomm. */
int64_t xchg_agree_flag(int rank, int size, int local_err);
int xchg_agree_result(int rank, int size, int local_err, int64_t all, const char *who);
int xchg_agree_errors(MPI_Comm pcomm, int rank, int size, int local_err, const char *who);

/* XCHG_CHECK=1: verifies the counts of all ranks against each other (one
 * MPI_Alltoall, one MPI_Allreduce) and agrees on local_err; the same error
 * class on every rank. c may carry zero arrays when local_err is set. */
int xchg_check_mode(xchg_call *c, int local_err);

#endif /* XCHG_INTERNAL_H */
