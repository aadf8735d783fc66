/*
 * shm_window.c - the node-shared window (shm_window.h says what it holds).
 */
#include "shm_window.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#ifdef XCHG_SMPI
#include <simgrid/cond.h>
#include <simgrid/mutex.h>
#endif

/* The windows made and not yet freed. MPI_Finalize frees them first (an
 * attribute of MPI_COMM_SELF, whose attributes MPI deletes first): Open
 * MPI deletes MPI_COMM_WORLD's attributes, and with them a window cached
 * on it, only after its one-sided components are gone. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t live_once = PTHREAD_ONCE_INIT;
static xchg_shm_window *live;

static void live_remove(xchg_shm_window *w)
{
    pthread_mutex_lock(&live_lock);
    for (xchg_shm_window **p = &live; *p; p = &(*p)->next_live)
        if (*p == w) {
            *p = w->next_live;
            break;
        }
    w->next_live = NULL;
    pthread_mutex_unlock(&live_lock);
}

/* The one-node windows that other communicators' blocking calls may
 * borrow (under live_lock), and the next id a made one may take. */
static xchg_shm_window *lendable;
static uint64_t next_id = 1;

static void lendable_remove(xchg_shm_window *w)
{
    for (xchg_shm_window **p = &lendable; *p; p = &(*p)->next_lendable)
        if (*p == w) {
            *p = w->next_lendable;
            break;
        }
    w->next_lendable = NULL;
}

static int finalize_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm, (void)keyval, (void)value, (void)extra;
    pthread_mutex_lock(&live_lock);
    xchg_shm_window *w = live;
    live = NULL;
    lendable = NULL; /* nothing is borrowed after MPI_Finalize */
    pthread_mutex_unlock(&live_lock);
    while (w) {
        xchg_shm_window *next = w->next_live;
        w->next_lendable = NULL;
        if (w->group != MPI_GROUP_NULL)
            MPI_Group_free(&w->group);
        MPI_Win_unlock_all(w->win);
        MPI_Win_free(&w->win);
        w->win = MPI_WIN_NULL;
        w->base = NULL;
        w->usable = 0;
        w->next_live = NULL;
        w = next;
    }
    return MPI_SUCCESS;
}

static void live_hook(void)
{
    int kv = MPI_KEYVAL_INVALID;
    if (MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_delete, &kv, NULL) ==
        MPI_SUCCESS)
        MPI_Comm_set_attr(MPI_COMM_SELF, kv, NULL);
}

static void live_add(xchg_shm_window *w)
{
    pthread_once(&live_once, live_hook);
    pthread_mutex_lock(&live_lock);
    w->next_live = live;
    live = w;
    pthread_mutex_unlock(&live_lock);
}

static size_t round64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

/* One half: its header, the table and `half` data bytes. */
static size_t half_stride_for(size_t entries, size_t half)
{
    return round64(sizeof(xchg_shm_header) + sizeof(xchg_shm_entry) * entries + half);
}

/* One rank's region: its flag lines and two halves. */
static size_t stride_for(size_t entries, size_t half)
{
    return XCHG_SHM_FLAG_BYTES + 2 * half_stride_for(entries, half);
}

/* Under SMPI a member waiting for a flag sleeps on its own SimGrid
 * condition, and the member that stores the flag wakes it: the waiter
 * resumes at the simulated time of the store, then pays one flag's
 * latency (XCHG_OP_FLAG, calibrated.h), as the real code's acquire load
 * that sees the store does. Its mutex and condition: the last two words of
 * its flag lines (SMPI's ranks share one address space). Only the node
 * synchronisation waits there: the one-node window does not exist under
 * SMPI. */
#ifdef XCHG_SMPI
typedef struct sim_wake {
    sg_mutex_t m;
    sg_cond_t c;
} sim_wake;

static sim_wake *wake_of(const xchg_shm_window *w, int r)
{
    return (sim_wake *)(w->base + (size_t)r * w->stride + XCHG_SHM_FLAG_BYTES -
                        sizeof(sim_wake));
}

