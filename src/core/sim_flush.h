/*
 * sim_flush.h - SMPI build only: every MPI call libxchg makes first
 * executes the copy charges summed since the last one (simcost.c).
 *
 * The build force-includes this header into every libxchg source file
 * (src/CMakeLists.txt, -include, XCHG_SMPI only), so no file can call MPI
 * without it. Each macro below calls xchg_charge_flush() and then the MPI
 * function of the same name (a macro does not expand inside itself). A
 * function missing here would let a rank post a message or wait before
 * its copies are charged: tests/sim_flush_check.py fails when libxchg
 * calls an MPI function this list lacks.
 */
#ifndef XCHG_SIM_FLUSH_H
#define XCHG_SIM_FLUSH_H
#include <mpi.h>

void xchg_charge_flush(void);
void xchg_charge_setup_comm(MPI_Comm comm, int split_type);
void xchg_charge_setup_window(MPI_Aint bytes, int freed);

#define XCHG_FLUSHED(fn, ...) (xchg_charge_flush(), fn(__VA_ARGS__))
/* Making communicators and windows costs on real MPI what SMPI's do not
 * (simcost.c charges the measured cost first). An RMA window's cost is
 * charged without its size: the caller's buffer span, which depends on
 * where the simulated ranks' mallocs land (one heap for all of them). */
#define XCHG_SETUP_COMM(fn, comm, split, ...)                                                  \
    (xchg_charge_setup_comm(comm, split), XCHG_FLUSHED(fn, comm, __VA_ARGS__))

