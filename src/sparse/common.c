/*
 * common.c - what every sparse algorithm does the same way: posting the
 * sends, receiving a message into a library buffer, and delivering it to
 * the caller (callback now, or kept for the packed result).
 *
 * Messages carry the caller's datatype, so non-contiguous types cost no
 * packing on the way. A datatype of size 0 has no bytes to say how many
 * elements came, so then each message carries its count as one MPI_INT.
 */
#include "sparse_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bytes and base offset of `count` elements as MPI addresses them. */
static size_t span_bytes(const xchg_typeinfo *ti, int count, MPI_Aint *lo)
{
    *lo = 0;
    if (count <= 0 || ti->size == 0)
        return 0;
    MPI_Aint a = ti->true_lb, b = ti->true_lb + (MPI_Aint)(count - 1) * ti->extent;
    MPI_Aint first = a < b ? a : b;
    MPI_Aint last = (a > b ? a : b) + ti->true_extent;
    *lo = first;
    return (size_t)(last - first);
}

int xchg_sparse_buf_alloc(xchg_sparse_call *s, int count, xchg_sparse_buf *b)
{
    MPI_Aint lo;
    memset(b, 0, sizeof *b);
    b->bytes = span_bytes(&s->ti, count, &lo);
    /* Not xchg_temp_alloc: a receiver cannot refuse alone without hanging
     * its senders, and the data is the caller's result. Peak is reported. */
    b->mem = malloc(b->bytes ? b->bytes : 1);
    if (!b->mem)
        return xchg_error_code(MPI_ERR_NO_MEM, "sparse exchange: no memory for a message "
                               "of %zu bytes on rank %d", b->bytes, s->rank);
    b->addr = b->mem - lo;
    s->mem.temp_cur += b->bytes;
    if (s->mem.temp_cur > s->mem.temp_peak)
        s->mem.temp_peak = s->mem.temp_cur;
    return MPI_SUCCESS;
}

void xchg_sparse_buf_free(xchg_sparse_call *s, xchg_sparse_buf *b)
{
    if (b->mem) {
        free(b->mem);
        s->mem.temp_cur -= b->bytes;
    }
    memset(b, 0, sizeof *b);
}

int xchg_sparse_agree(xchg_sparse_call *s)
{
    return xchg_agree_errors(s->comm, s->rank, s->size, s->local_err, "xchg_sparse_exchange");
}

int xchg_sparse_census_degree(const xchg_sparse_call *s)
{
    int n = 0;
    for (int i = 0; i < s->ndest && n < XCHG_SPARSE_DEGREE_CLIP; i++)
        n += xchg_sparse_remote(s, i);
    return n;
}

static int isend_one(xchg_sparse_call *s, int i, int ssend, MPI_Request *req)
{
    const void *buf = xchg_block_addr(s->sendbuf, s->displs[i], &s->ti);
    int count = s->counts[i];
    MPI_Datatype t = s->ti.type;
    if (s->ti.size == 0) {
        buf = &s->counts[i];
        count = 1;
        t = MPI_INT;
    }
    return (ssend ? MPI_Issend : MPI_Isend)(buf, count, t, s->dests[i], s->tag_data, s->comm,
                                            req);
}

int xchg_sparse_isend_all(xchg_sparse_call *s, int ssend, MPI_Request *reqs, int *nreq)
{
    int n = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < s->ndest && rc == MPI_SUCCESS; i++) {
        if (!xchg_sparse_remote(s, i))
            continue;
        rc = isend_one(s, i, ssend, &reqs[n]);
        if (rc == MPI_SUCCESS)
            n++;
    }
    *nreq = n;
    return rc;
}

int xchg_sparse_window(const xchg_sparse_call *s)
{
    int bound = s->cs->settings.max_inflight;
    return bound > 0 ? bound : INT_MAX;
}

/* The window's post: entry i's send, nothing for this rank's own entry. */
static int post_entry(void *arg, int i, MPI_Request *req)
{
    xchg_sparse_sends *ss = arg;
    if (!xchg_sparse_remote(ss->s, i))
        return MPI_SUCCESS;
    return isend_one(ss->s, i, ss->ssend, req);
}

