/*
 * pex_loc.c - pex with node aggregation (the _LOC variant of MPI
 * Advance's dynamic sparse exchange, Collom et al., arXiv 2308.13869):
 * messages to the ranks of one remote node travel as one aggregate
 * between two relays (loc_common.h: the routing and the bundles), and the
 * census is no longer one MPI_Alltoall over all P ranks but two over the
 * node's L ranks. A rank then sends at most L-1 messages inside its node
 * and one per node it serves, instead of one per destination: fewer,
 * larger messages across nodes, for two more hops inside them.
 *
 * How each step knows what it receives:
 *  1. census 1, MPI_Alltoall of 2 ints on the node communicator: to each
 *     node-mate, the bytes of this rank's bundle for it (its messages to
 *     that node-mate and to the nodes it serves), and this rank's number
 *     of remote messages (for sparse auto's census), or an error mark.
 *     Then the bundles move, every receive posted at its known size.
 *  2. between nodes: every relay sends its partner one aggregate per node
 *     pair, even an empty one (a header), so the partner knows that
 *     exactly one comes from each node it serves and learns the size by a
 *     probe. The header carries the error flag and the node's sum of
 *     remote messages. With N nodes that is N(N-1) messages in all, each
 *     rank sending and receiving about (N-1)/L.
 *  3. census 2, MPI_Alltoall of 3 ints on the node communicator: the
 *     bytes of each relay's bundle for each node-mate, the error flag, and
 *     the message sums of the nodes the relay serves. Then the relays'
 *     bundles move, receives posted at their known sizes, and every
 *     message is delivered with its original sender.
 *
 * Errors, agreed with no collective on the way: a rank's argument error
 * (or a refusal before data moves: its bundles' memory, a bundle over
 * INT_MAX bytes) is its mark in census 1, which all of its node sees; its
 * node's relays then send flagged empty aggregates to every other node;
 * census 2 gives every rank of every node the flag. A relay refused
 * memory for what it relays drains the message and raises the flag the
 * same way. A flagged call delivers nothing (the own node's messages and
 * the self message wait for census 2) and every rank returns the error
 * agreed by xchg_sparse_agree. The same chain synchronises every rank
 * once per call (census 2 on a node completes only after its relays got
 * every other node's aggregate, sent after that node's census 1), which
 * the tag sets' parity needs (sparse_internal.h). And the census sums:
 * census 1 gives each rank its node's sum, census 2 every other node's
 * (each served by one member), so census_msgs is the same on every rank.
 *
 * A communicator whose node layout cannot be made (cs->nodes_failed,
 * agreed) runs pex instead, on every rank.
 */
#include "pex_loc.h"

#include <stdlib.h>
#include <string.h>

enum { ERROR_MARK = -1 };

typedef xchg_pl_run pl_run;

void xchg_pl_lose(pl_run *r, int err)
{
    if (r->lost == MPI_SUCCESS)
        r->lost = err;
}

int xchg_pl_alloc(pl_run *r)
{
    const int L = r->x.L, ns = r->x.ns;
    r->c1s = malloc(sizeof(int) * (10 * (size_t)L + XCHG_LOC_HDR * (size_t)ns + 1));
    r->in1 = calloc(2 * (size_t)L + (size_t)ns + 1, sizeof(char *));
    r->in1b = calloc(2 * (size_t)L + (size_t)ns + 1, sizeof(size_t));
    r->req = malloc(sizeof(MPI_Request) * (2 * (size_t)L + (size_t)ns + 1));
    if (!r->c1s || !r->in1 || !r->in1b || !r->req)
        return xchg_error_code(MPI_ERR_NO_MEM, "pex_loc: no memory for the census of %d "
                               "node-mates", L);
    r->c1r = r->c1s + 2 * L;
    r->c2s = r->c1r + 2 * L;
    r->c2r = r->c2s + 3 * L;
    r->hdr2 = r->c2r + 3 * L;
    r->in2 = r->in1 + L;
    r->in3 = r->in2 + ns;
    r->in2b = r->in1b + L;
    r->in3b = r->in2b + ns;
    return MPI_SUCCESS;
}