#define MPI_Abort(...) XCHG_FLUSHED(MPI_Abort, __VA_ARGS__)
#define MPI_Add_error_code(...) XCHG_FLUSHED(MPI_Add_error_code, __VA_ARGS__)
#define MPI_Add_error_string(...) XCHG_FLUSHED(MPI_Add_error_string, __VA_ARGS__)
#define MPI_Allgather(...) XCHG_FLUSHED(MPI_Allgather, __VA_ARGS__)
#define MPI_Allreduce(...) XCHG_FLUSHED(MPI_Allreduce, __VA_ARGS__)
#define MPI_Alltoall(...) XCHG_FLUSHED(MPI_Alltoall, __VA_ARGS__)
#define MPI_Alltoallv(...) XCHG_FLUSHED(MPI_Alltoallv, __VA_ARGS__)
#define MPI_Alltoallv_c(...) XCHG_FLUSHED(MPI_Alltoallv_c, __VA_ARGS__)
#define MPI_Barrier(...) XCHG_FLUSHED(MPI_Barrier, __VA_ARGS__)
#define MPI_Bcast(...) XCHG_FLUSHED(MPI_Bcast, __VA_ARGS__)
#define MPI_Cancel(...) XCHG_FLUSHED(MPI_Cancel, __VA_ARGS__)
#define MPI_Cart_shift(...) XCHG_FLUSHED(MPI_Cart_shift, __VA_ARGS__)
#define MPI_Cartdim_get(...) XCHG_FLUSHED(MPI_Cartdim_get, __VA_ARGS__)
#define MPI_Comm_call_errhandler(...) XCHG_FLUSHED(MPI_Comm_call_errhandler, __VA_ARGS__)
#define MPI_Comm_create_keyval(...) XCHG_FLUSHED(MPI_Comm_create_keyval, __VA_ARGS__)
#define MPI_Comm_dup(comm, ...) XCHG_SETUP_COMM(MPI_Comm_dup, comm, 0, __VA_ARGS__)
#define MPI_Comm_free(...) XCHG_FLUSHED(MPI_Comm_free, __VA_ARGS__)
#define MPI_Comm_get_attr(...) XCHG_FLUSHED(MPI_Comm_get_attr, __VA_ARGS__)
#define MPI_Comm_get_errhandler(...) XCHG_FLUSHED(MPI_Comm_get_errhandler, __VA_ARGS__)
#define MPI_Comm_group(...) XCHG_FLUSHED(MPI_Comm_group, __VA_ARGS__)
#define MPI_Comm_rank(...) XCHG_FLUSHED(MPI_Comm_rank, __VA_ARGS__)
#define MPI_Comm_set_attr(...) XCHG_FLUSHED(MPI_Comm_set_attr, __VA_ARGS__)
#define MPI_Comm_set_errhandler(...) XCHG_FLUSHED(MPI_Comm_set_errhandler, __VA_ARGS__)
#define MPI_Comm_size(...) XCHG_FLUSHED(MPI_Comm_size, __VA_ARGS__)
#define MPI_Comm_split(...) XCHG_FLUSHED(MPI_Comm_split, __VA_ARGS__)
#define MPI_Comm_split_type(comm, ...) XCHG_SETUP_COMM(MPI_Comm_split_type, comm, 1, __VA_ARGS__)
#define MPI_Comm_test_inter(...) XCHG_FLUSHED(MPI_Comm_test_inter, __VA_ARGS__)
#define MPI_Dist_graph_neighbors(...) XCHG_FLUSHED(MPI_Dist_graph_neighbors, __VA_ARGS__)
#define MPI_Dist_graph_neighbors_count(...) XCHG_FLUSHED(MPI_Dist_graph_neighbors_count, __VA_ARGS__)
#define MPI_Errhandler_free(...) XCHG_FLUSHED(MPI_Errhandler_free, __VA_ARGS__)
#define MPI_Error_class(...) XCHG_FLUSHED(MPI_Error_class, __VA_ARGS__)
#define MPI_Error_string(...) XCHG_FLUSHED(MPI_Error_string, __VA_ARGS__)
#define MPI_Finalize(...) XCHG_FLUSHED(MPI_Finalize, __VA_ARGS__)
#define MPI_Finalized(...) XCHG_FLUSHED(MPI_Finalized, __VA_ARGS__)
#define MPI_Gather(...) XCHG_FLUSHED(MPI_Gather, __VA_ARGS__)
#define MPI_Gatherv(...) XCHG_FLUSHED(MPI_Gatherv, __VA_ARGS__)
#define MPI_Get_address(...) XCHG_FLUSHED(MPI_Get_address, __VA_ARGS__)
#define MPI_Get_count(...) XCHG_FLUSHED(MPI_Get_count, __VA_ARGS__)
#define MPI_Get_elements_x(...) XCHG_FLUSHED(MPI_Get_elements_x, __VA_ARGS__)
#define MPI_Get_library_version(...) XCHG_FLUSHED(MPI_Get_library_version, __VA_ARGS__)
#define MPI_Get_processor_name(...) XCHG_FLUSHED(MPI_Get_processor_name, __VA_ARGS__)
#define MPI_Graph_neighbors(...) XCHG_FLUSHED(MPI_Graph_neighbors, __VA_ARGS__)
#define MPI_Graph_neighbors_count(...) XCHG_FLUSHED(MPI_Graph_neighbors_count, __VA_ARGS__)
#define MPI_Group_compare(...) XCHG_FLUSHED(MPI_Group_compare, __VA_ARGS__)
#define MPI_Group_free(...) XCHG_FLUSHED(MPI_Group_free, __VA_ARGS__)
#define MPI_Group_translate_ranks(...) XCHG_FLUSHED(MPI_Group_translate_ranks, __VA_ARGS__)
#define MPI_Iallgather(...) XCHG_FLUSHED(MPI_Iallgather, __VA_ARGS__)
#define MPI_Iallreduce(...) XCHG_FLUSHED(MPI_Iallreduce, __VA_ARGS__)
#define MPI_Ialltoall(...) XCHG_FLUSHED(MPI_Ialltoall, __VA_ARGS__)
#define MPI_Ialltoallv_c(...) XCHG_FLUSHED(MPI_Ialltoallv_c, __VA_ARGS__)
#define MPI_Ibarrier(...) XCHG_FLUSHED(MPI_Ibarrier, __VA_ARGS__)
#define MPI_Ibcast(...) XCHG_FLUSHED(MPI_Ibcast, __VA_ARGS__)
#define MPI_Igather(...) XCHG_FLUSHED(MPI_Igather, __VA_ARGS__)
#define MPI_Igatherv(...) XCHG_FLUSHED(MPI_Igatherv, __VA_ARGS__)
#define MPI_Info_create(...) XCHG_FLUSHED(MPI_Info_create, __VA_ARGS__)
#define MPI_Info_free(...) XCHG_FLUSHED(MPI_Info_free, __VA_ARGS__)
#define MPI_Info_set(...) XCHG_FLUSHED(MPI_Info_set, __VA_ARGS__)
#define MPI_Initialized(...) XCHG_FLUSHED(MPI_Initialized, __VA_ARGS__)
#define MPI_Iprobe(...) XCHG_FLUSHED(MPI_Iprobe, __VA_ARGS__)
#define MPI_Irecv(...) XCHG_FLUSHED(MPI_Irecv, __VA_ARGS__)
#define MPI_Iscatter(...) XCHG_FLUSHED(MPI_Iscatter, __VA_ARGS__)
#define MPI_Iscatterv(...) XCHG_FLUSHED(MPI_Iscatterv, __VA_ARGS__)
#define MPI_Isend(...) XCHG_FLUSHED(MPI_Isend, __VA_ARGS__)
#define MPI_Issend(...) XCHG_FLUSHED(MPI_Issend, __VA_ARGS__)
#define MPI_Neighbor_alltoallv(...) XCHG_FLUSHED(MPI_Neighbor_alltoallv, __VA_ARGS__)
#define MPI_Op_create(...) XCHG_FLUSHED(MPI_Op_create, __VA_ARGS__)
#define MPI_Op_free(...) XCHG_FLUSHED(MPI_Op_free, __VA_ARGS__)
#define MPI_Pack(...) XCHG_FLUSHED(MPI_Pack, __VA_ARGS__)
#define MPI_Probe(...) XCHG_FLUSHED(MPI_Probe, __VA_ARGS__)
#define MPI_Put(...) XCHG_FLUSHED(MPI_Put, __VA_ARGS__)
#define MPI_Query_thread(...) XCHG_FLUSHED(MPI_Query_thread, __VA_ARGS__)
#define MPI_Recv(...) XCHG_FLUSHED(MPI_Recv, __VA_ARGS__)
#define MPI_Recv_init(...) XCHG_FLUSHED(MPI_Recv_init, __VA_ARGS__)
#define MPI_Reduce_scatter_block(...) XCHG_FLUSHED(MPI_Reduce_scatter_block, __VA_ARGS__)
#define MPI_Request_free(...) XCHG_FLUSHED(MPI_Request_free, __VA_ARGS__)
#define MPI_Scatter(...) XCHG_FLUSHED(MPI_Scatter, __VA_ARGS__)
#define MPI_Scatterv(...) XCHG_FLUSHED(MPI_Scatterv, __VA_ARGS__)
#define MPI_Send_init(...) XCHG_FLUSHED(MPI_Send_init, __VA_ARGS__)
#define MPI_Sendrecv(...) XCHG_FLUSHED(MPI_Sendrecv, __VA_ARGS__)
#define MPI_Start(...) XCHG_FLUSHED(MPI_Start, __VA_ARGS__)
#define MPI_Startall(...) XCHG_FLUSHED(MPI_Startall, __VA_ARGS__)
#define MPI_Test(...) XCHG_FLUSHED(MPI_Test, __VA_ARGS__)
#define MPI_Testall(...) XCHG_FLUSHED(MPI_Testall, __VA_ARGS__)
#define MPI_Testany(...) XCHG_FLUSHED(MPI_Testany, __VA_ARGS__)
#define MPI_Testsome(...) XCHG_FLUSHED(MPI_Testsome, __VA_ARGS__)
#define MPI_Topo_test(...) XCHG_FLUSHED(MPI_Topo_test, __VA_ARGS__)
#define MPI_Type_commit(...) XCHG_FLUSHED(MPI_Type_commit, __VA_ARGS__)
#define MPI_Type_contiguous(...) XCHG_FLUSHED(MPI_Type_contiguous, __VA_ARGS__)
#define MPI_Type_create_hindexed(...) XCHG_FLUSHED(MPI_Type_create_hindexed, __VA_ARGS__)
#define MPI_Type_dup(...) XCHG_FLUSHED(MPI_Type_dup, __VA_ARGS__)
#define MPI_Type_free(...) XCHG_FLUSHED(MPI_Type_free, __VA_ARGS__)
#define MPI_Type_get_envelope(...) XCHG_FLUSHED(MPI_Type_get_envelope, __VA_ARGS__)
#define MPI_Type_get_extent(...) XCHG_FLUSHED(MPI_Type_get_extent, __VA_ARGS__)
#define MPI_Type_get_true_extent(...) XCHG_FLUSHED(MPI_Type_get_true_extent, __VA_ARGS__)
#define MPI_Type_size(...) XCHG_FLUSHED(MPI_Type_size, __VA_ARGS__)
#define MPI_Unpack(...) XCHG_FLUSHED(MPI_Unpack, __VA_ARGS__)
#define MPI_Wait(...) XCHG_FLUSHED(MPI_Wait, __VA_ARGS__)
#define MPI_Waitall(...) XCHG_FLUSHED(MPI_Waitall, __VA_ARGS__)
#define MPI_Waitany(...) XCHG_FLUSHED(MPI_Waitany, __VA_ARGS__)
#define MPI_Waitsome(...) XCHG_FLUSHED(MPI_Waitsome, __VA_ARGS__)
#define MPI_Win_allocate_shared(size, ...)                                                    \
    (xchg_charge_setup_window(size, 0), XCHG_FLUSHED(MPI_Win_allocate_shared, size, __VA_ARGS__))
