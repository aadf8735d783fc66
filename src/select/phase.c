/*
 * phase.c - a communicator's first calls: MPI's own call until xchg's
 * set-up is known to pay back.
 *
 * Setting a communicator up (its private duplicate, node split, settings
 * allreduce, the first agreement of statistics, and for some algorithms a
 * node-shared window) costs 150-440 us on real MPI against 6-9 us for a
 * small MPI_Alltoallv (xchg-bench setup), so a program that makes
 * communicators and uses each a few times would run slower with xchg. So
 * the blocking auto call passes a new communicator's calls to MPI's own
 * MPI_Alltoallv (on the caller's communicator: no duplicate, no collective
 * of xchg's own) and sets up only where the calls repay it, the rule of
 * ski rental (rent until the rent paid equals the price, then buy; never
 * more than twice the best choice in hindsight):
 *
 *   pass-through  calls 1 .. check-1: MPI's call, nothing else.
 *   check         call `check` (first_check(): once these calls have cost
 *                 about twenty agreements): this call's statistics are
 *                 reduced over the ranks with a nonblocking MPI_Iallreduce
 *                 on the caller's communicator, overlapped with MPI's call
 *                 and completed before the call returns (nothing is left in
 *                 flight between calls, so MPI_Comm_free and MPI_Finalize
 *                 have nothing to wait for). The model (select.c) then
 *                 estimates MPI's call, the algorithm auto would run and its
 *                 set-up S; with a saving d per call, set-up happens at call
 *                 max(check+1, ceil(S/d)). Without a saving, checks again at
 *                 call 2 x check (so checks cost ever less per call).
 *   set-up        that call, on every rank: xchg_comm_state_get makes the
 *                 state (collective); the call and all later ones run the
 *                 automatic choice (select.c) as on any set-up communicator.
 *
 * Every decision depends only on call counts and agreed values, so every
 * rank switches at the same call. The node is guessed from
 * MPI_Get_processor_name (agreed: the same name on every rank means one
 * node); set-up's node split then knows. Collectives on the caller's
 * communicator are allowed (every rank calls xchg in the same order);
 * xchg's point-to-point traffic still goes only on its private duplicate,
 * except in the simulated build, where the MPICH model stands in for MPI's
 * call (SMPI's own is another algorithm) and runs on the caller's
 * communicator, and so does the check's agreement (sim_checked_call).
 *
 * The large-count entry (xchg_alltoallv_c) passes its calls to
 * MPI_Alltoallv_c alike, its int copies giving the check's statistics.
 * Not passed through (set up at the first call, as announced reuse or
 * because they need agreement): a forced algorithm (argument or
 * XCHG_ALLTOALLV_ALGO), XCHG_CHECK, XCHG_RECORD, XCHG_SETUP_AT=1, and the
 * nonblocking, persistent, sparse and neighbour entries (which set up at
 * once, as before). These settings are read on each rank
 * here (nothing is agreed yet): they must be the same on every rank.
 *
 * An argument error found in a passed-through call is this rank's alone,
 * as in MPI's own call: it still takes part with empty blocks, so where
 * every rank has it none waits, but where one rank alone has it the
 * others may wait for its blocks; XCHG_CHECK=1 agrees every error
 * (docs/errors.md).
 */
#include "select_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The agreement: auto's fields (MAX and SUM, xchg_agree_combine), two of
 * the node guess (MAX): the processor name's hash and its negation, the
 * slowest rank's mean time in MPI's calls so far (ns, MAX), and a veto
 * some rank remembers for this communicator's size (MAX; veto_memory). */
enum { PH_NODE_HI = XCHG_AF_COUNT, PH_NODE_NEG, PH_MPI_NS, PH_VETO, PH_COUNT };
_Static_assert((int)(PH_COUNT - XCHG_AF_COUNT) <= (int)XCHG_AGREE_MAX_EXTRA,
               "raise XCHG_AGREE_MAX_EXTRA");
_Static_assert((int)PH_COUNT <= (int)XCHG_PHASE_REF_FIELDS, "a check's fields fit check_v");

/* MPI's calls timed before a check (the mean the check agrees). */
enum { TIMED = 8 };

/* What the verdict found on this thread's earlier communicators: a choice
 * measured slower than MPI's own call, by communicator size, with the
 * largest block it was measured on. A check contributes the entry of its
 * communicator's size (PH_VETO: (algo + 1) << 48 | block, so the MAX is
 * one rank's entry), and where the agreed entry names the algorithm the
 * model would set up for, on blocks within a factor 2 of it, the
 * communicator does not set up (as where the model sees no saving): a
 * program that makes many communicators of one shape pays a set-up that
 * does not pay back once, not on each. A veto by less than VETO_CLEAR
 * counts once a second communicator confirms it (on an oversubscribed
 * machine medians of 16 calls still differ by a tenth from one
 * communicator to the next). An entry is forgotten once it has kept
 * VETO_REMEMBERED communicators of this rank from setting up (then a
 * set-up is measured again: the machine may have quietened). */
