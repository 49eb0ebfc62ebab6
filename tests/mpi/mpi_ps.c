/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The asynchronous mode (omnibatch_ps_*) under mpirun at 2, 3 and 4 ranks:
 *   - one worker, no staleness: the servers' model is plain SGD (momentum and
 *     weight decay included) to 1e-12 in double, also with the parameters
 *     sharded over every other rank as servers;
 *   - with every rank but one working at different speeds and the batches
 *     moving, every sample of every epoch is computed exactly once, and
 *     every push is counted as applied or dropped;
 *   - a gradient staler than the bound is dropped and counted (a slow
 *     worker's NaN gradient leaves the model finite);
 *   - bad settings, a parameter count that differs between ranks, a worker
 *     calling the servers' functions and the other way round: one line and
 *     a status code, on every rank, before any push; no rank left waiting;
 *   - a worker that leaves early and a server that ends early end the run;
 *   - with OMNIBATCH_REPORT and OMNIBATCH_TRACE, the run's report and trace (mpi_ps.sh);
 *   - a run saved part of the way and restored uses every sample once across the restart.
 */
#include "config.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_api_common.h"
#include "ob_json_check.h"

#define EXPECT_FAIL(code, needle, call)                                                      \
    do {                                                                                     \
        int ef_rc_ = (call);                                                                 \
        ck_assert_msg((code) == ef_rc_, "%s -> %d (%s), expected %d: %s", #call, ef_rc_,      \
                      omnibatch_strerror(ef_rc_), (code), omnibatch_last_error());           \
        ck_assert_msg(NULL != strstr(omnibatch_last_error(), (needle)),                      \
                      "%s: detail \"%s\" lacks \"%s\"", #call, omnibatch_last_error(),       \
                      (needle));                                                             \
    } while (0)

/* ---- a least-squares model on data computed from the index ------------------ */

#define DIM 9

static double feature(long i, int j)
{
    return sin(0.37 * (double) i + 1.3 * (double) j);
}

static double target(long i)
{
    double y = 0.01 * cos((double) i);

    for (int j = 0; j < DIM; j++) {
        y += feature(i, j) * (double) (j + 1) / DIM;
    }
    return y;
}

/* Mean gradient of 0.5 (w.x - y)^2 over samples perm[start .. start + count - 1]. */
static void lsq_gradient(const double *w, const long *perm, long start, long count, double *g)
{
    for (int j = 0; j < DIM; j++) {
        g[j] = 0.0;
    }
    for (long k = 0; k < count; k++) {
        long i = perm[start + k];
        double r = -target(i);

        for (int j = 0; j < DIM; j++) {
            r += w[j] * feature(i, j);
        }
        for (int j = 0; j < DIM; j++) {
            g[j] += r * feature(i, j);
        }
    }
    for (int j = 0; j < DIM; j++) {
        g[j] /= (double) count;
    }
}

static omnibatch_ps_options sgd_options(int servers)
{
    omnibatch_ps_options o;

    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.servers = servers;
    o.lr = 0.05;
    o.momentum = 0.9;
    o.weight_decay = 1e-3;
    o.epochs = 4;
    o.seed = 99;
    return o;
}

START_TEST(test_one_worker_is_plain_sgd)
{
    /* Every rank but the last serves a range; the last one works alone. */
    const int P = mpi_size();
    const long B = 20, N = 200;
    omnibatch_ps_options o = sgd_options(P - 1);
    double w[DIM], replay[DIM], m[DIM] = { 0 }, g[DIM];
    long *perm = malloc((size_t) N * sizeof *perm);
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    int index, done = 0;

    ck_assert_ptr_nonnull(perm);
    for (int j = 0; j < DIM; j++) {
        w[j] = replay[j] = 0.1 * (double) j;
    }
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_DOUBLE, B, N, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        omnibatch_ps_stats st;

        OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
        ck_assert_int_eq(done, 1);
        OB_CK_OK(omnibatch_ps_get_stats(ps, &st));
        ck_assert_int_eq(st.version, o.epochs * N / B);
        ck_assert_int_eq(st.dropped, 0);
    } else {
        omnibatch_ps_task t;
        long epoch = -1;

        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        while (!t.done) {
            ck_assert_int_eq(t.count, B);
            if (t.epoch != epoch) {
                OB_CK_OK(omnibatch_ps_permutation(ps, t.epoch, perm));
                epoch = t.epoch;
            }
            lsq_gradient(w, perm, t.start, t.count, g);
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        }
    }
    /* The same batches, in order, as plain SGD: every rank replays them. */
    for (long e = 0; e < o.epochs; e++) {
        OB_CK_OK(omnibatch_ps_permutation(ps, e, perm));
        for (long k = 0; k < N / B; k++) {
            lsq_gradient(replay, perm, k * B, B, g);
            for (int j = 0; j < DIM; j++) {
                double d = g[j] + o.weight_decay * replay[j];

                m[j] = o.momentum * m[j] + d;
                replay[j] -= o.lr * m[j];
            }
        }
    }
    /* A server holds its range; the worker holds the last model whole. */
    for (int j = 0; j < DIM; j++) {
        long first = (long) DIM * index / (P - 1), end = (long) DIM * (index + 1) / (P - 1);

        if (OMNIBATCH_PS_WORKER == role || (j >= first && j < end)) {
            ck_assert_double_eq_tol(w[j], replay[j], 1e-12);
        }
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
    ck_assert_ptr_null(ps);
    free(perm);
}
END_TEST

/* ---- every sample once per epoch, every push counted ------------------------ */

START_TEST(test_every_sample_once_per_epoch)
{
    const int P = mpi_size();
    const int W = P - 1;
    const long B = 24L * W, N = 317;
    const long epochs = 3;
    omnibatch_ps_options o;
    float w[DIM] = { 0 }, g[DIM] = { 0 };
    long *perm = malloc((size_t) N * sizeof *perm);
    long *used = calloc((size_t) (N * epochs), sizeof *used);
    long *all = calloc((size_t) (N * epochs), sizeof *all);
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    int index;

    ck_assert_ptr_nonnull(perm);
    ck_assert_ptr_nonnull(used);
    ck_assert_ptr_nonnull(all);
    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.epochs = epochs;
    o.lr = 1e-3;
    o.warmup = 0;
    o.period = 1;
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_FLOAT, B, N, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        omnibatch_ps_stats st;
        long pushes = 0, applied = 0, dropped = 0, samples = 0;
        int done = 0;

        /* In small servings: the server may do its own work between calls. */
        while (!done) {
            OB_CK_OK(omnibatch_ps_serve(ps, 3, &done));
        }
        OB_CK_OK(omnibatch_ps_get_stats(ps, &st));
        for (int k = 0; k < W; k++) {
            omnibatch_ps_worker_stats ws;

            OB_CK_OK(omnibatch_ps_get_worker_stats(ps, k, &ws));
            ck_assert_int_eq(ws.rank, 1 + k);
            ck_assert_int_eq(ws.applied + ws.dropped, ws.pushes);
            ck_assert_int_ge(ws.staleness_p99, 0);
            ck_assert_int_le(ws.staleness_p99, ws.staleness_max);
            pushes += ws.pushes;
            applied += ws.applied;
            dropped += ws.dropped;
            samples += ws.samples;
        }
        ck_assert_int_eq(pushes, st.pushes);
        ck_assert_int_eq(pushes, st.slices);
        ck_assert_int_eq(applied, st.version);
        ck_assert_int_eq(dropped, st.dropped);
        ck_assert_int_eq(samples, epochs * N);
        ck_assert(st.busy_fraction >= 0.0 && st.busy_fraction <= 1.0);
        ck_assert_int_eq(st.finished, 1);
    } else {
        omnibatch_ps_task t;
        long epoch = -1;

        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        while (!t.done) {
            if (t.epoch != epoch) {
                OB_CK_OK(omnibatch_ps_permutation(ps, t.epoch, perm));
                epoch = t.epoch;
            }
            for (long k = 0; k < t.count; k++) {
                used[t.epoch * N + perm[t.start + k]]++;
            }
            /* Worker k computes k + 1 times slower: the batches move. */
            mpi_sleep_ns(20000L * (index + 1) * t.count);
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        }
    }
    MPI_Reduce(used, all, (int) (N * epochs), MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == mpi_rank()) {
        for (long i = 0; i < N * epochs; i++) {
            ck_assert_msg(1 == all[i], "epoch %ld sample %ld computed %ld times", i / N, i % N, all[i]);
        }
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
    free(perm);
    free(used);
    free(all);
}
END_TEST

/* ---- the drop bound ----------------------------------------------------------- */

START_TEST(test_stale_gradient_is_dropped_and_counted)
{
    const int P = mpi_size();
    const int W = P - 1;
    omnibatch_ps_options o;
    double w[DIM], g[DIM];
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    int index;

    if (W < 2) {
        return;                  /* one worker is never stale */
    }
    for (int j = 0; j < DIM; j++) {
        w[j] = 1.0;
    }
    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.max_staleness = 0;         /* any update in between: dropped */
    o.epochs = 0;
    o.max_pushes = 40;
    o.adaptive = 0;
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_DOUBLE, 8L * W, 1000, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        omnibatch_ps_worker_stats slow;
        omnibatch_ps_stats st;
        int done = 0;

        OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
        OB_CK_OK(omnibatch_ps_get_stats(ps, &st));
        OB_CK_OK(omnibatch_ps_get_worker_stats(ps, W - 1, &slow));
        /* The slow worker's gradients (NaN) were all too stale: dropped, counted, not applied. */
        ck_assert_int_ge(slow.pushes, 1);
        ck_assert_int_eq(slow.dropped, slow.pushes);
        ck_assert_int_eq(slow.applied, 0);
        ck_assert_int_ge(slow.staleness_max, 1);
        ck_assert_int_ge(st.dropped, slow.dropped);
        ck_assert_int_eq(st.pushes, 40);
        for (int j = 0; j < DIM; j++) {
            ck_assert(isfinite(w[j]));
        }
    } else {
        omnibatch_ps_task t;

        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        while (!t.done) {
            for (int j = 0; j < DIM; j++) {
                g[j] = index == W - 1 ? (double) NAN : 0.0;
            }
            if (index == W - 1) {
                mpi_sleep_ns(100000000L);  /* the others push meanwhile */
            }
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        }
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
}
END_TEST

/* ---- bad input ------------------------------------------------------------------ */

static void expect_create_fails(void *params, long count, MPI_Datatype type, long B, long N,
                                const omnibatch_ps_options *o, int code, const char *needle)
{
    omnibatch_ps_t ps = (omnibatch_ps_t) &ps;   /* must come back NULL */

    EXPECT_FAIL(code, needle, omnibatch_ps_create(MPI_COMM_WORLD, params, count, type, B, N, o, &ps));
    ck_assert_ptr_null(ps);
}

#define BAD(stmt, code, needle)                                                     \
    do {                                                                            \
        OB_CK_OK(omnibatch_ps_options_init(&o));                                    \
        stmt;                                                                       \
        expect_create_fails(w, DIM, MPI_FLOAT, 64, 1000, &o, (code), (needle));     \
    } while (0)

START_TEST(test_create_rejects_bad_input)
{
    const int P = mpi_size();
    const int me = mpi_rank();
    float w[DIM + 1] = { 0 };
    char line[200];
    omnibatch_ps_options o;

    OB_CK_OK(omnibatch_ps_options_init(&o));
    BAD(o.lr = 0.0, OMNIBATCH_ERR_ARG, "omnibatch_ps_create: lr=0: expected a finite number > 0");
    BAD(o.momentum = 1.0, OMNIBATCH_ERR_ARG, "momentum=1: expected a number in [0, 1)");
    BAD(o.weight_decay = -1.0, OMNIBATCH_ERR_ARG, "weight_decay=-1: expected a finite number >= 0");
    BAD(o.staleness = (omnibatch_ps_staleness) 7, OMNIBATCH_ERR_ARG, "staleness=7: expected");
    BAD(o.max_staleness = -2, OMNIBATCH_ERR_ARG, "max_staleness=-2: expected >= 0 updates, or "
        "OMNIBATCH_PS_AUTO (-1)");
    snprintf(line, sizeof line, "servers=%d: expected 1..%d", P, P - 1);
    BAD(o.servers = P, OMNIBATCH_ERR_ARG, line);
    BAD(o.servers = 0, OMNIBATCH_ERR_ARG, "servers=0: expected 1..");
    BAD((o.epochs = 0, o.max_pushes = 0), OMNIBATCH_ERR_ARG, "epochs=0 and max_pushes=0: expected a "
        "limit to one of them");
    BAD(o.period = -1, OMNIBATCH_ERR_ARG, "period=-1: expected 0 (the workers) or 1..1000000 pushes");
    BAD(o.min_batch = 0, OMNIBATCH_ERR_ARG, "min_batch=0: expected 1..global_batch (64)");
    BAD(o.gain = 2.0, OMNIBATCH_ERR_ARG, "gain=2: expected a number in (0, 1]");
    BAD(o.adaptive = 3, OMNIBATCH_ERR_ARG, "adaptive=3: expected 0 or 1");
    if (P > 2) {
        /* Two workers of at least 60 cannot share a global batch of 64. */
        snprintf(line, sizeof line, "min_batch, max_batch: the %d workers take %d .. %d samples a "
                 "round but global_batch=64", P - 1, 60 * (P - 1), 64 * (P - 1));
        BAD(o.min_batch = 60, OMNIBATCH_ERR_INFEASIBLE, line);
    }
    OB_CK_OK(omnibatch_ps_options_init(&o));
    expect_create_fails(NULL, DIM, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG,
                        "params=NULL: expected the model's 9 elements");
    expect_create_fails(w, DIM, MPI_INT, 64, 1000, &o, OMNIBATCH_ERR_ARG,
                        "type: expected MPI_FLOAT or MPI_DOUBLE");
    expect_create_fails(w, 0, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG, "count=0: expected 1..");
    expect_create_fails(w, DIM, MPI_FLOAT, 0, 1000, &o, OMNIBATCH_ERR_ARG, "global_batch=0: expected");
    expect_create_fails(w, DIM, MPI_FLOAT, 64, 0, &o, OMNIBATCH_ERR_ARG, "dataset_size=0: expected");

    /* A parameter count that differs on the last rank: every rank fails, with the same line. */
    snprintf(line, sizeof line, "omnibatch_ps_create: count differs between ranks: %d on rank 0, %d "
             "on rank %d: every rank must pass the same", DIM, DIM + 1, P - 1);
    expect_create_fails(w, me == P - 1 ? DIM + 1 : DIM, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG,
                        line);
    /* The type differs: named too. */
    expect_create_fails(w, DIM, me == P - 1 ? MPI_DOUBLE : MPI_FLOAT, 64, 1000, &o,
                        OMNIBATCH_ERR_ARG, "type differs between ranks");
    /* A setting that differs, good on each rank alone: refused on every rank at create, with the
     * same line, before a worker could wait for a server that has stopped (epochs) or send to one
     * that does not serve (servers). */
    o.epochs = me == P - 1 ? 3 : 2;
    snprintf(line, sizeof line, "omnibatch_ps_create: epochs differs between ranks: 2 on rank 0, 3 on "
             "rank %d: every rank must pass the same", P - 1);
    expect_create_fails(w, DIM, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG, line);
    OB_CK_OK(omnibatch_ps_options_init(&o));
    if (P > 2) {
        o.servers = me == P - 1 ? 2 : 1;
        snprintf(line, sizeof line, "omnibatch_ps_create: servers differs between ranks: 1 on rank 0, 2 "
                 "on rank %d: every rank must pass the same", P - 1);
        expect_create_fails(w, DIM, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG, line);
        OB_CK_OK(omnibatch_ps_options_init(&o));
    }
    /* One rank's bad option: it has its own line, the others one naming it. */
    o.lr = me == 1 ? -1.0 : 0.01;
    snprintf(line, sizeof line, "rank 1 failed (invalid argument): see its message");
    expect_create_fails(w, DIM, MPI_FLOAT, 64, 1000, &o, OMNIBATCH_ERR_ARG,
                        me == 1 ? "lr=-1: expected a finite number > 0" : line);
}
END_TEST

/* The functions of the other role, and of server 0 only: one line each, nothing sent. */
START_TEST(test_wrong_role_is_refused)
{
    omnibatch_ps_options o;
    float w[DIM] = { 0 }, g[DIM] = { 0 };
    long plan[64];
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    omnibatch_ps_task t;
    omnibatch_ps_worker_stats ws;
    int index, done = 0;

    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.max_pushes = 5;
    o.epochs = 0;
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_FLOAT, 64, 1000, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_WORKER == role) {
        char line[160];

        snprintf(line, sizeof line, "omnibatch_ps_serve: rank %d is worker %d: only the servers (ranks "
                 "0..0) call it", mpi_rank(), index);
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, line, omnibatch_ps_serve(ps, 0, &done));
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_set_plan: rank", omnibatch_ps_set_plan(ps, plan, 1));
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_get_worker_stats: rank",
                    omnibatch_ps_get_worker_stats(ps, 0, &ws));
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_push: no task yet: call omnibatch_ps_pull() first",
                    omnibatch_ps_push(ps, g, &t));
        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_pull: pulled already", omnibatch_ps_pull(ps, &t));
        while (!t.done) {
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        }
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_push: the last task was done",
                    omnibatch_ps_push(ps, g, &t));
    } else {
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_pull: rank 0 is server 0: only the workers",
                    omnibatch_ps_pull(ps, &t));
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_push: rank 0 is server 0",
                    omnibatch_ps_push(ps, g, &t));
        EXPECT_FAIL(OMNIBATCH_ERR_ARG, "omnibatch_ps_serve: max_pushes=-1", omnibatch_ps_serve(ps, -1, &done));
        EXPECT_FAIL(OMNIBATCH_ERR_ARG, "workers=0: expected an array of the",
                    omnibatch_ps_set_plan(ps, plan, 0));
        /* A batch below the least: the planner's line, behind the function's name. */
        for (int k = 0; k < mpi_size() - 1; k++) {
            plan[k] = 0 == k ? 0 : 64 / (mpi_size() - 1);
        }
        EXPECT_FAIL(OMNIBATCH_ERR_ARG, "omnibatch_ps_set_plan: plan: rank 0 has batch 0 outside its bounds [1, 64]",
                    omnibatch_ps_set_plan(ps, plan, mpi_size() - 1));
        OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
        ck_assert_int_eq(done, 1);
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "every worker is done already", omnibatch_ps_serve(ps, 0, &done));
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "omnibatch_ps_destroy: *ps=NULL", omnibatch_ps_destroy(&ps));
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "omnibatch_ps_serve: ctx=NULL", omnibatch_ps_serve(NULL, 0, &done));
}
END_TEST

