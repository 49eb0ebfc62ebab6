/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The running-step mailbox shared by the API and the PMPI layer (ob_active.h).
 * A mutex, not a lock-free scheme: it is taken once per step by the API and
 * once per recognised gradient allreduce by the layer, never on the
 * passthrough path.
 */
#include "config.h"

#include <pthread.h>

#include "ob_active.h"

static pthread_mutex_t ob_active_lock = PTHREAD_MUTEX_INITIALIZER;
static ob_active_batch ob_active_value;
static int ob_active_valid = 0;
static unsigned long ob_active_generation = 0;

void ob_active_publish(const ob_active_batch *batch)
{
    pthread_mutex_lock(&ob_active_lock);
    /* A publish after a clear (or the first one) may come from another
     * context, whose communicator handle may equal a freed one's. */
    if (!ob_active_valid) {
        ob_active_generation++;
    }
    ob_active_value = *batch;
    ob_active_value.generation = ob_active_generation;
    ob_active_valid = 1;
    pthread_mutex_unlock(&ob_active_lock);
}

void ob_active_clear(void)
{
    pthread_mutex_lock(&ob_active_lock);
    ob_active_valid = 0;
    pthread_mutex_unlock(&ob_active_lock);
}

int ob_active_get(ob_active_batch *batch)
{
    int valid;

    pthread_mutex_lock(&ob_active_lock);
    valid = ob_active_valid;
    if (valid) {
        *batch = ob_active_value;
    }
    pthread_mutex_unlock(&ob_active_lock);
    return valid;
}
