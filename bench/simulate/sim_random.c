/*
 * Copyright (c) 2026 The omnibatch authors.
 */
#include "config.h"

#include <math.h>

#include "sim_random.h"

static uint64_t ob_sim_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t ob_sim_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void ob_sim_rng_seed(ob_sim_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        r->s[i] = ob_sim_splitmix64(&x);
    }
}

uint64_t ob_sim_rng_next(ob_sim_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t result = ob_sim_rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ob_sim_rotl(s[3], 45);
    return result;
}

double ob_sim_rng_uniform(ob_sim_rng *r)
{
    return (double) (ob_sim_rng_next(r) >> 11) * 0x1.0p-53;
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
