/*
 * locality.c - "locality": the blocks a rank sends to the ranks of one
 * other node travel as one aggregate message to one partner on that node,
 * which hands each block on to its destination inside the node; blocks
 * inside a node go directly. The locality-aware neighbour exchange of MPI
 * Advance (Collom et al., 2023) in its two-step form, one partner per
 * (rank, node) pair: rank s sends to node b through the rank of b whose
 * index inside b is s's index inside its node modulo b's size, so the
 * partners of one node share the load of its incoming aggregates.
 *
 * A rank then sends one message per other node it has neighbours on
 * instead of one per neighbour block: fewer inter-node messages where a
 * node's ranks share neighbours (stencils on a process grid, SpMV with
 * clustered columns), for one more intra-node hop and two copies.
 *
 * The analysis, once per communicator (xchg_neighbor_locality_analyse,
 * collective): the node of every rank (the communicator's node layout,
 * src/node/node_layout.c, shared with the node-aware alltoallv
 * algorithms: shared-memory nodes, or blocks of XCHG_RANKS_PER_NODE
 * ranks), and by one MPI_Alltoall which ranks send
 * this rank aggregates. It depends on the graph only, not on counts:
 * every structural block travels, a zero-size one as a zero-length entry,
 * so both ends of every message know it exists whatever the counts.
 *
 * One exchange:
 *   1. receives of the blocks from this node posted; the aggregates sent
 *      (a header of (destination, bytes) per block, then the packed
 *      blocks, in send-block order); the blocks to this node sent;
 *   2. each aggregate received (probed: its size varies with the counts)
 *      and its blocks appended to one forward message per destination,
 *      senders in ascending order, each sender's blocks in its order;
 *      the forward messages sent;
 *   3. each forward message received (probed) and unpacked into the
 *      receive blocks it carries: those from the other nodes routed
 *      through that partner, by sender, then in the sender's block order
 *      (Cartesian: block i receives the sender's block i ^ 1, as direct's
 *      tags do). A forward message of another length than its blocks
 *      expect is an error (MPI_ERR_TRUNCATE), nothing unpacked from it.
 * All sends are nonblocking and posted before any receive that waits, so
 * no rank waits on one that waits on it. Messages are limited to 2^31-1
 * bytes (MPI_ERR_COUNT beyond).
 */
#include "locality.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef xchg_nloc_analysis loc_analysis;
typedef xchg_nloc_run loc_run;

void xchg_neighbor_locality_analysis_free(void *p)
{
    loc_analysis *a = p;
    if (!a)
        return;
    free(a->srcs); /* one allocation: srcs, forward_to */
    free(a);
}

const xchg_nbr_stats *xchg_neighbor_locality_stats(const void *analysis)
{
    return &((const loc_analysis *)analysis)->stats;
}

/* Which ranks send aggregates here and which ranks of this node expect a
 * forward message from here (one MPI_Alltoall of two values per pair:
 * "I send you an aggregate of this many bytes" (+1, so that an aggregate
 * of zero-size blocks still counts), "I expect a forward from you"), so
 * both ends of every message know it from the graph alone; and the agreed
 * statistics (two MPI_Allreduce: sums and maxima, with the maxima the
 * tuning table's key, so auto's model takes a table's constants only where
 * every rank read the same table). The bytes are those of
 * this first call's counts: auto's model, and *need, the most bytes any
 * rank sends its node-mates and hands on (locality_shm's window). */
