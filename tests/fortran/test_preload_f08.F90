! test_preload_f08.F90 - an unmodified Fortran 2008 application (use
! mpi_f08) calling MPI_Alltoallv, run under libxchg-preload.so with
! XCHG_VERBOSE=1; CTest checks the preload's report (tests/expect_lines.sh):
! 6 f08 calls served by xchg on rank 0.
!
! Calls, each checked against values computed here:
!   2 x INTEGER on MPI_COMM_WORLD with ierror, 1 x without (OPTIONAL
!       ierror absent), 1 x on a split communicator (TYPE(MPI_Comm)
!       conversion), 1 x MPI_IN_PLACE, and
!   either (XCHG_F08_LARGE: MPICH) 1 x INTEGER(MPI_COUNT_KIND) counts and
!       INTEGER(MPI_ADDRESS_KIND) displacements: MPI_Alltoallv_c's binding
!   or 1 x an array section as receive buffer (every other element: the
!       compiler copies in and out), then 1 x MPI_Ialltoallv + MPI_Wait
!       (MPICH: left to MPICH, see below). Not with MPICH 4.0.2, whose f08
!       binding passes such a section's base address as if it were
!       contiguous: wrong results without any preload.
program test_preload_f08
  use mpi_f08
  implicit none
  integer :: ierr, rank, nranks, bad, allbad, round, j, k, subrank, subsize, st, rt
  type(MPI_Comm) :: sub
  type(MPI_Request) :: req
  integer, allocatable :: sc(:), sd(:), rc(:), rd(:), sb(:), rb(:), wide(:)
#ifdef XCHG_F08_LARGE
  integer(kind=MPI_COUNT_KIND), allocatable :: lsc(:), lrc(:)
  integer(kind=MPI_ADDRESS_KIND), allocatable :: lsd(:), lrd(:)
#endif

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  bad = 0
  allocate(sc(0:nranks-1), sd(0:nranks-1), rc(0:nranks-1), rd(0:nranks-1))
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)
  allocate(sb(0:st), rb(0:rt), wide(0:2 * rt + 1))

  do round = 0, 2
    call fill(sb, rank, nranks, sc, sd, round)
    rb = -1
    if (round < 2) then
      call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
      call expect_ok(ierr, 'integer')
    else
      call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD)
    end if
    call check(rb, rank, nranks, rc, rd, round, 'integer')
  end do

#ifndef XCHG_F08_LARGE
  ! receive into every other element of wide: a non-contiguous section
  call fill(sb, rank, nranks, sc, sd, 4)
  wide = -1
  call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, wide(0:2*rt:2), rc, rd, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call expect_ok(ierr, 'array section')
  rb(0:rt) = wide(0:2*rt:2)
  call check(rb, rank, nranks, rc, rd, 4, 'array section')
  if (rt > 0) then
    if (any(wide(1:2*rt-1:2) /= -1)) then
      print *, 'FAIL rank', rank, 'array section: an element between the section''s was written'
      bad = bad + 1
    end if
  end if
#endif

  call MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - rank, sub)
  call MPI_Comm_rank(sub, subrank)
  call MPI_Comm_size(sub, subsize)
  call layout(subrank, subsize, sc, sd, rc, rd, st, rt, 0)
  call fill(sb, subrank, subsize, sc, sd, 6)
  rb = -1
  call MPI_Alltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, sub, ierr)
  call expect_ok(ierr, 'split communicator')
  call check(rb, subrank, subsize, rc, rd, 6, 'split communicator')
  call MPI_Comm_free(sub)

  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 1)
  do j = 0, nranks - 1
    do k = 0, rc(j) - 1
      rb(rd(j) + k) = value(rank, j, k, 7)
    end do
  end do
  call MPI_Alltoallv(MPI_IN_PLACE, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  call expect_ok(ierr, 'MPI_IN_PLACE')
  call check(rb, rank, nranks, rc, rd, 7, 'MPI_IN_PLACE')

#ifdef XCHG_F08_LARGE
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)
  allocate(lsc(0:nranks-1), lsd(0:nranks-1), lrc(0:nranks-1), lrd(0:nranks-1))
  lsc = sc
  lsd = sd
  lrc = rc
  lrd = rd
  call fill(sb, rank, nranks, sc, sd, 9)
  rb = -1
  call MPI_Alltoallv(sb, lsc, lsd, MPI_INTEGER, rb, lrc, lrd, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call expect_ok(ierr, 'large-count kinds')
  call check(rb, rank, nranks, rc, rd, 9, 'large-count kinds')
#endif

  ! nonblocking: MPI_Ialltoallv + MPI_Wait. MPICH's f08 MPI_Wait calls
  ! PMPI_Wait, so the preload leaves this exchange to MPICH (its report
  ! says so); Open MPI's binding never reaches the preload.
  call layout(rank, nranks, sc, sd, rc, rd, st, rt, 0)
  call fill(sb, rank, nranks, sc, sd, 10)
  rb = -1
  call MPI_Ialltoallv(sb, sc, sd, MPI_INTEGER, rb, rc, rd, MPI_INTEGER, MPI_COMM_WORLD, &
                      req, ierr)
  call expect_ok(ierr, 'MPI_Ialltoallv')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  call expect_ok(ierr, 'MPI_Wait')
  call check(rb, rank, nranks, rc, rd, 10, 'MPI_Ialltoallv')

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a)', 'test_preload_f08 on ', nranks, ' ranks: results correct'
    else
      print '(a,i0,a,i0,a)', 'test_preload_f08 on ', nranks, ' ranks: FAILED (', allbad, ')'
    end if
  end if
  call MPI_Finalize()
  if (allbad /= 0) stop 1

contains

  integer function value(from, to, k, round)
    integer, intent(in) :: from, to, k, round
    value = round * 1000000 + from * 1000 + to * 10 + k
  end function

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
