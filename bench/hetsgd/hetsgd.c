/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * hetsgd: synchronous data-parallel SGD on Fashion-MNIST, one MPI rank per
 * process, with the global batch split over the ranks by one of four
 * policies (static, omnibatch, oracle, omnilearn, and chunks: omnibatch with
 * each step worked in chunks that move to a free rank) under the same seed
 * and data order.  Each rank takes its slice of the epoch's permutation from the
 * omnibatch API, computes the mean gradient of its slice with OpenBLAS, and
 * the API's gradient allreduce weights and sums the slices into the gradient
 * of the whole global batch.  Heterogeneity is emulated (emulate.h) or real
 * (--bind), and with --devices some ranks compute on a GPU (mlp_cuda.h) and
 * the others on their bound cores.  Evaluation is left out of the training
 * clock.
 */
#include "config.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "async.h"
#include "emulate.h"
#include "idx.h"
#include "mlp.h"
#if HAVE_CUDA
#include "mlp_cuda.h"
#endif
#include "ob_error.h"
#include "ob_maths.h"
#include "ob_planner.h"
#include "ob_timing.h"
#include "ob_topology.h"
#include "omnibatch.h"
#include "omnilearn.h"
#include "options.h"
#include "profile.h"
#include "report.h"
#include "rng.h"
#include "schedule.h"

#define HIDDEN1 256
#define HIDDEN2 128
/* "Recovered" after a change: within 5% of the best step time (predicted from the model, or
 * measured by the balance yardstick). */
#define RECOVERY_TOLERANCE 1.05
/* Steps in a row the smoothed measured balance must stay within the tolerance to count as
 * recovered: one quiet step in noisy timings is not a recovery. */
#define BALANCE_HOLD 3
/* Repetitions of each calibration measurement; the least is kept (noise only adds). */
#define CALIBRATION_REPS 3
/* The same for a chunk's pass, short enough to repeat more: a crowded machine's other processes
 * evict the caches a chunk should find warm, in some passes and not others. */
#define CHUNK_CALIBRATION_REPS 12
/* What evict_caches() writes: more than the last-level cache of the machines this runs on. */
#define CALIBRATION_EVICT_MB 64

typedef struct run {
    hetsgd_options opt;
    int rank;
    int P;
    int node_size;                   /* ranks on this rank's node */
    int *node_ranks;                 /* their world ranks, in node order */
    int node_index;                  /* this rank's place among them */
    hetsgd_dataset ds;
    long N;                          /* training samples per epoch */
    long B;                          /* global batch */
    long steps_per_epoch;
    long total_steps;
    hetsgd_schedule *schedule;
    double slowdown;
    double node_demand;              /* cores the busiest point of the run demands on this node */
    long node_cores;
    double contention;               /* wall / CPU time of a pass with every rank computing (max) */
    double *alpha0;                  /* P: measured seconds per step of the real compute */
    double *beta0;                   /* P: measured seconds per sample */
    double chunk_cost;               /* CPU seconds of a chunk after a step's first, besides its samples */
    hetsgd_profile *profiles;        /* P: every rank's speed over the step (--change-at) */
    double *before;                  /* P, scratch: the speeds of the step before */
    hetsgd_work_model *work;         /* P, scratch: the emulated ranks' work for the profiles */
    float *acc;                      /* nparams + 1: --policy chunks, the chunks' gradients summed */
    long lo, hi, granularity;        /* the context's bounds */
    omnibatch_t ctx;
    hetsgd_mlp *model;
    int on_gpu;                      /* --devices puts this rank on a GPU */
#if HAVE_CUDA
    struct hetsgd_gpu *gpu;          /* its backend; the model stays on the host */
#endif
    char device[160];                /* "cpu", or the GPU's name (setup line) */
    long *lo_all, *hi_all;           /* P: every rank's bounds (OMNIBATCH_MAX_BATCH may differ by rank) */
    long nparams;
    float *grad;                     /* nparams + 1: the gradient, then the local mean loss */
    float *x;
    uint8_t *y;
    long *perm;
    float *test_x;
    uint8_t *test_y;
    long test_count;                 /* this rank's slice of the test set */
    long test_total;
    double *record;                  /* this rank's trace: total_steps * HETSGD_TRACE_FIELDS */
    double *speeds;                  /* P, scratch */
    double *ones;                    /* P ones: the speeds of bound ranks, whose models are measured */
    ob_rank_model *models;           /* P, scratch */
    double *target;                  /* P, scratch */
    long *plan;                      /* P, scratch */
    /* OmniLearn's epoch measurements and what its plans did. */
    double ol_compute_sum;
    long ol_compute_n;
    int ol_overfull;
    long ol_excess_max;
    int ol_bounds_broken;
    /* The clock, without evaluation. */
    double t0;
    double eval_s;
    double time_to_target;
    long target_step;
    double final_acc;
    double final_loss;
    double train_s;
    /* Every evaluation: steps done, test accuracy and training time (rank 0 reports them). */
    long *eval_done;
    double *eval_acc;
    double *eval_at;
    long n_evals;
    float **kept;                    /* --eval-after: the model at each evaluation point */
} run;

/* A failure inside the training loop, where the other ranks may already be
 * in a collective: say why and take the whole job down. */
