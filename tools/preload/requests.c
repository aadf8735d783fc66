/*
 * requests.c - the preload's nonblocking and persistent exchanges:
 * MPI_Ialltoallv(_c) served by xchg_ialltoallv(_c), MPI_Alltoallv_init(_c)
 * by xchg_alltoallv_init(_c), MPI_Ineighbor_alltoallv(_c) and (MPI-4)
 * MPI_Neighbor_alltoallv_init(_c) by their xchg forms, and the MPI_Request
 * calls that must then know xchg's requests (MPI_Start(all), MPI_Wait/Test and their
 * all/any/some forms, MPI_Request_free, MPI_Request_get_status).
 *
 * The application holds an MPI_Request, so each xchg request gets a real
 * one to stand for it: a generalized request (MPI_Grequest_start, standard
 * in both MPIs) that MPI itself never completes while it stands for the
 * exchange. Every request call here first looks its requests up among the
 * stand-ins (a small table; with none outstanding it costs one load and
 * goes straight to PMPI_), handles those itself (xchg_test/xchg_wait:
 * xchg's exchanges progress when the application tests or waits, as MPI's
 * do) and hands the others to MPI with the stand-ins masked as
 * MPI_REQUEST_NULL. MPICH's MPIX_Grequest_start with a poll function
 * would spare the interception, but Open MPI 4.1 has no equivalent.
 *
 * States of an entry: ACTIVE (xchg's exchange running), DONE (xchg
 * finished it, the application has not been told yet: MPI_Testall may
 * report nothing until all are complete) and, for persistent ones,
 * INACTIVE. Completion (told to the application) frees a nonblocking
 * entry and its stand-in and sets the handle to MPI_REQUEST_NULL; a
 * persistent one becomes INACTIVE and keeps its handle, as MPI's do.
 * Statuses of completed exchanges are empty (MPI defines only MPI_ERROR
 * for collectives); errors are raised by xchg through the communicator's
 * error handler and returned, with MPI_ERR_IN_STATUS for the multiple
 * forms.
 */
#include "preload.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef enum { ST_ACTIVE, ST_DONE, ST_INACTIVE } entry_state;

typedef struct entry {
    MPI_Request handle; /* the stand-in the application holds */
    xchg_request xr;
    MPI_Comm comm;
    int persistent;
    entry_state state;
    int rc; /* ST_DONE: the exchange's result */
    preload_entry counted_as;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry **table;
static int used, cap;
static int outstanding; /* entries in the table; read without the lock for the fast path */

static int any_entries(void)
{
    return __atomic_load_n(&outstanding, __ATOMIC_ACQUIRE) > 0;
}

static entry *find(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL)
        return NULL;
    entry *e = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < used; i++)
        if (table[i]->handle == h) {
            e = table[i];
            break;
        }
    pthread_mutex_unlock(&lock);
    return e;
}

