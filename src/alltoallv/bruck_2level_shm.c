/*
 * bruck_2level_shm.c - "bruck_2level_shm": bruck_2level's inter-node
 * Bruck, then its intra-node phase through the node window
 * (node/shm_window.h) instead of an intra-node Bruck: each byte is copied
 * into the window once and out once instead of moving up to ceil(log_ri L)
 * times, and the node's ceil(log_ri L) rounds of messages become one
 * synchronisation.
 *
 * One call (epoch e of the node window, one synchronisation, flags 2 e,
 * half e % 2: the scheme every node algorithm shares):
 *  1. phase 1 of bruck_2level (bruck_2level.c): after it this rank holds,
 *     for each member m of its node, the blocks its places brought for m;
 *  2. it writes, for each node-mate m, that part (its sizes, then its
 *     blocks: exactly the message bruck_2level's phase 2 would carry)
 *     into its region, a table entry per member saying where, and in its
 *     header its failure mark; then the node synchronises;
 *  3. it unpacks its own part straight from phase 1's stores, and each
 *     node-mate's part for it from that member's region.
 * A member whose parts do not fit its half (XCHG_SHM_BYTES or what the
 * node window has grown to) says so in its header; every member of that
 * node reads it after the synchronisation, and that node runs phase 2 by
 * messages instead (bruck_2level's), the other nodes are not concerned.
 * The window is never grown for this algorithm (its need is known only
 * after phase 1, and growing is collective over the communicator); auto
 * does not choose it where a rank's parts would not fit.
 *
 * Errors: the failure mark works as in bruck_2level. Phase 1 merges it
 * over every node's player of a place, the headers over the node's
 * places, so every rank ends with the same mark and returns the same
 * class; no rank writes recvbuf then. Running out of memory in phase 1
 * is bruck_2level's contract.
 * No window (refused by MPI on some node, XCHG_SHM_BYTES=0), or inside a
 * coroutine before it is ready, or under SMPI inside a coroutine (its
 * synchronisation's waits block the simulated rank): bruck_2level runs, the same
 * on every rank (xchg_get_stats says so).
 */
#include "bruck_2level.h"
#include "node/shm_window.h"

#include <string.h>

int xchg_alltoallv_bruck_2level(xchg_call *c);
int xchg_bruck_2level_ready(const xchg_comm_state *cs);
int xchg_bruck_2level_shm_prepare(xchg_comm_state *cs);
int xchg_bruck_2level_shm_ready(const xchg_comm_state *cs);
int xchg_bruck_2level_shm_usable(const xchg_comm_state *cs);

static const char who[] = "bruck_2level_shm";

/* The half's table: one (offset, bytes) entry per member of the largest
 * node, the same on every rank. */
static size_t table_bytes(const b2_state *st)
{
    return sizeof(xchg_shm_entry) * (size_t)st->lmax;
}

int xchg_bruck_2level_shm_prepare(xchg_comm_state *cs)
{
    if (cs->size == 1)
        return MPI_SUCCESS;
    b2_state *st = NULL;
    int rc = xchg_b2_state_of(cs, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    xchg_shm_window *w;
    return xchg_node_window_of(cs, st->nl->node, table_bytes(st), 0, &w);
}

int xchg_bruck_2level_shm_ready(const xchg_comm_state *cs)
{
    if (cs->size == 1)
        return 1;
    const b2_state *st = cs->ext[xchg_algo_slot(XCHG_ALGO_BRUCK_2LEVEL)];
    return xchg_bruck_2level_ready(cs) && st &&
           xchg_node_window_ready(cs, table_bytes(st), 0);
}

/* One rank copies its block without a window: usable as itself. */
int xchg_bruck_2level_shm_usable(const xchg_comm_state *cs)
{
    return cs->size == 1 || xchg_node_window_usable(cs);
}

/* Step 2: this rank's parts for its node-mates into its half. */
static void write_parts(b2_call *x, xchg_shm_window *w, uint64_t e)
{
    char *half = xchg_shm_half(w, x->nl->lrank, e);
    xchg_shm_header *h = (xchg_shm_header *)half;
    xchg_shm_entry *t = xchg_shm_table(half);
    char *data = xchg_shm_data(w, half);
    size_t off = 0;
    for (int m = 0; m < x->L; m++) {
        size_t b = m == x->nl->lrank ? 0 : xchg_b2_intra_bytes(x, m);
        t[m].off = off, t[m].bytes = b;
        off += (b + 7) & ~(size_t)7;
    }
    memset(h, 0, sizeof *h);
    h->err = x->mark;
    if (off > w->half) {
        h->status = XCHG_SHM_OVERFLOW;
        h->need = off;
        return;
    }
    h->status = XCHG_SHM_OK;
    for (int m = 0; m < x->L; m++)
        if (t[m].bytes)
            xchg_b2_intra_pack(x, m, data + t[m].off);
}

/* Step 3, or phase 2 by messages where a node-mate's parts did not fit. */
static int read_parts(b2_call *x, xchg_shm_window *w, uint64_t e)
{
    int overflow = 0;
    for (int j = 0; j < x->L; j++) {
        const xchg_shm_header *h = (const xchg_shm_header *)xchg_shm_half(w, j, e);
        if (h->status == XCHG_SHM_OVERFLOW)
            overflow = 1;
        if (h->err > x->mark)
            x->mark = h->err;
    }
    if (overflow)
        return xchg_b2_phase_intra(x);
    if (x->mark)
        return MPI_SUCCESS; /* the agreed error: nothing is delivered */
    int err = xchg_b2_deliver_own(x);
    for (int j = 0; j < x->L; j++) {
        if (j == x->nl->lrank)
            continue;
        char *half = xchg_shm_half(w, j, e);
        const xchg_shm_entry *t = xchg_shm_table(half) + x->nl->lrank;
        int ej = xchg_b2_intra_deliver(x, j, xchg_shm_data(w, half) + t->off, (size_t)t->bytes);
        if (err == MPI_SUCCESS)
            err = ej;
    }
    return err;
}

/* Phase 2 through the window (w), whatever phase 1 gave: a rank whose
 * MPI failed there still meets its node-mates at the synchronisation and
 * tells them (its mark). */
static int phase_window(b2_call *x, int mpierr, void *arg)
{
    xchg_shm_window *w = arg;
    if (mpierr != MPI_SUCCESS) {
        int64_t f = xchg_agree_flag(x->c->rank, x->c->size, MPI_ERR_OTHER);
        if (f > x->mark)
            x->mark = f;
    }
    const uint64_t e = w->epoch + 1;
    write_parts(x, w, e);
    xchg_shm_sync(w, 2 * e);
    w->epoch = e;
    int err = read_parts(x, w, e);
    return mpierr != MPI_SUCCESS ? mpierr : err;
}

int xchg_alltoallv_bruck_2level_shm(xchg_call *c)
{
    if (c->size == 1)
        return c->arg_err != MPI_SUCCESS ? c->arg_err : xchg_self_copy(c);
    b2_state *st = NULL;
    int rc = xchg_b2_state_of(c->cs, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    xchg_shm_window *w = NULL;
    rc = xchg_node_window_for_call(c->cs, st->nl->node, table_bytes(st), 0, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!w) {
        c->ran_instead = XCHG_ALGO_BRUCK_2LEVEL;
        return xchg_alltoallv_bruck_2level(c);
    }
    return xchg_b2_run(c, st, who, phase_window, w);
}
