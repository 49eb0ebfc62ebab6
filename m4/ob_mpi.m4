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
# MPI program with MPI-3 non-blocking collectives, and which implementation
# family its mpi.h belongs to: Open MPI, or the MPICH ABI family (MPICH,
# Intel MPI, Cray MPICH, MVAPICH).  Defines: OB_MPI_VENDOR (string) in
# config.h; OB_MPI_FAMILY (openmpi or mpich, substituted) for the launcher,
# the library name and the .pc file; ob_mpi_vendor for the summary.
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
     AC_MSG_ERROR([$CC cannot build MPI-3 programs: install the Debian package libopenmpi-dev (or libmpich-dev)])])
  AC_MSG_CHECKING([which MPI implementation $CC uses])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[
      #ifndef OPEN_MPI
      #error not Open MPI
      #endif
      ]])],
    [ob_mpi_vendor="Open MPI"; OB_MPI_FAMILY=openmpi],
    [AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <mpi.h>]], [[
        #ifndef MPICH_VERSION
        #error not MPICH
        #endif
        ]])],
      [ob_mpi_vendor="MPICH"; OB_MPI_FAMILY=mpich],
      [AC_MSG_RESULT([unknown])
       AC_MSG_ERROR([$CC uses an MPI that is neither Open MPI nor of the MPICH family: not supported])])])
  AC_MSG_RESULT([$ob_mpi_vendor])
  AC_DEFINE_UNQUOTED([OB_MPI_VENDOR], ["$ob_mpi_vendor"], [MPI implementation family])
  AC_SUBST([OB_MPI_VENDOR], [$ob_mpi_vendor])
  AC_SUBST([OB_MPI_FAMILY])
  # The .pc file names the MPI's own pkg-config module when it has one,
  # so a plain compiler finds mpi.h and libmpi.
  AS_IF([test openmpi = "$OB_MPI_FAMILY"], [ob_mpi_pc=ompi-c], [ob_mpi_pc=mpich])
  # Without one, the wrapper's own flags go into Cflags and Libs.
  OB_MPI_PC_CFLAGS=""
  OB_MPI_PC_LIBS=""
  AS_IF([test -n "$PKG_CONFIG" && $PKG_CONFIG --exists "$ob_mpi_pc"],
    [OB_MPI_PC_REQUIRES=$ob_mpi_pc],
    [OB_MPI_PC_REQUIRES=""
     AS_IF([test openmpi = "$OB_MPI_FAMILY"],
       [OB_MPI_PC_CFLAGS=`$CC --showme:compile 2>/dev/null`
        OB_MPI_PC_LIBS=`$CC --showme:link 2>/dev/null`],
       [for ob_flag in `$CC -compile-info 2>/dev/null`; do
          AS_CASE([$ob_flag],
            [-I*|-D*], [OB_MPI_PC_CFLAGS="$OB_MPI_PC_CFLAGS $ob_flag"],
            [-L*|-l*|-Wl,*], [OB_MPI_PC_LIBS="$OB_MPI_PC_LIBS $ob_flag"])
        done])])
  AC_SUBST([OB_MPI_PC_REQUIRES])
  AC_SUBST([OB_MPI_PC_CFLAGS])
  AC_SUBST([OB_MPI_PC_LIBS])
  # Both builds may be installed side by side: the MPICH one is
  # libomnibatch-mpich.so, the Open MPI one keeps libomnibatch.so.
  AS_IF([test openmpi = "$OB_MPI_FAMILY"], [OB_LIBNAME=omnibatch], [OB_LIBNAME=omnibatch-mpich])
  AC_SUBST([OB_LIBNAME])
  AM_CONDITIONAL([OB_MPI_OPENMPI], [test openmpi = "$OB_MPI_FAMILY"])
])

