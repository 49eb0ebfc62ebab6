/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Step detection from the stream of gradient allreduces (ob_stepdetect.h).
 *
 * Two phases.  While learning, events are held in a bounded history; at 32,
 * 64, 128, ... calls the detector tries to fix the pattern:
 *   1. the communicator most calls use is the one followed;
 *   2. the signature period: the least N with x[j] == x[j+N] for 90% of j;
 *   3. warm-up: the first call from which two whole periods repeat;
 *   4. the step: when a signature occurs once per signature period, that
 *      period is the step; otherwise the least multiple of it whose
 *      per-position median gap has one clear maximum (the long gap before a
 *      step's first call) recurring in nearly every cycle, over at least
 *      six cycles; the same gap analysis places the boundary;
 * then replays the history through the tracker and drops it.  Afterwards
 * the tracker alone runs, one comparison or two per call.
 */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_log.h"
#include "ob_stepdetect.h"

/* First attempt to fix the pattern (calls), doubled after each failure. */
#define OB_SD_FIRST_TRY 32
/* Without a gap signal, calls seen before settling for the signature period. */
#define OB_SD_PATIENCE 256
/* Repetitions of the signature period seen before it is trusted; fewer when
 * the history is full and the best guess must do. */
#define OB_SD_MIN_CYCLES 3
#define OB_SD_MIN_CYCLES_FORCED 2
/* With OMNIBATCH_CALLS_PER_STEP given: steps seen before the pattern is fixed. */
#define OB_SD_GIVEN_CYCLES 3
/* Fraction of x[j] == x[j+N] for N to be the signature period. */
#define OB_SD_MATCH 0.9
/* The boundary gap's median over the next largest position's. */
#define OB_SD_CONTRAST 1.5
/* Of the boundary position's gaps, at least this fraction is long ... */
#define OB_SD_BOUNDARY_HITS 0.75
/* ... and of the other positions' gaps, at most this fraction. */
#define OB_SD_INNER_HITS 0.1
/* Cycles a period needs before its gaps are believed: with fewer, a few
 * scheduling hiccups at one position look like a step boundary. */
#define OB_SD_GAP_CYCLES 6
/* Distinct communicators counted while choosing the one to follow. */
#define OB_SD_MAX_COMMS 16

typedef struct ob_sd_event {
    int is_call;
    ob_call_sig sig;             /* a wait: only sig.comm is set */
    double t0;                   /* entered (first of merged waits) */
    double t1;                   /* returned (last of merged waits) */
    double blocked;              /* t1 - t0 for a call; the sum of merged waits */
    long batch;
    long pauses;                 /* pauses seen before this event */
} ob_sd_event;

struct ob_stepdetect {
    long given;                  /* calls per step given, 0 = find */
    ob_step_fn on_step;
    void *ctx;
    long pauses;

    /* learning */
    ob_sd_event *hist;
    int nhist;
    int ncalls;
    int next_try;

    /* the pattern */
    int locked;
    uint64_t comm;
    long period;
    ob_call_sig cycle[OB_STEPDETECT_MAX_PERIOD];
    double threshold;            /* least gap before a step's first call (GAP rule) */
    ob_step_rule rule;

    /* the step under way */
    int in_step;
    int valid;
    double begin;
    double last_end;             /* end of the last blocked interval on the followed communicator */
    double blocked;
    long calls;
    long pos;                    /* calls that followed the cycle */
    long batch;
    long index;
    long ignored;
    long first_whole;            /* index of the first step begun after the pattern was fixed */
};

static int ob_sig_eq(const ob_call_sig *a, const ob_call_sig *b)
{
    return a->comm == b->comm && a->count == b->count && a->elem == b->elem;
}

/* The median of v[0..m), m >= 1, reordering v: quickselect, linear on
 * average, since the gap analysis takes many medians of the history. */
static double ob_median(double *v, int m)
{
    int k = m / 2, lo = 0, hi = m - 1;
    double upper, lower;

    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2];
        int i = lo, j = hi;

        while (i <= j) {
            while (v[i] < pivot) {
                i++;
            }
            while (v[j] > pivot) {
                j--;
            }
            if (i <= j) {
                double t = v[i];

                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j) {
            hi = j;
        } else if (k >= i) {
            lo = i;
        } else {
            break;
        }
    }
    upper = v[k];
    if (1 == m % 2) {
        return upper;
    }
    /* Even count: the lower middle is the largest of v[0..k). */
    lower = v[0];
    for (int q = 1; q < k; q++) {
        if (v[q] > lower) {
            lower = v[q];
        }
    }
    return 0.5 * (lower + upper);
}

