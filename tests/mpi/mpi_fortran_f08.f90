! Copyright (c) 2026 The omnibatch authors.
!
! A Fortran program on the mpi_f08 bindings, which the layer cannot
! intercept (they call Open MPI's internals, not MPI_Init or
! MPI_Allreduce): its results stay right, and the preloaded layer says at
! exit that it measured nothing.
program mpi_fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, nranks
  real :: g(1000)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  g = 1.0
  call MPI_Allreduce(MPI_IN_PLACE, g, 1000, MPI_REAL, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (all(g == real(nranks))) then
      print '(a)', 'mpi_fortran_f08: results right'
    else
      print '(a)', 'mpi_fortran_f08: RESULTS WRONG'
    end if
  end if
  call MPI_Finalize()
end program mpi_fortran_f08
