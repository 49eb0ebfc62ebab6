/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The settings every rank must pass alike, compared once every rank's
 * record is gathered (ob_api.h): a table of the record's fields, in the
 * order they are compared, so that every rank names the same first field
 * that differs, with rank 0's value and the other rank's.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ob_api.h"
#include "ob_error.h"

static size_t ob_agree_size(ob_agree_kind kind)
{
    return OB_AGREE_I32 == kind ? sizeof(int32_t) : sizeof(int64_t);
}

/* One rank's value of a field, as the message shows it. */
static void ob_agree_show(const char *record, const ob_agree_field *f, char *out, size_t size)
{
    const char *p = record + f->offset;
    int64_t i64;
    int32_t i32;
    uint64_t u64;
    double f64;

    switch (f->kind) {
    case OB_AGREE_I64:
        memcpy(&i64, p, sizeof i64);
        snprintf(out, size, "%lld", (long long) i64);
        break;
    case OB_AGREE_F64:
        memcpy(&f64, p, sizeof f64);
        snprintf(out, size, "%g", f64);
        break;
    case OB_AGREE_I32:
        memcpy(&i32, p, sizeof i32);
        snprintf(out, size, "%d", (int) i32);
        break;
    case OB_AGREE_U64:
    default:
        memcpy(&u64, p, sizeof u64);
        snprintf(out, size, "%llu", (unsigned long long) u64);
        break;
    }
}

int ob_api_agree(const char *fn, const void *all, size_t record_bytes, int P,
                 const ob_agree_field *fields, size_t nfields)
{
    const char *rec = all;

    for (size_t k = 0; k < nfields; k++) {
        const ob_agree_field *f = &fields[k];

        for (int i = 1; i < P; i++) {
            const char *theirs_at = rec + (size_t) i * record_bytes;
            char mine[32], theirs[32];

            if (0 == memcmp(theirs_at + f->offset, rec + f->offset, ob_agree_size(f->kind))) {
                continue;
            }
            ob_agree_show(rec, f, mine, sizeof mine);
            ob_agree_show(theirs_at, f, theirs, sizeof theirs);
            return ob_fail(OMNIBATCH_ERR_ARG, "%s: %s differs between ranks: %s on rank 0, %s on "
                           "rank %d: every rank must pass the same", fn, f->name, mine, theirs, i);
        }
    }
    return OMNIBATCH_SUCCESS;
}