#define MPI_Win_create(base, size, ...)                                                     \
    (xchg_charge_setup_window(0, 0), XCHG_FLUSHED(MPI_Win_create, base, size, __VA_ARGS__))
#define MPI_Win_fence(...) XCHG_FLUSHED(MPI_Win_fence, __VA_ARGS__)
#define MPI_Win_flush(...) XCHG_FLUSHED(MPI_Win_flush, __VA_ARGS__)
#define MPI_Win_free(...) (xchg_charge_setup_window(0, 1), XCHG_FLUSHED(MPI_Win_free, __VA_ARGS__))
#define MPI_Win_lock_all(...) XCHG_FLUSHED(MPI_Win_lock_all, __VA_ARGS__)
#define MPI_Win_set_errhandler(...) XCHG_FLUSHED(MPI_Win_set_errhandler, __VA_ARGS__)
#define MPI_Win_shared_query(...) XCHG_FLUSHED(MPI_Win_shared_query, __VA_ARGS__)
#define MPI_Win_sync(...) XCHG_FLUSHED(MPI_Win_sync, __VA_ARGS__)
#define MPI_Win_unlock_all(...) XCHG_FLUSHED(MPI_Win_unlock_all, __VA_ARGS__)
#define MPI_Wtime(...) XCHG_FLUSHED(MPI_Wtime, __VA_ARGS__)
#define PMPI_Alltoallv(...) XCHG_FLUSHED(PMPI_Alltoallv, __VA_ARGS__)
#define PMPI_Alltoallv_c(...) XCHG_FLUSHED(PMPI_Alltoallv_c, __VA_ARGS__)
#define PMPI_Alltoallv_init(...) XCHG_FLUSHED(PMPI_Alltoallv_init, __VA_ARGS__)
#define PMPI_Alltoallv_init_c(...) XCHG_FLUSHED(PMPI_Alltoallv_init_c, __VA_ARGS__)
#define PMPI_Ialltoallv(...) XCHG_FLUSHED(PMPI_Ialltoallv, __VA_ARGS__)
#define PMPI_Ialltoallv_c(...) XCHG_FLUSHED(PMPI_Ialltoallv_c, __VA_ARGS__)
#define PMPI_Neighbor_alltoallv_c(...) XCHG_FLUSHED(PMPI_Neighbor_alltoallv_c, __VA_ARGS__)

#endif