static void die(const run *r, const char *what, const char *detail)
{
    fprintf(stderr, "hetsgd: [rank %d] %s: %s\n", r->rank, what, detail);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Every rank calls this at the same point with its own status: all learn
 * whether any failed, and only the lowest failing rank prints its line, so
 * a mistake made alike everywhere is reported once. */
static int agree(const run *r, int rc, const char *message)
{
    int mine = OMNIBATCH_SUCCESS != rc ? r->rank : INT_MAX;
    int first_bad = INT_MAX;

    MPI_Allreduce(&mine, &first_bad, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (INT_MAX == first_bad) {
        return OMNIBATCH_SUCCESS;
    }
    if (first_bad == r->rank) {
        fprintf(stderr, "hetsgd: %s\n", message);
    }
    return OMNIBATCH_SUCCESS != rc ? rc : OMNIBATCH_ERR_ARG;
}

static void *alloc_or_null(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

static int find_node(run *r)
{
    MPI_Comm node;

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &r->node_size);
    MPI_Comm_rank(node, &r->node_index);
    r->node_ranks = alloc_or_null((size_t) r->node_size, sizeof(int));
    if (NULL == r->node_ranks) {
        MPI_Comm_free(&node);
        return ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate %d ranks", r->node_size);
    }
    MPI_Allgather(&r->rank, 1, MPI_INT, r->node_ranks, 1, MPI_INT, node);
    MPI_Comm_free(&node);
    return OMNIBATCH_SUCCESS;
}

/* --bind: rank i gets speeds_i whole cores, after those of the ranks before
 * it on the same node, and as many OpenBLAS threads. */
static int bind_cores(run *r)
{
    int first = 0;
    int mine = (int) r->opt.speeds[r->rank];
    int rc;

    for (int j = 0; j < r->node_index; j++) {
        first += (int) r->opt.speeds[r->node_ranks[j]];
    }
    rc = ob_topology_bind_cores(first, mine);
    if (OMNIBATCH_SUCCESS == rc) {
        openblas_set_num_threads(mine);
    }
    return rc;
}

/* The emulation's common slowdown: chosen, or from the speeds and the cores
 * (emulate.h); the same on every rank. */
static void choose_slowdown(run *r)
{
    double s;

    r->node_demand = hetsgd_schedule_peak_demand(r->schedule, r->node_ranks, r->node_size);
    r->node_cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (r->opt.bind) {
        s = 1.0;
    } else if (r->opt.slowdown > 0.0) {
        s = r->opt.slowdown;
    } else {
        s = hetsgd_auto_slowdown(r->node_demand, (int) r->node_cores);
    }
    MPI_Allreduce(&s, &r->slowdown, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/* Seconds of the real compute: the thread's CPU time when emulating (it
 * ignores time spent waiting for a shared core), the wall clock with --bind
 * (OpenBLAS then computes on threads of its own). */
static double compute_clock(const run *r)
{
    return r->opt.bind ? ob_now() : hetsgd_thread_cpu_seconds();
}

/* The mean loss and gradient of the n samples in r->x, r->y, on this rank's
 * device.  A GPU failure mid-run takes the job down with CUDA's reason. */
static double loss_grad(run *r, long n)
{
#if HAVE_CUDA
    if (r->on_gpu) {
        char msg[256];
        double loss = hetsgd_gpu_loss_grad(r->gpu, hetsgd_mlp_params(r->model), r->x, r->y, n, r->grad,
                                           msg, sizeof msg);

        if (isnan(loss)) {
            die(r, "GPU pass", msg);
        }
        return loss;
    }
#endif
    return hetsgd_mlp_loss_grad(r->model, r->x, r->y, n, r->grad);
}

/* A chunk of n samples in r->x, r->y: its gradient summed over its samples
 * added to r->acc, its summed loss returned.  On the CPU in the backward's
 * own sgemms (the step accumulates as a framework accumulates its chunks'
 * gradients), on a GPU from the mean gradient it hands back. */
static double chunk_grad(run *r, long n)
{
#if HAVE_CUDA
    if (r->on_gpu) {
        const double loss = loss_grad(r, n);

        cblas_saxpy((int) r->nparams, (float) n, r->grad, 1, r->acc, 1);
        return loss * (double) n;
    }
#endif
    return hetsgd_mlp_loss_grad_add(r->model, r->x, r->y, n, r->acc);
}

/* Leave the caches as a training step finds them.  Between two steps a
 * rank reduces, updates the weights and sleeps while other processes run
 * on its core, so a step starts with the model, the gradient and its
 * samples out of cache: back-to-back passes on warm caches measured a fixed
 * cost per step 25x too small, and the oracle built on it overloaded the
 * slowest rank. */
static void evict_caches(void)
{
    static volatile unsigned char *junk;
    static size_t size = (size_t) CALIBRATION_EVICT_MB << 20;

    if (NULL == junk) {
        junk = malloc(size);
        if (NULL == junk) {
            return;
        }
    }
    for (size_t i = 0; i < size; i += 64) {
        junk[i]++;
    }
}

/* One pass of n samples on caches warm from a pass of that size before
 * it, with the sum of the chunks' gradients: its CPU seconds (the k-th of
 * time_pass()'s sample sets). */
static double warm_pass(run *r, long n, int k)
{
    double c0;

    hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm, n, r->x, r->y);
    chunk_grad(r, n);
    c0 = compute_clock(r);

    hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm + (k % CALIBRATION_REPS + 1) * n, n, r->x,
                  r->y);
    chunk_grad(r, n);
    return compute_clock(r) - c0;
}

/* The least of a few timings of one forward and backward pass of n samples,
 * on samples scattered like a shuffled epoch's: each on cold caches, or
 * (\p chunk) on caches warm from a pass of that size, as a step's later
 * chunks find them, with the sum of the chunks' gradients that they add
 * (warm_pass()). */
static double time_pass(run *r, long n, int chunk)
{
    double best = INFINITY;

    for (int k = 0; k < (chunk ? CHUNK_CALIBRATION_REPS : CALIBRATION_REPS); k++) {
        double c0;

        if (chunk) {
            c0 = warm_pass(r, n, k);
        } else {
            evict_caches();
            c0 = compute_clock(r);
            hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm, n, r->x, r->y);
            loss_grad(r, n);
            c0 = compute_clock(r) - c0;
        }
        best = c0 < best ? c0 : best;
    }
    return best;
}

static void test_asleep(MPI_Request *req, long nap_ns);

/* C of --cost A,B,C: what a chunk costs beside its samples, on warm caches
 * as a step's later chunks find them: the intercept of the line through a
 * pass of a chunk of a step's usual size (a sixteenth of an equal share,
 * the API's largest) and one of 16 times that, or the largest the drawn
 * samples allow (hetsgd_chunk_cost()), each the least of 12 passes on
 * caches warm from a pass of its size, the two sizes in turn; the
 * per-chunk cost of small batches that a step worked in chunks pays on top
 * of its one cold start.  The ranks measure one at a time, the others
 * asleep, and C is the median of theirs.  The CPU time of a pass on the
 * 2-core VM of the records moves between two levels 1.6x apart, and with
 * the ranks beside it computing or polling: the chunk's pass against the
 * slope of the passes on cold caches (--cost's B), all ranks at once, the
 * mean of theirs, gave C from 0 to 306 us in 16 calibrations of one build;
 * this gives 57 to 116 in 6.  Where no larger pass fits, the chunk's pass
 * less its samples at --cost's B. */
static void calibrate_chunk(run *r)
{
    const long most = r->B < r->N ? r->B : r->N;
    long n = r->B / (16L * r->P), large;
    double c = 0.0;
    double *all = malloc((size_t) r->P * sizeof *all);
    MPI_Request req;

    if (NULL == all) {
        die(r, "calibrate", "out of memory");
    }
    n = n < r->hi ? n : r->hi;
    n = n > 0 ? n : 1;
    /* calibrate() drew min(B, N) samples: the passes take their samples from there. */
    n = (CALIBRATION_REPS + 1) * n <= most ? n : 1;
    large = 16 * n;
    while (large > 2 * n && ((CALIBRATION_REPS + 1) * large > most || large > r->hi)) {
        large /= 2;
    }
    for (int i = 0; i < r->P; i++) {
        if (i == r->rank && large > 2 * n) {
            double t_n = INFINITY, t_large = INFINITY;

            for (int k = 0; k < CHUNK_CALIBRATION_REPS; k++) {
                const double a = warm_pass(r, n, k), b = warm_pass(r, large, k);

                t_n = a < t_n ? a : t_n;
                t_large = b < t_large ? b : t_large;
            }
            c = hetsgd_chunk_cost(n, t_n, large, t_large);
        } else if (i == r->rank) {
            c = time_pass(r, n, 1) - r->beta0[0] * (double) n;
            c = c > 0.0 ? c : 0.0;
        }
        if (MPI_SUCCESS != MPI_Ibarrier(MPI_COMM_WORLD, &req)) {
            die(r, "MPI_Ibarrier", "failed");
        }
        test_asleep(&req, 2000000);
    }
    MPI_Allgather(&c, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    r->chunk_cost = ob_median(all, r->P);
    free(all);
}

/* How much slower than its CPU time a rank computes while every rank
 * computes at once: the worst crowding of the cores the run can see, from
 * its own ranks and from whatever else shares the machine. */
static void measure_contention(run *r)
{
    long n = r->B / r->P < r->N ? r->B / r->P : r->N;
    double wall, cpu, mine;

    n = n < r->hi ? n : r->hi;
    n = n > 0 ? n : 1;
    MPI_Barrier(MPI_COMM_WORLD);
    wall = ob_now();
    cpu = hetsgd_thread_cpu_seconds();
    for (int k = 0; k < 2 * CALIBRATION_REPS; k++) {
        hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm, n, r->x, r->y);
        loss_grad(r, n);
    }
    cpu = hetsgd_thread_cpu_seconds() - cpu;
    wall = ob_now() - wall;
    mine = cpu > 0.0 ? wall / cpu : 1.0;
    MPI_Allreduce(&mine, &r->contention, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/* alpha0 + beta0 * b of the real compute, from two batch sizes.  Emulated
 * ranks run the same code on the same machine, so their mean stands for
 * all; bound ranks keep their own. */
static void calibrate(run *r)
{
    long large = r->B < r->N ? r->B : r->N;
    long small = large / (2 * r->P) > 0 ? large / (2 * r->P) : 1;
    double t_small, t_large, a, b;
    uint64_t rng = (uint64_t) r->opt.seed ^ UINT64_C(0xca1b7a7e);

    for (long i = 0; i < large; i++) {
        r->perm[i] = hetsgd_rng_range(&rng, 0, r->N - 1);
    }
    /* A rank's passes stay within its memory bound (OMNIBATCH_MAX_BATCH). */
    large = large < r->hi ? large : r->hi;
    small = small < large ? small : large;
    measure_contention(r);
    if (r->opt.has_cost) {       /* given: every policy of a comparison emulates the same cluster */
        for (int i = 0; i < r->P; i++) {
            r->alpha0[i] = r->opt.cost[0];
            r->beta0[i] = r->opt.cost[1];
        }
        if (r->opt.chunk_cost >= 0.0) {
            r->chunk_cost = r->opt.chunk_cost;
        } else if (!r->opt.bind) {
            calibrate_chunk(r);
        }
        return;
    }
    t_small = time_pass(r, small, 0);
    t_large = time_pass(r, large, 0);
    if (large > small) {
        b = (t_large - t_small) / (double) (large - small);
        a = t_small - b * (double) small;
    } else {
        b = t_large / (double) large;
        a = 0.0;
    }
    if (b <= 0.0) {              /* noise swamped the difference: all per sample */
        b = t_large / (double) large;
        a = 0.0;
    }
    a = a > 0.0 ? a : 0.0;
    MPI_Allgather(&a, 1, MPI_DOUBLE, r->alpha0, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    MPI_Allgather(&b, 1, MPI_DOUBLE, r->beta0, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    if (!r->opt.bind) {
        double sa = 0.0, sb = 0.0;

        for (int i = 0; i < r->P; i++) {
            sa += r->alpha0[i];
            sb += r->beta0[i];
        }
        for (int i = 0; i < r->P; i++) {
            r->alpha0[i] = sa / r->P;
            r->beta0[i] = sb / r->P;
        }
        calibrate_chunk(r);
    }
}

/* The true models at global step k (of the given speeds when not NULL).
 * Bound ranks were each measured on their own cores: their models are
 * their measurements, with no speed on top. */
static void models_at(run *r, long k, const double *speeds)
{
    if (r->opt.bind) {
        speeds = r->ones;
    } else if (NULL == speeds) {
        hetsgd_schedule_speeds(r->schedule, k, r->speeds);
        speeds = r->speeds;
    }
    hetsgd_emulated_models(r->P, speeds, r->alpha0, r->beta0, r->slowdown, r->opt.alpha,
                           r->lo, r->hi, r->models);
    for (int i = 0; i < r->P; i++) {
        r->models[i].lo = r->lo_all[i];
        r->models[i].hi = r->hi_all[i];
    }
}

/* --calibrate on rank 0: what a pass of n samples costs per sample on
 * caches warm from the pass before, with the chunks' gradient sum, for n
 * from 1 up to the batch: the per-chunk cost that sizes a step's chunks. */
static void print_chunk_passes(run *r)
{
    long most = r->B < r->N ? r->B : r->N;

    printf("hetsgd: a chunk's pass on warm caches, CPU us per sample (C + B n over n):");
    for (long n = 1; (CALIBRATION_REPS + 1) * n <= most; n *= 4) {
        printf(" n=%ld %.1f", n, 1e6 * time_pass(r, n, 1) / (double) n);
    }
    printf("\n");
}

/* The emulated ranks' work for the profiles: their models at speed 1. */
static void work_models(run *r)
{
    for (int i = 0; i < r->P; i++) {
        r->work[i].a = r->slowdown * (r->alpha0[i] > 0.0 ? r->alpha0[i] : 0.0);
        r->work[i].b = r->slowdown * (r->beta0[i] > 1e-12 ? r->beta0[i] : 1e-12);
        r->work[i].alpha = r->opt.alpha;
        r->work[i].lo = r->lo_all[i];
        r->work[i].hi = r->hi_all[i];
    }
}

/* Whether step k's speeds change inside it (--change-at). */
static int changes_inside(const run *r, long k)
{
    return !r->opt.bind && r->opt.change_at > 0.0 && k > 0 && hetsgd_schedule_changes_at(r->schedule, k);
}

/* Every rank's speed over step k: a change of the schedule at k lands
 * change_at x the oracle's step time at the speeds before into it, the same
 * moment on every rank and for every policy; r->speeds holds step k's. */
static void step_profiles(run *r, long k)
{
    double at = 0.0;

    if (changes_inside(r, k)) {
        double T = 0.0;

        hetsgd_schedule_speeds(r->schedule, k - 1, r->before);
        models_at(r, k - 1, r->before);
        if (OMNIBATCH_SUCCESS == ob_plan_optimum(r->models, r->P, r->B, NULL, &T)) {
            at = r->opt.change_at * T;
        }
    }
    hetsgd_schedule_speeds(r->schedule, k, r->speeds);
    for (int i = 0; i < r->P; i++) {
        r->profiles[i].before = at > 0.0 ? r->before[i] : r->speeds[i];
        r->profiles[i].after = r->speeds[i];
        r->profiles[i].at = at;
    }
}

/* The best step time of step k (its true speeds, inside it too) and that of
 * \p plan; 0 when no optimum is found. */
static double step_optimum(run *r, long k, const long *plan, double *planned)
{
    double T = 0.0;

    *planned = 0.0;
    if (changes_inside(r, k)) {
        step_profiles(r, k);
        work_models(r);
        if (OMNIBATCH_SUCCESS == hetsgd_profile_optimum(r->profiles, r->work, r->P, r->B, NULL, &T)) {
            *planned = hetsgd_profile_step_time(r->profiles, r->work, r->P, plan);
        }
        return T;
    }
    hetsgd_schedule_speeds(r->schedule, k, r->speeds);
    models_at(r, k, r->speeds);
    if (OMNIBATCH_SUCCESS == ob_plan_optimum(r->models, r->P, r->B, NULL, &T)) {
        *planned = ob_plan_step_time(r->models, r->P, plan);
    }
    return T;
}

static void impose(run *r, const long *plan)
{
    if (OMNIBATCH_SUCCESS != omnibatch_set_plan(r->ctx, plan, r->P)) {
        die(r, "omnibatch_set_plan", omnibatch_last_error());
    }
}

/* The oracle: the exact water-filling split for the speeds of step k; in a
 * step whose speeds change inside it, the split that ends first knowing
 * when (hetsgd_profile_optimum()). */
static void plan_oracle(run *r, long k)
{
    int rc;

    models_at(r, k, NULL);
    if (changes_inside(r, k)) {
        step_profiles(r, k);
        work_models(r);
        rc = hetsgd_profile_optimum(r->profiles, r->work, r->P, r->B, r->target, NULL);
    } else {
        rc = ob_plan_optimum(r->models, r->P, r->B, r->target, NULL);
    }
    if (OMNIBATCH_SUCCESS != rc ||
        OMNIBATCH_SUCCESS != ob_plan_round(r->models, r->P, r->B, r->granularity, r->target, r->plan)) {
        die(r, "oracle plan", ob_last_error());
    }
    impose(r, r->plan);
}

/* The oracle plans anew where the speeds change, and in the step after a
 * change inside a step (the speeds of the step's end from its start). */
static int oracle_replans_at(const run *r, long k)
{
    return hetsgd_schedule_changes_at(r->schedule, k) || changes_inside(r, k - 1);
}

static void print_plan(FILE *f, const long *plan, int P)
{
    for (int i = 0; i < P; i++) {
        fprintf(f, "%s%ld", 0 == i ? "" : ",", plan[i]);
    }
}

/* OmniLearn, once per epoch: its published rule on the epoch's mean compute
 * times, mapped onto the fixed global batch (omnilearn.h). */
static void plan_omnilearn(run *r, long epoch)
{
    double mine = r->ol_compute_n > 0 ? r->ol_compute_sum / (double) r->ol_compute_n : 0.0;
    long *current = r->plan;
    long *published;
    long *fitted;
    long sum = 0;
    int broken = 0;

    r->ol_compute_sum = 0.0;
    r->ol_compute_n = 0;
    MPI_Allgather(&mine, 1, MPI_DOUBLE, r->target, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < r->P; i++) {
        if (!(r->target[i] > 0.0)) {
            return;              /* an epoch without a full step: nothing to judge, the plan stays */
        }
    }
    published = alloc_or_null(2 * (size_t) r->P, sizeof(long));
    if (NULL == published) {
        die(r, "omnilearn", "out of memory");
    }
    fitted = published + r->P;
    if (OMNIBATCH_SUCCESS != omnibatch_get_plan(r->ctx, current, r->P)) {
        die(r, "omnibatch_get_plan", omnibatch_last_error());
    }
    if (OMNIBATCH_SUCCESS != hetsgd_omnilearn_published(current, r->target, r->P, r->B,
                                                        HETSGD_OMNILEARN_DEADBAND, r->lo, r->hi,
                                                        published) ||
        OMNIBATCH_SUCCESS != hetsgd_omnilearn_fit(published, r->P, r->B, r->lo, r->hi, fitted)) {
        die(r, "omnilearn", ob_last_error());
    }
    for (int i = 0; i < r->P; i++) {
        sum += published[i];
        broken |= published[i] < r->lo || published[i] > r->hi;
    }
    if (sum != r->B) {
        r->ol_overfull += sum > r->B;
        r->ol_excess_max = labs(sum - r->B) > r->ol_excess_max ? labs(sum - r->B) : r->ol_excess_max;
    }
    r->ol_bounds_broken += broken;
    if (0 == r->rank) {
        printf("hetsgd: omnilearn after epoch %ld: published plan ", epoch);
        print_plan(stdout, published, r->P);
        printf(" (sum %ld%s%s)", sum, sum > r->B ? " > B" : sum < r->B ? " < B" : " = B",
               broken ? ", outside the bounds" : "");
        if (0 != memcmp(published, fitted, (size_t) r->P * sizeof(long))) {
            printf(", run as ");
            print_plan(stdout, fitted, r->P);
            printf(" (bounds restored, excess trimmed from the largest)");
        }
        printf("\n");
        fflush(stdout);
    }
    impose(r, fitted);
    free(published);
}

/* Test \p req until it completes, sleeping \p nap_ns between tests. */
static void test_asleep(MPI_Request *req, long nap_ns)
{
    const struct timespec nap = { 0, nap_ns };
    int done = 0;

    while (!done) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (!done) {
            nanosleep(&nap, NULL);
        }
    }
}

/* Test accuracy and mean loss; every rank scores its slice of the test set. */
static void evaluate(run *r, double *acc, double *loss)
{
    long correct = 0;
    double mine[2];
    double all[2];
    MPI_Request req;

    mine[1] = hetsgd_mlp_evaluate(r->model, r->test_x, r->test_y, r->test_count, &correct);
    mine[0] = (double) correct;
    /* Asleep, in 1 ms naps (the evaluation is off the training clock): a
     * rank under a CPU quota that polled here while the slowest rank
     * evaluated its share would spend its quota and start the next step
     * throttled. */
    if (MPI_SUCCESS != MPI_Iallreduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req)) {
        die(r, "MPI_Iallreduce", "failed");
    }
    test_asleep(&req, 1000000);
    *acc = all[0] / (double) r->test_total;
    *loss = all[1] / (double) r->test_total;
}

static double train_clock(const run *r)
{
    return ob_now() - r->t0 - r->eval_s;
}

/* The first time the target is reached. */
static void note_target(run *r, double at, long steps)
{
    if (r->time_to_target < 0.0 && r->final_acc >= r->opt.target) {
        r->time_to_target = at;
        r->target_step = steps;
    }
}

/* --eval-after: a copy of the model now, evaluated once training is over (every rank holds the
 * same model, so each keeps its own copy and scores its slice of the test set then). */
static void keep_model(run *r, long k)
{
    if (NULL == r->kept) {
        r->kept = alloc_or_null((size_t) r->total_steps, sizeof *r->kept);
    }
    if (NULL == r->kept || r->n_evals >= r->total_steps) {
        die(r, "--eval-after", "out of memory for the model's copies");
    }
    r->kept[r->n_evals] = alloc_or_null((size_t) r->nparams, sizeof(float));
    if (NULL == r->kept[r->n_evals]) {
        die(r, "--eval-after", "out of memory for the model's copies");
    }
    memcpy(r->kept[r->n_evals], hetsgd_mlp_params(r->model), (size_t) r->nparams * sizeof(float));
    r->eval_done[r->n_evals] = k + 1;
    r->eval_at[r->n_evals] = train_clock(r);
    r->n_evals++;
}

/* --eval-after, after the last step: every copy evaluated, the final model put back. */
static void evaluate_kept(run *r)
{
    float *w = hetsgd_mlp_params(r->model);
    float *last = alloc_or_null((size_t) r->nparams, sizeof(float));

    if (NULL == last) {
        die(r, "--eval-after", "out of memory");
    }
    memcpy(last, w, (size_t) r->nparams * sizeof(float));
    for (long i = 0; i < r->n_evals; i++) {
        memcpy(w, r->kept[i], (size_t) r->nparams * sizeof(float));
        evaluate(r, &r->final_acc, &r->final_loss);
        r->eval_acc[i] = r->final_acc;
        note_target(r, r->eval_at[i], r->eval_done[i]);
        free(r->kept[i]);
    }
    memcpy(w, last, (size_t) r->nparams * sizeof(float));
    free(last);
    free(r->kept);
    r->kept = NULL;
}

/* Evaluate now, keeping its time off the training clock; note the first
 * time the target is reached. */
static void checkpoint(run *r, long k)
{
    double start = ob_now();
    double at = train_clock(r);

    if (r->opt.eval_after) {
        keep_model(r, k);
        r->eval_s += ob_now() - start;
        return;
    }
    evaluate(r, &r->final_acc, &r->final_loss);
    if (r->n_evals < r->total_steps) {
        r->eval_done[r->n_evals] = k + 1;
        r->eval_acc[r->n_evals] = r->final_acc;
        r->eval_at[r->n_evals] = at;
        r->n_evals++;
    }
    note_target(r, at, k + 1);
    r->eval_s += ob_now() - start;
}

/* Wait for every rank to finish its compute without using a core: on a
 * machine with fewer cores than ranks, a rank that spins in the allreduce
 * takes the core a slower rank still computes on, which a rank with cores
 * of its own would not.  The allreduce then starts with every rank ready. */
static void wait_asleep(const run *r)
{
    MPI_Request req;

    if (MPI_SUCCESS != MPI_Ibarrier(MPI_COMM_WORLD, &req)) {
        die(r, "MPI_Ibarrier", "failed");
    }
    test_asleep(&req, 50000);
}

/* The step's batch in one piece, emulated at the rank's speed over the
 * step: its mean loss; its CPU seconds and how late its real compute ended
 * to the step's record. */
static double compute_whole(run *r, const omnibatch_step *st, double w0, double *rec)
{
    const double c0 = compute_clock(r);
    double loss, end, now;

    hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm + st->start, st->count, r->x, r->y);
    loss = loss_grad(r, st->count);
    rec[HETSGD_TRACE_CPU] = compute_clock(r) - c0;
    rec[HETSGD_TRACE_BATCH] = (double) st->count;
    now = ob_now();
    if (r->opt.bind) {
        hetsgd_sleep_until(now + r->opt.alpha);
        return loss;
    }
    /* With --cost the step's length is its cost's, not its CPU time's. */
    end = w0 + r->opt.alpha +
          hetsgd_profile_finish(&r->profiles[r->rank], 0.0,
                                hetsgd_charged_cpu(r->opt.has_cost ? r->opt.cost : NULL, (double) st->count,
                                                   rec[HETSGD_TRACE_CPU]) * r->slowdown);
    rec[HETSGD_TRACE_LATE] = now > end ? now - end : 0.0;
    hetsgd_sleep_until(end);
    return loss;
}

/* The CPU seconds a chunk of n samples is charged: the step's cost for its
 * first chunk, caches cold (A + B n), C + B n for the later ones; without
 * --cost its own CPU time. */
static double chunk_charge(const run *r, long n, int first, double cpu)
{
    if (!r->opt.has_cost) {
        return cpu;
    }
    return (first ? r->opt.cost[0] : r->chunk_cost) + r->opt.cost[1] * (double) n;
}

/* Sleep to a chunk's emulated end: \p start and *end are seconds since
 * the step's compute began on the emulated timeline.  The seconds its real
 * compute outlasted it by (0 when it fit). */
static double chunk_emulate(run *r, long n, int first, double cpu, double w0, double start, double *end)
{
    double now;

    if (r->opt.bind) {
        *end = ob_now() - w0;
        return 0.0;
    }
    *end = hetsgd_profile_finish(&r->profiles[r->rank], start, chunk_charge(r, n, first, cpu) * r->slowdown) +
           (first ? r->opt.alpha : 0.0);
    now = ob_now();
    hetsgd_sleep_until(w0 + *end);
    return now > w0 + *end ? now - (w0 + *end) : 0.0;
}

/* One chunk of the step: its samples' loss and gradient, the gradient
 * added to r->acc weighted by its count, emulated at the rank's speed while
 * it runs (a change of speed inside the step slows the chunks after it,
 * and the one it falls in from then on).  It begins on the emulated
 * timeline (*t: seconds since the step's compute began) where the chunk
 * before ended plus the real time of the call that handed it out, and *t
 * moves to its end: a sleep that woke late on a crowded machine does not
 * push the chunks after it back (the step in one piece has one sleep too).
 * Its summed loss. */
static double compute_chunk(run *r, const omnibatch_chunk *ch, int first, double w0, double call, double *t,
                            double *rec)
{
    const double start = *t + call;
    const double c0 = compute_clock(r);
    double loss, cpu;

    hetsgd_gather(&r->ds.train_images, &r->ds.train_labels, r->perm + ch->start, ch->count, r->x, r->y);
    loss = chunk_grad(r, ch->count);
    cpu = compute_clock(r) - c0;
    rec[HETSGD_TRACE_CPU] += cpu;
    rec[HETSGD_TRACE_LATE] += chunk_emulate(r, ch->count, first, cpu, w0, start, t);
    rec[HETSGD_TRACE_TAKEN] += ch->owner != r->rank ? (double) ch->count : 0.0;
    rec[HETSGD_TRACE_CHUNKS] += 1.0;
    return loss;
}

/* --policy chunks: the step in chunks from omnibatch_next_chunk() until
 * none is left: this rank's range first, then the tails of slower ranks'.
 * r->grad ends as the mean gradient over the samples this rank did (zeros
 * when none), as omnibatch_allreduce_gradient() weighs it; the mean loss is
 * returned and the samples done, taken and given, the chunks and the time
 * in the chunk calls go to the step's record. */
static double compute_in_chunks(run *r, const omnibatch_step *st, double w0, double *rec)
{
    omnibatch_chunk ch;
    double loss = 0.0, t = 0.0;
    int first = 1;

    memset(r->acc, 0, (size_t) r->nparams * sizeof *r->acc);
    for (;;) {
        const double t0 = ob_now();
        double call;

        if (OMNIBATCH_SUCCESS != omnibatch_next_chunk(r->ctx, &ch)) {
            die(r, "omnibatch_next_chunk", omnibatch_last_error());
        }
        call = ob_now() - t0;
        rec[HETSGD_TRACE_CHUNK_CALL] += call;
        if (0 == ch.count) {
            break;
        }
        loss += compute_chunk(r, &ch, first, w0, call, &t, rec);
        first = 0;
    }
    rec[HETSGD_TRACE_BATCH] = (double) ch.done;
    rec[HETSGD_TRACE_GIVEN] = (double) st->count - (ch.done - rec[HETSGD_TRACE_TAKEN]);
    memset(r->grad, 0, (size_t) r->nparams * sizeof *r->grad);
    if (ch.done > 0) {
        cblas_saxpy((int) r->nparams, 1.0f / (float) ch.done, r->acc, 1, r->grad, 1);
    }
    return ch.done > 0 ? loss / (double) ch.done : 0.0;
}

static void train(run *r)
{
    omnibatch_step st;
    long epoch = -1;
    double epoch_loss = 0.0;
    long epoch_samples = 0;
    double epoch_step_s = 0.0;

    MPI_Barrier(MPI_COMM_WORLD);
    r->t0 = ob_now();
    for (long k = 0; k < r->total_steps; k++) {
        double *rec = r->record + k * HETSGD_TRACE_FIELDS;
        double my_speed, t_step, c_step, w0, w1;
        double loss;

        if (HETSGD_POLICY_ORACLE == r->opt.policy && oracle_replans_at(r, k)) {
            plan_oracle(r, k);
        }
        step_profiles(r, k);
        my_speed = r->speeds[r->rank];
        if (HETSGD_POLICY_OMNILEARN == r->opt.policy && k > 0 && 0 == k % r->steps_per_epoch) {
            plan_omnilearn(r, k / r->steps_per_epoch);
        }

        t_step = ob_now();
        c_step = hetsgd_thread_cpu_seconds();
        if (OMNIBATCH_SUCCESS != omnibatch_next_step(r->ctx, &st)) {
            die(r, "omnibatch_next_step", omnibatch_last_error());
        }
        if (st.epoch != epoch) {
            epoch = st.epoch;
            if (OMNIBATCH_SUCCESS != omnibatch_permutation(r->ctx, epoch, r->perm)) {
                die(r, "omnibatch_permutation", omnibatch_last_error());
            }
        }

        /* Everything a rank does in proportion to its batch, and the
         * emulated rest of its step, lies between the markers: that is what
         * the controller sees as this rank's speed. */
        omnibatch_compute_begin(r->ctx);
        w0 = ob_now();
        if (HETSGD_POLICY_CHUNKS == r->opt.policy) {
            loss = compute_in_chunks(r, &st, w0, rec);
        } else {
            loss = compute_whole(r, &st, w0, rec);
        }
        omnibatch_compute_end(r->ctx);
        w1 = ob_now();
        if (!r->opt.bind && !r->opt.no_own_wait) {
            wait_asleep(r);
        }

        /* The local mean loss rides in the last slot: weighted like the
         * gradient, it sums to the mean loss of the global batch. */
        r->grad[r->nparams] = (float) loss;
        if (OMNIBATCH_SUCCESS != omnibatch_allreduce_gradient(r->ctx, MPI_IN_PLACE, r->grad,
                                                              (int) r->nparams + 1, MPI_FLOAT)) {
            die(r, "omnibatch_allreduce_gradient", omnibatch_last_error());
        }
        hetsgd_mlp_sgd_step(r->model, r->grad, (float) r->opt.lr, (float) r->opt.momentum);

        rec[HETSGD_TRACE_COMPUTE] = w1 - w0;
        rec[HETSGD_TRACE_STEP] = ob_now() - t_step;
        rec[HETSGD_TRACE_SPEED] = my_speed;
        rec[HETSGD_TRACE_STEP_CPU] = hetsgd_thread_cpu_seconds() - c_step;
        epoch_loss += (double) r->grad[r->nparams] * (double) st.total;
        epoch_samples += st.total;
        epoch_step_s += rec[HETSGD_TRACE_STEP];
        /* OmniLearn times full steps; the very first one runs on cold caches. */
        if (k > 0 && st.total == r->B) {
            r->ol_compute_sum += rec[HETSGD_TRACE_COMPUTE];
            r->ol_compute_n++;
        }

        if (st.step + 1 == r->steps_per_epoch || k + 1 == r->total_steps) {
            const int evaluated = !r->opt.last_eval_only || k + 1 == r->total_steps;

            if (evaluated) {
                checkpoint(r, k);
            }
            if (0 == r->rank) {
                char acc[32] = "-"; /* --last-eval-only: not evaluated; --eval-after: not yet */

                if (OMNIBATCH_SUCCESS != omnibatch_get_plan(r->ctx, r->plan, r->P)) {
                    die(r, "omnibatch_get_plan", omnibatch_last_error());
                }
                if (evaluated && !r->opt.eval_after) {
                    snprintf(acc, sizeof acc, "%.4f", r->final_acc);
                }
                printf("hetsgd: epoch %ld/%ld loss %.4f test_acc %s train_s %.2f wall_s %.2f "
                       "step_ms %.2f plan ", epoch + 1, (r->total_steps + r->steps_per_epoch - 1) /
                       r->steps_per_epoch, epoch_loss / (double) epoch_samples, acc,
                       train_clock(r), ob_now() - r->t0, 1e3 * epoch_step_s / (double) (st.step + 1));
                print_plan(stdout, r->plan, r->P);
                printf("\n");
                fflush(stdout);
            }
            epoch_loss = 0.0;
            epoch_samples = 0;
            epoch_step_s = 0.0;
        } else if (r->opt.eval_every > 0 && 0 == (k + 1) % r->opt.eval_every && !r->opt.last_eval_only) {
            checkpoint(r, k);
        }
    }
    r->train_s = train_clock(r);
}

/* "cpu,cpu,cpu,gpu" (all cpu without --devices). */
static void join_devices(const run *r, char *out, size_t size)
{
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; i < r->P && used + 1 < size; i++) {
        int gpu = r->opt.ndevices > 0 && r->opt.gpu[i];
        int n = snprintf(out + used, size - used, "%s%s", 0 == i ? "" : ",", gpu ? "gpu" : "cpu");

        used += n > 0 ? (size_t) n : 0;
    }
}

static void join_speeds(const run *r, char *out, size_t size)
{
    size_t used = 0;

    out[0] = '\0';
    for (int i = 0; i < r->P && used + 1 < size; i++) {
        double v = r->opt.nspeeds > 0 ? r->opt.speeds[i] : 1.0;
        int n = snprintf(out + used, size - used, "%s%g", 0 == i ? "" : ",", v);

        used += n > 0 ? (size_t) n : 0;
    }
}

/* Rank 0, after gathering every rank's trace: the figures of the run, the
 * trace file, the closing lines and the summary.  Two kinds of figures:
 * "model" ones rate each step's plan with the calibrated cost model times the
 * true speeds (free of timing noise, but only as right as the calibration);
 * "balance" ones come from the measured batch and compute time of every rank
 * (report.h), so they need no model at all. */
static int report(run *r, const double *all)
{
    const long steps = r->total_steps;
    long warmup = r->opt.warmup >= 0 ? r->opt.warmup : (steps / 10 > 1 ? steps / 10 : 1);
    double *step_s = alloc_or_null((size_t) steps, sizeof(double));
    double *ratio = alloc_or_null((size_t) steps, sizeof(double));
    double *optimum = alloc_or_null((size_t) steps, sizeof(double));
    double *balance = alloc_or_null((size_t) steps, sizeof(double));
    double *smooth = alloc_or_null((size_t) steps, sizeof(double));
    unsigned char *change = alloc_or_null((size_t) steps, 1);
    hetsgd_recovery_stats rec, bal;
    double mean_step, steady_step, pred_ratio, pred_optimum, balance_steady, final_mean;
    long final_used = 0, final_from = -1;
    /* A step in chunks knows how late each chunk's compute ended; a step in one piece is judged
     * on its emulated length. */
    long overruns = r->opt.bind ? 0
                    : HETSGD_POLICY_CHUNKS == r->opt.policy || r->opt.change_at > 0.0
                        ? hetsgd_late_steps(all, steps, r->P)
                    : hetsgd_overrun_steps(all, steps, r->P, r->slowdown, r->opt.alpha,
                                           r->opt.has_cost ? r->opt.cost : NULL);
    hetsgd_chunk_figures chunk_fig;
    double overrun_share = (double) overruns / (double) steps;
    char speeds[512];
    char devices[512];
    char ttt[64];
    char tstep[32];
    char line[3072];
    int rc = OMNIBATCH_SUCCESS;

    if (NULL == step_s || NULL == ratio || NULL == optimum || NULL == balance || NULL == smooth ||
        NULL == change) {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the figures of %ld steps", steps);
        goto out;
    }
    if (warmup >= steps) {
        warmup = steps - 1;
    }
    for (long k = 0; k < steps; k++) {
        long total = 0;
        double sum_step = 0.0;

        for (int i = 0; i < r->P; i++) {
            const double *x = all + ((long) i * steps + k) * HETSGD_TRACE_FIELDS;

            r->plan[i] = (long) x[HETSGD_TRACE_BATCH];
            r->speeds[i] = x[HETSGD_TRACE_SPEED];
            total += r->plan[i];
            sum_step += x[HETSGD_TRACE_STEP];
        }
        change[k] = (unsigned char) hetsgd_schedule_changes_at(r->schedule, k);
        /* Only full steps are compared: an epoch's short last step is the same in every policy. */
        step_s[k] = total == r->B ? sum_step / r->P : -1.0;
        ratio[k] = -1.0;
        optimum[k] = -1.0;
        balance[k] = total == r->B ? hetsgd_balance_ratio(all, steps, r->P, k, NULL) : -1.0;
        if (total == r->B) {
            double planned;
            double T = step_optimum(r, k, r->plan, &planned);

            if (T > 0.0) {
                ratio[k] = planned / T;
                optimum[k] = T;
            }
        }
    }
    hetsgd_recovery(ratio, change, steps, RECOVERY_TOLERANCE, 1, &rec);
    hetsgd_smooth_median3(balance, change, steps, smooth);
    hetsgd_recovery(smooth, change, steps, RECOVERY_TOLERANCE, BALANCE_HOLD, &bal);
    mean_step = hetsgd_mean_judged(step_s, 0, steps);
    steady_step = hetsgd_mean_judged(step_s, warmup, steps);
    pred_ratio = hetsgd_mean_judged(ratio, warmup, steps);
    pred_optimum = hetsgd_mean_judged(optimum, warmup, steps);
    balance_steady = hetsgd_mean_judged(balance, warmup, steps);
    final_mean = hetsgd_final_accuracy(r->eval_done, r->eval_acc, r->n_evals, steps, r->opt.eval_every,
                                       r->opt.final_evals, &final_used, &final_from);

    if (NULL != r->opt.trace) {
        rc = hetsgd_write_trace(r->opt.trace, hetsgd_policy_name(r->opt.policy), steps, r->P, all);
    }
    join_speeds(r, speeds, sizeof speeds);
    join_devices(r, devices, sizeof devices);
    if (r->time_to_target >= 0.0) {
        snprintf(ttt, sizeof ttt, "%.3f", r->time_to_target);
        snprintf(tstep, sizeof tstep, "%ld", r->target_step);
    } else {
        snprintf(ttt, sizeof ttt, "NA");
        snprintf(tstep, sizeof tstep, "NA");
    }
    printf("hetsgd: time to test accuracy %.2f: %s s%s%s (evaluation excluded from the clock: %.2f s of it)\n",
           r->opt.target, ttt, r->time_to_target >= 0.0 ? " at step " : " (not reached)",
           r->time_to_target >= 0.0 ? tstep : "", r->eval_s);
    printf("hetsgd: mean steady step %.3f ms (full steps %ld..%ld; the first %ld left out as warm-up), "
           "all steps %.3f ms\n", 1e3 * steady_step, warmup, steps - 1, warmup, 1e3 * mean_step);
    printf("hetsgd: measured balance, max_i t_i / (B / sum_i b_i/t_i) per step: %.4f over the steady "
           "steps; within %.0f%% (median of 3 steps, for %d steps in a row) after %ld step(s)",
           balance_steady, 100.0 * (RECOVERY_TOLERANCE - 1.0), BALANCE_HOLD, bal.initial);
    if (bal.changes > 0) {
        printf("; after %d speed change(s): worst %ld, mean %.1f steps, %d not recovered",
               bal.changes, bal.worst, bal.mean, bal.unrecovered);
    }
    printf("\n");
    printf("hetsgd: model (the calibrated cost x the true speeds): plan / oracle step time %.4f over the "
           "steady steps (oracle %.3f ms); %s within %.0f%% of the oracle after %ld step(s)",
           pred_ratio, 1e3 * pred_optimum, "first", 100.0 * (RECOVERY_TOLERANCE - 1.0), rec.initial);
    if (rec.changes > 0) {
        printf("; after %d speed change(s): worst %ld, mean %.1f steps, %d not recovered",
               rec.changes, rec.worst, rec.mean, rec.unrecovered);
    }
    printf("\n");
    printf("hetsgd: final test accuracy %.4f, mean of the %ld evaluation(s) from step %ld on %.4f; "
           "loss %.4f; training %.2f s\n", r->final_acc, final_used, final_from, final_mean,
           r->final_loss, r->train_s);
    if (!r->opt.bind) {
        printf("hetsgd: emulation: in %ld of %ld steps (%.1f%%) the real compute outlasted the "
               "emulated step\n", overruns, steps, 100.0 * overrun_share);
        if (overrun_share > 0.05) {
            printf("hetsgd: warning: the cores were too crowded for these speeds (all ranks computing "
                   "at once ran %.2fx their CPU time): the step times measure the machine, not the "
                   "policy; try --slowdown %.0f\n", r->contention, hetsgd_crowded_slowdown(r->contention));
        }
    }
    hetsgd_chunk_summary(all, steps, r->P, warmup, &chunk_fig);
    if (HETSGD_POLICY_CHUNKS == r->opt.policy) {
        printf("hetsgd: chunks: %.1f chunks per rank and step; %.2f%% of a step's samples done by another "
               "rank than the plan's (in %ld of the %ld steady steps); the chunk calls took %.3f%% of the "
               "step\n", chunk_fig.chunks_per_step, 100.0 * chunk_fig.moved_share, chunk_fig.steps_moved,
               steps - warmup, 100.0 * chunk_fig.call_share);
    }
    if (HETSGD_POLICY_OMNILEARN == r->opt.policy) {
        printf("hetsgd: omnilearn: %d epoch(s) published a plan summing to more than B (at most %ld over), "
               "%d broke the bounds; the API holds sum == B, so each ran with the excess trimmed "
               "from the largest batch\n", r->ol_overfull, r->ol_excess_max, r->ol_bounds_broken);
    }
    snprintf(line, sizeof line,
             "policy=%s ranks=%d speeds=%s devices=%s schedule=%s alpha=%g slowdown=%.4g bind=%d batch=%ld "
             "lr=%g momentum=%g seed=%llu samples=%ld steps=%ld steps_per_epoch=%ld warmup=%ld "
             "target=%g time_to_target_s=%s target_step=%s final_acc=%.4f final_acc_mean=%.4f "
             "final_acc_evals=%ld final_acc_from_step=%ld final_loss=%.4f "
             "train_s=%.3f eval_s=%.3f mean_step_s=%.6f steady_step_s=%.6f "
             "balance_steady=%.4f balance_recover_initial=%ld balance_recover_changes=%d "
             "balance_recover_worst=%ld balance_recover_mean=%.2f balance_recover_unrecovered=%d "
             "pred_ratio_oracle=%.4f pred_oracle_step_s=%.6f model_recover_initial=%ld "
             "model_recover_changes=%d model_recover_worst=%ld model_recover_mean=%.2f "
             "model_recover_unrecovered=%d "
             "omnilearn_overfull=%d omnilearn_excess_max=%ld omnilearn_fit=trim-largest "
             "cpu_per_sample_s=%.4g cpu_per_step_s=%.4g contention=%.3g overrun_share=%.4f change_at=%g "
             "chunk_cost_s=%.4g chunks_per_step=%.3f moved_share=%.5f moved_steps=%ld chunk_call_share=%.6f "
             "emulate=%s",
             hetsgd_policy_name(r->opt.policy), r->P, speeds, devices, hetsgd_schedule_name(r->opt.schedule),
             r->opt.alpha, r->slowdown, r->opt.bind, r->B, r->opt.lr, r->opt.momentum,
             (unsigned long long) r->opt.seed, r->N, steps, r->steps_per_epoch, warmup, r->opt.target,
             ttt, tstep, r->final_acc, final_mean, final_used, final_from, r->final_loss, r->train_s,
             r->eval_s, mean_step, steady_step,
             balance_steady, bal.initial, bal.changes, bal.worst, bal.mean, bal.unrecovered,
             pred_ratio, pred_optimum, rec.initial, rec.changes, rec.worst, rec.mean, rec.unrecovered,
             r->ol_overfull, r->ol_excess_max, r->beta0[0], r->alpha0[0], r->contention,
             overrun_share, r->opt.change_at, r->chunk_cost, chunk_fig.chunks_per_step, chunk_fig.moved_share,
             chunk_fig.steps_moved, chunk_fig.call_share, r->opt.bind ? "none" : r->opt.has_cost ? "cost" : "cpu");
    printf("hetsgd: summary %s\n", line);
    if (NULL != r->opt.summary) {
        FILE *f = fopen(r->opt.summary, "a");

        if (NULL == f || fprintf(f, "%s\n", line) < 0 || 0 != fclose(f)) {
            rc = ob_fail(OMNIBATCH_ERR_ARG, "--summary %s: cannot append", r->opt.summary);
        }
    }
    fflush(stdout);
out:
    free(step_s);
    free(ratio);
    free(optimum);
    free(balance);
    free(smooth);
    free(change);
    return rc;
}

/* --curve: every evaluation's training time, samples trained on and test accuracy. */
static int write_curve(const run *r)
{
    FILE *f = fopen(r->opt.curve, "w");
    int bad = NULL == f;

    if (!bad) {
        bad = fprintf(f, "train_s,samples,test_acc\n") < 0;
        for (long i = 0; !bad && i < r->n_evals; i++) {
            long k = r->eval_done[i];
            long rem = (k % r->steps_per_epoch) * r->B;
            long samples = (k / r->steps_per_epoch) * r->N + (rem < r->N ? rem : r->N);

            bad = fprintf(f, "%.4f,%ld,%.4f\n", r->eval_at[i], samples, r->eval_acc[i]) < 0;
        }
        bad = 0 != fclose(f) || bad;
    }
    return bad ? ob_fail(OMNIBATCH_ERR_ARG, "--curve %s: cannot write it", r->opt.curve) : OMNIBATCH_SUCCESS;
}

/* Gather every rank's trace on rank 0 and report there. */
static int finish(run *r)
{
    const int n = (int) (r->total_steps * HETSGD_TRACE_FIELDS);
    double *all = NULL;
    int rc = OMNIBATCH_SUCCESS;

    if (0 == r->rank) {
        all = alloc_or_null((size_t) n * (size_t) r->P, sizeof(double));
        if (NULL == all) {
            die(r, "report", "cannot allocate the gathered trace");
        }
    }
    MPI_Gather(r->record, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (0 == r->rank) {
        rc = report(r, all);
        if (OMNIBATCH_SUCCESS == rc && NULL != r->opt.curve) {
            rc = write_curve(r);
        }
    }
    free(all);
    return agree(r, rc, ob_last_error());
}

/* --devices: a GPU rank takes its node's next GPU (one per GPU rank before
 * it on the node, round robin over the GPUs it sees), with room for its
 * largest batch: its memory bound is OMNIBATCH_MAX_BATCH.  \p rc is the
 * setup's status so far: a failure is passed on, nothing done. */
static int setup_device(run *r, const int *dims, int rc)
{
    snprintf(r->device, sizeof r->device, "cpu");
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (r->opt.ndevices > 0 && r->opt.ndevices != r->P) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--devices has %d entries: expected one per rank (%d)",
                       r->opt.ndevices, r->P);
    }
    r->on_gpu = r->opt.ndevices > 0 && r->opt.gpu[r->rank];
    if (!r->on_gpu) {
        return OMNIBATCH_SUCCESS;
    }
#if HAVE_CUDA
    {
        char msg[256];
        int index = 0;
        int count = hetsgd_gpu_count(msg, sizeof msg);

        if (count < 1) {
            return ob_fail(OMNIBATCH_ERR_STATE, "--devices: rank %d is gpu: %s", r->rank, msg);
        }
        for (int j = 0; j < r->node_index; j++) {
            index += r->opt.gpu[r->node_ranks[j]];
        }
        if (0 != hetsgd_gpu_create(dims, r->hi, index % count, &r->gpu, msg, sizeof msg)) {
            return ob_fail(OMNIBATCH_ERR_STATE, "--devices: rank %d on GPU %d: %s", r->rank, index % count, msg);
        }
        hetsgd_gpu_describe(r->gpu, r->device, sizeof r->device);
        return OMNIBATCH_SUCCESS;
    }
#else
    (void) dims;
    return ob_fail(OMNIBATCH_ERR_ARG, "--devices: rank %d is gpu but this hetsgd was built without "
                   "CUDA (configure's summary says why under CUDA)", r->rank);
#endif
}