/* ---------------------------------------------------------------- tracker */

static void ob_sd_close(ob_stepdetect *d)
{
    if (!d->in_step) {
        return;
    }
    if (d->valid && isfinite(d->begin) && isfinite(d->last_end)) {
        ob_step_record rec = { .taken = -1, .given = -1 };
        double compute = (d->last_end - d->begin) - d->blocked;

        rec.index = d->index;
        rec.batch = d->batch;
        rec.blocked = d->blocked;
        rec.compute = compute > 0.0 ? compute : 0.0;
        rec.calls = d->calls;
        rec.end = d->last_end;
        d->on_step(d->ctx, &rec);
    }
    d->index++;
    d->in_step = 0;
}

static void ob_sd_open(ob_stepdetect *d)
{
    d->in_step = 1;
    d->valid = isfinite(d->last_end);
    d->begin = d->last_end;
    d->blocked = 0.0;
    d->calls = 0;
    d->pos = 0;
    d->batch = -1;
}

static int ob_sd_boundary(const ob_stepdetect *d, const ob_call_sig *sig, double gap)
{
    int first = ob_sig_eq(sig, &d->cycle[0]);

    if (!d->in_step) {
        return first;
    }
    switch (d->rule) {
    case OB_STEP_RULE_SIGNATURE:
        return first;
    case OB_STEP_RULE_GAP:
        /* A long gap in the first half of a step is noise, not a boundary;
         * two whole periods without one means the gaps have changed. */
        return first && ((gap >= d->threshold && 2 * d->calls >= d->period)
                         || d->calls >= 2 * d->period);
    case OB_STEP_RULE_COUNT:
        if (d->given > 0) {
            return d->calls >= d->period;
        }
        return first && (d->pos >= d->period || d->calls >= 2 * d->period);
    case OB_STEP_RULE_NONE:
    default:
        return 0;
    }
}

static void ob_sd_track_call(ob_stepdetect *d, const ob_call_sig *sig, double t0, double t1,
                             long batch, int force)
{
    if (sig->comm != d->comm) {
        d->ignored++;
        return;
    }
    if (force || ob_sd_boundary(d, sig, t0 - d->last_end)) {
        ob_sd_close(d);
        ob_sd_open(d);
    }
    if (d->in_step) {
        d->blocked += t1 - t0;
        d->calls++;
        if (d->period > OB_STEPDETECT_MAX_PERIOD
            || ob_sig_eq(sig, &d->cycle[d->pos % d->period])) {
            d->pos++;
        }
        if (batch >= 0) {
            d->batch = batch;
        }
    }
    d->last_end = t1;
}

static void ob_sd_track_wait(ob_stepdetect *d, uint64_t comm, double blocked, double t1)
{
    if (comm != d->comm && OB_STEPDETECT_OWN != comm) {
        return;
    }
    if (d->in_step) {
        d->blocked += blocked;
    }
    d->last_end = t1;
}

/* Recording stops: a step that already holds all its calls is complete
 * and reported; one cut short is not; and the step after the pause has no
 * known beginning. */
static void ob_sd_track_pause(ob_stepdetect *d)
{
    if (d->in_step && d->calls >= d->period) {
        ob_sd_close(d);
    }
    d->valid = 0;
    d->last_end = (double) NAN;
}

/* --------------------------------------------------------------- learning */

/* The communicator most calls in the history use; its call count in *n. */
static uint64_t ob_sd_dominant(const ob_stepdetect *d, int *n)
{
    uint64_t keys[OB_SD_MAX_COMMS];
    int counts[OB_SD_MAX_COMMS];
    int nkeys = 0;
    int best = -1;

    for (int e = 0; e < d->nhist; e++) {
        int k;

        if (!d->hist[e].is_call) {
            continue;
        }
        for (k = 0; k < nkeys && keys[k] != d->hist[e].sig.comm; k++) {
        }
        if (k == nkeys) {
            if (OB_SD_MAX_COMMS == nkeys) {
                continue;
            }
            keys[nkeys] = d->hist[e].sig.comm;
            counts[nkeys++] = 0;
        }
        counts[k]++;
    }
    for (int k = 0; k < nkeys; k++) {
        if (best < 0 || counts[k] > counts[best]) {
            best = k;
        }
    }
    *n = best < 0 ? 0 : counts[best];
    return best < 0 ? 0 : keys[best];
}

