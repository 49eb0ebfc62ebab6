/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Under the preload, every allreduce the layer does not weight must give
 * the bytes MPI gives.  Each rank contributes data whose reduction it can
 * compute exactly itself (integers, dyadic floats), and for arbitrary
 * floats the result is compared with PMPI_Allreduce, which the layer does
 * not intercept.  Send buffers must come back untouched.
 *
 * A plain MPI program (no omnibatch header or library): run it with
 * LD_PRELOAD; OB_EXPECT_PRELOAD=1 makes it check the layer is loaded.
 */
#include "config.h"

#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"

#define N 4096                   /* elements: 16 KiB of float, above any default threshold */
#define SMALL 16                 /* 64 bytes of float: below OMNIBATCH_MIN_BYTES */

static int rank, size;

/* MPICH declares the status arrays of MPI_Waitall & co. as arrays, and gcc
 * then warns (-Wstringop-overflow) that MPI_STATUSES_IGNORE, a constant
 * address, holds no status: read through a volatile, the constant is out of
 * the compiler's sight. */
static MPI_Status *volatile statuses_ignore = MPI_STATUSES_IGNORE;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes);

    ck_assert_ptr_nonnull(p);
    return p;
}

/* ------------------------------------------------------------- predefined */

START_TEST(test_integer_sum)
{
    int *send = xmalloc(N * sizeof *send), *copy = xmalloc(N * sizeof *copy);
    int *out = xmalloc(N * sizeof *out), *want = xmalloc(N * sizeof *want);

    for (int i = 0; i < N; i++) {
        send[i] = rank * 1000 + i;
        want[i] = 1000 * size * (size - 1) / 2 + size * i;
    }
    memcpy(copy, send, N * sizeof *send);
    ck_assert_int_eq(MPI_Allreduce(send, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(out, want, N * sizeof *out);
    ck_assert_mem_eq(send, copy, N * sizeof *send);
    free(send);
    free(copy);
    free(out);
    free(want);
}
END_TEST

static int value_of(int r, int i)
{
    return (i + 3 * r) % 7 - 3;
}

START_TEST(test_integer_max_min_prod)
{
    static const MPI_Op ops[3] = { MPI_MAX, MPI_MIN, MPI_PROD };
    int send[N], out[N], want[N];

    for (int o = 0; o < 3; o++) {
        for (int i = 0; i < N; i++) {
            send[i] = value_of(rank, i);
            want[i] = value_of(0, i);
            for (int r = 1; r < size; r++) {
                int v = value_of(r, i);

                want[i] = 0 == o ? (v > want[i] ? v : want[i])
                        : 1 == o ? (v < want[i] ? v : want[i]) : want[i] * v;
            }
        }
        ck_assert_int_eq(MPI_Allreduce(send, out, N, MPI_INT, ops[o], MPI_COMM_WORLD), MPI_SUCCESS);
        ck_assert_mem_eq(out, want, sizeof out);
    }
}
END_TEST

START_TEST(test_float_max_is_not_a_gradient)
{
    float *send = xmalloc(N * sizeof *send), *out = xmalloc(N * sizeof *out);
    float *ref = xmalloc(N * sizeof *ref);

    for (int i = 0; i < N; i++) {
        send[i] = sinf((float) (i * (rank + 1)));
    }
    ck_assert_int_eq(PMPI_Allreduce(send, ref, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Allreduce(send, out, N, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(out, ref, N * sizeof *out);
    free(send);
    free(out);
    free(ref);
}
END_TEST

/* ---------------------------------------------------------- user op, types */

static void xor_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const unsigned *a = in;
    unsigned *b = inout;

    (void) type;
    for (int i = 0; i < *len; i++) {
        b[i] ^= a[i];
    }
}

/* A float "sum" of the user's own: the layer must not take it for MPI_SUM. */
static void float_sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const float *a = in;
    float *b = inout;

    (void) type;
    for (int i = 0; i < *len; i++) {
        b[i] += a[i];
    }
}

START_TEST(test_user_defined_ops)
{
    unsigned *u = xmalloc(N * sizeof *u), *uo = xmalloc(N * sizeof *uo), *uw = xmalloc(N * sizeof *uw);
    float *f = xmalloc(N * sizeof *f), *fo = xmalloc(N * sizeof *fo), *fw = xmalloc(N * sizeof *fw);
    MPI_Op xor_handle, fsum;

    ck_assert_int_eq(MPI_Op_create(xor_op, 1, &xor_handle), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Op_create(float_sum_op, 1, &fsum), MPI_SUCCESS);
    for (int i = 0; i < N; i++) {
        u[i] = 0x9E3779B9u * (unsigned) (i + 1) + (unsigned) rank * 0x85EBCA6Bu;
        uw[i] = 0;
        for (int r = 0; r < size; r++) {
            uw[i] ^= 0x9E3779B9u * (unsigned) (i + 1) + (unsigned) r * 0x85EBCA6Bu;
        }
        f[i] = (float) (i % 64) * 0.25f + (float) rank;
        fw[i] = (float) size * ((float) (i % 64) * 0.25f) + (float) (size * (size - 1) / 2);
    }
    ck_assert_int_eq(MPI_Allreduce(u, uo, N, MPI_UNSIGNED, xor_handle, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(uo, uw, N * sizeof *uo);
    ck_assert_int_eq(MPI_Allreduce(f, fo, N, MPI_FLOAT, fsum, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(fo, fw, N * sizeof *fo);
    MPI_Op_free(&xor_handle);
    MPI_Op_free(&fsum);
    free(u);
    free(uo);
    free(uw);
    free(f);
    free(fo);
    free(fw);
}
END_TEST

/* A sum over four-float elements: MPI's predefined ops do not take a
 * derived datatype, the user's own op does. */
static void quad_sum_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    const float *a = in;
    float *b = inout;

    (void) type;
    for (int i = 0; i < 4 * *len; i++) {
        b[i] += a[i];
    }
}

START_TEST(test_derived_datatype)
{
    float *send = xmalloc(N * sizeof *send), *out = xmalloc(N * sizeof *out);
    float *want = xmalloc(N * sizeof *want), *copy = xmalloc(N * sizeof *copy);
    int *k = xmalloc(N * sizeof *k), *ko = xmalloc(N * sizeof *ko);
    MPI_Datatype quad;
    MPI_Op qsum;

    ck_assert_int_eq(MPI_Type_contiguous(4, MPI_FLOAT, &quad), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Type_commit(&quad), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Op_create(quad_sum_op, 1, &qsum), MPI_SUCCESS);
    for (int i = 0; i < N; i++) {
        send[i] = (float) (i % 100) * 0.5f + (float) rank * 0.125f;
        want[i] = (float) size * (float) (i % 100) * 0.5f + 0.125f * (float) (size * (size - 1) / 2);
    }
    memcpy(copy, send, N * sizeof *send);
    ck_assert_int_eq(MPI_Allreduce(send, out, N / 4, quad, qsum, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(out, want, N * sizeof *out);
    ck_assert_mem_eq(send, copy, N * sizeof *send);

    /* MPI_2INT with MPI_MAXLOC: a predefined pair type. */
    for (int i = 0; i < N / 2; i++) {
        k[2 * i] = (i * 5 + rank * 3) % 7;
        k[2 * i + 1] = rank;
    }
    ck_assert_int_eq(MPI_Allreduce(k, ko, N / 2, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < N / 2; i++) {
        int best = -1, where = -1;

        for (int r = 0; r < size; r++) {
            if ((i * 5 + r * 3) % 7 > best) {
                best = (i * 5 + r * 3) % 7;
                where = r;
            }
        }
        ck_assert_int_eq(ko[2 * i], best);
        ck_assert_int_eq(ko[2 * i + 1], where);
    }
    MPI_Op_free(&qsum);
    MPI_Type_free(&quad);
    free(send);
    free(out);
    free(want);
    free(copy);
    free(k);
    free(ko);
}
END_TEST

/* -------------------------------------------------------- float and double */

/* Dyadic values: every partial sum is exact, whatever the order. */
static float dyadic(int r, int i)
{
    return (float) ((i * 7 + r * 13) % 256) * 0.0625f - 4.0f;
}

START_TEST(test_gradient_like_float_sum_is_unchanged)
{
    float *send = xmalloc(N * sizeof *send), *out = xmalloc(N * sizeof *out);
    float *want = xmalloc(N * sizeof *want), *copy = xmalloc(N * sizeof *copy);

    for (int i = 0; i < N; i++) {
        send[i] = dyadic(rank, i);
        want[i] = 0.0f;
        for (int r = 0; r < size; r++) {
            want[i] += dyadic(r, i);
        }
    }
    memcpy(copy, send, N * sizeof *send);
    for (int rep = 0; rep < 5; rep++) {
        ck_assert_int_eq(MPI_Allreduce(send, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
        ck_assert_mem_eq(out, want, N * sizeof *out);
        ck_assert_mem_eq(send, copy, N * sizeof *send);
    }
    free(send);
    free(out);
    free(want);
    free(copy);
}
END_TEST

START_TEST(test_arbitrary_floats_match_pmpi)
{
    float *send = xmalloc(N * sizeof *send), *out = xmalloc(N * sizeof *out);
    float *ref = xmalloc(N * sizeof *ref);
    double *dsend = xmalloc(N * sizeof *dsend), *dout = xmalloc(N * sizeof *dout);
    double *dref = xmalloc(N * sizeof *dref);

    for (int i = 0; i < N; i++) {
        send[i] = sinf(0.37f * (float) i + (float) rank);
        dsend[i] = cos(0.11 * i - rank);
    }
    ck_assert_int_eq(PMPI_Allreduce(send, ref, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Allreduce(send, out, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(out, ref, N * sizeof *out);
    ck_assert_int_eq(PMPI_Allreduce(dsend, dref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_int_eq(MPI_Allreduce(dsend, dout, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(dout, dref, N * sizeof *dout);
    free(send);
    free(out);
    free(ref);
    free(dsend);
    free(dout);
    free(dref);
}
END_TEST

START_TEST(test_in_place)
{
    float *f = xmalloc(N * sizeof *f), *fw = xmalloc(N * sizeof *fw);
    int *k = xmalloc(N * sizeof *k), *kw = xmalloc(N * sizeof *kw);

    for (int i = 0; i < N; i++) {
        f[i] = dyadic(rank, i);
        fw[i] = 0.0f;
        k[i] = rank - i;
        kw[i] = size * (size - 1) / 2 - size * i;
        for (int r = 0; r < size; r++) {
            fw[i] += dyadic(r, i);
        }
    }
    ck_assert_int_eq(MPI_Allreduce(MPI_IN_PLACE, f, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(f, fw, N * sizeof *f);
    ck_assert_int_eq(MPI_Allreduce(MPI_IN_PLACE, k, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(k, kw, N * sizeof *k);
    free(f);
    free(fw);
    free(k);
    free(kw);
}
END_TEST

START_TEST(test_small_float_sum)
{
    float send[SMALL], out[SMALL], want[SMALL];

    for (int i = 0; i < SMALL; i++) {
        send[i] = dyadic(rank, i);
        want[i] = 0.0f;
        for (int r = 0; r < size; r++) {
            want[i] += dyadic(r, i);
        }
    }
    ck_assert_int_eq(MPI_Allreduce(send, out, SMALL, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    ck_assert_mem_eq(out, want, sizeof out);
}
END_TEST

/* ---------------------------------------------------------- non-blocking */

typedef enum { BY_WAIT, BY_WAITALL, BY_WAITANY, BY_WAITSOME, BY_TEST, BY_TESTALL, BY_TESTANY,
               BY_TESTSOME, BY_COUNT } completion;

/* Complete requests[0..n) with the given member of the Wait/Test family. */
static void complete(completion how, int n, MPI_Request *req)
{
    MPI_Status st[4];
    int idx[4], left = n, flag, outcount, index;

    ck_assert_int_le(n, 4);
    while (left > 0) {
        switch (how) {
        case BY_WAIT:
        case BY_TEST:
            for (int i = 0; i < n; i++) {
                if (MPI_REQUEST_NULL == req[i]) {
                    continue;
                }
                if (BY_WAIT == how) {
                    ck_assert_int_eq(MPI_Wait(&req[i], &st[0]), MPI_SUCCESS);
                    left--;
                } else {
                    ck_assert_int_eq(MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    left -= flag;
                }
            }
            break;
        case BY_WAITALL:
            ck_assert_int_eq(MPI_Waitall(n, req, st), MPI_SUCCESS);
            left = 0;
            break;
        case BY_TESTALL:
            ck_assert_int_eq(MPI_Testall(n, req, &flag, statuses_ignore), MPI_SUCCESS);
            left = flag ? 0 : left;
            break;
        case BY_WAITANY:
            ck_assert_int_eq(MPI_Waitany(n, req, &index, &st[0]), MPI_SUCCESS);
            ck_assert_int_ne(index, MPI_UNDEFINED);
            left--;
            break;
        case BY_TESTANY:
            ck_assert_int_eq(MPI_Testany(n, req, &index, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            left -= flag && MPI_UNDEFINED != index;
            break;
        case BY_WAITSOME:
            ck_assert_int_eq(MPI_Waitsome(n, req, &outcount, idx, st), MPI_SUCCESS);
            left -= outcount;
            break;
        case BY_TESTSOME:
            ck_assert_int_eq(MPI_Testsome(n, req, &outcount, idx, statuses_ignore), MPI_SUCCESS);
            left -= outcount;
            break;
        case BY_COUNT:
        default:
            ck_abort_msg("no such completion");
        }
    }
    for (int i = 0; i < n; i++) {
        ck_assert(MPI_REQUEST_NULL == req[i]);
    }
}

START_TEST(test_iallreduce_completed_by_each_wait_and_test)
{
    float *f1 = xmalloc(N * sizeof *f1), *f2 = xmalloc(N * sizeof *f2), *fw = xmalloc(N * sizeof *fw);
    float *o1 = xmalloc(N * sizeof *o1), *copy = xmalloc(N * sizeof *copy);
    int *k = xmalloc(N * sizeof *k), *ko = xmalloc(N * sizeof *ko), *kw = xmalloc(N * sizeof *kw);

    for (int i = 0; i < N; i++) {
        fw[i] = 0.0f;
        for (int r = 0; r < size; r++) {
            fw[i] += dyadic(r, i);
        }
        kw[i] = size * i + size * (size - 1) / 2;
    }
    for (int how = 0; how < BY_COUNT; how++) {
        MPI_Request req[3];

        for (int i = 0; i < N; i++) {
            f1[i] = f2[i] = dyadic(rank, i);
            k[i] = i + rank;
        }
        memcpy(copy, f1, N * sizeof *f1);
        /* A gradient-like one, one in place, and an integer one, together. */
        ck_assert_int_eq(MPI_Iallreduce(f1, o1, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req[0]), MPI_SUCCESS);
        ck_assert_int_eq(MPI_Iallreduce(MPI_IN_PLACE, f2, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req[1]),
                         MPI_SUCCESS);
        ck_assert_int_eq(MPI_Iallreduce(k, ko, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]), MPI_SUCCESS);
        complete((completion) how, 3, req);
        ck_assert_msg(0 == memcmp(o1, fw, N * sizeof *o1), "completion %d: float result differs", how);
        ck_assert_msg(0 == memcmp(f2, fw, N * sizeof *f2), "completion %d: in-place result differs", how);
        ck_assert_msg(0 == memcmp(ko, kw, N * sizeof *ko), "completion %d: integer result differs", how);
        ck_assert_mem_eq(f1, copy, N * sizeof *f1);
    }
    free(f1);
    free(f2);
    free(fw);
    free(o1);
    free(copy);
    free(k);
    free(ko);
    free(kw);
}
END_TEST

START_TEST(test_split_communicator)
{
    MPI_Comm half;
    int hrank, hsize;
    float *f = xmalloc(N * sizeof *f), *fo = xmalloc(N * sizeof *fo), *fw = xmalloc(N * sizeof *fw);
    int k[SMALL], ko[SMALL], kw[SMALL];

    ck_assert_int_eq(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half), MPI_SUCCESS);
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    ck_assert_int_eq(hsize, (size + 1 - rank % 2) / 2);
    for (int i = 0; i < N; i++) {
        f[i] = dyadic(rank, i);
        fw[i] = 0.0f;
        for (int r = rank % 2; r < size; r += 2) {
            fw[i] += dyadic(r, i);
        }
    }
    for (int i = 0; i < SMALL; i++) {
        k[i] = rank * i;
        kw[i] = 0;
        for (int r = rank % 2; r < size; r += 2) {
            kw[i] += r * i;
        }
    }
    for (int rep = 0; rep < 3; rep++) {
        ck_assert_int_eq(MPI_Allreduce(f, fo, N, MPI_FLOAT, MPI_SUM, half), MPI_SUCCESS);
        ck_assert_mem_eq(fo, fw, N * sizeof *fo);
    }
    ck_assert_int_eq(MPI_Allreduce(k, ko, SMALL, MPI_INT, MPI_SUM, half), MPI_SUCCESS);
    ck_assert_mem_eq(ko, kw, sizeof ko);
    MPI_Comm_free(&half);
    free(f);
    free(fo);
    free(fw);
}
END_TEST

START_TEST(test_the_layer_is_loaded_when_expected)
{
    const char *expect = getenv("OB_EXPECT_PRELOAD");

    if (NULL != expect && 0 == strcmp(expect, "1")) {
        ck_assert_msg(NULL != dlsym(RTLD_DEFAULT, "omnibatch_get_version"),
                      "OB_EXPECT_PRELOAD=1 but libomnibatch is not loaded");
    }
}
END_TEST

static Suite *make_passthrough_suite(void)
{
    Suite *s = suite_create("passthrough");
    TCase *tc = tcase_create("mpi");

    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_the_layer_is_loaded_when_expected);
    tcase_add_test(tc, test_integer_sum);
    tcase_add_test(tc, test_integer_max_min_prod);
    tcase_add_test(tc, test_float_max_is_not_a_gradient);
    tcase_add_test(tc, test_user_defined_ops);
    tcase_add_test(tc, test_derived_datatype);
    tcase_add_test(tc, test_gradient_like_float_sum_is_unchanged);
    tcase_add_test(tc, test_arbitrary_floats_match_pmpi);
    tcase_add_test(tc, test_in_place);
    tcase_add_test(tc, test_small_float_sum);
    tcase_add_test(tc, test_iallreduce_completed_by_each_wait_and_test);
    tcase_add_test(tc, test_split_communicator);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    SRunner *sr;
    int failed, any;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sr = srunner_create(make_passthrough_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, 0 == rank ? CK_NORMAL : CK_SILENT);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0 == any ? 0 : 1;
}
