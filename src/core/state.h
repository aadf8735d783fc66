/*
 * state.h - the bottom of libxchg (src/core/): the private communicator's
 * tags and state slots, the agreed XCHG_* settings (settings.h) and the
 * state cached on a caller's communicator. Every layer above includes it (through core.h).
 */
#ifndef XCHG_CORE_STATE_H
#define XCHG_CORE_STATE_H

#include "settings.h"
#include "xchg.h"
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Tags on the private communicator. Each algorithm family has its own, so
 * that a stray message of one can never be taken for another's. The
 * alltoallv algorithms' tags lie in [XCHG_TAG_ALLTOALLV_FIRST,
 * XCHG_TAG_ALLTOALLV_END): each algorithm's are in its registry entry
 * (src/alltoallv/algos.def), which a test checks do not overlap, so adding
 * an algorithm edits nothing here. */
enum {
    XCHG_TAG_ALLTOALLV_FIRST = 100,
    XCHG_TAG_ALLTOALLV_END = 150,
    XCHG_TAG_AGREE = 150,    /* the automatic choice's agreement (select/stats_agree.c) */
    XCHG_TAG_NEIGHBOR = 160, /* 160..169 neighbour exchange (src/neighbor/) */
    XCHG_TAG_SPARSE = 200 /* 200..299 reserved for sparse exchange */
};

/* Slots for state kept once per communicator (node communicators, grid
 * communicators, ...), freed with the state. The layers' own are named
 * here; every alltoallv algorithm has one more of its own, from
 * XCHG_EXT_ALGO on, numbered by its place in the registry
 * (xchg_algo_slot, src/alltoallv/registry.c). */
enum {
    XCHG_EXT_SPARSE = 0,
    XCHG_EXT_SELECT = 1,     /* the cached automatic choice (select.c) */
    XCHG_EXT_RECORD = 2,     /* XCHG_RECORD: the shapes seen (record.c) */
    XCHG_EXT_NODES = 3,      /* the node layout (node/node_layout.c) */
    XCHG_EXT_NEIGHBOR = 4,   /* the topology's graph and auto's choice (api/neighbor.c) */
    XCHG_EXT_SHM = 5,        /* the one-node window of blocking calls, shared
                                by communicators of one group (node/shm_window.c) */
    XCHG_EXT_NODE_WINDOW = 6, /* the node layout's windows (node/shm_window.c) */
    XCHG_EXT_SHM_OWN = 7,    /* the one-node window of nonblocking and persistent
                                calls, the communicator's own (node/shm_window.c) */
    XCHG_EXT_ALGO = 8,       /* the first algorithm's slot */
    XCHG_EXT_COUNT = 48      /* room for 40 algorithms (registry.c asserts it) */
};

typedef struct xchg_nb xchg_nb; /* a nonblocking exchange (src/progress/queue.c) */

/* A communicator's first calls before it is set up (src/select/phase.c):
 * kept in the state itself, so that counting them cannot fail on one
 * rank. The same on every rank. */
enum { XCHG_PHASE_REF_FIELDS = 32 }; /* at least select's XCHG_AF_COUNT */
typedef struct xchg_phase_counts {
    unsigned long calls;    /* auto calls passed to MPI so far */
    unsigned long check_at; /* the call whose statistics are agreed next (0: none) */
    unsigned long setup_at; /* the call that sets up (0: not decided) */
    double mpi_seconds;     /* this rank's time in the timed MPI calls before a check */
    unsigned long timed;    /* ... and their number */
    double recent[16];      /* this rank's last timed MPI calls (s), the verdict's */
    unsigned long nrecent;  /* ... reference: recent[k % 16] for k < nrecent */
    int have_ref;           /* 1: a check's decision set it up (the verdict judges it;
                             * -1: decided, not made yet), on the statistics */
    long long ref_fields[XCHG_PHASE_REF_FIELDS]; /* ... agreed at that check */
    int ref_algo;           /* the algorithm (xchg_algo) that check set up for */
    /* 1: the verdict measured auto's choice slower than MPI's call here;
     * blocking auto calls pass to MPI's again (calls counts them afresh),
     * and a check at check_at looks whether the statistics moved. */
    int vetoed;
    int remembered;         /* a check kept MPI's call for a veto remembered from an
                             * earlier communicator (phase.c's veto_memory) */
    /* A nonblocking call's check in flight (MPI_Iallreduce on the caller's
     * communicator): settled when its request completes or at the next
     * call's start, whichever comes first (phase.c). */
    int check_pending;
    MPI_Request check_req;
    long long check_v[XCHG_PHASE_REF_FIELDS];
    /* A nonblocking call that this rank's argument error made empty blocks:
     * completed at the next call or when the state goes (its empty arrays) */
    MPI_Request orphan;
    int *orphan_zeros;
} xchg_phase_counts;
struct xchg_wait_hook;          /* work the waits progress (src/progress/progress.h) */

