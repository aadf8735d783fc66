/*
 * relay_common.h - what the node-aware algorithms that relay blocks in
 * messages of unannounced size share (node_pairs, multileader; internal to
 * src/alltoallv/).
 *
 * Every message is a header of int64 words, then the blocks: word 0 the
 * agreed flag, word 1 the lost flag (both xchg_agree_flag values, merged
 * by maximum), then the byte size of each block, in an order both sides
 * know. The receiver probes it and receives it whole at its real size (no
 * receive is ever truncated). The agreed flag carries what a rank knows
 * before any data moves (argument error, its own memory); a rank that
 * knows one sends headers only, and a message of a header only is received
 * into a slot the algorithm keeps for it (never temporary memory), so the
 * flag arrives whatever memory is left. The lost flag marks blocks a relay
 * could not hold (it drained them): the ranks they were for, and every
 * rank that receives from it later, return MPI_ERR_NO_MEM.
 */
#ifndef XCHG_RELAY_COMMON_H
#define XCHG_RELAY_COMMON_H

#include "algo.h"

#include <stdint.h>

enum { XCHG_RELAY_HDR = 2 }; /* header words before the sizes */

/* A message as received (or a rank's own share, pointed at in place). */
typedef struct xchg_relay_msg {
    const int64_t *h;
    const char *data;
    char *buf;       /* receive buffer */
    size_t bytes;    /* received bytes */
    size_t owned;    /* temporary bytes to free (0: not owned) */
    int ok;          /* received and its header consistent */
} xchg_relay_msg;

/* One call's shared state. */
typedef struct xchg_relay {
    xchg_call *c;
    const char *who;       /* the algorithm, for messages */
    int tag;
    int64_t agreed, lost;
    int myerr;             /* this rank's error known before data moves */
    int lerr;              /* this rank's later error (relay memory, packing) */
    char *room;            /* declared incoming bytes, reserved before data moves */
    size_t room_b, room_used;
    MPI_Aint *segd;        /* send segments (the algorithm's tables) */
    int *segl;
    MPI_Request *sreq;     /* sends in flight, completed at the end */
    int nsreq;
} xchg_relay;

static inline size_t xchg_relay_round8(size_t b) { return (b + 7) & ~(size_t)7; }

/* Block size k of a message (0 when it was lost). */
static inline int64_t xchg_relay_size(const xchg_relay_msg *m, int k)
{
    return m->ok ? m->h[XCHG_RELAY_HDR + k] : 0;
}

/* Sets the agreed flag from x->myerr (before any data moves). */
void xchg_relay_flag_own(xchg_relay *x);
/* Marks data this rank could not relay: err is kept, the lost flag set. */
void xchg_relay_lose(xchg_relay *x, int err);
/* Segment k of the next message: nseg of them sent as one (hindexed from
 * MPI_BOTTOM) to dst; the request joins x->sreq. */
void xchg_relay_segment(xchg_relay *x, int k, const void *p, int64_t len);
int xchg_relay_send(xchg_relay *x, int nseg, int dst);
/* Probes the next message from src (hw header words when it carries no
 * block) and posts its receive into *req: a header only into hslot, else
 * into x->room if use_room and it fits, else temporary memory; with none,
 * drained and lost. */
int xchg_relay_post(xchg_relay *x, int src, int64_t *hslot, int hw, xchg_relay_msg *m,
                    int use_room, MPI_Request *req);
/* After the receive: checks that the header's nsizes sizes add up and
 * merges its flags. */
void xchg_relay_check(xchg_relay *x, xchg_relay_msg *m, int nsizes);
/* The flags' verdict once every message is in: the agreed class (every
 * rank alike), else this rank's lost data, else MPI_SUCCESS (unpack). */
int xchg_relay_verdict(xchg_relay *x);
void xchg_relay_msg_free(xchg_relay *x, xchg_relay_msg *m);

#endif /* XCHG_RELAY_COMMON_H */
