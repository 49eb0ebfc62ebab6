/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Slices of the epochs' permutation for the asynchronous mode (ob_slicer.h).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "ob_error.h"
#include "ob_slicer.h"

int ob_slicer_init(ob_slicer *s, long N, long epochs, long max_slices)
{
    memset(s, 0, sizeof *s);
    if (N < 1) {
        return ob_fail(OMNIBATCH_ERR_ARG, "dataset_size=%ld: expected a data set of at least 1 "
                       "sample", N);
    }
    if (epochs < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "epochs=%ld: expected >= 1, or 0 for no limit", epochs);
    }
    if (max_slices < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "max_pushes=%ld: expected >= 1, or 0 for no limit",
                       max_slices);
    }
    s->N = N;
    s->epochs = epochs;
    s->max_slices = max_slices;
    return OMNIBATCH_SUCCESS;
}

void ob_slicer_free(ob_slicer *s)
{
    free(s->again);
    s->again = NULL;
    s->nagain = 0;
    s->next_again = 0;
}

int ob_slicer_spent(const ob_slicer *s)
{
    if (s->max_slices > 0 && s->handed >= s->max_slices) {
        return 1;
    }
    return s->next_again >= s->nagain && s->epochs > 0 && s->epoch >= s->epochs;
}

int ob_slicer_next(ob_slicer *s, long want, ob_slice *out)
{
    long left;

    if (want < 1 || ob_slicer_spent(s)) {
        return 0;
    }
    s->handed++;
    if (s->next_again < s->nagain) {
        *out = s->again[s->next_again++];
        return 1;
    }
    left = s->N - s->cursor;
    out->epoch = s->epoch;
    out->start = s->cursor;
    out->count = want < left ? want : left;
    s->cursor += out->count;
    if (s->cursor == s->N) {
        s->epoch++;
        s->cursor = 0;
    }
    return 1;
}

static int ob_slicer_check_slice(const ob_slicer *s, const ob_slice *x, int i)
{
    if (x->epoch < 0 || x->start < 0 || x->count < 1 || x->start > s->N - x->count) {
        return ob_fail(OMNIBATCH_ERR_ARG, "slice %d (epoch %ld, start %ld, count %ld): expected a "
                       "slice of the %ld samples of an epoch >= 0", i, x->epoch, x->start, x->count,
                       s->N);
    }
    return OMNIBATCH_SUCCESS;
}

int ob_slicer_resume(ob_slicer *s, long epoch, long cursor, long handed, const ob_slice *again,
                     int n)
{
    ob_slice *copy = NULL;

    if (epoch < 0 || cursor < 0 || cursor >= s->N || handed < 0 || n < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "resume at epoch %ld, position %ld, %ld slices handed, "
                       "%d again: expected an epoch >= 0 and a position in [0, %ld)", epoch,
                       cursor, handed, n, s->N);
    }
    for (int i = 0; i < n; i++) {
        int rc = ob_slicer_check_slice(s, &again[i], i);

        if (OMNIBATCH_SUCCESS != rc) {
            return rc;
        }
    }
    if (n > 0) {
        copy = malloc((size_t) n * sizeof *copy);
        if (NULL == copy) {
            return ob_fail(OMNIBATCH_ERR_NOMEM, "no memory for %d slices to hand out again", n);
        }
        memcpy(copy, again, (size_t) n * sizeof *copy);
    }
    ob_slicer_free(s);
    s->again = copy;
    s->nagain = n;
    s->epoch = epoch;
    s->cursor = cursor;
    s->handed = handed;
    return OMNIBATCH_SUCCESS;
}
