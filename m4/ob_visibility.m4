# OB_CHECK_VISIBILITY
# -------------------
# Expects: CC set.  Builds the library with hidden visibility so that only
# what carries OB_EXPORT (the API and every MPI_* wrapper) is exported.
# Defines: VISIBILITY_CFLAGS (substituted), OB_HAVE_VISIBILITY (0 or 1).
AC_DEFUN([OB_CHECK_VISIBILITY], [
  VISIBILITY_CFLAGS=
  ob_have_visibility=0
  ob_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -Werror -fvisibility=hidden"
  AC_MSG_CHECKING([whether $CC supports -fvisibility=hidden])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[
      __attribute__((visibility("default"))) int ob_probe(void);
      int ob_probe(void) { return 0; }]], [[]])],
    [AC_MSG_RESULT([yes]); VISIBILITY_CFLAGS=-fvisibility=hidden; ob_have_visibility=1],
    [AC_MSG_RESULT([no])])
  CFLAGS=$ob_save_CFLAGS
  AC_DEFINE_UNQUOTED([OB_HAVE_VISIBILITY], [$ob_have_visibility],
    [Define to 1 if the compiler supports symbol visibility])
  AC_SUBST([VISIBILITY_CFLAGS])
])
