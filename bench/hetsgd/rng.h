/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The benchmark's draws: splitmix64 from the project's one generator
 * (ob_rng.h), whose stream depends only on the seed, the same on every
 * machine, so ranks that share a seed draw the same numbers.
 */
#ifndef HETSGD_RNG_H
#define HETSGD_RNG_H

#include <stdint.h>

#include "ob_rng.h"

/** \brief Next 64 random bits; advances *state. */
static inline uint64_t hetsgd_rng_next(uint64_t *state)
{
    return ob_rng_splitmix64(state);
}

/** \brief Uniform in [0, 1) with 53 random bits. */
static inline double hetsgd_rng_uniform(uint64_t *state)
{
    return ob_rng_unit(hetsgd_rng_next(state));
}

/** \brief Uniform integer in [lo, hi] (hi - lo small next to 2^64, so the bias is negligible). */
static inline long hetsgd_rng_range(uint64_t *state, long lo, long hi)
{
    return lo + (long) (hetsgd_rng_next(state) % (uint64_t) (hi - lo + 1));
}

#endif /* HETSGD_RNG_H */
