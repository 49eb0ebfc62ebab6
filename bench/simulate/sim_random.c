/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>

#include "ob_rng.h"
#include "sim_random.h"

void ob_sim_rng_seed(ob_sim_rng *r, uint64_t seed)
{
    ob_rng_xoshiro_seed(r->s, seed);
}

uint64_t ob_sim_rng_next(ob_sim_rng *r)
{
    return ob_rng_xoshiro_next(r->s);
}

double ob_sim_rng_uniform(ob_sim_rng *r)
{
    return ob_rng_unit(ob_sim_rng_next(r));
}

long ob_sim_rng_below(ob_sim_rng *r, long n)
{
    if (n <= 1) {
        return 0;
    }
    /* Rejection keeps every value equally likely. */
    const uint64_t un = (uint64_t) n;
    const uint64_t limit = UINT64_MAX - UINT64_MAX % un;
    uint64_t x;
    do {
        x = ob_sim_rng_next(r);
    } while (x >= limit);
    return (long) (x % un);
}

double ob_sim_rng_normal(ob_sim_rng *r)
{
    /* 1 - u is in (0, 1]: the logarithm is finite. */
    const double u = 1.0 - ob_sim_rng_uniform(r);
    const double v = ob_sim_rng_uniform(r);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

double ob_sim_noise(ob_sim_rng *r, double sigma)
{
    double z = ob_sim_rng_normal(r);
    if (z > 3.0) {
        z = 3.0;
    } else if (z < -3.0) {
        z = -3.0;
    }
    return 1.0 + sigma * z;
}

double ob_sim_noise_uniform(ob_sim_rng *r, double width)
{
    return 1.0 + width * (2.0 * ob_sim_rng_uniform(r) - 1.0);
}
