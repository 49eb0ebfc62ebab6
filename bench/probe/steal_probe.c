/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * steal_probe: what one steal costs on each transport a thief could use,
 * measured side by side in one run (what OSU's osu_cas_latency and
 * osu_fop_latency measure: one atomic's latency, here also while the
 * target computes).  Two ranks: rank 0 is the thief (the origin), rank 1
 * the rank it takes from (the target).
 *
 *   a  shm      both ranks on one node: the target's 64-bit word in an
 *               MPI_Win_allocate_shared window, a steal as the thief does it
 *               (load, then compare-and-swap with GCC __atomic builtins)
 *               while the owner is idle (the word's cache line in the
 *               owner's cache, written by it just before) and while the
 *               owner advances the same word in a loop of compare-and-swaps.
 *   b  rma      MPI_Compare_and_swap and MPI_Fetch_and_op, each followed by
 *               MPI_Win_flush, under MPI_Win_lock_all (passive target) on a
 *               window from MPI_Win_allocate; the target waits inside MPI,
 *               or computes for a period between MPI calls.  An atomic that
 *               needs the target's MPI call (Open MPI's osc/pt2pt, any
 *               software emulation) waits about half a period.
 *   c  2sided   a request and its reply (MPI_Isend, MPI_Irecv, MPI_Waitall
 *               of 16 bytes each way), the target answering at once (blocked
 *               in MPI_Recv) or between chunks of compute of a period: what a
 *               thief across nodes sees when a rank of the victim's node does
 *               the compare-and-swap for it between its own chunks.
 *
 * The target's compute is a loop on the clock with no MPI call in it.  The
 * thief waits a random part of the period before each sample, so that it
 * arrives at a random point of the target's compute, as a thief does.
 * Every case runs --repeat times, the repetitions of all cases interleaved
 * (a loaded machine's drift hits every case alike); a row gives the median
 * of the repetitions' medians, their range, and the 90th percentile of all
 * samples.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "stats.h"

#define PROBE_MAX_PERIODS 8
#define PROBE_TAG_REQUEST 71
#define PROBE_TAG_REPLY 72
#define PROBE_TAG_STOP 73
/* An atomic "needs the target" when its median is above this share of the
 * target's compute period (half a period is what waiting for the target's
 * next MPI call costs on average; a self-progressing atomic is ~1000x less). */
#define PROBE_NEEDS_TARGET_SHARE 0.1
/* Spins before a waiting rank yields its core: the machine may have fewer
 * cores than ranks. */
#define PROBE_SPINS_BEFORE_YIELD 256
/* The word: next in the low half, end in the high half (the owner moves
 * next up, a thief moves end down). */
#define PROBE_END_ONE (UINT64_C(1) << 32)
#define PROBE_WORD_START (UINT64_C(0x7fffffff) << 32)

enum { PROBE_PART_A = 1, PROBE_PART_B = 2, PROBE_PART_C = 4 };

typedef enum probe_kind {
    PROBE_SHM_IDLE,              /* a: the owner idle, the line in its cache */
    PROBE_SHM_CONTENDED,         /* a: the owner advancing the same word */
    PROBE_RMA_CAS,               /* b: MPI_Compare_and_swap + flush */
    PROBE_RMA_FOP,               /* b: MPI_Fetch_and_op + flush */
    PROBE_TWO_SIDED              /* c: request and reply */
} probe_kind;

typedef struct probe_opts {
    long repeat;
    long samples;                /* per repetition, cases that take microseconds */
    long slow_samples;           /* per repetition, cases with a compute period */
    double busy_ms[PROBE_MAX_PERIODS];
    int nbusy;
    double chunk_ms[PROBE_MAX_PERIODS];
    int nchunk;
    int parts;                   /* PROBE_PART_* bits */
    const char *where;           /* the row's label; NULL: node or hosts, as found */
    const char *rma;             /* what serves b (osc component, device), for the label; NULL: not known */
} probe_opts;

typedef struct probe_case {
    probe_kind kind;
    double period_ms;            /* the target's compute between MPI calls; 0: it waits in MPI */
    long samples;
    double *lat_us;              /* rank 0: repeat * samples latencies */
    double *rep_median;          /* rank 0: each repetition's median */
    long failed_cas;             /* rank 0, contended shm: swaps that lost to the owner */
} probe_case;

/* The owner's slot in the shared window: the word, and the two ranks'
 * handshakes on lines of their own so that waiting never touches the word. */
typedef struct probe_slot {
    uint64_t word;
    char pad0[120];
    uint64_t owner_seq;          /* written by the owner */
    uint64_t advances;           /* written by the owner: its advances so far */
    char pad1[112];
    uint64_t thief_seq;          /* written by the thief */
    char pad2[120];
} probe_slot;

typedef struct probe_ctx {
    MPI_Comm comm;               /* our own duplicate of MPI_COMM_WORLD */
    int rank;
    int same_node;
    char mpi[16];                /* openmpi, mpich or other */
    MPI_Win shm_win;
    probe_slot *slot;            /* the owner's slot (rank 1's memory) */
    MPI_Win rma_win;
    int64_t *rma_word;
    uint64_t answer_word;        /* c: the word the target steals from for the thief */
    char rma_failed[MPI_MAX_ERROR_STRING]; /* why b's window could not be made, or "" */
    uint64_t rng;
} probe_ctx;

/* ------------------------------------------------------------- clocks */

static double probe_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec * 1e-3;
}

