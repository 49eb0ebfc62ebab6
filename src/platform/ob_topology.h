/*
 * Copyright (c) 2026 The omnibatch authors.
 *
 * What hardware a rank runs on, through hwloc: cores and PUs in its cpuset,
 * NUMA nodes, GPU and coprocessor OS devices.  Used by the report and as an
 * optional prior for the first plan; the benchmarks bind with it.
 */
#ifndef OB_TOPOLOGY_H
#define OB_TOPOLOGY_H

/*
 * GPUs and coprocessors are counted per PCI device, since one board is often
 * seen through several OS devices (cuda0, nvml0, opencl0d0): a device of the
 * display class or with a GPU OS device is a GPU, one with only coprocessor
 * OS devices a coprocessor.  A 3D controller (PCI class 0x0302) counts as a
 * GPU even when no OS device shows it, as with an hwloc built without the
 * vendor's plugin; a VGA device without one (a server's console) does not.
 */
typedef struct ob_topology_info {
    int pus;                     /* processing units (hardware threads) in the cpuset */
    int cores;                   /* cores with at least one PU in the cpuset (PUs if no core level) */
    int numa_nodes;              /* NUMA nodes the cpuset touches */
    int packages;                /* packages (sockets) the cpuset touches (0 if none shown) */
    int gpus;                    /* GPUs of the machine (CUDA, OpenCL, NVML, RSMI, ... of distinct PCI devices) */
    int coprocessors;            /* coprocessors of the machine (Xeon Phi, vector engines, ...) */
    char hostname[64];           /* this host's name; for a source, its XML "HostName" or "" */
    int local_gpus;              /* GPUs attached near the cpuset (under a package or node it touches) */
} ob_topology_info;

/**
 * \brief Describe a topology.
 * \param[in] source  NULL: this host, as this process sees it; otherwise an hwloc synthetic
 *                    description ("node:2 core:4 pu:2") or an hwloc XML document (starts with '<').
 * \param[in] cpuset  NULL: the process's binding on the host (the whole machine if unbound),
 *                    the whole machine for a \p source; otherwise a list of PU OS indexes
 *                    "0-3,8" (increasing ranges of indexes up to 1048575, comma-separated),
 *                    restricted to the topology's PUs.
 * \param[out] info   the counts.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG for a bad source, a bad cpuset or one that
 *         holds no PU of the topology; OMNIBATCH_ERR_STATE when hwloc cannot read the host.
 */
int ob_topology_query(const char *source, const char *cpuset, ob_topology_info *info);

/**
 * \brief The GPUs that are this rank's own, for the prior (OMNIBATCH_PRIOR=gpus) and the report:
 *        the machine's GPUs a rank may use are those its launcher made visible to it
 *        (\p visible_devices, the value of CUDA_VISIBLE_DEVICES: comma-separated indexes or UUIDs,
 *        the list ending at the first negative index as CUDA reads it; "" is none), at most the
 *        machine's; without that list, the GPUs near the rank's cpuset (\p info->local_gpus).
 * \param[in] info             a topology_query() result for the rank's cpuset.
 * \param[in] visible_devices  CUDA_VISIBLE_DEVICES, or NULL when it is not set.
 * \return the count, >= 0.
 */
int ob_topology_own_gpus(const ob_topology_info *info, const char *visible_devices);

/**
 * \brief Bind the calling process (all its threads) to \p ncores whole cores starting at core
 *        index \p first (logical index among the cores this process may use, wrapping around),
 *        for the benchmarks' --bind.
 * \return OMNIBATCH_SUCCESS; OMNIBATCH_ERR_ARG when first < 0, ncores < 1 or ncores exceeds
 *         the cores; OMNIBATCH_ERR_STATE when the system refuses the binding.
 */
int ob_topology_bind_cores(int first, int ncores);

#endif /* OB_TOPOLOGY_H */
