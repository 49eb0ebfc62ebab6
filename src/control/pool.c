/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Pooled speeds (ob_pool.h): the histogram of the ranks' keys and models,
 * and each rank's model shrunk towards its peers'.
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ob_planner.h"
#include "ob_pool.h"

/* Fixed point of the sums: x * 2^OB_POOL_BITS for x in [0, 2). */
#define OB_POOL_BITS 40

/* The fields of a bin (ob_pool.sums): counts, and sums in two limbs each. */
enum {
    OB_POOL_N = 0,               /* ranks */
    OB_POOL_ALPHA = 1,           /* their models, in units of the bin's edge at bref */
    OB_POOL_BETA = 3,
    OB_POOL_NDEV = 5,            /* ranks that had peers in the histogram before */
    OB_POOL_DEV2 = 6,            /* their squared log deviations from the peers' model, */
    OB_POOL_ERR2 = 8,            /* and their models' squared errors, where they ran */
    OB_POOL_KEY = 10,            /* the keys' offsets in the bin, their squares, */
    OB_POOL_KEY2 = 12,
    OB_POOL_KERR2 = 14           /* and the models' squared errors at bref */
};

/* A rank's key: the log of its model's seconds per sample at the batch
 * \p bref common to all ranks, its bin and its offset in the bin; 0 when
 * it has none on the grid. */
typedef struct ob_pool_key {
    int bin;
    double offset;               /* in [0, OB_POOL_WIDTH) */
    double unit;                 /* seconds at bref of the bin's lower edge */
} ob_pool_key;

static double ob_pool_unit(int bin, double bref)
{
    return exp((double) (OB_POOL_FIRST_BIN + bin) * OB_POOL_WIDTH) * bref;
}

static int ob_pool_key_of(const ob_rank_record *r, double bref, ob_pool_key *k)
{
    double t = r->alpha + r->beta * bref;
    double u, cell;

    if (r->samples <= 0 || !(bref > 0.0) || !(t > 0.0) || !isfinite(t)) {
        return 0;
    }
    u = log(t / bref) / OB_POOL_WIDTH;
    cell = floor(u) - (double) OB_POOL_FIRST_BIN;
    if (!(cell >= 0.0 && cell < (double) OB_POOL_BINS)) {
        return 0;
    }
    k->bin = (int) cell;
    k->offset = (u - floor(u)) * OB_POOL_WIDTH;
    k->offset = k->offset < OB_POOL_WIDTH ? k->offset : 0.0;
    k->unit = ob_pool_unit(k->bin, bref);
    return 1;
}

/* x in [0, 2) into two 32-bit limbs of its fixed point: sums of up to 2^31 are exact. */
static void ob_pool_fix_add(int64_t *limbs, double x)
{
    uint64_t v;

    x = x > 0.0 ? x : 0.0;
    x = x < 2.0 ? x : 2.0 - ldexp(1.0, -OB_POOL_BITS);
    v = (uint64_t) ldexp(x, OB_POOL_BITS);
    limbs[0] += (int64_t) (v & 0xffffffffu);
    limbs[1] += (int64_t) (v >> 32);
}

static double ob_pool_fix_value(const int64_t *limbs)
{
    return ldexp((double) limbs[1], 32 - OB_POOL_BITS) + ldexp((double) limbs[0], -OB_POOL_BITS);
}

static double ob_pool_field(const ob_pool *pool, int bin, int field)
{
    return ob_pool_fix_value(&pool->sums[bin * OB_POOL_FIELDS + field]);
}

static double ob_pool_count(const ob_pool *pool, int bin, int field)
{
    return (double) pool->sums[bin * OB_POOL_FIELDS + field];
}

/* ------------------------------------------------------------------ */
/* Peers                                                                */

/* A rank's peers in a histogram: the bin chosen for it (ob_pool_nearest()),
 * with a neighbouring bin whose mean model lies within half a bin of that
 * one's (ranks of one speed whose keys straddle an edge: each side alone
 * would be a mean of the ranks selected by their errors, biased towards
 * that side), if they are OB_POOL_MIN_RANKS or more. */
typedef struct ob_pool_peers {
    double n;
    double alpha;                /* their mean model, seconds */
    double beta;
    double ndev, dev2, err2;     /* the sums of their deviations' fields */
    double key, key2, kerr2;     /* the sums of their keys' fields, offsets from the chosen bin's edge */
} ob_pool_peers;

/* Bin \p bin's mean model at batch \p b, in seconds; 0 when it is empty. */
static double ob_pool_bin_time(const ob_pool *pool, int bin, double b)
{
    if (bin < 0 || bin >= OB_POOL_BINS || pool->sums[bin * OB_POOL_FIELDS + OB_POOL_N] < 1) {
        return 0.0;
    }
    return pool->alpha[bin] + pool->beta[bin] * b;
}

