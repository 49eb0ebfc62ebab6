/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One rank's speed model, t = alpha + beta * b, fitted online from the
 * (batch, seconds) pairs of its steps.  MPI-free; one value per rank, no
 * allocation.
 *
 * Fit.  Weighted least squares with exponential forgetting (the estimate of
 * recursive least squares with a forgetting factor), kept as forgotten means
 * and centred co-moments so that it stays exact however large b and t are.
 * The model is the line through the recent operating point (mean b, mean t)
 * with a fixed share of mean t: alpha = share * mean t, beta = (1 - share) *
 * mean t / mean b.  The prediction where the rank runs is right whether or
 * not the split is known; the split only matters for extrapolation.
 *
 * Identifiability ("enough" variation of b).  In units of the mean batch
 * (x = b / mean b) the fit's information matrix is sum w [1, x; x, x^2]; its
 * conditioning for the split is info = sum w (x - 1)^2 = cbb / mean_b^2
 * (about twice its smallest eigenvalue), and the least-squares share has
 * standard error noise * sqrt(lev / info), noise being the relative standard
 * deviation of the times around the line and lev how much noisier than
 * average the samples far from the mean batch are (the noise is relative,
 * so where the times were longer it was larger: after a rank's batch fell
 * from 64 to 16 its old samples are both the farthest and the noisiest; the
 * heteroscedasticity-consistent variance of the slope).  The noise judging
 * the fit is the forgotten residual sum of squares over its degrees of
 * freedom, pooled with what was known before the last change of speed,
 * at least OB_EST_NOISE_FLOOR, and taken at its one-sided
 * OB_EST_NOISE_BOUND_Z upper confidence bound (at most
 * OB_EST_NOISE_BOUND_MAX times it; nothing is judged while it rests on no
 * degree of freedom): otherwise four samples that happen to agree would
 * make a split known for good, understate the model's error and set off
 * the change detector.
 * When that error is at most
 * OB_EST_MAX_SHARE_ERROR (and OB_EST_MIN_FIT samples were used) the data
 * determine the share and the least-squares line is the model.  Otherwise the
 * share is a prior and the data weighed by their precisions: the prior is 0
 * (alpha = 0, beta = t / b) with standard deviation OB_EST_PRIOR_SHARE_SD
 * until the data have once determined a share, and that share afterwards
 * (standard deviation OB_EST_MAX_SHARE_ERROR).  So a constant batch gives
 * alpha = 0 exactly; a few samples at a new batch pin the split however many
 * were taken at the old one (info is not divided by the sample count); and a
 * rank whose batch has settled keeps the split it learnt (a steady batch
 * carries no information on it, so forgetting must not erase it).
 *
 * Guards.  alpha >= 0, and beta * mean b >= OB_EST_MIN_SLOPE_SHARE of mean t:
 * a fit saying the batch hardly matters is noise, and would make the planner
 * pile samples on that rank.
 *
 * Outliers.  Whatever alpha in [0, mean t], the time at batch b lies between
 * mean t and mean t * b / mean b; while the split is unknown a sample is
 * judged against that envelope, not against a slope that may be poorly
 * known; once the data have determined the split, against the prediction
 * (the envelope is wide where the plan moved the batch, wide enough to take
 * a new speed at a new batch into the fit, which then reads the change of
 * speed as a change of the fixed cost).  A sample farther from it
 * than max(OB_EST_TOL_FLOOR, OB_EST_TOL_SIGMAS * noise) in log terms is held
 * back, not folded; an isolated one (a GC pause, a page fault) is dropped
 * when the next normal sample comes.
 *
 * Step-to-step noise.  The residuals around the line measure the noise only
 * while the line is right.  When the speed drifts or changes by less than
 * the detectors below see, the line lags, the residuals grow and the noise
 * estimated from them grows with them, which blinds the detectors further:
 * the model can stay 30% off for good.  So the noise is also measured from
 * successive samples at one batch, (log t_k - log t_k-1)^2 / 2, each
 * difference clipped at OB_EST_DIFF_CLIP standard deviations (a spike counts
 * once, moderately), forgotten like the samples; a level shift adds one
 * difference only.  The detectors judge by the smaller of the two noises
 * once OB_EST_DIFF_MIN differences were seen; the fit's own uncertainty
 * keeps the residual noise.  With independent noise and a right line the
 * two agree.
 *
 * Lasting changes.  Two detectors, then one response.  (1) OB_EST_CONFIRM
 * held outliers in a row on the slow side (a 2x slowdown, or a 1.3x one: the
 * outlier threshold is 22% at 5% noise), OB_EST_CONFIRM_FASTER on the fast
 * side; the shift is their median ratio to the prediction.  (2) Page's two-sided CUSUM of the log
 * residuals against the prediction, standardised by the noise and the
 * model's own error at that batch, slack OB_EST_CUSUM_SLACK, alarm at
 * OB_EST_CUSUM_LIMIT on the slow side and OB_EST_CUSUM_LIMIT_FASTER on the
 * fast side (less with few ranks: ob_estimator_set_ranks()), each
 * term clipped so that OB_EST_CUSUM_TERMS samples are
 * needed to raise it (changes too small to be outliers, e.g. 1.15x), and
 * silent until the noise rests on OB_EST_CUSUM_MIN_DOF degrees of freedom;
 * the shift is the mean residual of the run that raised it, or the held
 * outliers' median when there are some.  A false alarm is costly: the model
 * is re-learnt from the run that raised it, the most extreme stretch of
 * noise in the rank's history, and at 65,536 ranks the largest of those
 * errors sets the step time; so the CUSUM is sized for a false alarm rate
 * far below one per run at that scale (the rates: docs/figures.md).  Response: the model keeps its
 * shape, is scaled by the shift, and the past is weighed down to as many
 * samples as revealed the change, so that the new speed is learnt at once
 * and refined by the next samples (the noise is remembered); the past keeps
 * its level and scatter but no longer speaks of the split (its samples at
 * other batches, scaled by an estimated factor, would carry that factor's
 * error into the slope): the learnt split is the prior until samples after
 * the change determine it again.  Changes below
 * both detectors are followed by the forgetting factor.
 *
 * How fast changes are followed, and the false-alarm rates: docs/figures.md.
 */
