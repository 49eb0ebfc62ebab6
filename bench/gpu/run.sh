#!/bin/sh
# The GPU measurement: CPU ranks and a GPU rank finishing together.
#
# Fashion-MNIST, 4 ranks of bench/hetsgd: 3 CPU ranks of 4 bound cores each
# and 1 GPU rank (cuBLAS, its own 4 cores), the same model, data and seed
# under each policy: static (equal shares), omnibatch, the oracle (the
# water-filling split of the calibrated costs), and chunks (omnibatch with
# each step worked in chunks that move to a rank that is free: CPU and GPU
# ranks take from each other's ranges inside the step).  The GPU rank's
# OMNIBATCH_MAX_BATCH is its memory bound (a chunk is never larger than a
# rank's plan).  Printed: steady step time, time to 85% test accuracy, final
# accuracy and the final split of each policy, the ratios omnibatch/static,
# omnibatch/oracle, chunks/omnibatch and chunks/oracle, measured side by
# side in this one run, and the chunks a rank worked a step and the share
# of samples that moved.
#
# Two steps, because the GPU machine has no network and little device time:
#
#   here (the build machine, after ./configure && make):
#     sh bench/gpu/run.sh prepare
#   fills bench/gpu/carry/ (ignored by git, about 45 MiB): the built
#   binaries, Open MPI's and its libraries' Debian packages (apt-get
#   download, unpacked there with dpkg -x) and Fashion-MNIST; it prints the
#   command to run there.
#
#   on the GPU machine, in the working tree with bench/gpu/carry carried:
#     sh bench/gpu/run.sh measure
#
# Anywhere without a GPU: sh bench/gpu/run.sh measure --dry-run [--builddir .]
# runs the same steps on 3 CPU ranks, skipping the GPU rank with a line
# (tests/bench/gpu_run_dry.sh does, in make check).  After prepare, as root:
#     sh bench/gpu/run.sh check-carry
# runs that dry run from the carried packages with this machine's own Open
# MPI, OpenBLAS and hwloc hidden, so nothing the GPU machine lacks is missed.
#
# Options of measure:
#   --carry DIR     what prepare filled (default: bench/gpu/carry beside this script)
#   --builddir DIR  take the binaries from this build instead, and the system's MPI
#   --data DIR      Fashion-MNIST IDX files (default: the carried copy, else
#                   /usr/share/datasets/fashion-mnist)
#   --out DIR       logs, traces and summaries (default: a new temporary folder); where the
#                   device tool's $OUT is set, its table and summaries are copied there and the
#                   rest packed into one gpu-run-logs.tar.gz (it brings back 8 files at most)
#   --epochs N      epochs per policy (default 10; dry run 1)
#   --dry-run       no GPU: 3 CPU ranks, small settings, the GPU rank skipped
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# Settings of the measurement, one place.
BATCH=2048                 # the global batch
GPU_MAX_BATCH=1536         # the GPU rank's memory bound (OMNIBATCH_MAX_BATCH): 3/4 of the batch
CPU_CORES=4                # cores of each CPU rank
GPU_CORES=4                # cores of the GPU rank (its host side and evaluation)
CPU_RANKS=3
LR=0.2
EPOCHS=10                  # several times the epochs to 85% at this batch and rate (bench/RESULTS.md)
EVAL_EVERY=5               # steps between evaluations: resolution of the time to target
TARGET=0.85
RUN_LIMIT_S=240            # one policy's run at most (a hang fails, it does not eat the lease)
POLICIES="static omnibatch oracle chunks"
# Open MPI packages and the libraries hetsgd needs beside the CUDA ones
# (the GPU machine has CUDA, cuBLAS and zlib).
DEBS="libopenmpi3 openmpi-bin openmpi-common libpmix2 libevent-core-2.1-7 libevent-pthreads-2.1-7
      libhwloc15 libudev1 libopenblas0-pthread libgfortran5 libquadmath0"

say() {
    echo "gpu-run: $*"
}

die() {
    echo "gpu-run: error: $*" >&2
    exit 1
}

# ---------------------------------------------------------------- prepare

