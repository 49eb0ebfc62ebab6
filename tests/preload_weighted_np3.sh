#!/bin/sh
# Weighted gradients in preload mode: 3 ranks, unequal batches, convention divide.
np=3
convention=divide
. "${top_srcdir:-.}/tests/preload_weighted.sh"
