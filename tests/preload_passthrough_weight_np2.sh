#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 2 ranks, weighting on.
np=2
weight=on
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
