/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * One step worked in chunks with stealing (sim_steal.h).  A rank's own
 * chunks before the step's end game are followed lazily: only the moments
 * it decides are events, and a rank that reads another's word first brings
 * that rank up to the time of the read.  Events: a rank decides at a
 * boundary, a rank that left its tail takes it back, a rank's range ran
 * out, a request reached a helper, the helper answered, the answer reached
 * the rank that asked, a rank that watches its node looks again.
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "sim_steal.h"

/* The end game: after this fraction of the step's expected end every
 * chunk boundary is a decision on the node's level. */
#define OB_SIM_ENDGAME 0.85
/* A node's level is computed anew when older than this fraction of the
 * step's expected end (or when samples moved): the others read it. */
#define OB_SIM_LEVEL_AGE 0.01

/* Ranges a rank holds from helpers at the most (words in shared memory). */
#define OB_SIM_GIFTS 4

typedef enum ob_sim_wstate {
    OB_SIM_W_BUSY,               /* a chunk (or its fixed cost) in flight */
    OB_SIM_W_DECIDE,             /* at a boundary where it decides on the node's level */
    OB_SIM_W_LEFT,               /* its quota was 0: left its tail to the others, takes it back when due */
    OB_SIM_W_IDLE,               /* its own range empty: about to steal */
    OB_SIM_W_WAIT,               /* nothing to do but a helper's answer to wait for */
    OB_SIM_W_LISTEN              /* nothing for it now: it watches its node's words for work left to it,
                                  * and leaves for the step's reduction when none comes */
} ob_sim_wstate;

typedef struct ob_sim_worker {
    long next;                   /* its word: [next, end) neither done nor in flight */
    long end;
    long flight_lo;              /* the chunk in flight: [flight_lo, flight_lo + flight) */
    long flight;
    double flight_start;
    double flight_end;
    double seen;                 /* seconds per sample of its last chunk, as published */
    double stop;
    double due;                  /* left: when it takes its tail back */
    long left_tail;              /* left: its tail when it left it */
    long gift_lo[OB_SIM_GIFTS];  /* its further words: ranges helpers gave it while it was busy, */
    long gift_hi[OB_SIM_GIFTS];  /* its next work, last in first out, their tails open to its node */
    int gifts;
    long helper;                 /* the next helper to ask, counted among the other nodes' ranks */
    int tries;                   /* requests it sent while idle that brought nothing, in a row */
    int asking;                  /* a request of its is out */
    int offers;                  /* requests it sent while busy, this step */
    ob_sim_wstate state;
    unsigned ver;                /* of its pending event of its own range */
} ob_sim_worker;

typedef enum ob_sim_evkind {
    OB_SIM_EV_DECIDE,            /* a rank reached a boundary where it decides */
    OB_SIM_EV_DUE,               /* a rank that left its tail takes it back */
    OB_SIM_EV_OUT,               /* a rank's own range ran out */
    OB_SIM_EV_ASK,               /* a request reached its helper */
    OB_SIM_EV_ANSWER,            /* the helper answers it */
    OB_SIM_EV_REPLY,             /* the answer reached the thief */
    OB_SIM_EV_LOOK               /* a rank that watches its node looks again */
} ob_sim_evkind;

typedef struct ob_sim_ev {
    double t;
    uint64_t seq;                /* ties in time: first pushed, first out */
    ob_sim_evkind kind;
    int rank;                    /* DECIDE, DUE, OUT: the rank; ASK, ANSWER: the helper; REPLY: the thief */
    int peer;                    /* ASK, ANSWER: the thief */
    unsigned ver;
    double free;                 /* ASK, ANSWER: when the thief can start on what it is given */
    long lo;                     /* REPLY: the range given, empty for none */
    long hi;
} ob_sim_ev;

/* A node's ranks as the others see them, for its level. */
typedef struct ob_sim_group {
    int n;
    int *who;                    /* the rank */
    int64_t *avail;              /* ns from now until it is free for more */
    int64_t *rate;               /* ns a sample */
    long *quota;
    long *tail;
    int64_t level;               /* ns from now */
} ob_sim_group;

/* A node's level, shared by its ranks (in the library: published in the
 * node's shared memory by whichever rank computed it).  Its ranks' quotas
 * follow from it and their own times alone. */
typedef struct ob_sim_node {
    double level;                /* when the node's unclaimed samples are done (seconds into the step) */
    double at;                   /* when it was computed */
    double speed;                /* samples per second of the ranks that take part in it */
    unsigned ver;                /* bumped whenever samples move in or out of the node, or a rank leaves or
                                  * rejoins: the level is then computed anew */
    unsigned level_ver;
    int valid;
} ob_sim_node;

