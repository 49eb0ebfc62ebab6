# src/support.mk: settings, sharding and topology, all in the MPI-free core.

libobcore_la_SOURCES += \
	%reldir%/ob_config.h %reldir%/config.c \
	%reldir%/ob_shard.h %reldir%/shard.c \
	%reldir%/ob_topology.h %reldir%/topology.c
