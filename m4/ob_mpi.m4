# OB_PROG_MPICC
# -------------
# Expects: nothing; honours a CC the user set (then it must be able to build
# MPI programs itself).  Defines: CC=mpicc unless the user chose a compiler,
# so every object, MPI or not, is built with the same wrapper and flags.
AC_DEFUN([OB_PROG_MPICC], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc)])
  AS_IF([test -z "$CC"], [
    AS_IF([test -z "$MPICC"], [AC_PATH_PROGS([MPICC], [mpicc])])
    AS_IF([test -z "$MPICC"],
      [AC_MSG_ERROR([MPI C compiler wrapper mpicc not found: install the Debian packages libopenmpi-dev and openmpi-bin])])
    CC="$MPICC"
  ])
])

# OB_CHECK_MPI
# ------------
# Expects: CC set by OB_PROG_MPICC.  Checks that CC compiles and links an
# MPI program with MPI-3 non-blocking collectives.  Defines: OB_MPI_VENDOR
# (string) in config.h.
AC_DEFUN([OB_CHECK_MPI], [
  AC_MSG_CHECKING([whether $CC builds MPI-3 programs])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[
      MPI_Request r; int x = 0;
      MPI_Init(0, 0);
      MPI_Iallreduce(MPI_IN_PLACE, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
      MPI_Finalize();
      return MPI_VERSION >= 3 ? 0 : 1;]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no])
     AC_MSG_ERROR([$CC cannot build MPI-3 programs: install the Debian package libopenmpi-dev])])
  AC_MSG_CHECKING([for Open MPI])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[
      #ifndef OPEN_MPI
      #error not Open MPI
      #endif
      ]])],
    [AC_MSG_RESULT([yes]); ob_mpi_vendor="Open MPI"],
    [AC_MSG_RESULT([no]); ob_mpi_vendor="other MPI"])
  AC_DEFINE_UNQUOTED([OB_MPI_VENDOR], ["$ob_mpi_vendor"], [MPI implementation family])
])

# OB_PROG_MPIFORT
# ---------------
# Expects: nothing.  Looks for mpifort (Open MPI's Fortran wrapper, which
# needs Debian's gfortran); optional: only the Fortran preload test uses it.
# Defines: MPIFORT (may be empty), and the automake conditional HAVE_MPIFORT
# set in configure.ac.
AC_DEFUN([OB_PROG_MPIFORT], [
  AC_ARG_VAR([MPIFORT], [MPI Fortran compiler wrapper for the Fortran test])
  AS_IF([test -z "$MPIFORT"], [AC_PATH_PROGS([MPIFORT], [mpifort mpif90])])
  AS_IF([test -n "$MPIFORT"], [
    AC_MSG_CHECKING([whether $MPIFORT works])
    cat > conftest.f90 <<'_OBEOF'
program t
  include 'mpif.h'
  integer :: ierr
  call MPI_INIT(ierr)
  call MPI_FINALIZE(ierr)
end program t
_OBEOF
    AS_IF([$MPIFORT -o conftest.fx conftest.f90 >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no (install Debian's gfortran for the Fortran test)]); MPIFORT=""])
    rm -f conftest.f90 conftest.fx
  ])
])

# OB_PROG_MPIRUN
# --------------
# Expects: nothing.  Finds mpirun for the MPI tests and benchmarks.
# Defines: MPIRUN (substituted).
AC_DEFUN([OB_PROG_MPIRUN], [
  AC_ARG_VAR([MPIRUN], [MPI launcher used by the tests and benchmarks])
  AS_IF([test -z "$MPIRUN"], [AC_PATH_PROGS([MPIRUN], [mpirun mpiexec])])
  AS_IF([test -z "$MPIRUN"],
    [AC_MSG_ERROR([mpirun not found: install the Debian package openmpi-bin])])
])
