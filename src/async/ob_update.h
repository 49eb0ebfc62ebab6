/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The parameter server's update rule (asynchronous mode).  A worker pushes
 * the mean gradient g of its batch of b samples, computed on the model of
 * version v; the server is at version u >= v (versions are the updates
 * applied so far), so the gradient is tau = u - v updates stale.  It is
 * applied with the step factor
 *
 *     s = (b / b_ref) * f(tau)
 *
 * as SGD with momentum mu and weight decay wd on flat parameters w:
 *
 *     m <- mu * m + s * (g + wd * w);     w <- w - lr * m.
 *
 * With s = 1 this is PyTorch's SGD (dampening 0, not Nesterov) bit for bit.
 * b / b_ref keeps the step per sample: with b_ref the global batch B, the
 * workers' pushes of one round (their batches summing to B) move the model
 * as far as one synchronous step of B samples.  The factor s multiplies the
 * gradient, not the momentum already held, so a stale gradient is damped
 * and the history is not.  f is the staleness rule:
 *
 *   constant   f = 1 (plain asynchronous SGD);
 *   inverse    f = 1 / max(1, tau): the staleness-aware learning rate of
 *              Zhang, Gupta, Lian and Liu (IJCAI 2016);
 *   adaptive   f = min(1, tau_C / tau): the delay-adaptive step of
 *              Koloskova, Stich and Jaggi (NeurIPS 2022), which keeps the
 *              full step for delays up to the concurrency tau_C (the number
 *              of workers: the delay every gradient has when all push at
 *              the same rate) and shrinks it beyond.
 *
 * A gradient with tau > max_staleness is dropped (not applied, counted by
 * the caller).  MPI-free.
 */
#ifndef OB_UPDATE_H
#define OB_UPDATE_H

#include <stddef.h>

/** How the step shrinks with staleness (omnibatch_ps_staleness). */
typedef enum ob_update_staleness {
    OB_UPDATE_CONSTANT = 0,
    OB_UPDATE_INVERSE = 1,
    OB_UPDATE_ADAPTIVE = 2
} ob_update_staleness;

/** Largest staleness bound accepted: far beyond any run, and a long on every platform. */
#define OB_UPDATE_MAX_BOUND 1000000000L

typedef struct ob_update_rule {
    double lr;                   /* learning rate, > 0 and finite */
    double momentum;             /* mu in [0, 1) */
    double weight_decay;         /* wd >= 0 and finite */
    long ref_batch;              /* b_ref >= 1 */
    ob_update_staleness staleness;
    long concurrency;            /* tau_C >= 1 of the adaptive rule: the number of workers */
    long max_staleness;          /* in [0, OB_UPDATE_MAX_BOUND]: staler gradients are dropped */
} ob_update_rule;

/**
 * \brief Check every field of \p r.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with a line naming the field (as \p prefix
 *         followed by its name, e.g. "omnibatch_ps_create: lr"), its value and what is allowed.
 */
int ob_update_check(const ob_update_rule *r, const char *prefix);

/** \brief 1 when a gradient \p tau updates stale is dropped (tau > max_staleness), else 0. */
int ob_update_drops(const ob_update_rule *r, long tau);

/** \brief f(tau) of the rule: 1 for tau <= 0 under every rule. */
double ob_update_staleness_factor(const ob_update_rule *r, long tau);

/** \brief The step factor s = (batch / ref_batch) * f(tau) of a gradient that is applied. */
double ob_update_scale(const ob_update_rule *r, long batch, long tau);

/** \brief Apply one gradient to float parameters: m = mu m + s (g + wd w); w -= lr m. */
void ob_update_apply_float(const ob_update_rule *r, double s, float *w, float *m, const float *g,
                           size_t n);

/** \brief The same on double parameters. */
void ob_update_apply_double(const ob_update_rule *r, double s, double *w, double *m,
                            const double *g, size_t n);

#endif /* OB_UPDATE_H */
