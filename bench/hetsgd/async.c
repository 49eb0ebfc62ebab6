/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * hetsgd --mode async (async.h): the parameter server on rank 0, emulated
 * workers on the others, the model kept every so many samples and evaluated
 * after training, and the run's figures on rank 0.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "async.h"
#include "emulate.h"
#include "ob_error.h"
#include "ob_timing.h"
#include "omnibatch.h"
#include "omnilearn.h"
#include "report.h"

/* One run's state; the server's part on rank 0 only. */
typedef struct arun {
    const hetsgd_async_env *e;
    const hetsgd_options *o;
    omnibatch_ps_t ps;
    int W;
    double t0;
    double train_s;
    double *speeds;                  /* P, scratch */
    /* The copies of the model: when, after how many samples, the parameters. */
    long every;                      /* samples between copies */
    long next_copy;
    long ncopies;
    long cap;
    double *copy_t;
    long *copy_samples;
    float **copy_w;
    double *copy_acc;                /* rank 0, after the evaluation */
    /* What server 0 counted, kept before the context goes. */
    omnibatch_ps_stats st;
    omnibatch_ps_worker_stats *ws;   /* W */
    long *plan;                      /* W */
    /* OmniLearn's epoch: compute and pushes of each worker at its start. */
    long ol_epoch;
    double *ol_compute;
    long *ol_pushes;
    double *ol_t;
    long *ol_published;
    long *ol_fitted;
    long ol_changes;
} arun;

