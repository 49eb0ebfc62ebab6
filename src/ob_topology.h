/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What hardware a rank runs on, through hwloc: cores and PUs in its cpuset,
 * NUMA nodes, GPU and coprocessor OS devices.  Used by the report and as an
 * optional prior for the first plan; the benchmarks bind with it.
 */
#ifndef OB_TOPOLOGY_H
#define OB_TOPOLOGY_H

typedef struct ob_topology_info {
    int pus;                     /* processing units (hardware threads) in the cpuset */
    int cores;                   /* cores with at least one PU in the cpuset */
    int numa_nodes;              /* NUMA nodes the cpuset touches */
    int packages;                /* packages (sockets) the cpuset touches */
    int gpus;                    /* GPU OS devices (CUDA, OpenCL, NVML, RSMI, ... of distinct PCI devices) */
    int coprocessors;            /* coprocessor OS devices */
    char hostname[64];
} ob_topology_info;

/**
 * \brief Describe a topology.
 * \param[in] source  NULL: this host, as this process sees it; otherwise an hwloc synthetic
 *                    description ("node:2 core:4 pu:2") or an hwloc XML document (starts with '<').
 * \param[in] cpuset  NULL: the process's binding on the host, the whole machine for a
 *                    \p source; otherwise a list of PU indexes "0-3,8".
 */
int ob_topology_query(const char *source, const char *cpuset, ob_topology_info *info);

/**
 * \brief Bind the calling process to \p ncores whole cores starting at core index \p first
 *        (wrapping around the machine's cores), for the benchmarks' --bind.
 */
int ob_topology_bind_cores(int first, int ncores);

#endif /* OB_TOPOLOGY_H */