/* The target's compute (and the thief's wait before a sample): the clock
 * only, never an MPI call, so that nothing but the MPI library's own
 * progress can answer meanwhile. */
static void probe_spin_us(double us)
{
    const double until = probe_now_us() + us;
    while (probe_now_us() < until) {
    }
}

/* xorshift64*: the thief's arrival points, the same on every run. */
static double probe_uniform(probe_ctx *ctx)
{
    ctx->rng ^= ctx->rng >> 12;
    ctx->rng ^= ctx->rng << 25;
    ctx->rng ^= ctx->rng >> 27;
    return (double) ((ctx->rng * UINT64_C(2685821657736338717)) >> 11) * 0x1.0p-53;
}

/* --------------------------------------------------------- the options */

static void probe_usage(FILE *f)
{
    fputs("usage: steal_probe [options]   (2 ranks: 0 steals, 1 is stolen from)\n"
          "  --parts LIST        of a,b,c (default a,b,c; a needs both ranks on one node)\n"
          "  --repeat N          repetitions of every case, interleaved (default 3)\n"
          "  --samples N         samples per repetition of the fast cases (default 300)\n"
          "  --slow-samples N    samples per repetition of the cases with a compute\n"
          "                      period (default 20)\n"
          "  --busy LIST         b's target compute periods in ms (default 1,10)\n"
          "  --chunks LIST       c's target chunk lengths in ms (default 0.1,1,10)\n"
          "  --where LABEL       the rows' label (default node or hosts, as found)\n"
          "  --rma NAME          what serves b (Open MPI: the osc component, MPICH: the\n"
          "                      device), for the rows' label\n", f);
}

static void probe_bad(const char *name, const char *value, const char *allowed)
{
    fprintf(stderr, "steal_probe: %s '%s': expected %s\n", name, value, allowed);
}

static int probe_parse_long(const char *name, const char *s, long lo, long hi, long *out)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (0 != errno || end == s || '\0' != *end || v < lo || v > hi) {
        char allowed[64];
        snprintf(allowed, sizeof allowed, "an integer from %ld to %ld", lo, hi);
        probe_bad(name, s, allowed);
        return -1;
    }
    *out = v;
    return 0;
}

/* A comma list of periods in ms, each in (0, 1000]. */
static int probe_parse_periods(const char *name, const char *s, double *out, int *n)
{
    const char *allowed = "a comma list of 1 to 8 periods in ms, each above 0 and at most 1000";
    const char *p = s;
    *n = 0;
    while ('\0' != *p) {
        char *end = NULL;
        errno = 0;
        const double v = strtod(p, &end);
        if (0 != errno || end == p || !(v > 0.0 && v <= 1000.0) || PROBE_MAX_PERIODS == *n
            || (',' != *end && '\0' != *end)) {
            probe_bad(name, s, allowed);
            return -1;
        }
        out[(*n)++] = v;
        p = (',' == *end) ? end + 1 : end;
    }
    if (0 == *n) {
        probe_bad(name, s, allowed);
        return -1;
    }
    return 0;
}

