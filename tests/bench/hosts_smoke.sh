#!/bin/sh
# make bench-hosts in --smoke mode: three network namespaces with their own
# host names, Open MPI over TCP between them, hetsgd (static, omnibatch) and
# the preload on an unmodified program for equal hosts, a slow CPU and a
# slow link, on a generated data set, two interleaved pairs per case; the
# slow CPU case with the oracle and the chunked step beside them.
# Checks the table's rows (medians and the ratios' range), the host
# names the report saw, that nothing the script made is left behind, and
# that a malformed --cost is named.  No timing is asserted.  Skipped (77)
# where root cannot make namespaces.
set -eu
# The script passes Open MPI's mpirun flags (and its TCP and rsh setup).
if [ openmpi != "${OB_MPI_FAMILY:-openmpi}" ]; then
    echo "hosts_smoke: the script runs Open MPI; this is a ${OB_MPI_FAMILY} build: skipped"
    exit 77
fi
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hosts-smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}

"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 512 128 || fail "generating the data set"
# A --cost that is not three numbers is named before anything is made.
rc=0
sh "$srcdir/bench/hosts/run.sh" --builddir "$builddir" --cost 0.001,2e-5 >"$tmp/out" 2>&1 || rc=$?
[ 2 -eq "$rc" ] || fail "--cost 0.001,2e-5: exit $rc, expected 2"
grep -q "^bench-hosts: --cost '0.001,2e-5': expected three numbers" "$tmp/out" || fail "no line naming --cost"
rc=0
sh "$srcdir/bench/hosts/run.sh" --builddir "$builddir" --smoke --batch 600 >"$tmp/out" 2>&1 || rc=$?
[ 2 -eq "$rc" ] || fail "--smoke --batch 600: exit $rc, expected 2"
grep -q "^bench-hosts: --batch '600': expected an integer from 3 to 512$" "$tmp/out" || fail "no line naming --batch"
before=$(ip netns list 2>/dev/null | grep -c '^obh' || true)
rc=0
sh "$srcdir/bench/hosts/run.sh" --builddir "$builddir" --smoke --batch 96 --data "$tmp/data" --out "$tmp/runs" \
    >"$tmp/out" 2>&1 || rc=$?
[ 77 -eq "$rc" ] && { cat "$tmp/out"; exit 77; }
[ 0 -eq "$rc" ] || fail "bench/hosts/run.sh --smoke exited $rc"
after=$(ip netns list 2>/dev/null | grep -c '^obh' || true)
[ "$before" = "$after" ] || fail "namespaces left behind: $(ip netns list | grep '^obh')"
ip link show 2>/dev/null | grep -q ' obh[0-9]*br' && fail "a bridge was left behind"
for c in equal slowcpu slowlink; do
    grep -Eq "^$c +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+-[0-9.]+ " "$tmp/out" || fail "no row for case $c"
    # --smoke runs two pairs, interleaved.
    for k in 1 2; do
        for p in static omnibatch; do
            [ -s "$tmp/runs/$c-$p.$k.summary" ] || fail "case $c: no run $k of $p"
        done
    done
done
# The slow CPU case ran the oracle and the chunked step too, from one
# calibrated cost: a row per pair, the medians and the target's line.
# Whether samples moved is the run's (a balanced plan moves none); that they
# can move across hosts, exactly, tests/mpi/mpi_api_chunks_hosts.sh asserts.
for k in 1 2; do
    for p in oracle chunks; do
        [ -s "$tmp/runs/slowcpu-$p.$k.summary" ] || fail "case slowcpu: no run $k of $p"
    done
    grep -Eq "^$k +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$" "$tmp/out" \
        || fail "no row $k of the chunked step's table"
done
grep -q '^bench-hosts: slow CPU, the chunked step .*--cost [0-9]' "$tmp/out" || fail "no calibrated cost named"
grep -q '^bench-hosts: 3 hosts .* global batch 96;' "$tmp/out" || fail "--batch 96: not in the header"
grep -q ' batch=96 ' "$tmp/runs/slowcpu-chunks.1.summary" || fail "--batch 96: the runs did not get it"
grep -Eq '^median +[0-9.]+ ' "$tmp/out" || fail "no median row of the chunked step's table"
grep -Eq '^chunks/oracle: median [0-9.]+ \(range [0-9.]+-[0-9.]+\) over 2 repetition\(s\): target <= 1.05: (met|MISSED); samples moved across hosts in (every|NOT every) run' \
    "$tmp/out" || fail "no target line of the chunked step"
# The ranks ran on three distinct hosts, as the report saw them.
for h in obhost0 obhost1 obhost2; do
    grep -q "\"host\": \"$h\"" "$tmp/runs/equal-static.1.json" || fail "the report saw no host $h"
done
grep -q "results right" "$tmp/runs/slowlink-unmodified.out" || fail "the unmodified program's results"
cat "$tmp/out"
