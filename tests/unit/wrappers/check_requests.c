/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The PMPI layer's table of recognised requests in flight
 * (mpi_wrappers/requests.c), on its own: it makes no MPI call, so request
 * handles are stand-ins with distinct bit patterns and MPI is never
 * started.  What the Wait/Test wrappers rely on: only published requests
 * are found, ob_req_any() is false exactly when nothing is in flight, a
 * match reports positions and slots (spilling past the caller's stack
 * array), settling releases and returns the communicator's key, and a full
 * table refuses instead of overwriting.
 */
#include "config.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ob_check_run.h"
#include "ob_requests.h"

/* A request handle no MPI call made: distinct for each i, never null. */
static MPI_Request fake_request(int i)
{
    MPI_Request r;
    uintptr_t v = (uintptr_t) 0x10000 + (uintptr_t) i * 64u;

    memset(&r, 0, sizeof r);
    memcpy(&r, &v, sizeof r < sizeof v ? sizeof r : sizeof v);
    return r;
}

static MPI_Comm fake_comm(int i)
{
    MPI_Comm c;
    uintptr_t v = (uintptr_t) 0x20000 + (uintptr_t) i * 64u;

    memset(&c, 0, sizeof c);
    memcpy(&c, &v, sizeof c < sizeof v ? sizeof c : sizeof v);
    return c;
}

static uint64_t comm_key(MPI_Comm c)
{
    return (uint64_t) (uintptr_t) c;
}

static int start(MPI_Request req, MPI_Comm comm)
{
    void **scratch;
    size_t *cap;
    int slot = ob_req_reserve(&scratch, &cap);

    ck_assert_int_ge(slot, 0);
    ob_req_publish(slot, req, comm);
    return slot;
}

static void setup(void)
{
    ob_req_init();
}

static void teardown(void)
{
    ob_req_cleanup();
}

START_TEST(test_empty_table_finds_nothing)
{
    ck_assert(!ob_req_any());
    ck_assert_int_eq(ob_req_find(fake_request(1)), -1);
    ck_assert_int_eq(ob_req_find(MPI_REQUEST_NULL), -1);
}
END_TEST

START_TEST(test_published_request_is_found_and_released)
{
    MPI_Comm comm = fake_comm(3);
    int slot = start(fake_request(1), comm);

    ck_assert(ob_req_any());
    ck_assert_int_eq(ob_req_find(fake_request(1)), slot);
    ck_assert_int_eq(ob_req_find(fake_request(2)), -1);
    /* Completion releases the slot and hands back its communicator. */
    ck_assert(comm_key(comm) == ob_req_settle(slot, &slot, 1));
    ck_assert(!ob_req_any());
    ck_assert_int_eq(ob_req_find(fake_request(1)), -1);
}
END_TEST

START_TEST(test_reserved_but_unpublished_is_in_flight_not_findable)
{
    void **scratch;
    size_t *cap;
    int slot = ob_req_reserve(&scratch, &cap);

    ck_assert_int_ge(slot, 0);
    /* Counted at once, so a Wait racing the publish takes the slow path. */
    ck_assert(ob_req_any());
    ck_assert_int_eq(ob_req_find(fake_request(7)), -1);
    ob_req_cancel(slot);
    ck_assert(!ob_req_any());
}
END_TEST

START_TEST(test_settle_without_completion_keeps_the_request)
{
    int slot = start(fake_request(4), fake_comm(1));

    /* A Test that did not complete it: time recorded, request stays. */
    ob_req_settle(slot, &slot, 0);
    ck_assert(ob_req_any());
    ck_assert_int_eq(ob_req_find(fake_request(4)), slot);
}
END_TEST

START_TEST(test_match_reports_positions_and_slots)
{
    int a = start(fake_request(10), fake_comm(1));
    int c = start(fake_request(12), fake_comm(1));
    MPI_Request reqs[4] = { fake_request(11), fake_request(10), MPI_REQUEST_NULL, fake_request(12) };
    int spos[4], sslot[4], *pos, *slot;
    int n = ob_req_match(reqs, 4, spos, sslot, 4, &pos, &slot);

    ck_assert_int_eq(n, 2);
    ck_assert_ptr_eq(pos, spos);
    ck_assert_int_eq(pos[0], 1);
    ck_assert_int_eq(slot[0], a);
    ck_assert_int_eq(pos[1], 3);
    ck_assert_int_eq(slot[1], c);
    ob_req_matches_free(pos, slot, spos);
}
END_TEST

START_TEST(test_match_spills_past_the_callers_array)
{
    enum { N = 9 };
    MPI_Request reqs[N];
    int spos[2], sslot[2], *pos, *slot, n;

    for (int i = 0; i < N; i++) {
        reqs[i] = fake_request(100 + i);
        start(reqs[i], fake_comm(2));
    }
    n = ob_req_match(reqs, N, spos, sslot, 2, &pos, &slot);
    ck_assert_int_eq(n, N);
    ck_assert_ptr_ne(pos, spos);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(pos[i], i);
        ck_assert_int_eq(ob_req_find(reqs[i]), slot[i]);
    }
    ob_req_settle(slot[0], slot, n);
    ck_assert(!ob_req_any());
    ob_req_matches_free(pos, slot, spos);
}
END_TEST

START_TEST(test_full_table_refuses)
{
    void **scratch;
    size_t *cap;

    for (int i = 0; i < OB_REQ_SLOTS; i++) {
        start(fake_request(1000 + i), fake_comm(0));
    }
    ck_assert_int_eq(ob_req_reserve(&scratch, &cap), -1);
    /* Every request is still found where it was put. */
    ck_assert_int_ge(ob_req_find(fake_request(1000)), 0);
    ck_assert_int_ge(ob_req_find(fake_request(1000 + OB_REQ_SLOTS - 1)), 0);
}
END_TEST

START_TEST(test_scratch_belongs_to_the_slot)
{
    void **scratch;
    size_t *cap;
    int slot = ob_req_reserve(&scratch, &cap);
    void *first;

    ck_assert_int_ge(slot, 0);
    *scratch = malloc(256);
    *cap = 256;
    first = *scratch;
    ob_req_publish(slot, fake_request(5), fake_comm(0));
    ob_req_settle(slot, &slot, 1);
    /* Released, the slot keeps its buffer for the next request (grown, never shrunk). */
    ck_assert_int_eq(ob_req_reserve(&scratch, &cap), slot);
    ck_assert_ptr_eq(*scratch, first);
    ck_assert_uint_eq(*cap, 256);
    ob_req_cancel(slot);
}
END_TEST

static Suite *make_requests_suite(void)
{
    Suite *s = suite_create("requests");
    TCase *tc = tcase_create("table");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_empty_table_finds_nothing);
    tcase_add_test(tc, test_published_request_is_found_and_released);
    tcase_add_test(tc, test_reserved_but_unpublished_is_in_flight_not_findable);
    tcase_add_test(tc, test_settle_without_completion_keeps_the_request);
    tcase_add_test(tc, test_match_reports_positions_and_slots);
    tcase_add_test(tc, test_match_spills_past_the_callers_array);
    tcase_add_test(tc, test_full_table_refuses);
    tcase_add_test(tc, test_scratch_belongs_to_the_slot);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_requests_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? 0 : 1;
}