enum { VETO_MEMORY = 8, VETO_REMEMBERED = 16 };
#define VETO_CLEAR 1.25
#define VETO_BLOCK_MASK ((1ll << 48) - 1)
typedef struct veto_memory {
    int P;
    long long entry; /* as PH_VETO; 0: empty */
    int confirmed;   /* counts (clear, or seen twice) */
    int uses;
} veto_memory;
static _Thread_local veto_memory vetoes[VETO_MEMORY];
static _Thread_local unsigned vetoes_next;

static veto_memory *veto_find(int P)
{
    for (int k = 0; k < VETO_MEMORY; k++)
        if (vetoes[k].entry && vetoes[k].P == P)
            return &vetoes[k];
    return NULL;
}

/* algo measured slower than MPI's by the factor ratio on blocks up to
 * max_block, at P ranks. */
static void veto_remember(int P, xchg_algo algo, long long max_block, double ratio)
{
    const long long entry = ((long long)(algo + 1) << 48) |
                            (max_block < VETO_BLOCK_MASK ? max_block : VETO_BLOCK_MASK);
    veto_memory *m = veto_find(P);
    const int again = m && m->entry == entry;
    if (!m)
        m = &vetoes[vetoes_next++ % VETO_MEMORY];
    m->P = P;
    m->entry = entry;
    m->confirmed = again || ratio > VETO_CLEAR;
    m->uses = 0;
}

/* Whether the agreed entry e vetoes setting up for algorithm best on
 * agreed largest block blk (as select.c's moved(): within a factor 2). */
static int veto_remembered(long long e, xchg_algo best, long long blk)
{
    if (e <= 0 || (e >> 48) - 1 != (long long)best)
        return 0;
    long long was = e & VETO_BLOCK_MASK;
    return !(was > 2 * blk + 1 || blk > 2 * was + 1);
}

/* After the verdict's veto: the first check VETO_CHECK calls on, then at
 * twice the calls since the veto, at most VETO_CHECK_MAX calls apart (a
 * check is one MPI_Iallreduce beside MPI's call). */
enum { VETO_CHECK = 16, VETO_CHECK_MAX = 1024 };

static pthread_once_t op_once = PTHREAD_ONCE_INIT;
static MPI_Op phase_op = MPI_OP_NULL;
static MPI_Datatype phase_type = MPI_DATATYPE_NULL;

static void phase_combine(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const long long *a = in;
    long long *b = inout;
    for (int k = 0; k < *len; k++, a += PH_COUNT, b += PH_COUNT)
        xchg_agree_combine_extra(b, a, PH_COUNT);
}

/* MPI_Finalize deletes MPI_COMM_SELF's attributes first: the op and type
 * are freed there (MPICH reports handles left at finalize). */
static int free_at_finalize(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm; (void)keyval; (void)value; (void)extra;
    if (phase_op != MPI_OP_NULL)
        MPI_Op_free(&phase_op);
    if (phase_type != MPI_DATATYPE_NULL)
        MPI_Type_free(&phase_type);
    return MPI_SUCCESS;
}

/* One element is the whole vector, so MPI never splits it between fields. */
static void op_create(void)
{
    if (MPI_Type_contiguous(PH_COUNT, MPI_LONG_LONG, &phase_type) != MPI_SUCCESS ||
        MPI_Type_commit(&phase_type) != MPI_SUCCESS) {
        phase_type = MPI_DATATYPE_NULL;
        return;
    }
    if (MPI_Op_create(phase_combine, 1, &phase_op) != MPI_SUCCESS)
        phase_op = MPI_OP_NULL;
    int kv = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, free_at_finalize, &kv, NULL) ==
        MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
}

static long long name_hash(void)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int len = 0;
    if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS)
        len = 0;
    unsigned long long h = 1469598103934665603ull;
    for (int i = 0; i < len; i++) {
        h ^= (unsigned char)name[i];
        h *= 1099511628211ull;
    }
    return (long long)(h >> 2);
}

/* The call whose statistics are agreed first: once the calls before it
 * have cost twenty agreements (MPI's call modelled on an empty pattern:
 * its loop over P peers), so that the check costs at most about 5% of
 * what the communicator has spent in MPI (a communicator used a few times
 * never pays one); not before the 3rd (the measured time of MPI's call
 * leaves out the first, which may pay MPI's own set-up), at most the 64th. */
static unsigned long first_check(int P)
{
    /* the last P's answer kept: programs make many communicators of a size */
    static _Thread_local int last_P;
    static _Thread_local unsigned long last_k;
    if (P == last_P && last_k)
        return last_k;
    double k = ceil(20.0 * xchg_select_agree_share(P));
    if (!(k >= 3.0))
        k = 3.0;
    last_P = P;
    last_k = k > 64.0 ? 64 : (unsigned long)k;
    return last_k;
}

/* This call's fields, with the node guess (no node map yet: every other
 * rank counts as off-node until the agreement says one node); a rank
 * with an argument error (arg_rc) takes part with empty ones. */
