! Copyright (c) 2026 The omnibatch authors.
!
! The Fortran training loop of mpi_fortran.f90 on the mpi_f08 module,
! whose Open MPI procedures are entry points of their own (mpi_x_f08_):
! each step a REAL allreduce, a DOUBLE PRECISION one in place, and two
! MPI_Iallreduce completed by a different member of the Wait/Test family
! each step; half the calls leave out the OPTIONAL ierror.  Every result is
! checked; the run's trace shows whether the layer saw the calls.
!
!   mpi_fortran_f08 STEPS

program fortran_f08_steps
  use mpi_f08
  implicit none
  integer, parameter :: n1 = 5000, n2 = 3000, n3 = 2000, n4 = 1000
  real :: g1(n1), r1(n1), h1(n3)
  double precision :: g2(n2), h2(n4), hr2(n4)
  integer :: ierr, rank, nprocs, step, steps, bad, allbad, outcount, idx, left, k
  integer :: indices(2)
  type(MPI_Request) :: req(2)
  type(MPI_Status) :: status, statuses(2)
  logical :: flag
  character(len=16) :: arg
  real :: want
  double precision :: dwant

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  steps = 20
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) steps
  end if
  bad = 0

  do step = 1, steps
    g1 = real(rank + step)
    g2 = dble(rank) + 0.5d0 * dble(step)
    h1 = real(2 * rank + step)
    h2 = dble(rank * step)

    call MPI_Allreduce(g1, r1, n1, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (ierr /= MPI_SUCCESS) bad = bad + 1
    call MPI_Allreduce(MPI_IN_PLACE, g2, n2, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
    call MPI_Iallreduce(MPI_IN_PLACE, h1, n3, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Iallreduce(h2, hr2, n4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req(2))

    select case (mod(step, 8))
    case (0)
      call MPI_Wait(req(1), status, ierr)
      call MPI_Wait(req(2), MPI_STATUS_IGNORE)
    case (1)
      call MPI_Waitall(2, req, statuses, ierr)
    case (2)
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE)
    case (3)
      do k = 1, 2
        call MPI_Waitany(2, req, idx, status)
        if (idx < 1 .or. idx > 2) bad = bad + 1
      end do
    case (4)
      left = 2
      do while (left > 0)
        call MPI_Testany(2, req, idx, flag, MPI_STATUS_IGNORE, ierr)
        if (flag .and. idx /= MPI_UNDEFINED) left = left - 1
      end do
    case (5)
      left = 2
      do while (left > 0)
        call MPI_Waitsome(2, req, outcount, indices, statuses)
        left = left - outcount
      end do
    case (6)
      left = 2
      do while (left > 0)
        call MPI_Testsome(2, req, outcount, indices, MPI_STATUSES_IGNORE, ierr)
        left = left - outcount
      end do
    case default
      flag = .false.
      do while (.not. flag)
        call MPI_Testall(2, req, flag, MPI_STATUSES_IGNORE)
      end do
    end select
    if (req(1) /= MPI_REQUEST_NULL .or. req(2) /= MPI_REQUEST_NULL) bad = bad + 1

    want = real(nprocs * step + nprocs * (nprocs - 1) / 2)
    if (any(r1 /= want)) bad = bad + 1
    if (any(g1 /= real(rank + step))) bad = bad + 1
    dwant = dble(nprocs * (nprocs - 1) / 2) + 0.5d0 * dble(step * nprocs)
    if (any(g2 /= dwant)) bad = bad + 1
    want = real(nprocs * (nprocs - 1) + nprocs * step)
    if (any(h1 /= want)) bad = bad + 1
    dwant = dble(step * nprocs * (nprocs - 1) / 2)
    if (any(hr2 /= dwant)) bad = bad + 1
  end do

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a,i0,a)', 'mpi_fortran_f08: ', steps, ' steps on ', nprocs, ' ranks: results right'
    else
      print '(a,i0,a)', 'mpi_fortran_f08: ', allbad, ' WRONG results'
    end if
  end if
  call MPI_Finalize()
  if (allbad /= 0) stop 1
end program fortran_f08_steps
