#!/bin/sh
# The cost of interposing omnibatch on MPI, seen from an unmodified program.
#
#   bench/overhead/run.sh [options]
#
# 1. Latency: bench/overhead/overhead runs on NP ranks, alternately plain and
#    with LD_PRELOAD=libomnibatch.so (plain, preload; then preload, plain; ...),
#    ROUNDS times each, so that drifting machine noise hits both alike.  Per
#    operation, type and size it prints the median over rounds of each run's
#    median latency, and the median (min..max) over rounds of the paired
#    ratio preload / plain.
# 2. Instructions: one rank under callgrind, plain and preloaded, runs N and
#    2N calls of each kind in functions of their own; the difference of their
#    inclusive counts over N is the exact instruction count of one call, and
#    preload minus plain is what the interposition costs per call.
#
# Options:
#   --builddir DIR   where the build is (default: $top_builddir or .)
#   --lib PATH       the library to preload (default: DIR/.libs/libomnibatch.so, or libomnibatch-mpich.so in an MPICH build)
#   --np N           ranks of the latency runs (default 2)
#   --rounds R       plain/preload pairs (default 8: each order 4 times)
#   --max-seconds S  start no new round after S seconds of latency runs, once
#                    2 rounds are done (default 45: a loaded machine stretches
#                    every run, and the ratios need pairs, not many of them)
#   --scale S        multiply the timed samples per size (default 1; 0.1 for a quick look)
#   --max-bytes N    largest message (default 4194304); --factor F (2 or 4, default 4)
#   --cg-calls N     N of the callgrind loops (default 2000); --cg-bytes N (default 4096)
#   --no-callgrind   skip the instruction counts
#   --summary FILE   also write the results as JSON
#   --keep DIR       keep every run's raw output in DIR
# Environment: MPIRUN (the launcher tests/mpirun.sh uses), VALGRIND,
# OMNIBATCH_MIN_BYTES (only to label which calls the library should
# recognise as gradient allreduces; default 1024), any OMNIBATCH_* for the
# preloaded runs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
builddir=${top_builddir:-.}
lib=
np=2
rounds=8
max_seconds=45
scale=1
max_bytes=4194304
factor=4
cg_calls=2000
cg_bytes=4096
callgrind=yes
summary=
keep=
launcher="$here/../../tests/mpirun.sh"

die() { echo "overhead/run.sh: $*" >&2; exit 2; }
need_value() { [ "$#" -ge 2 ] || die "$1: missing value"; }
is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

while [ "$#" -gt 0 ]; do
    case $1 in
    --builddir) need_value "$@"; builddir=$2; shift 2 ;;
    --lib) need_value "$@"; lib=$2; shift 2 ;;
    --np) need_value "$@"; np=$2; shift 2 ;;
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --max-seconds) need_value "$@"; max_seconds=$2; shift 2 ;;
    --scale) need_value "$@"; scale=$2; shift 2 ;;
    --max-bytes) need_value "$@"; max_bytes=$2; shift 2 ;;
    --factor) need_value "$@"; factor=$2; shift 2 ;;
    --cg-calls) need_value "$@"; cg_calls=$2; shift 2 ;;
    --cg-bytes) need_value "$@"; cg_bytes=$2; shift 2 ;;
    --no-callgrind) callgrind=no; shift ;;
    --summary) need_value "$@"; summary=$2; shift 2 ;;
    --keep) need_value "$@"; keep=$2; shift 2 ;;
    --launcher) need_value "$@"; launcher=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
    esac
done
for v in np rounds max_seconds max_bytes factor cg_calls cg_bytes; do
    eval "val=\$$v"
    is_uint "$val" && [ "$val" -ge 1 ] || die "--$(echo $v | tr _ -)='$val': expected a positive integer"
done
awk -v s="$scale" 'BEGIN { exit !(s + 0 > 0 && s == s + 0) }' \
    || die "--scale='$scale': expected a positive number"

