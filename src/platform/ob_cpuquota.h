/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * The CPU quota a process runs under (container platforms share nodes this
 * way: a cgroup's cpu.cfs_quota_us / cpu.cfs_period_us in cgroup v1, cpu.max
 * in v2).  A rank under a quota q (in cores) cannot spend more than q T of
 * CPU in a step of T seconds, whichever part of the step it spends it in:
 * the API turns that into the compute time its controller plans on
 * (src/api/api_measure.c).  MPI-free.
 */
#ifndef OB_CPUQUOTA_H
#define OB_CPUQUOTA_H

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

#endif /* OB_CPUQUOTA_H */
