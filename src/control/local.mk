# src/control/: the controller's mathematics, on base/ and platform/: the
# per-rank speed model, the water-filling planners (central and
# distributed), the decision every rank takes alike, peers' pooled speeds,
# the epoch's permutation and each rank's slice, the saved state, which
# ranks the CPU starved, the chunked step's policy (chunk sizes, a thief's
# share, whom to ask).

libobcore_la_SOURCES += \
	%reldir%/ob_maths.h %reldir%/maths.c \
	%reldir%/ob_rng.h \
	%reldir%/ob_estimator.h %reldir%/estimator.c \
	%reldir%/ob_planner.h %reldir%/planner.c \
	%reldir%/ob_planner_dist.h %reldir%/planner_dist.c \
	%reldir%/ob_controller.h %reldir%/controller.c \
	%reldir%/ob_record.h %reldir%/record.c \
	%reldir%/ob_starve.h %reldir%/starve.c \
	%reldir%/ob_pool.h %reldir%/pool.c \
	%reldir%/ob_shard.h %reldir%/shard.c \
	%reldir%/ob_state.h %reldir%/state.c \
	%reldir%/ob_chunk.h %reldir%/chunk.c
