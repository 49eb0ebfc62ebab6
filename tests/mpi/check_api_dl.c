/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * omnibatch_dl.h: linked with the library, the run-time lookup finds every
 * function of omnibatch.h, the very same ones, with the same types.  (The
 * lookup in a program that does not link the library, with and without
 * LD_PRELOAD, is tests/mpi/example_lsq.sh.)
 */
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <stdlib.h>

#include "ob_check_run.h"
#include "omnibatch_dl.h"

/* The table's pointers have the prototypes' types: a change to one without
 * the other stops the build here. */
#define SAME_TYPE(field, fn)                                                         \
    _Static_assert(__builtin_types_compatible_p(__typeof__(((omnibatch_dl *) 0)->field), \
                                                __typeof__(&fn)),                    \
                   #field " has the type of " #fn)
SAME_TYPE(strerror, omnibatch_strerror);
SAME_TYPE(last_error, omnibatch_last_error);
SAME_TYPE(get_version, omnibatch_get_version);
SAME_TYPE(options_init, omnibatch_options_init);
SAME_TYPE(create, omnibatch_create);
SAME_TYPE(destroy, omnibatch_destroy);
SAME_TYPE(next_step, omnibatch_next_step);
SAME_TYPE(compute_begin, omnibatch_compute_begin);
SAME_TYPE(compute_end, omnibatch_compute_end);
SAME_TYPE(allreduce_gradient, omnibatch_allreduce_gradient);
SAME_TYPE(get_plan, omnibatch_get_plan);
SAME_TYPE(set_plan, omnibatch_set_plan);
SAME_TYPE(permutation, omnibatch_permutation);
SAME_TYPE(get_stats, omnibatch_get_stats);
SAME_TYPE(state_size, omnibatch_state_size);
SAME_TYPE(get_state, omnibatch_get_state);
SAME_TYPE(set_state, omnibatch_set_state);
SAME_TYPE(save, omnibatch_save);
SAME_TYPE(restore, omnibatch_restore);
SAME_TYPE(next_chunk, omnibatch_next_chunk);
SAME_TYPE(ps_options_init, omnibatch_ps_options_init);
SAME_TYPE(ps_create, omnibatch_ps_create);
SAME_TYPE(ps_role_of, omnibatch_ps_role_of);
SAME_TYPE(ps_serve, omnibatch_ps_serve);
SAME_TYPE(ps_pull, omnibatch_ps_pull);
SAME_TYPE(ps_push, omnibatch_ps_push);
SAME_TYPE(ps_get_plan, omnibatch_ps_get_plan);
SAME_TYPE(ps_set_plan, omnibatch_ps_set_plan);
SAME_TYPE(ps_get_stats, omnibatch_ps_get_stats);
SAME_TYPE(ps_get_worker_stats, omnibatch_ps_get_worker_stats);
SAME_TYPE(ps_permutation, omnibatch_ps_permutation);
SAME_TYPE(ps_save, omnibatch_ps_save);
SAME_TYPE(ps_restore, omnibatch_ps_restore);
SAME_TYPE(ps_destroy, omnibatch_ps_destroy);

/* 0.3 grew omnibatch_options and omnibatch_stats at their ends only. */
_Static_assert(offsetof(omnibatch_options, react) == offsetof(omnibatch_options, seed) + sizeof(uint64_t),
               "omnibatch_options.react follows seed");
_Static_assert(offsetof(omnibatch_stats, parked_steps) == offsetof(omnibatch_stats, optimum_step_s) + sizeof(double)
                   && offsetof(omnibatch_stats, early_exchanges) == offsetof(omnibatch_stats, parked_steps) + sizeof(long)
                   && offsetof(omnibatch_stats, react_total_s) == offsetof(omnibatch_stats, early_exchanges) + sizeof(long),
               "omnibatch_stats grew at its end");
/* 0.4 grew them at their ends again (chunks). */
_Static_assert(offsetof(omnibatch_options, chunks) == offsetof(omnibatch_options, react) + sizeof(int)
                   && offsetof(omnibatch_options, chunk_floor) > offsetof(omnibatch_options, chunks),
               "omnibatch_options.chunks follows react");
_Static_assert(offsetof(omnibatch_stats, chunks) == offsetof(omnibatch_stats, react_total_s) + sizeof(double)
                   && offsetof(omnibatch_stats, samples_taken) == offsetof(omnibatch_stats, chunks) + sizeof(long)
                   && offsetof(omnibatch_stats, samples_given) == offsetof(omnibatch_stats, samples_taken) + sizeof(long),
               "omnibatch_stats grew at its end (0.4)");

/* omnibatch_step is written whole into the caller's copy (omnibatch_dl.h
 * users, examples/omnibatch_ctypes.py's Step): a field only ever goes at the
 * end, and the layout the ctypes mirror spells out (six longs, a double)
 * holds. */
_Static_assert(0 == offsetof(omnibatch_step, epoch) && sizeof(long) == offsetof(omnibatch_step, step)
                   && 5 * sizeof(long) == offsetof(omnibatch_step, total),
               "omnibatch_step's first fields keep their offsets");
_Static_assert(6 * sizeof(long) == offsetof(omnibatch_step, scale)
                   && 6 * sizeof(long) + sizeof(double) == sizeof(omnibatch_step),
               "omnibatch_step.scale is the last field, as examples/omnibatch_ctypes.py has it");

START_TEST(test_linked_library_is_found)
{
    omnibatch_dl ob;

    ck_assert_int_eq(omnibatch_dl_load(&ob), 1);
    ck_assert_uint_eq(ob.version, OMNIBATCH_VERSION);
    ck_assert_ptr_eq(ob.strerror, &omnibatch_strerror);
    ck_assert_ptr_eq(ob.last_error, &omnibatch_last_error);
    ck_assert_ptr_eq(ob.get_version, &omnibatch_get_version);
    ck_assert_ptr_eq(ob.options_init, &omnibatch_options_init);
    ck_assert_ptr_eq(ob.create, &omnibatch_create);
    ck_assert_ptr_eq(ob.destroy, &omnibatch_destroy);
    ck_assert_ptr_eq(ob.next_step, &omnibatch_next_step);
    ck_assert_ptr_eq(ob.compute_begin, &omnibatch_compute_begin);
    ck_assert_ptr_eq(ob.compute_end, &omnibatch_compute_end);
    ck_assert_ptr_eq(ob.allreduce_gradient, &omnibatch_allreduce_gradient);
    ck_assert_ptr_eq(ob.get_plan, &omnibatch_get_plan);
    ck_assert_ptr_eq(ob.set_plan, &omnibatch_set_plan);
    ck_assert_ptr_eq(ob.permutation, &omnibatch_permutation);
    ck_assert_ptr_eq(ob.get_stats, &omnibatch_get_stats);
    ck_assert_ptr_eq(ob.state_size, &omnibatch_state_size);
    ck_assert_ptr_eq(ob.get_state, &omnibatch_get_state);
    ck_assert_ptr_eq(ob.set_state, &omnibatch_set_state);
    ck_assert_ptr_eq(ob.save, &omnibatch_save);
    ck_assert_ptr_eq(ob.restore, &omnibatch_restore);
    ck_assert_ptr_eq(ob.next_chunk, &omnibatch_next_chunk);
    ck_assert_ptr_eq(ob.ps_options_init, &omnibatch_ps_options_init);
    ck_assert_ptr_eq(ob.ps_create, &omnibatch_ps_create);
    ck_assert_ptr_eq(ob.ps_role_of, &omnibatch_ps_role_of);
    ck_assert_ptr_eq(ob.ps_serve, &omnibatch_ps_serve);
    ck_assert_ptr_eq(ob.ps_pull, &omnibatch_ps_pull);
    ck_assert_ptr_eq(ob.ps_push, &omnibatch_ps_push);
    ck_assert_ptr_eq(ob.ps_get_plan, &omnibatch_ps_get_plan);
    ck_assert_ptr_eq(ob.ps_set_plan, &omnibatch_ps_set_plan);
    ck_assert_ptr_eq(ob.ps_get_stats, &omnibatch_ps_get_stats);
    ck_assert_ptr_eq(ob.ps_get_worker_stats, &omnibatch_ps_get_worker_stats);
    ck_assert_ptr_eq(ob.ps_permutation, &omnibatch_ps_permutation);
    ck_assert_ptr_eq(ob.ps_save, &omnibatch_ps_save);
    ck_assert_ptr_eq(ob.ps_restore, &omnibatch_ps_restore);
    ck_assert_ptr_eq(ob.ps_destroy, &omnibatch_ps_destroy);
    ck_assert_str_eq(ob.strerror(OMNIBATCH_ERR_ARG), "invalid argument");
}
END_TEST

static Suite *make_api_dl_suite(void)
{
    Suite *s = suite_create("api_dl");
    TCase *tc = tcase_create("dl");

    tcase_add_test(tc, test_linked_library_is_found);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_api_dl_suite());
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = ob_check_failed(sr);
    srunner_free(sr);
    return 0 == failed ? EXIT_SUCCESS : EXIT_FAILURE;
}
