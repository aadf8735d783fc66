/*
 * select.h - the automatic choice (src/select/) as the entry points use it.
 */
#ifndef XCHG_SELECT_H
#define XCHG_SELECT_H

#include "alltoallv/algo.h"

/* The automatic choice (src/select/select.c): the same on every rank.
 * xchg_select_run is a one-shot call's whole scope: with *algo
 * XCHG_ALGO_AUTO it takes the choice cached on the communicator (or
 * agrees one, blocking), runs it with a nonblocking refresh from this
 * call's statistics armed (xchg_call_waitall progresses it), and
 * completes that refresh before returning, so no call can leave one
 * open; any other *algo it just runs. failing: the call carries this
 * rank's argument error (c->arg_err, empty blocks): only an algorithm
 * whose agreement carries it runs, else the refresh is dropped before
 * anything is sent and c->arg_err returned. *algo gets the choice.
 * xchg_select_alltoallv_now chooses from this call's own statistics,
 * blocking (persistent init). */
int xchg_select_run(xchg_call *c, xchg_algo *algo, int failing);
/* The verdict (select.c) times a communicator's whole blocking auto
 * calls, entry to return, so the entry reads the clock while any
 * communicator is being judged: xchg_select_clock() is MPI_Wtime() then,
 * else 0; xchg_select_call_done(cs, t0) after the call, which keeps the
 * whole call's time in place of the algorithm's where this call was
 * timed (t0 > 0). */
extern _Atomic int xchg_select_judged;
static inline double xchg_select_clock(void)
{
    return xchg_select_judged > 0 ? MPI_Wtime() : 0.0;
}
void xchg_select_call_done(xchg_comm_state *cs, double t0);
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
 * per rank of direct, locality and locality_shm on a graph whose statistics locality's
 * analysis agreed, so every rank gets the same two numbers; polled: for an
 * ineighbor or persistent request (locality then polls its probes). */
struct xchg_nbr_stats;
void xchg_model_neighbor(const struct xchg_nbr_stats *s, int polled, double *direct,
                         double *locality, double *shm);
/* Whether locality_shm is the model's cheapest on s for blocking calls,
 * its window assumed (auto then makes its analysis). */
int xchg_model_neighbor_shm_wins(const struct xchg_nbr_stats *s);
/* Neighbour auto (model_neighbor.c), once per communicator, from
 * locality's agreed statistics s (its census agrees the tuning table
 * too): the table's neighbor rule for cs's P where every rank reads the
 * same table (*line its line; XCHG_NEIGHBOR_INVALID: none), which the
 * caller takes once the rule's analysis is made (xchg_select_neighbor_ruled
 * reports it); else xchg_select_neighbor: the model's choice for blocking
 * calls (*algo) and polled ones (*polled), reported, locality_shm among
 * them where shm (its window made). *printed: the
 * communicator's record of what was reported. */
xchg_neighbor_algo xchg_select_neighbor_rule(const xchg_comm_state *cs,
                                             const struct xchg_nbr_stats *s, int *line);
void xchg_select_neighbor_ruled(const xchg_comm_state *cs, unsigned long long *printed,
                                xchg_neighbor_algo algo, int line);
void xchg_select_neighbor(const xchg_comm_state *cs, const struct xchg_nbr_stats *s, int shm,
                          unsigned long long *printed, xchg_neighbor_algo *algo,
                          xchg_neighbor_algo *polled);
/* Checksum of the table XCHG_TUNING_FILE names (0: none, or it cannot be
 * read or parsed): what a communicator's settings agree (core's
 * xchg_algo_names.table_checksum). */
unsigned long long xchg_table_checksum(void);
/* The tuning table's key on this rank (XCHG_TUNING_FILE's checksum, as a
 * double that reductions keep exact; 0: no table): what a neighbour
 * census agrees so that xchg_model_neighbor takes the table's constants
 * only where every rank read the same table. */
double xchg_table_key(void);
/* The key of a checksum (what xchg_table_key gives for that table). */
double xchg_table_key_of(unsigned long long checksum);

/* rank0: says on stderr why this process's table cannot be used, once per
 * process and file (every family that reads the table calls it). */
void xchg_table_warn(int rank0);

