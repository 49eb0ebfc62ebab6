/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A rank's speed over one step, when it may change inside the step, and
 * the best split of a step under such speeds.  A schedule's speeds change
 * between steps; with hetsgd --change-at F a change lands F of the way
 * through the step instead (F x the oracle's step time at the speeds
 * before, the same on every rank and for every policy), so that the first
 * slow step is slow for every policy alike: a plan made before the step
 * cannot know it, and only work that moves inside the step can follow it.
 *
 * Work is counted in seconds at speed 1 (the emulation's cost x its
 * slowdown); a rank of speed s does s seconds of it per second.  Times are
 * seconds since the rank's compute of the step began.
 */
#ifndef HETSGD_PROFILE_H
#define HETSGD_PROFILE_H

#include "ob_planner.h"

/** One rank's speed in one step: \p before until \p at seconds, \p after from then on. */
typedef struct hetsgd_profile {
    double before;                   /* > 0 */
    double after;                    /* > 0 */
    double at;                       /* <= 0: \p after from the start */
} hetsgd_profile;

/** \brief When \p work seconds of work begun at \p start end (start >= 0, work >= 0). */
double hetsgd_profile_finish(const hetsgd_profile *p, double start, double work);

/** \brief The work done from 0 to \p t (0 for t <= 0). */
double hetsgd_profile_work(const hetsgd_profile *p, double t);

/**
 * A rank's step as the emulation runs it: \p a + \p b n seconds of work for n samples (the
 * emulated cost x slowdown), then \p alpha seconds whatever the speed (hetsgd --alpha), within
 * the bounds \p lo .. \p hi.
 */
typedef struct hetsgd_work_model {
    double a;
    double b;                        /* > 0 */
    double alpha;
    long lo;
    long hi;
} hetsgd_work_model;

/** \brief When rank \p m with profile \p p ends a step of \p n samples done in one piece. */
double hetsgd_profile_step_end(const hetsgd_profile *p, const hetsgd_work_model *m, long n);

/** \brief The longest of the ranks' step ends for \p plan: the step time of that split. */
double hetsgd_profile_step_time(const hetsgd_profile *p, const hetsgd_work_model *m, int P, const long *plan);

/**
 * \brief The best split of \p B samples over \p P ranks for these profiles: the least T at
 *        which every rank, each working its share in one piece, ends by T (water-filling on
 *        the piecewise speeds, solved by bisection on T).
 * \param[out] target  P reals summing to B within the bounds (NULL: not wanted), for
 *                     ob_plan_round().
 * \param[out] T       that step time (NULL: not wanted).
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_INFEASIBLE when the bounds cannot hold B.
 */
int hetsgd_profile_optimum(const hetsgd_profile *p, const hetsgd_work_model *m, int P, long B, double *target,
                           double *T);

#endif /* HETSGD_PROFILE_H */