#ifndef OB_ESTIMATOR_H
#define OB_ESTIMATOR_H

/**
 * Outliers in a row on the slow side that confirm a lasting slowdown: 2, so that a rank whose
 * speed drops is followed after its second slow step (each slow step costs every rank the
 * whole step), while a one-step spike (a GC pause, a page fault) is dropped at the next normal
 * sample and moves nothing.  Two in a row beyond OB_EST_TOL_SIGMAS = 4 standard deviations on
 * the slow side: about 1e-12 per sample under 10% normal noise.
 */
#define OB_EST_CONFIRM 2
/**
 * Outliers in a row on the fast side that confirm a lasting speed-up: 3.  Under normal noise
 * the fast tail is the heavier one in log terms (log(1 - 4 sd) is farther than log(1 + 4 sd)),
 * so two in a row there would be a false change about once in 1e6 samples; and a rank that got
 * faster costs only its own spare capacity while it is not yet followed.
 */
#define OB_EST_CONFIRM_FASTER 3
/** Degrees of freedom of the noise before OB_EST_CONFIRM applies; OB_EST_CONFIRM_FASTER before
 *  (while the noise is barely known, two samples that differ from the first few are no proof). */
#define OB_EST_CONFIRM_MIN_DOF 8.0
/** OB_EST_CONFIRM applies when every held sample is at least this far (log) from the model
 *  (1.5x); a smaller slowdown takes OB_EST_CONFIRM_FASTER samples too.  On a crowded machine two
 *  steps in a row 25% slow are not rare (the API's plan tests saw a rank of full speed re-learnt
 *  at half of it); two in a row 1.5x slow are. */