struct ob_sim_stealer {
    int P;
    long B;
    ob_sim_steal_params p;
    ob_chunk_layout layout;
    ob_sim_worker *wk;
    const ob_sim_work *w;
    double horizon;              /* the step's expected end */
    double endgame;              /* from then on every boundary is a decision */
    unsigned char *cover;        /* each sample's completions in this step */
    ob_sim_ev *heap;
    long nheap;
    long capheap;
    uint64_t seq;
    ob_sim_group g;
    ob_sim_node *nodes;
    double level_age;            /* a node's level is computed anew when older than this */
    ob_sim_steal_result res;
};

static int64_t ob_sim_ns(double s)
{
    return s <= 0.0 ? 0 : (int64_t) (s * 1e9 + 0.5);
}

/* ---- events --------------------------------------------------------------- */

static int ob_sim_ev_before(const ob_sim_ev *a, const ob_sim_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int ob_sim_push(ob_sim_stealer *s, ob_sim_ev ev)
{
    if (s->nheap == s->capheap) {
        const long cap = 2 * s->capheap;
        ob_sim_ev *h = realloc(s->heap, (size_t) cap * sizeof *h);
        if (NULL == h) {
            return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: %ld events", cap);
        }
        s->heap = h;
        s->capheap = cap;
    }
    ev.seq = s->seq++;
    long i = s->nheap++;
    while (i > 0 && ob_sim_ev_before(&ev, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = ev;
    return OMNIBATCH_SUCCESS;
}

static ob_sim_ev ob_sim_pop(ob_sim_stealer *s)
{
    const ob_sim_ev top = s->heap[0];
    const ob_sim_ev last = s->heap[--s->nheap];
    long i = 0;

    for (;;) {
        long c = 2 * i + 1;
        if (c >= s->nheap) {
            break;
        }
        if (c + 1 < s->nheap && ob_sim_ev_before(&s->heap[c + 1], &s->heap[c])) {
            c++;
        }
        if (!ob_sim_ev_before(&s->heap[c], &last)) {
            break;
        }
        s->heap[i] = s->heap[c];
        i = c;
    }
    s->heap[i] = last;
    return top;
}

/* ---- a rank's own chunks -------------------------------------------------- */

/* Rank i's policy: its floor is the policy's, or more, so that a chunk of
 * its takes at least floor_time at the speed its model expects. */
static ob_chunk_policy ob_sim_policy_of(const ob_sim_stealer *s, int i)
{
    ob_chunk_policy p = s->p.policy;
    const double beta = s->w[i].beta_hint;
    const long g = p.granularity;

    if (beta > 0.0 && s->p.floor_time > 0.0) {
        long f = (long) ceil(s->p.floor_time / beta);
        f = (f + g - 1) / g * g;
        p.floor = f > p.floor ? f : p.floor;
    }
    return p;
}

/* The chunk rank i takes at a boundary at time t with \p left samples left
 * at \p seen seconds each, cut by time to the step's expected end; 1 when
 * it decides first instead: the chunk is its range's last, or the end game
 * has begun. */
static int ob_sim_move(const ob_sim_stealer *s, int i, long left, double seen, double t, long *c)
{
    const ob_chunk_policy p = ob_sim_policy_of(s, i);

    *c = ob_chunk_next_until(&p, left, ob_sim_ns(seen), ob_sim_ns(s->horizon - t));
    return *c == left || t >= s->endgame;
}

static void ob_sim_start_chunk(ob_sim_stealer *s, int i, double t0, long c)
{
    ob_sim_worker *k = &s->wk[i];

    k->flight_lo = k->next;
    k->flight = c;
    k->next += c;
    k->flight_start = t0;
    k->flight_end = ob_sim_work_end(&s->w[i], t0, s->p.chunk_cost + (double) c * s->w[i].beta);
    k->state = OB_SIM_W_BUSY;
}

/* The seconds per sample a chunk of c from t0 to t1 shows. */
static double ob_sim_rate_of(const ob_sim_stealer *s, double t0, double t1, long c, double before)
{
    const double per = (t1 - t0 - s->p.chunk_cost) / (double) c;
    return per > 0.0 ? per : before;
}

static void ob_sim_finish_chunk(ob_sim_stealer *s, int i)
{
    ob_sim_worker *k = &s->wk[i];
    long c;

    if (k->flight > 0) {
        for (long q = k->flight_lo; q < k->flight_lo + k->flight; q++) {
            s->cover[q]++;
        }
        k->seen = ob_sim_rate_of(s, k->flight_start, k->flight_end, k->flight, k->seen);
        s->res.chunks++;
    }
    k->flight = 0;
    if (k->next >= k->end) {
        k->state = OB_SIM_W_IDLE;
    } else if (ob_sim_move(s, i, k->end - k->next, k->seen, k->flight_end, &c)) {
        k->state = OB_SIM_W_DECIDE;          /* its event decides */
    } else {
        ob_sim_start_chunk(s, i, k->flight_end, c);
    }
}

/* Rank i's own chunks up to time t. */
static void ob_sim_advance(ob_sim_stealer *s, int i, double t)
{
    ob_sim_worker *k = &s->wk[i];
    while (OB_SIM_W_BUSY == k->state && k->flight_end <= t) {
        ob_sim_finish_chunk(s, i);
    }
}

/* Rank i's next event of its own range, if nobody takes from it: the
 * boundary where it decides (DECIDE), or the end of the chunk in flight
 * when that is its last (OUT).  The chunks as ob_sim_finish_chunk() takes
 * them, the published time per sample following each. */
static ob_sim_ev ob_sim_own_event(const ob_sim_stealer *s, int i)
{
    const ob_sim_worker *k = &s->wk[i];
    ob_sim_ev ev = { k->flight_end, 0, OB_SIM_EV_OUT, i, -1, k->ver, 0.0, 0, 0 };
    double seen = k->flight > 0 ? ob_sim_rate_of(s, k->flight_start, k->flight_end, k->flight, k->seen) : k->seen;

    for (long next = k->next; next < k->end;) {
        long c;
        if (ob_sim_move(s, i, k->end - next, seen, ev.t, &c)) {
            ev.kind = OB_SIM_EV_DECIDE;
            break;
        }
        const double t0 = ev.t;
        next += c;
        ev.t = ob_sim_work_end(&s->w[i], t0, s->p.chunk_cost + (double) c * s->w[i].beta);
        seen = ob_sim_rate_of(s, t0, ev.t, c, seen);
    }
    return ev;
}

/* Rank i's own event anew when it has a chunk in flight (its range or its
 * chunk changed); the old one is then stale. */
static int ob_sim_schedule_own(ob_sim_stealer *s, int i)
{
    ob_sim_worker *k = &s->wk[i];

    if (OB_SIM_W_BUSY != k->state) {
        return OMNIBATCH_SUCCESS;
    }
    k->ver++;
    return ob_sim_push(s, ob_sim_own_event(s, i));
}

/* ---- a group's level ------------------------------------------------------ */

/* Seconds from now of a rank that takes no part in a level. */
#define OB_SIM_NEVER 1e8

/* What rank j shows the others at time t: its expected time per sample
 * (published, or longer when its chunk in flight has already taken longer)
 * and the time until it is free for more. */
static void ob_sim_view_of(const ob_sim_stealer *s, int j, double t, double *rate, double *avail)
{
    const ob_sim_worker *k = &s->wk[j];

    *rate = k->seen;
    *avail = 0.0;
    if (OB_SIM_W_LEFT == k->state) {
        *avail = OB_SIM_NEVER;           /* its tail is for the others; it works only when they do not */
    } else if (OB_SIM_W_BUSY == k->state && 0 == k->flight) {
        *avail = s->w[j].alpha_hint - t;
    } else if (OB_SIM_W_BUSY == k->state) {
        const double elapsed = (t - k->flight_start - s->p.chunk_cost) / (double) k->flight;
        *rate = elapsed > *rate ? elapsed : *rate;
        *avail = k->flight_start + s->p.chunk_cost + (double) k->flight * *rate - t;
    }
    *avail = *avail > 0.0 ? *avail : 0.0;
}

/* Rank j's samples neither done nor in flight: its word's and its gifts'. */
static long ob_sim_tail(const ob_sim_worker *k)
{
    long tail = k->end - k->next;
    for (int q = 0; q < k->gifts; q++) {
        tail += k->gift_hi[q] - k->gift_lo[q];
    }
    return tail;
}

static void ob_sim_group_add(ob_sim_group *g, int who, double avail, double rate, long tail)
{
    const int64_t r = ob_sim_ns(rate);

    g->who[g->n] = who;
    g->avail[g->n] = ob_sim_ns(avail);
    g->rate[g->n] = r > 0 ? r : 1;
    g->tail[g->n] = tail;
    g->n++;
}

/* The group of node \p node at time t: its ranks brought up to t, their
 * times and tails; the samples in its tails into *samples. */
static void ob_sim_gather(ob_sim_stealer *s, int node, double t, long *samples)
{
    ob_sim_group *g = &s->g;
    const int first = node * s->p.per_node;
    const int count = s->P - first < s->p.per_node ? s->P - first : s->p.per_node;

    g->n = 0;
    *samples = 0;
    for (int j = first; j < first + count; j++) {
        double rate;
        double avail;
        ob_sim_advance(s, j, t);
        ob_sim_view_of(s, j, t, &rate, &avail);
        ob_sim_group_add(g, j, avail, rate, ob_sim_tail(&s->wk[j]));
        *samples += ob_sim_tail(&s->wk[j]);
    }
}

/* The level of the node of rank h at time t: its latest, or computed anew
 * (ob_chunk_level()) when samples moved in or out of the node, a rank left
 * or rejoined, or it is older than level_age. */
static int ob_sim_node_level(ob_sim_stealer *s, int h, double t, double *level)
{
    const int node = h / s->p.per_node;
    ob_sim_node *nd = &s->nodes[node];
    ob_sim_group *g = &s->g;
    long samples;

    if (nd->valid && nd->level_ver == nd->ver && t - nd->at <= s->level_age) {
        *level = nd->level;
        return OMNIBATCH_SUCCESS;
    }
    ob_sim_gather(s, node, t, &samples);
    const int rc = ob_chunk_level(g->n, g->avail, g->rate, samples, &g->level, g->quota);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    nd->level = t + (double) g->level * 1e-9;
    nd->at = t;
    nd->speed = 0.0;
    for (int m = 0; m < g->n; m++) {
        const double r = (double) g->rate[m] * 1e-9;
        nd->speed += (double) g->avail[m] < (double) g->level ? 1.0 / r : 0.0;
    }
    nd->level_ver = nd->ver;
    nd->valid = 1;
    *level = nd->level;
    return OMNIBATCH_SUCCESS;
}

/* Samples a rank free at \p free that takes \p rate seconds a sample can do
 * by \p level: in whole nanoseconds, as ob_chunk_level() counts them (a
 * sample that ends at the level exactly counts, the level being such an
 * end, give or take the rounding of each time to the nanosecond). */
static long ob_sim_quota(double level, double free, double rate)
{
    const int64_t span = ob_sim_ns(level - free) + 2;
    const int64_t r = ob_sim_ns(rate);

    return level > free && r > 0 ? (long) (span / r) : 0;
}

/* Something changed the node of rank j: its level is to be computed anew. */
static void ob_sim_touch(ob_sim_stealer *s, int j)
{
    s->nodes[j / s->p.per_node].ver++;
}

/* The member of the node of rank h furthest beyond its quota at \p level,
 * seen at time t (every rank brought up to t); -1 when none is beyond.
 * Its excess into *excess and its tail into *tail. */
static int ob_sim_furthest(ob_sim_stealer *s, int h, int besides, double level, double t, long *excess, long *tail)
{
    const ob_sim_group *g = &s->g;
    long samples;
    int v = -1;

    ob_sim_gather(s, h / s->p.per_node, t, &samples);
    *excess = 0;
    *tail = 0;
    for (int m = 0; m < g->n; m++) {
        const long q = ob_sim_quota(level, t + (double) g->avail[m] * 1e-9, (double) g->rate[m] * 1e-9);
        if (g->who[m] != besides && g->tail[m] - q > *excess) {
            *excess = g->tail[m] - q;
            *tail = g->tail[m];
            v = g->who[m];
        }
    }
    return v;
}

/* ---- taking and giving ---------------------------------------------------- */

/* Take at most \p take samples off the tail of rank v into [*lo, *hi):
 * off its gift's tail when it holds one (no more than it), else off its
 * word's. */
static int ob_sim_take(ob_sim_stealer *s, int v, long take, long *lo, long *hi)
{
    ob_sim_worker *k = &s->wk[v];

    if (k->gifts > 0) {
        const int q = k->gifts - 1;
        take = take < k->gift_hi[q] - k->gift_lo[q] ? take : k->gift_hi[q] - k->gift_lo[q];
        *hi = k->gift_hi[q];
        k->gift_hi[q] -= take;
        *lo = k->gift_hi[q];
        k->gifts -= k->gift_hi[q] == k->gift_lo[q];
    } else {
        *hi = k->end;
        k->end -= take;
        *lo = k->end;
    }
    s->res.moved += take;
    s->res.steals++;
    ob_sim_touch(s, v);
    return ob_sim_schedule_own(s, v);
}

/* Rank i starts on the range [lo, hi) it was given at time t. */
static int ob_sim_work_on(ob_sim_stealer *s, int i, long lo, long hi, double t)
{
    ob_sim_worker *k = &s->wk[i];
    long c;

    k->next = lo;
    k->end = hi;
    k->tries = 0;
    (void) ob_sim_move(s, i, hi - lo, k->seen, t, &c);
    ob_sim_start_chunk(s, i, t, c);
    return ob_sim_schedule_own(s, i);
}

/* Work was left in the node of rank i at time t: every rank there that
 * watches the words looks again. */
static int ob_sim_wake_node(ob_sim_stealer *s, int i, double t)
{
    const int first = i / s->p.per_node * s->p.per_node;
    const int count = s->P - first < s->p.per_node ? s->P - first : s->p.per_node;
    int rc = OMNIBATCH_SUCCESS;

    for (int j = first; j < first + count && OMNIBATCH_SUCCESS == rc; j++) {
        if (OB_SIM_W_LISTEN == s->wk[j].state) {
            const ob_sim_ev look = { t, 0, OB_SIM_EV_LOOK, j, -1, 0, 0.0, 0, 0 };
            s->wk[j].state = OB_SIM_W_IDLE;
            rc = ob_sim_push(s, look);
        }
    }
    return rc;
}

/* Thief i reads its node's words at time t and takes its quota of the
 * node's level from the rank furthest beyond its own; 1 in *got when it
 * took a share. */
static int ob_sim_steal_in_node(ob_sim_stealer *s, int i, double t, int *got)
{
    const ob_chunk_policy p = ob_sim_policy_of(s, i);
    double level;
    long excess;
    long tail;
    long lo;
    long hi;
    int rc = ob_sim_node_level(s, i, t, &level);

    *got = 0;
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    const int victim = ob_sim_furthest(s, i, i, level, t, &excess, &tail);
    const long take = victim < 0 ? 0 : ob_chunk_share(&p, tail, excess, ob_sim_quota(level, t, s->wk[i].seen));
    if (take <= 0) {
        return OMNIBATCH_SUCCESS;
    }
    *got = 1;
    rc = ob_sim_take(s, victim, take, &lo, &hi);
    return OMNIBATCH_SUCCESS == rc ? ob_sim_work_on(s, i, lo, hi, t + s->p.lat_node) : rc;
}

/* Rank i asks its next helper for work it can start at time \p free (its
 * answer takes at least half a round trip back). */
static int ob_sim_ask(ob_sim_stealer *s, int i, double t, double free)
{
    ob_sim_worker *k = &s->wk[i];
    const int peers = ob_chunk_node_peers(&s->layout, i);
    const long others = (long) s->P - 1 - peers;
    const ob_sim_ev ask = { t + 0.5 * s->p.lat_net, 0, OB_SIM_EV_ASK,
                            ob_chunk_victim(&s->layout, i, peers + k->helper % others), i, 0, free, 0, 0 };

    k->asking = 1;
    s->res.asks++;
    return ob_sim_push(s, ask);
}

static int ob_sim_on_decide(ob_sim_stealer *s, int i, double t, int again);

/* Rank i has nothing of its own at time t: what a helper gave it (decided
 * on as its own range: a gift given while it was busy may be late by now),
 * else its node, else the answer it waits for, else a helper, else it
 * stops. */
static int ob_sim_thief(ob_sim_stealer *s, int i, double t)
{
    ob_sim_worker *k = &s->wk[i];
    const int peers = ob_chunk_node_peers(&s->layout, i);
    const long others = (long) s->P - 1 - peers;
    int got = 0;

    if (k->gifts > 0) {
        k->gifts--;
        k->next = k->gift_lo[k->gifts];
        k->end = k->gift_hi[k->gifts];
        k->tries = 0;
        k->state = OB_SIM_W_DECIDE;
        return ob_sim_on_decide(s, i, t, 0);
    }
    int rc = ob_sim_steal_in_node(s, i, t, &got);
    if (OMNIBATCH_SUCCESS != rc || got) {
        return rc;
    }
    if (k->asking) {
        k->state = OB_SIM_W_WAIT;
        return OMNIBATCH_SUCCESS;
    }
    if (0 == others || k->tries >= s->p.asks) {
        k->state = OB_SIM_W_LISTEN;
        k->stop = t;
        return OMNIBATCH_SUCCESS;
    }
    k->tries++;
    k->state = OB_SIM_W_WAIT;
    return ob_sim_ask(s, i, t, t + s->p.lat_net);
}

/* Helper h answers thief i at time t for its whole node: the node's level
 * lowered by the thief's help from when it can start (continuous: the
 * node's speed and the thief's together), the thief's quota of it, from
 * the rank furthest beyond its own. */
static int ob_sim_answer(ob_sim_stealer *s, int h, int i, double free, double t)
{
    ob_sim_ev reply = { t + 0.5 * s->p.lat_net, 0, OB_SIM_EV_REPLY, i, h, 0, 0.0, 0, 0 };
    const ob_chunk_policy p = ob_sim_policy_of(s, i);
    const double start = free > reply.t ? free : reply.t;
    const double rate = s->wk[i].seen;
    const ob_sim_node *nd = &s->nodes[h / s->p.per_node];
    double level;
    long excess;
    long tail;
    int rc = ob_sim_node_level(s, h, t, &level);

    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (level > start && rate > 0.0) {
        level = (level * nd->speed + start / rate) / (nd->speed + 1.0 / rate);
    }
    const int victim = ob_sim_furthest(s, h, -1, level, t, &excess, &tail);
    const long take = victim < 0 ? 0 : ob_chunk_share(&p, tail, excess, ob_sim_quota(level, start, rate));
    if (take > 0) {
        rc = ob_sim_take(s, victim, take, &reply.lo, &reply.hi);
    }
    return OMNIBATCH_SUCCESS == rc ? ob_sim_push(s, reply) : rc;
}

/* A request reached helper h: it answers at its next chunk boundary (at
 * once when it has none in flight, or with a progress thread). */
static int ob_sim_on_ask(ob_sim_stealer *s, const ob_sim_ev *ev)
{
    ob_sim_worker *h = &s->wk[ev->rank];
    ob_sim_ev answer = *ev;

    ob_sim_advance(s, ev->rank, ev->t);
    if (OB_SIM_W_BUSY != h->state || s->p.answer_at_once) {
        return ob_sim_answer(s, ev->rank, ev->peer, ev->free, ev->t);
    }
    answer.kind = OB_SIM_EV_ANSWER;
    answer.t = h->flight_end;
    return ob_sim_push(s, answer);
}

/* An answer reached rank i: a range it works on now when it waits for
 * one, or next when it is busy; nothing, and a rank that waits looks
 * again.  A helper that gave work is asked again. */
static int ob_sim_on_reply(ob_sim_stealer *s, const ob_sim_ev *ev)
{
    ob_sim_worker *k = &s->wk[ev->rank];

    k->asking = 0;
    if (ev->hi <= ev->lo) {
        k->helper++;
    }
    if (OB_SIM_W_WAIT != k->state) {
        if (ev->hi <= ev->lo) {
            return OMNIBATCH_SUCCESS;
        }
        k->gift_lo[k->gifts] = ev->lo;
        k->gift_hi[k->gifts] = ev->hi;
        k->gifts++;
        ob_sim_touch(s, ev->rank);
        return ob_sim_wake_node(s, ev->rank, ev->t);
    }
    if (ev->hi > ev->lo) {
        return ob_sim_work_on(s, ev->rank, ev->lo, ev->hi, ev->t);
    }
    k->state = OB_SIM_W_IDLE;
    return ob_sim_thief(s, ev->rank, ev->t);
}

/* ---- the owner's decisions ------------------------------------------------ */

/* Rank i, busy in the end game at time t, offers a helper its time from
 * \p free on (its node's level): when the helper's node is behind, the
 * helper gives it a share that it works on after its own. */
static int ob_sim_offer(ob_sim_stealer *s, int i, double t, double free)
{
    ob_sim_worker *k = &s->wk[i];
    const long others = (long) s->P - 1 - ob_chunk_node_peers(&s->layout, i);

    if (k->asking || k->gifts >= OB_SIM_GIFTS || k->offers >= s->p.helpers || 0 == others) {
        return OMNIBATCH_SUCCESS;
    }
    k->offers++;
    return ob_sim_ask(s, i, t, free);
}

/* The soonest time another rank of rank i's node, not leaving its own
 * tail, can start c samples of i's and end them before i would, started at
 * time t: a busy one when its chunk in flight ends; one without work at
 * once, unless \p again (it looked and did not take them).  -1: none. */
static double ob_sim_sooner_taker(ob_sim_stealer *s, int i, double t, long c, int again)
{
    const ob_sim_group *g = &s->g;
    const double mine = t + s->p.chunk_cost + (double) c * s->wk[i].seen;
    double soonest = -1.0;
    long samples;

    ob_sim_gather(s, i / s->p.per_node, t, &samples);
    for (int m = 0; m < g->n; m++) {
        const ob_sim_worker *j = &s->wk[g->who[m]];
        const double free = t + s->p.lat_node + (double) g->avail[m] * 1e-9;
        const double end = free + s->p.chunk_cost + (double) c * (double) g->rate[m] * 1e-9;
        const int busy = OB_SIM_W_BUSY == j->state && free > t + 2.0 * s->p.lat_node;
        const int taker = busy || (!again && OB_SIM_W_LEFT != j->state && OB_SIM_W_BUSY != j->state);
        if (g->who[m] != i && taker && end < mine && (soonest < 0.0 || free < soonest)) {
            soonest = free;
        }
    }
    return soonest;
}

/* Rank i leaves its tail to its node until \p due, when it decides again. */
static int ob_sim_leave(ob_sim_stealer *s, int i, double t, double due)
{
    ob_sim_worker *k = &s->wk[i];
    const ob_sim_ev back = { due, 0, OB_SIM_EV_DUE, i, -1, ++k->ver, 0.0, 0, 0 };
    int rc;

    k->state = OB_SIM_W_LEFT;
    k->due = due;
    k->left_tail = ob_sim_tail(k);
    ob_sim_touch(s, i);
    rc = ob_sim_push(s, back);
    return OMNIBATCH_SUCCESS == rc ? ob_sim_wake_node(s, i, t) : rc;
}

/* Rank i at a boundary at time t in the end game or before its range's
 * last chunk: on its node's level, it starts a chunk within its quota.
 * With quota 0 it leaves its tail to the others when one of them would end
 * its next chunk sooner than it would, and decides again when that one is
 * free (\p again: it comes back from leaving it); else it works on it. */
static int ob_sim_on_decide(ob_sim_stealer *s, int i, double t, int again)
{
    ob_sim_worker *k = &s->wk[i];
    const long left = k->end - k->next;
    int rc;

    if (left <= 0) {
        k->state = OB_SIM_W_IDLE;
        return ob_sim_thief(s, i, t);
    }
    double level;
    rc = ob_sim_node_level(s, i, t, &level);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    const ob_chunk_policy p = ob_sim_policy_of(s, i);
    const long quota = ob_sim_quota(level, t, k->seen);
    long c = ob_chunk_next_until(&p, left, ob_sim_ns(k->seen), ob_sim_ns(level - t));
    const long most = quota > p.floor ? quota : p.floor;
    c = c < most ? c : most;
    c = c < left ? c : left;
    if (quota <= 0) {
        const double due = ob_sim_sooner_taker(s, i, t, c, again);
        if (due >= 0.0) {
            return ob_sim_leave(s, i, t, due + s->p.lat_node);
        }
    }
    ob_sim_start_chunk(s, i, t, c);
    rc = ob_sim_schedule_own(s, i);
    return OMNIBATCH_SUCCESS == rc ? ob_sim_offer(s, i, t, level) : rc;
}

/* A rank that left its tail, at time t: it decides anew on what is still
 * there. */
static int ob_sim_on_due(ob_sim_stealer *s, int i, double t)
{
    ob_sim_worker *k = &s->wk[i];

    k->state = OB_SIM_W_DECIDE;
    ob_sim_touch(s, i);
    return ob_sim_on_decide(s, i, t, 1);
}

/* Whether an event of rank i's own range is still its latest. */
static int ob_sim_current(const ob_sim_stealer *s, const ob_sim_ev *ev)
{
    return ev->ver == s->wk[ev->rank].ver;
}

/* An event of a rank's own range, when it is still its latest. */
static int ob_sim_on_own(ob_sim_stealer *s, const ob_sim_ev *ev)
{
    ob_sim_worker *k = &s->wk[ev->rank];

    if (!ob_sim_current(s, ev)) {
        return OMNIBATCH_SUCCESS;                /* its range changed since */
    }
    if (OB_SIM_EV_DUE == ev->kind) {
        return ob_sim_on_due(s, ev->rank, ev->t);
    }
    ob_sim_advance(s, ev->rank, ev->t);
    if (OB_SIM_EV_DECIDE == ev->kind && OB_SIM_W_DECIDE == k->state) {
        return ob_sim_on_decide(s, ev->rank, ev->t, 0);
    }
    if (OB_SIM_EV_OUT == ev->kind && OB_SIM_W_IDLE == k->state) {
        return ob_sim_thief(s, ev->rank, ev->t);
    }
    return ob_fail(OMNIBATCH_ERR_STATE, "simulate: rank %d in state %d at its event %d at %g s", ev->rank,
                   (int) k->state, (int) ev->kind, ev->t);
}

static int ob_sim_dispatch(ob_sim_stealer *s, const ob_sim_ev *ev)
{
    switch (ev->kind) {
    case OB_SIM_EV_DECIDE:
    case OB_SIM_EV_DUE:
    case OB_SIM_EV_OUT:
        return ob_sim_on_own(s, ev);
    case OB_SIM_EV_ASK:
        return ob_sim_on_ask(s, ev);
    case OB_SIM_EV_ANSWER:
        ob_sim_advance(s, ev->rank, ev->t);
        return ob_sim_answer(s, ev->rank, ev->peer, ev->free, ev->t);
    case OB_SIM_EV_REPLY:
        return ob_sim_on_reply(s, ev);
    case OB_SIM_EV_LOOK:
        return OB_SIM_W_IDLE == s->wk[ev->rank].state ? ob_sim_thief(s, ev->rank, ev->t) : OMNIBATCH_SUCCESS;
    }
    return ob_fail(OMNIBATCH_ERR_STATE, "simulate: event kind %d", (int) ev->kind);
}

/* ---- the step ------------------------------------------------------------- */

static int ob_sim_stealer_alloc(ob_sim_stealer *s)
{
    const size_t m = (size_t) s->p.per_node + 1;

    s->capheap = 4 * (long) s->P + 16;
    s->wk = calloc((size_t) s->P, sizeof *s->wk);
    s->cover = malloc((size_t) s->B);
    s->heap = malloc((size_t) s->capheap * sizeof *s->heap);
    s->g.who = malloc(m * sizeof *s->g.who);
    s->g.avail = malloc(m * sizeof *s->g.avail);
    s->g.rate = malloc(m * sizeof *s->g.rate);
    s->g.quota = malloc(m * sizeof *s->g.quota);
    s->g.tail = malloc(m * sizeof *s->g.tail);
    s->nodes = calloc((size_t) ((s->P + s->p.per_node - 1) / s->p.per_node), sizeof *s->nodes);
    if (NULL == s->wk || NULL == s->cover || NULL == s->heap || NULL == s->g.who || NULL == s->g.avail
        || NULL == s->g.rate || NULL == s->g.quota || NULL == s->g.tail || NULL == s->nodes) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: stealer of %d ranks", s->P);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_sim_stealer_new(int P, long B, const ob_sim_steal_params *p, ob_sim_stealer **out)
{
    ob_sim_stealer *s;
    int rc = ob_chunk_policy_check(&p->policy);

    *out = NULL;
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    if (p->helpers < 0 || !(p->lat_node >= 0.0) || !(p->lat_net >= 0.0) || !(p->chunk_cost >= 0.0)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "simulate: helpers=%d lat_node=%g lat_net=%g chunk_cost=%g: expected "
                       "all >= 0", p->helpers, p->lat_node, p->lat_net, p->chunk_cost);
    }
    s = calloc(1, sizeof *s);
    if (NULL == s) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "simulate: stealer");
    }
    s->P = P;
    s->B = B;
    s->p = *p;
    s->layout = (ob_chunk_layout) { P, p->per_node, p->seed };
    rc = ob_chunk_layout_check(&s->layout);
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_stealer_alloc(s);
    }
    if (OMNIBATCH_SUCCESS != rc) {
        ob_sim_stealer_free(s);
        return rc;
    }
    *out = s;
    return OMNIBATCH_SUCCESS;
}