static int insert(entry *e)
{
    pthread_mutex_lock(&lock);
    if (used == cap) {
        int ncap = cap ? 2 * cap : 16;
        entry **t = realloc(table, sizeof *t * (size_t)ncap);
        if (!t) {
            pthread_mutex_unlock(&lock);
            return 0;
        }
        table = t;
        cap = ncap;
    }
    table[used++] = e;
    __atomic_store_n(&outstanding, used, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
    return 1;
}

static void remove_entry(entry *e)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < used; i++)
        if (table[i] == e) {
            table[i] = table[--used];
            break;
        }
    __atomic_store_n(&outstanding, used, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

/* The stand-in's callbacks: MPI calls query_fn when the stand-in is
 * completed at the entry's end, never for an exchange's status. */
static int standin_query(void *extra, MPI_Status *st)
{
    (void)extra;
    PMPI_Status_set_elements(st, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    return MPI_SUCCESS;
}

static int standin_free(void *extra)
{
    (void)extra;
    return MPI_SUCCESS;
}

static int standin_cancel(void *extra, int complete)
{
    /* cancelling a collective is erroneous in MPI; nothing to undo */
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

/* A table entry standing for xr; MPI_SUCCESS or an MPI error (xr is then
 * still the caller's). */
static int entry_make(xchg_request xr, MPI_Comm comm, int persistent, preload_entry as,
                      MPI_Request *handle)
{
    entry *e = calloc(1, sizeof *e);
    if (!e)
        return MPI_ERR_NO_MEM;
    int rc = PMPI_Grequest_start(standin_query, standin_free, standin_cancel, NULL, &e->handle);
    if (rc != MPI_SUCCESS) {
        free(e);
        return rc;
    }
    e->xr = xr;
    e->comm = comm;
    e->persistent = persistent;
    e->state = persistent ? ST_INACTIVE : ST_ACTIVE;
    e->counted_as = as;
    if (!insert(e)) {
        PMPI_Grequest_complete(e->handle);
        PMPI_Request_free(&e->handle);
        free(e);
        return MPI_ERR_NO_MEM;
    }
    *handle = e->handle;
    return MPI_SUCCESS;
}

static void entry_destroy(entry *e)
{
    remove_entry(e);
    PMPI_Grequest_complete(e->handle);
    PMPI_Request_free(&e->handle);
    free(e);
}

/* xchg's calls made from here run their own MPI request calls, which come
 * back through this file: they go straight to MPI. */
static _Thread_local int inside;

/* Advances an active entry: DONE once xchg reports the exchange complete. */
static void progress(entry *e, int block)
{
    if (e->state != ST_ACTIVE)
        return;
    inside++;
    if (block) {
        e->rc = xchg_wait(e->xr);
        e->state = ST_DONE;
    } else {
        int flag = 0;
        int rc = xchg_test(e->xr, &flag);
        if (flag || rc != MPI_SUCCESS) {
            e->rc = rc;
            e->state = ST_DONE;
        }
    }
    inside--;
}

static void empty_status(MPI_Status *st, int err)
{
    if (st == MPI_STATUS_IGNORE)
        return;
    standin_query(NULL, st);
    st->MPI_ERROR = err;
}

/* Counts a DONE entry's exchange, under the algorithm that ran. */
static void count_done(const entry *e)
{
    xchg_algo ran = !preload_is_neighbor(e->counted_as)
                        ? xchg_request_algo(e->xr)
                        : (xchg_algo)xchg_request_neighbor_algo(e->xr);
    preload_count_served(e->counted_as, e->rc == MPI_SUCCESS ? ran : XCHG_ALGO_INVALID);
}

/* Tells the application a DONE entry is complete: its result; the handle
 * becomes MPI_REQUEST_NULL (nonblocking) or stays, inactive (persistent).
 * The exchange is counted now, under the algorithm that ran. */
static int report(entry *e, MPI_Request *handle)
{
    int rc = e->rc;
    count_done(e);
    if (e->persistent) {
        e->state = ST_INACTIVE;
        return rc;
    }
    inside++;
    xchg_request_free(&e->xr);
    inside--;
    entry_destroy(e);
    *handle = MPI_REQUEST_NULL;
    return rc;
}

/* ---------------------------------------------------------------- starts */

/* Whether xchg takes a call that came in at entry `as`; if not, counts
 * why (MPICH's f08 bindings, a NULL request, or preload_route's reason)
 * and the caller forwards it to MPI. */
static int takes(preload_entry as, const MPI_Request *request, MPI_Comm comm)
{
    preload_reason why = REASON_F08_WAIT;
    if (as != ENTRY_F08_REQUEST && as != ENTRY_NEIGHBOR_F08_REQUEST && request &&
        (preload_is_neighbor(as) ? preload_route_neighbor(comm, &why)
                                 : preload_route(comm, &why)))
        return 1;
    preload_count_fell(as, request || as == ENTRY_F08_REQUEST || as == ENTRY_NEIGHBOR_F08_REQUEST
                               ? why
                               : REASON_NULL_ARG);
    return 0;
}

/* An xchg request made (xr) or not (rc), given its stand-in in *request. */
static int stand_in(preload_entry as, int rc, xchg_request xr, MPI_Comm comm, int persistent,
                    MPI_Request *request)
{
    if (rc != MPI_SUCCESS) {
        preload_count_served(as, XCHG_ALGO_INVALID);
        return rc;
    }
    /* auto passed a new communicator's call to MPI's own: the application
     * gets MPI's request itself, no stand-in */
    if (!persistent && xchg_request_to_mpi(&xr, request)) {
        preload_count_fell(as, REASON_BEFORE_SETUP);
        return MPI_SUCCESS;
    }
    rc = entry_make(xr, comm, persistent, as, request);
    if (rc != MPI_SUCCESS) {
        /* no stand-in: a started exchange completes here (every rank takes
         * part either way) and this rank reports the lack of memory */
        inside++;
        if (!persistent)
            xchg_wait(xr);
        xchg_request_free(&xr);
        inside--;
        if (!persistent)
            preload_count_served(as, XCHG_ALGO_INVALID);
    }
    return rc;
}

int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NONBLOCKING);
    if (!takes(as, request, comm))
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm, request);
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                             rdispls, recvtype, comm, &xr);
    return stand_in(as, rc, xr, comm, 0, request);
}

