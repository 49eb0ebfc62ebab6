/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Prints the PTX of the device scaling kernels, for memtype_ptxas.sh.
 */
#include "config.h"

#include <stdio.h>

#include "ob_memtype.h"

int main(void)
{
    return EOF == fputs(ob_memtype_ptx(), stdout) ? 1 : 0;
}
