# OB_CHECK_CHECK
# --------------
# Expects: PKG_PROG_PKG_CONFIG done.  Finds the Check unit-test framework
# used by `make check`.  Defines: CHECK_CFLAGS, CHECK_LIBS.
AC_DEFUN([OB_CHECK_CHECK], [
  PKG_CHECK_MODULES([CHECK], [check >= 0.11], [],
    [AC_MSG_ERROR([Check (unit tests) not found: install the Debian package check])])
])

# OB_CHECK_PTHREAD
# ----------------
# Expects: CC set.  The layer keeps per-thread state and the benchmarks
# start threads.  Defines: PTHREAD_CFLAGS (substituted); adds the thread
# library to LIBS.
AC_DEFUN([OB_CHECK_PTHREAD], [
  PTHREAD_CFLAGS=
  ob_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -pthread"
  AC_MSG_CHECKING([whether $CC accepts -pthread])
  AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]], [[pthread_self();]])],
    [AC_MSG_RESULT([yes]); PTHREAD_CFLAGS=-pthread], [AC_MSG_RESULT([no])])
  CFLAGS=$ob_save_CFLAGS
  AC_SEARCH_LIBS([pthread_create], [pthread], [],
    [AC_MSG_ERROR([POSIX threads not found: install the Debian package libc6-dev])])
  AC_SUBST([PTHREAD_CFLAGS])
])
