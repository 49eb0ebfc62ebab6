# src/platform/: probes of the machine, on base/ only: cores and GPUs of a
# rank (hwloc), its CPU quota (cgroups) and the CPU it got (clocks,
# schedstat, the cgroup's throttling), where a buffer lives (CUDA, looked
# up at run time), and how long a waiting rank naps.

libobcore_la_SOURCES += \
	%reldir%/ob_topology.h %reldir%/topology.c \
	%reldir%/ob_cpuquota.h %reldir%/cpuquota.c \
	%reldir%/ob_cpuuse.h %reldir%/cpuuse.c \
	%reldir%/ob_nap.h %reldir%/nap.c \
	%reldir%/ob_memtype.h %reldir%/ob_memtype_cuda.h %reldir%/memtype.c
