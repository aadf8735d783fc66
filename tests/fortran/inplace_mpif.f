! inplace_mpif.f - MPI_IN_PLACE as mpif.h declares it (a common block),
! for test_preload_f.f90: symmetric counts rc, displacements rd.
      subroutine inplace_mpif(rank, nranks, rc, rd, rb, bad)
      implicit none
      include 'mpif.h'
      integer rank, nranks, rc(0:*), rd(0:*), rb(0:*), bad
      integer j, k, ierr, want
      do j = 0, nranks - 1
        do k = 0, rc(j) - 1
          rb(rd(j) + k) = 8000000 + rank * 1000 + j * 10 + k
        end do
      end do
      call MPI_ALLTOALLV(MPI_IN_PLACE, rc, rd, MPI_INTEGER, rb, rc, rd,
     &     MPI_INTEGER, MPI_COMM_WORLD, ierr)
      if (ierr .ne. MPI_SUCCESS) then
        print *, 'FAIL rank', rank, 'MPI_IN_PLACE (mpif.h): ierror',
     &       ierr
        bad = bad + 1
      end if
      do j = 0, nranks - 1
        do k = 0, rc(j) - 1
          want = 8000000 + j * 1000 + rank * 10 + k
          if (rb(rd(j) + k) .ne. want) then
            print *, 'FAIL rank', rank, 'MPI_IN_PLACE (mpif.h): from', j
            bad = bad + 1
            return
          end if
        end do
      end do
      end