static void sim_wake_make(xchg_shm_window *w)
{
    sim_wake *k = wake_of(w, w->rank);
    k->m = sg_mutex_init();
    k->c = sg_cond_init();
}

static void sim_wake_free(xchg_shm_window *w)
{
    if (!w->base)
        return;
    sim_wake *k = wake_of(w, w->rank);
    if (k->c)
        sg_cond_destroy(k->c);
    if (k->m)
        sg_mutex_destroy(k->m);
    k->c = NULL, k->m = NULL;
}
#else
static void sim_wake_make(xchg_shm_window *w)
{
    (void)w;
}
static void sim_wake_free(xchg_shm_window *w)
{
    (void)w;
}
#endif

/* The window itself (the communicator stays). */
static void window_release(xchg_shm_window *w)
{
    live_remove(w);
    if (w->win != MPI_WIN_NULL) {
        sim_wake_free(w);
        MPI_Win_unlock_all(w->win);
        MPI_Win_free(&w->win);
    }
    w->win = MPI_WIN_NULL;
    w->base = NULL;
}

/* A communicator's state lets go of its window: freed with the last
 * communicator holding it (every member frees that one's state together:
 * MPI_Comm_free is collective). */
static void shm_free(void *p)
{
    xchg_shm_window *w = p;
    if (!w)
        return;
    pthread_mutex_lock(&live_lock);
    int left = --w->holders;
    if (left <= 0)
        lendable_remove(w);
    pthread_mutex_unlock(&live_lock);
    if (left > 0)
        return;
    if (w->group != MPI_GROUP_NULL)
        MPI_Group_free(&w->group);
    window_release(w); /* w->node is the state's pcomm or the layout's node */
    free(w);
}

size_t xchg_shm_bytes_held(void)
{
    size_t n = 0;
    pthread_mutex_lock(&live_lock);
    for (const xchg_shm_window *w = live; w; w = w->next_live)
        n += w->stride * (size_t)w->P;
    pthread_mutex_unlock(&live_lock);
    return n;
}

/* Whether an error on any rank (one allreduce over comm): every rank gets
 * the same answer. */
static int any_failed(MPI_Comm comm, int failed)
{
    int all = 1;
    if (MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return 1; /* cannot agree: MPI reports the same failure everywhere */
    return all;
}

/* Allocates the node's segment for `half` data bytes per half (none if the
 * node's would exceed limit bytes), zeroes this rank's flag and agrees on
 * the outcome (collective over w->node). */
static int window_make(xchg_shm_window *w, size_t half, size_t limit)
{
    w->half = half;
    w->half_stride = half_stride_for(w->entries, half);
    w->stride = stride_for(w->entries, half);
    w->epoch = 0;
    MPI_Aint mine = w->rank == 0 ? (MPI_Aint)(w->stride * (size_t)w->P) : 0;
    char *local = NULL;
    /* the node's window within XCHG_MAX_TEMP_BYTES (agreed: the same on
     * every rank), else no window at all */
    int rc = w->stride * (size_t)w->P > limit ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_allocate_shared(mine, 1, MPI_INFO_NULL, w->node, &local, &w->win);
    if (rc != MPI_SUCCESS)
        w->win = MPI_WIN_NULL;
    MPI_Aint size = 0;
    int disp = 1;
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_shared_query(w->win, 0, &size, &disp, &w->base);
    if (rc == MPI_SUCCESS && (size_t)size < w->stride * (size_t)w->P)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win);
    if (rc == MPI_SUCCESS) {
        /* the flags only: headers and data are read after they say so */
        memset(w->base + (size_t)w->rank * w->stride, 0, XCHG_SHM_FLAG_BYTES);
        sim_wake_make(w);
        MPI_Win_sync(w->win);
    } else if (w->win != MPI_WIN_NULL) {
        MPI_Win_free(&w->win); /* never locked */
        w->win = MPI_WIN_NULL;
    }
    if (any_failed(w->node, rc != MPI_SUCCESS)) {
        window_release(w);
        return 0;
    }
    /* every flag zeroed before any rank publishes into it */
    if (MPI_Barrier(w->node) != MPI_SUCCESS) {
        window_release(w);
        return 0;
    }
    MPI_Win_sync(w->win);
    live_add(w);
    return 1;
}