static int probe_parse_parts(const char *s, int *parts)
{
    *parts = 0;
    for (const char *p = s; '\0' != *p; p++) {
        if ('a' <= *p && 'c' >= *p) {
            *parts |= 1 << (*p - 'a');
        } else if (',' != *p) {
            *parts = 0;
            break;
        }
    }
    if (0 == *parts) {
        probe_bad("--parts", s, "a comma list of a, b and c");
        return -1;
    }
    return 0;
}

static int probe_parse_one(const char *a, const char *v, probe_opts *o)
{
    if (0 == strcmp(a, "--parts")) {
        return probe_parse_parts(v, &o->parts);
    }
    if (0 == strcmp(a, "--repeat")) {
        return probe_parse_long(a, v, 1, 20, &o->repeat);
    }
    if (0 == strcmp(a, "--samples")) {
        return probe_parse_long(a, v, 1, 1000000, &o->samples);
    }
    if (0 == strcmp(a, "--slow-samples")) {
        return probe_parse_long(a, v, 1, 100000, &o->slow_samples);
    }
    if (0 == strcmp(a, "--busy")) {
        return probe_parse_periods(a, v, o->busy_ms, &o->nbusy);
    }
    if (0 == strcmp(a, "--chunks")) {
        return probe_parse_periods(a, v, o->chunk_ms, &o->nchunk);
    }
    if (0 == strcmp(a, "--rma")) {
        o->rma = v;
        if (0 == *v || strlen(v) > 8 || strlen(v) != strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789")) {
            probe_bad(a, v, "1 to 8 of a-z and 0-9");
            return -1;
        }
        return 0;
    }
    if (0 == strcmp(a, "--where")) {
        o->where = v;
        if (0 == *v || strlen(v) > 8 || strlen(v) != strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-")) {
            probe_bad(a, v, "1 to 8 of a-z, 0-9 and -");
            return -1;
        }
        return 0;
    }
    fprintf(stderr, "steal_probe: unknown option '%s' (see --help)\n", a);
    return -1;
}