/* Least N whose signatures repeat for OB_SD_MATCH of the calls, or 0. */
static long ob_sd_signature_period(const ob_call_sig *x, int n, int min_cycles)
{
    for (long N = 1; N <= OB_STEPDETECT_MAX_PERIOD && N * min_cycles <= n; N++) {
        long match = 0;

        for (long j = 0; j + N < n; j++) {
            match += ob_sig_eq(&x[j], &x[j + N]);
        }
        if ((double) match >= OB_SD_MATCH * (double) (n - N)) {
            return N;
        }
    }
    return 0;
}

/* Does some signature occur exactly once in x[0..N)? */
static int ob_sd_has_unique(const ob_call_sig *x, long N)
{
    for (long i = 0; i < N; i++) {
        long same = 0;

        for (long j = 0; j < N && same < 2; j++) {
            same += ob_sig_eq(&x[i], &x[j]);
        }
        if (1 == same) {
            return 1;
        }
    }
    return 0;
}

/* First call from which two whole periods repeat (0 if none does). */
static int ob_sd_warmup(const ob_call_sig *x, int n, long N)
{
    for (int w = 0; w + N < n; w++) {
        long span = 2 * N;
        long j;

        if (w + span + N > n) {
            span = n - N - w;
        }
        if (span < N) {
            break;
        }
        for (j = 0; j < span && ob_sig_eq(&x[w + j], &x[w + j + N]); j++) {
        }
        if (j == span) {
            return w;
        }
    }
    return 0;
}

typedef struct ob_sd_gapfit {
    long period;
    long phase;                  /* position of the step's first call, counted from the warm-up end */
    double threshold;
    double contrast;
} ob_sd_gapfit;

/* Does period N show one long gap per cycle at a fixed position?  gaps[j]
 * is the gap before call j (NaN if unknown); scratch holds n doubles. */
static int ob_sd_gap_candidate(const double *gaps, int n, int w, long N, double *scratch,
                               ob_sd_gapfit *fit)
{
    double med_best = -1.0, med_second = -1.0;
    long best = -1;
    long hits_best = 0, n_best = 0, hits_inner = 0, n_inner = 0;
    double T;

    for (long p = 0; p < N; p++) {
        int m = 0;
        double med;

        for (int j = w + (int) p; j < n; j += (int) N) {
            if (isfinite(gaps[j])) {
                scratch[m++] = gaps[j];
            }
        }
        if (m < 2) {
            return 0;
        }
        med = ob_median(scratch, m);
        if (med > med_best) {
            med_second = med_best;
            med_best = med;
            best = p;
        } else if (med > med_second) {
            med_second = med;
        }
    }
    if (med_best <= 0.0 || med_second < 0.0) {
        return 0;
    }
    T = med_second > 0.0 ? sqrt(med_best * med_second) : 0.5 * med_best;
    for (int j = w; j < n; j++) {
        int at_best = (j - w) % N == best;

        if (!isfinite(gaps[j])) {
            continue;
        }
        if (at_best) {
            n_best++;
            hits_best += gaps[j] >= T;
        } else {
            n_inner++;
            hits_inner += gaps[j] >= T;
        }
    }
    fit->period = N;
    fit->phase = best;
    fit->threshold = T;
    fit->contrast = med_second > 0.0 ? med_best / med_second : (double) INFINITY;
    return fit->contrast >= OB_SD_CONTRAST
        && (double) hits_best >= OB_SD_BOUNDARY_HITS * (double) n_best
        && (double) hits_inner <= OB_SD_INNER_HITS * (double) n_inner;
}

