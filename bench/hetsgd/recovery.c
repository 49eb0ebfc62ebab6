/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * recovery A.csv B.csv: two hetsgd traces of one schedule side by side (run
 * A, omnibatch, against run B, the oracle).  Per step, A's measured balance
 * over B's at the same step, each a median of 3 steps within a phase
 * (hetsgd_side_by_side()); a speed change is recovered at the first step
 * from which that ratio stays <= 1.05 for 3 steps (hetsgd_recovery()).
 * Prints one line of key=value figures for bench/run.sh.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "ob_error.h"
#include "report.h"

#define TOLERANCE 1.05
#define HOLD 3
/* The target: recovered within this many steps (issue 11: 5). */
#define LIMIT 5

int main(int argc, char **argv)
{
    double *a = NULL, *b = NULL, *ratio = NULL;
    unsigned char *change = NULL;
    long na = 0, nb = 0, steps, late = 0;
    int pa = 0, pb = 0;
    hetsgd_recovery_stats all;
    int rc;

    if (3 != argc) {
        fprintf(stderr, "usage: recovery OMNIBATCH.csv ORACLE.csv\n");
        return 2;
    }
    rc = hetsgd_read_trace(argv[1], &na, &pa, &a);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = hetsgd_read_trace(argv[2], &nb, &pb, &b);
    }
    if (OMNIBATCH_SUCCESS == rc && (pa != pb || na != nb)) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "%s has %ld steps of %d ranks, %s %ld of %d: not one schedule",
                     argv[1], na, pa, argv[2], nb, pb);
    }
    steps = na;
    if (OMNIBATCH_SUCCESS == rc && (NULL == (ratio = malloc((size_t) steps * sizeof *ratio))
                                    || NULL == (change = malloc((size_t) steps)))) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for %ld steps", steps);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = hetsgd_side_by_side(a, b, steps, pa, ratio, change);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        hetsgd_recovery(ratio, change, steps, TOLERANCE, HOLD, &all);
        /* Each phase alone, for the changes recovered later than the target. */
        for (long c = 1; c < steps; c++) {
            long e = c + 1;
            hetsgd_recovery_stats one;

            if (!change[c]) {
                continue;
            }
            while (e < steps && !change[e]) {
                e++;
            }
            hetsgd_recovery(ratio + c, change + c, e - c, TOLERANCE, HOLD, &one);
            late += one.initial > LIMIT;
        }
        printf("vsorc_recover_initial=%ld vsorc_recover_changes=%d vsorc_recover_worst=%ld "
               "vsorc_recover_mean=%.2f vsorc_recover_unrecovered=%d vsorc_recover_limit=%d vsorc_recover_late=%ld\n",
               all.initial, all.changes, all.worst, all.mean, all.unrecovered, LIMIT, late);
    } else {
        fprintf(stderr, "recovery: %s\n", ob_last_error());
    }
    free(a);
    free(b);
    free(ratio);
    free(change);
    return OMNIBATCH_SUCCESS == rc ? 0 : 1;
}