/* 0: run; 1: --help printed; -1: a bad option, its line printed. */
static int probe_parse_args(int argc, char **argv, probe_opts *o)
{
    *o = (probe_opts) { .repeat = 3, .samples = 300, .slow_samples = 20,
                        .busy_ms = { 1.0, 10.0 }, .nbusy = 2,
                        .chunk_ms = { 0.1, 1.0, 10.0 }, .nchunk = 3,
                        .parts = PROBE_PART_A | PROBE_PART_B | PROBE_PART_C, .where = NULL,
                        .rma = NULL };
    for (int i = 1; i < argc; i += 2) {
        if (0 == strcmp(argv[i], "--help") || 0 == strcmp(argv[i], "-h")) {
            return 1;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "steal_probe: %s needs a value (see --help)\n", argv[i]);
            return -1;
        }
        if (0 != probe_parse_one(argv[i], argv[i + 1], o)) {
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- a: shm */

static void probe_wait_for(const uint64_t *flag, uint64_t value)
{
    unsigned spins = 0;
    while (value != __atomic_load_n(flag, __ATOMIC_ACQUIRE)) {
        if (0 == (++spins % PROBE_SPINS_BEFORE_YIELD)) {
            sched_yield();
        }
    }
}

/* A steal as a thief does it: read the word, lower its end by one with a
 * compare-and-swap, again until the swap lands.  Returns the swaps lost. */
static long probe_steal(uint64_t *word)
{
    long lost = 0;
    uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    while (!__atomic_compare_exchange_n(word, &seen, seen - PROBE_END_ONE, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
        lost++;
    }
    return lost;
}

/* The owner claims its next position: next up by one, by compare-and-swap
 * as the owner of a range does. */
static void probe_advance(uint64_t *word)
{
    uint64_t seen = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    while (!__atomic_compare_exchange_n(word, &seen, seen + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
    }
}

/* The owner writes the word (its line now in the owner's cache), then the
 * thief steals once: one steal's cost when nobody races it. */
static void probe_shm_idle(probe_ctx *ctx, probe_case *c, double *lat)
{
    probe_slot *s = ctx->slot;
    uint64_t base = __atomic_load_n(&s->owner_seq, __ATOMIC_ACQUIRE);
    MPI_Barrier(ctx->comm);
    for (long i = 1; i <= c->samples; i++) {
        if (1 == ctx->rank) {
            probe_advance(&s->word);
            __atomic_store_n(&s->owner_seq, base + (uint64_t) i, __ATOMIC_RELEASE);
            probe_wait_for(&s->thief_seq, base + (uint64_t) i);
        } else {
            probe_wait_for(&s->owner_seq, base + (uint64_t) i);
            const double t0 = probe_now_us();
            c->failed_cas += probe_steal(&s->word);
            lat[i - 1] = probe_now_us() - t0;
            __atomic_store_n(&s->thief_seq, base + (uint64_t) i, __ATOMIC_RELEASE);
        }
    }
    MPI_Barrier(ctx->comm);
}

/* The thief waits until it sees the owner advancing now: on a machine with
 * more runnable processes than cores the two are often not running at the
 * same time, and a steal then races nobody. */
static void probe_wait_owner_running(probe_ctx *ctx, const probe_slot *s)
{
    unsigned tries = 0;
    for (;;) {
        const uint64_t before = __atomic_load_n(&s->advances, __ATOMIC_RELAXED);
        probe_spin_us(1.0 + probe_uniform(ctx));
        if (before != __atomic_load_n(&s->advances, __ATOMIC_RELAXED)) {
            return;
        }
        if (0 == (++tries % 16)) {
            sched_yield();
        }
    }
}

/* The owner advances the word as fast as it can until the thief is done;
 * the thief steals right after it has seen the owner advance, the line then
 * in the owner's cache. */
static void probe_shm_contended(probe_ctx *ctx, probe_case *c, double *lat)
{
    probe_slot *s = ctx->slot;
    const uint64_t base = __atomic_load_n(&s->owner_seq, __ATOMIC_ACQUIRE);
    MPI_Barrier(ctx->comm);
    if (1 == ctx->rank) {
        uint64_t advances = __atomic_load_n(&s->advances, __ATOMIC_RELAXED);
        __atomic_store_n(&s->owner_seq, base + 1, __ATOMIC_RELEASE);
        while (base + 1 != __atomic_load_n(&s->thief_seq, __ATOMIC_ACQUIRE)) {
            for (int k = 0; k < 16; k++) {
                probe_advance(&s->word);
            }
            advances += 16;
            __atomic_store_n(&s->advances, advances, __ATOMIC_RELAXED);
        }
    } else {
        probe_wait_for(&s->owner_seq, base + 1);
        for (long i = 0; i < c->samples; i++) {
            probe_wait_owner_running(ctx, s);
            const double t0 = probe_now_us();
            c->failed_cas += probe_steal(&s->word);
            lat[i] = probe_now_us() - t0;
        }
        __atomic_store_n(&s->thief_seq, base + 1, __ATOMIC_RELEASE);
    }
    MPI_Barrier(ctx->comm);
}

/* --------------------------------------------- the target between periods */

/* c's answer: the steal done for the thief on the target's word, the range
 * sent back (what a rank of the victim's node does for a thief elsewhere). */
static void probe_target_answer(probe_ctx *ctx, const int64_t *request)
{
    int64_t reply[2];
    probe_steal(&ctx->answer_word);
    reply[0] = request[0];
    reply[1] = (int64_t) (__atomic_load_n(&ctx->answer_word, __ATOMIC_ACQUIRE) >> 32);
    MPI_Send(reply, 2, MPI_INT64_T, 0, PROBE_TAG_REPLY, ctx->comm);
}

/* The target computes in periods of \p period_ms, testing between them for
 * a request (c) or only for the stop (b); period 0: it waits inside MPI. */
static void probe_target_serve(probe_ctx *ctx, double period_ms, int answers)
{
    int64_t request[2];
    MPI_Status st;
    MPI_Request req;
    for (;;) {
        MPI_Irecv(request, 2, MPI_INT64_T, 0, MPI_ANY_TAG, ctx->comm, &req);
        int done = 0;
        if (0.0 == period_ms) {
            MPI_Wait(&req, &st);
            done = 1;
        }
        while (!done) {
            probe_spin_us(period_ms * 1e3);
            MPI_Test(&req, &done, &st);
        }
        if (PROBE_TAG_STOP == st.MPI_TAG) {
            return;
        }
        if (answers) {
            probe_target_answer(ctx, request);
        }
    }
}

static void probe_stop_target(probe_ctx *ctx)
{
    int64_t none[2] = { 0, 0 };
    MPI_Send(none, 2, MPI_INT64_T, 1, PROBE_TAG_STOP, ctx->comm);
}

/* ------------------------------------------------------------- b: rma */

static void probe_rma_one(probe_ctx *ctx, probe_kind kind, int64_t *seen)
{
    int64_t result = 0;
    if (PROBE_RMA_CAS == kind) {
        const int64_t next = *seen + 1;
        MPI_Compare_and_swap(&next, seen, &result, MPI_INT64_T, 1, 0, ctx->rma_win);
    } else {
        const int64_t one = 1;
        MPI_Fetch_and_op(&one, &result, MPI_INT64_T, 1, 0, MPI_SUM, ctx->rma_win);
    }
    MPI_Win_flush(1, ctx->rma_win);
    *seen = (PROBE_RMA_CAS == kind && result == *seen) ? result + 1 : result;
}

static void probe_rma(probe_ctx *ctx, probe_case *c, double *lat)
{
    MPI_Barrier(ctx->comm);
    if (1 == ctx->rank) {
        probe_target_serve(ctx, c->period_ms, 0);
    } else {
        int64_t seen = 0;
        MPI_Win_lock_all(MPI_MODE_NOCHECK, ctx->rma_win);
        for (long i = 0; i < c->samples; i++) {
            probe_spin_us(c->period_ms * 1e3 * probe_uniform(ctx));
            const double t0 = probe_now_us();
            probe_rma_one(ctx, c->kind, &seen);
            lat[i] = probe_now_us() - t0;
        }
        MPI_Win_unlock_all(ctx->rma_win);
        probe_stop_target(ctx);
    }
    MPI_Barrier(ctx->comm);
}

/* ---------------------------------------------------------- c: 2-sided */

static void probe_two_sided(probe_ctx *ctx, probe_case *c, double *lat)
{
    MPI_Barrier(ctx->comm);
    if (1 == ctx->rank) {
        probe_target_serve(ctx, c->period_ms, 1);
    } else {
        for (long i = 0; i < c->samples; i++) {
            int64_t request[2] = { (int64_t) i, 1 };
            int64_t reply[2];
            MPI_Request req[2];
            MPI_Status st[2];
            probe_spin_us(c->period_ms * 1e3 * probe_uniform(ctx));
            const double t0 = probe_now_us();
            MPI_Irecv(reply, 2, MPI_INT64_T, 1, PROBE_TAG_REPLY, ctx->comm, &req[0]);
            MPI_Isend(request, 2, MPI_INT64_T, 1, PROBE_TAG_REQUEST, ctx->comm, &req[1]);
            MPI_Waitall(2, req, st);
            lat[i] = probe_now_us() - t0;
        }
        probe_stop_target(ctx);
    }
    MPI_Barrier(ctx->comm);
}

/* ----------------------------------------------------------- the cases */

static int probe_add(probe_case *cases, int n, probe_kind kind, double period_ms, long samples)
{
    cases[n] = (probe_case) { .kind = kind, .period_ms = period_ms, .samples = samples };
    return n + 1;
}

/* Every case of the parts asked for, in the same order on both ranks. */
static int probe_make_cases(const probe_opts *o, int same_node, probe_case *cases)
{
    int n = 0;
    if ((o->parts & PROBE_PART_A) && same_node) {
        n = probe_add(cases, n, PROBE_SHM_IDLE, 0.0, o->samples);
        n = probe_add(cases, n, PROBE_SHM_CONTENDED, 0.0, o->samples);
    }
    if (o->parts & PROBE_PART_B) {
        for (int op = 0; op < 2; op++) {
            const probe_kind kind = 0 == op ? PROBE_RMA_CAS : PROBE_RMA_FOP;
            n = probe_add(cases, n, kind, 0.0, o->samples);
            for (int k = 0; k < o->nbusy; k++) {
                n = probe_add(cases, n, kind, o->busy_ms[k], o->slow_samples);
            }
        }
    }
    if (o->parts & PROBE_PART_C) {
        n = probe_add(cases, n, PROBE_TWO_SIDED, 0.0, o->samples);
        for (int k = 0; k < o->nchunk; k++) {
            n = probe_add(cases, n, PROBE_TWO_SIDED, o->chunk_ms[k], o->slow_samples);
        }
    }
    return n;
}

static void probe_run_case(probe_ctx *ctx, probe_case *c, long rep)
{
    double *lat = (0 == ctx->rank) ? c->lat_us + rep * c->samples : NULL;
    switch (c->kind) {
    case PROBE_SHM_IDLE:
        probe_shm_idle(ctx, c, lat);
        break;
    case PROBE_SHM_CONTENDED:
        probe_shm_contended(ctx, c, lat);
        break;
    case PROBE_RMA_CAS:
    case PROBE_RMA_FOP:
        probe_rma(ctx, c, lat);
        break;
    case PROBE_TWO_SIDED:
        probe_two_sided(ctx, c, lat);
        break;
    }
    if (0 == ctx->rank) {
        double *sorted = malloc((size_t) c->samples * sizeof *sorted);
        if (NULL == sorted) {
            fprintf(stderr, "steal_probe: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
            return;
        }
        memcpy(sorted, lat, (size_t) c->samples * sizeof *sorted);
        ob_bench_sort(sorted, (size_t) c->samples);
        c->rep_median[rep] = ob_bench_quantile(sorted, (size_t) c->samples, 0.5);
        free(sorted);
    }
}

/* ---------------------------------------------------------- the output */

static void probe_case_names(const probe_opts *o, const probe_case *c, const char **part,
                             char *transport, const char **op, char *target, size_t len)
{
    static const char *const parts[] = { "a", "a", "b", "b", "c" };
    static const char *const transports[] = { "shm-atomic", "shm-atomic", "rma", "rma", "isend-irecv" };
    static const char *const ops[] = { "load+cas", "load+cas", "cas+flush", "fop+flush", "round-trip" };
    *part = parts[c->kind];
    *op = ops[c->kind];
    if (NULL != o->rma && (PROBE_RMA_CAS == c->kind || PROBE_RMA_FOP == c->kind)) {
        snprintf(transport, len, "rma:%s", o->rma);
    } else {
        snprintf(transport, len, "%s", transports[c->kind]);
    }
    if (PROBE_SHM_IDLE == c->kind) {
        snprintf(target, len, "owner-idle");
    } else if (PROBE_SHM_CONTENDED == c->kind) {
        snprintf(target, len, "owner-advancing");
    } else if (0.0 == c->period_ms) {
        snprintf(target, len, PROBE_TWO_SIDED == c->kind ? "answers-at-once" : "waits-in-mpi");
    } else {
        snprintf(target, len, "%s-%gms", PROBE_TWO_SIDED == c->kind ? "chunks" : "busy", c->period_ms);
    }
}

/* The last column: what the row says about the transport. */
static void probe_note(const probe_case *c, size_t n, double median_us, double at_once_us, char *note,
                       size_t len)
{
    const double period_us = c->period_ms * 1e3;
    if (PROBE_SHM_CONTENDED == c->kind || PROBE_SHM_IDLE == c->kind) {
        snprintf(note, len, "lost-cas/steal=%.2f", (double) c->failed_cas / (double) n);
    } else if (0.0 == c->period_ms) {
        snprintf(note, len, "-");
    } else if (PROBE_TWO_SIDED != c->kind) {
        snprintf(note, len, "median/period=%.2f progress-without-target=%s", median_us / period_us,
                 median_us < PROBE_NEEDS_TARGET_SHARE * period_us ? "yes" : "no");
    } else {
        snprintf(note, len, "median/period=%.2f half-chunk+rtt=%.0fus", median_us / period_us,
                 0.5 * period_us + at_once_us);
    }
}

static void probe_print_row(const probe_ctx *ctx, const probe_opts *o, const probe_case *c,
                            double at_once_us)
{
    const size_t n = (size_t) (o->repeat * c->samples);
    double meds[20];
    memcpy(meds, c->rep_median, (size_t) o->repeat * sizeof *meds);
    ob_bench_sort(meds, (size_t) o->repeat);
    ob_bench_sort(c->lat_us, n);
    const double median = ob_bench_quantile(meds, (size_t) o->repeat, 0.5);
    const char *part;
    char transport[32];
    const char *op;
    char target[32];
    char range[48];
    char note[96];
    probe_case_names(o, c, &part, transport, &op, target, sizeof target);
    snprintf(range, sizeof range, "%.3f-%.3f", meds[0], meds[o->repeat - 1]);
    probe_note(c, n, median, at_once_us, note, sizeof note);
    printf("%-7s %-5s %-4s %-12s %-10s %-16s %11.3f %19s %11.3f %6zu  %s\n", ctx->mpi,
           NULL != o->where ? o->where : (ctx->same_node ? "node" : "hosts"), part, transport, op,
           target, median, range, ob_bench_quantile(c->lat_us, n, 0.9), n, note);
}

/* The two-sided round trip when the target answers at once: the part of a
 * chunked answer that is not waiting for the chunk's end. */
static double probe_at_once_us(const probe_opts *o, const probe_case *cases, int n)
{
    for (int i = 0; i < n; i++) {
        if (PROBE_TWO_SIDED == cases[i].kind && 0.0 == cases[i].period_ms) {
            double meds[20];
            memcpy(meds, cases[i].rep_median, (size_t) o->repeat * sizeof *meds);
            ob_bench_sort(meds, (size_t) o->repeat);
            return ob_bench_quantile(meds, (size_t) o->repeat, 0.5);
        }
    }
    return 0.0;
}

static void probe_print_header(const probe_ctx *ctx, const probe_opts *o)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    version[strcspn(version, "\n,")] = '\0';
    for (char *p = version; '\0' != *p; p++) {
        *p = ('\t' == *p) ? ' ' : *p;
    }
    double pair[64];
    for (int i = 0; i < 64; i++) {
        const double t0 = probe_now_us();
        pair[i] = probe_now_us() - t0;
    }
    ob_bench_sort(pair, 64);
    printf("steal_probe: %s; 2 ranks %s; %ld repetitions interleaved, %ld / %ld samples each"
           " (fast / with a compute period); latencies in us, clock read %.0f ns\n",
           version, ctx->same_node ? "on one node" : "on two nodes", o->repeat, o->samples,
           o->slow_samples, 1e3 * ob_bench_quantile(pair, 64, 0.5));
    if ((o->parts & PROBE_PART_A) && !ctx->same_node) {
        printf("steal_probe: part a skipped: the two ranks share no memory (not on one node)\n");
    }
    if ('\0' != ctx->rma_failed[0]) {
        printf("steal_probe: part b skipped: MPI_Win_allocate failed (%s): no one-sided component"
               " serves this transport\n", ctx->rma_failed);
    }
    printf("%-7s %-5s %-4s %-12s %-10s %-16s %11s %19s %11s %6s  %s\n", "mpi", "where", "part", "transport",
           "op", "target", "median_us", "range_of_medians", "p90_us", "n", "note");
}

/* ------------------------------------------------------------ set-up */

static void probe_setup_shm(probe_ctx *ctx, MPI_Comm node)
{
    /* Only the owner's memory; 64 bytes over so that its slot starts a line. */
    const MPI_Aint bytes = (1 == ctx->rank) ? (MPI_Aint) (sizeof(probe_slot) + 64) : 0;
    char *mine = NULL;
    char *base = NULL;
    MPI_Aint size = 0;
    int unit = 0;
    MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &mine, &ctx->shm_win);
    MPI_Win_shared_query(ctx->shm_win, 1, &size, &unit, &base);
    ctx->slot = (probe_slot *) (void *) (base + (64 - (uintptr_t) base % 64) % 64);
    if (1 == ctx->rank) {
        memset(ctx->slot, 0, sizeof *ctx->slot);
        __atomic_store_n(&ctx->slot->word, PROBE_WORD_START, __ATOMIC_RELEASE);
    }
}

/* b's window.  Where no one-sided component serves the transport (Debian's
 * Open MPI 4.1 over TCP leaves out osc/pt2pt), MPI_Win_allocate fails: part b
 * is then skipped with a line saying why, on both ranks alike. */
static void probe_setup_rma(probe_ctx *ctx, probe_opts *o)
{
    char why[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    const int rc = MPI_Win_allocate((MPI_Aint) sizeof(int64_t), (int) sizeof(int64_t), MPI_INFO_NULL,
                                    ctx->comm, &ctx->rma_word, &ctx->rma_win);
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_ARE_FATAL);
    int ok = (MPI_SUCCESS == rc);
    if (!ok) {
        MPI_Error_string(rc, why, &len);
        ctx->rma_win = MPI_WIN_NULL;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, ctx->comm);
    if (!ok) {
        snprintf(ctx->rma_failed, sizeof ctx->rma_failed, "%s", '\0' != why[0] ? why : "on another rank");
        o->parts &= ~PROBE_PART_B;
        return;
    }
    *ctx->rma_word = (int64_t) PROBE_WORD_START;
}

static void probe_setup_windows(probe_ctx *ctx, probe_opts *o)
{
    MPI_Comm node;
    int nnode = 0;
    MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nnode);
    ctx->same_node = (2 == nnode);
    ctx->shm_win = MPI_WIN_NULL;
    ctx->rma_win = MPI_WIN_NULL;
    if ((o->parts & PROBE_PART_A) && ctx->same_node) {
        probe_setup_shm(ctx, node);
    }
    MPI_Comm_free(&node);
    if (o->parts & PROBE_PART_B) {
        probe_setup_rma(ctx, o);
    }
    ctx->answer_word = PROBE_WORD_START;
    MPI_Barrier(ctx->comm);
}

static void probe_name_mpi(probe_ctx *ctx)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    const char *name = NULL != strstr(version, "Open MPI") ? "openmpi"
                       : NULL != strstr(version, "MPICH") ? "mpich" : "other";
    snprintf(ctx->mpi, sizeof ctx->mpi, "%s", name);
}

static int probe_alloc(const probe_ctx *ctx, const probe_opts *o, probe_case *cases, int n)
{
    if (0 != ctx->rank) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        cases[i].lat_us = calloc((size_t) (o->repeat * cases[i].samples), sizeof(double));
        cases[i].rep_median = calloc((size_t) o->repeat, sizeof(double));
        if (NULL == cases[i].lat_us || NULL == cases[i].rep_median) {
            fprintf(stderr, "steal_probe: out of memory for %ld samples\n", o->repeat * cases[i].samples);
            return -1;
        }
    }
    return 0;
}

