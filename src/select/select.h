/*
 * select.h - the automatic choice (src/select/) as the entry points use it.
 */
#ifndef XCHG_SELECT_H
#define XCHG_SELECT_H

#include "alltoallv/algo.h"

/* The automatic choice (src/select/select.c): the same on every rank.
 * xchg_select_alltoallv is for one-shot calls: it returns the choice
 * cached on the communicator and arms a nonblocking refresh from this
 * call's statistics, which xchg_call_waitall progresses and
 * xchg_select_finish completes (call it once the algorithm has run,
 * whatever it returned). xchg_select_alltoallv_now chooses from this
 * call's own statistics, blocking (persistent init). */
int xchg_select_alltoallv(xchg_call *c, xchg_algo *chosen);
int xchg_select_finish(xchg_call *c);
/* A rank that leaves a call without running the algorithm (a local
 * argument error) drops the refresh it armed, before anything was sent. */
void xchg_select_abandon(xchg_call *c);
int xchg_select_alltoallv_now(xchg_call *c, xchg_algo *chosen);
/* The one-time collective setup the automatic choice needs on cs, made
 * at a point every rank reaches together: the node map (auto's first,
 * blocking agreement) and, for nonblocking exchanges (at their start,
 * outside the coroutine), the node-aware algorithms' node communicators
 * where the model may choose them. Nothing is done twice; failures only
 * narrow the choice. A one-node algorithm's setup (shm's window) is its
 * own, made where it first runs blocking. */
void xchg_select_prepare(xchg_comm_state *cs, int nonblocking);
/* Whether a nonblocking start must call xchg_select_prepare first: before
 * the first auto call (the node map),
 * and once for the node-aware algorithms' setup where auto may choose
 * them (from XCHG_AUTO_MIN_P ranks, and below where the communicator
 * follows a tuning table). The same on every rank. */
int xchg_select_prepares(const xchg_comm_state *cs);

/* The neighbour exchange's auto (model_neighbor.c): the modelled seconds
 * per rank of direct and locality on a graph whose statistics locality's
 * analysis agreed, so every rank gets the same two numbers; polled: for an
 * ineighbor or persistent request (locality then polls its probes). */
struct xchg_nbr_stats;
void xchg_model_neighbor(const struct xchg_nbr_stats *s, int polled, double *direct,
                         double *locality);
/* The tuning table's key on this rank (XCHG_TUNING_FILE's checksum, as a
 * double that reductions keep exact; 0: no table): what a neighbour
 * census agrees so that xchg_model_neighbor takes the table's constants
 * only where every rank read the same table. */
double xchg_table_key(void);
/* rank0: says on stderr why this process's table cannot be used, once per
 * process and file (every family that reads the table calls it). */
void xchg_table_warn(int rank0);

#endif /* XCHG_SELECT_H */