/* Rank 0 prints where every rank computes, with its bounds. */
static void describe_devices(const run *r)
{
    const size_t width = sizeof r->device;
    char *all = 0 == r->rank ? alloc_or_null((size_t) r->P, width) : NULL;

    if (0 == r->rank && NULL == all) {
        die(r, "devices", "cannot allocate the device names");
    }
    MPI_Gather(r->device, (int) width, MPI_CHAR, all, (int) width, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; 0 == r->rank && i < r->P; i++) {
        printf("hetsgd: rank %d computes on %s, %g core(s), batch %ld..%ld\n", i, all + (size_t) i * width,
               r->opt.nspeeds > 0 ? r->opt.speeds[i] : 1.0, r->lo_all[i], r->hi_all[i]);
    }
    free(all);
}

/* --mode async: rank 0 serves, so --speeds names the workers (P - 1 entries): the server's
 * speed, unused, goes first, and every per-rank figure keeps its rank's index. */
static int async_speeds(run *r)
{
    if (r->P < 2) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--mode async on %d rank: expected at least 2 (a server and a "
                       "worker)", r->P);
    }
    if (r->opt.nspeeds > 0 && r->opt.nspeeds != r->P - 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "--speeds has %d entries: with --mode async, expected one per "
                       "worker (%d)", r->opt.nspeeds, r->P - 1);
    }
    if (r->opt.nspeeds > 0) {
        memmove(r->opt.speeds + 1, r->opt.speeds, (size_t) r->opt.nspeeds * sizeof r->opt.speeds[0]);
        r->opt.speeds[0] = 1.0;
        r->opt.nspeeds++;
    }
    return OMNIBATCH_SUCCESS;
}

