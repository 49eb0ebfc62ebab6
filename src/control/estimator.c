/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Online fit of one rank's speed model with forgetting, outlier hold-back
 * and change detection (see ob_estimator.h for the rules and their reasons).
 */
#include "config.h"

#include <math.h>
#include <string.h>

#include "ob_estimator.h"
#include "ob_maths.h"

void ob_estimator_init(ob_estimator *est, double forget)
{
    memset(est, 0, sizeof *est);
    if (!(forget >= 0.5)) {
        forget = isnan(forget) ? 1.0 : 0.5;
    }
    est->forget = forget > 1.0 ? 1.0 : forget;
    est->cusum_limit = OB_EST_CUSUM_LIMIT;
    est->cusum_limit_fast = OB_EST_CUSUM_LIMIT_FASTER;
}

void ob_estimator_set_ranks(ob_estimator *est, int nranks)
{
    double span = log((double) (nranks > 2 ? nranks : 2)) / log(65536.0);

    span = span < 1.0 ? span : 1.0;
    /* Each level from OB_EST_CUSUM_LIMIT_FEW at 2 ranks to its own at 65,536, linear in log P. */
    est->cusum_limit = OB_EST_CUSUM_LIMIT_FEW + (OB_EST_CUSUM_LIMIT - OB_EST_CUSUM_LIMIT_FEW) * span;
    est->cusum_limit_fast = OB_EST_CUSUM_LIMIT_FEW + (OB_EST_CUSUM_LIMIT_FASTER - OB_EST_CUSUM_LIMIT_FEW) * span;
}

void ob_estimator_set_levels(ob_estimator *est, double slow, double fast)
{
    if (slow > 0.0) {
        est->cusum_limit = slow;
    }
    if (fast > 0.0) {
        est->cusum_limit_fast = fast;
    }
}

long ob_estimator_count(const ob_estimator *est)
{
    return est->n;
}

/* Fold one sample with weight 1 after forgetting the past by est->forget
 * (West's update of weighted means and co-moments). */
static void ob_est_fold(ob_estimator *est, double b, double t)
{
    double w = est->forget * est->weight + 1.0;
    double db = b - est->mean_b;
    double dt = t - est->mean_t;

    est->weight = w;
    est->weight2 = est->forget * est->forget * est->weight2 + 1.0;
    est->mean_b += db / w;
    est->mean_t += dt / w;
    est->cbb = est->forget * est->cbb + db * (b - est->mean_b);
    est->cbt = est->forget * est->cbt + db * (t - est->mean_t);
    est->ctt = est->forget * est->ctt + dt * (t - est->mean_t);
    if (0 == est->n) {
        est->ref_b = b;
    }
    {
        double u = b - est->ref_b;

        est->suutt = est->forget * est->suutt + u * u * t * t;
        est->sutt = est->forget * est->sutt + u * t * t;
        est->stt = est->forget * est->stt + t * t;
    }
    est->noise_prior_dof *= est->forget;
    est->n++;
}

/* How much noisier the times are where the batch is far from its mean than
 * on average: sum w (b - mean b)^2 t^2 / (sum w (b - mean b)^2 mean t^2).
 * The noise is relative, so the samples that determine the slope (far from
 * the mean batch) carry noise in proportion to their times: after a rank's
 * batch fell from 64 to 16, its old samples are both the farthest and the
 * noisiest, and the slope is that much less certain than an even noise
 * would make it (the heteroscedasticity-consistent variance of the slope,
 * as a factor on the plain one). */
static double ob_est_leverage_noise(const ob_estimator *est)
{
    double m = est->mean_b - est->ref_b;
    double s = est->suutt - 2.0 * m * est->sutt + m * m * est->stt;
    double r = s / (est->cbb * est->mean_t * est->mean_t);

    return r > 0.0 && isfinite(r) ? r : 1.0;
}

/* Relative variance of the step times around the least-squares line (the
 * forgotten residual sum of squares over its degrees of freedom, divided by
 * the mean time squared), pooled with what was known of it before the last
 * change of speed (the noise is relative: a change of speed scales it with
 * the times, and re-learning the level must not forget it); *dof: the
 * degrees of freedom of the pool, 0 while nothing tells. */