/* ---- ending early ----------------------------------------------------------------- */

/* The last worker leaves after two pushes; the server stops after a few pushes and destroys:
 * every worker's next push is answered done, and no rank waits for ever. */
START_TEST(test_early_ends)
{
    const int P = mpi_size();
    omnibatch_ps_options o;
    float w[DIM] = { 0 }, g[DIM] = { 0 };
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    int index, done = 0;

    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.epochs = 1000;             /* far more than will run */
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_FLOAT, 8L * (P - 1), 1000, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        OB_CK_OK(omnibatch_ps_serve(ps, 4L * (P - 1), &done));
        ck_assert_int_eq(done, 0);
    } else {
        omnibatch_ps_task t;
        long pushes = 0;

        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        while (!t.done && !(index == P - 2 && P > 2 && 2 == pushes)) {
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
            pushes++;
        }
    }
    /* The server drains, the leaving worker says so, the others get done. */
    OB_CK_OK(omnibatch_ps_destroy(&ps));
}
END_TEST

/* ---- the report and the trace -------------------------------------------------------- */

/* The whole file \p path, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text = NULL;
    size_t len = 0;
    size_t got;

    if (NULL == f) {
        return NULL;
    }
    text = calloc(1 << 20, 1);
    got = NULL == text ? 0 : fread(text, 1, (1 << 20) - 1, f);
    len = got;
    fclose(f);
    if (NULL != text) {
        text[len] = '\0';
    }
    return text;
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(text, needle); NULL != p; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* With OMNIBATCH_REPORT=json, OMNIBATCH_REPORT_FILE=DIR/report.json and OMNIBATCH_TRACE=DIR/trace.csv
 * (mpi_ps.sh's second pass sets them and OB_PS_FILES=DIR), server 0 writes DIR/report.json.async
 * (every worker's figures, parsing as JSON) and DIR/trace.csv.async (a row per push). */
