#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 3 ranks, weighting on.
np=3
weight=on
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
