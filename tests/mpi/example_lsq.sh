#!/bin/sh
# The examples train for real: the linked one, and the one that does not link
# omnibatch, run plainly (its own equal split) and with the library
# preloaded (the library's plan).  Each must cut the loss a hundredfold.
set -eu
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# "... loss A -> B, plan b0 b1 ...": B < A / 100 and the plan sums to $2.
check_line() {
    line=$(grep "$1" "$out") || { echo "example_lsq: no line with '$1'" >&2; cat "$out" >&2; exit 1; }
    echo "$line"
    echo "$line" | awk -v B="$2" '{
        for (i = 1; i <= NF; i++) {
            if ($i == "loss") { a = $(i + 1) + 0; b = $(i + 3); sub(/,$/, "", b); b += 0 }
            if ($i == "plan") { for (j = i + 1; j <= NF; j++) sum += $j }
        }
        if (!(b < a / 100)) { print "example_lsq: the loss did not fall a hundredfold"; exit 1 }
        if (sum != B) { print "example_lsq: the plan sums to " sum ", not " B; exit 1 }
    }'
}

echo "== linked, 3 ranks"
"$top_srcdir/tests/mpirun.sh" 3 "$top_builddir/examples/lsq_train" 3 >"$out"
check_line "lsq_train: loss" 128

# The run-time lookup must not depend on linking: the program does not.
if command -v readelf >/dev/null 2>&1; then
    if readelf -d "$top_builddir/examples/lsq_train_dl" | grep -q 'NEEDED.*libomnibatch'; then
        echo "example_lsq: lsq_train_dl is linked with libomnibatch" >&2
        exit 1
    fi
else
    echo "example_lsq: no readelf: that lsq_train_dl does not link libomnibatch is not checked"
fi

echo "== not linked, 2 ranks, no library"
"$top_srcdir/tests/mpirun.sh" 2 "$top_builddir/examples/lsq_train_dl" 3 >"$out"
check_line "lsq_train_dl: omnibatch absent, equal batches" 128

echo "== not linked, 3 ranks, library preloaded"
OB_PRELOAD="$(cd "$top_builddir" && pwd)/.libs/lib${OB_LIBNAME:-omnibatch}.so" \
    "$top_srcdir/tests/mpirun.sh" 3 "$top_builddir/examples/lsq_train_dl" 3 >"$out"
check_line "lsq_train_dl: omnibatch [0-9.]* found" 128
