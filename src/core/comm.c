/*
 * comm.c - the per-communicator state and its private duplicate.
 *
 * Library traffic must never match a caller's message (an MPI_ANY_SOURCE /
 * MPI_ANY_TAG receive of theirs would steal ours). So library traffic runs
 * on a duplicate of the caller's communicator, cached with the rest of the
 * per-communicator state in an attribute. MPI calls our delete callback when
 * the caller frees the communicator, and we free the duplicate there.
 *
 * Communicators are a scarce resource: MPICH has 2048 context ids per
 * process, and an application with 1500 live communicators that called xchg
 * on each ran out at about 1000, aborting in an MPI_Comm_split_type it never
 * made. So the state costs one communicator, its duplicate:
 *   - the duplicate is made at the first exchange on the communicator (not
 *     before: xchg_get_stats makes nothing). Every algorithm needs it,
 *     "vendor" too: MPICH 4.0.2's own MPI_Alltoallv on a communicator of
 *     one rank sends itself a message that a pending MPI_ANY_SOURCE /
 *     MPI_ANY_TAG receive of the caller's takes (test_isolation hung);
 *   - when MPI refuses the duplicate, every rank returns the same error
 *     naming the limit (the caller's error handler is set to return during
 *     the dup, and the outcome agreed), instead of MPI aborting in a call
 *     the caller never made; the refusal is remembered and MPI asked again
 *     after 1, 2, 4, ... 64 calls (state_get);
 *   - the node map (which ranks share this rank's node, for the automatic
 *     choice only) is taken from a process-wide record of earlier node
 *     splits where that covers every member (agreed with the duplicate: a
 *     duplicate of a communicator already split, or any subset of it,
 *     costs no split), else made by a split on first need.
 * The duplicate itself is not shared between caller communicators, not even
 * between duplicates of one another: two persistent requests, or calls from
 * two threads, on different caller communicators may legally run in
 * different orders on different ranks, and on one shared communicator their
 * messages (same tags, and MPI_ANY_SOURCE in the sparse exchange) would
 * match each other's.
 */
#include "core.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int state_keyval = MPI_KEYVAL_INVALID;

static void state_free(xchg_comm_state *st)
{
    /* what a passed-through nonblocking call left (select/phase.c): its
     * partners took part, so these complete */
    if (st->phase.check_pending)
        MPI_Wait(&st->phase.check_req, MPI_STATUS_IGNORE);
    if (st->phase.orphan != MPI_REQUEST_NULL)
        MPI_Wait(&st->phase.orphan, MPI_STATUS_IGNORE);
    free(st->phase.orphan_zeros);
    for (int i = 0; i < XCHG_EXT_COUNT; i++)
        if (st->ext[i] && st->ext_free[i])
            st->ext_free[i](st->ext[i]);
    if (st->pcomm != MPI_COMM_NULL)
        MPI_Comm_free(&st->pcomm);
    free(st->on_node);
    free(st);
}

/* ---- the node map --------------------------------------------------- */

/* What this process has learnt from node splits so far, by rank in
 * MPI_COMM_WORLD: known[w], and same[w] (w shares this process's node).
 * Processes outside MPI_COMM_WORLD (spawned) are never known. */
static pthread_mutex_t node_lock = PTHREAD_MUTEX_INITIALIZER;
static int node_world = -1; /* size of MPI_COMM_WORLD once read */
static unsigned char *node_known, *node_same;

/* World ranks of comm's ranks (MPI_UNDEFINED where not in the world). */
static int *world_ranks(MPI_Comm comm, int n)
{
    int *in = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    MPI_Group g = MPI_GROUP_NULL, gw = MPI_GROUP_NULL;
    int rc = in && out ? MPI_Comm_group(comm, &g) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_group(MPI_COMM_WORLD, &gw);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            in[i] = i;
        rc = MPI_Group_translate_ranks(g, n, in, gw, out);
    }
    if (g != MPI_GROUP_NULL)
        MPI_Group_free(&g);
    if (gw != MPI_GROUP_NULL)
        MPI_Group_free(&gw);
    free(in);
    if (rc != MPI_SUCCESS) {
        free(out);
        return NULL;
    }
    return out;
}

