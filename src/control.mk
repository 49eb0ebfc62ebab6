# src/control.mk: the controller core (estimator, planner, controller),
# MPI-free, in the convenience library the Check suites link.

libobcore_la_SOURCES += \
	%reldir%/ob_estimator.h %reldir%/estimator.c \
	%reldir%/ob_planner.h %reldir%/planner.c \
	%reldir%/ob_controller.h %reldir%/controller.c
