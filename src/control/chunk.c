/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The chunked step's policy (ob_chunk.h): chunk sizes, a thief's share,
 * the order in which a rank asks its peers.
 */
#include "config.h"

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_chunk.h"
#include "ob_error.h"
#include "ob_rng.h"

int ob_chunk_policy_check(const ob_chunk_policy *p)
{
    if (NULL == p) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk policy: NULL");
    }
    if (p->granularity < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk granularity=%ld: expected >= 1", p->granularity);
    }
    if (p->floor < p->granularity || 0 != p->floor % p->granularity) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk floor=%ld: expected a multiple of the granularity %ld, at least "
                       "one", p->floor, p->granularity);
    }
    if (p->divisor < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk divisor=%ld: expected >= 1", p->divisor);
    }
    return OMNIBATCH_SUCCESS;
}

/* ceil(base / divisor) rounded up to the granularity, at least the floor, at most left. */
static long ob_chunk_cut(const ob_chunk_policy *p, long base, long left)
{
    const long g = p->granularity;
    long c = base / p->divisor + (0 != base % p->divisor ? 1 : 0);

    c = (c / g + (0 != c % g ? 1 : 0)) * g;
    c = c < p->floor ? p->floor : c;
    return c < left ? c : left;
}

long ob_chunk_next(const ob_chunk_policy *p, long left)
{
    return left <= 0 ? 0 : ob_chunk_cut(p, left, left);
}

long ob_chunk_next_until(const ob_chunk_policy *p, long left, int64_t own_ns, int64_t until_ns)
{
    if (left <= 0) {
        return 0;
    }
    const int64_t own = own_ns < 1 ? 1 : own_ns;
    const int64_t can = until_ns <= 0 ? 0 : until_ns / own;
    return ob_chunk_cut(p, can < (int64_t) left ? (long) can : left, left);
}

/* ---- the level and a thief's share --------------------------------------- */

#define OB_CHUNK_MAX_AVAIL (INT64_C(1) << 60)
#define OB_CHUNK_MAX_RATE (INT64_C(1) << 36)
#define OB_CHUNK_MAX_SAMPLES (1L << 24)

static int ob_chunk_level_check(int n, const int64_t *avail_ns, const int64_t *ns_per_sample, long samples)
{
    if (n < 1 || NULL == avail_ns || NULL == ns_per_sample) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk level: n=%d: expected >= 1 ranks with their times", n);
    }
    if (samples >= OB_CHUNK_MAX_SAMPLES) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk level: samples=%ld: expected < %ld", samples, OB_CHUNK_MAX_SAMPLES);
    }
    for (int j = 0; j < n; j++) {
        if (avail_ns[j] < 0 || avail_ns[j] >= OB_CHUNK_MAX_AVAIL || ns_per_sample[j] < 1
            || ns_per_sample[j] >= OB_CHUNK_MAX_RATE) {
            return ob_fail(OMNIBATCH_ERR_ARG, "chunk level: rank %d: avail_ns=%lld ns_per_sample=%lld: expected "
                           "avail_ns in [0, 2^60) and ns_per_sample in [1, 2^36)", j, (long long) avail_ns[j],
                           (long long) ns_per_sample[j]);
        }
    }
    return OMNIBATCH_SUCCESS;
}

/* Every rank's quota at T and their sum. */
static long ob_chunk_quotas(int n, const int64_t *avail_ns, const int64_t *ns_per_sample, int64_t T, long *quota)
{
    long sum = 0;
    for (int j = 0; j < n; j++) {
        quota[j] = T > avail_ns[j] ? (long) ((T - avail_ns[j]) / ns_per_sample[j]) : 0;
        sum += quota[j];
    }
    return sum;
}

/* The continuous water level, in floating point: only where the exact
 * search starts.  Ranks free at or after the level take no part in it.
 * \p inv: every rank's samples per ns. */
static double ob_chunk_level_estimate(int n, const int64_t *avail_ns, const double *inv, long samples)
{
    double T = HUGE_VAL;

    for (int round = 0; round <= n; round++) {
        double rate_sum = 0.0;
        double work = (double) samples;
        for (int j = 0; j < n; j++) {
            if ((double) avail_ns[j] < T) {
                rate_sum += inv[j];
                work += (double) avail_ns[j] * inv[j];
            }
        }
        const double next = work / rate_sum;
        if (!(next < T)) {
            break;
        }
        T = next;
    }
    return T;
}