START_TEST(test_report_and_trace)
{
    const char *dir = getenv("OB_PS_FILES");
    const int W = mpi_size() - 1;
    omnibatch_ps_options o;
    float w[DIM] = { 0 }, g[DIM] = { 0 };
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    int index, done = 0;

    if (NULL == dir) {
        return;                  /* the pass without the settings */
    }
    OB_CK_OK(omnibatch_ps_options_init(&o));
    o.epochs = 0;
    o.max_pushes = 12;
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, w, DIM, MPI_FLOAT, 8L * W, 1000, &o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
    } else {
        omnibatch_ps_task t;

        OB_CK_OK(omnibatch_ps_pull(ps, &t));
        while (!t.done) {
            OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        }
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
    if (0 == mpi_rank()) {
        char path[4096];
        char *report, *trace;

        snprintf(path, sizeof path, "%s/report.json.async", dir);
        report = slurp(path);
        ck_assert_msg(NULL != report, "%s: not written", path);
        ck_assert_msg(json_parses(report), "%s does not parse: %s", path, report);
        ck_assert_msg(NULL != strstr(report, "\"pushes\": 12,") && NULL != strstr(report, "\"lost\": 0,"),
                      "%s", report);
        ck_assert_int_eq(count_of(report, "{\"rank\": "), W);
        ck_assert_int_eq(count_of(report, "\"staleness_p99\": "), W);
        snprintf(path, sizeof path, "%s/trace.csv.async", dir);
        trace = slurp(path);
        ck_assert_msg(NULL != trace, "%s: not written", path);
        ck_assert_msg(trace == strstr(trace, "push,t_s,worker,rank,batch,staleness,applied,scale,version,"),
                      "%s", trace);
        ck_assert_int_eq(count_of(trace, "\n"), 1 + 12);
        free(report);
        free(trace);
    }
}
END_TEST