/* Feed the history through the tracker, steps starting at event `start`. */
static void ob_sd_replay(ob_stepdetect *d, int start)
{
    long pauses = 0;

    d->in_step = 0;
    d->last_end = NAN;
    for (int e = 0; e < d->nhist; e++) {
        const ob_sd_event *ev = &d->hist[e];

        if (ev->pauses != pauses) {
            ob_sd_track_pause(d);
            pauses = ev->pauses;
        }
        if (e < start) {
            if (ev->sig.comm == d->comm || OB_STEPDETECT_OWN == ev->sig.comm) {
                d->last_end = ev->t1;
            }
            if (ev->is_call && ev->sig.comm != d->comm) {
                d->ignored++;
            }
        } else if (ev->is_call) {
            ob_sd_track_call(d, &ev->sig, ev->t0, ev->t1, ev->batch, e == start);
        } else {
            ob_sd_track_wait(d, ev->sig.comm, ev->blocked, ev->t1);
        }
    }
    if (d->pauses != pauses) {
        ob_sd_track_pause(d);
    }
}

/* The dominant communicator's calls of the history, in order: what the
 * pattern is learned from. */
typedef struct ob_sd_series {
    int n;                       /* calls on the communicator */
    int *idx;                    /* each call's index in the history */
    ob_call_sig *x;              /* its signature */
    double *gaps;                /* idle time before it; NaN right after a pause */
    double *scratch;             /* for the gap fits */
} ob_sd_series;

static void ob_sd_series_free(ob_sd_series *s)
{
    free(s->idx);
    free(s->x);
    free(s->gaps);
    free(s->scratch);
}

/* Collect the calls on d->comm; 0 when out of memory. */
static int ob_sd_series_fill(const ob_stepdetect *d, int n, ob_sd_series *s)
{
    double last_end = NAN;
    long last_pauses = -1;
    int m = 0;

    s->n = n;
    s->idx = malloc((size_t) n * sizeof *s->idx);
    s->x = malloc((size_t) n * sizeof *s->x);
    s->gaps = malloc((size_t) n * sizeof *s->gaps);
    s->scratch = malloc((size_t) n * sizeof *s->scratch);
    if (NULL == s->idx || NULL == s->x || NULL == s->gaps || NULL == s->scratch) {
        ob_sd_series_free(s);
        return 0;
    }
    for (int e = 0; e < d->nhist; e++) {
        const ob_sd_event *ev = &d->hist[e];

        if (ev->sig.comm != d->comm) {
            continue;
        }
        if (ev->is_call) {
            s->idx[m] = e;
            s->x[m] = ev->sig;
            s->gaps[m] = ev->pauses == last_pauses ? ev->t0 - last_end : (double) NAN;
            m++;
        }
        last_end = ev->t1;
        last_pauses = ev->pauses;
    }
    return 1;
}

/* The period of the signatures (calls per repetition), or 0 when it is not
 * known yet; \p force: settle for one call per step. */
static long ob_sd_signature_period_of(const ob_stepdetect *d, const ob_sd_series *s, int force)
{
    long N;

    if (d->given > 0) {
        return force || s->n >= OB_SD_GIVEN_CYCLES * d->given ? d->given : 0;
    }
    N = ob_sd_signature_period(s->x, s->n, force ? OB_SD_MIN_CYCLES_FORCED : OB_SD_MIN_CYCLES);
    return 0 == N && force ? 1 : N;
}

/* Look for the long gap before each step, at the least multiple k of the
 * signature period N that the gaps confirm.  A signature that occurs once
 * in a period of several calls marks the step by itself: the gaps only
 * place the boundary.  Otherwise the step may span several signature
 * periods; the least one is taken, since on a busy machine noise can make
 * a multiple look as good. */
static int ob_sd_find_gap(const ob_stepdetect *d, const ob_sd_series *s, long N, int w,
                          ob_sd_gapfit *best)
{
    int n = s->n;
    long kmax = (N > 1 && ob_sd_has_unique(s->x + w, N > n - w ? n - w : N)) || d->given > 0
              ? 1 : OB_STEPDETECT_MAX_PERIOD / N;

    for (long k = 1; k <= kmax && (n - w) >= OB_SD_GAP_CYCLES * N * k; k++) {
        if (N * k >= 2 && ob_sd_gap_candidate(s->gaps, n, w, N * k, s->scratch, best)) {
            return 1;
        }
    }
    return 0;
}

/* How the boundary is told, once the cycle is known. */
static ob_step_rule ob_sd_rule_of(const ob_stepdetect *d, long period, int have_gap)
{
    long same = 0;

    if (d->given > 0) {
        return OB_STEP_RULE_COUNT;
    }
    for (long k = 0; k < period; k++) {
        same += ob_sig_eq(&d->cycle[k], &d->cycle[0]);
    }
    return 1 == same ? OB_STEP_RULE_SIGNATURE : have_gap ? OB_STEP_RULE_GAP : OB_STEP_RULE_COUNT;
}