#define OB_EST_CONFIRM_LARGE 0.405
/** OB_EST_CONFIRM applies on the fast side too when every held sample is at least this far (log)
 *  from the model (2x faster): under 10% normal noise a sample half its prediction is 5 standard
 *  deviations off, as rare as the slow side's 1.5x, and a rank that comes back from near
 *  vanishing (1/20 of its speed) is followed a step sooner. */
#define OB_EST_CONFIRM_LARGE_FASTER 0.693
/** The larger of the two: the outliers held back at most. */
#define OB_EST_HELD_MAX 3
/** CUSUM terms are clipped so that this many samples are needed to raise its alarm. */
#define OB_EST_CUSUM_TERMS 3
/** Largest standard error of the fixed share for the data alone to set it. */
#define OB_EST_MAX_SHARE_ERROR 0.1
/** Least relative noise assumed when judging the fit (timers are never exact). */
#define OB_EST_NOISE_FLOOR 0.01
/** Judging the fit, the noise is taken at this one-sided normal quantile of its estimate (95%)... */
#define OB_EST_NOISE_BOUND_Z 1.645
/** ... and at most this multiple of the estimate (while it rests on a handful of samples). */
#define OB_EST_NOISE_BOUND_MAX 5.0
/** Degrees of freedom (forgotten) below which nothing is known of the noise. */
#define OB_EST_NOISE_MIN_DOF 0.5
/** Standard deviation of the prior share 0 before the data ever determined one. */
#define OB_EST_PRIOR_SHARE_SD 0.3
/** Least samples used before alpha is estimated. */
#define OB_EST_MIN_FIT 3
/** Least share of the mean step time that the per-sample term must explain. */
#define OB_EST_MIN_SLOPE_SHARE 0.1
/** Least outlier threshold, as |log(t / envelope)| (0.2: 22% slower or 18% faster). */
#define OB_EST_TOL_FLOOR 0.2
/** Outlier threshold in standard deviations of the noise. */
#define OB_EST_TOL_SIGMAS 4.0
/** ... or in the model's own error at the sample's batch, when that is wider (a known split). */
#define OB_EST_MODEL_SIGMAS 3.0
/** ... and twice as many of them at a batch over OB_EST_FAR times the mean batch or under its
 *  inverse, where the split is extrapolated: a split learnt from a narrow range of batches
 *  understates how wrong it can be there (a fixed cost 2.4x the true one, its error at batch 1
 *  put at 17% from a mean batch of 33).  With 3 there, a simulated plan of 65,536 ranks (bimodal,
 *  10% noise) swung such ranks between batches 1 and 33, re-learnt at every move, at 1.51x the
 *  best step; with 6, 1.10x.  Nearer, where a change of speed moves the plan (by 1.3-2x in the
 *  ramp), the 3 stay. */
#define OB_EST_FAR 3.0
/** CUSUM alarm level in standard deviations (at 65,536 ranks, and when the ranks are not known). */
#define OB_EST_CUSUM_LIMIT 14.0
/** CUSUM alarm level for a handful of ranks (ob_estimator_set_ranks()). */
#define OB_EST_CUSUM_LIMIT_FEW 11.0
/** CUSUM alarm level on the fast side at 65,536 ranks.  Higher than the slow side's for two
 *  reasons.  Cost: a rank falsely thought faster is given more work and sets every rank's step;
 *  one falsely thought slower gives a little of its work to all the others, and one whose
 *  speed-up is followed late leaves only itself idle (the asymmetry of OB_EST_CONFIRM_FASTER).
 *  Tail: timing noise symmetric in seconds is not in log seconds, and the fast side's tail is
 *  the longer one (10% normal noise clipped at 3 standard deviations: 0.7x is 3.6 standard
 *  deviations of the log, 1.3x 2.6).  In 6.55e7 samples of 65,536 ranks at level 8 on both
 *  sides, 169 false alarms were on the fast side and the slow side's 26 each re-corrected a
 *  rank falsely made faster just before (the slow side alone raises as many at level 6 as the
 *  fast side at 9), and at 14 the fast side's rate was about 3e-9 per
 *  sample, falling about 3x per unit of level: at 21, about 1e-12, a tenth of a false change
 *  expected in 10^6 steps of 65,536 ranks (bench/RESULTS.md).  The price: at that scale a
 *  1.3x speed-up under 10% normal noise (within the outlier threshold) is confirmed after
 *  13.2 samples on average instead of 8.9 (tests/unit/control/check_estimator.c). */