int xchg_nloc_census(xchg_nbr_call *c, loc_analysis *a, double *need)
{
    const int P = a->P, me = c->rank, node = a->L->node_of[me];
    int64_t *out = calloc(4 * (size_t)P, sizeof(int64_t)), *in = out ? out + 2 * P : NULL;
    int err = out ? MPI_SUCCESS : xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory "
                                                  "for the census");
    /* m[2], m[3]: the tuning table's key and its negation, agreed by the
     * maxima where every rank has the same; m[4] the window's need; m[5]
     * this rank's blocks, sent and received */
    double v[7] = {0, 0, 0, 0, 0, 0, 0}, m[6] = {0, 0, c->table_key, -c->table_key, 0, 0};
    for (int j = 0; out && j < c->g->outdegree; j++) {
        int d = c->g->dests[j];
        v[4] += d != MPI_PROC_NULL;
        if (d != MPI_PROC_NULL && !xchg_nloc_is_remote(a, me, d))
            v[6] += (double)c->sendcounts[j] * (double)c->st.size;
        if (!xchg_nloc_is_remote(a, me, d))
            continue;
        int p = xchg_nloc_partner(a, me, a->L->node_of[d]);
        int64_t bytes = (int64_t)c->sendcounts[j] * c->st.size;
        v[0] += 1;
        v[1] += !out[2 * p];
        v[2] += (double)bytes;
        out[2 * p] += bytes + !out[2 * p];
    }
    for (int i = 0; out && i < c->g->indegree; i++)
        m[5] += c->g->sources[i] != MPI_PROC_NULL;
    m[5] += v[4];
    for (int i = 0; out && i < c->g->indegree; i++)
        if (xchg_nloc_is_remote(a, me, c->g->sources[i]))
            out[2 * xchg_nloc_partner(a, c->g->sources[i], node) + 1] = 1;
    err = xchg_agree_errors(c->comm, me, P, err, "locality: the census");
    if (err != MPI_SUCCESS) {
        free(out);
        return err;
    }
    int rc = xchg_mpi_alltoall(out, 2, MPI_INT64_T, in, 2, MPI_INT64_T, c->comm);
    for (int s = 0; rc == MPI_SUCCESS && s < P; s++) {
        m[0] += in[2 * s + 1] != 0; /* the forward messages this rank sends */
        m[1] += in[2 * s] > 0 ? (double)(in[2 * s] - 1) : 0; /* bytes it hands on */
    }
    v[3] = m[0]; /* summed below, as m is maximised */
    v[5] = a->L->first[node + 1] - a->L->first[node];
    m[4] = v[6] + m[1];
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_allreduce(MPI_IN_PLACE, v, 7, MPI_DOUBLE, MPI_SUM, c->comm);
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_allreduce(MPI_IN_PLACE, m, 6, MPI_DOUBLE, MPI_MAX, c->comm);
    const int L = a->L->first[node + 1] - a->L->first[node];
    int *srcs = (int *)out; /* out is free again: the list of sources, compacted */
    a->nsrc = 0;
    for (int s = 0; rc == MPI_SUCCESS && s < P; s++)
        if (in[2 * s])
            srcs[a->nsrc++] = s;
    a->srcs = rc == MPI_SUCCESS ? malloc(sizeof(int) * (size_t)(a->nsrc + 1) + (size_t)L + 1)
                                : NULL;
    if (a->srcs) {
        memcpy(a->srcs, srcs, sizeof(int) * (size_t)a->nsrc);
        a->forward_to = (char *)(a->srcs + a->nsrc + 1);
        for (int l = 0; l < L; l++)
            a->forward_to[l] = (char)(in[2 * a->L->perm[a->L->first[node] + l] + 1] != 0);
    } else if (rc == MPI_SUCCESS) { /* after the collectives: this rank cannot go on */
        rc = xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory for its sources");
    }
    a->stats.remote_blocks = v[0] / P;
    a->stats.remote_nodes = v[1] / P;
    a->stats.remote_bytes = v[2] / P;
    a->stats.forwards = v[3] / P;
    a->stats.blocks = v[4] / P;
    a->stats.node_ranks = v[5] / P;
    a->stats.local_bytes = v[6] / P;
    a->stats.forwards_max = m[0];
    a->stats.handed_bytes_max = m[1];
    a->stats.table_key = m[2] == -m[3] ? m[2] : 0;
    a->stats.table_differ = m[2] != -m[3];
    *need = m[4];
    a->stats.blocks_max = m[5];
    free(out);
    return rc;
}

