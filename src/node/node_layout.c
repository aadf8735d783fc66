/*
 * node_layout.c - the node layout every node-aware algorithm shares
 * (node_layout.h says what it holds).
 */
#include "node_layout.h"

#include <stdlib.h>

static void layout_free(void *p)
{
    xchg_node_layout *n = p;
    if (!n)
        return;
    if (n->node != MPI_COMM_NULL)
        MPI_Comm_free(&n->node);
    free(n->node_of);
    free(n->local_of);
    free(n->perm);
    free(n->first);
    free(n);
}

/* The tables from every rank's leader (its node's lowest rank). */
static void layout_tables(xchg_node_layout *n, const int *lead, int P, int me, int *cur)
{
    int nn = 0;
    for (int r = 0; r < P; r++)
        if (lead[r] == r)
            n->node_of[r] = nn++; /* a leader comes first in its node */
    n->nnodes = nn;
    for (int i = 0; i <= nn; i++)
        n->first[i] = 0;
    for (int r = 0; r < P; r++) {
        n->node_of[r] = n->node_of[lead[r]];
        n->first[n->node_of[r] + 1]++;
    }
    for (int i = 0; i < nn; i++)
        n->first[i + 1] += n->first[i];
    for (int i = 0; i < nn; i++)
        cur[i] = n->first[i];
    for (int r = 0; r < P; r++) {
        int M = n->node_of[r];
        n->local_of[r] = cur[M] - n->first[M];
        n->perm[cur[M]++] = r;
    }
    n->mynode = n->node_of[me];
}

/* The node's leader (its lowest rank: the split's key is the rank) as a
 * rank of comm: a local group translation, no message. */
static int leader_of(MPI_Comm node, MPI_Comm comm, int *leader)
{
    MPI_Group gn, gc;
    int zero = 0;
    int rc = MPI_Comm_group(node, &gn);
    if (rc != MPI_SUCCESS)
        return rc;
    if ((rc = MPI_Comm_group(comm, &gc)) == MPI_SUCCESS) {
        rc = MPI_Group_translate_ranks(gn, 1, &zero, gc, leader);
        MPI_Group_free(&gc);
    }
    MPI_Group_free(&gn);
    return rc;
}

/* Makes the layout: a split, an agreement, an allgather. Every rank
 * takes part in the split and the agreement even after a local failure
 * (no memory, a refused split), so a failure is the same on every rank;
 * the allgather runs only where every rank succeeded. */
static int layout_build(xchg_comm_state *cs, long rpn, xchg_node_layout **out)
{
    const int P = cs->size, me = cs->rank;
    const MPI_Comm comm = cs->pcomm;
    int lerr = MPI_SUCCESS;
    xchg_node_layout *n = calloc(1, sizeof *n);
    int *lead = malloc(sizeof(int) * 2 * (size_t)P);
    if (n) {
        n->node = MPI_COMM_NULL;
        n->node_of = malloc(sizeof(int) * (size_t)P);
        n->local_of = malloc(sizeof(int) * (size_t)P);
        n->perm = malloc(sizeof(int) * (size_t)P);
        n->first = malloc(sizeof(int) * ((size_t)P + 1));
    }
    if (!n || !lead || !n->node_of || !n->local_of || !n->perm || !n->first)
        lerr = xchg_error_code(MPI_ERR_NO_MEM, "node layout: no memory for node tables "
                               "on rank %d", me);
    MPI_Comm node = MPI_COMM_NULL;
    int rc = rpn > 0 ? MPI_Comm_split(comm, (int)(me / rpn), me, &node)
                     : MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me,
                                           MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        node = MPI_COMM_NULL; /* not a handle to free */
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
    int myleader = me;
    if (rc == MPI_SUCCESS)
        rc = leader_of(node, comm, &myleader);
    if (lerr == MPI_SUCCESS)
        lerr = rc;
    rc = xchg_agree_errors(comm, me, P, lerr, "node layout: making the node communicator");
    if (rc == MPI_SUCCESS)
        rc = xchg_mpi_allgather(&myleader, 1, MPI_INT, lead, 1, MPI_INT, comm);
    if (rc == MPI_SUCCESS) {
        n->rpn = rpn;
        n->node = node;
        node = MPI_COMM_NULL;
        MPI_Comm_rank(n->node, &n->lrank);
        MPI_Comm_size(n->node, &n->lsize);
        layout_tables(n, lead, P, me, lead + P);
    }
    if (node != MPI_COMM_NULL)
        MPI_Comm_free(&node);
    free(lead);
    if (rc != MPI_SUCCESS) {
        layout_free(n);
        return rc;
    }
    *out = n;
    return MPI_SUCCESS;
}

int xchg_node_layout_of(xchg_comm_state *cs, const xchg_node_layout **out)
{
    xchg_node_layout *n = cs->ext[XCHG_EXT_NODES];
    if (!n) {
        /* the setting is fixed per communicator: built once */
        int rc = layout_build(cs, cs->settings.ranks_per_node, &n);
        if (rc != MPI_SUCCESS) {
            cs->nodes_failed = 1; /* agreed (layout_build): auto stops choosing them */
            return rc;
        }
        cs->ext[XCHG_EXT_NODES] = n;
        cs->ext_free[XCHG_EXT_NODES] = layout_free;
    }
    *out = n;
    return MPI_SUCCESS;
}

int xchg_node_layout_ready(const xchg_comm_state *cs)
{
    return cs->ext[XCHG_EXT_NODES] != NULL;
}
