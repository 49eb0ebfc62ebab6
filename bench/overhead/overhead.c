/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The cost of interposition, seen from an unmodified MPI program: the
 * latency of MPI_Allreduce and of MPI_Iallreduce + MPI_Wait per message size,
 * for float SUM (a gradient allreduce once it is at least
 * OMNIBATCH_MIN_BYTES) and int SUM (always passed through).  The program is
 * plain MPI and knows nothing of omnibatch: run.sh runs it with and without
 * LD_PRELOAD=libomnibatch.so and compares.
 *
 * Timing mode prints one row per (operation, type, size) from rank 0.
 * --callgrind N instead runs N and then 2N calls of each kind inside
 * functions of their own, so that callgrind's inclusive counts of the two
 * give the instructions of one call exactly, whatever MPI_Init cost.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "stats.h"

/* Callgrind names the loops by their symbols: no inlining, cloning or
 * identical-code folding may merge or rename them. */
#if defined(__GNUC__) && !defined(__clang__)
#define OB_BENCH_OPAQUE __attribute__((noipa))
#else
#define OB_BENCH_OPAQUE __attribute__((noinline))
#endif

enum { OB_OP_ALLREDUCE = 1, OB_OP_IALLREDUCE = 2 };
enum { OB_TYPE_FLOAT = 1, OB_TYPE_INT = 2 };

typedef struct ob_overhead_opts {
    long min_bytes;
    long max_bytes;
    long factor;
    long iters;
    long min_iters;
    long warmup;                 /* -1: a tenth of each size's iterations */
    long batch;                  /* calls per timed sample up to 4 KiB */
    int presweep;                /* warm every size once before measuring any */
    int ops;                     /* OB_OP_* bits */
    int types;                   /* OB_TYPE_* bits */
    long callgrind;              /* > 0: callgrind mode with this N */
    long cg_bytes;
} ob_overhead_opts;

static double ob_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec * 1e-3;
}

static void ob_usage(FILE *f)
{
    fputs("usage: overhead [options]\n"
          "  --min-bytes N   smallest message (default 8)\n"
          "  --max-bytes N   largest message, always measured (default 4194304)\n"
          "  --factor F      sizes grow by F, 2 or 4 (default 4)\n"
          "  --iters N       timed samples per size up to 4 KiB; larger sizes get\n"
          "                  N * 4096 / bytes (default 1000)\n"
          "  --min-iters N   least timed samples of any size (default 20)\n"
          "  --batch N       calls per sample up to 4 KiB, so the clock's own cost\n"
          "                  does not dilute a small call's (default 8; larger: 1)\n"
          "  --warmup N      untimed calls before each size (default a tenth of its calls)\n"
          "  --presweep 0|1  first make every size's warm-up calls once over, so that\n"
          "                  every size is measured in the same state (default 1)\n"
          "  --ops LIST      allreduce,iallreduce (default both)\n"
          "  --types LIST    float,int (default both)\n"
          "  --callgrind N   count instructions instead: N then 2N calls of each kind\n"
          "  --cg-bytes N    message size of the callgrind loops (default 4096)\n", f);
}

/* Whole-string positive integer within [lo, hi], or exit with one line. */
static long ob_parse_long(const char *name, const char *s, long lo, long hi)
{
    char *end = NULL;
    errno = 0;
    const long v = strtol(s, &end, 10);
    if (0 != errno || end == s || '\0' != *end || v < lo || v > hi) {
        fprintf(stderr, "overhead: %s='%s': expected an integer in [%ld, %ld]\n", name, s, lo, hi);
        exit(2);
    }
    return v;
}

static int ob_parse_list(const char *name, const char *s, const char *a, int abit,
                         const char *b, int bbit)
{
    int bits = 0;
    char buf[64];
    if (strlen(s) >= sizeof buf) {
        fprintf(stderr, "overhead: %s='%s': too long\n", name, s);
        exit(2);
    }
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); NULL != tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (0 == strcmp(tok, a)) {
            bits |= abit;
        } else if (0 == strcmp(tok, b)) {
            bits |= bbit;
        } else {
            fprintf(stderr, "overhead: %s='%s': expected a comma list of %s and %s\n", name, s, a, b);
            exit(2);
        }
    }
    if (0 == bits) {
        fprintf(stderr, "overhead: %s='%s': empty\n", name, s);
        exit(2);
    }
    return bits;
}