void xchg_pl_free(pl_run *r)
{
    xchg_sparse_call *s = r->s;
    const int L = r->x.L, ns = r->x.ns;
    if (r->in1) {
        for (int j = 0; j < L; j++) {
            xchg_loc_free(s, r->in1[j], r->in1b[j], 1);
            xchg_loc_free(s, r->in3[j], r->in3b[j], 0);
        }
        for (int i = 0; i < ns; i++)
            xchg_loc_free(s, r->in2[i], r->in2b[i], 0);
    }
    xchg_loc_out_free(s, &r->out1);
    xchg_loc_out_free(s, &r->out2);
    xchg_loc_out_free(s, &r->out3);
    xchg_loc_items_free(&r->own);
    xchg_loc_items_free(&r->mine);
    xchg_loc_items_free(&r->relay);
    xchg_loc_items_free(&r->agg);
    xchg_loc_items_free(&r->forme);
    free(r->c1s);
    free(r->in1);
    free(r->in1b);
    free(r->req);
}

/* (-1 from the routing: not a message this rank should have got.) */
int xchg_pl_file(pl_run *r, const char *msg, size_t bytes, int *flag, int *info,
                      xchg_loc_items *to, int step)
{
    xchg_sparse_call *s = r->s;
    const xchg_node_layout *n = r->x.nl;
    xchg_loc_items tmp = {0};
    int rc = xchg_loc_parse(s, msg, bytes, flag, info, &tmp);
    for (int i = 0; i < tmp.n && rc == MPI_SUCCESS; i++) {
        const xchg_loc_item *m = &tmp.v[i];
        if (m->dst == s->rank) {
            rc = xchg_loc_push(&r->forme, m, -1);
            continue;
        }
        int b = n->node_of[m->dst];
        int k = step == 1 ? xchg_loc_served(&r->x, b) : b == r->x.a ? n->local_of[m->dst] : -1;
        rc = k < 0 ? xchg_error_code(MPI_ERR_INTERN, "pex_loc: rank %d got a message for "
                                     "rank %d to relay, which it does not serve", s->rank,
                                     m->dst)
                   : xchg_loc_push(to, m, k);
    }
    xchg_loc_items_free(&tmp);
    return rc;
}

/* (pex_loc.h) */
int xchg_pl_send_bundles(pl_run *r, const xchg_loc_out *o, int tag, MPI_Request *req, int *n)
{
    int rc = MPI_SUCCESS;
    for (int j = 0; j < r->x.L && rc == MPI_SUCCESS; j++)
        if (j != r->x.la && o->size && o->size[j] > 0)
            rc = MPI_Isend(o->buf + o->off[j], (int)o->size[j], MPI_BYTE,
                           xchg_node_member(r->x.nl, r->x.a, j), tag, r->s->comm, &req[(*n)++]);
    return rc;
}

/* Steps 1 and 3: a bundle announced by member j (counts[stride j] bytes)
 * that no memory took (in[j] NULL) is received empty, truncated on
 * purpose, so that its sender completes. */
static void drain_unreceived(pl_run *r, char *const *in, const int *counts, int stride, int tag)
{
    static char sink[1];
    for (int j = 0; j < r->x.L; j++)
        if (j != r->x.la && counts[stride * j] > 0 && !in[j])
            MPI_Recv(sink, 0, MPI_BYTE, xchg_node_member(r->x.nl, r->x.a, j), tag, r->s->comm,
                     MPI_STATUS_IGNORE);
}