# OB_PROG_MPIFORT
# ---------------
# Expects: OB_CHECK_MPI (OB_MPI_FAMILY).  Looks for the Fortran wrapper of
# the same MPI: the family's suffixed name first (Debian installs both
# mpifort.openmpi and mpifort.mpich; plain mpifort is whichever the
# alternatives point at), and accepts it only if it wraps that family.
# Optional: only the Fortran preload tests use it.  Defines: MPIFORT (may be
# empty), and the automake conditional HAVE_MPIFORT set in configure.ac.
AC_DEFUN([OB_PROG_MPIFORT], [
  AC_ARG_VAR([MPIFORT], [MPI Fortran compiler wrapper for the Fortran test])
  AS_IF([test -z "$MPIFORT"], [
    AS_IF([test openmpi = "$OB_MPI_FAMILY"],
      [AC_PATH_PROGS([MPIFORT], [mpifort.openmpi mpifort mpif90])],
      [AC_PATH_PROGS([MPIFORT], [mpifort.mpich mpif90.mpich mpifort mpif90])])
  ])
  AS_IF([test -n "$MPIFORT"], [
    AC_MSG_CHECKING([whether $MPIFORT works with $ob_mpi_vendor])
    cat > conftest.f90 <<'_OBEOF'
program t
  include 'mpif.h'
  integer :: ierr
  call MPI_INIT(ierr)
  call MPI_FINALIZE(ierr)
end program t
_OBEOF
    # Open MPI's wrappers answer --showme, MPICH's -show.
    AS_IF([test openmpi = "$OB_MPI_FAMILY"],
      [ob_fort_same="$MPIFORT --showme:version"],
      [ob_fort_same="$MPIFORT -show"])
    AS_IF([$MPIFORT -o conftest.fx conftest.f90 >&AS_MESSAGE_LOG_FD 2>&1 &&
           $ob_fort_same >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no (install Debian's gfortran for the Fortran test)]); MPIFORT=""])
    rm -f conftest.f90 conftest.fx
  ])
])

# OB_PROG_MPIRUN
# --------------
# Expects: OB_CHECK_MPI (OB_MPI_FAMILY).  Finds the launcher of the same MPI
# for the tests and benchmarks (suffixed names first, as for MPIFORT), and
# which kind it is: Open MPI's mpirun takes -x VAR and --oversubscribe,
# MPICH's mpiexec.hydra -genv VAR value.  Defines: MPIRUN and MPIRUN_FAMILY
# (openmpi or hydra; substituted, read by tests/mpirun.sh and omnibatchrun).
AC_DEFUN([OB_PROG_MPIRUN], [
  AC_ARG_VAR([MPIRUN], [MPI launcher used by the tests and benchmarks])
  AS_IF([test -z "$MPIRUN"], [
    AS_IF([test openmpi = "$OB_MPI_FAMILY"],
      [AC_PATH_PROGS([MPIRUN], [mpirun.openmpi mpirun mpiexec])],
      [AC_PATH_PROGS([MPIRUN], [mpiexec.mpich mpiexec.hydra mpirun.mpich mpiexec mpirun])])
  ])
  AS_IF([test -z "$MPIRUN"],
    [AC_MSG_ERROR([mpirun not found: install the Debian package openmpi-bin (or mpich)])])
  AC_MSG_CHECKING([which kind of launcher $MPIRUN is])
  ob_mpirun_version=`$MPIRUN --version 2>&1`
  AS_CASE([$ob_mpirun_version],
    [*"Open MPI"*|*OpenRTE*], [MPIRUN_FAMILY=openmpi],
    [*HYDRA*], [MPIRUN_FAMILY=hydra],
    [MPIRUN_FAMILY=unknown])
  AC_MSG_RESULT([$MPIRUN_FAMILY])
  AS_IF([test openmpi = "$OB_MPI_FAMILY" && test openmpi != "$MPIRUN_FAMILY" ||
         test mpich = "$OB_MPI_FAMILY" && test hydra != "$MPIRUN_FAMILY"],
    [AC_MSG_WARN([$MPIRUN ($MPIRUN_FAMILY) does not look like $ob_mpi_vendor's launcher: the tests may fail; set MPIRUN (and MPIRUN_FLAGS)])])
  AC_SUBST([MPIRUN_FAMILY])
])

# OB_PROG_OTHER_MPI
# -----------------
# Expects: OB_CHECK_MPI.  The other MPI family's C wrapper and launcher, if
# installed, for the test of a library preloaded into a program of another
# MPI.  Defines: OTHER_MPICC, OTHER_MPIRUN (substituted; may be empty).
AC_DEFUN([OB_PROG_OTHER_MPI], [
  AC_ARG_VAR([OTHER_MPICC], [C wrapper of the other MPI family (test of a mismatched preload)])
  AC_ARG_VAR([OTHER_MPIRUN], [launcher of the other MPI family])
  AS_IF([test openmpi = "$OB_MPI_FAMILY"],
    [AC_PATH_PROGS([OTHER_MPICC], [mpicc.mpich])
     AC_PATH_PROGS([OTHER_MPIRUN], [mpiexec.mpich mpiexec.hydra])],
    [AC_PATH_PROGS([OTHER_MPICC], [mpicc.openmpi])
     AC_PATH_PROGS([OTHER_MPIRUN], [mpirun.openmpi])])
])