/* Every rank on one shared-memory node (agreed): then the private
 * communicator itself is the node's. From the node map, which a
 * communicator made from a recorded one gets without a split (comm.c),
 * so making many windows splits nothing. */
static int node_make(xchg_comm_state *cs, xchg_shm_window *w, int no_memory)
{
    (void)xchg_comm_node_map(cs); /* collective on first need; unknown if refused */
    int unfit = no_memory || !cs->node_ready || cs->node_size != cs->size;
    /* A window needs a communicator context inside MPI (MPICH 4.0 dups
     * the communicator and, with none left, fails an assertion instead of
     * returning an error): a duplicate made and freed first tells whether
     * one is left. */
    MPI_Comm probe = MPI_COMM_NULL;
    if (!unfit && MPI_Comm_dup(cs->pcomm, &probe) != MPI_SUCCESS)
        unfit = 1;
    if (probe != MPI_COMM_NULL)
        MPI_Comm_free(&probe);
    if (any_failed(cs->pcomm, unfit))
        return 0;
    w->node = cs->pcomm;
    w->rank = cs->rank;
    return 1;
}

/* Emulated nodes, XCHG_SHM_BYTES=0 and the SMPI build never use the
 * window (SMPI: a spin on memory neither advances simulated time nor lets
 * another rank run). */
static int shm_possible(const xchg_comm_state *cs)
{
#ifdef XCHG_SMPI
    (void)cs;
    return 0;
#else
    long rpn = cs->settings.ranks_per_node;
    /* a state not set up yet (its first calls) can make one once it is */
    return (cs->pcomm != MPI_COMM_NULL || cs->bare) && (rpn == 0 || rpn >= cs->size) &&
           cs->settings.shm_bytes > 0;
#endif
}

/* Whether a window of `entries` table entries and `half` bytes per half
 * stays within XCHG_MAX_TEMP_BYTES (agreed: the same answer on every rank). */
static int fits_as(const xchg_shm_window *w, size_t entries, size_t half,
                   const xchg_comm_state *cs)
{
    return half <= cs->settings.max_temp_bytes / 2 &&
           stride_for(entries, half) <= cs->settings.max_temp_bytes / (size_t)w->P;
}

static int fits(const xchg_shm_window *w, size_t half, const xchg_comm_state *cs)
{
    return fits_as(w, w->entries, half, cs);
}

/* Cached where this rank had no memory for the state: unusable, as every
 * rank agreed then. */
static xchg_shm_window unusable;

/* A new window state with `entries` table entries and no window yet: its
 * own memory, or where there is none *spare, with which the rank still
 * takes part in making the window, so that every rank agrees. */
static xchg_shm_window *state_new(xchg_shm_window *spare, size_t entries)
{
    xchg_shm_window *w = calloc(1, sizeof *w);
    if (!w)
        w = memset(spare, 0, sizeof *spare);
    w->node = MPI_COMM_NULL;
    w->win = MPI_WIN_NULL;
    w->entries = entries;
    w->group = MPI_GROUP_NULL;
    w->holders = 1;
    return w;
}

/* Caches a state from state_new in cs's slot (the spare as `unusable`);
 * returns what the slot holds. */
static xchg_shm_window *state_cache(xchg_comm_state *cs, int slot, xchg_shm_window *w,
                                    const xchg_shm_window *spare)
{
    int own = w != spare;
    cs->ext[slot] = own ? w : &unusable;
    cs->ext_free[slot] = own ? shm_free : NULL;
    return cs->ext[slot];
}