void ob_pool_finish(ob_pool *pool, double bref)
{
    for (int bin = 0; bin < OB_POOL_BINS; bin++) {
        double n = ob_pool_count(pool, bin, OB_POOL_N);
        double unit = ob_pool_unit(bin, bref);

        pool->alpha[bin] = n > 0.0 ? unit * ob_pool_field(pool, bin, OB_POOL_ALPHA) / n : 0.0;
        pool->beta[bin] = n > 0.0 ? unit * ob_pool_field(pool, bin, OB_POOL_BETA) / bref / n : 0.0;
    }
    pool->have = 1;
}

/* Bin \p bin into the peers; \p shift: its edge's distance from the chosen bin's, in logs. */
static void ob_pool_peers_add(ob_pool_peers *p, const ob_pool *pool, int bin, double shift)
{
    double n = ob_pool_count(pool, bin, OB_POOL_N);
    double key = ob_pool_field(pool, bin, OB_POOL_KEY);

    p->alpha = (p->alpha * p->n + pool->alpha[bin] * n) / (p->n + n);
    p->beta = (p->beta * p->n + pool->beta[bin] * n) / (p->n + n);
    p->n += n;
    p->ndev += ob_pool_count(pool, bin, OB_POOL_NDEV);
    p->dev2 += ob_pool_field(pool, bin, OB_POOL_DEV2);
    p->err2 += ob_pool_field(pool, bin, OB_POOL_ERR2);
    p->key += key + n * shift;
    p->key2 += ob_pool_field(pool, bin, OB_POOL_KEY2) + 2.0 * shift * key + n * shift * shift;
    p->kerr2 += ob_pool_field(pool, bin, OB_POOL_KERR2);
}

static int ob_pool_peers_of(const ob_pool *pool, int bin, double b, ob_pool_peers *p)
{
    double own = ob_pool_bin_time(pool, bin, b);

    memset(p, 0, sizeof *p);
    if (!(own > 0.0)) {
        return 0;
    }
    ob_pool_peers_add(p, pool, bin, 0.0);
    for (int side = -1; side <= 1; side += 2) {
        double t = ob_pool_bin_time(pool, bin + side, b);

        if (t > 0.0 && fabs(log(t / own)) < 0.5 * OB_POOL_WIDTH) {
            ob_pool_peers_add(p, pool, bin + side, side * OB_POOL_WIDTH);
        }
    }
    return p->n >= OB_POOL_MIN_RANKS;
}

/* The bin whose mean model is nearest the rank's own time \p own at the
 * batch it runs, where its model is right whatever its split: its key at
 * bref can be far off when the split is (a rank planned from batch 47 to 1
 * and back on a split fitted from batches 64 and 47 read each move as a
 * 3.7x change of speed, its key at bref 4.7x off, and flipped between the
 * two for good); -1 when no bin holds OB_POOL_MIN_RANKS. */
static int ob_pool_nearest(const ob_pool *pool, double own, double b)
{
    int best = -1;
    double best_ratio = HUGE_VAL;

    for (int bin = 0; bin < OB_POOL_BINS; bin++) {
        double t = ob_pool_bin_time(pool, bin, b);
        double ratio = t > own ? t / own : own / t;

        /* A bin of a few strays is nobody's peers (its neighbour joins it when it is like it). */
        if (t > 0.0 && ratio < best_ratio && ob_pool_count(pool, bin, OB_POOL_N) >= OB_POOL_MIN_RANKS) {
            best = bin;
            best_ratio = ratio;
        }
    }
    return best;
}

/* The spread of the true speeds among the peers, as a variance of logs:
 * from the deviations they had from their mean model where they ran, less
 * their models' own errors there; without those (the first histogram),
 * from their keys at bref, less their models' errors there (while the
 * ranks run near bref, as at the start, the two agree).  *err2: the
 * peers' mean squared error of the same kind. */
static double ob_pool_tau2(const ob_pool_peers *p, double *err2)
{
    double tau2;

    if (p->ndev >= OB_POOL_MIN_RANKS) {
        *err2 = p->err2 / p->ndev;
        tau2 = p->dev2 / p->ndev - *err2;
    } else {
        double mean = p->key / p->n;

        *err2 = p->kerr2 / p->n;
        tau2 = p->key2 / p->n - mean * mean - *err2;
    }
    return tau2 > 0.0 ? tau2 : 0.0;
}

/* Rank r's log deviation at batch b from its peers' mean model in \p pool
 * (those of the bin nearest its time there), and its model's error there;
 * 0 when it has no peers. */
