#!/bin/sh
# make bench-torch's program runs end to end on a sliver of Fashion-MNIST:
# every policy (OmniLearn's rule is applied once, after the first
# epoch), the table, the targets and the overhead line.  Figures
# meaningless; skipped without torch or the data set.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy, torch"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
data=/usr/share/datasets/fashion-mnist
if [ ! -e "$data/train-images-idx3-ubyte.gz" ] && [ ! -e "$data/train-images-idx3-ubyte" ]; then
    echo "bench_smoke: no Fashion-MNIST in $data (dataset-fashion-mnist): skipped"
    exit 77
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# Into a file, then shown: through a pipe (| tee) the run's exit status was lost.
OB_PY_ENV="OMNIBATCH_LIBRARY=$library OMP_NUM_THREADS=1" \
    run 4 "$src/bench/torch/bench_torch.py" --data "$data" --subset 768 --test-subset 256 \
    --epochs 2 --eval-every 2 --slowdown 1 --overhead-steps 2 --overhead-rounds 2 >"$out" ||
    { cat "$out"; echo "bench_smoke: bench_torch.py exited non-zero"; exit 1; }
cat "$out"
for want in "^static " "^omnibatch " "^omnilearn " "^target: time to 85% " \
            "^target: final accuracy " "^overhead: equal plan, 2 rounds of 2 steps" \
            "^overhead: the per-step calls alone" "^target: the Python layer "; do
    grep -q "$want" "$out" || { echo "bench_smoke: no line matching '$want'"; exit 1; }
done
# Every plan holds the global batch (256).
awk '/^(static|omnibatch|omnilearn) / { s = 0; for (i = 8; i <= NF; i++) s += $i
                                          if (s != 256) { print "bench_smoke: plan sums to " s; exit 1 } }' "$out"
# --quota: the operating system enforces the speeds (a cgroup per rank),
# or, without a writable cpu controller, one line and nothing measured.
# Either way no group of the run is left behind.
OB_PY_ENV="OMNIBATCH_LIBRARY=$library OMP_NUM_THREADS=1" \
    run 4 "$src/bench/torch/bench_torch.py" --data "$data" --subset 512 --test-subset 128 \
    --epochs 1 --eval-every 2 --quota 0.5,0.5,0.5,0.25 --policies static,omnibatch \
    --overhead-steps 0 >"$out" || { cat "$out"; echo "bench_smoke: bench_torch.py --quota exited non-zero"; exit 1; }
cat "$out"
if grep -q "^bench-torch: --quota: .*: nothing measured" "$out"; then
    echo "bench_smoke: no cgroup cpu controller: the quota mode said so"
else
    for want in "CPU quota 0.5,0.5,0.5,0.25 of a core" "^bench-torch: omnibatch: per rank periods throttled" \
                "^omnibatch " "(limit 1.75x)"; do
        grep -q -- "$want" "$out" || { echo "bench_smoke: --quota: no line matching '$want'"; exit 1; }
    done
fi
for root in /sys/fs/cgroup/cpu /sys/fs/cgroup; do
    if ls -d "$root"/omnibatch-torch.* >/dev/null 2>&1; then
        echo "bench_smoke: --quota left a cgroup behind: $(ls -d "$root"/omnibatch-torch.*)"
        exit 1
    fi
done