static double ob_est_noise_var(const ob_estimator *est, double *dof)
{
    double rss = est->ctt;
    double d = est->weight - 1.0;
    double var = 0.0;

    if (est->cbb > 0.0) {
        rss -= est->cbt * est->cbt / est->cbb;
        d -= 1.0;
    }
    if (est->n < OB_EST_MIN_FIT || !(d > OB_EST_NOISE_MIN_DOF)) {
        d = 0.0;
    } else if (rss > 0.0) {
        var = rss / d / (est->mean_t * est->mean_t);
    }
    *dof = d + est->noise_prior_dof;
    return *dof > 0.0 ? (d * var + est->noise_prior_dof * est->noise_prior) / *dof : 0.0;
}

/* The noise as the judgements below need it: enlarged while it rests on
 * few samples (a standard deviation from 3 samples is a third of the truth
 * one time in twenty), to its one-sided upper confidence bound at
 * OB_EST_NOISE_BOUND_Z, s / (1 - z / sqrt(2 dof)) (the normal approximation
 * of the sample deviation), at most OB_EST_NOISE_BOUND_MAX s, s being at
 * least OB_EST_NOISE_FLOOR.  Without this, a few samples that happen to agree
 * make a model look exact: its split is taken as known from them for good,
 * its error is understated, and the change detector fires on ordinary
 * noise.  While *dof <= OB_EST_NOISE_MIN_DOF nothing is known of the noise
 * and callers must not judge by it. */
static double ob_est_bound_of(double var, double dof)
{
    double noise = sqrt(var);
    double shrink = dof > 0.0 ? 1.0 - OB_EST_NOISE_BOUND_Z / sqrt(2.0 * dof) : 0.0;

    noise = noise > OB_EST_NOISE_FLOOR ? noise : OB_EST_NOISE_FLOOR;
    return shrink * OB_EST_NOISE_BOUND_MAX > 1.0 ? noise / shrink : noise * OB_EST_NOISE_BOUND_MAX;
}

/* What one sample's judgements read of the fit, computed once: the state
 * does not change between them (ob_est_fold_diff() touches only the
 * step-to-step noise, which none of these read).  Each judgement used to
 * compute them again, the noise eight times a sample: three quarters of the
 * estimator's time (bench/simulate --false-changes). */
typedef struct ob_est_view {
    double var;                  /* ob_est_noise_var() */
    double dof;                  /* its degrees of freedom */
    double bound;                /* the noise at its bound (ob_est_bound_of()) */
    double precision;            /* of the least-squares fixed share (ob_est_precision_of()) */
    double alpha;                /* the model (0, 0 without samples) */
    double beta;
    int model;                   /* 1: there is a model (a sample was folded) */
} ob_est_view;

static void ob_est_view_of(const ob_estimator *est, ob_est_view *v);

/* The noise at its bound, on *dof degrees of freedom. */
static double ob_est_noise_bound(const ob_estimator *est, double *dof)
{
    double var = ob_est_noise_var(est, dof);

    return ob_est_bound_of(var, *dof);
}

/* The noise the detectors judge by: the residual noise at its bound, or the
 * step-to-step noise at its bound when that is smaller (see ob_estimator.h). */
static double ob_est_detect_noise(const ob_estimator *est, const ob_est_view *v, double *dof)
{
    double noise = v->bound;

    *dof = v->dof;
    if (est->dw >= OB_EST_DIFF_MIN) {
        double step = sqrt(0.5 * est->dsq / est->dw);
        double shrink = 1.0 - OB_EST_NOISE_BOUND_Z / sqrt(2.0 * est->dw);

        step = step > OB_EST_NOISE_FLOOR ? step : OB_EST_NOISE_FLOOR;
        step /= shrink;
        if (step < noise) {
            noise = step;
            *dof = *dof > est->dw ? *dof : est->dw;
        }
    }
    return noise;
}

