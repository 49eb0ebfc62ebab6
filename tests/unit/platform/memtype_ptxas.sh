#!/bin/sh
# The device scaling kernels are PTX text handed to the driver's JIT at run
# time, so a mistake in them would only show on a GPU: assemble them here
# with the toolkit's ptxas, for the oldest and the newest architectures the
# project targets (Turing, Hopper), and check both entry points came out.
# Skipped (77) without the CUDA toolkit.
set -eu
builddir=${top_builddir:-.}
ptxas=${CUDA_PTXAS:-}
if [ -z "$ptxas" ] || [ ! -x "$ptxas" ]; then
    echo "memtype_ptxas: SKIP: no ptxas (configure found no CUDA toolkit)"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$builddir/tests/unit/platform/memtype_ptx" >"$tmp/scale.ptx"
for arch in sm_75 sm_90; do
    "$ptxas" -arch="$arch" -o "$tmp/scale-$arch.cubin" "$tmp/scale.ptx"
    for entry in ob_scale_f32 ob_scale_f64; do
        grep -q "$entry" "$tmp/scale-$arch.cubin" || { echo "memtype_ptxas: $entry missing for $arch" >&2; exit 1; }
    done
done
echo "memtype_ptxas: the scaling kernels assemble for sm_75 and sm_90 ($ptxas)"
