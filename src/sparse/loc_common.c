/*
 * loc_common.c - routing and bundles of the node-aggregated sparse
 * exchanges pex_loc and nbx_loc (loc_common.h says what they are).
 */
#include "loc_common.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Bundles start at multiples of 8 in a buffer of several, so that their
 * int headers are aligned whatever the byte sizes before them. */
static size_t round8(size_t b)
{
    return (b + 7) & ~(size_t)7;
}

static size_t hdr_bytes(int n)
{
    return sizeof(int) * ((size_t)XCHG_LOC_HDR + 3 * (size_t)n);
}

/* Place on node a of the member serving node b (b != a): node_pairs'. */
static int relay_place(const xchg_node_layout *n, int a, int b)
{
    int d = (b - a + n->nnodes) % n->nnodes;
    return (d - 1) % xchg_node_size(n, a);
}

int xchg_loc_begin(xchg_sparse_call *s, xchg_loc *x)
{
    memset(x, 0, sizeof *x);
    if (s->cs->nodes_failed) /* agreed when it was set: no second try */
        return MPI_ERR_OTHER;
    int rc = xchg_node_layout_of(s->cs, &x->nl);
    if (rc != MPI_SUCCESS)
        return rc;
    const xchg_node_layout *n = x->nl;
    x->N = n->nnodes, x->a = n->mynode, x->L = n->lsize, x->la = n->lrank;
    for (int d = x->la + 1; d < x->N; d += x->L)
        x->ns++;
    return MPI_SUCCESS;
}

double xchg_sparse_ranks_per_node(xchg_comm_state *cs)
{
    const xchg_node_layout *n;
    if (cs->nodes_failed || xchg_node_layout_of(cs, &n) != MPI_SUCCESS)
        return 0;
    return (double)cs->size / n->nnodes;
}

int xchg_loc_serve(const xchg_loc *x, int i)
{
    return (x->a + x->la + 1 + i * x->L) % x->N;
}

int xchg_loc_partner(const xchg_loc *x, int i)
{
    int b = xchg_loc_serve(x, i);
    return xchg_node_member(x->nl, b, relay_place(x->nl, b, x->a));
}

int xchg_loc_served(const xchg_loc *x, int b)
{
    int d = (b - x->a + x->N) % x->N;
    if (d == 0 || (d - 1) % x->L != x->la)
        return -1;
    return (d - 1) / x->L;
}

int xchg_loc_push(xchg_loc_items *l, const xchg_loc_item *item, int bucket)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        xchg_loc_item *v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return xchg_error_code(MPI_ERR_NO_MEM, "sparse loc: no memory for a list of "
                                   "%d messages", cap);
        l->v = v;
        int *b = realloc(l->bucket, (size_t)cap * sizeof *b);
        if (!b)
            return xchg_error_code(MPI_ERR_NO_MEM, "sparse loc: no memory for a list of "
                                   "%d messages", cap);
        l->bucket = b;
        l->cap = cap;
    }
    l->v[l->n] = *item;
    l->bucket[l->n++] = bucket;
    return MPI_SUCCESS;
}

void xchg_loc_items_free(xchg_loc_items *l)
{
    free(l->v);
    free(l->bucket);
    memset(l, 0, sizeof *l);
}

int xchg_loc_route_own(xchg_sparse_call *s, const xchg_loc *x, xchg_loc_items *it,
                       xchg_loc_items *mine)
{
    const xchg_node_layout *n = x->nl;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < s->ndest && rc == MPI_SUCCESS; i++) {
        if (!xchg_sparse_remote(s, i))
            continue;
        int t = s->dests[i], b = n->node_of[t];
        xchg_loc_item m = {s->rank, t, s->counts[i], s->displs[i], NULL};
        int place = b == x->a ? n->local_of[t] : relay_place(n, x->a, b);
        rc = place == x->la ? xchg_loc_push(mine, &m, -1) : xchg_loc_push(it, &m, place);
    }
    return rc;
}

char *xchg_loc_alloc(xchg_sparse_call *s, size_t bytes, int limited, const char *what,
                     int *err)
{
    if (limited)
        return xchg_temp_alloc(&s->mem, bytes, what, err);
    /* Not refused at the limit, like xchg_sparse_buf_alloc: the senders
     * could not know. Counted, so that the peak is reported. */
    char *p = malloc(bytes ? bytes : 1);
    if (!p) {
        *err = xchg_error_code(MPI_ERR_NO_MEM, "%s: malloc of %zu bytes failed on rank %d",
                               what, bytes, s->rank);
        return NULL;
    }
    s->mem.temp_cur += bytes;
    if (s->mem.temp_cur > s->mem.temp_peak)
        s->mem.temp_peak = s->mem.temp_cur;
    return p;
}

