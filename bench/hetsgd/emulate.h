/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Emulated heterogeneity on a small machine.  A rank of relative speed s
 * runs its step for real, measures the compute with its thread's CPU time
 * (which does not grow while the thread waits for a core that other ranks
 * share), and then sleeps until
 *
 *     wall start + cpu * slowdown / s + alpha
 *
 * so the step lasts what it would on a machine s times as fast, and the
 * sleeping rank leaves the cores to the others instead of burning them.
 * slowdown >= 1 slows every rank alike so that the real compute fits inside
 * its emulated length even when the ranks share fewer cores (see
 * hetsgd_auto_slowdown()); alpha is a fixed per-step cost (launch latency, a
 * data loader), slept like the rest.  A step whose real compute still took
 * longer than its emulated length is an overrun: the emulation lost control
 * of that step, and the run counts them.
 */
#ifndef HETSGD_EMULATE_H
#define HETSGD_EMULATE_H

#include "ob_planner.h"

/** \brief CPU seconds consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID). */
double hetsgd_thread_cpu_seconds(void);

/** \brief Sleep until the monotonic clock (ob_now()) reads \p deadline seconds; return at once if past. */
void hetsgd_sleep_until(double deadline);

/** \brief The CPU seconds a step of \p batch samples is charged: cost[0] + cost[1] * batch
 *         (hetsgd --cost), or its measured \p cpu when \p cost is NULL. */
double hetsgd_charged_cpu(const double *cost, double batch, double cpu);

/**
 * \brief A chunk's cost beside its samples (--cost's C): the intercept of the line through two
 *        passes on warm caches, \p t_small seconds for \p small samples and \p t_large for
 *        \p large (> small), at least 0.  Both passes of one kind: taken against the slope of
 *        passes on cold caches (--cost's B, 20-50% steeper), a small difference of two large
 *        numbers, it came out anywhere from 0 to 306 us on one machine (hetsgd.c,
 *        calibrate_chunk()).
 * \return the cost in seconds; 0 where large <= small.
 */
double hetsgd_chunk_cost(long small, double t_small, long large, double t_large);

/** \brief The emulated length of a step: cpu * slowdown / speed + alpha. */
double hetsgd_emulated_seconds(double cpu, double speed, double slowdown, double alpha);

/** Headroom of the automatic slowdown over what the measurements call for. */
#define HETSGD_SLOWDOWN_HEADROOM 1.25

/**
 * \brief The automatic slowdown: the sum of the speeds of the ranks sharing a node over its
 *        cores (their demand once balanced), times HETSGD_SLOWDOWN_HEADROOM, and at least 1.
 *        It depends only on the speeds and the machine, so every policy run on the same
 *        machine emulates the same cluster.
 */
double hetsgd_auto_slowdown(double node_demand, int node_cores);

/**
 * \brief The slowdown a crowded machine needs: \p contention (how many times longer than its
 *        CPU time a rank computes while every rank computes at once, whatever else runs there)
 *        times HETSGD_SLOWDOWN_HEADROOM, rounded up to a whole number.
 */
double hetsgd_crowded_slowdown(double contention);

/**
 * \brief The true step-time models of the emulated ranks, for the oracle and the predicted
 *        figures: t_i(b) = slowdown * (alpha0_i + beta0_i * b) / speed_i + alpha, bounds [lo, hi].
 * \param[in] alpha0, beta0 P measured costs of the real compute (seconds per step, per sample);
 *                          beta0 is raised to 1e-12 so every model stays valid for the planner.
 */
void hetsgd_emulated_models(int P, const double *speeds, const double *alpha0, const double *beta0,
                            double slowdown, double alpha, long lo, long hi, ob_rank_model *m);

#endif /* HETSGD_EMULATE_H */
