/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The handles alive in this process (contexts, and the asynchronous mode's
 * parameter servers), so that a call through a stale copy of a handle
 * (destroyed already through another copy) or after MPI_Finalize fails
 * with OMNIBATCH_ERR_STATE instead of touching freed memory or a finalized
 * MPI.  The registry is an intrusive list of the handles' own nodes:
 * joining it allocates nothing, so a create cannot fail late on one rank,
 * and a lookup compares the node's address with the live nodes' without
 * ever reading through the handle itself.
 */
#include "config.h"

#include <pthread.h>

#include "ob_api.h"
#include "ob_error.h"

/* Handles may be created and destroyed on different threads. */
static pthread_mutex_t ob_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static ob_api_live *ob_registry_head;

void ob_api_live_add(ob_api_live *node)
{
    pthread_mutex_lock(&ob_registry_lock);
    node->next = ob_registry_head;
    ob_registry_head = node;
    pthread_mutex_unlock(&ob_registry_lock);
}

/* Whether \p node is alive; with \p unlink, it is no longer. */
static int ob_registry_find(const ob_api_live *node, int unlink)
{
    ob_api_live **link;
    int found = 0;

    pthread_mutex_lock(&ob_registry_lock);
    for (link = &ob_registry_head; NULL != *link; link = &(*link)->next) {
        if (*link == node) {
            found = 1;
            if (unlink) {
                *link = node->next;
            }
            break;
        }
    }
    pthread_mutex_unlock(&ob_registry_lock);
    return found;
}

int ob_api_live_remove(ob_api_live *node)
{
    return ob_registry_find(node, 1);
}

int ob_api_check_live(const char *fn, const char *creator, const void *handle, const ob_api_live *node)
{
    int finalized = 0;

    if (NULL == handle) {
        return ob_fail(OMNIBATCH_ERR_ARG, "%s: ctx=NULL: expected a context from %s", fn, creator);
    }
    if (!ob_registry_find(node, 0)) {
        return ob_fail(OMNIBATCH_ERR_STATE, "%s: ctx=%p is not a live context: destroyed "
                       "already (through another copy of the handle?) or not from %s", fn, handle,
                       creator);
    }
    PMPI_Finalized(&finalized);
    if (finalized) {
        return ob_api_finalized(fn);
    }
    return OMNIBATCH_SUCCESS;
}

void ob_api_registry_add(struct omnibatch_context *c)
{
    ob_api_live_add(&c->live);
}

int ob_api_registry_remove(struct omnibatch_context *c)
{
    return ob_api_live_remove(&c->live);
}

int ob_api_check_context(const char *fn, const struct omnibatch_context *ctx)
{
    /* The node's address is computed, never read, from a stale handle. */
    return ob_api_check_live(fn, "omnibatch_create", ctx, NULL == ctx ? NULL : &ctx->live);
}