static void probe_free(probe_ctx *ctx, probe_case *cases, int n)
{
    for (int i = 0; i < n; i++) {
        free(cases[i].lat_us);
        free(cases[i].rep_median);
    }
    if (MPI_WIN_NULL != ctx->rma_win) {
        MPI_Win_free(&ctx->rma_win);
    }
    if (MPI_WIN_NULL != ctx->shm_win) {
        MPI_Win_free(&ctx->shm_win);
    }
    MPI_Comm_free(&ctx->comm);
}

/* Parsed the same on every rank, so every rank leaves alike. */
static int probe_start(int argc, char **argv, probe_ctx *ctx, probe_opts *o)
{
    int size = 0;
    const int parsed = probe_parse_args(argc, argv, o);
    MPI_Comm_dup(MPI_COMM_WORLD, &ctx->comm);
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &size);
    if (1 == parsed && 0 == ctx->rank) {
        probe_usage(stdout);
    }
    if (0 == parsed && 2 != size) {
        if (0 == ctx->rank) {
            fprintf(stderr, "steal_probe: ranks %d: expected exactly 2 (0 steals, 1 is stolen from)\n",
                    size);
        }
        return -1;
    }
    return parsed;
}

int main(int argc, char **argv)
{
    probe_ctx ctx = { .rng = UINT64_C(0x9e3779b97f4a7c15) };
    probe_opts o;
    probe_case cases[2 + 2 * (1 + PROBE_MAX_PERIODS) + 1 + PROBE_MAX_PERIODS];
    MPI_Init(&argc, &argv);
    const int started = probe_start(argc, argv, &ctx, &o);
    if (0 != started) {
        MPI_Comm_free(&ctx.comm);
        MPI_Finalize();
        return 1 == started ? 0 : 2;
    }
    probe_name_mpi(&ctx);
    probe_setup_windows(&ctx, &o);
    const int n = probe_make_cases(&o, ctx.same_node, cases);
    int ok = (0 == probe_alloc(&ctx, &o, cases, n));
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, ctx.comm);
    if (!ok) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (0 == ctx.rank) {
        probe_print_header(&ctx, &o);
        fflush(stdout);
    }
    for (long rep = 0; rep < o.repeat; rep++) {
        for (int i = 0; i < n; i++) {
            probe_run_case(&ctx, &cases[i], rep);
        }
    }
    if (0 == ctx.rank) {
        const double at_once = probe_at_once_us(&o, cases, n);
        for (int i = 0; i < n; i++) {
            probe_print_row(&ctx, &o, &cases[i], at_once);
        }
    }
    probe_free(&ctx, cases, n);
    MPI_Finalize();
    return 0;
}