int xchg_sparse_sends_open(xchg_sparse_call *s, int ssend, xchg_sparse_sends *ss)
{
    const int W = xchg_sparse_window(s);
    const int slots = W < s->ndest ? W : (s->ndest ? s->ndest : 1);
    ss->s = s;
    ss->ssend = ssend;
    MPI_Request *req = malloc((size_t)slots * sizeof *req);
    int *ints = malloc(2 * (size_t)slots * sizeof *ints);
    if (!req || !ints) {
        free(req);
        free(ints);
        ss->w.req = NULL;
        return xchg_error_code(MPI_ERR_NO_MEM, "sparse exchange: no memory for %d requests",
                               slots);
    }
    xchg_send_window_init(&ss->w, slots, s->ndest, req, ints, post_entry, ss);
    return xchg_send_window_start(&ss->w);
}

void xchg_sparse_sends_close(xchg_sparse_sends *ss)
{
    if (!ss->w.req)
        return;
    free(ss->w.req);
    free(ss->w.idx);
    ss->w.req = NULL;
    ss->w.idx = NULL;
}

int xchg_sparse_exchange_windowed(xchg_sparse_call *s, int nrecv)
{
    xchg_sparse_sends ss;
    int rc = xchg_sparse_sends_open(s, 0, &ss);
    if (!ss.w.req)
        return rc; /* no memory: nothing posted */
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_deliver_self(s);
    /* Polls both sides: a rank never blocks while it has sends to post or
     * messages to take, so no cycle of waiting ranks can form. The nrecv
     * messages of this call's tag are exactly this call's (the next call
     * uses the other parity's tag and cannot finish its census first). */
    int received = 0, sent = 0;
    while (rc == MPI_SUCCESS && (received < nrecv || !sent)) {
        int flag = 0;
        MPI_Status st;
        if (received < nrecv) {
            rc = MPI_Iprobe(MPI_ANY_SOURCE, s->tag_data, s->comm, &flag, &st);
            if (rc == MPI_SUCCESS && flag) {
                rc = xchg_sparse_recv_probed(s, &st);
                received++;
                continue;
            }
        }
        if (rc == MPI_SUCCESS && !sent) {
            rc = xchg_send_window_progress(&ss.w, NULL);
            sent = xchg_send_window_done(&ss.w);
        }
    }
    if (rc != MPI_SUCCESS) /* partners may still match them: wait, as the others do */
        xchg_send_window_finish(&ss.w);
    xchg_sparse_sends_close(&ss);
    return rc;
}

int xchg_sparse_irecv(xchg_sparse_call *s, xchg_sparse_buf *b, int count, int source,
                      MPI_Request *req)
{
    if (s->ti.size == 0)
        return MPI_Irecv(&b->zcount, 1, MPI_INT, source, s->tag_data, s->comm, req);
    return MPI_Irecv(b->addr, count, s->ti.type, source, s->tag_data, s->comm, req);
}