/* Fix the pattern: the step's cycle of calls from warm-up call w, its rule,
 * and the history replayed through the tracker from the first boundary.
 * \p gap: the gap fit, or NULL when the gaps confirmed none. */
static void ob_sd_lock(ob_stepdetect *d, const ob_sd_series *s, long N, int w,
                       const ob_sd_gapfit *gap, int force)
{
    int n = s->n;
    long period, phase = 0;
    double threshold = 0.0;

    if (NULL != gap) {
        period = gap->period;
        phase = gap->phase;
        threshold = gap->threshold;
    } else if (d->given > 0) {
        period = N;
    } else {
        period = N > n - w ? (n - w > 0 ? n - w : 1) : N;
    }
    d->period = period;
    d->threshold = threshold;
    for (long k = 0; k < period && k < OB_STEPDETECT_MAX_PERIOD; k++) {
        long j = w + (phase + k) % period;

        d->cycle[k] = s->x[j < n ? j : n - 1];
    }
    d->rule = ob_sd_rule_of(d, period, NULL != gap);
    ob_log_debug(1, "step pattern: %ld gradient allreduces per step (%s), %d warm-up calls, "
                 "phase %ld, gap threshold %.6f s, from %d calls%s", period,
                 OB_STEP_RULE_SIGNATURE == d->rule ? "signature"
                 : OB_STEP_RULE_GAP == d->rule ? "gap" : "count",
                 w, phase, threshold, n, force ? " (settled)" : "");
    ob_sd_replay(d, s->idx[w + phase]);
    /* The step under way began while learning: only the next ones are
     * whole steps of the fixed pattern. */
    d->first_whole = d->in_step ? d->index + 1 : d->index;
    free(d->hist);
    d->hist = NULL;
    d->nhist = 0;
    d->locked = 1;
}

/* Try to fix the pattern from the history; \p force: settle for the best
 * guess (the history is full or the run ends).  1 when it is fixed. */
static int ob_sd_learn(ob_stepdetect *d, int force)
{
    ob_sd_series s;
    ob_sd_gapfit best = { 0, 0, 0.0, 0.0 };
    int n = 0, w, have_gap, locked = 0;
    long N;

    d->comm = ob_sd_dominant(d, &n);
    if (0 == n || !ob_sd_series_fill(d, n, &s)) {
        return 0;
    }
    N = ob_sd_signature_period_of(d, &s, force);
    if (N > 0) {
        w = ob_sd_warmup(s.x, n, N);
        if (w + N > n) {
            w = 0;
        }
        have_gap = ob_sd_find_gap(d, &s, N, w, &best);
        /* Without a confirmed gap, wait for more history unless told. */
        if (force || have_gap || d->given > 0 || n >= OB_SD_PATIENCE) {
            ob_sd_lock(d, &s, N, w, have_gap ? &best : NULL, force);
            locked = 1;
        }
    }
    ob_sd_series_free(&s);
    return locked;
}

/* ------------------------------------------------------------------ API */

int ob_stepdetect_create(long calls_per_step, ob_step_fn on_step, void *ctx, ob_stepdetect **det)
{
    ob_stepdetect *d;

    if (NULL == det || NULL == on_step) {
        return ob_fail(OMNIBATCH_ERR_ARG, "ob_stepdetect_create: det and on_step must not be NULL");
    }
    if (calls_per_step < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "calls_per_step=%ld: expected 0 (detect) or a count >= 1",
                       calls_per_step);
    }
    d = calloc(1, sizeof *d);
    if (NULL == d) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "step detector: out of memory");
    }
    d->hist = malloc(OB_STEPDETECT_HISTORY * sizeof *d->hist);
    if (NULL == d->hist) {
        free(d);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "step detector history: out of memory");
    }
    d->given = calls_per_step;
    d->on_step = on_step;
    d->ctx = ctx;
    d->next_try = OB_SD_FIRST_TRY;
    d->last_end = NAN;
    d->period = 1;
    *det = d;
    return OMNIBATCH_SUCCESS;
}