# The real executable of a libtool-built program (its wrapper script sets
# paths of this machine only).
real_binary() {
    dir=$(dirname "$1")
    base=$(basename "$1")
    if [ -x "$dir/.libs/$base" ]; then
        echo "$dir/.libs/$base"
    else
        echo "$1"
    fi
}

prepare() {
    builddir=$top
    data=/usr/share/datasets/fashion-mnist
    while [ $# -gt 0 ]; do
        case $1 in
        --builddir) builddir=$(cd "$2" && pwd); shift 2 ;;
        --data) data=$2; shift 2 ;;
        *) die "prepare: unknown option '$1' (expected --builddir DIR or --data DIR)" ;;
        esac
    done
    carry=$here/carry
    [ -x "$builddir/bench/hetsgd/hetsgd" ] || die "no $builddir/bench/hetsgd/hetsgd: run ./configure && make first"
    grep -q '^#define HAVE_CUDA 1' "$builddir/config.h" ||
        die "this build has no CUDA backend (configure's summary line CUDA says why): hetsgd cannot run a GPU rank"
    make -C "$builddir" -s tests/unit/platform/memtype_gpu tests/bench/hetsgd_gpu_grad tests/mpi/mpi_gradient_gpu >/dev/null
    rm -rf "$carry"
    mkdir -p "$carry/bin" "$carry/lib" "$carry/debs" "$carry/data"
    cp "$(real_binary "$builddir/bench/hetsgd/hetsgd")" "$carry/bin/hetsgd"
    cp "$(real_binary "$builddir/tests/unit/platform/memtype_gpu")" "$carry/bin/memtype_gpu"
    cp "$(real_binary "$builddir/tests/bench/hetsgd_gpu_grad")" "$carry/bin/hetsgd_gpu_grad"
    cp "$(real_binary "$builddir/tests/mpi/mpi_gradient_gpu")" "$carry/bin/mpi_gradient_gpu"
    soname=$(readelf -d "$builddir/.libs/libomnibatch.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
    [ -n "$soname" ] || die "cannot read the soname of $builddir/.libs/libomnibatch.so"
    cp -L "$builddir/.libs/$soname" "$carry/lib/$soname"
    for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
        [ -f "$data/$f.gz" ] || die "no $data/$f.gz: install the Debian package dataset-fashion-mnist or give --data"
        cp "$data/$f.gz" "$carry/data/"
    done
    # shellcheck disable=SC2086
    (cd "$carry/debs" && apt-get download $DEBS >/dev/null 2>&1) ||
        die "apt-get download of the Open MPI packages failed (needs the Debian mirror)"
    {
        echo "prepared $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname) from $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo '?')"
        (cd "$carry" && ls debs)
    } >"$carry/MANIFEST"
    size=$(du -sm "$carry" | cut -f1)
    say "bench/gpu/carry holds $size MiB (the working tree that travels may hold 64 MiB in all)"
    say "on the GPU machine, with bench/gpu/carry carried: sh bench/gpu/run.sh measure"
}

# ---------------------------------------------------------------- measure