/* The one-node window's first half: XCHG_SHM_BYTES where set; else the
 * first call's need where known (first: its agreed largest send), within
 * [16 KiB, XCHG_SHM_BYTES' default]. A window's cost grows with its size
 * (MPICH here: 131 us for 4 KiB, 403 us for 1 MiB, 2.2 ms for 8 MiB:
 * xchg-bench setup --window-bytes), and it is paid at set-up, before any
 * saving; a call that needs more runs linear once and the window grows. */
enum { SHM_FIRST_HALF = 16384 };

/* A first half for a need of `need` bytes: whole pages, at least
 * SHM_FIRST_HALF (the node window's first half too). */
static size_t first_half_for(size_t need)
{
    need = (need + 4095) & ~(size_t)4095;
    return need < SHM_FIRST_HALF ? SHM_FIRST_HALF : need;
}

static size_t shm_first_half(const xchg_comm_state *cs, size_t first)
{
    size_t set = (size_t)cs->settings.shm_bytes;
    if (cs->settings.shm_bytes_set || set < SHM_FIRST_HALF)
        return set;
    first = first_half_for(first);
    return first > set ? set : first;
}

/* A lendable window of comm's group in its order, the newest (NULL: none,
 * or borrowing is off: MPI_THREAD_MULTIPLE, where blocking calls on
 * communicators of one group may run at once on different threads). */
static xchg_shm_window *lendable_find(MPI_Comm comm)
{
    int level = MPI_THREAD_SINGLE;
    MPI_Group g = MPI_GROUP_NULL;
    if (MPI_Query_thread(&level) != MPI_SUCCESS || level == MPI_THREAD_MULTIPLE ||
        MPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return NULL;
    pthread_mutex_lock(&live_lock);
    xchg_shm_window *w = lendable;
    for (int same; w; w = w->next_lendable)
        if (w->usable && w->win != MPI_WIN_NULL &&
            MPI_Group_compare(g, w->group, &same) == MPI_SUCCESS && same == MPI_IDENT)
            break;
    pthread_mutex_unlock(&live_lock);
    MPI_Group_free(&g);
    return w;
}

/* Whether every rank found the same lendable window (one allreduce over
 * pcomm, which also agrees the id a window made instead takes: the
 * largest next id of any rank, so one id names one window on every
 * process). */
static int borrow_agreed(xchg_comm_state *cs, const xchg_shm_window *found, uint64_t *id)
{
    pthread_mutex_lock(&live_lock);
    long long v[3] = {found ? (long long)found->id : 0, found ? -(long long)found->id : 0,
                      (long long)next_id};
    pthread_mutex_unlock(&live_lock);
    if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, cs->pcomm) != MPI_SUCCESS)
        return *id = 0, 0; /* every rank makes its own */
    *id = (uint64_t)v[2];
    return v[0] != 0 && v[0] == -v[1];
}

/* Offers a window just made to later communicators of its group. */
static void lend(xchg_shm_window *w, MPI_Comm comm, uint64_t id)
{
    if (!id || MPI_Comm_group(comm, &w->group) != MPI_SUCCESS) {
        w->group = MPI_GROUP_NULL;
        return;
    }
    pthread_mutex_lock(&live_lock);
    w->id = id;
    if (next_id <= id)
        next_id = id + 1;
    w->next_lendable = lendable;
    lendable = w;
    pthread_mutex_unlock(&live_lock);
}

/* The window in cs's slot, made on first need (or for blocking calls,
 * XCHG_EXT_SHM, borrowed where every rank found one); grown where the
 * last call asked. */
