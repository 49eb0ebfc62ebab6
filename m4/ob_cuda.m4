# OB_CHECK_CUDA
# -------------
# Expects: AC_PROG_CC and OB_CHECK_WARNINGS done (WARN_CFLAGS, enable_werror).
# Looks for the CUDA toolkit: nvcc, cuda_runtime.h, cublas_v2.h, cudart and
# cuBLAS, in --with-cuda=DIR (default: /usr/local/cuda, then nvcc on PATH).
# CUDA is optional: only bench/hetsgd's GPU backend and the compile-only
# tests use it; the library never links it (src/platform/memtype.c looks the
# driver up at run time).  --without-cuda leaves it out.  Defines:
# HAVE_CUDA (AM_CONDITIONAL and config.h, 0 or 1), NVCC, NVCC_FLAGS,
# CUDA_CPPFLAGS, CUDA_LIBS (with an rpath to the toolkit's libraries, and
# the C++ runtime nvcc's objects need),
# CUDA_PTXAS and CUDA_STUB_LIBCUDA (the driver stub, for tests; may be
# empty), ob_cuda_summary (the summary line).
AC_DEFUN([OB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR], [CUDA toolkit for hetsgd's GPU backend (default: /usr/local/cuda if there; --without-cuda: none)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCC_FLAGS], [flags for nvcc (default: sm_75 and sm_90 code plus sm_75 PTX, -O2)])
  ob_have_cuda=no
  ob_cuda_summary="no (--without-cuda)"
  NVCC=; CUDA_CPPFLAGS=; CUDA_LIBS=; CUDA_PTXAS=; CUDA_STUB_LIBCUDA=
  AS_IF([test "x$with_cuda" != xno], [
    # A DIR given is the only place looked in; by default, then PATH.
    AS_IF([test "x$with_cuda" = xcheck || test "x$with_cuda" = xyes],
      [ob_cuda_home=/usr/local/cuda; ob_cuda_path=$ob_cuda_home/bin$PATH_SEPARATOR$PATH],
      [ob_cuda_home=$with_cuda; ob_cuda_path=$ob_cuda_home/bin])
    AC_PATH_PROG([NVCC], [nvcc], [], [$ob_cuda_path])
    AS_IF([test -n "$NVCC"], [ob_cuda_home=`dirname "$NVCC"`; ob_cuda_home=`dirname "$ob_cuda_home"`])
    ob_cuda_libdir=$ob_cuda_home/lib64
    AS_IF([test -d "$ob_cuda_libdir"], [], [ob_cuda_libdir=$ob_cuda_home/lib])
    ob_save_CPPFLAGS=$CPPFLAGS; ob_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS -I$ob_cuda_home/include"
    LIBS="-L$ob_cuda_libdir -lcublas -lcudart $LIBS"
    AC_MSG_CHECKING([for cuBLAS and the CUDA runtime in $ob_cuda_home])
    AS_IF([test -z "$NVCC"], [ob_cuda_summary="no (nvcc not found; --with-cuda=DIR)"; AC_MSG_RESULT([no nvcc])],
      [AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime.h>
#include <cublas_v2.h>]], [[cublasHandle_t h; int n = 0; cudaGetDeviceCount(&n); return cublasCreate(&h) != CUBLAS_STATUS_SUCCESS;]])],
        [ob_have_cuda=yes; AC_MSG_RESULT([yes])],
        [ob_cuda_summary="no (cuda_runtime.h, cublas_v2.h or the libraries missing in $ob_cuda_home)"; AC_MSG_RESULT([no])])])
    CPPFLAGS=$ob_save_CPPFLAGS; LIBS=$ob_save_LIBS
    AS_IF([test "x$with_cuda" != xcheck && test "x$ob_have_cuda" = xno],
      [AC_MSG_ERROR([--with-cuda=$with_cuda: $ob_cuda_summary])])
  ])
  AS_IF([test "x$ob_have_cuda" = xyes], [
    CUDA_CPPFLAGS="-I$ob_cuda_home/include"
    CUDA_LIBS="-L$ob_cuda_libdir -Wl,-rpath,$ob_cuda_libdir -lcublas -lcudart -lstdc++"
    AS_IF([test -x "$ob_cuda_home/bin/ptxas"], [CUDA_PTXAS=$ob_cuda_home/bin/ptxas])
    for ob_stub in "$ob_cuda_libdir/stubs/libcuda.so" "$ob_cuda_home"/targets/*/lib/stubs/libcuda.so; do
      AS_IF([test -z "$CUDA_STUB_LIBCUDA" && test -f "$ob_stub"], [CUDA_STUB_LIBCUDA=$ob_stub])
    done
    AS_IF([test -z "$NVCC_FLAGS"],
      [NVCC_FLAGS="-O2 -gencode=arch=compute_75,code=[[sm_75,compute_75]] -gencode=arch=compute_90,code=sm_90"])
    # nvcc's own warnings and the host compiler's, as errors where C's are.
    AS_IF([test "x$enable_werror" = xyes], [NVCC_FLAGS="$NVCC_FLAGS -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror"])
    ob_cuda_summary="yes, `$NVCC --version | sed -n 's/.*release \([[0-9.]]*\).*/\1/p'` in $ob_cuda_home (hetsgd --devices gpu)"
    AC_DEFINE([HAVE_CUDA], [1], [Define to 1 when hetsgd's CUDA backend is built.])
  ], [
    AC_DEFINE([HAVE_CUDA], [0], [Define to 1 when hetsgd's CUDA backend is built.])
  ])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$ob_have_cuda" = xyes])
  AC_SUBST([NVCC_FLAGS])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([CUDA_PTXAS])
  AC_SUBST([CUDA_STUB_LIBCUDA])
])
