/*
 * nbx_loc.c - nbx with node aggregation (the _LOC variant of MPI
 * Advance's dynamic sparse exchange, Collom et al., arXiv 2308.13869):
 * messages to the ranks of one remote node travel as one aggregate
 * between two relays (loc_common.h: the routing and the bundles), and no
 * step sends an empty message or a P-sized census. Each step is nbx's
 * protocol (nbx.c) on its group: synchronous sends, Iprobe for what
 * arrives, a nonblocking barrier once this rank's sends are all taken.
 *
 * One loop over three barriers (src/core/ibarrier.c, on the tags of
 * XCHG_SPARSE_TAG_BARRIER; the node's on the layout's node communicator):
 *  1. bundles to node-mates (tag LOC_GATHER), each with the messages for
 *     that node-mate and for the nodes it serves; once they are taken,
 *     node barrier A. When A completes every bundle for this rank is in
 *     (the senders' Issends were matched before they entered A), so the
 *     relay knows all its node's messages for the nodes it serves:
 *  2. one aggregate per served node with messages (tag LOC_PAIR); once
 *     they are taken, the global barrier G. Meanwhile each aggregate that
 *     arrives is handed on at once (3.), its messages for this rank
 *     delivered. When G completes no aggregate can come any more:
 *  3. the bundles of a received aggregate, one per node-mate it has
 *     messages for (tag LOC_SCATTER), are Issent as soon as it arrives;
 *     once G is complete and they are all taken, node barrier B. When B
 *     completes every node-mate has handed on everything: done.
 * Messages of this rank's own node arrive in step 1 and are delivered at
 * once, as everything else addressed to this rank. A relay forwards in
 * step 3 while its own barrier A may still run: a forward never waits on
 * A, and the B that ends the call waits for G, which waits for every
 * relay's aggregates to be taken.
 *
 * G synchronises every rank once per call, which the tag sets' parity
 * needs (sparse_internal.h; on one node A does, and the call ends there); A and B of one call, on the same node
 * communicator and tags, cannot mix: a rank starts B only after G, which
 * every node-mate enters only after its A completed.
 *
 * Errors, as nbx: nothing is agreed (no census could carry it), so one
 * rank's argument error fails that rank only (XCHG_CHECK=1 agrees it
 * before the exchange). A rank short of memory or given a malformed
 * bundle keeps taking part in every step and barrier, so nothing hangs,
 * and returns MPI_ERR_NO_MEM (the messages it would have carried are
 * lost, and only it says so). Memory for relayed and received messages
 * is counted but never refused at XCHG_MAX_TEMP_BYTES, as no receiver
 * can refuse alone (xchg_sparse_buf_alloc).
 *
 * A communicator whose node layout cannot be made (cs->nodes_failed,
 * agreed) runs nbx instead, on every rank.
 */
#include "loc_common.h"

#include <stdlib.h>
#include <string.h>

typedef struct nl_run {
    xchg_sparse_call *s;
    xchg_loc x;
    int lerr;                       /* this rank's first local error */
    xchg_loc_items mine, relay;     /* this rank's own share, and the node's */
    struct nl_in { char *p; size_t b; } *in1; /* step-1 bundles, kept until the
                                                 aggregates are written from them */
    int nin1, capin1;
    xchg_loc_out *outs;             /* every bundle buffer sent, freed at the end */
    int nouts, capouts;
    MPI_Request *req;               /* Issends of steps 1 and 3 (step 1's first) */
    int nreq, capreq;
    MPI_Request *req2;              /* of step 2 */
    int nreq2, capreq2;
} nl_run;

static void note(nl_run *r, int err)
{
    if (r->lerr == MPI_SUCCESS)
        r->lerr = err;
}

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return MPI_SUCCESS;
    int c = *cap ? *cap : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return xchg_error_code(MPI_ERR_NO_MEM, "nbx_loc: no memory for %d entries", c);
    *p = q;
    *cap = c;
    return MPI_SUCCESS;
}

/* Issends every bundle of o to its place's rank: node-mates (step 1, 3)
 * or partners (step 2). The buffer is kept until the end. */
static int send_bundles(nl_run *r, xchg_loc_out *o, int step, int tag)
{
    xchg_sparse_call *s = r->s;
    MPI_Request **req = step == 2 ? &r->req2 : &r->req;
    int *nreq = step == 2 ? &r->nreq2 : &r->nreq, *cap = step == 2 ? &r->capreq2 : &r->capreq;
    int rc = grow((void **)&r->outs, &r->capouts, r->nouts + 1, sizeof *r->outs);
    if (rc == MPI_SUCCESS)
        rc = grow((void **)req, cap, *nreq + o->nb, sizeof **req);
    if (rc != MPI_SUCCESS) {
        xchg_loc_out_free(s, o);
        note(r, rc);
        return MPI_SUCCESS; /* lost, said at the end: the protocol goes on */
    }
    r->outs[r->nouts++] = *o;
    for (int k = 0; k < o->nb && rc == MPI_SUCCESS; k++) {
        if (o->size[k] == 0)
            continue;
        int to = step == 2 ? xchg_loc_partner(&r->x, k) : xchg_node_member(r->x.nl, r->x.a, k);
        rc = MPI_Issend(o->buf + o->off[k], (int)o->size[k], MPI_BYTE, to, tag, s->comm,
                        &(*req)[(*nreq)++]);
    }
    return rc;
}

