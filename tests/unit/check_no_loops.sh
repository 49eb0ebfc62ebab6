#!/bin/sh
# No two files of the library include or call each other in a loop
# (docs/ARCHITECTURE.md: dependencies point down only):
#   - calls: from the built objects of src/core, src/api and mpi_wrappers,
#     an edge A -> B where A's object uses a symbol B's object defines (nm);
#   - includes: an edge A -> B where header or source A includes "B".
# tsort(1) finds any loop in either graph.  A call back through a function
# pointer (the detector's step callback, the API's hooks) is no edge: that
# inversion is how the core stays below the layers.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
NM=${NM:-nm}
work=$(mktemp -d "${TMPDIR:-/tmp}/loops.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0

# The objects: libtool's PIC ones (.libs/), one per source.
objs=$(find "$builddir/src" "$builddir/mpi_wrappers" -path '*/.libs/*.o' -name 'lib*_la-*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "check_no_loops: no built objects under $builddir/src, mpi_wrappers" >&2; exit 1; }
for o in $objs; do
    name=$(basename "$o" .o)
    name=${name#*_la-}
    "$NM" -g --defined-only "$o" | awk -v n="$name" 'NF == 3 { print $3, n }' >>"$work/defs"
    "$NM" -g --undefined-only "$o" | awk -v n="$name" '{ print n, $NF }' >>"$work/uses"
done
n_objs=$(echo "$objs" | wc -l)
# A -> B for each symbol A uses that B defines (B != A).
awk 'NR == FNR { def[$1] = $2; next } ($2 in def) && def[$2] != $1 { print $1, def[$2] }' \
    "$work/defs" "$work/uses" | sort -u >"$work/calls"
if ! tsort "$work/calls" >/dev/null 2>"$work/calls.err"; then
    echo "check_no_loops: the objects call each other in a loop:" >&2
    cat "$work/calls.err" >&2
    fail=1
fi

# Includes among the project's own files: "x.h" -> x.h.
for f in "$srcdir"/include/*.h "$srcdir"/src/core/*.[ch] "$srcdir"/src/api/*.[ch] \
         "$srcdir"/mpi_wrappers/*.[ch]; do
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
            [ "$inc" = config.h ] || echo "$(basename "$f") $inc"
        done
done | sort -u >"$work/includes"
if ! tsort "$work/includes" >/dev/null 2>"$work/includes.err"; then
    echo "check_no_loops: headers include each other in a loop:" >&2
    cat "$work/includes.err" >&2
    fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "check_no_loops: $n_objs objects, $(wc -l <"$work/calls") call edges, $(wc -l <"$work/includes") include edges: no loop"