int xchg_nloc_analyse(xchg_nbr_call *c, loc_analysis **out, double *need)
{
    *out = NULL;
    loc_analysis *a = calloc(1, sizeof *a);
    int err = a ? MPI_SUCCESS : xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory for its "
                                                "analysis");
    err = xchg_agree_errors(c->comm, c->rank, c->size, err, "locality: the node map");
    const xchg_node_layout *L = NULL;
    if (err == MPI_SUCCESS) /* collective, agreed; built once per communicator */
        err = xchg_node_layout_of(c->cs, &L);
    if (err == MPI_SUCCESS) {
        a->P = c->size;
        a->L = L;
        err = xchg_nloc_census(c, a, need);
    }
    if (err != MPI_SUCCESS) {
        xchg_neighbor_locality_analysis_free(a);
        return err;
    }
    *out = a;
    return MPI_SUCCESS;
}

int xchg_neighbor_locality_analyse(xchg_nbr_call *c, void **out)
{
    loc_analysis *a;
    double need;
    int rc = xchg_nloc_analyse(c, &a, &need);
    *out = a;
    return rc;
}

/* ---- one exchange ---- */

void xchg_nloc_fail(loc_run *x, int e)
{
    if (x->err == MPI_SUCCESS)
        x->err = e;
}
#define fail xchg_nloc_fail

char *xchg_nloc_take(loc_run *x, size_t bytes, const char *what)
{
    xchg_call *m = &x->c->mem;
    int e = MPI_SUCCESS;
    char *p = xchg_temp_alloc(m, bytes, what, &e);
    if (!p && m->temp_limit != SIZE_MAX) {
        size_t limit = m->temp_limit;
        m->temp_limit = SIZE_MAX;
        int e2 = MPI_SUCCESS;
        p = xchg_temp_alloc(m, bytes, what, &e2);
        m->temp_limit = limit;
    }
    fail(x, e);
    if (p) {
        x->bufs[x->nbufs] = p;
        x->bufs_b[x->nbufs++] = bytes;
    }
    return p;
}
#define take xchg_nloc_take

int xchg_nloc_slot(loc_run *x, int from)
{
    x->from[x->n] = from;
    return x->n++;
}

int xchg_nloc_begin(loc_run *x, xchg_nbr_call *c, char *sink)
{
    const xchg_nbr_graph *g = c->g;
    memset(x, 0, sizeof *x);
    x->c = c, x->a = c->analysis, x->me = c->rank, x->sink = sink;
    if (!x->a)
        return xchg_error_code(MPI_ERR_INTERN, "locality: run without its analysis");
    x->node = x->a->L->node_of[x->me];
    const int L = xchg_node_size(x->a->L, x->node);
    x->cap = g->indegree + g->outdegree + x->a->L->nnodes + L + 1;
    int nbufs = x->a->L->nnodes + x->a->nsrc + 3 * L + 16;
    x->bufs = malloc(sizeof(char *) * (size_t)nbufs);
    x->bufs_b = malloc(sizeof(size_t) * (size_t)nbufs);
    x->req = malloc(sizeof(MPI_Request) * (size_t)x->cap);
    x->from = malloc(sizeof(int) * (size_t)x->cap);
    if (!x->bufs || !x->bufs_b || !x->req || !x->from)
        return xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory for its requests");
    return MPI_SUCCESS;
}

int xchg_nloc_end(loc_run *x, int rc)
{
    for (int k = 0; x->bufs && k < x->nbufs; k++)
        xchg_temp_free(&x->c->mem, x->bufs[k], x->bufs_b[k]);
    free(x->bufs);
    free(x->bufs_b);
    free(x->req);
    free(x->from);
    return x->err != MPI_SUCCESS ? x->err : rc;
}

void xchg_nloc_recv_local(loc_run *x, int i)
{
    const xchg_nbr_call *c = x->c;
    if (xchg_nloc_bytes(c->recvcounts, i, &c->rt) == 0)
        return;
    int k = xchg_nloc_slot(x, i);
    fail(x, MPI_Irecv(xchg_block_addr(c->recvbuf, c->rdispls[i], &c->rt), c->recvcounts[i],
                      c->rt.type, c->g->sources[i],
                      xchg_nbr_recv_tag(c->g, XCHG_NEIGHBOR_TAG_LOCAL, i), c->comm, &x->req[k]));
}

