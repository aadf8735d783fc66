/*
 * loc_common.h - what the node-aggregated sparse exchanges pex_loc and
 * nbx_loc share: the routing of a message through the nodes, and the
 * bundles its data travels in (loc_common.c). The protocols (how each
 * step learns what it receives) are the algorithms' files.
 *
 * Routing (node_pairs' scheme, src/alltoallv/node_pairs.c): nodes from the
 * shared node layout (node_layout.h; shared memory, or XCHG_RANKS_PER_NODE).
 * On node a (L_a members, N nodes), remote node b at distance
 * d = (b - a) mod N is served by the member at place (d - 1) mod L_a: the
 * N-1 remote nodes are dealt round the members, floor or ceil((N-1)/L_a)
 * each whatever the node sizes. The relay of b on a and the relay of a on b
 * are partners. A message from rank r on node a to rank t on node b:
 *   b == a:  r -> t                          (step 1)
 *   b != a:  r -> relay of b on a            (step 1; none if r is it)
 *              -> its partner on b           (step 2, one aggregate per node pair)
 *              -> t                          (step 3; none if the partner is t)
 * so a rank sends at most L_a - 1 messages inside its node and one per
 * node it serves across nodes, whatever its number of destinations.
 *
 * A bundle is one message of several of the caller's messages: int
 * words [flag, info, n], then n triples (original source, final
 * destination, count), then each message's count * size packed bytes in
 * that order. The data is packed once, from the caller's buffer (MPI_Pack
 * for non-contiguous types), copied as bytes by the relays and unpacked
 * once at the receiver, so every datatype travels the same way (a
 * datatype of size 0: the count in the triple, no bytes). One bundle is
 * at most INT_MAX bytes (MPI_ERR_COUNT beyond).
 */
#ifndef XCHG_SPARSE_LOC_COMMON_H
#define XCHG_SPARSE_LOC_COMMON_H

#include "sparse_internal.h"

#include "node/node_layout.h"

/* Header words of a bundle: a flag (pex_loc: an error was seen), a number
 * (pex_loc: messages counted for the census), a window need (pex_loc_shm:
 * the sending node's, for growing the node windows), then the triples. */
enum { XCHG_LOC_FLAG, XCHG_LOC_INFO, XCHG_LOC_NEED, XCHG_LOC_N, XCHG_LOC_HDR };

/* One of the caller's messages on its way. */
typedef struct xchg_loc_item {
    int src, dst, count;
    int disp;         /* data NULL: element disp of the caller's sendbuf */
    const char *data; /* else its packed bytes (count * size) */
} xchg_loc_item;

typedef struct xchg_loc_items {
    xchg_loc_item *v;
    int *bucket;      /* per item: the bundle it goes into (-1: none) */
    int n, cap;
} xchg_loc_items;

/* One call's routing. */
typedef struct xchg_loc {
    const xchg_node_layout *nl; /* the communicator's (not owned) */
    int N, a, L, la;            /* nodes, this node, its size, this rank's place */
    int ns;                     /* remote nodes this rank serves */
} xchg_loc;

/* Bundles written into one buffer: bundle k at buf + off[k], size[k]
 * bytes (0: no bundle). */
enum { XCHG_LOC_NOT_OWNED = 2 }; /* xchg_loc_out.limited: buf is the caller's memory */

typedef struct xchg_loc_out {
    char *buf;
    size_t bytes;   /* allocated (or written into the caller's memory, or needed there) */
    int limited;    /* counted against XCHG_MAX_TEMP_BYTES (xchg_temp_alloc) */
    int nb;
    size_t *off, *size;
} xchg_loc_out;

/* The node layout of the call's communicator and this rank's routing.
 * Collective on the first call on a communicator (the layout is made
 * then, agreed); a failure is the same on every rank, with
 * cs->nodes_failed set, and the caller falls back to its plain variant. */
int xchg_loc_begin(xchg_sparse_call *s, xchg_loc *x);

/* The i-th remote node this rank serves (0 <= i < ns: nearest first), the
 * rank serving this node there (its partner), and the index of node b
 * among those served (-1: another member serves it). */
int xchg_loc_serve(const xchg_loc *x, int i);
int xchg_loc_partner(const xchg_loc *x, int i);
int xchg_loc_served(const xchg_loc *x, int b);

/* The caller's messages into step-1 bundles by place in the node: a
 * message to a node-mate goes to that node-mate, one to another node to
 * the place serving it; *mine gets those this rank serves itself (their
 * data still in the caller's buffer), bucket -1 in `it`. Self and empty
 * entries are left out. */
int xchg_loc_route_own(xchg_sparse_call *s, const xchg_loc *x, xchg_loc_items *it,
                       xchg_loc_items *mine);

/* Appends an item with its bundle (-1: none). */
int xchg_loc_push(xchg_loc_items *l, const xchg_loc_item *item, int bucket);
void xchg_loc_items_free(xchg_loc_items *l);

/* Writes the items of `it` into bundles 0..nb-1 by their bucket: an empty
 * bucket gets no bundle, or a header-only one when `always`. Memory
 * counted in s->mem, and refused beyond XCHG_MAX_TEMP_BYTES when
 * `limited` (a sender may refuse where its error is agreed; a relay or a
 * receiver of nbx_loc may not: its senders could not know). A bundle over
 * INT_MAX bytes is MPI_ERR_COUNT naming `who`. Flags and numbers are 0:
 * the caller sets them in the headers. */
int xchg_loc_write(xchg_sparse_call *s, const xchg_loc_items *it, int nb, int always,
                   int limited, const char *who, xchg_loc_out *o);
/* The same bundles written into `into` (room bytes, e.g. a node window)
 * when they fit; otherwise only their offsets and sizes, o->buf NULL and
 * o->bytes the room they need. */
int xchg_loc_write_into(xchg_sparse_call *s, const xchg_loc_items *it, int nb,
                        const char *who, char *into, size_t room, xchg_loc_out *o);
void xchg_loc_out_free(xchg_sparse_call *s, xchg_loc_out *o);

/* A received bundle's items appended to `out` (data pointing into msg,
 * bucket -1), its flag and number read; MPI_ERR_INTERN if malformed. */
int xchg_loc_parse(xchg_sparse_call *s, const char *msg, size_t bytes, int *flag,
                   int *info, xchg_loc_items *out);

/* A buffer for a received bundle, counted in s->mem (limited: as in
 * xchg_loc_write), and its release. */
char *xchg_loc_alloc(xchg_sparse_call *s, size_t bytes, int limited, const char *what,
                     int *err);
void xchg_loc_free(xchg_sparse_call *s, char *p, size_t bytes, int limited);

/* Receives the message that `st` probed (tag, source) into a new buffer
 * (*msg, *bytes); when the buffer is refused, the message is drained
 * (a truncated receive) and the refusal returned in *lost. */
int xchg_loc_recv_probed(xchg_sparse_call *s, const MPI_Status *st, int tag, int limited,
                         const char *what, char **msg, size_t *bytes, int *lost);

/* Hands one message to the caller (unpacked into its own buffer). */
int xchg_loc_deliver(xchg_sparse_call *s, const xchg_loc_item *it);

#endif /* XCHG_SPARSE_LOC_COMMON_H */
