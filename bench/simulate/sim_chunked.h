/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * --steal on: every step of a run also worked in chunks with stealing
 * (sim_steal.h), on the same plan and the same true times as the plan
 * alone, both judged against the per-step oracle (sim_work.h).  The noise
 * the controller's timings carry is, here, the step's true speed: rank i
 * takes (alpha_i + beta_i b) * n_ik in step k, and its estimator is fed
 * exactly that, as the chunks measure it.  A scenario's event strikes
 * mid-step: the ranks it slows run at their old speed until a fraction of
 * their step, then at the new one.  The per-step oracle is the best split
 * in whole samples knowing the step's true times; its ratio to the same in
 * real numbers of samples is reported beside.
 */
#ifndef OB_SIM_CHUNKED_H
#define OB_SIM_CHUNKED_H

#include "ob_planner.h"
#include "sim_options.h"
#include "sim_run.h"

typedef struct ob_sim_chunked ob_sim_chunked;

/** The step's event: \p n ranks of \p idx slowed \p factor times (n = 0: none). */
typedef struct ob_sim_event_at {
    const int *idx;
    int n;
    double factor;
} ob_sim_event_at;

/**
 * \brief What a run of \p steps steps at \p P ranks and global batch \p B needs.
 * \return OMNIBATCH_SUCCESS, or a code with ob_last_error().
 */
int ob_sim_chunked_new(const ob_sim_opts *o, int P, long B, long steps, ob_sim_chunked **out);

/** \brief Free it (NULL is fine). */
void ob_sim_chunked_free(ob_sim_chunked *c);

/**
 * \brief Step \p k: rank i's true models \p truth (after any event of this step), this step's
 *        factors \p noise, the plan \p plan, the event \p ev of this step, and the step's
 *        expected end \p horizon (the water level of the models the plan was made from).
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_STATE when a sample was not done exactly once.
 */
int ob_sim_chunked_step(ob_sim_chunked *c, long k, const ob_rank_model *truth, const double *noise, const long *plan,
                        const ob_sim_event_at *ev, double horizon);

/** \brief Its figures into \p res: the last quarter's means and the event step's (\p change, -1: none). */
void ob_sim_chunked_conclude(const ob_sim_chunked *c, long change, ob_sim_result *res);

#endif /* OB_SIM_CHUNKED_H */