static void ob_parse_args(int argc, char **argv, ob_overhead_opts *o)
{
    *o = (ob_overhead_opts) { 8, 4194304, 4, 1000, 20, -1, 8, 1,
                              OB_OP_ALLREDUCE | OB_OP_IALLREDUCE, OB_TYPE_FLOAT | OB_TYPE_INT,
                              0, 4096 };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (0 == strcmp(a, "--help") || 0 == strcmp(a, "-h")) {
            ob_usage(stdout);
            exit(0);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "overhead: %s: missing value or unknown option\n", a);
            ob_usage(stderr);
            exit(2);
        }
        const char *v = argv[++i];
        if (0 == strcmp(a, "--min-bytes")) {
            o->min_bytes = ob_parse_long(a, v, 4, 1L << 30);
        } else if (0 == strcmp(a, "--max-bytes")) {
            o->max_bytes = ob_parse_long(a, v, 4, 1L << 30);
        } else if (0 == strcmp(a, "--factor")) {
            o->factor = ob_parse_long(a, v, 2, 4);
            if (3 == o->factor) {
                fprintf(stderr, "overhead: --factor='3': expected 2 or 4\n");
                exit(2);
            }
        } else if (0 == strcmp(a, "--iters")) {
            o->iters = ob_parse_long(a, v, 1, 100000000);
        } else if (0 == strcmp(a, "--min-iters")) {
            o->min_iters = ob_parse_long(a, v, 1, 100000000);
        } else if (0 == strcmp(a, "--batch")) {
            o->batch = ob_parse_long(a, v, 1, 1000000);
        } else if (0 == strcmp(a, "--presweep")) {
            o->presweep = (int) ob_parse_long(a, v, 0, 1);
        } else if (0 == strcmp(a, "--warmup")) {
            o->warmup = ob_parse_long(a, v, 0, 100000000);
        } else if (0 == strcmp(a, "--ops")) {
            o->ops = ob_parse_list(a, v, "allreduce", OB_OP_ALLREDUCE, "iallreduce", OB_OP_IALLREDUCE);
        } else if (0 == strcmp(a, "--types")) {
            o->types = ob_parse_list(a, v, "float", OB_TYPE_FLOAT, "int", OB_TYPE_INT);
        } else if (0 == strcmp(a, "--callgrind")) {
            o->callgrind = ob_parse_long(a, v, 1, 100000000);
        } else if (0 == strcmp(a, "--cg-bytes")) {
            o->cg_bytes = ob_parse_long(a, v, 4, 1L << 30);
        } else {
            fprintf(stderr, "overhead: unknown option %s\n", a);
            ob_usage(stderr);
            exit(2);
        }
    }
    if (o->min_bytes > o->max_bytes) {
        fprintf(stderr, "overhead: --min-bytes=%ld is larger than --max-bytes=%ld\n",
                o->min_bytes, o->max_bytes);
        exit(2);
    }
}

/* One call of the kind measured; the MPI code is checked by the default
 * error handler (errors are fatal), as in any application. */
