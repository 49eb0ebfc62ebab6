#!/bin/sh
# What a user does after `make install`: the installed .pc file alone lets
# a plain C compiler (no MPI wrapper) build an omnibatch program -- mpi.h
# and libmpi come through its Requires -- and the program runs once the
# prefix's lib/ is on LD_LIBRARY_PATH.  Installed with DESTDIR into a
# scratch directory, whose .pc file then gets the prefix it would have had
# from configure --prefix=that directory.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
cc=${PLAIN_CC:-gcc}
pc=${PKG_CONFIG:-pkg-config}
name=${OB_LIBNAME:-omnibatch}
command -v "$pc" >/dev/null 2>&1 || { echo "install_prefix: no $pc: skipped"; exit 77; }
# Without readelf the program's link could not be told from a broken one.
command -v readelf >/dev/null 2>&1 || { echo "install_prefix: no readelf: skipped"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/omnibatch-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: install_prefix: $*" >&2; exit 1; }

# Only the library and its headers: the rest of the tree is not needed.
${MAKE:-make} -C "$top_builddir" DESTDIR="$work/root" install-libLTLIBRARIES \
    install-includeHEADERS install-pkgconfigDATA >"$work/install.log" 2>&1 || {
    cat "$work/install.log"; fail "make install failed"; }
pcfile=$(find "$work/root" -name "$name.pc" | head -n 1)
[ -n "$pcfile" ] || fail "no $name.pc installed"
libdir=$(dirname "$(dirname "$pcfile")")
[ -f "$libdir/lib$name.so" ] || fail "lib$name.so is not beside the .pc file ($libdir)"

prefix=$(PKG_CONFIG_PATH="$(dirname "$pcfile")" "$pc" --variable=prefix "$name")
sed "s|^prefix=.*|prefix=$work/root$prefix|" "$pcfile" >"$pcfile.new" && mv "$pcfile.new" "$pcfile"
flags=$(PKG_CONFIG_PATH="$(dirname "$pcfile")" "$pc" --cflags --libs "$name") \
    || fail "$pc cannot resolve $name (its Requires must be installed)"
echo "install_prefix: $cc $flags"
# shellcheck disable=SC2086
"$cc" -o "$work/lsq_train" -I"$top_srcdir/examples" "$top_srcdir/examples/lsq_train.c" $flags -lm \
    || fail "$cc cannot build a program with the flags of $name.pc alone"
case $(readelf -d "$work/lsq_train" 2>/dev/null) in
*"lib$name.so"*) ;;
*) fail "the program is not linked with lib$name.so" ;;
esac

# With the prefix's lib/ on the library path, it trains.
OB_MPIRUN_ENV="LD_LIBRARY_PATH=$libdir" "$top_srcdir/tests/mpirun.sh" 2 "$work/lsq_train" 3 >"$work/out"
cat "$work/out"
grep -q "lsq_train: loss .* plan" "$work/out" || fail "the installed program did not train"
ldd_lib=$(LD_LIBRARY_PATH="$libdir" ldd "$work/lsq_train" | awk -v n="lib$name.so" 'index($1, n) == 1 { print $3 }')
case $ldd_lib in
"$libdir"/*) echo "install_prefix: the program runs with $ldd_lib" ;;
*) fail "the program loads $ldd_lib, not the installed library" ;;
esac
