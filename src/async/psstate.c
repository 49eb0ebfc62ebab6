/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A parameter server's state blob (ob_psstate.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_psstate.h"
#include "ob_state.h"

/* Limits on what a head may claim before its sizes are computed from it. */
#define OB_PSSTATE_MAX_COUNT ((int64_t) 1 << 40)
#define OB_PSSTATE_MAX_WORKERS ((int64_t) 1 << 24)

/* The byte offsets of the parts that follow the head. */
typedef struct ob_psstate_layout {
    size_t params;
    size_t momentum;
    size_t plan;
    size_t est;
    size_t flight;
    size_t end;
} ob_psstate_layout;

static ob_psstate_layout ob_psstate_layout_of(const ob_psstate_head *h)
{
    ob_psstate_layout l;
    size_t range = (size_t) h->range * h->elem;
    size_t workers = h->data ? (size_t) h->workers : 0;
    size_t flight = h->data ? (size_t) h->flight : 0;

    l.params = sizeof *h;
    l.momentum = l.params + range;
    l.plan = l.momentum + range;
    l.est = l.plan + workers * sizeof(int64_t);
    l.flight = l.est + workers * sizeof(ob_estimator);
    l.end = l.flight + flight * 3 * sizeof(int64_t);
    return l;
}

size_t ob_psstate_size(const ob_psstate_head *h)
{
    return ob_psstate_layout_of(h).end;
}

static uint64_t ob_psstate_checksum(const ob_psstate_head *head, const void *buf, size_t size)
{
    ob_psstate_head h = *head;

    h.checksum = 0;
    return ob_state_fnv(ob_state_fnv(OB_STATE_FNV_BASIS, &h, sizeof h), (const char *) buf + sizeof h,
                        size - sizeof h);
}

static void ob_psstate_pack_data(char *buf, const ob_psstate_head *h, const ob_psstate_layout *l,
                                 const ob_psstate_data *d)
{
    for (int64_t w = 0; w < h->workers; w++) {
        int64_t b = d->plan[w];

        memcpy(buf + l->plan + (size_t) w * sizeof b, &b, sizeof b);
    }
    memcpy(buf + l->est, d->est, (size_t) h->workers * sizeof *d->est);
    for (int64_t k = 0; k < h->flight; k++) {
        int64_t x[3] = { d->flight[k].epoch, d->flight[k].start, d->flight[k].count };

        memcpy(buf + l->flight + (size_t) k * sizeof x, x, sizeof x);
    }
}

void ob_psstate_pack(void *buf, ob_psstate_head *h, const void *params, const void *momentum,
                     const ob_psstate_data *d)
{
    ob_psstate_layout l;

    memcpy(h->magic, OB_PSSTATE_MAGIC, sizeof OB_PSSTATE_MAGIC);
    h->version = OB_PSSTATE_VERSION;
    h->byte_order = OB_PSSTATE_BYTE_ORDER;
    h->est_bytes = (uint32_t) sizeof(ob_estimator);
    l = ob_psstate_layout_of(h);
    memcpy((char *) buf + l.params, params, l.momentum - l.params);
    memcpy((char *) buf + l.momentum, momentum, l.plan - l.momentum);
    if (h->data) {
        ob_psstate_pack_data(buf, h, &l, d);
    }
    h->checksum = ob_psstate_checksum(h, buf, l.end);
    memcpy(buf, h, sizeof *h);
}

/* The head alone: its kind, and numbers from which sizes can be computed. */
static int ob_psstate_check_head(const ob_psstate_head *h)
{
    if (0 != memcmp(h->magic, OB_PSSTATE_MAGIC, sizeof OB_PSSTATE_MAGIC)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "not a parameter server's state (no \"%s\" at its start)",
                       OB_PSSTATE_MAGIC);
    }
    if (OB_PSSTATE_BYTE_ORDER != h->byte_order || sizeof(ob_estimator) != h->est_bytes) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state written by another kind of host (byte order %08x, models "
                       "of %u bytes): expected %08x and %zu", (unsigned) h->byte_order,
                       (unsigned) h->est_bytes, (unsigned) OB_PSSTATE_BYTE_ORDER, sizeof(ob_estimator));
    }
    if (OB_PSSTATE_VERSION != h->version) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state of version %u: expected %u", (unsigned) h->version,
                       (unsigned) OB_PSSTATE_VERSION);
    }
    if ((4 != h->elem && 8 != h->elem) || h->range < 1 || h->range > OB_PSSTATE_MAX_COUNT || h->workers < 1 ||
        h->workers > OB_PSSTATE_MAX_WORKERS || h->flight < 0 || h->flight > h->workers ||
        (0 != h->data && 1 != h->data)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state of %lld elements of %u bytes, %lld workers, %lld slices in "
                       "flight: impossible numbers (damaged?)", (long long) h->range, (unsigned) h->elem,
                       (long long) h->workers, (long long) h->flight);
    }
    return OMNIBATCH_SUCCESS;
}

static int ob_psstate_unpack_data(const char *buf, const ob_psstate_head *h, const ob_psstate_layout *l,
                                  long *plan, ob_estimator *est, ob_slice **flight)
{
    for (int64_t w = 0; w < h->workers; w++) {
        int64_t b;

        memcpy(&b, buf + l->plan + (size_t) w * sizeof b, sizeof b);
        plan[w] = (long) b;
    }
    memcpy(est, buf + l->est, (size_t) h->workers * sizeof *est);
    *flight = calloc((size_t) h->flight + 1, sizeof **flight);
    if (NULL == *flight) {
        return ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for %lld slices in flight", (long long) h->flight);
    }
    for (int64_t k = 0; k < h->flight; k++) {
        int64_t x[3];

        memcpy(x, buf + l->flight + (size_t) k * sizeof x, sizeof x);
        (*flight)[k].epoch = (long) x[0];
        (*flight)[k].start = (long) x[1];
        (*flight)[k].count = (long) x[2];
    }
    return OMNIBATCH_SUCCESS;
}

int ob_psstate_check(const void *buf, size_t size, ob_psstate_head *h)
{
    ob_psstate_layout l;
    int rc;

    if (NULL == buf || size < sizeof *h) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state of %zu bytes: expected at least its head of %zu", size,
                       sizeof *h);
    }
    memcpy(h, buf, sizeof *h);
    rc = ob_psstate_check_head(h);
    if (OMNIBATCH_SUCCESS != rc) {
        return rc;
    }
    l = ob_psstate_layout_of(h);
    if (size != l.end) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state of %zu bytes: expected %zu for what its head says "
                       "(truncated?)", size, l.end);
    }
    if (ob_psstate_checksum(h, buf, size) != h->checksum) {
        return ob_fail(OMNIBATCH_ERR_ARG, "a state whose checksum does not match: damaged");
    }
    return OMNIBATCH_SUCCESS;
}

void ob_psstate_parts(const void *buf, const ob_psstate_head *h, const void **params,
                      const void **momentum)
{
    ob_psstate_layout l = ob_psstate_layout_of(h);

    *params = (const char *) buf + l.params;
    *momentum = (const char *) buf + l.momentum;
}

int ob_psstate_copy_data(const void *buf, const ob_psstate_head *h, long *plan, ob_estimator *est,
                         ob_slice **flight)
{
    ob_psstate_layout l = ob_psstate_layout_of(h);

    *flight = NULL;
    return h->data ? ob_psstate_unpack_data(buf, h, &l, plan, est, flight) : OMNIBATCH_SUCCESS;
}
