! Copyright (c) 2026 The omnibatch authors.
!
! A Fortran training loop under the preload.  Open MPI's Fortran bindings
! call PMPI_* directly, so only the layer's Fortran entry points can see
! these allreduces.  Each step: a REAL allreduce (mpi module), a DOUBLE
! PRECISION one in place (mpif.h, in a subroutine), and two MPI_Iallreduce
! completed by a different member of the Wait/Test family each step.
! Every result is checked; the run's trace shows whether the layer saw the
! calls.  Last, each member of the family with a negative count must fail
! where MPI's own binding fails, and MPI_Test, MPI_Testall and MPI_Testany
! that fail on a receive too small for its message must return what MPI's
! own binding returns, flag included.
!
!   mpi_fortran STEPS

subroutine reduce_in_place(x, n)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: n
  double precision, intent(inout) :: x(n)
  integer :: ierr

  call MPI_ALLREDUCE(MPI_IN_PLACE, x, n, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
end subroutine reduce_in_place

! The wrapped call failed exactly where MPI's own did (the codes may differ).
subroutine same_outcome(name, ierr, perr, bad)
  implicit none
  include 'mpif.h'
  character(len=*), intent(in) :: name
  integer, intent(in) :: ierr, perr
  integer, intent(inout) :: bad

  if ((ierr == MPI_SUCCESS) .neqv. (perr == MPI_SUCCESS)) then
    print '(a,a,a,i0,a,i0)', 'mpi_fortran: ', name, ' with a negative count returned ', ierr, &
        ', MPI returns ', perr
    bad = bad + 1
  end if
end subroutine same_outcome

! A receive too small for its message, completed by MPI_Test (which = 1),
! MPI_Testall (2) or MPI_Testany (3), wrapped or not (PMPI_*, MPI's own
! binding), until the flag is set or the call fails: rank 0 receives, rank 1
! sends; the other ranks return ierr = MPI_SUCCESS and flag = .false.
subroutine truncated_test(which, wrapped, ierr, flag)
  use mpi
  implicit none
  integer, intent(in) :: which
  logical, intent(in) :: wrapped
  integer, intent(out) :: ierr
  logical, intent(out) :: flag
  integer :: small(1), big(4), req(2), idx

  ierr = MPI_SUCCESS
  flag = .false.
  big = 1
  if (rank_of_world() == 1) call MPI_Send(big, 4, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, ierr)
  if (rank_of_world() /= 0) return
  call MPI_Irecv(small, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, req(1), ierr)
  req(2) = MPI_REQUEST_NULL
  do while (.not. flag .and. ierr == MPI_SUCCESS)
    select case (which)
    case (1)
      if (wrapped) then
        call MPI_Test(req(1), flag, MPI_STATUS_IGNORE, ierr)
      else
        call PMPI_Test(req(1), flag, MPI_STATUS_IGNORE, ierr)
      end if
    case (2)
      if (wrapped) then
        call MPI_Testall(2, req, flag, MPI_STATUSES_IGNORE, ierr)
      else
        call PMPI_Testall(2, req, flag, MPI_STATUSES_IGNORE, ierr)
      end if
    case default
      if (wrapped) then
        call MPI_Testany(2, req, idx, flag, MPI_STATUS_IGNORE, ierr)
      else
        call PMPI_Testany(2, req, idx, flag, MPI_STATUS_IGNORE, ierr)
      end if
    end select
  end do
contains
  integer function rank_of_world()
    integer :: r, e

    call MPI_COMM_RANK(MPI_COMM_WORLD, r, e)
    rank_of_world = r
  end function rank_of_world
end subroutine truncated_test

program fortran_steps
  use mpi
  implicit none
  integer, parameter :: n1 = 5000, n2 = 3000, n3 = 2000, n4 = 1000
  real :: g1(n1), r1(n1), h1(n3)
  double precision :: g2(n2), h2(n4), hr2(n4)
  integer :: ierr, perr, rank, nprocs, step, steps, bad, allbad, outcount, idx, left, k
  integer :: req(2), indices(2)
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
  logical :: flag, pflag
  character(len=16) :: arg
  real :: want
  double precision :: dwant

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
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
    call reduce_in_place(g2, n2)
    call MPI_Iallreduce(MPI_IN_PLACE, h1, n3, MPI_REAL, MPI_SUM, MPI_COMM_WORLD, req(1), ierr)
    call MPI_Iallreduce(h2, hr2, n4, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, req(2), ierr)

    select case (mod(step, 8))
    case (0)
      call MPI_Wait(req(1), status, ierr)
      call MPI_Wait(req(2), MPI_STATUS_IGNORE, ierr)
    case (1)
      call MPI_Waitall(2, req, statuses, ierr)
    case (2)
      call MPI_Waitall(2, req, MPI_STATUSES_IGNORE, ierr)
    case (3)
      do k = 1, 2
        call MPI_Waitany(2, req, idx, status, ierr)
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
        call MPI_Waitsome(2, req, outcount, indices, statuses, ierr)
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
        call MPI_Testall(2, req, flag, MPI_STATUSES_IGNORE, ierr)
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

  ! An erroneous call passes through as well: a negative count is an error
  ! where MPI's own binding (PMPI_*, not wrapped) says it is one.
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_SELF, MPI_ERRORS_RETURN, ierr)
  call PMPI_Waitall(-1, req, MPI_STATUSES_IGNORE, perr)
  call MPI_Waitall(-1, req, MPI_STATUSES_IGNORE, ierr)
  call same_outcome('MPI_Waitall', ierr, perr, bad)
  call PMPI_Testall(-1, req, flag, MPI_STATUSES_IGNORE, perr)
  call MPI_Testall(-1, req, flag, MPI_STATUSES_IGNORE, ierr)
  call same_outcome('MPI_Testall', ierr, perr, bad)
  call PMPI_Waitany(-1, req, idx, MPI_STATUS_IGNORE, perr)
  call MPI_Waitany(-1, req, idx, MPI_STATUS_IGNORE, ierr)
  call same_outcome('MPI_Waitany', ierr, perr, bad)
  call PMPI_Testany(-1, req, idx, flag, MPI_STATUS_IGNORE, perr)
  call MPI_Testany(-1, req, idx, flag, MPI_STATUS_IGNORE, ierr)
  call same_outcome('MPI_Testany', ierr, perr, bad)
  call PMPI_Waitsome(-1, req, outcount, indices, MPI_STATUSES_IGNORE, perr)
  call MPI_Waitsome(-1, req, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call same_outcome('MPI_Waitsome', ierr, perr, bad)
  call PMPI_Testsome(-1, req, outcount, indices, MPI_STATUSES_IGNORE, perr)
  call MPI_Testsome(-1, req, outcount, indices, MPI_STATUSES_IGNORE, ierr)
  call same_outcome('MPI_Testsome', ierr, perr, bad)
  ! A failed completion sets the flag as MPI's own binding sets it (.TRUE.
  ! with MPI_ERR_IN_STATUS from MPI_Testall), not left as it was.
  if (nprocs >= 2) then
    do k = 1, 3
      call truncated_test(k, .false., perr, pflag)
      call truncated_test(k, .true., ierr, flag)
      if ((ierr == MPI_SUCCESS) .neqv. (perr == MPI_SUCCESS) .or. (flag .neqv. pflag)) then
        print '(a,i0,a,i0,a,l1,a,i0,a,l1)', 'mpi_fortran: truncated receive, test ', k, &
            ': ierr ', ierr, ' flag ', flag, ', MPI: ierr ', perr, ' flag ', pflag
        bad = bad + 1
      end if
    end do
  end if
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL, ierr)

  call MPI_Allreduce(bad, allbad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (allbad == 0) then
      print '(a,i0,a,i0,a)', 'mpi_fortran: ', steps, ' steps on ', nprocs, ' ranks: results right'
    else
      print '(a,i0,a)', 'mpi_fortran: ', allbad, ' WRONG results'
    end if
  end if
  call MPI_FINALIZE(ierr)
  if (allbad /= 0) stop 1
end program fortran_steps
