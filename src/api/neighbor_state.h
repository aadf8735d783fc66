/*
 * neighbor_state.h - what a communicator keeps for its neighbour exchanges
 * (cs->ext[XCHG_EXT_NEIGHBOR]), shared by the exchange's entry points
 * (neighbor.c) and xchg's own graph communicators (neighbor_graph.c).
 */
#ifndef XCHG_NEIGHBOR_STATE_H
#define XCHG_NEIGHBOR_STATE_H

#include "api.h"
#include "neighbor/neighbor_internal.h"

enum { XCHG_NBR_IDS = 8 }; /* neighbour algorithm ids are below this */

typedef struct xchg_nbr_state {
    xchg_nbr_graph g;
    void *analysis[XCHG_NBR_IDS];  /* each algorithm's analysis of g, by id */
    xchg_neighbor_algo auto_algo;  /* auto's choice, INVALID until made */
    xchg_neighbor_algo auto_polled; /* ... for ineighbor and persistent requests (made with it) */
    unsigned long long auto_printed; /* XCHG_VERBOSE: algorithms auto has named (report.c) */
    int own_graph;  /* g came from xchg_dist_graph_create_adjacent, not from MPI */
    int agreed;     /* a first exchange has agreed its arguments on every rank */
} xchg_nbr_state;

/* An empty state (auto's choice not made), NULL without memory. */
xchg_nbr_state *xchg_nbr_state_new(void);
/* Frees a state and its analyses (an ext_free of xchg_comm_state). */
void xchg_nbr_state_free(void *st);
/* Hands st to cs (freed with the communicator). */
void xchg_nbr_state_keep(xchg_comm_state *cs, xchg_nbr_state *st);
/* 1 if comm is a graph communicator of xchg_dist_graph_create_adjacent
 * (no communication). */
int xchg_nbr_own_graph(MPI_Comm comm);

/* The entry points' shared steps (neighbor.c), for the large-count forms
 * (neighbor_large_count.c): the algorithm a call runs (XCHG_NEIGHBOR_ALGO
 * with from_env); the stats of a finished exchange; a blocking entry's
 * first steps (raised on comm); the int forms themselves (raised). */
int xchg_nbr_resolve_algo(const xchg_settings *s, xchg_neighbor_algo algo, int from_env,
                          xchg_neighbor_algo *out);
void xchg_nbr_record_stats(xchg_comm_state *cs, xchg_neighbor_algo algo, size_t temp_peak);
int xchg_nbr_begin(MPI_Comm comm, xchg_comm_state **cs);
int xchg_nbr_run(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                 const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                 void *recvbuf, const int recvcounts[], const int rdispls[],
                 MPI_Datatype recvtype, MPI_Comm comm);
int xchg_nbr_irun(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                  const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void *recvbuf, const int recvcounts[], const int rdispls[],
                  MPI_Datatype recvtype, MPI_Comm comm, xchg_request *req);
int xchg_nbr_init_run(xchg_neighbor_algo algo, int from_env, const void *sendbuf,
                      const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                      void *recvbuf, const int recvcounts[], const int rdispls[],
                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, xchg_request *req);

#endif /* XCHG_NEIGHBOR_STATE_H */