/* Fold the step-to-step difference of a sample at the previous sample's batch. */
static void ob_est_fold_diff(ob_estimator *est, double batch, double seconds)
{
    double logt = log(seconds);

    if (est->n > 0 && batch == est->last_b) {
        double d = logt - est->last_logt;
        double d2 = d * d;

        if (est->dw >= OB_EST_DIFF_MIN) {
            double sd = sqrt(est->dsq / est->dw);
            double cap = OB_EST_DIFF_CLIP * (sd > OB_EST_NOISE_FLOOR ? sd : OB_EST_NOISE_FLOOR);

            d2 = d2 < cap * cap ? d2 : cap * cap;
        }
        est->dsq = est->forget * est->dsq + d2;
        est->dw = est->forget * est->dw + 1.0;
    }
    est->last_b = batch;
    est->last_logt = logt;
}

/* Precision (1 / variance) of the least-squares fixed share: info / noise^2,
 * info = sum w ((b - mean b) / mean b)^2 = cbb / mean_b^2. */
static double ob_est_precision_of(const ob_estimator *est, double noise, double dof)
{
    if (est->n < OB_EST_MIN_FIT || !(est->cbb > 0.0) || !(dof > OB_EST_NOISE_MIN_DOF)) {
        return 0.0;
    }
    return est->cbb / (est->mean_b * est->mean_b) / (noise * noise) / ob_est_leverage_noise(est);
}

static double ob_est_data_precision(const ob_estimator *est)
{
    double dof;
    double noise = ob_est_noise_bound(est, &dof);

    return ob_est_precision_of(est, noise, dof);
}

int ob_estimator_identified(const ob_estimator *est)
{
    return ob_est_data_precision(est) * OB_EST_MAX_SHARE_ERROR * OB_EST_MAX_SHARE_ERROR >= 1.0;
}

/* The least-squares fixed share, guarded: alpha >= 0 and the per-sample
 * term at least OB_EST_MIN_SLOPE_SHARE of the mean time. */
static double ob_est_clamp_share(double share)
{
    if (!(share > 0.0)) {
        return 0.0;
    }
    return share < 1.0 - OB_EST_MIN_SLOPE_SHARE ? share : 1.0 - OB_EST_MIN_SLOPE_SHARE;
}

static double ob_est_ls_share(const ob_estimator *est)
{
    return 1.0 - est->cbt / est->cbb * est->mean_b / est->mean_t;
}

/* After each fold: when the data alone determine the split, remember it as
 * the prior for when they no longer do. */
static void ob_est_update_shape(ob_estimator *est)
{
    if (ob_estimator_identified(est)) {
        est->shape = ob_est_clamp_share(ob_est_ls_share(est));
        est->shape_known = 1;
    }
}

/* The fixed share of the mean time: the least-squares one when the data
 * determine it; otherwise the prior (the last determined share, or 0) and
 * the data weighed by their precisions, so that partial information counts
 * and a constant batch leaves the prior exactly. */
static double ob_est_share(const ob_estimator *est, double pd)
{
    double sd = est->shape_known ? OB_EST_MAX_SHARE_ERROR : OB_EST_PRIOR_SHARE_SD;
    double pp = 1.0 / (sd * sd);

    if (pd * OB_EST_MAX_SHARE_ERROR * OB_EST_MAX_SHARE_ERROR >= 1.0) {
        return ob_est_clamp_share(ob_est_ls_share(est));
    }
    if (0.0 == pd) {
        return est->shape;
    }
    return ob_est_clamp_share((pp * est->shape + pd * ob_est_ls_share(est)) / (pp + pd));
}

static void ob_est_view_of(const ob_estimator *est, ob_est_view *v)
{
    v->var = ob_est_noise_var(est, &v->dof);
    v->bound = ob_est_bound_of(v->var, v->dof);
    v->precision = ob_est_precision_of(est, v->bound, v->dof);
    v->model = 0 != est->n;
    v->alpha = 0.0;
    v->beta = 0.0;
    if (v->model) {
        /* The line through the recent operating point with that split. */
        double share = ob_est_share(est, v->precision);

        v->alpha = share * est->mean_t;
        v->beta = (1.0 - share) * est->mean_t / est->mean_b;
    }
}

/* The model's prediction at \p batch (0 without a model). */
static double ob_est_predict_of(const ob_est_view *v, double batch)
{
    return v->model ? v->alpha + v->beta * batch : 0.0;
}