static void fields_of(const xchg_call *c, int arg_rc, long long *v)
{
    memset(v, 0, sizeof(long long) * PH_COUNT);
    if (arg_rc == MPI_SUCCESS && c->sendbuf == MPI_IN_PLACE) {
        xchg_call in = *c; /* what is sent is laid out as what is received */
        in.sendcounts = c->recvcounts;
        in.st = c->rt;
        xchg_select_fields(&in, v);
    } else if (arg_rc == MPI_SUCCESS) {
        xchg_select_fields(c, v);
    }
    long long h = name_hash();
    v[PH_NODE_HI] = h;
    v[PH_NODE_NEG] = -h;
    const xchg_phase_counts *ph = &c->cs->phase;
    v[PH_MPI_NS] = ph->timed ? (long long)(1e9 * ph->mpi_seconds / (double)ph->timed) : 0;
    const veto_memory *m = veto_find(c->size);
    v[PH_VETO] = m && m->confirmed ? m->entry : 0;
}

#if XCHG_HAVE_LARGE_COUNT
/* MPI_Alltoallv_c with the caller's arrays, or where this rank found an
 * argument error (failed) with empty blocks, as the int call takes part. */
static int mpi_call_large(const xchg_call *c, const xchg_phase_large *large, int failed)
{
    if (!failed)
        return PMPI_Alltoallv_c(c->sendbuf, large->sendcounts, large->sdispls, c->st.type,
                                c->recvbuf, large->recvcounts, large->rdispls, c->rt.type,
                                c->comm);
    MPI_Count *counts = calloc((size_t)c->size, sizeof(MPI_Count));
    MPI_Aint *displs = calloc((size_t)c->size, sizeof(MPI_Aint));
    int rc = counts && displs ? PMPI_Alltoallv_c(c->sendbuf, counts, displs, MPI_BYTE,
                                                 c->recvbuf, counts, displs, MPI_BYTE, c->comm)
                              : MPI_ERR_NO_MEM;
    free(counts);
    free(displs);
    return rc;
}
#endif

/* MPI's own call: the library's MPI_Alltoallv (MPI_Alltoallv_c for the
 * large-count entry; through PMPI, so that the preload does not take it
 * back), or in the simulated build a model of it on the caller's
 * communicator (standin_of). failed: this rank's arguments were replaced
 * by empty blocks (check_args). */
static int mpi_call(xchg_call *c, const xchg_phase_large *large, int failed, int *raised)
{
#ifdef XCHG_SMPI
    if (c->sendbuf != MPI_IN_PLACE) {
        *raised = 0;
        c->temp_limit = xchg_temp_limit_of(c->cs);
        xchg_charge_ops(XCHG_OP_PEER, (size_t)c->size); /* as the usual path charges */
        return xchg_registry_find(xchg_select_mpi_own(c->cs))->run(c);
    }
#endif
    *raised = 1; /* MPI raised its own errors on the caller's communicator */
#if XCHG_HAVE_LARGE_COUNT
    if (large)
        return mpi_call_large(c, large, failed);
#else
    (void)large;
#endif
    (void)failed;
    return PMPI_Alltoallv(c->sendbuf, c->sendcounts, c->sdispls, c->st.type, c->recvbuf,
                          c->recvcounts, c->rdispls, c->rt.type, c->comm);
}

