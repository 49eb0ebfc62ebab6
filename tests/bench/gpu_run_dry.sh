#!/bin/sh
# The GPU measurement's script (bench/gpu/run.sh) in its CPU-only dry mode,
# on a generated data set: the GPU rank is skipped with a line, the three
# policies run (chunks among them), and the table gives each policy's
# steady step, accuracy, loss and a final split of the whole batch over the
# 3 ranks.  The loss must agree across the policies (the weighted gradient
# is the global batch's, however the samples moved).  No timing is
# asserted.
set -eu
srcdir=${top_srcdir:-.}
builddir=${top_builddir:-.}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpu-run-dry.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

fail() {
    echo "FAIL: $*" >&2
    [ -f "$tmp/out" ] && cat "$tmp/out" >&2
    exit 1
}

# bench/gpu/run.sh carries and runs Open MPI (its mpirun flags, libomnibatch.so).
if [ openmpi != "${OB_MPI_FAMILY:-openmpi}" ]; then
    echo "gpu_run_dry: bench/gpu/run.sh runs Open MPI; this is a ${OB_MPI_FAMILY} build: skipped"
    exit 77
fi
"$builddir/tests/bench/hetsgd_mkdata" "$tmp/data" 2048 256 || fail "generating the data set"
MPIRUN=${MPIRUN:-mpirun} sh "$srcdir/bench/gpu/run.sh" measure --dry-run --builddir "$builddir" \
    --data "$tmp/data" --out "$tmp/run" >"$tmp/out" 2>&1 || fail "the dry run exited non-zero"
grep -q "^gpu-run: gpu rank skipped: dry run without a GPU" "$tmp/out" || fail "no line for the skipped GPU rank"
for policy in static omnibatch oracle chunks; do
    line=$(grep "^$policy " "$tmp/out") || fail "no table row for $policy"
    # policy steady_ms time_to_target final_acc final_loss split
    echo "$line" | awk '$2 + 0 > 0 && $4 + 0 > 0 && $5 + 0 > 0 { ok = 1 } END { exit !ok }' ||
        fail "$policy: row without a step time, accuracy or loss: $line"
    split=$(echo "$line" | awk '{ print $6 }')
    echo "$split" | awk -F, 'NF == 3 && $1 + $2 + $3 == 256 { ok = 1 } END { exit !ok }' ||
        fail "$policy: final split '$split' is not 3 batches summing to 256"
done
grep -q "^steady step time omnibatch/static [0-9.]*, omnibatch/oracle [0-9.]*" "$tmp/out" || fail "no ratio line"
grep -q "^steady step time chunks/omnibatch [0-9.]*, chunks/oracle [0-9.]*" "$tmp/out" || fail "no ratio line for chunks"
grep -q "^chunks: [0-9.]* a rank a step" "$tmp/out" || fail "no line of the chunks a step"
# The spread taken out first: piped into awk, a missing line (no input) or
# one of another shape (read as 0) passed.
spread=$(sed -n 's/^final loss of the 4 policies.*relative spread \([0-9.e+-][0-9.e+-]*\):.*/\1/p' "$tmp/out")
[ -n "$spread" ] || fail "no line giving the relative spread of the 4 policies' final losses"
awk -v s="$spread" 'BEGIN { exit !(s + 0 <= 1e-3) }' || fail "the policies trained to different losses (relative spread $spread)"
# Without a GPU a gpu rank stops the run before the first step with one line
# (built without CUDA, or CUDA finds no device).
if ! nvidia-smi -L >/dev/null 2>&1; then
    rc=0
    "${srcdir}/tests/mpirun.sh" 2 "$builddir/bench/hetsgd/hetsgd" --data "$tmp/data" --batch 64 --epochs 1 \
        --bind --speeds 1,1 --devices cpu,gpu >"$tmp/refused" 2>&1 || rc=$?
    [ "$rc" -ne 0 ] || fail "a gpu rank without a GPU ran"
    grep -q "^hetsgd: --devices: rank 1 is gpu" "$tmp/refused" || { cat "$tmp/refused" >&2; fail "no line for the gpu rank"; }
    grep -q "^hetsgd: epoch" "$tmp/refused" && fail "training started with a gpu rank refused"
fi
echo "gpu_run_dry: the dry run printed its table; losses agree across splits; a gpu rank without a GPU is refused"