int ob_estimator_model(const ob_estimator *est, double *alpha, double *beta)
{
    ob_est_view v;

    ob_est_view_of(est, &v);
    *alpha = v.alpha;
    *beta = v.beta;
    return v.model;
}

static int ob_est_error_terms_of(const ob_estimator *est, const ob_est_view *v, double *level, double *share,
                                 double *mean_batch)
{
    double pd = v->precision, sd;

    if (est->n < OB_EST_MIN_FIT || !(v->dof > OB_EST_NOISE_MIN_DOF)) {
        *level = 1.0;
        *share = 0.0;
        *mean_batch = est->mean_b;
        return 0;
    }
    sd = est->shape_known ? OB_EST_MAX_SHARE_ERROR : OB_EST_PRIOR_SHARE_SD;
    /* The level rests on weight^2 / weight2 samples' worth. */
    *level = v->bound * sqrt(est->weight2) / est->weight;
    /* A split the data once determined came from (some of) the data still
     * in the sums: its prior and their precision are not independent, and
     * are not added. */
    if (pd * OB_EST_MAX_SHARE_ERROR * OB_EST_MAX_SHARE_ERROR >= 1.0) {
        *share = sqrt(1.0 / pd);
    } else {
        *share = est->shape_known ? sd : sqrt(1.0 / (1.0 / (sd * sd) + pd));
    }
    *mean_batch = est->mean_b;
    return 1;
}

int ob_estimator_error_terms(const ob_estimator *est, double *level, double *share, double *mean_batch)
{
    ob_est_view v;

    ob_est_view_of(est, &v);
    return ob_est_error_terms_of(est, &v, level, share, mean_batch);
}

static double ob_est_error_of(const ob_estimator *est, const ob_est_view *v, double batch)
{
    double level, share, mean_batch, dx;

    if (!ob_est_error_terms_of(est, v, &level, &share, &mean_batch)) {
        return 1.0;
    }
    /* Relative to the mean time: the level, and the split times the
     * distance from the operating point. */
    dx = batch / mean_batch - 1.0;
    return sqrt(level * level + share * share * dx * dx) * est->mean_t / ob_est_predict_of(v, batch);
}

double ob_estimator_error(const ob_estimator *est, double batch)
{
    ob_est_view v;

    ob_est_view_of(est, &v);
    return ob_est_error_of(est, &v, batch);
}

double ob_estimator_predict(const ob_estimator *est, double batch)
{
    ob_est_view v;

    ob_est_view_of(est, &v);
    return ob_est_predict_of(&v, batch);
}

/* Log distance from t to the envelope of the times at batch b of every line
 * through (b0, t0) with alpha in [0, t0]: positive when slower than any such
 * line allows, negative when faster, 0 inside. */
static double ob_est_envelope_at(double b0, double t0, double b, double t)
{
    double scaled = t0 * (b / b0);
    double low = scaled < t0 ? scaled : t0;
    double high = scaled < t0 ? t0 : scaled;

    if (t > high) {
        return log(t / high);
    }
    if (t < low) {
        return log(t / low);
    }
    return 0.0;
}

/* The same about the model's operating point (its mean batch and time). */
static double ob_est_envelope_distance(const ob_estimator *est, double b, double t)
{
    return ob_est_envelope_at(est->mean_b, est->mean_t, b, t);
}

/* How far a sample is from what the model allows.  While the split of
 * fixed and per-sample time is unknown, from the envelope of every split
 * (ob_est_envelope_distance()); once the data have determined it, from the
 * prediction itself.  The envelope is wide where the batch moved away from
 * its mean, wide enough to take a sample at a new batch and a new speed
 * (1.3x slower at a batch 1.3x smaller lies inside it): folded into the
 * fit, such a sample bends the line, the split reads the change of speed
 * as a change of the fixed cost, and ranks of one speed are given unequal
 * batches.  Judged against the prediction it is held back and confirms a
 * change of speed, which keeps the shape. */
static double ob_est_distance(const ob_estimator *est, const ob_est_view *v, double b, double t)
{
    if (est->shape_known) {
        return log(t / ob_est_predict_of(v, b));
    }
    return ob_est_envelope_distance(est, b, t);
}

