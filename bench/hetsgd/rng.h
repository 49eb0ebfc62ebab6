/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * splitmix64: a tiny generator whose stream depends only on the seed, the
 * same on every machine, so ranks that share a seed draw the same numbers.
 */
#ifndef HETSGD_RNG_H
#define HETSGD_RNG_H

#include <stdint.h>

/** \brief Next 64 random bits; advances *state. */
static inline uint64_t hetsgd_rng_next(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));

    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/** \brief Uniform in [0, 1) with 53 random bits. */
static inline double hetsgd_rng_uniform(uint64_t *state)
{
    return (double) (hetsgd_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/** \brief Uniform integer in [lo, hi] (hi - lo small next to 2^64, so the bias is negligible). */
static inline long hetsgd_rng_range(uint64_t *state, long lo, long hi)
{
    return lo + (long) (hetsgd_rng_next(state) % (uint64_t) (hi - lo + 1));
}

#endif /* HETSGD_RNG_H */
