/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Step detection for preload mode: from the stream of recognised gradient
 * allreduces of one rank, where each training step begins and ends, and per
 * step how long the rank computed and how long it was blocked.
 *
 * A code that buckets its gradients issues several allreduces per step, so
 * the detector looks for the repeating pattern of call signatures
 * (communicator, count, element size).  When every bucket looks the same it
 * falls back to the time gaps between calls (the gap before a step's first
 * call holds the forward pass and the optimiser, so it is the longest), or
 * it takes the number of calls per step it is given.  Calls before the
 * pattern settles (warm-up traffic) are not counted.  Only the communicator
 * most calls use is followed ("the communicator they repeat on").
 *
 * Time accounting: a step spans from the end of the previous step's last
 * blocked interval to the end of its own last one; blocked = the sum of the
 * step's blocked intervals (its calls, and for non-blocking allreduces the
 * waits that complete them); compute = span - blocked.
 *
 * Lifecycle: ob_stepdetect_create() -> ob_stepdetect_call() /
 * ob_stepdetect_wait() / ob_stepdetect_pause() in time order ->
 * ob_stepdetect_finish() -> ob_stepdetect_destroy().  Each finished step is
 * handed to the callback.  MPI-free and single-threaded: the caller
 * serialises (the PMPI layer holds its lock).  Memory is bounded: at most
 * OB_STEPDETECT_HISTORY events are held while the pattern is being learnt,
 * none afterwards.
 */
#ifndef OB_STEPDETECT_H
#define OB_STEPDETECT_H

#include <stdint.h>

/** Events held while learning (56 bytes each); the pattern is fixed by then at the latest. */
#define OB_STEPDETECT_HISTORY 4096
/** Largest number of gradient allreduces per step the detector can find by itself (a code
 *  that reduces every tensor on its own has one per parameter tensor); a larger count can
 *  be given. */
#define OB_STEPDETECT_MAX_PERIOD 1024

/** What identifies a gradient allreduce from step to step. */
typedef struct ob_call_sig {
    uint64_t comm;               /* the communicator (its handle value) */
    int64_t count;               /* elements */
    int32_t elem;                /* bytes per element (4: float, 8: double) */
} ob_call_sig;

/** One finished step of this rank. */
typedef struct ob_step_record {
    long index;                  /* 0-based, counts every detected step (also those not reported) */
    long batch;                  /* samples in the step when known (API published), else -1 */
    double compute;              /* seconds outside the step's gradient allreduces */
    double blocked;              /* seconds inside them (and in the waits that complete them) */
    long calls;                  /* gradient allreduces the step held */
    double end;                  /* when the step's last gradient allreduce returned (caller's clock) */
    long taken;                  /* worked in chunks (API): samples taken from other ranks' ranges, */
    long given;                  /* and of this rank's taken by others; -1 when unknown */
} ob_step_record;

/** How the step boundary was found (for the report). */
typedef enum ob_step_rule {
    OB_STEP_RULE_NONE = 0,       /* not yet known */
    OB_STEP_RULE_SIGNATURE = 1,  /* the first call of the pattern has a signature of its own */
    OB_STEP_RULE_GAP = 2,        /* buckets look alike: the long gap before a step's first call */
    OB_STEP_RULE_COUNT = 3       /* every N calls: signatures alike and gaps uninformative, or N given */
} ob_step_rule;

/** Called once per finished step. */
typedef void (*ob_step_fn)(void *ctx, const ob_step_record *step);

typedef struct ob_stepdetect ob_stepdetect;

/**
 * \brief Create a detector.
 * \param[in] calls_per_step  gradient allreduces per step if known (OMNIBATCH_CALLS_PER_STEP, any
 *                            count >= 1), 0 = find it.
 * \param[in] on_step         called for each finished step (not NULL).
 * \param[in] ctx             passed to \p on_step.
 * \param[out] det            the detector.
 * \return OMNIBATCH_SUCCESS, OMNIBATCH_ERR_ARG or OMNIBATCH_ERR_NOMEM.
 */
int ob_stepdetect_create(long calls_per_step, ob_step_fn on_step, void *ctx, ob_stepdetect **det);

/**
 * \brief One recognised gradient allreduce.
 * \param[in] sig    its signature.
 * \param[in] t0     when the call was entered (seconds, any fixed origin).
 * \param[in] t1     when it returned (>= t0).
 * \param[in] batch  the running step's samples when known, else -1.
 */
void ob_stepdetect_call(ob_stepdetect *det, const ob_call_sig *sig, double t0, double t1, long batch);

/**
 * \brief Time blocked completing recognised non-blocking allreduces on \p comm
 *        (a Wait or Test call on their requests), from \p t0 to \p t1.
 */
void ob_stepdetect_wait(ob_stepdetect *det, uint64_t comm, double t0, double t1);

/** The communicator value of ob_stepdetect_wait() that stands for the library's own exchanges. */
#define OB_STEPDETECT_OWN UINT64_MAX

/**
 * \brief Time the library spent in its own exchanges (the API's record allgather), from
 *        \p t0 to \p t1: never the step's compute.  Inside a step it is blocked time (the
 *        rank waits there for the others, as in a reduction); between steps the next step
 *        begins after it.  The same as ob_stepdetect_wait(det, OB_STEPDETECT_OWN, t0, t1).
 */
void ob_stepdetect_own(ob_stepdetect *det, double t0, double t1);

/** \brief Recording stops for a while (MPI_Pcontrol(0)): the step under way is reported only if
 *         it already held all its calls, and the first step after the pause is not reported. */
void ob_stepdetect_pause(ob_stepdetect *det);

/** \brief No more events: fix the pattern if not yet done, report the last step if complete. */
void ob_stepdetect_finish(ob_stepdetect *det);

/**
 * \brief What was found so far.
 * \param[out] calls_per_step  gradient allreduces per step (0 while unknown); may be NULL.
 * \param[out] rule            how boundaries are found; may be NULL.
 * \return 1 when the pattern is fixed, else 0.
 */
int ob_stepdetect_pattern(const ob_stepdetect *det, long *calls_per_step, ob_step_rule *rule);

/**
 * \brief Would a gradient allreduce with signature \p sig, entered at \p t0, be one of the
 *        learned pattern's calls, at its place in a whole step?  Asked before the call (to
 *        decide whether to weight it), with the same t0 the call will be recorded with.
 * \return 1 when the pattern is fixed, the call is on the followed communicator, in a step
 *         begun after the pattern was fixed, not past the step's count, and (for a cycle the
 *         detector holds) has the signature the cycle expects next; else 0.
 */
int ob_stepdetect_expects(const ob_stepdetect *d, const ob_call_sig *sig, double t0);

/** \brief Calls ignored because they were on another communicator than the one followed. */
long ob_stepdetect_ignored(const ob_stepdetect *det);

/** \brief Free the detector (NULL is allowed). */
void ob_stepdetect_destroy(ob_stepdetect *det);

#endif /* OB_STEPDETECT_H */