static int ob_pool_deviation(const ob_pool *pool, const ob_rank_record *r, double b,
                             ob_pool_peers *p, double *dev, double *err)
{
    double own = r->alpha + r->beta * b;
    int bin;

    if (NULL == pool || !pool->have || !(b > 0.0) || r->samples <= 0 || !(own > 0.0) || !isfinite(own)
        || (bin = ob_pool_nearest(pool, own, b)) < 0 || !ob_pool_peers_of(pool, bin, b, p)) {
        return 0;
    }
    *dev = log(own / (p->alpha + p->beta * b));
    *err = ob_record_error_at(r, b);
    return 1;
}

/* ------------------------------------------------------------------ */
/* The histogram and the pooled records                                 */

void ob_pool_add(int64_t *sums, const ob_rank_record *r, long batch, double bref, const ob_pool_seen *seen)
{
    ob_pool_key k;
    double kerr;
    int64_t *s;

    if (batch <= 0 || !ob_pool_key_of(r, bref, &k)) {
        return;
    }
    s = &sums[k.bin * OB_POOL_FIELDS];
    s[OB_POOL_N] += 1;
    /* The model itself, in units of the bin's edge (both parts below 1.25 of it). */
    ob_pool_fix_add(&s[OB_POOL_ALPHA], r->alpha / k.unit);
    ob_pool_fix_add(&s[OB_POOL_BETA], r->beta * bref / k.unit);
    if (NULL != seen && seen->known) {
        s[OB_POOL_NDEV] += 1;
        ob_pool_fix_add(&s[OB_POOL_DEV2], seen->dev * seen->dev);
        ob_pool_fix_add(&s[OB_POOL_ERR2], seen->err * seen->err);
    }
    kerr = ob_record_error_at(r, bref);
    ob_pool_fix_add(&s[OB_POOL_KEY], k.offset);
    ob_pool_fix_add(&s[OB_POOL_KEY2], k.offset * k.offset);
    ob_pool_fix_add(&s[OB_POOL_KERR2], kerr * kerr);
}

/* The record's level error lowered so that its error at \p b is \p err
 * (as far as the share's error at that batch allows). */
static void ob_pool_set_error(ob_rank_record *r, double b, double err)
{
    if (r->mean_batch > 0.0) {
        double dx = b / r->mean_batch - 1.0;
        double k = (r->alpha + r->beta * r->mean_batch) / (r->alpha + r->beta * b);
        double level2 = err * err / (k * k) - r->share_error * r->share_error * dx * dx;

        r->level_error = level2 > 0.0 ? sqrt(level2) : 0.0;
    }
    r->rel_error = err;
}

int ob_pool_apply(const ob_pool *pool, const ob_rank_record *r, long batch, ob_rank_record *out,
                  ob_pool_seen *seen)
{
    ob_pool_peers p;
    double b = (double) batch;
    double dev = 0.0, err = 0.0, tau2, mean2, lambda, err2, t, share;
    int known;

    if (out != r) {
        *out = *r;
    }
    known = ob_pool_deviation(pool, r, b, &p, &dev, &err);
    if (NULL != seen) {
        seen->known = known;
        seen->dev = dev;
        seen->err = err;
    }
    if (!known) {
        return 0;
    }
    tau2 = ob_pool_tau2(&p, &mean2);
    /* Peers whose speeds spread like a continuum are not one kind of node:
     * their mean is up to half a bin from a rank at its edge. */
    if (tau2 > OB_POOL_MAX_SPREAD * OB_POOL_MAX_SPREAD) {
        return 0;
    }
    /* The peers' mean model's own error: their spread over their count. */
    mean2 = (tau2 + mean2) / p.n;
    /* Not like them: beyond OB_POOL_Z of its deviations, or a bin away
     * whatever its error says (a slow rank whose model errs by 30% is not
     * one of the fast ones 4x off). */
    if (dev * dev > OB_POOL_Z * OB_POOL_Z * (err * err + tau2 + mean2) || fabs(dev) > OB_POOL_WIDTH) {
        return 0;
    }
    lambda = tau2 + err * err > 0.0 ? tau2 / (tau2 + err * err) : 1.0;
    err2 = lambda * err * err + (1.0 - lambda) * (1.0 - lambda) * mean2;
    /* Where the rank runs, its time shrunk towards its peers'; its split
     * (fixed share there) shrunk alike towards theirs. */
    t = (p.alpha + p.beta * b) * exp(lambda * dev);
    share = lambda * r->alpha / (r->alpha + r->beta * b) + (1.0 - lambda) * p.alpha / (p.alpha + p.beta * b);
    out->alpha = share * t < OB_PLAN_MAX_ALPHA ? share * t : OB_PLAN_MAX_ALPHA;
    out->beta = (1.0 - share) * t / b > OB_PLAN_MIN_BETA ? (1.0 - share) * t / b : OB_PLAN_MIN_BETA;
    out->beta = out->beta < OB_PLAN_MAX_BETA ? out->beta : OB_PLAN_MAX_BETA;
    ob_pool_set_error(out, b, sqrt(err2));
    return 1;
}
