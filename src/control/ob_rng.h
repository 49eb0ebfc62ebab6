/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The project's one pseudo-random generator, for everything that must draw
 * the same numbers on every rank and every machine from the same seed: the
 * epoch's permutation (shard.c), the simulator and the training benchmark.
 * splitmix64 (Steele, Lea, Flood 2014) seeds xoshiro256** (Blackman, Vigna
 * 2018), so that nearby seeds still give unrelated streams.
 */
#ifndef OB_RNG_H
#define OB_RNG_H

#include <stdint.h>

/** \brief splitmix64: the next 64 bits of the stream whose state is *x. */
static inline uint64_t ob_rng_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static inline uint64_t ob_rng_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/** \brief Fill a xoshiro256** state from a splitmix64 stream started at x. */
static inline void ob_rng_xoshiro_seed(uint64_t s[4], uint64_t x)
{
    for (int i = 0; i < 4; i++) {
        s[i] = ob_rng_splitmix64(&x);
    }
}

/** \brief xoshiro256**: the next 64 bits; advances s. */
static inline uint64_t ob_rng_xoshiro_next(uint64_t s[4])
{
    uint64_t result = ob_rng_rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = ob_rng_rotl(s[3], 45);
    return result;
}

/** \brief 64 random bits as a double uniform in [0, 1), 53 bits of them. */
static inline double ob_rng_unit(uint64_t bits)
{
    return (double) (bits >> 11) * 0x1.0p-53;
}

#endif /* OB_RNG_H */
