/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The contexts alive in this process, so that a call through a stale copy
 * of a handle (destroyed already through another copy) or after
 * MPI_Finalize fails with OMNIBATCH_ERR_STATE instead of touching freed
 * memory or a finalized MPI.  The registry is an intrusive list: joining it
 * allocates nothing, so omnibatch_create() cannot fail late on one rank,
 * and a lookup compares the handle with the live contexts' addresses
 * without ever reading through the handle itself.
 */
#include "config.h"

#include <pthread.h>

#include "ob_api.h"
#include "ob_error.h"

/* Contexts may be created and destroyed on different threads. */
static pthread_mutex_t ob_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct omnibatch_context *ob_registry_head;

void ob_api_registry_add(struct omnibatch_context *c)
{
    pthread_mutex_lock(&ob_registry_lock);
    c->registry_next = ob_registry_head;
    ob_registry_head = c;
    pthread_mutex_unlock(&ob_registry_lock);
}

/* Whether \p handle is alive; with \p unlink, it is no longer. */
static int ob_registry_find(const struct omnibatch_context *handle, int unlink)
{
    struct omnibatch_context **link;
    int found = 0;

    pthread_mutex_lock(&ob_registry_lock);
    for (link = &ob_registry_head; NULL != *link; link = &(*link)->registry_next) {
        if (*link == handle) {
            found = 1;
            if (unlink) {
                *link = handle->registry_next;
            }
            break;
        }
    }
    pthread_mutex_unlock(&ob_registry_lock);
    return found;
}

int ob_api_registry_remove(struct omnibatch_context *c)
{
    return ob_registry_find(c, 1);
}

int ob_api_check_context(const char *fn, const struct omnibatch_context *ctx)
{
    int finalized = 0;

    if (NULL == ctx) {
        return ob_api_no_context(fn);
    }
    if (!ob_registry_find(ctx, 0)) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: ctx=%p is not a live context: destroyed "
                       "already (through another copy of the handle?) or not from "
                       "omnibatch_create", fn, (const void *) ctx);
    }
    PMPI_Finalized(&finalized);
    if (finalized) {
        return ob_api_finalized(fn);
    }
    return OMNIBATCH_SUCCESS;
}
