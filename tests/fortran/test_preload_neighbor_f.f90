! test_preload_neighbor_f.f90 - an unmodified Fortran application (use
! mpi) calling MPI_NEIGHBOR_ALLTOALLV, run under libxchg-preload.so with
! XCHG_VERBOSE=1; CTest checks the preload's report (tests/expect_lines.sh):
! 3 Fortran calls served by xchg on rank 0.
!
! A distributed graph made with MPI_DIST_GRAPH_CREATE_ADJACENT: edges
! r -> r+1, r -> r (self) and r -> r+2 twice (repeated), one block of
! 1 + mod(sender + 2 * receiver, 3) integers each, three rounds of new
! values, each checked against values computed here (MPI's own neighbour
! collective is what the preload replaces, so it cannot be the reference):
! the k-th block to a neighbour lands in the k-th block from it.
program test_preload_neighbor_f
  use mpi
  implicit none
  integer :: ierr, rank, nranks, bad, allbad, round, i, k, comm
  integer :: src(4), dst(4), sc(4), sd(4), rc(4), rd(4), rep(4)
  integer :: sb(0:15), rb(0:15)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  bad = 0
  dst = (/ mod(rank + 1, nranks), rank, mod(rank + 2, nranks), mod(rank + 2, nranks) /)
  src = (/ mod(rank + nranks - 1, nranks), rank, mod(rank + nranks - 2, nranks), &
           mod(rank + nranks - 2, nranks) /)
  rep = (/ 0, 0, 0, 1 /) ! which occurrence of a repeated edge a block is
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 4, src, MPI_UNWEIGHTED, 4, dst, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., comm, ierr)
  sd(1) = 0
  rd(1) = 0
  do i = 1, 4
    sc(i) = 1 + mod(rank + 2 * dst(i), 3)
    rc(i) = 1 + mod(src(i) + 2 * rank, 3)
    if (i > 1) sd(i) = sd(i - 1) + sc(i - 1)
    if (i > 1) rd(i) = rd(i - 1) + rc(i - 1)
  end do

  do round = 1, 3
    do i = 1, 4
      do k = 0, sc(i) - 1
        sb(sd(i) + k) = round * 100000 + rank * 1000 + (i - 1) * 10 + k
      end do
    end do
    rb = -1
    call MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, comm, ierr)
    if (ierr /= MPI_SUCCESS) then
      bad = bad + 1
      print *, 'FAIL rank', rank, 'ierror', ierr
    end if
    ! receive block i from src(i) is that rank's send block to this rank
    ! of the same occurrence: blocks 1, 2, 3 + rep(i) of its list
    do i = 1, 4
      do k = 0, rc(i) - 1
        if (rb(rd(i) + k) /= round * 100000 + src(i) * 1000 + sender_block(i) * 10 + k) then
          bad = bad + 1
          print *, 'FAIL rank', rank, 'round', round, 'block', i
        end if
      end do
    end do
  end do

  call MPI_Comm_free(comm, ierr)
  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a)', 'test_preload_neighbor_f on ', nranks, ' ranks: results correct'
    else
      print '(a,i0,a)', 'test_preload_neighbor_f on ', nranks, ' ranks: FAILED'
    end if
  end if
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1

contains

  ! The sender's block (0-based) that lands in receive block i: the edge
  ! kind of block i (r-1 -> r is the sender's block 0, self 1, r-2 -> r its
  ! block 2 + occurrence). With few ranks the neighbours coincide, but each
  ! edge kind keeps its own position in both lists.
  integer function sender_block(i)
    integer, intent(in) :: i
    if (i == 1) then
      sender_block = 0
    else if (i == 2) then
      sender_block = 1
    else
      sender_block = 2 + rep(i)
    end if
  end function sender_block

end program test_preload_neighbor_f