/* Step 1 after census 1: the bundles inside the node. */
static int step_gather(pl_run *r)
{
    xchg_sparse_call *s = r->s;
    const int L = r->x.L, la = r->x.la;
    const int tag = xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_GATHER);
    int rc = MPI_SUCCESS, nr = 0, ns = 0;
    int *src = r->c2s; /* free until census 2: places posted, in order */
    for (int j = 0; j < L && rc == MPI_SUCCESS; j++) {
        size_t b = (size_t)r->c1r[2 * j];
        if (j == la || b == 0)
            continue;
        int aerr = MPI_SUCCESS;
        r->in1[j] = xchg_loc_alloc(s, b, 1, "pex_loc: bundles to relay", &aerr);
        if (!r->in1[j]) { /* drained below, once this rank's sends are posted */
            xchg_pl_lose(r, aerr);
            continue;
        }
        r->in1b[j] = b;
        rc = MPI_Irecv(r->in1[j], (int)b, MPI_BYTE, xchg_node_member(r->x.nl, r->x.a, j),
                       tag, s->comm, &r->req[nr]);
        src[nr++] = j;
    }
    if (rc == MPI_SUCCESS)
        rc = xchg_pl_send_bundles(r, &r->out1, tag, r->req + nr, &ns);
    if (rc == MPI_SUCCESS)
        drain_unreceived(r, r->in1, r->c1r, 2, tag);
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(nr + ns, r->req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nr && rc == MPI_SUCCESS; i++) {
        int flag, info, j = src[i];
        int e = xchg_pl_file(r, r->in1[j], r->in1b[j], &flag, &info, &r->relay, 1);
        if (e != MPI_SUCCESS)
            xchg_pl_lose(r, e);
    }
    return rc;
}

int xchg_pl_pairs(pl_run *r, int flag, int nodesum, int *gflag, int *served_sum)
{
    xchg_sparse_call *s = r->s;
    const int ns = r->x.ns;
    const int tag = xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_PAIR);
    int rc = MPI_SUCCESS;
    /* this rank's own share joins what the node-mates sent */
    for (int i = 0; i < r->mine.n && rc == MPI_SUCCESS; i++)
        rc = xchg_loc_push(&r->relay, &r->mine.v[i],
                           xchg_loc_served(&r->x, r->x.nl->node_of[r->mine.v[i].dst]));
    if (rc != MPI_SUCCESS) {
        xchg_pl_lose(r, rc);
        rc = MPI_SUCCESS;
    }
    if (!flag && r->lost == MPI_SUCCESS) {
        int e = xchg_loc_write(s, &r->relay, ns, 1, 1, "pex_loc: aggregates", &r->out2);
        if (e != MPI_SUCCESS)
            xchg_pl_lose(r, e);
    }
    int flagged = flag || r->lost != MPI_SUCCESS;
    for (int i = 0; i < ns && rc == MPI_SUCCESS; i++) {
        int *h = flagged ? r->hdr2 + XCHG_LOC_HDR * i : (int *)(r->out2.buf + r->out2.off[i]);
        size_t b = flagged ? XCHG_LOC_HDR * sizeof(int) : r->out2.size[i];
        h[XCHG_LOC_FLAG] = flagged;
        h[XCHG_LOC_INFO] = nodesum;
        h[XCHG_LOC_NEED] = r->need_out;
        if (flagged)
            h[XCHG_LOC_N] = 0;
        rc = MPI_Isend(h, (int)b, MPI_BYTE, xchg_loc_partner(&r->x, i), tag, s->comm,
                       &r->req[i]);
    }
    *gflag = flagged;
    *served_sum = 0;
    /* exactly one from each served node; only partners send this tag here */
    for (int i = 0; i < ns && rc == MPI_SUCCESS; i++) {
        MPI_Status st;
        int lost = MPI_SUCCESS, f = 0, info = 0;
        rc = MPI_Probe(MPI_ANY_SOURCE, tag, s->comm, &st);
        if (rc == MPI_SUCCESS)
            /* not refused at the limit: the sending node could not learn of it */
            rc = xchg_loc_recv_probed(s, &st, tag, 0, "pex_loc: aggregates to hand on",
                                      &r->in2[i], &r->in2b[i], &lost);
        if (rc != MPI_SUCCESS)
            break;
        if (lost != MPI_SUCCESS) {
            xchg_pl_lose(r, lost);
            continue;
        }
        int e = xchg_pl_file(r, r->in2[i], r->in2b[i], &f, &info, &r->agg, 2);
        if (e != MPI_SUCCESS)
            xchg_pl_lose(r, e);
        else if (((const int *)r->in2[i])[XCHG_LOC_NEED] > r->need_in)
            r->need_in = ((const int *)r->in2[i])[XCHG_LOC_NEED];
        *gflag |= f != 0;
        *served_sum += info;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(ns, r->req, MPI_STATUSES_IGNORE);
    *gflag |= r->lost != MPI_SUCCESS;
    return rc;
}

