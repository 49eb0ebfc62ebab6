/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * How much CPU a rank got: two samples of what the kernel counts for the
 * process give the CPU it had between them.  A rank starved of CPU (its
 * cgroup's quota spent, a busy neighbour on its cores) is descheduled
 * wherever it is, inside the gradient allreduce too, where every other
 * rank waits for it; its blocked time then looks like transfer time.  The
 * kernel's counters tell the two apart:
 *   - the process's CPU time against the wall time (CLOCK_PROCESS_CPUTIME_ID),
 *     and its involuntary context switches (getrusage's ru_nivcsw): shown,
 *     not judged on (a rank that waits asleep has little CPU for no fault
 *     of the machine's; Open MPI's polling yields count as involuntary);
 *   - the main thread's time on a CPU and its time runnable but waiting for
 *     one (/proc/self/schedstat; a throttled cgroup's stopped time is in
 *     the latter too);
 *   - where a cgroup sets a quota, its throttling (ob_cpuquota.h).
 * A sample is a handful of system calls and two preads of files kept open
 * (a few microseconds): taken at step boundaries or at exchanges, never on
 * the pass-through path of an intercepted call.  MPI-free.
 */
#ifndef OB_CPUUSE_H
#define OB_CPUUSE_H

#include <stdint.h>

/** What the kernel counted for the process up to one moment; < 0: not known here. */
typedef struct ob_cpu_sample {
    double wall_s;               /* CLOCK_MONOTONIC */
    double cpu_s;                /* the process's CPU time, every thread */
    int64_t nivcsw;              /* involuntary context switches, every thread */
    int64_t nvcsw;               /* voluntary ones */
    double run_s;                /* the main thread's time on a CPU (schedstat) */
    double delay_s;              /* ... and runnable, waiting for a CPU */
    int64_t periods;             /* the binding cgroup's counters (ob_cpu_throttle) */
    int64_t throttled;
    double throttled_s;
} ob_cpu_sample;

/** The files a sample reads, opened once. */
typedef struct ob_cpu_probe {
    int schedstat_fd;            /* -1: none */
    int stat_fd;                 /* the cpu.stat of the cgroup whose quota binds, -1: none */
    double quota;                /* that quota in cores, 0: none */
} ob_cpu_probe;

/** What the process got between two samples (plain data: sent as bytes in a rank's sums). */
typedef struct ob_cpu_use {
    double wall_s;               /* 0: nothing measured */
    double cpu_s;
    int64_t nivcsw;
    int64_t nvcsw;
    double run_s;                /* < 0: not known (no schedstat) */
    double delay_s;
    double quota;                /* cores, 0: none */
    int64_t periods;             /* < 0: not known (no quota, no cpu.stat) */
    int64_t throttled;
    double throttled_s;
} ob_cpu_use;

/**
 * \brief Open what a sample reads: \p schedstat (/proc/self/schedstat) and the cpu.stat
 *        of the cgroup whose quota binds, found from \p proc_cgroup and \p root as
 *        ob_cpu_quota_where() finds it.  Either may be missing: its fields read unknown.
 *        Close with ob_cpu_probe_close().
 */
void ob_cpu_probe_open(ob_cpu_probe *p, const char *proc_cgroup, const char *root, const char *schedstat);

/** \brief The process's own: /proc/self/cgroup, /sys/fs/cgroup, /proc/self/schedstat. */
void ob_cpu_probe_open_self(ob_cpu_probe *p);

/** \brief Take a sample now. */
void ob_cpu_probe_read(const ob_cpu_probe *p, ob_cpu_sample *s);

/** \brief Close what ob_cpu_probe_open() opened (a closed probe reads only the clocks). */
void ob_cpu_probe_close(ob_cpu_probe *p);

/**
 * \brief What the process got from \p a to \p b: differences of the counters known in
 *        both (unknown otherwise), \p quota the quota in cores (0: none).
 */
void ob_cpu_use_between(const ob_cpu_sample *a, const ob_cpu_sample *b, double quota, ob_cpu_use *u);

/** \brief CPU time over wall time (may exceed 1 with threads); NaN when nothing was measured. */
double ob_cpu_use_cpu_share(const ob_cpu_use *u);

/** \brief Share of the wall time the cgroup was stopped, in [0, 1]; < 0: not known. */
double ob_cpu_use_throttled_share(const ob_cpu_use *u);

/** \brief Share of the wall time the main thread was runnable but off the CPU, in [0, 1];
 *         < 0: not known. */
double ob_cpu_use_held_share(const ob_cpu_use *u);

/** \brief Share of the time the main thread wanted a CPU its cgroup allowed it (on one, or
 *         waiting for one, not stopped by the quota) that it waited, in [0, 1]: the same for
 *         every runnable thread of a fairly shared, crowded machine; < 0: not known. */
double ob_cpu_use_wait_share(const ob_cpu_use *u);

#endif /* OB_CPUUSE_H */
