#!/bin/sh
# Weighted gradients in preload mode: 2 ranks, unequal batches, convention divide.
np=2
convention=divide
. "${top_srcdir:-.}/tests/preload_weighted.sh"
