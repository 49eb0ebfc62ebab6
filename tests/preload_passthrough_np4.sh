#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 4 ranks, weighting off.
np=4
weight=off
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
