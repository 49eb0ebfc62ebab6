/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The explicit API, the step's measurement: closing a step (its compute to
 * this rank's estimator, its note to the layer), the look at a running
 * step from its first gradient allreduce that the next step's exchange
 * starts with, and the markers a code may put around its compute.  Under a
 * CPU quota a step is measured by the CPU it needs of the quota
 * (ob_measure_quota()), not only by the compute the wall clock saw.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "ob_api.h"
#include "ob_cpuquota.h"
#include "ob_error.h"
#include "ob_hook.h"
#include "ob_log.h"
#include "ob_maths.h"
#include "ob_timing.h"

/* The median of the last OB_API_CPU_AFTER steps' values in \p ring, \p now's
 * included: an evaluation, or a long wait, every few steps moves it not. */
static double ob_api_recent_median(double *ring, int *count, double now)
{
    double v[OB_API_CPU_AFTER];
    int n;

    ring[*count % OB_API_CPU_AFTER] = now;
    (*count)++;
    n = *count < OB_API_CPU_AFTER ? *count : OB_API_CPU_AFTER;
    memcpy(v, ring, (size_t) n * sizeof v[0]);
    return ob_median(v, n);
}

/* The least measured compute of the last OB_API_CPU_AFTER steps at this
 * step's batch, \p compute included; 0 until OB_API_WALL_MIN of them. */
static double ob_api_least_wall(struct omnibatch_context *c, double compute)
{
    double least = compute;
    int n;

    if (c->step.count != c->cpu.wall_batch) {
        c->cpu.wall_batch = c->step.count;
        c->cpu.wall_n = 0;
    }
    c->cpu.wall_recent[c->cpu.wall_n % OB_API_CPU_AFTER] = compute;
    c->cpu.wall_n++;
    n = c->cpu.wall_n < OB_API_CPU_AFTER ? c->cpu.wall_n : OB_API_CPU_AFTER;
    for (int k = 0; k < n; k++) {
        least = c->cpu.wall_recent[k] < least ? c->cpu.wall_recent[k] : least;
    }
    return c->cpu.wall_n >= OB_API_WALL_MIN ? least : 0.0;
}

/* The median of the values in \p ring (\p count of them written, the last
 * OB_API_CPU_AFTER kept), none added; 0 for none. */
static double ob_api_ring_median(const double *ring, int count)
{
    double v[OB_API_CPU_AFTER];
    int n = count < OB_API_CPU_AFTER ? count : OB_API_CPU_AFTER;

    if (0 == n) {
        return 0.0;
    }
    memcpy(v, ring, (size_t) n * sizeof v[0]);
    return ob_median(v, n);
}

/* ob_api_least_wall() as it would answer for \p compute, nothing written. */
static double ob_api_least_wall_peek(const struct omnibatch_context *c, double compute)
{
    double least = compute;
    int n;

    if (c->step.count != c->cpu.wall_batch) {
        return OB_API_WALL_MIN <= 1 ? compute : 0.0; /* a new batch starts over */
    }
    n = c->cpu.wall_n < OB_API_CPU_AFTER ? c->cpu.wall_n : OB_API_CPU_AFTER;
    for (int k = 0; k < n; k++) {
        /* The oldest value, which \p compute would replace, is not among them. */
        if (k != c->cpu.wall_n % OB_API_CPU_AFTER) {
            least = c->cpu.wall_recent[k] < least ? c->cpu.wall_recent[k] : least;
        }
    }
    return c->cpu.wall_n + 1 >= OB_API_WALL_MIN ? least : 0.0;
}

/* The quota again, once OB_API_QUOTA_REREAD_NS have passed since it was
 * read: a platform that resizes a container's CPU mid-run changes what a
 * step of this rank costs, not its CPU time per step, which alone the plan
 * would never see (a rank cut from 0.5 to 0.1 core kept its share, and the
 * step took five times as long).  A quota removed (0) leaves the rank
 * planned on its measured compute.  Where no quota was set at
 * omnibatch_create the rank is not planned on its CPU, and the wait each
 * rank takes is agreed there for the run: a quota that comes later shows
 * in the measured compute only. */