static xchg_shm_window *one_node_window(xchg_comm_state *cs, int slot, size_t first)
{
    xchg_shm_window *w = cs->ext[slot];
    if (!w) {
        const int shared = slot == XCHG_EXT_SHM && shm_possible(cs);
        uint64_t id = 0;
        xchg_shm_window *found = shared ? lendable_find(cs->pcomm) : NULL;
        if (shared && borrow_agreed(cs, found, &id)) {
            pthread_mutex_lock(&live_lock);
            found->holders++;
            pthread_mutex_unlock(&live_lock);
            cs->ext[slot] = found;
            cs->ext_free[slot] = shm_free;
            return found;
        }
        xchg_shm_window spare;
        xchg_shm_window *use = state_new(&spare, (size_t)cs->size);
        use->P = cs->size;
        if (shm_possible(cs) && node_make(cs, use, use == &spare))
            use->usable = window_make(use, shm_first_half(cs, first), cs->settings.max_temp_bytes);
        if (shared && use->usable && use != &spare)
            lend(use, cs->pcomm, id);
        w = state_cache(cs, slot, use, &spare);
    }
    /* a borrowed window's collectives run on this communicator (the
     * same members in the same order as the one that made it) */
    if (w->usable) {
        w->node = cs->pcomm;
        w->rank = cs->rank;
    }
    if (w->usable && w->grow_to > w->half && !fits(w, w->grow_to, cs)) {
        w->grow_to = 0; /* keep this window: larger calls run linear */
    } else if (w->usable && w->grow_to > w->half) {
        window_release(w);
        w->usable = window_make(w, (size_t)w->grow_to, cs->settings.max_temp_bytes);
        w->grow_to = 0;
    }
    return w;
}

static int growth_due(const xchg_shm_window *w)
{
    return w->usable && w->grow_to > w->half;
}

int xchg_shm_window_of(xchg_comm_state *cs, size_t first, xchg_shm_window **out)
{
    xchg_shm_window *w;
    if (xchg_coro_inside()) {
        /* nothing collective here: without its own window (or one that
         * must grow) the coroutine runs without, and the communicator's
         * next blocking call makes it. Every rank sees the same: a
         * blocking call first completes the nonblocking ones before it. */
        w = cs->ext[XCHG_EXT_SHM_OWN];
        if (!w || growth_due(w)) {
            w = NULL;
            cs->coro_wanted_prepare = 1;
        }
    } else {
        if (cs->coro_wanted_prepare || cs->ext[XCHG_EXT_SHM_OWN])
            (void)one_node_window(cs, XCHG_EXT_SHM_OWN, first);
        cs->coro_wanted_prepare = 0;
        w = one_node_window(cs, XCHG_EXT_SHM, first);
    }
    *out = w && w->usable ? w : NULL;
    return MPI_SUCCESS;
}

int xchg_shm_own_window_of(xchg_comm_state *cs, xchg_shm_window **out)
{
    xchg_shm_window *w = one_node_window(cs, XCHG_EXT_SHM_OWN, 0);
    cs->coro_wanted_prepare = 0;
    *out = w->usable ? w : NULL;
    return MPI_SUCCESS;
}

int xchg_shm_window_ready(const xchg_comm_state *cs)
{
    const xchg_shm_window *w = cs->ext[XCHG_EXT_SHM_OWN];
    return w && !growth_due(w);
}

int xchg_shm_window_usable(const xchg_comm_state *cs)
{
    const xchg_shm_window *w = cs->ext[XCHG_EXT_SHM];
    if (!w)
        w = cs->ext[XCHG_EXT_SHM_OWN];
    return w ? w->usable : cs->size > 1 && shm_possible(cs);
}

void xchg_shm_publish(xchg_shm_window *w, uint64_t e)
{
    MPI_Win_sync(w->win);
    __atomic_store_n(xchg_shm_flag(w, w->rank), e, __ATOMIC_RELEASE);
    w->epoch = e;
}

/* Waits until the word at flag holds e or more (acquire). */
static void wait_word(xchg_shm_window *w, const uint64_t *flag, uint64_t e)
{
    for (int tries = 0; __atomic_load_n(flag, __ATOMIC_ACQUIRE) < e; tries++) {
        if (xchg_coro_inside()) {
            /* the caller's progress loop may touch no MPI call that would
             * yield: give up the core as below, then the coroutine */
            if (tries >= 16)
                sched_yield();
            xchg_poll_idle();
        } else if (tries >= 16)
            sched_yield(); /* ranks may outnumber cores */
        else
            MPI_Win_sync(w->win); /* the unified model: see the peer's store */
    }
    MPI_Win_sync(w->win);
}

