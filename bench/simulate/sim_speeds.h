/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How fast each simulated rank is: the speed distributions of the
 * benchmark (a uniform spread, CPU and GPU ranks, OmniLearn's heterogeneity
 * levels) and the events that change speeds during a run.  A speed is
 * relative: a rank of speed s takes 1/s times as long as a rank of speed 1.
 */
#ifndef OB_SIM_SPEEDS_H
#define OB_SIM_SPEEDS_H

#include "sim_random.h"

/**
 * \brief Speeds drawn uniformly from [lo, hi] (0 < lo <= hi).
 * \param[out] s P speeds.
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG.
 */
int ob_sim_speeds_uniform(ob_sim_rng *r, int P, double lo, double hi, double *s);

/**
 * \brief Two kinds of rank: ob_sim_count_of(fraction, P) ranks chosen at
 *        random have speed \p factor, the others speed 1 (CPU ranks and
 *        \p factor times faster GPU ranks).
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG (fraction outside [0, 1], factor <= 0).
 */
int ob_sim_speeds_bimodal(ob_sim_rng *r, int P, double fraction, double factor, double *s);

/**
 * \brief OmniLearn's heterogeneity levels: the core counts of its four
 *        workers, tiled over P ranks (rank i has the cores of worker i mod 4),
 *        as speeds.  HL2: 12, 12, 8, 16; HL4: 9, 9, 6, 24; HL8: 6, 6, 4, 32
 *        (the level is the ratio of the fastest worker to the slowest);
 *        level 1 is four workers of 12 cores.
 * \param[in] level 1, 2, 4 or 8.
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG.
 */
int ob_sim_speeds_level(int level, int P, double *s);

/** \brief How many of P ranks a fraction means: round(fraction * P), at least 1 when fraction > 0. */
int ob_sim_count_of(double fraction, int P);

/**
 * \brief Choose \p k distinct ranks of P uniformly at random (partial Fisher-Yates).
 * \param[out] idx k rank indices, distinct.
 * \param      scratch P ints of work space.
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_ARG (k outside [0, P]).
 */
int ob_sim_choose(ob_sim_rng *r, int P, int k, int *idx, int *scratch);

/** \brief Divide the speed of the \p k ranks in \p idx by \p factor (> 0). */
void ob_sim_slow_down(double *s, const int *idx, int k, double factor);

#endif /* OB_SIM_SPEEDS_H */
