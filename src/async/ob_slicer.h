/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The data of the asynchronous mode: the parameter server hands each
 * worker its next slice of the epoch's permutation (the same permutation as
 * the synchronous mode's, ob_shard_permutation()), of the size the batch
 * controller gives that worker, one after the other from a cursor.  An
 * epoch's last slice is short (the samples left), and the next slice starts
 * the next epoch at position 0: slices never straddle epochs, so whatever
 * sizes are asked, every sample is handed out exactly once per epoch.
 *
 * Budgets: \p epochs (the data) and \p max_slices (the updates); when either
 * is spent no slice is handed out.  A restored server's slices in flight
 * when it saved are handed out again first, whole (ob_slicer_again()), so
 * that across a restart too every sample of an epoch is used once.
 * MPI-free.
 */
#ifndef OB_SLICER_H
#define OB_SLICER_H

/** One slice: positions [start, start + count) of epoch \p epoch's permutation. */
typedef struct ob_slice {
    long epoch;
    long start;
    long count;
} ob_slice;

typedef struct ob_slicer {
    long N;                      /* samples per epoch */
    long epochs;                 /* epochs to hand out (>= 1), 0: no limit */
    long max_slices;             /* slices to hand out at most, 0: no limit */
    long epoch;                  /* the epoch the cursor is in */
    long cursor;                 /* its next position */
    long handed;                 /* slices handed out */
    ob_slice *again;             /* to hand out again first, in order */
    int nagain;
    int next_again;
} ob_slicer;

/**
 * \brief Start at epoch 0, position 0.
 * \return OMNIBATCH_SUCCESS, or OMNIBATCH_ERR_ARG naming N (< 1), epochs or max_slices (< 0).
 */
int ob_slicer_init(ob_slicer *s, long N, long epochs, long max_slices);

/** \brief Free what ob_slicer_again() took. */
void ob_slicer_free(ob_slicer *s);

/**
 * \brief The next slice, of at most \p want (>= 1) samples (a slice to hand out again: its
 *        own size).
 * \return 1 with *out set; 0 when a budget is spent (nothing handed out).
 */
int ob_slicer_next(ob_slicer *s, long want, ob_slice *out);

/** \brief 1 when ob_slicer_next() would hand nothing out. */
int ob_slicer_spent(const ob_slicer *s);

/**
 * \brief Resume at \p epoch, \p cursor having handed out \p handed slices, and hand \p n
 *        slices out again first.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG for a position or slice outside the data;
 *         OMNIBATCH_ERR_NOMEM.
 */
int ob_slicer_resume(ob_slicer *s, long epoch, long cursor, long handed, const ob_slice *again,
                     int n);

#endif /* OB_SLICER_H */