void xchg_shm_wait(xchg_shm_window *w, int r, uint64_t e)
{
    wait_word(w, xchg_shm_flag(w, r), e);
}

/* A node synchronisation is a dissemination barrier on flags: in round k
 * each member raises its round-k flag and waits for the member 2^k places
 * before it, so that after ceil(log2 L) rounds, each about one flag's
 * latency, every member knows every other arrived (release and acquire
 * chain the members' writes along). The round flags are the words after
 * the epoch flag in a region's flag lines; larger nodes than they serve
 * read every member's epoch flag in turn (L - 1 latencies). */
enum { SYNC_ROUNDS = XCHG_NODE_SYNC_ROUNDS };
/* the epoch flag, the round flags and (SMPI) a member's mutex and condition */
_Static_assert(sizeof(uint64_t) * (1 + SYNC_ROUNDS) + 2 * sizeof(void *) <= XCHG_SHM_FLAG_BYTES,
               "the node synchronisation's flags fit the flag lines");

static uint64_t *round_flag(const xchg_shm_window *w, int r, int k)
{
    return xchg_shm_flag(w, r) + 1 + k;
}

/* The steps in which the real and the simulated build differ: this
 * rank's epoch published, a round flag stored for the member that waits
 * for it, a round flag waited for, and the serial reads of a node larger
 * than the round flags serve. */
#ifdef XCHG_SMPI
/* (no MPI_Win_sync: SMPI does not implement it, and its ranks share one
 * address space) */
static void publish_epoch(xchg_shm_window *w, uint64_t e)
{
    w->epoch = e;
    __atomic_store_n(xchg_shm_flag(w, w->rank), e, __ATOMIC_RELEASE);
}

/* Stores and wakes the waiter, after this rank's pending charges: the
 * store happens when its work is done. */
static void store_round(xchg_shm_window *w, uint64_t *flag, uint64_t e, int waiter)
{
    xchg_charge_flush();
    sim_wake *k = wake_of(w, waiter);
    sg_mutex_lock(k->m);
    __atomic_store_n(flag, e, __ATOMIC_RELEASE);
    sg_cond_notify_all(k->c);
    sg_mutex_unlock(k->m);
}

/* Asleep on this rank's condition until the word holds v or more (a
 * store that matters wakes it). */
static void sleep_until(xchg_shm_window *w, const uint64_t *word, uint64_t v)
{
    sim_wake *k = wake_of(w, w->rank);
    sg_mutex_lock(k->m);
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < v)
        sg_cond_wait(k->c, k->m);
    sg_mutex_unlock(k->m);
}

static void wait_round(xchg_shm_window *w, const uint64_t *flag, uint64_t e)
{
    sleep_until(w, flag, e);
    xchg_charge_ops(XCHG_OP_FLAG, 1);
}

static void sync_serial(xchg_shm_window *w, uint64_t e)
{
    (void)e;
    MPI_Barrier(w->node); /* the serial reads, their time only */
    xchg_charge_ops(XCHG_OP_FLAG, (size_t)w->P - 1);
}

void xchg_shm_stamp(xchg_shm_window *w, uint64_t *word, uint64_t e)
{
    (void)w;
    xchg_charge_flush();
    __atomic_store_n(word, e, __ATOMIC_RELEASE);
}

int xchg_shm_stamped(xchg_shm_window *w, const uint64_t *word, uint64_t e)
{
    (void)w;
    return __atomic_load_n(word, __ATOMIC_ACQUIRE) >= e;
}

void xchg_shm_announce(xchg_shm_window *w, uint64_t *word, uint64_t v)
{
    xchg_shm_stamp(w, word, v);
    for (int r = 0; r < w->P; r++) {
        sim_wake *k = wake_of(w, r);
        sg_mutex_lock(k->m);
        sg_cond_notify_all(k->c);
        sg_mutex_unlock(k->m);
    }
}