# dpkg -x each carried package into $1; without dpkg, the same with
# Python's tarfile (a .deb is an ar archive holding data.tar.*).
unpack_debs() {
    root=$1
    mkdir -p "$root"
    for deb in "$carry"/debs/*.deb; do
        [ -f "$deb" ] || die "no packages in $carry/debs: run 'sh bench/gpu/run.sh prepare' on the build machine"
        if command -v dpkg >/dev/null 2>&1; then
            dpkg -x "$deb" "$root"
        else
            python3 - "$deb" "$root" <<'EOF'
import io, sys, tarfile
deb, root = sys.argv[1], sys.argv[2]
data = open(deb, 'rb').read()
assert data[:8] == b'!<arch>\n', deb + ': not a Debian package'
pos = 8
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip('/')
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    if name.startswith('data.tar'):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(root)
    pos += 60 + size + (size & 1)
EOF
        fi
    done
}

# Folders holding the CUDA libraries hetsgd links (libcudart.so.13,
# libcublas.so.13 and libcublasLt.so.13): the toolkit's, or PyTorch's wheels'.
cuda_lib_dirs() {
    dirs=""
    for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13; do
        found=$(find /usr/local/cuda/lib64 /usr/local/cuda/targets /usr/lib /opt /usr/local/lib \
                     -name "$lib" 2>/dev/null | head -n 1)
        [ -n "$found" ] && dirs="$dirs:$(dirname "$found")"
    done
    echo "$dirs"
}

# The launcher and the environment the ranks inherit.
setup_mpi() {
    if [ -n "$builddir" ]; then
        bin=$(real_binary "$builddir/bench/hetsgd/hetsgd")
        LD_LIBRARY_PATH="$builddir/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        mpirun=${MPIRUN:-mpirun}
    else
        bin=$carry/bin/hetsgd
        root=${TMPDIR:-/tmp}/omnibatch-gpu-root
        rm -rf "$root"
        unpack_debs "$root"
        multi=$root/usr/lib/x86_64-linux-gnu
        LD_LIBRARY_PATH="$carry/lib:$multi:$multi/openmpi/lib:$multi/openblas-pthread:$multi/pmix2/lib$(cuda_lib_dirs)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        # Open MPI and PMIx find their components and help files under these.
        OPAL_PREFIX=$root/usr
        PMIX_PREFIX=$multi/pmix2
        PMIX_INSTALL_PREFIX=$multi/pmix2
        export OPAL_PREFIX PMIX_PREFIX PMIX_INSTALL_PREFIX
        PATH=$root/usr/bin:$PATH
        mpirun=$root/usr/bin/orterun
        say "Open MPI from the carried packages in $root ($(head -n 1 "$carry/MANIFEST"))"
    fi
    export LD_LIBRARY_PATH PATH
    # A library missing there is found here, before any device time is spent on runs.
    missing=$(ldd "$bin" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => not found.*/\1/p' | tr '\n' ' ')
    [ -z "$missing" ] || die "$bin cannot find: $missing(LD_LIBRARY_PATH=$LD_LIBRARY_PATH)"
    # Shared memory between the ranks of one machine, and no component that
    # needs a network fabric library the machine lacks.
    OMPI_MCA_btl=self,vader
    OMPI_MCA_btl_vader_single_copy_mechanism=none
    OMPI_MCA_pml=ob1
    OMPI_MCA_mca_base_component_show_load_errors=0
    export OMPI_MCA_btl OMPI_MCA_btl_vader_single_copy_mechanism OMPI_MCA_pml \
        OMPI_MCA_mca_base_component_show_load_errors
}

# The checks that need a GPU, before the runs: memory types and the GPU
# gradient against the CPU's, then the API on device buffers under mpirun.
gpu_checks() {
    for t in memtype_gpu hetsgd_gpu_grad mpi_gradient_gpu; do
        if [ -n "$builddir" ]; then
            prog=$(find "$builddir/tests" -name "$t" -type f 2>/dev/null | head -n 1)
        else
            prog=$carry/bin/$t
        fi
        if [ -z "$prog" ] || [ ! -x "$prog" ]; then
            say "check $t: not built"
            continue
        fi
        rc=0
        if [ mpi_gradient_gpu = "$t" ]; then
            if [ "$with_gpu" = 1 ]; then
                timeout 60 "$mpirun" --allow-run-as-root --bind-to none -np 2 -x LD_LIBRARY_PATH "$prog" \
                    >"$out/$t.log" 2>&1 || rc=$?
            else
                echo "$t: SKIP: no GPU (dry run)" >"$out/$t.log"
                rc=77
            fi
        else
            "$prog" >"$out/$t.log" 2>&1 || rc=$?
        fi
        case $rc in
        0) say "check $t: PASS ($(tail -n 1 "$out/$t.log"))" ;;
        77) say "check $t: SKIP ($(tail -n 1 "$out/$t.log"))" ;;
        *) say "check $t: FAIL (exit $rc)"; cat "$out/$t.log"; checks_failed=1 ;;
        esac
    done
}