/* A failure where the other ranks may be waiting on this one: the whole job goes down. */
static void die(const arun *a, const char *what, const char *detail)
{
    fprintf(stderr, "hetsgd: [rank %d] %s: %s\n", a->e->rank, what, detail);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *alloc_or_die(const arun *a, size_t n, size_t size)
{
    void *p = calloc(n > 0 ? n : 1, size);

    if (NULL == p) {
        die(a, "async", "out of memory");
    }
    return p;
}

static int ps_options(const arun *a, omnibatch_ps_options *po)
{
    int rc = omnibatch_ps_options_init(po);

    po->servers = 1;
    po->lr = a->o->lr;
    po->momentum = a->o->momentum;
    po->staleness = (omnibatch_ps_staleness) a->o->staleness;
    po->max_staleness = a->o->max_staleness < 0 ? OMNIBATCH_PS_AUTO : a->o->max_staleness;
    po->adaptive = HETSGD_POLICY_OMNIBATCH == a->o->policy;
    po->epochs = a->o->epochs;
    /* --max-steps counts global batches: as many samples' worth of pushes at equal batches. */
    po->max_pushes = a->o->max_steps > 0 ? a->o->max_steps * a->W : 0;
    po->seed = a->o->seed;
    po->max_global_batch = a->o->max_global_batch;
    if (HETSGD_POLICY_OMNILEARN == a->o->policy) {
        po->min_batch = HETSGD_OMNILEARN_LO;
        po->max_batch = HETSGD_OMNILEARN_HI;
    } else {
        po->min_batch = 1;
        po->max_batch = 0;
    }
    return rc;
}

/* ---- the workers ---------------------------------------------------------------- */

/* One task: the slice's mean gradient, the step stretched to the worker's emulated speed at the
 * run's progress (the global batches of samples handed out before the slice). */
static void compute(arun *a, const omnibatch_ps_task *t)
{
    const hetsgd_async_env *e = a->e;
    long k = (t->epoch * e->N + t->start) / e->B;
    double w0, c0, cpu, speed;

    hetsgd_schedule_speeds(e->schedule, k, a->speeds);
    speed = a->speeds[e->rank];
    w0 = ob_now();
    c0 = hetsgd_thread_cpu_seconds();
    hetsgd_gather(&e->ds->train_images, &e->ds->train_labels, e->perm + t->start, t->count, e->x, e->y);
    hetsgd_mlp_loss_grad(e->model, e->x, e->y, t->count, e->grad);
    cpu = hetsgd_thread_cpu_seconds() - c0;
    cpu = hetsgd_charged_cpu(a->o->has_cost ? a->o->cost : NULL, (double) t->count, cpu);
    hetsgd_sleep_until(w0 + hetsgd_emulated_seconds(cpu, speed, e->slowdown, a->o->alpha));
}

static void work(arun *a)
{
    omnibatch_ps_task t;
    long epoch = -1;

    if (OMNIBATCH_SUCCESS != omnibatch_ps_pull(a->ps, &t)) {
        die(a, "omnibatch_ps_pull", omnibatch_last_error());
    }
    while (!t.done) {
        if (t.epoch != epoch) {
            epoch = t.epoch;
            if (OMNIBATCH_SUCCESS != omnibatch_ps_permutation(a->ps, epoch, a->e->perm)) {
                die(a, "omnibatch_ps_permutation", omnibatch_last_error());
            }
        }
        compute(a, &t);
        if (OMNIBATCH_SUCCESS != omnibatch_ps_push(a->ps, a->e->grad, &t)) {
            die(a, "omnibatch_ps_push", omnibatch_last_error());
        }
    }
}

/* ---- the server ------------------------------------------------------------------- */

static void keep_copy(arun *a, long samples)
{
    if (a->ncopies == a->cap) {
        a->cap = a->cap > 0 ? 2 * a->cap : 64;
        a->copy_t = realloc(a->copy_t, (size_t) a->cap * sizeof *a->copy_t);
        a->copy_samples = realloc(a->copy_samples, (size_t) a->cap * sizeof *a->copy_samples);
        a->copy_w = realloc(a->copy_w, (size_t) a->cap * sizeof *a->copy_w);
        if (NULL == a->copy_t || NULL == a->copy_samples || NULL == a->copy_w) {
            die(a, "async", "out of memory for the model's copies");
        }
    }
    a->copy_w[a->ncopies] = alloc_or_die(a, (size_t) a->e->nparams, sizeof(float));
    memcpy(a->copy_w[a->ncopies], hetsgd_mlp_params(a->e->model), (size_t) a->e->nparams * sizeof(float));
    a->copy_t[a->ncopies] = ob_now() - a->t0;
    a->copy_samples[a->ncopies] = samples;
    a->ncopies++;
}

/* Every worker's count, and the samples of all their pushes. */
static long worker_counts(arun *a)
{
    long samples = 0;

    for (int w = 0; w < a->W; w++) {
        if (OMNIBATCH_SUCCESS != omnibatch_ps_get_worker_stats(a->ps, w, &a->ws[w])) {
            die(a, "omnibatch_ps_get_worker_stats", omnibatch_last_error());
        }
        samples += a->ws[w].samples;
    }
    return samples;
}

static void print_plan(const long *plan, int n)
{
    for (int i = 0; i < n; i++) {
        printf("%s%ld", 0 == i ? "" : ",", plan[i]);
    }
}

/* OmniLearn, once per epoch of data: its published rule on each worker's mean compute per push in
 * the epoch, fitted to the global batch and its bounds, set on the server at once. */
static void omnilearn_epoch(arun *a, long epoch)
{
    const int W = a->W;

    for (int w = 0; w < W; w++) {
        long pushes = a->ws[w].pushes - a->ol_pushes[w];

        a->ol_t[w] = pushes > 0 ? (a->ws[w].compute_s - a->ol_compute[w]) / (double) pushes : 0.0;
        a->ol_pushes[w] = a->ws[w].pushes;
        a->ol_compute[w] = a->ws[w].compute_s;
    }
    for (int w = 0; w < W; w++) {
        if (!(a->ol_t[w] > 0.0)) {
            return;              /* a worker without a push this epoch: nothing to judge */
        }
    }
    if (OMNIBATCH_SUCCESS != omnibatch_ps_get_plan(a->ps, a->plan, W) ||
        OMNIBATCH_SUCCESS != hetsgd_omnilearn_published(a->plan, a->ol_t, W, a->e->B,
                                                        HETSGD_OMNILEARN_DEADBAND, HETSGD_OMNILEARN_LO,
                                                        HETSGD_OMNILEARN_HI, a->ol_published) ||
        OMNIBATCH_SUCCESS != hetsgd_omnilearn_fit(a->ol_published, W, a->e->B, HETSGD_OMNILEARN_LO,
                                                  HETSGD_OMNILEARN_HI, a->ol_fitted) ||
        OMNIBATCH_SUCCESS != omnibatch_ps_set_plan(a->ps, a->ol_fitted, W)) {
        die(a, "omnilearn", ob_last_error());
    }
    a->ol_changes += 0 != memcmp(a->plan, a->ol_fitted, (size_t) W * sizeof *a->plan);
    printf("hetsgd: omnilearn after epoch %ld: published plan ", epoch);
    print_plan(a->ol_published, W);
    printf(", run as ");
    print_plan(a->ol_fitted, W);
    printf("\n");
    fflush(stdout);
}

static void serve(arun *a)
{
    int done = 0;

    while (!done) {
        long samples;

        if (OMNIBATCH_SUCCESS != omnibatch_ps_serve(a->ps, 1, &done)) {
            die(a, "omnibatch_ps_serve", omnibatch_last_error());
        }
        samples = worker_counts(a);
        if (samples >= a->next_copy || done) {
            keep_copy(a, samples);
            while (a->next_copy <= samples) {
                a->next_copy += a->every;
            }
        }
        if (HETSGD_POLICY_OMNILEARN == a->o->policy && !done) {
            if (OMNIBATCH_SUCCESS != omnibatch_ps_get_stats(a->ps, &a->st)) {
                die(a, "omnibatch_ps_get_stats", omnibatch_last_error());
            }
            if (a->st.epoch > a->ol_epoch) {
                a->ol_epoch = a->st.epoch;
                omnilearn_epoch(a, a->st.epoch);
            }
        }
    }
    a->train_s = ob_now() - a->t0;
    if (OMNIBATCH_SUCCESS != omnibatch_ps_get_stats(a->ps, &a->st) ||
        OMNIBATCH_SUCCESS != omnibatch_ps_get_plan(a->ps, a->plan, a->W)) {
        die(a, "omnibatch_ps_get_stats", omnibatch_last_error());
    }
    worker_counts(a);
}

/* ---- after training ------------------------------------------------------------------ */

/* Every copy on every rank's share of the test set (collective). */
static void evaluate_copies(arun *a)
{
    const hetsgd_async_env *e = a->e;
    float *w = hetsgd_mlp_params(e->model);

    long n = a->ncopies;

    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (0 == e->rank) {
        a->copy_acc = alloc_or_die(a, (size_t) n, sizeof *a->copy_acc);
    }
    for (long i = 0; i < n; i++) {
        double acc, loss;

        if (0 == e->rank) {
            memcpy(w, a->copy_w[i], (size_t) e->nparams * sizeof(float));
        }
        MPI_Bcast(w, (int) e->nparams, MPI_FLOAT, 0, MPI_COMM_WORLD);
        e->evaluate(e->ctx, &acc, &loss);
        if (0 == e->rank) {
            a->copy_acc[i] = acc;
        }
    }
}

/* "a,b,c" of one figure per worker, with \p decimals (< 0: as %g). */
static void join(char *out, size_t size, int n, const double *v, int decimals)
{
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; i < n && used + 1 < size; i++) {
        int k = snprintf(out + used, size - used, "%s", 0 == i ? "" : ",");

        used += k > 0 ? (size_t) k : 0;
        k = decimals < 0 ? snprintf(out + used, size - used, "%g", v[i])
                         : snprintf(out + used, size - used, "%.*f", decimals, v[i]);
        used += k > 0 ? (size_t) k : 0;
    }
}