/* 1a. Receives of the blocks from this node. */
static void post_local_receives(loc_run *x)
{
    const xchg_nbr_call *c = x->c;
    for (int i = 0; i < c->g->indegree && x->err == MPI_SUCCESS; i++) {
        int s = c->g->sources[i];
        if (s != MPI_PROC_NULL && !xchg_nloc_is_remote(x->a, x->me, s))
            xchg_nloc_recv_local(x, i);
    }
}

/* 1b. The blocks to this node, directly. */
void xchg_nloc_send_local(loc_run *x)
{
    const xchg_nbr_call *c = x->c;
    for (int j = 0; j < c->g->outdegree && x->err == MPI_SUCCESS; j++) {
        int d = c->g->dests[j];
        if (d == MPI_PROC_NULL || xchg_nloc_is_remote(x->a, x->me, d) ||
            xchg_nloc_bytes(c->sendcounts, j, &c->st) == 0)
            continue;
        int k = xchg_nloc_slot(x, -1);
        fail(x, MPI_Isend(xchg_block_addr(c->sendbuf, c->sdispls[j], &c->st), c->sendcounts[j],
                          c->st.type, d, xchg_nbr_send_tag(c->g, XCHG_NEIGHBOR_TAG_LOCAL, j),
                          c->comm, &x->req[k]));
    }
}

/* 1c. One aggregate to the partner on node b: header, then the blocks. */
static void send_aggregate(loc_run *x, int b)
{
    const xchg_nbr_call *c = x->c;
    const xchg_node_layout *nl = x->a->L;
    int64_t n = 0, data = 0;
    for (int j = 0; j < c->g->outdegree; j++)
        if (xchg_nloc_is_remote(x->a, x->me, c->g->dests[j]) && nl->node_of[c->g->dests[j]] == b) {
            n++;
            data += xchg_nloc_bytes(c->sendcounts, j, &c->st);
        }
    int64_t total = 8 * (1 + 2 * n) + data;
    if (total > INT_MAX) {
        fail(x, xchg_error_code(MPI_ERR_COUNT, "locality: rank %d's aggregate to node %d "
                                "would be %lld bytes, over 2^31-1", x->me, b, (long long)total));
        total = 8, n = 0; /* an empty aggregate: the partner still gets one */
    }
    char *buf = take(x, (size_t)total, "locality: an aggregate");
    if (!buf)
        return fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
    int64_t *h = (int64_t *)buf;
    char *out = buf + 8 * (1 + 2 * n);
    h[0] = n;
    int64_t e = 0;
    for (int j = 0; j < c->g->outdegree && e < n; j++) {
        int d = c->g->dests[j];
        if (!xchg_nloc_is_remote(x->a, x->me, d) || nl->node_of[d] != b)
            continue;
        int64_t bytes = xchg_nloc_bytes(c->sendcounts, j, &c->st);
        h[1 + 2 * e] = d;
        h[2 + 2 * e++] = bytes;
        if (bytes > 0)
            fail(x, xchg_pack_block(c->sendbuf, c->sdispls[j], c->sendcounts[j], &c->st, out));
        out += bytes;
    }
    int k = xchg_nloc_slot(x, -1);
    fail(x, MPI_Isend(buf, (int)total, MPI_BYTE, xchg_nloc_partner(x->a, x->me, b),
                      XCHG_NEIGHBOR_TAG_AGGREGATE, c->comm, &x->req[k]));
}

void xchg_nloc_send_aggregates(loc_run *x)
{
    const xchg_nbr_call *c = x->c;
    char *seen = (char *)take(x, (size_t)x->a->L->nnodes + 1, "locality: nodes seen");
    if (!seen)
        return fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
    memset(seen, 0, (size_t)x->a->L->nnodes + 1);
    for (int j = 0; j < c->g->outdegree; j++) {
        int d = c->g->dests[j];
        if (!xchg_nloc_is_remote(x->a, x->me, d) || seen[x->a->L->node_of[d]])
            continue;
        seen[x->a->L->node_of[d]] = 1;
        send_aggregate(x, x->a->L->node_of[d]);
    }
}

