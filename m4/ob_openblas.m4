# OB_CHECK_OPENBLAS
# -----------------
# Expects: PKG_PROG_PKG_CONFIG done.  Finds OpenBLAS with its CBLAS
# interface; only the benchmarks link it.  Defines: OPENBLAS_CFLAGS,
# OPENBLAS_LIBS.
AC_DEFUN([OB_CHECK_OPENBLAS], [
  PKG_CHECK_MODULES([OPENBLAS], [openblas], [],
    [AC_MSG_ERROR([OpenBLAS not found: install the Debian package libopenblas-dev])])
  ob_save_CFLAGS=$CFLAGS; ob_save_LIBS=$LIBS
  CFLAGS="$CFLAGS $OPENBLAS_CFLAGS"; LIBS="$OPENBLAS_LIBS $LIBS"
  AC_MSG_CHECKING([for cblas_sgemm in OpenBLAS])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cblas.h>]], [[
      float a = 1, b = 1, c = 0;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);]])],
    [AC_MSG_RESULT([yes])],
    [AC_MSG_RESULT([no]); AC_MSG_ERROR([OpenBLAS lacks cblas_sgemm: install the Debian package libopenblas-dev])])
  CFLAGS=$ob_save_CFLAGS; LIBS=$ob_save_LIBS
])

# OB_CHECK_ZLIB
# -------------
# Expects: PKG_PROG_PKG_CONFIG done.  zlib reads the gzip'd IDX files of
# Debian's dataset-fashion-mnist in the training benchmark.  Defines:
# ZLIB_CFLAGS, ZLIB_LIBS.
AC_DEFUN([OB_CHECK_ZLIB], [
  PKG_CHECK_MODULES([ZLIB], [zlib], [],
    [AC_MSG_ERROR([zlib not found: install the Debian package zlib1g-dev])])
])
