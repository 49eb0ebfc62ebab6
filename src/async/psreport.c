/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The asynchronous run's report and trace rows (ob_psreport.h).
 */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "ob_error.h"
#include "ob_psreport.h"

double ob_psreport_spread(const ob_psreport *r)
{
    double lo = INFINITY, hi = 0.0;

    for (int w = 0; w < r->workers; w++) {
        if (r->worker[w].pushes < 1) {
            return 0.0;
        }
        lo = r->worker[w].staleness_mean < lo ? r->worker[w].staleness_mean : lo;
        hi = r->worker[w].staleness_mean > hi ? r->worker[w].staleness_mean : hi;
    }
    /* All fresh (one worker, or none stale): no spread. */
    return lo > 0.0 ? hi / lo : 1.0;
}

static long ob_psreport_lost(const ob_psreport *r)
{
    return r->pushes - r->applied - r->dropped;
}

static double ob_psreport_rate(double n, double seconds)
{
    return seconds > 0.0 ? n / seconds : 0.0;
}

static double ob_psreport_samples(const ob_psreport *r)
{
    double n = 0.0;

    for (int w = 0; w < r->workers; w++) {
        n += (double) r->worker[w].samples;
    }
    return n;
}

/* What the batches sum to now: the global batch unless grown (a report
 * filled without it counts as not grown). */
static long ob_psreport_sum(const ob_psreport *r)
{
    return r->total > r->batch ? r->total : r->batch;
}

static int ob_psreport_done(FILE *f)
{
    return ferror(f) ? ob_fail(OMNIBATCH_ERR_IO, "the report's stream failed") : OMNIBATCH_SUCCESS;
}

int ob_psreport_write_text(FILE *f, const ob_psreport *r)
{
    fprintf(f, "omnibatch: asynchronous run: %d server%s, %d worker%s, %ld pushes in %.2f s: %ld applied "
            "(%.1f updates/s), %ld dropped (staler than %ld updates), %ld lost; %.0f samples/s; server "
            "busy %.1f%%\n", r->servers, 1 == r->servers ? "" : "s", r->workers, 1 == r->workers ? "" : "s",
            r->pushes, r->elapsed_s, r->applied, ob_psreport_rate((double) r->applied, r->elapsed_s),
            r->dropped, r->max_staleness, ob_psreport_lost(r),
            ob_psreport_rate(ob_psreport_samples(r), r->elapsed_s), 100.0 * r->busy_fraction);
    fprintf(f, "omnibatch:   worker  rank   pushes  applied  dropped  samples/s  staleness mean    p99    max"
            "  batch\n");
    for (int w = 0; w < r->workers; w++) {
        const ob_psreport_worker *x = &r->worker[w];

        fprintf(f, "omnibatch:   %6d %5d %8ld %8ld %8ld %10.1f %15.2f %6ld %6ld %6ld\n", w, x->rank,
                x->pushes, x->applied, x->dropped, x->samples_per_s, x->staleness_mean, x->staleness_p99,
                x->staleness_max, x->batch);
    }
    fprintf(f, "omnibatch:   the workers' mean staleness spreads %.2fx (largest / least); the step shrinks "
            "for staleness by the %s rule; batches: %s, %ld decisions, %ld moved them\n",
            ob_psreport_spread(r), r->staleness_rule,
            r->adaptive ? "equal push rates" : "fixed (as set)", r->decisions, r->changes);
    if (ob_psreport_sum(r) > r->batch) {
        fprintf(f, "omnibatch:   the batches sum to %ld, grown from the global batch %ld (max_global_batch "
                "%ld) so that a worker at its least batch pushes as often as the others\n", r->total, r->batch,
                r->max_total);
    }
    if (r->bound && r->bound_worker >= 0 && r->bound_worker < r->workers) {
        fprintf(f, "omnibatch:   worker %d (rank %d) is held at its least batch, %ld, and still cycles in %.3g ms "
                "against the others' %.3g ms: no split of %s %ld equalises the push rates; one "
                "of about %ld would%s\n", r->bound_worker, r->worker[r->bound_worker].rank, r->bound_batch,
                1e3 * r->bound_cycle_s, 1e3 * r->bound_level_s,
                ob_psreport_sum(r) > r->batch ? "the batches' sum" : "the global batch", ob_psreport_sum(r),
                r->bound_need, r->max_total > r->batch ? "" : " (max_global_batch allows a larger sum)");
    }
    return ob_psreport_done(f);
}