char *xchg_nloc_receive_probed(loc_run *x, int src, int tag, int *bytes)
{
    MPI_Status st;
    *bytes = 0;
    int rc = xchg_mpi_probe(src, tag, x->c->comm, &st);
    if (rc == MPI_SUCCESS)
        rc = MPI_Get_count(&st, MPI_BYTE, bytes);
    char *buf = rc == MPI_SUCCESS ? take(x, (size_t)*bytes + 1, "locality: a message") : NULL;
    if (rc == MPI_SUCCESS && !buf) {
        buf = x->sink; /* drained: a zero-count receive matches it whole */
        *bytes = -1;
        rc = xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory");
    }
    if (buf)
        fail(x, xchg_mpi_recv(buf, *bytes < 0 ? 0 : *bytes, MPI_BYTE, src, tag, x->c->comm,
                              MPI_STATUS_IGNORE));
    fail(x, rc);
    return *bytes < 0 ? NULL : buf;
}

/* An aggregate's header is well formed: entries fit, destinations here. */
static int header_ok(const loc_run *x, const char *buf, int bytes)
{
    if (bytes < 8)
        return 0;
    const int64_t *h = (const int64_t *)buf;
    int64_t n = h[0], data = 0;
    if (n < 0 || n > (bytes - 8) / 16)
        return 0;
    for (int64_t e = 0; e < n; e++) {
        int64_t d = h[1 + 2 * e], b = h[2 + 2 * e];
        if (d < 0 || d >= x->a->P || x->a->L->node_of[d] != x->node ||
            !x->a->forward_to[x->a->L->local_of[d]] || b < 0)
            return 0;
        data += b;
    }
    return 8 * (1 + 2 * n) + data == bytes;
}

void xchg_nloc_gather(loc_run *x, char **agg, int64_t *fwd)
{
    const loc_analysis *a = x->a;
    const int L = xchg_node_size(a->L, x->node);
    for (int l = 0; l < L; l++)
        fwd[l] = a->forward_to[l] ? 0 : -1; /* -1: no forward message; else its bytes */
    for (int k = 0; k < a->nsrc; k++) {
        int bytes;
        agg[k] = xchg_nloc_receive_probed(x, a->srcs[k], XCHG_NEIGHBOR_TAG_AGGREGATE, &bytes);
        if (agg[k] && !header_ok(x, agg[k], bytes)) {
            fail(x, xchg_error_code(MPI_ERR_INTERN, "locality: a malformed aggregate from "
                                    "rank %d", a->srcs[k]));
            agg[k] = NULL;
        }
        const int64_t *h = (const int64_t *)agg[k];
        for (int64_t e = 0; h && e < h[0]; e++)
            fwd[a->L->local_of[h[1 + 2 * e]]] += h[2 + 2 * e];
    }
}

void xchg_nloc_fill(loc_run *x, char *const *agg, char *const *out, const int64_t *fwd)
{
    const loc_analysis *a = x->a;
    const int L = xchg_node_size(a->L, x->node);
    int64_t *fill = (int64_t *)take(x, sizeof(int64_t) * (size_t)L + 1, "locality: forwards");
    if (!fill)
        return fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
    memset(fill, 0, sizeof(int64_t) * (size_t)L);
    for (int k = 0; k < a->nsrc; k++) { /* senders ascending, each in its order */
        const int64_t *h = (const int64_t *)agg[k];
        const char *data = agg[k] ? agg[k] + 8 * (1 + 2 * h[0]) : NULL;
        for (int64_t e = 0; h && e < h[0]; e++) {
            int l = a->L->local_of[h[1 + 2 * e]];
            int64_t b = h[2 + 2 * e];
            if (out[l] && out[l] != x->sink && fill[l] + b <= fwd[l])
                memcpy(out[l] + fill[l], data, (size_t)b);
            fill[l] += b;
            data += b;
        }
    }
    for (int l = 0; l < L; l++)
        if (fwd[l] > 0)
            xchg_charge_copy((size_t)fwd[l]);
}