int xchg_sparse_recv_probed(xchg_sparse_call *s, const MPI_Status *st)
{
    int count = 0, rc, src = st->MPI_SOURCE;
    xchg_sparse_buf b;
    if (s->ti.size == 0) {
        if ((rc = xchg_sparse_buf_alloc(s, 0, &b)) != MPI_SUCCESS)
            return rc;
        rc = MPI_Recv(&count, 1, MPI_INT, src, s->tag_data, s->comm, MPI_STATUS_IGNORE);
    } else {
        if ((rc = MPI_Get_count(st, s->ti.type, &count)) != MPI_SUCCESS)
            return rc;
        if (count == MPI_UNDEFINED || count < 0)
            return xchg_error_code(MPI_ERR_TRUNCATE, "sparse exchange: rank %d got a message "
                                   "from rank %d that is not a whole number of elements "
                                   "(datatypes of different signatures?)", s->rank, src);
        if ((rc = xchg_sparse_buf_alloc(s, count, &b)) != MPI_SUCCESS)
            return rc;
        rc = MPI_Recv(b.addr, count, s->ti.type, src, s->tag_data, s->comm,
                      MPI_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS) {
        xchg_sparse_buf_free(s, &b);
        return rc;
    }
    return xchg_sparse_deliver(s, src, count, &b);
}

int xchg_sparse_deliver(xchg_sparse_call *s, int source, int count, xchg_sparse_buf *b)
{
    if (s->fn) {
        if (s->fn_rc == 0)
            s->fn_rc = s->fn(source, count, b->addr, s->ctx);
        xchg_sparse_buf_free(s, b);
        return MPI_SUCCESS;
    }
    if (s->nmsgs == s->capmsgs) {
        int cap = s->capmsgs ? 2 * s->capmsgs : 16;
        xchg_sparse_msg *m = realloc(s->msgs, (size_t)cap * sizeof *m);
        if (!m) {
            xchg_sparse_buf_free(s, b);
            return xchg_error_code(MPI_ERR_NO_MEM, "sparse exchange: no memory for the list "
                                   "of received messages");
        }
        s->msgs = m;
        s->capmsgs = cap;
    }
    xchg_sparse_msg *m = &s->msgs[s->nmsgs++];
    m->source = source;
    m->count = count;
    m->buf = *b;
    memset(b, 0, sizeof *b);
    return MPI_SUCCESS;
}

int xchg_sparse_deliver_self(xchg_sparse_call *s)
{
    for (int i = 0; i < s->ndest; i++) {
        if (s->dests[i] != s->rank || s->counts[i] == 0)
            continue;
        xchg_sparse_buf b;
        memset(&b, 0, sizeof b); /* mem NULL: the caller's send buffer, not ours */
        b.addr = xchg_block_addr(s->sendbuf, s->displs[i], &s->ti);
        return xchg_sparse_deliver(s, s->rank, s->counts[i], &b);
    }
    return MPI_SUCCESS;
}

int xchg_sparse_p2p_known(xchg_sparse_call *s, const int *recvcounts)
{
    int P = s->size, nrecv = 0, nsend = 0, rc = MPI_SUCCESS;
    for (int p = 0; p < P; p++)
        nrecv += p != s->rank && recvcounts[p] > 0;
    int nremote = 0;
    for (int i = 0; i < s->ndest; i++)
        nremote += xchg_sparse_remote(s, i);
    if ((long long)nrecv + nremote > xchg_sparse_window(s)) /* XCHG_MAX_INFLIGHT */
        return xchg_sparse_exchange_windowed(s, nrecv);
    size_t nreq = (size_t)nrecv + (size_t)s->ndest;
    MPI_Request *reqs = malloc((nreq ? nreq : 1) * sizeof *reqs);
    xchg_sparse_buf *bufs = calloc(nrecv ? (size_t)nrecv : 1, sizeof *bufs);
    int *srcs = malloc((nrecv ? (size_t)nrecv : 1) * sizeof *srcs);
    if (!reqs || !bufs || !srcs) {
        free(reqs); free(bufs); free(srcs);
        return xchg_error_code(MPI_ERR_NO_MEM, "sparse exchange: no memory for requests");
    }
    int n = 0;
    for (int p = 0; p < P && rc == MPI_SUCCESS; p++) {
        if (p == s->rank || recvcounts[p] <= 0)
            continue;
        rc = xchg_sparse_buf_alloc(s, recvcounts[p], &bufs[n]);
        if (rc == MPI_SUCCESS)
            rc = xchg_sparse_irecv(s, &bufs[n], recvcounts[p], p, &reqs[n]);
        if (rc == MPI_SUCCESS)
            srcs[n++] = p;
    }
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_isend_all(s, 0, reqs + nrecv, &nsend);
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_deliver_self(s);
    /* Deliver in completion order: a callback overlaps the remaining
     * transfers. */
    for (int done = 0; done < nrecv && rc == MPI_SUCCESS; done++) {
        int idx;
        rc = MPI_Waitany(nrecv, reqs, &idx, MPI_STATUS_IGNORE);
        if (rc == MPI_SUCCESS && idx != MPI_UNDEFINED) {
            int count = s->ti.size == 0 ? bufs[idx].zcount : recvcounts[srcs[idx]];
            rc = xchg_sparse_deliver(s, srcs[idx], count, &bufs[idx]);
        }
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(nsend, reqs + nrecv, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++)
        xchg_sparse_buf_free(s, &bufs[i]); /* delivered ones are already empty */
    free(reqs); free(bufs); free(srcs);
    return rc;
}
