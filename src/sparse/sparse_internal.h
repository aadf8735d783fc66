/*
 * sparse_internal.h - what the sparse exchange algorithms share: one call's
 * state, the signature of an algorithm, and the send/receive/deliver
 * helpers of sparse.c, so each algorithm file holds only its protocol.
 */
#ifndef XCHG_SPARSE_INTERNAL_H
#define XCHG_SPARSE_INTERNAL_H

#include "core/ibarrier.h"
#include "progress/progress.h"

/* Tags, inside the XCHG_TAG_SPARSE range (200..299). Each call uses the
 * set of its parity (sparse calls on the communicator so far, mod 2):
 * every sparse algorithm synchronizes all ranks once per call (a collective,
 * a barrier, or a closing fence), so ranks are at most one sparse call
 * apart and a message of call k+1 never matches a probe of call k. */
enum {
    XCHG_SPARSE_TAG_SET = 50,    /* tags of one parity */
    XCHG_SPARSE_TAG_DATA = 0,    /* the messages themselves */
    XCHG_SPARSE_TAG_BARRIER = 1, /* + round: xchg_ibarrier's (XCHG_IBARRIER_TAGS) of nbx
                                    and nbx_loc (nbx_loc's node barriers: the same tags
                                    on the node communicator) */
    /* 40..47: the node-aggregated variants pex_loc and nbx_loc (loc_common.h) */
    XCHG_SPARSE_TAG_LOC_GATHER = 40,  /* step 1: to the relay inside the node */
    XCHG_SPARSE_TAG_LOC_PAIR = 41,    /* step 2: one aggregate per node pair */
    XCHG_SPARSE_TAG_LOC_SCATTER = 42, /* step 3: from the relay to the receivers */
    XCHG_SPARSE_TAG_LOC_END = 48,     /* first tag after the loc variants' range */
};

_Static_assert(XCHG_SPARSE_TAG_BARRIER + XCHG_IBARRIER_TAGS <= XCHG_SPARSE_TAG_LOC_GATHER,
               "the barrier tags end below the loc variants' tags");
_Static_assert(XCHG_SPARSE_TAG_LOC_SCATTER < XCHG_SPARSE_TAG_LOC_END &&
                   XCHG_SPARSE_TAG_LOC_END <= XCHG_SPARSE_TAG_SET,
               "the loc variants' tags stay inside one tag set");

/* A received message's buffer: count elements addressed at `addr`. */
typedef struct xchg_sparse_buf {
    char *mem;      /* allocation (NULL: not owned, e.g. the caller's sendbuf) */
    size_t bytes;
    char *addr;     /* where MPI addresses element 0 */
    int zcount;     /* datatype of size 0: the count travels as one int */
} xchg_sparse_buf;

typedef struct xchg_sparse_msg {
    int source, count;
    xchg_sparse_buf buf;
} xchg_sparse_msg;

/* Per-communicator state of the sparse exchange (cs->ext[XCHG_EXT_SPARSE]). */
typedef struct xchg_sparse_state {
    unsigned long calls;  /* sparse calls so far: the same on all ranks */
    /* What the last census collective (pex's alltoall, rsx's
     * reduce_scatter) carried besides the counts: the remote messages of
     * all ranks, each clipped to XCHG_SPARSE_DEGREE_CLIP; -1 before any.
     * The same on every rank; sparse auto chooses the next call from it. */
    long long census_msgs;
    unsigned long long auto_printed; /* XCHG_VERBOSE: what sparse auto has named */
    xchg_sparse_algo auto_last;      /* its last choice (-1 none) */
    int table_asked;      /* sparse auto asked whether the tuning table applies */
    unsigned long long shm_grow, shm_want; /* pex_loc_shm.c: agreed size, node's last need */
    MPI_Win win;          /* rma: window of P ints (wincounts, winsize), made on first use */
    int *wincounts, winsize;
    struct xchg_sparse_state *next_live; /* rma.c's list of live windows */
} xchg_sparse_state;

void xchg_sparse_window_free(xchg_sparse_state *ss); /* rma.c: its window, if any */

typedef struct xchg_sparse_call {
    /* set by an algorithm that hands the call to another (pex_loc and
     * nbx_loc without a node layout): what really ran, for the stats */
    xchg_sparse_algo ran;
    const void *sendbuf;
    int ndest;
    const int *dests, *counts, *displs;
    xchg_typeinfo ti;
    MPI_Comm comm;          /* private duplicate */
    xchg_comm_state *cs;
    xchg_sparse_state *ss;
    int rank, size;
    int tag_data, tag_barrier;
    xchg_call mem;          /* temporary memory accounting (temp_* fields) */
    /* This rank's argument error (0 none). The call then comes with no
     * messages (ndest 0, NULL arrays, no type information), and an
     * algorithm whose census can carry it (xchg_sparse_carries_errors)
     * marks its census with it: every rank sees the mark and returns the
     * error agreed by xchg_sparse_agree, none exchanges. */
    int local_err;
    /* output: a callback, or messages kept for the packed result */
    xchg_sparse_recv_fn fn;
    void *ctx;
    int fn_rc;              /* first nonzero callback return */
    xchg_sparse_msg *msgs;
    int nmsgs, capmsgs;
} xchg_sparse_call;

typedef int (*xchg_sparse_fn)(xchg_sparse_call *s);

