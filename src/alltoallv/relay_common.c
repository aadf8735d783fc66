/*
 * relay_common.c - messages of unannounced size with flags in their
 * headers, for node_pairs and multileader (relay_common.h says how).
 */
#include "relay_common.h"

#include <stdio.h>
#include <string.h>

void xchg_relay_flag_own(xchg_relay *x)
{
    if (x->myerr != MPI_SUCCESS) {
        int64_t f = xchg_agree_flag(x->c->rank, x->c->size, x->myerr);
        if (f > x->agreed)
            x->agreed = f;
    }
}

void xchg_relay_lose(xchg_relay *x, int err)
{
    int64_t f = xchg_agree_flag(x->c->rank, x->c->size, err);
    if (f > x->lost)
        x->lost = f;
    if (x->lerr == MPI_SUCCESS)
        x->lerr = err;
}

void xchg_relay_segment(xchg_relay *x, int k, const void *p, int64_t len)
{
    MPI_Get_address(p, &x->segd[k]);
    x->segl[k] = (int)len;
}

int xchg_relay_send(xchg_relay *x, int nseg, int dst)
{
    /* MPI packs the segments into one message: a copy per piece, charged
     * in simulation as an explicit pack would be (SMPI does not) */
    xchg_charge_pieces(x->segl, nseg);
    MPI_Datatype ty;
    int err = MPI_Type_create_hindexed(nseg, x->segl, x->segd, MPI_BYTE, &ty);
    if (err == MPI_SUCCESS && (err = MPI_Type_commit(&ty)) == MPI_SUCCESS) {
        err = MPI_Isend(MPI_BOTTOM, 1, ty, dst, x->tag, x->c->comm, &x->sreq[x->nsreq++]);
        MPI_Type_free(&ty); /* freed once the send completes */
    }
    return err;
}

int xchg_relay_post(xchg_relay *x, int src, int64_t *hslot, int hw, xchg_relay_msg *m,
                    int use_room, MPI_Request *req)
{
    xchg_call *c = x->c;
    MPI_Status st;
    int n = 0;
    memset(m, 0, sizeof *m);
    *req = MPI_REQUEST_NULL;
    int err = xchg_mpi_probe(src, x->tag, c->comm, &st);
    if (err == MPI_SUCCESS)
        err = MPI_Get_count(&st, MPI_BYTE, &n);
    if (err != MPI_SUCCESS)
        return err;
    m->bytes = (size_t)n;
    if ((size_t)n == sizeof(int64_t) * (size_t)hw) {
        m->buf = (char *)hslot;
    } else if (use_room && x->room && x->room_b - x->room_used >= (size_t)n) {
        m->buf = x->room + x->room_used;
        x->room_used += xchg_relay_round8((size_t)n);
    } else {
        int aerr = MPI_SUCCESS;
        char what[64];
        snprintf(what, sizeof what, "%s: relayed blocks", x->who);
        m->buf = xchg_temp_alloc(c, (size_t)n, what, &aerr);
        if (!m->buf) {
            static char sink[1];
            xchg_relay_lose(x, aerr);
            xchg_mpi_recv(sink, 0, MPI_BYTE, src, x->tag, c->comm,
                          MPI_STATUS_IGNORE); /* truncated on purpose */
            return MPI_SUCCESS;
        }
        m->owned = (size_t)n;
    }
    return MPI_Irecv(m->buf, n, MPI_BYTE, src, x->tag, c->comm, req);
}

void xchg_relay_check(xchg_relay *x, xchg_relay_msg *m, int nsizes)
{
    if (!m->buf)
        return; /* drained: lost already */
    size_t hb = sizeof(int64_t) * (size_t)(XCHG_RELAY_HDR + nsizes);
    int64_t sum = 0;
    int ok = m->bytes >= hb;
    m->h = (const int64_t *)m->buf;
    for (int k = 0; ok && k < nsizes; k++) {
        ok = m->h[XCHG_RELAY_HDR + k] >= 0;
        sum += m->h[XCHG_RELAY_HDR + k];
    }
    if (ok && (size_t)sum == m->bytes - hb) {
        m->data = m->buf + hb;
        m->ok = 1;
        if (m->h[0] > x->agreed)
            x->agreed = m->h[0];
        if (m->h[1] > x->lost)
            x->lost = m->h[1];
    } else {
        xchg_relay_lose(x, xchg_error_code(MPI_ERR_INTERN, "%s: rank %d got a message of %zu "
                                           "bytes whose header does not add up", x->who,
                                           x->c->rank, m->bytes));
    }
}

int xchg_relay_verdict(xchg_relay *x)
{
    xchg_call *c = x->c;
    if (x->agreed)
        return xchg_agree_result(c->rank, c->size, x->myerr, x->agreed, x->who);
    if (!x->lost)
        return MPI_SUCCESS;
    if (x->lerr != MPI_SUCCESS)
        return x->lerr;
    int from = c->size - (int)(x->lost >> XCHG_AGREE_CLASS_BITS);
    int cls = (int)(x->lost & ((1 << XCHG_AGREE_CLASS_BITS) - 1));
    return xchg_error_code(cls, "%s: rank %d could not relay blocks on their way to rank %d "
                           "(see its error), so rank %d's result is incomplete", x->who, from,
                           c->rank, c->rank);
}

void xchg_relay_msg_free(xchg_relay *x, xchg_relay_msg *m)
{
    if (m->owned)
        xchg_temp_free(x->c, m->buf, m->owned);
    m->owned = 0;
}