static void evaluate_for_async(void *ctx, double *acc, double *loss)
{
    evaluate((run *) ctx, acc, loss);
}

/* --mode async: the run on the same setup (async.c). */
static int run_async(run *r)
{
    hetsgd_async_env env;

    memset(&env, 0, sizeof env);
    env.opt = &r->opt;
    env.rank = r->rank;
    env.P = r->P;
    env.N = r->N;
    env.B = r->B;
    env.ds = &r->ds;
    env.model = r->model;
    env.nparams = r->nparams;
    env.grad = r->grad;
    env.x = r->x;
    env.y = r->y;
    env.perm = r->perm;
    env.schedule = r->schedule;
    env.slowdown = r->slowdown;
    env.evaluate = evaluate_for_async;
    env.ctx = r;
    return hetsgd_async_run(&env);
}

/* Everything before the first step; each failure is agreed on by all ranks. */
static int setup(run *r)
{
    char msg[640];
    omnibatch_options oo;
    int dims[HETSGD_MLP_LAYERS + 1];
    int rc;
    long first, most;

    msg[0] = '\0';
    rc = find_node(r);
    if (OMNIBATCH_SUCCESS == rc && HETSGD_MODE_ASYNC == r->opt.mode) {
        rc = async_speeds(r);
    }
    if (OMNIBATCH_SUCCESS == rc && r->opt.nspeeds > 0 && r->opt.nspeeds != r->P) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "--speeds has %d entries: expected one per rank (%d)",
                     r->opt.nspeeds, r->P);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        for (int i = 0; i < r->P; i++) {
            r->opt.speeds[i] = r->opt.nspeeds > 0 ? r->opt.speeds[i] : 1.0;
        }
        if (r->opt.bind) {
            rc = bind_cores(r);
        } else {
            openblas_set_num_threads(1);
        }
    }
    rc = agree(r, rc, ob_last_error());
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }

    rc = hetsgd_dataset_load(r->opt.data, &r->ds);
    if (OMNIBATCH_SUCCESS == rc && r->opt.subset > 0) {
        rc = hetsgd_dataset_subset(&r->ds, r->opt.subset);
    }
    rc = agree(r, rc, ob_last_error());
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    r->N = r->ds.train_images.count;
    r->B = r->opt.batch;
    if (r->B < r->P) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "--batch %ld: expected at least one sample per rank (>= %d)",
                     r->B, r->P);
        return agree(r, rc, ob_last_error());
    }
    r->steps_per_epoch = (r->N + r->B - 1) / r->B;
    r->total_steps = r->opt.epochs * r->steps_per_epoch;
    if (r->opt.max_steps > 0 && r->opt.max_steps < r->total_steps) {
        r->total_steps = r->opt.max_steps;
    }
    rc = hetsgd_schedule_create(r->opt.schedule, r->P, r->opt.speeds, r->total_steps, r->opt.seed,
                                &r->schedule);
    rc = agree(r, rc, ob_last_error());
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }

    /* The API: the controller only in the omnibatch policy; the others impose plans.  The
     * asynchronous mode makes its own context (async.c). */
    rc = omnibatch_options_init(&oo);
    if (OMNIBATCH_SUCCESS == rc) {
        oo.seed = r->opt.seed;
        oo.convention = OMNIBATCH_GRAD_MEAN;
        oo.adaptive = HETSGD_POLICY_OMNIBATCH == r->opt.policy || HETSGD_POLICY_CHUNKS == r->opt.policy;
        oo.chunks = HETSGD_POLICY_CHUNKS == r->opt.policy;
        r->lo = oo.min_batch;
        r->hi = oo.max_batch > 0 && oo.max_batch < r->B ? oo.max_batch : r->B;
        r->granularity = oo.granularity;
        if (HETSGD_MODE_SYNC == r->opt.mode) {
            rc = omnibatch_create(MPI_COMM_WORLD, r->B, r->N, &oo, &r->ctx);
        }
    }
    snprintf(msg, sizeof msg, "omnibatch: %s", omnibatch_last_error());
    rc = agree(r, rc, msg);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }

    dims[0] = r->ds.train_images.rows * r->ds.train_images.cols;
    dims[1] = HIDDEN1;
    dims[2] = HIDDEN2;
    dims[3] = HETSGD_CLASSES;
    /* An asynchronous worker's batch may reach the sum its batches may grow to. */
    most = r->opt.max_global_batch > r->B ? r->opt.max_global_batch : r->B;
    rc = hetsgd_mlp_create(dims, most, r->opt.seed, &r->model);
    r->test_total = r->ds.test_images.count;
    first = r->test_total * r->rank / r->P;
    r->test_count = r->test_total * (r->rank + 1) / r->P - first;
    if (OMNIBATCH_SUCCESS == rc) {
        r->nparams = hetsgd_mlp_nparams(r->model);
        r->grad = alloc_or_null((size_t) r->nparams + 1, sizeof(float));
        r->x = alloc_or_null((size_t) most * (size_t) dims[0], sizeof(float));
        r->y = alloc_or_null((size_t) most, 1);
        /* perm also indexes this rank's test slice once, below: it may be longer than a --subset. */
        r->perm = alloc_or_null((size_t) (r->N > r->test_count ? r->N : r->test_count), sizeof(long));
        r->test_x = alloc_or_null((size_t) r->test_count * (size_t) dims[0], sizeof(float));
        r->test_y = alloc_or_null((size_t) r->test_count, 1);
        r->record = alloc_or_null((size_t) r->total_steps * HETSGD_TRACE_FIELDS, sizeof(double));
        r->alpha0 = alloc_or_null((size_t) r->P, sizeof(double));
        r->beta0 = alloc_or_null((size_t) r->P, sizeof(double));
        r->speeds = alloc_or_null((size_t) r->P, sizeof(double));
        r->before = alloc_or_null((size_t) r->P, sizeof(double));
        r->profiles = alloc_or_null((size_t) r->P, sizeof(hetsgd_profile));
        r->work = alloc_or_null((size_t) r->P, sizeof(hetsgd_work_model));
        r->acc = alloc_or_null((size_t) r->nparams + 1, sizeof(float));
        if (NULL == r->before || NULL == r->profiles || NULL == r->work || NULL == r->acc) {
            rc = ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the step profiles of %d ranks", r->P);
        }
        r->ones = alloc_or_null((size_t) r->P, sizeof(double));
        r->target = alloc_or_null((size_t) r->P, sizeof(double));
        r->plan = alloc_or_null((size_t) r->P, sizeof(long));
        r->lo_all = alloc_or_null((size_t) r->P, sizeof(long));
        r->hi_all = alloc_or_null((size_t) r->P, sizeof(long));
        r->models = alloc_or_null((size_t) r->P, sizeof(ob_rank_model));
        r->eval_done = alloc_or_null((size_t) r->total_steps, sizeof(long));
        r->eval_acc = alloc_or_null((size_t) r->total_steps, sizeof(double));
        r->eval_at = alloc_or_null((size_t) r->total_steps, sizeof(double));
        if (NULL == r->eval_done || NULL == r->eval_acc || NULL == r->eval_at) {
            rc = ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the evaluations of %ld steps", r->total_steps);
        }
        if (NULL == r->grad || NULL == r->x || NULL == r->y || NULL == r->perm || NULL == r->test_x ||
            NULL == r->test_y || NULL == r->record || NULL == r->alpha0 || NULL == r->beta0 ||
            NULL == r->speeds || NULL == r->ones || NULL == r->target || NULL == r->plan || NULL == r->models ||
            NULL == r->lo_all || NULL == r->hi_all) {
            rc = ob_fail(OMNIBATCH_ERR_NOMEM, "cannot allocate the buffers of a batch of %ld", r->B);
        }
    }
    rc = setup_device(r, dims, rc);
    rc = agree(r, rc, ob_last_error());
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    MPI_Allgather(&r->lo, 1, MPI_LONG, r->lo_all, 1, MPI_LONG, MPI_COMM_WORLD);
    MPI_Allgather(&r->hi, 1, MPI_LONG, r->hi_all, 1, MPI_LONG, MPI_COMM_WORLD);
    for (int i = 0; i < r->P; i++) {
        r->ones[i] = 1.0;
    }
    /* This rank's slice of the test set, converted once. */
    for (long i = 0; i < r->test_count; i++) {
        r->perm[i] = first + i;
    }
    hetsgd_gather(&r->ds.test_images, &r->ds.test_labels, r->perm, r->test_count, r->test_x, r->test_y);
    calibrate(r);
    choose_slowdown(r);
    r->time_to_target = -1.0;
    r->target_step = -1;

    if (HETSGD_MODE_SYNC == r->opt.mode &&
        (HETSGD_POLICY_STATIC == r->opt.policy || HETSGD_POLICY_OMNILEARN == r->opt.policy)) {
        models_at(r, 0, NULL);
        rc = ob_plan_equal(r->models, r->P, r->B, r->granularity, r->plan);
        rc = agree(r, rc, ob_last_error());
        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
        impose(r, r->plan);
    }
    return OMNIBATCH_SUCCESS;
}

