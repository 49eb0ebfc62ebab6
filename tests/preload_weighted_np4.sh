#!/bin/sh
# Weighted gradients in preload mode: 4 ranks, unequal batches, convention divide.
np=4
convention=divide
. "${top_srcdir:-.}/tests/preload_weighted.sh"