/* Sift heap slot k down: heap[] holds rank indices, the soonest end on top. */
static void ob_chunk_sift(int *heap, int n, int k, const int64_t *ends)
{
    for (;;) {
        int c = 2 * k + 1;
        if (c >= n) {
            return;
        }
        if (c + 1 < n && ends[heap[c + 1]] < ends[heap[c]]) {
            c++;
        }
        if (ends[heap[k]] <= ends[heap[c]]) {
            return;
        }
        const int tmp = heap[k];
        heap[k] = heap[c];
        heap[c] = tmp;
        k = c;
    }
}

/* From quotas below the level summing to sum < samples, with \p ends every
 * rank's next sample's end: one sample's end at a time, the soonest first
 * (a heap of the n ranks), to the least T that holds them; then the ranks
 * whose next sample ends at T exactly count it too. */
static int64_t ob_chunk_level_up(int n, const int64_t *ns_per_sample, long samples, long sum, long *quota,
                                 int64_t *ends, int *heap)
{
    int64_t T = 0;

    for (int j = 0; j < n; j++) {
        heap[j] = j;
    }
    for (int k = n / 2 - 1; k >= 0; k--) {
        ob_chunk_sift(heap, n, k, ends);
    }
    while (sum < samples) {
        const int soonest = heap[0];
        T = ends[soonest];
        ends[soonest] += ns_per_sample[soonest];
        quota[soonest]++;
        sum++;
        ob_chunk_sift(heap, n, 0, ends);
    }
    for (int j = 0; j < n; j++) {
        quota[j] += ends[j] == T;
    }
    return T;
}

/* Scratch for a level of n ranks. */
typedef struct ob_chunk_scratch {
    double *inv;                 /* samples per ns */
    int64_t *ends;               /* when each rank's next sample ends */
    int *heap;
} ob_chunk_scratch;

static int64_t ob_chunk_level_in(int n, const int64_t *avail_ns, const int64_t *ns_per_sample, long samples,
                                 long *quota, const ob_chunk_scratch *w)
{
    double *inv = w->inv;
    int64_t *ends = w->ends;
    int64_t max_rate = 1;

    for (int j = 0; j < n; j++) {
        inv[j] = 1.0 / (double) ns_per_sample[j];
        max_rate = ns_per_sample[j] > max_rate ? ns_per_sample[j] : max_rate;
    }
    /* Start below the level: the estimate, less a sample of the slowest
     * rank each time the quotas there already reach it. */
    int64_t T = (int64_t) ob_chunk_level_estimate(n, avail_ns, inv, samples);
    long sum = ob_chunk_quotas(n, avail_ns, ns_per_sample, T, quota);
    while (sum >= samples && T > 0) {
        T = T > max_rate ? T - max_rate : 0;
        sum = ob_chunk_quotas(n, avail_ns, ns_per_sample, T, quota);
    }
    for (int j = 0; j < n; j++) {
        ends[j] = avail_ns[j] + (int64_t) (quota[j] + 1) * ns_per_sample[j];
    }
    return ob_chunk_level_up(n, ns_per_sample, samples, sum, quota, ends, w->heap);
}

/* Groups up to this size are levelled without allocating (a node's ranks). */
#define OB_CHUNK_STACK_RANKS 128

int ob_chunk_level(int n, const int64_t *avail_ns, const int64_t *ns_per_sample, long samples, int64_t *level_ns,
                   long *quota)
{
    double inv_stack[OB_CHUNK_STACK_RANKS];
    int64_t ends_stack[OB_CHUNK_STACK_RANKS];
    int heap_stack[OB_CHUNK_STACK_RANKS];
    ob_chunk_scratch w = { inv_stack, ends_stack, heap_stack };
    int rc = ob_chunk_level_check(n, avail_ns, ns_per_sample, samples);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (samples <= 0) {
        *level_ns = 0;
        (void) ob_chunk_quotas(n, avail_ns, ns_per_sample, 0, quota);
        return OMNIBATCH_SUCCESS;
    }
    if (n <= OB_CHUNK_STACK_RANKS) {
        *level_ns = ob_chunk_level_in(n, avail_ns, ns_per_sample, samples, quota, &w);
        return OMNIBATCH_SUCCESS;
    }
    w.inv = malloc((size_t) n * sizeof *w.inv);
    w.ends = malloc((size_t) n * sizeof *w.ends);
    w.heap = malloc((size_t) n * sizeof *w.heap);
    if (NULL != w.inv && NULL != w.ends && NULL != w.heap) {
        *level_ns = ob_chunk_level_in(n, avail_ns, ns_per_sample, samples, quota, &w);
    } else {
        rc = ob_fail(OMNIBATCH_ERR_NOMEM, "chunk level: %d ranks", n);
    }
    free(w.inv);
    free(w.ends);
    free(w.heap);
    return rc;
}