/* From agreed fields v at call n: when to set up, or when to look again. */
static void decide(xchg_call *c, xchg_phase_counts *ph, long long *v, unsigned long n)
{
    const int P = c->size;
    int one_node = P > 1 && v[PH_NODE_HI] == -v[PH_NODE_NEG];
    if (c->cs->settings.ranks_per_node > 0)
        one_node = c->cs->settings.ranks_per_node >= P;
    v[XCHG_AF_MAX_NODE] = one_node ? P : 1;
    if (one_node)
        v[XCHG_AF_MAX_OFF_SEND] = v[XCHG_AF_MAX_OFF_RECV] = v[XCHG_AF_SUM_OFF] = 0;
    xchg_select_guess g;
    xchg_select_estimate(c, v, one_node, &g);
    /* The model ranks; the agreed measured time of MPI's call scales it
     * (the defaults model a simulated cluster, not this machine). */
    const double mpi = v[PH_MPI_NS] > 0 ? 1e-9 * (double)v[PH_MPI_NS] : g.vendor_t;
    const double best = g.vendor_t > 0 ? mpi * g.best_t / g.vendor_t : INFINITY;
    const double d = mpi - best;
    const int verbose = c->cs->settings.verbose && c->rank == 0;
    if (veto_remembered(v[PH_VETO], g.best, v[XCHG_AF_MAX_BLOCK])) {
        veto_memory *m = veto_find(P);
        if (m && !ph->remembered && ++m->uses >= VETO_REMEMBERED)
            m->entry = 0; /* the 16th communicator it kept from setting up */
        ph->remembered = 1;
        ph->check_at = 2 * n;
        if (verbose)
            fprintf(stderr, "xchg: auto keeps MPI's MPI_Alltoallv on P=%d (call %lu): %s was "
                    "measured slower than MPI's on an earlier communicator of this size; "
                    "looks again at call %lu\n", P, n, xchg_algo_name(g.best), ph->check_at);
        return;
    }
    if (!(d > 0.0) || !isfinite(d) || !isfinite(g.setup_t)) {
        ph->check_at = 2 * n;
        if (verbose)
            fprintf(stderr, "xchg: auto keeps MPI's MPI_Alltoallv on P=%d (call %lu: MPI "
                    "%.2f us a call, %s %.2f us by the model); looks again at call %lu\n", P,
                    n, mpi * 1e6, xchg_algo_name(g.best), best * 1e6, ph->check_at);
        return;
    }
    double repaid = ceil(g.setup_t / d);
    ph->setup_at = repaid > (double)(n + 1) ? (repaid > 1e9 ? 1000000000ul : (unsigned long)repaid)
                                            : n + 1;
    ph->check_at = 0;
    xchg_select_set_reference(c->cs, v); /* the verdict's (select.c) */
    ph->ref_algo = (int)g.best;          /* and the veto memory's */
    ph->have_ref = -1; /* a set-up decided by a check: judged once it is made */
    if (verbose)
        fprintf(stderr, "xchg: auto passes calls on P=%d to MPI's MPI_Alltoallv until call "
                "%lu, then sets up (call %lu: MPI %.2f us a call, %s %.2f us by the model, "
                "set-up %.1f us)\n", P, ph->setup_at, n, mpi * 1e6, xchg_algo_name(g.best),
                best * 1e6, g.setup_t * 1e6);
}

void xchg_phase_veto(xchg_comm_state *cs, const long long *f, double ratio)
{
    /* remembered as the check's choice, which is what a later check
     * sees (the set-up may have run another: a window refused) */
    veto_remember(cs->size, (xchg_algo)cs->phase.ref_algo, f[XCHG_AF_MAX_BLOCK], ratio);
    xchg_phase_counts *ph = &cs->phase;
    ph->vetoed = 1;
    ph->calls = 0;
    ph->setup_at = 0; /* the set-up's call, which the count restarting would pass again */
    ph->check_at = VETO_CHECK;
}

/* A vetoed communicator's check at call n (since the veto), on agreed
 * fields v: the veto lifted where the statistics moved (the next call
 * runs auto's fresh choice), else the next check scheduled. */
static void veto_check(xchg_call *c, xchg_phase_counts *ph, const long long *v, unsigned long n)
{
    if (xchg_select_veto_moved(c->cs, v)) {
        ph->vetoed = 0;
        ph->check_at = 0;
        if (c->cs->settings.verbose && c->rank == 0)
            fprintf(stderr, "xchg: auto's statistics on P=%d moved since its choice was "
                    "measured slower than MPI's: it chooses afresh\n", c->size);
        return;
    }
    ph->check_at = n + (n < VETO_CHECK_MAX ? n : VETO_CHECK_MAX);
}

/* The checks of xchg_alltoallv (alltoallv.c's), without agreement, and
 * where info is set the types' sizes (the check's fields, the simulated
 * build's MPICH model; MPI's own call needs none: three MPI calls a type
 * saved on every other call). Where they fail (or pre_err, an error found
 * before), *c takes empty blocks so that this rank still takes part. */
static int check_args(xchg_call *c, MPI_Datatype sendtype, MPI_Datatype recvtype, int info,
                      int pre_err, int **zeros)
{
    int rc = pre_err;
    if (rc == MPI_SUCCESS)
        rc = xchg_check_alltoallv_arrays(c->sendbuf, c->sendcounts, c->sdispls, sendtype,
                                         c->recvbuf, c->recvcounts, c->rdispls, recvtype,
                                         c->size);
    c->rt.type = recvtype;
    c->st.type = sendtype;
    if (rc == MPI_SUCCESS && info)
        rc = xchg_typeinfo_get(recvtype, &c->rt);
    if (rc == MPI_SUCCESS && info && c->sendbuf != MPI_IN_PLACE)
        rc = xchg_typeinfo_get(sendtype, &c->st);
    if (rc == MPI_SUCCESS)
        return rc;
    static const char dummy[1];
    *zeros = calloc((size_t)c->size, sizeof(int));
    if (!*zeros)
        return rc; /* nothing to take part with: MPI's own behaviour */
    c->sendbuf = dummy;
    c->recvbuf = (void *)dummy;
    c->sendcounts = c->sdispls = c->recvcounts = c->rdispls = *zeros;
    xchg_typeinfo_get(MPI_BYTE, &c->rt);
    c->st = c->rt;
    return rc;
}

/* Set-up at call n: the state, collectively. A refusal of the duplicate
 * (agreed: every rank gets it at the same call) keeps MPI's call: auto
 * never fails for want of a communicator (the preload relies on it). */
