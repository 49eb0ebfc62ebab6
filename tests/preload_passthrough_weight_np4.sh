#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 4 ranks, weighting on.
np=4
weight=on
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