/* A received bundle: messages for this rank delivered, the others filed
 * for the next step (step 1: by served node into r->relay; step 2: by
 * node-mate, written and sent at once). */
static int on_bundle(nl_run *r, const char *msg, size_t bytes, int step)
{
    xchg_sparse_call *s = r->s;
    const xchg_node_layout *n = r->x.nl;
    xchg_loc_items got = {0}, fwd = {0};
    int flag, info, rc = MPI_SUCCESS;
    int e = xchg_loc_parse(s, msg, bytes, &flag, &info, &got);
    for (int i = 0; i < got.n && e == MPI_SUCCESS; i++) {
        const xchg_loc_item *m = &got.v[i];
        if (m->dst == s->rank) {
            e = xchg_loc_deliver(s, m);
            continue;
        }
        int b = n->node_of[m->dst];
        int k = step == 1 ? xchg_loc_served(&r->x, b) : step == 2 && b == r->x.a
                                                            ? n->local_of[m->dst] : -1;
        e = k < 0 ? xchg_error_code(MPI_ERR_INTERN, "nbx_loc: rank %d got a message for rank "
                                    "%d to relay, which it does not serve", s->rank, m->dst)
                  : xchg_loc_push(step == 1 ? &r->relay : &fwd, m, k);
    }
    if (e == MPI_SUCCESS && fwd.n > 0) {
        xchg_loc_out o;
        e = xchg_loc_write(s, &fwd, r->x.L, 0, 0, "nbx_loc: messages to hand on", &o);
        if (e == MPI_SUCCESS)
            rc = send_bundles(r, &o, 3, xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_SCATTER));
    }
    if (e != MPI_SUCCESS)
        note(r, e);
    xchg_loc_items_free(&got);
    xchg_loc_items_free(&fwd);
    return rc;
}

/* Receives and handles a message the loop probed. Step-1 bundles stay
 * until the aggregates are written (their data is relayed from there). */
static int on_message(nl_run *r, const MPI_Status *st, int tag, int step)
{
    xchg_sparse_call *s = r->s;
    char *msg;
    size_t bytes;
    int lost = MPI_SUCCESS;
    int rc = xchg_loc_recv_probed(s, st, tag, 0, "nbx_loc: a bundle", &msg, &bytes, &lost);
    if (rc != MPI_SUCCESS)
        return rc;
    if (lost != MPI_SUCCESS) {
        note(r, lost);
        return MPI_SUCCESS;
    }
    if (step == 1) {
        int e = grow((void **)&r->in1, &r->capin1, r->nin1 + 1, sizeof *r->in1);
        if (e != MPI_SUCCESS) {
            note(r, e);
            xchg_loc_free(s, msg, bytes, 0);
            return MPI_SUCCESS;
        }
        r->in1[r->nin1].p = msg;
        r->in1[r->nin1++].b = bytes;
    }
    rc = on_bundle(r, msg, bytes, step);
    if (step != 1)
        xchg_loc_free(s, msg, bytes, 0);
    return rc;
}

/* After barrier A: this rank's aggregates, one per served node with
 * messages; the step-1 bundles they were copied from are then freed. */
static int send_aggregates(nl_run *r)
{
    xchg_sparse_call *s = r->s;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < r->mine.n && rc == MPI_SUCCESS; i++)
        rc = xchg_loc_push(&r->relay, &r->mine.v[i],
                           xchg_loc_served(&r->x, r->x.nl->node_of[r->mine.v[i].dst]));
    xchg_loc_out o;
    if (rc == MPI_SUCCESS && r->relay.n > 0)
        rc = xchg_loc_write(s, &r->relay, r->x.ns, 0, 0, "nbx_loc: aggregates", &o);
    int err = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        note(r, rc);
    else if (r->relay.n > 0)
        err = send_bundles(r, &o, 2, xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_PAIR));
    for (int i = 0; i < r->nin1; i++)
        xchg_loc_free(s, r->in1[i].p, r->in1[i].b, 0);
    r->nin1 = 0;
    xchg_loc_items_free(&r->relay);
    return err;
}

static void nl_free(nl_run *r)
{
    for (int i = 0; i < r->nin1; i++)
        xchg_loc_free(r->s, r->in1[i].p, r->in1[i].b, 0);
    for (int i = 0; i < r->nouts; i++)
        xchg_loc_out_free(r->s, &r->outs[i]);
    xchg_loc_items_free(&r->mine);
    xchg_loc_items_free(&r->relay);
    free(r->in1);
    free(r->outs);
    free(r->req);
    free(r->req2);
}

