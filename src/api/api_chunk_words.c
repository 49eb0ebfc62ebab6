/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Work that moves inside a step, within a node (ob_api_chunk.h): every rank
 * has one 64-bit word in a shared window, the range it works now, as
 *
 *     generation (4 bits) | next (30 bits) | end (30 bits)
 *
 * positions within the step.  The owner claims a chunk by moving next up,
 * a thief takes a tail by moving end down, each with one compare-and-swap:
 * whoever's swap lands first wins, the other reads the word again, so no
 * position is ever handed out twice and the rank that is behind is never
 * asked.  A thief then holds the tail it took in its own word, where it
 * works it the same way (and where a third rank may take from it in turn).
 *
 * The generation is the step's count since create, modulo 16, the same on
 * every rank.  A word of another generation belongs to a rank that has not
 * begun this step yet: it stands for that rank's whole range in the plan
 * (every rank holds the same plan), so it may be taken from before its
 * owner arrives; the owner then starts from what is left.  No rank can be a
 * step ahead of another that still claims: the step before ended in the
 * gradient's reduction over every rank, which no rank leaves before every
 * rank entered it, and a rank enters it only once it has answered count 0.
 *
 * Chunk sizes: half of what is left, at most the cap on the rank's own
 * range (a sixteenth of the
 * rank's plan for a whole step: a rank that slows down 20x mid-step holds up one such chunk,
 * about 1.25 of its steps, or the floor where that is larger), at least the
 * floor (api_chunk.c: raised where a chunk's fixed cost would weigh), in
 * granules, and the rest of the range with it where that is below the
 * floor.  A thief takes
 * from the rank whose expected time left is the longest (what is left over
 * its rate in the step: what it claimed over the time since it began (its
 * plan, before its first claim), or the thief's rate in proportion to the
 * plans before it has begun, and
 * at most its latest claim over the time since it made it; what it has yet
 * to do of the chunk it holds counted), the share that makes both expect
 * to finish together, at most what the thief can do before the node's
 * ranges are expected done, when that is at least the least share
 * (ob_words_least()); below it, the whole tail of a rank less than half as
 * fast as the thief, or the least share where the two alone would share at
 * least that.  A rank whose latest chunk ran at less than half its pace in the
 * step (the chunks' fixed part counted, ob_chunk_slower()) claims one
 * granule: a rank that slows down 20x mid-step then holds up the rest of
 * the chunk it was in and one granule, no full chunk more.  A rank less
 * than half as fast as its node's mean, any rank on a range it took, and
 * a rank whose range would take it longer than the node's, claims by the
 * time the node's ranges are expected done (ob_words_by_time()).
 */
#include "config.h"

#include <limits.h>
#include <math.h>

#include "ob_api_chunk.h"
#include "ob_timing.h"

/* A rank whose latest chunk ran this many times slower than its step so far
 * has slowed down; a thief takes a whole tail below the floor from a rank
 * this many times slower than itself. */
#define OB_WORDS_SLOWER 2.0
/* A thief's least share under the automatic floor, in chunks' fixed parts
 * (ob_words_least()): that part at most a quarter of the share's time. */
#define OB_WORDS_LEAST_WORTHS 3.0
/* A rank whose own range would take it this many times as long as the
 * node's ranges are expected to take claims by time (ob_words_by_time()). */
#define OB_WORDS_BEHIND 1.25

static uint64_t ob_words_pack(uint64_t gen, long next, long end)
{
    return (gen << OB_CHUNK_GEN_SHIFT) | ((uint64_t) next << OB_CHUNK_POS_BITS) | (uint64_t) end;
}

static int ob_words_current(const struct ob_chunks *k, uint64_t w)
{
    return ((w >> OB_CHUNK_GEN_SHIFT) & OB_CHUNK_GEN_MASK) == k->gen;
}

/* Node rank j's range as word \p w tells it: the word's, or the plan's
 * where the word is of an earlier step (j has not begun this one). */
static void ob_words_unpack(const struct ob_chunks *k, int j, uint64_t w, long *next, long *end)
{
    if (ob_words_current(k, w)) {
        *next = (long) ((w >> OB_CHUNK_POS_BITS) & OB_CHUNK_POS_MASK);
        *end = (long) (w & OB_CHUNK_POS_MASK);
    } else {
        *next = k->first[j];
        *end = k->first[j] + k->plan[j];
    }
}

long ob_words_granules(const struct ob_chunks *k, long n)
{
    return (n + k->granularity - 1) / k->granularity * k->granularity;
}

/* The next chunk of a range with \p left samples: half of it, at most the
 * cap on the rank's own range, at least the floor, in granules; the whole
 * range where less than the floor would be left after it.  A range taken
 * from another rank was sized to end with its owner's, at the pace the
 * thief has shown in the step: cut in sixteenths of the thief's plan, under
 * jitter a rank worked 20.1 chunks a step (17.7 then), each paying the
 * chunk's fixed part.  A rest below the floor on its own paid a whole
 * chunk's fixed part for a few samples (halves of 9 at a floor of 8: 8 and
 * 1; a taken 72 at 16: 36, 18, 16 and 2). */
static long ob_words_size(const struct ob_chunks *k, long left)
{
    long n = (left + 1) / 2;

    n = n > k->cap && k->holder == k->rank ? k->cap : n;
    n = n < k->floor ? k->floor : n;
    n = ob_words_granules(k, n);
    return n < left && left - n >= k->floor ? n : left;
}

/* Whether this rank's latest chunk ran at less than 1 / OB_WORDS_SLOWER of
 * its rate in the step before it: it slowed down inside the step, and its
 * next chunk is one granule, the least it can hold up the step with (the
 * others take what it leaves), below the floor: at 1/20 of its speed a
 * floor's chunk would cost the step as much as the chunk it was in.  No
 * measure before the step's second chunk. */
int ob_words_slowed(const struct ob_chunks *k, uint64_t now)
{
    const uint64_t begin = k->slot[k->me].begin_ns;

    if (k->last <= 0 || k->last_ns <= begin || now <= k->last_ns) {
        return 0;
    }
    return ob_chunk_slower(k->last, (double) (now - k->last_ns) * 1e-9, k->done - k->last, k->chunks - 1,
                           (double) (k->last_ns - begin) * 1e-9, k->fixed_s, k->fixed_b, OB_WORDS_SLOWER);
}

/* The step's first chunk carries its start (cold caches, a late start: in
 * the tests a third chunk, unchanged, ran at twice the pace of the first
 * two), and is left out. */
int ob_words_faster(const struct ob_chunks *k, uint64_t now)
{
    if (k->chunks < 3 || k->last <= 0 || k->first_ns <= 0 || k->last_ns <= k->first_ns || now <= k->last_ns) {
        return 0;
    }
    return ob_chunk_faster(k->last, (double) (now - k->last_ns) * 1e-9, k->done - k->last - k->first_done,
                           k->chunks - 2, (double) (k->last_ns - k->first_ns) * 1e-9, k->fixed_s, k->fixed_b,
                           OB_WORDS_SLOWER);
}

static double ob_words_rate_now(const struct ob_chunks *k, int j, uint64_t now);

/* Node rank j's claims in the step as a rate: what it claimed over the time
 * since it began, at most its latest claim's rate (ob_words_rate_now()); 0
 * where it has begun but claimed nothing yet (\p since: the seconds since it
 * began), -1 where it has not begun the step. */
static double ob_words_claimed(const struct ob_chunks *k, int j, uint64_t now, double *since)
{
    const uint64_t done = __atomic_load_n(&k->slot[j].done, __ATOMIC_ACQUIRE);
    const uint64_t begin = __atomic_load_n(&k->slot[j].begin_ns, __ATOMIC_ACQUIRE);
    const long claimed = (long) (done & OB_CHUNK_POS_MASK);
    double seen, lately;

    if (!ob_words_current(k, done) || now <= begin) {
        return -1.0;
    }
    *since = (double) (now - begin) * 1e-9;
    if (claimed <= 0) {
        return 0.0;
    }
    seen = (double) claimed / *since;
    lately = ob_words_rate_now(k, j, now);
    return lately < seen ? lately : seen;
}

/* \p self's rate in proportion to the plans: what node rank j would do at
 * its pace. */
static double ob_words_planned(const struct ob_chunks *k, int j, const ob_chunk_thief *self)
{
    return self->plan > 0 ? self->rate * (double) k->plan[j] / (double) self->plan : self->rate;
}

/* Node rank j's rate as seen in the step (ob_words_claimed()); before its
 * first claim \p self's in proportion to the plans.  Not bounded by \p
 * self's (a thief's view, ob_words_rate()): a rank 30x slower than the rest
 * reads them as fast as they are. */
static double ob_words_rate_seen(const struct ob_chunks *k, int j, uint64_t now, const ob_chunk_thief *self)
{
    double since = 0.0;
    const double seen = ob_words_claimed(k, j, now, &since);

    return seen > 0.0 ? seen : ob_words_planned(k, j, self);
}

/* What the node's words hold, in \p left, and its ranks' rates summed, in
 * \p rates (this rank's its rate as a thief, \p self): the node's ranges
 * are expected done in left / rates. */
static void ob_words_node_left(const struct ob_chunks *k, uint64_t now, const ob_chunk_thief *self, double *left,
                               double *rates)
{
    *left = 0.0;
    *rates = 0.0;
    for (int j = 0; j < k->nnode; j++) {
        long next, end;

        ob_words_unpack(k, j, __atomic_load_n(&k->slot[j].range, __ATOMIC_ACQUIRE), &next, &end);
        *left += end > next ? (double) (end - next) : 0.0;
        *rates += j == k->me ? self->rate : ob_words_rate_seen(k, j, now, self);
    }
}

static long ob_words_least(const struct ob_chunks *k);

/* The most a rank claims by time: half of what it can do, at its rate in
 * the step, before the node's ranges are expected done (what they hold over
 * their owners' rates summed), at least one granule; LONG_MAX where that
 * does not apply.  It applies to a rank less than 1 / OB_WORDS_SLOWER as
 * fast as its node's mean, on any range; and, at least the least share a
 * thief takes (ob_words_least()), to a rank on a range it took, and to one
 * whose own range would take it OB_WORDS_BEHIND times as long as the
 * node's (its plan too large for its speed); not on another rank's own
 * range (its chunks end before the others', or with them: every rank's
 * chunks cut by time cost the steady step of vanish 1%), before it has a
 * rate, or under a quota (a busy rank's chunks are sized to its periods).
 * A chunk in flight is the one thing no thief can take: under jitter a rank
 * 10x slower than the rest in a step kept claiming a sixteenth of its plan,
 * and the others waited for its last one (0.10 s of a 0.66 s step); a thief
 * that took a slowed rank's tail sized for the two of them alone (589 of
 * its 700 left at 1/4 of the speed, three ranks free) worked half of it in
 * one chunk of 295 while the other two took the rest from it in pieces,
 * and the step ended with that chunk 0.07 s after them; and a rank slowed
 * to two thirds of its speed, its plan not yet following, claimed halves
 * of its range at most a sixteenth of that plan, and its last, 62 samples
 * in 0.23 s, ended the step 0.11 s after the others (hetsgd transient and
 * ramp at B = 4096: the steps after a change 1.06-1.08x the oracle's). */
static long ob_words_by_time(const struct ob_chunks *k)
{
    const uint64_t now = ob_now_ns();
    const ob_chunk_thief self = ob_words_thief(k, now);
    const int taken = k->holder != k->rank;
    double left = 0.0, rates = 0.0, can;
    long n, next, end;
    int slow, behind;

    if (k->busy || !(self.rate > 0.0)) {
        return LONG_MAX;
    }
    ob_words_node_left(k, now, &self, &left, &rates);
    if (!(rates > 0.0) || !(rates < 1e200)) {
        return LONG_MAX;
    }
    ob_words_unpack(k, k->me, __atomic_load_n(&k->slot[k->me].range, __ATOMIC_ACQUIRE), &next, &end);
    slow = OB_WORDS_SLOWER * self.rate * (double) k->nnode < rates;
    behind = (double) (end - next) / self.rate > OB_WORDS_BEHIND * left / rates;
    if (!slow && !taken && !behind) {
        return LONG_MAX;
    }
    can = self.rate * left / rates / 2.0;
    if (!(can < (double) LONG_MAX / 2)) {
        return LONG_MAX;
    }
    n = ob_words_granules(k, (long) ceil(can));
    n = n > k->granularity ? n : k->granularity;
    if (!slow) {
        const long least = ob_words_least(k);

        n = n < least ? least : n;
    }
    return n;
}

long ob_words_claim(struct ob_chunks *k, long *start)
{
    uint64_t *word = &k->slot[k->me].range;
    uint64_t w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    /* A slowed rank one granule (by time it would be at least that). */
    const long most = k->slowed ? k->granularity : ob_words_by_time(k);

    for (;;) {
        long next, end, n;

        ob_words_unpack(k, k->me, w, &next, &end);
        if (next >= end) {
            return 0;
        }
        n = ob_words_size(k, end - next);
        n = n > most ? most : n;
        if (__atomic_compare_exchange_n(word, &w, ob_words_pack(k->gen, next + n, end), 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            k->prev = k->last;
            k->last = n;
            *start = next;
            return n;
        }
    }
}

ob_chunk_thief ob_words_thief(const struct ob_chunks *k, uint64_t now)
{
    const uint64_t begin = k->slot[k->me].begin_ns;
    ob_chunk_thief t;

    t.rate = now > begin && k->done > 0 ? (double) k->done / ((double) (now - begin) * 1e-9) : 0.0;
    t.plan = k->plan[k->me];
    t.quota_bound = 0;
    /* Under a CPU quota, at most the rate the quota sustains: the samples
     * over the CPU they took, times the quota.  In the part of a period the
     * kernel lets it run a rank does samples as fast as a free one; what it
     * took on that pace it would do after the period's stopped rest. */
    if (k->quota > 0.0 && t.rate > 0.0) {
        const uint64_t cpu = ob_cpu_ns();

        if (cpu > k->cpu_begin_ns) {
            const double sustained = (double) k->done / ((double) (cpu - k->cpu_begin_ns) * 1e-9) * k->quota;

            t.quota_bound = k->busy && sustained < t.rate;
            t.rate = sustained < t.rate ? sustained : t.rate;
        }
    }
    return t;
}

/* At most node rank j's rate now, from its latest claim: that chunk over
 * the time since j claimed it, j being still on it or just past it; none
 * (a huge rate) before j's first claim of the step.  A rank that slowed
 * down inside its chunk shows it here, while its rate over the step still
 * counts the samples it did at its old speed. */
static double ob_words_rate_now(const struct ob_chunks *k, int j, uint64_t now)
{
    const uint64_t last = __atomic_load_n(&k->slot[j].last, __ATOMIC_ACQUIRE);
    const uint64_t at = __atomic_load_n(&k->slot[j].last_ns, __ATOMIC_ACQUIRE);
    const uint64_t n = last & OB_CHUNK_POS_MASK;

    if (!ob_words_current(k, last) || 0 == n || now <= at) {
        return 1e300;
    }
    return (double) n / ((double) (now - at) * 1e-9);
}

/* Node rank j's rate in the step, samples per second: what it claimed over
 * the time since it began, or the thief's in proportion to the plans where
 * that is less (a claim counts the chunk in hand as done: a rate seen is at
 * most what it is) or j has no measure yet; and at most its rate now, so
 * that a rank stalled inside its chunk keeps no more of its range than it
 * can do at that rate.  Before its first claim a rank that has begun counts
 * as if its whole plan were in hand: it may be about to claim (between the
 * step's start and its first chunk, or descheduled there on a crowded
 * node), and read as 0 it lost its whole range to the first thief to look;
 * the longer it goes without a claim, the slower it reads. */
static double ob_words_rate(const struct ob_chunks *k, int j, uint64_t now, const ob_chunk_thief *thief)
{
    const double planned = ob_words_planned(k, j, thief);
    double since = 0.0;
    double seen = ob_words_claimed(k, j, now, &since);

    if (seen < 0.0) {
        return planned;
    }
    seen = seen > 0.0 ? seen : (double) k->plan[j] / since;
    return seen < planned ? seen : planned;
}

/* What node rank j has yet to do of the chunk it holds, at rate \p r: its
 * latest claim less what that rate did since; 0 before its first claim of
 * the step. */
static double ob_words_pending(const struct ob_chunks *k, int j, uint64_t now, double r)
{
    const uint64_t last = __atomic_load_n(&k->slot[j].last, __ATOMIC_ACQUIRE);
    const uint64_t at = __atomic_load_n(&k->slot[j].last_ns, __ATOMIC_ACQUIRE);
    double pending;

    if (!ob_words_current(k, last) || now <= at) {
        return 0.0;
    }
    pending = (double) (last & OB_CHUNK_POS_MASK) - r * (double) (now - at) * 1e-9;
    return pending > 0.0 ? pending : 0.0;
}

/* The share of a tail of \p left samples, its owner's rate \p r and \p
 * pending samples of its chunk in hand still to do, for \p thief: what
 * makes both expect to finish together, at most \p most (ob_words_most()),
 * in granules, when that reaches \p least (ob_words_least(); the floor for
 * a thief of another node); below it, the whole tail when the owner is less than 1 /
 * OB_WORDS_SLOWER as fast as the thief (a rank stalled inside its chunk
 * would do those last samples at its own pace, after it), else \p least
 * where the two of them alone would share at least that, else 0.  The
 * chunk in hand counted: shared as if the owner had only its range left,
 * under jitter the owner ended later than its thieves by what it held.
 * The least share where the bound by the node's end is below it: that
 * bound reads the end from the ranges alone, as if the ranks still on
 * their last chunks were free to help, and a rank that held a chunk and a
 * tail of a few chunks' worth kept them while the others idled (hetsgd
 * ramp at B = 4096, the steps after the plan had followed its fifth
 * change: a rank planned 1.5% above its share gave nothing and ended 60-90
 * ms after the others, 1.05x the oracle's step up to five times in a row).
 * A thief that takes it ends before its owner would have (at most half of
 * what the two have), its owner ends sooner, and the next free rank takes
 * the next such share.  (The other ranks' chunks in hand counted in the
 * node's end instead, tried: a thief's chunks of a stalled rank's tail
 * grew past what test_thieves_share_a_stalled_tail allows, under MPICH.) */
static long ob_words_share(const struct ob_chunks *k, const ob_chunk_thief *thief, long left, double r,
                           double pending, double most, long least)
{
    double pair = ((double) left + pending) * (thief->rate / (thief->rate + r));
    double want;
    long x;

    pair = pair < (double) left ? pair : (double) left;
    want = pair < most ? pair : most;
    x = (long) want / k->granularity * k->granularity;
    if (x >= least && !thief->quota_bound) {
        return x < left ? x : left;
    }
    if (OB_WORDS_SLOWER * r < thief->rate) {
        return left;
    }
    return pair >= (double) least && !thief->quota_bound ? least : 0;
}

/* The least share a thief of this node takes: the floor, or under the
 * automatic floor OB_WORDS_LEAST_WORTHS times the chunk's fixed part in
 * samples (where it is known; in granules, at most the floor).  The floor
 * sizes a rank's chunks so that their fixed parts weigh little in its
 * step; a thief that has done its range and every share it found is idle
 * until the step ends, and a share's fixed part costs only that idle time.
 * With the floor as the least share the step's last rank kept a tail below
 * two floors to itself beside its chunk in hand: 3-4% of a step of 32
 * samples a chunk (hetsgd transient at B = 4096, 37 of 1024: the others
 * idle 0.04 s of a 0.64 s step). */
static long ob_words_least(const struct ob_chunks *k)
{
    double worth;
    long n;

    if (!k->floor_auto || !(k->fixed_s > 0.0) || !(k->fixed_b > 0.0)) {
        return k->floor;
    }
    worth = OB_WORDS_LEAST_WORTHS * k->fixed_s / k->fixed_b;
    if (!(worth < (double) k->floor)) {
        return k->floor;
    }
    n = ob_words_granules(k, (long) ceil(worth));
    return n < k->floor ? n : k->floor;
}

/* The most \p thief takes: what it can do at its rate before the node's
 * ranges are expected done (ob_words_node_left(), the thief's rate added
 * where it is of another node, \p remote).  The share above makes the
 * thief and its victim expect to end together, as if no one else were
 * free: a rank at a quarter of its speed that had done its own range took
 * a floor's chunk of 32 from a rank at full speed and did it in 0.117 s,
 * where the two ranks free beside it would have done it in 0.03 s, and a
 * rank at full speed took the 32 left to a slowed rank while two others
 * were free; each time the step ended with that chunk, 0.03-0.06 s after
 * the others (hetsgd transient at B = 4096). */
static double ob_words_most(const struct ob_chunks *k, const ob_chunk_thief *thief, int remote, uint64_t now)
{
    const ob_chunk_thief self = remote ? ob_words_thief(k, now) : *thief;
    double left, rates;

    ob_words_node_left(k, now, &self, &left, &rates);
    rates += remote ? thief->rate : 0.0;
    if (!(rates > 0.0) || !(rates < 1e200)) {
        return 1e300;
    }
    return thief->rate * left / rates;
}

/* The node rank most behind (the longest expected time left, not \p skip)
 * and its share for the thief (ob_words_share()); -1 when none has one. */
static int ob_words_victim(const struct ob_chunks *k, const ob_chunk_thief *thief, int skip, long *take,
                           uint64_t *seen)
{
    const uint64_t now = ob_now_ns();
    const double most = ob_words_most(k, thief, skip < 0, now);
    /* A thief of another node pays the wire's round trip besides: the floor. */
    const long least = skip < 0 ? k->floor : ob_words_least(k);
    double worst = 0.0;
    int victim = -1;

    for (int j = 0; j < k->nnode; j++) {
        uint64_t w;
        long next, end, x;
        double r, left_s, pending;

        if (j == skip) {
            continue;
        }
        w = __atomic_load_n(&k->slot[j].range, __ATOMIC_ACQUIRE);
        ob_words_unpack(k, j, w, &next, &end);
        if (end <= next) {
            continue;
        }
        r = ob_words_rate(k, j, now, thief);
        pending = ob_words_pending(k, j, now, r);
        left_s = r > 0.0 ? ((double) (end - next) + pending) / r : 1e300;
        x = ob_words_share(k, thief, end - next, r, pending, most, least);
        if (left_s > worst && x > 0) {
            worst = left_s;
            victim = j;
            *take = x;
            *seen = w;
        }
    }
    return victim;
}

int ob_words_take(struct ob_chunks *k, const ob_chunk_thief *thief, int skip, long *start, long *count,
                  int *from)
{
    if (!(thief->rate > 0.0)) {
        return 0;
    }
    for (;;) {
        long take = 0, next, end;
        uint64_t w = 0;
        int j = ob_words_victim(k, thief, skip, &take, &w);

        if (j < 0) {
            return 0;
        }
        ob_words_unpack(k, j, w, &next, &end);
        if (__atomic_compare_exchange_n(&k->slot[j].range, &w, ob_words_pack(k->gen, next, end - take), 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *start = end - take;
            *count = take;
            *from = k->rank_of[j];
            return 1;
        }
        /* The owner or another thief moved first: look again. */
    }
}

void ob_words_hold(struct ob_chunks *k, long start, long count, int from)
{
    /* Nobody swaps an empty word: a plain store publishes the range. */
    __atomic_store_n(&k->slot[k->me].range, ob_words_pack(k->gen, start, start + count), __ATOMIC_RELEASE);
    k->holder = from;
}

void ob_words_begin(struct ob_chunks *k)
{
    uint64_t *word = &k->slot[k->me].range;
    uint64_t w;

    k->seq++;
    k->gen = k->seq & OB_CHUNK_GEN_MASK;
    k->last = 0;
    k->prev = 0;
    k->last_ns = 0;
    /* The start first: a thief that reads this step's generation in done
     * (acquire) then reads this start, not the step before's. */
    __atomic_store_n(&k->slot[k->me].begin_ns, ob_now_ns(), __ATOMIC_RELEASE);
    __atomic_store_n(&k->slot[k->me].last, k->gen << OB_CHUNK_GEN_SHIFT, __ATOMIC_RELEASE);
    __atomic_store_n(&k->slot[k->me].done, k->gen << OB_CHUNK_GEN_SHIFT, __ATOMIC_RELEASE);
    /* The plan's range, unless a thief has begun the word (then it holds
     * what is left). */
    w = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    while (!ob_words_current(k, w)
           && !__atomic_compare_exchange_n(word, &w,
                                           ob_words_pack(k->gen, k->first[k->me], k->first[k->me] + k->plan[k->me]),
                                           0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    }
}

void ob_words_done(struct ob_chunks *k)
{
    k->last_ns = ob_now_ns();
    __atomic_store_n(&k->slot[k->me].last_ns, k->last_ns, __ATOMIC_RELEASE);
    __atomic_store_n(&k->slot[k->me].last, (k->gen << OB_CHUNK_GEN_SHIFT) | (uint64_t) k->last, __ATOMIC_RELEASE);
    __atomic_store_n(&k->slot[k->me].done, (k->gen << OB_CHUNK_GEN_SHIFT) | (uint64_t) k->done, __ATOMIC_RELEASE);
}