/* Whether the record covers every rank of wr[0..n); if so, fills on[]. */
static int node_from_record(const int *wr, int n, unsigned char *on)
{
    int all = 1;
    pthread_mutex_lock(&node_lock);
    for (int i = 0; i < n && all; i++) {
        int w = wr[i];
        if (w < 0 || w >= node_world || !node_known || !node_known[w])
            all = 0;
        else
            on[i] = node_same[w];
    }
    pthread_mutex_unlock(&node_lock);
    return all;
}

static void node_record(const int *wr, int n, const unsigned char *on)
{
    pthread_mutex_lock(&node_lock);
    if (node_world < 0) {
        int ws = 0;
        if (MPI_Comm_size(MPI_COMM_WORLD, &ws) == MPI_SUCCESS && ws > 0) {
            node_known = calloc((size_t)ws, 1);
            node_same = calloc((size_t)ws, 1);
            if (node_known && node_same) {
                node_world = ws;
            } else {
                free(node_known);
                free(node_same);
                node_known = node_same = NULL;
            }
        }
    }
    for (int i = 0; i < n && node_world > 0; i++)
        if (wr[i] >= 0 && wr[i] < node_world) {
            node_known[wr[i]] = 1;
            node_same[wr[i]] = on[i];
        }
    pthread_mutex_unlock(&node_lock);
}

/* on[j] = 1 for the ranks of pcomm in the node communicator. */
static int node_split(MPI_Comm pcomm, int size, unsigned char *on)
{
    MPI_Comm node = MPI_COMM_NULL;
    int rc = MPI_Comm_split_type(pcomm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int nsize = 0;
    MPI_Comm_size(node, &nsize);
    int *in = malloc(sizeof(int) * (size_t)nsize), *out = malloc(sizeof(int) * (size_t)nsize);
    MPI_Group gn = MPI_GROUP_NULL, gp = MPI_GROUP_NULL;
    rc = in && out ? MPI_Comm_group(node, &gn) : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_group(pcomm, &gp);
    if (rc == MPI_SUCCESS) {
        for (int i = 0; i < nsize; i++)
            in[i] = i;
        rc = MPI_Group_translate_ranks(gn, nsize, in, gp, out);
    }
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < nsize; i++)
            if (out[i] >= 0 && out[i] < size)
                on[out[i]] = 1;
    if (gn != MPI_GROUP_NULL)
        MPI_Group_free(&gn);
    if (gp != MPI_GROUP_NULL)
        MPI_Group_free(&gp);
    free(in);
    free(out);
    MPI_Comm_free(&node);
    return rc;
}

/* The map from the record where it covers every rank of comm (this
 * rank's view), else NULL. */
static unsigned char *node_map_from_record(MPI_Comm comm, int n)
{
    unsigned char *on = calloc((size_t)n, 1);
    int *wr = on ? world_ranks(comm, n) : NULL;
    int covered = wr && node_from_record(wr, n, on);
    free(wr);
    if (!covered) {
        free(on);
        return NULL;
    }
    return on;
}

static void node_map_set(xchg_comm_state *st, unsigned char *on)
{
    if (st->on_node != on)
        free(st->on_node);
    st->on_node = on;
    st->node_size = 0;
    for (int j = 0; on && j < st->size; j++)
        st->node_size += on[j];
    if (st->node_size < 1)
        st->node_size = 1;
    st->node_ready = 1;
}

/* Where the record covered every rank on every rank, state_get set the
 * map already (agreed in its allreduce), so node_ready is the same on
 * every rank and so is the decision to split. */
int xchg_comm_node_map(xchg_comm_state *st)
{
    if (st->node_ready)
        return MPI_SUCCESS;
    const int n = st->size;
    unsigned char *on = calloc((size_t)n, 1);
    int *wr = on ? world_ranks(st->pcomm, n) : NULL;
    /* Every rank takes part, even without memory for the map. */
    unsigned char dummy = 0;
    if (node_split(st->pcomm, on ? n : 0, on ? on : &dummy) == MPI_SUCCESS && on) {
        if (wr)
            node_record(wr, n, on);
    } else {
        /* refused (no communicator left) or no memory: unknown, which
         * only makes the automatic choice count all traffic off-node */
        free(on);
        on = NULL;
    }
    free(wr);
    node_map_set(st, on);
    return MPI_SUCCESS;
}