/* ---- save and restore -------------------------------------------------------------------- */

typedef struct done_task {
    long epoch, start, count;
    long answered;               /* the version of the task that answered its push */
} done_task;

typedef struct restart {
    omnibatch_ps_options o;
    long N, B;
    float w[DIM];
    float saved_w[DIM];
    char path[256];
    long *perms;                 /* epochs * N: each epoch's permutation, as the workers saw it */
    done_task *tasks;
    long ntasks;
    long version;                /* at the save */
} restart;

static void restart_options(restart *r, int P)
{
    OB_CK_OK(omnibatch_ps_options_init(&r->o));
    r->o.servers = P > 3 ? 2 : 1;
    r->o.epochs = 3;
    r->o.max_staleness = 1000000;    /* none dropped: every push taken moves the version */
    r->o.lr = 1e-3;
}

/* A worker's loop: every task recorded with the version that answered its push. */
static void restart_work(restart *r, omnibatch_ps_t ps)
{
    float g[DIM] = { 0 };
    omnibatch_ps_task t;

    OB_CK_OK(omnibatch_ps_pull(ps, &t));
    while (!t.done) {
        done_task *d = &r->tasks[r->ntasks++];

        OB_CK_OK(omnibatch_ps_permutation(ps, t.epoch, r->perms + t.epoch * r->N));
        d->epoch = t.epoch;
        d->start = t.start;
        d->count = t.count;
        mpi_sleep_ns(5000L * t.count * (mpi_rank() % 3 + 1));
        OB_CK_OK(omnibatch_ps_push(ps, g, &t));
        d->answered = t.done ? LONG_MAX : t.version;
    }
}