void xchg_loc_free(xchg_sparse_call *s, char *p, size_t bytes, int limited)
{
    if (!p)
        return;
    if (limited) {
        xchg_temp_free(&s->mem, p, bytes);
        return;
    }
    free(p);
    s->mem.temp_cur -= bytes;
}

/* xchg_loc_write, or with `into` (room bytes) xchg_loc_write_into. */
static int write_bundles(xchg_sparse_call *s, const xchg_loc_items *it, int nb, int always,
                         int limited, const char *who, char *into, size_t room,
                         xchg_loc_out *o)
{
    memset(o, 0, sizeof *o);
    o->nb = nb;
    o->limited = limited;
    /* off, size, then per bundle its item count and write cursors */
    o->off = calloc(5 * ((size_t)nb + 1), sizeof(size_t));
    if (!o->off)
        return xchg_error_code(MPI_ERR_NO_MEM, "%s: no memory for %d bundles", who, nb);
    o->size = o->off + nb + 1;
    size_t *cnt = o->size + nb + 1, *hpos = cnt + nb + 1, *dpos = hpos + nb + 1;
    const size_t esize = (size_t)s->ti.size;
    for (int i = 0; i < it->n; i++) {
        int k = it->bucket[i];
        if (k < 0)
            continue;
        cnt[k]++;
        o->size[k] += (size_t)it->v[i].count * esize;
    }
    size_t total = 0;
    for (int k = 0; k < nb; k++) {
        o->off[k] = total;
        if (cnt[k] == 0 && !always) {
            o->size[k] = 0;
            continue;
        }
        if (cnt[k] > (size_t)(INT_MAX / 3 - XCHG_LOC_HDR))
            o->size[k] = (size_t)INT_MAX + 1; /* the count alone is too many */
        else
            o->size[k] += hdr_bytes((int)cnt[k]);
        if (o->size[k] > INT_MAX) {
            int err = xchg_error_code(MPI_ERR_COUNT, "%s: rank %d would send a bundle of "
                                      "%zu bytes, beyond one message's int range", who,
                                      s->rank, o->size[k]);
            xchg_loc_out_free(s, o);
            return err;
        }
        total += round8(o->size[k]);
    }
    o->off[nb] = total;
    int err = MPI_SUCCESS;
    if (into) {
        o->limited = XCHG_LOC_NOT_OWNED;
        o->bytes = total;
        if (total > room)
            return MPI_SUCCESS; /* sizes only: the caller's memory is too small */
        o->buf = into;
    } else {
        o->buf = xchg_loc_alloc(s, total, limited, who, &err);
        if (!o->buf) {
            xchg_loc_out_free(s, o);
            return err;
        }
        o->bytes = total;
    }
    for (int k = 0; k < nb; k++) {
        if (o->size[k] == 0)
            continue;
        int *h = (int *)(o->buf + o->off[k]);
        h[XCHG_LOC_FLAG] = 0;
        h[XCHG_LOC_INFO] = 0;
        h[XCHG_LOC_NEED] = 0;
        h[XCHG_LOC_N] = (int)cnt[k];
        hpos[k] = XCHG_LOC_HDR;
        dpos[k] = hdr_bytes((int)cnt[k]);
    }
    size_t copies = 0, copied = 0;
    for (int i = 0; i < it->n && err == MPI_SUCCESS; i++) {
        int k = it->bucket[i];
        if (k < 0)
            continue;
        const xchg_loc_item *m = &it->v[i];
        char *base = o->buf + o->off[k];
        int *h = (int *)base;
        h[hpos[k]++] = m->src;
        h[hpos[k]++] = m->dst;
        h[hpos[k]++] = m->count;
        size_t b = (size_t)m->count * esize;
        if (m->data == NULL) {
            err = xchg_pack_block(s->sendbuf, m->disp, m->count, &s->ti, base + dpos[k]);
        } else if (b > 0) {
            memcpy(base + dpos[k], m->data, b);
            copies++, copied += b;
        }
        dpos[k] += b;
    }
    xchg_charge_copies(copies, copied); /* a relay's copies (packing charges its own) */
    if (err != MPI_SUCCESS)
        xchg_loc_out_free(s, o);
    return err;
}