long ob_chunk_share(const ob_chunk_policy *p, long tail, long excess, long quota)
{
    if (tail <= 0 || excess <= 0 || quota <= 0) {
        return 0;
    }
    const long want = excess < quota ? excess : quota;
    const long s = want / p->granularity * p->granularity;
    if (s >= p->floor) {
        return s;
    }
    return want == tail && tail < p->floor ? tail : 0;
}

/* ---- the cost of a chunk ------------------------------------------------- */

/* A chunk into \p c; \p first: the step's first, whose time stands for its
 * size only while no later chunk of that size has come (ob_chunk_cost). */
static void ob_chunk_cost_put(ob_chunk_cost *c, long n, double seconds, int first)
{
    int i = 0;

    if (n <= 0 || !(seconds >= 0.0)) {
        return;
    }
    c->w += 1.0;
    c->n += (double) n;
    c->t += seconds;
    while (i < c->sizes && c->size[i] != n) {
        i++;
    }
    if (i == c->sizes) {
        if (OB_CHUNK_COST_SIZES == c->sizes) {
            return;
        }
        c->sizes++;
        c->size[i] = n;
        c->count[i] = 0;
        c->least[i] = seconds;
        c->first[i] = (char) first;
    } else if (!first) {
        c->least[i] = c->first[i] || seconds < c->least[i] ? seconds : c->least[i];
        c->first[i] = 0;
    }
    c->count[i]++;
}

void ob_chunk_cost_add(ob_chunk_cost *c, long n, double seconds)
{
    ob_chunk_cost_put(c, n, seconds, 0);
}

void ob_chunk_cost_add_first(ob_chunk_cost *c, long n, double seconds)
{
    ob_chunk_cost_put(c, n, seconds, 1);
}

/* The fit's sums over the chunks of the sizes kept, each chunk's time the
 * least of its size's: w, n, t, nn, nt. */
typedef struct ob_chunk_sums {
    double w, n, t, nn, nt;
} ob_chunk_sums;

static ob_chunk_sums ob_chunk_cost_sums(const ob_chunk_cost *c)
{
    ob_chunk_sums s = { 0.0, 0.0, 0.0, 0.0, 0.0 };

    for (int i = 0; i < c->sizes; i++) {
        const double w = (double) c->count[i], x = (double) c->size[i], t = c->least[i];

        s.w += w;
        s.n += w * x;
        s.t += w * t;
        s.nn += w * x * x;
        s.nt += w * x * t;
    }
    return s;
}

/* ob_chunk_cost_fit() on the sums \p s. */
static int ob_chunk_sums_fit(const ob_chunk_sums *s, double *a, double *b)
{
    double var, cov, slope, cut;

    *a = 0.0;
    *b = 0.0;
    if (!(s->w > 0.0)) {
        return 0;
    }
    /* Centred: var and cov of (n, t) times w.  Sizes that differ by a
     * thousandth of their mean's square or less determine no slope. */
    var = s->nn - s->n * s->n / s->w;
    cov = s->nt - s->n * s->t / s->w;
    if (!(var > 1e-3 * s->nn / s->w) || !(cov > 0.0)) {
        return 0;
    }
    slope = cov / var;
    cut = (s->t - slope * s->n) / s->w;
    if (cut < 0.0) {
        /* No fixed part: the time in proportion to the samples. */
        cut = 0.0;
        slope = s->nt / s->nn;
    }
    *a = cut;
    *b = slope;
    return 1;
}