static int set_up(MPI_Comm comm, const xchg_algo_names *names, xchg_comm_state *cs,
                  int *done)
{
    int refused = 0;
    xchg_comm_state *st = NULL;
    int rc = xchg_comm_state_get(comm, names, &st, &refused);
    *done = rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS || !refused)
        return rc;
    cs->bare = 0; /* from now on the refusal's schedule decides when to ask */
    cs->phase.setup_at = 0;
    cs->phase.check_at = 0;
    return MPI_SUCCESS;
}

/* Every setting, read on this rank for the check's model (a new state
 * read only what its first call needs); what decides whether a call sets
 * up stays as the first call read it, so that a variable changed since
 * cannot make this rank set up alone. */
static void read_settings(const xchg_algo_names *names, xchg_comm_state *cs)
{
    const xchg_settings was = cs->settings;
    xchg_settings_read_local(names, &cs->settings, 1);
    xchg_settings *s = &cs->settings;
    s->alltoallv_algo = was.alltoallv_algo;
    s->check = was.check;
    s->record = was.record;
    s->setup_at = was.setup_at;
}

/* Starts the check's agreement of v (this call's fields) on the caller's
 * communicator: nonblocking where MPI's is log P, so that it overlaps
 * MPI's call; *req completes it (MPI_REQUEST_NULL: done already). */
static int check_start(const xchg_call *c, int arg_rc, long long *v, MPI_Request *req)
{
    pthread_once(&op_once, op_create);
    fields_of(c, arg_rc, v);
    *req = MPI_REQUEST_NULL;
    if (phase_op == MPI_OP_NULL)
        return MPI_ERR_OP;
#ifdef XCHG_SMPI
    /* in place: SMPI's own MPI_Alltoallv runs, which no hook progresses */
    return MPI_Allreduce(MPI_IN_PLACE, v, 1, phase_type, phase_op, c->comm);
#else
    return MPI_Iallreduce(MPI_IN_PLACE, v, 1, phase_type, phase_op, c->comm, req);
#endif
}

#ifdef XCHG_SMPI
/* The simulated check. A real MPI progresses the check's MPI_Iallreduce
 * inside its own MPI_Alltoallv (MPICH's and Open MPI's progress engines
 * run pending nonblocking collectives in any blocking call), so the check
 * costs its messages, not its rounds' latency. SMPI 3.32's MPI_Iallreduce
 * is linear (2(P-1) messages a rank, smpi_nbc_impl.cpp), so the simulated
 * build runs the log P recursive doubling of auto's agreement
 * (stats_agree.c) on the caller's communicator instead (its own tag; the
 * stand-in for MPI's call runs there too), progressed by the stand-in's
 * waits through the wait hook, as MPI's progress engine would. */
typedef struct sim_check {
    xchg_call c; /* first: the stand-in's call, which its waits hand back */
    xchg_agree_op op;
    int rc;
} sim_check;

static sim_check *sim_check_of(xchg_call *c)
{
    return (sim_check *)c;
}

static int sim_hook_start(xchg_call *c)
{
    return sim_check_of(c)->rc;
}

static int sim_hook_advance(xchg_call *c, int *done)
{
    return xchg_agree_advance(&sim_check_of(c)->op, done);
}

static void sim_hook_poll(xchg_call *c)
{
    int done = 0;
    if (sim_check_of(c)->rc == MPI_SUCCESS)
        xchg_agree_progress(&sim_check_of(c)->op, 0, &done);
}

static MPI_Request *sim_hook_requests(xchg_call *c)
{
    return sim_check_of(c)->op.req;
}

static const xchg_wait_hook sim_check_hook = {sim_hook_start, sim_hook_advance, sim_hook_poll,
                                              sim_hook_requests};

/* The stand-in's call (mpi_call) with the check's agreement of v in
 * flight beside it; v holds the agreed fields after, *arc the
 * agreement's outcome. */
static int sim_checked_call(xchg_call *c, int arg_rc, long long *v, int failed, int *raised,
                            int *arc)
{
    sim_check k;
    memset(&k, 0, sizeof k);
    k.c = *c;
    fields_of(c, arg_rc, v);
    k.rc = xchg_agree_start_extra(&k.op, c->comm, c->rank, c->size, v, PH_COUNT - XCHG_AF_COUNT);
    c->cs->wait_hook = k.rc == MPI_SUCCESS ? &sim_check_hook : NULL;
    int rc = mpi_call(&k.c, NULL, failed, raised);
    c->cs->wait_hook = NULL;
    *c = k.c;
    int done = 0;
    *arc = k.rc;
    if (*arc == MPI_SUCCESS)
        *arc = xchg_agree_progress(&k.op, 1, &done);
    if (*arc == MPI_SUCCESS)
        memcpy(v, k.op.acc, sizeof(long long) * PH_COUNT);
    return rc;
}
#endif

/* What xchg_get_stats says of a passed-through call (vetoed: passed
 * after the verdict's veto). */
