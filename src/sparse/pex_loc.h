/*
 * pex_loc.h - what pex_loc and pex_loc_shm share (pex_loc.c): one call's
 * run (routing, items, bundles, received buffers) and step 2, the one
 * aggregate per node pair. They differ inside the node: pex_loc moves the
 * bundles as messages after a census, pex_loc_shm through the node window.
 */
#ifndef XCHG_SPARSE_PEX_LOC_H
#define XCHG_SPARSE_PEX_LOC_H

#include "loc_common.h"

typedef struct xchg_pl_run {
    xchg_sparse_call *s;
    xchg_loc x;
    int myerr;             /* this rank's error before data moves (its mark) */
    int lost;              /* a relay's refusal or a malformed bundle: the flag */
    int *c1s, *c1r, *c2s, *c2r;       /* pex_loc's two censuses */
    int *hdr2;             /* ns flagged headers: aggregates of a flagged node */
    char **in1, **in2, **in3;         /* received bundles (L, ns, L) */
    size_t *in1b, *in2b, *in3b;
    MPI_Request *req;      /* 2L + ns */
    xchg_loc_items own, mine, relay, agg, forme;
    xchg_loc_out out1, out2, out3;
    int need_out, need_in; /* step 2: the window need sent, the largest received */
} xchg_pl_run;

/* The run's arrays for r->x (set), and their release with everything the
 * run received or wrote. */
int xchg_pl_alloc(xchg_pl_run *r);
void xchg_pl_free(xchg_pl_run *r);
/* Records the first refusal or malformed bundle (the flag). */
void xchg_pl_lose(xchg_pl_run *r, int err);

/* Files the items of a received bundle: those for this rank to deliver
 * into r->forme, the others into `to` with the bundle they go into next
 * (step 1: the served node's; step 2: the node-mate's place). */
int xchg_pl_file(xchg_pl_run *r, const char *msg, size_t bytes, int *flag, int *info,
                 xchg_loc_items *to, int step);

/* Steps 1 and 3: o's bundles to the other members of this node, posted
 * into req[*n ...] (*n counts them; none where o has no bundles). */
int xchg_pl_send_bundles(xchg_pl_run *r, const xchg_loc_out *o, int tag, MPI_Request *req,
                         int *n);

/* Step 2: this rank's share (r->mine) joins r->relay, one aggregate to
 * each partner (flagged and empty when flag or a loss), one from each;
 * their items filed into r->agg. *gflag: any flag seen; *served_sum: the
 * census numbers of the served nodes; r->need_in: their largest need. */
int xchg_pl_pairs(xchg_pl_run *r, int flag, int nodesum, int *gflag, int *served_sum);

#endif /* XCHG_SPARSE_PEX_LOC_H */
