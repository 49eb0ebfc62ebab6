/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * Which ranks the CPU starved, and what their stalls cost the step model.
 *
 * A rank starved of CPU is descheduled wherever it is, inside the gradient
 * allreduce too, and every rank waits there for it: the least blocked time
 * over the ranks, which the step model reads as the transfer, then holds
 * the starved rank's stalls (issue 35: a rank under a 0.1-core quota made
 * every rank block 6.1 ms of a 6.25 ms step, and the report called the run
 * communication-bound).  From what the kernel counted for each rank
 * (ob_cpuuse.h) a rank is starved
 *   - by its quota when its cgroup was stopped at least OB_STARVED_THROTTLED
 *     of the wall time: it lost that share;
 *   - by its neighbours when it waited for a CPU at least
 *     OB_STARVED_CONTENTION more of the time it was ready to run (and not
 *     stopped by a quota) than the usual rank (the lower median over the
 *     ranks no quota starved; the report's, report.c): on a crowded
 *     machine shared fairly every rank waits alike (no one is singled out,
 *     and nothing here moves), a rank whose cores are busier than most
 *     loses the share of its wall time it was held off, not by a quota,
 *     beyond the usual rank's rate.
 * The stalls are spread over its step as the kernel spreads them (a quota
 * stops a rank whenever the period's budget is spent, whatever it does),
 * so a starved rank that lost a share s of its time has s of its blocked
 * time in stalls, and the transfer is the least over the ranks of blocked
 * time less stalls.  MPI-free.
 */
#ifndef OB_STARVE_H
#define OB_STARVE_H

#include "ob_cpuuse.h"
#include "ob_record.h"

/** Least share of the wall time a rank's cgroup was stopped for its quota to starve it. */
#define OB_STARVED_THROTTLED 0.10
/** Least excess of a rank's wait for a CPU, as a share of the time it was ready to run, over
 *  the usual rank's, for its neighbours to starve it. */
#define OB_STARVED_CONTENTION 0.25

/** What starved a rank (flags). */
#define OB_STARVED_BY_QUOTA 1
#define OB_STARVED_BY_CONTENTION 2

/**
 * \brief The share of its wall time a rank lost to starvation (above), 0 when it was not
 *        starved; which cause into *why (OB_STARVED_* flags; may be NULL).
 * \param[in] throttled   its cgroup's stopped share of the wall time (< 0: unknown).
 * \param[in] held        its share of the wall time runnable off the CPU (< 0: unknown).
 * \param[in] wait        its share of the time ready to run, not stopped by the quota, spent
 *                        waiting (< 0: unknown; ob_cpu_use_wait_share()).
 * \param[in] usual_wait  the usual rank's \p wait (< 0: unknown: no contention judged).
 */
double ob_starved_share(double throttled, double held, double wait, double usual_wait, int *why);

/**
 * \brief What a record's rank lost to its quota (ob_starved_share() of its throttled share).
 *        The controller leaves the neighbours' share to the report, which judges it over
 *        the whole run: the waits for a CPU of the few steps between two exchanges are
 *        noisier than a run's, and a plan must not follow noise.
 */
double ob_starved_record_share(const ob_rank_record *rec);

/** The CPU a rank got since its last record (the API's, at each exchange). */
typedef struct ob_cpu_watch {
    ob_cpu_probe probe;
    ob_cpu_sample last;
} ob_cpu_watch;

/** \brief Open the process's own counters and take the first sample. */
void ob_cpu_watch_start(ob_cpu_watch *w);

/** \brief Into \p rec, the throttled share of the stretch since the last call (or the start),
 *         and start the next. */
void ob_cpu_watch_fill(ob_cpu_watch *w, ob_rank_record *rec);

/** \brief Close the counters' files. */
void ob_cpu_watch_stop(ob_cpu_watch *w);

#endif /* OB_STARVE_H */