static void print_setup(const run *r)
{
    char speeds[512];

    join_speeds(r, speeds, sizeof speeds);
    if (HETSGD_MODE_ASYNC == r->opt.mode) {
        printf("hetsgd: async: rank 0 serves (omnibatch_ps_*), ranks 1..%d work; the speeds below are "
               "the server's (unused) and the workers'\n", r->P - 1);
    }
    printf("hetsgd: %d ranks, policy %s, %s %s, schedule %s, batch %ld, %ld samples, %ld steps "
           "(%ld per epoch)\n", r->P, hetsgd_policy_name(r->opt.policy),
           r->opt.bind ? "cores" : "speeds", speeds, hetsgd_schedule_name(r->opt.schedule), r->B, r->N,
           r->total_steps, r->steps_per_epoch);
    if (r->opt.bind) {
        printf("hetsgd: bound with hwloc, OpenBLAS threads = cores; measured compute %.3g s/sample "
               "+ %.3g s/step on rank 0\n", r->beta0[0], r->alpha0[0]);
    } else if (r->opt.has_cost) {
        printf("hetsgd: emulated: step = (%.4g + %.4g x samples) s x %.4g / speed + %g s, the cost of "
               "--cost (the real compute runs inside it); slowdown %s (this node: demand %.3g cores of "
               "%ld online; all ranks computing at once ran %.2fx their CPU time)\n",
               r->opt.cost[0], r->opt.cost[1], r->slowdown, r->opt.alpha,
               r->opt.slowdown > 0.0 ? "chosen" : "auto", r->node_demand, r->node_cores, r->contention);
    } else {
        printf("hetsgd: emulated: step = CPU time x %.4g / speed + %g s; slowdown %s (this node: "
               "demand %.3g cores of %ld online; all ranks computing at once ran %.2fx their CPU "
               "time); compute %.3g s/sample + %.3g s/step of CPU\n",
               r->slowdown, r->opt.alpha, r->opt.slowdown > 0.0 ? "chosen" : "auto", r->node_demand,
               r->node_cores, r->contention, r->beta0[0], r->alpha0[0]);
    }
    if (HETSGD_POLICY_OMNILEARN == r->opt.policy) {
        printf("hetsgd: omnilearn: the published rule once per epoch (dead-band 20%%, equal share "
               "with ceil); a plan over B runs with the excess trimmed from the largest batch\n");
    }
    if (HETSGD_POLICY_CHUNKS == r->opt.policy) {
        printf("hetsgd: chunks: each step worked in chunks (omnibatch_next_chunk), each emulated at the "
               "rank's speed while it runs; a chunk after a step's first costs %.4g s + its samples' "
               "(%s)\n", r->chunk_cost, r->opt.chunk_cost >= 0.0 ? "--cost" : "measured on warm caches");
    }
    if (r->opt.change_at > 0.0) {
        printf("hetsgd: speed changes land %g of the way into their step (x the oracle's step time at "
               "the speeds before)\n", r->opt.change_at);
    }
    fflush(stdout);
}

