# OB_CHECK_HWLOC
# --------------
# Expects: PKG_PROG_PKG_CONFIG done.  Finds hwloc 2.x (topology, devices,
# binding).  Defines: HWLOC_CFLAGS, HWLOC_LIBS.
AC_DEFUN([OB_CHECK_HWLOC], [
  PKG_CHECK_MODULES([HWLOC], [hwloc >= 2.0], [],
    [AC_MSG_ERROR([hwloc 2.x not found: install the Debian package libhwloc-dev])])
])