int ob_chunk_cost_fit(const ob_chunk_cost *c, double *a, double *b)
{
    const ob_chunk_sums s = ob_chunk_cost_sums(c);

    return ob_chunk_sums_fit(&s, a, b);
}

int ob_chunk_worth_step(ob_chunk_worth *m, const ob_chunk_cost *step, double keep, double *a, double *b)
{
    const ob_chunk_sums s = ob_chunk_cost_sums(step);
    double fa, fb, r;

    if (ob_chunk_sums_fit(&s, &fa, &fb)) {
        /* Determined: w > 0, and the sizes' centred sum of squares too. */
        const double mean = s.n / s.w;
        const double weight = 1.0 / (1.0 / s.w + mean * mean / (s.nn - s.n * mean));

        m->sum = m->sum * keep + weight * fa / fb;
        m->w = m->w * keep + weight;
        if (weight >= OB_CHUNK_WORTH_WEIGHT) {
            memmove(&m->latest[1], &m->latest[0], (OB_CHUNK_WORTH_STEPS - 1) * sizeof m->latest[0]);
            m->latest[0] = fa / fb;
            m->steps += m->steps < OB_CHUNK_WORTH_STEPS;
        }
    }
    *a = 0.0;
    *b = 0.0;
    if (!(m->w > 0.0) || !(step->w > 0.0) || !(step->t > 0.0)) {
        return 0;
    }
    r = m->sum / m->w;
    *b = step->t / (step->w * r + step->n);
    *a = r * *b;
    return 1;
}

_Static_assert(3 == OB_CHUNK_WORTH_STEPS, "the floor's worth is a median of three");

double ob_chunk_worth_floor(const ob_chunk_worth *m, double *share)
{
    const double x = m->latest[0], y = m->latest[1], z = m->latest[2];

    if (m->steps < OB_CHUNK_WORTH_STEPS) {
        *share = OB_CHUNK_COST_SHARE_UNSURE;
        return m->w > 0.0 ? m->sum / m->w : 0.0;
    }
    *share = OB_CHUNK_COST_SHARE;
    /* The median of three: the sum less the least and the most. */
    return x + y + z - fmin(x, fmin(y, z)) - fmax(x, fmax(y, z));
}

long ob_chunk_cost_floor(double a, double b, double share, long granularity, long limit)
{
    const long g = granularity > 0 ? granularity : 1;
    const long top = limit > g ? limit : g;
    double need;
    long n;

    if (!(a > 0.0) || !(b > 0.0) || !(share > 0.0 && share < 1.0)) {
        return g;
    }
    /* A fit's rounding (a / b a hair above a whole number) costs no granule. */
    need = ceil(a * (1.0 - share) / (share * b) * (1.0 - 1e-9));
    if (!(need < (double) top)) {
        return top;
    }
    n = (long) need;
    n = (n + g - 1) / g * g;
    n = n < g ? g : n;
    return n < top ? n : top;
}

long ob_chunk_whole_floor(ob_chunk_worth *m, int *whole, long floor_cost, long range, long least, long granularity)
{
    const long g = granularity > 0 ? granularity : 1;
    const long probe = ((long) ceil((double) range * OB_CHUNK_WHOLE_PROBE) + g - 1) / g * g;
    double worth;

    if (floor_cost < range || range < OB_CHUNK_WHOLE_LEAST * (least > g ? least : g)) {
        *whole = 0;
        return floor_cost;
    }
    if (++*whole <= OB_CHUNK_WHOLE_STEPS) {
        return floor_cost;
    }
    *whole = 0;
    /* The worth whose floor is the probe: n = r (1 - s) / s. */
    worth = (double) probe * OB_CHUNK_COST_SHARE / (1.0 - OB_CHUNK_COST_SHARE);
    for (int i = 0; i < OB_CHUNK_WORTH_STEPS; i++) {
        m->latest[i] = worth;
    }
    m->steps = OB_CHUNK_WORTH_STEPS;
    m->w = m->w > 0.0 ? m->w : 1.0;
    m->sum = worth * m->w;
    return probe;
}

/* The time a chunk of \p n samples would take at the pace of the \p
 * before samples in \p chunks chunks that took \p before_s (ob_chunk_slower());
 * -1 where there is no measure. */
