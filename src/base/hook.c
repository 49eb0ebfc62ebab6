/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The API's notes to the PMPI layer (ob_hook.h).  Each hook is set once
 * after MPI_Init and cleared in MPI_Finalize, when no API step can be
 * closing; atomic, so the read on every step needs no lock.
 */
#include "config.h"

#include <stddef.h>

#include "ob_hook.h"

static ob_hook_step_fn ob_hook_step;
static ob_hook_own_fn ob_hook_own;

void ob_hook_set_step(ob_hook_step_fn fn)
{
    __atomic_store_n(&ob_hook_step, fn, __ATOMIC_RELEASE);
}

void ob_hook_note_step(const ob_step_note *note)
{
    ob_hook_step_fn fn = __atomic_load_n(&ob_hook_step, __ATOMIC_ACQUIRE);

    if (NULL != fn) {
        fn(note);
    }
}

void ob_hook_set_own(ob_hook_own_fn fn)
{
    __atomic_store_n(&ob_hook_own, fn, __ATOMIC_RELEASE);
}

void ob_hook_note_own(uint64_t t0_ns, uint64_t t1_ns)
{
    ob_hook_own_fn fn = __atomic_load_n(&ob_hook_own, __ATOMIC_ACQUIRE);

    if (NULL != fn) {
        fn(t0_ns, t1_ns);
    }
}
