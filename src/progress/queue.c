/*
 * queue.c - running exchanges in the background: the queue of
 * coroutines (coro.h) behind xchg_ialltoallv and persistent starts.
 *
 * One queue per communicator: an exchange starts running once the ones
 * started before it on the same communicator are complete. Every rank
 * starts them in the same order, so each exchange sees the same earlier
 * traffic everywhere: tags, auto's refresh and the collectives on the
 * private communicator never interleave between two exchanges (MPI orders
 * nonblocking collectives on a communicator the same way), and a blocking
 * call on the communicator first completes what is queued (xchg_nb_drain).
 * Different communicators progress side by side.
 *
 * Progress: xchg_test and xchg_wait of any nonblocking request resume the
 * head of every queue (not only their own exchange, so that waiting for
 * one exchange never starves another that a partner waits for); a start
 * runs its exchange at once as far as it goes without waiting (its sends
 * are posted before it returns).
 */
#include "progress.h"
#include "coro.h"

#include <pthread.h>
#include <stdlib.h>

/* Stack of a coroutine: the algorithms keep little on the stack, MPI's
 * progress engine more; pages are only touched as used. */
#define NB_STACK_BYTES (1u << 20)

struct xchg_nb {
    xchg_coro *co;
    xchg_comm_state *cs;
    struct xchg_nb *next_in_comm; /* the comm's queue */
    struct xchg_nb *next, *prev;  /* all unfinished exchanges */
    int running;                  /* resumed by some thread now */
    int co_passed;                /* resumed in this progress pass */
    int done;
    int rc;
};

static pthread_mutex_t nb_lock = PTHREAD_MUTEX_INITIALIZER;
static xchg_nb *nb_all; /* unfinished, in start order */

static void unlink_all(xchg_nb *nb)
{
    if (nb->prev)
        nb->prev->next = nb->next;
    else
        nb_all = nb->next;
    if (nb->next)
        nb->next->prev = nb->prev;
    nb->next = nb->prev = NULL;
}

/* Resumes the head of every queue once (heads that finish hand over to the
 * next in their queue, which runs in the same pass). */
static void progress_all(void)
{
    for (;;) {
        xchg_nb *pick = NULL;
        pthread_mutex_lock(&nb_lock);
        for (xchg_nb *nb = nb_all; nb; nb = nb->next)
            if (!nb->running && !nb->done && nb->cs->nb_head == nb && !nb->co_passed) {
                pick = nb;
                break;
            }
        if (pick)
            pick->running = 1;
        pthread_mutex_unlock(&nb_lock);
        if (!pick)
            break;
        int done = xchg_coro_resume(pick->co);
        pthread_mutex_lock(&nb_lock);
        pick->running = 0;
        pick->co_passed = 1; /* once per pass */
        if (done) {
            pick->done = 1;
            pick->rc = xchg_coro_result(pick->co);
            pick->cs->nb_head = pick->next_in_comm;
            if (!pick->cs->nb_head)
                pick->cs->nb_tail = NULL;
            unlink_all(pick);
        }
        pthread_mutex_unlock(&nb_lock);
    }
    pthread_mutex_lock(&nb_lock);
    for (xchg_nb *nb = nb_all; nb; nb = nb->next)
        nb->co_passed = 0;
    pthread_mutex_unlock(&nb_lock);
}

int xchg_nb_start(xchg_comm_state *cs, int (*fn)(void *), void *arg, xchg_nb **out)
{
    *out = NULL;
    xchg_nb *nb = calloc(1, sizeof *nb);
    xchg_coro *co = nb ? xchg_coro_create(fn, arg, NB_STACK_BYTES) : NULL;
    if (!co) {
        free(nb);
        return xchg_error_code(MPI_ERR_NO_MEM, "out of memory for a nonblocking exchange's "
                               "state and stack (%u bytes)", NB_STACK_BYTES);
    }
    nb->co = co;
    nb->cs = cs;
    pthread_mutex_lock(&nb_lock);
    if (cs->nb_tail)
        cs->nb_tail->next_in_comm = nb;
    else
        cs->nb_head = nb;
    cs->nb_tail = nb;
    xchg_nb **tail = &nb_all;
    xchg_nb *prev = NULL;
    while (*tail) {
        prev = *tail;
        tail = &(*tail)->next;
    }
    nb->prev = prev;
    *tail = nb;
    pthread_mutex_unlock(&nb_lock);
    *out = nb;
    progress_all(); /* post what can be posted now */
    return MPI_SUCCESS;
}

int xchg_nb_test(xchg_nb *nb, int *done)
{
    if (!nb->done)
        progress_all();
    *done = nb->done;
    return nb->done ? nb->rc : MPI_SUCCESS;
}

int xchg_nb_wait(xchg_nb *nb)
{
    while (!nb->done)
        progress_all();
    return nb->rc;
}

int xchg_nb_test_or_ran(xchg_nb *nb, int rc, int *done)
{
    if (nb)
        return xchg_nb_test(nb, done);
    *done = 1;
    return rc;
}

int xchg_nb_wait_or_ran(xchg_nb *nb, int rc)
{
    return nb ? xchg_nb_wait(nb) : rc;
}

void xchg_nb_free(xchg_nb *nb)
{
    if (!nb)
        return;
    xchg_coro_destroy(nb->co);
    free(nb);
}

void xchg_nb_drain(xchg_comm_state *cs)
{
    while (cs->nb_head)
        progress_all();
}
