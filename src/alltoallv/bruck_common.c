/*
 * bruck_common.c - helpers of the padded and Bruck algorithms, and the
 * two-phase Bruck engine that bruck_twophase (radix 2) and bruck_radix
 * (radix r) both run. See bruck_common.h for the slot numbering.
 */
#include "bruck_common.h"

#include <stdint.h>
#include <string.h>

/* Largest message piece: whole chunks travel as one derived type, so no
 * MPI count ever exceeds INT_MAX. Overridable to test the split. */
#ifndef XCHG_BRUCK_CHUNK
#define XCHG_BRUCK_CHUNK ((size_t)1 << 30)
#endif

/* Target of zero-count receives that drain a message we cannot store. */
static char bruck_sink[1];

int xchg_bruck_max_moving(int P, int radix)
{
    int most = 0;
    for (long long w = 1; w < P; w *= radix)
        for (int v = 1; v < radix && v * w < P; v++) {
            int n = 0;
            for (int i = 1; i < P; i++)
                n += xchg_bruck_digit(i, radix, (int)w) == v;
            if (n > most)
                most = n;
        }
    return most;
}

size_t xchg_bruck_send_bytes(const xchg_call *c, int peer)
{
    return (size_t)c->sendcounts[peer] * (size_t)c->st.size;
}

size_t xchg_bruck_recv_bytes(const xchg_call *c, int peer)
{
    return (size_t)c->recvcounts[peer] * (size_t)c->rt.size;
}

int xchg_bruck_pack_for(const xchg_call *c, int peer, void *out)
{
    return xchg_pack_block(c->sendbuf, c->sdispls[peer], c->sendcounts[peer], &c->st, out);
}

int xchg_bruck_unpack_from(const xchg_call *c, int peer, const void *in, size_t bytes,
                           const char *who)
{
    size_t cap = xchg_bruck_recv_bytes(c, peer);
    if (bytes > cap)
        return xchg_error_code(MPI_ERR_TRUNCATE, "%s: rank %d receives %zu bytes from rank "
                               "%d but recvcounts[%d] holds only %zu", who, c->rank, bytes,
                               peer, peer, cap);
    if (bytes == 0)
        return MPI_SUCCESS;
    if (bytes % (size_t)c->rt.size)
        return xchg_error_code(MPI_ERR_TYPE, "%s: rank %d receives %zu bytes from rank %d, "
                               "not a whole number of recvtype elements (%d bytes): the "
                               "type signatures do not match", who, c->rank, bytes, peer,
                               c->rt.size);
    return xchg_unpack_block(in, c->recvbuf, c->rdispls[peer],
                             (int)(bytes / (size_t)c->rt.size), &c->rt);
}

int xchg_bruck_post(void *buf, size_t bytes, int peer, int is_send, MPI_Comm comm,
                    MPI_Request *req, int *n)
{
    return xchg_bruck_post_tag(buf, bytes, peer, XCHG_TAG_BRUCK, is_send, comm, req, n);
}

int xchg_bruck_post_tag(void *buf, size_t bytes, int peer, int tag, int is_send, MPI_Comm comm,
                        MPI_Request *req, int *n)
{
    const size_t q = bytes / XCHG_BRUCK_CHUNK, rem = bytes % XCHG_BRUCK_CHUNK;
    int err = MPI_SUCCESS;
    if (q) {
        MPI_Datatype chunk;
        err = MPI_Type_contiguous((int)XCHG_BRUCK_CHUNK, MPI_BYTE, &chunk);
        if (err == MPI_SUCCESS)
            err = MPI_Type_commit(&chunk);
        if (err != MPI_SUCCESS)
            return err;
        if (is_send)
            err = MPI_Isend(buf, (int)q, chunk, peer, tag, comm, &req[(*n)++]);
        else
            err = MPI_Irecv(buf, (int)q, chunk, peer, tag, comm, &req[(*n)++]);
        MPI_Type_free(&chunk); /* pending operations keep it alive */
        if (err != MPI_SUCCESS)
            return err;
    }
    if (rem) {
        char *p = (char *)buf + q * XCHG_BRUCK_CHUNK;
        if (is_send)
            err = MPI_Isend(p, (int)rem, MPI_BYTE, peer, tag, comm, &req[(*n)++]);
        else
            err = MPI_Irecv(p, (int)rem, MPI_BYTE, peer, tag, comm, &req[(*n)++]);
    }
    return err;
}