static void count_passed(xchg_comm_state *cs, const xchg_call *c, int baseline, int vetoed)
{
    (void)c;
    cs->calls++;
    cs->last.algo = XCHG_ALGO_VENDOR;
#ifdef XCHG_SMPI
    if (c->sendbuf != MPI_IN_PLACE)
        cs->last.algo = xchg_select_mpi_own(cs);
#endif
    cs->last.sparse_algo = XCHG_SPARSE_INVALID;
    cs->last.temp_bytes = 0;
    cs->last.calls = cs->calls;
    /* a baseline asked for by name ran as asked */
    cs->last.passed_to_mpi = baseline ? 0 : vetoed ? XCHG_PASSED_SLOWER : XCHG_PASSED_BEFORE_SETUP;
}

/* Call n, passed to MPI: the check where n is its call (every rank takes
 * part, one with an argument error too), MPI's call, timed, the decision,
 * and a set-up that pays at once made at its end, so that the next call
 * runs the choice. */
static int pass_through(const xchg_algo_names *names, xchg_call *c, MPI_Datatype sendtype,
                        MPI_Datatype recvtype, const xchg_phase_large *large, int baseline,
                        unsigned long n, int *raised)
{
    xchg_phase_counts *ph = &c->cs->phase;
    int *zeros = NULL;
    const int checking = n == ph->check_at;
    const int vetoed = ph->vetoed; /* this call's reason, whatever its check decides */
#ifdef XCHG_SMPI
    const int info = 1;
#else
    const int info = checking;
#endif
    int arg_rc = check_args(c, sendtype, recvtype, info, large ? large->arg_err : MPI_SUCCESS,
                            &zeros);
    if (checking && !vetoed) { /* a set-up state's settings are agreed */
        read_settings(names, c->cs);
        c->temp_limit = xchg_temp_limit_of(c->cs); /* the model's (padding) */
    }
    long long v[PH_COUNT];
    MPI_Request req = MPI_REQUEST_NULL;
    int arc = MPI_SUCCESS, rc;
    /* timed: up to TIMED calls before a check, and the calls between a
     * check and the set-up it decided (the verdict's reference, select.c);
     * not a communicator's first (it may pay MPI's own lazy set-up); the
     * others pay no clock */
    const int for_check = n > 1 && ph->check_at > n && ph->check_at - n <= TIMED &&
                          !vetoed;
    const int timing = for_check || (n > 1 && ph->setup_at > n);
    double t0 = timing ? MPI_Wtime() : 0.0;
#ifdef XCHG_SMPI
    if (checking && c->sendbuf != MPI_IN_PLACE)
        rc = sim_checked_call(c, zeros ? MPI_SUCCESS : arg_rc, v, zeros != NULL, raised, &arc);
    else
#endif
    {
        if (checking)
            arc = check_start(c, zeros ? MPI_SUCCESS : arg_rc, v, &req);
        rc = mpi_call(c, large, zeros != NULL, raised);
    }
    if (timing) {
        const double t = MPI_Wtime() - t0;
        ph->recent[ph->nrecent++ % (sizeof ph->recent / sizeof ph->recent[0])] = t;
        if (for_check) {
            ph->mpi_seconds += t;
            ph->timed++;
        }
    }
    if (checking && arc == MPI_SUCCESS && req != MPI_REQUEST_NULL)
        arc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (checking) { /* the next check measures afresh */
        ph->mpi_seconds = 0.0;
        ph->timed = 0;
    }
    if (checking && arc == MPI_SUCCESS && vetoed)
        veto_check(c, ph, v, n);
    else if (checking && arc == MPI_SUCCESS)
        decide(c, ph, v, n);
    else if (checking)
        ph->check_at = 2 * n; /* no agreement: as if no saving */
    if (checking && ph->setup_at == n + 1) {
        int done = 0; /* failed: the next call tries again, and says so */
        (void)set_up(c->comm, names, c->cs, &done);
        ph->have_ref = done; /* set up by the check's decision: the verdict judges it */
    }
    free(zeros);
    if (arg_rc != MPI_SUCCESS) {
        *raised = 0;
        rc = arg_rc;
    }
    count_passed(c->cs, c, baseline, vetoed);
    return rc;
}

/* The call a check's decision needs besides its fields: the state's. */
static xchg_call state_call(MPI_Comm comm, xchg_comm_state *cs)
{
    xchg_call c = {.comm = comm, .cs = cs, .rank = cs->rank, .size = cs->size};
    c.temp_limit = xchg_temp_limit_of(cs);
    return c;
}

/* A nonblocking call's check (nb_check_start), completed: the decision
 * (wait: blocking; else only where it completed). Every rank settles it
 * before its next call on the communicator at the latest, so the
 * decision is in place, the same everywhere, before any later call. */