static double ob_est_median_ratio(const ob_estimator *est, const ob_est_view *v)
{
    double r[OB_EST_HELD_MAX];
    int n = est->nheld;

    for (int k = 0; k < n; k++) {
        r[k] = est->held_t[k] / ob_est_predict_of(v, est->held_b[k]);
    }
    return ob_median(r, n);
}

/* Before a re-learn: the past keeps its level (its mean batch and time)
 * and its residual scatter, but no longer speaks of the split: its samples
 * at other batches, scaled by an estimated factor, would carry that
 * factor's error into the slope, and ranks of one speed would end with
 * different splits (measured on the ramp: shares 0 and 0.08 for two ranks
 * of one speed, true 0.05, and batches 774 and 824).  The split stays the
 * one learnt (the prior, ob_est_share()) until samples after the change,
 * at the batches the plan then gives, determine it again. */
static void ob_est_collapse(ob_estimator *est)
{
    if (est->cbb > 0.0) {
        double rss = est->ctt - est->cbt * est->cbt / est->cbb;

        est->ctt = rss > 0.0 ? rss : 0.0;
    }
    est->cbb = 0.0;
    est->cbt = 0.0;
    est->ref_b = est->mean_b;
    est->suutt = 0.0;
    est->sutt = 0.0;
    est->stt = 0.0;
}

/* A lasting change of speed by the factor rho: the same model shape at
 * the new speed, the old data weighed down to \p evidence samples' worth
 * (as many as revealed the change, so that they count as much as all the
 * past), then the held samples folded. */
static void ob_est_relearn(ob_estimator *est, double rho, double evidence)
{
    est->noise_prior = ob_est_noise_var(est, &est->noise_prior_dof);
    ob_est_collapse(est);
    est->mean_t *= rho;
    est->cbt *= rho;
    est->ctt *= rho * rho;
    est->suutt *= rho * rho;
    est->sutt *= rho * rho;
    est->stt *= rho * rho;
    if (est->weight > evidence) {
        double keep = evidence / est->weight;

        est->weight *= keep;
        /* As many effective samples as the weight: the level now rests on
         * the few samples that showed the change. */
        est->weight2 = est->weight;
        est->cbb *= keep;
        est->cbt *= keep;
        est->ctt *= keep;
        est->suutt *= keep;
        est->sutt *= keep;
        est->stt *= keep;
    }
    for (int k = 0; k < est->nheld; k++) {
        ob_est_fold(est, est->held_b[k], est->held_t[k]);
        ob_est_update_shape(est);
    }
    est->nheld = 0;
    est->cusum_hi = est->cusum_lo = 0.0;
    est->run_hi = est->run_lo = 0;
    est->sum_hi = est->sum_lo = 0.0;
    est->changes++;
    est->changes_faster += rho < 1.0;
}

/* Page's two-sided CUSUM of the log residual against the prediction,
 * standardised by the detectors' noise (ob_est_detect_noise(), on dof
 * degrees of freedom) and the model's own error \p err at that batch, each term
 * clipped so that a single spike cannot raise the alarm alone (on each side
 * at that side's level over OB_EST_CUSUM_TERMS, plus the slack).
 * Returns 1 on an alarm, with the estimated log shift (the mean residual of
 * the run that raised it) and the length of that run. */