static int write_curve(const arun *a)
{
    FILE *f = fopen(a->o->curve, "w");
    int bad = NULL == f;

    if (!bad) {
        bad = fprintf(f, "train_s,samples,test_acc\n") < 0;
        for (long i = 0; !bad && i < a->ncopies; i++) {
            bad = fprintf(f, "%.4f,%ld,%.4f\n", a->copy_t[i], a->copy_samples[i], a->copy_acc[i]) < 0;
        }
        bad = 0 != fclose(f) || bad;
    }
    return bad ? ob_fail(OMNIBATCH_ERR_ARG, "--curve %s: cannot write it", a->o->curve) : OMNIBATCH_SUCCESS;
}

/* The time to the target: the first copy at or above it. */
static double time_to_target(const arun *a)
{
    for (long i = 0; i < a->ncopies; i++) {
        if (a->copy_acc[i] >= a->o->target) {
            return a->copy_t[i];
        }
    }
    return -1.0;
}

static void print_workers(const arun *a)
{
    for (int w = 0; w < a->W; w++) {
        const omnibatch_ps_worker_stats *s = &a->ws[w];

        printf("hetsgd: async worker %d (rank %d, speed %g): %ld pushes (%ld applied, %ld dropped), "
               "staleness mean %.2f p99 %ld max %ld, %.1f samples/s, %.2f ms compute a push, "
               "batch now %ld\n", w, s->rank, a->o->speeds[s->rank], s->pushes, s->applied, s->dropped,
               s->staleness_mean, s->staleness_p99, s->staleness_max, s->samples_per_s,
               s->pushes > 0 ? 1e3 * s->compute_s / (double) s->pushes : 0.0, s->batch);
    }
    printf("hetsgd: async server: %ld updates (%.1f/s), %ld dropped, %.0f samples/s, busy %.1f%% of "
           "%.2f s; %ld batch decisions, %ld moved the batches\n", a->st.version,
           (double) a->st.version / a->train_s, a->st.dropped,
           (double) (a->st.pushes > 0 ? a->copy_samples[a->ncopies - 1] : 0) / a->train_s,
           100.0 * a->st.busy_fraction, a->st.elapsed_s, a->st.decisions, a->st.changes);
}

