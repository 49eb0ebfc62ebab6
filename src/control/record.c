/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A rank's record (ob_record.h).
 */
#include "config.h"

#include <math.h>

#include "ob_record.h"

double ob_record_error_at(const ob_rank_record *rec, double b)
{
    double err = rec->rel_error;

    if (rec->mean_batch > 0.0) {
        double dx = b / rec->mean_batch - 1.0;
        double t = rec->alpha + rec->beta * b;

        err = sqrt(rec->level_error * rec->level_error + rec->share_error * rec->share_error * dx * dx);
        err = t > 0.0 ? err * (rec->alpha + rec->beta * rec->mean_batch) / t : OB_CTL_MAX_ERROR;
    }
    return err < OB_CTL_MAX_ERROR ? err : OB_CTL_MAX_ERROR;
}