static void release(run *r)
{
    if (NULL != r->ctx) {
        omnibatch_destroy(&r->ctx);
    }
#if HAVE_CUDA
    hetsgd_gpu_destroy(r->gpu);
#endif
    hetsgd_mlp_destroy(r->model);
    hetsgd_schedule_destroy(r->schedule);
    hetsgd_dataset_free(&r->ds);
    free(r->node_ranks);
    free(r->grad);
    free(r->x);
    free(r->y);
    free(r->perm);
    free(r->test_x);
    free(r->test_y);
    free(r->record);
    free(r->alpha0);
    free(r->beta0);
    free(r->speeds);
    free(r->before);
    free(r->profiles);
    free(r->work);
    free(r->acc);
    free(r->ones);
    free(r->target);
    free(r->plan);
    free(r->lo_all);
    free(r->hi_all);
    free(r->models);
    free(r->eval_done);
    free(r->eval_acc);
    free(r->eval_at);
}

int main(int argc, char **argv)
{
    static run r;
    int rc;
    int status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.P);
    hetsgd_options_defaults(&r.opt);
    /* Every rank parses the same command line, so all fail alike. */
    rc = hetsgd_options_parse(argc, (const char *const *) argv, &r.opt);
    if (OMNIBATCH_SUCCESS != rc || r.opt.help) {
        if (0 == r.rank) {
            if (OMNIBATCH_SUCCESS != rc) {
                fprintf(stderr, "hetsgd: %s\n", ob_last_error());
            } else {
                fputs(hetsgd_options_usage(), stdout);
            }
        }
        MPI_Finalize();
        return OMNIBATCH_SUCCESS != rc ? 2 : 0;
    }
    rc = setup(&r);
    if (OMNIBATCH_SUCCESS == rc && r.opt.calibrate) {
        /* The ranks' mean, as the oracle's models take it (calibrate()). */
        if (0 == r.rank) {
            printf("hetsgd: cost %.6g,%.6g,%.6g\n", r.alpha0[0], r.beta0[0], r.chunk_cost);
            if (!r.opt.bind) {
                print_chunk_passes(&r);
            }
        }
    } else if (OMNIBATCH_SUCCESS == rc) {
        if (0 == r.rank) {
            print_setup(&r);
        }
        if (r.opt.ndevices > 0) {
            describe_devices(&r);
        }
        if (HETSGD_MODE_ASYNC == r.opt.mode) {
            rc = run_async(&r);
        } else {
            train(&r);
            if (r.opt.eval_after) {
                evaluate_kept(&r);
            }
            rc = finish(&r);
        }
    }
    status = OMNIBATCH_SUCCESS == rc ? 0 : 1;
    release(&r);
    MPI_Finalize();
    return status;
}
