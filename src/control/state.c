/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The state blob of a run (see ob_state.h).
 */
#include "config.h"

#include <string.h>

#include "ob_error.h"
#include "ob_state.h"

size_t ob_state_size(int nranks)
{
    return sizeof(ob_state_header) + (size_t) (nranks > 0 ? nranks : 0) * sizeof(ob_state_entry);
}

uint64_t ob_state_fnv(uint64_t h, const void *buf, size_t n)
{
    const unsigned char *p = buf;

    for (size_t k = 0; k < n; k++) {
        h ^= p[k];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

/* The checksum of a blob of \p size bytes whose header is \p header: the
 * header with its checksum field 0, then the entries. */
static uint64_t ob_state_checksum(const ob_state_header *header, const void *buf, size_t size)
{
    ob_state_header h = *header;

    h.checksum = 0;
    return ob_state_fnv(ob_state_fnv(OB_STATE_FNV_BASIS, &h, sizeof h), (const unsigned char *) buf + sizeof h,
                        size - sizeof h);
}

void ob_state_finish(void *buf, int nranks, long global_batch, long dataset_size, long next_step,
                     uint64_t seed)
{
    ob_state_header h;

    memset(&h, 0, sizeof h);
    memcpy(h.magic, OB_STATE_MAGIC, sizeof OB_STATE_MAGIC);
    h.version = OB_STATE_VERSION;
    h.byte_order = OB_STATE_BYTE_ORDER;
    h.entry_bytes = (uint32_t) sizeof(ob_state_entry);
    h.nranks = nranks;
    h.global_batch = global_batch;
    h.dataset_size = dataset_size;
    h.next_step = next_step;
    h.seed = seed;
    h.checksum = ob_state_checksum(&h, buf, ob_state_size(nranks));
    memcpy(buf, &h, sizeof h);
}

int ob_state_check(const void *buf, size_t size, ob_state_header *h)
{
    if (NULL == buf || size < sizeof *h) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state of %zu bytes: expected at least a header of %zu bytes", size,
                       sizeof *h);
    }
    memcpy(h, buf, sizeof *h);
    if (0 != memcmp(h->magic, OB_STATE_MAGIC, sizeof OB_STATE_MAGIC)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state: not an omnibatch state (no \"%s\" at its start)", OB_STATE_MAGIC);
    }
    if (OB_STATE_BYTE_ORDER != h->byte_order || sizeof(ob_state_entry) != h->entry_bytes) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state: written by another kind of host (byte order %08x, entries of "
                       "%u bytes): expected %08x and %zu", (unsigned) h->byte_order, (unsigned) h->entry_bytes,
                       (unsigned) OB_STATE_BYTE_ORDER, sizeof(ob_state_entry));
    }
    if (OB_STATE_VERSION != h->version) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state: version %u: expected %u", (unsigned) h->version,
                       (unsigned) OB_STATE_VERSION);
    }
    if (h->nranks < 1 || h->nranks > (1 << 24) || h->global_batch < 1 || h->dataset_size < 1 || h->next_step < 0) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state: %lld ranks, global batch %lld, %lld samples, step %lld: "
                       "expected positive numbers (step >= 0)", (long long) h->nranks,
                       (long long) h->global_batch, (long long) h->dataset_size, (long long) h->next_step);
    }
    if (size != ob_state_size((int) h->nranks)) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state of %zu bytes: expected %zu for its %lld ranks (truncated?)", size,
                       ob_state_size((int) h->nranks), (long long) h->nranks);
    }
    if (ob_state_checksum(h, buf, size) != h->checksum) {
        return ob_fail(OMNIBATCH_ERR_ARG, "state: checksum mismatch: the state is damaged");
    }
    return OMNIBATCH_SUCCESS;
}

void ob_state_entry_get(const void *buf, int i, ob_state_entry *e)
{
    memcpy(e, (const char *) buf + sizeof(ob_state_header) + (size_t) i * sizeof *e, sizeof *e);
    e->host[OB_STATE_HOST_BYTES - 1] = '\0';
}

void ob_state_entry_put(void *buf, int i, const ob_state_entry *e)
{
    memcpy((char *) buf + sizeof(ob_state_header) + (size_t) i * sizeof *e, e, sizeof *e);
}

int ob_state_match(const void *buf, const char *host, int cores, int occurrence)
{
    ob_state_header h;
    int seen = 0;

    memcpy(&h, buf, sizeof h);
    for (int i = 0; i < (int) h.nranks; i++) {
        ob_state_entry e;

        ob_state_entry_get(buf, i, &e);
        if (0 == strncmp(e.host, host, OB_STATE_HOST_BYTES - 1) && e.cores == cores && seen++ == occurrence) {
            return i;
        }
    }
    return -1;
}