static void ob_psreport_json_worker(FILE *f, const ob_psreport_worker *x, int last)
{
    fprintf(f, "      {\"rank\": %d, \"pushes\": %ld, \"applied\": %ld, \"dropped\": %ld, \"samples\": %ld, "
            "\"samples_per_s\": %.6g, \"staleness_mean\": %.6g, \"staleness_p99\": %ld, "
            "\"staleness_max\": %ld, \"batch\": %ld, \"compute_s\": %.6g}%s\n", x->rank, x->pushes,
            x->applied, x->dropped, x->samples, x->samples_per_s, x->staleness_mean, x->staleness_p99,
            x->staleness_max, x->batch, x->compute_s, last ? "" : ",");
}

int ob_psreport_write_json(FILE *f, const ob_psreport *r)
{
    fprintf(f, "{\n  \"async\": {\n");
    fprintf(f, "    \"servers\": %d,\n    \"workers\": %d,\n    \"elapsed_s\": %.6g,\n", r->servers,
            r->workers, r->elapsed_s);
    fprintf(f, "    \"pushes\": %ld,\n    \"applied\": %ld,\n    \"dropped\": %ld,\n    \"lost\": %ld,\n",
            r->pushes, r->applied, r->dropped, ob_psreport_lost(r));
    fprintf(f, "    \"updates_per_s\": %.6g,\n    \"samples_per_s\": %.6g,\n    \"busy_fraction\": %.6g,\n",
            ob_psreport_rate((double) r->applied, r->elapsed_s),
            ob_psreport_rate(ob_psreport_samples(r), r->elapsed_s), r->busy_fraction);
    fprintf(f, "    \"max_staleness\": %ld,\n    \"staleness_rule\": \"%s\",\n    \"staleness_spread\": %.6g,\n",
            r->max_staleness, r->staleness_rule, ob_psreport_spread(r));
    fprintf(f, "    \"adaptive\": %s,\n    \"decisions\": %ld,\n    \"changes\": %ld,\n",
            r->adaptive ? "true" : "false", r->decisions, r->changes);
    fprintf(f, "    \"global_batch\": %ld,\n    \"batch_sum\": %ld,\n    \"max_global_batch\": %ld,\n", r->batch,
            ob_psreport_sum(r), r->max_total > r->batch ? r->max_total : r->batch);
    if (r->bound && r->bound_worker >= 0 && r->bound_worker < r->workers) {
        fprintf(f, "    \"bound\": {\"worker\": %d, \"batch\": %ld, \"cycle_s\": %.6g, \"level_s\": %.6g, "
                "\"global_batch_needed\": %ld},\n", r->bound_worker, r->bound_batch, r->bound_cycle_s,
                r->bound_level_s, r->bound_need);
    } else {
        fprintf(f, "    \"bound\": null,\n");
    }
    fprintf(f, "    \"worker\": [\n");
    for (int w = 0; w < r->workers; w++) {
        ob_psreport_json_worker(f, &r->worker[w], w + 1 == r->workers);
    }
    fprintf(f, "    ]\n  }\n}\n");
    return ob_psreport_done(f);
}

const char *ob_psreport_trace_header(void)
{
    return "push,t_s,worker,rank,batch,staleness,applied,scale,version,compute_s,wait_s\n";
}

size_t ob_psreport_trace_row(char *buf, size_t size, const ob_psreport_push *p)
{
    int n = snprintf(buf, size, "%ld,%.6f,%d,%d,%ld,%ld,%d,%.6g,%ld,%.6g,%.6g\n", p->push, p->t_s, p->worker,
                     p->rank, p->batch, p->staleness, p->applied, p->scale, p->version, p->compute_s,
                     p->wait_s);

    return n > 0 && (size_t) n < size ? (size_t) n : 0;
}