static double ob_chunk_expected(long n, long before, long chunks, double before_s, double a, double fit_b)
{
    double b;

    if (n <= 0 || before <= 0 || chunks <= 0 || !(before_s > 0.0)) {
        return -1.0;
    }
    a = a > 0.0 ? a : 0.0;
    if (a > 0.0 && fit_b > 0.0) {
        /* Chunks before that ran slower than the fit says ran on a slower
         * machine, whose fixed part is as much slower as its samples: a
         * rank slowed 20x since before the step began pays 20x the fixed
         * part on each chunk, and a small chunk after a large one is no
         * slow-down of the rank. */
        const double slow = before_s / ((double) chunks * a + (double) before * fit_b);

        a = slow > 1.0 ? a * slow : a;
    }
    b = (before_s - (double) chunks * a) / (double) before;
    if (!(b > 0.0)) {
        /* The fixed parts are all the time before: judge by them alone. */
        b = 0.0;
    }
    return a + (double) n * b;
}

int ob_chunk_slower(long n, double seconds, long before, long chunks, double before_s, double a, double fit_b,
                    double factor)
{
    const double expected = ob_chunk_expected(n, before, chunks, before_s, a, fit_b);

    return expected >= 0.0 && seconds > 0.0 && seconds > factor * expected;
}

int ob_chunk_faster(long n, double seconds, long before, long chunks, double before_s, double a, double fit_b,
                    double factor)
{
    const double expected = ob_chunk_expected(n, before, chunks, before_s, a, fit_b);

    return expected > 0.0 && seconds > 0.0 && factor * seconds < expected;
}

/* ---- whom to ask ---------------------------------------------------------- */

int ob_chunk_layout_check(const ob_chunk_layout *l)
{
    if (NULL == l) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: NULL");
    }
    if (l->nranks < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: nranks=%d: expected >= 1", l->nranks);
    }
    if (l->per_node < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "chunk layout: per_node=%d: expected >= 1", l->per_node);
    }
    return OMNIBATCH_SUCCESS;
}

/* The first rank of \p rank's node and how many ranks it holds. */
static void ob_chunk_node_of(const ob_chunk_layout *l, int rank, int *first, int *count)
{
    *first = rank / l->per_node * l->per_node;
    *count = l->nranks - *first < l->per_node ? l->nranks - *first : l->per_node;
}

int ob_chunk_node_peers(const ob_chunk_layout *l, int rank)
{
    int first;
    int count;

    if (rank < 0 || rank >= l->nranks) {
        return 0;
    }
    ob_chunk_node_of(l, rank, &first, &count);
    return count - 1;
}

static uint64_t ob_chunk_gcd(uint64_t a, uint64_t b)
{
    while (0 != b) {
        const uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Position j of a permutation of [0, m) fixed by (seed, rank): j -> a j + c
 * mod m, with a coprime to m so every position comes once. */
static uint64_t ob_chunk_affine(uint64_t seed, int rank, uint64_t m, uint64_t j)
{
    uint64_t x = seed ^ ((uint64_t) rank * UINT64_C(0x9e3779b97f4a7c15));
    uint64_t a = 1;
    const uint64_t c = ob_rng_splitmix64(&x) % m;

    if (m > 2) {
        a = 1 + ob_rng_splitmix64(&x) % (m - 1);
        while (1 != ob_chunk_gcd(a, m)) {
            a = a % (m - 1) + 1;
        }
    }
    /* a, j < m <= 2^31: the product fits. */
    return (a * j + c) % m;
}

int ob_chunk_victim(const ob_chunk_layout *l, int rank, long k)
{
    int first;
    int count;

    if (rank < 0 || rank >= l->nranks || k < 0 || k >= (long) l->nranks - 1) {
        return -1;
    }
    ob_chunk_node_of(l, rank, &first, &count);
    if (k < count - 1) {
        return first + (int) ((rank - first + 1 + k) % count);
    }
    /* The other nodes' ranks as [0, m): those below the node, then those above. */
    const uint64_t m = (uint64_t) l->nranks - (uint64_t) count;
    const uint64_t idx = ob_chunk_affine(l->seed, rank, m, (uint64_t) (k - (count - 1)));
    return idx < (uint64_t) first ? (int) idx : (int) idx + count;
}