void xchg_nloc_send_forwards(loc_run *x, char *const *agg, int64_t *fwd)
{
    const loc_analysis *a = x->a;
    const int L = xchg_node_size(a->L, x->node);
    char **out = (char **)take(x, sizeof(char *) * (size_t)L + 1, "locality: forwards");
    if (!out)
        return fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
    for (int l = 0; l < L; l++) {
        out[l] = NULL;
        if (fwd[l] > INT_MAX) {
            fail(x, xchg_error_code(MPI_ERR_COUNT, "locality: a forward message of %lld bytes, "
                                    "over 2^31-1", (long long)fwd[l]));
            fwd[l] = 0; /* sent empty: its receiver reports the length */
        }
        if (fwd[l] >= 0 && !(out[l] = take(x, (size_t)fwd[l] + 1, "locality: a forward")))
            fwd[l] = 0, out[l] = x->sink;
    }
    xchg_nloc_fill(x, agg, out, fwd);
    for (int l = 0; l < L; l++) {
        if (fwd[l] < 0)
            continue;
        int k = xchg_nloc_slot(x, -1);
        fail(x, MPI_Isend(out[l], (int)fwd[l], MPI_BYTE, xchg_node_member(a->L, x->node, l),
                          XCHG_NEIGHBOR_TAG_FORWARD, x->c->comm, &x->req[k]));
    }
}

/* 2. The aggregates received and forwarded: one message per destination
 * of this node that any of them names. */
static void forward(loc_run *x)
{
    const loc_analysis *a = x->a;
    const int L = xchg_node_size(a->L, x->node);
    char **agg = (char **)take(x, sizeof(char *) * (size_t)(a->nsrc + 1), "locality: aggregates");
    int64_t *fwd = (int64_t *)take(x, sizeof(int64_t) * (size_t)L + 1, "locality: forwards");
    if (!agg || !fwd)
        return fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
    xchg_nloc_gather(x, agg, fwd);
    xchg_nloc_send_forwards(x, agg, fwd);
}

static int routed_cmp(const void *p, const void *q)
{
    const xchg_nloc_routed *u = p, *v = q;
    if (u->partner != v->partner)
        return u->partner < v->partner ? -1 : 1;
    if (u->source != v->source)
        return u->source < v->source ? -1 : 1;
    return (u->key > v->key) - (u->key < v->key);
}

void xchg_nloc_unpack(loc_run *x, const xchg_nloc_routed *r, int n, const char *in,
                      int64_t bytes, int via)
{
    const xchg_nbr_call *c = x->c;
    int64_t want = 0;
    for (int k = 0; k < n; k++)
        want += xchg_nloc_bytes(c->recvcounts, r[k].block, &c->rt);
    if (in && bytes != want) {
        fail(x, xchg_error_code(MPI_ERR_TRUNCATE, "locality: rank %d receives %lld bytes "
                                "through rank %d where its receive blocks from the ranks "
                                "routed there (the first: block %d, from rank %d) hold %lld",
                                x->me, (long long)bytes, via, r[0].block, r[0].source,
                                (long long)want));
        return;
    }
    for (int k = 0; in && k < n; k++) {
        int i = r[k].block;
        if (c->recvcounts[i] > 0 && c->rt.size > 0)
            fail(x, xchg_unpack_block(in, c->recvbuf, c->rdispls[i], c->recvcounts[i], &c->rt));
        in += xchg_nloc_bytes(c->recvcounts, i, &c->rt);
    }
}

