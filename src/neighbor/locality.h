/*
 * locality.h - what locality.c and locality_shm.c share: locality's
 * analysis of the graph (partners, the ranks whose aggregates come here,
 * the agreed statistics) and the pieces of one exchange that both run the
 * same way (the aggregates between nodes, their receipt, the unpacking of
 * a run of blocks). They differ only inside the node: locality sends its
 * node's blocks and forwards as messages, locality_shm writes them into
 * the node window.
 */
#ifndef XCHG_NEIGHBOR_LOCALITY_H
#define XCHG_NEIGHBOR_LOCALITY_H

#include "neighbor_internal.h"
#include "node/node_layout.h"

#include <stdint.h>

typedef struct xchg_nloc_analysis {
    int P;                    /* ranks */
    /* the communicator's node layout (src/node/node_layout.h, shared
     * with the node-aware alltoallv algorithms and freed with them): per
     * rank its node (node_of) and its index inside it (local_of); node n's
     * ranks ascending: perm[first[n] .. first[n+1]); nnodes nodes */
    const xchg_node_layout *L;
    int nsrc, *srcs;          /* ranks whose aggregates come here, ascending */
    char *forward_to;         /* per index inside this node: it gets a forward from here */
    xchg_nbr_stats stats;
    /* locality_shm: the node window's table area, and whether the window
     * was made (agreed at the analysis; 0: locality runs instead) */
    size_t table_bytes;
    int window;
} xchg_nloc_analysis;

void xchg_neighbor_locality_analysis_free(void *analysis);
/* Locality's analysis (collective, agreed; *need: see census). */
int xchg_nloc_analyse(xchg_nbr_call *c, xchg_nloc_analysis **out, double *need);
/* The census of locality's analysis (collective): nsrc, srcs, forward_to
 * and the agreed statistics; *need this rank's bytes to its node-mates
 * and to hand on in this first call (locality_shm's window). */
int xchg_nloc_census(xchg_nbr_call *c, xchg_nloc_analysis *a, double *need);

/* One exchange in progress. */
typedef struct xchg_nloc_run {
    xchg_nbr_call *c;
    const xchg_nloc_analysis *a;
    int me, node, err;      /* err: the first error; the exchange goes on */
    MPI_Request *req;       /* local receives, then every send */
    int *from;              /* per request: its receive block, -1 a send */
    int n, cap;
    char **bufs;            /* buffers to free at the end */
    size_t *bufs_b;
    int nbufs;
    char *sink;             /* a message that is not received into place */
} xchg_nloc_run;

/* A receive block, for the order in which a run of blocks arrives:
 * through partner (a forward) or from source itself (the node's blocks),
 * senders ascending, each sender's blocks in its order (key). */
typedef struct xchg_nloc_routed {
    int partner, source, key, block;
} xchg_nloc_routed;

/* The partner on node b of rank s; whether peer is on another node. */
static inline int xchg_nloc_partner(const xchg_nloc_analysis *a, int s, int b)
{
    int size = a->L->first[b + 1] - a->L->first[b];
    return a->L->perm[a->L->first[b] + a->L->local_of[s] % size];
}
static inline int xchg_nloc_is_remote(const xchg_nloc_analysis *a, int me, int peer)
{
    return peer != MPI_PROC_NULL && a->L->node_of[peer] != a->L->node_of[me];
}
static inline int64_t xchg_nloc_bytes(const int *counts, int i, const xchg_typeinfo *t)
{
    return (int64_t)counts[i] * t->size;
}

/* The run's arrays (requests, buffers) for c; MPI_ERR_NO_MEM. */
int xchg_nloc_begin(xchg_nloc_run *x, xchg_nbr_call *c, char *sink);
/* Frees what the run took; returns its first error, else rc. */
int xchg_nloc_end(xchg_nloc_run *x, int rc);
void xchg_nloc_fail(xchg_nloc_run *x, int e);
/* Temporary memory kept until the end (over the limit still taken, the
 * limit's error returned at the end: a rank that stopped would leave its
 * partners waiting). */
char *xchg_nloc_take(xchg_nloc_run *x, size_t bytes, const char *what);
int xchg_nloc_slot(xchg_nloc_run *x, int from);

/* The blocks to this node as messages, and the receive of block i from
 * this node (skipped where empty). */
void xchg_nloc_send_local(xchg_nloc_run *x);
void xchg_nloc_recv_local(xchg_nloc_run *x, int i);
/* The aggregates to the partners on other nodes, sent. */
void xchg_nloc_send_aggregates(xchg_nloc_run *x);
/* Every aggregate for this rank received; fwd[l] (L entries): the bytes of
 * the forward to the node's member at place l (-1: none). agg gets the
 * aggregates (nsrc, NULL where lost). */
void xchg_nloc_gather(xchg_nloc_run *x, char **agg, int64_t *fwd);
/* The forwards filled from the aggregates: out[l] holds fwd[l] bytes (NULL
 * or a full buffer: skipped). */
void xchg_nloc_fill(xchg_nloc_run *x, char *const *agg, char *const *out, const int64_t *fwd);
/* The forwards as messages (locality; locality_shm's overflow): fwd[l]
 * over 2^31-1 is MPI_ERR_COUNT, the forward then sent empty. */
void xchg_nloc_send_forwards(xchg_nloc_run *x, char *const *agg, int64_t *fwd);
/* A probed message from src with tag, received whole into new memory. */
char *xchg_nloc_receive_probed(xchg_nloc_run *x, int src, int tag, int *bytes);
/* The receive blocks from other nodes in the order their forwards carry
 * them, sorted by partner (local: those from this node, by sender, the
 * partner the sender itself); *n of them (NULL: no memory, failed). */
xchg_nloc_routed *xchg_nloc_routes(xchg_nloc_run *x, int local, int *n);
/* The run r[0..n) unpacked from `in` of `bytes` (a length other than the
 * blocks' is MPI_ERR_TRUNCATE, nothing unpacked), which came from `via`. */
void xchg_nloc_unpack(xchg_nloc_run *x, const xchg_nloc_routed *r, int n, const char *in,
                      int64_t bytes, int via);

/* The persistent form of both: each start runs `run` as a coroutine. */
int xchg_nloc_pinit(xchg_nbr_call *c, void **plan, xchg_nbr_fn run);
int xchg_nloc_pstart(xchg_nbr_call *c, void *plan);
int xchg_nloc_ptest(xchg_nbr_call *c, void *plan, int *flag);
int xchg_nloc_pwait(xchg_nbr_call *c, void *plan);
int xchg_nloc_pfree(xchg_nbr_call *c, void *plan);

#endif /* XCHG_NEIGHBOR_LOCALITY_H */