void ob_sim_stealer_free(ob_sim_stealer *s)
{
    if (NULL != s) {
        free(s->wk);
        free(s->cover);
        free(s->heap);
        free(s->g.who);
        free(s->g.avail);
        free(s->g.rate);
        free(s->g.quota);
        free(s->g.tail);
        free(s->nodes);
        free(s);
    }
}

/* Every rank at the step's start: its range, its fixed cost in flight. */
static int ob_sim_step_start(ob_sim_stealer *s, const long *plan)
{
    long off = 0;
    int rc = OMNIBATCH_SUCCESS;

    memset(s->cover, 0, (size_t) s->B);
    memset(&s->res, 0, sizeof s->res);
    memset(s->nodes, 0, (size_t) ((s->P + s->p.per_node - 1) / s->p.per_node) * sizeof *s->nodes);
    s->nheap = 0;
    for (int i = 0; i < s->P && OMNIBATCH_SUCCESS == rc; i++) {
        ob_sim_worker *k = &s->wk[i];
        memset(k, 0, sizeof *k);
        k->next = off;
        k->end = off + plan[i];
        off += plan[i];
        k->flight_end = ob_sim_work_end(&s->w[i], 0.0, s->w[i].alpha);
        k->seen = s->w[i].beta_hint;
        k->state = OB_SIM_W_BUSY;
        rc = ob_sim_schedule_own(s, i);
    }
    if (OMNIBATCH_SUCCESS == rc && off != s->B) {
        rc = ob_fail(OMNIBATCH_ERR_ARG, "simulate: plan sums to %ld: expected B=%ld", off, s->B);
    }
    return rc;
}