xchg_nloc_routed *xchg_nloc_routes(loc_run *x, int local, int *n)
{
    const xchg_nbr_call *c = x->c;
    xchg_nloc_routed *r = (xchg_nloc_routed *)take(
        x, sizeof(xchg_nloc_routed) * (size_t)(c->g->indegree + 1), "locality: receive order");
    *n = 0;
    if (!r) {
        fail(x, xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory"));
        return NULL;
    }
    for (int i = 0; i < c->g->indegree; i++) {
        int s = c->g->sources[i];
        if (s == MPI_PROC_NULL || xchg_nloc_is_remote(x->a, x->me, s) != !local)
            continue;
        /* the sender's block that lands here: i (graphs), i ^ 1 (Cartesian) */
        r[(*n)++] = (xchg_nloc_routed){local ? s : xchg_nloc_partner(x->a, s, x->node), s,
                                       c->g->topo == MPI_CART ? i ^ 1 : i, i};
    }
    qsort(r, (size_t)*n, sizeof *r, routed_cmp);
    return r;
}

/* 3. The forward messages: from each partner that carries blocks here. */
static void receive_forwards(loc_run *x)
{
    int n;
    xchg_nloc_routed *r = xchg_nloc_routes(x, 0, &n);
    for (int k = 0; r && k < n;) {
        int m = k, bytes;
        while (m < n && r[m].partner == r[k].partner)
            m++;
        const char *in = xchg_nloc_receive_probed(x, r[k].partner, XCHG_NEIGHBOR_TAG_FORWARD,
                                                  &bytes);
        xchg_nloc_unpack(x, r + k, m - k, in, bytes, r[k].partner);
        k = m;
    }
}

int xchg_neighbor_locality(xchg_nbr_call *c)
{
    loc_run x;
    char sink[1];
    int rc = xchg_nloc_begin(&x, c, sink);
    if (rc == MPI_SUCCESS) {
        post_local_receives(&x);
        xchg_nloc_send_aggregates(&x);
        xchg_nloc_send_local(&x);
        forward(&x);
        receive_forwards(&x);
        rc = xchg_nbr_complete(c, x.n, x.req, x.from, NULL, "locality");
    }
    return xchg_nloc_end(&x, rc);
}

/* Persistent: the analysis is the communicator's (made at init); each
 * start runs the exchange as a coroutine (src/progress/queue.c), which
 * posts what it can at once and goes on in xchg_test/xchg_wait. */
typedef struct loc_plan {
    xchg_nbr_call *c;
    xchg_nbr_fn run;
    xchg_nb *nb;
    int rc;
} loc_plan;

static int loc_body(void *p)
{
    loc_plan *lp = p;
    return lp->run(lp->c);
}

int xchg_nloc_pinit(xchg_nbr_call *c, void **plan, xchg_nbr_fn run)
{
    loc_plan *lp = calloc(1, sizeof *lp);
    if (!lp)
        return xchg_error_code(MPI_ERR_NO_MEM, "locality: no memory for the persistent plan");
    lp->c = c;
    lp->run = run;
    *plan = lp;
    return MPI_SUCCESS;
}

static int loc_pinit(xchg_nbr_call *c, void **plan)
{
    return xchg_nloc_pinit(c, plan, xchg_neighbor_locality);
}

int xchg_nloc_pstart(xchg_nbr_call *c, void *p)
{
    loc_plan *lp = p;
    lp->rc = MPI_SUCCESS;
    if (xchg_nb_start(c->cs, loc_body, lp, &lp->nb) != MPI_SUCCESS) {
        lp->nb = NULL; /* no memory for a coroutine: the exchange runs here */
        lp->rc = lp->run(c);
    }
    return MPI_SUCCESS;
}

static int loc_pdone(loc_plan *lp, int rc)
{
    xchg_nb_free(lp->nb);
    lp->nb = NULL;
    return rc;
}

int xchg_nloc_ptest(xchg_nbr_call *c, void *p, int *flag)
{
    (void)c;
    loc_plan *lp = p;
    if (!lp->nb) {
        *flag = 1;
        return lp->rc;
    }
    int rc = xchg_nb_test(lp->nb, flag);
    return *flag ? loc_pdone(lp, rc) : rc;
}

int xchg_nloc_pwait(xchg_nbr_call *c, void *p)
{
    (void)c;
    loc_plan *lp = p;
    return lp->nb ? loc_pdone(lp, xchg_nb_wait(lp->nb)) : lp->rc;
}

int xchg_nloc_pfree(xchg_nbr_call *c, void *p)
{
    (void)c;
    loc_plan *lp = p;
    if (lp)
        xchg_nb_free(lp->nb);
    free(lp);
    return MPI_SUCCESS;
}

const xchg_nbr_persist_ops xchg_neighbor_locality_persist = {
    loc_pinit, xchg_nloc_pstart, xchg_nloc_ptest, xchg_nloc_pwait, xchg_nloc_pfree,
};