void xchg_bruck_drain(size_t bytes, int peer, MPI_Comm comm)
{
    xchg_bruck_drain_tag(bytes, peer, XCHG_TAG_BRUCK, comm);
}

void xchg_bruck_drain_tag(size_t bytes, int peer, int tag, MPI_Comm comm)
{
    /* Zero-count receives, truncated on purpose, as many as the sender's
     * split makes. Blocking: MPICH raises a truncation seen by MPI_Wait* on
     * MPI_COMM_WORLD's handler, MPI_Recv on comm's (which returns). */
    int pieces = (bytes / XCHG_BRUCK_CHUNK ? 1 : 0) + (bytes % XCHG_BRUCK_CHUNK ? 1 : 0);
    for (int k = 0; k < pieces; k++)
        xchg_mpi_recv(bruck_sink, 0, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
}

int xchg_padded_pack_slot(const xchg_call *c, int peer, char *slot)
{
    uint64_t len = (uint64_t)xchg_bruck_send_bytes(c, peer);
    memcpy(slot, &len, sizeof len);
    return xchg_bruck_pack_for(c, peer, slot + XCHG_PAD_HEADER);
}

int xchg_padded_unpack_slot(const xchg_call *c, int peer, const char *slot, size_t slot_bytes,
                            const char *who)
{
    uint64_t len;
    memcpy(&len, slot, sizeof len);
    if (len > slot_bytes - XCHG_PAD_HEADER) /* cannot happen: the slot was sized for it */
        return xchg_error_code(MPI_ERR_INTERN, "%s: rank %d got a block header of %llu "
                               "bytes from rank %d, over the slot of %zu", who, c->rank,
                               (unsigned long long)len, peer, slot_bytes);
    return xchg_bruck_unpack_from(c, peer, slot + XCHG_PAD_HEADER, (size_t)len, who);
}

int xchg_padded_agree(xchg_call *c, size_t per_block, size_t extra, const char *who,
                      size_t *B)
{
    uint64_t local = 0;
    for (int j = 0; j < c->size; j++) {
        size_t b = xchg_bruck_send_bytes(c, j);
        if (b > local)
            local = b;
    }
    size_t avail = c->temp_cur < c->temp_limit ? c->temp_limit - c->temp_cur : 0;
    /* MAX of (UINT64_MAX - budget) is the smallest budget of all ranks;
     * the third value carries one rank's argument error (c->arg_err). */
    uint64_t mine[3] = {local, UINT64_MAX - (uint64_t)avail,
                        (uint64_t)xchg_agree_flag(c->rank, c->size, c->arg_err)}, all[3];
    int err = MPI_SUCCESS;
    if (c->agreed && c->arg_err == MPI_SUCCESS) {
        /* auto's blocking agreement of this call carried both (select.c) */
        all[0] = c->agreed->max_block;
        all[1] = UINT64_MAX - c->agreed->min_budget;
    } else {
        err = xchg_mpi_allreduce(mine, all, 3, MPI_UINT64_T, MPI_MAX, c->comm);
        if (err == MPI_SUCCESS)
            err = xchg_agree_result(c->rank, c->size, c->arg_err, (int64_t)all[2], who);
    }
    if (err != MPI_SUCCESS)
        return err;
    uint64_t budget = UINT64_MAX - all[1];
    *B = (size_t)all[0];
    if (all[0] > (SIZE_MAX - extra) / per_block || per_block * all[0] + extra > budget)
        return xchg_error_code(MPI_ERR_NO_MEM, "%s: padding all blocks to the largest "
                               "(%llu bytes) needs %llu x %llu + %zu temporary bytes per rank, "
                               "over the %llu bytes left under XCHG_MAX_TEMP_BYTES on some "
                               "rank (all ranks refuse; use a non-padded algorithm or raise "
                               "the limit)", who, (unsigned long long)all[0],
                               (unsigned long long)per_block, (unsigned long long)all[0],
                               extra, (unsigned long long)budget);
    return MPI_SUCCESS;
}

/*
 * The two-phase Bruck engine.
 *
 * It runs over a group of ranks given by position (the whole communicator
 * for bruck_twophase, bruck_radix and hybrid; a node, or one place of
 * every node, for bruck_2level): slot numbering, partners and rounds are
 * in positions, and its blocks come from and go to callbacks.
 *
 * Slot i's bytes live at store+off[i] (sz[i] bytes); store is one buffer.
 * A round (weight w) has one exchange per digit value v = 1..r-1 with
 * v*w < P: the slots whose digit is v go to me+v*w and come from me-v*w.
 * Phase 1 sends their sizes, phase 2 their bytes, packed in slot order, so
 * both ends know the layout without any global maximum. The received bytes
 * land directly in a new store after the slots that stay, which are copied
 * there while the messages fly. With a burst limit, a round's exchanges go
 * in batches of at most that many partners (each batch completed before
 * the next is posted); every rank batches the same digit values alike.
 *
 * Running out of temporary memory must not hang the other ranks, which are
 * already waiting for our messages. So a rank that fails an allocation keeps
 * taking part: it announces empty blocks from then on, drains what arrives
 * (xchg_bruck_drain), and marks the first word of every size message
 * with its mark (1 + its rank, or the group's own mark); marks merge by
 * MAX. That mark travels along every later path, so exactly the ranks
 * whose data may have passed through the failure learn of it and return
 * MPI_ERR_NO_MEM; the others finish normally.
 */
/* Bytes a slot holds here: an announcement (negative) carries none. */
static inline size_t slot_data(int64_t s)
{
    return s > 0 ? (size_t)s : 0;
}

int xchg_bruck_twophase_run(xchg_call *c, int r, const char *who)
{
    return xchg_bruck_twophase_run_ex(c, r, who, NULL, NULL);
}

/* One two-phase Bruck exchange's state across its steps (the functions
 * below: the rotation, per round the packing and its two phases, the
 * delivery). */
typedef struct bruck_run {
    xchg_call *c;
    int r, P, me;   /* radix, group size, this rank's position */
    const int *ranks; /* position -> rank of comm (NULL: the identity) */
    MPI_Comm comm;
    int tag, burst; /* burst: most partners per batch (0: no limit) */
    const char *who;
    const unsigned char *direct;
    int64_t *announced;
    /* the blocks (by position) */
    void *ctx;
    size_t (*bytes)(void *ctx, int j);
    int (*pack)(void *ctx, int j, void *out);
    int (*deliver)(void *ctx, int j, const void *in, size_t bytes);
    int group;     /* run for a caller (xchg_bruck_group_run): it reads the mark */
    int keep;      /* the final store goes to the caller */
    int64_t my_mark; /* this rank's mark once it fails */
    int err;       /* the first error, returned */
    int mpierr;    /* an MPI failure: the exchange stops */
    int failed;    /* this rank dropped its blocks */
    int64_t lost;  /* the highest mark we heard of, or 0 */
    int aerr;      /* the last allocation's or packing's error */
    /* metadata (one allocation, meta) */
    size_t *off;   /* where slot i is in store */
    int64_t *sz;   /* slot i's bytes (< 0: announced, travels outside) */
    int64_t *smeta, *rmeta;
    size_t *cnt, *mpos, *sb, *rb, *pos;
    MPI_Request *req;
    char *store;   /* the slots held */
    size_t store_bytes;
    /* the round in progress: digit position w (W as int), partners 1..nv */
    long long w;
    int W, nv;
    size_t kept, sbytes, rbytes;
    char *sendtmp; /* its outgoing blocks */
} bruck_run;

/* Rank (in comm) of the group member at position j. */
static inline int rank_at(const bruck_run *x, int j)
{
    return x->ranks ? x->ranks[j] : j;
}

/* Partners of exchange v of the round: to me+v*w, from me-v*w (ranks). */
static inline int dst_of(const bruck_run *x, int v)
{
    return rank_at(x, (int)((x->me + v * x->w) % x->P));
}
static inline int src_of(const bruck_run *x, int v)
{
    return rank_at(x, (int)(((long long)x->me - v * x->w % x->P + x->P) % x->P));
}

/* Exchanges v0 .. *v1 form the next batch. */
static inline int batch_end(const bruck_run *x, int v0)
{
    return x->burst > 0 && v0 + x->burst - 1 < x->nv ? v0 + x->burst - 1 : x->nv;
}

/* This rank drops its blocks (e: why), and says so to the others. */
static void fail_here(bruck_run *x, int e)
{
    if (x->err == MPI_SUCCESS)
        x->err = e;
    x->failed = 1;
    if (x->lost < x->my_mark)
        x->lost = x->my_mark;
}

/* Before the rounds: every block packed into its slot. */
static int bruck_rotate(bruck_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, me = x->me;
    const unsigned char *direct = x->direct;
    size_t *off = x->off;
    int64_t *sz = x->sz;
    /* Rotation: slot i is the block for me+i, all packed in slot order. */
    x->store_bytes = 0;
    for (int i = 0; i < P; i++) {
        const int dst = (me + i) % P;
        off[i] = x->store_bytes;
        if (direct && direct[dst]) /* travels outside: only its size moves here */
            sz[i] = -1 - (int64_t)x->bytes(x->ctx, dst);
        else
            sz[i] = x->failed ? 0 : (int64_t)x->bytes(x->ctx, dst);
        x->store_bytes += slot_data(sz[i]);
    }
    x->store = NULL;
    if (!x->failed) {
        x->store = xchg_temp_alloc(c, x->store_bytes, "two-phase Bruck: packed send blocks", &x->aerr);
        for (int i = 0; x->store && i < P && x->aerr == MPI_SUCCESS; i++)
            if (sz[i] > 0)
                x->aerr = x->pack(x->ctx, (me + i) % P, x->store + off[i]);
        if (x->aerr != MPI_SUCCESS) {
            /* cannot pack (memory, or MPI_Pack failed): take part empty-handed */
            fail_here(x, x->aerr);
            xchg_temp_free(c, x->store, x->store_bytes);
            x->store = NULL;
            x->store_bytes = 0;
            for (int i = 0; i < P; i++)
                if (sz[i] > 0) /* announcements still go: they need no memory */
                    sz[i] = 0;
        }
    }
    return MPI_SUCCESS;
}

/* One round (digit position w): which slots move to which partner, packed
 * into one outgoing buffer per partner (passes 1 and 2). */
static int round_pack(bruck_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, r = x->r, W = x->W;
    const long long w = x->w;
    size_t *off = x->off;
    int64_t *sz = x->sz, *smeta = x->smeta;
    size_t *cnt = x->cnt, *mpos = x->mpos, *sb = x->sb, *pos = x->pos;
    x->nv = 0;
    while (x->nv + 1 < r && (long long)(x->nv + 1) * w < P)
        x->nv++;
    /* Pass 1: how many slots and bytes each exchange moves. */
    for (int v = 0; v <= x->nv; v++)
        cnt[v] = sb[v] = 0;
    x->kept = 0;
    for (int i = 0; i < P; i++) {
        int v = xchg_bruck_digit(i, r, W);
        if (v) {
            cnt[v]++;
            sb[v] += slot_data(sz[i]);
        } else {
            x->kept += slot_data(sz[i]);
        }
    }
    x->sbytes = 0;
    for (int v = 1; v <= x->nv; v++)
        x->sbytes += sb[v];
    x->sendtmp = NULL;
    if (x->sbytes) {
        x->sendtmp = xchg_temp_alloc(c, x->sbytes, "two-phase Bruck: outgoing blocks", &x->aerr);
        if (!x->sendtmp) { /* drop everything, announce empty blocks */
            fail_here(x, x->aerr);
            xchg_temp_free(c, x->store, x->store_bytes);
            x->store = NULL;
            x->store_bytes = x->kept = x->sbytes = 0;
            for (int i = 0; i < P; i++)
                if (sz[i] > 0)
                    sz[i] = 0;
            for (int v = 1; v <= x->nv; v++)
                sb[v] = 0;
        }
    }
    /* Pass 2: sizes into smeta, bytes into sendtmp, in slot order. */
    size_t mp = 0, sp = 0;
    for (int v = 1; v <= x->nv; v++) {
        mpos[v] = mp;
        mp += cnt[v] + 1;
        pos[v] = sp;
        sp += sb[v];
        cnt[v] = 0; /* refilled below to the same value */
    }
    for (int i = 1; i < P; i++) {
        int v = xchg_bruck_digit(i, r, W);
        if (!v)
            continue;
        smeta[mpos[v] + 1 + cnt[v]++] = sz[i];
        if (sz[i] > 0) {
            memcpy(x->sendtmp + pos[v], x->store + off[i], (size_t)sz[i]);
            xchg_charge_copy((size_t)sz[i]);
            pos[v] += (size_t)sz[i];
        }
    }
    return MPI_SUCCESS;
}

/* Phase 1 of a round: the sizes of the moving slots, and the loss mark
 * (as it stands when each batch goes: a later batch may carry more). */
static int round_sizes(bruck_run *x)
{
    xchg_call *c = x->c;
    int64_t *smeta = x->smeta, *rmeta = x->rmeta;
    size_t *cnt = x->cnt, *mpos = x->mpos, *rb = x->rb;
    MPI_Request *req = x->req;
    for (int v0 = 1; v0 <= x->nv && x->mpierr == MPI_SUCCESS; v0 = batch_end(x, v0) + 1) {
        const int v1 = batch_end(x, v0);
        int n = 0;
        for (int v = v0; v <= v1 && x->mpierr == MPI_SUCCESS; v++)
            x->mpierr = MPI_Irecv(rmeta + mpos[v], (int)cnt[v] + 1, MPI_INT64_T, src_of(x, v),
                                  x->tag, x->comm, &req[n++]);
        for (int v = v0; v <= v1 && x->mpierr == MPI_SUCCESS; v++) {
            smeta[mpos[v]] = x->lost;
            x->mpierr = MPI_Isend(smeta + mpos[v], (int)cnt[v] + 1, MPI_INT64_T, dst_of(x, v),
                                  x->tag, x->comm, &req[n++]);
        }
        int werr = xchg_call_waitall(c, n, req);
        if (x->mpierr == MPI_SUCCESS)
            x->mpierr = werr;
        for (int v = v0; v <= v1 && x->mpierr == MPI_SUCCESS; v++)
            if (rmeta[mpos[v]] > x->lost)
                x->lost = rmeta[mpos[v]];
    }
    if (x->mpierr != MPI_SUCCESS) {
        xchg_temp_free(c, x->sendtmp, x->sbytes);
        return x->mpierr;
    }
    x->rbytes = 0;
    for (int v = 1; v <= x->nv; v++) {
        rb[v] = 0;
        for (size_t k = 0; k < cnt[v]; k++)
            rb[v] += slot_data(rmeta[mpos[v] + 1 + k]);
        x->rbytes += rb[v];
    }
    return MPI_SUCCESS;
}

/* The slots that stay move to the new store (while the first batch flies). */
static void round_keep(bruck_run *x, char *nstore, int drop)
{
    const int P = x->P, r = x->r, W = x->W;
    size_t kp = 0;
    for (int i = 0; i < P; i++) {
        if (xchg_bruck_digit(i, r, W))
            continue;
        if (drop) {
            if (x->sz[i] > 0)
                x->sz[i] = 0;
            continue;
        }
        if (x->sz[i] > 0) {
            memcpy(nstore + kp, x->store + x->off[i], (size_t)x->sz[i]);
            xchg_charge_copy((size_t)x->sz[i]);
        }
        x->off[i] = kp;
        kp += slot_data(x->sz[i]);
    }
}

/* Phase 2 of a round: the bytes, into a new store after the slots that stay. */
static int round_data(bruck_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, r = x->r, W = x->W;
    size_t *off = x->off;
    int64_t *sz = x->sz, *rmeta = x->rmeta;
    size_t *cnt = x->cnt, *mpos = x->mpos, *sb = x->sb, *rb = x->rb, *pos = x->pos;
    MPI_Request *req = x->req;
    size_t new_bytes = x->kept + x->rbytes;
    char *nstore = NULL;
    if (!x->failed) {
        nstore = xchg_temp_alloc(c, new_bytes, "two-phase Bruck: blocks held", &x->aerr);
        if (!nstore)
            fail_here(x, x->aerr); /* what we announced still goes out */
    }
    const int drop = !nstore;
    /* where each exchange's bytes come in and go out */
    size_t rp = x->kept, sp = 0;
    for (int v = 1; v <= x->nv; v++) {
        pos[v] = rp; /* received: after the kept slots */
        rp += rb[v];
        cnt[v] = sp; /* sent: from sendtmp (cnt reused, refilled below) */
        sp += sb[v];
    }
    for (int v0 = 1; v0 <= x->nv && x->mpierr == MPI_SUCCESS; v0 = batch_end(x, v0) + 1) {
        const int v1 = batch_end(x, v0);
        int n = 0;
        for (int v = v0; v <= v1 && x->mpierr == MPI_SUCCESS && !drop; v++)
            if (rb[v])
                x->mpierr = xchg_bruck_post_tag(nstore + pos[v], rb[v], src_of(x, v), x->tag, 0,
                                                x->comm, req, &n);
        for (int v = v0; v <= v1 && x->mpierr == MPI_SUCCESS; v++)
            if (sb[v])
                x->mpierr = xchg_bruck_post_tag(x->sendtmp + cnt[v], sb[v], dst_of(x, v), x->tag,
                                                1, x->comm, req, &n);
        if (v0 == 1)
            round_keep(x, nstore, drop);
        /* Dropping: our sends are posted, so draining in turn cannot block. */
        for (int v = v0; v <= v1 && drop && x->mpierr == MPI_SUCCESS; v++)
            if (rb[v])
                xchg_bruck_drain_tag(rb[v], src_of(x, v), x->tag, x->comm);
        int werr = xchg_call_waitall(c, n, req);
        if (x->mpierr == MPI_SUCCESS)
            x->mpierr = werr;
    }
    if (x->nv < 1)
        round_keep(x, nstore, drop);
    /* Received slots, in the sender's slot order. */
    for (int v = 1; v <= x->nv; v++)
        cnt[v] = 0;
    for (int i = 1; i < P; i++) {
        int v = xchg_bruck_digit(i, r, W);
        if (!v)
            continue;
        int64_t s = rmeta[mpos[v] + 1 + cnt[v]++];
        sz[i] = drop && s > 0 ? 0 : s;
        off[i] = drop ? 0 : pos[v];
        if (!drop)
            pos[v] += slot_data(s);
    }
    xchg_temp_free(c, x->sendtmp, x->sbytes);
    xchg_temp_free(c, x->store, x->store_bytes);
    x->store = nstore;
    x->store_bytes = drop ? 0 : new_bytes;
    return MPI_SUCCESS;
}

/* After the last round: the caller's announcements, then the inverse
 * rotation (slot i came from me-i) through the deliver callback. */
static int bruck_deliver(bruck_run *x)
{
    const int P = x->P, me = x->me;
    size_t *off = x->off;
    int64_t *sz = x->sz;
    int64_t *announced = x->announced;

    if (x->err == MPI_SUCCESS)
        x->err = x->mpierr;
    /* Slot i came from me-i: what it announced, once every round ran. */
    for (int i = 0; announced && i < P; i++)
        announced[(me - i + P) % P] = x->mpierr != MPI_SUCCESS ? -2 : sz[i] < 0 ? -1 - sz[i] : -1;
    if (x->lost) {
        if (x->err == MPI_SUCCESS && !x->group)
            x->err = xchg_error_code(MPI_ERR_NO_MEM, "%s: rank %d ran out of temporary memory "
                                  "(XCHG_MAX_TEMP_BYTES) during the exchange, so blocks for "
                                  "rank %d may be missing", x->who, (int)x->lost - 1, me);
    } else if (x->err == MPI_SUCCESS) {
        for (int i = 0; i < P; i++) {
            if (sz[i] < 0)
                continue; /* announced: the caller receives it */
            int uerr = x->deliver(x->ctx, (me - i + P) % P, x->store + off[i], (size_t)sz[i]);
            if (x->err == MPI_SUCCESS)
                x->err = uerr; /* the first error; the other blocks are still delivered */
        }
    }
    return MPI_SUCCESS;
}

/* The metadata (its size depends on P and r only), then the rounds. */
static int bruck_engine(bruck_run *x)
{
    xchg_call *c = x->c;
    const int P = x->P, r = x->r;
    x->err = x->mpierr = x->aerr = MPI_SUCCESS;
    const size_t nreq = 4 * (size_t)r;
    size_t mbytes = (size_t)P * (sizeof(size_t) + sizeof(int64_t)) +
                    2 * ((size_t)P + (size_t)r) * sizeof(int64_t) +
                    5 * (size_t)r * sizeof(size_t) + nreq * sizeof(MPI_Request);
    char *meta = xchg_temp_alloc(c, mbytes, "two-phase Bruck: block size tables", &x->aerr);
    if (!meta && c->temp_limit != SIZE_MAX) {
        /* Over the limit on this rank only, perhaps, while the others are
         * about to wait for us: take these few bytes anyway (still counted)
         * to fail in step with them, as below, keeping the limit's error. */
        size_t limit = c->temp_limit;
        int merr = MPI_SUCCESS;
        c->temp_limit = SIZE_MAX;
        meta = xchg_temp_alloc(c, mbytes, "two-phase Bruck: block size tables", &merr);
        c->temp_limit = limit;
        if (meta)
            fail_here(x, x->aerr);
    }
    if (!meta)
        return x->aerr; /* malloc itself failed: nothing left to take part with */
    x->off = (size_t *)meta;
    x->sz = (int64_t *)(x->off + P);
    x->smeta = x->sz + P, x->rmeta = x->smeta + P + r;
    x->cnt = (size_t *)(x->rmeta + P + r), x->mpos = x->cnt + r, x->sb = x->mpos + r;
    x->rb = x->sb + r, x->pos = x->rb + r;
    x->req = (MPI_Request *)(x->pos + r);

    bruck_rotate(x);
    for (long long w = 1; w < P && x->mpierr == MPI_SUCCESS; w *= r) {
        x->w = w, x->W = (int)w;
        round_pack(x);
        if (round_sizes(x) == MPI_SUCCESS)
            round_data(x);
    }
    bruck_deliver(x);
    if (!x->keep)
        xchg_temp_free(c, x->store, x->store_bytes);
    xchg_temp_free(c, meta, mbytes);
    return x->err;
}

/* The whole communicator's blocks, from and to the call's buffers. */
typedef struct call_blocks {
    xchg_call *c;
    const char *who;
} call_blocks;

static size_t call_bytes(void *ctx, int j)
{
    return xchg_bruck_send_bytes(((call_blocks *)ctx)->c, j);
}
static int call_pack(void *ctx, int j, void *out)
{
    return xchg_bruck_pack_for(((call_blocks *)ctx)->c, j, out);
}
static int call_deliver(void *ctx, int j, const void *in, size_t bytes)
{
    call_blocks *b = ctx;
    return xchg_bruck_unpack_from(b->c, j, in, bytes, b->who);
}

int xchg_bruck_twophase_run_ex(xchg_call *c, int r, const char *who,
                               const unsigned char *direct, int64_t *announced)
{
    call_blocks cb = {c, who};
    bruck_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.r = r, x.P = c->size, x.me = c->rank, x.who = who, x.direct = direct;
    x.comm = c->comm, x.tag = XCHG_TAG_BRUCK, x.my_mark = c->rank + 1;
    x.announced = announced;
    x.ctx = &cb, x.bytes = call_bytes, x.pack = call_pack, x.deliver = call_deliver;
    return bruck_engine(&x);
}

int xchg_bruck_group_run(xchg_call *c, xchg_bruck_group *g)
{
    bruck_run x;
    memset(&x, 0, sizeof x);
    x.c = c, x.r = g->radix, x.P = g->size, x.me = g->pos, x.ranks = g->ranks;
    x.comm = c->comm, x.tag = g->tag, x.burst = g->burst, x.who = g->who;
    x.ctx = g->ctx, x.bytes = g->bytes, x.pack = g->pack, x.deliver = g->deliver;
    x.group = 1, x.my_mark = g->my_mark, x.lost = g->mark, x.keep = g->keep;
    int err = bruck_engine(&x);
    if (x.lost > g->mark)
        g->mark = x.lost;
    g->mpierr = x.mpierr;
    g->store = x.keep ? x.store : NULL;
    g->store_bytes = x.keep ? x.store_bytes : 0;
    return err;
}
