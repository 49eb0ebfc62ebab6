#!/bin/sh
# Steps worked in chunks through PyTorch (test_torch_chunks.py) at 2, 3 and
# 4 ranks, a rank that sleeps inside its first chunk of every step: every
# sample once, the exact gradient and one reduction per rank per step
# through DDP (gloo) and mpi4py; the DataLoader with worker processes;
# misuse; examples/torch_chunks.py trains, with the library and without
# (one chunk per step).  Skipped without Debian's python3-torch and python3-mpi4py.
set -eu
# shellcheck disable=SC2034  # read by common.sh
needs="mpi4py, numpy, torch"
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
# torch.distributed's rendezvous: rank 0's free port, on this host.
export OB_PY_ENV="OMNIBATCH_LIBRARY=$library MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
# Four ranks of torch in chunks took over 120 s at a load of 16-20 on 2 cores.
export OB_MPI_TIMEOUT="${OB_MPI_TIMEOUT:-300}"
run 2 "$here/test_torch_chunks.py" exact misuse
run 3 "$here/test_torch_chunks.py" exact loader
run 4 "$here/test_torch_chunks.py" exact

# The example, through DDP and mpi4py, with the library and without it (the
# build's package pointed at an install that is not there).
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cp -r "$build/python/omnibatch" "$out/"
sed "s|^LIBRARY = .*|LIBRARY = \"$out/absent.so\"|" "$build/python/omnibatch/_build.py" \
    >"$out/omnibatch/_build.py"
with_library_pypath=$pypath with_library_env=$OB_PY_ENV
for reduce in ddp mpi4py; do
    for how in found absent; do
        pypath=$with_library_pypath OB_PY_ENV=$with_library_env
        if [ "$how" = absent ]; then
            pypath="$out" OB_PY_ENV="MASTER_ADDR=127.0.0.1 OMP_NUM_THREADS=1"
        fi
        echo "== examples/torch_chunks.py: np 2, $reduce, omnibatch $how"
        run 2 "$src/examples/torch_chunks.py" "$reduce" | tee "$out/log"
        # Trained: from about 0.69 (chance) to well below.
        awk -v want="$reduce: omnibatch $how:" '
            index($0, want) == 1 {
                for (i = 1; i <= NF; i++) if ($i == "loss") loss = $(i + 1) + 0
                seen = 1
            }
            END { if (!seen || !(loss < 0.2)) { print "torch_chunks: the example did not train"; exit 1 } }
        ' "$out/log"
    done
done