static int ob_est_cusum(ob_estimator *est, double predicted, double seconds, double noise, double dof, double err,
                        double *shift, long *run)
{
    double sd, r, z;
    double clip = est->cusum_limit / OB_EST_CUSUM_TERMS + OB_EST_CUSUM_SLACK;
    double clip_fast = est->cusum_limit_fast / OB_EST_CUSUM_TERMS + OB_EST_CUSUM_SLACK;

    if (est->n < OB_EST_MIN_FIT || dof < OB_EST_CUSUM_MIN_DOF) {
        return 0;
    }
    sd = sqrt(noise * noise + err * err);
    r = log(seconds / predicted);
    z = r / sd;
    z = z > clip ? clip : (z < -clip_fast ? -clip_fast : z);
    /* The shift is estimated from residuals clipped twice as wide. */
    r = r > 2.0 * clip * sd ? 2.0 * clip * sd : (r < -2.0 * clip_fast * sd ? -2.0 * clip_fast * sd : r);
    est->cusum_hi += z - OB_EST_CUSUM_SLACK;
    est->cusum_lo -= z + OB_EST_CUSUM_SLACK;
    if (est->cusum_hi > 0.0) {
        est->run_hi++;
        est->sum_hi += r;
    } else {
        est->cusum_hi = est->sum_hi = 0.0;
        est->run_hi = 0;
    }
    if (est->cusum_lo > 0.0) {
        est->run_lo++;
        est->sum_lo += r;
    } else {
        est->cusum_lo = est->sum_lo = 0.0;
        est->run_lo = 0;
    }
    if (est->cusum_hi >= est->cusum_limit) {
        *run = est->run_hi;
        *shift = est->sum_hi / est->run_hi;
        return 1;
    }
    if (est->cusum_lo >= est->cusum_limit_fast) {
        *run = est->run_lo;
        *shift = est->sum_lo / est->run_lo;
        return 1;
    }
    return 0;
}

/* How far from the envelope a sample is an outlier: OB_EST_TOL_SIGMAS times
 * the residual noise, or the detectors' (step-to-step) noise when that is
 * smaller, at least OB_EST_TOL_FLOOR.  While the noise rests on fewer than
 * OB_EST_CUSUM_MIN_DOF degrees of freedom it is taken at its upper bound:
 * a noise underestimated from a dozen samples made ordinary ones outliers,
 * and two or three in a row a false change (measured: 4 in 1.3e7 samples
 * of 10% normal noise at 65,536 ranks, all in the first 100 steps). */
static double ob_est_outlier_tol(const ob_estimator *est, const ob_est_view *v, double detect_noise, double dof)
{
    double tol = OB_EST_TOL_SIGMAS * (dof < OB_EST_CUSUM_MIN_DOF ? detect_noise : sqrt(v->var));

    if (est->dw >= OB_EST_DIFF_MIN && OB_EST_TOL_SIGMAS * detect_noise < tol) {
        tol = OB_EST_TOL_SIGMAS * detect_noise;
    }
    return tol < OB_EST_TOL_FLOOR ? OB_EST_TOL_FLOOR : tol;
}

/* Judged against the prediction, a sample is also as far off as the
 * model's own error at its batch allows: a split fitted from a narrow range
 * of batches errs most far from them (its fixed cost 1.8x the true one from
 * batches 40-64 at 3% noise, 60% too slow at batch 2), and those samples
 * are what corrects it; held back, three of them made a change of speed
 * that kept the wrong split, and every move of the plan after it another
 * (simulated: a rank of 4,096 moved between batches 2 and 30, the plan at
 * 1.6x the best step).  A change of speed where the model is sure (at the
 * batches it ran) is judged against the noise as before. */
static double ob_est_model_tol(const ob_estimator *est, double batch, double err, double tol)
{
    double model;

    if (!est->shape_known) {
        return tol;
    }
    model = OB_EST_MODEL_SIGMAS * err;
    if (batch > OB_EST_FAR * est->mean_b || OB_EST_FAR * batch < est->mean_b) {
        model *= 2.0;
    }
    return model > tol ? model : tol;
}

/* Whether a sample the model would take continues the change of speed its
 * held samples suggest: at a batch none of them ran, on their side of the
 * model by at least half the tolerance, and nearer to what they predict
 * there (the last one moved to this batch by the model's shape, or by the
 * envelope of every shape while it is unknown) than to the model.  A change
 * of speed that comes with a change of batch otherwise lands inside the
 * envelope, which is wide away from the mean batch: folded, it bends the
 * line, the split reads the new speed as a new fixed cost (measured: a rank
 * 1.33x faster given 10% more samples took a fixed share of 0.89, true
 * 0.11), and the plan swings on that split for the rest of the phase.  At a
 * batch already held the old rule stands, so that noise confirms no more
 * changes than before. */
