# OB_VERSION_SPLIT
# ----------------
# Expects: AC_INIT's version as MAJOR.MINOR.PATCH.  Defines: OB_VERSION_MAJOR,
# OB_VERSION_MINOR, OB_VERSION_PATCH (substituted, for the public header and
# the .pc file).
AC_DEFUN([OB_VERSION_SPLIT], [
  OB_VERSION_MAJOR=`echo AC_PACKAGE_VERSION | cut -d. -f1`
  OB_VERSION_MINOR=`echo AC_PACKAGE_VERSION | cut -d. -f2`
  OB_VERSION_PATCH=`echo AC_PACKAGE_VERSION | cut -d. -f3`
  AC_SUBST([OB_VERSION_MAJOR])
  AC_SUBST([OB_VERSION_MINOR])
  AC_SUBST([OB_VERSION_PATCH])
])

# OB_SUMMARY
# ----------
# Expects: the other OB_* macros done.  Prints what was found at the end of
# configure, so a user sees at a glance what will be built and tested.
AC_DEFUN([OB_SUMMARY], [
  AS_ECHO([""])
  AS_ECHO(["omnibatch AC_PACKAGE_VERSION configured"])
  AS_ECHO(["  prefix            : $prefix"])
  AS_ECHO(["  C compiler        : $CC"])
  AS_ECHO(["  MPI               : $ob_mpi_vendor, launcher $MPIRUN ($MPIRUN_FAMILY)"])
  AS_ECHO(["  library           : lib$OB_LIBNAME.so, $OB_LIBNAME.pc"])
  AS_ECHO(["  hwloc             : `$PKG_CONFIG --modversion hwloc`"])
  AS_ECHO(["  OpenBLAS          : `$PKG_CONFIG --modversion openblas`"])
  AS_ECHO(["  Check             : `$PKG_CONFIG --modversion check`"])
  AS_ECHO(["  Fortran test      : ${MPIFORT:-no (install gfortran)}"])
  AS_ECHO(["  CUDA              : $ob_cuda_summary"])
  AS_ECHO(["  Python package    : `test "$PYTHON" = ":" && echo no || echo "$PYTHON, in $pythondir"`"])
  AS_ECHO(["  valgrind          : ${VALGRIND:-no}"])
  AS_IF([test "x$ob_fuzz" = xyes],
    [AS_ECHO(["  fuzz targets      : yes ($FUZZ_CC)"])],
    [AS_ECHO(["  fuzz targets      : no (install clang and libclang-rt-14-dev)"])])
  AS_ECHO(["  gnuplot (plots)   : ${GNUPLOT:-no (install gnuplot-nox)}"])
  AS_ECHO(["  warnings          : $WARN_CFLAGS"])
  AS_ECHO(["  visibility        : ${VISIBILITY_CFLAGS:-default}"])
  AS_ECHO([""])
])
