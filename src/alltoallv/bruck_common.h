/*
 * bruck_common.h - what the padded and Bruck alltoallv algorithms share
 * (internal to src/alltoallv/).
 *
 * Bruck numbering: at rank `me`, slot i (0 <= i < P) starts with the block
 * for rank (me+i)%P (the "rotation"); a block only ever moves forward by
 * the weight of one digit of its slot index, and keeps its slot index, so
 * after the last round slot i holds the block *from* rank (me-i+P)%P (the
 * "inverse rotation"). Slot 0 (the block to self) never moves.
 */
#ifndef XCHG_BRUCK_COMMON_H
#define XCHG_BRUCK_COMMON_H

#include "algo.h"

/* Digit of slot i at weight w (a power of the radix): which exchange of the
 * round moves it (0: it stays). The same on every rank. */
static inline int xchg_bruck_digit(int i, int radix, int w)
{
    return (i / w) % radix;
}

/* Most slots of [1, P) that share one nonzero digit at any weight of the
 * given radix: sizes the per-exchange buffers of the padded Bruck. */
int xchg_bruck_max_moving(int P, int radix);

/* Packed bytes of this rank's block for `peer`, packing it into out, and
 * unpacking `bytes` bytes received from `peer` (MPI_ERR_TRUNCATE, buffer
 * untouched, when recvcounts[peer] cannot hold them; `who` names the
 * algorithm in the message). */
size_t xchg_bruck_send_bytes(const xchg_call *c, int peer);
size_t xchg_bruck_recv_bytes(const xchg_call *c, int peer);
int xchg_bruck_pack_for(const xchg_call *c, int peer, void *out);
int xchg_bruck_unpack_from(const xchg_call *c, int peer, const void *in, size_t bytes,
                           const char *who);

/* The tag of the Bruck engine, which bruck_padded, bruck_twophase,
 * bruck_radix and hybrid's small blocks share (the registry counts it
 * among the alltoallv tags: registry.c). */
enum { XCHG_TAG_BRUCK = 110 };

/* Posts a nonblocking send (is_send) or receive of `bytes` bytes with
 * XCHG_TAG_BRUCK: at most two messages (whole chunks as one derived type, then
 * the rest), split identically on both sides from the byte count alone, so
 * counts beyond INT_MAX work. Appends the requests to req[*n]. */
int xchg_bruck_post(void *buf, size_t bytes, int peer, int is_send, MPI_Comm comm,
                    MPI_Request *req, int *n);

/* The same with another tag (bruck_2level's). */
int xchg_bruck_post_tag(void *buf, size_t bytes, int peer, int tag, int is_send, MPI_Comm comm,
                        MPI_Request *req, int *n);

/* Receives and discards a message of `bytes` bytes sent with
 * xchg_bruck_post (blocking; for a rank that has no room left). */
void xchg_bruck_drain(size_t bytes, int peer, MPI_Comm comm);
void xchg_bruck_drain_tag(size_t bytes, int peer, int tag, MPI_Comm comm);

/* The padded algorithms' collective agreement: one xchg_mpi_allreduce(MAX) of the
 * largest packed send block and of the tightest temporary-memory budget.
 * Returns in *B the global largest block. If `per_block` x *B plus `extra`
 * bytes exceed any rank's budget (XCHG_MAX_TEMP_BYTES less what it already
 * holds), every rank returns MPI_ERR_NO_MEM, before any data moves. */
int xchg_padded_agree(xchg_call *c, size_t per_block, size_t extra, const char *who,
                      size_t *B);

/* Padded slots: an 8-byte header with the real length of the block, then
 * the block, then padding up to the slot size. The receiver learns from it
 * how much was sent: more than recvcounts allows gives MPI_ERR_TRUNCATE,
 * less writes only the bytes sent (and never the sender's padding). */
enum { XCHG_PAD_HEADER = 8 };
int xchg_padded_pack_slot(const xchg_call *c, int peer, char *slot);
int xchg_padded_unpack_slot(const xchg_call *c, int peer, const char *slot, size_t slot_bytes,
                            const char *who);

/* The two-phase (non-padded) Bruck with radix r (2 <= r <= P): ceil(log_r P)
 * rounds; in each, up to r-1 concurrent exchanges first of the sizes of
 * the blocks about to move, then of exactly their bytes. */
int xchg_bruck_twophase_run(xchg_call *c, int radix, const char *who);

/* The same engine with some blocks travelling outside it (hybrid): where
 * direct[j] is set (direct may be NULL), the block for rank j is not sent
 * here; its byte count goes instead, in the slot's size word, as a negative
 * announcement (-1 - bytes) that moves like any size and carries no data,
 * also from a rank that ran out of memory. On return announced[i] (if not
 * NULL) holds the bytes rank i announced it sends this rank outside the
 * engine, -1 if none, or -2 everywhere if MPI failed during the exchange. So the receiver
 * learns exactly what comes outside from the sender's own classification,
 * whatever its receive counts say. */
int xchg_bruck_twophase_run_ex(xchg_call *c, int radix, const char *who,
                               const unsigned char *direct, int64_t *announced);

/* The same engine over a group of ranks of c->comm given by position (a
 * node, or one place of every node: bruck_2level), with its own tag, its
 * blocks from and to callbacks, and a burst limit. Slot numbering and
 * partners are in positions. Failure marks (int64, merged by MAX) travel
 * in every size message: mark is the one carried in (0: none; the run
 * spreads it) and, on return, the highest heard; my_mark (> 0) is what
 * this rank sends once it drops its blocks (no memory). Where the final
 * mark is nonzero nothing is delivered and the caller decides the error
 * (every rank the mark reaches learns it by the end of the run);
 * the return value is this rank's own first error (memory, packing,
 * delivery, MPI). */
typedef struct xchg_bruck_group {
    int size, pos;         /* group size, this rank's position */
    const int *ranks;      /* position -> rank of c->comm */
    int radix;             /* 2 .. size (2 where size < 2) */
    int tag;
    int burst;             /* most partners a round posts at once (0: all) */
    const char *who;
    void *ctx;
    size_t (*bytes)(void *ctx, int j); /* this rank's block for position j */
    int (*pack)(void *ctx, int j, void *out);
    int (*deliver)(void *ctx, int j, const void *in, size_t bytes); /* from position j */
    int64_t mark, my_mark;
    /* keep: the final store (where delivered blocks point) is handed to
     * the caller in store/store_bytes, to free with xchg_temp_free */
    int keep;
    char *store;
    size_t store_bytes;
    int mpierr;            /* out: MPI itself failed (the run stopped) */
} xchg_bruck_group;
int xchg_bruck_group_run(xchg_call *c, xchg_bruck_group *g);

#endif
