/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A rank's record: what one rank tells the others at an exchange (its
 * model, its bounds, its measured times), and how sure its model is at a
 * batch it has not run.  The controller (ob_controller.h), the pooling of
 * peers (ob_pool.h) and the distributed decision (ob_planner_dist.h) all
 * read records; this is the leaf they share.
 */
#ifndef OB_RECORD_H
#define OB_RECORD_H

#include <stdint.h>

/** Largest relative error of a model taken into account (a record's rel_error is capped here). */
#define OB_CTL_MAX_ERROR 1.0
/** Largest mean blocked time a record may carry, in seconds (larger is a broken clock). */
#define OB_CTL_MAX_BLOCKED 1e6

/** What each rank contributes to a decision: fixed size, plain data (MPI_BYTE), no padding. */
typedef struct ob_rank_record {
    double alpha;                /* the rank's model */
    double beta;
    int64_t samples;             /* samples the model rests on; 0 = no model yet */
    int64_t lo;                  /* the rank's bounds; lo = hi = 0: the bounds the controller holds */
    int64_t hi;
    double compute_mean;         /* mean measured compute seconds since the last exchange (report) */
    uint64_t plan_hash;          /* hash of the plan this rank holds (OMNIBATCH_VERIFY) */
    double rel_error;            /* relative standard error of the model at the rank's batch; 0 = unknown */
    double level_error;          /* the model's error terms (ob_estimator_error_terms()), so that its */
    double share_error;          /* error is known at any batch; mean_batch = 0: not given, */
    double mean_batch;           /* rel_error applies at every batch */
    double blocked_mean;         /* mean seconds blocked in the gradient reduction since the last
                                  * exchange (the step model's reduction); 0 = not measured */
    int64_t changed;             /* OMNIBATCH_REACT: 1 if the rank's model confirmed a change of speed,
                                  * or took its first sample (an exchange is then brought forward) */
    double throttled_share;      /* share of the wall time since the last exchange its cgroup's quota
                                  * stopped the rank, in [0, 1]; < 0: unknown (ob_starve.h) */
} ob_rank_record;

/**
 * \brief Relative error of the rank's model at batch \p b, capped at OB_CTL_MAX_ERROR: from
 *        the record's error terms when it has them (the split's uncertainty grows with the
 *        distance from the batches the rank ran), else its rel_error at any batch.
 */
double ob_record_error_at(const ob_rank_record *rec, double b);

#endif /* OB_RECORD_H */
