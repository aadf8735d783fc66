/*
 * shm.c - "shm": the exchange through the node-shared window, for a
 * communicator whose ranks all share one node (node/shm_window.h).
 *
 * A call is one epoch e. Each rank packs its blocks (any datatype) once
 * into its half e % 2 of the window, with a table of where each
 * destination's block lies, and publishes e in its flag (a release store).
 * Then it waits for each peer's flag to reach e (an acquire load; from
 * rank+1 on, so that ranks read different peers) and unpacks its block
 * from each peer's half into recvbuf. No second synchronisation: a rank
 * that publishes e has seen every peer at e - 1, and a peer publishes
 * e - 1 only after reading e - 2, so the half it rewrites is free (a
 * node barrier per call, measured, cost more than MPI's whole exchange at
 * small sizes). MPI_IN_PLACE needs nothing: the data is in
 * the window before anything is written to recvbuf.
 *
 * Every rank reads every peer's half header before any data moves, so
 * what one rank found is known to all: an argument error (every rank
 * fails with its class, nothing exchanged) or blocks too large for the
 * half (every rank runs linear for this call, and the next call first
 * grows the window, collectively, to the largest need). Where the window
 * cannot be used (ranks on several nodes, emulated nodes, the SMPI build,
 * a window MPI refused: agreed once) every rank runs linear after one
 * agreement of argument errors.
 */
#include "node/shm_window.h"

#include "p2p_common.h"

int xchg_alltoallv_linear(xchg_call *c);
int xchg_shm_prepare(xchg_comm_state *cs);
int xchg_shm_ready(const xchg_comm_state *cs);
int xchg_shm_usable(const xchg_comm_state *cs);

/* Packs this rank's blocks into its half for epoch e; the header says how
 * it went. Returns the status. */
static int shm_pack(xchg_call *c, xchg_shm_window *w, uint64_t e)
{
    char *half = xchg_shm_half(w, c->rank, e);
    xchg_shm_header *h = (xchg_shm_header *)half;
    xchg_shm_entry *tab = xchg_shm_table(half);
    char *data = xchg_shm_data(w, half);
    h->status = XCHG_SHM_OK;
    h->need = 0;
    h->err = 0;
    if (c->arg_err != MPI_SUCCESS) {
        h->status = XCHG_SHM_ARG_ERROR;
        h->err = xchg_agree_flag(c->rank, c->size, c->arg_err);
        return (int)h->status;
    }
    uint64_t need = 0;
    for (int j = 0; j < c->size; j++)
        if (j != c->rank)
            need += (uint64_t)c->sendcounts[j] * (uint64_t)c->st.size;
    if (need > w->half) {
        h->status = XCHG_SHM_OVERFLOW;
        h->need = need;
        return (int)h->status;
    }
    uint64_t off = 0;
    for (int j = 0; j < c->size; j++) {
        uint64_t b = j == c->rank ? 0 : (uint64_t)c->sendcounts[j] * (uint64_t)c->st.size;
        tab[j].off = off;
        tab[j].bytes = b;
        int rc = b ? xchg_pack_block(c->sendbuf, c->sdispls[j], c->sendcounts[j], &c->st,
                                     data + off) : MPI_SUCCESS;
        if (rc != MPI_SUCCESS) { /* a failed pack is this rank's error, agreed */
            h->status = XCHG_SHM_ARG_ERROR;
            h->err = xchg_agree_flag(c->rank, c->size, rc);
            return (int)h->status;
        }
        off += b;
    }
    return XCHG_SHM_OK;
}

/* Waits for every peer's epoch e and reads their headers: the largest
 * error flag and the largest need (0: nobody overflowed). */
static void shm_gather_status(xchg_call *c, xchg_shm_window *w, uint64_t e, int64_t *err,
                              uint64_t *need)
{
    *err = 0;
    *need = 0;
    for (int i = 0; i < c->size; i++) {
        int r = (c->rank + 1 + i) % c->size;
        if (r != c->rank)
            xchg_shm_wait(w, r, e);
        const xchg_shm_header *h = (const xchg_shm_header *)xchg_shm_half(w, r, e);
        if (h->status == XCHG_SHM_ARG_ERROR && h->err > *err)
            *err = h->err;
        if (h->status == XCHG_SHM_OVERFLOW && h->need > *need)
            *need = h->need;
    }
}

/* This rank's blocks out of the peers' halves, and its own. */
static int shm_unpack(xchg_call *c, xchg_shm_window *w, uint64_t e)
{
    int err = xchg_self_copy(c);
    for (int i = 1; i < c->size; i++) {
        int src = (c->rank + i) % c->size;
        char *half = xchg_shm_half(w, src, e);
        const xchg_shm_entry *t = &xchg_shm_table(half)[c->rank];
        if (t->bytes) /* nothing sent: nothing to receive (and no size-0 division) */
            err = xchg_unpack_checked(c, "shm", src, xchg_shm_data(w, half) + t->off,
                                      (int64_t)t->bytes, err);
    }
    return err;
}

/* Without the window: one agreement of argument errors, then linear. */
static int shm_fallback(xchg_call *c)
{
    c->ran_instead = XCHG_ALGO_LINEAR;
    int rc = xchg_agree_errors(c->comm, c->rank, c->size, c->arg_err, "shm");
    return rc != MPI_SUCCESS ? rc : xchg_alltoallv_linear(c);
}

int xchg_alltoallv_shm(xchg_call *c)
{
    xchg_shm_window *w = NULL;
    /* a first window as large as this call needs, where agreed; inside a
     * coroutine the communicator's own window where it has one (its
     * nonblocking calls may run beside blocking calls on communicators
     * that share the other: node/shm_window.h) */
    int rc = xchg_shm_window_of(c->cs, c->agreed ? (size_t)c->agreed->max_send : 0, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!w)
        return shm_fallback(c);
    const uint64_t e = w->epoch + 1;
    shm_pack(c, w, e);
    xchg_shm_publish(w, e);
    int64_t err;
    uint64_t need;
    shm_gather_status(c, w, e, &err, &need);
    if (err)
        return xchg_agree_result(c->rank, c->size, c->arg_err, err, "shm");
    if (need) { /* every rank saw it: linear now, a larger window next call */
        w->grow_to = need;
        c->ran_instead = XCHG_ALGO_LINEAR;
        return xchg_alltoallv_linear(c);
    }
    return shm_unpack(c, w, e);
}

/* The nonblocking and persistent calls' own window (registry: prepare;
 * node/shm_window.h says why their own). */
int xchg_shm_prepare(xchg_comm_state *cs)
{
    xchg_shm_window *w;
    return xchg_shm_own_window_of(cs, &w);
}

int xchg_shm_ready(const xchg_comm_state *cs)
{
    return xchg_shm_window_ready(cs);
}

/* Whether shm may run as itself on cs (registry: usable): the window's
 * own answer, the same on every rank. Whether every rank is on one node
 * is the model's question (agreed statistics). */
int xchg_shm_usable(const xchg_comm_state *cs)
{
    return xchg_shm_window_usable(cs);
}
