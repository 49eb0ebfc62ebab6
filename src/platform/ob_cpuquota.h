/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under (container platforms share nodes this
 * way: a cgroup's cpu.cfs_quota_us / cpu.cfs_period_us in cgroup v1, cpu.max
 * in v2).  A rank under a quota q (in cores) cannot spend more than q T of
 * CPU in a step of T seconds, whichever part of the step it spends it in:
 * the API turns that into the compute time its controller plans on
 * (src/api/api_measure.c).  The cgroup whose quota binds also counts how often and
 * how long the kernel stopped its processes for having spent it (cpu.stat:
 * the evidence that a rank was starved of CPU, ob_cpuuse.h).  MPI-free.
 */
#ifndef OB_CPUQUOTA_H
#define OB_CPUQUOTA_H

#include <stddef.h>
#include <stdint.h>

/**
 * \brief The quota, in cores: the least quota / period over the process's cgroup and
 *        its ancestors, for the cgroup v1 cpu controller and for cgroup v2, whichever
 *        \p proc_cgroup names.
 * \param[in] proc_cgroup  the process's cgroup list, as /proc/self/cgroup holds it
 *                         ("N:controllers:/path" lines).
 * \param[in] root         where the hierarchies are mounted (/sys/fs/cgroup): v1's cpu
 *                         controller under root/cpu (or root/cpu,cpuacct), v2 at root.
 * \return the quota (> 0), or 0 when none is set or none can be read.
 */
double ob_cpu_quota(const char *proc_cgroup, const char *root);

/**
 * \brief ob_cpu_quota(), and the cgroup directory whose quota it is (the deepest of
 *        those setting the least quota) into \p dir: its cpu.stat counts the
 *        throttling; "" when no quota is set.
 * \param[out] dir  \p size bytes (PATH_MAX fits every path), may be NULL.
 */
double ob_cpu_quota_where(const char *proc_cgroup, const char *root, char *dir, size_t size);

/** A cgroup's throttling counters, from its cpu.stat. */
typedef struct ob_cpu_throttle {
    int64_t periods;             /* enforcement periods in which its processes wanted the CPU */
    int64_t throttled;           /* of which it spent its quota and was stopped */
    double throttled_s;          /* how long it was stopped, summed over the CPUs */
} ob_cpu_throttle;

/**
 * \brief Parse the text of a cpu.stat: "key value" lines, nr_periods, nr_throttled and
 *        throttled_time (cgroup v1, nanoseconds) or throttled_usec (v2, microseconds);
 *        other keys are skipped.
 * \return 1 with \p t filled when all three were found, 0 otherwise (\p t unchanged).
 */
int ob_cpu_throttle_parse(const char *text, ob_cpu_throttle *t);

#endif /* OB_CPUQUOTA_H */