static void ob_api_quota_reread(struct omnibatch_context *c, uint64_t now)
{
    double q;

    if (now - c->cpu.read_ns < OB_API_QUOTA_REREAD_NS) {
        return;
    }
    c->cpu.read_ns = now;
    q = ob_cpu_quota("/proc/self/cgroup", "/sys/fs/cgroup");
    if (q != c->cpu.quota) {
        ob_log_debug(1, "rank %d: CPU quota %.4g -> %.4g cores (step %ld)", c->rank, c->cpu.quota, q,
                     c->step.global_step);
        c->cpu.quota = q;
    }
}

/* Under a CPU quota q a step of T has at most q T of CPU, whichever part of
 * the step the rank spends it in: a rank that spends cpu in a step needs
 * cpu / q of it.  That is its compute and the rest up to the gradient
 * allreduce's end (the transfer's own CPU counts when it waits asleep), the
 * median of the last steps' CPU after it, and the median of the last steps'
 * CPU in omnibatch_next_step (the exchange) and in the waits for the other
 * ranks, when it waits asleep: each wait's CPU is the others' lateness, but
 * every step has one, and asleep its median is that fixed cost (0.25 ms a
 * step on a virtual machine: 2.5 ms of a 0.1-core rank's step; left out,
 * such a rank was given 10% more than its share).  Polling, a wait's CPU is
 * its length: counted, a rank that waits would look slow, be given less and
 * wait longer.  The controller plans on that, not on
 * the measured compute: where the quota runs out mid-compute the kernel
 * stops the rank until its period ends, so the compute measured swings with
 * where the step falls in the period (at a 100 ms period, 13 to 70 ms at one
 * batch), and the larger of the two chased those stalls.  The least compute
 * of the last steps at the batch still counts where it is the larger: a rank
 * slowed by something the quota does not see (crowded cores, reading its
 * data).  Nothing is taken off for the reduction, although the step's
 * reduction is in the q T: measured as the least time any rank was blocked,
 * it also holds the stalls of a rank throttled in it (20-90 ms, against a
 * transfer of a few), and a common term moves no sample between ranks that
 * all run under quotas.  The report keeps what the compute measured. */
static double ob_api_quota_compute(struct omnibatch_context *c, double compute)
{
    double before, after, own, need, wall;

    if (!(c->cpu.quota > 0.0)) {
        return compute;
    }
    before = (double) (c->cpu.reduced_ns - c->cpu.begin_ns - c->cpu.blocked_ns) * 1e-9;
    after = ob_api_recent_median(c->cpu.after, &c->cpu.after_n, (double) (ob_cpu_ns() - c->cpu.reduced_ns) * 1e-9);
    own = c->wait_sleep ? ob_api_recent_median(c->cpu.own, &c->cpu.own_n,
                                               (double) (c->cpu.next_step_ns + c->cpu.blocked_ns) * 1e-9)
                        : 0.0;
    need = (before + after + own) / c->cpu.quota;
    wall = ob_api_least_wall(c, compute);

    if (0 != c->cpu.entry_ns) {
        (void) ob_api_recent_median(c->cpu.post, &c->cpu.post_n,
                                    before - (double) (c->cpu.entry_ns - c->cpu.begin_ns) * 1e-9);
    }
    return need > wall ? need : wall;
}

/* The record's blocked time: the mean over the measured steps closed since
 * the last exchange; before any, the last (warm-up) step's, without which
 * the reduction would look free to the first decision, and a change that
 * saves microseconds of compute on a step spent in the reduction would be
 * made. */
double ob_measure_blocked_mean(const struct omnibatch_context *c)
{
    return c->compute_n > 0 ? c->blocked_sum / (double) c->compute_n : c->stats.blocked_s;
}