static int settle_check(MPI_Comm comm, xchg_comm_state *cs, int wait)
{
    xchg_phase_counts *ph = &cs->phase;
    if (!ph->check_pending)
        return MPI_SUCCESS;
    int done = 1, rc = wait ? MPI_Wait(&ph->check_req, MPI_STATUS_IGNORE)
                            : MPI_Test(&ph->check_req, &done, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !done)
        return MPI_SUCCESS;
    ph->check_pending = 0;
    const unsigned long n = ph->check_at; /* the check's call */
    ph->mpi_seconds = 0.0; /* the next check measures afresh */
    ph->timed = 0;
    if (rc == MPI_SUCCESS) {
        xchg_call c = state_call(comm, cs);
        decide(&c, ph, ph->check_v, n);
    } else {
        ph->check_at = 2 * n; /* no agreement: as if no saving */
    }
    return rc;
}

/* What a passed-through nonblocking call left for this call's start: its
 * check (decided now at the latest) and an empty-blocks call of this
 * rank's argument error. */
static void settle_before_call(MPI_Comm comm, xchg_comm_state *cs)
{
    (void)settle_check(comm, cs, 1); /* a failure: no saving, as decided there */
    xchg_phase_counts *ph = &cs->phase;
    if (ph->orphan != MPI_REQUEST_NULL)
        MPI_Wait(&ph->orphan, MPI_STATUS_IGNORE);
    free(ph->orphan_zeros);
    ph->orphan_zeros = NULL;
}

/* Whether call n (counted here) sets up at once or at its set-up call:
 * set_up, and *ready where it did; else 0 and the call passes through.
 * Returns 1 where the caller returns rc. */
static int maybe_set_up(MPI_Comm comm, const xchg_algo_names *names, xchg_comm_state *cs,
                        int at_once, int *rc, xchg_comm_state **ready)
{
    xchg_phase_counts *ph = &cs->phase;
    const int decided = ph->setup_at && ph->calls >= ph->setup_at;
    if (!(at_once || decided))
        return 0;
    int done = 0;
    *rc = set_up(comm, names, cs, &done);
    /* set up by a check's decision (not XCHG_SETUP_AT, which has none):
     * the verdict judges it (select.c) */
    ph->have_ref = done && decided && !at_once && ph->have_ref == -1;
    if (done || *rc != MPI_SUCCESS) {
        ph->calls--; /* this call is the set-up communicator's first */
        *ready = done ? cs : NULL;
        return 1; /* done: the usual path runs it; else its error */
    }
    /* refused (agreed): this call is MPI's own; a later one asks again
     * (core's schedule after a refusal: 1, 2, 4, ... 64 calls) */
    return 0;
}

/* The start both auto entries share: the state (bare where new), what a
 * passed-through nonblocking call left settled, this call counted, and
 * the set-up where it is due or asked for at once (a forced algorithm,
 * XCHG_CHECK, XCHG_RECORD, XCHG_SETUP_AT=1, a refused duplicate; a
 * nonblocking call in the simulated build, which has no nonblocking
 * stand-in for MPI's call). Returns 1 where the call passes through (its
 * number is cs->phase.calls; *baseline: a simulated baseline stands in
 * for MPI's call); else 0, and the caller returns *rc, with *ready the
 * set-up state where there is one. */
static int phase_enter(MPI_Comm comm, const xchg_algo_names *names, const void *sendbuf,
                       int nonblocking, xchg_comm_state **csp, int *baseline, int *rc,
                       xchg_comm_state **ready)
{
    *baseline = 0;
    *rc = MPI_SUCCESS;
    xchg_comm_state *cs = NULL;
    if (xchg_comm_state_bare(comm, names, &cs) != MPI_SUCCESS || !cs)
        return 0; /* no memory: the usual path says so */
    if (cs->pcomm != MPI_COMM_NULL) {
        const xchg_settings *s = &cs->settings; /* agreed */
        if (!cs->phase.vetoed || nonblocking || s->check || s->record ||
            s->alltoallv_algo != XCHG_ALGO_AUTO) {
            *ready = cs;
            return 0;
        }
        cs->phase.calls++; /* vetoed: the blocking call passes to MPI's again */
        *csp = cs;
        return 1;
    }
    /* Not set up: new (bare), or MPI refused the duplicate before. */
    settle_before_call(comm, cs);
    const xchg_settings *set = &cs->settings;
    int simulated_nb = 0;
#ifdef XCHG_SMPI
    simulated_nb = nonblocking;
    /* a baseline named in XCHG_ALLTOALLV_ALGO stands in for MPI's own call
     * (an application's rows under SMPI): it runs as the pass-through
     * does, on the caller's communicator, every call, with no set-up of
     * xchg's (whose costs the simulator charges) */
    *baseline = !nonblocking && xchg_select_mpi_own(cs) == set->alltoallv_algo &&
                sendbuf != MPI_IN_PLACE && !set->check && !set->record && cs->bare;
#else
    (void)nonblocking;
    (void)sendbuf;
#endif
    const int at_once = !*baseline && (simulated_nb || set->alltoallv_algo != XCHG_ALGO_AUTO ||
                                       set->check || set->record || set->setup_at == 1 ||
                                       !cs->bare);
    xchg_phase_counts *ph = &cs->phase;
    if (++ph->calls == 1 && !at_once && !*baseline) { /* a baseline never checks nor sets up */
        ph->setup_at = set->setup_at > 1 ? (unsigned long)set->setup_at : 0;
        ph->check_at = ph->setup_at ? 0 : first_check(cs->size);
    }
    if (maybe_set_up(comm, names, cs, at_once, rc, ready))
        return 0;
    *csp = cs;
    return 1;
}

