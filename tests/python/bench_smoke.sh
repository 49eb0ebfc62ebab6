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
OB_PY_ENV="OMNIBATCH_LIBRARY=$library OMP_NUM_THREADS=1" \
    run 4 "$src/bench/torch/bench_torch.py" --data "$data" --subset 768 --test-subset 256 \
    --epochs 2 --eval-every 2 --slowdown 1 --overhead-steps 2 --overhead-rounds 2 | tee "$out"
for want in "^static " "^omnibatch " "^omnilearn " "^target: time to 85% " \
            "^target: final accuracy " "^overhead: equal plan, 2 rounds of 2 steps" \
            "^overhead: the per-step calls alone" "^target: the Python layer "; do
    grep -q "$want" "$out" || { echo "bench_smoke: no line matching '$want'"; exit 1; }
done
# Every plan holds the global batch (256).
awk '/^(static|omnibatch|omnilearn) / { s = 0; for (i = 8; i <= NF; i++) s += $i
                                          if (s != 256) { print "bench_smoke: plan sums to " s; exit 1 } }' "$out"