/* A step's sample into \p est (a probe where the rank was \p parked: the
 * only news of its speed); its news (OB_MEASURE_NEWS_*), 0 for none. */
static int ob_api_sample_add(ob_estimator *est, int parked, double batch, double compute)
{
    const int first = 0 == ob_estimator_count(est);
    ob_sample_verdict v = parked ? ob_estimator_add_probe(est, batch, compute) : ob_estimator_add(est, batch, compute);

    ob_log_debug(3, "step's sample: %g in %g s, verdict %d (0 used, 2 held back, 3 a change), %ld kept", batch,
                 compute, (int) v, ob_estimator_count(est));
    if (OB_SAMPLE_CHANGE == v) {
        return OB_MEASURE_NEWS_CHANGE;
    }
    return first && ob_estimator_count(est) > 0 ? OB_MEASURE_NEWS_FIRST : 0;
}

/* ob_api_quota_compute() as it will answer, looked at from the start of the
 * step's first gradient allreduce (CPU \p cpu_now): the CPU to there, the
 * median of the last steps' from there to the reduction's end, the medians
 * of the last steps' after it and in next_step and the waits; nothing
 * written. */
static double ob_api_quota_peek(const struct omnibatch_context *c, double compute, uint64_t cpu_now)
{
    double before, after, own, need, wall;

    if (!(c->cpu.quota > 0.0)) {
        return compute;
    }
    before = (double) (cpu_now - c->cpu.begin_ns - c->cpu.blocked_ns) * 1e-9
             + ob_api_ring_median(c->cpu.post, c->cpu.post_n);
    after = ob_api_ring_median(c->cpu.after, c->cpu.after_n);
    own = c->wait_sleep ? ob_api_ring_median(c->cpu.own, c->cpu.own_n) : 0.0;
    need = (before + after + own) / c->cpu.quota;
    wall = ob_api_least_wall_peek(c, compute);

    return need > wall ? need : wall;
}

/* Whether the step's sample is the model's to learn: not in the warm-up
 * steps (cold caches, lazy allocation, first-touch teach a speed the rank
 * does not have), not without samples (nothing to say of the per-sample
 * cost), and not when the rank's speed fell inside the step (its chunks saw
 * it: ob_chunk_changed()): that time is of two speeds, and its count is
 * what the others left it.  Beside the next step's, at the new speed and
 * another count, it reads as a line through both: in hetsgd vanish with
 * OMNIBATCH_CHUNK_FLOOR=32 the slowed rank did 129 samples in 0.35 s, most
 * at full speed, then 32 at 1/20 of it in 0.81 s; the first lay within the
 * spread a halved batch allows and was fitted, the two made a model 90%
 * fixed part, and the rank's plan swung between 1 and 129-258 every two
 * steps from then on.  The steps after it, of one speed, show the change. */
static int ob_measure_learns(const struct omnibatch_context *c)
{
    return c->step.global_step >= c->opt.warmup && c->step.count > 0 && !ob_chunk_changed(c);
}

/* The step's sample, \p compute at its count (at its range where it was
 * worked in chunks: ob_chunk_sample()), into \p est: its news. */
static int ob_measure_add(const struct omnibatch_context *c, ob_estimator *est, double compute)
{
    double batch = (double) c->step.count;

    ob_chunk_sample(c, &batch, &compute);
    return ob_api_sample_add(est, c->parked, batch, compute);
}

int ob_measure_look(const struct omnibatch_context *c, uint64_t now, ob_estimator *est, double *compute,
                    int *adds)
{
    const struct ob_step_clock *k = &c->clock;

    *compute = (double) (k->markers ? k->marked_ns + (k->in_mark ? now - k->mark_begin_ns : 0) : k->unmarked_ns)
               * 1e-9;
    if (c->cpu.plan) {
        *compute = ob_api_quota_peek(c, *compute, c->cpu.entry_ns);
    }
    *est = c->est;
    *adds = ob_measure_learns(c);
    return *adds ? ob_measure_add(c, est, *compute) : 0;
}