/* Step 3 after census 2: the relays' bundles to their receivers, and
 * every message for this rank delivered. */
static int step_scatter(pl_run *r)
{
    xchg_sparse_call *s = r->s;
    const int L = r->x.L, la = r->x.la;
    const int tag = xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_SCATTER);
    int rc = MPI_SUCCESS, nr = 0, nsend = 0, lerr = MPI_SUCCESS;
    int *src = r->c1s; /* free after census 2 */
    for (int j = 0; j < L && rc == MPI_SUCCESS; j++) {
        size_t b = (size_t)r->c2r[3 * j];
        if (j == la || b == 0)
            continue;
        int aerr = MPI_SUCCESS;
        r->in3[j] = xchg_loc_alloc(s, b, 0, "pex_loc: messages received", &aerr);
        if (!r->in3[j]) {
            if (lerr == MPI_SUCCESS)
                lerr = aerr;
            continue;
        }
        r->in3b[j] = b;
        rc = MPI_Irecv(r->in3[j], (int)b, MPI_BYTE, xchg_node_member(r->x.nl, r->x.a, j), tag,
                       s->comm, &r->req[nr]);
        src[nr++] = j;
    }
    if (rc == MPI_SUCCESS)
        rc = xchg_pl_send_bundles(r, &r->out3, tag, r->req + nr, &nsend);
    if (rc == MPI_SUCCESS)
        drain_unreceived(r, r->in3, r->c2r, 3, tag);
    if (rc == MPI_SUCCESS)
        rc = xchg_sparse_deliver_self(s);
    for (int i = 0; i < r->forme.n && rc == MPI_SUCCESS; i++)
        rc = xchg_loc_deliver(s, &r->forme.v[i]);
    /* the relays' bundles in completion order: a callback overlaps the rest */
    for (int done = 0; done < nr && rc == MPI_SUCCESS; done++) {
        int idx, flag, info;
        rc = MPI_Waitany(nr, r->req, &idx, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS || idx == MPI_UNDEFINED)
            break;
        int j = src[idx];
        xchg_loc_items got = {0};
        int e = xchg_loc_parse(s, r->in3[j], r->in3b[j], &flag, &info, &got);
        for (int i = 0; i < got.n && e == MPI_SUCCESS; i++)
            e = got.v[i].dst == s->rank ? xchg_loc_deliver(s, &got.v[i])
                : xchg_error_code(MPI_ERR_INTERN, "pex_loc: rank %d got rank %d's message",
                                  s->rank, got.v[i].dst);
        xchg_loc_items_free(&got);
        xchg_loc_free(s, r->in3[j], r->in3b[j], 0);
        r->in3[j] = NULL;
        if (e != MPI_SUCCESS && lerr == MPI_SUCCESS)
            lerr = e;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Waitall(nsend, r->req + nr, MPI_STATUSES_IGNORE);
    return rc != MPI_SUCCESS ? rc : lerr;
}

