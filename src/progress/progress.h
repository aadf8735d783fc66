/*
 * progress.h - src/progress/: nonblocking exchanges as coroutines, the
 * coroutine-aware forms of the blocking MPI calls, and the waits of the
 * algorithms (with the work a layer above may hook into them).
 */
#ifndef XCHG_PROGRESS_H
#define XCHG_PROGRESS_H

#include "core/core.h"

/* Nonblocking exchanges (src/progress/queue.c): fn(arg) runs as a
 * coroutine once the exchanges started before it on cs are complete;
 * started at once as far as it goes. xchg_nb_test and xchg_nb_wait
 * progress every queue; the result is fn's return value. xchg_nb_free
 * only once done. xchg_nb_drain completes everything queued on cs: every
 * other entry point that uses cs->pcomm calls it first. */
int xchg_nb_start(xchg_comm_state *cs, int (*fn)(void *), void *arg, xchg_nb **out);
int xchg_nb_test(xchg_nb *nb, int *done);
int xchg_nb_wait(xchg_nb *nb);
/* The same for an exchange that is either nb or, with nb NULL, already
 * ran blocking and returned rc (no memory for a coroutine, or one that
 * cannot run as one): done at once with rc. */
int xchg_nb_test_or_ran(xchg_nb *nb, int rc, int *done);
int xchg_nb_wait_or_ran(xchg_nb *nb, int rc);
void xchg_nb_free(xchg_nb *nb);
void xchg_nb_drain(xchg_comm_state *cs);

/* The blocking MPI calls of the algorithms (src/progress/block.c): outside a
 * coroutine the MPI call of the same name and signature; inside one (a
 * nonblocking exchange) its nonblocking form, tested with yields between.
 * Algorithms call these, never the blocking MPI forms, so that one
 * implementation serves the blocking and the nonblocking exchange. */
int xchg_mpi_wait(MPI_Request *req, MPI_Status *st);
int xchg_mpi_waitall(int n, MPI_Request req[], MPI_Status st[]);
int xchg_mpi_waitany(int n, MPI_Request req[], int *index, MPI_Status *st);
int xchg_mpi_waitsome(int n, MPI_Request req[], int *outcount, int idx[], MPI_Status st[]);
int xchg_mpi_recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                  MPI_Status *st);
int xchg_mpi_probe(int src, int tag, MPI_Comm comm, MPI_Status *st);
int xchg_mpi_sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag,
                      void *rbuf, int rcount, MPI_Datatype rtype, int src, int rtag,
                      MPI_Comm comm, MPI_Status *st);
int xchg_mpi_allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm);
int xchg_mpi_alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, MPI_Comm comm);
int xchg_mpi_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm);
int xchg_mpi_allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, MPI_Comm comm);
int xchg_mpi_gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                    MPI_Datatype rtype, int root, MPI_Comm comm);
int xchg_mpi_scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int root, MPI_Comm comm);
int xchg_mpi_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                     MPI_Comm comm);
int xchg_mpi_scatterv(const void *sbuf, const int scounts[], const int displs[],
                      MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype, int root,
                      MPI_Comm comm);
/* Under MPICH (which raises completion errors of MPI_Wait and MPI_Test on
 * MPI_COMM_WORLD's handler): MPI_COMM_WORLD's handler returns between
 * xchg_world_errors_return(1) and (0); nestable, thread-safe. Elsewhere a
 * no-op. */
void xchg_world_errors_return(int on);
/* Whether the caller runs in a nonblocking exchange's coroutine
 * (src/progress/coro.h). */
int xchg_coro_inside(void);
/* For a polling loop that found nothing to do: inside a coroutine, hands
 * control back to the caller of xchg_test/xchg_wait until the next
 * resume; outside one, returns at once. */
void xchg_poll_idle(void);

/* A window of sends (src/progress/send_window.c): items 0..n-1 sent in
 * order, at most `slots` in flight. post(arg, i, req) posts item i's send
 * into *req, or leaves *req MPI_REQUEST_NULL where item i sends nothing.
 * The caller gives the memory: req[slots] and ints[2 slots]. start posts
 * the first items; progress frees the slots of completed sends and
 * refills them (*moved: anything happened); done once every item is
 * posted and complete; finish completes what is in flight (after an
 * error elsewhere, before the memory goes). start and progress return the
 * first failure so far: a failed post or send is remembered and the
 * window goes on with the other items. */
typedef int (*xchg_window_post)(void *arg, int item, MPI_Request *req);
typedef struct xchg_send_window {
    MPI_Request *req;
    int *idx, *freeslot;
    int slots, nfree, inflight, next, n;
    int err;
    xchg_window_post post;
    void *arg;
} xchg_send_window;
void xchg_send_window_init(xchg_send_window *w, int slots, int n, MPI_Request *req, int *ints,
                           xchg_window_post post, void *arg);
int xchg_send_window_start(xchg_send_window *w);
int xchg_send_window_progress(xchg_send_window *w, int *moved);
int xchg_send_window_done(const xchg_send_window *w);
void xchg_send_window_finish(xchg_send_window *w);

/* One rank's argument error agreed by one allreduce on pcomm (see
 * xchg_agree_flag): the same error class on every rank. */
int xchg_agree_errors(MPI_Comm pcomm, int rank, int size, int local_err, const char *who);

/* Work that the algorithms' waits progress while their data moves (the
 * automatic choice's nonblocking refresh): armed on a communicator by the
 * layer that owns it (cs->wait_hook), so the waits call nothing above
 * them. start starts it, once (later calls return what the first did);
 * advance moves it on after one of its requests completed, setting *done
 * when it needs no more waiting; poll advances it without waiting;
 * requests are its two requests in flight, which the waits wait on
 * together with theirs. A failure is reported by its owner, not here. */
typedef struct xchg_wait_hook {
    int (*start)(xchg_call *c);
    int (*advance)(xchg_call *c, int *done);
    void (*poll)(xchg_call *c);
    MPI_Request *(*requests)(xchg_call *c);
} xchg_wait_hook;

/* MPI_Waitall for algorithms: while hooked work is armed it waits on the
 * data and the work's requests together (waitany), advancing the work, so
 * it overlaps the exchange; otherwise plain MPI_Waitall. */
int xchg_call_waitall(xchg_call *c, int n, MPI_Request req[]);
/* The same, telling which request failed: on an error either *failed is
 * its index (the hooked wait saw it; the others may still be active) or,
 * *failed being -1, MPI_Waitall's statuses (when not NULL) hold every
 * request's error (MPI_ERR_IN_STATUS). */
int xchg_waitall_statuses(xchg_call *c, int n, MPI_Request req[], MPI_Status statuses[],
                          int *failed);
/* For long posting loops (every XCHG_POLL_EVERY requests posted): starts
 * the armed work and advances it without waiting (usually one MPI_Test),
 * so its rounds go on while the data is posted: each round of auto's
 * refresh waits for a poll on both sides, so polls must come about as
 * often as a round's latency; every 8 posts (1.6 us simulated) measured
 * best at P=64 against 4 and 16 (sim, random 256 B to 1 KiB). No-op
 * otherwise. */
void xchg_poll(xchg_call *c);
#define XCHG_POLL_EVERY 8
/* MPI_Waitany (status ignored) likewise. */
int xchg_waitany(xchg_call *c, int n, MPI_Request req[], int *index);

#endif /* XCHG_PROGRESS_H */
