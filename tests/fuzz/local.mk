# tests/fuzz/: libFuzzer targets for the parsers of outside input, the
# OMNIBATCH_* settings (src/base/config.c) and the benchmark's trace files
# (bench/hetsgd/report.c).  Built apart from the library by the compiler
# configure found for them (OB_CHECK_FUZZER: clang with
# -fsanitize=fuzzer,address,undefined), straight from the sources.
# `make check` runs each a few seconds from its seed corpus (run.sh,
# skipped without such a compiler); `make fuzz` runs each FUZZ_SECONDS.

FUZZ_SECONDS = 60
FUZZ_CONFIG_FILES = $(srcdir)/%reldir%/fuzz_config.c $(srcdir)/src/base/config.c \
	$(srcdir)/src/base/error.c $(srcdir)/src/base/log.c
FUZZ_TRACE_FILES = $(srcdir)/%reldir%/fuzz_hetsgd_trace.c $(srcdir)/bench/hetsgd/report.c \
	$(srcdir)/bench/hetsgd/emulate.c \
	$(srcdir)/src/base/error.c
FUZZ_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/bench/hetsgd
FUZZ_SEEDS = \
	%reldir%/corpus/config/valid \
	%reldir%/corpus/config/bounds \
	%reldir%/corpus/config/choices \
	%reldir%/corpus/config/bad_gain \
	%reldir%/corpus/config/bad_numbers \
	%reldir%/corpus/config/bad_together \
	%reldir%/corpus/hetsgd_trace/valid \
	%reldir%/corpus/hetsgd_trace/wrapping_steps \
	%reldir%/corpus/hetsgd_trace/largest_step \
	%reldir%/corpus/hetsgd_trace/duplicate_row \
	%reldir%/corpus/hetsgd_trace/many_ranks

TESTS += %reldir%/run.sh
EXTRA_DIST += %reldir%/run.sh %reldir%/fuzz_config.c %reldir%/fuzz_hetsgd_trace.c $(FUZZ_SEEDS)
FUZZ_TARGETS = %reldir%/fuzz_config %reldir%/fuzz_hetsgd_trace
# Whatever this configure says: targets of an earlier one must not run.
CLEANFILES += $(FUZZ_TARGETS)

if HAVE_FUZZER
check_SCRIPTS += $(FUZZ_TARGETS)

%reldir%/fuzz_config: $(FUZZ_CONFIG_FILES)
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) -o $@ $(FUZZ_CONFIG_FILES) -lm -pthread

%reldir%/fuzz_hetsgd_trace: $(FUZZ_TRACE_FILES)
	@$(MKDIR_P) $(@D)
	$(AM_V_GEN)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CPPFLAGS) -o $@ $(FUZZ_TRACE_FILES) -lm

fuzz: $(FUZZ_TARGETS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) top_srcdir=$(top_srcdir) top_builddir=$(top_builddir) \
	    $(SHELL) $(top_srcdir)/%reldir%/run.sh
else
fuzz:
	@echo "make fuzz: configure found no compiler with libFuzzer (install clang and" \
	    "libclang-rt-14-dev, or set FUZZ_CC)" >&2; exit 1
endif
.PHONY: fuzz