/* ---- the state ------------------------------------------------------ */

void xchg_comm_state_retain(xchg_comm_state *st)
{
    __atomic_add_fetch(&st->refs, 1, __ATOMIC_ACQ_REL);
}

void xchg_comm_state_release(xchg_comm_state *st)
{
    if (__atomic_sub_fetch(&st->refs, 1, __ATOMIC_ACQ_REL) == 0)
        state_free(st);
}

/* The last state each thread looked up, valid while no state attribute
 * has been set or deleted anywhere since (attr_gen): a program's calls
 * on one communicator then skip MPI_Comm_get_attr (about 0.1 us of a
 * 0.7 us call under Open MPI at 2 ranks). A freed communicator's handle
 * may come back for another, but its free ran state_delete first. */
static _Atomic unsigned long attr_gen;
static _Thread_local struct {
    MPI_Comm comm;
    xchg_comm_state *st;
    unsigned long gen;
} last_lookup;

static void attr_changed(void)
{
    attr_gen++;
}

xchg_comm_state *xchg_comm_state_cached(MPI_Comm comm)
{
    if (last_lookup.st && last_lookup.comm == comm && last_lookup.gen == attr_gen)
        return last_lookup.st;
    return NULL;
}

/* The caller freed its communicator: a persistent request may still hold
 * the state (and the private duplicate) until it is freed itself. */
static int state_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm; (void)keyval; (void)extra;
    attr_changed();
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

int xchg_comm_state_lookup(MPI_Comm comm, xchg_comm_state **state)
{
    pthread_once(&keyval_once, keyval_create);
    if (state_keyval == MPI_KEYVAL_INVALID)
        return xchg_error_code(MPI_ERR_INTERN, "could not create the attribute keyval");
    xchg_comm_state *known = xchg_comm_state_cached(comm);
    if (known) {
        *state = known;
        return MPI_SUCCESS;
    }
    int found = 0;
    void *val = NULL;
    const unsigned long gen = attr_gen; /* read before: a change since voids the entry */
    int rc = MPI_Comm_get_attr(comm, state_keyval, &val, &found);
    if (rc != MPI_SUCCESS)
        return rc;
    *state = found ? (xchg_comm_state *)val : NULL;
    if (found) {
        last_lookup.comm = comm;
        last_lookup.st = val;
        last_lookup.gen = gen;
    }
    return MPI_SUCCESS;
}

/* MPI's reason for a failure, one line: the last line of its message (an
 * MPICH error stack ends with the cause), without the function prefix. */
static void mpi_reason(int code, char *out, size_t len)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int n = 0;
    if (MPI_Error_string(code, msg, &n) != MPI_SUCCESS)
        msg[0] = 0;
    char *line = msg;
    for (char *p = msg; *p; p++)
        if (*p == '\n' && p[1])
            line = p + 1;
    line[strcspn(line, "\n")] = 0;
    char *cut = strstr(line, "): ");
    if (cut && cut - line < 80 && !memchr(line, ' ', (size_t)(cut - line)))
        line = cut + 3; /* "MPIR_Get_contextid_sparse_group(591): Too many ..." */
    snprintf(out, len, "%s", *line ? line : "no reason given");
}

#if defined(MPICH_VERSION)
#define COMM_LIMIT "MPICH allows 2048 communicators per process"
#elif defined(OPEN_MPI)
#define COMM_LIMIT "Open MPI's limit on communicator ids"
#else
#define COMM_LIMIT "the MPI library's limit on communicators per process"
#endif

/* The private duplicate of comm. MPI_Comm_dup may be refused (the limit on
 * communicators) and may fail on some ranks only: the outcome is agreed
 * (lowest failing rank's class everywhere). The one allreduce that agrees
 * it also agrees the settings (*set) and whether the record of node
 * splits covers every rank (then *on_out is the node map, else NULL):
 * three agreements a first call would otherwise pay one latency chain
 * each for (simulated, 1024 ranks: about 16 us each). */