/* Server 0 stops between serve calls a third of the way and saves (ordering the other servers
 * to save at the same point); the others serve to the end. */
static void restart_serve_and_save(restart *r, omnibatch_ps_t ps, int index)
{
    omnibatch_ps_stats st;
    int done = 0;

    if (0 != index) {
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "server 0 saves, and orders the other servers to save with it",
                    omnibatch_ps_save(ps, r->path));
        OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
        return;
    }
    do {
        OB_CK_OK(omnibatch_ps_serve(ps, 1, &done));
        OB_CK_OK(omnibatch_ps_get_stats(ps, &st));
    } while (!done && st.slices < r->o.epochs * r->N / r->B / 3);
    ck_assert_int_eq(done, 0);
    r->version = st.version;
    OB_CK_OK(omnibatch_ps_save(ps, r->path));
    memcpy(r->saved_w, r->w, sizeof r->w);
    /* destroy drains the rest */
}

/* The restored server: a file that is not a state refused first, then the saved one. */
static void restart_restore(restart *r, omnibatch_ps_t ps, int index)
{
    long first = (long) DIM * index / r->o.servers, end = (long) DIM * (index + 1) / r->o.servers;
    char damaged[300], file[320];
    omnibatch_ps_stats st;
    FILE *f;
    int done = 0;

    snprintf(damaged, sizeof damaged, "%s.damaged", r->path);
    if (0 == index) {
        snprintf(file, sizeof file, "%s", damaged);
    } else {
        snprintf(file, sizeof file, "%s.%d", damaged, index);
    }
    f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    for (int k = 0; k < 40; k++) {
        fputs("not a state ", f);
    }
    fclose(f);
    EXPECT_FAIL(OMNIBATCH_ERR_ARG, "not a parameter server's state", omnibatch_ps_restore(ps, damaged));
    remove(file);
    OB_CK_OK(omnibatch_ps_restore(ps, r->path));
    OB_CK_OK(omnibatch_ps_get_stats(ps, &st));
    ck_assert_int_eq(st.version, r->version);
    if (0 == index) {
        ck_assert_int_eq(0, memcmp(r->w + first, r->saved_w + first, (size_t) (end - first) * sizeof(float)));
    }
    OB_CK_OK(omnibatch_ps_serve(ps, 0, &done));
    EXPECT_FAIL(OMNIBATCH_ERR_STATE, "restore before the first omnibatch_ps_serve()",
                omnibatch_ps_restore(ps, r->path));
    if (0 == index) {
        snprintf(file, sizeof file, "%s", r->path);
    } else {
        snprintf(file, sizeof file, "%s.%d", r->path, index);
    }
    remove(file);
}

