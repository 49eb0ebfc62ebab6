#!/bin/sh
# The PyTorch example of docs/python.md (the README's Python and PyTorch
# page) is examples/torch_train.py, to the byte, and it trains: through DDP
# and through mpi4py, with the library and without.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy, torch"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
example="$src/examples/torch_train.py"
"$py" - "$src/docs/python.md" "$example" <<'PY'
import sys
page, example = (open(p).read() for p in sys.argv[1:])
assert "```python\n" + example + "```\n" in page, sys.argv[1] + "'s PyTorch example differs from " + sys.argv[2]
PY
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Without the library: the build's package pointed at an install that is not there.
cp -r "$build/python/omnibatch" "$out/"
sed "s|^LIBRARY = .*|LIBRARY = \"$out/absent.so\"|" "$build/python/omnibatch/_build.py" \
    >"$out/omnibatch/_build.py"
for reduce in ddp mpi4py; do
    for how in found absent; do
        if [ "$how" = found ]; then
            export OB_PY_ENV="OMNIBATCH_LIBRARY=$library MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
        else
            pypath="$out" OB_PY_ENV="MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
        fi
        echo "== np 2, $reduce, omnibatch $how"
        # Into a file, then shown: through a pipe (| tee) the run's exit status was lost.
        pypath=${pypath:-} run 2 "$example" "$reduce" >"$out/log" ||
            { cat "$out/log"; echo "readme_example: $reduce, omnibatch $how: exited non-zero"; exit 1; }
        cat "$out/log"
        # Trained: from about 0.69 (chance) to well below; the plan holds the global batch.
        awk -v want="$reduce: omnibatch $how:" '
            index($0, want) == 1 {
                for (i = 1; i <= NF; i++) {
                    if ($i == "loss") { loss = $(i + 1) + 0 }
                    if ($i == "plan") { for (j = i + 1; j <= NF; j++) sum += $j }
                }
                seen = 1
            }
            END { if (!seen || !(loss < 0.2) || sum != 256) { print "readme_example: bad result"; exit 1 } }
        ' "$out/log"
    done
done
