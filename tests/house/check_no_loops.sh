#!/bin/sh
# Dependencies point down (docs/ARCHITECTURE.md):
#   - no two files of the library call or include each other in a loop;
#   - no folder calls or includes one above it, in the order
#       base < platform < control < observe < api < async < mpi_wrappers
#     (src/<part>/ and mpi_wrappers/; include/ is below them all).
# Calls come from the built objects: an edge A -> B where A's object uses a
# symbol B's object defines (nm).  Includes: an edge A -> B where header or
# source A includes "B".  tsort(1) finds a loop.  A call back through a
# function pointer (the detector's step callback, the API's hooks) is no
# edge: that inversion is how the lower parts stay below the layers.
# A graph that came out empty, or an nm that failed, is a failure: a check
# that read nothing has checked nothing.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
# automake passes NM="/usr/bin/nm -B": a command and its flags, split on purpose.
NM=${NM:-nm}
# shellcheck disable=SC2086
set -- $NM
command -v "${1:-}" >/dev/null 2>&1 || { echo "check_no_loops: no nm ('$NM'): skipped"; exit 77; }
command -v tsort >/dev/null 2>&1 || { echo "check_no_loops: no tsort: skipped"; exit 77; }
layers="include base platform control observe api async mpi_wrappers"
work=$(mktemp -d "${TMPDIR:-/tmp}/loops.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0

# The layer of a path: its folder's place in $layers (0 for none).
layer_of() {
    d=$(basename "$(dirname "$1")")
    [ "$d" = .libs ] && d=$(basename "$(dirname "$(dirname "$1")")")
    i=1
    for l in $layers; do
        [ "$l" = "$d" ] && { echo "$i $d"; return; }
        i=$((i + 1))
    done
    echo "0 $d"
}

# The objects: libtool's PIC ones (.libs/), one per source.
objs=$(find "$builddir/src" "$builddir/mpi_wrappers" -path '*/.libs/*.o' -name 'lib*_la-*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "check_no_loops: no built objects under $builddir/src, mpi_wrappers" >&2; exit 1; }
: >"$work/defs"
: >"$work/uses"
: >"$work/layer"
: >"$work/where"
for o in $objs; do
    name=$(basename "$o" .o)
    set -- $(layer_of "$o")
    name="$2/${name#*_la-}"
    echo "$name $1" >>"$work/layer"
    # shellcheck disable=SC2086
    $NM -g --defined-only "$o" >"$work/nm.def" || { echo "check_no_loops: $NM failed on $o" >&2; exit 1; }
    # shellcheck disable=SC2086
    $NM -g --undefined-only "$o" >"$work/nm.use" || { echo "check_no_loops: $NM failed on $o" >&2; exit 1; }
    awk -v n="$name" 'NF == 3 { print $3, n }' "$work/nm.def" >>"$work/defs"
    awk -v n="$name" '{ print n, $NF }' "$work/nm.use" >>"$work/uses"
done
n_objs=$(echo "$objs" | wc -l)
# A -> B for each symbol A uses that B defines (B != A).
awk 'NR == FNR { def[$1] = $2; next } ($2 in def) && def[$2] != $1 { print $1, def[$2] }' \
    "$work/defs" "$work/uses" | sort -u >"$work/calls"
[ -s "$work/calls" ] || { echo "check_no_loops: no call edge among $n_objs objects: nm read nothing" >&2; exit 1; }

# Includes among the project's own files: "x.h" -> x.h, each file named by
# its folder.
for f in "$srcdir"/include/*.h "$srcdir"/src/*/*.[ch] "$srcdir"/mpi_wrappers/*.[ch]; do
    [ -f "$f" ] || continue
    set -- $(layer_of "$f")
    echo "$2/$(basename "$f") $1" >>"$work/layer"
    echo "$(basename "$f") $2/$(basename "$f")" >>"$work/where"
done
for f in "$srcdir"/include/*.h "$srcdir"/src/*/*.[ch] "$srcdir"/mpi_wrappers/*.[ch]; do
    [ -f "$f" ] || continue
    set -- $(layer_of "$f")
    from="$2/$(basename "$f")"
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
        while read -r inc; do
            [ "$inc" = config.h ] || echo "$from $inc"
        done
done | awk 'NR == FNR { where[$1] = $2; next } ($2 in where) { print $1, where[$2] }' \
    "$work/where" - | sort -u >"$work/includes"
[ -s "$work/includes" ] || { echo "check_no_loops: no include edge under $srcdir: nothing read" >&2; exit 1; }

for g in calls includes; do
    if ! tsort "$work/$g" >/dev/null 2>"$work/$g.err"; then
        echo "check_no_loops: files $( [ $g = calls ] && echo call || echo include ) each other in a loop:" >&2
        cat "$work/$g.err" >&2
        fail=1
    fi
    # An edge from a lower folder to a higher one.
    awk 'NR == FNR { layer[$1] = $2; next }
         ($1 in layer) && ($2 in layer) && layer[$1] < layer[$2] { print "  " $1 " -> " $2 }' \
        "$work/layer" "$work/$g" >"$work/$g.up"
    if [ -s "$work/$g.up" ]; then
        echo "check_no_loops: edges ($g) from a folder up to one above it (order: $layers):" >&2
        cat "$work/$g.up" >&2
        fail=1
    fi
done
[ "$fail" -eq 0 ] || exit 1
echo "check_no_loops: $n_objs objects, $(wc -l <"$work/calls") call edges, $(wc -l <"$work/includes") include edges: no loop, no call up"
