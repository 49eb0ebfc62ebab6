# OB_CHECK_WARNINGS
# -----------------
# Expects: CC set.  Probes each picky warning flag and keeps those the
# compiler accepts; adds -Werror when building from a git checkout (a
# release tarball must build with any future compiler).  Options:
# --disable-picky drops the extra warnings, --enable-werror / --disable-werror
# override the git-checkout rule.  Defines: WARN_CFLAGS (substituted).
AC_DEFUN([OB_CHECK_WARNINGS], [
  AC_ARG_ENABLE([picky],
    [AS_HELP_STRING([--disable-picky], [do not turn on the extra compiler warnings])],
    [], [enable_picky=yes])
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat warnings as errors (default: yes in a git checkout)])],
    [], [AS_IF([test -e "$srcdir/.git"], [enable_werror=yes], [enable_werror=no])])
  WARN_CFLAGS=
  AS_IF([test "x$enable_picky" = xyes], [
    for ob_flag in -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
                   -Wmissing-declarations -Wpointer-arith -Wcast-align -Wwrite-strings \
                   -Wundef -Wformat=2 -Wold-style-definition -Wnested-externs \
                   -Wvla -Wnull-dereference -Wdouble-promotion -Wimplicit-fallthrough; do
      OB_PROBE_CFLAG([$ob_flag], [WARN_CFLAGS="$WARN_CFLAGS $ob_flag"])
    done
  ])
  AS_IF([test "x$enable_werror" = xyes],
    [OB_PROBE_CFLAG([-Werror], [WARN_CFLAGS="$WARN_CFLAGS -Werror"])])
  AC_SUBST([WARN_CFLAGS])
])

# OB_PROBE_CFLAG(FLAG, ACTION-IF-ACCEPTED)
# ----------------------------------------
# Compiles an empty program with FLAG (and -Werror, so an unknown flag that
# only warns is refused) and runs ACTION-IF-ACCEPTED when it builds.
AC_DEFUN([OB_PROBE_CFLAG], [
  AC_MSG_CHECKING([whether $CC accepts $1])
  ob_save_CFLAGS=$CFLAGS
  CFLAGS="$CFLAGS -Werror $1"
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
    [AC_MSG_RESULT([yes]); $2], [AC_MSG_RESULT([no])])
  CFLAGS=$ob_save_CFLAGS
])
