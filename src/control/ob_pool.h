/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Pooled speeds: ranks that run alike are planned on what all of them
 * measured, not each on its own few samples.  MPI-free.
 *
 * Why.  With P ranks the step is the slowest of P, so the plan pays the
 * largest of the P models' errors: at P = 65,536 about 4.3 standard errors,
 * 4.3 * noise / sqrt(samples), 4.8% after 80 steps at 10% noise, whatever
 * the controller does with each model alone (the simulator's noise floor).
 * Clusters are built from few kinds of nodes, so many ranks share one true
 * speed, and their mean is known sqrt(n) times better than any one of them.
 *
 * How.  Each decision's records fill a histogram: each rank goes into a
 * bin of OB_POOL_WIDTH (one fixed grid) by its model's time per sample at
 * bref = B / P, the batch all ranks start from, and adds, in exact integer
 * sums, its model (the bin's mean model), its squared deviation from its
 * peers' mean model in the histogram before and its model's squared error,
 * both where it runs, and its key's offset, square and error at bref.  A
 * rank's peers are the bin whose mean model is nearest its own time where
 * it runs (there its model is right whatever its split; its key at bref is
 * off as far as its split is), merged with a neighbour whose mean model
 * lies within half a bin (ranks of one speed straddling an edge).  The
 * spread of their true speeds, tau^2, is their mean squared deviation less
 * their mean squared error (at least 0; in the first histogram, when all
 * ranks run at bref, from the keys there).  A rank with OB_POOL_MIN_RANKS
 * peers or more, whose spread is at most OB_POOL_MAX_SPREAD and whose own
 * time lies within OB_POOL_Z deviations and one bin of theirs, is planned on its time
 * shrunk towards theirs: lambda = tau^2 / (tau^2 + err_i^2) of the way from
 * theirs to its own, its split alike (empirical Bayes; James and Stein).
 * Ranks of one speed (tau = 0) take the peers' model, split included (a
 * split fitted from one rank's few batches can be far off; theirs rests
 * on all of them); ranks of speeds spread like a continuum keep their own.
 * The level error falls by the same shrinkage; the share error stays the
 * rank's own.
 *
 * The histogram is that of the last decision's records, kept by the
 * controller: the distributed decision carries it on its first collective,
 * so that it costs no collective of its own (12 KiB more per rank).  A
 * rank whose speed changed is compared with the peers nearest its new
 * time in the histogram, one decision old, and pooled with them only if
 * it lies within OB_POOL_Z of its errors of them.
 */
#ifndef OB_POOL_H
#define OB_POOL_H

#include <stdint.h>

#include "ob_config.h"
#include "ob_record.h"

/* Bins of the log time per sample: 1.25x wide, one grid for every run (no
 * level is needed to place it: the first decision has none), 96 of them
 * from 1.25^-84 = 7.4e-9 to 1.25^12 = 14.6 seconds per sample. */
#define OB_POOL_WIDTH 0.22314355131420976 /* log 1.25 */
#define OB_POOL_BINS 96
#define OB_POOL_FIRST_BIN (-84)
/* Per bin: two counts and seven sums (each sum in two 32-bit limbs); pool.c names them. */
#define OB_POOL_FIELDS 16
#define OB_POOL_SUMS (OB_POOL_BINS * OB_POOL_FIELDS)
/* A rank farther from its peers' mean than this many of its deviations is not like them. */
#define OB_POOL_Z 5.0
/* Peers whose true speeds spread more than this (a standard deviation of logs; a quarter of a
 * bin, where speeds spread evenly over the bin have 0.29 of one) are not pooled. */
#define OB_POOL_MAX_SPREAD (OB_POOL_WIDTH / 4.0)

/** One decision's histogram. */
typedef struct ob_pool {
    int64_t sums[OB_POOL_SUMS];
    double alpha[OB_POOL_BINS];  /* each bin's mean model (ob_pool_finish()) */
    double beta[OB_POOL_BINS];
    int have;                    /* 1: sums hold the records of a decision */
} ob_pool;

/** Where a rank stood against its peers in a histogram (ob_pool_apply()), for the next one. */
typedef struct ob_pool_seen {
    int known;                   /* 0: it had no peers there */
    double dev;                  /* log of its time over its peers' mean model's, where it runs */
    double err;                  /* its model's relative error there */
} ob_pool_seen;

/** \brief Once \p pool->sums hold a decision's records (keyed at \p bref): its bins' mean models. */
void ob_pool_finish(ob_pool *pool, double bref);

/**
 * \brief \p out = record \p r of a rank running \p batch samples, pooled with its peers in
 *        \p pool (a copy of \p r when \p pool holds no histogram or the rank is not pooled).
 *        \p out may be \p r.
 * \param[out] seen  (may be NULL) its deviation from its peers, for ob_pool_add().
 * \return 1 if pooled.
 */
int ob_pool_apply(const ob_pool *pool, const ob_rank_record *r, long batch, ob_rank_record *out,
                  ob_pool_seen *seen);

/**
 * \brief Add record \p r of a rank running \p batch samples into \p sums (OB_POOL_SUMS,
 *        zeroed by the caller; the same layout as ob_pool.sums), keyed at \p bref (B / P), with
 *        its deviation from its peers in the histogram before as ob_pool_apply() found it
 *        (\p seen; NULL: none).  Ranks with no model, batch 0 or a key off the grid add nothing.
 */
void ob_pool_add(int64_t *sums, const ob_rank_record *r, long batch, double bref, const ob_pool_seen *seen);

#endif