/* A run saves a third of the way and ends; a second run restores and goes to the end: the
 * model and version come back, and every sample of the three epochs is used exactly once
 * across the two (the slices in flight at the save are handed out again). */
START_TEST(test_save_and_restore)
{
    const int P = mpi_size();
    static restart r;
    omnibatch_ps_t ps = NULL;
    omnibatch_ps_role role;
    long *used, *all, first_run;
    int index;

    memset(&r, 0, sizeof r);
    restart_options(&r, P);
    r.N = 233;
    r.B = 12L * (P - r.o.servers);
    if (0 == mpi_rank()) {
        snprintf(r.path, sizeof r.path, "%s/mpi_ps_state.%ld", NULL != getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
                 (long) getpid());
    }
    MPI_Bcast(r.path, sizeof r.path, MPI_CHAR, 0, MPI_COMM_WORLD);
    r.perms = calloc((size_t) (r.N * r.o.epochs), sizeof *r.perms);
    r.tasks = calloc((size_t) (r.N * r.o.epochs * 2 + 8), sizeof *r.tasks);
    used = calloc((size_t) (r.N * r.o.epochs), sizeof *used);
    all = calloc((size_t) (r.N * r.o.epochs), sizeof *all);
    ck_assert(NULL != r.perms && NULL != r.tasks && NULL != used && NULL != all);
    for (int j = 0; j < DIM; j++) {
        r.w[j] = 0.5f;
    }

    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, r.w, DIM, MPI_FLOAT, r.B, r.N, &r.o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        restart_serve_and_save(&r, ps, index);
    } else {
        restart_work(&r, ps);
        EXPECT_FAIL(OMNIBATCH_ERR_STATE, "omnibatch_ps_save: rank", omnibatch_ps_save(ps, r.path));
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));
    /* Every server saved at the version server 0 saved at. */
    MPI_Bcast(&r.version, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    first_run = r.ntasks;

    restart_options(&r, P);
    for (int j = 0; j < DIM; j++) {
        r.w[j] = 0.0f;           /* the restore must bring the saved model back */
    }
    OB_CK_OK(omnibatch_ps_create(MPI_COMM_WORLD, r.w, DIM, MPI_FLOAT, r.B, r.N, &r.o, &ps));
    OB_CK_OK(omnibatch_ps_role_of(ps, &role, &index));
    if (OMNIBATCH_PS_SERVER == role) {
        restart_restore(&r, ps, index);
    } else {
        restart_work(&r, ps);
    }
    OB_CK_OK(omnibatch_ps_destroy(&ps));

    /* The first run's tasks count where their push was taken before the save. */
    for (long k = 0; k < r.ntasks; k++) {
        const done_task *d = &r.tasks[k];

        if (k < first_run && d->answered > r.version) {
            continue;
        }
        for (long i = 0; i < d->count; i++) {
            used[d->epoch * r.N + r.perms[d->epoch * r.N + d->start + i]]++;
        }
    }
    MPI_Reduce(used, all, (int) (r.N * r.o.epochs), MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (0 == mpi_rank()) {
        for (long i = 0; i < r.N * r.o.epochs; i++) {
            ck_assert_msg(1 == all[i], "epoch %ld sample %ld used %ld times across the restart", i / r.N,
                          i % r.N, all[i]);
        }
    }
    free(r.perms);
    free(r.tasks);
    free(used);
    free(all);
}
END_TEST

static Suite *make_ps_suite(void)
{
    Suite *s = suite_create("ps");
    TCase *tc = tcase_create("server");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_one_worker_is_plain_sgd);
    tcase_add_test(tc, test_every_sample_once_per_epoch);
    tcase_add_test(tc, test_stale_gradient_is_dropped_and_counted);
    tcase_add_test(tc, test_create_rejects_bad_input);
    tcase_add_test(tc, test_wrong_role_is_refused);
    tcase_add_test(tc, test_early_ends);
    tcase_add_test(tc, test_report_and_trace);
    tcase_add_test(tc, test_save_and_restore);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    int rc;

    MPI_Init(&argc, &argv);
    rc = mpi_run_suite(make_ps_suite());
    MPI_Finalize();
    return rc;
}