void xchg_shm_await(xchg_shm_window *w, const uint64_t *word, uint64_t v)
{
    xchg_charge_flush(); /* look at this rank's time */
    if (xchg_shm_stamped(w, word, v))
        return; /* already there: read with the data that follows */
    sleep_until(w, word, v);
    xchg_charge_ops(XCHG_OP_FLAG, 1);
}
#else
static void publish_epoch(xchg_shm_window *w, uint64_t e)
{
    xchg_shm_publish(w, e);
}

static void store_round(xchg_shm_window *w, uint64_t *flag, uint64_t e, int waiter)
{
    (void)w, (void)waiter;
    __atomic_store_n(flag, e, __ATOMIC_RELEASE);
}

static void wait_round(xchg_shm_window *w, const uint64_t *flag, uint64_t e)
{
    wait_word(w, flag, e);
}

static void sync_serial(xchg_shm_window *w, uint64_t e)
{
    for (int i = 1; i < w->P; i++)
        xchg_shm_wait(w, (w->rank + i) % w->P, e);
}

void xchg_shm_stamp(xchg_shm_window *w, uint64_t *word, uint64_t e)
{
    MPI_Win_sync(w->win);
    __atomic_store_n(word, e, __ATOMIC_RELEASE);
}

int xchg_shm_stamped(xchg_shm_window *w, const uint64_t *word, uint64_t e)
{
    if (__atomic_load_n(word, __ATOMIC_ACQUIRE) < e)
        return 0;
    MPI_Win_sync(w->win); /* the unified model: see what was written before it */
    return 1;
}

void xchg_shm_announce(xchg_shm_window *w, uint64_t *word, uint64_t v)
{
    xchg_shm_stamp(w, word, v);
}

void xchg_shm_await(xchg_shm_window *w, const uint64_t *word, uint64_t v)
{
    wait_word(w, word, v);
}
#endif

static void sync_by_flags(xchg_shm_window *w, uint64_t e)
{
    publish_epoch(w, e);
    if (w->P > 1 << SYNC_ROUNDS) {
        sync_serial(w, e);
        return;
    }
    for (int k = 0, d = 1; d < w->P; k++, d *= 2) {
        store_round(w, round_flag(w, w->rank, k), e, (w->rank + d) % w->P);
        wait_round(w, round_flag(w, (w->rank - d + w->P) % w->P, k), e);
    }
}

/* ---- node windows: one per node of the layout, for node-aware algorithms ---- */

/* Whether node windows may be made on cs: more than one rank and a window
 * size. Emulated nodes are fine (their ranks share the real node's memory;
 * MPI says where they do not), and so is the SMPI build (its node
 * synchronisation sleeps on SimGrid conditions there). */
static int node_window_possible(const xchg_comm_state *cs)
{
    return (cs->pcomm != MPI_COMM_NULL || cs->bare) && cs->size > 1 &&
           cs->settings.shm_bytes > 0;
}

/* Makes the window on every node (collective over pcomm): the window on
 * the layout's node communicator, then one agreement over pcomm of
 * whether every node has one. */
static int node_window_make(xchg_comm_state *cs, xchg_shm_window *w, MPI_Comm node,
                            size_t half, int no_memory)
{
    int ok = !no_memory && node != MPI_COMM_NULL;
    if (node != MPI_COMM_NULL) {
        w->node = node; /* the layout's: not freed here */
        MPI_Comm_size(node, &w->P);
        MPI_Comm_rank(node, &w->rank);
    }
    /* a node where one rank cannot take part makes no window: agree first */
    int made = !any_failed(cs->pcomm, !ok) && window_make(w, half, cs->settings.max_temp_bytes);
    if (any_failed(cs->pcomm, !made)) {
        if (made)
            window_release(w);
        return 0;
    }
    return 1;
}

static size_t entries_for(size_t table_bytes)
{
    return (table_bytes + sizeof(xchg_shm_entry) - 1) / sizeof(xchg_shm_entry);
}