static void ob_sd_learn_if_due(ob_stepdetect *d)
{
    if (OB_STEPDETECT_HISTORY == d->nhist) {
        if (!ob_sd_learn(d, 1)) {
            /* Nothing to follow (no call on any communicator kept): start over. */
            d->nhist = 0;
            d->ncalls = 0;
        }
    } else if (d->ncalls >= d->next_try) {
        if (!ob_sd_learn(d, 0)) {
            d->next_try *= 2;
        }
    }
}

void ob_stepdetect_call(ob_stepdetect *d, const ob_call_sig *sig, double t0, double t1, long batch)
{
    ob_sd_event *ev;

    if (t1 < t0) {
        t1 = t0;
    }
    if (d->locked) {
        ob_sd_track_call(d, sig, t0, t1, batch, 0);
        return;
    }
    ev = &d->hist[d->nhist++];
    ev->is_call = 1;
    ev->sig = *sig;
    ev->t0 = t0;
    ev->t1 = t1;
    ev->blocked = t1 - t0;
    ev->batch = batch;
    ev->pauses = d->pauses;
    d->ncalls++;
    ob_sd_learn_if_due(d);
}

void ob_stepdetect_wait(ob_stepdetect *d, uint64_t comm, double t0, double t1)
{
    ob_sd_event *ev;

    if (t1 < t0) {
        t1 = t0;
    }
    if (d->locked) {
        ob_sd_track_wait(d, comm, t1 - t0, t1);
        return;
    }
    /* Polling loops (Test after Test) would fill the history: consecutive
     * waits on one communicator are one event. */
    if (d->nhist > 0) {
        ev = &d->hist[d->nhist - 1];
        if (!ev->is_call && ev->sig.comm == comm && ev->pauses == d->pauses) {
            ev->t1 = t1;
            ev->blocked += t1 - t0;
            return;
        }
    }
    ev = &d->hist[d->nhist++];
    memset(ev, 0, sizeof *ev);
    ev->sig.comm = comm;
    ev->t0 = t0;
    ev->t1 = t1;
    ev->blocked = t1 - t0;
    ev->batch = -1;
    ev->pauses = d->pauses;
    ob_sd_learn_if_due(d);
}

void ob_stepdetect_own(ob_stepdetect *d, double t0, double t1)
{
    ob_stepdetect_wait(d, OB_STEPDETECT_OWN, t0, t1);
}

void ob_stepdetect_pause(ob_stepdetect *d)
{
    d->pauses++;
    if (d->locked) {
        ob_sd_track_pause(d);
    }
}

void ob_stepdetect_finish(ob_stepdetect *d)
{
    if (!d->locked && d->nhist > 0) {
        ob_sd_learn(d, 1);
    }
    if (d->locked && d->in_step && d->calls >= d->period) {
        ob_sd_close(d);
    }
    d->in_step = 0;
}

int ob_stepdetect_pattern(const ob_stepdetect *d, long *calls_per_step, ob_step_rule *rule)
{
    if (NULL != calls_per_step) {
        *calls_per_step = d->locked ? d->period : 0;
    }
    if (NULL != rule) {
        *rule = d->locked ? d->rule : OB_STEP_RULE_NONE;
    }
    return d->locked;
}

int ob_stepdetect_expects(const ob_stepdetect *d, const ob_call_sig *sig, double t0)
{
    long index, pos, calls;

    if (!d->locked || sig->comm != d->comm) {
        return 0;
    }
    /* The tracker's own decision (ob_sd_track_call), taken before the call. */
    if (ob_sd_boundary(d, sig, t0 - d->last_end)) {
        index = d->in_step ? d->index + 1 : d->index;
        pos = 0;
        calls = 0;
    } else if (d->in_step) {
        index = d->index;
        pos = d->pos;
        calls = d->calls;
    } else {
        return 0;
    }
    /* A call past the step's count, or in a step begun while learning, is
     * not one of the pattern's. */
    if (index < d->first_whole || calls >= d->period) {
        return 0;
    }
    if (d->period > OB_STEPDETECT_MAX_PERIOD) {
        return 1;
    }
    return pos < d->period && ob_sig_eq(sig, &d->cycle[pos]);
}

long ob_stepdetect_ignored(const ob_stepdetect *d)
{
    return d->ignored;
}

void ob_stepdetect_destroy(ob_stepdetect *d)
{
    if (NULL == d) {
        return;
    }
    free(d->hist);
    free(d);
}