/* Step 1: the bundles to node-mates (this rank's own share stays here),
 * and this rank's message to itself. *n1: the step-1 sends, which A waits
 * for. A local failure is noted (the run goes on); an MPI one returned. */
static int send_step1(nl_run *r, int tag1, int *n1)
{
    xchg_sparse_call *s = r->s;
    xchg_loc_items own = {0};
    int rc = MPI_SUCCESS;
    int e = xchg_loc_route_own(s, &r->x, &own, &r->mine);
    xchg_loc_out o;
    if (e == MPI_SUCCESS)
        e = xchg_loc_write(s, &own, r->x.L, 0, 0, "nbx_loc: messages to the node", &o);
    xchg_loc_items_free(&own);
    if (e == MPI_SUCCESS)
        rc = send_bundles(r, &o, 1, tag1);
    else
        note(r, e);
    *n1 = r->nreq;
    if (rc == MPI_SUCCESS) {
        e = xchg_sparse_deliver_self(s);
        if (e != MPI_SUCCESS)
            note(r, e);
    }
    return rc;
}

/* The three census barriers (A on the node, G on all, B on the node) with
 * the messages of steps 1-3 drained before each test. tag[k]: step k+1's
 * tag. */
static int census(nl_run *r, int n1, const int tag[3])
{
    xchg_sparse_call *s = r->s;
    const int diss = xchg_sparse_nbx_dissemination(&s->cs->settings);
    MPI_Comm node = r->x.nl->node;
    /* phase: 0 step 1 sends pending, 1 in A, 2 aggregates pending,
     * 3 in G, 4 G done (forwards pending), 5 in B, 6 done */
    xchg_ibarrier bar;
    int phase = 0, in_bar = 0, rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && phase < 6) {
        /* drain what can still come before testing: step 1 until A, 2
         * until G, 3 until B completes */
        int flag = 0, step;
        MPI_Status st;
        for (step = phase < 2 ? 1 : phase < 4 ? 2 : 3; step <= 3; step++) {
            rc = MPI_Iprobe(MPI_ANY_SOURCE, tag[step - 1], s->comm, &flag, &st);
            if (rc != MPI_SUCCESS || flag)
                break;
        }
        if (rc == MPI_SUCCESS && flag) {
            rc = on_message(r, &st, tag[step - 1], step);
            continue;
        }
        if (rc != MPI_SUCCESS)
            break;
        int done = 0;
        switch (phase) {
        case 0: /* A once the step-1 bundles are taken */
        case 2: /* G once the aggregates are taken */
            rc = phase == 0 ? MPI_Testall(n1, r->req, &done, MPI_STATUSES_IGNORE)
                            : MPI_Testall(r->nreq2, r->req2, &done, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS && done) {
                rc = xchg_ibarrier_start(&bar, phase == 0 ? node : s->comm, s->tag_barrier,
                                         diss);
                in_bar = rc == MPI_SUCCESS;
                phase++;
            }
            break;
        case 1:
        case 3:
        case 5:
            rc = xchg_ibarrier_test(&bar, &done);
            if (rc == MPI_SUCCESS && done) {
                in_bar = 0;
                phase++;
                if (phase == 2 && r->x.N == 1)
                    phase = 6; /* one node: A was every rank's, nothing to relay */
                else if (phase == 2)
                    rc = send_aggregates(r);
            }
            break;
        case 4: /* B once G is done and every forward is taken */
            rc = MPI_Testall(r->nreq, r->req, &done, MPI_STATUSES_IGNORE);
            if (rc == MPI_SUCCESS && done) {
                rc = xchg_ibarrier_start(&bar, node, s->tag_barrier, diss);
                in_bar = rc == MPI_SUCCESS;
                phase++;
            }
            break;
        }
    }
    if (in_bar)
        xchg_ibarrier_free(&bar);
    return rc;
}

int xchg_sparse_nbx_loc(xchg_sparse_call *s)
{
    nl_run r;
    memset(&r, 0, sizeof r);
    r.s = s;
    if (xchg_loc_begin(s, &r.x) != MPI_SUCCESS) {
        s->ran = XCHG_SPARSE_NBX; /* no node layout, on every rank alike */
        return xchg_sparse_run(XCHG_SPARSE_NBX, s);
    }
    const int tag[3] = {xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_GATHER),
                        xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_PAIR),
                        xchg_sparse_tag(s, XCHG_SPARSE_TAG_LOC_SCATTER)};
    int rc = grow((void **)&r.req, &r.capreq, r.x.L, sizeof *r.req);
    if (rc == MPI_SUCCESS)
        rc = grow((void **)&r.req2, &r.capreq2, 1, sizeof *r.req2);
    if (rc != MPI_SUCCESS) { /* as nbx, before any message */
        nl_free(&r);
        return rc;
    }
    int n1 = 0;
    rc = send_step1(&r, tag[0], &n1);
    if (rc == MPI_SUCCESS)
        rc = census(&r, n1, tag);
    nl_free(&r);
    return rc != MPI_SUCCESS ? rc : r.lerr;
}