#define OB_EST_CUSUM_LIMIT_FASTER 21.0
/** CUSUM slack in standard deviations: shifts below about twice this are left to forgetting. */
#define OB_EST_CUSUM_SLACK 0.75
/** Degrees of freedom of the noise before the CUSUM runs: its scale must rest on enough samples. */
#define OB_EST_CUSUM_MIN_DOF 20.0
/** Successive differences at one batch before the step-to-step noise is used by the detectors. */
#define OB_EST_DIFF_MIN 8.0
/** A step-to-step difference is clipped at this many of their standard deviations (spikes). */
#define OB_EST_DIFF_CLIP 4.0

/** What ob_estimator_add() did with a sample. */
typedef enum ob_sample_verdict {
    OB_SAMPLE_USED = 0,          /* folded into the model */
    OB_SAMPLE_INVALID = 1,       /* NaN, infinite, zero or negative time or batch: ignored */
    OB_SAMPLE_OUTLIER = 2,       /* far from the model, held back (not used unless it persists) */
    OB_SAMPLE_CHANGE = 3         /* confirmed a lasting change of speed: the model was re-learnt */
} ob_sample_verdict;

/* The type is complete so that a caller can hold one by value; only
 * estimator.c writes the fields.  The counters may be read. */
typedef struct ob_estimator {
    double forget;               /* forgetting factor in [0.5, 1] */
    double weight;               /* forgotten number of samples folded */
    double weight2;              /* forgotten sum of squared weights: weight^2 / weight2 samples' worth */
    double mean_b;               /* forgotten mean batch */
    double mean_t;               /* forgotten mean seconds */
    double cbb;                  /* forgotten centred sum of (b - mean_b)^2 */
    double cbt;                  /* forgotten centred sum of (b - mean_b)(t - mean_t) */
    double ctt;                  /* forgotten centred sum of (t - mean_t)^2 */
    double ref_b;                /* the first batch: u = b - ref_b below */
    double suutt;                /* forgotten sums of u^2 t^2, u t^2 and t^2: how noisy the samples */
    double sutt;                 /* far from the mean batch are (relative noise is larger where t is) */
    double stt;
    double last_b;               /* the previous sample's batch and log seconds, for the step-to-step */
    double last_logt;            /* noise (held-back samples included) */
    double dsq;                  /* forgotten sum of squared log differences of successive samples at */
    double dw;                   /* one batch (each clipped), and their forgotten number */
    double noise_prior;          /* relative noise variance known before the last change of speed */
    double noise_prior_dof;      /* its degrees of freedom, forgotten like the samples */
    double shape;                /* prior fixed share of mean_t: the last one the data determined, else 0 */
    int shape_known;             /* 1 once the data have determined the share */
    double held_b[OB_EST_HELD_MAX]; /* outliers held back, oldest first */
    double held_t[OB_EST_HELD_MAX];
    int nheld;
    int held_side;               /* +1: the held samples were slower than plausible, -1: faster */
    double held_least;           /* the least distance (log) of a held sample from the model */
    double cusum_limit;          /* the CUSUM's alarm level on the slow side (ob_estimator_set_ranks()) */
    double cusum_limit_fast;     /* and on the fast side */
    double cusum_hi;             /* CUSUM of standardised residuals, slower side */
    double cusum_lo;             /* faster side */
    double sum_hi;               /* sum of the (clipped) log residuals of the current run, each side */
    double sum_lo;
    long run_hi;                 /* samples in the current run, each side */
    long run_lo;
    long n;                      /* samples used (read: ob_estimator_count()) */
    long outliers;               /* samples held back as outliers */
    long changes;                /* lasting changes of speed confirmed */
    long changes_faster;         /* of them, to a faster speed */
    long invalid;                /* samples ignored as invalid */
} ob_estimator;