static void ob_one_call(int op, void *send, void *recv, int count, MPI_Datatype type)
{
    if (OB_OP_ALLREDUCE == op) {
        MPI_Allreduce(send, recv, count, type, MPI_SUM, MPI_COMM_WORLD);
    } else {
        MPI_Request req;
        MPI_Iallreduce(send, recv, count, type, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static long ob_iters_for(const ob_overhead_opts *o, long bytes)
{
    long n = o->iters;
    if (bytes > 4096) {
        n = (long) ((double) o->iters * 4096.0 / (double) bytes);
    }
    return n < o->min_iters ? o->min_iters : n;
}

/* One pass over every operation, type and size.  measure = 0 only warms:
 * it makes the calls, untimed, so that every size is measured in the same
 * state of MPI and of any preloaded tool (some state changes only once
 * large messages have been seen; without this the first sizes measured
 * would differ for that reason alone). */
static void ob_sweep(const ob_overhead_opts *o, int rank, void *send, void *recv, double *lat, int measure)
{
    static const int ops[] = { OB_OP_ALLREDUCE, OB_OP_IALLREDUCE };
    static const int types[] = { OB_TYPE_FLOAT, OB_TYPE_INT };
    for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
        if (0 == (o->ops & ops[oi])) {
            continue;
        }
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
            if (0 == (o->types & types[ti])) {
                continue;
            }
            const MPI_Datatype type = OB_TYPE_FLOAT == types[ti] ? MPI_FLOAT : MPI_INT;
            long bytes = o->min_bytes;
            for (;;) {
                const int count = (int) (bytes / 4);
                const long n = ob_iters_for(o, bytes);
                const long per = bytes <= 4096 ? o->batch : 1;
                const long warm = o->warmup >= 0 ? o->warmup : (n * per / 10 > 2 ? n * per / 10 : 2);
                MPI_Barrier(MPI_COMM_WORLD);
                for (long k = 0; k < warm; k++) {
                    ob_one_call(ops[oi], send, recv, count, type);
                }
                MPI_Barrier(MPI_COMM_WORLD);
                for (long k = 0; k < n && measure; k++) {
                    const double t0 = ob_now_us();
                    for (long c = 0; c < per; c++) {
                        ob_one_call(ops[oi], send, recv, count, type);
                    }
                    lat[k] = (ob_now_us() - t0) / (double) per;
                }
                if (0 == rank && measure) {
                    const double mean = ob_bench_mean(lat, (size_t) n);
                    ob_bench_sort(lat, (size_t) n);
                    printf("%s %s %ld %ld %.4f %.4f %.4f %.4f %.4f\n",
                           OB_OP_ALLREDUCE == ops[oi] ? "allreduce" : "iallreduce",
                           OB_TYPE_FLOAT == types[ti] ? "float" : "int", bytes, n,
                           ob_bench_quantile(lat, (size_t) n, 0.5),
                           ob_bench_quantile(lat, (size_t) n, 0.1),
                           ob_bench_quantile(lat, (size_t) n, 0.9),
                           ob_bench_quantile(lat, (size_t) n, 0.99), mean);
                    fflush(stdout);
                }
                if (bytes >= o->max_bytes) {
                    break;
                }
                bytes = bytes > o->max_bytes / o->factor ? o->max_bytes : bytes * o->factor;
            }
        }
    }
}

static void ob_time_all(const ob_overhead_opts *o, int rank, int nranks, void *send, void *recv)
{
    const long most = ob_iters_for(o, o->min_bytes);
    double *lat = malloc((size_t) most * sizeof *lat);
    if (NULL == lat) {
        fprintf(stderr, "overhead: out of memory for %ld samples\n", most);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (0 == rank) {
        printf("# overhead: ranks=%d sizes=%ld..%ld factor=%ld iters=%ld min_iters=%ld batch=%ld presweep=%d\n",
               nranks, o->min_bytes, o->max_bytes, o->factor, o->iters, o->min_iters, o->batch, o->presweep);
        printf("# per call, over samples of 'batch' calls up to 4 KiB and of one call above\n");
        printf("# op type bytes samples median_us p10_us p90_us p99_us mean_us\n");
    }
    if (o->presweep) {
        ob_sweep(o, rank, send, recv, lat, 0);
    }
    ob_sweep(o, rank, send, recv, lat, 1);
    free(lat);
}

/* The callgrind loops: one function per kind and multiple, each calling MPI
 * directly (no shared helper that callgrind would count only once, no tail
 * call that would hide the loop from its caller's inclusive cost). */
typedef struct ob_cg_args {
    void *send;
    void *recv;
    int count;
    long n;
} ob_cg_args;

#define OB_CG_LOOP(name, mult, type, blocking)                                                  \
    static OB_BENCH_OPAQUE void name(const ob_cg_args *a)                                       \
    {                                                                                           \
        for (long k = 0; k < (mult) * a->n; k++) {                                              \
            if (blocking) {                                                                     \
                MPI_Allreduce(a->send, a->recv, a->count, type, MPI_SUM, MPI_COMM_WORLD);       \
            } else {                                                                            \
                MPI_Request req;                                                                \
                MPI_Iallreduce(a->send, a->recv, a->count, type, MPI_SUM, MPI_COMM_WORLD, &req); \
                MPI_Wait(&req, MPI_STATUS_IGNORE);                                              \
            }                                                                                   \
        }                                                                                       \
    }

OB_CG_LOOP(ob_cg_allreduce_float_x1, 1, MPI_FLOAT, 1)
OB_CG_LOOP(ob_cg_allreduce_float_x2, 2, MPI_FLOAT, 1)
OB_CG_LOOP(ob_cg_allreduce_int_x1, 1, MPI_INT, 1)
OB_CG_LOOP(ob_cg_allreduce_int_x2, 2, MPI_INT, 1)
OB_CG_LOOP(ob_cg_iallreduce_float_x1, 1, MPI_FLOAT, 0)
OB_CG_LOOP(ob_cg_iallreduce_float_x2, 2, MPI_FLOAT, 0)
OB_CG_LOOP(ob_cg_iallreduce_int_x1, 1, MPI_INT, 0)
OB_CG_LOOP(ob_cg_iallreduce_int_x2, 2, MPI_INT, 0)

/* Untimed calls of one kind, outside the counted functions. */
static void ob_warm(int op, void *send, void *recv, int count, MPI_Datatype type, long n)
{
    for (long k = 0; k < n; k++) {
        ob_one_call(op, send, recv, count, type);
    }
}

static void ob_callgrind_loops(const ob_overhead_opts *o, int rank, void *send, void *recv)
{
    ob_cg_args a = { send, recv, (int) (o->cg_bytes / 4), o->callgrind };
    /* Before each kind, N untimed calls of that kind: lazy initialisation in
     * MPI, and whatever a preloaded tool learns about a new call pattern,
     * happen there, so the N and 2N loops see steady calls. */
    if (0 != (o->ops & OB_OP_ALLREDUCE) && 0 != (o->types & OB_TYPE_FLOAT)) {
        ob_warm(OB_OP_ALLREDUCE, send, recv, a.count, MPI_FLOAT, a.n);
        ob_cg_allreduce_float_x1(&a);
        ob_cg_allreduce_float_x2(&a);
    }
    if (0 != (o->ops & OB_OP_ALLREDUCE) && 0 != (o->types & OB_TYPE_INT)) {
        ob_warm(OB_OP_ALLREDUCE, send, recv, a.count, MPI_INT, a.n);
        ob_cg_allreduce_int_x1(&a);
        ob_cg_allreduce_int_x2(&a);
    }
    if (0 != (o->ops & OB_OP_IALLREDUCE) && 0 != (o->types & OB_TYPE_FLOAT)) {
        ob_warm(OB_OP_IALLREDUCE, send, recv, a.count, MPI_FLOAT, a.n);
        ob_cg_iallreduce_float_x1(&a);
        ob_cg_iallreduce_float_x2(&a);
    }
    if (0 != (o->ops & OB_OP_IALLREDUCE) && 0 != (o->types & OB_TYPE_INT)) {
        ob_warm(OB_OP_IALLREDUCE, send, recv, a.count, MPI_INT, a.n);
        ob_cg_iallreduce_int_x1(&a);
        ob_cg_iallreduce_int_x2(&a);
    }
    if (0 == rank) {
        printf("# callgrind loops: n=%ld bytes=%ld (functions ob_cg_<op>_<type>_x1 and _x2)\n",
               o->callgrind, o->cg_bytes);
    }
}

int main(int argc, char **argv)
{
    ob_overhead_opts o;
    ob_parse_args(argc, argv, &o);

    MPI_Init(&argc, &argv);
    int rank = 0;
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    const long most = o.callgrind > 0 ? o.cg_bytes : o.max_bytes;
    void *send = malloc((size_t) most);
    void *recv = malloc((size_t) most);
    if (NULL == send || NULL == recv) {
        fprintf(stderr, "overhead: out of memory for two buffers of %ld bytes\n", most);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* Zeros, written so every page is real (not the shared zero page): as
     * floats and as ints alike the sums stay exact and finite (no overflow,
     * no denormals), so every call does the same work. */
    memset(send, 0, (size_t) most);
    memset(recv, 0, (size_t) most);

    if (o.callgrind > 0) {
        ob_callgrind_loops(&o, rank, send, recv);
    } else {
        ob_time_all(&o, rank, nranks, send, recv);
    }

    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
