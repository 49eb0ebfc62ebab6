/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The state of a run, as one blob a checkpoint can hold
 * (omnibatch_get_state(), omnibatch_save()): where the data stand (the
 * next global step, hence epoch and step within it, and the seed of the
 * epochs' permutation, for a global batch B and a data set of N samples)
 * and what was learnt of each rank (its speed model, keyed by its host and
 * the cores of its cpuset, and its batch in the plan held).  MPI-free.
 *
 * Layout: an ob_state_header, then nranks ob_state_entry, in rank order,
 * in the byte order and type sizes of the host that wrote it (the header
 * says which; a blob from another kind of host is refused, not misread).
 * The header's checksum (FNV-1a 64 over the header, its checksum field
 * zero, and every entry's bytes) catches a truncated or damaged file, and
 * ranks that agree on it agree on where the data stand (version 1 left the
 * header out: ranks handed states of different steps resumed at different
 * steps, and their collectives no longer matched).  A blob need not be
 * aligned: entries are copied out (ob_state_entry_get()).
 *
 * Restart at another number of ranks.  The data position does not depend
 * on P: step k of an epoch covers positions k*B .. k*B + B - 1 of the
 * epoch's permutation, however they are split, so a run that resumes at
 * the saved step with the same B, N and seed uses every sample of the epoch
 * exactly once across the restart.  Each rank of the new run looks for its
 * host and cores among the entries (ob_state_match(): the k-th rank of the
 * new run on a host and core count takes the k-th entry saved for them) and
 * resumes its learnt model; a rank with no entry starts from the prior.
 */
#ifndef OB_STATE_H
#define OB_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "ob_estimator.h"

/** First bytes of a state blob. */
#define OB_STATE_MAGIC "OBSTATE"
/** Layout version; a blob of another version is refused. */
#define OB_STATE_VERSION 2u
/** Written as a uint32_t: reads back as this on a host of the same byte order only. */
#define OB_STATE_BYTE_ORDER 0x01020304u
/** Bytes of a host name kept (with its NUL). */
#define OB_STATE_HOST_BYTES 64

typedef struct ob_state_header {
    char magic[8];               /* OB_STATE_MAGIC and a NUL */
    uint32_t version;            /* OB_STATE_VERSION */
    uint32_t byte_order;         /* OB_STATE_BYTE_ORDER */
    uint32_t entry_bytes;        /* sizeof(ob_state_entry) of the writer */
    uint32_t reserved;
    int64_t nranks;
    int64_t global_batch;        /* B */
    int64_t dataset_size;        /* N */
    int64_t next_step;           /* the next global step to hand out */
    uint64_t seed;               /* of the epochs' permutation */
    uint64_t checksum;           /* FNV-1a 64 of the header (this field 0) and the entries */
} ob_state_header;

typedef struct ob_state_entry {
    char host[OB_STATE_HOST_BYTES];
    int32_t cores;               /* in the rank's cpuset; 0 = unknown */
    int32_t reserved;
    int64_t plan;                /* the rank's batch in the plan held */
    ob_estimator est;            /* its speed model */
} ob_state_entry;

/** FNV-1a 64's starting value. */
#define OB_STATE_FNV_BASIS UINT64_C(0xcbf29ce484222325)

/** \brief FNV-1a 64 of \p n bytes, from \p h (OB_STATE_FNV_BASIS to start; the result to go on):
 *         the checksum of the states here and of the asynchronous mode's (ob_psstate.h). */
uint64_t ob_state_fnv(uint64_t h, const void *buf, size_t n);

/** \brief Bytes of the state of \p nranks ranks. */
size_t ob_state_size(int nranks);

/**
 * \brief Fill the header of the blob \p buf holding \p nranks entries already in place (it
 *        computes their checksum).
 */
void ob_state_finish(void *buf, int nranks, long global_batch, long dataset_size, long next_step,
                     uint64_t seed);

/**
 * \brief Check a blob of \p size bytes and copy out its header.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG with a detail line saying what is wrong (not a
 *         state, another version or kind of host, truncated, damaged, impossible numbers).
 */
int ob_state_check(const void *buf, size_t size, ob_state_header *h);

/** \brief Copy entry \p i of a checked blob to \p e. */
void ob_state_entry_get(const void *buf, int i, ob_state_entry *e);

/** \brief Copy \p e into entry \p i of \p buf. */
void ob_state_entry_put(void *buf, int i, const ob_state_entry *e);

/**
 * \brief The entry of a checked blob saved for the \p occurrence-th (0-based) rank on \p host
 *        with \p cores cores, or -1 when there is none.
 */
int ob_state_match(const void *buf, const char *host, int cores, int occurrence);

#endif /* OB_STATE_H */
