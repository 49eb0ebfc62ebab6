#!/bin/sh
# Every allreduce the layer does not weight comes back bit for bit: 2 ranks, weighting off.
np=2
weight=off
. "${top_srcdir:-.}/tests/preload_passthrough.sh"
