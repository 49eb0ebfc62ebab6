/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The table of recognised non-blocking allreduces in flight (requests.c):
 * a leaf of the layer, it knows nothing of the recorder; the Wait/Test
 * wrappers (completion.c) ask it which requests are ours, then record.
 */
#ifndef OB_REQUESTS_H
#define OB_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>


/** Slots for recognised non-blocking allreduces in flight. */
#define OB_REQ_SLOTS 1024

/** Recognised non-blocking allreduces in flight (owned by requests.c). */
extern int ob_req_outstanding;

/** \brief Any recognised request in flight?  The only cost of MPI_Wait and MPI_Test otherwise. */
static inline int ob_req_any(void)
{
    return 0 != __atomic_load_n(&ob_req_outstanding, __ATOMIC_ACQUIRE);
}

/** \brief Start the table (at init). */
void ob_req_init(void);

/** \brief Take a free slot and its scratch buffer (for ob_weight_prepare()); -1 if none is free. */
int ob_req_reserve(void ***scratch, size_t **cap);

/** \brief The request started: make it findable. */
void ob_req_publish(int slot, MPI_Request req, MPI_Comm comm);

/** \brief The call failed: give the slot back. */
void ob_req_cancel(int slot);

/** \brief The slot of a recognised request, or -1 (a scan of the slots in use). */
int ob_req_find(MPI_Request req);

/**
 * \brief Requests of \p reqs[0..n) that are recognised: their positions and slots.
 * \return how many; *pos and *slot point to \p small_pos / \p small_slot when
 *         \p small entries suffice, else to allocated arrays (free with ob_req_matches_free).
 */
int ob_req_match(const MPI_Request *reqs, int n, int *small_pos, int *small_slot, int small,
                 int **pos, int **slot);

/** \brief Free what ob_req_match() allocated. */
void ob_req_matches_free(int *pos, int *slot, const int *small_pos);

/**
 * \brief A Wait/Test call involved slot \p first; the slots done[0..ndone)
 *        completed and are released.
 * \return the communicator key of slot \p first, for the caller to record
 *         the blocked time against (ob_layer_record_wait()).
 */
uint64_t ob_req_settle(int first, const int *done, int ndone);

/** \brief Free every slot's scratch (at MPI_Finalize). */
void ob_req_cleanup(void);

#endif /* OB_REQUESTS_H */