static int ob_est_continues_change(const ob_estimator *est, const ob_est_view *v, double b, double t, double e,
                                   double tol)
{
    double hb, ht, d;

    if (0 == est->nheld || (e > 0.0 ? 1 : -1) != est->held_side || fabs(e) < 0.5 * tol) {
        return 0;
    }
    for (int k = 0; k < est->nheld; k++) {
        if (est->held_b[k] == b) {
            return 0;
        }
    }
    hb = est->held_b[est->nheld - 1];
    ht = est->held_t[est->nheld - 1];
    d = est->shape_known ? log(t / (ht * ob_est_predict_of(v, b) / ob_est_predict_of(v, hb)))
                         : ob_est_envelope_at(hb, ht, b, t);
    return fabs(d) < fabs(e);
}

ob_sample_verdict ob_estimator_add_probe(ob_estimator *est, double batch, double seconds)
{
    ob_sample_verdict verdict;

    /* Whatever was held before the rank was parked is stale. */
    est->nheld = 0;
    verdict = ob_estimator_add(est, batch, seconds);
    if (OB_SAMPLE_OUTLIER == verdict && est->nheld > 0) {
        ob_est_view v;

        ob_est_view_of(est, &v);
        ob_est_relearn(est, ob_est_median_ratio(est, &v), 1.0);
        return OB_SAMPLE_CHANGE;
    }
    return verdict;
}

ob_sample_verdict ob_estimator_add(ob_estimator *est, double batch, double seconds)
{
    double tol, e, err, shift = 0.0, evidence, noise, dof;
    long run = 0;
    int side, alarm;
    ob_est_view v;

    if (!(isfinite(batch) && isfinite(seconds) && batch > 0.0 && seconds > 0.0)) {
        est->invalid++;
        return OB_SAMPLE_INVALID;
    }
    if (0 == est->n) {
        ob_est_fold_diff(est, batch, seconds);
        ob_est_fold(est, batch, seconds);
        return OB_SAMPLE_USED;
    }
    /* Until the sample is folded or held, the fit stands as v says. */
    ob_est_view_of(est, &v);
    noise = ob_est_detect_noise(est, &v, &dof);
    /* The model's error at this batch, for both judgements. */
    err = ob_est_error_of(est, &v, batch);
    alarm = ob_est_cusum(est, ob_est_predict_of(&v, batch), seconds, noise, dof, err, &shift, &run);
    evidence = (double) (run > OB_EST_CUSUM_TERMS ? run : OB_EST_CUSUM_TERMS);
    tol = ob_est_outlier_tol(est, &v, noise, dof);
    ob_est_fold_diff(est, batch, seconds);
    e = ob_est_distance(est, &v, batch, seconds);
    tol = ob_est_model_tol(est, batch, err, tol);
    if (fabs(e) <= tol && !ob_est_continues_change(est, &v, batch, seconds, e, tol)) {
        est->nheld = 0;
        if (alarm) {
            ob_est_relearn(est, exp(shift), evidence);
        }
        ob_est_fold(est, batch, seconds);
        ob_est_update_shape(est);
        return alarm ? OB_SAMPLE_CHANGE : OB_SAMPLE_USED;
    }
    side = e > 0.0 ? 1 : -1;
    if (est->nheld > 0 && side != est->held_side) {
        est->nheld = 0;
    }
    est->held_least = 0 == est->nheld || fabs(e) < est->held_least ? fabs(e) : est->held_least;
    est->held_b[est->nheld] = batch;
    est->held_t[est->nheld] = seconds;
    est->nheld++;
    est->held_side = side;
    est->outliers++;
    if (est->nheld == (dof >= OB_EST_CONFIRM_MIN_DOF &&
                       est->held_least >= (side > 0 ? OB_EST_CONFIRM_LARGE : OB_EST_CONFIRM_LARGE_FASTER)
                           ? OB_EST_CONFIRM : OB_EST_CONFIRM_FASTER)) {
        ob_est_relearn(est, ob_est_median_ratio(est, &v), (double) est->nheld);
        return OB_SAMPLE_CHANGE;
    }
    if (alarm) {
        /* The held samples measure a large shift better than the clipped
         * residuals of the run. */
        ob_est_relearn(est, (shift > 0.0) == (side > 0) ? ob_est_median_ratio(est, &v) : exp(shift), evidence);
        return OB_SAMPLE_CHANGE;
    }
    return OB_SAMPLE_OUTLIER;
}