# One policy: CPU ranks, then the GPU rank with its memory bound.
run_policy() {
    policy=$1
    common="--bind --batch $BATCH --lr $LR --epochs $EPOCHS --eval-every $EVAL_EVERY --target $TARGET
            --data $data --policy $policy --trace $out/$policy.csv --summary $out/summary.txt $extra"
    say "policy $policy: $ranks ranks, devices $devices, cores $cores, batch $BATCH"
    # shellcheck disable=SC2086
    if [ "$with_gpu" = 1 ]; then
        timeout --signal=TERM --kill-after=10 "$RUN_LIMIT_S" "$mpirun" --allow-run-as-root --bind-to none \
            -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES= \
            -np "$CPU_RANKS" "$bin" $common --speeds "$cores" --devices "$devices" : \
            -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES=0 -x OMNIBATCH_MAX_BATCH="$GPU_MAX_BATCH" \
            -np 1 "$bin" $common --speeds "$cores" --devices "$devices" \
            >"$out/$policy.log" 2>&1 || { tail -n 20 "$out/$policy.log"; die "policy $policy failed (log: $out/$policy.log)"; }
    else
        timeout --signal=TERM --kill-after=10 "$RUN_LIMIT_S" "$mpirun" --allow-run-as-root --bind-to none \
            --oversubscribe -x LD_LIBRARY_PATH -x CUDA_VISIBLE_DEVICES= \
            -np "$ranks" "$bin" $common --speeds "$cores" --devices "$devices" \
            >"$out/$policy.log" 2>&1 || { tail -n 20 "$out/$policy.log"; die "policy $policy failed (log: $out/$policy.log)"; }
    fi
    grep '^hetsgd: rank [0-9]* computes on' "$out/$policy.log" | sed 's/^/  /' || true
}

# key=value of the policy's summary line.
field() {
    grep "^policy=$1 " "$out/summary.txt" | tail -n 1 | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# The last plan the run printed (its epoch lines end with it).
final_split() {
    grep '^hetsgd: epoch ' "$out/$1.log" | tail -n 1 | sed 's/.* plan //'
}

table() {
    printf '\n%-10s %12s %16s %10s %10s  %s\n' policy steady_ms "time_to_${TARGET}_s" final_acc final_loss \
        "final split (ranks $devices)"
    for p in $POLICIES; do
        printf '%-10s %12.3f %16s %10s %10s  %s\n' "$p" "$(awk "BEGIN { print 1e3 * $(field "$p" steady_step_s) }")" \
            "$(field "$p" time_to_target_s)" "$(field "$p" final_acc)" "$(field "$p" final_loss)" "$(final_split "$p")"
    done
    awk -v s="$(field static steady_step_s)" -v o="$(field omnibatch steady_step_s)" \
        -v r="$(field oracle steady_step_s)" -v k="$(field chunks steady_step_s)" 'BEGIN {
            printf "\nsteady step time omnibatch/static %.3f, omnibatch/oracle %.3f (measured side by side in this run)\n", o / s, o / r
            printf "steady step time chunks/omnibatch %.3f, chunks/oracle %.3f\n", k / o, k / r }'
    awk -v n="$(field chunks chunks_per_step)" -v m="$(field chunks moved_share)" 'BEGIN {
            printf "chunks: %.2f a rank a step, %.3f%% of the samples done by another rank than the plan'"'"'s\n", n, 100 * m }'
    # The weighted gradient is the global batch's whatever the split, and
    # whichever rank does a sample: the same training, so the same loss up
    # to float rounding.
    for p in $POLICIES; do field "$p" final_loss; done | awk 'NR == 1 { lo = $1; hi = $1 }
        { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 }
        END { printf "final loss of the %d policies: %.4f to %.4f (relative spread %.2g: the gradient is exact)\n", NR, lo, hi, (hi - lo) / lo }'
}

