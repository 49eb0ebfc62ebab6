# OB_PATH_PYTHON
# --------------
# Expects: nothing.  Finds the Python the omnibatch package is installed for:
# $PYTHON if set, else Debian's /usr/bin/python3 (the interpreter that has
# python3-mpi4py, python3-numpy and python3-torch; a pyenv or venv python3
# first on PATH usually has none of them), else AM_PATH_PYTHON's search.
# automake's default pythondir, PREFIX/lib/pythonX.Y/site-packages, is not on
# Debian's sys.path: when the interpreter searches a package folder under
# the prefix (PREFIX/lib/pythonX.Y/dist-packages for /usr/local), that one is
# used instead.  Under any other prefix (make distcheck's) automake's default
# stays, so the install stays inside the prefix.
# Defines: PYTHON, pythondir (AM_PATH_PYTHON), HAVE_PYTHON (conditional).
AC_DEFUN([OB_PATH_PYTHON], [
  AS_IF([test -z "$PYTHON" && test -x /usr/bin/python3], [PYTHON=/usr/bin/python3])
  AM_PATH_PYTHON([3.7], [], [:])
  AM_CONDITIONAL([HAVE_PYTHON], [test "$PYTHON" != ":"])
  AS_IF([test "$PYTHON" != ":"], [
    ob_python_prefix=$prefix
    AS_IF([test "x$ob_python_prefix" = xNONE], [ob_python_prefix=$ac_default_prefix])
    AC_MSG_CHECKING([for a package folder of $PYTHON under $ob_python_prefix])
    ob_python_site=`$PYTHON -c '
import os, sys
prefix = os.path.realpath(sys.argv[[1]])
for entry in sys.path:
    rel = os.path.relpath(os.path.realpath(entry or "."), prefix)
    if rel.startswith("lib" + os.sep) and rel.endswith(("dist-packages", "site-packages")):
        print(rel)
        break
' "$ob_python_prefix" 2>/dev/null`
    AS_IF([test -n "$ob_python_site"],
      [pythondir="\${PYTHON_PREFIX}/$ob_python_site"
       AC_MSG_RESULT([$ob_python_site])],
      [AC_MSG_RESULT([none, $pythondir])])
  ])
])
