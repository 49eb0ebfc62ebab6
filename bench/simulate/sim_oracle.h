/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The yardstick for integer plans.  The planner's optimum T (ob_plan_optimum)
 * is continuous; batches are integers, and rounding alone can cost up to
 * one sample's time on the slowest rank (4% when that rank holds 25
 * samples).  This computes the best any integer plan can do, so that "within
 * 3% of the oracle" is judged against what is reachable at all.  It is an
 * independent bisection, not the planner's code.
 */
#ifndef OB_SIM_ORACLE_H
#define OB_SIM_ORACLE_H

#include "ob_planner.h"

/**
 * \brief The least step time max_i alpha_i + beta_i * b_i over integer plans
 *        with sum_i b_i = B and lo_i <= b_i <= hi_i.
 * \param[in] m     P models (alpha >= 0, beta > 0, 0 <= lo <= hi).
 * \param[out] plan P integers reaching it, sum exactly B (may be NULL).
 * \param[out] T    that step time.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG, OMNIBATCH_ERR_INFEASIBLE (sum lo > B or
 *         sum hi < B) or OMNIBATCH_ERR_NOMEM.
 */
int ob_sim_integer_optimum(const ob_rank_model *m, int P, long B, long *plan, double *T);

#endif /* OB_SIM_ORACLE_H */
