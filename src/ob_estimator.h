/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One rank's speed model, t = alpha + beta * b, fitted online from the
 * (batch, seconds) pairs of its steps: recursive least squares with a
 * forgetting factor (or an equivalent robust scheme).  Until b has varied
 * enough to separate the two terms, alpha = 0 and beta = t / b.  A single
 * outlier (a GC pause, a page fault: a 10x spike) does not move the model; a
 * lasting change of speed (2x slower from now on) is followed within a few
 * samples.  MPI-free; one value per rank, no allocation.
 */
#ifndef OB_ESTIMATOR_H
#define OB_ESTIMATOR_H

/** What ob_estimator_add() did with a sample. */
typedef enum ob_sample_verdict {
    OB_SAMPLE_USED = 0,          /* folded into the model */
    OB_SAMPLE_INVALID = 1,       /* NaN, infinite, zero or negative time or batch: ignored */
    OB_SAMPLE_OUTLIER = 2,       /* far from the model, held back (not used unless it persists) */
    OB_SAMPLE_CHANGE = 3         /* confirmed a lasting change of speed: the model was re-learnt */
} ob_sample_verdict;

/* The fields are private to estimator.c; the type is complete so that a
 * caller can hold one by value. */
typedef struct ob_estimator {
    double forget;
    /* estimator.c's state follows; see there. */
    double state[32];
    long n;
} ob_estimator;

/** \brief Start an empty model with forgetting factor \p forget in [0.5, 1]. */
void ob_estimator_init(ob_estimator *est, double forget);

/** \brief Fold one step: \p batch samples took \p seconds of compute. */
ob_sample_verdict ob_estimator_add(ob_estimator *est, double batch, double seconds);

/**
 * \brief The current model.
 * \return 1 and alpha >= 0, beta > 0 when at least one sample was used; 0 (and alpha = beta = 0)
 *         before that.
 */
int ob_estimator_model(const ob_estimator *est, double *alpha, double *beta);

/** \brief Number of samples used so far. */
long ob_estimator_count(const ob_estimator *est);

#endif /* OB_ESTIMATOR_H */