/* An entry of algos.def (registry.c), in the alltoallv registry's shape. */
typedef struct xchg_sparse_info {
    xchg_sparse_algo id;
    const char *name;
    const char *desc; /* one line: when it wins */
    xchg_sparse_fn run;
    int (*carries_errors)(int P); /* census carries an argument error on P ranks; NULL: never */
    /* Its own XCHG_* settings (NULL-terminated, read with xchg_setting_of). */
    const xchg_setting_def *const *settings;
} xchg_sparse_info;

const xchg_sparse_info *xchg_sparse_registry_find(xchg_sparse_algo id);
const xchg_sparse_info *xchg_sparse_registry_find_name(const char *name);
int xchg_sparse_registry_count(void);
const xchg_sparse_info *xchg_sparse_registry_at(int i);
/* The entries' own settings, i-th (NULL past the last); nbx's XCHG_NBX_BARRIER. */
const xchg_setting_def *xchg_sparse_registry_setting(int i);
int xchg_sparse_nbx_dissemination(const xchg_settings *s);
/* Runs algorithm algo (one of the registry's) on s: how one algorithm
 * hands a call to another. */
int xchg_sparse_run(xchg_sparse_algo algo, xchg_sparse_call *s);
int xchg_sparse_always(int P);

/* Sparse auto's node facts, the same on every rank (layout and window made on first use,
 * agreed): mean ranks per node (0: none); whether pex_loc_shm's node window is made. */
double xchg_sparse_ranks_per_node(xchg_comm_state *cs);
int xchg_sparse_node_window(xchg_comm_state *cs);

/* Tag `off` (XCHG_SPARSE_TAG_*) of this call's parity. */
static inline int xchg_sparse_tag(const xchg_sparse_call *s, int off)
{
    return s->tag_data - XCHG_SPARSE_TAG_DATA + off;
}

/* A rank's remote messages as it adds them to a census, clipped: the
 * census folds them into the ints it sends anyway (6 bits in pex's, a
 * multiple of P in rsx's); auto only tells few messages from many. */
enum { XCHG_SPARSE_DEGREE_CLIP = 63 };
int xchg_sparse_census_degree(const xchg_sparse_call *s);

/* Can `algo` carry an argument error through its census at this P?
 * (pex always; rsx while P * (largest sum) fits an int, see rsx.c) */
int xchg_sparse_carries_errors(xchg_sparse_algo algo, int P);
int xchg_sparse_rsx_carries_errors(int P);

/* After a census that showed an error mark: the error every rank returns
 * (one more collective, on the error path only). */
int xchg_sparse_agree(xchg_sparse_call *s);

/* Is entry i a message to another rank (nonzero count, not self)? */
static inline int xchg_sparse_remote(const xchg_sparse_call *s, int i)
{
    return s->counts[i] > 0 && s->dests[i] != s->rank;
}

/* Posts a send of every remote entry (synchronous mode if ssend) into reqs
 * (ndest entries); *nreq gets how many were posted. */
int xchg_sparse_isend_all(xchg_sparse_call *s, int ssend, MPI_Request *reqs, int *nreq);

/* XCHG_MAX_INFLIGHT, the requests a sparse exchange keeps posted at once
 * (INT_MAX: no bound). Past it, sends go out through a window of that
 * many slots and receives are taken by probe, none posted:
 * xchg_sparse_exchange_windowed sends ours and takes the nrecv messages
 * of this call, polling both. */
int xchg_sparse_window(const xchg_sparse_call *s);
int xchg_sparse_exchange_windowed(xchg_sparse_call *s, int nrecv);

/* A window of sends (synchronous mode if ssend) of the remote entries, in
 * order, at most xchg_sparse_window(s) in flight: progress.h's
 * xchg_send_window over dests. open takes the slots (w.req NULL after it:
 * no memory, nothing posted) and posts the first; the caller polls
 * xchg_send_window_progress(&ss->w, ...) until xchg_send_window_done;
 * close frees the slots (the requests must be complete or finished). */
typedef struct xchg_sparse_sends {
    xchg_send_window w;
    xchg_sparse_call *s;
    int ssend;
} xchg_sparse_sends;
int xchg_sparse_sends_open(xchg_sparse_call *s, int ssend, xchg_sparse_sends *ss);
void xchg_sparse_sends_close(xchg_sparse_sends *ss);

/* Delivers this rank's own entry, if any, straight from the send buffer. */
int xchg_sparse_deliver_self(xchg_sparse_call *s);

/* A buffer for `count` elements, and the receive into it (count known). */
int xchg_sparse_buf_alloc(xchg_sparse_call *s, int count, xchg_sparse_buf *b);
void xchg_sparse_buf_free(xchg_sparse_call *s, xchg_sparse_buf *b);
int xchg_sparse_irecv(xchg_sparse_call *s, xchg_sparse_buf *b, int count, int source,
                      MPI_Request *req);

/* Receives the probed message (status of a matching probe of tag_data)
 * and delivers it. */
int xchg_sparse_recv_probed(xchg_sparse_call *s, const MPI_Status *st);

/* Hands a received message to the caller: calls the callback and frees
 * the buffer, or keeps it for the packed result. Takes ownership of b. */
int xchg_sparse_deliver(xchg_sparse_call *s, int source, int count, xchg_sparse_buf *b);

/* pex and rma: the sources and counts are known (recvcounts, P entries, 0
 * for no message): receive them all, send ours, deliver. */
int xchg_sparse_p2p_known(xchg_sparse_call *s, const int *recvcounts);

#endif /* XCHG_SPARSE_INTERNAL_H */