/* XCHG_VERBOSE's report of an automatic choice, one format and one rule
 * for every family (report.c). Whether rank 0 reports choosing algo now
 * (changed: it differs from the communicator's previous choice);
 * *printed, a bit per algorithm id already named on the communicator,
 * kept by the family's state, gets algo's. */
int xchg_report_due(unsigned long long *printed, const xchg_comm_state *cs, int algo,
                    int changed);
/* Prints "xchg: [FAMILY ]auto chose NAME on P=N" and then why (a printf
 * format; it starts with its own separator, " (" or ": "). */
void xchg_report_choice(const char *family, const char *name, int P, const char *why, ...)
    __attribute__((format(printf, 4, 5)));

/* Sparse auto (sparse_rules.c): the first of its measured rules that
 * applies on cs's P given ss's last census; *why names it. The same on
 * every rank (the census is a collective's result; the node layout a rule
 * may ask for is made collectively on first use). No collective of its
 * own: a tuning table's sparse rule applies where the communicator's
 * settings agreed the table (core's xchg_settings.table_checksum). */
struct xchg_sparse_state;
xchg_sparse_algo xchg_select_sparse(xchg_comm_state *cs, struct xchg_sparse_state *ss,
                                    char *why, size_t whylen);

/* The large-count entry's own arrays (xchg_alltoallv_c): a call passed
 * through is MPI_Alltoallv_c with them; the int copies (values beyond int
 * as 0) give the check its statistics. arg_err: this rank's error found
 * converting them (a negative count), else MPI_SUCCESS. */
typedef struct xchg_phase_large {
    const MPI_Count *sendcounts, *recvcounts;
    const MPI_Aint *sdispls, *rdispls;
    int arg_err;
} xchg_phase_large;

/* A communicator's first blocking auto calls (phase.c): until set-up is
 * known to pay back, the call is MPI's own MPI_Alltoallv (large: its
 * MPI_Alltoallv_c) on the caller's communicator (*passed = 1; its result
 * returned, *raised: MPI already raised it on comm's handler), with no
 * duplicate and no collective of xchg's own but one nonblocking agreement
 * of statistics at a check call. At the call the model fixes (the same on
 * every rank) it sets the state up and returns with *passed = 0: the
 * usual path runs the call, as on any set-up communicator (also at once
 * where the state is set up, or the settings ask for set-up at the first
 * call). *ready: the set-up state where there is one (the usual path needs
 * no second look-up), else NULL. */
int xchg_phase_alltoallv(MPI_Comm comm, const xchg_algo_names *names, const void *sendbuf,
                         const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int rdispls[],
                         MPI_Datatype recvtype, const xchg_phase_large *large, int *passed,
                         int *raised, xchg_comm_state **ready);

/* A new communicator's first nonblocking auto calls (xchg_ialltoallv):
 * passed to MPI's own MPI_Ialltoallv on the caller's communicator as the
 * blocking ones are (*passed = 1, nb its request; the user's arrays must
 * stay unchanged until it completes, as MPI's own call requires), the
 * check's agreement an MPI_Iallreduce beside it, decided when the request
 * completes or at the next call, whichever comes first; set-up happens at
 * the start of a later call (blocking or not), as the model fixes. The
 * simulated build sets up at the first call (no nonblocking stand-in for
 * MPI's call). A rank's argument error: returned, and the rank takes part
 * with empty blocks, completed at its next call (or when the
 * communicator is freed). *ready as xchg_phase_alltoallv. */
typedef struct xchg_phase_nb {
    xchg_comm_state *cs;
    MPI_Comm comm;
    MPI_Request req;   /* MPI_Ialltoallv's */
    unsigned long n;   /* the call's number */
    int checking;      /* its check is settled when it completes */
    int raised;        /* MPI_Ialltoallv failed and raised its error itself */
} xchg_phase_nb;
int xchg_phase_ialltoallv(MPI_Comm comm, const xchg_algo_names *names, const void *sendbuf,
                          const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int rdispls[],
                          MPI_Datatype recvtype, xchg_phase_nb *nb, int *passed,
                          xchg_comm_state **ready);
/* Its request's test and wait (the check settled on completion). */
int xchg_phase_nb_test(xchg_phase_nb *nb, int *done);
int xchg_phase_nb_wait(xchg_phase_nb *nb);

#endif /* XCHG_SELECT_H */
