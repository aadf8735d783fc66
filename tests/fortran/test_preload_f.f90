! test_preload_f.f90 - an unmodified Fortran application (use mpi, and
! mpif.h in inplace_mpif.f) calling MPI_ALLTOALLV, run under
! libxchg-preload.so with XCHG_VERBOSE=1; CTest checks the preload's report
! (tests/expect_lines.sh): 7 Fortran calls served by xchg on rank 0.
!
! Calls, each checked against values computed here (MPI's own all-to-all
! is what the preload replaces, so it cannot be the reference):
!   3 x INTEGER on MPI_COMM_WORLD, new values each time
!   1 x DOUBLE PRECISION with gaps between the receive blocks (untouched)
!   1 x on a split communicator (reversed order): handle conversion
!   1 x MPI_IN_PLACE from use mpi, 1 x MPI_IN_PLACE from mpif.h
! and ierror is MPI_SUCCESS after every call; then 1 x MPI_IALLTOALLV +
! MPI_WAIT (served on MPICH; Open MPI's binding goes to PMPI_Ialltoallv).
program test_preload_f
  use mpi
  implicit none
  integer :: ierr, rank, nranks, bad, allbad, round, j, k, sub, subrank, subsize
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sb(:), rb(:)
  double precision, allocatable :: dsb(:), drb(:)
  integer :: st, rt, req

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  bad = 0
  allocate(sc(0:nranks-1), sd(0:nranks-1), rc(0:nranks-1), rd(0:nranks-1))
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)
  allocate(sb(0:st), rb(0:rt), dsb(0:st), drb(0:rt + 3 * nranks))

  do round = 0, 2
    call fill(sb, rank, nranks, sc, sd, round)
    rb = -1
    call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
    call expect_ok(ierr, 'integer')
    call check(rb, rank, nranks, rc, rd, round, 'integer')
  end do

  ! DOUBLE PRECISION, receive blocks 3 apart: the gaps must stay -1
  do j = 0, nranks - 1
    do k = 0, sc(j) - 1
      dsb(sd(j) + k) = value(rank, j, k, 5) + 0.25d0
    end do
    rd(j) = rd(j) + 3 * j
  end do
  drb = -1d0
  call MPI_Alltoallv(dsb, sc, sd, MPI_DOUBLE_PRECISION, drb, rc, rd, MPI_DOUBLE_PRECISION, &
                     MPI_COMM_WORLD, ierr)
  call expect_ok(ierr, 'double precision')
  do j = 0, nranks - 1
    do k = 0, rc(j) - 1
      if (drb(rd(j) + k) /= value(j, rank, k, 5) + 0.25d0) then
        bad = bad + 1
        print *, 'FAIL rank', rank, 'double precision block from', j
      end if
    end do
    if (j > 0) then
      if (any(drb(rd(j) - 3:rd(j) - 1) /= -1d0)) then
        bad = bad + 1
        print *, 'FAIL rank', rank, 'a gap before the block from', j, 'was written'
      end if
    end if
  end do
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)

  ! a split communicator, ranks reversed: its handle must be converted
  call MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - rank, sub, ierr)
  call MPI_Comm_rank(sub, subrank, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  call layout(subrank, subsize, sc, sd, rc, rd, st, rt, 0)
  call fill(sb, subrank, subsize, sc, sd, 6)
  rb = -1
  call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, sub, ierr)
  call expect_ok(ierr, 'split communicator')
  call check(rb, subrank, subsize, rc, rd, 6, 'split communicator')
  call MPI_Comm_free(sub, ierr)
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)

  ! MPI_IN_PLACE (use mpi): symmetric counts, recvbuf holds what is sent
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 1)
  do j = 0, nranks - 1
    do k = 0, rc(j) - 1
      rb(rd(j) + k) = value(rank, j, k, 7)
    end do
  end do
  call MPI_Alltoallv(MPI_IN_PLACE, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call expect_ok(ierr, 'MPI_IN_PLACE (use mpi)')
  call check(rb, rank, nranks, rc, rd, 7, 'MPI_IN_PLACE (use mpi)')

  ! MPI_IN_PLACE from mpif.h
  call inplace_mpif(rank, nranks, rc, rd, rb, bad)

  ! nonblocking: MPI_IALLTOALLV + MPI_WAIT (MPICH's binding calls the C
  ! MPI_Ialltoallv and MPI_Wait, which the preload serves; Open MPI's call
  ! PMPI_ directly and never reach it)
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)
  call fill(sb, rank, nranks, sc, sd, 8)
  rb = -1
  call MPI_Ialltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, &
                      req, ierr)
  call expect_ok(ierr, 'MPI_IALLTOALLV')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call expect_ok(ierr, 'MPI_WAIT')
  call check(rb, rank, nranks, rc, rd, 8, 'MPI_IALLTOALLV')
  if (req /= MPI_REQUEST_NULL) then
    print *, 'FAIL rank', rank, 'MPI_WAIT left the request'
    bad = bad + 1
  end if

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a)', 'test_preload_f on ', nranks, ' ranks: results correct'
    else
      print '(a,i0,a,i0,a)', 'test_preload_f on ', nranks, ' ranks: FAILED (', allbad, ')'
    end if
  end if
  call MPI_Finalize(ierr)
  if (allbad /= 0) stop 1

contains

  integer function value(from, to, k, round)
    integer, intent(in) :: from, to, k, round
    value = round * 1000000 + from * 1000 + to * 10 + k
  end function

  ! counts mod(me + 2 j, 4) to j (symmetric: mod(me + j, 4)); packed displacements
  subroutine layout(me, n, sc, sd, rc, rd, st, rt, symmetric)
    integer, intent(in) :: me, n, symmetric
    integer, intent(out) :: sc(0:), sd(0:), rc(0:), rd(0:), st, rt
    integer :: j
    st = 0
    rt = 0
    do j = 0, n - 1
      if (symmetric == 1) then
        sc(j) = mod(me + j, 4)
        rc(j) = sc(j)
      else
        sc(j) = mod(me + 2 * j, 4)
        rc(j) = mod(j + 2 * me, 4)
      end if
      sd(j) = st
      rd(j) = rt
      st = st + sc(j)
      rt = rt + rc(j)
    end do
  end subroutine

  subroutine fill(sb, me, n, sc, sd, round)
    integer, intent(out) :: sb(0:)
    integer, intent(in) :: me, n, sc(0:), sd(0:), round
    integer :: j, k
    do j = 0, n - 1
      do k = 0, sc(j) - 1
        sb(sd(j) + k) = value(me, j, k, round)
      end do
    end do
  end subroutine

  subroutine check(rb, me, n, rc, rd, round, what)
    integer, intent(in) :: rb(0:), me, n, rc(0:), rd(0:), round
    character(*), intent(in) :: what
    integer :: j, k
    do j = 0, n - 1
      do k = 0, rc(j) - 1
        if (rb(rd(j) + k) /= value(j, me, k, round)) then
          print *, 'FAIL rank', rank, what, ': element', k, 'from', j, 'is', rb(rd(j) + k)
          bad = bad + 1
          return
        end if
      end do
    end do
  end subroutine

  subroutine expect_ok(ierr, what)
    integer, intent(in) :: ierr
    character(*), intent(in) :: what
    if (ierr /= MPI_SUCCESS) then
      print *, 'FAIL rank', rank, what, ': ierror', ierr
      bad = bad + 1
    end if
  end subroutine

end program
