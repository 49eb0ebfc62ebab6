# OB_CHECK_FUZZER
# ---------------
# Expects: OB_CHECK_WARNINGS done (enable_werror set).  The fuzz targets of
# tests/fuzz/ are built apart from the library, by a compiler with libFuzzer
# (clang: -fsanitize=fuzzer, with address and undefined-behaviour checks);
# this finds one that links such a target.  FUZZ_CC (default clang) chooses
# the compiler; --disable-fuzz skips the probe.  Defines: FUZZ_CC and
# FUZZ_CFLAGS (substituted), the conditional HAVE_FUZZER, and ob_fuzz
# (yes/no, for the summary).
AC_DEFUN([OB_CHECK_FUZZER], [
  AC_ARG_VAR([FUZZ_CC], [compiler with libFuzzer for the fuzz targets (default: clang)])
  AC_ARG_ENABLE([fuzz],
    [AS_HELP_STRING([--disable-fuzz], [do not build the libFuzzer targets (make fuzz, make check)])],
    [], [enable_fuzz=yes])
  ob_fuzz=no
  FUZZ_CFLAGS=
  AS_IF([test "x$enable_fuzz" = xyes], [
    AS_IF([test -z "$FUZZ_CC"], [AC_CHECK_PROGS([FUZZ_CC], [clang])])
    AS_IF([test -n "$FUZZ_CC"], [
      ob_fuzz_flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -Wall -Wextra"
      AS_IF([test "x$enable_werror" = xyes], [ob_fuzz_flags="$ob_fuzz_flags -Werror"])
      AC_MSG_CHECKING([whether $FUZZ_CC links a libFuzzer target])
      ob_save_CC=$CC
      ob_save_CFLAGS=$CFLAGS
      ob_save_LIBS=$LIBS
      CC=$FUZZ_CC
      CFLAGS=$ob_fuzz_flags
      LIBS=
      AC_LINK_IFELSE([AC_LANG_SOURCE([[
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return size > 0 && 0 == data[0];
}
]])], [ob_fuzz=yes; FUZZ_CFLAGS=$ob_fuzz_flags])
      CC=$ob_save_CC
      CFLAGS=$ob_save_CFLAGS
      LIBS=$ob_save_LIBS
      AC_MSG_RESULT([$ob_fuzz])
    ])
  ])
  AC_SUBST([FUZZ_CFLAGS])
  AM_CONDITIONAL([HAVE_FUZZER], [test "x$ob_fuzz" = xyes])
])