#if MPI_VERSION >= 4 /* MPI_Alltoallv_init is MPI-4 (MPICH 4; Open MPI 4.1 has MPIX_) */
int MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                       MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                       const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_PERSISTENT);
    if (!takes(as, request, comm))
        return PMPI_Alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, info, request);
    /* info: MPI's hints for MPI's own algorithms; xchg takes none */
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, MPI_INFO_NULL, &xr);
    return stand_in(as, rc, xr, comm, 1, request);
}
#endif

int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NEIGHBOR_NONBLOCKING);
    if (!takes(as, request, comm))
        return PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype, comm, request);
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                      recvcounts, rdispls, recvtype, comm, &xr);
    return stand_in(as, rc, xr, comm, 0, request);
}

#if MPI_VERSION >= 4 /* MPI_Neighbor_alltoallv_init is MPI-4: MPICH 4, not Open MPI 4.1 */
int MPI_Neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                const int recvcounts[], const int rdispls[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NEIGHBOR_PERSISTENT);
    if (!takes(as, request, comm))
        return PMPI_Neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype, comm, info, request);
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_neighbor_alltoallv_init(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL,
                                          &xr);
    return stand_in(as, rc, xr, comm, 1, request);
}
#endif

#if XCHG_HAVE_LARGE_COUNT
int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NONBLOCKING);
    if (!takes(as, request, comm))
        return PMPI_Ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                 rdispls, recvtype, comm, request);
    /* counts beyond int on some rank: xchg agrees on it inside the
     * exchange and hands it to MPI_Ialltoallv_c itself (counted as served
     * by "vendor": xchg_stats.passed_to_mpi) */
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_ialltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                               rdispls, recvtype, comm, &xr);
    return stand_in(as, rc, xr, comm, 0, request);
}

int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                         const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                         const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_PERSISTENT);
    if (!takes(as, request, comm))
        return PMPI_Alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                     recvcounts, rdispls, recvtype, comm, info, request);
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
                                   rdispls, recvtype, comm, MPI_INFO_NULL, &xr);
    return stand_in(as, rc, xr, comm, 1, request);
}

int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                              const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                              const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NEIGHBOR_NONBLOCKING);
    if (!takes(as, request, comm))
        return PMPI_Ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                          recvcounts, rdispls, recvtype, comm, request);
    /* counts beyond int: xchg agrees on it and hands the exchange to
     * MPI_Ineighbor_alltoallv_c itself (xchg_stats.passed_to_mpi) */
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_ineighbor_alltoallv_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                        recvcounts, rdispls, recvtype, comm, &xr);
    return stand_in(as, rc, xr, comm, 0, request);
}

int MPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                  const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                  void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    preload_entry as = preload_entry_of(ENTRY_NEIGHBOR_PERSISTENT);
    if (!takes(as, request, comm))
        return PMPI_Neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                              recvcounts, rdispls, recvtype, comm, info,
                                              request);
    xchg_request xr = XCHG_REQUEST_NULL;
    int rc = xchg_neighbor_alltoallv_init_c(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                                            recvcounts, rdispls, recvtype, comm, MPI_INFO_NULL,
                                            &xr);
    return stand_in(as, rc, xr, comm, 1, request);
}
#endif

static int start_one(MPI_Request *h)
{
    entry *e = any_entries() && !inside ? find(*h) : NULL;
    if (!e)
        return PMPI_Start(h);
    if (e->state != ST_INACTIVE) /* MPI's error: starting an active request */
        return PMPI_Start(h);     /* (the stand-in is an active generalized request) */
    inside++;
    int rc = xchg_start(e->xr);
    inside--;
    if (rc == MPI_SUCCESS)
        e->state = ST_ACTIVE;
    return rc;
}

int MPI_Start(MPI_Request *request)
{
    if (!request || !any_entries() || inside)
        return PMPI_Start(request);
    return start_one(request);
}

int MPI_Startall(int count, MPI_Request requests[])
{
    if (!any_entries() || inside || count <= 0 || !requests)
        return PMPI_Startall(count, requests);
    /* one at a time, in order: what MPI_Startall means */
    for (int i = 0; i < count; i++) {
        int rc = start_one(&requests[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ------------------------------------------------------ single requests */

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    entry *e = request && any_entries() && !inside ? find(*request) : NULL;
    if (!e)
        return PMPI_Wait(request, status);
    if (e->state == ST_INACTIVE) {
        empty_status(status, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    progress(e, 1);
    empty_status(status, e->rc);
    return report(e, request);
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    entry *e = request && flag && any_entries() && !inside ? find(*request) : NULL;
    if (!e)
        return PMPI_Test(request, flag, status);
    if (e->state == ST_INACTIVE) {
        *flag = 1;
        empty_status(status, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    progress(e, 0);
    *flag = e->state == ST_DONE;
    if (!*flag)
        return MPI_SUCCESS;
    empty_status(status, e->rc);
    return report(e, request);
}

int MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    entry *e = flag && any_entries() && !inside ? find(request) : NULL;
    if (!e)
        return PMPI_Request_get_status(request, flag, status);
    progress(e, 0);
    *flag = e->state != ST_ACTIVE;
    if (*flag)
        empty_status(status, e->state == ST_DONE ? e->rc : MPI_SUCCESS);
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *request)
{
    entry *e = request && any_entries() && !inside ? find(*request) : NULL;
    if (!e)
        return PMPI_Request_free(request);
    /* MPI lets an active request be freed and complete later; xchg's
     * exchange needs this rank's progress, so it completes here */
    progress(e, 1);
    if (e->state == ST_DONE)
        count_done(e);
    inside++;
    int rc = xchg_request_free(&e->xr);
    inside--;
    entry_destroy(e);
    *request = MPI_REQUEST_NULL;
    return rc;
}

/* ---------------------------------------------------- multiple requests */

/* The entries among n requests (NULL where a request is MPI's), and a copy
 * of the array with them masked as MPI_REQUEST_NULL; 0 if there are none
 * (or no memory: then MPI sees the stand-ins, and they never complete
 * there, which is why the copy is checked). */
typedef struct scan {
    entry **ours;
    MPI_Request *masked;
    int any;
} scan;

static int scan_make(int n, const MPI_Request req[], scan *s)
{
    s->ours = NULL;
    s->masked = NULL;
    s->any = 0;
    if (n <= 0 || !req || !any_entries() || inside)
        return MPI_SUCCESS;
    for (int i = 0; i < n && !s->any; i++)
        s->any = find(req[i]) != NULL;
    if (!s->any)
        return MPI_SUCCESS;
    s->ours = calloc((size_t)n, sizeof *s->ours);
    s->masked = malloc(sizeof *s->masked * (size_t)n);
    if (!s->ours || !s->masked) {
        free(s->ours);
        free(s->masked);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        s->ours[i] = find(req[i]);
        s->masked[i] = s->ours[i] ? MPI_REQUEST_NULL : req[i];
    }
    return MPI_SUCCESS;
}

static void scan_free(scan *s)
{
    free(s->ours);
    free(s->masked);
}

/* MPI's requests back into the caller's array (MPI may have completed and
 * freed some): every slot that is not one of ours. */
static void scan_unmask(int n, MPI_Request req[], const scan *s)
{
    for (int i = 0; i < n; i++)
        if (!s->ours[i])
            req[i] = s->masked[i];
}

static MPI_Status *status_at(MPI_Status st[], int i)
{
    return st == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &st[i];
}

/* The result of a multiple completion: MPI's, or MPI_ERR_IN_STATUS if one
 * of ours failed (then every reported status carries its MPI_ERROR). */
static int merge_rc(int mpi_rc, int ours_failed)
{
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc == MPI_ERR_IN_STATUS || !ours_failed ? mpi_rc : MPI_ERR_IN_STATUS;
    return ours_failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* Reports the entries DONE among the n (Testsome's order: their indices
 * and statuses appended at *outcount); returns whether one failed. */
static int report_done(int n, MPI_Request req[], const scan *s, MPI_Status st[], int *outcount,
                       int idx[])
{
    int failed = 0;
    for (int i = 0; i < n; i++) {
        entry *e = s->ours[i];
        if (!e || e->state != ST_DONE)
            continue;
        MPI_Status *sti = status_at(st, *outcount);
        empty_status(sti, e->rc);
        if (report(e, &req[i]) != MPI_SUCCESS)
            failed = 1;
        idx[(*outcount)++] = i;
    }
    return failed;
}

/* Waitall/Testall once all of ours are DONE or inactive and MPI's
 * completed with mpi_rc: reports ours in their slots (inactive ones get
 * an empty status); if one failed and MPI's did not, MPI's statuses get
 * MPI_SUCCESS, as MPI_ERR_IN_STATUS requires. */
static int complete_all(int count, MPI_Request requests[], const scan *s, MPI_Status st[],
                        int mpi_rc)
{
    int failed = 0;
    for (int i = 0; i < count; i++) {
        entry *e = s->ours[i];
        if (!e)
            continue;
        empty_status(status_at(st, i), e->state == ST_INACTIVE ? MPI_SUCCESS : e->rc);
        if (e->state != ST_INACTIVE && report(e, &requests[i]) != MPI_SUCCESS)
            failed = 1;
    }
    if (failed && mpi_rc == MPI_SUCCESS && st != MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++)
            if (!s->ours[i])
                st[i].MPI_ERROR = MPI_SUCCESS;
    return merge_rc(mpi_rc, failed);
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    scan s;
    int rc = scan_make(count, requests, &s);
    if (rc != MPI_SUCCESS || !s.any)
        return rc != MPI_SUCCESS ? rc : PMPI_Waitall(count, requests, statuses);
    /* ours first: their progress is xchg's (whose MPI calls progress MPI's
     * requests too), then MPI's own */
    for (int i = 0; i < count; i++)
        if (s.ours[i])
            progress(s.ours[i], 1);
    rc = PMPI_Waitall(count, s.masked, statuses);
    scan_unmask(count, requests, &s);
    rc = complete_all(count, requests, &s, statuses, rc);
    scan_free(&s);
    return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    scan s;
    int rc = flag ? scan_make(count, requests, &s) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS || !flag || !s.any)
        return rc != MPI_SUCCESS ? rc : PMPI_Testall(count, requests, flag, statuses);
    int all_ours = 1;
    for (int i = 0; i < count; i++)
        if (s.ours[i]) {
            progress(s.ours[i], 0);
            all_ours &= s.ours[i]->state != ST_ACTIVE;
        }
    *flag = 0;
    if (!all_ours) {
        /* nothing may complete unless all do: MPI's requests are only
         * progressed (xchg_test called MPI) */
        scan_free(&s);
        return MPI_SUCCESS;
    }
    rc = PMPI_Testall(count, s.masked, flag, statuses);
    scan_unmask(count, requests, &s);
    if (*flag)
        rc = complete_all(count, requests, &s, statuses, rc);
    scan_free(&s);
    return rc;
}

/* Testany over ours and MPI's: *index is MPI_UNDEFINED with *flag set
 * only when every request is null or inactive. */
static int testany(int count, MPI_Request requests[], scan *s, int *index, int *flag,
                   MPI_Status *status)
{
    int pending = 0;
    for (int i = 0; i < count; i++) {
        entry *e = s->ours[i];
        if (!e)
            continue;
        progress(e, 0);
        if (e->state == ST_DONE) {
            *index = i;
            *flag = 1;
            empty_status(status, e->rc);
            return report(e, &requests[i]);
        }
        pending |= e->state == ST_ACTIVE;
    }
    int rc = PMPI_Testany(count, s->masked, index, flag, status);
    scan_unmask(count, requests, s);
    if (rc == MPI_SUCCESS && *flag && *index == MPI_UNDEFINED && pending)
        *flag = 0; /* ours are still running */
    return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    scan s;
    int rc = index && flag ? scan_make(count, requests, &s) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS || !index || !flag || !s.any)
        return rc != MPI_SUCCESS ? rc : PMPI_Testany(count, requests, index, flag, status);
    rc = testany(count, requests, &s, index, flag, status);
    scan_free(&s);
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    scan s;
    int rc = index ? scan_make(count, requests, &s) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS || !index || !s.any)
        return rc != MPI_SUCCESS ? rc : PMPI_Waitany(count, requests, index, status);
    int flag = 0;
    do
        rc = testany(count, requests, &s, index, &flag, status);
    while (rc == MPI_SUCCESS && !flag);
    scan_free(&s);
    return rc;
}

/* Testsome over ours and MPI's. */
static int testsome(int incount, MPI_Request requests[], scan *s, int *outcount, int idx[],
                    MPI_Status st[])
{
    int pending = 0;
    for (int i = 0; i < incount; i++)
        if (s->ours[i]) {
            progress(s->ours[i], 0);
            pending |= s->ours[i]->state != ST_INACTIVE;
        }
    int n = 0;
    int failed = report_done(incount, requests, s, st, &n, idx);
    /* MPI's completions after ours, in the arrays' remaining slots */
    int mo = 0;
    int rc = PMPI_Testsome(incount, s->masked, &mo, idx + n,
                           st == MPI_STATUSES_IGNORE ? MPI_STATUSES_IGNORE : st + n);
    scan_unmask(incount, requests, s);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
        *outcount = n;
        return rc;
    }
    if (mo == MPI_UNDEFINED)
        *outcount = n || pending ? n : MPI_UNDEFINED;
    else
        *outcount = n + mo;
    if (failed && rc == MPI_SUCCESS && st != MPI_STATUSES_IGNORE)
        for (int k = n; k < *outcount; k++)
            st[k].MPI_ERROR = MPI_SUCCESS;
    return merge_rc(rc, failed);
}

int MPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    scan s;
    int rc = outcount && indices ? scan_make(incount, requests, &s) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS || !outcount || !indices || !s.any)
        return rc != MPI_SUCCESS
                   ? rc
                   : PMPI_Testsome(incount, requests, outcount, indices, statuses);
    rc = testsome(incount, requests, &s, outcount, indices, statuses);
    scan_free(&s);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                 MPI_Status statuses[])
{
    scan s;
    int rc = outcount && indices ? scan_make(incount, requests, &s) : MPI_SUCCESS;
    if (rc != MPI_SUCCESS || !outcount || !indices || !s.any)
        return rc != MPI_SUCCESS
                   ? rc
                   : PMPI_Waitsome(incount, requests, outcount, indices, statuses);
    do
        rc = testsome(incount, requests, &s, outcount, indices, statuses);
    while ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && *outcount == 0);
    scan_free(&s);
    return rc;
}
