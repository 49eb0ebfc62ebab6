/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How a rank that waits for the others sleeps (OMNIBATCH_WAIT=sleep): the
 * length of each nap between two tests of a nonblocking allreduce.  MPI-free.
 *
 * Every wake costs CPU: on a virtual machine a 50 us nap and its test cost
 * about 30 us, so a rank that naps 50 us at a time spends a third of a core
 * waiting (tests/mpi/mpi_api_wait measured 28% on this project's machine),
 * more than a rank under a 0.1-core quota has for its compute; throttled,
 * it then holds every rank back.  A nap that is too long holds the others
 * back instead: a nonblocking collective progresses only when its ranks
 * test it.
 *
 * So a rank that waits for the last one to arrive sleeps in one nap to
 * OB_NAP_MARGIN before that rank's expected arrival, then naps half as long
 * as it has waited since (at most OB_NAP_BEHIND_MAX), so that its wake comes
 * at most half the wait past that point late.  The expected arrival is
 * learnt: every rank's arrival rides, by a MAX, on the one-integer allreduce
 * that waits for them (each measured from its own step's start; every rank
 * starts its step at the previous reduction's end), and the guess is the
 * least of the last OB_NAP_HISTORY arrivals under the same plan: a rank
 * that turned faster is slept past once, and a new plan, which moves every
 * arrival, starts the history again.  Without a guess the naps back off
 * from OB_NAP_MIN.
 *
 * Once every rank is in, the transfer itself, naps stay at OB_NAP_MIN:
 * each fragment and round of the collective waits for its ranks' tests, and
 * longer naps stretched a 940 KB reduction over shared memory from a few
 * milliseconds to 100.  Only a transfer that outlasts OB_NAP_TRANSFER_FACTOR
 * times the quickest of the last ones of its size (a throttled rank, a slow
 * link; between OB_NAP_TRANSFER_SHORT_MIN and OB_NAP_TRANSFER_SHORT, which a
 * size not among the last OB_NAP_HISTORY transfers gets) backs off:
 * under CPU quotas a rank stopped by the kernel for the rest of its period
 * kept the others in 50 us naps for up to 20 ms a step, 1.5-2.5 ms of CPU
 * each (against 0.45 ms for the transfer itself), which spent their quotas.
 */
#ifndef OB_NAP_H
#define OB_NAP_H

#include <stdint.h>

/** The shortest nap, seconds (the timer's slack adds about as much). */
#define OB_NAP_MIN 50e-6
/** The longest nap. */
#define OB_NAP_MAX 1.0
/** A waiting rank sleeps in one nap to this long before the last rank's expected arrival... */
#define OB_NAP_MARGIN 1e-3
/** ...and from there each nap is the time since over this... */
#define OB_NAP_BACKOFF 4.0
/** ...and at most this long. */
#define OB_NAP_BEHIND_MAX 1e-3
/** The transfer, every rank in, naps OB_NAP_MIN for this long, then backs off. */
#define OB_NAP_TRANSFER_SHORT 20e-3
/** The arrivals the guess is the least of, and the transfers the short naps are timed by. */
#define OB_NAP_HISTORY 4
/** The transfer naps OB_NAP_MIN for this many times its least recent duration... */
#define OB_NAP_TRANSFER_FACTOR 2.0
/** ...and at least this long. */
#define OB_NAP_TRANSFER_SHORT_MIN 2e-3

/** When the last rank arrived at the reduction, from the step's start, in the last steps,
 *  and how long the last transfers took. */
typedef struct ob_nap {
    double arrival[OB_NAP_HISTORY];
    int n;                       /* how many are known (at most OB_NAP_HISTORY) */
    int next;                    /* where the next one goes */
    uint64_t plan;               /* the plan they were measured under (its hash) */
    double transfer[OB_NAP_HISTORY];
    long transfer_bytes[OB_NAP_HISTORY];   /* the size of each */
    int transfers;               /* how many are known (at most OB_NAP_HISTORY) */
    int transfer_next;           /* where the next one goes */
} ob_nap;

/** \brief Nothing known: the first waits back off from OB_NAP_MIN. */
void ob_nap_init(ob_nap *nap);

/**
 * \brief Learn when the last rank arrived in a step under plan \p plan (a hash of
 *        it), \p last_arrival seconds from the step's start; a new plan forgets
 *        the arrivals of the old one.
 */
void ob_nap_learn(ob_nap *nap, uint64_t plan, double last_arrival);

/**
 * \brief How long a rank that arrives \p mine seconds after its step's start
 *        under plan \p plan expects to wait: the guess of the last arrival less
 *        \p mine; 0 when nothing is known of this plan or it expects to be last.
 */
double ob_nap_expected_wait(const ob_nap *nap, uint64_t plan, double mine);

/**
 * \brief The next nap of a rank waiting for the others, in seconds, having
 *        waited \p elapsed of an expected \p expected (0: unknown).
 */
double ob_nap_waiting(double elapsed, double expected);

/**
 * \brief Learn that a transfer of \p bytes, every rank in, took \p seconds (a negative or NaN
 *        one is ignored).
 */
void ob_nap_learn_transfer(ob_nap *nap, long bytes, double seconds);

/**
 * \brief How long the next transfer, of \p bytes, naps short: OB_NAP_TRANSFER_FACTOR times the
 *        least of the last transfers of that size, in [OB_NAP_TRANSFER_SHORT_MIN,
 *        OB_NAP_TRANSFER_SHORT] (OB_NAP_TRANSFER_SHORT while none of that size is known: a code
 *        that reduces buckets of several sizes a step times each by its own).
 */
double ob_nap_transfer_short(const ob_nap *nap, long bytes);

/**
 * \brief The next nap in the transfer, every rank in, \p elapsed seconds into it, naps
 *        of OB_NAP_MIN lasting \p short_s (ob_nap_transfer_short()).
 */
double ob_nap_transfer(double elapsed, double short_s);

#endif /* OB_NAP_H */
