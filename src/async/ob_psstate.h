/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * A parameter server's state as one blob (omnibatch_ps_save(), _restore()):
 * its range of the model and of the momentum and the updates applied, and
 * on server 0 where the data stand (the epoch, the cursor, the slices
 * handed out, and the slices in flight, handed out again after a restore so
 * that every sample of an epoch is still used once), each worker's batch
 * and its cycle model.  The counts of pushes start afresh.  MPI-free.
 *
 * Layout: an ob_psstate_head, the range of parameters, the momentum, then on
 * server 0 the workers' batches (int64), their models (ob_estimator) and
 * the slices in flight (three int64 each); in the writer's byte order and
 * type sizes (the head says which: a blob from another kind of host is
 * refused, not misread), with an FNV-1a 64 checksum over all of it (its own
 * field 0), so a truncated or damaged file is refused too.
 */
#ifndef OB_PSSTATE_H
#define OB_PSSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "ob_estimator.h"
#include "ob_slicer.h"

#define OB_PSSTATE_MAGIC "OBPSSTA"
#define OB_PSSTATE_VERSION 1u
#define OB_PSSTATE_BYTE_ORDER 0x01020304u

typedef struct ob_psstate_head {
    char magic[8];               /* OB_PSSTATE_MAGIC and a NUL */
    uint32_t version;
    uint32_t byte_order;
    uint32_t elem;               /* bytes of a parameter: 4 (float) or 8 (double) */
    uint32_t est_bytes;          /* sizeof(ob_estimator) of the writer */
    int64_t count;               /* the whole model's elements */
    int64_t first;               /* this server's range: [first, first + range) */
    int64_t range;
    int64_t servers;
    int64_t workers;
    int64_t global_batch;
    int64_t dataset_size;
    uint64_t seed;
    int64_t updates;             /* the version: updates applied */
    int64_t data;                /* 1: server 0's part follows */
    int64_t epoch;               /* server 0: the slicer's epoch, cursor and slices handed out */
    int64_t cursor;              /* (those in flight not counted) */
    int64_t handed;
    int64_t flight;              /* slices in flight */
    uint64_t checksum;
} ob_psstate_head;

/** Server 0's part, as it is packed and unpacked. */
typedef struct ob_psstate_data {
    const long *plan;            /* workers */
    const ob_estimator *est;     /* workers */
    const ob_slice *flight;      /* head.flight */
} ob_psstate_data;

/** \brief Bytes of the blob \p h describes. */
size_t ob_psstate_size(const ob_psstate_head *h);

/**
 * \brief Pack the blob into \p buf (ob_psstate_size() bytes): \p h (magic, version, byte
 *        order, sizes filled here), the range \p params and \p momentum (h->range elements of
 *        h->elem bytes), and \p d when h->data.
 */
void ob_psstate_pack(void *buf, ob_psstate_head *h, const void *params, const void *momentum,
                     const ob_psstate_data *d);

/**
 * \brief Check a blob of \p size bytes: its kind, version and host, its size against what its
 *        head says, its checksum; copy out its head.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG with a line saying what is wrong (not a
 *         state, another version or kind of host, truncated, damaged).
 */
int ob_psstate_check(const void *buf, size_t size, ob_psstate_head *h);

/** \brief Where a checked blob's range of parameters and of the momentum lie. */
void ob_psstate_parts(const void *buf, const ob_psstate_head *h, const void **params,
                      const void **momentum);

/**
 * \brief Server 0's part of a checked blob (when h->data; nothing otherwise): the batches and
 *        models into \p plan and \p est (h->workers entries each), the slices in flight into
 *        *flight (malloc'ed, h->flight of them: free() it).
 * \return OMNIBATCH_SUCCESS or OMNIBATCH_ERR_NOMEM.
 */
int ob_psstate_copy_data(const void *buf, const ob_psstate_head *h, long *plan, ob_estimator *est,
                         ob_slice **flight);

#endif /* OB_PSSTATE_H */
