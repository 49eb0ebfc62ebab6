#!/bin/sh
# Install everything omnibatch needs to build, test and run its benchmarks
# on Debian 12 (as root, or through sudo).
set -eu
pkgs="build-essential autoconf automake libtool pkg-config make
      libopenmpi-dev openmpi-bin libmpich-dev mpich libhwloc-dev hwloc libopenblas-dev check
      zlib1g-dev gfortran valgrind gnuplot-nox dataset-fashion-mnist
      python3 python3-mpi4py python3-numpy python3-torch clang clang-tidy libclang-rt-14-dev doxygen"
if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1; then
    as_root="sudo"
else
    echo "install-deps.sh: run as root or install sudo" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -q
# shellcheck disable=SC2086
$as_root apt-get install -y -q --no-install-recommends $pkgs