static int private_dup(MPI_Comm comm, int rank, int size, const xchg_algo_names *names,
                       xchg_settings *set, unsigned char **on_out, MPI_Comm *out,
                       int *refused)
{
    *out = MPI_COMM_NULL;
    *on_out = NULL;
    *refused = 0;
    /* MPI raises a failed MPI_Comm_dup on comm's handler, by default
     * MPI_ERRORS_ARE_FATAL: return instead, and agree below. */
    MPI_Errhandler old = MPI_ERRHANDLER_NULL;
    /* (SMPI gives MPI_ERRHANDLER_NULL for a communicator of MPI_Comm_create,
     * which it cannot set back: that one's handler is left alone) */
    int have_old = MPI_Comm_get_errhandler(comm, &old) == MPI_SUCCESS &&
                   old != MPI_ERRHANDLER_NULL;
    if (have_old)
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm pc = MPI_COMM_NULL;
    int drc = MPI_Comm_dup(comm, &pc);
    if (drc != MPI_SUCCESS)
        pc = MPI_COMM_NULL;
    unsigned char *on = node_map_from_record(comm, size);
    int64_t extra[2] = {xchg_agree_flag(rank, size, drc), on ? 0 : 1};
    int arc = xchg_settings_agree(comm, names, set, extra, 2);
    int64_t all = extra[0];
    if (have_old) {
        MPI_Comm_set_errhandler(comm, old);
        MPI_Errhandler_free(&old);
    }
    if (arc == MPI_SUCCESS && all == 0) {
        MPI_Comm_set_errhandler(pc, MPI_ERRORS_RETURN);
        *out = pc;
        if (extra[1] == 0)
            *on_out = on; /* covered on every rank */
        else
            free(on);
        return MPI_SUCCESS;
    }
    free(on);
    if (pc != MPI_COMM_NULL) /* another rank's dup failed: give ours back */
        MPI_Comm_free(&pc);
    if (arc != MPI_SUCCESS)
        return drc != MPI_SUCCESS ? drc : arc;
    *refused = 1;
    int cls = (int)(all & 0xfff), from = size - (int)(all >> 12);
    char why[MPI_MAX_ERROR_STRING];
    if (drc != MPI_SUCCESS)
        mpi_reason(drc, why, sizeof why);
    else
        snprintf(why, sizeof why, "on rank %d, whose error gives MPI's reason", from);
    return xchg_error_code(cls, "MPI refused a new communicator: xchg needs a private "
                           "duplicate of this communicator for its traffic, and "
                           "MPI_Comm_dup failed (%s). The limit on communicators is "
                           "reached (%s; xchg holds one duplicate per communicator it "
                           "exchanges on, until that communicator is freed). Free "
                           "communicators no longer in use, or call MPI itself on this "
                           "one (the preload library does)", why, COMM_LIMIT);
}

/* What xchg_get_stats says before a call has run: no algorithm. */
/* A zeroed state, its MPI handles null (MPI_REQUEST_NULL is not 0). */
static xchg_comm_state *state_new(void)
{
    xchg_comm_state *st = calloc(1, sizeof *st);
    if (st)
        st->phase.check_req = st->phase.orphan = MPI_REQUEST_NULL;
    return st;
}

static void no_call_yet(xchg_comm_state *st)
{
    st->last.algo = XCHG_ALGO_INVALID;
    st->last.sparse_algo = XCHG_SPARSE_INVALID;
    st->last.neighbor_algo = XCHG_NEIGHBOR_INVALID;
}

/* The most calls a refused communicator waits before xchg asks MPI again. */
#define REFUSED_WAIT_MAX 64

/* The state of comm, made on first use; *refused: MPI refused the duplicate.
 *
 * A refusal is remembered on the communicator (a state without pcomm),
 * and the dup is tried again only after 1, 2, 4, ... REFUSED_WAIT_MAX
 * calls: a refused dup costs MPI's failing MPI_Comm_dup and our
 * allreduce, which the preload would otherwise pay at every call of an
 * application that keeps its communicators. The outcome of every try is
 * agreed and every rank counts the same calls, so all ranks try at the
 * same call (the collective calls of a correct program are the same on
 * every rank). */