/* Every sample done exactly once, every rank stopped; the step's end. */
static int ob_sim_step_check(ob_sim_stealer *s)
{
    for (long q = 0; q < s->B; q++) {
        if (1 != s->cover[q]) {
            return ob_fail(OMNIBATCH_ERR_STATE, "simulate: sample %ld of the step done %d times: expected once", q,
                           (int) s->cover[q]);
        }
    }
    s->res.time = 0.0;
    for (int i = 0; i < s->P; i++) {
        if (OB_SIM_W_LISTEN != s->wk[i].state) {
            return ob_fail(OMNIBATCH_ERR_STATE, "simulate: rank %d did not stop", i);
        }
        s->res.time = s->wk[i].stop > s->res.time ? s->wk[i].stop : s->res.time;
    }
    return OMNIBATCH_SUCCESS;
}

int ob_sim_steal_step(ob_sim_stealer *s, const long *plan, const ob_sim_work *w, double horizon,
                      ob_sim_steal_result *res)
{
    int rc;

    s->w = w;
    s->horizon = horizon;
    s->endgame = OB_SIM_ENDGAME * horizon;
    s->level_age = OB_SIM_LEVEL_AGE * horizon;
    rc = ob_sim_step_start(s, plan);
    while (OMNIBATCH_SUCCESS == rc && s->nheap > 0) {
        const ob_sim_ev ev = ob_sim_pop(s);
        rc = ob_sim_dispatch(s, &ev);
    }
    if (OMNIBATCH_SUCCESS == rc) {
        rc = ob_sim_step_check(s);
    }
    *res = s->res;
    return rc;
}