int xchg_sparse_pex_loc(xchg_sparse_call *s)
{
    pl_run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    if (xchg_loc_begin(s, &r.x) != MPI_SUCCESS) {
        s->ran = XCHG_SPARSE_PEX; /* no node layout, on every rank alike */
        return xchg_sparse_run(XCHG_SPARSE_PEX, s);
    }
    int rc = xchg_pl_alloc(&r);
    if (rc != MPI_SUCCESS) {
        xchg_pl_free(&r);
        return rc;
    }
    const int L = r.x.L, la = r.x.la;
    MPI_Comm node = r.x.nl->node;

    /* census 1: bundle sizes and marks inside the node */
    r.myerr = s->local_err;
    if (r.myerr == MPI_SUCCESS)
        r.myerr = xchg_loc_route_own(s, &r.x, &r.own, &r.mine);
    if (r.myerr == MPI_SUCCESS)
        r.myerr = xchg_loc_write(s, &r.own, L, 0, 1, "pex_loc: messages to the node", &r.out1);
    int degree = xchg_sparse_census_degree(s); /* 0 with an argument error: ndest is 0 */
    for (int j = 0; j < L; j++) {
        r.c1s[2 * j] = r.myerr == MPI_SUCCESS && j != la ? (int)r.out1.size[j] : 0;
        r.c1s[2 * j + 1] = r.myerr == MPI_SUCCESS ? degree : ERROR_MARK;
    }
    rc = MPI_Alltoall(r.c1s, 2, MPI_INT, r.c1r, 2, MPI_INT, node);
    int flag = 0, nodesum = 0;
    for (int j = 0; rc == MPI_SUCCESS && j < L; j++) {
        flag |= r.c1r[2 * j + 1] == ERROR_MARK;
        nodesum += r.c1r[2 * j + 1];
    }
    if (rc == MPI_SUCCESS && !flag)
        rc = step_gather(&r);

    /* step 2, then census 2: relays' bundle sizes, flags, served sums */
    int gflag = flag, served_sum = 0;
    if (rc == MPI_SUCCESS && r.x.N > 1)
        rc = xchg_pl_pairs(&r, flag, nodesum, &gflag, &served_sum);
    gflag |= r.lost != MPI_SUCCESS;
    if (rc == MPI_SUCCESS && !gflag && r.agg.n > 0) {
        /* not refused at the limit: only this node would see the flag */
        int e = xchg_loc_write(s, &r.agg, L, 0, 0, "pex_loc: messages to hand on", &r.out3);
        if (e != MPI_SUCCESS) {
            xchg_pl_lose(&r, e);
            gflag = 1;
        }
    }
    long long total = nodesum;
    if (rc == MPI_SUCCESS && r.x.N > 1) {
        for (int k = 0; k < L; k++) {
            r.c2s[3 * k] = !gflag && k != la && r.out3.size ? (int)r.out3.size[k] : 0;
            r.c2s[3 * k + 1] = gflag;
            r.c2s[3 * k + 2] = served_sum;
        }
        rc = MPI_Alltoall(r.c2s, 3, MPI_INT, r.c2r, 3, MPI_INT, node);
        for (int k = 0; rc == MPI_SUCCESS && k < L; k++) {
            gflag |= r.c2r[3 * k + 1] != 0;
            total += r.c2r[3 * k + 2];
        }
    } else {
        memset(r.c2r, 0, sizeof(int) * 3 * (size_t)L); /* one node: nothing relayed */
    }
    if (rc == MPI_SUCCESS && gflag) {
        /* every rank saw the flag: the error agreed, nothing delivered */
        if (s->local_err == MPI_SUCCESS)
            s->local_err = r.myerr != MPI_SUCCESS ? r.myerr : r.lost;
        xchg_pl_free(&r);
        return xchg_sparse_agree(s);
    }
    if (rc == MPI_SUCCESS) {
        s->ss->census_msgs = total;
        rc = step_scatter(&r);
    }
    xchg_pl_free(&r);
    return rc;
}
