/*
 * comm.c - the private duplicate of each caller communicator.
 *
 * Library traffic must never match a caller's message (an MPI_ANY_SOURCE /
 * MPI_ANY_TAG receive of theirs would steal ours). So on first use of a
 * communicator we duplicate it and cache the duplicate, with the rest of the
 * per-communicator state, in an attribute. MPI calls our delete callback when
 * the caller frees the communicator, and we free the duplicate there.
 */
#include "xchg_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int state_keyval = MPI_KEYVAL_INVALID;

static void state_free(xchg_comm_state *st)
{
    for (int i = 0; i < XCHG_EXT_COUNT; i++)
        if (st->ext[i] && st->ext_free[i])
            st->ext_free[i](st->ext[i]);
    if (st->pcomm != MPI_COMM_NULL)
        MPI_Comm_free(&st->pcomm);
    free(st->on_node);
    free(st);
}

/* Which ranks of pcomm share this rank's node (the automatic choice counts
 * off-node traffic with it). No communication: group translation. */
static int node_map(xchg_comm_state *st, MPI_Comm node)
{
    st->on_node = calloc((size_t)st->size, 1);
    int *in = malloc(sizeof(int) * (size_t)st->node_size);
    int *out = malloc(sizeof(int) * (size_t)st->node_size);
    MPI_Group gn = MPI_GROUP_NULL, gp = MPI_GROUP_NULL;
    int rc = !st->on_node || !in || !out
                 ? xchg_error_code(MPI_ERR_NO_MEM, "out of memory for the node map")
                 : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_group(node, &gn);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_group(st->pcomm, &gp);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < st->node_size; i++)
            in[i] = i;
        rc = MPI_Group_translate_ranks(gn, st->node_size, in, gp, out);
    }
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < st->node_size; i++)
            if (out[i] >= 0 && out[i] < st->size)
                st->on_node[out[i]] = 1;
    if (gn != MPI_GROUP_NULL)
        MPI_Group_free(&gn);
    if (gp != MPI_GROUP_NULL)
        MPI_Group_free(&gp);
    free(in);
    free(out);
    return rc;
}

void xchg_comm_state_retain(xchg_comm_state *st)
{
    __atomic_add_fetch(&st->refs, 1, __ATOMIC_ACQ_REL);
}

void xchg_comm_state_release(xchg_comm_state *st)
{
    if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL) == 0)
        state_free(st);
}

/* The caller freed its communicator: a persistent request may still hold
 * the state (and the private duplicate) until it is freed itself. */
static int state_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm; (void)keyval; (void)extra;
    xchg_comm_state *st = value;
    __atomic_store_n(&st->comm_freed, 1, __ATOMIC_RELEASE);
    xchg_comm_state_release(st);
    return MPI_SUCCESS;
}

static void keyval_create(void)
{
    /* Copies of the caller's communicator get their own state on first use,
     * so the attribute is not copied. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, state_delete, &state_keyval, NULL);
}

static int state_lookup(MPI_Comm comm, xchg_comm_state **state)
{
    pthread_once(&keyval_once, keyval_create);
    if (state_keyval == MPI_KEYVAL_INVALID)
        return xchg_error_code(MPI_ERR_INTERN, "could not create the attribute keyval");
    int found = 0;
    void *val = NULL;
    int rc = MPI_Comm_get_attr(comm, state_keyval, &val, &found);
    if (rc != MPI_SUCCESS)
        return rc;
    *state = found ? (xchg_comm_state *)val : NULL;
    return MPI_SUCCESS;
}

int xchg_comm_state_get(MPI_Comm comm, xchg_comm_state **state)
{
    int rc = state_lookup(comm, state);
    if (rc != MPI_SUCCESS || *state)
        return rc;

    xchg_comm_state *st = calloc(1, sizeof *st);
    if (!st)
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for communicator state");
    st->pcomm = MPI_COMM_NULL;
    st->refs = 1; /* the attribute's */
    st->last.algo = XCHG_ALGO_INVALID;
    st->last.sparse_algo = XCHG_SPARSE_INVALID;
    rc = MPI_Comm_dup(comm, &st->pcomm);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(st->pcomm, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_rank(st->pcomm, &st->rank);
        MPI_Comm_size(st->pcomm, &st->size);
        MPI_Comm node;
        rc = MPI_Comm_split_type(st->pcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_size(node, &st->node_size);
            rc = node_map(st, node);
            MPI_Comm_free(&node);
        }
    }
    /* Settings: read once here and agreed, so all ranks run one protocol. */
    if (rc == MPI_SUCCESS)
        rc = xchg_settings_agree(st->pcomm, &st->settings);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_attr(comm, state_keyval, st);
    if (rc != MPI_SUCCESS) {
        state_free(st);
        return rc;
    }
    *state = st;
    return MPI_SUCCESS;
}

int xchg_get_stats(MPI_Comm comm, xchg_stats *stats)
{
    if (!stats)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "xchg_get_stats: stats is NULL"));
    if (comm == MPI_COMM_NULL)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_COMM, "xchg_get_stats: comm is MPI_COMM_NULL"));
    xchg_comm_state *st = NULL;
    int rc = state_lookup(comm, &st);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    if (st) {
        *stats = st->last;
    } else {
        memset(stats, 0, sizeof *stats);
        stats->algo = XCHG_ALGO_INVALID;
        stats->sparse_algo = XCHG_SPARSE_INVALID;
    }
    return MPI_SUCCESS;
}
