/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What the parameter server counts of one worker's pushes (asynchronous
 * mode): every push is applied or dropped, and counted as one or the other,
 * so none is lost silently; the staleness of every push (applied or not),
 * its mean, maximum and quantiles; the samples and the compute they carried.
 * The quantiles come from an exact histogram of staleness 0 ..
 * OB_TALLY_BINS - 2 (one bin past them holds every larger value): exact
 * whatever the number of pushes, in fixed memory.  MPI-free.
 */
#ifndef OB_TALLY_H
#define OB_TALLY_H

#include <stdint.h>

/** Histogram bins: staleness up to OB_TALLY_BINS - 2 is kept exactly. */
#define OB_TALLY_BINS 512

typedef struct ob_tally {
    long pushes;                 /* applied + dropped */
    long applied;
    long dropped;                /* staler than the bound: not applied */
    long samples;                /* samples of every push */
    double compute_s;            /* the worker's compute of every push, as it measured it */
    double stale_sum;            /* staleness summed over every push */
    long stale_max;
    uint32_t hist[OB_TALLY_BINS];
} ob_tally;

/** \brief An empty tally. */
void ob_tally_init(ob_tally *t);

/** \brief Count one push: \p tau updates stale, applied or dropped, of \p samples samples that
 *         took \p compute_s seconds to compute. */
void ob_tally_add(ob_tally *t, long tau, int applied, long samples, double compute_s);

/** \brief Mean staleness of the pushes (0 before any). */
double ob_tally_mean(const ob_tally *t);

/**
 * \brief The \p q quantile (0 < q <= 1) of the staleness: the least s with at least q of the
 *        pushes at most s stale (0 before any; OB_TALLY_BINS - 1 means "at least that").
 */
long ob_tally_quantile(const ob_tally *t, double q);

#endif /* OB_TALLY_H */