int xchg_phase_ialltoallv(MPI_Comm comm, const xchg_algo_names *names, const void *sendbuf,
                          const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int rdispls[],
                          MPI_Datatype recvtype, xchg_phase_nb *nb, int *passed,
                          xchg_comm_state **ready)
{
    *passed = 0;
    *ready = NULL;
    memset(nb, 0, sizeof *nb);
    nb->req = MPI_REQUEST_NULL;
    xchg_comm_state *cs = NULL;
    int baseline = 0, rc = MPI_SUCCESS;
    if (!phase_enter(comm, names, sendbuf, 1, &cs, &baseline, &rc, ready))
        return rc;
    xchg_phase_counts *ph = &cs->phase;
    const unsigned long n = ph->calls;
    *passed = 1;
    xchg_call c = {.sendbuf = sendbuf, .sendcounts = sendcounts, .sdispls = sdispls,
                   .recvbuf = recvbuf, .recvcounts = recvcounts, .rdispls = rdispls,
                   .comm = comm, .cs = cs, .rank = cs->rank, .size = cs->size};
    const int checking = n == ph->check_at;
    int *zeros = NULL;
    int arg_rc = check_args(&c, sendtype, recvtype, checking, MPI_SUCCESS, &zeros);
    int arc = MPI_SUCCESS;
    if (checking) {
        read_settings(names, cs);
        c.temp_limit = xchg_temp_limit_of(cs);
        MPI_Request req = MPI_REQUEST_NULL;
        arc = check_start(&c, zeros ? MPI_SUCCESS : arg_rc, ph->check_v, &req);
        ph->check_req = req;
        ph->check_pending = arc == MPI_SUCCESS;
        if (arc != MPI_SUCCESS)
            ph->check_at = 2 * n; /* no agreement: as if no saving */
    }
    rc = PMPI_Ialltoallv(c.sendbuf, c.sendcounts, c.sdispls, c.st.type, c.recvbuf,
                         c.recvcounts, c.rdispls, c.rt.type, comm, &nb->req);
    nb->raised = rc != MPI_SUCCESS; /* MPI raised its own error on comm's handler */
    count_passed(cs, &c, 0, 0);
    nb->cs = cs;
    nb->comm = comm;
    nb->n = n;
    nb->checking = checking && ph->check_pending;
    if (arg_rc != MPI_SUCCESS) {
        /* this rank takes part with empty blocks, completed later (the
         * caller gets the error and no request) */
        ph->orphan = nb->req;
        ph->orphan_zeros = zeros;
        nb->req = MPI_REQUEST_NULL;
        return arg_rc;
    }
    free(zeros);
    return rc;
}

int xchg_phase_nb_test(xchg_phase_nb *nb, int *done)
{
    int rc = MPI_Test(&nb->req, done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || !*done || !nb->checking)
        return rc;
    xchg_comm_state *cs = nb->cs;
    if (cs->phase.check_pending && cs->phase.check_at == nb->n) {
        rc = settle_check(nb->comm, cs, 0);
        *done = !cs->phase.check_pending;
    }
    if (*done)
        nb->checking = 0;
    return rc;
}

int xchg_phase_nb_wait(xchg_phase_nb *nb)
{
    int rc = MPI_Wait(&nb->req, MPI_STATUS_IGNORE);
    xchg_comm_state *cs = nb->cs;
    if (nb->checking && cs->phase.check_pending && cs->phase.check_at == nb->n) {
        int crc = settle_check(nb->comm, cs, 1);
        if (rc == MPI_SUCCESS)
            rc = crc;
    }
    nb->checking = 0;
    return rc;
}

int xchg_phase_alltoallv(MPI_Comm comm, const xchg_algo_names *names, const void *sendbuf,
                         const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int rdispls[],
                         MPI_Datatype recvtype, const xchg_phase_large *large, int *passed,
                         int *raised, xchg_comm_state **ready)
{
    *passed = 0;
    *raised = 0;
    *ready = NULL;
    xchg_comm_state *cs = NULL;
    int baseline = 0, rc = MPI_SUCCESS;
    if (!phase_enter(comm, names, sendbuf, 0, &cs, &baseline, &rc, ready))
        return rc;
    xchg_call c = {.sendbuf = sendbuf, .sendcounts = sendcounts, .sdispls = sdispls,
                   .recvbuf = recvbuf, .recvcounts = recvcounts, .rdispls = rdispls,
                   .comm = comm, .cs = cs, .rank = cs->rank, .size = cs->size};
    *passed = 1;
    return pass_through(names, &c, sendtype, recvtype, large, baseline, cs->phase.calls, raised);
}