/* Library state cached on a caller's communicator (attribute value). */
typedef struct xchg_comm_state {
    MPI_Comm pcomm;        /* private duplicate: all library traffic */
    int rank, size;
    xchg_settings settings; /* agreed once, when the state was made */
    int node_ready;        /* node_size and on_node are known (xchg_comm_node_map) */
    int auto_prepared;     /* xchg_select_prepare: 1 node map, 2 the node layout too */
    int coro_wanted_prepare; /* a coroutine ran without an algorithm's prepare step
                              (shm's own window): the next blocking call makes it
                              (node/shm_window.c) */
    int nodes_failed;      /* the node layout, or a node-aware algorithm's state on
                              it, could not be made (agreed; node_layout.h): auto
                              chooses no node-aware algorithm here */
    int node_size;         /* ranks sharing this rank's node (shared memory) */
    unsigned char *on_node; /* on_node[j]: rank j of pcomm shares this rank's node
                              (NULL: unknown, every other rank counts as off-node) */
    unsigned long calls;   /* collective xchg calls so far, same on all ranks */
    xchg_nb *nb_head, *nb_tail; /* nonblocking exchanges queued here, in start order */
    xchg_stats last;       /* what the last call did */
    /* Armed by the automatic choice while its refresh is in flight: the
     * algorithms' waits progress it (NULL: nothing to progress). */
    const struct xchg_wait_hook *wait_hook;
    void *ext[XCHG_EXT_COUNT];
    void (*ext_free[XCHG_EXT_COUNT])(void *);
    /* A count each slot's owner may keep without memory of its own, so
     * that keeping it cannot fail on one rank only (hybrid: its runs,
     * the same on every rank, for its tag parity). */
    unsigned long ext_count[XCHG_EXT_COUNT];
    /* References: the caller's communicator (its attribute) holds one, each
     * persistent request another, so a request outlives a freed comm. */
    int refs;
    int comm_freed;        /* the caller's communicator is gone */
    /* MPI refused the duplicate (pcomm is MPI_COMM_NULL): asked again when
     * retry_in counts down to 0; the wait doubles up to 64 calls. */
    int retry_in, refused_wait, refused_class;
    char refused_msg[MPI_MAX_ERROR_STRING];
    /* Not set up yet (xchg_comm_state_bare): no pcomm, and settings are
     * this rank's own, not agreed; xchg_comm_state_get sets it up. */
    int bare;
    xchg_phase_counts phase;
} xchg_comm_state;

/* Returns the state for comm, creating it on first use (collectively: it
 * duplicates comm). MPI_Comm_dup may be refused (MPICH allows 2048
 * communicators per process) and may fail on some ranks only, so the
 * outcome is agreed: every rank gets the duplicate, or every rank an error
 * of the same class naming the limit (comm's error handler is set to
 * return during the dup, so MPI never aborts in a call the caller did not
 * make). After a refusal the communicator keeps a state without pcomm and
 * the dup is tried again after 1, 2, 4, ... 64 calls (comm.c); *refused
 * (if not NULL) tells that this was such a refusal. */
int xchg_comm_state_get(MPI_Comm comm, const xchg_algo_names *names,
                        xchg_comm_state **state, int *refused);
/* The state of comm, made on first use without any communication: no
 * private duplicate, settings read on this rank alone (state->bare). What
 * a communicator's first calls run on (select/phase.c) until
 * xchg_comm_state_get sets it up, collectively, at a call every rank
 * reaches together. An existing state, set up or not, is returned as is. */
int xchg_comm_state_bare(MPI_Comm comm, const xchg_algo_names *names,
                         xchg_comm_state **state);
/* The state of comm if it has one (*state NULL if not); no communication. */
int xchg_comm_state_lookup(MPI_Comm comm, xchg_comm_state **state);
/* The state this thread last looked up on comm where nothing has changed
 * any communicator's state attribute since (no MPI call); else NULL. */
xchg_comm_state *xchg_comm_state_cached(MPI_Comm comm);
/* Fills cs->node_size and cs->on_node on first need (collective over
 * cs->pcomm: a node split, unless the state was made with the map already,
 * agreed, from the record of earlier splits). Never fails for want of a
 * communicator: the node map only informs the automatic choice, so a
 * refused split leaves it unknown. */
int xchg_comm_node_map(xchg_comm_state *cs);
/* One more / one less reference; the last release frees the state (and its
 * private duplicate, which is collective like MPI_Comm_free). */
void xchg_comm_state_retain(xchg_comm_state *state);
void xchg_comm_state_release(xchg_comm_state *state);

#endif /* XCHG_CORE_STATE_H */