measure() {
    carry=$here/carry
    builddir=""
    data=""
    dry=0
    out=""
    epochs_set=""
    while [ $# -gt 0 ]; do
        case $1 in
        --carry) carry=$(cd "$2" && pwd); shift 2 ;;
        --builddir) builddir=$(cd "$2" && pwd); shift 2 ;;
        --data) data=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --epochs) epochs_set=$2; shift 2 ;;
        --dry-run) dry=1; shift ;;
        *) die "measure: unknown option '$1' (expected --carry, --builddir, --data, --out, --epochs or --dry-run)" ;;
        esac
    done
    [ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/omnibatch-gpu.XXXXXX")
    mkdir -p "$out"
    trap 'bring_back || true' EXIT
    : >"$out/summary.txt"
    if [ -z "$data" ]; then
        if [ -z "$builddir" ] && [ -d "$carry/data" ]; then data=$carry/data; else data=/usr/share/datasets/fashion-mnist; fi
    fi
    extra=""
    with_gpu=1
    if [ "$dry" = 1 ]; then
        # A CPU-only machine: the same steps, small, on as many cores as there are.
        with_gpu=0
        EPOCHS=1
        BATCH=256
        CPU_CORES=1
        extra="--subset 2048 --final-evals 1"
        say "gpu rank skipped: dry run without a GPU (3 CPU ranks only; the figures say nothing about GPUs)"
    elif ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
        die "no GPU here (nvidia-smi finds none): use --dry-run on a CPU-only machine"
    fi
    [ -z "$epochs_set" ] || EPOCHS=$epochs_set
    setup_mpi
    cores=$CPU_CORES
    devices=cpu
    i=1
    while [ $i -lt "$CPU_RANKS" ]; do
        cores="$cores,$CPU_CORES"
        devices="$devices,cpu"
        i=$((i + 1))
    done
    ranks=$CPU_RANKS
    if [ "$with_gpu" = 1 ]; then
        cores="$cores,$GPU_CORES"
        devices="$devices,gpu"
        ranks=$((CPU_RANKS + 1))
        nvidia-smi -L | sed 's/^/gpu-run: /'
    fi
    say "machine: $(nproc) cores online, $(uname -m); output in $out"
    checks_failed=0
    gpu_checks
    for p in $POLICIES; do
        run_policy "$p"
    done
    table | tee "$out/table.txt"
    [ "$checks_failed" = 0 ] || die "a GPU check failed (see above)"
}

# The device tool brings back what lies under $OUT, 8 files at most: the
# table, the summaries, and everything else in one archive; also after a
# failure (run on exit), whose logs matter most.
bring_back() {
    if [ -z "${OUT:-}" ] || [ "$(cd "$out" && pwd)" = "$(cd "$OUT" 2>/dev/null && pwd)" ]; then
        return 0
    fi
    mkdir -p "$OUT"
    for f in table.txt summary.txt; do
        [ -f "$out/$f" ] && cp "$out/$f" "$OUT/"
    done
    tar czf "$OUT/gpu-run-logs.tar.gz" -C "$out" . &&
        say "copied to \$OUT: table.txt, summary.txt, gpu-run-logs.tar.gz (every log and trace)"
}

# Hide this machine's own Open MPI, OpenBLAS and hwloc (a private mount
# namespace: tmpfs over their folders, /dev/null over their libraries) and
# run the carried dry run, so a carry that would miss a library there fails
# here first.  Root only (unshare -m).
hide_system_and_run() {
    multi=/usr/lib/x86_64-linux-gnu
    for d in $multi/openmpi $multi/pmix2 $multi/openblas-pthread /usr/share/openmpi /etc/openmpi; do
        [ -d "$d" ] && mount -t tmpfs none "$d"
    done
    for f in "$multi"/libmpi.so.40.* "$multi"/libopen-rte.so.40.* "$multi"/libopen-pal.so.40.* \
             "$multi"/libhwloc.so.15.* "$multi"/libevent_core-2.1.so.7.* "$multi"/libevent_pthreads-2.1.so.7.* \
             "$multi"/libgfortran.so.5.* "$multi"/libquadmath.so.0.* /usr/bin/orterun /usr/bin/orted; do
        [ -f "$f" ] && mount --bind /dev/null "$f"
    done
    say "this machine's Open MPI, OpenBLAS and hwloc hidden: only the carried ones can load"
    measure --dry-run "$@"
}

case ${1:-} in
prepare) shift; prepare "$@" ;;
measure) shift; measure "$@" ;;
check-carry) shift; exec unshare -m sh "$0" check-carry-inside "$@" ;;
check-carry-inside) shift; hide_system_and_run "$@" ;;
*) die "usage: sh bench/gpu/run.sh prepare [--builddir DIR] [--data DIR] | measure [--dry-run] [--carry DIR] [--builddir DIR] [--data DIR] [--out DIR] [--epochs N] | check-carry [measure's options]" ;;
esac