/**
 * \brief Start an empty model.
 * \param[in] forget forgetting factor in [0.5, 1] (1: no forgetting); a value
 *            outside is clamped into that range, NaN gives 1.
 */
void ob_estimator_init(ob_estimator *est, double forget);

/**
 * \brief Size the change detector for a run of \p nranks ranks.
 *
 * The CUSUM's alarm level is OB_EST_CUSUM_LIMIT on the slow side and
 * OB_EST_CUSUM_LIMIT_FASTER on the fast side at 65,536 ranks or more, where the largest of
 * the ranks' false alarms sets the step time; with fewer ranks a false alarm
 * costs less than a late detection, and both levels fall with log P to
 * OB_EST_CUSUM_LIMIT_FEW at 2 ranks (what that buys: docs/figures.md).
 * ob_estimator_init() leaves the levels at those of 65,536 ranks.
 */
void ob_estimator_set_ranks(ob_estimator *est, int nranks);

/**
 * \brief Set the CUSUM's alarm levels, in standard deviations, on the slow and the fast side
 *        (a value <= 0 or NaN keeps that side's): for measuring false-alarm rates at other
 *        levels (bench/simulate --levels); the library sizes them with ob_estimator_set_ranks().
 */
void ob_estimator_set_levels(ob_estimator *est, double slow, double fast);

/**
 * \brief Fold one step: \p batch samples took \p seconds of compute.
 * \return what was done with the sample (ob_sample_verdict).
 */
ob_sample_verdict ob_estimator_add(ob_estimator *est, double batch, double seconds);

/**
 * \brief Fold the step of a rank back from being parked (batch 0, so no samples for a while):
 *        a probe.  The probe is the only news of the rank's speed, so when it is an outlier the
 *        model is re-learnt from it at once instead of after OB_EST_CONFIRM of them (a rank
 *        that recovered gets its work back at the next decision, not three probes later).
 * \return as ob_estimator_add(); OB_SAMPLE_CHANGE when the probe re-learnt the model.
 */
ob_sample_verdict ob_estimator_add_probe(ob_estimator *est, double batch, double seconds);

/**
 * \brief The current model.
 * \return 1 and alpha >= 0, beta > 0 when at least one sample was used; 0 (and alpha = beta = 0)
 *         before that.
 */
int ob_estimator_model(const ob_estimator *est, double *alpha, double *beta);

/**
 * \brief 1 when the forgotten data alone determine the split (standard error of the fixed share
 *        at most OB_EST_MAX_SHARE_ERROR); 0 while the prior still counts (alpha = 0 exactly for a
 *        batch that never varied).
 */
int ob_estimator_identified(const ob_estimator *est);

/** \brief Predicted seconds for \p batch samples (0 before the first sample). */
double ob_estimator_predict(const ob_estimator *est, double batch);

/**
 * \brief Relative standard error of ob_estimator_predict() at \p batch: the noise of the level
 *        over the effective number of samples, and the uncertainty of the split times the
 *        distance from the recent mean batch.  1 (100%) before OB_EST_MIN_FIT samples, or while
 *        the noise rests on no degree of freedom.
 */
double ob_estimator_error(const ob_estimator *est, double batch);

/**
 * \brief The two parts of ob_estimator_error(), so that it can be evaluated at any batch b
 *        from the model alone: err(b) = sqrt(level^2 + share^2 (b / mean_batch - 1)^2)
 *        * t(mean_batch) / t(b), with t the model.
 * \param[out] level       relative standard error of the time at the mean batch.
 * \param[out] share       standard error of the fixed share of that time (alpha / t).
 * \param[out] mean_batch  the recent mean batch (forgotten), where the model is surest.
 * \return 1; 0 before OB_EST_MIN_FIT samples (level 1, share 0: 100% everywhere).
 */
int ob_estimator_error_terms(const ob_estimator *est, double *level, double *share, double *mean_batch);

/** \brief Number of samples used so far. */
long ob_estimator_count(const ob_estimator *est);

#endif /* OB_ESTIMATOR_H */
