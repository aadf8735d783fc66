/*
 * shm_window.h - src/node/: node-shared windows (MPI-3 shared memory):
 * one for a communicator whose ranks all share one node (shm), and the
 * node windows, one per node of the node layout, for node-aware
 * algorithms (node_pairs_shm). The same layout and flags serve both.
 *
 * One MPI_Win_allocate_shared segment per node: the node's rank 0
 * allocates every rank's region, the others 0 bytes, and every rank finds
 * its own region at its node rank's offset in rank 0's segment (per-rank
 * segments collide under SimGrid's SMPI, whose MPI_Win_shared_query gives
 * one address for every rank). A rank's region is its epoch flag and two
 * alternating halves (epoch parity); each half is a header, a table of P
 * (offset, bytes) entries and XCHG_SHM_BYTES of packed blocks.
 *
 * Made on first need (collective over cs->pcomm) and freed with the
 * communicator's state. A one-node window serves blocking calls of every
 * communicator with the same group in the same order (MPI_IDENT): made by
 * the first, borrowed by the others (agreed at their first need) and freed
 * with the last of them, so the node's shared memory grows with the groups
 * that run window-backed exchanges, not with the communicators. Borrowing
 * is safe because blocking collectives on overlapping communicators must
 * be called in one order on every process (MPI's rule against cyclic
 * dependencies), so the window's epochs count their calls alike on every
 * member. Nonblocking and persistent calls may be in flight on several
 * communicators at once, in any order, and whether a coroutine may use a
 * window must be decided from its own communicator's history alone (the
 * same on every rank), so they never use the borrowable window: they use
 * the communicator's own (cs->ext[XCHG_EXT_SHM_OWN]), made at a
 * persistent init, at the first nonblocking start that needs it (which
 * then blocks, as a start whose algorithm's one-time step is missing
 * does), or, for auto, at the next blocking call after a coroutine ran
 * without it (cs->coro_wanted_prepare).
 * Under MPI_THREAD_MULTIPLE nothing is borrowed. Whether
 * it can be used is agreed: every rank of pcomm on one shared-memory node,
 * no emulated nodes (XCHG_RANKS_PER_NODE below P), not the SMPI build, the
 * node's window within XCHG_MAX_TEMP_BYTES, and the window made on every
 * rank; otherwise every rank sees it unusable. A growth that would pass
 * XCHG_MAX_TEMP_BYTES keeps the window as it is. Node windows: below.
 */
#ifndef XCHG_NODE_SHM_WINDOW_H
#define XCHG_NODE_SHM_WINDOW_H

#include "progress/progress.h"

/* What a rank tells its peers about one epoch (the half's header). */
enum { XCHG_SHM_OK = 0, XCHG_SHM_OVERFLOW = 1, XCHG_SHM_ARG_ERROR = 2 };

typedef struct xchg_shm_header {
    uint64_t status;   /* XCHG_SHM_OK, _OVERFLOW or _ARG_ERROR */
    uint64_t need;     /* OVERFLOW: the data bytes this rank needed */
    int64_t err;       /* ARG_ERROR: xchg_agree_flag of this rank's error */
    uint64_t pad[5];
} xchg_shm_header;

typedef struct xchg_shm_entry {
    uint64_t off, bytes; /* one destination's packed block in the half's data */
} xchg_shm_entry;

typedef struct xchg_shm_window {
    int usable;      /* agreed: 0 means every rank runs another exchange */
    MPI_Comm node;   /* the shared-memory communicator: pcomm (every rank on one
                      * node) or, for a node window, the layout's node (not owned) */
    MPI_Win win;
    char *base;      /* the node's segment (rank 0's) */
    int P, rank;     /* the window's ranks (node's members), this rank's place */
    size_t entries;  /* table entries per half (one per rank of pcomm) */
    size_t half;     /* data bytes per half */
    size_t half_stride, stride; /* bytes per half (header, table, data), per rank */
    uint64_t epoch;  /* the last epoch published (0: none since made) */
    uint64_t grow_to; /* agreed: data bytes the next call grows to (0: none) */
    size_t refused;  /* node windows: the smallest growth refused (0: none), not retried */
    struct xchg_shm_window *next_live; /* the windows not yet freed (shm_window.c) */
    /* a one-node window that blocking calls of other communicators may
     * borrow: its members in order, the number of communicators holding
     * it on this process, its id (agreed where made: the same on every
     * member, unique on each process) */
    MPI_Group group;
    int holders;
    uint64_t id;
    struct xchg_shm_window *next_lendable;
} xchg_shm_window;

/* The one-node window of cs for this call. Outside a coroutine the window
 * of blocking calls, made, borrowed or grown now when missing or too small
 * (collective over cs->pcomm), and the communicator's own too where a
 * coroutine wanted it. Inside one the own window where it is there and
 * large enough, else none (nothing collective there). *out is NULL when
 * it cannot be used (agreed on every rank); a failure to make or grow it
 * makes it unusable for good, never an error. first: where it is made,
 * the bytes every rank agreed the calling exchange needs at most (0: not
 * known), which sizes it unless XCHG_SHM_BYTES is set. */
int xchg_shm_window_of(xchg_comm_state *cs, size_t first, xchg_shm_window **out);
/* The communicator's own window, made or grown now (collective over
 * cs->pcomm, outside a coroutine): at a persistent init, or at a
 * nonblocking start that finds it missing or too small (registry:
 * prepare). */