void ob_measure_close(struct omnibatch_context *c)
{
    uint64_t now = ob_now_ns();
    double compute = -1.0;

    if (!c->have_step) {
        return;
    }
    c->clock.last_reductions = c->clock.reductions;
    c->closed_change = 0;
    if (c->clock.markers) {
        if (c->clock.in_mark) {
            c->clock.marked_ns += now - c->clock.mark_begin_ns;
            c->clock.in_mark = 0;
        }
        compute = (double) c->clock.marked_ns * 1e-9;
    } else if (c->clock.reductions > 0) {
        compute = (double) c->clock.unmarked_ns * 1e-9;
    }
    c->stats.blocked_s = (double) c->clock.blocked_ns * 1e-9;
    /* A step whose gradient went through omnibatch_allreduce_gradient is
     * measured exactly here; one whose code reduced by itself is left to the
     * layer's own detection of its MPI calls. */
    if (c->clock.reductions > 0 && compute >= 0.0) {
        ob_step_note note;

        note.batch = c->step.count;
        note.global_batch = c->global_batch;
        note.calls = c->clock.reductions;
        ob_chunk_moved(c, &note.taken, &note.given);
        note.compute = compute;
        note.blocked = c->stats.blocked_s;
        note.span = (double) (now - c->clock.step_begin_ns) * 1e-9;
        note.reduction = c->reduction;
        note.plan = c->ctl.plan[c->rank];
        note.alpha = c->last_record.alpha;
        note.beta = c->last_record.beta;
        note.model = c->opt.adaptive && c->last_record.samples > 0;
        ob_hook_note_step(&note);
    }
    if (compute >= 0.0 && c->cpu.plan && c->clock.reductions > 0) {
        ob_api_quota_reread(c, now);
        compute = ob_api_quota_compute(c, compute);
    }
    /* What the model learns of the step: ob_measure_learns(). */
    if (0 == c->step.count && 0 == c->ctl.plan[c->rank]) {
        /* Parked (OMNIBATCH_MIN_BATCH=0): nothing computed, nothing learnt.
         * (The plan, not the count: an epoch's short last step may give a
         * working rank no sample.) */
        c->stats.parked_steps++;
        c->parked = 1;
    }
    if (compute >= 0.0 && c->step.global_step >= c->opt.warmup && c->step.count > 0) {
        /* A step of two speeds counts as compute but is not learnt. */
        const int news = ob_measure_learns(c) ? ob_measure_add(c, &c->est, compute) : 0;

        c->parked = 0;
        if (news) {
            c->speed_changed = 1;
            c->closed_change = 1;
        }
        c->stats.compute_s = compute;
        c->stats.compute_total_s += compute;
        c->compute_sum += compute;
        c->blocked_sum += c->stats.blocked_s;
        c->compute_n++;
    }
    c->have_step = 0;
}

OMNIBATCH_EXPORT int omnibatch_compute_begin(omnibatch_t ctx)
{
    const char *fn = "omnibatch_compute_begin";
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (!ctx->have_step) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no step is running: call omnibatch_next_step "
                       "first", fn);
    }
    if (ctx->clock.in_mark) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: called twice without omnibatch_compute_end", fn);
    }
    ctx->clock.markers = 1;
    ctx->clock.in_mark = 1;
    ctx->clock.mark_begin_ns = ob_now_ns();
    return OMNIBATCH_SUCCESS;
}

OMNIBATCH_EXPORT int omnibatch_compute_end(omnibatch_t ctx)
{
    const char *fn = "omnibatch_compute_end";
    uint64_t now = ob_now_ns();
    int rc = ob_api_check_context(fn, ctx);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (!ctx->clock.in_mark) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: no omnibatch_compute_begin to end", fn);
    }
    ctx->clock.marked_ns += now - ctx->clock.mark_begin_ns;
    ctx->clock.in_mark = 0;
    return OMNIBATCH_SUCCESS;
}
