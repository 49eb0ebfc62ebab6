# src/base/: plumbing every part uses (the lowest layer): one error
# convention, messages, clocks, the OMNIBATCH_* table, JSON strings, and the
# two mailboxes between the API and the PMPI layer (the running step's batch,
# the API's notes of each step).

libobcore_la_SOURCES += \
	%reldir%/ob_error.h %reldir%/error.c \
	%reldir%/ob_log.h %reldir%/log.c \
	%reldir%/ob_timing.h \
	%reldir%/ob_config.h %reldir%/config.c %reldir%/config_roff.c \
	%reldir%/ob_json.h %reldir%/json.c \
	%reldir%/ob_active.h %reldir%/active.c \
	%reldir%/ob_hook.h %reldir%/hook.c
