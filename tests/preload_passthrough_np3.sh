#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 3 ranks, weighting off.
np=3
weight=off
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
