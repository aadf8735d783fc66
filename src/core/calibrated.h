/*
 * calibrated.h - the costs of local work that the simulated build charges
 * (core/simcost.c) and that auto's model uses for set-up (select/model.c),
 * measured natively by `sim/calibrate/run` (which prints this file; with
 * --write it replaces it). docs/simulation.md ("Local costs") lists each
 * constant, its source and the command.
 */
#ifndef XCHG_CALIBRATED_H
#define XCHG_CALIBRATED_H

/* One local copy: a call's fixed cost (ns) and one core's copy rate
 * (GB/s of copied bytes) for data not in L1. Not measured here: a block
 * read from another core's cache costs more than memcpy's in-cache
 * 2.7 ns, and one core copied 8.6-9.0 GB/s out of cache. */
#define XCHG_CAL_COPY_CALL_NS 10.0
#define XCHG_CAL_COPY_CORE_GBPS 5.0
/* A node's memory bandwidth for copies, GB/s of copied bytes per rank of
 * the node: sim/mkplatform.py's default (MEM_GBPS_PER_CORE), which the
 * model uses as the share of a rank when every rank copies at once. */
#define XCHG_CAL_NODE_GBPS_PER_RANK 3.125

/* Per-operation CPU costs (ns): the argument checks of an alltoallv per
 * peer and side (xchg_check_alltoallv_arrays), one step of a loop over a rank's
 * peers that reads and sums counts, one step of a block-size check sum
 * (node_pairs_shm), one ranking of auto's candidates by its model. */
#define XCHG_CAL_CHECK_PEER_NS 0.50
#define XCHG_CAL_PEER_NS 0.70
#define XCHG_CAL_SIZE_SUM_NS 0.56
#define XCHG_CAL_MODEL_NS 1700.0

/* A node window's flag: published by one core and seen by another
 * (sim/calibrate/flag_cost.c, half a round trip at 2 ranks), what each of
 * a node synchronisation's flag latencies costs (a round of its
 * dissemination barrier, xchg_node_sync_flags). */
#define XCHG_CAL_FLAG_NS 180.0

/* A communicator's set-up on real MPI (us; mean of MPICH and Open MPI at
 * 4 ranks, xchg-bench setup): MPI_Comm_dup and MPI_Comm_split_type per
 * log2 P round, MPI_Win_allocate_shared + MPI_Win_free's fixed cost and
 * per KiB, MPI_Win_free. */
#define XCHG_CAL_DUP_ROUND_US 15.0
#define XCHG_CAL_SPLIT_ROUND_US 39.0
#define XCHG_CAL_WIN_US 110.0
#define XCHG_CAL_WIN_KIB_US 0.07
#define XCHG_CAL_WIN_FREE_US 0.0

#endif /* XCHG_CALIBRATED_H */