/* Rank 0: the run's lines, the summary, the curve. */
static int report(arun *a)
{
    const int W = a->W;
    double *v = alloc_or_die(a, (size_t) W * 4, sizeof(double));
    double lo = INFINITY, hi = 0.0, final_mean = 0.0, ttt = time_to_target(a);
    long from = a->ncopies > a->o->final_evals ? a->ncopies - a->o->final_evals : 0;
    char mean[256], p99[256], mx[256], pushes[256], batches[256], speeds[256], line[3072];
    int rc = OMNIBATCH_SUCCESS;

    for (int w = 0; w < W; w++) {
        v[w] = a->ws[w].staleness_mean;
        v[W + w] = (double) a->ws[w].staleness_p99;
        v[2 * W + w] = (double) a->ws[w].staleness_max;
        v[3 * W + w] = (double) a->ws[w].pushes;
        lo = v[w] < lo ? v[w] : lo;
        hi = v[w] > hi ? v[w] : hi;
    }
    join(mean, sizeof mean, W, v, 2);
    join(p99, sizeof p99, W, v + W, 0);
    join(mx, sizeof mx, W, v + 2 * W, 0);
    join(pushes, sizeof pushes, W, v + 3 * W, 0);
    for (int w = 0; w < W; w++) {
        v[w] = (double) a->plan[w];
    }
    join(batches, sizeof batches, W, v, 0);
    join(speeds, sizeof speeds, W, a->o->speeds + 1, -1);
    for (long i = from; i < a->ncopies; i++) {
        final_mean += a->copy_acc[i] / (double) (a->ncopies - from);
    }
    print_workers(a);
    printf("hetsgd: async staleness mean per worker %s: largest / least %.3f\n", mean,
           lo > 0.0 ? hi / lo : 0.0);
    if (ttt >= 0.0) {
        snprintf(line, sizeof line, "%.3f s", ttt);
    } else {
        snprintf(line, sizeof line, "NA s (not reached)");
    }
    printf("hetsgd: time to test accuracy %.2f: %s (the model kept every %ld samples, evaluated after "
           "training)\n", a->o->target, line, a->every);
    printf("hetsgd: final test accuracy %.4f, mean of the last %ld copies %.4f; training %.2f s\n",
           a->copy_acc[a->ncopies - 1], a->ncopies - from, final_mean, a->train_s);
    snprintf(line, sizeof line,
             "mode=async policy=%s ranks=%d workers=%d speeds=%s schedule=%s slowdown=%.4g batch=%ld lr=%g "
             "momentum=%g seed=%llu samples=%ld epochs=%ld target=%g time_to_target_s=%.3f final_acc=%.4f "
             "final_acc_mean=%.4f train_s=%.3f updates=%ld pushes=%ld dropped=%ld updates_per_s=%.3f "
             "busy_fraction=%.4f decisions=%ld changes=%ld staleness_rule=%d stale_mean=%s stale_p99=%s "
             "stale_max=%s stale_spread=%.4f worker_pushes=%s final_plan=%s omnilearn_changes=%ld",
             hetsgd_policy_name(a->o->policy), a->e->P, W, speeds, hetsgd_schedule_name(a->o->schedule),
             a->e->slowdown, a->e->B, a->o->lr, a->o->momentum, (unsigned long long) a->o->seed, a->e->N,
             a->o->epochs, a->o->target, ttt, a->copy_acc[a->ncopies - 1], final_mean, a->train_s,
             a->st.version, a->st.pushes, a->st.dropped, (double) a->st.version / a->train_s,
             a->st.busy_fraction, a->st.decisions, a->st.changes, a->o->staleness, mean, p99, mx,
             lo > 0.0 ? hi / lo : 0.0, pushes, batches, a->ol_changes);
    printf("hetsgd: summary %s\n", line);
    fflush(stdout);
    if (NULL != a->o->summary) {
        FILE *f = fopen(a->o->summary, "a");

        if (NULL == f || fprintf(f, "%s\n", line) < 0 || 0 != fclose(f)) {
            rc = ob_fail(OMNIBATCH_ERR_ARG, "--summary %s: cannot append", a->o->summary);
        }
    }
    if (OMNIBATCH_SUCCESS == rc && NULL != a->o->curve) {
        rc = write_curve(a);
    }
    free(v);
    return rc;
}

