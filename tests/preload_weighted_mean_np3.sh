#!/bin/sh
# Weighted gradients in preload mode: 3 ranks, unequal batches, convention mean.
np=3
convention=mean
. "${top_srcdir:-.}/tests/preload_weighted.sh"