static int state_get(MPI_Comm comm, const xchg_algo_names *names, xchg_comm_state **state,
                     int *refused)
{
    *refused = 0;
    xchg_comm_state *st = NULL;
    int rc = xchg_comm_state_lookup(comm, &st);
    if (rc != MPI_SUCCESS)
        return rc;
    if (st && st->pcomm != MPI_COMM_NULL) {
        *state = st;
        return MPI_SUCCESS;
    }
    if (st && --st->retry_in > 0) { /* refused lately: not asked again yet */
        *refused = 1;
        return xchg_error_code(st->refused_class, "%s (tried again in %d calls)",
                               st->refused_msg, st->retry_in);
    }
    int fresh = st == NULL;
    if (fresh)
        st = state_new();
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    /* Every rank takes part in the dup, even one without memory. */
    MPI_Comm pc = MPI_COMM_NULL;
    xchg_settings agreed;
    unsigned char *on = NULL;
    rc = private_dup(comm, rank, size, names, &agreed, &on, &pc, refused);
    if (rc != MPI_SUCCESS && *refused && st) {
        /* remembered, so that the next calls do not ask MPI at once */
        int len = 0;
        st->refused_wait = st->refused_wait ? 2 * st->refused_wait : 1;
        if (st->refused_wait > REFUSED_WAIT_MAX)
            st->refused_wait = REFUSED_WAIT_MAX;
        st->retry_in = st->refused_wait + 1;
        MPI_Error_class(rc, &st->refused_class);
        xchg_error_string(rc, st->refused_msg, &len);
        if (!fresh)
            return rc;
        st->pcomm = MPI_COMM_NULL;
        st->refs = 1; /* the attribute's */
        no_call_yet(st);
        attr_changed();
        if (MPI_Comm_set_attr(comm, state_keyval, st) != MPI_SUCCESS)
            free(st);
        return rc;
    }
    if (rc != MPI_SUCCESS || !st) {
        free(on);
        if (pc != MPI_COMM_NULL)
            MPI_Comm_free(&pc);
        if (fresh)
            free(st);
        return rc != MPI_SUCCESS ? rc : xchg_error_code(MPI_ERR_NO_MEM, "out of memory for "
                                                        "communicator state");
    }
    st->pcomm = pc;
    st->bare = 0;
    st->rank = rank;
    st->size = size;
    if (fresh) /* else it counts the attribute already, and the requests that hold the
                * bare state (a passed-through nonblocking call's: select/phase.c) */
        st->refs = 1;
    no_call_yet(st);
    /* Settings: read once (private_dup) and agreed, so all ranks run one
     * protocol. */
    st->settings = agreed;
    if (on)
        node_map_set(st, on);
    if (fresh) {
        attr_changed();
        rc = MPI_Comm_set_attr(comm, state_keyval, st);
    }
    if (rc != MPI_SUCCESS) {
        if (fresh) {
            state_free(st);
        } else { /* attached: back to "no duplicate", asked again next call */
            MPI_Comm_free(&st->pcomm);
            st->pcomm = MPI_COMM_NULL;
            st->retry_in = 1;
        }
        return rc;
    }
    *state = st;
    return MPI_SUCCESS;
}

int xchg_comm_state_bare(MPI_Comm comm, const xchg_algo_names *names,
                         xchg_comm_state **state)
{
    xchg_comm_state *st = NULL;
    int rc = xchg_comm_state_lookup(comm, &st);
    if (rc != MPI_SUCCESS || st) {
        *state = st;
        return rc;
    }
    st = state_new();
    if (!st)
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for communicator state");
    st->pcomm = MPI_COMM_NULL;
    st->bare = 1;
    st->refs = 1; /* the attribute's */
    MPI_Comm_rank(comm, &st->rank);
    MPI_Comm_size(comm, &st->size);
    st->node_size = 1;
    no_call_yet(st);
    xchg_settings_read_local(names, &st->settings, 0);
    attr_changed();
    rc = MPI_Comm_set_attr(comm, state_keyval, st);
    if (rc != MPI_SUCCESS) {
        free(st);
        return rc;
    }
    *state = st;
    return MPI_SUCCESS;
}

int xchg_comm_state_get(MPI_Comm comm, const xchg_algo_names *names,
                        xchg_comm_state **state, int *refused)
{
    int ignored;
    return state_get(comm, names, state, refused ? refused : &ignored);
}