int xchg_shm_own_window_of(xchg_comm_state *cs, xchg_shm_window **out);
/* Whether the own window is there and large enough, so that a coroutine
 * may run shm without a blocking start first. Depends on this
 * communicator's calls alone. */
int xchg_shm_window_ready(const xchg_comm_state *cs);
/* The node-shared memory of the windows this process takes part in (each
 * node segment's bytes, all communicators together). */
size_t xchg_shm_bytes_held(void);
/* Whether a window may be used on cs, the same on every rank: once it was
 * tried, whether it was made (agreed there); before, from the settings
 * and the build alone (a communicator of one rank has no use for it). */
int xchg_shm_window_usable(const xchg_comm_state *cs);

/* A region's first two cache lines: its epoch flag, the flags of the node
 * synchronisation's rounds, and (SMPI) what a waiting member sleeps on. */
enum { XCHG_SHM_FLAG_BYTES = 128 };

/* Rank r's flag, and the half it uses at epoch e. */
static inline uint64_t *xchg_shm_flag(const xchg_shm_window *w, int r)
{
    return (uint64_t *)(w->base + (size_t)r * w->stride);
}
static inline char *xchg_shm_half(const xchg_shm_window *w, int r, uint64_t e)
{
    return w->base + (size_t)r * w->stride + XCHG_SHM_FLAG_BYTES +
           (size_t)(e & 1) * w->half_stride;
}
static inline xchg_shm_entry *xchg_shm_table(char *half)
{
    return (xchg_shm_entry *)(half + sizeof(xchg_shm_header));
}
static inline char *xchg_shm_data(const xchg_shm_window *w, char *half)
{
    return half + sizeof(xchg_shm_header) + sizeof(xchg_shm_entry) * w->entries;
}

/* The node window of cs: one region per member of this rank's node in the
 * node layout (node: the layout's communicator of it), each half's table
 * area table_bytes (the algorithm's own layout; the same on every rank);
 * made on first need (collective over cs->pcomm,
 * outside a coroutine), cached in cs->ext[XCHG_EXT_NODE_WINDOW] and grown
 * to grow_to data bytes per half, or to a larger table area, when that is
 * larger (every rank must pass the same grow_to and table_bytes: the
 * callers agree them; a growth past XCHG_MAX_TEMP_BYTES on any node keeps
 * the window, and is not retried). One window serves every algorithm: its
 * epochs count their calls, whichever made them.
 * Usable only where every node made its window (agreed over pcomm); under
 * SMPI too, where xchg_shm_sync waits on SimGrid conditions. *out is NULL when it
 * cannot be used or is smaller than grow_to. */
int xchg_node_window_of(xchg_comm_state *cs, MPI_Comm node, size_t table_bytes,
                        size_t grow_to, xchg_shm_window **out);
/* Whether xchg_node_window_of needs no communication now for table_bytes
 * and grow_to. */
int xchg_node_window_ready(const xchg_comm_state *cs, size_t table_bytes, size_t grow_to);
/* Whether a node window may be used on cs (before one was tried: the
 * settings; after: whether it was made, agreed). */
int xchg_node_window_usable(const xchg_comm_state *cs);
/* The node window for this call, as the node algorithms take it: made or
 * grown now (xchg_node_window_of) in a blocking call; inside a coroutine
 * only where that needs no communication; never inside a coroutine under
 * SMPI, whose synchronisation's waits block the rank. *out NULL: run the
 * algorithm's message form (the same on every rank). */
int xchg_node_window_for_call(xchg_comm_state *cs, MPI_Comm node, size_t table_bytes,
                              size_t grow_to, xchg_shm_window **out);
/* Every member of the window's node has published epoch e (this rank
 * first): a dissemination barrier on flags in the window. Under SMPI,
 * where a spin on memory neither advances simulated time nor lets another
 * rank run, the same flags, a waiting member asleep on a SimGrid
 * condition until the store it waits for (shm_window.c). */
void xchg_shm_sync(xchg_shm_window *w, uint64_t e);

/* Publishes this rank's epoch e (its half written): a memory sync of the
 * window, then a release store of the flag. */
void xchg_shm_publish(xchg_shm_window *w, uint64_t e);
/* Waits until rank r has published epoch e or later (acquire; yields the
 * core after a few tries, and inside a coroutine yields to its caller). */
void xchg_shm_wait(xchg_shm_window *w, int r, uint64_t e);

/* A word of this rank's region that node-mates look at without waiting
 * (node_pairs_shm's lane arrivals): e stored once what this rank wrote
 * before is visible (release; simulated: after this rank's pending
 * charges), and whether it holds e or later (acquire). */
void xchg_shm_stamp(xchg_shm_window *w, uint64_t *word, uint64_t e);
int xchg_shm_stamped(xchg_shm_window *w, const uint64_t *word, uint64_t e);
/* A word of this rank's region that node-mates wait for (node_pairs_shm's
 * progress of writing): v stored as xchg_shm_stamp does, waking any
 * member asleep on it (simulated), and a wait until it holds v or more
 * (acquire; yields as xchg_shm_wait; simulated: asleep on this rank's
 * condition, then one flag's latency). */
void xchg_shm_announce(xchg_shm_window *w, uint64_t *word, uint64_t v);
void xchg_shm_await(xchg_shm_window *w, const uint64_t *word, uint64_t v);

#endif /* XCHG_NODE_SHM_WINDOW_H */