/* Whether a node window must grow now: for grow_to data bytes, or for a
 * table area of `entries` (node algorithms differ in theirs; the window
 * keeps the largest), unless a region that large was refused before. */
static int node_growth_due(const xchg_shm_window *w, size_t grow_to, size_t entries)
{
    if (!w->usable || (grow_to <= w->half && entries <= w->entries))
        return 0;
    size_t half = grow_to > w->half ? grow_to : w->half;
    size_t ent = entries > w->entries ? entries : w->entries;
    return !(w->refused && stride_for(ent, half) >= w->refused);
}

/* The node window's first half: XCHG_SHM_BYTES where set (or grow_to
 * where larger); else the caller's need where it gives one (grow_to), at
 * least SHM_FIRST_HALF, as the one-node window's (shm_first_half). */
static size_t node_first_half(const xchg_comm_state *cs, size_t grow_to)
{
    size_t set = (size_t)cs->settings.shm_bytes;
    if (cs->settings.shm_bytes_set || grow_to == 0)
        return grow_to > set ? grow_to : set;
    return first_half_for(grow_to);
}

int xchg_node_window_of(xchg_comm_state *cs, MPI_Comm node, size_t table_bytes,
                        size_t grow_to, xchg_shm_window **out)
{
    xchg_shm_window *w = cs->ext[XCHG_EXT_NODE_WINDOW];
    const size_t entries = entries_for(table_bytes);
    *out = NULL;
    if (!w) {
        xchg_shm_window spare;
        xchg_shm_window *use = state_new(&spare, entries);
        size_t half = node_first_half(cs, grow_to);
        if (node_window_possible(cs))
            use->usable = node_window_make(cs, use, node, half, use == &spare);
        w = state_cache(cs, XCHG_EXT_NODE_WINDOW, use, &spare);
    } else if (node_growth_due(w, grow_to, entries)) {
        /* every rank passes the same grow_to and table_bytes: the same
         * decision everywhere; nodes differ in size: grow only where every
         * node fits (agreed) */
        size_t half = grow_to > w->half ? grow_to : w->half;
        size_t ent = entries > w->entries ? entries : w->entries;
        if (any_failed(cs->pcomm, !fits_as(w, ent, half, cs))) {
            w->refused = stride_for(ent, half);
        } else {
            window_release(w);
            w->entries = ent;
            int made = window_make(w, half, cs->settings.max_temp_bytes);
            w->usable = !any_failed(cs->pcomm, !made);
            if (!w->usable && made)
                window_release(w);
        }
    }
    if (w->usable && w->half >= grow_to && w->entries >= entries)
        *out = w;
    return MPI_SUCCESS;
}

int xchg_node_window_ready(const xchg_comm_state *cs, size_t table_bytes, size_t grow_to)
{
    const xchg_shm_window *w = cs->ext[XCHG_EXT_NODE_WINDOW];
    return w && !node_growth_due(w, grow_to, entries_for(table_bytes));
}

int xchg_node_window_usable(const xchg_comm_state *cs)
{
    const xchg_shm_window *w = cs->ext[XCHG_EXT_NODE_WINDOW];
    return w ? w->usable : node_window_possible(cs);
}

void xchg_shm_sync(xchg_shm_window *w, uint64_t e)
{
    sync_by_flags(w, e);
}

int xchg_node_window_for_call(xchg_comm_state *cs, MPI_Comm node, size_t table_bytes,
                              size_t grow_to, xchg_shm_window **out)
{
    const int in_coro = xchg_coro_inside();
    *out = NULL;
#ifdef XCHG_SMPI
    if (in_coro)
        return MPI_SUCCESS; /* SimGrid waits there: blocking only */
#endif
    if (in_coro && !xchg_node_window_ready(cs, table_bytes, grow_to))
        return MPI_SUCCESS;
    return xchg_node_window_of(cs, node, table_bytes, grow_to, out);
}