int xchg_loc_write(xchg_sparse_call *s, const xchg_loc_items *it, int nb, int always,
                   int limited, const char *who, xchg_loc_out *o)
{
    return write_bundles(s, it, nb, always, limited, who, NULL, 0, o);
}

int xchg_loc_write_into(xchg_sparse_call *s, const xchg_loc_items *it, int nb,
                        const char *who, char *into, size_t room, xchg_loc_out *o)
{
    return write_bundles(s, it, nb, 0, 0, who, into, room, o);
}

void xchg_loc_out_free(xchg_sparse_call *s, xchg_loc_out *o)
{
    if (o->limited != XCHG_LOC_NOT_OWNED)
        xchg_loc_free(s, o->buf, o->bytes, o->limited);
    free(o->off);
    memset(o, 0, sizeof *o);
}

int xchg_loc_parse(xchg_sparse_call *s, const char *msg, size_t bytes, int *flag,
                   int *info, xchg_loc_items *out)
{
    const int *h = (const int *)msg;
    if (bytes < hdr_bytes(0) || h[XCHG_LOC_N] < 0 ||
        (size_t)h[XCHG_LOC_N] > (bytes - hdr_bytes(0)) / (3 * sizeof(int)))
        return xchg_error_code(MPI_ERR_INTERN, "sparse loc: rank %d got a malformed bundle "
                               "of %zu bytes", s->rank, bytes);
    *flag = h[XCHG_LOC_FLAG];
    *info = h[XCHG_LOC_INFO];
    int n = h[XCHG_LOC_N];
    size_t pos = hdr_bytes(n);
    const size_t esize = (size_t)s->ti.size;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        const int *t = h + XCHG_LOC_HDR + 3 * i;
        xchg_loc_item m = {t[0], t[1], t[2], 0, msg + pos};
        size_t b = m.count < 0 ? bytes : (size_t)m.count * esize;
        if (m.count < 0 || m.src < 0 || m.src >= s->size || m.dst < 0 ||
            m.dst >= s->size || b > bytes - pos)
            return xchg_error_code(MPI_ERR_INTERN, "sparse loc: rank %d got a malformed "
                                   "bundle of %zu bytes", s->rank, bytes);
        pos += b;
        rc = xchg_loc_push(out, &m, -1);
    }
    if (rc == MPI_SUCCESS && pos != bytes)
        rc = xchg_error_code(MPI_ERR_INTERN, "sparse loc: rank %d got a bundle of %zu bytes "
                             "whose messages make %zu", s->rank, bytes, pos);
    return rc;
}

int xchg_loc_recv_probed(xchg_sparse_call *s, const MPI_Status *st, int tag, int limited,
                         const char *what, char **msg, size_t *bytes, int *lost)
{
    int n = 0;
    *msg = NULL;
    *bytes = 0;
    int rc = MPI_Get_count(st, MPI_BYTE, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    int aerr = MPI_SUCCESS;
    char *p = xchg_loc_alloc(s, (size_t)n, limited, what, &aerr);
    if (!p) {
        /* drained: its sender completes; the loss is the caller's to tell */
        static char sink[1];
        *lost = aerr;
        MPI_Recv(sink, 0, MPI_BYTE, st->MPI_SOURCE, tag, s->comm, MPI_STATUS_IGNORE);
        return MPI_SUCCESS;
    }
    rc = MPI_Recv(p, n, MPI_BYTE, st->MPI_SOURCE, tag, s->comm, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        xchg_loc_free(s, p, (size_t)n, limited);
        return rc;
    }
    *msg = p;
    *bytes = (size_t)n;
    return MPI_SUCCESS;
}

int xchg_loc_deliver(xchg_sparse_call *s, const xchg_loc_item *it)
{
    xchg_sparse_buf b;
    if (!it->data) { /* still in the caller's buffer: handed over in place */
        memset(&b, 0, sizeof b);
        b.addr = xchg_block_addr(s->sendbuf, it->disp, &s->ti);
        return xchg_sparse_deliver(s, it->src, it->count, &b);
    }
    int rc = xchg_sparse_buf_alloc(s, it->count, &b);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = xchg_unpack_block(it->data, b.addr, 0, it->count, &s->ti);
    if (rc != MPI_SUCCESS) {
        xchg_sparse_buf_free(s, &b);
        return rc;
    }
    return xchg_sparse_deliver(s, it->src, it->count, &b);
}
