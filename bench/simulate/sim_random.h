/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The simulator's random numbers: xoshiro256** seeded through splitmix64,
 * so that a run is the same on every machine for a given seed, and each
 * consumer (speeds, noise of each policy) can have a stream of its own.
 */
#ifndef OB_SIM_RANDOM_H
#define OB_SIM_RANDOM_H

#include <stdint.h>

typedef struct ob_sim_rng {
    uint64_t s[4];
} ob_sim_rng;

/** \brief Seed a stream; different seeds give independent-looking streams. */
void ob_sim_rng_seed(ob_sim_rng *r, uint64_t seed);

/** \brief The next 64 random bits. */
uint64_t ob_sim_rng_next(ob_sim_rng *r);

/** \brief Uniform in [0, 1), 53 bits. */
double ob_sim_rng_uniform(ob_sim_rng *r);

/** \brief Uniform integer in [0, n), n >= 1 (unbiased). */
long ob_sim_rng_below(ob_sim_rng *r, long n);

/** \brief Standard normal (Box-Muller). */
double ob_sim_rng_normal(ob_sim_rng *r);

/**
 * \brief A multiplicative timing noise factor: 1 + sigma * z, z standard normal
 *        clipped to [-3, 3], so the factor has mean 1, spread sigma, and stays
 *        positive for sigma < 1/3.
 */
double ob_sim_noise(ob_sim_rng *r, double sigma);

/**
 * \brief A uniform multiplicative noise factor in [1 - width, 1 + width]
 *        (mean 1, spread width / sqrt(3)): "10% noise" as some tests read it.
 */
double ob_sim_noise_uniform(ob_sim_rng *r, double width);

#endif /* OB_SIM_RANDOM_H */