prog=$builddir/bench/overhead/overhead
[ -x "$prog" ] || die "$prog not built (run make first, or give --builddir)"
[ -n "$lib" ] || lib=$builddir/.libs/lib${OB_LIBNAME:-omnibatch}.so
[ -f "$lib" ] || die "$lib not found (run make first, or give --lib)"
case $lib in /*) ;; *) lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib") ;; esac
min_bytes=${OMNIBATCH_MIN_BYTES:-1024}

# Does the library interpose at all?  Without exported MPI_* wrappers the
# preloaded runs measure plain MPI, and the table says so.
if ${NM:-nm} -D --defined-only "$lib" 2>/dev/null | awk '$3 == "MPI_Allreduce" { f = 1 } END { exit !f }'; then
    interposing=yes
else
    interposing=no
fi

if [ -n "$keep" ]; then
    mkdir -p "$keep"
    work=$keep
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/ob-overhead.XXXXXX")
    trap 'rm -rf "$work"' EXIT INT TERM
fi

iters=$(awk -v s="$scale" 'BEGIN { n = int(1000 * s + 0.5); print (n < 1 ? 1 : n) }')
min_iters=$(awk -v s="$scale" 'BEGIN { n = int(20 * s + 0.5); print (n < 3 ? 3 : n) }')
start=$(date +%s)

# One latency run: $1 = plain | preload, $2 = round.
run_one() {
    out=$work/$1.$2
    if [ preload = "$1" ]; then
        OB_PRELOAD=$lib "$launcher" "$np" "$prog" --iters "$iters" --min-iters "$min_iters" \
            --max-bytes "$max_bytes" --factor "$factor" >"$out" 2>"$out.err" || {
            cat "$out.err" >&2; die "preloaded run $2 failed"; }
    else
        OB_PRELOAD= "$launcher" "$np" "$prog" --iters "$iters" --min-iters "$min_iters" \
            --max-bytes "$max_bytes" --factor "$factor" >"$out" 2>"$out.err" || {
            cat "$out.err" >&2; die "plain run $2 failed"; }
    fi
}

echo "overhead: $np ranks, up to $rounds rounds of plain/preload (interleaved), samples per size x$scale"
echo "overhead: library $lib (interposes MPI_Allreduce: $interposing)"
r=1
while [ "$r" -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then
        run_one plain "$r"; run_one preload "$r"
    else
        run_one preload "$r"; run_one plain "$r"
    fi
    if [ "$r" -ge 2 ] && [ "$r" -lt "$rounds" ] && [ $(($(date +%s) - start)) -ge "$max_seconds" ]; then
        echo "overhead: stopping after $r rounds: --max-seconds $max_seconds reached (a loaded machine?)"
        rounds=$r
    fi
    r=$((r + 1))
done
lat_end=$(date +%s)

# Combine: per (op, type, bytes) the median over rounds of the run medians
# (and of their 90th and 99th percentiles), and the median, least and
# largest paired ratio of the medians.  Plain awk (Debian's mawk
# has no sort): insertion sort of the few values per key.
latency=$work/latency.txt
for f in "$work"/plain.* "$work"/preload.*; do
    case $f in *.err) continue ;; esac
    mode=${f##*/}; round=${mode#*.}; mode=${mode%%.*}
    awk -v mode="$mode" -v round="$round" '$1 ~ /^i?allreduce$/ && NF >= 9 { print mode, round, $1, $2, $3, $5, $7, $8 }' "$f"
done | awk -v min_bytes="$min_bytes" '
function median(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    key = $3 " " $4 " " $5
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    val[$1, key, $2] = $6; p90[$1, key, $2] = $7; p99[$1, key, $2] = $8
    if ($2 > maxr) maxr = $2
}
END {
    for (k = 1; k <= nk; k++) {
        key = order[k]; np = 0; nq = 0; nr = 0
        for (r = 1; r <= maxr; r++) {
            hp = (("plain", key, r) in val); hq = (("preload", key, r) in val)
            if (hp) { pl[++np] = val["plain", key, r]; pl90[np] = p90["plain", key, r]; pl99[np] = p99["plain", key, r] }
            if (hq) { pr[++nq] = val["preload", key, r]; pr90[nq] = p90["preload", key, r]; pr99[nq] = p99["preload", key, r] }
            if (hp && hq && val["plain", key, r] > 0) ra[++nr] = val["preload", key, r] / val["plain", key, r]
        }
        if (np == 0 || nq == 0 || nr == 0) continue
        lo = ra[1]; hi = ra[1]
        for (i = 2; i <= nr; i++) { if (ra[i] < lo) lo = ra[i]; if (ra[i] > hi) hi = ra[i] }
        split(key, f, " ")
        cls = (f[2] == "float" && f[3] + 0 >= min_bytes + 0) ? "gradient" : "passthrough"
        printf "%s %s %s %s %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f %.4f\n", f[1], f[2], f[3], cls,
               median(pl, np), median(pr, nq), median(ra, nr), lo, hi,
               median(pl90, np), median(pr90, nq), median(pl99, np), median(pr99, nq)
    }
}' >"$latency"

echo
echo "Latency per call (us): median over $rounds rounds of each run's median (and 90th percentile);"
echo "ratio = preload / plain of the medians, paired by round: median (least..largest)"
printf '%-10s %-5s %8s  %-11s %10s %10s %7s  %-15s %9s %9s\n' op type bytes class plain preload ratio "(min..max)" p90-plain p90-pre
awk '{ printf "%-10s %-5s %8d  %-11s %10.3f %10.3f %7.3f  (%.3f..%.3f) %9.3f %9.3f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$latency"
[ yes = "$interposing" ] || echo "note: $lib exports no MPI_Allreduce, so nothing was interposed: the ratios show run-to-run noise only"

# Instruction counts per call under callgrind (1 rank, deterministic).
instr=$work/instructions.txt
: >"$instr"
cg_note=
valgrind=${VALGRIND:-valgrind}
if [ yes = "$callgrind" ] && ! command -v "$valgrind" >/dev/null 2>&1; then
    cg_note="valgrind not found: instruction counts skipped"
    callgrind=no
fi
# A build instrumented with AddressSanitizer cannot run under valgrind (both
# claim the shadow memory), and its counts would measure the instrumentation.
if [ yes = "$callgrind" ] && ldd "$lib" 2>/dev/null | grep -q 'libasan'; then
    cg_note="$lib is built with AddressSanitizer, which valgrind cannot run: instruction counts skipped"
    callgrind=no
fi
if [ yes = "$callgrind" ]; then
    cg_one() {  # $1 = plain | preload
        cgout=$work/callgrind.$1.out
        if [ preload = "$1" ]; then
            LD_PRELOAD=$lib "$valgrind" --tool=callgrind --callgrind-out-file="$cgout" \
                "$prog" --callgrind "$cg_calls" --cg-bytes "$cg_bytes" >"$cgout.log" 2>&1
        else
            "$valgrind" --tool=callgrind --callgrind-out-file="$cgout" \
                "$prog" --callgrind "$cg_calls" --cg-bytes "$cg_bytes" >"$cgout.log" 2>&1
        fi || { cat "$cgout.log" >&2; die "callgrind run ($1) failed"; }
        ${CALLGRIND_ANNOTATE:-callgrind_annotate} --inclusive=yes --auto=no --threshold=100 "$cgout" |
            awk -v mode="$1" -v n="$cg_calls" '
            {
                for (i = 1; i <= NF; i++) if ($i ~ /:ob_cg_[a-z]+_[a-z]+_x[12]$/) {
                    name = $i; sub(/.*:ob_cg_/, "", name); c = $1; gsub(",", "", c); v[name] = c
                }
            }
            END {
                for (k in v) if (k ~ /_x1$/) {
                    base = k; sub(/_x1$/, "", base)
                    if ((base "_x2") in v) {
                        split(base, f, "_")
                        printf "%s %s %s %.2f %.2f\n", mode, f[1], f[2], (v[base "_x2"] - v[k]) / n, v[k] / n
                    }
                }
            }'
    }
    # One row per kind: op type class plain preload (preload - plain) steady.
    # The interposition cost is exact when each call of the layer costs the
    # same in the N loop as in the extra N calls of the 2N loop; a layer
    # that does periodic work (learning a pattern, a report) makes the two
    # differ: steady = no then, and a larger --cg-calls averages the work in.
    { cg_one plain; cg_one preload; } | awk -v min_bytes="$min_bytes" -v bytes="$cg_bytes" '
    {
        key = $2 " " $3; if (!(key in seen)) { seen[key] = 1; order[++n] = key }
        v[$1, key] = $4; w[$1, key] = $5
    }
    END {
        for (k = 1; k <= n; k++) {
            key = order[k]; split(key, f, " ")
            cls = (f[2] == "float" && bytes + 0 >= min_bytes + 0) ? "gradient" : "passthrough"
            d = v["preload", key] - v["plain", key]
            e = d - (w["preload", key] - w["plain", key]); if (e < 0) e = -e
            printf "%s %s %s %.2f %.2f %.2f %s\n", f[1], f[2], cls, v["plain", key], v["preload", key],
                   d, (e > 1 + 0.02 * (d < 0 ? -d : d)) ? "no" : "yes"
        }
    }' | sort -k1,2 >"$instr"
fi
end=$(date +%s)

if [ -s "$instr" ]; then
    echo
    echo "Instructions per call (callgrind, 1 rank, $cg_bytes bytes, ($cg_calls x2 - $cg_calls x1 calls) / $cg_calls):"
    printf '%-10s %-5s %-11s %10s %10s %13s %7s\n' op type class plain preload interposition steady
    awk '{ printf "%-10s %-5s %-11s %10.1f %10.1f %13.1f %7s\n", $1, $2, $3, $4, $5, $6, $7 }' "$instr"
    if awk '$7 == "no" { f = 1 } END { exit !f }' "$instr"; then
        echo "note: steady = no: the layer costs differently per call in the N and the 2N loop (periodic work);"
        echo "      the figure is the mean over the 2N loop's extra N calls; --cg-calls larger averages more"
    fi
elif [ -n "$cg_note" ]; then
    echo "note: $cg_note"
fi
echo
echo "overhead: latency runs $((lat_end - start)) s, callgrind $((end - lat_end)) s"

if [ -n "$summary" ]; then
    {
        printf '{\n  "benchmark": "overhead",\n  "ranks": %s,\n  "rounds": %s,\n  "scale": %s,\n' "$np" "$rounds" "$scale"
        printf '  "library": "%s",\n  "interposing": %s,\n  "min_bytes": %s,\n' "$lib" \
            "$([ yes = "$interposing" ] && echo true || echo false)" "$min_bytes"
        printf '  "latency_us": [\n'
        awk '{ printf "%s    {\"op\": \"%s\", \"type\": \"%s\", \"bytes\": %d, \"class\": \"%s\", \"plain\": %.4f, \"preload\": %.4f, \"ratio\": %.4f, \"ratio_min\": %.4f, \"ratio_max\": %.4f, \"plain_p90\": %.4f, \"preload_p90\": %.4f, \"plain_p99\": %.4f, \"preload_p99\": %.4f}", (NR > 1 ? ",\n" : ""), $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 } END { if (NR) print "" }' "$latency"
        printf '  ],\n  "instructions_per_call": [\n'
        awk -v bytes="$cg_bytes" '{ printf "%s    {\"op\": \"%s\", \"type\": \"%s\", \"bytes\": %d, \"class\": \"%s\", \"plain\": %.2f, \"preload\": %.2f, \"interposition\": %.2f, \"steady\": %s}", (NR > 1 ? ",\n" : ""), $1, $2, bytes, $3, $4, $5, $6, ($7 == "yes" ? "true" : "false") } END { if (NR) print "" }' "$instr"
        printf '  ],\n  "seconds": {"latency": %s, "callgrind": %s}\n}\n' "$((lat_end - start))" "$((end - lat_end))"
    } >"$summary"
    echo "overhead: summary written to $summary"
fi
