/*
 * stats.c - the entry points about a communicator's state: xchg_comm_prepare
 * (make it now) and xchg_get_stats (what the last call did); and the state
 * every entry point gets, with the registries' names for the settings.
 */
#include "api.h"
#include "neighbor/neighbor_internal.h"
#include "node/shm_window.h"
#include "sparse/sparse_internal.h"

#include <pthread.h>
#include <string.h>

/* The algorithms' own settings: the alltoallv registry's, the sparse
 * one's, then the neighbour one's, listed once: settings.c asks for them
 * by index in loops over every setting (a first call's check reads them
 * all), and each registry walks its table to find one. */
enum { ALGO_SETTINGS_LISTED = 2 * XCHG_ALGO_SETTINGS_MAX };
static pthread_once_t listed_once = PTHREAD_ONCE_INIT;
static const xchg_setting_def *listed[ALGO_SETTINGS_LISTED + 1];

static void list_settings(void)
{
    const xchg_setting_def *(*const from[])(int) = {
        xchg_registry_setting, xchg_sparse_registry_setting, xchg_neighbor_registry_setting};
    int n = 0;
    for (size_t r = 0; r < sizeof from / sizeof from[0]; r++)
        for (int k = 0; from[r](k) && n < ALGO_SETTINGS_LISTED; k++)
            listed[n++] = from[r](k);
    listed[n] = NULL;
}

static const xchg_setting_def *algo_setting(int i)
{
    pthread_once(&listed_once, list_settings);
    return i >= 0 && i < ALGO_SETTINGS_LISTED ? listed[i] : NULL;
}

static const xchg_algo_names names = {xchg_algo_from_name,          xchg_sparse_algo_from_name,
                                      xchg_algo_name,               xchg_sparse_algo_name,
                                      xchg_neighbor_algo_from_name, xchg_neighbor_algo_name,
                                      xchg_table_checksum,          algo_setting};

const xchg_algo_names *xchg_api_names(void)
{
    return &names;
}

int xchg_api_state(MPI_Comm comm, xchg_comm_state **cs)
{
    return xchg_comm_state_get(comm, &names, cs, NULL);
}

int xchg_comm_prepare(MPI_Comm comm, int *ready)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!ready)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "xchg_comm_prepare: ready is "
                                                "NULL"));
    *ready = 0;
    int P = 0, rc = xchg_check_comm(comm, &P);
    xchg_comm_state *cs = NULL;
    int refused = 0;
    if (rc == MPI_SUCCESS)
        rc = xchg_comm_state_get(comm, &names, &cs, &refused);
    *ready = rc == MPI_SUCCESS;
    /* A refusal of the duplicate is this call's answer, not its error. */
    return rc == MPI_SUCCESS || refused ? MPI_SUCCESS : xchg_raise(comm, rc);
}

int xchg_get_stats(MPI_Comm comm, xchg_stats *stats)
{
    int mpi_rc = xchg_mpi_check(comm); /* first: the running MPI is ours */
    if (mpi_rc != MPI_SUCCESS)
        return mpi_rc;
    if (!stats)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_ARG, "xchg_get_stats: stats is NULL"));
    if (comm == MPI_COMM_NULL)
        return xchg_raise(comm, xchg_error_code(MPI_ERR_COMM, "xchg_get_stats: comm is MPI_COMM_NULL"));
    xchg_comm_state *st = NULL;
    int rc = xchg_comm_state_lookup(comm, &st);
    if (rc != MPI_SUCCESS)
        return xchg_raise(comm, rc);
    if (st) {
        *stats = st->last;
    } else {
        memset(stats, 0, sizeof *stats);
        stats->algo = XCHG_ALGO_INVALID;
        stats->sparse_algo = XCHG_SPARSE_INVALID;
        stats->neighbor_algo = XCHG_NEIGHBOR_INVALID;
    }
    stats->shm_bytes = xchg_shm_bytes_held();
    return MPI_SUCCESS;
}