static void release(arun *a)
{
    for (long i = 0; i < a->ncopies; i++) {
        free(a->copy_w[i]);
    }
    free(a->copy_w);
    free(a->copy_t);
    free(a->copy_samples);
    free(a->copy_acc);
    free(a->speeds);
    free(a->ws);
    free(a->plan);
    free(a->ol_compute);
    free(a->ol_pushes);
    free(a->ol_t);
    free(a->ol_published);
    free(a->ol_fitted);
}

static int start(arun *a)
{
    const hetsgd_async_env *e = a->e;
    omnibatch_ps_options po;
    int rc;

    a->W = e->P - 1;
    a->speeds = alloc_or_die(a, (size_t) e->P, sizeof(double));
    a->ws = alloc_or_die(a, (size_t) a->W, sizeof *a->ws);
    a->plan = alloc_or_die(a, (size_t) a->W, sizeof *a->plan);
    a->ol_compute = alloc_or_die(a, (size_t) a->W, sizeof *a->ol_compute);
    a->ol_pushes = alloc_or_die(a, (size_t) a->W, sizeof *a->ol_pushes);
    a->ol_t = alloc_or_die(a, (size_t) a->W, sizeof *a->ol_t);
    a->ol_published = alloc_or_die(a, (size_t) a->W, sizeof *a->ol_published);
    a->ol_fitted = alloc_or_die(a, (size_t) a->W, sizeof *a->ol_fitted);
    a->every = a->o->eval_every > 0 ? a->o->eval_every * e->B : e->N;
    a->next_copy = a->every;
    rc = ps_options(a, &po);
    if (OMNIBATCH_SUCCESS == rc) {
        /* Collective: a setting the library refuses fails every rank, with its line. */
        rc = omnibatch_ps_create(MPI_COMM_WORLD, hetsgd_mlp_params(e->model), e->nparams, MPI_FLOAT, e->B, e->N,
                                 &po, &a->ps);
    }
    return rc;
}

int hetsgd_async_run(const hetsgd_async_env *env)
{
    arun a;
    int rc;

    memset(&a, 0, sizeof a);
    a.e = env;
    a.o = env->opt;
    rc = start(&a);
    if (OMNIBATCH_SUCCESS != rc) {
        if (0 == env->rank) {
            fprintf(stderr, "hetsgd: omnibatch: %s\n", omnibatch_last_error());
        }
        release(&a);
        return rc;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    a.t0 = ob_now();
    if (0 == env->rank) {
        keep_copy(&a, 0);
        serve(&a);
    } else {
        work(&a);
    }
    if (OMNIBATCH_SUCCESS != omnibatch_ps_destroy(&a.ps)) {
        die(&a, "omnibatch_ps_destroy", omnibatch_last_error());
    }
    evaluate_copies(&a);
    if (0 == env->rank) {
        rc = report(&a);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    release(&a);
    return rc;
}
